import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { registerGroupCoordinatorMetrics } from '../../../src/coordinator/metrics.js';
import { harness, startJoin } from './harness.js';

describe('group coordinator metrics', () => {
  it('exposes state, members, committed offsets, lag and rebalances per group', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const registry = new Registry();
    registerGroupCoordinatorMetrics(registry, h.coordinator, { logEndOffset: (topic, p) => (topic === 't' ? 100 + p : null) });
    const j = await startJoin(h, 'active');
    await h.advance(3000);
    await j.result;
    await h.coordinator.commitOffsets(
      createOffsetCommitRequest({
        groupId: 'lagging',
        topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [0, 1].map((p) => createOffsetCommitRequestPartition({ partitionIndex: p, committedOffset: 40n })) })],
      }),
      8,
    );
    const text = await registry.metrics();
    expect(text).toContain('kafka_consumergroup_state{consumergroup="active",type="classic",state="CompletingRebalance"} 1');
    expect(text).toContain('kafka_consumergroup_members{consumergroup="active",type="classic"} 1');
    expect(text).toContain('kafka_consumergroup_current_offset{consumergroup="lagging",topic="t",partition="1"} 40');
    expect(text).toContain('kafka_consumergroup_lag{consumergroup="lagging",topic="t",partition="0"} 60');
    expect(text).toContain('kafka_consumergroup_lag{consumergroup="lagging",topic="t",partition="1"} 61');
    expect(text).toContain('kafka_consumergroup_lag_sum{consumergroup="lagging",topic="t"} 121');
    expect(text).toContain('kafka_consumergroup_rebalances_total{consumergroup="active",type="classic"} 1');
    expect(text).toContain('kafka_coordinator_partitions{status="active"} 3');
    expect(text).toContain('kafka_coordinator_offsets 2');
  });
});
