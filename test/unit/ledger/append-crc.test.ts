/**
 * An append that brings its entry's CRC-32C (LedgerAppendOptions.crc32c): the store derives the record's
 * checksum from it instead of reading the entry again, and the record must then be exactly the one it would
 * have computed, read back from the segments (the tail cache is off, so every read checks the checksums) and
 * after a restart (the recovery scan checks them too).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../protocol/crc32c.js';
import { LedgerCorruptError } from '../../../src/ledger/errors.js';
import { LocalLedgerStore, type LocalLedgerStoreOptions } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';

const DIR = '/data/ledgers';
const OPTIONS: LocalLedgerStoreOptions = { segmentBytes: 64 * 1024, maxEntryBytes: 16 * 1024, cacheBytes: 0 };
/** Empty, copied into the group's staging buffer (≤ 4 KiB), and written by reference (larger). */
const SIZES = [0, 1, 100, 4096, 4097, 9000, 16 * 1024];

describe('an append with its CRC-32C', () => {
  it('stores the records the store would have checksummed itself: read back, and after a restart', async () => {
    const fs = new MemoryLedgerFs();
    const payloads = SIZES.flatMap((n) => [randomBytes(n), randomBytes(n)]);
    let store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs });
    const w = await store.create();
    // Every other entry brings its CRC: the two kinds interleave within groups and across segments.
    const ids = await Promise.all(payloads.map((p, i) => (i % 2 === 0 ? w.append(p, { crc32c: crc32c(p) }) : w.append(p))));
    expect(ids).toEqual(payloads.map((_, i) => i));
    const check = async (s: LocalLedgerStore): Promise<void> => {
      const read = await s.read(w.ledgerId, 0, payloads.length - 1);
      expect(read.map((e) => e.data.equals(payloads[e.entryId]!))).toEqual(payloads.map(() => true));
    };
    await check(store);
    await w.seal();
    await store.close();
    store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs });
    try {
      await check(store);
    } finally {
      await store.close();
    }
  });

  it('takes the CRC it is given as the truth: a wrong one makes the entry read back as corrupt', async () => {
    const store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: new MemoryLedgerFs() });
    try {
      const w = await store.create();
      const payload = randomBytes(5000);
      await w.append(payload, { crc32c: crc32c(payload) ^ 1 });
      await expect(store.read(w.ledgerId, 0, 0)).rejects.toBeInstanceOf(LedgerCorruptError);
    } finally {
      await store.close();
    }
  });
});
