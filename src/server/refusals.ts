/**
 * Refused requests, logged once. A request is refused when it is answered but not done as asked, for a
 * reason that retrying the same request will not change: the handler said so (`ctx.refuse(reason)`), or
 * the response carries a refusal code at its top level or on one of its resources (INVALID_REQUEST,
 * UNSUPPORTED_VERSION, POLICY_VIOLATION, INVALID_CONFIG, ..., see REFUSAL_CODES). Clients answer such errors
 * with "see the broker logs", so the broker writes one line with the client (id and address), the API,
 * version, correlation id and reason.
 *
 * Errors that are the protocol's normal flow (NOT_COORDINATOR, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS,
 * OFFSET_OUT_OF_RANGE, TOPIC_ALREADY_EXISTS, INVALID_FETCH_SESSION_EPOCH, fencing, ...) are not refusals.
 *
 * "Once": a client retrying in a loop gets one line per (client, API, reason) and window; the next line
 * after the window says how many identical refusals it left out (`repeated`). The table of recent keys is
 * bounded, oldest dropped first, so distinct reasons cannot grow it without limit.
 */
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import type { Logger } from '../observability/logger.js';

/** Codes that mean "the broker will not do this as asked". */
export const REFUSAL_CODES: ReadonlySet<number> = new Set<number>([
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.INVALID_FETCH_SIZE,
  ErrorCode.MESSAGE_TOO_LARGE,
  ErrorCode.INVALID_TOPIC_EXCEPTION,
  ErrorCode.RECORD_LIST_TOO_LARGE,
  ErrorCode.INVALID_REQUIRED_ACKS,
  ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  ErrorCode.INVALID_GROUP_ID,
  ErrorCode.INVALID_SESSION_TIMEOUT,
  ErrorCode.INVALID_COMMIT_OFFSET_SIZE,
  ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  ErrorCode.GROUP_AUTHORIZATION_FAILED,
  ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  ErrorCode.INVALID_TIMESTAMP,
  ErrorCode.UNSUPPORTED_SASL_MECHANISM,
  ErrorCode.UNSUPPORTED_VERSION,
  ErrorCode.INVALID_PARTITIONS,
  ErrorCode.INVALID_REPLICATION_FACTOR,
  ErrorCode.INVALID_REPLICA_ASSIGNMENT,
  ErrorCode.INVALID_CONFIG,
  ErrorCode.INVALID_REQUEST,
  ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT,
  ErrorCode.POLICY_VIOLATION,
  ErrorCode.INVALID_TRANSACTION_TIMEOUT,
  ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  ErrorCode.SASL_AUTHENTICATION_FAILED,
  ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
  ErrorCode.INVALID_PRINCIPAL_TYPE,
  ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  ErrorCode.INVALID_RECORD,
  ErrorCode.FEATURE_UPDATE_FAILED,
  ErrorCode.UNSUPPORTED_ASSIGNOR,
  ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
  ErrorCode.TELEMETRY_TOO_LARGE,
  ErrorCode.INVALID_REGULAR_EXPRESSION,
]);

export interface FoundRefusal {
  readonly errorCode: number;
  /** The response's errorMessage next to the code, when it has one. */
  readonly errorMessage: string | null;
  /** The refused resource (topic, group, config resource name), when the code sits on one. */
  readonly resource: string | null;
  /** True when the code is the response's own, not one resource's. */
  readonly topLevel: boolean;
}

/** How deep findRefusal looks: response → topics → partitions → (one more for nested results). */
const MAX_DEPTH = 4;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function resourceName(o: Record<string, unknown>): string | null {
  if (o.name === undefined && o.topic === undefined && o.groupId === undefined && o.resourceName === undefined && o.transactionalId === undefined) return null;
  for (const k of ['name', 'topic', 'groupId', 'resourceName', 'transactionalId']) {
    const v = o[k];
    if (typeof v === 'string' && v !== '') return v;
  }
  return null;
}

/**
 * The first refusal code in a response: its own `errorCode`, else one on a resource in its arrays (the
 * generated response types keep per-resource errors in arrays of objects). Buffers (record sets) are
 * never looked into.
 */
export function findRefusal(res: unknown): FoundRefusal | null {
  if (!isRecord(res)) return null;
  const own = res.errorCode;
  if (typeof own === 'number' && REFUSAL_CODES.has(own)) {
    return { errorCode: own, errorMessage: typeof res.errorMessage === 'string' ? res.errorMessage : null, resource: null, topLevel: true };
  }
  for (const k in res) {
    const v = res[k];
    if (Array.isArray(v) && v.length > 0 && isRecord(v[0])) {
      const found = findInArray(v as unknown[], 1, []);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Looks through one array of resources. The generated types make every element of an array the same
 * shape, so the keys that may hold nested arrays are read off the first element once, and a resource's
 * name is only worked out for the one refused (from `path`, the resources above it): a Fetch response of
 * a thousand partitions costs a few property reads per partition, no strings.
 */
function findInArray(items: unknown[], depth: number, path: Record<string, unknown>[]): FoundRefusal | null {
  const first = items[0] as Record<string, unknown>;
  let nested: string[] | null = null;
  if (depth < MAX_DEPTH) {
    for (const k in first) {
      // Arrays of resources; not record sets (arrays of Buffers).
      const v = first[k];
      if (Array.isArray(v) && (v.length === 0 || isRecord(v[0]))) (nested ??= []).push(k);
    }
  }
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    if (!isRecord(item)) continue;
    const code = item.errorCode;
    if (typeof code === 'number' && code !== 0 && REFUSAL_CODES.has(code)) {
      return { errorCode: code, errorMessage: typeof item.errorMessage === 'string' ? item.errorMessage : null, resource: labelOf([...path, item]), topLevel: false };
    }
    if (nested === null) continue;
    for (const k of nested) {
      const v = item[k];
      if (Array.isArray(v) && v.length > 0 && isRecord(v[0])) {
        path.push(item);
        const found = findInArray(v as unknown[], depth + 1, path);
        path.pop();
        if (found) return found;
      }
    }
  }
  return null;
}

/** `topic`, `topic-3` (a partition), `group/topic`: the names along the path to a refused resource. */
function labelOf(path: Record<string, unknown>[]): string | null {
  let label: string | null = null;
  for (const item of path) {
    const name = resourceName(item);
    const index = typeof item.partitionIndex === 'number' ? item.partitionIndex : typeof item.index === 'number' ? item.index : null;
    if (name !== null) label = label !== null ? `${label}/${name}` : name;
    else if (label !== null && index !== null) label = `${label}-${index}`;
  }
  return label;
}

export interface Refusal {
  readonly clientId: string | null;
  /** host:port of the client. */
  readonly remoteAddress: string;
  readonly apiKey: number;
  readonly api: string;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly reason: string;
  /** The Kafka error answered, when there is one. */
  readonly errorCode: number | null;
  readonly resource: string | null;
  /** Whether the refusal is worth a warn (a request refused as a whole) or an info (one resource). */
  readonly level: 'warn' | 'info';
}

export interface RefusalLogOptions {
  /** Identical refusals within this window after a logged one are counted, not logged. */
  readonly windowMs?: number;
  /** Distinct (client, API, reason) keys remembered. */
  readonly maxKeys?: number;
  readonly now?: () => number;
}

interface Seen {
  loggedAt: number;
  suppressed: number;
}

export class RefusalLog {
  private readonly seen = new Map<string, Seen>();
  private readonly windowMs: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(
    private readonly log: Logger,
    options: RefusalLogOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000;
    this.maxKeys = options.maxKeys ?? 1024;
    this.now = options.now ?? Date.now;
  }

  /** Logs a refusal unless an identical one was logged within the window; returns whether it logged. */
  report(r: Refusal): boolean {
    // The same client retrying may come back on a new connection (new port): the key names its host.
    const host = r.remoteAddress.replace(/:\d+$/, '');
    const key = `${r.clientId ?? ''}\u0000${host}\u0000${r.apiKey}\u0000${r.errorCode ?? ''}\u0000${r.resource ?? ''}\u0000${r.reason}`;
    const t = this.now();
    const prev = this.seen.get(key);
    if (prev && t - prev.loggedAt < this.windowMs) {
      prev.suppressed++;
      return false;
    }
    const repeated = prev?.suppressed ?? 0;
    this.seen.delete(key);
    this.seen.set(key, { loggedAt: t, suppressed: 0 });
    if (this.seen.size > this.maxKeys) this.seen.delete(this.seen.keys().next().value!);
    const fields = {
      clientId: r.clientId,
      remote: r.remoteAddress,
      api: r.api,
      apiKey: r.apiKey,
      apiVersion: r.apiVersion,
      correlationId: r.correlationId,
      reason: r.reason,
      ...(r.errorCode !== null ? { error: errorByCode(r.errorCode).name, errorCode: r.errorCode } : {}),
      ...(r.resource !== null ? { resource: r.resource } : {}),
      ...(repeated > 0 ? { repeated } : {}),
    };
    this.log[r.level](fields, `refused ${r.api} v${r.apiVersion} from ${r.clientId ?? '(no client id)'}: ${r.reason}`);
    return true;
  }
}
