/**
 * Retention by time and size applies only when cleanup.policy includes `delete` (Kafka's LogConfig.delete,
 * checked by UnifiedLog.deleteOldSegments). A `compact` topic (Kafka Connect's config and offset topics, Kafka
 * Streams changelogs, MirrorMaker 2 checkpoints) keeps everything until compaction exists; DeleteRecords
 * still moves its log start offset, and a runtime change of cleanup.policy takes effect.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { logConfigFromKafkaConfigs, resolveLogConfig } from '../../../src/log/config.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { PartitionLog, type PartitionLogOptions } from '../../../src/log/partition-log.js';
import { buildBatch, openDiskStores, removeDir, tempDir, until, type Stores } from './support.js';

const T0 = 1_700_000_000_000;

let dir: string;
let stores: Stores;
const opened: PartitionLog[] = [];

beforeEach(async () => {
  dir = tempDir();
  stores = await openDiskStores(dir);
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await stores.close();
  removeDir(dir);
});

async function open(options: Partial<PartitionLogOptions> = {}): Promise<PartitionLog> {
  const log = await PartitionLog.open({ topic: 'connect-offsets', partition: 0, ledgers: stores.ledgers, metadata: stores.metadata, retentionCheckIntervalMs: 0, ...options });
  opened.push(log);
  return log;
}

/** Ten batches a second apart, then time moves past retention.ms: every sealed ledger is expired by time. */
async function fillAndAge(log: PartitionLog, clock: ManualClock): Promise<void> {
  for (let i = 0; i < 10; i++) {
    await log.append(buildBatch([{ timestamp: clock.now() }], { valueBytes: 100 }));
    clock.advance(1000);
  }
  clock.advance(3000);
}

describe('cleanup.policy and retention', () => {
  it('reads cleanup.policy as a Kafka list', () => {
    expect(logConfigFromKafkaConfigs({ 'cleanup.policy': 'compact, delete' })).toEqual({ cleanupPolicy: ['compact', 'delete'] });
    expect(resolveLogConfig().cleanupPolicy).toEqual(['delete']);
    expect(() => resolveLogConfig(logConfigFromKafkaConfigs({ 'cleanup.policy': 'shred' }))).toThrow(/cleanup.policy/);
  });

  it('keeps every ledger of a compact topic past retention.ms and retention.bytes', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentEntries: 1, retentionMs: 1000, retentionBytes: 0, cleanupPolicy: ['compact'] } });
    await fillAndAge(log, clock);
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 0, logStartOffset: 0 });
    expect(log.logStartOffset).toBe(0);
    expect(log.stats.ledgers).toBe(10);
  });

  it('applies time retention to a compact,delete topic', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentEntries: 1, retentionMs: 1000, cleanupPolicy: ['compact', 'delete'] } });
    await fillAndAge(log, clock);
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 9, logStartOffset: 9 });
  });

  it('still honours DeleteRecords on a compact topic', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentEntries: 1, retentionMs: 1000, cleanupPolicy: ['compact'] } });
    await fillAndAge(log, clock);
    expect(await log.deleteRecords(4)).toEqual({ lowWatermark: 4 });
    expect(log.stats.ledgers).toBe(6);
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 0, logStartOffset: 4 });
  });

  it('takes a runtime change of cleanup.policy at the next retention check', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, retentionCheckIntervalMs: 1000, config: { segmentEntries: 1, retentionMs: 1000, cleanupPolicy: ['compact'] } });
    await fillAndAge(log, clock);
    clock.advance(5000); // several retention ticks: nothing goes
    expect(log.logStartOffset).toBe(0);
    log.updateConfig({ cleanupPolicy: ['delete'] });
    await until(
      () => {
        clock.advance(1000);
        return log.logStartOffset === 9;
      },
      5000,
      'retention after cleanup.policy=delete',
    );
    log.updateConfig({ cleanupPolicy: ['compact'] });
    await log.append(buildBatch([{ timestamp: clock.now() }]));
    clock.advance(60_000);
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 0 });
  });
});
