/**
 * How V8 should collect garbage in a broker process.
 *
 * A broker's memory is mostly outside V8's heap: every socket read, request frame and cached record batch is
 * an ArrayBuffer, while the heap of JavaScript objects stays small (about 25 MiB under load). By default V8
 * starts a full (mark-compact) collection each time 64 MiB of such external memory has been allocated since
 * the last one, however small the heap: at 150 MiB/s of produce, with each byte arriving in a socket chunk
 * and then in its request frame, that was a full collection every 150–200 ms, 10 % of the broker's CPU
 * (`--trace-incremental-marking` names the cause: "external memory pressure").
 *
 * With `--external-memory-accounted-in-global-limit` V8 counts external memory in the heap's global limit
 * instead, which grows with what stays alive: short-lived buffers are reclaimed by the young generation's
 * collections, and full collections come when the whole of the process's memory calls for them. Measured on
 * the 1-topic-16-partitions-1kb workload, 2 alternating pairs: at full rate a third of the full collections
 * (79, 103 -> 32, 35 in 15 s), half the GC pause time and 17-27 % less broker CPU per GiB; at half rate 30 %
 * less CPU. The price is a higher peak RSS (360 MiB at half rate, 500-530 MiB at full rate,
 * instead of 275-285 MiB; Kafka's JVM takes about 1 GiB). Memory stays bounded by the same global limit.
 *
 * That global limit, like the old generation's own, is the live size after the last full collection times a
 * growing factor, which V8 picks between 1.1 and 4 from how fast it marks: a fast collector gets 4, and the
 * heap of a broker decoding requests can then fill with up to three times its live size in dead objects
 * before the next full collection. Under 90 s of the protocol fuzzer (test/integration/fuzz.test.ts, seed
 * 1767547577) on 2 cores with two busy loops beside it, the broker ended at 629, 941, 769 and 538 MiB RSS,
 * its heap at up to 471 MiB with 46-80 MiB alive. `--heap-growing-percent=50` fixes the factor at 1.5: 569
 * and 551 MiB, the heap at most 343 MiB. At full produce rate (1-topic-16-partitions-1kb, 12 s, 2 alternating
 * pairs) it changed neither the full collections (51, 57 -> 60, 55) nor the broker's CPU (1523, 1370 -> 1490,
 * 1340 ticks), and peak RSS went 376, 507 -> 357, 350 MiB: there the external buffers set the pace. With
 * 10,000 partitions (many-partitions, 2 pairs), whose live heap is large, the price shows: 19-20 full
 * collections instead of 5, 8-15 % more broker CPU, produce p99 107-130 ms against 97-104, for a peak RSS of
 * 538-543 MiB instead of 824-871.
 *
 * A fixed factor is the wrong shape, though: one JavaScript heap is large and mostly alive (10,000 partitions,
 * the fuzzer's), the other small with a flood of short-lived buffers beside it (a broker at full produce rate:
 * 25 MiB of live heap). So the factor follows the live heap: after every full collection it is set so that the
 * next comes after HEAP_HEADROOM (64 MiB) of growth, within 1.5 and 4 times the live size. A large heap keeps
 * the 1.5 above (with 128 MiB alive and more); a broker under produce load gets about 3.5 (25 MiB alive),
 * and its external memory the same room. Measured at full rate (1-topic-16-partitions-1kb, 15 s, 2 alternating pairs against
 * the fixed 1.5): 134-137 full collections -> 44-45, 495-509 -> 568-588 MiB/s produced with 10 % fewer broker
 * CPU ticks (22 % fewer per byte), produce p99 33-36 -> 27-29 ms, for a peak RSS of 553-570 MiB instead of 392;
 * at 250,000 msg/s (about half) 88-89 full collections -> 27, produce p99 31-36 -> 25-28 ms. The fuzzer's
 * broker (90 s, alone) peaked at 469 MiB RSS.
 *
 * The flags are set at run time, as `ledgerline start` begins (V8 reads them on every external allocation
 * and at every full collection, so they take effect at once). An operator who starts node with either flag,
 * or with `--no-` before a boolean one, keeps that choice (a growing percent given is not adapted either).
 */
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

export const EXTERNAL_MEMORY_FLAG = '--external-memory-accounted-in-global-limit';
export const HEAP_GROWING_FLAG = '--heap-growing-percent';

/**
 * How far the JavaScript heap may grow past what is alive before the next full collection: the growing factor is
 * chosen after every full collection so that the limit lies `headroomBytes` above the live heap, but no lower than
 * 1.5 and no higher than 4 times it (V8's own range is 1.1 to 4). The global limit, external memory included,
 * grows by the same factor.
 */
export const HEAP_HEADROOM = { headroomBytes: 64 * 1024 * 1024, minPercent: 50, maxPercent: 300 } as const;

/** The heap growing percent for `liveBytes` of JavaScript heap alive after a full collection. */
export function growingPercentFor(liveBytes: number): number {
  const percent = Math.round((HEAP_HEADROOM.headroomBytes / Math.max(1, liveBytes)) * 100);
  return Math.min(HEAP_HEADROOM.maxPercent, Math.max(HEAP_HEADROOM.minPercent, percent));
}

export interface HeapTuning {
  /** The flags set at start (those the process was not started with). */
  readonly flags: string[];
  /** Stops adapting the growing factor (when it adapts). */
  stop(): void;
}

/**
 * Applies the broker's GC settings the process was not started with. Unless the growing factor was given, it
 * then follows the live size: after each full collection, `onAdapt` (if any) hears the live bytes and the
 * percent set for the next one.
 */
export function tuneHeapForBroker(
  execArgv: readonly string[] = process.execArgv,
  onAdapt?: (liveBytes: number, percent: number) => void,
): HeapTuning {
  const given = new Set(execArgv.map((a) => a.split('=')[0]!.replaceAll('_', '-').replace(/^--no-/, '--')));
  const adapt = !given.has(HEAP_GROWING_FLAG);
  const flags = [...(given.has(EXTERNAL_MEMORY_FLAG) ? [] : [EXTERNAL_MEMORY_FLAG]), ...(adapt ? [`${HEAP_GROWING_FLAG}=${HEAP_HEADROOM.maxPercent}`] : [])];
  for (const f of flags) setFlagsFromString(f);
  if (!adapt) return { flags, stop: () => undefined };
  let percent: number = HEAP_HEADROOM.maxPercent;
  const observer = new PerformanceObserver((list) => {
    if (!list.getEntries().some((e) => (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR)) return;
    // Read when the collection is reported (a turn of the event loop later): what is in use is what survived it,
    // give or take that turn's allocations.
    const stats = getHeapStatistics();
    const live = stats.used_heap_size;
    const next = growingPercentFor(live);
    if (next !== percent) {
      percent = next;
      setFlagsFromString(`${HEAP_GROWING_FLAG}=${percent}`);
    }
    onAdapt?.(live, percent);
  });
  observer.observe({ entryTypes: ['gc'] });
  return { flags, stop: () => observer.disconnect() };
}
