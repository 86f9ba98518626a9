// SyncGroup v0-5 · v1: throttle time · v3: group instance id (KIP-345) · v4+: flexible · v5: protocol type and
// name, checked against the group's and required (INCONSISTENT_GROUP_PROTOCOL when missing, as Kafka). Then READ
// on the group, as KafkaApis.handleSyncGroupRequest: GROUP_AUTHORIZATION_FAILED otherwise.
import { ErrorCode } from '../../protocol/error-codes.js';
import { SyncGroupApi, createSyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { groupCoordinatorOf, unlessClosed } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const syncGroup = defineHandler({
  api: SyncGroupApi,
  uses: ['groups'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    if (ctx.apiVersion >= 5 && (req.protocolType === null || req.protocolName === null)) {
      return createSyncGroupResponse({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });
    }
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return createSyncGroupResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createSyncGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    return unlessClosed(groups.syncGroup(req), ctx.signal, () => createSyncGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
  },
});
