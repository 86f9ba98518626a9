/** openLedgerStore(): the ledger store named by ledgerline.ledger.store, and the refusal of any other name. */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BROKER_CONFIG_BY_NAME, validateConfigValue } from '../../../src/cluster/config-defs.js';
import { loadConfig } from '../../../src/config.js';
import { FaultInjectingLedgerFs } from '../../../src/ledger/fault-fs.js';
import { nodeLedgerFs } from '../../../src/ledger/fs.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import {
  DEFAULT_LEDGER_STORE,
  LEDGER_STORE_CONFIG,
  LEDGER_STORE_KINDS,
  ledgerStoreDirectIo,
  ledgerStoreKind,
  ledgerStoreSpace,
  openLedgerStore,
} from '../../../src/ledger/open-store.js';
import type { LedgerStore } from '../../../src/ledger/types.js';
import type { LedgerError } from '../../../src/ledger/errors.js';

const REFUSAL = (value: string): string => `Invalid value ${value} for configuration ledgerline.ledger.store: String must be one of: local, memory, bookkeeper`;

let base: string | null = null;
function tempBase(): string {
  base = mkdtempSync(path.join(os.tmpdir(), 'ledgerline-open-store-'));
  return base;
}
afterEach(() => {
  if (base) rmSync(base, { recursive: true, force: true });
  base = null;
});

/** Appends two entries to a new ledger, seals it, and returns its id. */
async function writeLedger(store: LedgerStore): Promise<number> {
  const w = await store.create();
  await w.append(Buffer.from('first'));
  await w.append(Buffer.from('second'));
  await w.seal();
  return w.ledgerId;
}

async function readAll(store: LedgerStore, ledgerId: number): Promise<string[]> {
  return (await store.read(ledgerId, 0, 100)).map((e) => e.data.toString());
}

async function refusal(p: Promise<unknown>): Promise<LedgerError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e as LedgerError,
  );
  expect(err, 'expected a refusal').not.toBeNull();
  return err!;
}

describe('openLedgerStore', () => {
  it('opens the local store in its directory by default, and it keeps what was written across a reopen', async () => {
    const dir = path.join(tempBase(), 'ledgers');
    const store = await openLedgerStore({ dir });
    expect(store).toBeInstanceOf(LocalLedgerStore);
    const id = await writeLedger(store);
    await store.close();
    expect(readdirSync(dir)).toEqual(expect.arrayContaining(['ledgers.ckpt', 'LOCK.sqlite']));

    const again = await openLedgerStore({ dir, store: 'local' });
    expect(await readAll(again, id)).toEqual(['first', 'second']);
    expect((await again.getMetadata(id)).state).toBe('sealed');
    await again.close();
  });

  it('takes the default for a missing, null or blank value, and ignores surrounding blanks', () => {
    expect(DEFAULT_LEDGER_STORE).toBe('local');
    expect(ledgerStoreKind(undefined)).toBe('local');
    expect(ledgerStoreKind(null)).toBe('local');
    expect(ledgerStoreKind('  ')).toBe('local');
    expect(ledgerStoreKind(' memory ')).toBe('memory');
  });

  it('opens the memory store without touching the disk, and a reopen on the same memory fs keeps its ledgers', async () => {
    const dir = path.join(tempBase(), 'ledgers');
    const memoryFs = new MemoryLedgerFs();
    const store = await openLedgerStore({ store: 'memory', dir, memoryFs });
    const id = await writeLedger(store);
    await store.close();
    expect(existsSync(dir)).toBe(false);

    const again = await openLedgerStore({ store: 'memory', dir, memoryFs });
    expect(await readAll(again, id)).toEqual(['first', 'second']);
    await again.close();

    const fresh = await openLedgerStore({ store: 'memory', dir });
    expect(await fresh.list()).toEqual([]);
    await fresh.close();
  });

  it('refuses an unknown store name with the accepted ones, in Kafka ConfigException words, before opening anything', async () => {
    const dir = path.join(tempBase(), 'ledgers');
    for (const name of ['rocksdb', 'LOCAL', 'local,memory']) {
      const err = await refusal(openLedgerStore({ store: name, dir }));
      expect(err.code).toBe('LL_ERR_INVALID_ARGUMENT');
      expect(err.message).toBe(REFUSAL(name));
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('echoes at most 100 characters of a refused name', () => {
    const long = 'x'.repeat(5000);
    expect(() => ledgerStoreKind(long)).toThrow(REFUSAL(`${'x'.repeat(100)}... (5000 characters)`));
  });

  it('passes the store options through to the implementation it opens', async () => {
    for (const store of LEDGER_STORE_KINDS.filter((k) => k !== 'bookkeeper')) { // bookkeeper needs bookies: test/integration/bookkeeper-*.test.ts
      const opened = await openLedgerStore({ store, dir: path.join(tempBase(), 'ledgers'), maxEntryBytes: 16, segmentBytes: 1024 * 1024 });
      const w = await opened.create();
      const err = await refusal(w.append(Buffer.alloc(17)));
      expect(err.code).toBe('LL_ERR_ENTRY_TOO_LARGE');
      await opened.close();
      rmSync(base!, { recursive: true, force: true });
    }
  });

  it('opens the local store over the file system it is given', async () => {
    const dir = path.join(tempBase(), 'ledgers');
    const fs = new FaultInjectingLedgerFs(nodeLedgerFs);
    const store = await openLedgerStore({ dir, fs });
    const w = await store.create();
    fs.failSyncs(1);
    const err = await refusal(w.append(Buffer.from('lost')));
    expect(err.code).toBe('LL_ERR_LEDGER_STORAGE');
    expect(await w.append(Buffer.from('kept'))).toBe(0);
    await store.close();
  });

  it('gives the space accounting the broker metrics read, live, for the store it opened', async () => {
    const store = await openLedgerStore({ store: 'memory', dir: '/ledgers', segmentBytes: 1024 * 1024, maxEntryBytes: 1024, gc: { gcIntervalMs: 0 } });
    const space = ledgerStoreSpace(store)!;
    expect(space).not.toBeNull();
    const w = await store.create();
    for (let i = 0; i < 400; i++) await w.append(Buffer.alloc(1000, i));
    const before = space.reclaimableBytes;
    expect(before).toBeGreaterThan(0); // the CREATE record holds no live entry
    await store.delete(w.ledgerId);
    // Its 400 entries (32-byte record headers, 1000 payload bytes) are garbage now; nothing is given back yet.
    expect(space.reclaimableBytes).toBeGreaterThanOrEqual(before + 400 * 1032);
    expect(space.bytesReclaimed).toBe(0);
    // The collector rolls the mostly-garbage active segment and a checkpoint deletes it: the bytes come back.
    await (store as LocalLedgerStore).collectGarbage();
    expect(space.bytesReclaimed).toBeGreaterThanOrEqual(400 * 1032);
    expect(space.reclaimableBytes).toBeLessThan(before);
    await store.close();
  });

  it('says whether the local store appends with O_DIRECT, as configured and as the file system allows', async () => {
    const dir = path.join(tempBase(), 'ledgers');
    const direct = await openLedgerStore({ dir });
    // The temp directory's file system decides; the segment file knows what it took.
    const probe = await nodeLedgerFs.open(path.join(base!, 'probe'), 'w+', { directAppend: true });
    const taken = probe.direct === true;
    await probe.close();
    expect(ledgerStoreDirectIo(direct)).toBe(taken);
    await direct.close();
    const buffered = await openLedgerStore({ dir, directIo: false });
    expect(ledgerStoreDirectIo(buffered)).toBe(false);
    await buffered.close();
    const memory = await openLedgerStore({ store: 'memory', dir: '/ledgers' });
    expect(ledgerStoreDirectIo(memory)).toBe(false);
    await memory.close();
    expect(ledgerStoreDirectIo({} as LedgerStore)).toBeNull();
  });

  it('declares ledgerline.storage.direct.io, a read-only boolean on by default', () => {
    expect(BROKER_CONFIG_BY_NAME.get('ledgerline.storage.direct.io')).toMatchObject({ type: 'BOOLEAN', default: 'true', readOnly: true });
    expect(validateConfigValue(BROKER_CONFIG_BY_NAME.get('ledgerline.storage.direct.io')!, 'maybe')).not.toBeNull();
  });

  it('gives no space accounting for a store that keeps none', () => {
    const other = { create: async () => Promise.reject(new Error('unused')) } as unknown as LedgerStore;
    expect(ledgerStoreSpace(other)).toBeNull();
  });
});

describe('ledgerline.ledger.store', () => {
  it('is declared with the factory default and accepted names, read-only, with a doc', () => {
    const def = BROKER_CONFIG_BY_NAME.get(LEDGER_STORE_CONFIG);
    expect(def).toMatchObject({ type: 'STRING', default: DEFAULT_LEDGER_STORE, oneOf: [...LEDGER_STORE_KINDS], readOnly: true });
    expect(def!.doc).toMatch(/local.*memory/);
  });

  it('is refused at configuration time with the message the factory gives', () => {
    const def = BROKER_CONFIG_BY_NAME.get(LEDGER_STORE_CONFIG)!;
    expect(validateConfigValue(def, 'rocksdb')).toBe(REFUSAL('rocksdb'));
    expect(() => loadConfig({ overrides: [[LEDGER_STORE_CONFIG, 'rocksdb']] })).toThrow(REFUSAL('rocksdb'));
    expect(loadConfig({ overrides: [[LEDGER_STORE_CONFIG, 'memory']] }).values.get(LEDGER_STORE_CONFIG)).toBe('memory');
    expect(loadConfig().values.get(LEDGER_STORE_CONFIG)).toBe('local');
  });
});
