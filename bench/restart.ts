/**
 * `npm run bench -- restart [--gib 1,5] [options]`: does restart time depend on the data written? Per
 * broker (Ledgerline, then Apache Kafka 4.4.0, KRaft, one combined node, each on its own data under the
 * same temp directory): one topic of P partitions, then for each volume in increasing order
 *
 *   idempotent producers write up to that volume (bench/lib/idempotent.ts)
 *   R rounds of:  SIGKILL → start: time to listen, time until every partition is led, records kept
 *                 graceful stop (SIGTERM until exit) → start: time to listen, time until every partition is led
 *
 * Round 1's SIGKILL comes straight after the last acknowledgement, so the broker recovers what it had not
 * checkpointed (Kafka re-reads the segments past its recovery point, log.flush.offset.checkpoint.interval.ms
 * 60 s by default); later rounds kill a broker that has just restarted. "Records kept": the log end offsets
 * summed against the records acknowledged. Free disk is checked first: the largest volume, plus a quarter
 * and 2 GiB of headroom, must fit (the brokers run one after the other and each deletes its data after).
 */
import { execFileSync } from 'node:child_process';
import { statfsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { errorByCode } from '../protocol/error-codes.js';
import { KafkaClient, OffsetSpec } from '../src/client/index.js';
import type { BrokerKind } from './lib/brokers.js';
import { dataRoot } from './lib/brokers.js';
import { logger, positiveOption } from './lib/cli.js';
import { writeIdempotent } from './lib/idempotent.js';
import { hostInfo, runId } from './lib/report.js';
import type { BrokerOutcome, Figure } from './lib/restart-report.js';
import { figureTable, loadLine, outcomeLines, push, writeJson } from './lib/restart-report.js';
import { RestartableBroker } from './lib/restartable.js';
import { spread } from './lib/settle.js';
import { formatBytes } from './lib/stats.js';
import { waitReady } from './lib/topics.js';

const HELP = `Usage: npm run bench -- restart [options]

  --gib LIST          data volumes in GiB, written cumulatively (default 1,5)
  --partitions P      partitions of the topic (default 8)
  --producers N       idempotent producers, each on its own connection (default 4)
  --in-flight K       requests in flight per producer, at most 5 (default 5)
  --record-size B     record value bytes (default 1024)
  --batch-kib KiB     record batch size (default 64)
  --rounds R          SIGKILL and graceful restarts per volume (default 2)
  --brokers LIST      ledgerline,kafka (default both)
  --kafka-heap MiB    Kafka heap (default 1024)
  --no-write          print the summary only`;

const GiB = 2 ** 30;
const TOPIC = 'bench-restart';

/** `--gib 1,5` → [1, 5]: positive sizes, sorted, duplicates dropped. */
export function parseGibList(text: string): number[] {
  const xs = text.split(',').map((s) => s.trim()).filter((s) => s.length > 0).map(Number);
  if (xs.length === 0 || xs.some((x) => !(x > 0) || !Number.isFinite(x))) throw new Error(`--gib takes positive sizes in GiB separated by commas, got ${text}`);
  return [...new Set(xs)].sort((a, b) => a - b);
}

/** Bytes of free disk a run needs: the largest volume plus a quarter (broker overhead) and 2 GiB. */
export function diskNeeded(volumesGiB: readonly number[]): number {
  return Math.ceil(Math.max(...volumesGiB) * GiB * 1.25 + 2 * GiB);
}

/** Null when `free` bytes are enough for the volumes, else the refusal. */
export function diskRefusal(volumesGiB: readonly number[], free: number, dir: string): string | null {
  const need = diskNeeded(volumesGiB);
  if (free >= need) return null;
  return (
    `not enough free disk in ${dir}: ${formatBytes(free)} free, a run up to ${Math.max(...volumesGiB)} GiB needs ${formatBytes(need)} ` +
    `(the volume, a quarter more for the brokers' own files, and 2 GiB of headroom); choose smaller --gib sizes or free some space`
  );
}

export function figuresFor(volumesGiB: readonly number[]): Figure[] {
  // The baseline: the same broker on an empty directory, so what the data adds stands out.
  const out: Figure[] = [{ key: 'listenFresh', label: 'no data: time to listen on a fresh directory', unit: 's' }];
  for (const v of volumesGiB) {
    const at = `${v} GiB`;
    out.push(
      { key: `write@${v}`, label: `${at}: write (idempotent, acks=all)`, unit: 'MiB/s' },
      { key: `listenKill@${v}`, label: `${at}: time to listen after SIGKILL`, unit: 's', goal: { max: 5000, text: '< 5 s' } },
      { key: `readyKill@${v}`, label: `${at}: every partition led after SIGKILL`, unit: 's' },
      { key: `stop@${v}`, label: `${at}: graceful stop`, unit: 's', goal: { max: 5000, text: '< 5 s' } },
      { key: `listenGraceful@${v}`, label: `${at}: time to listen after a graceful stop`, unit: 's', goal: { max: 5000, text: '< 5 s' } },
      { key: `readyGraceful@${v}`, label: `${at}: every partition led after a graceful stop`, unit: 's' },
      { key: `disk@${v}`, label: `${at}: data directory on disk`, unit: 'MiB' },
    );
  }
  return out;
}

function du(dir: string): number | null {
  try {
    return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
  } catch {
    return null;
  }
}

export default async function restart(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      gib: { type: 'string' },
      partitions: { type: 'string' },
      producers: { type: 'string' },
      'in-flight': { type: 'string' },
      'record-size': { type: 'string' },
      'batch-kib': { type: 'string' },
      rounds: { type: 'string' },
      brokers: { type: 'string' },
      'kafka-heap': { type: 'string' },
      'no-write': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(HELP);
    return;
  }
  const volumes = parseGibList(values.gib ?? '1,5');
  const partitions = Math.floor(positiveOption(values, 'partitions', 8));
  const producers = Math.floor(positiveOption(values, 'producers', 4));
  const inFlight = Math.floor(positiveOption(values, 'in-flight', 5));
  const recordSize = Math.floor(positiveOption(values, 'record-size', 1024));
  const batchBytes = positiveOption(values, 'batch-kib', 64) * 1024;
  const recordsPerBatch = Math.max(1, Math.floor(batchBytes / recordSize));
  const rounds = Math.floor(positiveOption(values, 'rounds', 2));
  const kafkaHeapMiB = positiveOption(values, 'kafka-heap', 1024);
  const kinds = (values.brokers ?? 'ledgerline,kafka').split(',').map((b) => b.trim());
  for (const k of kinds) if (k !== 'ledgerline' && k !== 'kafka') throw new Error(`--brokers: unknown broker ${k}`);
  const log = logger();
  const date = new Date();

  const root = dataRoot();
  const fs = statfsSync(root);
  const refusal = diskRefusal(volumes, fs.bavail * fs.bsize, root);
  if (refusal) {
    console.error(`restart: ${refusal}`);
    process.exitCode = 2;
    return;
  }

  const outcomes: BrokerOutcome[] = [];
  for (const kind of kinds as BrokerKind[]) {
    const outcome: BrokerOutcome = { kind, samples: {}, error: null, notes: [] };
    outcomes.push(outcome);
    const broker = new RestartableBroker(kind, { kafkaHeapMiB, log, stopDeadlineMs: 120_000 });
    const connect = (): Promise<KafkaClient> =>
      KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-restart', connectionsPerBroker: producers + 1, requestTimeoutMs: 120_000 });
    const ready = async (listenMs: number): Promise<number> => {
      const client = await connect();
      try {
        return listenMs + (await waitReady(client, TOPIC, partitions, 600_000));
      } finally {
        await client.close();
      }
    };
    try {
      log(`[${kind}] fresh start`);
      push(outcome.samples, 'listenFresh', await broker.start());
      let client = await connect();
      const [created] = await client.createTopics([{ name: TOPIC, numPartitions: partitions }]);
      if (created!.errorCode !== 0) throw new Error(`cannot create ${TOPIC}: ${created!.errorMessage ?? created!.errorCode}`);
      await client.waitForTopics([TOPIC], { timeoutMs: 60_000 });
      await endOffsets(client, partitions);
      await client.close();
      const acked = new Array<number>(partitions).fill(0);
      let written = 0;
      for (const v of volumes) {
        client = await connect();
        log(`[${kind}] writing ${((v * GiB - written) / GiB).toFixed(2)} GiB to reach ${v} GiB`);
        const w = await writeIdempotent({ client, topic: TOPIC, partitions, producers, inFlight, recordSize, recordsPerBatch, bytes: v * GiB - written, leader: 1, laneBase: 1, log: (l) => log(`[${kind}] ${l}`) });
        await client.close();
        written += w.bytes;
        w.recordsPerPartition.forEach((n, p) => (acked[p]! += n));
        push(outcome.samples, `write@${v}`, w.bytes / 2 ** 20 / (w.ms / 1000));
        log(`[${kind}] ${formatBytes(w.bytes)} in ${(w.ms / 1000).toFixed(1)} s (${(w.bytes / 2 ** 20 / (w.ms / 1000)).toFixed(0)} MiB/s)`);
        const size = du(broker.dataDir);
        if (size !== null) push(outcome.samples, `disk@${v}`, size / 2 ** 20);
        for (let round = 1; round <= rounds; round++) {
          await broker.kill();
          const listenKill = await broker.start();
          push(outcome.samples, `listenKill@${v}`, listenKill);
          const readyKill = await ready(listenKill);
          push(outcome.samples, `readyKill@${v}`, readyKill);
          const kept = await keptRecords(await connect(), partitions);
          const total = acked.reduce((a, b) => a + b, 0);
          if (kept < total) outcome.notes.push(`${v} GiB, round ${round}: ${kept} of ${total} acknowledged records left after SIGKILL`);
          const stop = await broker.stop();
          push(outcome.samples, `stop@${v}`, stop.ms);
          if (stop.forced) outcome.notes.push(`${v} GiB, round ${round}: the graceful stop did not finish within 120 s and was killed`);
          const listen = await broker.start();
          push(outcome.samples, `listenGraceful@${v}`, listen);
          const readyGraceful = await ready(listen);
          push(outcome.samples, `readyGraceful@${v}`, readyGraceful);
          log(
            `[${kind}] ${v} GiB round ${round}: after SIGKILL listen ${(listenKill / 1000).toFixed(2)} s, all led ${(readyKill / 1000).toFixed(2)} s, ` +
              `${kept} of ${total} records kept; stop ${(stop.ms / 1000).toFixed(2)} s; after it listen ${(listen / 1000).toFixed(2)} s, all led ${(readyGraceful / 1000).toFixed(2)} s`,
          );
        }
      }
      await broker.stop();
    } catch (e) {
      outcome.error = `${(e as Error).message}${broker.logTail() ? ` — log: ${broker.logTail()}` : ''}`;
      log(`[${kind}] ${outcome.error}`);
    } finally {
      await broker.dispose();
    }
  }

  const summary = [
    `## restart: ${volumes.join(', ')} GiB written by ${producers} idempotent producers to ${partitions} partitions, ${rounds} round${rounds === 1 ? '' : 's'} per volume`,
    '',
    figureTable(figuresFor(volumes), outcomes),
    '',
    `Medians, with min–max over the rounds. Volumes are cumulative: each writes on top of the one before. Round 1's SIGKILL comes right after the last acknowledgement; later rounds kill a freshly restarted broker. ` +
      `"Listen": first ApiVersions + Metadata answer that lists the broker, timed from the spawn. Write: ${recordSize} B records, ${recordsPerBatch} per batch, ${inFlight} requests in flight per producer. ` +
      loadLine(hostInfo().loadAverageBefore, hostInfo().cpus),
    ...dependence(outcomes, volumes),
    ...outcomeLines(outcomes),
  ].join('\n');
  console.log(summary);
  if (!values['no-write']) {
    const path = writeJson(runId('restart', volumes.join('-') + 'GiB', date), {
      kind: 'ledgerline-bench-restart',
      version: 1,
      date: date.toISOString(),
      command: `npm run bench -- restart ${args.join(' ')}`.trim(),
      host: hostInfo(),
      volumesGiB: volumes,
      partitions,
      producers,
      inFlight,
      recordSize,
      recordsPerBatch,
      rounds,
      kafkaHeapMiB,
      outcomes,
    });
    log(`wrote ${path}`);
  }
}

/** Per broker: the median time to listen at the largest volume ÷ at the smallest, after SIGKILL and after a graceful stop. */
export function dependence(outcomes: readonly BrokerOutcome[], volumes: readonly number[]): string[] {
  if (volumes.length < 2) return [];
  const lo = volumes[0]!;
  const hi = volumes[volumes.length - 1]!;
  const out: string[] = [];
  for (const o of outcomes) {
    const growth = (what: string): string => {
      const a = spread(o.samples[`${what}@${lo}`] ?? []);
      const b = spread(o.samples[`${what}@${hi}`] ?? []);
      return a && b && a.median > 0 ? `${(b.median / a.median).toFixed(2)}×` : '–';
    };
    out.push(`- ${o.kind}: time to listen at ${hi} GiB ÷ at ${lo} GiB: ${growth('listenKill')} after SIGKILL, ${growth('listenGraceful')} after a graceful stop`);
  }
  return out;
}

/**
 * The topic's log end offsets, once every partition's leader answers ListOffsets without error (up to 60 s):
 * Kafka's Metadata can name a leader before that broker has created the partition, and answers
 * NOT_LEADER_OR_FOLLOWER meanwhile, which a real client retries.
 */
async function endOffsets(client: KafkaClient, partitions: number): Promise<number[]> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const res = await client.listOffsets(Array.from({ length: partitions }, (_, p) => ({ topic: TOPIC, partition: p, timestamp: OffsetSpec.LATEST })));
    const bad = res.find((r) => r.errorCode !== 0);
    if (!bad) return Array.from({ length: partitions }, (_, p) => Number(res.find((r) => r.partition === p)!.offset));
    if (Date.now() > deadline) throw new Error(`ListOffsets ${TOPIC}-${bad.partition}: ${errorByCode(bad.errorCode).name} for 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The log end offsets of the topic summed: the records a restarted broker kept. */
async function keptRecords(client: KafkaClient, partitions: number): Promise<number> {
  try {
    return (await endOffsets(client, partitions)).reduce((a, b) => a + b, 0);
  } finally {
    await client.close();
  }
}
