/**
 * Prometheus metrics of the group coordinator, computed from its state at scrape time. Names and labels follow
 * kafka_exporter (`kafka_consumergroup_*`, label `consumergroup`), which most Kafka dashboards read.
 *
 * | metric                                   | type    | labels                              |
 * |------------------------------------------|---------|-------------------------------------|
 * | kafka_consumergroup_state                | gauge   | consumergroup, type, state (1 = in) |
 * | kafka_consumergroup_members              | gauge   | consumergroup, type                 |
 * | kafka_consumergroup_current_offset       | gauge   | consumergroup, topic, partition     |
 * | kafka_consumergroup_lag                  | gauge   | consumergroup, topic, partition     |
 * | kafka_consumergroup_lag_sum              | gauge   | consumergroup, topic                |
 * | kafka_consumergroup_rebalances_total     | counter | consumergroup, type                 |
 * | kafka_coordinator_partitions             | gauge   | status (loading, active, failed)    |
 * | kafka_coordinator_offsets                | gauge   |                                     |
 *
 * Lag is the partition's log end offset minus the committed offset (never below 0); it needs `logEndOffset`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { GroupCoordinator } from './coordinator.js';

export interface GroupMetricsOptions {
  /** A partition's log end offset, or null when the partition is not known here. */
  readonly logEndOffset?: (topic: string, partition: number) => number | null;
}

export function registerGroupCoordinatorMetrics(registry: Registry, coordinator: GroupCoordinator, options: GroupMetricsOptions = {}): void {
  const registers = [registry];
  new Gauge({
    name: 'kafka_consumergroup_state',
    help: 'State of each group: 1 for the state it is in.',
    labelNames: ['consumergroup', 'type', 'state'],
    registers,
    collect() {
      this.reset();
      for (const g of coordinator.groupSummaries()) this.set({ consumergroup: g.groupId, type: g.type, state: g.state }, 1);
    },
  });
  new Gauge({
    name: 'kafka_consumergroup_members',
    help: 'Members of each group.',
    labelNames: ['consumergroup', 'type'],
    registers,
    collect() {
      this.reset();
      for (const g of coordinator.groupSummaries()) this.set({ consumergroup: g.groupId, type: g.type }, g.members);
    },
  });
  new Gauge({
    name: 'kafka_consumergroup_current_offset',
    help: 'Committed offset of each group and partition.',
    labelNames: ['consumergroup', 'topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const g of coordinator.groupSummaries()) {
        for (const [topic, byPartition] of g.offsets) {
          for (const [partition, offset] of byPartition) this.set({ consumergroup: g.groupId, topic, partition: String(partition) }, Number(offset));
        }
      }
    },
  });
  const lagOf = function* (): Generator<{ group: string; topic: string; partition: number; lag: number }> {
    const leo = options.logEndOffset;
    if (!leo) return;
    for (const g of coordinator.groupSummaries()) {
      for (const [topic, byPartition] of g.offsets) {
        for (const [partition, offset] of byPartition) {
          const end = leo(topic, partition);
          if (end === null) continue;
          yield { group: g.groupId, topic, partition, lag: Math.max(0, end - Number(offset)) };
        }
      }
    }
  };
  new Gauge({
    name: 'kafka_consumergroup_lag',
    help: 'Log end offset minus committed offset, per group and partition.',
    labelNames: ['consumergroup', 'topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const l of lagOf()) this.set({ consumergroup: l.group, topic: l.topic, partition: String(l.partition) }, l.lag);
    },
  });
  new Gauge({
    name: 'kafka_consumergroup_lag_sum',
    help: 'Sum of the lag of a group over the partitions of a topic.',
    labelNames: ['consumergroup', 'topic'],
    registers,
    collect() {
      this.reset();
      const sums = new Map<string, { group: string; topic: string; lag: number }>();
      for (const l of lagOf()) {
        const key = JSON.stringify([l.group, l.topic]);
        const s = sums.get(key) ?? { group: l.group, topic: l.topic, lag: 0 };
        s.lag += l.lag;
        sums.set(key, s);
      }
      for (const s of sums.values()) this.set({ consumergroup: s.group, topic: s.topic }, s.lag);
    },
  });
  new Counter({
    name: 'kafka_consumergroup_rebalances_total',
    help: 'Rebalances since the broker started: classic generations completed, KIP-848 group epoch bumps.',
    labelNames: ['consumergroup', 'type'],
    registers,
    collect() {
      this.reset();
      for (const g of coordinator.groupSummaries()) {
        const n = coordinator.rebalances(g.groupId);
        if (n > 0) this.inc({ consumergroup: g.groupId, type: g.type }, n);
      }
    },
  });
  new Gauge({
    name: 'kafka_coordinator_partitions',
    help: '__consumer_offsets partitions by load status.',
    labelNames: ['status'],
    registers,
    collect() {
      this.reset();
      const counts = new Map<string, number>([
        ['loading', 0],
        ['active', 0],
        ['failed', 0],
      ]);
      for (const p of coordinator.partitionStatus()) counts.set(p.status, (counts.get(p.status) ?? 0) + 1);
      for (const [status, n] of counts) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'kafka_coordinator_offsets',
    help: 'Committed offsets held by the coordinator.',
    registers,
    collect() {
      this.set(coordinator.partitionStatus().reduce((n, p) => n + p.offsets, 0));
    },
  });
}
