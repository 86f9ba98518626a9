/**
 * The broker's log cleaner (log-cleaner.ts, Kafka's LogCleanerManager): which log it cleans first, what it
 * leaves alone, a failed pass marking its partition uncleanable, the I/O throttle, and its figures.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRecordBatchSync } from '../../../protocol/records/builder.js';
import { LogCleaner, type CleanableLog } from '../../../src/log/log-cleaner.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { MemoryStores, until, type Stores } from './support.js';

let mem: MemoryStores;
let stores: Stores;
const opened: PartitionLog[] = [];

beforeEach(async () => {
  mem = new MemoryStores();
  stores = await mem.open();
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close().catch(() => undefined);
  await stores.close();
});

async function open(topic: string, policy: 'compact' | 'delete' = 'compact'): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic,
    partition: 0,
    ledgers: stores.ledgers,
    metadata: stores.metadata,
    retentionCheckIntervalMs: 0,
    config: { cleanupPolicy: [policy], segmentEntries: 2, minCleanableDirtyRatio: 0 },
  });
  opened.push(log);
  return log;
}

async function fill(log: PartitionLog, batches: number, keys: number, valueBytes = 16): Promise<void> {
  for (let i = 0; i < batches; i++) {
    await log.append(buildRecordBatchSync([{ key: `k${i % keys}`, value: Buffer.alloc(valueBytes, i) }]));
  }
}

describe('LogCleaner', () => {
  it('cleans the dirtiest due log first and leaves delete-only logs alone', async () => {
    const a = await open('a');
    const b = await open('b');
    const d = await open('d', 'delete');
    await fill(a, 9, 4);
    await fill(b, 9, 4);
    await fill(d, 9, 1);
    // a has been cleaned once and got a little more; b is all dirty.
    const cleaner = new LogCleaner({ logs: () => [a, b, d] });
    await cleaner.clean(a);
    await fill(a, 2, 4);
    expect(b.cleanableState(Date.now()).dirtyRatio).toBeGreaterThan(a.cleanableState(Date.now()).dirtyRatio);
    const first = await cleaner.runOnce();
    expect(first).not.toBeNull();
    expect(cleaner.stats().partitions.get('b-0')!.passes).toBe(1);
    expect(cleaner.stats().partitions.get('a-0')!.passes).toBe(1);
    expect(await cleaner.runUntilIdle()).toBeGreaterThan(0);
    expect(cleaner.stats().partitions.get('a-0')!.passes).toBe(2);
    expect(cleaner.stats().partitions.has('d-0')).toBe(false);
    const stats = cleaner.stats();
    expect(stats.partitions.get('b-0')!.bytesCleaned).toBeGreaterThan(0);
    expect(stats.partitions.get('b-0')!.lastPassAtMs).toBeGreaterThan(0);
    expect(stats.maxBufferUtilizationPercent).toBeGreaterThan(0);
    expect(stats.uncleanablePartitions).toBe(0);
  });

  it('marks a partition whose pass fails uncleanable and goes on with the others', async () => {
    const good = await open('good');
    await fill(good, 9, 3);
    const broken: CleanableLog = {
      topic: 'broken',
      partition: 0,
      name: 'broken-0',
      state: 'open',
      config: good.config,
      cleanableState: (now) => ({ ...good.cleanableState(now), dirtyRatio: 1, due: true }),
      compact: () => Promise.reject(new Error('disk on fire')),
    };
    const cleaner = new LogCleaner({ logs: () => [broken, good] });
    await cleaner.runUntilIdle();
    expect(cleaner.stats().uncleanablePartitions).toBe(1);
    expect(cleaner.stats().partitions.get('good-0')!.passes).toBe(1);
    expect(cleaner.stats().partitions.get('broken-0')!.passes).toBe(0);
  });

  it('keeps its reads and writes under log.cleaner.io.max.bytes.per.second', async () => {
    const log = await open('slow');
    await fill(log, 21, 1, 1000);
    const cleaner = new LogCleaner({ logs: () => [log], maxBytesPerSecond: 20_000 });
    const started = Date.now();
    const result = await cleaner.clean(log);
    const elapsed = Date.now() - started;
    const moved = result!.bytesRead * 2 + result!.bytesWritten;
    // The map pass and the filter pass each read the dirty ledgers; the first 20 KB of a second go free.
    expect(moved).toBeGreaterThan(40_000);
    expect(elapsed).toBeGreaterThanOrEqual(((moved - 20_000) / 20_000) * 1000 * 0.9);
  });

  it('looks for work every log.cleaner.backoff.ms, and never when log.cleaner.enable is false', async () => {
    const log = await open('timed');
    await fill(log, 9, 2);
    const clock = new ManualClock(Date.now());
    const off = new LogCleaner({ logs: () => [log], enabled: false, backoffMs: 1000, clock });
    const on = new LogCleaner({ logs: () => [log], backoffMs: 1000, clock });
    off.start();
    on.start();
    clock.advance(999);
    expect(on.stats().partitions.size).toBe(0);
    clock.advance(1);
    await until(() => on.stats().partitions.get('timed-0')?.passes === 1, 5000, 'the timed pass');
    expect(off.stats().partitions.size).toBe(0);
    expect(off.enabled).toBe(false);
    await Promise.all([on.close(), off.close()]);
  });
});
