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
 * The flags are set at run time, as `ledgerline start` begins (V8 reads them on every external allocation
 * and at every full collection, so they take effect at once). An operator who starts node with either flag,
 * or with `--no-` before a boolean one, keeps that choice.
 */
import { setFlagsFromString } from 'node:v8';

export const EXTERNAL_MEMORY_FLAG = '--external-memory-accounted-in-global-limit';
export const HEAP_GROWING_FLAG = '--heap-growing-percent';
const HEAP_GROWING_PERCENT = 50;

/** Applies the broker's GC settings the process was not started with; returns the flags set. */
export function tuneHeapForBroker(execArgv: readonly string[] = process.execArgv): string[] {
  const given = new Set(execArgv.map((a) => a.split('=')[0]!.replaceAll('_', '-').replace(/^--no-/, '--')));
  const flags = [EXTERNAL_MEMORY_FLAG, `${HEAP_GROWING_FLAG}=${HEAP_GROWING_PERCENT}`].filter((f) => !given.has(f.split('=')[0]!));
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
