// DescribeProducers v0 (KIP-664) · flexible. The producers with state on each partition: id, epoch, last
// sequence and timestamp, the coordinator epoch of their last transaction marker and the first offset of
// their ongoing transaction (-1 when none), as Kafka's ProducerStateEntry gives them. Kafka's followers answer
// too, from their replica logs (`kafka-transactions find-hanging --broker-id` asks every replica): a member
// listed among a partition's replicas answers with its owner's state (src/cluster/replica-reads.ts), unless
// the request comes from another broker, which answers only for itself (no second hop).
// Checks as KafkaApis.handleDescribeProducersRequest, topic by topic: an invalid name is INVALID_TOPIC_EXCEPTION
// (Topic.validate's message), then READ on the topic (TOPIC_AUTHORIZATION_FAILED for each partition, with the
// code's message), before the topic is looked for.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  DescribeProducersApi,
  createDescribeProducersResponse,
  createDescribeProducersResponsePartitionResponse,
  createDescribeProducersResponseProducerState,
  createDescribeProducersResponseTopicResponse,
  type DescribeProducersResponsePartitionResponse,
} from '../../protocol/messages/061-describe-producers.gen.js';
import { INTER_BROKER_CLIENT_ID_PREFIX } from '../cluster/broker-channels.js';
import { topicNameError } from '../cluster/topic-names.js';
import { AclOperation, ResourceType } from './access.js';
import { mapNestedBounded } from './bounded-map.js';
import { servedPartition } from './served-partition.js';
import { defineHandler } from './handler.js';

export const describeProducers = defineHandler({
  api: DescribeProducersApi,
  uses: ['topics', 'cluster', 'partitions', 'replicaReads'],
  versions: { min: 0, max: 0 },
  async handle(req, ctx) {
    const fromBroker = ctx.header.clientId?.startsWith(INTER_BROKER_CLIENT_ID_PREFIX) ?? false;
    // The topic's error (Kafka's ApiError: code and message), checked in request order before any partition is read.
    const topicErrors = req.topics.map((t): { errorCode: number; errorMessage: string | null } | null => {
      const invalid = topicNameError(t.name);
      if (invalid !== null) return { errorCode: ErrorCode.INVALID_TOPIC_EXCEPTION, errorMessage: invalid };
      if (!ctx.access.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)) {
        return { errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: errorByCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED).message };
      }
      return null;
    });
    const describe = async (i: number, p: number): Promise<DescribeProducersResponsePartitionResponse> => {
      const t = req.topics[i]!;
      const out = createDescribeProducersResponsePartitionResponse({ partitionIndex: p });
      const refused = topicErrors[i];
      if (refused) return { ...out, ...refused };
      const part = await servedPartition(ctx.services, t.name, p);
      if (part === ErrorCode.NOT_LEADER_OR_FOLLOWER && !fromBroker) return ctx.services.replicaReads.describeProducers(t.name, p);
      if (typeof part === 'number') {
        out.errorCode = part;
        out.errorMessage = part === ErrorCode.NOT_LEADER_OR_FOLLOWER ? 'This server is not the leader for that topic-partition.' : 'This server does not host this topic-partition.';
        return out;
      }
      for (const s of part.producers.activeProducers()) {
        out.activeProducers.push(createDescribeProducersResponseProducerState({ ...s, currentTxnStartOffset: BigInt(s.currentTxnStartOffset) }));
      }
      return out;
    };
    // Every partition of every topic, a few at a time (bounded-map.ts), answered in the request's order.
    const results = await mapNestedBounded(req.topics, (t) => t.partitionIndexes, (p, _t, i) => describe(i, p));
    const topics = req.topics.map((t, i) => createDescribeProducersResponseTopicResponse({ name: t.name, partitions: results[i]! }));
    return createDescribeProducersResponse({ topics });
  },
});
