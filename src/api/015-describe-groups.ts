// DescribeGroups v0-6 · v1: throttle time · v3: authorized operations (KIP-430) · v4: group instance id of
// members · v5+: flexible · v6: a group that does not exist (or is a KIP-848 group) is GROUP_ID_NOT_FOUND with
// an error message (KIP-1043); before v6 it is reported Dead, as Kafka does.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DescribeGroupsApi, createDescribeGroupsResponse, createDescribeGroupsResponseDescribedGroup } from '../../protocol/messages/015-describe-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AUTHORIZED_OPERATIONS_OMITTED, GROUP_OPERATIONS } from './authorized-operations.js';
import { defineHandler } from './handler.js';

export const describeGroups = defineHandler({
  api: DescribeGroupsApi,
  uses: ['groups'],
  versions: { min: 0, max: 6 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    const described = groups
      ? await groups.describeGroups(req.groups, ctx.apiVersion)
      : req.groups.map((groupId) => createDescribeGroupsResponseDescribedGroup({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    const withOps = ctx.apiVersion >= 3 && req.includeAuthorizedOperations;
    for (const g of described) g.authorizedOperations = withOps && g.errorCode === ErrorCode.NONE ? GROUP_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED;
    return createDescribeGroupsResponse({ groups: described });
  },
});
