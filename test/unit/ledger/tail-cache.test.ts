/**
 * The tail cache counts what it retains: an entry that is a small slice of a large buffer (a record batch cut
 * out of a 64 KiB socket chunk) is copied out, a large one (a batch of a produce request) is kept by reference
 * and its whole buffer charged once, so the byte budget bounds the memory the cache pins.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryLedgerStore } from '../../../src/ledger/local-store.js';
import { TailCache, type CachedLedger } from '../../../src/ledger/tail-cache.js';

const CHUNK = 64 * 1024;

/** An entry of `size` bytes at the start of its own 64 KiB "socket chunk". */
function sliceOfChunk(size: number, fill: number): Buffer {
  const chunk = Buffer.alloc(CHUNK, 0xee);
  chunk.fill(fill, 0, size);
  return chunk.subarray(0, size);
}

describe('tail cache budget', () => {
  it('holds the byte budget in retained memory when entries are slices of 64 KiB socket chunks', async () => {
    const budget = 256 * 1024;
    const store = await openMemoryLedgerStore({ cacheBytes: budget, cacheEntries: 1_000_000 });
    try {
      const w = await store.create();
      const n = 4000;
      const size = 100;
      await Promise.all(Array.from({ length: n }, (_, i) => w.append(sliceOfChunk(size, i & 0xff))));
      expect(store.stats.cachedBytes).toBeLessThanOrEqual(budget);
      expect(store.stats.cachedEntries).toBe(Math.floor(budget / size));
      const first = n - store.stats.cachedEntries;
      const hitsBefore = store.stats.cacheHits;
      const entries = await store.read(w.ledgerId, first, n - 1);
      expect(store.stats.cacheHits - hitsBefore).toBe(entries.length);
      let retained = 0;
      for (const e of entries) {
        expect(e.data.length).toBe(size);
        expect(e.data[0]).toBe(e.entryId & 0xff);
        retained += e.data.buffer.byteLength;
      }
      // Without the copy the cache would pin 2621 chunks × 64 KiB = 164 MiB for a 256 KiB budget.
      expect(retained).toBeLessThanOrEqual(budget);
    } finally {
      await store.close();
    }
  });

  it('keeps by reference the entries of one buffer committed together, and copies one that comes alone', async () => {
    const store = await openMemoryLedgerStore({ cacheBytes: 64 * 1024 * 1024 });
    try {
      const writers = await Promise.all([0, 1, 2, 3].map(() => store.create()));
      // A fetch answer a mirror copies: one 1 MiB frame, 64 batches of 16 KiB for 4 partitions, appended in one go.
      const answer = Buffer.allocUnsafeSlow(1024 * 1024);
      for (let i = 0; i < 64; i++) answer.fill(i, i * 16 * 1024, (i + 1) * 16 * 1024);
      await Promise.all(Array.from({ length: 64 }, (_, i) => writers[i % 4]!.append(answer.subarray(i * 16 * 1024, (i + 1) * 16 * 1024))));
      expect(store.stats.cachedBytes).toBe(1024 * 1024);
      for (let p = 0; p < 4; p++) {
        const entries = await store.read(writers[p]!.ledgerId, 0, 15);
        entries.forEach((e, k) => {
          expect(e.data.buffer).toBe(answer.buffer);
          expect(e.data[0]).toBe(k * 4 + p);
        });
      }
      // The same share of another frame, alone in its group: copied, so it does not pin the 1 MiB.
      const other = Buffer.alloc(1024 * 1024, 0xab);
      await writers[0]!.append(other.subarray(0, 16 * 1024));
      const [lone] = await store.read(writers[0]!.ledgerId, 16, 16);
      expect(lone!.data.buffer).not.toBe(other.buffer);
      expect(lone!.data.equals(other.subarray(0, 16 * 1024))).toBe(true);
      expect(store.stats.cachedBytes).toBe(1024 * 1024 + 16 * 1024);
      expect(store.stats.cachedBytes).toBe((store as unknown as { cache: TailCache }).cache.retainedBytes());
    } finally {
      await store.close();
    }
  });

  it('evicts oldest first across ledgers and keeps each ledger a suffix', () => {
    const stats = { cachedEntries: 0, cachedBytes: 0 };
    const cache = new TailCache(300, 100, stats);
    const a: CachedLedger = { deleted: false, cache: [], cacheHead: 0 };
    const b: CachedLedger = { deleted: false, cache: [], cacheHead: 0 };
    for (let i = 0; i < 4; i++) {
      cache.add(a, sliceOfChunk(50, i));
      cache.add(b, sliceOfChunk(50, i));
    }
    expect(stats).toEqual({ cachedEntries: 6, cachedBytes: 300 });
    expect(a.cache.length - a.cacheHead).toBe(3);
    expect(a.cache[a.cacheHead]![0]).toBe(1);
    cache.dropLedger(a);
    expect(stats).toEqual({ cachedEntries: 3, cachedBytes: 150 });
  });

  it('keeps the batches of one request by reference and charges their buffer once, until the last leaves', () => {
    const stats = { cachedEntries: 0, cachedBytes: 0 };
    const cache = new TailCache(1024 * 1024, 100, stats);
    const frame = Buffer.alloc(256 * 1024);
    const batches = [0, 1, 2, 3].map((p) => frame.subarray(64 + p * 60_000, 64 + (p + 1) * 60_000));
    const ledgers: CachedLedger[] = batches.map(() => ({ deleted: false, cache: [], cacheHead: 0 }));
    batches.forEach((b, p) => cache.add(ledgers[p]!, b));
    expect(stats).toEqual({ cachedEntries: 4, cachedBytes: 256 * 1024 });
    expect(cache.retainedBytes()).toBe(stats.cachedBytes);
    for (let p = 0; p < 4; p++) expect(ledgers[p]!.cache[0]).toBe(batches[p]);
    // A ledger dropped: its entry goes, the frame stays charged while the others keep it.
    (ledgers[1] as { deleted: boolean }).deleted = true;
    cache.dropLedger(ledgers[1]!);
    expect(stats).toEqual({ cachedEntries: 3, cachedBytes: 256 * 1024 });
    // Owned entries push the rest out, oldest first; the frame's charge goes with its last entry.
    const owned = (n: number): Buffer => Buffer.from(new Uint8Array(n).buffer);
    cache.add(ledgers[0]!, owned(800 * 1024));
    expect(stats).toEqual({ cachedEntries: 1, cachedBytes: 800 * 1024 });
    expect(cache.retainedBytes()).toBe(stats.cachedBytes);
    expect(ledgers[2]!.cache.length - ledgers[2]!.cacheHead).toBe(0);
  });

  it('copies an entry under an eighth of its buffer, and never charges less than what is retained', () => {
    const stats = { cachedEntries: 0, cachedBytes: 0 };
    const cache = new TailCache(10 * 1024 * 1024, 1_000_000, stats);
    const ledger: CachedLedger = { deleted: false, cache: [], cacheHead: 0 };
    const chunk = Buffer.alloc(64 * 1024, 1);
    const small = chunk.subarray(100, 100 + 8 * 1024 - 1);
    const large = chunk.subarray(0, 8 * 1024);
    cache.add(ledger, small);
    expect(ledger.cache[0]).not.toBe(small);
    expect(ledger.cache[0]!.buffer.byteLength).toBe(small.length);
    cache.add(ledger, large);
    expect(ledger.cache[1]).toBe(large);
    // A third slice of the chunk already charged is kept by reference, whatever its size.
    const tiny = chunk.subarray(20_000, 20_010);
    cache.add(ledger, tiny);
    expect(ledger.cache[2]).toBe(tiny);
    expect(stats).toEqual({ cachedEntries: 3, cachedBytes: small.length + 64 * 1024 });
    expect(cache.retainedBytes()).toBe(stats.cachedBytes);
  });
});
