/**
 * The partition a request names, as the partition APIs (Produce, Fetch, ListOffsets, DeleteRecords,
 * OffsetForLeaderEpoch, DescribeProducers) find it: open already (synchronously, allocating nothing: the hot
 * path), opened now because this broker owns it (src/cluster/partitions.ts opens partitions on first use), or
 * the error Kafka answers: UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist,
 * NOT_LEADER_OR_FOLLOWER for one another broker owns (ReplicaManager.getPartitionOrError; the client
 * refreshes its metadata and goes to the leader).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Partition } from '../cluster/partitions.js';
import type { Services } from './services.js';

/** The partition, or the error code to answer for it. */
export type Served = Partition | number;

export function servedPartition(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, topic: string, partition: number): Served | Promise<Served> {
  const open = services.partitions.get(topic, partition);
  if (open) return open;
  const t = services.topics.get(topic);
  if (!t || !Number.isInteger(partition) || partition < 0 || partition >= t.partitions) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  if (!services.cluster.owns(topic, partition)) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
  // Undefined: released or deleted meanwhile, or the open failed (logged): retriable, as for a partition not there yet.
  return services.partitions.open(topic, partition).then((p) => p ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
}
