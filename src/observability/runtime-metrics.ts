/**
 * What the broker's latency is made of, as Prometheus histograms: how late the event loop runs (every request,
 * every append and every fetch waits behind whatever holds it), and the ledger store's group commits (how many
 * appends share one fdatasync, and how long that fdatasync takes). Kafka's nearest counterparts are
 * `kafka.network:RequestChannel` queue times and `kafka.log:LogFlushStats.LogFlushRateAndTimeMs`.
 *
 * The event loop is sampled by a timer that asks to run every SAMPLE_MS: how much later than that it ran is
 * one observation (Node's `monitorEventLoopDelay` measures the same thing, but only as a histogram that cannot
 * be added to a Prometheus one; prom-client's `ledgerline_process_nodejs_eventloop_lag_*` gauges show its
 * percentiles since the last scrape).
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { GroupCommitObserver, LedgerStoreReads } from '../ledger/open-store.js';

/** How often the event loop is asked to run a sample. */
export const EVENT_LOOP_SAMPLE_MS = 10;

/** Delays from 0.1 ms (a loop that is all but idle) to 2.5 s (a stall). */
const DELAY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Appends per fsync, 1 to 16,384. */
const ENTRY_BUCKETS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096, 16384];
/** Bytes per fsync, 1 KiB to 64 MiB (one writev is at most maxGroupBytes, 4 MiB by default; an fsync covers several). */
const BYTE_BUCKETS = [1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

/** Starts sampling the event loop's delay into `ledgerline_event_loop_delay_seconds`; the result stops it. */
export function registerEventLoopMetrics(registry: Registry, sampleMs = EVENT_LOOP_SAMPLE_MS): () => void {
  const delay = new Histogram({
    name: 'ledgerline_event_loop_delay_seconds',
    help: `How much later than asked a timer set every ${sampleMs} ms ran: how long the event loop was held by other work.`,
    buckets: DELAY_BUCKETS,
    registers: [registry],
  });
  let timer: NodeJS.Timeout | null = null;
  let due = 0;
  const arm = (): void => {
    due = performance.now() + sampleMs;
    timer = setTimeout(tick, sampleMs);
    timer.unref();
  };
  const tick = (): void => {
    delay.observe(Math.max(0, performance.now() - due) / 1000);
    arm();
  };
  arm();
  return () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
}

/**
 * The ledger store's group commits as histograms, when the store makes its own (`observe` from open-store.ts's
 * ledgerStoreGroupCommits; null for a store whose bookies do, where these series stay empty).
 */
export function registerGroupCommitMetrics(registry: Registry, observe: ((o: GroupCommitObserver) => void) | null): void {
  const registers = [registry];
  const entries = new Histogram({
    name: 'ledgerline_storage_group_commit_entries',
    help: 'Entries (record batches and coordinator records) one fdatasync of the ledger store made durable: the group commit size.',
    buckets: ENTRY_BUCKETS,
    registers,
  });
  const bytes = new Histogram({
    name: 'ledgerline_storage_group_commit_bytes',
    help: 'Bytes one fdatasync of the ledger store made durable.',
    buckets: BYTE_BUCKETS,
    registers,
  });
  const fsync = new Histogram({
    name: 'ledgerline_storage_fsync_seconds',
    help: "Time of each of the ledger store's group-commit fdatasync calls.",
    buckets: DELAY_BUCKETS,
    registers,
  });
  observe?.({
    committed(n, b, seconds) {
      entries.observe(n);
      bytes.observe(b);
      fsync.observe(seconds);
    },
  });
}

/**
 * Where the ledger store's reads found their entries (`reads` from open-store.ts's ledgerStoreReads; null for a
 * store that keeps no such count, where these series stay at 0). The share of `read_ahead` among the reads of
 * entries not in the tail cache is what the read-ahead saves its readers; `..._read_ahead_total` against it
 * says how much of what was read ahead nobody took.
 */
export function registerStoreReadMetrics(registry: Registry, reads: LedgerStoreReads | null): void {
  const registers = [registry];
  // Each scrape sets the store's own totals (as kafka_consumergroup_rebalances_total does), every source's series
  // from the first scrape on.
  new Counter({
    name: 'ledgerline_storage_entries_read_total',
    help: 'Entries the ledger store handed to readers since the broker started, by where it found them: tail_cache (recent entries kept in memory), read_ahead (read from the segment files ahead of their reader), segment_files (read while the reader waited; compaction included).',
    labelNames: ['source'],
    registers,
    collect() {
      if (!reads) return;
      this.reset();
      this.inc({ source: 'tail_cache' }, reads.tailCache);
      this.inc({ source: 'read_ahead' }, reads.readAhead);
      this.inc({ source: 'segment_files' }, reads.segmentFiles);
    },
  });
  new Counter({
    name: 'ledgerline_storage_entries_read_ahead_total',
    help: 'Entries the ledger store read from its segment files ahead of their readers since the broker started, taken or not.',
    registers,
    collect() {
      if (!reads) return;
      this.reset();
      this.inc(reads.readAheadRead);
    },
  });
}
