import { describe, expect, it } from 'vitest';
import { DEFAULT_LOG_CONFIG, logConfigFromKafkaConfigs, maxSegmentMs, resolveLogConfig } from '../../../src/log/config.js';

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
      minCleanableDirtyRatio: 0.5,
      minCompactionLagMs: 0,
      maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
      deleteRetentionMs: 86400000,
    });
    expect(DEFAULT_LOG_CONFIG.retentionMs).toBe(7 * 24 * 3600 * 1000);
  });

  it("reads the compaction configs under Kafka's names, Long.MAX_VALUE as forever", () => {
    expect(
      logConfigFromKafkaConfigs({
        'min.cleanable.dirty.ratio': '0.01',
        'min.compaction.lag.ms': '100',
        'max.compaction.lag.ms': '9223372036854775807',
        'delete.retention.ms': '0',
      }),
    ).toEqual({ minCleanableDirtyRatio: 0.01, minCompactionLagMs: 100, maxCompactionLagMs: Number.MAX_SAFE_INTEGER, deleteRetentionMs: 0 });
    expect(() => resolveLogConfig({ minCleanableDirtyRatio: 1.5 })).toThrow(/min.cleanable.dirty.ratio/);
    expect(() => resolveLogConfig({ maxCompactionLagMs: 0 })).toThrow(/max.compaction.lag.ms/);
  });

  it('rolls a compacted log by max.compaction.lag.ms when that is shorter than segment.ms (KIP-354)', () => {
    expect(maxSegmentMs(resolveLogConfig({ cleanupPolicy: ['compact'], segmentMs: 10_000, maxCompactionLagMs: 2_000 }))).toBe(2_000);
    expect(maxSegmentMs(resolveLogConfig({ cleanupPolicy: ['delete'], segmentMs: 10_000, maxCompactionLagMs: 2_000 }))).toBe(10_000);
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
