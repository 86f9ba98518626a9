// ListPartitionReassignments v0 (KIP-455) · v0+: flexible.
//
// No reassignment is ever in progress on one node (AlterPartitionReassignments can only confirm the
// assignment a partition has), so the answer lists none, for every topic or the ones named, as Kafka's
// controller lists only reassigning partitions (ReplicationControlManager.listPartitionReassignments).
//
// Authorization (Kafka's ControllerApis.handleListPartitionReassignments): DESCRIBE on the cluster
// (authorizeClusterOperation), else the error response: CLUSTER_AUTHORIZATION_FAILED at the top level.
import { ErrorCode } from '../../protocol/error-codes.js';
import { ListPartitionReassignmentsApi, createListPartitionReassignmentsResponse, type ListPartitionReassignmentsResponse } from '../../protocol/messages/046-list-partition-reassignments.gen.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const listPartitionReassignmentsHandler = defineHandler({
  api: ListPartitionReassignmentsApi,
  uses: [],
  versions: { min: 0, max: 0 },
  handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.DESCRIBE)) {
      return errorResponse(ListPartitionReassignmentsApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as ListPartitionReassignmentsResponse;
    }
    return createListPartitionReassignmentsResponse({ errorMessage: null, topics: [] });
  },
});
