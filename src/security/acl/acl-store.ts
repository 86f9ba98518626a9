/**
 * ACLs in the metadata store, as Kafka keeps them in its metadata log (KRaft's AccessControlEntryRecord and
 * RemoveAccessControlEntryRecord, AclControlManager), followed with a watch so that an ACL created or deleted
 * through any broker applies on every broker sharing the store.
 *
 *   /acls/<id>   {"formatVersion":1,"resourceType":2,"name":"orders-","patternType":4,
 *                 "principal":"User:alice","host":"*","operation":4,"permissionType":3}
 *
 * The id is derived from the binding (a SHA-256 of its seven fields), so creating an ACL that exists writes
 * the same key again, as Kafka's createAcls answers success for a duplicate without a second record, and two
 * brokers creating it at once cannot store it twice. Codes are Kafka's (model.ts). A request is written in
 * transactions of 128 changes (the store's bound on one transaction), so one of up to 128 ACLs applies atomically.
 */
import { createHash } from 'node:crypto';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { MetadataStore, TxnOp } from '../../metadata/types.js';
import { follow, OwnWrites, type Following } from '../../metadata/follow.js';
import type { AclAuthorizer } from './authorizer.js';
import { bindingKey, invalidBinding, invalidFilter, type AclBinding, type AclBindingFilter } from './model.js';

export const ACLS_PREFIX = '/acls/';

/** Kafka's MAX_RECORDS_PER_USER_OP: the most ACLs one CreateAcls or DeleteAcls request may change. */
export const MAX_ACL_CHANGES_PER_REQUEST = 10_000;

export interface ApiResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface DeleteResult extends ApiResult {
  readonly deleted: readonly AclBinding[];
}

interface Stored {
  readonly formatVersion: 1;
  readonly resourceType: number;
  readonly name: string;
  readonly patternType: number;
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

/** The operations of one store transaction (the local and ZooKeeper stores' default maxTxnOps). */
const TXN_OPS = 128;

const OK: ApiResult = { errorCode: ErrorCode.NONE, errorMessage: null };

export class AclStore {
  private following: Following | null = null;
  /** This broker's own ACL writes, by id, until the store is past them: a DENY briefly undone lets a request through. */
  private readonly ownWrites = new OwnWrites();

  constructor(
    private readonly store: MetadataStore,
    private readonly authorizer: AclAuthorizer,
    /** Where a failure to follow the store, or a record that does not decode, is reported. */
    private readonly onWatchError: (err: Error) => void,
  ) {}

  /** Loads every ACL into the authorizer, then follows the store's changes (follow.ts). */
  async load(): Promise<void> {
    this.following = await follow(
      this.store,
      { prefix: ACLS_PREFIX },
      {
        reset: (kvs, revision) => {
          const ids = new Set(kvs.map((kv) => kv.key.slice(ACLS_PREFIX.length)));
          for (const id of this.authorizer.ids()) if (!ids.has(id) && !this.ownWrites.after(id, revision)) this.authorizer.remove(id);
          for (const kv of kvs) {
            const id = kv.key.slice(ACLS_PREFIX.length);
            if (!this.ownWrites.after(id, kv.modRevision)) this.apply(id, kv.value);
          }
          this.ownWrites.settled(revision);
        },
        changes: (events, revision) => {
          for (const e of events) {
            const id = e.kv.key.slice(ACLS_PREFIX.length);
            if (this.ownWrites.after(id, e.kv.modRevision)) continue;
            if (e.type === 'delete') this.authorizer.remove(id);
            else this.apply(id, e.kv.value);
          }
          this.ownWrites.settled(revision);
        },
        error: (err) => this.onWatchError(err),
      },
    );
  }

  async close(): Promise<void> {
    await this.following?.cancel();
    this.following = null;
  }

  /** CreateAcls: each binding checked as Kafka checks it, the valid ones stored in one transaction. */
  async create(bindings: readonly AclBinding[]): Promise<ApiResult[]> {
    const results: ApiResult[] = [];
    const puts = new Map<string, AclBinding>();
    for (const b of bindings) {
      const invalid = invalidBinding(b);
      if (invalid) {
        results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: invalid });
        continue;
      }
      puts.set(aclId(b), b);
      results.push(OK);
    }
    if (puts.size > MAX_ACL_CHANGES_PER_REQUEST) {
      const message = `Cannot create more than ${MAX_ACL_CHANGES_PER_REQUEST} acls in a single request.`;
      return results.map((r) => (r.errorCode === ErrorCode.NONE ? { errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: message } : r));
    }
    if (puts.size > 0) {
      const ids = [...puts.keys()];
      const revisions = await this.write(ids.map((id): TxnOp => ({ type: 'put', key: ACLS_PREFIX + id, value: encode(puts.get(id)!) })));
      // Read-your-writes on this broker; the watch brings the same change to the others.
      ids.forEach((id, i) => {
        this.authorizer.put(id, puts.get(id)!);
        this.ownWrites.wrote(id, revisions[i]!);
      });
    }
    return results;
  }

  /** DeleteAcls: every ACL each filter matches, removed in one transaction (Kafka applies the request atomically). */
  async delete(filters: readonly AclBindingFilter[]): Promise<DeleteResult[]> {
    const results: DeleteResult[] = [];
    const deletes = new Map<string, AclBinding>();
    for (const f of filters) {
      const invalid = invalidFilter(f);
      if (invalid) {
        results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: invalid, deleted: [] });
        continue;
      }
      const matched = this.authorizer.acls(f);
      for (const [id, b] of matched) deletes.set(id, b);
      results.push({ ...OK, deleted: matched.map(([, b]) => b) });
    }
    if (deletes.size > MAX_ACL_CHANGES_PER_REQUEST) {
      const message = `Cannot remove more than ${MAX_ACL_CHANGES_PER_REQUEST} acls in a single delete operation.`;
      return results.map((r) => (r.errorCode === ErrorCode.NONE ? { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: message, deleted: [] } : r));
    }
    if (deletes.size > 0) {
      const ids = [...deletes.keys()];
      const revisions = await this.write(ids.map((id): TxnOp => ({ type: 'delete', key: ACLS_PREFIX + id })));
      ids.forEach((id, i) => {
        this.authorizer.remove(id);
        this.ownWrites.wrote(id, revisions[i]!);
      });
    }
    return results;
  }

  /** DescribeAcls: the ACLs the filter matches, or INVALID_REQUEST for a filter with an UNKNOWN element. */
  describe(filter: AclBindingFilter): { result: ApiResult; acls: AclBinding[] } {
    const invalid = invalidFilter(filter);
    if (invalid) return { result: { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: invalid }, acls: [] };
    return { result: OK, acls: this.authorizer.acls(filter).map(([, b]) => b) };
  }

  /**
   * Writes the changes in transactions of at most TXN_OPS operations (the store's bound on one transaction):
   * a request changing up to that many ACLs applies atomically, a larger one in that many steps.
   */
  private async write(ops: TxnOp[]): Promise<number[]> {
    const revisions: number[] = [];
    for (let i = 0; i < ops.length; i += TXN_OPS) {
      const chunk = ops.slice(i, i + TXN_OPS);
      const { revision } = await this.store.txn({ success: chunk });
      for (let j = 0; j < chunk.length; j++) revisions.push(revision);
    }
    return revisions;
  }

  private apply(id: string, value: Uint8Array): void {
    try {
      this.authorizer.put(id, decode(value));
    } catch (err) {
      this.onWatchError(new Error(`ACL record ${ACLS_PREFIX}${id} does not decode: ${(err as Error).message}`));
    }
  }
}

/** The key an ACL is stored under: the same binding always gets the same id. */
export function aclId(b: AclBinding): string {
  return createHash('sha256').update(bindingKey(b)).digest('hex').slice(0, 32);
}

function encode(b: AclBinding): Uint8Array {
  const stored: Stored = { formatVersion: 1, ...b.pattern, ...b.entry };
  return Buffer.from(JSON.stringify(stored));
}

function decode(value: Uint8Array): AclBinding {
  const s = JSON.parse(Buffer.from(value).toString('utf8')) as Stored;
  if (s.formatVersion !== 1) throw new Error(`unknown formatVersion ${String(s.formatVersion)}`);
  for (const k of ['resourceType', 'patternType', 'operation', 'permissionType'] as const) if (!Number.isInteger(s[k])) throw new Error(`${k} is not an integer`);
  for (const k of ['name', 'principal', 'host'] as const) if (typeof s[k] !== 'string') throw new Error(`${k} is not a string`);
  return {
    pattern: { resourceType: s.resourceType, name: s.name, patternType: s.patternType },
    entry: { principal: s.principal, host: s.host, operation: s.operation, permissionType: s.permissionType },
  };
}
