import { describe, expect, it } from 'vitest';
import { groupCoordinatorConfig, GROUP_COORDINATOR_CONFIG_DEFS } from '../../../src/coordinator/config.js';
import { ConfigError } from '../../../src/config.js';

const cfg = (values: Record<string, string>) => groupCoordinatorConfig(new Map(Object.entries(values)));

describe('group coordinator config', () => {
  it('uses Kafka\'s defaults', () => {
    const c = cfg({});
    expect(c).toMatchObject({
      offsetsTopicNumPartitions: 50,
      offsetsTopicReplicationFactor: 3,
      offsetsRetentionMs: 7 * 24 * 3600 * 1000,
      classicGroupInitialRebalanceDelayMs: 3000,
      classicGroupMinSessionTimeoutMs: 6000,
      classicGroupMaxSessionTimeoutMs: 1_800_000,
      consumerGroupSessionTimeoutMs: 45_000,
      consumerGroupHeartbeatIntervalMs: 5000,
      consumerGroupAssignors: ['uniform', 'range'],
      offsetMetadataMaxBytes: 4096,
    });
    expect([...c.rebalanceProtocols]).toEqual(['classic', 'consumer']);
    expect(GROUP_COORDINATOR_CONFIG_DEFS.every((d) => d.default !== null)).toBe(true);
  });

  it('accepts Kafka\'s assignor class names', () => {
    expect(cfg({ 'group.consumer.assignors': 'org.apache.kafka.coordinator.group.assignor.RangeAssignor' }).consumerGroupAssignors).toEqual(['range']);
  });

  it('rejects what Kafka rejects at startup', () => {
    expect(() => cfg({ 'group.coordinator.rebalance.protocols': 'consumer' })).toThrow(ConfigError);
    expect(() => cfg({ 'group.coordinator.rebalance.protocols': 'classic,share' })).toThrow(/share/);
    expect(() => cfg({ 'group.consumer.assignors': 'sticky' })).toThrow(/unknown assignor/);
    expect(() => cfg({ 'group.consumer.session.timeout.ms': '1000' })).toThrow(/between/);
    expect(() => cfg({ 'group.consumer.heartbeat.interval.ms': '20000', 'group.consumer.max.heartbeat.interval.ms': '60000', 'group.consumer.max.session.timeout.ms': '60000', 'group.consumer.session.timeout.ms': '15000', 'group.consumer.min.session.timeout.ms': '1000' })).toThrow(/less than/);
    expect(() => cfg({ 'offsets.retention.minutes': 'x' })).toThrow(/INT/);
  });
});
