// AlterPartitionReassignments v0-1 (KIP-455) · v0+: flexible · v1: allowReplicationFactorChange (KIP-860),
// echoed in the response.
//
// One node is the only broker a partition can be placed on. As Kafka's controller checks a target
// (ReplicationControlManager.alterPartitionReassignment, validateManualPartitionAssignment), per partition:
// an unknown topic or partition is UNKNOWN_TOPIC_OR_PARTITION; cancelling (null replicas) is
// NO_REASSIGNMENT_IN_PROGRESS, since none ever is; an empty list, a broker that is not this node, or a broker
// named twice is INVALID_REPLICA_ASSIGNMENT with Kafka's message; with allowReplicationFactorChange false a
// target of another size is INVALID_REPLICATION_FACTOR. What is left is this node alone, the partition's
// assignment already: Kafka's answer for a reassignment that changes nothing is success.
//
// Authorization (Kafka's ControllerApis.handleAlterPartitionReassignments): ALTER on the cluster before anything
// else (authorizeClusterOperation), else the error response: CLUSTER_AUTHORIZATION_FAILED at the top level and
// for every partition.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  AlterPartitionReassignmentsApi,
  createAlterPartitionReassignmentsResponse,
  createAlterPartitionReassignmentsResponseReassignablePartitionResponse,
  createAlterPartitionReassignmentsResponseReassignableTopicResponse,
  type AlterPartitionReassignmentsRequest,
  type AlterPartitionReassignmentsResponse,
} from '../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';
import { NODE_VIEW_USES, nodeViewOf, type NodeView } from './node-view.js';

type Outcome = { errorCode: number; errorMessage: string | null };

const OK: Outcome = { errorCode: ErrorCode.NONE, errorMessage: null };

function invalid(message: string): Outcome {
  return { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, errorMessage: message };
}

function reassignOne(node: NodeView, topic: string, partition: number, replicas: readonly number[] | null, allowRfChange: boolean): Outcome {
  const t = node.topic(topic);
  if (!t) return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find a topic named ${topic}.` };
  if (partition < 0 || partition >= t.partitions) {
    return { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: `Unable to find partition ${topic}:${partition}.` };
  }
  if (replicas === null) return { errorCode: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS, errorMessage: errorByCode(ErrorCode.NO_REASSIGNMENT_IN_PROGRESS).message };
  if (replicas.length === 0) return invalid('The manual partition assignment includes an empty replica list.');
  const sorted = [...replicas].sort((a, b) => a - b);
  for (let i = 0; i < sorted.length; i++) {
    const id = sorted[i]!;
    if (id !== node.nodeId) return invalid(`The manual partition assignment includes broker ${id}, but no such broker is registered.`);
    if (i > 0 && sorted[i - 1] === id) return invalid(`The manual partition assignment includes the broker ${id} more than once.`);
  }
  // KIP-860: the current assignment has one replica.
  if (!allowRfChange && replicas.length !== 1) {
    return { errorCode: ErrorCode.INVALID_REPLICATION_FACTOR, errorMessage: `The replication factor is changed from 1 to ${replicas.length}` };
  }
  return OK;
}

export function alterPartitionReassignments(node: NodeView, req: AlterPartitionReassignmentsRequest, version: number): AlterPartitionReassignmentsResponse {
  const allowRfChange = version >= 1 ? req.allowReplicationFactorChange : true;
  return createAlterPartitionReassignmentsResponse({
    allowReplicationFactorChange: allowRfChange,
    errorMessage: null,
    responses: req.topics.map((t) =>
      createAlterPartitionReassignmentsResponseReassignableTopicResponse({
        name: t.name,
        partitions: t.partitions.map((p) =>
          createAlterPartitionReassignmentsResponseReassignablePartitionResponse({ partitionIndex: p.partitionIndex, ...reassignOne(node, t.name, p.partitionIndex, p.replicas, allowRfChange) }),
        ),
      }),
    ),
  });
}

export const alterPartitionReassignmentsHandler = defineHandler({
  api: AlterPartitionReassignmentsApi,
  uses: NODE_VIEW_USES,
  versions: { min: 0, max: 1 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.ALTER)) {
      return errorResponse(AlterPartitionReassignmentsApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as AlterPartitionReassignmentsResponse;
    }
    return alterPartitionReassignments(nodeViewOf(ctx), req, ctx.apiVersion);
  },
});
