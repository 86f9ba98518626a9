// OffsetDelete v0 (KIP-496): deletes committed offsets of a group for partitions it does not subscribe to
// (GROUP_SUBSCRIBED_TO_TOPIC otherwise); the group must be empty unless it uses the consumer protocol.
// Authorization as KafkaApis.handleOffsetDeleteRequest: DELETE on the group (GROUP_AUTHORIZATION_FAILED at the
// top level otherwise), then READ on each topic: TOPIC_AUTHORIZATION_FAILED for each partition of the others,
// which are not asked of the coordinator; a group error from the coordinator replaces them (Kafka's merge).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetDeleteApi,
  createOffsetDeleteResponse,
  createOffsetDeleteResponsePartition,
  createOffsetDeleteResponseTopic,
  type OffsetDeleteResponseTopic,
} from '../../protocol/messages/047-offset-delete.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const offsetDelete = defineHandler({
  api: OffsetDeleteApi,
  uses: ['groups'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    if (!ctx.access.authorize(AclOperation.DELETE, ResourceType.GROUP, req.groupId)) return createOffsetDeleteResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
    const allowed = ctx.access.allowedNames(AclOperation.READ, ResourceType.TOPIC, req.topics.map((t) => t.name));
    const refused: OffsetDeleteResponseTopic[] = req.topics
      .filter((t) => !allowed.has(t.name))
      .map((t) =>
        createOffsetDeleteResponseTopic({
          name: t.name,
          partitions: t.partitions.map((p) => createOffsetDeleteResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })),
        }),
      );
    const groups = groupCoordinatorOf(ctx);
    if (!groups) return createOffsetDeleteResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    const res = await groups.deleteOffsets(req.groupId, req.topics.filter((t) => allowed.has(t.name)));
    if (res.errorCode === ErrorCode.NONE) res.topics.push(...refused);
    return res;
  },
});
