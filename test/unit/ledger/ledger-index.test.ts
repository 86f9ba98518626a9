import { describe, expect, it } from 'vitest';
import { LedgerIndex } from '../../../src/ledger/ledger-index.js';

describe('LedgerIndex', () => {
  it('finds the segment, offset and length of every entry across segments and pages', () => {
    const index = new LedgerIndex();
    const n = 50_000;
    for (let i = 0; i < n; i++) index.push(1 + Math.floor(i / 7_000), (i * 1031) % 0xffff_ffff, i % 5000);
    expect(index.size).toBe(n);
    for (const i of [0, 1, 6_999, 7_000, 8_191, 8_192, 16_383, 16_384, 49_999]) {
      expect(index.segmentOf(i)).toBe(1 + Math.floor(i / 7_000));
      expect(index.offsetOf(i)).toBe((i * 1031) % 0xffff_ffff);
      expect(index.lengthOf(i)).toBe(i % 5000);
    }
    expect(index.segmentRunEnd(6_999)).toBe(7_000);
    expect(index.segmentRunEnd(49_000)).toBe(n);
    const runs = [...index.segmentRuns()];
    expect(runs).toHaveLength(8);
    expect(runs[1]).toEqual({ segmentSeq: 2, firstEntryId: 7_000, count: 7_000 });
  });

  it('costs about 8 bytes per entry for a large ledger and stays small for a small one', () => {
    const small = new LedgerIndex();
    for (let i = 0; i < 3; i++) small.push(1, i * 100, 100);
    expect(small.memoryBytes()).toBeLessThanOrEqual(16 * 8);
    const large = new LedgerIndex();
    const n = 1_000_000;
    for (let i = 0; i < n; i++) large.push(1 + (i >> 16), i * 16, 16);
    expect(large.memoryBytes() / n).toBeLessThan(8.2);
  });
});

describe('LedgerIndex.relocate (compaction)', () => {
  it('points entries at their copies and keeps runs maximal, whatever the order', () => {
    const index = new LedgerIndex();
    for (let i = 0; i < 30; i++) index.push(1 + Math.floor(i / 10), i * 100, 10);
    // Move segment 1's run (0..9) into segment 9, in ascending order (the collector's order).
    for (let i = 0; i < 10; i++) index.relocate(i, 9, 5000 + i * 50);
    expect([...index.segmentRuns()]).toEqual([
      { segmentSeq: 9, firstEntryId: 0, count: 10 },
      { segmentSeq: 2, firstEntryId: 10, count: 10 },
      { segmentSeq: 3, firstEntryId: 20, count: 10 },
    ]);
    expect(index.segmentOf(4)).toBe(9);
    expect(index.offsetOf(4)).toBe(5200);
    expect(index.lengthOf(4)).toBe(10);
    expect(index.segmentRunEnd(0)).toBe(10);
    // A single entry in the middle of a run splits it; moving its neighbours merges the runs again.
    index.relocate(15, 9, 9000);
    expect([...index.segmentRuns()].map((r) => [r.segmentSeq, r.firstEntryId, r.count])).toEqual([
      [9, 0, 10],
      [2, 10, 5],
      [9, 15, 1],
      [2, 16, 4],
      [3, 20, 10],
    ]);
    for (const i of [10, 11, 12, 13, 14, 16, 17, 18, 19]) index.relocate(i, 9, 9000 + i);
    expect([...index.segmentRuns()].map((r) => [r.segmentSeq, r.firstEntryId, r.count])).toEqual([
      [9, 0, 20],
      [3, 20, 10],
    ]);
    for (let i = 0; i < 30; i++) expect(index.segmentOf(i)).toBe(i < 20 ? 9 : 3);
    expect(() => index.relocate(30, 9, 0)).toThrow(RangeError);
  });
});
