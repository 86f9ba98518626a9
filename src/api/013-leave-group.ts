// LeaveGroup v0-5 · v1: throttle time · v3: several members per request, by member id or group instance id
// (KIP-345), one result each · v4+: flexible · v5: reason (KIP-800). Before v3 the request names one member
// and its result is the response's error code. READ on the group first, as KafkaApis.handleLeaveGroupRequest:
// GROUP_AUTHORIZATION_FAILED at the top level otherwise.
import { ErrorCode } from '../../protocol/error-codes.js';
import { LeaveGroupApi, createLeaveGroupRequestMemberIdentity, createLeaveGroupResponse } from '../../protocol/messages/013-leave-group.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const leaveGroup = defineHandler({
  api: LeaveGroupApi,
  uses: ['groups'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    const v = ctx.apiVersion;
    // Kafka's getErrorResponse: the top level alone, no member results.
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return createLeaveGroupResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createLeaveGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    const members = v >= 3 ? req.members : [createLeaveGroupRequestMemberIdentity({ memberId: req.memberId })];
    const r = await groups.leaveGroup(req.groupId, members);
    if (v >= 3) return r;
    return createLeaveGroupResponse({ errorCode: r.errorCode !== ErrorCode.NONE ? r.errorCode : (r.members[0]?.errorCode ?? ErrorCode.NONE) });
  },
});
