/**
 * Incremental fetch sessions (KIP-227), as the Java consumer uses them.
 *
 * A consumer that sends `sessionEpoch = 0` asks for a new session: the broker answers the full fetch and
 * returns a session id. Later requests carry (sessionId, epoch = previous + 1) and list only partitions
 * whose fetch position or limits changed, plus `forgottenTopicsData` to drop some; the broker answers only
 * partitions with something new (records, a changed high watermark / log start offset / last stable
 * offset, or an error). `sessionEpoch = -1` is a sessionless full fetch (and closes `sessionId`, if any).
 *
 * Errors (Kafka's FetchSession.scala): FETCH_SESSION_ID_NOT_FOUND for an unknown id,
 * INVALID_FETCH_SESSION_EPOCH for an epoch other than the expected one; both answered with no partitions,
 * after which the client starts a new session. The cache holds at most
 * `max.incremental.fetch.session.cache.slots` sessions; the least recently used one is evicted.
 */
import { ErrorCode } from '../../protocol/error-codes.js';

export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;

/** One partition a fetch must read, resolved from the request and the session. */
export interface FetchPartition {
  topic: string;
  topicId: string;
  partition: number;
  fetchOffset: bigint;
  partitionMaxBytes: number;
  currentLeaderEpoch: number;
  logStartOffset: bigint;
}

/** What the broker last told the client about a partition, to decide what an incremental response needs. */
interface Reported {
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
}

interface SessionPartition extends FetchPartition {
  /** The session it belongs to: `complete` finds a partition of its session through the object, not the key. */
  readonly session: FetchSession;
  reported: Reported | null;
}

class FetchSession {
  /** Insertion-ordered; a partition that returns data moves to the end (fairness across partitions). */
  readonly partitions = new Map<string, SessionPartition>();
  nextEpoch = 1;
  lastUsedMs = Date.now();
  constructor(readonly id: number) {}
}

export interface FetchRequestPartitionView {
  key: string;
  fetch: FetchPartition;
}

export interface FetchSessionResult {
  /** A session-level error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH), or NONE. */
  errorCode: number;
  /** Session id to put in the response: 0 for sessionless fetches and errors. */
  sessionId: number;
  /** Partitions to read, in response order. */
  partitions: FetchPartition[];
  /** Their keys (partitionKey), in the same order. */
  keys: string[];
  /** True for an incremental fetch: `mustRespond` filters the answer. */
  incremental: boolean;
}

export interface PartitionOutcome {
  key: string;
  /** The partition as `begin` returned it (in a session, the session's own object: no lookup by key). */
  fetch?: FetchPartition;
  hasRecords: boolean;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
}

export function partitionKey(topicIdOrName: string, partition: number): string {
  return `${topicIdOrName}\u0000${partition}`;
}

export class FetchSessionCache {
  private readonly sessions = new Map<number, FetchSession>();
  private nextId = 1 + Math.floor(Math.random() * 0x3fffffff);

  constructor(private readonly maxSessions: number) {}

  get size(): number {
    return this.sessions.size;
  }

  private newId(): number {
    for (;;) {
      const id = this.nextId;
      this.nextId = this.nextId >= 0x7fffffff ? 1 : this.nextId + 1;
      if (!this.sessions.has(id)) return id;
    }
  }

  /**
   * Resolves a fetch into the partitions to read. `requested` are the partitions the request lists (in
   * order), `forgotten` the keys of `forgottenTopicsData`.
   */
  begin(sessionId: number, epoch: number, requested: FetchRequestPartitionView[], forgotten: string[]): FetchSessionResult {
    if (epoch === FINAL_EPOCH || epoch === INITIAL_EPOCH) {
      if (sessionId !== 0) this.sessions.delete(sessionId);
      if (epoch === FINAL_EPOCH || this.maxSessions <= 0) {
        return { errorCode: ErrorCode.NONE, sessionId: 0, partitions: requested.map((p) => p.fetch), keys: requested.map((p) => p.key), incremental: false };
      }
      if (this.sessions.size >= this.maxSessions) this.evictOne();
      const s = new FetchSession(this.newId());
      for (const p of requested) s.partitions.set(p.key, { ...p.fetch, session: s, reported: null });
      this.sessions.set(s.id, s);
      return { errorCode: ErrorCode.NONE, sessionId: s.id, ...contents(s), incremental: false };
    }
    const s = this.sessions.get(sessionId);
    if (!s) return { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, partitions: [], keys: [], incremental: false };
    if (epoch !== s.nextEpoch) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, partitions: [], keys: [], incremental: false };
    s.nextEpoch = epoch >= 0x7fffffff ? 1 : epoch + 1;
    s.lastUsedMs = Date.now();
    // Refresh recency in the LRU order.
    this.sessions.delete(s.id);
    this.sessions.set(s.id, s);
    for (const key of forgotten) s.partitions.delete(key);
    for (const p of requested) {
      const existing = s.partitions.get(p.key);
      s.partitions.set(p.key, { ...p.fetch, session: s, reported: existing?.reported ?? null });
    }
    return { errorCode: ErrorCode.NONE, sessionId: s.id, ...contents(s), incremental: true };
  }

  /**
   * After the partitions were read: records what the client now knows and says, per partition, whether an
   * incremental response must include it. For a full fetch every partition is included.
   */
  complete(sessionId: number, incremental: boolean, outcomes: PartitionOutcome[]): boolean[] {
    const s = sessionId === 0 ? undefined : this.sessions.get(sessionId);
    return outcomes.map((o) => {
      const own = o.fetch as SessionPartition | undefined;
      const sp = s === undefined ? undefined : own?.session === s ? own : s.partitions.get(o.key);
      const prev = sp?.reported ?? null;
      const changed =
        prev === null ||
        prev.highWatermark !== o.highWatermark ||
        prev.lastStableOffset !== o.lastStableOffset ||
        prev.logStartOffset !== o.logStartOffset;
      if (sp) {
        // Reported changes only when something moved: most partitions of a large session did not.
        if (changed) sp.reported = { highWatermark: o.highWatermark, lastStableOffset: o.lastStableOffset, logStartOffset: o.logStartOffset };
        if (o.hasRecords) {
          s!.partitions.delete(o.key);
          s!.partitions.set(o.key, sp);
        }
      }
      return !incremental || o.hasRecords || o.errorCode !== ErrorCode.NONE || changed;
    });
  }

  private evictOne(): void {
    const oldest = this.sessions.keys().next();
    if (!oldest.done) this.sessions.delete(oldest.value);
  }
}

/** A session's partitions and their keys, in its order (the order responses follow). */
function contents(s: FetchSession): { partitions: FetchPartition[]; keys: string[] } {
  const partitions: FetchPartition[] = [];
  const keys: string[] = [];
  for (const [key, p] of s.partitions) {
    partitions.push(p);
    keys.push(key);
  }
  return { partitions, keys };
}
