/**
 * Recovery after kill -9: a child process appends to a partition log (real local ledger store on a temp
 * dir, SQLite metadata store), printing each acknowledged batch, and is killed with SIGKILL mid-appends,
 * three times over the same partition. Each time the partition is reopened (the previous owner's open
 * ledger fenced and sealed at its last durable entry, a new ledger opened), and in the end every
 * acknowledged batch must be readable at its offset, with offsets dense and increasing across all the
 * ledgers.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { baseOffsetOf, lastOffsetOf, openDiskStores, removeDir, tempDir } from './support.js';

const CHILD = path.join(import.meta.dirname, 'crash-child.ts');
const dir = tempDir('ll-log-crash-');

afterAll(() => removeDir(dir));

interface Run {
  openedAt: number;
  epoch: number;
  acked: Array<[number, number]>;
}

/** Runs the child until it has acknowledged `acks` batches (then some milliseconds more), then SIGKILL. */
async function runAndKill(acks: number, extraMs: number): Promise<Run> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  const run: Run = { openedAt: -1, epoch: -1, acked: [] };
  let stderr = '';
  let pending = '';
  let killTimer: NodeJS.Timeout | null = null;
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const [what, a, b] = line.split(' ');
      if (what === 'open') {
        run.openedAt = Number(a);
        run.epoch = Number(b);
      } else if (what === 'ack') {
        run.acked.push([Number(a), Number(b)]);
        if (run.acked.length >= acks && !killTimer) killTimer = setTimeout(() => child.kill('SIGKILL'), extraMs);
      }
    }
  });
  const deadline = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(deadline);
  if (killTimer) clearTimeout(killTimer);
  if (stderr.includes('Error') || stderr.includes('failed')) throw new Error(`child failed: ${stderr}`);
  if (run.acked.length < acks) throw new Error(`child acknowledged only ${run.acked.length} batches: ${stderr}`);
  return run;
}

describe('partition log after SIGKILL', () => {
  it('keeps every acknowledged batch at its offset, with dense offsets, across three kills', async () => {
    const runs: Run[] = [];
    for (const [acks, extraMs] of [
      [150, 3],
      [120, 0],
      [100, 7],
    ] as const) {
      runs.push(await runAndKill(acks, extraMs));
    }
    // Each incarnation took over from the previous one: a new epoch, starting at or after what was acknowledged.
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i]!.epoch).toBe(runs[i - 1]!.epoch + 1);
      const lastAcked = Math.max(...runs[i - 1]!.acked.map(([, last]) => last));
      expect(runs[i]!.openedAt).toBeGreaterThan(lastAcked);
    }
    const stores = await openDiskStores(dir);
    try {
      const log = await PartitionLog.open({
        topic: 'crash',
        partition: 0,
        ledgers: stores.ledgers,
        metadata: stores.metadata,
        retentionCheckIntervalMs: 0,
      });
      const stored = new Map<number, number>();
      let offset = 0;
      let expectedBase = 0;
      while (offset < log.highWatermark) {
        const r = await log.read(offset, { maxBytes: 1 << 20 });
        for (const batch of r.records) {
          expect(baseOffsetOf(batch)).toBe(expectedBase);
          stored.set(baseOffsetOf(batch), lastOffsetOf(batch));
          expectedBase = lastOffsetOf(batch) + 1;
        }
        offset = r.nextOffset;
      }
      expect(expectedBase).toBe(log.highWatermark);
      for (const run of runs) {
        for (const [base, last] of run.acked) expect(stored.get(base)).toBe(last);
      }
      expect(log.describeLedgers().length).toBeGreaterThan(3);
      await log.close();
    } finally {
      await stores.close();
    }
  }, 60_000);
});
