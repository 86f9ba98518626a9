import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';

describe('ClusterApiError', () => {
  it('carries a stable code and its Kafka error', () => {
    const e = new ClusterApiError(ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 't' already exists.");
    expect(e).toBeInstanceOf(LedgerlineError);
    expect(e).toMatchObject({ code: 'LL_ERR_CLUSTER_API', errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, name: 'ClusterApiError' });
    expect(kafkaErrorOf(e, ErrorCode.UNKNOWN_SERVER_ERROR)).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
  });
});
