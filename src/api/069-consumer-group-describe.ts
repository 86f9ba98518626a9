// ConsumerGroupDescribe v0-1 (KIP-848): group and assignment epochs, the assignor, and every member's current
// and target assignment · v1: each member's type, classic or consumer (KIP-1099). GROUP_ID_NOT_FOUND for
// unknown groups and for classic groups.
// Authorization as KafkaApis.handleConsumerGroupDescribe: DESCRIBE on each group; the others answer
// GROUP_AUTHORIZATION_FAILED (ahead of the described ones) and are not asked of the coordinator. With an
// authorizer, a group whose members' assignments or target assignments name a topic the requester may not
// DESCRIBE is answered TOPIC_AUTHORIZATION_FAILED instead, without members (KAFKA-18813).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  ConsumerGroupDescribeApi,
  createConsumerGroupDescribeResponse,
  createConsumerGroupDescribeResponseDescribedGroup,
  type ConsumerGroupDescribeResponseDescribedGroup,
} from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { AUTHORIZED_OPERATIONS_OMITTED } from './authorized-operations.js';
import { mapChunks } from './bounded-map.js';
import { defineHandler } from './handler.js';

/** The topics a described group's members are assigned, now or as their target. */
function assignedTopics(g: ConsumerGroupDescribeResponseDescribedGroup): string[] {
  return g.members.flatMap((m) => [...m.assignment.topicPartitions, ...m.targetAssignment.topicPartitions].map((tp) => tp.topicName));
}

export const consumerGroupDescribe = defineHandler({
  api: ConsumerGroupDescribeApi,
  uses: ['groups'],
  versions: { min: 0, max: 1 },
  async handle(req, ctx) {
    // Each group once, as the coordinator describes them, a chunk of groups at a time (bounded-map.ts).
    const ids = [...new Set(req.groupIds)];
    const allowed = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.GROUP, ids);
    const refused = ids.filter((groupId) => !allowed.has(groupId)).map((groupId) => createConsumerGroupDescribeResponseDescribedGroup({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED }));
    const authorized = ids.filter((groupId) => allowed.has(groupId));
    const groups = groupCoordinatorOf(ctx);
    const described = groups
      ? await mapChunks(authorized, (chunk) => groups.consumerGroupDescribe(chunk))
      : authorized.map((groupId) => createConsumerGroupDescribeResponseDescribedGroup({ groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
    for (const g of described) {
      g.authorizedOperations = req.includeAuthorizedOperations && g.errorCode === ErrorCode.NONE ? ctx.access.authorizedOperations(ResourceType.GROUP, g.groupId) : AUTHORIZED_OPERATIONS_OMITTED;
    }
    let answered = [...refused, ...described];
    if (ctx.access.enabled) {
      const topics = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, new Set(answered.flatMap(assignedTopics)));
      answered = answered.map((g) =>
        assignedTopics(g).every((t) => topics.has(t))
          ? g
          : createConsumerGroupDescribeResponseDescribedGroup({
              groupId: g.groupId,
              errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
              errorMessage: 'The group has described topic(s) that the client is not authorized to describe.',
              members: [],
            }),
      );
    }
    return createConsumerGroupDescribeResponse({ groups: answered });
  },
});
