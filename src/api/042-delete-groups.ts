// DeleteGroups v0-2 · v1: throttle time (v0 kept by Kafka 4, KAFKA-18352) · v2+: flexible. A group must be
// empty (NON_EMPTY_GROUP otherwise); its committed offsets are deleted with it.
import { ErrorCode } from '../../protocol/error-codes.js';
import { DeleteGroupsApi, createDeleteGroupsResponse, createDeleteGroupsResponseDeletableGroupResult } from '../../protocol/messages/042-delete-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

export const deleteGroups = defineHandler({
  api: DeleteGroupsApi,
  uses: ['groups'],
  versions: { min: 0, max: 2 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    const results = groups
      ? await groups.deleteGroups(req.groupsNames)
      : [...new Set(req.groupsNames)].map((groupId) => createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    return createDeleteGroupsResponse({ results });
  },
});
