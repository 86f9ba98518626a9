/**
 * What the broker must do with each fuzz case, and the checks around the run.
 *
 * A case's expectation comes from parsing its frame exactly as the broker does (protocol/headers.ts and
 * the generated decoder, trailing bytes tolerated): a request that parses at a served version must be
 * answered with a response the generated decoder reads at that version, carrying the request's
 * correlation id (Kafka answers bad content with error codes and closes a connection only for what it
 * cannot parse); a frame that does not parse, an unknown API or version, or an oversized frame must close
 * the connection; ApiVersions of an unknown version gets the KIP-511 v0 answer; Produce with acks=0 gets
 * no answer. Every case is followed on the same connection by an ApiVersions v0 probe, so "no answer" and
 * "the connection is stuck" can be told apart, and responses must come in request order.
 */
import type { ApiDescriptor } from '../../../protocol/api.js';
import { decodeResponseFrame, readRequestHeader } from '../../../protocol/headers.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { encodeRequestFrame } from '../../../protocol/headers.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { Writer } from '../../../protocol/wire/writer.js';
import type { Handler } from '../../../src/api/handler.js';
import { RawConnection } from '../raw-connection.js';

/** APIs whose answer may legitimately wait for other clients or for data (long polls, rebalances). */
const WAITING_APIS = new Set([1, 11, 14]);
/**
 * How long to wait for such an answer before moving on: a group whose member asked for a rebalance
 * timeout of 2^31-1 ms legitimately holds every later JoinGroup that long (as Kafka does).
 */
const WAITING_DEADLINE_MS = 1500;

/** The deadline of one exchange: shorter for the APIs that may wait by design. */
export function deadlineFor(exp: Expected, deadlineMs: number): number {
  return (exp.kind === 'answer' || exp.kind === 'acks0') && WAITING_APIS.has(exp.api.apiKey) ? Math.min(deadlineMs, WAITING_DEADLINE_MS) : deadlineMs;
}

export type Expected =
  | { kind: 'answer'; api: ApiDescriptor; version: number; correlationId: number; request: unknown; mayClose?: string }
  | { kind: 'acks0'; api: ApiDescriptor; version: number; correlationId: number }
  | { kind: 'fallback'; correlationId: number }
  | { kind: 'close'; why: string };

/** What the broker must do with `frame` (size prefix included, size consistent with the body). */
export function expectationOf(frame: Buffer, handlers: ReadonlyMap<number, Handler>, maxRequestBytes: number): Expected {
  const size = frame.readInt32BE(0);
  if (size > maxRequestBytes) return { kind: 'close', why: `frame of ${size} bytes over socket.request.max.bytes` };
  if (size <= 0) return { kind: 'close', why: `frame size ${size}` };
  const r = new Reader(frame.subarray(4));
  const { header } = readRequestHeader(r);
  if (!r.ok) return { kind: 'close', why: 'header does not parse' };
  const handler = handlers.get(header.requestApiKey);
  const v = header.requestApiVersion;
  if (!handler || v < handler.versions.min || v > handler.versions.max) {
    if (handler && header.requestApiKey === ApiVersionsApi.apiKey) return { kind: 'fallback', correlationId: header.correlationId };
    return { kind: 'close', why: `API ${header.requestApiKey} v${v} not served` };
  }
  let request: unknown;
  try {
    request = handler.api.request.decode(r, v);
    r.check();
  } catch (e) {
    return { kind: 'close', why: `body does not parse: ${String((e as Error).message ?? e).slice(0, 120)}` };
  }
  if (header.requestApiKey === 0 && (request as { acks: number }).acks === 0) return { kind: 'acks0', api: handler.api, version: v, correlationId: header.correlationId };
  // A string that is not valid UTF-8 decodes with replacement characters (as Java's new String(bytes, UTF_8)
  // in Kafka), which can make it longer than its 32,767-byte limit: neither Kafka nor Ledgerline can then echo
  // it in a response, and closing the connection is a fair answer (logged by the broker).
  let mayClose: string | undefined;
  try {
    handler.api.request.encode(new Writer(), request, v);
  } catch (e) {
    mayClose = `the decoded request does not re-encode (${String((e as Error).message ?? e).slice(0, 120)})`;
  }
  return { kind: 'answer', api: handler.api, version: v, correlationId: header.correlationId, request, ...(mayClose ? { mayClose } : {}) };
}

export interface Outcome {
  /** Response frames received before the probe's (without size prefix). */
  frames: Buffer[];
  /** How the exchange ended. */
  end: 'probe' | 'closed' | 'timeout';
  ms: number;
}

/** An ApiVersions v0 request with the given correlation id. */
export function probeFrame(correlationId: number): Buffer {
  return Buffer.concat(encodeRequestFrame(ApiVersionsApi, 0, correlationId, 'fuzz-probe', ApiVersionsApi.request.create()));
}

function correlationIdOf(f: Buffer): number {
  return f.length >= 4 ? f.readInt32BE(0) : NaN;
}

/** Writes the case frame then a probe, and collects what comes back until the probe's answer, a close or the deadline. */
export async function exchange(conn: RawConnection, frame: Buffer | Buffer[], probeId: number, deadlineMs: number): Promise<Outcome> {
  const t0 = Date.now();
  conn.write(frame);
  if (!conn.isClosed) conn.write(probeFrame(probeId));
  const frames: Buffer[] = [];
  for (;;) {
    const left = deadlineMs - (Date.now() - t0);
    try {
      if (left <= 0) throw new Error('deadline');
      const f = await conn.nextFrame(left);
      if (correlationIdOf(f) === probeId) return { frames, end: 'probe', ms: Date.now() - t0 };
      frames.push(f);
    } catch {
      return { frames, end: conn.isClosed ? 'closed' : 'timeout', ms: Date.now() - t0 };
    }
  }
}

export interface Verdict {
  /** Null when the broker behaved; otherwise a short finding kind. */
  finding: string | null;
  detail: string;
  /** The connection can carry the next case. */
  reusable: boolean;
  /** The answer, decoded, when there was one. */
  response?: unknown;
}

/** Judges an outcome against what was expected. */
export function judge(exp: Expected, out: Outcome): Verdict {
  const bad = (finding: string, detail: string): Verdict => ({ finding, detail, reusable: false });
  if (out.end === 'timeout') {
    if ((exp.kind === 'answer' || exp.kind === 'acks0') && WAITING_APIS.has(exp.api.apiKey)) return { finding: null, detail: 'long wait (allowed for this API)', reusable: false };
    return bad('no-answer-within-deadline', `expected ${describe(exp)}; after ${out.ms} ms: ${out.frames.length} frame(s), connection open`);
  }
  switch (exp.kind) {
    case 'close':
      if (out.frames.length > 0) return bad('answered-unparseable', `expected a close (${exp.why}); got ${out.frames.length} response frame(s)`);
      if (out.end === 'probe') return bad('unparseable-ignored', `expected a close (${exp.why}); the request was skipped and the probe answered`);
      return { finding: null, detail: `closed (${exp.why})`, reusable: false };
    case 'fallback': {
      if (out.frames.length === 0) return out.end === 'closed' ? bad('closed-apiversions', 'ApiVersions of an unknown version closed the connection instead of the KIP-511 answer') : bad('no-apiversions-fallback', 'no answer');
      try {
        const { correlationId, response } = decodeResponseFrame(ApiVersionsApi, 0, out.frames[0]!);
        if (correlationId !== exp.correlationId) return bad('wrong-correlation-id', `ApiVersions fallback answered ${correlationId}, expected ${exp.correlationId}`);
        if (response.errorCode !== 35) return bad('apiversions-fallback-error', `errorCode ${response.errorCode}, expected UNSUPPORTED_VERSION (35)`);
      } catch (e) {
        return bad('malformed-response', `ApiVersions fallback does not decode as v0: ${String(e)}`);
      }
      return { finding: null, detail: 'KIP-511 fallback', reusable: out.end === 'probe' };
    }
    case 'acks0':
      if (out.frames.length > 0) return bad('answered-acks0', `Produce with acks=0 got ${out.frames.length} response frame(s)`);
      return { finding: null, detail: out.end === 'probe' ? 'acks=0, no answer' : 'acks=0, closed', reusable: out.end === 'probe' };
    case 'answer': {
      if (out.frames.length === 0 && exp.mayClose !== undefined && out.end === 'closed') return { finding: null, detail: `closed (${exp.mayClose})`, reusable: false };
      if (out.frames.length === 0) return bad('closed-parseable', `${exp.api.name} v${exp.version} parses but the connection was closed without an answer`);
      if (out.frames.length > 1) return bad('extra-responses', `${out.frames.length} response frames for one request`);
      let response: unknown;
      try {
        const d = decodeResponseFrame(exp.api, exp.version, out.frames[0]!);
        if (d.correlationId !== exp.correlationId) return bad('wrong-correlation-id', `${exp.api.name} v${exp.version} answered with correlation id ${d.correlationId}, expected ${exp.correlationId}`);
        response = d.response;
      } catch (e) {
        return bad('malformed-response', `${exp.api.name} v${exp.version} response does not decode: ${String(e).slice(0, 200)}`);
      }
      if (out.end === 'closed') return { finding: 'closed-after-answer', detail: `${exp.api.name} v${exp.version} answered, then the probe was not`, reusable: false, response };
      return { finding: null, detail: 'answered', reusable: true, response };
    }
  }
}

function describe(exp: Expected): string {
  switch (exp.kind) {
    case 'answer':
      return `an answer to ${exp.api.name} v${exp.version}`;
    case 'acks0':
      return 'no answer (acks=0)';
    case 'fallback':
      return 'the ApiVersions fallback';
    case 'close':
      return `a close (${exp.why})`;
  }
}

/** A fresh connection is served ApiVersions v3 within the deadline. */
export async function brokerAnswers(port: number, deadlineMs: number): Promise<boolean> {
  let c: RawConnection | undefined;
  try {
    c = await RawConnection.connect(port);
    const res = await c.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'fuzz-health', clientSoftwareVersion: '1.0' }), deadlineMs);
    return res.errorCode === 0 && res.apiKeys.length > 0;
  } catch {
    return false;
  } finally {
    c?.destroy();
  }
}
