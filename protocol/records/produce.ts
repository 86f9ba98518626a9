/**
 * What a broker checks in a produced partition's `records` before appending, in Kafka's order, header only:
 * no record is decoded and nothing is decompressed. The batch that comes back is a view over the request's
 * bytes, ready for `setBaseOffset` / `setPartitionLeaderEpoch`.
 *
 *   1. ProduceRequest.validateRecords (v3+; Kafka 4 accepts nothing older):
 *        at least one batch, magic 2, no zstd before v7 (KIP-110), exactly one batch   INVALID_RECORD / 76
 *   2. UnifiedLog.analyzeAndValidateRecords, client origin:
 *        baseOffset 0                                                                 INVALID_RECORD
 *        size <= max.message.bytes                                                    MESSAGE_TOO_LARGE
 *        CRC-32C                                                                      CORRUPT_MESSAGE
 *   3. LogValidator.validateBatch, client origin:
 *        lastOffsetDelta + 1 > 0, recordCount > 0, the two equal,
 *        not a control batch, a sequence when there is a producer id                  INVALID_RECORD
 *   plus a defined compression type (Kafka fails with an unexpected error on ids 5-7).
 *
 * Deliberately stricter than Kafka: bytes after the batch, or a batch cut short, are rejected as corrupt.
 * Kafka's iterator stops at an incomplete trailing entry and the log silently trims it; a client never sends
 * one, so such bytes mean a broken client or a framing bug, better reported than dropped.
 *
 * Then every record is checked (structure, count, offset deltas, timestamps against
 * message.timestamp.*.max.ms) by validate.ts, after these header checks, as LogValidator does.
 */
import { CompressionType, isCompressionType } from '../compression/index.js';
import { BatchField, MAGIC_V2, RecordBatch } from './batch.js';
import {
  CorruptRecordError,
  InvalidRecordError,
  LegacyMessageFormatError,
  RecordTooLargeError,
  UnsupportedRecordCompressionError,
} from './errors.js';
import { frameEntryAt } from './split.js';

/** Produce v7 is the first to allow zstd (KIP-110). */
export const PRODUCE_ZSTD_MIN_VERSION = 7;

export interface ProduceValidationOptions {
  /** The topic's max.message.bytes: the largest batch accepted, LOG_OVERHEAD included. */
  maxMessageBytes?: number;
}

/**
 * Validates one partition's `records` from a Produce request of `apiVersion` (3 or later) and returns its
 * single batch. Throws a RecordsError whose `kafkaErrorCode` is the partition's error code.
 */
export function validateProducePartitionRecords(
  records: Buffer | null,
  apiVersion: number,
  options: ProduceValidationOptions = {},
): RecordBatch {
  if (records === null || records.length === 0) {
    throw new InvalidRecordError(
      `Produce requests with version ${apiVersion} must have at least one record batch per partition`,
    );
  }
  const first = frameEntryAt(records, 0);
  if (first === null) {
    throw new CorruptRecordError(
      `Truncated record batch: ${records.length} bytes, fewer than the batch header or length declares`,
      { offset: 0 },
    );
  }
  if (first.magic !== MAGIC_V2) {
    throw new LegacyMessageFormatError(
      first.magic,
      `Produce requests with version ${apiVersion} are only allowed to contain record batches with magic version 2`,
      { offset: BatchField.MAGIC },
    );
  }
  const batch = RecordBatch.unchecked(records.subarray(first.start, first.end));
  if (apiVersion < PRODUCE_ZSTD_MIN_VERSION && batch.compressionType === CompressionType.ZSTD) {
    throw new UnsupportedRecordCompressionError(
      `Produce requests with version ${apiVersion} are not allowed to use ZStandard compression`,
      { offset: BatchField.ATTRIBUTES },
    );
  }
  if (first.end !== records.length) {
    if (frameEntryAt(records, first.end) !== null) {
      throw new InvalidRecordError(
        `Produce requests with version ${apiVersion} are only allowed to contain exactly one record batch per partition`,
        { offset: first.end },
      );
    }
    throw new CorruptRecordError(`${records.length - first.end} unexpected bytes after the record batch`, {
      offset: first.end,
    });
  }
  validateClientBatch(batch, options);
  return batch;
}

/**
 * Steps 2 and 3 for one batch v2 written by a client (framing already checked): baseOffset, size, CRC,
 * offsets against count, control flag, sequence, compression type.
 */
export function validateClientBatch(batch: RecordBatch, options: ProduceValidationOptions = {}): void {
  if (batch.buffer.readInt32BE(BatchField.BASE_OFFSET) !== 0 || batch.buffer.readInt32BE(BatchField.BASE_OFFSET + 4) !== 0) {
    throw new InvalidRecordError(
      `The baseOffset of the record batch in the append should be 0, but it is ${batch.baseOffset}`,
      { offset: BatchField.BASE_OFFSET },
    );
  }
  if (options.maxMessageBytes !== undefined && batch.sizeInBytes > options.maxMessageBytes) {
    throw new RecordTooLargeError(
      `The record batch size in the append is ${batch.sizeInBytes} bytes which exceeds the maximum configured value of ${options.maxMessageBytes}.`,
    );
  }
  batch.validate();
  const lastOffsetDelta = batch.lastOffsetDelta;
  const countFromOffsets = lastOffsetDelta + 1;
  if (countFromOffsets <= 0) {
    throw new InvalidRecordError(`Batch has an invalid offset range: [0, ${lastOffsetDelta}]`, {
      offset: BatchField.LAST_OFFSET_DELTA,
    });
  }
  const count = batch.recordCount;
  if (count <= 0) {
    throw new InvalidRecordError(`Invalid reported count for record batch: ${count}`, {
      offset: BatchField.RECORD_COUNT,
    });
  }
  if (countFromOffsets !== count) {
    throw new InvalidRecordError(`Inconsistent batch offset range [0, ${lastOffsetDelta}] and count of records ${count}`, {
      offset: BatchField.RECORD_COUNT,
    });
  }
  if (batch.isControl) {
    throw new InvalidRecordError('Clients are not allowed to write control records', { offset: BatchField.ATTRIBUTES });
  }
  if (batch.hasProducerId && batch.baseSequence < 0) {
    throw new InvalidRecordError(
      `Invalid sequence number ${batch.baseSequence} in record batch with producerId ${batch.producerId}`,
      { offset: BatchField.BASE_SEQUENCE },
    );
  }
  if (!isCompressionType(batch.compressionType)) {
    throw new InvalidRecordError(`Unknown compression type id ${batch.compressionType}`, {
      offset: BatchField.ATTRIBUTES,
    });
  }
}
