// DescribeTopicPartitions v0 (KIP-966) · v0+: flexible. What `kafka-topics --describe` asks a Kafka 4 broker:
// topics and their partitions with leader, replicas, ISR and the eligible-leader-replica fields, paged by
// a cursor.
//
// As Kafka's DescribeTopicPartitionsRequestHandler and KRaftMetadataCache.getTopicMetadataForDescribeTopic-
// Response: the topics named (or every topic, for an empty list) from the cursor's topic on, in name order,
// at most min(responsePartitionLimit, max.request.partition.size.limit = 2000) partitions in all (at least
// 1), starting at the cursor's partition for the cursor's topic. When the limit cuts a topic the next cursor
// names it and the first partition left out; when it falls on a topic boundary, the next topic and 0. A
// cursor topic not among the named topics, or a negative cursor partition, is INVALID_REQUEST. Named topics
// that do not exist are UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an invalid name); with every
// topic asked for, there are none. One node is every partition's only replica and leader; a partition still
// opening has no leader (-1) and an empty ISR, as Kafka reports a partition whose leader is not alive.
//
// Authorization (DescribeTopicPartitionsRequestHandler), after the cursor checks: DESCRIBE on each topic from the
// cursor's on, in name order, before its existence is looked at. With every topic asked for, the ones denied
// are left out; named ones denied come after the others, TOPIC_AUTHORIZATION_FAILED with no topic id. Each
// topic described carries the operations the requester may do on it (KIP-430).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeTopicPartitionsApi,
  createDescribeTopicPartitionsResponse,
  createDescribeTopicPartitionsResponseCursor,
  createDescribeTopicPartitionsResponsePartition,
  createDescribeTopicPartitionsResponseTopic,
  type DescribeTopicPartitionsRequest,
  type DescribeTopicPartitionsResponse,
  type DescribeTopicPartitionsResponsePartition,
} from '../../protocol/messages/075-describe-topic-partitions.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { isInternalTopic, topicNameError } from '../cluster/topic-names.js';
import { AclOperation, ALLOW_ALL, ResourceType, type Access } from './access.js';
import { defineHandler } from './handler.js';
import { NODE_VIEW_USES, nodeViewOf, type NodeView, type TopicView } from './node-view.js';

/** Kafka's max.request.partition.size.limit default: the most partitions one response describes. */
export const MAX_REQUEST_PARTITION_SIZE_LIMIT = 2000;

function partitionOf(node: NodeView, t: TopicView, p: number): DescribeTopicPartitionsResponsePartition {
  const part = node.partition(t.name, p);
  return createDescribeTopicPartitionsResponsePartition({
    partitionIndex: p,
    leaderId: part.leaderId,
    leaderEpoch: part.leaderEpoch,
    replicaNodes: [...part.replicas],
    isrNodes: [...part.isr],
    eligibleLeaderReplicas: [],
    lastKnownElr: [],
    offlineReplicas: [],
  });
}

export function describeTopicPartitions(node: NodeView, req: DescribeTopicPartitionsRequest, access: Access = ALLOW_ALL): DescribeTopicPartitionsResponse {
  const all = req.topics.length === 0;
  const cursor = req.cursor;
  const from = cursor?.topicName ?? '';
  const names = new Set<string>();
  for (const n of all ? node.topics().map((t) => t.name) : req.topics.map((t) => t.name)) if (n >= from) names.add(n);
  const refusal = !all && cursor !== null && !names.has(cursor.topicName) ? `DescribeTopicPartitionsRequest topic list should contain the cursor topic: ${cursor.topicName}`
    : cursor !== null && cursor.partitionIndex < 0 ? `DescribeTopicPartitionsRequest cursor partition must be valid: Cursor(topicName='${cursor.topicName}', partitionIndex=${cursor.partitionIndex})`
    : null;
  if (refusal !== null) {
    // Kafka throws InvalidRequestException; the error response names every requested topic with it.
    return createDescribeTopicPartitionsResponse({
      topics: req.topics.map((t) => createDescribeTopicPartitionsResponseTopic({ name: t.name, errorCode: ErrorCode.INVALID_REQUEST })),
    });
  }
  const authorized: string[] = [];
  const denied: string[] = [];
  for (const name of [...names].sort()) (access.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name) ? authorized : denied).push(name);
  let remaining = Math.max(Math.min(MAX_REQUEST_PARTITION_SIZE_LIMIT, req.responsePartitionLimit), 1);
  const res = createDescribeTopicPartitionsResponse({ nextCursor: null });
  for (const name of authorized) {
    if (remaining === 0) {
      res.nextCursor = createDescribeTopicPartitionsResponseCursor({ topicName: name, partitionIndex: 0 });
      break;
    }
    const t = node.topic(name);
    if (!t) {
      if (!all) {
        const errorCode = topicNameError(name) === null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.INVALID_TOPIC_EXCEPTION;
        res.topics.push(createDescribeTopicPartitionsResponseTopic({ errorCode, name, topicId: ZERO_UUID, isInternal: isInternalTopic(name), topicAuthorizedOperations: access.authorizedOperations(ResourceType.TOPIC, name) }));
      }
      continue;
    }
    const start = cursor !== null && name === cursor.topicName ? cursor.partitionIndex : 0;
    const upper = Math.min(t.partitions, start + remaining);
    const partitions: DescribeTopicPartitionsResponsePartition[] = [];
    for (let p = start; p < upper; p++) partitions.push(partitionOf(node, t, p));
    res.topics.push(createDescribeTopicPartitionsResponseTopic({ name, topicId: t.topicId, isInternal: t.internal, partitions, topicAuthorizedOperations: access.authorizedOperations(ResourceType.TOPIC, name) }));
    if (upper < t.partitions) {
      res.nextCursor = createDescribeTopicPartitionsResponseCursor({ topicName: name, partitionIndex: upper });
      break;
    }
    remaining -= partitions.length;
  }
  // Kafka's handler authorizes every topic before describing any; the named ones denied, whatever the limit cut.
  if (!all) for (const name of denied) res.topics.push(createDescribeTopicPartitionsResponseTopic({ errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, name, topicId: ZERO_UUID, isInternal: false }));
  return res;
}

export const describeTopicPartitionsHandler = defineHandler({
  api: DescribeTopicPartitionsApi,
  uses: NODE_VIEW_USES,
  versions: { min: 0, max: 0 },
  handle(req, ctx) {
    return describeTopicPartitions(nodeViewOf(ctx), req, ctx.access);
  },
});
