/**
 * The directory lock is a kernel lock (SQLite's POSIX lock on LOCK.sqlite), released by the kernel when its
 * process dies: a restart right after a SIGKILL is never refused, there is no pid to go stale or be reused,
 * and a second process or a second store in this process is refused at once, with an error naming the
 * directory. A pid file left by an earlier version is harmless.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerStoreLockedError } from '../../../src/ledger/errors.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';

const CHILD = fileURLToPath(new URL('./lock-child.ts', import.meta.url));

let base: string;
let dir: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-lock-'));
  dir = path.join(base, 'store');
});

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

/** Starts the child on `dir` and resolves with its first line (`open …` or `locked …`). */
function startChild(): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child gave no answer in 20 s: ${stderr}`)), 20_000);
    createInterface({ input: child.stdout! }).once('line', (line) => {
      clearTimeout(timer);
      resolve({ child, line });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`child exited with ${code} before answering: ${stderr}`));
    });
  });
}

function killAndWait(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('store directory lock', () => {
  it('refuses a second process at once while the first runs, naming the directory', async () => {
    const first = await startChild();
    expect(first.line).toMatch(/^open \d+$/);
    const second = await startChild();
    expect(second.line).toBe(`locked LL_ERR_LEDGER_STORE_LOCKED ledger store ${dir} is in use by another process or another open store in this process`);
    // And this process too, while the child holds it.
    const started = performance.now();
    await expect(LocalLedgerStore.open(dir)).rejects.toBeInstanceOf(LedgerStoreLockedError);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('opens right after the holder is killed with SIGKILL, with its acknowledged entry', async () => {
    for (let round = 0; round < 3; round++) {
      const { child, line } = await startChild();
      expect(line).toMatch(/^open \d+$/);
      await killAndWait(child);
      const store = await LocalLedgerStore.open(dir);
      try {
        const id = Number(line.split(' ')[1]);
        const [entry] = await store.read(id, 0, 0);
        expect(entry!.data.toString()).toBe('held');
      } finally {
        await store.close();
      }
    }
  });

  it('refuses a second open in the same process and keeps the first holder\'s lock after the refusal', async () => {
    const store = await LocalLedgerStore.open(dir);
    try {
      const err = await LocalLedgerStore.open(dir).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(LedgerStoreLockedError);
      expect((err as Error).message).toContain(dir);
      // The refused attempt closed its own handle on the lock file: POSIX locks drop when any descriptor of
      // the file closes in the owning process, so check that another process is still refused.
      const other = await startChild();
      expect(other.line).toMatch(/^locked LL_ERR_LEDGER_STORE_LOCKED /);
    } finally {
      await store.close();
    }
    const again = await LocalLedgerStore.open(dir);
    await again.close();
  });

  it('ignores and removes a pid file left by an earlier version, even one naming a live process', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'LOCK'), `${process.ppid}\n`);
    const store = await LocalLedgerStore.open(dir);
    try {
      expect(existsSync(path.join(dir, 'LOCK'))).toBe(false);
      const w = await store.create();
      expect(await w.append(Buffer.from('x'))).toBe(0);
    } finally {
      await store.close();
    }
  });
});
