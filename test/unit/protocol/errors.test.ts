import { describe, expect, it } from 'vitest';
import { CompressionError, DecompressionLimitError, UnsupportedCompressionError } from '../../../protocol/compression/errors.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DecodeError, EncodeError, isLedgerlineError, kafkaErrorOf, LedgerlineError, UnsupportedVersionError } from '../../../protocol/errors.js';
import { CorruptRecordError, InvalidRecordError, RecordTooLargeError } from '../../../protocol/records/errors.js';

describe('LedgerlineError', () => {
  it('carries a stable code, the Kafka error it maps to, its name and cause', () => {
    const cause = new Error('disk');
    const e = new LedgerlineError('LL_ERR_TEST', ErrorCode.KAFKA_STORAGE_ERROR, 'failed', { cause });
    expect(e).toBeInstanceOf(Error);
    expect(e).toMatchObject({ code: 'LL_ERR_TEST', kafkaErrorCode: ErrorCode.KAFKA_STORAGE_ERROR, name: 'LedgerlineError', message: 'failed' });
    expect(e.cause).toBe(cause);
  });

  it('maps every codec error to the Kafka error of the exception Kafka raises for it', () => {
    const cases: [Error, string, number][] = [
      [new DecodeError('truncated', 3), 'LL_ERR_DECODE', ErrorCode.INVALID_REQUEST],
      [new EncodeError('no field'), 'LL_ERR_ENCODE', ErrorCode.UNSUPPORTED_VERSION],
      [new UnsupportedVersionError(0, 99), 'LL_ERR_UNSUPPORTED_VERSION', ErrorCode.UNSUPPORTED_VERSION],
      [new CorruptRecordError('crc'), 'LL_ERR_CORRUPT_RECORD', ErrorCode.CORRUPT_MESSAGE],
      [new InvalidRecordError('count'), 'LL_ERR_INVALID_RECORD', ErrorCode.INVALID_RECORD],
      [new RecordTooLargeError('big'), 'LL_ERR_RECORD_TOO_LARGE', ErrorCode.MESSAGE_TOO_LARGE],
      [new CompressionError('gzip', 'bad'), 'LL_ERR_COMPRESSION', ErrorCode.CORRUPT_MESSAGE],
      [new DecompressionLimitError('zstd', 10, 'x'), 'LL_ERR_DECOMPRESSION_LIMIT', ErrorCode.MESSAGE_TOO_LARGE],
      [new UnsupportedCompressionError(7, 'no'), 'LL_ERR_UNSUPPORTED_COMPRESSION', ErrorCode.UNSUPPORTED_COMPRESSION_TYPE],
    ];
    for (const [err, code, kafka] of cases) {
      expect(err).toBeInstanceOf(LedgerlineError);
      expect((err as LedgerlineError).code).toBe(code);
      expect(kafkaErrorOf(err, ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(kafka);
    }
  });
});

describe('kafkaErrorOf', () => {
  it('gives the fallback for anything that is not a LedgerlineError', () => {
    expect(kafkaErrorOf(new Error('x'), ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(kafkaErrorOf(new TypeError('x'), ErrorCode.COORDINATOR_NOT_AVAILABLE)).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect(kafkaErrorOf('a string', ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(kafkaErrorOf(undefined)).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    // An errno-coded Node error is not one of ours.
    expect(kafkaErrorOf(Object.assign(new Error('eio'), { code: 'EIO' }), -1)).toBe(-1);
  });

  it('recognises a LedgerlineError from another copy of the module by its shape', () => {
    const foreign = Object.assign(new Error('x'), { code: 'LL_ERR_LOG_FENCED', kafkaErrorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
    expect(isLedgerlineError(foreign)).toBe(true);
    expect(kafkaErrorOf(foreign, ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });
});
