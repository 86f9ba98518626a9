/**
 * `npm run bench -- <name> [args...]`: runs bench/<name>.ts, whose default export takes the remaining args.
 * Benchmarks print figures; they are not tests.
 */
import { readdirSync } from 'node:fs';
import { tuneHeapForBroker } from '../src/server/heap-tuning.js';

// Every benchmark runs with the broker's GC settings: the micro-benchmarks measure the broker's own code, and
// the load generator's memory is a broker's: every response it reads and every batch it sends is an
// ArrayBuffer, its heap of objects small (13 MiB). With V8's defaults it ran a full collection every 50 ms at
// 100 MiB/s each way (1-topic-16-partitions-1kb at 100,000 msg/s, `--trace-gc`: 202 in 13 s), 8-11% of the
// window in GC pauses, and those pauses were charged to the broker under test as produce and end-to-end
// latency. The broker's settings (src/server/heap-tuning.ts) take it to 2.4-2.6% and its CPU from 44-52% to
// 27-28% of a core, leaving the cores it shares with the broker to the broker.
//
// `npm run bench` also starts node with `--v8-pool-size=0`, as `ledgerline start` does (src/server/gc-threads.ts):
// V8's helper threads sized from the machine instead of Node's 4. On 2 cores the load generator still runs a
// full collection every 0.4 s at half the produce rate of 1-topic-16-partitions-1kb (62 in 27 s), and with 4
// helper threads each one crowded the broker's threads and its own event loop. 2 alternating pairs, then 2 runs
// more, against a broker started alone: produce p99 8.68, 8.26, 9.03, 9.06 ms against 10.8 and 11.2 with Node's
// pool; the load generator's GC pauses 0.79% of the window against 2.0-2.2%, its event loop late by 2.5 ms at
// p99 against 3.7-4.2.
tuneHeapForBroker();

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(new URL('.', import.meta.url))
  .filter((f) => f.endsWith('.ts') && f !== 'main.ts')
  .map((f) => f.slice(0, -3));

if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- <${available.join('|')}> [args...]`);
  process.exit(2);
}
const mod = (await import(`./${name}.ts`)) as { default: (args: string[]) => Promise<void> };
await mod.default(args);
