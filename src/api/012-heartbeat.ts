// Heartbeat v0-4 · v1: throttle time · v3: group instance id (KIP-345) · v4+: flexible. READ on the group first,
// as KafkaApis.handleHeartbeatRequest: GROUP_AUTHORIZATION_FAILED otherwise.
import { ErrorCode } from '../../protocol/error-codes.js';
import { HeartbeatApi, createHeartbeatResponse } from '../../protocol/messages/012-heartbeat.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const heartbeat = defineHandler({
  api: HeartbeatApi,
  uses: ['groups'],
  versions: { min: 0, max: 4 },
  handle(req, ctx) {
    // Kafka's getErrorResponse: the code alone.
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return createHeartbeatResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createHeartbeatResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    return groups.heartbeat(req);
  },
});
