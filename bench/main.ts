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
