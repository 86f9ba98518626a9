/**
 * Errors raised while framing, validating or decoding record batches. Every error thrown by
 * protocol/records is a RecordsError: a stable `code`, the Kafka error code a broker answers a producer with
 * (`kafkaErrorCode`), and where it went wrong (`offset`, the byte offset in the buffer that was handed in).
 *
 * The split follows Kafka's exceptions:
 *   CorruptRecordError  CORRUPT_MESSAGE (2)   framing and integrity: sizes below the minimum, truncation,
 *                                            an unknown magic, a CRC that does not match, corrupt
 *                                            compressed data (Kafka's CorruptRecordException)
 *   InvalidRecordError  INVALID_RECORD (87)   well-framed bytes that break the rules: record counts and
 *                                            offsets that disagree, malformed records inside a batch whose CRC
 *                                            matched, batches a client may not send (Kafka's
 *                                            InvalidRecordException)
 *   RecordTooLargeError MESSAGE_TOO_LARGE (10) a batch over the size limit, or records that decompress past
 *                                            the decompression limit
 *   UnsupportedRecordCompressionError UNSUPPORTED_COMPRESSION_TYPE (76) zstd in Produce before v7
 */
import { CodecError } from '../errors.js';
import { ErrorCode } from '../error-codes.js';

export interface RecordsErrorContext {
  /** Byte offset in the buffer given to the call that failed. */
  offset?: number;
  /** Index in its batch of the record that is malformed (ProduceResponse's batchIndex, KIP-467). */
  recordIndex?: number;
  cause?: unknown;
}

export class RecordsError extends CodecError {
  readonly offset: number | undefined;
  /** Set when one record of a batch is at fault: its index in the batch. */
  readonly recordIndex: number | undefined;

  constructor(code: string, kafkaErrorCode: number, message: string, context: RecordsErrorContext = {}) {
    super(
      code,
      kafkaErrorCode,
      context.offset !== undefined ? `${message} (at byte ${context.offset})` : message,
      context.cause !== undefined ? { cause: context.cause } : undefined,
    );
    this.offset = context.offset;
    this.recordIndex = context.recordIndex;
  }
}

export class CorruptRecordError extends RecordsError {
  constructor(message: string, context?: RecordsErrorContext) {
    super('LL_ERR_CORRUPT_RECORD', ErrorCode.CORRUPT_MESSAGE, message, context);
  }
}

export class InvalidRecordError extends RecordsError {
  constructor(message: string, context?: RecordsErrorContext) {
    super('LL_ERR_INVALID_RECORD', ErrorCode.INVALID_RECORD, message, context);
  }
}

/** A message set in the legacy format (magic 0 or 1) where a record batch v2 was required. */
export class LegacyMessageFormatError extends InvalidRecordError {
  readonly magic: number;
  constructor(magic: number, message: string, context?: RecordsErrorContext) {
    super(message, context);
    this.magic = magic;
  }
}

export class RecordTooLargeError extends RecordsError {
  constructor(message: string, context?: RecordsErrorContext) {
    super('LL_ERR_RECORD_TOO_LARGE', ErrorCode.MESSAGE_TOO_LARGE, message, context);
  }
}

export class UnsupportedRecordCompressionError extends RecordsError {
  constructor(message: string, context?: RecordsErrorContext) {
    super('LL_ERR_UNSUPPORTED_COMPRESSION', ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message, context);
  }
}

export function isRecordsError(err: unknown): err is RecordsError {
  return err instanceof RecordsError;
}
