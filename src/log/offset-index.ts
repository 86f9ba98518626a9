/**
 * The in-memory index of a partition log: where each offset lives (ledger, entry) and when each batch was
 * written, with no object per batch.
 *
 * ```
 *   PartitionIndex.ledgers (one object per ledger, ordered by startOffset; binary search: O(log L))
 *   ┌───────────────┬───────────────┬───────────────┬─────────────┐
 *   │ ledger 7      │ ledger 9      │ ledger 12     │ ledger 15   │  ← the last one is the open ledger
 *   │ start 0       │ start 1200    │ start 2950    │ start 4100  │
 *   └──────┬────────┴───────────────┴───────────────┴─────────────┘
 *          │ per ledger, one slot per entry (entry id = slot), two typed-array columns:
 *          ▼
 *     lastOffset   [ 4,  9, 10, 19, … ]   int32 delta from startOffset (float64 if a delta does not fit)
 *     maxTimestamp [ t0, t1, t2, t3, … ]  int32 delta from the first timestamp (float64 if it does not fit)
 *     blockMax     [ max of slots 0..63, max of 64..127, … ]   float64, for time searches
 * ```
 *
 * An offset maps to the first batch whose lastOffset ≥ offset (Kafka's LogSegment.translateOffset): a read
 * inside a batch returns that whole batch, and a read in a gap (compaction, append-at-offset) returns the
 * next batch after the gap. Lookup is two binary searches, over ledgers then over one ledger's lastOffsets.
 *
 * A batch costs 8 bytes (4 + 4) when its ledger's offsets span less than 2^31 and its timestamps lie within
 * ±24 days of the ledger's first one, else 16; plus 1/8 byte for the block maxima. 10^7 batches: ~85 MB.
 */

/** Slots per block of the time index's block maxima. */
const TIME_BLOCK_BITS = 6;
const TIME_BLOCK = 1 << TIME_BLOCK_BITS;
const INITIAL_CAPACITY = 16;
const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/**
 * A growable column of integers stored as int32 deltas from a base (the first value pushed unless given),
 * switched to float64 storage the first time a value does not fit. Integers are exact up to 2^53 either way.
 */
export class DeltaColumn {
  #base: number;
  #hasBase: boolean;
  #i32: Int32Array | null;
  #f64: Float64Array | null = null;
  #length = 0;

  constructor(base?: number, capacity = INITIAL_CAPACITY) {
    this.#base = base ?? 0;
    this.#hasBase = base !== undefined;
    this.#i32 = new Int32Array(Math.max(1, capacity));
  }

  /** A column holding `values` (taken over, not copied, when they need float64 storage). */
  static of(values: Float64Array, base?: number): DeltaColumn {
    const col = new DeltaColumn(base, 1);
    const n = values.length;
    if (n === 0) return col;
    const b = base ?? values[0]!;
    col.#base = b;
    col.#hasBase = true;
    const i32 = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const delta = values[i]! - b;
      if (!(delta >= INT32_MIN && delta <= INT32_MAX)) {
        col.#i32 = null;
        col.#f64 = values;
        col.#length = n;
        return col;
      }
      i32[i] = delta;
    }
    col.#i32 = i32;
    col.#length = n;
    return col;
  }

  get length(): number {
    return this.#length;
  }

  /** Bytes of typed-array storage held (capacity, not length). */
  get byteLength(): number {
    return this.#i32 ? this.#i32.byteLength : this.#f64!.byteLength;
  }

  push(value: number): void {
    if (!this.#hasBase) {
      this.#base = value;
      this.#hasBase = true;
    }
    const i = this.#length;
    if (this.#i32) {
      const delta = value - this.#base;
      if (delta >= INT32_MIN && delta <= INT32_MAX) {
        if (i === this.#i32.length) this.#i32 = grow(this.#i32, Int32Array);
        this.#i32[i] = delta;
        this.#length = i + 1;
        return;
      }
      this.#widen();
    }
    let f = this.#f64!;
    if (i === f.length) f = this.#f64 = grow(f, Float64Array);
    f[i] = value;
    this.#length = i + 1;
  }

  get(i: number): number {
    return this.#i32 ? this.#base + this.#i32[i]! : this.#f64![i]!;
  }

  /** Releases unused capacity (called when a ledger is sealed: it will not grow again). */
  trim(): void {
    if (this.#i32 && this.#i32.length > this.#length) this.#i32 = this.#i32.slice(0, Math.max(1, this.#length));
    if (this.#f64 && this.#f64.length > this.#length) this.#f64 = this.#f64.slice(0, Math.max(1, this.#length));
  }

  #widen(): void {
    const src = this.#i32!;
    const f = new Float64Array(Math.max(src.length, 1));
    for (let j = 0; j < this.#length; j++) f[j] = this.#base + src[j]!;
    this.#f64 = f;
    this.#i32 = null;
  }
}

function grow<T extends Int32Array | Float64Array>(a: T, ctor: { new (n: number): T }): T {
  const next = new ctor(Math.max(INITIAL_CAPACITY, a.length * 2));
  next.set(a);
  return next;
}

/** What the index knows of one batch: a position and the batch's offsets and max timestamp. */
export interface BatchPosition {
  /** Position of the ledger in PartitionIndex.ledgers at the time of the lookup. */
  readonly ledgerIndex: number;
  readonly ledger: IndexedLedger;
  /** The entry id within the ledger. */
  readonly entryId: number;
}

/** The batches of one ledger, in entry-id order. */
export class IndexedLedger {
  readonly ledgerId: number;
  /**
   * Every batch of this ledger has baseOffset ≥ startOffset, and every batch of earlier ledgers has
   * lastOffset < startOffset. Equal to the first batch's baseOffset unless the ledger begins after a gap.
   */
  readonly startOffset: number;
  /** The partition leader epoch the ledger was written under. */
  readonly epoch: number;
  readonly createdAtMs: number;
  sealedAtMs: number | null = null;
  /** Ledger holding the persisted index of this ledger (index-snapshot.ts), once written; else null. */
  indexLedgerId: number | null = null;
  /** Ledger holding the producer state as of this ledger's end (producer-snapshot.ts), if any. */
  producerSnapshotLedgerId: number | null = null;

  #lastOffsets: DeltaColumn;
  #maxTimestamps = new DeltaColumn();
  #blockMax = new Float64Array(1).fill(-Infinity);
  #bytes = 0;
  #maxTimestamp = -Infinity;
  #maxTimestampEntry = -1;
  /** Offsets the ledger covers beyond its last batch (a compacted ledger whose last records were removed). */
  #coveredEnd = 0;

  constructor(ledgerId: number, startOffset: number, epoch: number, createdAtMs: number, capacity = INITIAL_CAPACITY) {
    this.ledgerId = ledgerId;
    this.startOffset = startOffset;
    this.epoch = epoch;
    this.createdAtMs = createdAtMs;
    this.#lastOffsets = new DeltaColumn(startOffset, capacity);
  }

  /**
   * A sealed ledger's index rebuilt in one pass from its columns (an index snapshot): lastOffsets must be
   * increasing and at least startOffset (the caller checks).
   */
  static restore(
    ledgerId: number,
    startOffset: number,
    epoch: number,
    createdAtMs: number,
    lastOffsets: Float64Array,
    maxTimestamps: Float64Array,
    bytes: number,
    sealedAtMs: number,
  ): IndexedLedger {
    const l = new IndexedLedger(ledgerId, startOffset, epoch, createdAtMs, 1);
    const n = lastOffsets.length;
    l.#lastOffsets = DeltaColumn.of(lastOffsets, startOffset);
    l.#maxTimestamps = DeltaColumn.of(maxTimestamps);
    const blockMax = new Float64Array(Math.max(1, Math.ceil(n / TIME_BLOCK))).fill(-Infinity);
    let max = -Infinity;
    let maxEntry = -1;
    for (let i = 0; i < n; i++) {
      const ts = maxTimestamps[i]!;
      const block = i >>> TIME_BLOCK_BITS;
      if (ts > blockMax[block]!) blockMax[block] = ts;
      if (ts > max) {
        max = ts;
        maxEntry = i;
      }
    }
    l.#blockMax = blockMax;
    l.#maxTimestamp = max;
    l.#maxTimestampEntry = maxEntry;
    l.#bytes = bytes;
    l.sealedAtMs = sealedAtMs;
    return l;
  }

  /** Batches (entries) indexed: entry ids 0 .. count-1. */
  get count(): number {
    return this.#lastOffsets.length;
  }

  /** Total bytes of the batches. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The offset after the last batch; startOffset while empty. */
  get endOffset(): number {
    const n = this.count;
    return Math.max(n === 0 ? this.startOffset : this.#lastOffsets.get(n - 1) + 1, this.#coveredEnd);
  }

  /**
   * The ledger covers offsets up to `end` (exclusive) even where it holds no batch: a ledger the log cleaner
   * wrote in place of others keeps their end offset (compaction.ts), so that what follows, and the producer
   * snapshot taken at that end, stay where they were. For a sealed ledger only.
   */
  coverEnd(end: number): void {
    if (end > this.#coveredEnd) this.#coveredEnd = end;
  }

  /** Largest batch maxTimestamp, -1 (Kafka's NO_TIMESTAMP) while empty. */
  get maxTimestamp(): number {
    return this.#maxTimestampEntry < 0 ? -1 : this.#maxTimestamp;
  }

  /** Entry id of the first batch carrying `maxTimestamp`, -1 while empty. */
  get maxTimestampEntry(): number {
    return this.#maxTimestampEntry;
  }

  get memoryBytes(): number {
    return this.#lastOffsets.byteLength + this.#maxTimestamps.byteLength + this.#blockMax.byteLength;
  }

  /** Adds the next entry. `lastOffset` must exceed every earlier one and be ≥ startOffset. */
  push(lastOffset: number, maxTimestamp: number, bytes: number): void {
    const i = this.count;
    this.#lastOffsets.push(lastOffset);
    this.#maxTimestamps.push(maxTimestamp);
    this.#bytes += bytes;
    const block = i >>> TIME_BLOCK_BITS;
    if (block >= this.#blockMax.length) {
      const next = new Float64Array(this.#blockMax.length * 2).fill(-Infinity);
      next.set(this.#blockMax);
      this.#blockMax = next;
    }
    if (maxTimestamp > this.#blockMax[block]!) this.#blockMax[block] = maxTimestamp;
    if (maxTimestamp > this.#maxTimestamp) {
      this.#maxTimestamp = maxTimestamp;
      this.#maxTimestampEntry = i;
    }
  }

  lastOffsetAt(entryId: number): number {
    return this.#lastOffsets.get(entryId);
  }

  maxTimestampAt(entryId: number): number {
    return this.#maxTimestamps.get(entryId);
  }

  /**
   * The batch's first offset as far as the index can tell: one past the previous batch's last offset (the
   * ledger's startOffset for entry 0). Equal to the batch's baseOffset when offsets are dense; after a gap
   * the batch itself says where it begins.
   */
  offsetAfterPrevious(entryId: number): number {
    return entryId === 0 ? this.startOffset : this.#lastOffsets.get(entryId - 1) + 1;
  }

  /** First entry whose lastOffset ≥ offset (binary search), or `count` if none. */
  entryForOffset(offset: number): number {
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#lastOffsets.get(mid) < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First entry ≥ fromEntry whose maxTimestamp ≥ timestamp, or -1. Skips blocks whose maximum is below it. */
  entryForTimestamp(timestamp: number, fromEntry = 0): number {
    const n = this.count;
    let i = Math.max(0, fromEntry);
    while (i < n) {
      const block = i >>> TIME_BLOCK_BITS;
      if (this.#blockMax[block]! < timestamp) {
        i = (block + 1) << TIME_BLOCK_BITS;
        continue;
      }
      const end = Math.min(n, (block + 1) << TIME_BLOCK_BITS);
      for (; i < end; i++) if (this.#maxTimestamps.get(i) >= timestamp) return i;
    }
    return -1;
  }

  /** Called once the ledger is sealed: drops spare capacity. */
  seal(sealedAtMs: number): void {
    this.sealedAtMs = sealedAtMs;
    this.#lastOffsets.trim();
    this.#maxTimestamps.trim();
    const blocks = Math.max(1, Math.ceil(this.count / TIME_BLOCK));
    if (this.#blockMax.length > blocks) this.#blockMax = this.#blockMax.slice(0, blocks);
  }
}

/** The ordered ledgers of one partition and the lookups over them. */
export class PartitionIndex {
  #ledgers: IndexedLedger[] = [];
  /**
   * Parallel to #ledgers, in typed arrays so that searches over 10^4 ledgers stay in cache: each ledger's
   * startOffset, and each sealed ledger's max timestamp (-Infinity when empty; the open ledger's is read
   * from the ledger itself since it still grows).
   */
  #starts = new Float64Array(INITIAL_CAPACITY);
  #maxima = new Float64Array(INITIAL_CAPACITY);
  #batches = 0;
  #bytes = 0;

  get ledgers(): readonly IndexedLedger[] {
    return this.#ledgers;
  }

  /** Batches indexed in every ledger (sealed ledgers' totals plus the open ledger's current count). */
  get batchCount(): number {
    let n = this.#batches;
    const last = this.#ledgers[this.#ledgers.length - 1];
    if (last && last.sealedAtMs === null) n += last.count;
    return n;
  }

  /** Bytes of every batch indexed. */
  get sizeInBytes(): number {
    let n = this.#bytes;
    const last = this.#ledgers[this.#ledgers.length - 1];
    if (last && last.sealedAtMs === null) n += last.bytes;
    return n;
  }

  get memoryBytes(): number {
    let n = 0;
    for (const l of this.#ledgers) n += l.memoryBytes;
    return n;
  }

  get first(): IndexedLedger | undefined {
    return this.#ledgers[0];
  }

  get last(): IndexedLedger | undefined {
    return this.#ledgers[this.#ledgers.length - 1];
  }

  /**
   * Appends a ledger after the current last one, which must be sealed by then (only the last ledger may be
   * open). Its startOffset must not be below the current end.
   */
  add(ledger: IndexedLedger): void {
    const last = this.last;
    if (last) {
      if (last.sealedAtMs === null) throw new Error(`index: ledger ${last.ledgerId} must be sealed before adding another`);
      if (ledger.startOffset < last.endOffset) {
        throw new Error(`index: ledger ${ledger.ledgerId} starts at ${ledger.startOffset}, before ${last.endOffset}`);
      }
    }
    const i = this.#ledgers.length;
    if (i === this.#starts.length) {
      this.#starts = grow(this.#starts, Float64Array);
      this.#maxima = grow(this.#maxima, Float64Array);
    }
    this.#ledgers.push(ledger);
    this.#starts[i] = ledger.startOffset;
    this.#maxima[i] = ledger.count > 0 ? ledger.maxTimestamp : -Infinity;
    if (ledger.sealedAtMs !== null) {
      this.#batches += ledger.count;
      this.#bytes += ledger.bytes;
    }
  }

  /** Marks the last ledger sealed and moves its counts into the sealed totals. */
  sealLast(sealedAtMs: number): void {
    const last = this.last;
    if (!last || last.sealedAtMs !== null) return;
    last.seal(sealedAtMs);
    this.#maxima[this.#ledgers.length - 1] = last.count > 0 ? last.maxTimestamp : -Infinity;
    this.#batches += last.count;
    this.#bytes += last.bytes;
  }

  /** Removes the last ledger (an empty ledger being replaced by a new one at the same start offset). */
  removeLast(): IndexedLedger | undefined {
    const last = this.#ledgers.pop();
    if (last && last.sealedAtMs !== null) {
      this.#batches -= last.count;
      this.#bytes -= last.bytes;
    }
    return last;
  }

  /**
   * Replaces the sealed ledgers at positions [from, to) by `ledger`, which covers the same offsets (the log
   * cleaner's swap, compaction.ts).
   */
  replaceRange(from: number, to: number, ledger: IndexedLedger): IndexedLedger[] {
    const ls = this.#ledgers;
    if (!(from >= 0 && from < to && to <= ls.length) || ls[to - 1]!.sealedAtMs === null || ledger.sealedAtMs === null) {
      throw new Error(`index: cannot replace ledgers [${from}, ${to}) of ${ls.length}`);
    }
    if (ledger.startOffset !== ls[from]!.startOffset || ledger.endOffset !== ls[to - 1]!.endOffset) {
      throw new Error(`index: ledger ${ledger.ledgerId} does not cover the offsets of the ledgers it replaces`);
    }
    const removed = ls.splice(from, to - from, ledger);
    for (const l of removed) {
      this.#batches -= l.count;
      this.#bytes -= l.bytes;
    }
    this.#batches += ledger.count;
    this.#bytes += ledger.bytes;
    this.#starts.copyWithin(from + 1, to, ls.length + removed.length - 1);
    this.#maxima.copyWithin(from + 1, to, ls.length + removed.length - 1);
    this.#starts[from] = ledger.startOffset;
    this.#maxima[from] = ledger.count > 0 ? ledger.maxTimestamp : -Infinity;
    return removed;
  }

  /** Removes the first `n` ledgers (retention). */
  removeFirst(n: number): IndexedLedger[] {
    const removed = this.#ledgers.splice(0, n);
    this.#starts.copyWithin(0, removed.length);
    this.#maxima.copyWithin(0, removed.length);
    for (const l of removed) {
      if (l.sealedAtMs !== null) {
        this.#batches -= l.count;
        this.#bytes -= l.bytes;
      }
    }
    return removed;
  }

  /** Index of the last ledger whose startOffset ≤ offset, or -1. */
  ledgerIndexFor(offset: number): number {
    const starts = this.#starts;
    let lo = 0;
    let hi = this.#ledgers.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  }

  /** The batch holding `offset`, or the first batch after it when it falls in a gap; null past the end. */
  lookup(offset: number): BatchPosition | null {
    const ls = this.#ledgers;
    for (let i = Math.max(0, this.ledgerIndexFor(offset)); i < ls.length; i++) {
      const ledger = ls[i]!;
      const n = ledger.count;
      if (n === 0 || ledger.lastOffsetAt(n - 1) < offset) continue;
      return { ledgerIndex: i, ledger, entryId: ledger.entryForOffset(offset) };
    }
    return null;
  }

  /** Position of the ledger after `ledger`'s entry `entryId`, skipping empty ledgers; null at the end. */
  next(position: BatchPosition): BatchPosition | null {
    const { ledgerIndex, ledger, entryId } = position;
    if (entryId + 1 < ledger.count) return { ledgerIndex, ledger, entryId: entryId + 1 };
    const ls = this.#ledgers;
    if (ls[ledgerIndex] !== ledger) return null;
    for (let i = ledgerIndex + 1; i < ls.length; i++) {
      if (ls[i]!.count > 0) return { ledgerIndex: i, ledger: ls[i]!, entryId: 0 };
    }
    return null;
  }

  /**
   * The first batch, at or after the one holding `fromOffset`, whose maxTimestamp ≥ timestamp: where Kafka's
   * ListOffsets by timestamp starts looking (the first record with timestamp ≥ target is in it, unless its
   * qualifying records all lie below `fromOffset`).
   */
  findByTimestamp(timestamp: number, fromOffset: number): BatchPosition | null {
    const start = this.lookup(fromOffset);
    if (!start) return null;
    const ls = this.#ledgers;
    const maxima = this.#maxima;
    const n = ls.length;
    const open = n > 0 && ls[n - 1]!.sealedAtMs === null ? n - 1 : n;
    let from = start.entryId;
    for (let i = start.ledgerIndex; i < n; i++, from = 0) {
      // Skip sealed ledgers by their maxima, without touching the ledger objects.
      if (i < open && maxima[i]! < timestamp) continue;
      const ledger = ls[i]!;
      if (ledger.count === 0 || ledger.maxTimestamp < timestamp) continue;
      const entryId = ledger.entryForTimestamp(timestamp, from);
      if (entryId >= 0) return { ledgerIndex: i, ledger, entryId };
    }
    return null;
  }

  /**
   * The first batch carrying the partition's largest maxTimestamp (Kafka's MAX_TIMESTAMP lookup: the segment
   * with the largest maxTimestampSoFar, first of equals, then its batch with that timestamp).
   */
  findMaxTimestamp(): BatchPosition | null {
    const ls = this.#ledgers;
    const maxima = this.#maxima;
    const n = ls.length;
    let best = -1;
    let bestTs = -Infinity;
    for (let i = 0; i < n; i++) {
      const sealed = i < n - 1 || ls[i]!.sealedAtMs !== null;
      const ts = sealed ? maxima[i]! : ls[i]!.count > 0 ? ls[i]!.maxTimestamp : -Infinity;
      if (ts > bestTs) {
        best = i;
        bestTs = ts;
      }
    }
    if (best < 0) return null;
    const ledger = ls[best]!;
    return { ledgerIndex: best, ledger, entryId: ledger.maxTimestampEntry };
  }
}
