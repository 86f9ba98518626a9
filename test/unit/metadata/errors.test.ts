import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import {
  MetadataClosedError,
  MetadataCompactedError,
  MetadataConflictError,
  MetadataFormatError,
  MetadataFutureRevisionError,
  MetadataInvalidArgumentError,
  MetadataLeaseNotFoundError,
  MetadataLockedError,
  MetadataStorageError,
  MetadataWatchListenerError,
} from '../../../src/metadata/errors.js';

describe('metadata store errors', () => {
  it('map as failures to reach or write through the controller do', () => {
    const cases: [LedgerlineError, string, number][] = [
      [new MetadataClosedError('put'), 'LL_ERR_METADATA_CLOSED', ErrorCode.NOT_CONTROLLER],
      [new MetadataStorageError('put', new Error('SQLITE_IOERR')), 'LL_ERR_METADATA_STORAGE', ErrorCode.KAFKA_STORAGE_ERROR],
      [new MetadataLockedError('/d'), 'LL_ERR_METADATA_LOCKED', ErrorCode.KAFKA_STORAGE_ERROR],
      [new MetadataFormatError('newer format', {}), 'LL_ERR_METADATA_FORMAT', ErrorCode.KAFKA_STORAGE_ERROR],
      [new MetadataConflictError('/topics/t', 10), 'LL_ERR_METADATA_CONFLICT', ErrorCode.REQUEST_TIMED_OUT],
      [new MetadataLeaseNotFoundError('7', 'keepAlive'), 'LL_ERR_METADATA_LEASE_NOT_FOUND', ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [new MetadataInvalidArgumentError('too many ops'), 'LL_ERR_METADATA_INVALID_ARGUMENT', ErrorCode.INVALID_REQUEST],
      [new MetadataCompactedError(1, 5), 'LL_ERR_METADATA_COMPACTED', ErrorCode.UNKNOWN_SERVER_ERROR],
      [new MetadataFutureRevisionError(9, 5), 'LL_ERR_METADATA_FUTURE_REVISION', ErrorCode.UNKNOWN_SERVER_ERROR],
      [new MetadataWatchListenerError(1, new Error('x')), 'LL_ERR_METADATA_WATCH_LISTENER', ErrorCode.UNKNOWN_SERVER_ERROR],
    ];
    for (const [err, code, kafka] of cases) {
      expect(err).toBeInstanceOf(LedgerlineError);
      expect(err.code).toBe(code);
      expect(kafkaErrorOf(err, ErrorCode.NONE)).toBe(kafka);
    }
  });
});
