/**
 * BookKeeper's RoundRobinDistributionSchedule: which bookies of an ensemble of size E store entry e (its write
 * set: the Qw bookies at indexes e, e+1, … mod E) and when a set of bookies that answered "covers" the ledger's
 * tail (enough that no entry can have reached an ack quorum without one of them seeing it).
 */

/** Indexes into the ensemble of the bookies that store `entryId`, in the order BookKeeper tries them. */
export function writeSet(entryId: number, ensembleSize: number, writeQuorum: number): number[] {
  const out = new Array<number>(writeQuorum);
  const base = entryId % ensembleSize;
  for (let i = 0; i < writeQuorum; i++) out[i] = (base + i) % ensembleSize;
  return out;
}

/** Whether the bookie at `index` is in the write set of `entryId`. */
export function inWriteSet(entryId: number, index: number, ensembleSize: number, writeQuorum: number): boolean {
  const d = (index - (entryId % ensembleSize) + ensembleSize) % ensembleSize;
  return d < writeQuorum;
}

/**
 * RoundRobinDistributionSchedule's coverage check (ReadLastConfirmedOp, recovery): `answered[i]` is true when
 * bookie i answered (with an entry or with "no such ledger/entry"). Covered when every possible write set
 * has at least Qw - Qa + 1 bookies that answered: then any entry acknowledged to a writer (Qa acks inside its
 * write set) was seen by at least one of them.
 */
export function covered(answered: readonly boolean[], ensembleSize: number, writeQuorum: number, ackQuorum: number): boolean {
  const need = writeQuorum - ackQuorum + 1;
  for (let start = 0; start < ensembleSize; start++) {
    let n = 0;
    for (let i = 0; i < writeQuorum; i++) if (answered[(start + i) % ensembleSize]) n++;
    if (n < need) return false;
  }
  return true;
}
