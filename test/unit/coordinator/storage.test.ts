import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/metadata/clock.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import { CoordinatorStorage } from '../../../src/coordinator/storage.js';
import type { EncodedRecord } from '../../../src/coordinator/records.js';

const rec = (k: string, v: string | null): EncodedRecord => ({ key: Buffer.from(`\x00\x01${k}`), value: v === null ? null : Buffer.from(v) });

async function replayAll(log: MemoryPartitionLog): Promise<Map<string, string>> {
  const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 1_000_000 });
  const state = new Map<string, string>();
  await s.replay((r) => {
    const k = r.key.subarray(2).toString();
    if (r.value === null) state.delete(k);
    else state.set(k, r.value.toString());
  });
  return state;
}

describe('coordinator storage', () => {
  it('replays records in order, tombstones included', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 100 });
    await s.replay(() => undefined);
    await s.append([rec('a', '1'), rec('b', '1')]);
    await s.append([rec('a', '2'), rec('b', null)]);
    expect(await replayAll(log)).toEqual(new Map([['a', '2']]));
    expect(s.liveRecords).toBe(1);
  });

  it('splits large appends into batches of bounded size', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 100_000, maxBatchBytes: 1000 });
    await s.append(Array.from({ length: 100 }, (_, i) => rec(`k${i}`, 'x'.repeat(100))));
    expect(log.storedBatches.length).toBeGreaterThan(10);
    expect((await replayAll(log)).size).toBe(100);
  });

  it('rewrites live records and drops the history once more was appended than is live', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 10 });
    for (let i = 0; i < 30; i++) await s.append([rec(`k${i % 3}`, String(i))]);
    await s.flushed();
    expect(log.logStartOffset).toBeGreaterThan(0);
    expect(await replayAll(log)).toEqual(new Map([['k0', '27'], ['k1', '28'], ['k2', '29']]));
  });

  it('drops everything when nothing is live', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 6 });
    // Six records, the last a tombstone: the sixth triggers a rewrite of an empty image.
    for (let i = 0; i < 6; i++) await s.append([rec('k', i % 2 ? null : 'v')]);
    await s.flushed();
    expect(log.logStartOffset).toBe(log.highWatermark);
    expect(await replayAll(log)).toEqual(new Map());
  });

  it('keeps the history when a rewrite fails halfway, so nothing is lost', async () => {
    const log = new MemoryPartitionLog();
    const original = log.append.bind(log);
    let calls = 0;
    // Appends 1-10 are the records; the 10th triggers a rewrite of the 9 live keys, one batch each (11-19).
    log.append = (b: Buffer) => (++calls === 12 ? Promise.reject(new Error('disk gone')) : original(b));
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 10, maxBatchBytes: 40 });
    for (let i = 0; i < 9; i++) await s.append([rec(`k${i}`, 'v')]);
    await s.append([rec('k0', 'w')]);
    await s.flushed();
    expect(calls).toBe(12);
    expect(s.failed).not.toBeNull();
    expect(log.logStartOffset).toBe(0);
    const state = await replayAll(log);
    expect(state.get('k0')).toBe('w');
    expect(state.size).toBe(9);
  });

  it('rejects appends once an earlier one failed', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), compactionMinRecords: 100 });
    log.failNextAppends(1);
    await expect(s.append([rec('a', '1')])).rejects.toThrow(/cannot append/);
    await expect(s.append([rec('b', '1')])).rejects.toThrow(/cannot append/);
  });
});
