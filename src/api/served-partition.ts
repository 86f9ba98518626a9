/**
 * The partition a request names, as the partition APIs (Produce, Fetch, ListOffsets, DeleteRecords,
 * OffsetForLeaderEpoch, DescribeProducers) find it: open already and owned (synchronously, allocating nothing:
 * the hot path), opened now because this broker owns it (src/cluster/partitions.ts opens partitions on first
 * use), or the error Kafka answers: UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist,
 * NOT_LEADER_OR_FOLLOWER for one another broker owns (ReplicaManager.getPartitionOrError; the client
 * refreshes its metadata and goes to the leader). One this broker is taking at the moment is waited for.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { kafkaErrorOf } from '../../protocol/errors.js';
import type { Partition } from '../cluster/partitions.js';
import { mapBounded } from './bounded-map.js';
import type { Services } from './services.js';

/** The partition, or the error code to answer for it. */
export type Served = Partition | number;

export function servedPartition(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, topic: string, partition: number): Served | Promise<Served> {
  const open = services.partitions.get(topic, partition);
  // Open and still owned: a member that lost its lease, or is handing the partition over, still has the log open
  // until it closes, and answers NOT_LEADER_OR_FOLLOWER from the instant it stopped owning it.
  if (open && services.cluster.owns(topic, partition)) return open;
  const t = services.topics.get(topic);
  if (!Number.isInteger(partition) || partition < 0) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  if (!t || partition >= t.partitions) {
    // A member of a cluster may be named this partition's leader by another broker's Metadata before its own
    // registry has the topic: the store is asked once before the request is refused (a refused produce that the
    // client sends again after the batches behind it would land out of order).
    const refreshed = services.topics.refresh?.(topic, partition);
    if (refreshed === undefined) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    return refreshed.then((known) => (known ? knownPartition(services, topic, partition) : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
  }
  return knownPartition(services, topic, partition);
}

/** A partition of a topic this broker knows: owned (and opened now), being taken, or another broker's. */
function knownPartition(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, topic: string, partition: number): Served | Promise<Served> {
  if (!services.cluster.owns(topic, partition)) {
    // Being taken by this broker (a topic just created, a partition moving here): wait for it, bounded.
    const taking = services.cluster.acquisition?.(topic, partition) ?? null;
    if (taking === null) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    return taking.then((owned) => (owned ? servedPartition(services, topic, partition) : ErrorCode.NOT_LEADER_OR_FOLLOWER));
  }
  // Undefined: released or deleted meanwhile, retriable as for a partition not there yet. A failed open (the
  // partition manager logged it) is the storage's failure: Kafka answers KAFKA_STORAGE_ERROR for a partition
  // whose log it cannot serve (ReplicaManager, an offline log directory), and the client retries.
  return services.partitions.open(topic, partition).then(
    (p) => p ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    (err: unknown) => kafkaErrorOf(err, ErrorCode.KAFKA_STORAGE_ERROR),
  );
}

/** Partitions one request opens at the same time (each open costs a few fsyncs). */
const OPEN_CONCURRENCY = 8;

/**
 * Opens, OPEN_CONCURRENCY at a time, the partitions of a request that this broker owns and has not opened
 * yet, so that a request naming many of them (a consumer's first Fetch or ListOffsets after a restart) waits
 * for a few rounds of opens rather than for one open after another.
 */
export function openOwned(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, wanted: readonly { readonly topic: string; readonly partition: number }[]): Promise<void> | undefined {
  // The usual case, every partition open already: nothing allocated, nothing to wait for.
  let closed = false;
  for (let i = 0; i < wanted.length && !closed; i++) closed = services.partitions.get(wanted[i]!.topic, wanted[i]!.partition) === undefined;
  return closed ? openClosed(services, wanted) : undefined;
}

async function openClosed(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, wanted: readonly { readonly topic: string; readonly partition: number }[]): Promise<void> {
  const work: { readonly topic: string; readonly partition: number }[] = [];
  for (const w of wanted) if (!services.partitions.get(w.topic, w.partition) && services.cluster.owns(w.topic, w.partition)) work.push(w);
  await mapBounded(work, (w) => servedPartition(services, w.topic, w.partition), OPEN_CONCURRENCY);
}
