/**
 * The broker's log cleaner (Kafka's LogCleaner and LogCleanerManager): every log.cleaner.backoff.ms it
 * looks at the open partition logs whose cleanup.policy includes `compact`, takes the filthiest one that is
 * due (dirty ratio above min.cleanable.dirty.ratio, past max.compaction.lag.ms, or a delete horizon passed)
 * and runs one compaction pass over it (compaction.ts); it goes on while logs are due, then sleeps again.
 *
 * ```
 *   log.cleaner.threads workers ── each: pick the filthiest due log not being cleaned ─► log.compact(map, throttle)
 *        │                                   (max compaction delay first, then dirty ratio)
 *        └ one key map each: log.cleaner.dedupe.buffer.size / threads bytes (offset-map.ts)
 *   one throttle shared by all: log.cleaner.io.max.bytes.per.second, read and written bytes together
 * ```
 *
 * A pass that fails marks its partition uncleanable (Kafka's uncleanable-partitions-count) until
 * UNCLEANABLE_RETRY_MS later; a log that stops under a pass (closed, fenced, deleted) just ends it.
 */
import type { Clock, ClockTimer } from '../metadata/clock.js';
import { systemClock } from '../metadata/clock.js';
import type { CleanableState, CompactionOptions, CompactionResult } from './compaction.js';
import { compacts, type PartitionLogConfig } from './config.js';
import { OFFSET_MAP_SLOT_BYTES, KeyOffsetMap } from './offset-map.js';
import type { LogLogger } from './types.js';

/** A partition log as the cleaner sees it (PartitionLog). */
export interface CleanableLog {
  readonly topic: string;
  readonly partition: number;
  readonly name: string;
  readonly state: string;
  readonly config: PartitionLogConfig;
  cleanableState(nowMs: number): CleanableState;
  compact(options: CompactionOptions): Promise<CompactionResult | null>;
}

export interface LogCleanerOptions {
  /** The logs to consider (the broker's open partitions); asked at every look. */
  readonly logs: () => Iterable<CleanableLog>;
  /** log.cleaner.enable. Default true. */
  readonly enabled?: boolean;
  /** log.cleaner.threads. Default 1. */
  readonly threads?: number;
  /** log.cleaner.backoff.ms. Default 15 000. */
  readonly backoffMs?: number;
  /** log.cleaner.dedupe.buffer.size. Default 128 MiB. */
  readonly dedupeBufferBytes?: number;
  /** log.cleaner.io.buffer.load.factor. Default 0.9. */
  readonly loadFactor?: number;
  /** log.cleaner.io.max.bytes.per.second. Default unlimited. */
  readonly maxBytesPerSecond?: number;
  readonly clock?: Clock;
  readonly logger?: LogLogger;
}

/** What the cleaner reports of one partition (the per-partition metrics). */
export interface PartitionCleanerStats {
  readonly topic: string;
  readonly partition: number;
  dirtyRatio: number;
  /** Bytes read by this partition's passes so far. */
  bytesCleaned: number;
  /** Bytes its passes wrote into new ledgers. */
  bytesWritten: number;
  passes: number;
  /** When its last pass ended (ms since the epoch), -1 before any. */
  lastPassAtMs: number;
  lastPassMs: number;
}

export interface LogCleanerStats {
  /** Kafka's max-dirty-percent: the largest dirty ratio seen at the last look, in percent. */
  readonly maxDirtyPercent: number;
  /** Kafka's time-since-last-run-ms. */
  readonly timeSinceLastRunMs: number;
  /** Kafka's max-compaction-delay-secs. */
  readonly maxCompactionDelaySecs: number;
  /** Kafka's uncleanable-partitions-count. */
  readonly uncleanablePartitions: number;
  /** Kafka's max-buffer-utilization-percent, of the last pass. */
  readonly maxBufferUtilizationPercent: number;
  /** Kafka's cleaner-recopy-percent, of the last pass: bytes written / bytes read. */
  readonly recopyPercent: number;
  /** Kafka's max-clean-time-secs, of the last pass. */
  readonly maxCleanTimeSecs: number;
  /** Kafka's DeadThreadCount: workers that stopped on an unexpected error (none: errors mark partitions). */
  readonly deadThreads: number;
  readonly partitions: ReadonlyMap<string, PartitionCleanerStats>;
}

/** How long a partition whose pass failed is left alone. */
export const UNCLEANABLE_RETRY_MS = 5 * 60_000;

const DEFAULTS = { enabled: true, threads: 1, backoffMs: 15_000, dedupeBufferBytes: 128 * 1024 * 1024, loadFactor: 0.9, maxBytesPerSecond: Number.MAX_VALUE };

/** Kafka's Throttler: keeps the bytes per second at or below the limit by sleeping. */
class Throttler {
  #windowStart: number;
  #bytes = 0;
  constructor(
    private readonly maxBytesPerSecond: number,
    private readonly clock: Clock,
  ) {
    this.#windowStart = clock.now();
  }

  async take(bytes: number): Promise<void> {
    if (!(this.maxBytesPerSecond < Number.MAX_VALUE)) return;
    this.#bytes += bytes;
    const now = this.clock.now();
    const elapsed = now - this.#windowStart;
    const owed = (this.#bytes / this.maxBytesPerSecond) * 1000 - elapsed;
    if (owed > 0) await new Promise<void>((resolve) => this.clock.setTimer(owed, resolve));
    // A new window every second keeps the rate of the recent past, not of all time.
    if (elapsed >= 1000) {
      this.#windowStart = this.clock.now();
      this.#bytes = 0;
    }
  }
}

export class LogCleaner {
  readonly #o: Required<Omit<LogCleanerOptions, 'logger' | 'clock'>> & { clock: Clock; logger: LogLogger | undefined };
  readonly #cleaning = new Set<string>();
  readonly #uncleanable = new Map<string, number>();
  readonly #partitions = new Map<string, PartitionCleanerStats>();
  readonly #throttler: Throttler;
  #timer: ClockTimer | null = null;
  #running: Promise<unknown> | null = null;
  readonly #abort = new AbortController();
  #closed = false;
  #lastRunAtMs: number;
  #maxDirtyPercent = 0;
  #maxCompactionDelaySecs = 0;
  #last = { utilization: 0, recopy: 0, secs: 0 };

  constructor(options: LogCleanerOptions) {
    const clock = options.clock ?? systemClock;
    this.#o = {
      logs: options.logs,
      enabled: options.enabled ?? DEFAULTS.enabled,
      threads: Math.max(1, Math.floor(options.threads ?? DEFAULTS.threads)),
      backoffMs: Math.max(0, options.backoffMs ?? DEFAULTS.backoffMs),
      dedupeBufferBytes: options.dedupeBufferBytes ?? DEFAULTS.dedupeBufferBytes,
      loadFactor: options.loadFactor ?? DEFAULTS.loadFactor,
      maxBytesPerSecond: options.maxBytesPerSecond ?? DEFAULTS.maxBytesPerSecond,
      clock,
      logger: options.logger,
    };
    this.#throttler = new Throttler(this.#o.maxBytesPerSecond, clock);
    this.#lastRunAtMs = clock.now();
  }

  get enabled(): boolean {
    return this.#o.enabled;
  }

  /** Starts looking for work every log.cleaner.backoff.ms (nothing when log.cleaner.enable is false). */
  start(): void {
    if (!this.#o.enabled || this.#closed) return;
    this.#arm();
  }

  #arm(): void {
    if (this.#closed) return;
    this.#timer = this.#o.clock.setTimer(this.#o.backoffMs, () => {
      this.#timer = null;
      this.#running = this.runUntilIdle()
        .catch((err: unknown) => this.#o.logger?.warn({ err }, 'log cleaner: a look for work failed'))
        .finally(() => {
          this.#running = null;
          this.#arm();
        });
    });
  }

  /** Runs passes, on up to log.cleaner.threads logs at once, while some log is due. */
  async runUntilIdle(): Promise<number> {
    let passes = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        if (this.#closed) return;
        const ran = await this.runOnce();
        if (ran === null) return;
        passes++;
      }
    };
    await Promise.all(Array.from({ length: this.#o.threads }, worker));
    return passes;
  }

  /**
   * One pass over the filthiest due log (Kafka's grabFilthiestCompactedLog: needCompactionNow first, then
   * the dirty ratio), or null when none is due. Updates the gauges of every compacted log it looked at.
   */
  async runOnce(): Promise<CompactionResult | null> {
    const now = this.#o.clock.now();
    this.#lastRunAtMs = now;
    let best: { log: CleanableLog; state: CleanableState } | null = null;
    let maxDirty = 0;
    let maxDelay = 0;
    for (const log of this.#o.logs()) {
      if (log.state !== 'open' || !compacts(log.config)) continue;
      const state = log.cleanableState(now);
      const stats = this.#statsOf(log);
      stats.dirtyRatio = state.dirtyRatio;
      if (state.dirtyRatio > maxDirty) maxDirty = state.dirtyRatio;
      if (state.compactionDelayMs > maxDelay) maxDelay = state.compactionDelayMs;
      const blockedUntil = this.#uncleanable.get(log.name);
      if (blockedUntil !== undefined && blockedUntil > now) continue;
      if (!state.due || this.#cleaning.has(log.name)) continue;
      if (
        !best ||
        state.compactionDelayMs > best.state.compactionDelayMs ||
        (state.compactionDelayMs === best.state.compactionDelayMs && state.dirtyRatio > best.state.dirtyRatio)
      ) {
        best = { log, state };
      }
    }
    this.#maxDirtyPercent = maxDirty * 100;
    this.#maxCompactionDelaySecs = maxDelay / 1000;
    if (!best) return null;
    return this.clean(best.log, best.state);
  }

  /** Runs one pass over `log` now (whatever its state says when `force`). */
  async clean(log: CleanableLog, state: CleanableState = log.cleanableState(this.#o.clock.now()), force = false): Promise<CompactionResult | null> {
    if (this.#cleaning.has(log.name)) return null;
    this.#cleaning.add(log.name);
    const started = this.#o.clock.now();
    try {
      const budget = Math.floor(this.#o.dedupeBufferBytes / this.#o.threads);
      // No more slots than the dirty bytes could hold keys (a record takes at least 7 bytes): a small log
      // does not take the whole budget.
      const map = new KeyOffsetMap(Math.max(OFFSET_MAP_SLOT_BYTES * 2, budget), this.#o.loadFactor, Math.ceil(state.dirtyBytes / 7) + 16);
      const result = await log.compact({ now: started, map, throttle: (bytes) => this.#throttler.take(bytes), force, signal: this.#abort.signal });
      this.#uncleanable.delete(log.name);
      if (result) {
        const stats = this.#statsOf(log);
        stats.bytesCleaned += result.bytesRead;
        stats.bytesWritten += result.bytesWritten;
        stats.passes++;
        stats.lastPassAtMs = this.#o.clock.now();
        stats.lastPassMs = result.ms;
        stats.dirtyRatio = log.cleanableState(stats.lastPassAtMs).dirtyRatio;
        this.#last = {
          utilization: result.mapUtilization * 100,
          recopy: result.bytesRead > 0 ? (result.bytesWritten / result.bytesRead) * 100 : 0,
          secs: result.ms / 1000,
        };
        this.#o.logger?.info?.(
          {
            partition: log.name,
            firstDirtyOffset: result.firstDirtyOffset,
            cleanedTo: result.endOffset,
            bytesRead: result.bytesRead,
            bytesWritten: result.bytesWritten,
            recordsRead: result.recordsRead,
            recordsRetained: result.recordsRetained,
            ledgers: `${result.ledgersBefore} -> ${result.ledgersAfter}`,
            mapFull: result.mapFull,
            ms: Math.round(result.ms),
          },
          'log cleaner: compacted a partition',
        );
      }
      return result;
    } catch (err) {
      if (log.state !== 'open') return null;
      this.#uncleanable.set(log.name, this.#o.clock.now() + UNCLEANABLE_RETRY_MS);
      this.#o.logger?.warn({ err, partition: log.name }, 'log cleaner: the pass failed; the partition is uncleanable for a while');
      return null;
    } finally {
      this.#cleaning.delete(log.name);
    }
  }

  #statsOf(log: CleanableLog): PartitionCleanerStats {
    let s = this.#partitions.get(log.name);
    if (!s) {
      s = { topic: log.topic, partition: log.partition, dirtyRatio: 0, bytesCleaned: 0, bytesWritten: 0, passes: 0, lastPassAtMs: -1, lastPassMs: 0 };
      this.#partitions.set(log.name, s);
    }
    return s;
  }

  /** A partition left this broker or was deleted: its figures go. */
  forget(name: string): void {
    this.#partitions.delete(name);
    this.#uncleanable.delete(name);
  }

  stats(): LogCleanerStats {
    const now = this.#o.clock.now();
    let uncleanable = 0;
    for (const until of this.#uncleanable.values()) if (until > now) uncleanable++;
    return {
      maxDirtyPercent: this.#maxDirtyPercent,
      timeSinceLastRunMs: Math.max(0, now - this.#lastRunAtMs),
      maxCompactionDelaySecs: this.#maxCompactionDelaySecs,
      uncleanablePartitions: uncleanable,
      maxBufferUtilizationPercent: this.#last.utilization,
      recopyPercent: this.#last.recopy,
      maxCleanTimeSecs: this.#last.secs,
      deadThreads: 0,
      partitions: this.#partitions,
    };
  }

  /** Stops looking for work, ends the passes in progress (nothing they wrote is swapped in after) and waits for them. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#abort.abort();
    this.#timer?.cancel();
    this.#timer = null;
    await this.#running;
  }
}
