/**
 * Committed offsets of one __consumer_offsets partition: group → topic → partition → OffsetAndMetadata, as
 * Kafka's OffsetMetadataManager keeps them. Changed only by replaying OffsetCommit records (live writes replay
 * their own records, loading replays the log), so memory and log cannot disagree.
 */
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { createOffsetCommitValue, type OffsetCommitValue } from '../../protocol/messages/data/group-coordinator/offset-commit-value.gen.js';

/** Kafka's OffsetAndMetadata. */
export interface OffsetAndMetadata {
  readonly committedOffset: bigint;
  /** -1 when the committer did not know the leader epoch. */
  readonly leaderEpoch: number;
  readonly metadata: string;
  readonly commitTimestampMs: number;
  /** Set only by OffsetCommit v2-4 with an explicit retention time (record value v1). */
  readonly expireTimestampMs: number | null;
  /**
   * The id of the topic the offset was committed for (OffsetCommitValue v4, as Kafka 4.x writes it), absent in
   * records written without one. An offset whose id is not the topic's now belongs to a deleted topic of the
   * same name.
   */
  readonly topicId?: string;
  /**
   * Where its record stands in the partition's log order (the log offset when loaded, a counter that follows the
   * log's order for live writes): which of a transactional and a plain commit of a partition is the later one
   * (txn-offsets.ts). Kafka's OffsetAndMetadata.recordOffset.
   */
  readonly recordOffset?: number;
}

export function offsetFromRecord(v: OffsetCommitValue): OffsetAndMetadata {
  return {
    committedOffset: v.offset,
    leaderEpoch: v.leaderEpoch,
    metadata: v.metadata,
    commitTimestampMs: Number(v.commitTimestamp),
    expireTimestampMs: v.expireTimestamp >= 0n ? Number(v.expireTimestamp) : null,
    ...(v.topicId === ZERO_UUID ? {} : { topicId: v.topicId }),
  };
}

/** Long.MAX_VALUE, the largest timestamp an int64 record field holds. */
export const LONG_MAX_MS = 2n ** 63n - 1n;

/**
 * A millisecond time as an int64 record field, saturated at Long.MAX_VALUE. Times past 2^53 are inexact in
 * a JS number (now + an OffsetCommit v2-4 retention of Long.MAX_VALUE is 9_223_373_832_971_995_136), and
 * BigInt() of such a float would not fit the field the record encoder writes.
 */
export function saturatedTimestamp(ms: number): bigint {
  if (!(ms < Number(LONG_MAX_MS))) return LONG_MAX_MS;
  if (ms <= -Number(LONG_MAX_MS)) return -LONG_MAX_MS - 1n;
  return BigInt(Math.trunc(ms));
}

/**
 * The expire timestamp of an OffsetCommit v2-4 with an explicit retention: now + retention, saturated at
 * Long.MAX_VALUE (an offset that never expires). Kafka's OffsetMetadataManager.expireTimestampMs adds the two
 * longs unchecked, so a retention near Long.MAX_VALUE wraps to a negative time there and the offset expires at
 * the next retention check; saturating keeps what the client asked for: keep it (practically) forever.
 */
export function expireTimestampMs(nowMs: number, retentionTimeMs: bigint): number {
  const sum = BigInt(nowMs) + retentionTimeMs;
  return sum >= LONG_MAX_MS ? Number(LONG_MAX_MS) : Number(sum);
}

export function offsetToRecord(o: OffsetAndMetadata): OffsetCommitValue {
  return createOffsetCommitValue({
    offset: o.committedOffset,
    leaderEpoch: o.leaderEpoch,
    metadata: o.metadata,
    commitTimestamp: saturatedTimestamp(o.commitTimestampMs),
    expireTimestamp: o.expireTimestampMs === null ? -1n : saturatedTimestamp(o.expireTimestampMs),
    topicId: o.topicId ?? ZERO_UUID,
  });
}

/**
 * Kafka's OffsetExpirationConditionImpl.isOffsetExpired: an offset with an explicit expire timestamp expires
 * then; otherwise `retentionMs` after the base timestamp the group's state picks (commit time, or the time the
 * group became empty).
 */
export function isOffsetExpired(o: OffsetAndMetadata, baseTimestampMs: number, nowMs: number, retentionMs: number): boolean {
  if (o.expireTimestampMs !== null) return nowMs >= o.expireTimestampMs;
  return nowMs - baseTimestampMs >= retentionMs;
}

export type TopicOffsets = Map<number, OffsetAndMetadata>;
export type GroupOffsets = Map<string, TopicOffsets>;

export class OffsetStore {
  private readonly byGroup = new Map<string, GroupOffsets>();
  private count = 0;

  /** Number of committed offsets (partitions) across groups. */
  get size(): number {
    return this.count;
  }

  get(groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.byGroup.get(groupId)?.get(topic)?.get(partition);
  }

  has(groupId: string, topic: string, partition: number): boolean {
    return this.get(groupId, topic, partition) !== undefined;
  }

  put(groupId: string, topic: string, partition: number, offset: OffsetAndMetadata): void {
    let g = this.byGroup.get(groupId);
    if (!g) this.byGroup.set(groupId, (g = new Map()));
    let t = g.get(topic);
    if (!t) g.set(topic, (t = new Map()));
    if (!t.has(partition)) this.count++;
    t.set(partition, offset);
  }

  remove(groupId: string, topic: string, partition: number): boolean {
    const g = this.byGroup.get(groupId);
    const t = g?.get(topic);
    if (!t || !t.delete(partition)) return false;
    this.count--;
    if (t.size === 0) g!.delete(topic);
    if (g!.size === 0) this.byGroup.delete(groupId);
    return true;
  }

  /** The group's offsets (topic → partition → offset), or undefined when it has none. */
  forGroup(groupId: string): GroupOffsets | undefined {
    return this.byGroup.get(groupId);
  }

  groupIds(): IterableIterator<string> {
    return this.byGroup.keys();
  }

  /** Every (group, topic, partition) holding an offset for one of `topics`. */
  *forTopics(topics: ReadonlySet<string>): Generator<{ groupId: string; topic: string; partition: number }> {
    for (const [groupId, g] of this.byGroup) {
      for (const [topic, t] of g) {
        if (!topics.has(topic)) continue;
        for (const partition of t.keys()) yield { groupId, topic, partition };
      }
    }
  }
}
