import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeltaColumn, IndexedLedger, PartitionIndex } from '../../../src/log/offset-index.js';

interface ModelBatch {
  ledger: number;
  entry: number;
  base: number;
  last: number;
  maxTs: number;
}

/** Builds an index and the flat list of batches it should hold from ledgers of [gapBefore, records, ts]. */
function build(ledgers: Array<Array<[number, number, number]>>, ledgerGaps: number[]): { index: PartitionIndex; model: ModelBatch[] } {
  const index = new PartitionIndex();
  const model: ModelBatch[] = [];
  let next = 0;
  ledgers.forEach((batches, li) => {
    const start = next + (ledgerGaps[li] ?? 0);
    const ledger = new IndexedLedger(li + 1, start, 0, 0);
    next = start;
    batches.forEach(([gap, records, ts], entry) => {
      const base = next + gap;
      const last = base + records - 1;
      ledger.push(last, ts, 100);
      model.push({ ledger: li + 1, entry, base, last, maxTs: ts });
      next = last + 1;
    });
    index.add(ledger);
    index.sealLast(1);
  });
  return { index, model };
}

const batchArb = fc.tuple(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 })), fc.integer({ min: 1, max: 5 }), fc.integer({ min: -1, max: 1000 }));
const ledgersArb = fc.array(fc.array(batchArb, { maxLength: 80 }), { minLength: 1, maxLength: 10 });

describe('DeltaColumn', () => {
  it('stores int32 deltas and switches to float64 when a value does not fit, keeping every value exact', () => {
    const col = new DeltaColumn(1_000_000);
    const values = [1_000_000, 1_000_001, 1_000_000 + 0x7fffffff, 2 ** 52, -5, 1_700_000_000_000];
    values.forEach((v) => col.push(v));
    expect(values.map((_, i) => col.get(i))).toEqual(values);
    col.trim();
    expect(col.byteLength).toBe(values.length * 8);
  });

  it('takes its base from the first value when none is given', () => {
    const col = new DeltaColumn();
    for (let i = 0; i < 1000; i++) col.push(1_700_000_000_000 + i * 3);
    expect(col.get(999)).toBe(1_700_000_000_000 + 2997);
    col.trim();
    expect(col.byteLength).toBe(4000);
  });
});

describe('PartitionIndex', () => {
  it('maps every offset to the batch holding it, or the next batch after a gap (property)', () => {
    fc.assert(
      fc.property(ledgersArb, fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 12 }), (ledgers, gaps) => {
        const { index, model } = build(ledgers, gaps);
        const end = model.length ? model[model.length - 1]!.last + 3 : 5;
        for (let offset = 0; offset < end; offset++) {
          const want = model.find((b) => b.last >= offset);
          const got = index.lookup(offset);
          if (!want) expect(got).toBeNull();
          else expect(got && [got.ledger.ledgerId, got.entryId]).toEqual([want.ledger, want.entry]);
        }
        expect(index.batchCount).toBe(model.length);
      }),
      { numRuns: 60 },
    );
  });

  it('finds the first batch at or after a start offset whose maxTimestamp reaches a target (property)', () => {
    fc.assert(
      fc.property(ledgersArb, fc.integer({ min: -2, max: 1002 }), fc.integer({ min: 0, max: 400 }), (ledgers, ts, from) => {
        const { index, model } = build(ledgers, []);
        const startAt = model.findIndex((b) => b.last >= from);
        const want = startAt < 0 ? undefined : model.slice(startAt).find((b) => b.maxTs >= ts);
        const got = index.findByTimestamp(ts, from);
        if (!want) expect(got).toBeNull();
        else expect(got && [got.ledger.ledgerId, got.entryId]).toEqual([want.ledger, want.entry]);
      }),
      { numRuns: 100 },
    );
  });

  it('finds the first batch carrying the largest timestamp (property)', () => {
    fc.assert(
      fc.property(ledgersArb, (ledgers) => {
        const { index, model } = build(ledgers, []);
        const got = index.findMaxTimestamp();
        if (model.length === 0) {
          expect(got).toBeNull();
          return;
        }
        const max = Math.max(...model.map((b) => b.maxTs));
        const want = model.find((b) => b.maxTs === max)!;
        expect(got && [got.ledger.ledgerId, got.entryId]).toEqual([want.ledger, want.entry]);
      }),
      { numRuns: 100 },
    );
  });

  it('skips empty ledgers and walks to the next batch across ledgers', () => {
    const { index } = build([[[0, 2, 1]], [], [[5, 1, 2]]], [0, 0, 0]);
    const first = index.lookup(0)!;
    const next = index.next(first)!;
    expect([next.ledger.ledgerId, next.entryId, next.ledger.lastOffsetAt(0)]).toEqual([3, 0, 7]);
    expect(index.next(next)).toBeNull();
  });

  it('keeps totals right when ledgers are removed from the front or the open one is replaced', () => {
    const { index } = build(
      [
        [
          [0, 2, 1],
          [0, 2, 1],
        ],
        [[0, 1, 1]],
      ],
      [],
    );
    const open = new IndexedLedger(9, 5, 1, 0);
    index.add(open);
    open.push(6, 3, 50);
    expect([index.batchCount, index.sizeInBytes]).toEqual([4, 350]);
    index.removeFirst(1);
    expect([index.batchCount, index.sizeInBytes, index.first!.ledgerId]).toEqual([2, 150, 2]);
    expect(index.lookup(0)!.ledger.ledgerId).toBe(2);
    expect(index.removeLast()!.ledgerId).toBe(9);
    expect(() => index.add(new IndexedLedger(10, 4, 1, 0))).toThrow(/starts at 4/);
  });

  it('looks up one offset among 10^6 batches in 100 ledgers in microseconds', () => {
    const index = new PartitionIndex();
    for (let l = 0; l < 100; l++) {
      const ledger = new IndexedLedger(l + 1, l * 10_000 * 3, 0, 0, 10_000);
      for (let e = 0; e < 10_000; e++) ledger.push(ledger.startOffset + e * 3 + 2, 1_700_000_000_000 + l * 10_000 + e, 1000);
      index.add(ledger);
      index.sealLast(0);
    }
    expect(index.memoryBytes).toBeLessThan(10_000_000);
    let x = 0;
    const n = 100_000;
    const started = performance.now();
    for (let i = 0; i < n; i++) {
      const pos = index.lookup((i * 7919) % 3_000_000)!;
      x += pos.entryId;
    }
    const perLookupUs = ((performance.now() - started) * 1000) / n;
    expect(x).toBeGreaterThan(0);
    expect(perLookupUs).toBeLessThan(10);
  });
});
