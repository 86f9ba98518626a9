// DescribeProducers v0 (KIP-664) · flexible. The idempotent producers with state on each partition: id,
// epoch, last sequence and timestamp; no transactions yet, so coordinatorEpoch and currentTxnStartOffset
// are -1.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DescribeProducersApi,
  createDescribeProducersResponse,
  createDescribeProducersResponsePartitionResponse,
  createDescribeProducersResponseProducerState,
  createDescribeProducersResponseTopicResponse,
} from '../../protocol/messages/061-describe-producers.gen.js';
import { defineHandler } from './handler.js';

export const describeProducers = defineHandler({
  api: DescribeProducersApi,
  uses: ['partitions'],
  versions: { min: 0, max: 0 },
  handle(req, ctx) {
    const { partitions } = ctx.services;
    const topics = req.topics.map((t) =>
      createDescribeProducersResponseTopicResponse({
        name: t.name,
        partitions: t.partitionIndexes.map((p) => {
          const out = createDescribeProducersResponsePartitionResponse({ partitionIndex: p });
          const part = partitions.get(t.name, p);
          if (!part) {
            out.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            out.errorMessage = 'This server does not host this topic-partition.';
            return out;
          }
          for (const s of part.producers.activeProducers()) {
            out.activeProducers.push(createDescribeProducersResponseProducerState({ ...s, coordinatorEpoch: -1, currentTxnStartOffset: -1n }));
          }
          return out;
        }),
      }),
    );
    return createDescribeProducersResponse({ topics });
  },
});
