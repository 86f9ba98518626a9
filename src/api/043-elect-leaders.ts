// ElectLeaders v0-2 (KIP-183, KIP-460) · v1: election type (0 preferred, 1 unclean) and a top-level error
// code · v2+: flexible.
//
// One node leads every partition it has, and it is every partition's only replica, so it is the preferred
// leader and in the ISR: as Kafka's controller (ReplicationControlManager.electLeader) answers a partition
// whose preferred leader already leads, or (unclean) that has a leader, each named partition gets
// ELECTION_NOT_NEEDED. For "every partition" (null topicPartitions) Kafka leaves out the partitions that
// needed no election, so every topic is listed with no partition results.
//
// Authorization (Kafka's ControllerApis.handleElectLeaders, where a Kafka 4 broker forwards it): ALTER on the
// cluster before anything else (authorizeClusterOperation), else the error response: CLUSTER_AUTHORIZATION_FAILED
// at the top level (v1+) and for every named partition.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  ElectLeadersApi,
  createElectLeadersResponse,
  createElectLeadersResponsePartitionResult,
  createElectLeadersResponseReplicaElectionResult,
  type ElectLeadersRequest,
  type ElectLeadersResponse,
} from '../../protocol/messages/043-elect-leaders.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';
import { NODE_VIEW_USES, nodeViewOf, type NodeView } from './node-view.js';

/** Kafka's ElectionType: PREFERRED (0) and UNCLEAN (1). */
const ELECTION_TYPES = new Set([0, 1]);

/** The outcome of electing one partition's leader, as Kafka's ApiError gives it (code and message). */
function electOne(node: NodeView, topic: string, partition: number): { errorCode: number; errorMessage: string | null } {
  const t = node.topic(topic);
  if (!t) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such topic as ${topic}` };
  if (partition < 0 || partition >= t.partitions) {
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `No such partition as ${topic}-${partition}` };
  }
  return { errorCode: ErrorCode.ELECTION_NOT_NEEDED, errorMessage: errorByCode(ErrorCode.ELECTION_NOT_NEEDED).message };
}

export function electLeaders(node: NodeView, req: ElectLeadersRequest, version: number): ElectLeadersResponse {
  const type = version >= 1 ? req.electionType : 0;
  if (!ELECTION_TYPES.has(type)) {
    // Kafka: InvalidRequestException("Unknown election type N"), answered for every named partition.
    const message = `Unknown election type ${type}`;
    return createElectLeadersResponse({
      errorCode: ErrorCode.INVALID_REQUEST,
      replicaElectionResults: (req.topicPartitions ?? []).map((t) =>
        createElectLeadersResponseReplicaElectionResult({
          topic: t.topic,
          partitionResult: t.partitions.map((p) => createElectLeadersResponsePartitionResult({ partitionId: p, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: message })),
        }),
      ),
    });
  }
  if (req.topicPartitions === null) {
    const names = node.topics().map((t) => t.name).sort();
    return createElectLeadersResponse({ replicaElectionResults: names.map((topic) => createElectLeadersResponseReplicaElectionResult({ topic, partitionResult: [] })) });
  }
  return createElectLeadersResponse({
    replicaElectionResults: req.topicPartitions.map((t) =>
      createElectLeadersResponseReplicaElectionResult({
        topic: t.topic,
        partitionResult: t.partitions.map((p) => createElectLeadersResponsePartitionResult({ partitionId: p, ...electOne(node, t.topic, p) })),
      }),
    ),
  });
}

export const electLeadersHandler = defineHandler({
  api: ElectLeadersApi,
  uses: NODE_VIEW_USES,
  versions: { min: 0, max: 2 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.ALTER)) {
      return errorResponse(ElectLeadersApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as ElectLeadersResponse;
    }
    return electLeaders(nodeViewOf(ctx), req, ctx.apiVersion);
  },
});
