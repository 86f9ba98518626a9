// AddPartitionsToTxn v0-5 · v2: PRODUCER_FENCED (KIP-588; INVALID_PRODUCER_EPOCH before) · v3+: flexible · v4:
// several transactions per request, and verifyOnly entries that only check the partitions are in the
// transaction (KIP-890 part 1; broker to broker) · v5: TRANSACTION_ABORTABLE (KIP-890). Partitions that do not
// exist answer UNKNOWN_TOPIC_OR_PARTITION and the others of the same transaction OPERATION_NOT_ATTEMPTED, as
// KafkaApis answers them before asking the coordinator.
// Authorization as KafkaApis.handleAddPartitionsToTxnRequest: v4+ comes from brokers and needs CLUSTER_ACTION on
// the cluster (CLUSTER_AUTHORIZATION_FAILED at the top level otherwise); v0-3 come from clients and need WRITE on
// the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition) and WRITE on each topic,
// internal topics never allowed: if any topic is refused, nothing is added, its partitions answer
// TOPIC_AUTHORIZATION_FAILED, those that do not exist UNKNOWN_TOPIC_OR_PARTITION and the others
// OPERATION_NOT_ATTEMPTED.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  AddPartitionsToTxnApi,
  createAddPartitionsToTxnResponse,
  createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult,
  createAddPartitionsToTxnResponseAddPartitionsToTxnResult,
  createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
  type AddPartitionsToTxnRequestAddPartitionsToTxnTopic,
  type AddPartitionsToTxnResponse,
  type AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
} from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { isInternalTopic } from '../cluster/topic-names.js';
import type { PartitionError } from '../coordinator/txn/coordinator.js';
import { TV_2 } from '../coordinator/txn/state.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';
import { mapBounded } from './bounded-map.js';
import { defineHandler } from './handler.js';
import type { TransactionService } from './services.js';

function partitionsOf(topics: readonly AddPartitionsToTxnRequestAddPartitionsToTxnTopic[]): Array<{ topic: string; partition: number }> {
  const out: Array<{ topic: string; partition: number }> = [];
  for (const t of topics) for (const partition of t.partitions) out.push({ topic: t.name, partition });
  return out;
}

/**
 * Results grouped by topic, in the order of the request. The arrays are built at their final size: a v4+ request
 * holds one result per transaction until the last is answered, and an array grown by push keeps 17 slots.
 */
function byTopic(results: readonly PartitionError[], version: number): AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult[] {
  const topics = new Map<string, PartitionError[]>();
  for (const r of results) {
    const same = topics.get(r.topic);
    if (same) same.push(r);
    else topics.set(r.topic, [r]);
  }
  const out = new Array<AddPartitionsToTxnResponseAddPartitionsToTxnTopicResult>(topics.size);
  let i = 0;
  for (const [name, partitions] of topics) {
    const resultsByPartition = partitions.map((r) =>
      createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult({
        partitionIndex: r.partition,
        // Kafka: versions before 2 do not know PRODUCER_FENCED.
        partitionErrorCode: version < 2 && r.errorCode === ErrorCode.PRODUCER_FENCED ? ErrorCode.INVALID_PRODUCER_EPOCH : r.errorCode,
      }),
    );
    out[i++] = createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult({ name, resultsByPartition });
  }
  return out;
}

/**
 * v0-3 with some topic refused (KafkaApis: "any failed partition check causes the entire transaction to fail"):
 * nothing is added; TOPIC_AUTHORIZATION_FAILED for the refused, UNKNOWN_TOPIC_OR_PARTITION for those that do
 * not exist, OPERATION_NOT_ATTEMPTED for the others.
 */
function refusedTopics(txns: TransactionService, partitions: readonly { topic: string; partition: number }[], allowed: ReadonlySet<string>): PartitionError[] {
  return partitions.map((p) => ({
    ...p,
    errorCode: !allowed.has(p.topic) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : txns.partitionExists(p.topic, p.partition) ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  }));
}

export const addPartitionsToTxn = defineHandler({
  api: AddPartitionsToTxnApi,
  uses: ['transactions'],
  versions: { min: 0, max: 5 },
  async handle(req, ctx) {
    const txns = ctx.services.transactions;
    const v = ctx.apiVersion;
    if (v < 4) {
      const id = req.v3AndBelowTransactionalId;
      const partitions = partitionsOf(req.v3AndBelowTopics);
      if (!ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, id)) {
        return createAddPartitionsToTxnResponse({ resultsByTopicV3AndBelow: byTopic(partitions.map((p) => ({ ...p, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED })), v) });
      }
      // Kafka's filterByAuthorized over the topics that are not internal: an internal one is never authorized.
      const allowed = ctx.access.allowedNames(AclOperation.WRITE, ResourceType.TOPIC, partitions.filter((p) => !isInternalTopic(p.topic)).map((p) => p.topic));
      const results = partitions.every((p) => allowed.has(p.topic))
        ? await txns.addPartitionsToTxn(id, req.v3AndBelowProducerId, req.v3AndBelowProducerEpoch, partitions)
        : refusedTopics(txns, partitions, allowed);
      return createAddPartitionsToTxnResponse({ resultsByTopicV3AndBelow: byTopic(results, v) });
    }
    // Kafka's authorizeClusterOperation: its denial fails the whole request.
    if (!ctx.access.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
      return errorResponse(AddPartitionsToTxnApi.apiKey, v, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as AddPartitionsToTxnResponse;
    }
    // A few transactions at a time (bounded-map.ts): a 1 MiB request can name 30,000.
    const resultsByTransaction = await mapBounded(req.transactions, async (t) => {
      const partitions = partitionsOf(t.topics);
      const results = t.verifyOnly
        ? await txns.verifyPartitions(t.transactionalId, t.producerId, t.producerEpoch, partitions)
        : // Kafka's transactionVersionForAddPartitionsToTxn: v4+ comes from transaction version 2 clients or
          // from a partition leader adding a partition for one (KIP-890 part 2).
          await txns.addPartitionsToTxn(t.transactionalId, t.producerId, t.producerEpoch, partitions, TV_2);
      return createAddPartitionsToTxnResponseAddPartitionsToTxnResult({ transactionalId: t.transactionalId, topicResults: byTopic(results, v) });
    });
    return createAddPartitionsToTxnResponse({ resultsByTransaction });
  },
});
