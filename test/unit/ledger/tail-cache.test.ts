/**
 * The tail cache counts what it retains: entries that arrive as slices of large buffers (a record batch cut
 * out of a 64 KiB socket chunk) are copied out, so the byte budget bounds the memory the cache pins.
 */
import { describe, expect, it } from 'vitest';
import { openMemoryLedgerStore } from '../../../src/ledger/local-store.js';
import { TailCache, ownedCopy, type CachedLedger } from '../../../src/ledger/tail-cache.js';

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

  it('keeps an entry that owns its memory by reference and copies a slice into memory of its own', () => {
    const owned = Buffer.from(new Uint8Array(10).fill(7).buffer);
    expect(ownedCopy(owned)).toBe(owned);
    const slice = sliceOfChunk(10, 9);
    const copy = ownedCopy(slice);
    expect(copy).not.toBe(slice);
    expect(copy.equals(slice)).toBe(true);
    expect(copy.buffer.byteLength).toBe(10);
    // A pooled small Buffer (Buffer.from / allocUnsafe share an 8 KiB slab) is a slice too.
    const pooled = Buffer.from('hello');
    expect(ownedCopy(pooled).buffer.byteLength).toBe(5);
  });

  it('evicts oldest first across ledgers and keeps each ledger a suffix', () => {
    const stats = { cachedEntries: 0, cachedBytes: 0 };
    const cache = new TailCache(300, 100, stats);
    const a: CachedLedger = { deleted: false, cache: [], cacheHead: 0, cacheBytes: 0 };
    const b: CachedLedger = { deleted: false, cache: [], cacheHead: 0, cacheBytes: 0 };
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
});
