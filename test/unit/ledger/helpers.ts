/** Shared helpers for the ledger store tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { bookKeeperClasspath, startDevCluster, type DevCluster } from '../../../compat/cluster/index.js';
import { BookKeeperLedgerStore } from '../../../src/ledger/bookkeeper/store.js';
import { storeOptions } from '../../support/bk-tool.js';
import { FaultInjectingLedgerFs } from '../../../src/ledger/fault-fs.js';
import { nodeLedgerFs, type LedgerFs } from '../../../src/ledger/fs.js';
import { LocalLedgerStore, type LocalLedgerStoreOptions } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';

/** Deterministic entry bytes for (ledger, entry): a reader can tell a right entry from a wrong one. */
export function entryBytes(ledgerId: number, entryId: number, size = 64 + ((ledgerId * 7919 + entryId * 104729) % 2048)): Buffer {
  const b = Buffer.allocUnsafe(size);
  let x = (ledgerId * 2654435761 + entryId * 40503 + 1) >>> 0;
  for (let i = 0; i < size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    b[i] = x & 0xff;
  }
  return b;
}

/** A store under test and a way to reopen it on the same storage (after `close()`, or after a crash). */
export interface StoreHarness {
  readonly fs: LedgerFs;
  readonly dir: string;
  open(options?: LocalLedgerStoreOptions): Promise<LocalLedgerStore>;
  cleanup(): void;
}

export interface Engine {
  readonly name: string;
  /**
   * The engine is LocalLedgerStore (its stats, segment files, directory lock and flush policy): the contract
   * tests that look at those run only for it. Every other test runs against every engine.
   */
  readonly local: boolean;
  harness(): StoreHarness;
}

export function diskHarness(wrap?: (fs: LedgerFs) => LedgerFs): StoreHarness {
  const base = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-ledger-'));
  const dir = path.join(base, 'store');
  const fs = wrap ? wrap(nodeLedgerFs) : nodeLedgerFs;
  return {
    fs,
    dir,
    open: (options) => LocalLedgerStore.open(dir, { ...options, fs }),
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

export function memoryHarness(memfs = new MemoryLedgerFs(), wrap?: (fs: LedgerFs) => LedgerFs): StoreHarness {
  const fs = wrap ? wrap(memfs) : memfs;
  return { fs, dir: '/data/ledgers', open: (options) => LocalLedgerStore.open('/data/ledgers', { ...options, fs }), cleanup: () => undefined };
}

/** The implementations the contract suite runs against, unchanged. */
export const engines: Engine[] = [
  { name: 'local store on disk', local: true, harness: () => diskHarness() },
  { name: 'local store over the fault-injecting fs (no fault armed)', local: true, harness: () => diskHarness((fs) => new FaultInjectingLedgerFs(fs)) },
  { name: 'in-memory store (local store over MemoryLedgerFs)', local: true, harness: () => memoryHarness() },
  // On ZooKeeper and 3 real bookies, when asked for (LEDGERLINE_BOOKKEEPER_CONTRACT=1, as CI's BookKeeper step
  // does) and compat/bookkeeper is built: one cluster for the run, a namespace per test.
  ...(process.env.LEDGERLINE_BOOKKEEPER_CONTRACT === '1' && bookKeeperClasspath() !== undefined
    ? [{ name: 'bookkeeper store on 3 bookies (E3/Qw3/Qa2)', local: false, harness: () => bookKeeperHarness() }]
    : []),
];

let bkCluster: Promise<DevCluster> | null = null;
let bkHarnesses = 0;

/** A BookKeeperLedgerStore harness; reopening opens a new store on the same namespace (what a restart sees). */
export function bookKeeperHarness(): StoreHarness {
  bkCluster ??= startDevCluster({ bookies: 3 }).then((c) => {
    afterAllOnce(() => c.stop());
    return c;
  });
  const namespace = `contract-${process.pid}-${++bkHarnesses}`;
  return {
    fs: nodeLedgerFs,
    dir: namespace,
    async open(options) {
      const cluster = await bkCluster!;
      const store = await BookKeeperLedgerStore.open({ ...storeOptions(cluster.metadataServiceUri), maxEntryBytes: options?.maxEntryBytes ?? 8 * 1024 * 1024, namespace });
      // Typed as the local store for the suite; the tests that use local-only members are gated by Engine.local.
      return store as unknown as LocalLedgerStore;
    },
    cleanup: () => undefined,
  };
}

const stops: (() => Promise<void>)[] = [];
function afterAllOnce(stop: () => Promise<void>): void {
  if (stops.length === 0) process.once('beforeExit', () => void Promise.allSettled(stops.map((s) => s())));
  stops.push(stop);
}

/** Resolves with the rejection's `code`, failing the test if the promise resolves. */
export async function errorCode(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (err) {
    return (err as { code: string }).code;
  }
  expect.fail('expected a rejection');
}

/** Reads a whole ledger and checks every entry against `entryBytes`. Returns the number of entries. */
export async function expectIntact(store: LocalLedgerStore, ledgerId: number, size?: (entryId: number) => number | undefined): Promise<number> {
  const meta = await store.getMetadata(ledgerId);
  const entries = meta.lastAddConfirmed < 0 ? [] : await store.read(ledgerId, 0, meta.lastAddConfirmed);
  expect(entries.length).toBe(meta.lastAddConfirmed + 1);
  entries.forEach((e, i) => {
    expect(e.entryId).toBe(i);
    expect(e.data.equals(entryBytes(ledgerId, i, size?.(i)))).toBe(true);
  });
  return entries.length;
}
