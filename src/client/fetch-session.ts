/**
 * Incremental fetch sessions (KIP-227), the client side of one session with one broker.
 *
 *   request 1  sessionId 0, epoch 0   every partition            → broker creates session S, answers all
 *   request 2  sessionId S, epoch 1   only partitions whose fetch position changed, plus the forgotten ones
 *                                      → broker answers only partitions with news (records, HW moved, error)
 *   request 3  sessionId S, epoch 2   ...
 *
 * This is what Kafka's `FetchSessionHandler` does: a consumer of thousands of partitions sends and receives a
 * few of them per fetch instead of all. A partition stays in the session with the position last sent; the
 * caller sends it again only when its position moved (after records arrived) or its limits changed.
 *
 * When the broker answers with a top-level error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, ...)
 * or a request fails, the session is dropped and the next request is a full one that opens a new session. A broker that does
 * not create a session (answers sessionId 0, e.g. its session cache is full) gets full requests every time.
 * Fetch versions below 7 have no sessions: `build` then always makes sessionless full requests.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { FetchRequestFetchTopic, FetchRequestForgottenTopic, FetchResponse } from '../../protocol/messages/001-fetch.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';

/** Kafka's FetchMetadata epochs. */
export const FetchSessionEpoch = {
  /** Opens a new session (with sessionId 0). */
  INITIAL: 0,
  /** No session, or closes one. */
  FINAL: -1,
} as const;

export interface SessionPartition {
  readonly topic: string;
  /** Needed for Fetch v13+ (topics by id). */
  readonly topicId: string;
  readonly partition: number;
  readonly fetchOffset: bigint;
  readonly partitionMaxBytes: number;
  /** Default -1. */
  readonly currentLeaderEpoch?: number;
}

export interface SessionRequestFields {
  sessionId: number;
  sessionEpoch: number;
  topics: FetchRequestFetchTopic[];
  forgottenTopicsData: FetchRequestForgottenTopic[];
  /** True when the request names every partition (a new session, or no session). */
  full: boolean;
}

function key(topic: string, partition: number): string {
  return `${partition}\u0000${topic}`;
}

export class FetchSession {
  private id = 0;
  private epoch: number = FetchSessionEpoch.INITIAL;
  /** Partitions as the broker's session holds them (what was last sent for each). */
  private inSession = new Map<string, SessionPartition>();
  /** What the request in flight sends, applied when its answer arrives. */
  private pending: { full: boolean; sent: Map<string, SessionPartition>; epoch: number } | null = null;

  /** The broker's session id, or 0 when there is none. */
  get sessionId(): number {
    return this.id;
  }

  /** The epoch the next incremental request carries. */
  get sessionEpoch(): number {
    return this.epoch;
  }

  /**
   * The session fields of the next Fetch for `wanted` (every partition the caller wants from this broker,
   * at its current position), sent at `version`. Call `onResponse` or `onError` with its outcome before
   * building the next one.
   */
  build(wanted: readonly SessionPartition[], version: number): SessionRequestFields {
    const byTopic = version >= 13;
    const next = new Map(wanted.map((p) => [key(p.topic, p.partition), p] as const));
    if (version < 7) {
      this.pending = null;
      return { sessionId: 0, sessionEpoch: FetchSessionEpoch.FINAL, topics: topicsOf(wanted), forgottenTopicsData: [], full: true };
    }
    if (this.id === 0) {
      this.pending = { full: true, sent: next, epoch: FetchSessionEpoch.INITIAL };
      return { sessionId: 0, sessionEpoch: FetchSessionEpoch.INITIAL, topics: topicsOf(wanted), forgottenTopicsData: [], full: true };
    }
    const changed: SessionPartition[] = [];
    for (const [k, p] of next) {
      const prev = this.inSession.get(k);
      if (!prev || prev.fetchOffset !== p.fetchOffset || prev.partitionMaxBytes !== p.partitionMaxBytes || (prev.currentLeaderEpoch ?? -1) !== (p.currentLeaderEpoch ?? -1)) {
        changed.push(p);
      }
    }
    const forgotten = new Map<string, FetchRequestForgottenTopic>();
    for (const [k, p] of this.inSession) {
      if (next.has(k)) continue;
      const id = byTopic ? p.topicId : p.topic;
      let f = forgotten.get(id);
      if (!f) {
        f = { topic: byTopic ? '' : p.topic, topicId: byTopic ? p.topicId : ZERO_UUID, partitions: [] };
        forgotten.set(id, f);
      }
      f.partitions.push(p.partition);
    }
    this.pending = { full: false, sent: next, epoch: this.epoch };
    return { sessionId: this.id, sessionEpoch: this.epoch, topics: topicsOf(changed), forgottenTopicsData: [...forgotten.values()], full: false };
  }

  /**
   * Applies the answer to the last built request. Returns false when the broker dropped the session (the
   * caller fetches again; the next request is a full one).
   */
  onResponse(response: FetchResponse): boolean {
    const pending = this.pending;
    this.pending = null;
    if (response.errorCode !== ErrorCode.NONE) {
      // The session's state on the broker is unknown after any top-level error: start a new one.
      this.reset();
      return response.errorCode !== ErrorCode.FETCH_SESSION_ID_NOT_FOUND && response.errorCode !== ErrorCode.INVALID_FETCH_SESSION_EPOCH;
    }
    if (!pending) return true;
    if (pending.full) {
      this.id = response.sessionId;
      this.epoch = this.id === 0 ? FetchSessionEpoch.INITIAL : 1;
    } else {
      // Epochs run 1..2^31-1 and wrap to 1 (Kafka's FetchMetadata.nextEpoch).
      this.epoch = this.epoch === 0x7fffffff ? 1 : this.epoch + 1;
    }
    this.inSession = this.id === 0 ? new Map() : pending.sent;
    return true;
  }

  /** The request failed (timeout, disconnect): the broker's session state is unknown, so start over. */
  onError(): void {
    this.reset();
  }

  /** Forgets the session; the next request opens a new one. */
  reset(): void {
    this.id = 0;
    this.epoch = FetchSessionEpoch.INITIAL;
    this.inSession = new Map();
    this.pending = null;
  }

  /**
   * Fields of a request that closes the session on the broker (epoch FINAL) while fetching nothing; null
   * when there is no session.
   */
  closeFields(): SessionRequestFields | null {
    if (this.id === 0) return null;
    const fields = { sessionId: this.id, sessionEpoch: FetchSessionEpoch.FINAL, topics: [], forgottenTopicsData: [], full: false };
    this.reset();
    return fields;
  }
}

function topicsOf(parts: readonly SessionPartition[]): FetchRequestFetchTopic[] {
  const topics = new Map<string, FetchRequestFetchTopic>();
  for (const p of parts) {
    let t = topics.get(p.topic);
    if (!t) {
      t = { topic: p.topic, topicId: p.topicId, partitions: [] };
      topics.set(p.topic, t);
    }
    t.partitions.push({
      partition: p.partition,
      currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
      fetchOffset: p.fetchOffset,
      lastFetchedEpoch: -1,
      logStartOffset: -1n,
      partitionMaxBytes: p.partitionMaxBytes,
      replicaDirectoryId: ZERO_UUID,
      highWatermark: 9223372036854775807n, // Fetch v18: Long.MAX, "not supported", as a consumer sends it (KIP-1166: only followers report one)
    });
  }
  return [...topics.values()];
}
