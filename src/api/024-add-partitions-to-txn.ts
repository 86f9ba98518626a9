// AddPartitionsToTxn v0-5 · v2: PRODUCER_FENCED (KIP-588; INVALID_PRODUCER_EPOCH before) · v3+: flexible · v4:
// several transactions per request, and verifyOnly entries that only check the partitions are in the
// transaction (KIP-890 part 1; broker to broker) · v5: TRANSACTION_ABORTABLE (KIP-890). Partitions that do not
// exist answer UNKNOWN_TOPIC_OR_PARTITION and the others of the same transaction OPERATION_NOT_ATTEMPTED, as
// KafkaApis answers them before asking the coordinator.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  AddPartitionsToTxnApi,
  createAddPartitionsToTxnResponse,
  createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult,
  createAddPartitionsToTxnResponseAddPartitionsToTxnResult,
  createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
  type AddPartitionsToTxnRequestAddPartitionsToTxnTopic,
  type AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
} from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import type { PartitionError } from '../coordinator/txn/coordinator.js';
import { TV_2 } from '../coordinator/txn/state.js';
import { defineHandler } from './handler.js';

function partitionsOf(topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[]): Array<{ topic: string; partition: number }> {
  const out: Array<{ topic: string; partition: number }> = [];
  for (const t of topics) for (const partition of t.partitions) out.push({ topic: t.name, partition });
  return out;
}

/** Results grouped by topic, in the order of the request. */
function byTopic(results: readonly PartitionError[], version: number): AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[] {
  const topics = new Map<string, AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult>();
  for (const r of results) {
    let t = topics.get(r.topic);
    if (!t) topics.set(r.topic, (t = createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult({ name: r.topic })));
    // Kafka: versions before 2 do not know PRODUCER_FENCED.
    const code = version < 2 && r.errorCode === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode;
    t.resultsByPartition.push(createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult({ partitionIndex: r.partition, partitionErrorCode: code }));
  }
  return [...topics.values()];
}

export const addPartitionsToTxn = defineHandler({
  api: AddPartitionsToTxnApi,
  uses: ['transactions'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    const txns = ctx.services.transactions;
    const v = ctx.apiVersion;
    if (v < 4) {
      const results = await txns.addPartitionsToTxn(req.v3AndBelowTransactionalId, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, partitionsOf(req.v3AndBelowTopics));
      return createAddPartitionsToTxnResponse({ resultsByTopicV3AndBelow: byTopic(results, v) });
    }
    const resultsByTransaction = await Promise.all(
      req.transactions.map(async (t) => {
        const partitions = partitionsOf(t.topics);
        const results = t.verifyOnly
          ? await txns.verifyPartitions(t.transactionalId, t.producerId, t.producerEpoch, partitions)
          : // Kafka's transactionVersionForAddPartitionsToTxn: v4+ comes from transaction version 2 clients or
            // from a partition leader adding a partition for one (KIP-890 part 2).
            await txns.addPartitionsToTxn(t.transactionalId, t.producerId, t.producerEpoch, partitions, TV_2);
        return createAddPartitionsToTxnResponseAddPartitionsToTxnResult({ transactionalId: t.transactionalId, topicResults: byTopic(results, v) });
      }),
    );
    return createAddPartitionsToTxnResponse({ resultsByTransaction });
  },
});
