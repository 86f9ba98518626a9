/**
 * src/ledger/read-ahead.ts: what a reader takes, what stays for the next one, the byte budget and what it
 * evicts, and failed or unfinished reads. The reads are scripted here; read-ahead through a real store's
 * segment files is in contract.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ReadAhead, type ReadAheadStats } from '../../../src/ledger/read-ahead.js';
import type { Ledger } from '../../../src/ledger/store-state.js';
import type { LedgerEntry } from '../../../src/ledger/types.js';

/** A ledger as the read-ahead sees it: entries of `entryBytes` each. */
function ledger(entryBytes = 100): Ledger {
  return { deleted: false, index: { lengthOf: () => entryBytes } } as unknown as Ledger;
}

/** Reads that complete when told to: `reads` lists them in the order they were asked for. */
function scripted() {
  const reads: { ledger: Ledger; from: number; to: number; finish(ok?: boolean): void }[] = [];
  const readEntries = (l: Ledger, from: number, to: number, out: LedgerEntry[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      reads.push({
        ledger: l,
        from,
        to,
        finish(ok = true) {
          if (!ok) return reject(new Error('EIO'));
          for (let id = from; id < to; id++) out[id - from] = { entryId: id, data: Buffer.alloc(l.index.lengthOf(id), id % 256) };
          resolve();
        },
      });
    });
  return { reads, readEntries };
}

function setup(budget = 1000, maxBytes = 500, staleMs = 1000) {
  const { reads, readEntries } = scripted();
  const stats: ReadAheadStats = { readAheadEntries: 0, readAheadHits: 0 };
  let clock = 0;
  const ra = new ReadAhead(budget, maxBytes, readEntries, stats, staleMs, () => clock);
  return { ra, reads, stats, advance: (ms: number) => (clock += ms) };
}

const ids = (entries: LedgerEntry[]): number[] => entries.map((e) => e.entryId);

describe('read-ahead', () => {
  it('gives a reader that starts where it starts the entries read, waiting for the read, and leaves the rest', async () => {
    const { ra, reads, stats } = setup();
    const l = ledger();
    ra.start(l, 10, 100, 400);
    expect(reads.map((r) => [r.from, r.to])).toEqual([[10, 14]]);
    expect(stats.readAheadEntries).toBe(4);
    expect(ra.bytes).toBe(400);
    expect(await ra.take(l, 11, 20)).toEqual([]); // not where it starts
    expect(await ra.take(ledger(), 10, 20)).toEqual([]); // another ledger
    const taking = ra.take(l, 10, 12);
    reads[0]!.finish();
    const first = await taking;
    expect(ids(first)).toEqual([10, 11]);
    expect(first[1]!.data.equals(Buffer.alloc(100, 11))).toBe(true);
    expect(ra.bytes).toBe(200);
    // One in place for the ledger: no second read until it is taken.
    ra.start(l, 12, 100, 400);
    expect(reads).toHaveLength(1);
    expect(ids(await ra.take(l, 12, 50))).toEqual([12, 13]);
    expect(stats.readAheadHits).toBe(4);
    expect(ra.bytes).toBe(0);
    expect(await ra.take(l, 14, 50)).toEqual([]);
  });

  it('reads at least one entry and at most maxBytes, never past the limit', () => {
    const { ra, reads } = setup(10_000, 500);
    ra.start(ledger(), 0, 100, 50); // less than one entry: one
    ra.start(ledger(), 0, 100, 5000); // capped at maxBytes: 5 entries
    ra.start(ledger(), 7, 9, 5000); // up to the limit
    ra.start(ledger(), 9, 9, 5000); // nothing to read
    expect(reads.map((r) => [r.from, r.to])).toEqual([
      [0, 1],
      [0, 5],
      [7, 9],
    ]);
  });

  it("gives a read-ahead to one reader only when two wait for it", async () => {
    const { ra, reads } = setup();
    const l = ledger();
    ra.start(l, 0, 100, 300);
    const a = ra.take(l, 0, 10);
    const b = ra.take(l, 0, 10);
    reads[0]!.finish();
    expect([ids(await a), ids(await b)]).toEqual([[0, 1, 2], []]);
  });

  it('forgets a read that failed: its reader reads for itself, and its bytes are free again', async () => {
    const { ra, reads } = setup(300);
    const l = ledger();
    ra.start(l, 0, 100, 300);
    const taking = ra.take(l, 0, 10);
    reads[0]!.finish(false);
    expect(await taking).toEqual([]);
    expect(ra.bytes).toBe(0);
    ra.start(l, 0, 100, 300);
    expect(reads).toHaveLength(2);
  });

  it('keeps within its budget, evicting only what is stale, deleted or no longer read', async () => {
    const { ra, reads, advance } = setup(1000, 500, 1000);
    const a = ledger();
    const b = ledger();
    const c = ledger();
    ra.start(a, 0, 100, 500);
    ra.start(b, 0, 100, 500);
    reads.forEach((r) => r.finish());
    await Promise.resolve();
    // Full, and nothing stale: a third reader gets none rather than evict what the others will take.
    ra.start(c, 0, 100, 500);
    expect(reads).toHaveLength(2);
    expect(ra.bytes).toBe(1000);
    // Once a's reader has not come back for staleMs, its read-ahead makes room; b's, taken from meanwhile, stays.
    advance(600);
    expect(ids(await ra.take(b, 0, 2))).toEqual([0, 1]);
    advance(600);
    ra.start(c, 0, 100, 500);
    expect(reads.map((r) => r.ledger)).toEqual([a, b, c]);
    expect(await ra.take(a, 0, 10)).toEqual([]);
    expect(ids(await ra.take(b, 2, 3))).toEqual([2]);
    expect(ra.bytes).toBe(700); // b's [3, 5) and c's [0, 5)
    // A deleted ledger's goes whatever its age; one being read is never evicted.
    (c as { deleted: boolean }).deleted = true;
    const d = ledger();
    ra.start(d, 0, 100, 500); // c's is still being read, b's is fresh
    expect(reads).toHaveLength(3);
    reads[2]!.finish();
    await Promise.resolve();
    await Promise.resolve();
    ra.start(d, 0, 100, 500);
    expect(reads.map((r) => r.ledger)).toEqual([a, b, c, d]);
    expect(ra.bytes).toBe(700); // b's [3, 5) and d's [0, 5)
    expect(ids(await ra.take(b, 3, 10))).toEqual([3, 4]);
    // A deleted ledger gets none.
    ra.start(c, 5, 100, 100);
    expect(reads).toHaveLength(4);
    expect(ra.bytes).toBe(500);
    // Nor does a read-ahead larger than the whole budget.
    const small = setup(300, 1000);
    small.ra.start(ledger(), 0, 100, 400);
    expect(small.reads).toHaveLength(0);
  });

  it('waits for the reads under way when it closes, then holds nothing', async () => {
    const { ra, reads } = setup();
    const l = ledger();
    ra.start(l, 0, 100, 300);
    let closed = false;
    const closing = ra.close().then(() => (closed = true));
    await Promise.resolve();
    expect(closed).toBe(false);
    reads[0]!.finish();
    await closing;
    expect(ra.bytes).toBe(0);
    expect(await ra.take(l, 0, 10)).toEqual([]);
  });
});
