/**
 * `npm run bench -- mirror [options]`: geo-replication's throughput and lag (src/replication/), between two
 * Ledgerline brokers on this machine: a source, and a destination whose cluster link points at the source and whose
 * mirror topics copy the source's (bench/lib/mirror-brokers.ts). Each pair starts both brokers fresh, then:
 *
 *   local      the load generator (bench/lib/load.ts) writes a backlog (default 1 GiB of 1 KiB records into 16
 *              partitions, acks=all, max rate) into the source: local produce MiB/s
 *   read       the backlog fetched back from the source in the replicator's request shape (one connection, one
 *              Fetch of every partition at 1 MiB each, READ_UNCOMMITTED, the next only after the last answer),
 *              nothing appended: what the fetch side alone allows (--no-read skips it)
 *   mirror     PUT /v1/links/bulk, then POST /v1/mirrors for the full topic, timed until every partition's
 *              mirror position (GET /v1/mirrors/<topic>, polled every 25 ms) is the source's end offset: mirror
 *              MiB/s, and the destination's CPU seconds over that time. Mirror ÷ local: goal ≥ 0.80
 *   concurrent a new topic, mirrored (link `live`) before anything is written, then a max-rate produce of the
 *              same size: the mirror's throughput in the same window, how far behind it was when the producers
 *              stopped, and how long it took to catch up (--no-concurrent skips it)
 *   lag        a new topic, mirrored (link `lag`) from the start, written at 50% of this pair's local max for 30 s
 *              by paced producers that note each batch's end offset and acknowledgement time; a separate client
 *              long-polls the destination (Fetch, or ListOffsets every few ms) for each partition's high
 *              watermark: lag = seen on the destination − acknowledged by the source, per batch
 *              (bench/lib/mirror-lag.ts). Goal: p99 < 100 ms (--no-lag skips it)
 *
 * Peak RSS (VmHWM) of both brokers is read when the pair stops. Every phase uses its own link, so a phase's
 * replicator fetches only its own topic. The order within a pair is fixed (the mirror needs the backlog); pairs
 * repeat it on fresh brokers, and the spread over pairs is reported with every median.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, statfsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { errorByCode } from '../protocol/error-codes.js';
import { RecordBatch, frameEntryAt } from '../protocol/records/index.js';
import { KafkaClient, OffsetSpec } from '../src/client/index.js';
import type { BatchTemplate } from './lib/batches.js';
import { buildTemplate } from './lib/batches.js';
import { dataRoot } from './lib/brokers.js';
import { logger, positiveOption } from './lib/cli.js';
import { measureDisk, measureLoopback } from './lib/limits.js';
import type { TopicPartition } from './lib/load.js';
import { offsetsFor, runLive, tpKey } from './lib/load.js';
import type { MirrorNode, MirrorPair } from './lib/mirror-brokers.js';
import { createMirror, mirrorPartitions, putLink, startMirrorPair, waitMirrorLive } from './lib/mirror-brokers.js';
import type { LagPoll } from './lib/mirror-lag.js';
import { LagTracker, pollHighWatermarks, producePaced } from './lib/mirror-lag.js';
import type { MirrorFile, PairFigures } from './lib/mirror-report.js';
import { mirrorMarkdown, mirrorRatio, rateOf } from './lib/mirror-report.js';
import { hostInfo, runId } from './lib/report.js';
import { formatBytes, median } from './lib/stats.js';
import type { Workload } from './lib/workload.js';
import { RESULTS_DIR, parseBytes, parseWorkload } from './lib/workload.js';

const HELP = `Usage: npm run bench -- mirror [options]

  --pairs N             pairs of fresh source and destination brokers (default 3)
  --backlog SIZE        backlog written, then mirrored (default 1GiB)
  --concurrent-backlog SIZE   produced while a mirror copies it (default: --backlog)
  --partitions P        partitions of each topic (default 16)
  --record-size B       record value bytes (default 1024)
  --producers N         producer connections (default 4; 5 in flight each, 4 partitions per request, 64 KiB batches)
  --lag-seconds S       paced produce for the lag figures (default 30)
  --lag-percent P       its rate, % of the pair's local max (default 50)
  --lag-rate MiB/s      its rate, the same for every pair instead (comparing two builds: a pair's local max
                        varies with the machine's noise, and the lag with the rate)
  --lag-poll MODE       fetch (long-poll Fetch on the destination, default) or list-offsets
  --poll-ms MS          list-offsets: pause between polls (default 5)
  --no-read             skip the source fetch alone
  --no-concurrent       skip produce-while-mirroring
  --no-lag              skip the lag figures
  --no-limits           skip the loopback and disk limits
  --limits-seconds S    seconds per limit measurement (default 5)
  --profile DIR         pair 1: both brokers run with --cpu-prof, profiles in DIR/source and DIR/destination
  --no-write            print the summary only`;

const MiB = 2 ** 20;
const GiB = 2 ** 30;
const STATUS_POLL_MS = 25;
/** A mirror that copies nothing for this long has stalled: the pair fails with what the endpoint says. */
const STALL_MS = 60_000;
/** After the paced producers stop, how long batches may still arrive on the destination. */
const LAG_DRAIN_MS = 30_000;

interface Options {
  pairs: number;
  backlogBytes: number;
  concurrentBytes: number;
  partitions: number;
  recordSize: number;
  producers: number;
  lagSeconds: number;
  lagPercent: number;
  /** --lag-rate: a fixed paced rate in MiB/s, or null for lagPercent of each pair's local max. */
  lagMiBps: number | null;
  lagPoll: LagPoll;
  pollMs: number;
  read: boolean;
  concurrent: boolean;
  lag: boolean;
  limits: boolean;
  limitsSeconds: number;
  profile: string | null;
  write: boolean;
}

function options(args: string[]): Options | null {
  const { values } = parseArgs({
    args,
    options: {
      pairs: { type: 'string' },
      backlog: { type: 'string' },
      'concurrent-backlog': { type: 'string' },
      partitions: { type: 'string' },
      'record-size': { type: 'string' },
      producers: { type: 'string' },
      'lag-seconds': { type: 'string' },
      'lag-percent': { type: 'string' },
      'lag-rate': { type: 'string' },
      'lag-poll': { type: 'string' },
      'poll-ms': { type: 'string' },
      'no-read': { type: 'boolean' },
      'no-concurrent': { type: 'boolean' },
      'no-lag': { type: 'boolean' },
      'no-limits': { type: 'boolean' },
      'limits-seconds': { type: 'string' },
      profile: { type: 'string' },
      'no-write': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) return null;
  const int = (name: string, fallback: number): number => {
    const n = positiveOption(values, name, fallback);
    if (!Number.isInteger(n)) throw new Error(`--${name} must be a positive integer, got ${n}`);
    return n;
  };
  const backlogBytes = values.backlog === undefined ? GiB : parseBytes(values.backlog);
  const lagPoll = values['lag-poll'] ?? 'fetch';
  if (lagPoll !== 'fetch' && lagPoll !== 'list-offsets') throw new Error(`--lag-poll takes fetch or list-offsets, got ${lagPoll}`);
  const pollMs = values['poll-ms'] === undefined ? 5 : Number(values['poll-ms']);
  if (!(pollMs >= 0)) throw new Error(`--poll-ms must be ≥ 0, got ${values['poll-ms']}`);
  const lagPercent = positiveOption(values, 'lag-percent', 50);
  if (lagPercent > 100) throw new Error(`--lag-percent must be at most 100, got ${lagPercent}`);
  if (values['lag-rate'] !== undefined && values['lag-percent'] !== undefined) throw new Error('--lag-rate and --lag-percent: one or the other');
  const lagMiBps = values['lag-rate'] === undefined ? null : positiveOption(values, 'lag-rate', 1);
  if (!(backlogBytes > 0)) throw new Error('--backlog must be positive');
  return {
    pairs: int('pairs', 3),
    backlogBytes,
    concurrentBytes: values['concurrent-backlog'] === undefined ? backlogBytes : parseBytes(values['concurrent-backlog']),
    partitions: int('partitions', 16),
    recordSize: int('record-size', 1024),
    producers: int('producers', 4),
    lagSeconds: positiveOption(values, 'lag-seconds', 30),
    lagPercent,
    lagMiBps,
    lagPoll,
    pollMs,
    read: !values['no-read'],
    concurrent: !values['no-concurrent'],
    lag: !values['no-lag'],
    limits: !values['no-limits'],
    limitsSeconds: positiveOption(values, 'limits-seconds', 5),
    profile: values.profile === undefined ? null : resolve(values.profile),
    write: !values['no-write'],
  };
}

/** The load generator's shape: that of 1-topic-16-partitions-1kb, produce only. */
function workloadOf(o: Options): Workload {
  return parseWorkload({
    name: 'mirror',
    topics: 1,
    partitionsPerTopic: o.partitions,
    recordSize: o.recordSize,
    producers: o.producers,
    consumers: 0,
    rate: 'max',
    acks: -1,
    batchBytes: 65536,
    partitionsPerRequest: 4,
    maxInFlight: 5,
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function alive(node: MirrorNode): void {
  const why = node.exited();
  if (why) throw new Error(`the ${node.role} broker ${why} (log: ${node.logFile})`);
}

function cpuDelta(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : b - a;
}

function partitionsOf(topic: string, n: number): TopicPartition[] {
  return Array.from({ length: n }, (_, partition) => ({ topic, partition }));
}

async function createTopic(client: KafkaClient, topic: string, partitions: number): Promise<void> {
  const [r] = await client.createTopics([{ name: topic, numPartitions: partitions, replicationFactor: -1 }], { timeoutMs: 60_000 });
  if (r!.errorCode !== 0) throw new Error(`CreateTopics ${topic}: ${errorByCode(r!.errorCode).name} ${r!.errorMessage ?? ''}`);
  await client.waitForTopics([topic], { timeoutMs: 60_000 });
}

/** Sum of a topic's end offsets (records: the benchmark writes no control batches). */
async function endOffsets(client: KafkaClient, parts: readonly TopicPartition[]): Promise<number[]> {
  const ends = await offsetsFor(client, parts, OffsetSpec.LATEST);
  return parts.map((tp) => Number(ends.get(tpKey(tp)) ?? 0n));
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * Polls the mirror's positions until every partition reaches `ends`; resolves with the time it completed and, per
 * partition, the sizes of the steps its position moved by. Fails when nothing moves for STALL_MS.
 */
async function waitCopied(adminUrl: string, topic: string, ends: readonly number[], nodes: readonly MirrorNode[]): Promise<{ doneAt: number; firstCopyAt: number | null; steps: number[][] }> {
  const last = new Array<number>(ends.length).fill(-1);
  const steps: number[][] = ends.map(() => []);
  let firstCopyAt: number | null = null;
  let movedAt = performance.now();
  let lastError: string | null = null;
  for (;;) {
    const status = await mirrorPartitions(adminUrl, topic).catch((e: unknown) => {
      lastError = (e as Error).message;
      return [];
    });
    const at = performance.now();
    for (const s of status) {
      if (s.error) lastError = s.error;
      const prev = last[s.partition];
      if (prev === undefined || s.position === prev) continue;
      if (prev >= 0) steps[s.partition]!.push(s.position - prev);
      else if (s.position > 0) steps[s.partition]!.push(s.position);
      last[s.partition] = s.position;
      movedAt = at;
      if (firstCopyAt === null && s.position > 0) firstCopyAt = at;
    }
    if (status.length >= ends.length && ends.every((e, p) => last[p]! >= e)) return { doneAt: at, firstCopyAt, steps };
    for (const n of nodes) alive(n);
    if (at - movedAt > STALL_MS) throw new Error(`mirror ${topic} copied nothing for ${STALL_MS / 1000} s (${sum(last.map((x) => Math.max(0, x)))} of ${sum(ends)} records${lastError ? `; ${lastError}` : ''})`);
    await sleep(STATUS_POLL_MS);
  }
}

/** The backlog fetched back from the source as the replicator fetches (see the top of this file). */
async function fetchAlone(bootstrap: string, topic: string, ends: readonly number[]): Promise<{ seconds: number; fetches: number; records: number }> {
  const client = await KafkaClient.connect({ bootstrap, clientId: 'ledgerline-bench-mirror-read', requestTimeoutMs: 60_000 });
  try {
    await client.waitForTopics([topic]);
    const next = ends.map(() => 0n);
    let fetches = 0;
    let records = 0;
    const t0 = performance.now();
    while (ends.some((e, p) => next[p]! < BigInt(e))) {
      const results = await client.fetch(
        ends.map((_, p) => ({ topic, partition: p, offset: next[p]!, maxBytes: 1024 * 1024 })),
        { maxWaitMs: 500, minBytes: 1, maxBytes: 50 * MiB, isolationLevel: 0 },
      );
      fetches++;
      for (const r of results) {
        if (r.errorCode !== 0) throw new Error(`fetch ${topic}-${r.partition}: ${errorByCode(r.errorCode).name}`);
        const buf = r.records;
        if (!buf) continue;
        let pos = 0;
        for (;;) {
          const span = frameEntryAt(buf, pos);
          if (span === null) break;
          pos = span.end;
          const b = RecordBatch.unchecked(buf.subarray(span.start, span.end));
          if (b.lastOffset < next[r.partition]!) continue;
          records += b.recordCount;
          next[r.partition] = b.lastOffset + 1n;
        }
      }
    }
    return { seconds: (performance.now() - t0) / 1000, fetches, records };
  } finally {
    await client.close();
  }
}

interface PairContext {
  o: Options;
  workload: Workload;
  template: BatchTemplate;
  brokers: MirrorPair;
  figures: PairFigures;
  log: (l: string) => void;
}

async function runPair(c: PairContext): Promise<void> {
  const { o, workload, template, figures, log } = c;
  const { source, destination } = c.brokers;
  const adminUrl = destination.adminUrl!;
  const nodes = [source, destination];
  const client = await KafkaClient.connect({ bootstrap: source.bootstrap, clientId: 'ledgerline-bench-mirror', connectionsPerBroker: o.producers, requestTimeoutMs: 60_000 });
  try {
    // ---- local produce: the backlog, at max rate, into the source
    const bulk = 'mirror-bulk';
    await createTopic(client, bulk, o.partitions);
    const bulkParts = partitionsOf(bulk, o.partitions);
    log(`local produce: ${formatBytes(o.backlogBytes)} into ${bulk} at max rate`);
    const s0 = source.cpuSeconds();
    const t0 = performance.now();
    const produced = await runLive({ client, workload, template, partitions: bulkParts, rate: null, durationMs: 24 * 3600 * 1000, warmupMs: 0, produceOnly: true, stopAfterBytes: o.backlogBytes, log });
    const t1 = performance.now();
    const s1 = source.cpuSeconds();
    alive(source);
    if (Object.keys(produced.errors).length > 0) log(`local produce errors: ${JSON.stringify(produced.errors)}`);
    const ends = await endOffsets(client, bulkParts);
    const bytes = sum(ends) * o.recordSize;
    figures.local = { ...rateOf(bytes, (t1 - t0) / 1000), sourceCpuSeconds: cpuDelta(s0, s1), produceP99Ms: produced.produceLatency.p99, loadGenCpuPercent: produced.clientCpuPercent };
    log(`local produce ${figures.local.mibPerSec.toFixed(1)} MiB/s (${formatBytes(bytes)} in ${figures.local.seconds.toFixed(1)} s)`);

    // ---- the same bytes fetched alone, in the replicator's request shape
    if (o.read) {
      const r = await fetchAlone(source.bootstrap, bulk, ends);
      if (r.records !== sum(ends)) throw new Error(`the source fetch read ${r.records} records of ${sum(ends)}`);
      figures.sourceRead = { ...rateOf(bytes, r.seconds), fetches: r.fetches };
      log(`source fetch alone ${figures.sourceRead.mibPerSec.toFixed(1)} MiB/s (${r.fetches} fetches)`);
    }

    // ---- mirror the full topic
    await putLink(adminUrl, 'bulk', source.bootstrap);
    log(`mirror: POST /v1/mirrors ${bulk}`);
    const d0 = destination.cpuSeconds();
    const m0 = source.cpuSeconds();
    const p0 = performance.now();
    await createMirror(adminUrl, bulk, 'bulk');
    const copied = await waitCopied(adminUrl, bulk, ends, nodes);
    const d1 = destination.cpuSeconds();
    const m1 = source.cpuSeconds();
    const dest = await KafkaClient.connect({ bootstrap: destination.bootstrap, clientId: 'ledgerline-bench-mirror-check' });
    try {
      const mirrored = await endOffsets(dest, bulkParts);
      const wrong = mirrored.findIndex((e, p) => e !== ends[p]);
      if (wrong >= 0) throw new Error(`${bulk}-${wrong}: the destination's high watermark is ${mirrored[wrong]}, the source's end ${ends[wrong]}`);
    } finally {
      await dest.close();
    }
    const perPartitionSteps = copied.steps.map((s) => s.length);
    const allSteps = copied.steps.flat();
    figures.mirror = {
      ...rateOf(bytes, (copied.doneAt - p0) / 1000),
      firstCopyMs: copied.firstCopyAt === null ? Number.NaN : copied.firstCopyAt - p0,
      destinationCpuSeconds: cpuDelta(d0, d1),
      sourceCpuSeconds: cpuDelta(m0, m1),
      steps: median(perPartitionSteps),
      medianStepMiB: allSteps.length > 0 ? (median(allSteps) * o.recordSize) / MiB : 0,
      pollMs: STATUS_POLL_MS,
    };
    log(`mirror ${figures.mirror.mibPerSec.toFixed(1)} MiB/s (${figures.mirror.seconds.toFixed(1)} s; ratio ${mirrorRatio(figures)!.toFixed(2)}); destination CPU ${figures.mirror.destinationCpuSeconds?.toFixed(1) ?? '?'} s`);

    // ---- produce at max rate into a topic mirrored from the start
    if (o.concurrent) {
      const live = 'mirror-live';
      await createTopic(client, live, o.partitions);
      const liveParts = partitionsOf(live, o.partitions);
      await putLink(adminUrl, 'live', source.bootstrap);
      await createMirror(adminUrl, live, 'live');
      await waitMirrorLive(adminUrl, live, o.partitions);
      log(`concurrent: ${formatBytes(o.concurrentBytes)} into ${live} at max rate while it is mirrored`);
      const cd0 = destination.cpuSeconds();
      const c0 = performance.now();
      await runLive({ client, workload, template, partitions: liveParts, rate: null, durationMs: 24 * 3600 * 1000, warmupMs: 0, produceOnly: true, stopAfterBytes: o.concurrentBytes, log });
      const c1 = performance.now();
      const atEnd = sum((await mirrorPartitions(adminUrl, live)).map((p) => p.position));
      const liveEnds = await endOffsets(client, liveParts);
      const done = await waitCopied(adminUrl, live, liveEnds, nodes);
      const cd1 = destination.cpuSeconds();
      const total = sum(liveEnds) * o.recordSize;
      const window = (c1 - c0) / 1000;
      figures.concurrent = {
        produce: rateOf(total, window),
        mirrorInWindow: rateOf(atEnd * o.recordSize, window),
        behindAtEndBytes: total - atEnd * o.recordSize,
        catchUpMs: done.doneAt - c1,
        mirrorOverall: rateOf(total, (done.doneAt - c0) / 1000),
        destinationCpuSeconds: cpuDelta(cd0, cd1),
      };
      log(
        `concurrent: produce ${figures.concurrent.produce.mibPerSec.toFixed(1)} MiB/s, mirror ${figures.concurrent.mirrorInWindow.mibPerSec.toFixed(1)} MiB/s in the same window, ` +
          `${formatBytes(figures.concurrent.behindAtEndBytes)} behind at the end, caught up ${(figures.concurrent.catchUpMs / 1000).toFixed(1)} s later`,
      );
    }

    // ---- lag at a paced fraction of the local max
    if (o.lag) {
      const topic = 'mirror-lag';
      await createTopic(client, topic, o.partitions);
      await putLink(adminUrl, 'lag', source.bootstrap);
      await createMirror(adminUrl, topic, 'lag');
      await waitMirrorLive(adminUrl, topic, o.partitions);
      const localMiBps = figures.local.bytes / MiB / figures.local.seconds;
      const targetMiBps = o.lagMiBps ?? (localMiBps * o.lagPercent) / 100;
      const percent = (100 * targetMiBps) / localMiBps;
      const recordsPerSec = (targetMiBps * MiB) / o.recordSize;
      log(`lag: ${targetMiBps.toFixed(1)} MiB/s (${percent.toFixed(0)}% of the local max) into ${topic} for ${o.lagSeconds} s, destination polled by ${o.lagPoll}`);
      const poller = await KafkaClient.connect({ bootstrap: destination.bootstrap, clientId: 'ledgerline-bench-mirror-lag', requestTimeoutMs: 60_000 });
      try {
        await poller.waitForTopics([topic]);
        const tracker = new LagTracker(o.partitions);
        let stopPolling = false;
        const polling = pollHighWatermarks(poller, topic, o.partitions, tracker, o.lagPoll, o.pollMs, () => stopPolling);
        let paced;
        try {
          paced = await producePaced({
            client,
            topic,
            partitions: o.partitions,
            template,
            recordsPerSec,
            durationMs: o.lagSeconds * 1000,
            producers: o.producers,
            partitionsPerRequest: workload.partitionsPerRequest,
            maxInFlight: workload.maxInFlight,
            onAck: (p, end, at) => tracker.acked(p, end, at),
          });
          const until = performance.now() + LAG_DRAIN_MS;
          while (tracker.pendingCount() > 0 && performance.now() < until) await sleep(20);
        } finally {
          stopPolling = true;
        }
        const poll = await polling;
        alive(source);
        alive(destination);
        figures.lag = {
          percent,
          targetMiBps,
          produce: rateOf(paced.bytes, paced.seconds),
          produceP99Ms: paced.produceLatency.p99,
          lag: tracker.summary(),
          poll,
          errors: paced.errors,
        };
        const l = figures.lag.lag;
        log(`lag over ${l.count} batches: p50 ${l.p50.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms, p99.9 ${l.p999.toFixed(1)} ms, max ${l.max.toFixed(1)} ms (produce ${figures.lag.produce.mibPerSec.toFixed(1)} MiB/s)`);
      } finally {
        await poller.close();
      }
    }
  } finally {
    await client.close();
  }
}

async function measureLimits(o: Options, w: Workload, template: BatchTemplate, log: (l: string) => void): Promise<MirrorFile['limits']> {
  const requestBytes = template.bytes.length * Math.min(w.partitionsPerRequest, o.partitions);
  const ms = o.limitsSeconds * 1000;
  log(`machine limits: loopback TCP (${o.producers} connections, ${requestBytes} B writes; 1 connection, 1 MiB writes), disk in ${dataRoot()}, ${o.limitsSeconds} s each`);
  const loopback = await measureLoopback({ connections: o.producers, chunkBytes: requestBytes, durationMs: ms });
  const loopbackOneConnection = await measureLoopback({ connections: 1, chunkBytes: MiB, durationMs: ms });
  const disk = await measureDisk({ dir: dataRoot(), sample: template.bytes, chunkBytes: requestBytes, maxBytes: 2 * GiB, durationMs: ms });
  log(
    `loopback ${loopback.mibPerSec.toFixed(0)} MiB/s (1 connection ${loopbackOneConnection.mibPerSec.toFixed(0)}); disk ${disk.syncEachChunk.mibPerSec.toFixed(0)} MiB/s with fsync per request, ` +
      `${disk.syncAtEnd.mibPerSec.toFixed(0)} MiB/s with one fsync`,
  );
  return { loopback, loopbackOneConnection, disk };
}

function treeInfo(): MirrorFile['tree'] {
  try {
    const cwd = resolve(RESULTS_DIR, '..', '..');
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd, encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['status', '--porcelain', '--', 'src', 'protocol'], { cwd, encoding: 'utf8' })
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => l.slice(3));
    return { commit, changed };
  } catch {
    return undefined;
  }
}

/** Free disk a pair needs: each backlog on both brokers, a quarter more, and 2 GiB (the lag phase adds its own). */
function diskRefusal(o: Options, dir: string): string | null {
  const need = 2 * (o.backlogBytes + (o.concurrent ? o.concurrentBytes : 0)) * 1.25 + 2 * GiB;
  const st = statfsSync(dir);
  const free = st.bavail * st.bsize;
  return free >= need ? null : `not enough free disk in ${dir}: ${formatBytes(free)} free, a pair needs ${formatBytes(need)}; choose a smaller --backlog`;
}

export default async function mirror(args: string[]): Promise<void> {
  const o = options(args);
  if (o === null) {
    console.log(HELP);
    return;
  }
  const log = logger();
  const date = new Date();
  // The tree as the run starts: the brokers run dist/, rebuilt from it first when it is older (lib/brokers.ts).
  const tree = treeInfo();
  const workload = workloadOf(o);
  const template = await buildTemplate(workload);
  const refusal = diskRefusal(o, dataRoot());
  if (refusal) {
    console.error(`mirror: ${refusal}`);
    process.exitCode = 1;
    return;
  }
  const limits = o.limits ? await measureLimits(o, workload, template, log) : null;
  const pairs: PairFigures[] = [];
  for (let pair = 1; pair <= o.pairs; pair++) {
    const plog = (l: string): void => log(`[pair ${pair}] ${l}`);
    const figures: PairFigures = { pair };
    let brokers: MirrorPair | null = null;
    try {
      const profiled = o.profile !== null && pair === 1;
      if (profiled) for (const role of ['source', 'destination']) mkdirSync(join(o.profile!, role), { recursive: true });
      const env = (role: string): Record<string, string> | undefined => (profiled ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${join(o.profile!, role)}` } : undefined);
      brokers = await startMirrorPair({ log: plog, sourceEnv: env('source'), destinationEnv: env('destination') });
      await runPair({ o, workload, template, brokers, figures, log: plog });
    } catch (e) {
      figures.failed = (e as Error).message;
      plog(`failed: ${figures.failed}`);
    } finally {
      if (brokers) {
        const rss = await brokers.stop().catch(() => ({ source: null, destination: null }));
        figures.peakRssMiB = rss;
      }
    }
    pairs.push(figures);
  }
  const file: MirrorFile = {
    kind: 'ledgerline-bench-mirror',
    version: 1,
    id: runId('mirror', `${o.partitions}p-${Math.round(o.backlogBytes / MiB)}MiB`, date),
    date: date.toISOString(),
    command: `npm run bench -- mirror${args.length > 0 ? ` ${args.join(' ')}` : ''}`,
    host: hostInfo(),
    tree,
    shape: {
      partitions: o.partitions,
      recordSize: o.recordSize,
      batchBytes: workload.batchBytes,
      producers: o.producers,
      partitionsPerRequest: workload.partitionsPerRequest,
      maxInFlight: workload.maxInFlight,
      backlogBytes: o.backlogBytes,
      concurrentBytes: o.concurrent ? o.concurrentBytes : null,
      lagSeconds: o.lag ? o.lagSeconds : null,
      lagPercent: o.lagPercent,
      ...(o.lagMiBps !== null ? { lagMiBps: o.lagMiBps } : {}),
    },
    limits,
    pairs,
  };
  const md = mirrorMarkdown(file);
  console.log(md);
  if (o.write) {
    mkdirSync(RESULTS_DIR, { recursive: true });
    const json = join(RESULTS_DIR, `${file.id}.json`);
    writeFileSync(json, JSON.stringify(file, null, 2) + '\n');
    writeFileSync(join(RESULTS_DIR, `${file.id}.md`), md);
    log(`wrote ${json} and .md`);
  }
  if (pairs.every((p) => p.failed)) process.exitCode = 1;
}
