/**
 * What a replica that is not the leader answers from its own copy of a partition. Kafka's followers answer
 * DescribeProducers from the producer state of their replica log (`Partition.activeProducerState` needs a log,
 * not leadership), and `kafka-transactions find-hanging --broker-id N` asks broker N about every partition it is
 * a replica of. A Ledgerline member listed among a partition's replicas (its quorum, cluster-view.ts) holds no
 * copy: the partition's data is in its ledgers, its producer state with the owner. So it asks the owner, over
 * the inter-broker channels, and answers with the owner's state, which is what a caught-up follower would hold.
 *
 * ```
 *   DescribeProducers(t, p) at a replica ─► owner(t, p) ─► DescribeProducers v0 to it ─► its partition answer
 *                                                      └─ none, or the request fails ─► NOT_LEADER_OR_FOLLOWER
 * ```
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeProducersApi,
  createDescribeProducersResponsePartitionResponse,
  type DescribeProducersResponsePartitionResponse,
} from '../../protocol/messages/061-describe-producers.gen.js';
import type { BrokerChannels } from './broker-channels.js';
import type { ClusterView } from './cluster-view.js';

const DESCRIBE_PRODUCERS_VERSIONS = { min: 0, max: 0 };

export interface ReplicaReads {
  /**
   * The producers of a partition this broker does not own, as its owner knows them; NOT_LEADER_OR_FOLLOWER
   * when this broker is not one of its replicas, it has no owner now, or the owner cannot be asked.
   */
  describeProducers(topic: string, partition: number): Promise<DescribeProducersResponsePartitionResponse>;
}

function notLeader(partition: number): DescribeProducersResponsePartitionResponse {
  return createDescribeProducersResponsePartitionResponse({
    partitionIndex: partition,
    errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER,
    errorMessage: 'This server is not the leader for that topic-partition.',
  });
}

/** A broker that serves alone has no other replica to ask. */
export const NO_REPLICA_READS: ReplicaReads = {
  describeProducers: (_topic, partition) => Promise.resolve(notLeader(partition)),
};

export interface OwnerReplicaReadsOptions {
  readonly cluster: Pick<ClusterView, 'owner' | 'replicas' | 'localNodeId'>;
  readonly channels: Pick<BrokerChannels, 'request'>;
}

/** A member's replica reads: forwarded to the partition's owner. */
export class OwnerReplicaReads implements ReplicaReads {
  readonly #o: OwnerReplicaReadsOptions;

  constructor(options: OwnerReplicaReadsOptions) {
    this.#o = options;
  }

  async describeProducers(topic: string, partition: number): Promise<DescribeProducersResponsePartitionResponse> {
    const { cluster, channels } = this.#o;
    const owner = cluster.owner(topic, partition);
    if (owner < 0 || owner === cluster.localNodeId || !cluster.replicas(topic, partition).includes(cluster.localNodeId)) return notLeader(partition);
    try {
      const res = await channels.request(owner, DescribeProducersApi, { topics: [{ name: topic, partitionIndexes: [partition], unknownTaggedFields: [] }], unknownTaggedFields: [] }, DESCRIBE_PRODUCERS_VERSIONS);
      const answer = res.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition);
      return answer ?? notLeader(partition);
    } catch {
      // Moving, or the owner is gone: the client asks again (NOT_LEADER_OR_FOLLOWER is retriable).
      return notLeader(partition);
    }
  }
}
