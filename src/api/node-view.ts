/**
 * What the single-node admin answers (ElectLeaders, partition reassignments, DescribeTopicPartitions,
 * DescribeQuorum, ListConfigResources) read of this node: its id, its topics and whether each partition
 * has its leader yet. A plain view, so those answers are pure functions of it and tested without a broker.
 */
import type { RequestContext } from './handler.js';

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
  /**
   * The partition's leader epoch, -1 when this node leads it but has not opened it yet (partitions open on
   * first use), undefined when no broker leads it.
   */
  leaderEpoch(topic: string, partition: number): number | undefined;
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
    leaderEpoch: (topic, partition) => (partitions.get(topic, partition) ? partitions.leaderEpoch(topic, partition) : cluster.owns(topic, partition) ? -1 : undefined),
  };
}
