// Produce v3-13, advertised from v0 (librdkafka ≤ 2.11 only compresses when v0 is advertised,
// KAFKA-18659; v0-2 are refused as Kafka 4 refuses them) · v3: record batches v2 only · v5: logStartOffset
// · v7: zstd (KIP-110) · v8: recordErrors and errorMessage (KIP-467) · v9+: flexible · v10: currentLeader
// and nodeEndpoints (KIP-951) · v11: TRANSACTION_ABORTABLE may be returned (KIP-890) · v12: the transactional
// producer of transaction version 2 (KIP-890 part 2) sends no AddPartitionsToTxn: the partition is added to its
// transaction before its first batch there (Kafka's addPartition operation)
// · v13: topics by id instead of name, both ways (KIP-516): an id this node does not know is UNKNOWN_TOPIC_ID
// for each of its partitions, as Kafka's handleProduceRequest answers it.
//
// Authorization, as KafkaApis.handleProduceRequest: a request carrying transactional records needs its
// transactionalId and WRITE on it, else the whole request is answered TRANSACTIONAL_ID_AUTHORIZATION_FAILED; then
// each topic needs WRITE (TOPIC_AUTHORIZATION_FAILED for its partitions), checked before the topic's existence.
//
// Transactional batches (KIP-98) need the request's transactionalId (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
// as Kafka answers a transactional produce it cannot authorize) and pass the idempotent
// sequence checks. Before a producer's first transactional batch in a partition (no ongoing transaction of
// it there) the transaction coordinator verifies the partition is in the transaction (KIP-890 part 1,
// services.txnVerification), or from v12 adds it (part 2); its error is answered as Kafka's ReplicaManager and AddPartitionsToTxnManager
// translate it (verificationError below). Later produces to the partition wait for the verified one to be
// issued, so appends keep request order; non-transactional batches never wait for it.
//
// The batch is validated from its header (magic, lengths, CRC-32C, offsets, sequence), then record by record
// as Kafka's LogValidator does (protocol/records/validate.ts: decompressed once within a bound, every record
// scanned), and appended as the client sent it; only baseOffset, partitionLeaderEpoch and (as Kafka's
// setMaxTimestamp) a maxTimestamp that disagrees with the records are rewritten, in place.
// Appends are issued synchronously in request order, so pipelined requests keep their order per
// partition; a produce that waits before its append (for its partition to be served, a zstd codec, a KIP-890
// verification) holds back the later ones of its partition until issued (notIssued). The response waits for
// every append to be durable.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
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
import { TimestampType, type RecordBatch } from '../../protocol/records/batch.js';
import { RecordValidationError, validateProducedRecords, type RecordValidationResult } from '../../protocol/records/validate.js';
import { Partition } from '../cluster/partitions.js';
import { ENVELOPE_RULE } from '../crypto/check.js';
import { LogError } from '../log/errors.js';
import { kafkaErrorOf } from '../../protocol/errors.js';
import { logErrorCode } from './partition-errors.js';
import { servedPartition } from './served-partition.js';
import { defineHandler, NO_RESPONSE, type RequestContext } from './handler.js';
import { AclOperation, ResourceType } from './access.js';
import { errorResponse } from './error-response.js';

const NO_TIMESTAMP = -1n;

type PartitionResult = ProduceResponsePartitionProduceResponse;

function failed(index: number, errorCode: number, errorMessage: string | null = null): PartitionResult {
  return createProduceResponsePartitionProduceResponse({ index, errorCode, baseOffset: -1n, logAppendTimeMs: NO_TIMESTAMP, logStartOffset: -1n, errorMessage });
}

/** A RecordsError as the partition's response: v8+ also carry the errorMessage and recordErrors (KIP-467). */
function recordsFailure(index: number, e: unknown): PartitionResult {
  if (!isRecordsError(e)) throw e;
  const r = failed(index, e.kafkaErrorCode, e.message);
  if (e instanceof RecordValidationError) {
    r.recordErrors = e.recordErrors.map((x) => createProduceResponseBatchIndexAndErrorMessage({ batchIndex: x.batchIndex, batchIndexErrorMessage: x.message }));
  } else if (e.kafkaErrorCode === ErrorCode.INVALID_RECORD) {
    r.recordErrors = [createProduceResponseBatchIndexAndErrorMessage({ batchIndex: e.recordIndex ?? 0, batchIndexErrorMessage: e.message })];
  }
  return r;
}

/** What a partition's produce has done once its append is issued: the result, durable later. */
interface Issued {
  result: PartitionResult | Promise<PartitionResult>;
}

/**
 * Per topic partition (`topic\0index`), the last produce whose append is not issued yet. The later produces to
 * the partition wait behind it, so appends keep request order whatever a produce waits for before its append:
 * the partition being served here (opened on first use, taken by this broker, its topic looked up in the store:
 * served-partition.ts), asynchronous record validation (zstd), or the transaction coordinator's verification
 * (KIP-890). It waits for the issue, not for durability. Kafka handles a connection's requests one at a time,
 * and a producer without idempotence pipelines its batches counting on that order: a later produce that found
 * the partition servable at once was issued first. Measured with confluent-kafka's produce-consume against a
 * 3-broker cluster on a loaded 2-core machine, where four small records and then a 1 MiB one go as two requests:
 * the 1 MiB record was written first, at offset 0, in 3 of 13 runs, in 4 of 24 with only the waits for an
 * acquisition or an open kept in order, and in none of 16 with the topic lookup too.
 */
const notIssued = new Map<string, Promise<Issued>>();

type ProduceContext = RequestContext<'topics' | 'cluster' | 'partitions' | 'metrics' | 'log' | 'txnVerification' | 'mirrors'>;

/** Produce v11+ may carry TRANSACTION_ABORTABLE (KIP-890); v12+ is the addPartition operation (epoch bumps, TV2). */
const FIRST_GENERIC_ERROR_VERSION = 11;
const FIRST_ADD_PARTITION_VERSION = 12;

/**
 * A failed KIP-890 verification as the partition's response: AddPartitionsToTxnManager turns PRODUCER_FENCED
 * into INVALID_PRODUCER_EPOCH and, before Produce v11, TRANSACTION_ABORTABLE into INVALID_TXN_STATE; then
 * ReplicaManager answers the coordinator's retriable errors (and CONCURRENT_TRANSACTIONS before v12) with
 * NOT_ENOUGH_REPLICAS, which older clients retry without a metadata refresh.
 */
export function verificationError(index: number, code: number, apiVersion: number): PartitionResult {
  let c = code;
  if (c === ErrorCode.PRODUCER_FENCED) c = ErrorCode.INVALID_PRODUCER_EPOCH;
  else if (c === ErrorCode.CLUSTER_AUTHORIZATION_FAILED) c = ErrorCode.INVALID_TXN_STATE;
  else if (c === ErrorCode.TRANSACTION_ABORTABLE && apiVersion < FIRST_GENERIC_ERROR_VERSION) c = ErrorCode.INVALID_TXN_STATE;
  if (
    c === ErrorCode.NETWORK_EXCEPTION ||
    c === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ||
    c === ErrorCode.COORDINATOR_NOT_AVAILABLE ||
    c === ErrorCode.NOT_COORDINATOR ||
    (c === ErrorCode.CONCURRENT_TRANSACTIONS && apiVersion < FIRST_ADD_PARTITION_VERSION)
  ) {
    return failed(index, ErrorCode.NOT_ENOUGH_REPLICAS, `Unable to verify the partition has been added to the transaction. Underlying error: ${errorByCode(c).name}`);
  }
  if (c === ErrorCode.INVALID_TXN_STATE) return failed(index, c, 'Partition was not added to the transaction');
  return failed(index, c);
}

/** Offset of the attributes in a v2 record batch header, and its transactional bit (DefaultRecordBatch). */
const ATTRIBUTES_OFFSET = 21;
const MAGIC_OFFSET = 16;
const TRANSACTIONAL_FLAG = 0x10;

/** RequestUtils.hasTransactionalRecords: the first batch of some partition's records is transactional. */
function hasTransactionalRecords(topicData: readonly { partitionData: readonly { records: unknown }[] }[]): boolean {
  for (const t of topicData) {
    for (const p of t.partitionData) {
      const r = p.records as Buffer | null;
      if (r && r.length > ATTRIBUTES_OFFSET + 1 && r[MAGIC_OFFSET] === 2 && (r.readInt16BE(ATTRIBUTES_OFFSET) & TRANSACTIONAL_FLAG) !== 0) return true;
    }
  }
  return false;
}

/** Validates and appends one partition's batch, once every earlier produce to the partition has issued its append. */
function producePartition(ctx: ProduceContext, topicName: string, index: number, records: Buffer | null, acks: number, nowMs: number, txnId: string | null): PartitionResult | Promise<PartitionResult> {
  const key = notIssued.size === 0 ? null : `${topicName}\0${index}`;
  const ahead = key === null ? undefined : notIssued.get(key);
  let issued: Issued | Promise<Issued>;
  if (ahead === undefined) {
    issued = issueAppend(ctx, topicName, index, records, acks, nowMs, txnId);
  } else {
    const issue = (): Issued | Promise<Issued> => issueAppend(ctx, topicName, index, records, acks, nowMs, txnId);
    issued = ahead.then(issue, issue);
  }
  if (!(issued instanceof Promise)) return issued.result;
  const k = key ?? `${topicName}\0${index}`;
  notIssued.set(k, issued);
  const clear = (): void => {
    if (notIssued.get(k) === issued) notIssued.delete(k);
  };
  issued.then(clear, clear);
  return issued.then((i) => i.result);
}

/** Finds the partition and issues the batch's append to it, or answers why not. */
function issueAppend(ctx: ProduceContext, topicName: string, index: number, records: Buffer | null, acks: number, nowMs: number, txnId: string | null): Issued | Promise<Issued> {
  const target = appendTarget(ctx, topicName, index);
  if (!(target instanceof Promise)) return target instanceof Partition ? produceToPartition(ctx, target, topicName, index, records, acks, nowMs, txnId) : { result: target };
  return target.then((t) => (t instanceof Partition ? produceToPartition(ctx, t, topicName, index, records, acks, nowMs, txnId) : { result: t }));
}

/** The partition a batch is appended to, or the answer it gets instead, checked in Kafka's order. */
function appendTarget(ctx: ProduceContext, topicName: string, index: number): Partition | PartitionResult | Promise<Partition | PartitionResult> {
  const topic = ctx.services.topics.get(topicName);
  if (!topic) {
    // Another broker's Metadata may name this one the leader of a topic created a moment ago (served-partition.ts).
    const refreshed = ctx.services.topics.refresh?.(topicName, index);
    if (refreshed === undefined) return failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    return refreshed.then((known) => (known && ctx.services.topics.get(topicName) ? appendTarget(ctx, topicName, index) : failed(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)));
  }
  if (topic.internal) return failed(index, ErrorCode.INVALID_TOPIC_EXCEPTION, `Cannot append to internal topic ${topicName}`);
  // A mirror topic takes records from its cluster link only, until promoted (src/replication/), as Cluster
  // Linking's mirror topics refuse produce; POLICY_VIOLATION, non-retriable: the producer fails the send at once.
  const mirror = ctx.services.mirrors.refusal(topicName);
  if (mirror !== null) return failed(index, ErrorCode.POLICY_VIOLATION, mirror);
  const served = servedPartition(ctx.services, topicName, index);
  if (served instanceof Promise) return served.then((p) => (typeof p === 'number' ? failed(index, p) : p));
  return typeof served === 'number' ? failed(index, served) : served;
}

/** Validates one partition's batch and issues its append (synchronously, but after a zstd codec or a KIP-890 verification). */
function produceToPartition(ctx: ProduceContext, part: Partition, topicName: string, index: number, records: Buffer | null, acks: number, nowMs: number, txnId: string | null): Issued | Promise<Issued> {
  const config = part.produceConfig;
  if (acks === -1 && config.minInsyncReplicas > 1) {
    // Kafka's NotEnoughReplicasException for acks=all: the ISR the cluster view reports (Metadata's isrNodes) is
    // smaller than min.insync.replicas. A single node's is itself alone; members on BookKeeper report the
    // brokers that can take the partition over, and the ledger's ack quorum makes the write durable on that many bookies.
    const isr = ctx.services.cluster.isr(topicName, index).length;
    if (isr < config.minInsyncReplicas) {
      return { result: failed(index, ErrorCode.NOT_ENOUGH_REPLICAS, `The size of the current ISR ${isr} is insufficient to satisfy the min.isr requirement of ${config.minInsyncReplicas} for partition ${topicName}-${index}`) };
    }
  }
  let batch: RecordBatch;
  try {
    batch = validateProducePartitionRecords(records, ctx.apiVersion, { maxMessageBytes: config.maxMessageBytes });
  } catch (e) {
    return { result: recordsFailure(index, e) };
  }
  const recordOptions = {
    nowMs,
    createTime: config.createTime,
    timestampBeforeMaxMs: config.timestampBeforeMaxMs,
    timestampAfterMaxMs: config.timestampAfterMaxMs,
    compacted: config.compacted,
    envelope: config.encryptionRequired ? ENVELOPE_RULE : null,
    topicPartition: `${topicName}-${index}`,
  };
  let validated: RecordValidationResult | Promise<RecordValidationResult>;
  try {
    validated = validateProducedRecords(batch, recordOptions);
  } catch (e) {
    return { result: recordsFailure(index, e) };
  }
  if (validated instanceof Promise) {
    return validated.then(
      (v) => (batch.isTransactional ? verifyThenAppend(ctx, topicName, index, part, batch, v, nowMs, txnId) : { result: appendValidated(ctx, topicName, index, part, batch, v, nowMs) }),
      (e: unknown) => ({ result: recordsFailure(index, e) }),
    );
  }
  if (batch.isTransactional) return verifyThenAppend(ctx, topicName, index, part, batch, validated, nowMs, txnId);
  return { result: appendValidated(ctx, topicName, index, part, batch, validated, nowMs) };
}

/**
 * A transactional batch: the request must name its transactional id; the first batch of the producer's
 * transaction in this partition is verified with the transaction coordinator first (KIP-890 part 1).
 */
function verifyThenAppend(ctx: ProduceContext, topicName: string, index: number, part: Partition, batch: RecordBatch, validated: RecordValidationResult, nowMs: number, txnId: string | null): Issued | Promise<Issued> {
  if (txnId === null) {
    return { result: failed(index, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 'A transactional produce request must name its transactional id') };
  }
  // Kafka's hasOngoingTransaction(producerId, producerEpoch): only a transaction of the batch's own epoch spares it
  // the coordinator; a batch of a newer epoch (a TV2 producer goes on after each end) is verified or added.
  if (!batch.hasProducerId || (part.producers.ongoingTxnFirstOffset(batch.producerId) >= 0 && part.producers.epochOf(batch.producerId) === batch.producerEpoch)) {
    return { result: appendValidated(ctx, topicName, index, part, batch, validated, nowMs) };
  }
  // Produce v12+ is Kafka's addPartition operation (KIP-890 part 2): the partition joins the transaction here.
  return ctx.services.txnVerification.verify(txnId, batch.producerId, batch.producerEpoch, topicName, index, ctx.apiVersion >= FIRST_ADD_PARTITION_VERSION).then(
    (code) => ({ result: code === ErrorCode.NONE ? appendValidated(ctx, topicName, index, part, batch, validated, nowMs) : verificationError(index, code, ctx.apiVersion) }),
    (err: unknown) => ({ result: verificationError(index, kafkaErrorOf(err), ctx.apiVersion) }),
  );
}

/** After the records passed: producer rules, then the append (issued synchronously). */
function appendValidated(ctx: ProduceContext, topicName: string, index: number, part: Partition, batch: RecordBatch, validated: RecordValidationResult, nowMs: number): PartitionResult | Promise<PartitionResult> {
  const { metrics, log } = ctx.services;
  // LogValidator: a CreateTime batch's maxTimestamp is its records' largest (a no-op when the client's is right).
  if (part.produceConfig.createTime) batch.setMaxTimestamp(TimestampType.CREATE_TIME, validated.maxTimestamp);
  const seq = part.producers.check(
    {
      producerId: batch.producerId,
      producerEpoch: batch.producerEpoch,
      baseSequence: batch.baseSequence,
      lastOffsetDelta: batch.lastOffsetDelta,
      isTransactional: batch.isTransactional,
    },
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
  // validateProducePartitionRecords checked the batch's CRC; setMaxTimestamp above recomputes it if it changes.
  return part.log.append(batch.buffer, { crcChecked: true }).then(
    (res) => {
      seq.commit(BigInt(res.baseOffset), BigInt(res.lastOffset), BigInt(batch.maxTimestamp));
      metrics.countAppend(topicName, batch.sizeInBytes, batch.recordCount);
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
        log.warn({ err: e, topic: topicName, partition: index }, 'append failed');
        return failed(index, logErrorCode(e), e.message);
      }
      if (isRecordsError(e)) return failed(index, e.kafkaErrorCode, e.message);
      throw e;
    },
  );
}

export const produce = defineHandler({
  api: ProduceApi,
  uses: ['topics', 'cluster', 'partitions', 'metrics', 'log', 'txnVerification', 'mirrors'],
  versions: { min: 3, max: 13 },
  advertisedMin: 0,
  handle(req, ctx) {
    const nowMs = Date.now();
    if (hasTransactionalRecords(req.topicData) && (req.transactionalId === null || !ctx.access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactionalId))) {
      return errorResponse(ProduceApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, message: null }) as ReturnType<typeof createProduceResponse> | typeof NO_RESPONSE;
    }
    const acksValid = req.acks === -1 || req.acks === 0 || req.acks === 1;
    const byId = ctx.apiVersion >= 13;
    const names = req.topicData.map((t) => (byId ? ctx.services.topics.getById(t.topicId)?.name : t.name));
    const writable = ctx.access.allowedNames(AclOperation.WRITE, ResourceType.TOPIC, names.filter((n) => n !== undefined));
    const topics = req.topicData.map((t, i) => {
      const name = names[i];
      return {
        name: byId ? '' : t.name,
        topicId: byId ? t.topicId : ZERO_UUID,
        partitions: t.partitionData.map((p) =>
          name === undefined
            ? failed(p.index, acksValid ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.INVALID_REQUIRED_ACKS)
            : !writable.has(name)
              ? failed(p.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED)
              : !acksValid
                ? failed(p.index, ErrorCode.INVALID_REQUIRED_ACKS)
                : producePartition(ctx, name, p.index, p.records as Buffer | null, req.acks, nowMs, req.transactionalId),
        ),
      };
    });
    if (req.acks === 0) {
      // acks=0: no response at all, whatever happened (Kafka closes the connection on errors; the
      // client cannot see them either way). Appends still complete.
      for (const t of topics) for (const p of t.partitions) if (p instanceof Promise) p.catch((err: unknown) => ctx.services.log.warn({ err }, 'acks=0 append failed'));
      return NO_RESPONSE;
    }
    return Promise.all(topics.map(async (t) => createProduceResponseTopicProduceResponse({ name: t.name, topicId: t.topicId, partitionResponses: await Promise.all(t.partitions) }))).then(
      (responses) => createProduceResponse({ responses }),
    );
  },
});
