import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import { parseSubscription } from '../../../src/coordinator/embedded-protocol.js';
import {
  CoordinatorCorruptError,
  CoordinatorStorageError,
  EmbeddedProtocolError,
  errorCodeOf,
  GroupApiError,
} from '../../../src/coordinator/errors.js';
import { LogFencedError } from '../../../src/log/errors.js';

describe('coordinator errors', () => {
  it('map a group API error to its own code and a storage failure to COORDINATOR_NOT_AVAILABLE', () => {
    const api = new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId: 'g' });
    expect(api).toBeInstanceOf(LedgerlineError);
    expect(api).toMatchObject({ code: 'LL_ERR_GROUP_API', errorCode: ErrorCode.UNKNOWN_MEMBER_ID, kafkaErrorCode: ErrorCode.UNKNOWN_MEMBER_ID });
    const storage = new CoordinatorStorageError('append failed', { groupId: 'g' }, new Error('EIO'));
    expect(kafkaErrorOf(storage, ErrorCode.NONE)).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    expect(kafkaErrorOf(new CoordinatorCorruptError('bad record', {}), ErrorCode.NONE)).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
  });

  it('reports an embedded protocol that does not parse as a coded error mapping to INCONSISTENT_GROUP_PROTOCOL', () => {
    let caught: unknown;
    try {
      parseSubscription(Buffer.from([0]));
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(EmbeddedProtocolError);
    expect(caught).toMatchObject({ code: 'LL_ERR_EMBEDDED_PROTOCOL', kafkaErrorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });
  });

  it('answers group APIs only with the coordinator\'s own codes, never a lower layer\'s', () => {
    expect(errorCodeOf(new GroupApiError(ErrorCode.ILLEGAL_GENERATION))).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect(errorCodeOf(new CoordinatorStorageError('x', {}, null))).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    // A fenced __consumer_offsets log maps to NOT_LEADER_OR_FOLLOWER, which no group API defines.
    expect(errorCodeOf(new LogFencedError('__consumer_offsets-0', 'taken over'))).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
    expect(errorCodeOf(new Error('bug'))).toBe(ErrorCode.UNKNOWN_SERVER_ERROR);
  });
});
