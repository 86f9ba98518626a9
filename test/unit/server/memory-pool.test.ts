import { describe, expect, it } from 'vitest';
import { MemoryPool } from '../../../src/server/memory-pool.js';

const MiB = 1024 * 1024;

describe('MemoryPool', () => {
  it('grants while requests fit, queues the rest, and grants them in order as memory is released', () => {
    const pool = new MemoryPool(100 * MiB, { reserve: 0 });
    expect(pool.tryAllocate(60 * MiB)).toBe(true);
    expect(pool.tryAllocate(30 * MiB)).toBe(true);
    expect(pool.tryAllocate(20 * MiB)).toBe(false);
    const granted: string[] = [];
    pool.wait(20 * MiB, () => granted.push('a'));
    // A later request of the same class waits behind the first, even one that would fit on its own.
    expect(pool.tryAllocate(5 * MiB)).toBe(false);
    pool.wait(5 * MiB, () => granted.push('b'));
    expect(pool.waiting).toBe(2);
    pool.release(30 * MiB);
    expect(granted).toEqual(['a', 'b']);
    expect(pool.used).toBe(85 * MiB);
    expect(pool.available).toBe(15 * MiB);
    pool.release(60 * MiB);
    pool.release(25 * MiB);
    expect(pool.used).toBe(0);
  });

  it('keeps its reserve for small requests, so large half-read frames cannot starve them', () => {
    const pool = new MemoryPool(100 * MiB, { reserve: 20 * MiB, smallRequestBytes: MiB });
    expect(pool.tryAllocate(40 * MiB)).toBe(true);
    expect(pool.tryAllocate(40 * MiB)).toBe(true);
    // 80 used: a large one would eat into the reserve.
    expect(pool.tryAllocate(2 * MiB)).toBe(false);
    let large = false;
    pool.wait(2 * MiB, () => (large = true));
    // Small requests still get memory, past a waiting large one, up to the capacity.
    for (let i = 0; i < 20; i++) expect(pool.tryAllocate(MiB)).toBe(true);
    expect(pool.tryAllocate(1)).toBe(false);
    expect(large).toBe(false);
    pool.release(40 * MiB);
    expect(large).toBe(true);
  });

  it('grants a request larger than the pool when nothing else holds memory, rather than never', () => {
    const pool = new MemoryPool(10 * MiB, { reserve: 0 });
    expect(pool.tryAllocate(MiB)).toBe(true);
    expect(pool.tryAllocate(50 * MiB)).toBe(false);
    let granted = false;
    pool.wait(50 * MiB, () => (granted = true));
    pool.release(MiB);
    expect(granted).toBe(true);
    expect(pool.used).toBe(50 * MiB);
    expect(pool.available).toBe(0);
  });

  it('forgets a withdrawn request and grants the one behind it', () => {
    const pool = new MemoryPool(10 * MiB, { reserve: 0 });
    expect(pool.tryAllocate(8 * MiB)).toBe(true);
    const grants: string[] = [];
    const cancelA = pool.wait(5 * MiB, () => grants.push('a'));
    pool.wait(2 * MiB, () => grants.push('b'));
    // a's connection closes: b fits in what is left and is granted at once.
    cancelA();
    expect(grants).toEqual(['b']);
    cancelA();
    pool.release(8 * MiB);
    expect(grants).toEqual(['b']);
    expect(pool.used).toBe(2 * MiB);
  });

  it('counts without bounding when unbounded', () => {
    const pool = new MemoryPool(Infinity, { reserve: 64 * MiB });
    expect(pool.tryAllocate(2 ** 40)).toBe(true);
    expect(pool.available).toBe(Infinity);
    expect(pool.used).toBe(2 ** 40);
  });

  it('refuses to release more than it granted', () => {
    const pool = new MemoryPool(MiB);
    expect(() => pool.release(1)).toThrow(/released more/);
  });
});
