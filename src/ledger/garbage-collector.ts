/**
 * Space reclamation for the local ledger store, modelled on BookKeeper's GarbageCollectorThread and its
 * entry-log compaction. Segments are shared by every ledger, so deleting a ledger frees nothing by itself:
 * one long-lived ledger (the open ledger of a quiet `__consumer_offsets` partition) with a few entries in a segment would
 * keep the whole segment on disk. The collector runs every `gcIntervalMs` (BookKeeper's `gcWaitTime`):
 *
 * 1. Segments with no live entries are deleted by the store's checkpoint (once no durable checkpoint lists a
 *    ledger with entries there); the collector only makes sure a checkpoint runs.
 * 2. Minor compaction (every `minorCompactionIntervalMs`) and major compaction (every
 *    `majorCompactionIntervalMs`) copy the live entries of each rolled segment whose live fraction is below
 *    `minorCompactionThreshold` / `majorCompactionThreshold` into the active segment, least live first, at
 *    most `compactionRateBytes` per second (BookKeeper's `compactionRateByBytes`). The copies go through the
 *    commit queue like any append; the ledger's index points at a copy only once it is durable, and the old
 *    segment is deleted only after that, by a checkpoint, like any segment left without live entries.
 * 3. The active segment is not compacted (it is still being written), but when it holds at least
 *    `activeRollGarbageBytes` (4 MiB) of garbage and is mostly garbage it is rolled, so that the next pass can
 *    collect it: otherwise up to a whole segment (256 MiB) of a deleted topic could wait for the traffic of
 *    the other ledgers to fill it.
 *
 * Crash safety (checked step by step in test/unit/ledger/compaction.test.ts): a crash before a copy is durable
 * leaves the old segment as it was; after, recovery may find an entry twice and keeps the copy in the newest
 * segment (recovered-entries.ts), so the old segment is garbage and goes at the next collection. Nothing is
 * lost, and nothing leaks for good.
 */
import { SEGMENT_HEADER_BYTES } from './format.js';

export interface GarbageCollectorOptions {
  /** How often the collector runs (BookKeeper `gcWaitTime`); 0 disables the timer (call `run()`). */
  readonly gcIntervalMs: number;
  readonly minorCompactionThreshold: number;
  readonly minorCompactionIntervalMs: number;
  readonly majorCompactionThreshold: number;
  readonly majorCompactionIntervalMs: number;
  /** Bytes copied per second at most, by compaction (BookKeeper `compactionRateByBytes`). */
  readonly compactionRateBytes: number;
  /**
   * The active segment is rolled for collection once it holds this much garbage and is mostly garbage.
   * The store sets it to min(ACTIVE_ROLL_GARBAGE_BYTES, a quarter of its segment size).
   */
  readonly activeRollGarbageBytes: number;
}

export const GC_DEFAULTS: GarbageCollectorOptions = {
  gcIntervalMs: 10_000,
  minorCompactionThreshold: 0.2,
  minorCompactionIntervalMs: 10_000,
  majorCompactionThreshold: 0.5,
  majorCompactionIntervalMs: 3_600_000,
  compactionRateBytes: 32 * 1024 * 1024,
  activeRollGarbageBytes: 4 * 1024 * 1024,
};

/** The active segment is rolled for collection once it holds this much garbage (and is mostly garbage). */
export const ACTIVE_ROLL_GARBAGE_BYTES = GC_DEFAULTS.activeRollGarbageBytes;
/** Most payload bytes copied per batch of moves. */
const COPY_BATCH_BYTES = 1024 * 1024;

/** What the collector sees of a segment. */
export interface GcSegment {
  readonly seq: number;
  /** Valid bytes, header included. */
  readonly size: number;
  readonly liveBytes: number;
  compacting: boolean;
}

/** A live ledger's entries in one segment. */
export interface GcRun {
  readonly ledgerId: number;
  readonly firstEntryId: number;
  readonly count: number;
}

/** The store, as the collector uses it. */
export interface GcHost {
  isClosing(): boolean;
  /** The active segment, and the rolled segments compaction may take (indexed by a durable checkpoint). */
  segments(): { active: GcSegment; rolled: GcSegment[] };
  /** Live ledgers' runs in a segment. */
  liveRuns(seq: number): GcRun[];
  /** Up to `maxBytes` of entries first..last of a ledger (at least one); null once the ledger is gone. */
  read(ledgerId: number, first: number, last: number, maxBytes: number): Promise<{ entryId: number; data: Uint8Array }[] | null>;
  /** Writes a copy of an entry now in segment `from`; resolves with whether the index now points at it. */
  move(ledgerId: number, entryId: number, from: number, data: Uint8Array): Promise<boolean>;
  /** Makes every copy written so far durable (a no-op under the durable flush policy). */
  syncCopies(): Promise<void>;
  /** Rolls the active segment (and waits for the checkpoint that indexes it). */
  rollActive(): Promise<void>;
  /** Runs a checkpoint (which deletes the segments left without live entries) and waits for it. */
  checkpoint(): Promise<void>;
  reportError(err: unknown): void;
}

export interface GcStats {
  gcRuns: number;
  segmentsCompacted: number;
}

export class GarbageCollector {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastMinorMs: number;
  private lastMajorMs: number;
  /** When the rate limiter next lets bytes through. */
  private nextFreeAt = 0;
  private wake: (() => void) | null = null;
  private stopped = false;

  constructor(
    private readonly host: GcHost,
    private readonly options: GarbageCollectorOptions,
    private readonly stats: GcStats,
  ) {
    const now = Date.now();
    this.lastMinorMs = now;
    this.lastMajorMs = now;
  }

  start(): void {
    if (this.options.gcIntervalMs > 0) this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.run().finally(() => this.arm());
    }, this.options.gcIntervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a run in progress (it stops at its next step). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.wake?.();
    await this.running;
  }

  /**
   * One collection: roll a mostly-garbage active segment, compact (minor and, when due, major), and run a
   * checkpoint to delete segments left without live entries. `force` runs both compactions now.
   */
  run(force: { minor?: boolean; major?: boolean } = {}): Promise<void> {
    if (this.running) return this.running;
    this.running = this.collect(force)
      .catch((err: unknown) => this.host.reportError(err))
      .finally(() => {
        this.running = null;
      });
    return this.running;
  }

  private async collect(force: { minor?: boolean; major?: boolean }): Promise<void> {
    if (this.stopped || this.host.isClosing()) return;
    this.stats.gcRuns++;
    const now = Date.now();
    const o = this.options;
    const major = force.major === true || now - this.lastMajorMs >= o.majorCompactionIntervalMs;
    const minor = major || force.minor === true || now - this.lastMinorMs >= o.minorCompactionIntervalMs;
    let threshold = 0;
    if (minor) threshold = o.minorCompactionThreshold;
    if (major) threshold = Math.max(threshold, o.majorCompactionThreshold);

    let { active, rolled } = this.host.segments();
    const activeData = active.size - SEGMENT_HEADER_BYTES;
    if (threshold > 0 && activeData - active.liveBytes >= o.activeRollGarbageBytes && active.liveBytes < activeData * threshold) {
      await this.host.rollActive();
      ({ rolled } = this.host.segments());
    }
    let changed = rolled.some((s) => s.liveBytes === 0);
    if (threshold > 0) {
      const candidates = rolled
        .filter((s) => !s.compacting && s.liveBytes > 0 && s.liveBytes < (s.size - SEGMENT_HEADER_BYTES) * threshold)
        .sort((a, b) => a.liveBytes / (a.size - SEGMENT_HEADER_BYTES) - b.liveBytes / (b.size - SEGMENT_HEADER_BYTES));
      for (const segment of candidates) {
        if (this.stopped || this.host.isClosing()) break;
        if (await this.compact(segment)) changed = true;
      }
      if (minor) this.lastMinorMs = now;
      if (major) this.lastMajorMs = now;
    }
    if (changed && !this.stopped && !this.host.isClosing()) await this.host.checkpoint();
  }

  /** Copies a segment's live entries into the active segment; true when none is left in it. */
  private async compact(segment: GcSegment): Promise<boolean> {
    segment.compacting = true;
    try {
      for (const run of this.host.liveRuns(segment.seq)) {
        const last = run.firstEntryId + run.count - 1;
        let id = run.firstEntryId;
        while (id <= last) {
          if (this.stopped || this.host.isClosing()) return false;
          const entries = await this.host.read(run.ledgerId, id, last, COPY_BATCH_BYTES);
          if (!entries || entries.length === 0) break; // deleted meanwhile: nothing left to keep
          let bytes = 0;
          for (const e of entries) bytes += e.data.byteLength;
          await Promise.all(entries.map((e) => this.host.move(run.ledgerId, e.entryId, segment.seq, e.data)));
          id = entries[entries.length - 1]!.entryId + 1;
          await this.throttle(bytes);
        }
      }
      // The index points at the copies; before the old segment may go, they must be on disk.
      await this.host.syncCopies();
      const emptied = segment.liveBytes === 0;
      if (emptied) this.stats.segmentsCompacted++;
      return emptied;
    } finally {
      segment.compacting = false;
    }
  }

  /** Token bucket of `compactionRateBytes` per second. */
  private async throttle(bytes: number): Promise<void> {
    const rate = this.options.compactionRateBytes;
    if (!(rate > 0) || !Number.isFinite(rate)) return;
    const now = performance.now();
    this.nextFreeAt = Math.max(this.nextFreeAt, now) + (bytes / rate) * 1000;
    const wait = this.nextFreeAt - now;
    if (wait <= 1) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.wake = null;
        resolve();
      }, wait);
      t.unref();
      this.wake = () => {
        clearTimeout(t);
        this.wake = null;
        resolve();
      };
    });
  }
}
