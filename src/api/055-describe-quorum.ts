// DescribeQuorum v0-2 (KIP-595) · v0+: flexible · v1: voters' last fetch and last caught-up timestamps
// (KIP-836) · v2: voters' directory ids, error messages and the voters' endpoints (KIP-853).
//
// What `kafka-metadata-quorum describe --status` asks. Ledgerline keeps its metadata in its own store, not
// in a KRaft log, but it is in the place of a KRaft node that is the quorum's only voter (a node formatted
// `--standalone`, process.roles=broker,controller): this node leads the metadata partition
// (__cluster_metadata-0) in epoch 1 with no observers. As the leader it reports itself fetched and caught
// up at the time of the request, as Kafka 4.4's LeaderState describes its local replica (the schema's note that
// the leader's last fetch is -1 predates that), so no follower lags.
// Its voter's directory id (v2+) is this node's (KIP-858, kept in the metadata store across restarts). Its metadata
// log is not a KRaft log, so its offsets are reported as 0. A request for any other partition is answered as
// Kafka's KafkaRaftClient answers one that is not its log's: UNKNOWN_TOPIC_OR_PARTITION for each.
//
// Authorization (Kafka's ControllerApis.handleDescribeQuorum, where a Kafka 4 broker forwards it): DESCRIBE on
// the cluster (authorizeClusterOperation), else the error response: CLUSTER_AUTHORIZATION_FAILED at the top level.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  DescribeQuorumApi,
  createDescribeQuorumResponse,
  createDescribeQuorumResponseListener,
  createDescribeQuorumResponseNode,
  createDescribeQuorumResponsePartitionData,
  createDescribeQuorumResponseReplicaState,
  createDescribeQuorumResponseTopicData,
  type DescribeQuorumRequest,
  type DescribeQuorumResponse,
} from '../../protocol/messages/055-describe-quorum.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';
import { NODE_VIEW_USES, nodeViewOf, type NodeView } from './node-view.js';

/** The KRaft metadata partition (Kafka's Topic.CLUSTER_METADATA_TOPIC_PARTITION). */
export const CLUSTER_METADATA_TOPIC = '__cluster_metadata';
export const LEADER_EPOCH = 1;

export function describeQuorum(node: NodeView, req: DescribeQuorumRequest, version: number, nowMs: number): DescribeQuorumResponse {
  const ours = req.topics.length === 1 && req.topics[0]!.topicName === CLUSTER_METADATA_TOPIC && req.topics[0]!.partitions.length === 1 && req.topics[0]!.partitions[0]!.partitionIndex === 0;
  if (!ours) {
    const message = errorByCode(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION).message;
    return createDescribeQuorumResponse({
      errorMessage: null,
      topics: req.topics.map((t) =>
        createDescribeQuorumResponseTopicData({
          topicName: t.topicName,
          partitions: t.partitions.map((p) => createDescribeQuorumResponsePartitionData({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: message, leaderId: -1, leaderEpoch: -1, highWatermark: -1n })),
        }),
      ),
    });
  }
  const now = BigInt(nowMs);
  const self = createDescribeQuorumResponseReplicaState({ replicaId: node.nodeId, replicaDirectoryId: version >= 2 ? node.directoryId : ZERO_UUID, logEndOffset: 0n, lastFetchTimestamp: now, lastCaughtUpTimestamp: now });
  return createDescribeQuorumResponse({
    errorMessage: null,
    topics: [
      createDescribeQuorumResponseTopicData({
        topicName: CLUSTER_METADATA_TOPIC,
        partitions: [createDescribeQuorumResponsePartitionData({ partitionIndex: 0, errorMessage: null, leaderId: node.nodeId, leaderEpoch: LEADER_EPOCH, highWatermark: 0n, currentVoters: [self], observers: [] })],
      }),
    ],
    // v2+: the voters' endpoints (not ignorable, so absent before): the controller listeners, as a KRaft voter's.
    nodes: version < 2 ? [] : [createDescribeQuorumResponseNode({ nodeId: node.nodeId, listeners: node.controllerListeners.map((l) => createDescribeQuorumResponseListener({ name: l.name, host: l.host, port: l.port })) })],
  });
}

export const describeQuorumHandler = defineHandler({
  api: DescribeQuorumApi,
  uses: NODE_VIEW_USES,
  versions: { min: 0, max: 2 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE)) {
      return errorResponse(DescribeQuorumApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as DescribeQuorumResponse;
    }
    return describeQuorum(nodeViewOf(ctx), req, ctx.apiVersion, Date.now());
  },
});
