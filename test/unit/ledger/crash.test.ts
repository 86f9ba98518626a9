/**
 * Crash test: a child process appends with acknowledgements printed to stdout and is killed with SIGKILL at
 * a random moment; after each kill the store is reopened and must hold every acknowledged entry intact,
 * with dense ids, every acknowledged seal and delete, and no entry that fails its check. 50 rounds, in two
 * lanes (two stores) to use both cores: this is the end-to-end check on the real file system with real
 * process kills. Covering the moments a kill can land is the job of crash-steps.test.ts, which cuts a
 * deterministic run right after every step that changes the disk (a random kill finds a narrow window,
 * such as a delete landing while a checkpoint is written, only rarely).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { expectIntact } from './helpers.js';

const CHILD = path.join(import.meta.dirname, 'crash-child.ts');

interface Known {
  created: Set<number>;
  acked: Map<number, number>;
  sealed: Map<number, number>;
  deleted: Set<number>;
}

/** Runs the child until a random moment after its first acknowledgement, then kills it with SIGKILL. */
async function runAndKill(dir: string, seed: number, known: Known, killAfterMs: number): Promise<{ acks: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, String(seed)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let acks = 0;
  let pending = '';
  let killTimer: NodeJS.Timeout | null = null;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const [what, a, b] = line.split(' ');
      const ledger = Number(a);
      if (what === 'ack') {
        acks++;
        known.acked.set(ledger, Math.max(known.acked.get(ledger) ?? -1, Number(b)));
        if (!killTimer) killTimer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      } else if (what === 'created') known.created.add(ledger);
      else if (what === 'sealed') known.sealed.set(ledger, Number(b));
      else if (what === 'deleted') known.deleted.add(ledger);
    }
  });
  // A child that never acknowledges anything within the deadline has failed.
  const deadline = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await exited;
  clearTimeout(deadline);
  if (killTimer) clearTimeout(killTimer);
  if (acks === 0) throw new Error(`child acknowledged nothing (exit ${code}): ${stderr}`);
  if (stderr.includes('Error')) throw new Error(`child failed: ${stderr}`);
  return { acks };
}

async function verify(dir: string, known: Known): Promise<void> {
  const store = await LocalLedgerStore.open(dir, { segmentBytes: 256 * 1024, maxEntryBytes: 16 * 1024 });
  try {
    const present = new Map((await store.list()).map((m) => [m.ledgerId, m]));
    for (const id of known.deleted) expect(present.has(id), `deleted ledger ${id} is back`).toBe(false);
    for (const id of known.created) if (!known.deleted.has(id)) expect(present.has(id), `created ledger ${id} is missing`).toBe(true);
    for (const [id, last] of known.sealed) {
      if (known.deleted.has(id)) continue;
      expect(present.get(id)).toMatchObject({ state: 'sealed', lastAddConfirmed: last });
    }
    for (const [id, last] of known.acked) {
      if (known.deleted.has(id)) continue;
      expect(present.get(id)!.lastAddConfirmed, `ledger ${id} lost acknowledged entries`).toBeGreaterThanOrEqual(last);
    }
    // Every entry present, acknowledged or not, is dense and intact.
    for (const id of present.keys()) await expectIntact(store, id);
  } finally {
    await store.close();
  }
}

describe('ledger store crash recovery', () => {
  // 50 kills in CI; `npm run bench -- crash [kills]` runs the same test with more (LEDGERLINE_CRASH_KILLS).
  const kills = Number(process.env.LEDGERLINE_CRASH_KILLS ?? 50);
  it(`keeps every acknowledged entry, seal and delete across ${kills} SIGKILLs at random moments`, { timeout: 150_000 + kills * 2_000 }, async () => {
    let seed = Number(process.env.LEDGERLINE_CRASH_SEED ?? 20260101);
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 0x1_0000_0000;
    };
    const lanes = 2;
    const roundsPerLane = Math.ceil(kills / lanes);
    const dirs = Array.from({ length: lanes }, () => mkdtempSync(path.join(os.tmpdir(), 'ledgerline-crash-')));
    let totalAcks = 0;
    try {
      await Promise.all(
        dirs.map(async (dir) => {
          const known: Known = { created: new Set(), acked: new Map(), sealed: new Map(), deleted: new Set() };
          for (let round = 0; round < roundsPerLane; round++) {
            const { acks } = await runAndKill(path.join(dir, 'store'), Math.floor(random() * 1e9), known, Math.floor(random() * 60));
            totalAcks += acks;
            await verify(path.join(dir, 'store'), known);
          }
          expect(known.sealed.size).toBeGreaterThan(roundsPerLane);
          expect(known.deleted.size).toBeGreaterThan(0);
        }),
      );
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
    expect(totalAcks).toBeGreaterThan(200);
  });
});
