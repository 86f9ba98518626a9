import { describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/metadata/clock.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import { CoordinatorStorage } from '../../../src/coordinator/storage.js';
import type { EncodedRecord } from '../../../src/coordinator/records.js';

const rec = (k: string, v: string | null): EncodedRecord => ({ key: Buffer.from(`\x00\x01${k}`), value: v === null ? null : Buffer.from(v) });

async function replayAll(log: MemoryPartitionLog): Promise<Map<string, string>> {
  const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), });
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
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock() });
    await s.replay(() => undefined);
    await s.append([rec('a', '1'), rec('b', '1')]);
    await s.append([rec('a', '2'), rec('b', null)]);
    expect(await replayAll(log)).toEqual(new Map([['a', '2']]));
  });

  it('splits large appends into batches of bounded size', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock(), maxBatchBytes: 1000 });
    await s.append(Array.from({ length: 100 }, (_, i) => rec(`k${i}`, 'x'.repeat(100))));
    expect(log.storedBatches.length).toBeGreaterThan(10);
    expect((await replayAll(log)).size).toBe(100);
  });

  it('rejects appends once an earlier one failed', async () => {
    const log = new MemoryPartitionLog();
    const s = new CoordinatorStorage(log, { partition: 0, clock: new ManualClock() });
    log.failNextAppends(1);
    await expect(s.append([rec('a', '1')])).rejects.toThrow(/cannot append/);
    await expect(s.append([rec('b', '1')])).rejects.toThrow(/cannot append/);
  });
});
