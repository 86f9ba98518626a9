/**
 * The per-partition gauges report every hosted partition: open ones from their logs, live, the others from
 * the stored stats, read once for every gauge of a scrape and kept for a few seconds across scrapes.
 */
import { describe, expect, it } from 'vitest';
import type { HostedPartitionStats, Partition } from '../../../src/cluster/partitions.js';
import { createBrokerMetrics } from '../../../src/observability/metrics.js';

function openPartition(topic: string, index: number, figures: { highWatermark: number; logStartOffset: number; ledgers: number; sizeInBytes: number }): Partition {
  const log = { highWatermark: figures.highWatermark, logStartOffset: figures.logStartOffset, stats: { ledgers: figures.ledgers, sizeInBytes: figures.sizeInBytes } };
  return { topic: { name: topic }, index, log } as unknown as Partition;
}

function stored(topic: string, partition: number, figures: Partial<HostedPartitionStats> = {}): HostedPartitionStats {
  return { topic, topicId: `${topic}-id`, partition, sizeInBytes: 100, ledgers: 2, logStartOffset: 1, highWatermark: 9, open: false, ...figures };
}

function sample(text: string, name: string, topic: string, partition: number): number | undefined {
  const m = new RegExp(`^${name}\\{topic="${topic}",partition="${partition}"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

describe('per-partition metrics', () => {
  it('report partitions not open from their stored stats, read once per scrape and kept briefly, and open ones live', async () => {
    const open: Partition[] = [];
    let reads = 0;
    let unopened: HostedPartitionStats[] = [stored('t', 0), stored('t', 1, { highWatermark: null }), stored('gone', 0)];
    const hosted = new Set(['t-id/0', 't-id/1', 'gone-id/0']);
    const metrics = createBrokerMetrics(
      {
        connections: () => 0,
        requestMemory: { available: 0, used: 0, waiting: 0 },
        partitions: () => open,
        unopenedPartitions: async () => {
          reads++;
          return unopened;
        },
        hosts: (s) => hosted.has(`${s.topicId}/${s.partition}`),
        storage: null,
      },
      { unopenedMaxAgeMs: 60_000 },
    );
    let text = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(sample(text, 'kafka_topic_partition_current_offset', 't', 0)).toBe(9);
    expect(sample(text, 'kafka_topic_partition_oldest_offset', 't', 0)).toBe(1);
    expect(sample(text, 'ledgerline_partition_ledgers', 't', 0)).toBe(2);
    expect(sample(text, 'ledgerline_partition_size_bytes', 't', 0)).toBe(100);
    // An end offset that could not be read is left out, the other figures are not.
    expect(sample(text, 'kafka_topic_partition_current_offset', 't', 1)).toBeUndefined();
    expect(sample(text, 'ledgerline_partition_size_bytes', 't', 1)).toBe(100);
    expect(text).not.toMatch(/^ledgerline_partitions_open\{/m);
    expect(sample(text, 'ledgerline_partition_size_bytes', 'gone', 0)).toBe(100);

    // t-0 opens and grows: its live figures replace the stored ones at once, before the stored stats are read
    // again; a topic deleted meanwhile is gone from the gauges at once too.
    hosted.delete('gone-id/0');
    open.push(openPartition('t', 0, { highWatermark: 12, logStartOffset: 1, ledgers: 3, sizeInBytes: 150 }));
    unopened = [];
    text = await metrics.registry.metrics();
    expect(reads).toBe(1);
    expect(sample(text, 'kafka_topic_partition_current_offset', 't', 0)).toBe(12);
    expect(sample(text, 'ledgerline_partition_size_bytes', 't', 0)).toBe(150);
    expect(text).toMatch(/^ledgerline_partitions_open\{topic="t"\} 1$/m);
    expect(sample(text, 'ledgerline_partition_size_bytes', 'gone', 0)).toBeUndefined();
  });

  it('read the stored stats again after a failed read, and once they are older than their maximum age', async () => {
    let reads = 0;
    let fail = true;
    const sources = {
      connections: () => 0,
      requestMemory: { available: 0, used: 0, waiting: 0 },
      partitions: () => [],
      unopenedPartitions: async () => {
        reads++;
        if (fail) throw new Error('metadata store unavailable');
        return [stored('u', 0)];
      },
      hosts: () => true,
      storage: null,
    };
    const kept = createBrokerMetrics(sources, { unopenedMaxAgeMs: 60_000 });
    let text = await kept.registry.metrics();
    expect(reads).toBe(1);
    expect(sample(text, 'ledgerline_partition_size_bytes', 'u', 0)).toBeUndefined();
    fail = false;
    text = await kept.registry.metrics();
    expect(reads).toBe(2);
    expect(sample(text, 'ledgerline_partition_size_bytes', 'u', 0)).toBe(100);

    reads = 0;
    const expiring = createBrokerMetrics(sources, { unopenedMaxAgeMs: 0 });
    await expiring.registry.metrics();
    const first = reads;
    // Kept for twenty times as long as the read took (a millisecond or so here): a later scrape reads again.
    const deadline = Date.now() + 5000;
    while (reads === first && Date.now() < deadline) await expiring.registry.metrics();
    expect(reads).toBeGreaterThan(first);
  });
});
