// ListGroups v0-5 · v1: throttle time · v3+: flexible · v4: states filter and group state (KIP-518) · v5: types
// filter and group type (KIP-848: classic, consumer).
import { ErrorCode } from '../../protocol/error-codes.js';
import { ListGroupsApi, createListGroupsResponse } from '../../protocol/messages/016-list-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

export const listGroups = defineHandler({
  api: ListGroupsApi,
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createListGroupsResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    const v = ctx.apiVersion;
    const r = await groups.listGroups(v >= 4 ? req.statesFilter : [], v >= 5 ? req.typesFilter : []);
    return createListGroupsResponse({ errorCode: r.errorCode, groups: r.groups });
  },
});
