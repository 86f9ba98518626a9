import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_CONFIG, logConfigFromKafkaConfigs, resolveLogConfig } from '../../../src/log/config.js';

describe('log config', () => {
  it("defaults to Kafka's values", () => {
    expect(resolveLogConfig()).toEqual({
      segmentBytes: 1073741824,
      segmentMs: 604800000,
      segmentEntries: 50000,
      retentionMs: 604800000,
      retentionBytes: -1,
      cleanupPolicy: ['delete'],
      messageTimestampType: 'CreateTime',
      maxMessageBytes: 1048588,
    });
    expect(DEFAULT_LOG_CONFIG.retentionMs).toBe(7 * 24 * 3600 * 1000);
  });

  it("reads Kafka's config names and ignores the ones of other layers", () => {
    expect(
      logConfigFromKafkaConfigs({
        'segment.bytes': '1048576',
        'retention.ms': '-1',
        'ledgerline.segment.entries': '1000',
        'message.timestamp.type': 'LogAppendTime',
        'cleanup.policy': 'delete',
        'min.insync.replicas': '2',
      }),
    ).toEqual({ segmentBytes: 1048576, retentionMs: -1, segmentEntries: 1000, messageTimestampType: 'LogAppendTime', cleanupPolicy: ['delete'] });
    expect(() => logConfigFromKafkaConfigs({ 'segment.ms': 'soon' })).toThrow(/segment.ms/);
  });

  it('rejects values outside the ranges Kafka accepts', () => {
    expect(() => resolveLogConfig({ segmentMs: 0 })).toThrow(/segment.ms/);
    expect(() => resolveLogConfig({ retentionMs: -2 })).toThrow(/retention.ms/);
    expect(() => resolveLogConfig({ segmentEntries: 0 })).toThrow(/segment.entries/);
    expect(() => resolveLogConfig({ messageTimestampType: 'Wallclock' as never })).toThrow(/message.timestamp.type/);
  });
});
