// DescribeGroups v0-6 · v1: throttle time · v3: authorized operations (KIP-430) · v4: group instance id of
// members · v5+: flexible · v6: a group that does not exist (or is a KIP-848 group) is GROUP_ID_NOT_FOUND with
// an error message (KIP-1043); before v6 it is reported Dead, as Kafka does.
// Authorization as KafkaApis.handleDescribeGroupsRequest: DESCRIBE on each group; the others answer
// GROUP_AUTHORIZATION_FAILED (ahead of the described ones) and are not asked of the coordinator. The authorized
// operations (v3+, when asked) are the requester's on each group described without error.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeGroupsApi, createDescribeGroupsResponse, createDescribeGroupsResponseDescribedGroup } from '../../protocol/messages/015-describe-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './authorized-operations.js';
import { mapChunks } from './bounded-map.js';
import { defineHandler } from './handler.js';

export const describeGroups = defineHandler({
  api: DescribeGroupsApi,
  uses: ['groups'],
  versions: { min: 0, max: 6 },
  async handle(req, ctx) {
    // Each group once, as the coordinator describes them (a group named twice is answered once), a chunk of
    // groups at a time (bounded-map.ts).
    const ids = [...new Set(req.groups)];
    const allowed = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.GROUP, ids);
    // Kafka's DescribeGroupsResponse.groupError: state, protocol type and protocol "", no members.
    const refused = ids
      .filter((groupId) => !allowed.has(groupId))
      .map((groupId) => createDescribeGroupsResponseDescribedGroup({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }));
    const authorized = ids.filter((groupId) => allowed.has(groupId));
    const groups = groupCoordinatorOf(ctx);
    const described = groups
      ? await mapChunks(authorized, (chunk) => groups.describeGroups(chunk, ctx.apiVersion))
      : authorized.map((groupId) => createDescribeGroupsResponseDescribedGroup({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
    for (const g of described) {
      g.authorizedOperations = withOps && g.errorCode === ErrorCode.NONE ? ctx.access.authorizedOperations(ResourceType.GROUP, g.groupId) : AUTHORIZED_OPERATIONS_OMITTED;
    }
    return createDescribeGroupsResponse({ groups: [...refused, ...described] });
  },
});
