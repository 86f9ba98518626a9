/**
 * The body of the consumer thread (consumer-thread.ts): its own client, connected with the options it was given,
 * runs the consumers' lanes until told to stop or, for a catch-up read, until every lane reached its end.
 *
 *   parent ── workerData { client, lanes, … } ─►  connect, load metadata ─► 'ready'
 *          ── 'start' { measureFrom } ──────────►  the lanes fetch (counting the window from `measureFrom`, if given)
 *          ── 'measure' { at } ─────────────────►  count the window from `at`
 *          ── 'stop' ───────────────────────────►  lanes end ─► 'done' { counters, e2e, errors, offsets }
 *   totals (shared memory): records and bytes consumed so far, this thread's GC seconds, the window's start,
 *   written as they change
 */
import { PerformanceObserver } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { KafkaClient } from '../../src/client/index.js';
import { ConsumeMeter, consumerLoop } from './consume.js';
import type { ConsumerLane } from './consume.js';
import type { ConsumerThreadData, ToConsumers, FromConsumers } from './consumer-thread.js';
import { encodeHistogram } from './stats.js';

const data = workerData as ConsumerThreadData;
const port = parentPort!;
const totals = new Float64Array(data.totals);
const meter = new ConsumeMeter();
meter.recordEndToEnd = data.recordEndToEnd;
let stopped = false;
let signalStart: () => void = () => undefined;
const started = new Promise<void>((resolve) => (signalStart = resolve));

const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) totals[2]! += e.duration / 1000;
});
gcObserver.observe({ entryTypes: ['gc'] });

function measureFrom(at: number): void {
  meter.startMeasuring(at);
  totals[3] = at;
}

port.on('message', (m: ToConsumers) => {
  if (m.type === 'start') {
    if (m.measureFrom !== null) measureFrom(m.measureFrom);
    signalStart();
  } else if (m.type === 'measure') measureFrom(m.at);
  else if (m.type === 'stop') {
    stopped = true;
    signalStart();
  }
});

async function main(): Promise<FromConsumers> {
  const client = await KafkaClient.connect(data.client);
  try {
    await client.metadata([...new Set(data.lanes.flatMap((l) => l.partitions.map((tp) => tp.topic)))]);
    const lanes: ConsumerLane[] = data.lanes.map((l) => ({
      leader: l.leader,
      lane: l.lane,
      partitions: l.partitions,
      offsets: new Map(l.offsets),
      endOffsets: l.endOffsets ? new Map(l.endOffsets) : undefined,
    }));
    const options = {
      recordSize: data.recordSize,
      readCommitted: data.readCommitted,
      onProgress: () => {
        totals[0] = meter.consumedTotal;
        totals[1] = meter.consumedBytesTotal;
      },
    };
    const deadline = data.deadline;
    const stop = (): boolean => stopped || (deadline !== null && Date.now() > deadline);
    port.postMessage({ type: 'ready' } satisfies FromConsumers);
    await started;
    await Promise.all(lanes.map((l) => consumerLoop(client, options, meter, l, stop)));
    options.onProgress();
    return {
      type: 'done',
      consumed: meter.consumed,
      e2e: encodeHistogram(meter.e2eLatency),
      errors: meter.errors,
      offsets: lanes.flatMap((l) => [...l.offsets]),
    };
  } finally {
    gcObserver.disconnect();
    await client.close();
  }
}

main().then(
  (done) => port.postMessage(done),
  (e: unknown) => port.postMessage({ type: 'failed', message: e instanceof Error ? (e.stack ?? e.message) : String(e) } satisfies FromConsumers),
);
