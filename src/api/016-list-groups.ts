// ListGroups v0-5 · v1: throttle time · v3+: flexible · v4: states filter and group state (KIP-518) · v5: types
// filter and group type (KIP-848: classic, consumer).
// Authorization as KafkaApis.handleListGroupsRequest: DESCRIBE on the cluster lists every group; without it,
// only the groups the requester may DESCRIBE, the others left out silently (neither check logs a denial).
import { ErrorCode } from '../../protocol/error-codes.js';
import { ListGroupsApi, createListGroupsResponse } from '../../protocol/messages/016-list-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { exceedsInt16String } from '../coordinator/string-bounds.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const listGroups = defineHandler({
  api: ListGroupsApi,
  uses: ['groups'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    const describeCluster = ctx.access.authorizeCluster(AclOperation.DESCRIBE, { logIfDenied: false });
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createListGroupsResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    const v = ctx.apiVersion;
    const r = await groups.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
    const visible = describeCluster ? r.groups : r.groups.filter((g) => ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId, { logIfDenied: false }));
    // v0-2 carry int16-length strings: a group one of them cannot name is left out rather than failing the
    // whole response (the coordinator refuses such ids on the way in; this keeps any other client's listing
    // safe whatever is in memory).
    const listed = v >= 3 ? visible : visible.filter((g) => !exceedsInt16String(g.groupId) && !exceedsInt16String(g.protocolType));
    return createListGroupsResponse({ errorCode: r.errorCode, groups: listed });
  },
});
