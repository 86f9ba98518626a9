/**
 * The bounded offset map of active-active topics: how a consumer group's committed offset on another cluster of
 * the mesh becomes an offset here that loses nothing and re-reads at most what had not been copied yet.
 *
 * A group that read partition p of cluster R up to offset X has read:
 *   - R's own records before X;
 *   - the records R copied from every other cluster O before X: O's own records up to the highest
 *     `ledgerline.origin.offset` from O that R's log holds before X (o*);
 * so here it must resume at the first of:
 *   - the first record copied from R whose origin offset is at least X            (placement[R])
 *   - the first record copied from O whose origin offset is past o*, for each O    (placement[O])
 *   - this cluster's own record o* + 1, if O is this cluster                       (o* itself)
 *
 * Two kinds of samples, kept by the replicators as they copy, each list bounded (oldest dropped first):
 *   seen[R]       (offset on R, highest origin offset per cluster R's log held before it): from reading R
 *   placement[O]  (first and last origin offset of a copied batch, its offset here): from appending copies
 * A lookup between samples takes the one before: a smaller o*, an earlier placement, so more is re-read and
 * nothing is skipped. A commit inside a batch of copies is exact all the same: the batch's sample carries its run
 * (origin.ts's CopyRun), whose origin offsets follow its offsets; and a copy read in part here resumes at its first
 * unread record. When the samples do not reach back far enough the answer is null and the group is not
 * translated (its consumers start by their auto.offset.reset). The map lives in memory: after a restart it fills
 * again as records are copied.
 */

import type { CopyRun } from './origin.js';

/** Samples kept per list. */
export const MAX_SAMPLES = 512;

interface SeenSample {
  /** Offset on the remote: everything before it was read. */
  readonly offset: number;
  readonly maxOrigin: ReadonlyMap<string, number>;
  /** The batch that ends at `offset`, when it is a run of copies from one cluster (origin.ts's CopyRun). */
  readonly run: CopyRun | null;
}

interface Placement {
  readonly firstOrigin: number;
  readonly lastOrigin: number;
  readonly localOffset: number;
  /** Offsets the copy takes here (its records: a copy's offsets are contiguous). */
  readonly count: number;
}

class PartitionMap {
  readonly seen = new Map<string, SeenSample[]>();
  readonly placement = new Map<string, Placement[]>();
}

function pushBounded<T>(list: T[], item: T): void {
  list.push(item);
  if (list.length > MAX_SAMPLES) list.splice(0, list.length - MAX_SAMPLES);
}

export class ActiveOffsetMap {
  private readonly partitions = new Map<string, PartitionMap>();

  constructor(
    /** This cluster's id: records copied from here to the remote carry it. */
    private readonly localCluster: string,
  ) {}

  private of(topic: string, partition: number): PartitionMap {
    const key = `${topic}\0${partition}`;
    let m = this.partitions.get(key);
    if (!m) this.partitions.set(key, (m = new PartitionMap()));
    return m;
  }

  /** The replicator read remote `cluster`'s partition up to `offset`; its log held these highest origin offsets before it. */
  recordSeen(topic: string, partition: number, cluster: string, offset: number, maxOrigin: ReadonlyMap<string, number>, run: CopyRun | null = null): void {
    const m = this.of(topic, partition);
    let list = m.seen.get(cluster);
    if (!list) m.seen.set(cluster, (list = []));
    const last = list[list.length - 1];
    if (last && last.offset >= offset) return;
    pushBounded(list, { offset, maxOrigin: new Map(maxOrigin), run });
  }

  /** A batch copied from `cluster` (origin offsets first..last) was appended here at `localOffset`. */
  recordPlacement(topic: string, partition: number, cluster: string, firstOrigin: number, lastOrigin: number, localOffset: number, count: number): void {
    const m = this.of(topic, partition);
    let list = m.placement.get(cluster);
    if (!list) m.placement.set(cluster, (list = []));
    pushBounded(list, { firstOrigin, lastOrigin, localOffset, count });
  }

  /** The topic was deleted: its samples go. */
  forgetTopic(topic: string): void {
    for (const key of [...this.partitions.keys()]) if (key.startsWith(`${topic}\0`)) this.partitions.delete(key);
  }

  /**
   * The offset here for a group that committed `offset` on remote `cluster`, or null when the samples cannot
   * tell. `logEnd` is this partition's log end offset: what was copied after the last placement starts there.
   */
  translate(topic: string, partition: number, cluster: string, offset: number, logEnd: number): number | null {
    const m = this.partitions.get(`${topic}\0${partition}`);
    if (!m) return null;
    const seenList = m.seen.get(cluster) ?? [];
    // The newest sample at or before the committed offset.
    let at = -1;
    for (let i = seenList.length - 1; i >= 0; i--) {
      if (seenList[i]!.offset <= offset) {
        at = i;
        break;
      }
    }
    const seen = at >= 0 ? withinRun(seenList[at]!, seenList[at + 1], offset) : undefined;
    if (!seen && offset > 0) return null;
    let resume = this.firstPlacedFrom(m, cluster, offset, logEnd);
    if (resume === null) return null;
    // Origins the remote held nothing of: every record copied here from them may be unread.
    for (const origin of m.placement.keys()) {
      if (origin === cluster || seen?.maxOrigin.has(origin)) continue;
      const placed = this.firstPlacedFrom(m, origin, 0, logEnd);
      if (placed === null) return null;
      resume = Math.min(resume, placed);
    }
    for (const [origin, max] of seen?.maxOrigin ?? new Map<string, number>()) {
      if (origin === this.localCluster) {
        resume = Math.min(resume, max + 1);
        continue;
      }
      const placed = this.firstPlacedFrom(m, origin, max + 1, logEnd);
      if (placed === null) return null;
      resume = Math.min(resume, placed);
    }
    // This cluster's own records the remote had not copied when the group committed: all of them may be unread.
    if (!seen?.maxOrigin.has(this.localCluster)) return null;
    return this.skipRead(m, resume, (origin) => (origin === cluster ? offset : (seen.maxOrigin.get(origin) ?? -1) + 1));
  }

  /**
   * From `at`, steps over copies the group read whole (every origin offset below what it read of that origin), and
   * into one it read in part: the first record it has not read is where it resumes, not the first offset the
   * bounds alone allow.
   */
  private skipRead(m: PartitionMap, at: number, readBelow: (origin: string) => number): number {
    const byLocal = new Map<number, { origin: string; p: Placement }>();
    for (const [origin, list] of m.placement) for (const p of list) byLocal.set(p.localOffset, { origin, p });
    let pos = at;
    for (let step = 0; step < byLocal.size; step++) {
      const here = byLocal.get(pos);
      if (!here) break;
      const below = readBelow(here.origin);
      if (here.p.lastOrigin >= below) {
        // Read in part: a copy whose origin offsets are consecutive resumes at its first unread record.
        const consecutive = here.p.lastOrigin - here.p.firstOrigin + 1 === here.p.count;
        if (consecutive && below > here.p.firstOrigin) pos += below - here.p.firstOrigin;
        break;
      }
      pos += here.p.count;
    }
    return pos;
  }

  /** The local offset of the first record copied from `origin` with origin offset ≥ `from`; logEnd when none was copied yet. */
  private firstPlacedFrom(m: PartitionMap, origin: string, from: number, logEnd: number): number | null {
    const list = m.placement.get(origin) ?? [];
    if (list.length === 0) return from <= 0 ? 0 : null;
    if (list[0]!.firstOrigin > from) return null;
    for (const p of list) if (p.lastOrigin >= from) return p.localOffset;
    return logEnd;
  }
}

/**
 * What the remote held before `offset` when it lies inside the batch of copies that `next` ends: the sample
 * before it, plus the copies of that run before `offset` (their origin offsets follow the run's). Without this a
 * commit in the middle of a batch of copies would count none of them as read, and that batch would be re-read.
 */
function withinRun(before: SeenSample, next: SeenSample | undefined, offset: number): SeenSample {
  const run = next?.run;
  if (!run || offset <= run.base || offset >= next.offset || run.base < before.offset) return before;
  const maxOrigin = new Map(before.maxOrigin);
  const readTo = run.firstOrigin + (offset - run.base) - 1;
  if (readTo > (maxOrigin.get(run.origin) ?? -1)) maxOrigin.set(run.origin, readTo);
  return { offset, maxOrigin, run: null };
}
