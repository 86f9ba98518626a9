import { describe, expect, it } from 'vitest';
import {
  ALL_ERRORS,
  ErrorCode,
  MAX_ERROR_CODE,
  errorByCode,
  errorByName,
  isRetriable,
} from '../../../protocol/error-codes.js';

describe('Kafka error codes', () => {
  it('has the codes, names and retriable flags of Kafka 4.4 Errors', () => {
    // [code, name, retriable] copied by hand from Errors.java and the exception class hierarchy.
    const expected: Array<[number, string, boolean]> = [
      [-1, 'UNKNOWN_SERVER_ERROR', false],
      [0, 'NONE', false],
      [1, 'OFFSET_OUT_OF_RANGE', false],
      [2, 'CORRUPT_MESSAGE', true],
      [3, 'UNKNOWN_TOPIC_OR_PARTITION', true],
      [6, 'NOT_LEADER_OR_FOLLOWER', true],
      [7, 'REQUEST_TIMED_OUT', true],
      [10, 'MESSAGE_TOO_LARGE', false],
      [13, 'NETWORK_EXCEPTION', true],
      [14, 'COORDINATOR_LOAD_IN_PROGRESS', true],
      [16, 'NOT_COORDINATOR', true],
      [22, 'ILLEGAL_GENERATION', false],
      [25, 'UNKNOWN_MEMBER_ID', false],
      [27, 'REBALANCE_IN_PROGRESS', false],
      [35, 'UNSUPPORTED_VERSION', false],
      [41, 'NOT_CONTROLLER', true],
      [45, 'OUT_OF_ORDER_SEQUENCE_NUMBER', false],
      [47, 'INVALID_PRODUCER_EPOCH', false],
      [51, 'CONCURRENT_TRANSACTIONS', true],
      [56, 'KAFKA_STORAGE_ERROR', true],
      [59, 'UNKNOWN_PRODUCER_ID', false],
      [74, 'FENCED_LEADER_EPOCH', true],
      [76, 'UNSUPPORTED_COMPRESSION_TYPE', false],
      [79, 'MEMBER_ID_REQUIRED', false],
      [82, 'FENCED_INSTANCE_ID', false],
      [87, 'INVALID_RECORD', false],
      [89, 'THROTTLING_QUOTA_EXCEEDED', true],
      [90, 'PRODUCER_FENCED', false],
      [100, 'UNKNOWN_TOPIC_ID', true],
      [110, 'FENCED_MEMBER_EPOCH', false],
      [111, 'UNRELEASED_INSTANCE_ID', false],
      [113, 'STALE_MEMBER_EPOCH', false],
      [120, 'TRANSACTION_ABORTABLE', false],
      [122, 'SHARE_SESSION_NOT_FOUND', true],
      [128, 'INVALID_REGULAR_EXPRESSION', false],
      [129, 'REBOOTSTRAP_REQUIRED', false],
      [133, 'SHARE_SESSION_LIMIT_REACHED', true],
      [134, 'GROUP_DELETION_FAILED', false],
      [136, 'CONTROLLER_ID_NOT_REGISTERED', false],
    ];
    for (const [code, name, retriable] of expected) {
      const e = errorByCode(code);
      expect({ code: e.code, name: e.name, retriable: e.retriable, known: e.known }).toEqual({
        code,
        name,
        retriable,
        known: true,
      });
      expect(ErrorCode[name as keyof typeof ErrorCode]).toBe(code);
    }
  });

  it("carries Kafka's default messages verbatim", () => {
    expect(errorByCode(ErrorCode.CORRUPT_MESSAGE).message).toBe(
      'This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.',
    );
    expect(errorByCode(ErrorCode.UNSUPPORTED_VERSION).message).toBe('The version of API is not supported.');
    expect(errorByCode(ErrorCode.INVALID_RECORD).message).toBe(
      'This record has failed the validation on broker and hence will be rejected.',
    );
    expect(errorByCode(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS).message).toBe(
      "The coordinator is loading and hence can't process requests.",
    );
    expect(errorByCode(ErrorCode.GROUP_MAX_SIZE_REACHED).message).toBe('The group has reached its maximum size.');
    expect(errorByCode(ErrorCode.FENCED_STATE_EPOCH).message).toBe(
      'The coordinator rejected the request because the state epoch did not match.',
    );
    expect(errorByCode(ErrorCode.NONE).message).toBeNull();
  });

  it('covers every code from -1 to the highest without gaps, duplicates or repeated names', () => {
    const codes = ALL_ERRORS.map((e) => e.code);
    const names = ALL_ERRORS.map((e) => e.name);
    expect(new Set(codes).size).toBe(codes.length);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(Object.values(ErrorCode)).size).toBe(Object.keys(ErrorCode).length);
    expect(MAX_ERROR_CODE).toBe(136);
    expect(codes).toEqual(Array.from({ length: MAX_ERROR_CODE + 2 }, (_, i) => i - 1));
    for (const e of ALL_ERRORS) {
      expect(errorByName(e.name)).toBe(e);
      if (e.code !== 0) expect(e.message, e.name).toMatch(/\S/);
    }
  });

  it('maps an unknown code the way Kafka clients do, keeping the code', () => {
    for (const code of [137, 999, -2, 32767, 1.5]) {
      const e = errorByCode(code);
      expect(e).toMatchObject({ code, name: 'UNKNOWN_SERVER_ERROR', retriable: false, known: false });
      expect(e.message).toContain(String(code));
    }
    expect(isRetriable(9999)).toBe(false);
    expect(isRetriable(ErrorCode.NOT_LEADER_OR_FOLLOWER)).toBe(true);
    expect(errorByName('NO_SUCH_ERROR')).toBeUndefined();
  });
});
