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
 *
 * Quiet partitions. Most partitions of a large session are caught up and see nothing between two fetches.
 * Kafka reads every partition of the session on every fetch and drops the unchanged ones from the answer; here
 * a partition whose last read answered nothing new (caught up, no records, no error) is *quiet* at the log's
 * state version (PartitionLog.stateVersion) and is not read again until that version moves (an append, a raised
 * log start offset, the log's end), the client lists it again, the isolation level changes, or the broker
 * stops serving it (ownership, authorization: checked on every fetch, they cost no read). The answer is the
 * same as Kafka's: a quiet partition's read would have been dropped from it. A session also watches the logs
 * of its partitions (LogStateWatcher), so a long poll is woken by the session, not by one waiter per
 * partition per request.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { IsolationLevel, LogStateWatcher } from '../log/partition-log.js';

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

/** What a session needs of a partition's log: its state version, and to be told when it moves. */
export interface WatchableLog {
  readonly stateVersion: number;
  watchState(w: LogStateWatcher): void;
  unwatchState(w: LogStateWatcher): void;
}

/** What the broker last told the client about a partition, to decide what an incremental response needs. */
interface Reported {
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
}

const NOT_QUIET = -1;

class SessionPartition implements FetchPartition, LogStateWatcher {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  // The client's position and limits, set by `update`.
  fetchOffset!: bigint;
  partitionMaxBytes!: number;
  currentLeaderEpoch!: number;
  logStartOffset!: bigint;
  reported: Reported | null = null;
  /** The log it was last read from, and watches. */
  log: WatchableLog | null = null;
  /** Caught up at its last read: its new data may end a long poll (as the waiters of a sessionless fetch). */
  waitable = false;
  /** The log's state version at which the last read answered nothing new, or NOT_QUIET. */
  quietVersion = NOT_QUIET;
  quietIsolation: IsolationLevel = 'read_uncommitted';

  constructor(
    /** The session it belongs to: `complete` finds a partition of its session through the object, not the key. */
    readonly session: FetchSession,
    readonly key: string,
    f: FetchPartition,
  ) {
    this.topic = f.topic;
    this.topicId = f.topicId;
    this.partition = f.partition;
    this.update(f);
  }

  /** The client listed it again (a new position, limit or leader epoch): the next fetch reads it. */
  update(f: FetchPartition): void {
    this.fetchOffset = f.fetchOffset;
    this.partitionMaxBytes = f.partitionMaxBytes;
    this.currentLeaderEpoch = f.currentLeaderEpoch;
    this.logStartOffset = f.logStartOffset;
    this.quietVersion = NOT_QUIET;
  }

  logStateChanged(): void {
    if (this.waitable) this.session.wake();
  }

  unwatch(): void {
    this.log?.unwatchState(this);
    this.log = null;
    this.waitable = false;
    this.quietVersion = NOT_QUIET;
  }
}

/** A session as one fetch reads it (see "Quiet partitions" above). */
export interface FetchSessionReads {
  /** Counts the changes of its caught-up partitions' logs: a fetch notes it before a read and waits only if unmoved. */
  readonly changes: number;
  /** Closed, replaced or evicted meanwhile: a fetch still reading it answers what it has. */
  readonly closed: boolean;
  /** The distinct topics of its partitions, to authorize once per topic. */
  topicNames(): string[];
  /**
   * The partitions to read now, in session order, with their keys: every partition but the quiet ones still
   * quiet for this isolation level that `serves` (owned, readable) says the broker still serves.
   */
  toRead(isolation: IsolationLevel, serves: (f: FetchPartition) => boolean): { partitions: FetchPartition[]; keys: string[] };
  /**
   * After `f` (one of toRead's) was read from `log`, whose state version was `versionBefore` when the read
   * began: watches the log; `caughtUp` marks it one whose new data ends a long poll, `quiet` one that answered
   * nothing new. True when a caught-up partition's log changed during the read (read again, do not wait).
   */
  settle(f: FetchPartition, log: WatchableLog, versionBefore: number, isolation: IsolationLevel, caughtUp: boolean, quiet: boolean): boolean;
  /** `f` answered an error: neither quiet nor waited on. */
  unsettle(f: FetchPartition): void;
  /** Resolves when `changes` moves past `since`, at `deadline`, or when `signal` aborts. */
  waitForChange(since: number, deadline: number, signal: AbortSignal): Promise<void>;
}

class FetchSession implements FetchSessionReads {
  /** Insertion-ordered; a partition that returns data moves to the end (fairness across partitions). */
  readonly partitions = new Map<string, SessionPartition>();
  /** How many of its partitions each topic has. */
  private readonly topicCounts = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  nextEpoch = 1;
  lastUsedMs = Date.now();
  changes = 0;
  closed = false;
  constructor(readonly id: number) {}

  set(key: string, f: FetchPartition): void {
    const existing = this.partitions.get(key);
    if (existing) {
      existing.update(f);
      return;
    }
    this.partitions.set(key, new SessionPartition(this, key, f));
    this.topicCounts.set(f.topic, (this.topicCounts.get(f.topic) ?? 0) + 1);
  }

  forget(key: string): void {
    const sp = this.partitions.get(key);
    if (!sp) return;
    sp.unwatch();
    this.partitions.delete(key);
    const n = (this.topicCounts.get(sp.topic) ?? 1) - 1;
    if (n > 0) this.topicCounts.set(sp.topic, n);
    else this.topicCounts.delete(sp.topic);
  }

  /** Closed or evicted: stops watching its logs and ends the long polls waiting on it. */
  close(): void {
    this.closed = true;
    for (const sp of this.partitions.values()) sp.unwatch();
    this.wake();
  }

  wake(): void {
    this.changes++;
    for (const w of this.waiters) w();
  }

  topicNames(): string[] {
    return [...this.topicCounts.keys()];
  }

  toRead(isolation: IsolationLevel, serves: (f: FetchPartition) => boolean): { partitions: FetchPartition[]; keys: string[] } {
    const partitions: FetchPartition[] = [];
    const keys: string[] = [];
    for (const sp of this.partitions.values()) {
      if (sp.quietVersion !== NOT_QUIET && sp.log !== null && sp.log.stateVersion === sp.quietVersion && sp.quietIsolation === isolation && serves(sp)) continue;
      partitions.push(sp);
      keys.push(sp.key);
    }
    return { partitions, keys };
  }

  settle(f: FetchPartition, log: WatchableLog, versionBefore: number, isolation: IsolationLevel, caughtUp: boolean, quiet: boolean): boolean {
    const sp = f as SessionPartition;
    if (sp.session !== this || this.closed || this.partitions.get(sp.key) !== sp) return false;
    if (sp.log !== log) {
      sp.log?.unwatchState(sp);
      log.watchState(sp);
      sp.log = log;
    }
    sp.waitable = caughtUp;
    sp.quietVersion = quiet ? versionBefore : NOT_QUIET;
    sp.quietIsolation = isolation;
    return caughtUp && log.stateVersion !== versionBefore;
  }

  unsettle(f: FetchPartition): void {
    const sp = f as SessionPartition;
    if (sp.session === this) sp.unwatch();
  }

  waitForChange(since: number, deadline: number, signal: AbortSignal): Promise<void> {
    const remaining = deadline - Date.now();
    if (this.changes !== since || this.closed || remaining <= 0 || signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', finish);
        this.waiters.delete(finish);
        resolve();
      };
      const timer = setTimeout(finish, remaining);
      signal.addEventListener('abort', finish, { once: true });
      this.waiters.add(finish);
    });
  }
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
  /** The session's partitions, read through it (toRead); null for a sessionless fetch or an error. */
  session: FetchSessionReads | null;
  /** A sessionless fetch's partitions to read, in response order (empty with a session: see `session`). */
  partitions: FetchPartition[];
  /** Their keys (partitionKey), in the same order. */
  keys: string[];
  /** True for an incremental fetch: `complete` filters the answer. */
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
      if (sessionId !== 0) this.remove(sessionId);
      if (epoch === FINAL_EPOCH || this.maxSessions <= 0) {
        return { errorCode: ErrorCode.NONE, sessionId: 0, session: null, partitions: requested.map((p) => p.fetch), keys: requested.map((p) => p.key), incremental: false };
      }
      if (this.sessions.size >= this.maxSessions) this.evictOne();
      const s = new FetchSession(this.newId());
      for (const p of requested) s.set(p.key, p.fetch);
      this.sessions.set(s.id, s);
      return { errorCode: ErrorCode.NONE, sessionId: s.id, session: s, partitions: [], keys: [], incremental: false };
    }
    const s = this.sessions.get(sessionId);
    if (!s) return { errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, sessionId: 0, session: null, partitions: [], keys: [], incremental: false };
    if (epoch !== s.nextEpoch) return { errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, sessionId: 0, session: null, partitions: [], keys: [], incremental: false };
    s.nextEpoch = epoch >= 0x7fffffff ? 1 : epoch + 1;
    s.lastUsedMs = Date.now();
    // Refresh recency in the LRU order.
    this.sessions.delete(s.id);
    this.sessions.set(s.id, s);
    for (const key of forgotten) s.forget(key);
    for (const p of requested) s.set(p.key, p.fetch);
    return { errorCode: ErrorCode.NONE, sessionId: s.id, session: s, partitions: [], keys: [], incremental: true };
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

  private remove(id: number): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    s.close();
  }

  private evictOne(): void {
    const oldest = this.sessions.keys().next();
    if (!oldest.done) this.remove(oldest.value);
  }
}
