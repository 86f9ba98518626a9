// DeleteGroups v0-3 · v1: throttle time (v0 kept by Kafka 4, KAFKA-18352) · v2+: flexible · v3: a message per
// group result, set with its error as Kafka's ApiError gives it (the error's own message; null on success).
// A group must be empty (NON_EMPTY_GROUP otherwise); its committed offsets are deleted with it.
// Authorization as KafkaApis.handleDeleteGroupsRequest: DELETE on each group (each named once); the others answer
// GROUP_AUTHORIZATION_FAILED, after the coordinator's results, and are not asked of it.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { DeleteGroupsApi, createDeleteGroupsResponse, createDeleteGroupsResponseDeletableGroupResult } from '../../protocol/messages/042-delete-groups.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const deleteGroups = defineHandler({
  api: DeleteGroupsApi,
  uses: ['groups'],
  versions: { min: 0, max: 3 },
  async handle(req, ctx) {
    const ids = [...new Set(req.groupsNames)];
    const allowed = ctx.access.allowedNames(AclOperation.DELETE, ResourceType.GROUP, ids);
    const authorized = ids.filter((groupId) => allowed.has(groupId));
    const groups = groupCoordinatorOf(ctx);
    const results = groups
      ? authorized.length > 0 ? await groups.deleteGroups(authorized) : []
      : authorized.map((groupId) => createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    for (const groupId of ids) {
      if (!allowed.has(groupId)) results.push(createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
    }
    if (ctx.apiVersion >= 3) for (const r of results) if (r.errorCode !== ErrorCode.NONE) r.errorMessage ??= errorByCode(r.errorCode).message;
    return createDeleteGroupsResponse({ results });
  },
});
