// JoinGroup v0-9 · v1: rebalance timeout (v0 uses the session timeout for it) · v2: throttle time · v4:
// MEMBER_ID_REQUIRED for a new member (KIP-394) · v5: group instance id (KIP-345) · v6+: flexible · v7: protocol
// type in the response, nullable protocol name · v8: reason (KIP-800) · v9: skip_assignment for a rejoining
// static leader (KIP-814). READ on the group first, as KafkaApis.handleJoinGroupRequest: GROUP_AUTHORIZATION_FAILED
// in Kafka's error response otherwise.
import { ErrorCode } from '../../protocol/error-codes.js';
import { JoinGroupApi, createJoinGroupResponse, type JoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import { groupCoordinatorOf, requestInfoOf, unlessClosed } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const joinGroup = defineHandler({
  api: JoinGroupApi,
  uses: ['groups'],
  versions: { min: 0, max: 9 },
  async handle(request, ctx) {
    const v = ctx.apiVersion;
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, request.groupId)) {
      return errorResponse(JoinGroupApi.apiKey, v, request, { code: ErrorCode.GROUP_AUTHORIZATION_FAILED, message: null }) as JoinGroupResponse;
    }
    // Kafka's JoinGroupRequest: version 0 has no rebalance timeout; the session timeout stands in for it.
    const req = v === 0 ? { ...request, rebalanceTimeoutMs: request.sessionTimeoutMs } : request;
    const error = (errorCode: number): JoinGroupResponse => createJoinGroupResponse({ errorCode, generationId: -1, memberId: req.memberId, leader: '', protocolName: null });
    const groups = groupCoordinatorOf(ctx);
    let r = groups ? await unlessClosed(groups.joinGroup(req, requestInfoOf(ctx), ctx.signal), ctx.signal, () => error(ErrorCode.COORDINATOR_NOT_AVAILABLE)) : error(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    // Kafka's JoinGroupResponse: before v7 the protocol name is never null; from v7 an empty one is null.
    if (v < 7 && r.protocolName === null) r = { ...r, protocolName: '' };
    else if (v >= 7 && r.protocolName === '') r = { ...r, protocolName: null };
    return r;
  },
});
