/**
 * Record-level validation of a produced batch v2, after the header checks of produce.ts: Kafka's
 * LogValidator (assignOffsetsNonCompressed / validateMessagesAndAssignOffsetsCompressed, in place) for a
 * client's batch. Every record is decoded by a RecordScanner (no allocation per record) and checked:
 *
 *   structure (DefaultRecord.readFrom: lengths, varints, header count, recordCount)   INVALID_RECORD 87, thrown
 *   payload that does not decompress                                                   CORRUPT_MESSAGE 2, thrown
 *   payload that decompresses past the bound (below)                                  MESSAGE_TOO_LARGE 10, thrown
 *   offsetDelta equal to the record's index in the batch                              INVALID_RECORD, per record
 *   CreateTime topic: timestamp within message.timestamp.before/after.max.ms          INVALID_TIMESTAMP 32, per record
 *   a producer's batch marked LogAppendTime (validateTimestamp)                       INVALID_TIMESTAMP, per record
 *
 * Per-record failures are collected as Kafka's processRecordErrors does and thrown together as one
 * RecordValidationError (ProduceResponse v8+ carries them as recordErrors, KIP-467), with Kafka's summary
 * message. The list is capped at MAX_RECORD_ERRORS so the response stays bounded whatever the batch holds.
 *
 * Deliberately stricter than Kafka on offset deltas: Kafka rebuilds (recompresses) a compressed batch whose
 * inner offsets are not 0, 1, 2, ... and ignores them in an uncompressed one. This broker stores the bytes
 * the client sent and never re-encodes a batch, so a batch whose deltas disagree with its records' positions
 * (which would give its records wrong or duplicate offsets when read) is refused. Every v2 client writes
 * consecutive deltas.
 *
 * The bound: a payload may decompress to at most MAX_DECOMPRESSED_RECORDS_BYTES (128 MiB), the limit every
 * reader of stored batches in this broker decompresses with (DEFAULT_MAX_DECOMPRESSED_BYTES): whatever
 * produce accepts, a reader can decode. Kafka streams the records (DefaultRecordBatch.streamingIterator) and
 * has no such limit; here the payload is decompressed once into one bounded buffer and scanned, and the
 * codecs refuse before allocating when the format announces more than the bound (zstd and lz4 by walking
 * their frames, snappy by its length preamble, gzip by zlib's maxOutputLength). A compression bomb (a gzip
 * of 261 KB inflating to 256 MiB, a zstd of 32 KB to 1 GiB) is refused with MESSAGE_TOO_LARGE, which makes
 * a Java producer split the batch and retry rather than fail the records. A batch under the bound with very
 * many tiny records (1,000,000 in 815 KB) is accepted, as Kafka accepts it: it costs one scan, no per-record
 * objects, here and in every later reader.
 *
 * Decompression is synchronous (on the event loop, one batch at a time) for gzip, snappy and lz4; zstd has
 * only an asynchronous codec, so its validation returns a promise.
 */
import { CompressionType, DEFAULT_MAX_DECOMPRESSED_BYTES } from '../compression/index.js';
import { ErrorCode } from '../error-codes.js';
import { RECORD_BATCH_OVERHEAD, TimestampType } from './batch.js';
import type { RecordBatch } from './batch.js';
import { InvalidRecordError, RecordsError } from './errors.js';
import { RecordScanner } from './scan.js';

/** The most a produced batch's records may decompress to: the read limit of every later decoder. */
export const MAX_DECOMPRESSED_RECORDS_BYTES = DEFAULT_MAX_DECOMPRESSED_BYTES;

/** Per-record errors kept for one batch; Kafka keeps all, which for a large batch is an unbounded response. */
export const MAX_RECORD_ERRORS = 1000;

/** Kafka's RecordBatch.NO_TIMESTAMP. */
const NO_TIMESTAMP = -1;

export interface RecordValidationOptions {
  /** The broker's clock when the request arrived. */
  nowMs: number;
  /** The topic's message.timestamp.type is CreateTime. */
  createTime: boolean;
  /** message.timestamp.before.max.ms / after.max.ms; null when unlimited (Long.MAX_VALUE). */
  timestampBeforeMaxMs: number | null;
  timestampAfterMaxMs: number | null;
  /** The topic is compacted: a record without a key is refused (LogValidator.validateKey). */
  compacted?: boolean;
  /** For messages that name the partition, as Kafka's do: `topic-partition`. */
  topicPartition?: string;
  /** Default MAX_DECOMPRESSED_RECORDS_BYTES. */
  maxDecompressedBytes?: number;
  /** Every record must carry a well-formed envelope in this header (src/crypto/check.ts); null or absent: no rule. */
  envelope?: EnvelopeRule | null;
}

/**
 * A topic that requires end-to-end encryption: each record with a value carries exactly one header `header`
 * whose value `check` accepts (null) or explains (a message); a record without a value (a tombstone) may
 * carry one, which is then checked.
 */
export interface EnvelopeRule {
  readonly header: Buffer;
  /** Why the header value (a sub-buffer of the payload) is not a well-formed envelope for a value of `valueLength` bytes (-1: null), or null. */
  check(headerValue: Buffer, valueLength: number): string | null;
}

export interface RecordValidationResult {
  /** The largest record timestamp (-1 if none), what Kafka stores as the batch's maxTimestamp (CreateTime). */
  maxTimestamp: number;
}

/** One entry of ProduceResponse's recordErrors (Kafka's ProduceResponse.RecordError). */
export interface RecordErrorDetail {
  batchIndex: number;
  message: string;
}

/** Records of a batch that failed validateRecord: Kafka's RecordValidationException. */
export class RecordValidationError extends RecordsError {
  constructor(
    kafkaErrorCode: number,
    message: string,
    readonly recordErrors: RecordErrorDetail[],
    /** Records at fault, counting those past MAX_RECORD_ERRORS. */
    readonly totalErrors: number,
  ) {
    super(kafkaErrorCode === ErrorCode.INVALID_TIMESTAMP ? 'LL_ERR_INVALID_TIMESTAMP' : 'LL_ERR_INVALID_RECORD', kafkaErrorCode, message, {
      recordIndex: recordErrors[0]?.batchIndex,
    });
  }
}

/** Java's ProduceResponse.RecordError.toString, as it appears in Kafka's summary message. */
function formatRecordError(e: RecordErrorDetail): string {
  return `RecordError(batchIndex=${e.batchIndex}, message='${e.message}')`;
}

class ErrorCollector {
  errors: RecordErrorDetail[] | null = null;
  total = 0;
  timestamp = false;

  add(batchIndex: number, message: string, timestamp: boolean): void {
    this.total++;
    if (timestamp) this.timestamp = true;
    this.errors ??= [];
    if (this.errors.length < MAX_RECORD_ERRORS) this.errors.push({ batchIndex, message });
  }

  /** Kafka's processRecordErrors. */
  throwIfAny(): void {
    const errors = this.errors;
    if (errors === null) return;
    if (this.timestamp) {
      throw new RecordValidationError(ErrorCode.INVALID_TIMESTAMP, 'One or more records have been rejected due to invalid timestamp', errors, this.total);
    }
    throw new RecordValidationError(
      ErrorCode.INVALID_RECORD,
      `One or more records have been rejected due to ${this.total} record errors in total, and only showing the first three errors at most: [${errors
        .slice(0, 3)
        .map(formatRecordError)
        .join(', ')}]`,
      errors,
      this.total,
    );
  }
}

function describeRecord(s: RecordScanner, offset: number, timestamp: number): string {
  const key = s.keyLength < 0 ? 'null' : `${s.keyLength} bytes`;
  const value = s.valueLength < 0 ? 'null' : `${s.valueLength} bytes`;
  return `DefaultRecord(offset=${offset}, timestamp=${timestamp}, key=${key}, value=${value})`;
}

/** Scans the decompressed payload and applies the per-record rules. */
export function validateRecordsPayload(batch: RecordBatch, payload: Buffer, options: RecordValidationOptions): RecordValidationResult {
  const scanner = new RecordScanner(payload, batch.recordCount, batch.isCompressed ? 0 : RECORD_BATCH_OVERHEAD);
  const baseTimestamp = batch.baseTimestamp;
  const logAppendTime = batch.timestampType === TimestampType.LOG_APPEND_TIME;
  const batchMaxTimestamp = batch.maxTimestamp;
  const { nowMs, createTime } = options;
  const compacted = options.compacted === true;
  const lower = options.timestampBeforeMaxMs === null ? -Infinity : nowMs - options.timestampBeforeMaxMs;
  const upper = options.timestampAfterMaxMs === null ? Infinity : nowMs + options.timestampAfterMaxMs;
  const errors = new ErrorCollector();
  const envelope = options.envelope ?? null;
  if (envelope !== null) scanner.watchHeader = envelope.header;
  let maxTimestamp = NO_TIMESTAMP;
  while (scanner.next()) {
    const i = scanner.index;
    // baseOffset is 0 in a produced batch: a record's offset is its delta.
    const offset = scanner.offsetDelta;
    if (offset !== i) {
      errors.add(i, `Record offset delta ${offset} does not match the record's position ${i} in the batch`, false);
      continue;
    }
    // LogValidator.validateKey: compaction keeps the latest record per key, so a keyless one has no place.
    if (compacted && scanner.keyLength < 0) {
      errors.add(i, `Compacted topic cannot accept message without key in topic partition ${options.topicPartition ?? 'unknown'}.`, false);
      continue;
    }
    if (envelope !== null) {
      const why = envelopeViolation(scanner, envelope);
      if (why !== null) {
        errors.add(i, `${why}; topic partition ${options.topicPartition ?? 'unknown'} requires end-to-end encryption`, false);
        continue;
      }
    }
    const timestamp = logAppendTime ? batchMaxTimestamp : baseTimestamp + scanner.timestampDelta;
    // LogValidator.validateTimestamp.
    if (createTime && timestamp !== NO_TIMESTAMP) {
      if (timestamp < lower || timestamp > upper) {
        const range = `[${lower === -Infinity ? '-inf' : lower}, ${upper === Infinity ? '+inf' : upper}]`;
        errors.add(i, `Timestamp ${timestamp} of message with offset ${offset} is out of range. The timestamp should be within ${range}`, true);
        continue;
      }
    } else if (logAppendTime) {
      errors.add(
        i,
        `Invalid timestamp type in message ${describeRecord(scanner, offset, timestamp)}. Producer should not set timestamp type to LogAppendTime.`,
        true,
      );
      continue;
    }
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
  }
  errors.throwIfAny();
  return { maxTimestamp };
}

function envelopeViolation(s: RecordScanner, rule: EnvelopeRule): string | null {
  if (s.watchedCount === 1 && s.watchedValueLength >= 0) return rule.check(s.payload.subarray(s.watchedValueStart, s.watchedValueStart + s.watchedValueLength), s.valueLength);
  const name = rule.header.toString('latin1');
  if (s.watchedCount === 0) return s.valueLength < 0 ? null : `Record has no ${name} header (it is not end-to-end encrypted)`;
  if (s.watchedCount > 1) return `Record has ${s.watchedCount} ${name} headers, an envelope is one`;
  return `Record's ${name} header has a null value`;
}

/**
 * Validates every record of a produced batch whose header produce.ts accepted. Synchronous for every codec
 * but zstd, which returns a promise. Throws (or rejects with) a RecordsError: RecordValidationError for
 * per-record failures, InvalidRecordError (with recordIndex) for a malformed record, CorruptRecordError for
 * a payload that does not decompress, RecordTooLargeError past the bound.
 */
export function validateProducedRecords(
  batch: RecordBatch,
  options: RecordValidationOptions,
): RecordValidationResult | Promise<RecordValidationResult> {
  const read = { maxOutputBytes: options.maxDecompressedBytes ?? MAX_DECOMPRESSED_RECORDS_BYTES };
  if (batch.compressionType === CompressionType.ZSTD) {
    return batch.recordsPayload(read).then((payload) => validateRecordsPayload(batch, payload, options));
  }
  return validateRecordsPayload(batch, batch.recordsPayloadSync(read), options);
}

