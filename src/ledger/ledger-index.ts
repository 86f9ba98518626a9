/**
 * Where each entry of one ledger lives on disk: the segment, the record's byte offset in that segment and the
 * payload length. 8 bytes per entry in paged typed arrays (no object per entry, no copying of a large array
 * as it grows), plus one run per segment the ledger spans (a ledger's entries are in segment order).
 *
 * ```
 *   entry id:   0 … 8191 │ 8192 … 16383 │ 16384 …          offsets[page][slot], lengths[page][slot]
 *   pages:      [page 0] │  [page 1]    │ [page 2, grows]  (8192 entries = 64 KiB per full page pair)
 *   runs:       (firstEntryId 0, segment 1) (firstEntryId 5120, segment 2) …
 * ```
 *
 * A partition ledger of 10^7 entries costs 80 MB here; the store never holds entry bytes outside its
 * bounded tail cache.
 *
 * Entries are appended in segment order, but compaction moves entries of old segments into the active one
 * (`relocate`), so runs may name any segment in any order, and one segment may hold several runs of a ledger.
 */
const PAGE_BITS = 13;
const PAGE_SIZE = 1 << PAGE_BITS;
const PAGE_MASK = PAGE_SIZE - 1;
const FIRST_PAGE_CAPACITY = 16;

export class LedgerIndex {
  private readonly offsetPages: Uint32Array[] = [];
  private readonly lengthPages: Uint32Array[] = [];
  private count = 0;
  /** Run k covers entries runStarts[k] .. runStarts[k+1]-1, all in segment runSegments[k]. */
  private readonly runStarts: number[] = [];
  private readonly runSegments: number[] = [];

  /** Number of entries indexed (entry ids 0..size-1). */
  get size(): number {
    return this.count;
  }

  push(segmentSeq: number, offset: number, length: number): void {
    const i = this.count;
    const page = i >>> PAGE_BITS;
    const slot = i & PAGE_MASK;
    if (page === this.offsetPages.length) {
      const capacity = page === 0 ? FIRST_PAGE_CAPACITY : PAGE_SIZE;
      this.offsetPages.push(new Uint32Array(capacity));
      this.lengthPages.push(new Uint32Array(capacity));
    } else if (slot === this.offsetPages[page]!.length) {
      // Only the first page grows (small ledgers stay small); later pages are allocated full.
      const capacity = Math.min(PAGE_SIZE, slot * 2);
      const offsets = new Uint32Array(capacity);
      offsets.set(this.offsetPages[page]!);
      const lengths = new Uint32Array(capacity);
      lengths.set(this.lengthPages[page]!);
      this.offsetPages[page] = offsets;
      this.lengthPages[page] = lengths;
    }
    this.offsetPages[page]![slot] = offset;
    this.lengthPages[page]![slot] = length;
    if (this.runSegments.length === 0 || this.runSegments[this.runSegments.length - 1] !== segmentSeq) {
      this.runStarts.push(i);
      this.runSegments.push(segmentSeq);
    }
    this.count = i + 1;
  }

  /**
   * Points entry `entryId` at a copy of its record in another segment (compaction). Runs are split and
   * merged so they stay maximal; relocating a run's entries in ascending order costs O(log runs) each.
   */
  relocate(entryId: number, segmentSeq: number, offset: number): void {
    if (entryId < 0 || entryId >= this.count) throw new RangeError(`entry ${entryId} is not indexed`);
    this.offsetPages[entryId >>> PAGE_BITS]![entryId & PAGE_MASK] = offset;
    const r = this.runOf(entryId);
    if (this.runSegments[r] === segmentSeq) return;
    const start = this.runStarts[r]!;
    const end = r + 1 < this.runStarts.length ? this.runStarts[r + 1]! : this.count;
    if (entryId === start && r > 0 && this.runSegments[r - 1] === segmentSeq) {
      // Extend the previous run by one (the common case: a run relocated in ascending order).
      if (end - start === 1) {
        this.runStarts.splice(r, 1);
        this.runSegments.splice(r, 1);
        this.mergeAt(r - 1);
      } else {
        this.runStarts[r] = start + 1;
      }
      return;
    }
    // Split run r into [start, entryId) [entryId] [entryId+1, end), dropping empty parts.
    const starts: number[] = [];
    const segs: number[] = [];
    const old = this.runSegments[r]!;
    if (entryId > start) {
      starts.push(start);
      segs.push(old);
    }
    starts.push(entryId);
    segs.push(segmentSeq);
    if (entryId + 1 < end) {
      starts.push(entryId + 1);
      segs.push(old);
    }
    this.runStarts.splice(r, 1, ...starts);
    this.runSegments.splice(r, 1, ...segs);
    const at = entryId > start ? r + 1 : r;
    this.mergeAt(at);
    if (at > 0) this.mergeAt(at - 1);
  }

  /** Merges run k with run k+1 when they name the same segment. */
  private mergeAt(k: number): void {
    if (k < 0 || k + 1 >= this.runSegments.length) return;
    if (this.runSegments[k] !== this.runSegments[k + 1]) return;
    this.runStarts.splice(k + 1, 1);
    this.runSegments.splice(k + 1, 1);
  }

  offsetOf(entryId: number): number {
    return this.offsetPages[entryId >>> PAGE_BITS]![entryId & PAGE_MASK]!;
  }

  lengthOf(entryId: number): number {
    return this.lengthPages[entryId >>> PAGE_BITS]![entryId & PAGE_MASK]!;
  }

  /** Index of the run holding `entryId` (binary search over runs). */
  private runOf(entryId: number): number {
    let lo = 0;
    let hi = this.runStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.runStarts[mid]! <= entryId) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  segmentOf(entryId: number): number {
    return this.runSegments[this.runOf(entryId)]!;
  }

  /** Last entry id (exclusive bound) that is in the same segment as `entryId`. */
  segmentRunEnd(entryId: number): number {
    const run = this.runOf(entryId);
    return run + 1 < this.runStarts.length ? this.runStarts[run + 1]! : this.count;
  }

  /** The segments this ledger has entries in, with the entry range in each. */
  *segmentRuns(): IterableIterator<{ segmentSeq: number; firstEntryId: number; count: number }> {
    for (let k = 0; k < this.runStarts.length; k++) {
      const first = this.runStarts[k]!;
      const end = k + 1 < this.runStarts.length ? this.runStarts[k + 1]! : this.count;
      yield { segmentSeq: this.runSegments[k]!, firstEntryId: first, count: end - first };
    }
  }

  /** Bytes of typed-array memory held (for tests and metrics). */
  memoryBytes(): number {
    let n = 0;
    for (const p of this.offsetPages) n += p.byteLength;
    for (const p of this.lengthPages) n += p.byteLength;
    return n;
  }
}
