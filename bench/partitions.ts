/**
 * `npm run bench -- partitions [--topics N] [--partitions P] [options]`: one node holding N topics × P
 * partitions (default 1,000 × 100 = 100,000), Ledgerline and Apache Kafka 4.4.0 (KRaft, one combined node)
 * one after the other in the same run, each on its own data under the same temp directory.
 *
 * Per broker: a fresh start, the topics created with the admin API in batches of at most 10,000 partitions
 * per CreateTopics request, then R rounds of
 *
 *   graceful stop (SIGTERM until exit)  →  start: time to listen, time until every partition has a leader,
 *   idle RSS (sampled until it stops moving, with a deadline)  →  SIGKILL  →  start: time to listen, time
 *   until every partition has a leader
 *
 * and a last graceful stop. With `--touch`, one record is produced into every partition after the topics are
 * created and after every start, before the stop that follows: a stop then closes every partition opened
 * (Ledgerline opens partitions on first use, so without it a stop has few open logs to close), as a broker
 * whose producers touched all of them would. "Listen" is the first usable answer: ApiVersions, then Metadata listing the
 * broker (bench/lib/restartable.ts). Ledgerline listens before all its partitions are open (it opens 256
 * and the internal topics first, the rest in the background), Kafka only after loading its logs, so both
 * figures are reported. Goals: listen < 5 s, stop < 5 s, idle RSS < 1 GiB.
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { KafkaClient } from '../src/client/index.js';
import type { BrokerKind } from './lib/brokers.js';
import { positiveOption, logger } from './lib/cli.js';
import { hostInfo, runId } from './lib/report.js';
import type { BrokerOutcome, Figure } from './lib/restart-report.js';
import { figureTable, loadLine, outcomeLines, push, writeJson } from './lib/restart-report.js';
import { RestartableBroker } from './lib/restartable.js';
import { settleRss } from './lib/settle.js';
import { createTopicsBatched, topicBatches, topicName, waitReady } from './lib/topics.js';
import { buildRecordBatchSync } from '../protocol/records/builder.js';
import { errorByCode } from '../protocol/error-codes.js';

const HELP = `Usage: npm run bench -- partitions [options]

  --topics N          topics to create (default 1000)
  --partitions P      partitions per topic (default 100; at most 10000)
  --rounds R          graceful-stop and SIGKILL restarts per broker (default 3)
  --brokers LIST      ledgerline,kafka (default both)
  --kafka-heap MiB    Kafka heap (default 1024, as kafka-server-start.sh)
  --settle-seconds S  deadline for idle RSS to stop moving after a start (default 60)
  --ready-seconds S   deadline for every partition to have a leader after a start (default 600)
  --touch             produce one record into every partition before each graceful stop, so that
                      every partition is open (and has a ledger to seal) when the broker stops
  --no-write          print the summary only`;

const GIB = 1024;

export const FIGURES: Figure[] = [
  { key: 'listenFresh', label: 'time to listen on a fresh directory (no topics)', unit: 's' },
  { key: 'create', label: 'create the topics (fresh broker)', unit: 's' },
  { key: 'listenGraceful', label: 'time to listen after a graceful stop', unit: 's', goal: { max: 5000, text: '< 5 s' } },
  { key: 'readyGraceful', label: 'every partition led, after a graceful stop', unit: 's' },
  { key: 'listenKill', label: 'time to listen after SIGKILL', unit: 's', goal: { max: 5000, text: '< 5 s' } },
  { key: 'readyKill', label: 'every partition led, after SIGKILL', unit: 's' },
  { key: 'stop', label: 'graceful stop (SIGTERM until exit)', unit: 's', goal: { max: 5000, text: '< 5 s' } },
  { key: 'idleRss', label: 'idle RSS after a restart', unit: 'MiB', goal: { max: GIB, text: '< 1 GiB' } },
];

export default async function partitions(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      topics: { type: 'string' },
      partitions: { type: 'string' },
      rounds: { type: 'string' },
      brokers: { type: 'string' },
      'kafka-heap': { type: 'string' },
      'settle-seconds': { type: 'string' },
      'ready-seconds': { type: 'string' },
      'no-write': { type: 'boolean' },
      touch: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const topics = Math.floor(positiveOption(values, 'topics', 1000));
  const perTopic = Math.floor(positiveOption(values, 'partitions', 100));
  const rounds = Math.floor(positiveOption(values, 'rounds', 3));
  const kafkaHeapMiB = positiveOption(values, 'kafka-heap', 1024);
  const settleMs = positiveOption(values, 'settle-seconds', 60) * 1000;
  const readyMs = positiveOption(values, 'ready-seconds', 600) * 1000;
  const kinds = (values.brokers ?? 'ledgerline,kafka').split(',').map((b) => b.trim());
  for (const k of kinds) if (k !== 'ledgerline' && k !== 'kafka') throw new Error(`--brokers: unknown broker ${k}`);
  topicBatches(topics, perTopic); // refuses a shape no CreateTopics request can make, before any broker starts
  const total = topics * perTopic;
  const touch = values.touch === true;
  const log = logger();
  const date = new Date();
  const warnings = limitWarnings(total, kinds as BrokerKind[]);
  for (const w of warnings) log(`warning: ${w}`);

  const outcomes: BrokerOutcome[] = [];
  for (const kind of kinds as BrokerKind[]) {
    const outcome: BrokerOutcome = { kind, samples: {}, error: null, notes: [] };
    outcomes.push(outcome);
    const broker = new RestartableBroker(kind, { kafkaHeapMiB, log, listenDeadlineMs: readyMs, stopDeadlineMs: 120_000 });
    const ready = async (what: string): Promise<number> => {
      const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-partitions', requestTimeoutMs: 120_000 });
      try {
        return await waitReady(client, 'bench-p', total, readyMs);
      } catch (e) {
        throw new Error(`${what}: ${(e as Error).message}`);
      } finally {
        await client.close();
      }
    };
    try {
      log(`[${kind}] fresh start`);
      const fresh = await broker.start();
      push(outcome.samples, 'listenFresh', fresh);
      log(`[${kind}] listening after ${(fresh / 1000).toFixed(2)} s; creating ${topics} topics × ${perTopic} partitions`);
      const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-partitions', requestTimeoutMs: 180_000 });
      try {
        const created = await createTopicsBatched(client, 'bench-p', topics, perTopic, (l) => log(`[${kind}] ${l}`));
        const led = await waitReady(client, 'bench-p', total, readyMs);
        push(outcome.samples, 'create', created + led);
        log(`[${kind}] ${total} partitions created and led after ${((created + led) / 1000).toFixed(2)} s`);
        if (touch) log(`[${kind}] one record produced into each of ${total} partitions in ${((await touchAll(client, topics, perTopic)) / 1000).toFixed(2)} s`);
      } finally {
        await client.close();
      }
      for (let round = 1; round <= rounds; round++) {
        const stop = await broker.stop();
        push(outcome.samples, 'stop', stop.ms);
        if (stop.forced) outcome.notes.push(`round ${round}: the graceful stop did not finish within 120 s and was killed`);
        const listen = await broker.start();
        push(outcome.samples, 'listenGraceful', listen);
        const led = listen + (await ready('after a graceful stop'));
        push(outcome.samples, 'readyGraceful', led);
        const idle = await settleRss(() => broker.rssMiB(), { deadlineMs: settleMs });
        push(outcome.samples, 'idleRss', idle.rssMiB);
        if (!idle.settled) outcome.notes.push(`round ${round}: RSS had not settled after ${settleMs / 1000} s (last window's median reported)`);
        log(
          `[${kind}] round ${round}: stop ${(stop.ms / 1000).toFixed(2)} s, listen ${(listen / 1000).toFixed(2)} s, all led ${(led / 1000).toFixed(2)} s, ` +
            `idle RSS ${idle.rssMiB.toFixed(0)} MiB (${idle.settled ? `settled after ${(idle.ms / 1000).toFixed(1)} s` : 'not settled'})`,
        );
        await broker.kill();
        const listenKill = await broker.start();
        push(outcome.samples, 'listenKill', listenKill);
        const ledKill = listenKill + (await ready('after SIGKILL'));
        push(outcome.samples, 'readyKill', ledKill);
        log(`[${kind}] round ${round}: after SIGKILL listen ${(listenKill / 1000).toFixed(2)} s, all led ${(ledKill / 1000).toFixed(2)} s`);
        if (touch) {
          const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-partitions', requestTimeoutMs: 180_000 });
          try {
            log(`[${kind}] round ${round}: one record produced into every partition in ${((await touchAll(client, topics, perTopic)) / 1000).toFixed(2)} s`);
          } finally {
            await client.close();
          }
        }
      }
      const last = await broker.stop();
      push(outcome.samples, 'stop', last.ms);
      if (last.forced) outcome.notes.push('the last graceful stop did not finish within 120 s and was killed');
    } catch (e) {
      outcome.error = `${(e as Error).message}${broker.logTail() ? ` — log: ${broker.logTail()}` : ''}`;
      log(`[${kind}] ${outcome.error}`);
    } finally {
      await broker.dispose();
    }
  }

  const summary = [
    `## partitions: ${topics.toLocaleString('en')} topics × ${perTopic.toLocaleString('en')} partitions = ${total.toLocaleString('en')} on one node, ${rounds} round${rounds === 1 ? '' : 's'}${touch ? ', one record produced into every partition before each graceful stop (--touch)' : ''}`,
    '',
    figureTable(FIGURES, outcomes),
    '',
    'Medians, with min–max over the rounds. "Listen": first ApiVersions + Metadata answer that lists the broker, timed from the spawn. ' +
      '"Every partition led": until one Metadata answer gives every partition a leader and no error. ✓/✗: the median against the goal. ' +
      loadLine(hostInfo().loadAverageBefore, hostInfo().cpus),
    ...outcomeLines(outcomes),
    ...warnings.map((w) => `- ${w}`),
  ].join('\n');
  console.log(summary);
  if (!values['no-write']) {
    const path = writeJson(runId('partitions', `${topics}x${perTopic}`, date), {
      kind: 'ledgerline-bench-partitions',
      version: 1,
      date: date.toISOString(),
      command: `npm run bench -- partitions ${args.join(' ')}`.trim(),
      host: hostInfo(),
      topics,
      partitionsPerTopic: perTopic,
      rounds,
      touch,
      kafkaHeapMiB,
      outcomes,
      warnings,
    });
    log(`wrote ${path}`);
  }
}

/** Partitions named per Produce request by `touchAll`. */
const TOUCH_PARTITIONS_PER_REQUEST = 1000;

/**
 * Produces one small record (acks=all) into every partition of the benchmark's topics, a request of
 * TOUCH_PARTITIONS_PER_REQUEST partitions at a time; throws on the first partition answered with an error.
 * Resolves with the ms taken.
 */
export async function touchAll(client: KafkaClient, topics: number, perTopic: number): Promise<number> {
  const batch = buildRecordBatchSync([{ value: Buffer.from('touch') }]);
  const entries = [];
  for (let t = 0; t < topics; t++) for (let p = 0; p < perTopic; p++) entries.push({ topic: topicName('bench-p', t), partition: p, records: batch });
  const t0 = performance.now();
  for (let i = 0; i < entries.length; i += TOUCH_PARTITIONS_PER_REQUEST) {
    const results = await client.produce(entries.slice(i, i + TOUCH_PARTITIONS_PER_REQUEST), { acks: -1, timeoutMs: 120_000 });
    for (const r of results) {
      if (r.errorCode !== 0) throw new Error(`Produce ${r.topic}-${r.partition}: ${errorByCode(r.errorCode).name}${r.errorMessage ? ` (${r.errorMessage})` : ''}`);
    }
  }
  return performance.now() - t0;
}

/** Per-process limits a full-size run may meet: Kafka keeps an mmap per index file and a descriptor per segment. */
export function limitWarnings(totalPartitions: number, kinds: readonly BrokerKind[]): string[] {
  const out: string[] = [];
  if (!kinds.includes('kafka')) return out;
  const maps = readNumber('/proc/sys/vm/max_map_count');
  // Each Kafka partition's active segment maps its offset index and its time index.
  if (maps !== null && totalPartitions * 2 > maps * 0.9) {
    out.push(`Kafka maps 2 index files per partition: ${totalPartitions * 2} maps against vm.max_map_count ${maps}; it may fail with "Map failed" (raise it with sysctl)`);
  }
  // And keeps each active segment's log file open.
  const files = openFilesLimit();
  if (files !== null && totalPartitions > files * 0.9) {
    out.push(`Kafka keeps a file open per partition: ${totalPartitions} against the open-files limit ${files}; raise it (ulimit -n) or Kafka may fail with "Too many open files"`);
  }
  return out;
}

function openFilesLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

function readNumber(path: string): number | null {
  try {
    return Number(readFileSync(path, 'utf8').trim());
  } catch {
    return null;
  }
}
