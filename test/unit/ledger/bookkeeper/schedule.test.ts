/** RoundRobinDistributionSchedule: write sets and the coverage check recovery relies on. */
import { describe, expect, it } from 'vitest';
import { covered, inWriteSet, writeSet } from '../../../../src/ledger/bookkeeper/schedule.js';

describe('bookkeeper round-robin distribution schedule', () => {
  it('stripes entries over the ensemble: entry e goes to bookies e, e+1, … mod E', () => {
    expect(writeSet(0, 3, 3)).toEqual([0, 1, 2]);
    expect(writeSet(1, 3, 3)).toEqual([1, 2, 0]);
    expect(writeSet(4, 5, 2)).toEqual([4, 0]);
    expect(writeSet(7, 5, 3)).toEqual([2, 3, 4]);
    for (let e = 0; e < 20; e++) for (let i = 0; i < 5; i++) expect(inWriteSet(e, i, 5, 3)).toBe(writeSet(e, 5, 3).includes(i));
  });

  it('is covered only when every write set has Qw - Qa + 1 bookies that answered', () => {
    // E3 Qw3 Qa2: two answers suffice, one does not.
    expect(covered([true, true, false], 3, 3, 2)).toBe(true);
    expect(covered([true, false, false], 3, 3, 2)).toBe(false);
    // E3 Qw2 Qa2: one answer in every pair of adjacent bookies.
    expect(covered([true, false, true], 3, 2, 2)).toBe(true);
    expect(covered([true, false, false], 3, 2, 2)).toBe(false);
    // E5 Qw3 Qa2 (Pulsar's striping): bookies 0, 1 answering leave the write set {2, 3, 4} unknown.
    expect(covered([true, true, false, false, false], 5, 3, 2)).toBe(false);
    expect(covered([true, false, true, false, true], 5, 3, 2)).toBe(false);
    expect(covered([true, true, false, true, true], 5, 3, 2)).toBe(true);
    // Qw = Qa: any single answer in each write set.
    expect(covered([false, true, false], 3, 3, 3)).toBe(true);
  });
});
