import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import {
  InvalidAppendOffsetError,
  LogClosedError,
  LogCorruptError,
  LogDeletedError,
  LogFencedError,
  LogInvalidArgumentError,
  LogStorageError,
  OffsetOutOfRangeError,
} from '../../../src/log/errors.js';

describe('partition log errors', () => {
  it('are LedgerlineErrors that map to the Kafka error a broker answers with', () => {
    const cases: [LedgerlineError, number][] = [
      [new OffsetOutOfRangeError('below start', { partition: 't-0', offset: 1 }), ErrorCode.OFFSET_OUT_OF_RANGE],
      [new LogFencedError('t-0', 'chain changed'), ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [new LogClosedError('t-0'), ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [new LogDeletedError('t-0'), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      [new InvalidAppendOffsetError('t-0', 1, 5), ErrorCode.INVALID_RECORD],
      [new LogInvalidArgumentError('bad'), ErrorCode.INVALID_REQUEST],
      [new LogStorageError('append failed', { partition: 't-0' }, new Error('EIO')), ErrorCode.KAFKA_STORAGE_ERROR],
      [new LogCorruptError('chain'), ErrorCode.KAFKA_STORAGE_ERROR],
    ];
    for (const [err, kafka] of cases) {
      expect(err).toBeInstanceOf(LedgerlineError);
      expect(err.code).toMatch(/^LL_ERR_LOG_/);
      expect(err.kafkaErrorCode).toBe(kafka);
      expect(kafkaErrorOf(err, ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(kafka);
    }
  });
});
