// OffsetDelete v0 (KIP-496): deletes committed offsets of a group for partitions it does not subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise); the group must be empty unless it uses the consumer protocol.
import { ErrorCode } from '../../protocol/error-codes.js';
import { OffsetDeleteApi, createOffsetDeleteResponse } from '../../protocol/messages/047-offset-delete.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

export const offsetDelete = defineHandler({
  api: OffsetDeleteApi,
  uses: ['groups'],
  versions: { min: 0, max: 0 },
  handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createOffsetDeleteResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    return groups.deleteOffsets(req.groupId, req.topics);
  },
});
