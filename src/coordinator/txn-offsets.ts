/**
 * Transactional offsets of one __consumer_offsets partition (KIP-98, KIP-447), as Kafka's OffsetMetadataManager
 * keeps them: a TxnOffsetCommit's offsets are pending per producer until the transaction's marker (a control
 * batch in the same partition) commits them into the committed offsets or aborts them.
 *
 * ```
 *   pending:  producerId → group → topic → partition → offset (with the order of its record)
 *   open:     group → producer ids with pending offsets in it (hasPending, DeleteGroups, expiration)
 *
 *   TxnOffsetCommit ─► pending[p]         COMMIT marker ─► committed, where the pending record is newer
 *   OffsetCommit tombstone ─► removed from every producer's pending       ABORT marker ─► dropped
 * ```
 *
 * Ordering (OffsetMetadataManager.replayEndTransactionMarker): at commit, a pending offset replaces the committed
 * one only if its record came later in the log than the committed one's, so a plain OffsetCommit written after a
 * TxnOffsetCommit of the same partition wins whatever the transaction's outcome. Records carry their order
 * (`recordOffset`): the log offset when loading, a counter following the log's order for live writes.
 */
import type { OffsetAndMetadata, OffsetStore } from './offsets.js';

type PendingOffsets = Map<string, Map<string, Map<number, OffsetAndMetadata>>>;

export class TxnOffsets {
  private readonly byProducer = new Map<bigint, PendingOffsets>();
  private readonly openByGroup = new Map<string, Set<bigint>>();

  /** Producers with pending offsets. */
  get openTransactions(): number {
    return this.byProducer.size;
  }

  put(producerId: bigint, groupId: string, topic: string, partition: number, offset: OffsetAndMetadata): void {
    let byGroup = this.byProducer.get(producerId);
    if (!byGroup) this.byProducer.set(producerId, (byGroup = new Map()));
    let byTopic = byGroup.get(groupId);
    if (!byTopic) byGroup.set(groupId, (byTopic = new Map()));
    let byPartition = byTopic.get(topic);
    if (!byPartition) byTopic.set(topic, (byPartition = new Map()));
    byPartition.set(partition, offset);
    let open = this.openByGroup.get(groupId);
    if (!open) this.openByGroup.set(groupId, (open = new Set()));
    open.add(producerId);
  }

  /** Whether the producer has a transaction open here (offsets written and no marker yet). */
  isOpen(producerId: bigint): boolean {
    return this.byProducer.has(producerId);
  }

  /** Every pending offset. */
  *entries(): Generator<{ producerId: bigint; groupId: string; topic: string; partition: number; offset: OffsetAndMetadata }> {
    for (const [producerId, byGroup] of this.byProducer) {
      for (const [groupId, byTopic] of byGroup) {
        for (const [topic, byPartition] of byTopic) for (const [partition, offset] of byPartition) yield { producerId, groupId, topic, partition, offset };
      }
    }
  }

  get(producerId: bigint, groupId: string, topic: string, partition: number): OffsetAndMetadata | undefined {
    return this.byProducer.get(producerId)?.get(groupId)?.get(topic)?.get(partition);
  }

  /** An OffsetCommit tombstone removes the partition's pending offsets of every open transaction (Kafka's replay). */
  remove(groupId: string, topic: string, partition: number): void {
    for (const producerId of this.openByGroup.get(groupId) ?? []) {
      const byTopic = this.byProducer.get(producerId)?.get(groupId);
      const byPartition = byTopic?.get(topic);
      if (!byPartition?.delete(partition)) continue;
      if (byPartition.size === 0) byTopic!.delete(topic);
    }
  }

  /** Kafka's hasPendingTransactionalOffsets. */
  hasPending(groupId: string, topic: string, partition: number): boolean {
    for (const producerId of this.openByGroup.get(groupId) ?? []) {
      if (this.byProducer.get(producerId)?.get(groupId)?.get(topic)?.has(partition)) return true;
    }
    return false;
  }

  /** Whether a transaction with offsets of the group is open (the group is then never expired). */
  hasOpenTransactions(groupId: string): boolean {
    return this.openByGroup.has(groupId);
  }

  /** The group's pending partitions, each once, for tombstones (DeleteGroups). */
  *pendingPartitions(groupId: string): Generator<{ topic: string; partition: number }> {
    const seen = new Set<string>();
    for (const producerId of this.openByGroup.get(groupId) ?? []) {
      for (const [topic, byPartition] of this.byProducer.get(producerId)?.get(groupId) ?? []) {
        for (const partition of byPartition.keys()) {
          const id = `${partition}:${topic}`;
          if (seen.has(id)) continue;
          seen.add(id);
          yield { topic, partition };
        }
      }
    }
  }

  /** Every (group, topic, partition) with a pending offset of one of `topics`, each once (topic deletion). */
  *forTopics(topics: ReadonlySet<string>): Generator<{ groupId: string; topic: string; partition: number }> {
    const seen = new Set<string>();
    for (const byGroup of this.byProducer.values()) {
      for (const [groupId, byTopic] of byGroup) {
        for (const [topic, byPartition] of byTopic) {
          if (!topics.has(topic)) continue;
          for (const partition of byPartition.keys()) {
            const id = JSON.stringify([groupId, topic, partition]);
            if (seen.has(id)) continue;
            seen.add(id);
            yield { groupId, topic, partition };
          }
        }
      }
    }
  }

  /**
   * Kafka's replayEndTransactionMarker: the producer's pending offsets go into `committed` (commit), each only
   * where its record is newer than the committed offset's, or are dropped (abort). Returns how many were
   * materialized.
   */
  complete(producerId: bigint, commit: boolean, committed: OffsetStore): number {
    const pending = this.byProducer.get(producerId);
    if (!pending) return 0;
    this.byProducer.delete(producerId);
    for (const groupId of pending.keys()) {
      const open = this.openByGroup.get(groupId);
      open?.delete(producerId);
      if (open?.size === 0) this.openByGroup.delete(groupId);
    }
    if (!commit) return 0;
    let materialized = 0;
    for (const [groupId, byTopic] of pending) {
      for (const [topic, byPartition] of byTopic) {
        for (const [partition, offset] of byPartition) {
          const existing = committed.get(groupId, topic, partition);
          if (existing !== undefined && (existing.recordOffset ?? -1) > (offset.recordOffset ?? -1)) continue;
          committed.put(groupId, topic, partition, offset);
          materialized++;
        }
      }
    }
    return materialized;
  }
}
