/**
 * What the node-level admin answers (ElectLeaders, partition reassignments, DescribeTopicPartitions,
 * DescribeQuorum, ListConfigResources) read of this node: its id, its topics and each partition's leader,
 * epoch and replicas as the cluster view gives them. A plain view, so those answers are pure functions of it and tested without a broker.
 */
import type { RequestContext } from './handler.js';
import type { ClusterService, PartitionService } from './services.js';

export interface TopicView {
  readonly name: string;
  /** KIP-516 topic id, Kafka's base64url form. */
  readonly topicId: string;
  readonly partitions: number;
  readonly internal: boolean;
}

export interface NodeView {
  readonly nodeId: number;
  readonly clusterId: string;
  /** This node's metadata directory id (KIP-858). */
  readonly directoryId: string;
  /**
   * The listeners this node serves its quorum's controller APIs on, with the addresses it advertises on them:
   * its controller listeners (controller.listener.names), or, when it has none, the listener the request came in on.
   */
  readonly controllerListeners: readonly { readonly name: string; readonly host: string; readonly port: number }[];
  /** Every topic, in no particular order. */
  topics(): readonly TopicView[];
  topic(name: string): TopicView | undefined;
  /** The partition as Metadata describes it (leader, epoch, replicas, in-sync replicas). */
  partition(topic: string, partition: number): PartitionView;
}

export interface PartitionView {
  /** -1 when no broker leads it. */
  readonly leaderId: number;
  /** See reportedLeaderEpoch. */
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  /** Empty while no broker leads it. */
  readonly isr: readonly number[];
}

/**
 * The leader epoch a broker reports for a partition: its log's when the partition is open here, else the one
 * its owner announced through the cluster view (so every broker of a cluster reports the same epoch, as every
 * Kafka broker reports the controller's), -1 when neither is known (its owner has not opened it yet:
 * partitions open on first use).
 */
export function reportedLeaderEpoch(partitions: PartitionService, cluster: ClusterService, topic: string, partition: number): number {
  const open = partitions.get(topic, partition);
  if (open) return open.log.leaderEpoch;
  return cluster.owns(topic, partition) ? -1 : (cluster.announcedLeaderEpoch?.(topic, partition) ?? -1);
}

/** The services a NodeView reads. */
export const NODE_VIEW_USES = ['node', 'topics', 'partitions', 'cluster'] as const;
export type NodeViewServices = (typeof NODE_VIEW_USES)[number];

export function nodeViewOf(ctx: RequestContext<NodeViewServices>): NodeView {
  const { node, topics, partitions, cluster } = ctx.services;
  const listener = ctx.connection.listenerName;
  return {
    nodeId: node.nodeId,
    clusterId: node.clusterId,
    directoryId: node.directoryId,
    controllerListeners: (node.controllerListeners.length > 0 ? node.controllerListeners : [listener]).map((name) => ({ name, ...node.advertisedFor(name) })),
    topics: () => topics.list(),
    topic: (name) => topics.get(name),
    partition: (topic, partition) => {
      const leaderId = cluster.owner(topic, partition);
      return {
        leaderId,
        leaderEpoch: leaderId < 0 ? -1 : reportedLeaderEpoch(partitions, cluster, topic, partition),
        replicas: cluster.replicas(topic, partition),
        isr: leaderId < 0 ? [] : cluster.isr(topic, partition),
      };
    },
  };
}
