import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { kafkaErrorOf, LedgerlineError } from '../../../protocol/errors.js';
import {
  ClientClosedError,
  ConnectError,
  ConnectionClosedError,
  KafkaResponseError,
  MetadataError,
  ProtocolViolationError,
  RequestTimeoutError,
  UnsupportedApiVersionError,
} from '../../../src/client/errors.js';
import { ConfigError } from '../../../src/config.js';

describe('client errors', () => {
  it('map to the Kafka error Kafka\'s own client surfaces for the same failure', () => {
    const cases: [LedgerlineError, number][] = [
      [new ConnectError('refused', { broker: 'h:1' }), ErrorCode.NETWORK_EXCEPTION],
      [new ConnectionClosedError('peer closed', {}), ErrorCode.NETWORK_EXCEPTION],
      [new RequestTimeoutError(100, {}), ErrorCode.REQUEST_TIMED_OUT],
      [new ProtocolViolationError('bad frame', {}), ErrorCode.UNKNOWN_SERVER_ERROR],
      [new UnsupportedApiVersionError('none', {}), ErrorCode.UNSUPPORTED_VERSION],
      [new MetadataError('unknown topic', { topic: 't' }), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      [new MetadataError('no leader', { topic: 't' }, ErrorCode.LEADER_NOT_AVAILABLE), ErrorCode.LEADER_NOT_AVAILABLE],
      [new ClientClosedError('cluster'), ErrorCode.UNKNOWN_SERVER_ERROR],
      [new KafkaResponseError(ErrorCode.NOT_COORDINATOR, {}), ErrorCode.NOT_COORDINATOR],
    ];
    for (const [err, kafka] of cases) {
      expect(err).toBeInstanceOf(LedgerlineError);
      expect(err.code).toMatch(/^LL_ERR_(CLIENT_|KAFKA$)/);
      expect(kafkaErrorOf(err, ErrorCode.NONE)).toBe(kafka);
    }
  });

  it('a bad configuration is INVALID_CONFIG', () => {
    expect(new ConfigError('x')).toMatchObject({ code: 'LL_ERR_CONFIG', kafkaErrorCode: ErrorCode.INVALID_CONFIG, name: 'ConfigError' });
  });
});
