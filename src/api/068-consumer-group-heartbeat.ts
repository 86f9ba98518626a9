// ConsumerGroupHeartbeat v0-1 (KIP-848) · v1: the subscription may be a topic regex, and the consumer generates
// its own member id (KIP-1082). Joins, heartbeats and leaves (-1, or -2 for a static member) a consumer group
// whose assignment the broker computes (group.consumer.assignors) and reconciles member by member.
// Authorization as KafkaApis.handleConsumerGroupHeartbeat, once the protocol is known to be enabled: READ on the
// group (GROUP_AUTHORIZATION_FAILED otherwise), then DESCRIBE on every subscribed topic name (KAFKA-18813):
// TOPIC_AUTHORIZATION_FAILED for the whole heartbeat if any is refused.
import { ErrorCode } from '../../protocol/error-codes.js';
import { ConsumerGroupHeartbeatApi, createConsumerGroupHeartbeatResponse } from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { groupCoordinatorOf, requestInfoOf } from '../coordinator/request-context.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

export const consumerGroupHeartbeat = defineHandler({
  api: ConsumerGroupHeartbeatApi,
  uses: ['groups'],
  versions: { min: 0, max: 1 },
  handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    // Kafka answers UNSUPPORTED_VERSION before any check when the protocol is off: the coordinator's answer here.
    const enabled = groups?.consumerProtocolEnabled ?? true;
    if (enabled) {
      if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) return createConsumerGroupHeartbeatResponse({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
      if (req.subscribedTopicNames !== null && req.subscribedTopicNames.length > 0) {
        const subscribed = new Set(req.subscribedTopicNames);
        if (ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, subscribed).size < subscribed.size) {
          return createConsumerGroupHeartbeatResponse({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED });
        }
      }
    }
    if (!groups) return createConsumerGroupHeartbeatResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    return groups.consumerGroupHeartbeat(
      {
        groupId: req.groupId,
        memberId: req.memberId,
        memberEpoch: req.memberEpoch,
        instanceId: req.instanceId,
        rackId: req.rackId,
        rebalanceTimeoutMs: req.rebalanceTimeoutMs,
        subscribedTopicNames: req.subscribedTopicNames,
        subscribedTopicRegex: req.subscribedTopicRegex,
        serverAssignor: req.serverAssignor,
        topicPartitions: req.topicPartitions,
        apiVersion: ctx.apiVersion,
      },
      requestInfoOf(ctx),
    );
  },
});
