import { describe, expect, it } from 'vitest';
import { ENTRY_OVERHEAD_BYTES, TailCache } from '../../../../src/ledger/bookkeeper/tail-cache.js';

/** An entry of 10 payload bytes costs this much. */
const E = 10 + ENTRY_OVERHEAD_BYTES;

const entry = (n: number, size = 10): Buffer => Buffer.alloc(size, n % 256);

describe('TailCache', () => {
  it('serves contiguous acknowledged entries and restarts a ledger whose ids jump', () => {
    const c = new TailCache(100 * E, 100 * E);
    for (let id = 0; id < 5; id++) c.add(1, id, entry(id));
    expect(c.get(1, 3)).toEqual(entry(3));
    expect(c.get(1, 5)).toBeUndefined();
    expect(c.get(2, 0)).toBeUndefined();
    expect(c.bytes).toBe(5 * E);
    // A gap (entries not seen) restarts the ledger's run at the new id: nothing stale is served.
    c.add(1, 9, entry(9));
    expect(c.get(1, 3)).toBeUndefined();
    expect(c.get(1, 9)).toEqual(entry(9));
    expect(c.bytes).toBe(E);
  });

  it('keeps each ledger within its bound and the whole within the budget, evicting the least recently added to', () => {
    const c = new TailCache(10 * E, 6 * E);
    for (let id = 0; id < 10; id++) c.add(1, id, entry(id));
    // 6 entries per ledger: 4..9.
    expect(c.get(1, 3)).toBeUndefined();
    expect(c.get(1, 4)).toEqual(entry(4));
    expect(c.bytes).toBe(6 * E);
    for (let id = 0; id < 5; id++) c.add(2, id, entry(id));
    // 11 > 10: ledger 1's oldest entry goes.
    expect(c.bytes).toBe(10 * E);
    expect(c.get(1, 4)).toBeUndefined();
    expect(c.get(1, 5)).toEqual(entry(5));
    expect(c.get(2, 0)).toEqual(entry(0));
    c.drop(1);
    expect(c.bytes).toBe(5 * E);
    expect(c.get(1, 9)).toBeUndefined();
  });

  it('stays correct across many evictions of small entries (the array is cut, not shifted)', () => {
    const e = 5 + ENTRY_OVERHEAD_BYTES;
    const c = new TailCache(1000 * e, 100 * e);
    for (let id = 0; id < 10_000; id++) c.add(7, id, entry(id, 5));
    expect(c.bytes).toBe(100 * e);
    expect(c.get(7, 9899)).toBeUndefined();
    for (const id of [9900, 9950, 9999]) expect(c.get(7, id)).toEqual(entry(id, 5));
  });

  it('bounds empty entries too', () => {
    const c = new TailCache(10 * ENTRY_OVERHEAD_BYTES, 10 * ENTRY_OVERHEAD_BYTES);
    for (let id = 0; id < 1000; id++) c.add(1, id, Buffer.alloc(0));
    expect(c.bytes).toBe(10 * ENTRY_OVERHEAD_BYTES);
    expect(c.get(1, 989)).toBeUndefined();
    expect(c.get(1, 990)).toEqual(Buffer.alloc(0));
  });

  it('caches nothing when off, and skips an entry larger than a ledger may hold', () => {
    const off = new TailCache(0);
    off.add(1, 0, entry(0));
    expect(off.get(1, 0)).toBeUndefined();
    expect(off.bytes).toBe(0);
    const c = new TailCache(10 * E, 5 * E);
    c.add(1, 0, entry(0, 5 * E));
    expect(c.get(1, 0)).toBeUndefined();
    // The next entry starts a new run at its id.
    c.add(1, 1, entry(1));
    expect(c.get(1, 1)).toEqual(entry(1));
  });

  it('charges the buffers its entries retain: slices of one packet once, a small slice of a large buffer as a copy', () => {
    const c = new TailCache(1024 * 1024, 1024 * 1024);
    const pool = Buffer.alloc(8192, 3);
    // Four 2 KiB entries from one 8 KiB slab (as Buffer.concat makes small packets): the slab is charged once.
    for (let id = 0; id < 4; id++) c.add(1, id, pool.subarray(id * 2048, (id + 1) * 2048));
    expect(c.bytes).toBe(8192 + 4 * ENTRY_OVERHEAD_BYTES);
    expect(c.get(1, 2)!.buffer).toBe(pool.buffer);
    // 100 bytes of a 64 KiB buffer are copied out rather than pin the 64 KiB.
    const big = Buffer.alloc(64 * 1024, 4);
    c.add(2, 0, big.subarray(0, 100));
    expect(c.get(2, 0)!.buffer).not.toBe(big.buffer);
    expect(c.get(2, 0)).toEqual(big.subarray(0, 100));
    expect(c.bytes).toBe(8192 + 100 + 5 * ENTRY_OVERHEAD_BYTES);
    expect(c.recount()).toBe(c.bytes);
    c.drop(1);
    expect(c.bytes).toBe(100 + ENTRY_OVERHEAD_BYTES);
    c.drop(2);
    expect(c.bytes).toBe(0);
  });

  it('holds its budget in retained memory under any mix of entries, evictions and drops', () => {
    const budget = 256 * 1024;
    const c = new TailCache(budget, 64 * 1024);
    let seed = 7;
    const rand = (n: number): number => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
    const next = new Map<number, number>();
    let frame = Buffer.alloc(0);
    let at = 0;
    for (let i = 0; i < 20_000; i++) {
      const size = rand(3) === 0 ? rand(20_000) : rand(300);
      if (at + size > frame.length) {
        frame = Buffer.alloc(rand(4) === 0 ? 1024 * 1024 : 64 * 1024);
        at = 0;
      }
      const ledger = rand(12);
      if (rand(500) === 0) c.drop(ledger);
      const id = next.get(ledger) ?? 0;
      c.add(ledger, id, frame.subarray(at, at + size));
      next.set(ledger, id + 1);
      at += size;
      expect(c.bytes).toBeLessThanOrEqual(budget);
    }
    expect(c.recount()).toBe(c.bytes);
  });
});
