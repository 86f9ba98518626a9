// Produce v3-11, advertised from v0 (librdkafka ≤ 2.11 only compresses when v0 is advertised,
// KAFKA-18659; v0-2 are refused as Kafka 4 refuses them) · v3: record batches v2 only · v5: logStartOffset
// · v7: zstd (KIP-110) · v8: recordErrors and errorMessage (KIP-467) · v9+: flexible · v10: currentLeader
// and nodeEndpoints (KIP-951).
//
// The batch is validated from its header (magic, lengths, CRC-32C, offsets, sequence; no decompression)
// and appended as the client sent it; only baseOffset and partitionLeaderEpoch are rewritten, in place.
// Appends are issued synchronously in request order, so pipelined requests keep their order per
// partition; the response waits for every append to be durable.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  ProduceApi,
  createProduceResponse,
  createProduceResponseBatchIndexAndErrorMessage,
  createProduceResponsePartitionProduceResponse,
  createProduceResponseTopicProduceResponse,
  type ProduceResponsePartitionProduceResponse,
} from '../../protocol/messages/000-produce.gen.js';
import { isRecordsError } from '../../protocol/records/errors.js';
import { validateProducePartitionRecords } from '../../protocol/records/produce.js';
import type { RecordBatch } from '../../protocol/records/batch.js';
import type { Partition } from '../cluster/partitions.js';
import { LogError } from '../log/errors.js';
import { logErrorCode } from './partition-errors.js';
import { defineHandler, NO_RESPONSE, type RequestContext } from './handler.js';

const NO_TIMESTAMP = -1n;

type PartitionResult = ProduceResponsePartitionProduceResponse;

function failed(index: number, errorCode: number, errorMessage: string | null = null): PartitionResult {
  return createProduceResponsePartitionProduceResponse({ index, errorCode, baseOffset: -1n, logAppendTimeMs: NO_TIMESTAMP, logStartOffset: -1n, errorMessage });
}

/** CreateTime bounds of message.timestamp.before/after.max.ms, checked on the batch header. */
function timestampError(part: Partition, batch: RecordBatch, nowMs: number): string | null {
  const { createTime, timestampBeforeMaxMs: before, timestampAfterMaxMs: after } = part.produceConfig;
  if (!createTime) return null;
  const range = (): string => `[${before === null ? '-inf' : nowMs - before}, ${after === null ? '+inf' : nowMs + after}]`;
  if (after !== null && batch.maxTimestamp > nowMs + after) {
    return `Timestamp ${batch.maxTimestamp} of message with offset 0 is out of range. The timestamp should be within ${range()}`;
  }
  if (before !== null && batch.baseTimestamp >= 0 && batch.baseTimestamp < nowMs - before) {
    return `Timestamp ${batch.baseTimestamp} of message with offset 0 is out of range. The timestamp should be within ${range()}`;
  }
  return null;
}

/** Validates and appends one partition's batch; every step before the append runs synchronously. */
function producePartition(ctx: RequestContext, topicName: string, index: number, records: Buffer | null, acks: number, nowMs: number): PartitionResult | Promise<PartitionResult> {
  const { broker } = ctx;
  const topic = broker.topics.get(topicName);
  const part = topic ? broker.partitions.get(topicName, index) : undefined;
  if (!topic || !part) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (topic.internal) return failed(index, ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${topicName}`);
  const config = part.produceConfig;
  if (acks === -1 && config.minInsyncReplicas > 1) {
    // One replica in sync: Kafka's NotEnoughReplicasException for acks=all.
    return failed(index, ErrorCode.NOT_ENOUGH_REPLICAS, `The size of the current ISR 1 is insufficient to satisfy the min.isr requirement of ${config.minInsyncReplicas} for partition ${topicName}-${index}`);
  }
  let batch: RecordBatch;
  try {
    batch = validateProducePartitionRecords(records, ctx.apiVersion, { maxMessageBytes: config.maxMessageBytes });
  } catch (e) {
    if (!isRecordsError(e)) throw e;
    const r = failed(index, e.kafkaErrorCode, e.message);
    if (e.kafkaErrorCode === ErrorCode.INVALID_RECORD) r.recordErrors = [createProduceResponseBatchIndexAndErrorMessage({ batchIndex: 0, batchIndexErrorMessage: e.message })];
    return r;
  }
  const tsError = timestampError(part, batch, nowMs);
  if (tsError) return failed(index, ErrorCode.INVALID_TIMESTAMP, tsError);
  if (batch.isTransactional) {
    return failed(index, ErrorCode.INVALID_TXN_STATE, 'Transactional produce is not supported by this broker yet');
  }

  const seq = part.producers.check(
    { producerId: batch.producerId, producerEpoch: batch.producerEpoch, baseSequence: batch.baseSequence, lastOffsetDelta: batch.lastOffsetDelta },
    nowMs,
  );
  if (seq.kind === 'error') return failed(index, seq.errorCode, seq.message);
  if (seq.kind === 'duplicate') {
    return seq.original.then((o) =>
      o === null
        ? failed(index, ErrorCode.KAFKA_STORAGE_ERROR, 'The original batch could not be written')
        : createProduceResponsePartitionProduceResponse({ index, baseOffset: o.baseOffset, logAppendTimeMs: NO_TIMESTAMP, logStartOffset: BigInt(part.log.logStartOffset) }),
    );
  }
  return part.log.append(batch.buffer).then(
    (res) => {
      seq.commit(BigInt(res.baseOffset), BigInt(res.lastOffset), BigInt(batch.maxTimestamp));
      broker.countAppend(topicName, batch.sizeInBytes, batch.recordCount);
      return createProduceResponsePartitionProduceResponse({
        index,
        baseOffset: BigInt(res.baseOffset),
        logAppendTimeMs: BigInt(res.logAppendTime),
        logStartOffset: BigInt(res.logStartOffset),
      });
    },
    (e: unknown) => {
      seq.abort();
      if (e instanceof LogError) {
        broker.log.warn({ err: e, topic: topicName, partition: index }, 'append failed');
        return failed(index, logErrorCode(e), e.message);
      }
      if (isRecordsError(e)) return failed(index, e.kafkaErrorCode, e.message);
      throw e;
    },
  );
}

export const produce = defineHandler({
  api: ProduceApi,
  versions: { min: 3, max: 11 },
  advertisedMin: 0,
  handle(req, ctx) {
    const nowMs = Date.now();
    const acksValid = req.acks === -1 || req.acks === 0 || req.acks === 1;
    const topics = req.topicData.map((t) => ({
      name: t.name,
      partitions: t.partitionData.map((p) =>
        acksValid ? producePartition(ctx, t.name, p.index, p.records as Buffer | null, req.acks, nowMs) : failed(p.index, ErrorCode.INVALID_REQUIRED_ACKS),
      ),
    }));
    if (req.acks === 0) {
      // acks=0: no response at all, whatever happened (Kafka closes the connection on errors; the
      // client cannot see them either way). Appends still complete.
      for (const t of topics) for (const p of t.partitions) if (p instanceof Promise) p.catch((err: unknown) => ctx.broker.log.warn({ err }, 'acks=0 append failed'));
      return NO_RESPONSE;
    }
    return Promise.all(topics.map(async (t) => createProduceResponseTopicProduceResponse({ name: t.name, partitionResponses: await Promise.all(t.partitions) }))).then(
      (responses) => createProduceResponse({ responses }),
    );
  },
});
