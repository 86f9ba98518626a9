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
