/**
 * Topic deletions a __consumer_offsets partition has not applied yet. Kafka's GroupCoordinatorService
 * (onPartitionsDeleted) writes OffsetCommit tombstones for a deleted topic in every coordinator partition, all of
 * which it has loaded. Here partitions load on first use: a partition that is not active when a topic is deleted
 * (never loaded yet, loading, failed, or released) applies the deletion when it next loads, before it takes a
 * request, so OffsetFetch never answers an offset of a deleted topic, nor of a new topic of the same name.
 *
 * ```
 *   deleted:  name → sequence number of its latest deletion (1, 2, 3, ... since start)
 *   applied:  partition → every deletion up to this sequence number is in its log (active partitions: all)
 *   at load:  the names deleted after `applied[p]` are tombstoned in p, then applied[p] = latest
 * ```
 *
 * One entry per distinct deleted name, kept while the process runs (the topic registry keeps its deleted names
 * too). Deletions made while the broker was down are found at load by the topic registry instead: the offsets
 * of a topic it does not know are tombstoned as well. Offsets are only ever committed for topics that exist
 * (UNKNOWN_TOPIC_OR_PARTITION otherwise), and the registry is loaded before the coordinator starts, so an
 * unknown topic is a deleted one.
 */
import type { TopicView } from './context.js';
import type { OffsetStore } from './offsets.js';

export class TopicDeletions {
  private readonly deleted = new Map<string, number>();
  private readonly applied = new Map<number, number>();
  private latest = 0;

  /** A topic was deleted: `appliedNow` are the partitions that tombstone its offsets at once (the active ones). */
  record(topic: string, appliedNow: Iterable<number>): void {
    const previous = this.latest++;
    this.deleted.delete(topic);
    this.deleted.set(topic, this.latest);
    for (const p of appliedNow) if ((this.applied.get(p) ?? 0) === previous) this.applied.set(p, this.latest);
  }

  /**
   * The topics deleted since the partition last applied deletions (it is loading now); the partition has
   * applied every deletion once the caller tombstoned their offsets.
   */
  takePending(partition: number): Set<string> {
    const since = this.applied.get(partition) ?? 0;
    const pending = new Set<string>();
    if (since < this.latest) {
      for (const [topic, seq] of this.deleted) if (seq > since) pending.add(topic);
    }
    this.applied.set(partition, this.latest);
    return pending;
  }

  /**
   * The offsets a loading partition must tombstone: those of the topics deleted since it last applied
   * deletions and of the topics the registry no longer knows, and any offset recorded with a topic id that is
   * not its topic's now (OffsetCommitValue v4: the topic was deleted and created again under its name, even
   * while the broker was down). `topics` names the first two kinds, `offsets` counts them all.
   */
  staleAtLoad(partition: number, offsets: OffsetStore, topics: TopicView): { topics: Set<string>; offsets: number; entries: StaleOffset[] } {
    const stale = this.takePending(partition);
    const entries: StaleOffset[] = [];
    for (const groupId of offsets.groupIds()) {
      for (const [topic, byPartition] of offsets.forGroup(groupId) ?? []) {
        const current = topics.get(topic);
        if (!current) stale.add(topic);
        const wholeTopic = stale.has(topic);
        for (const [partition, o] of byPartition) {
          if (wholeTopic || (o.topicId !== undefined && o.topicId !== current!.topicId)) entries.push({ groupId, topic, partition });
        }
      }
    }
    return { topics: stale, offsets: entries.length, entries };
  }
}

/** One committed offset to remove. */
export interface StaleOffset {
  readonly groupId: string;
  readonly topic: string;
  readonly partition: number;
}
