/**
 * The load generator: producers and consumers on the project's own client, with pre-built batches.
 *
 *   producer p ── lane p ──► leader connection ──► maxInFlight slots, each:
 *                             wait for its intended send time (fixed rate) ─► stamp batches ─► Produce ─► ack
 *                             latency = ack − intended send time (no coordinated omission)
 *   consumer c ── lane c ───► leader connection ──► Fetch loop (incremental fetch session) from the start
 *   (their own thread and     offsets ─► split batches
 *    client: consumer-*.ts)   e2e latency = now − send time carried by each batch (see batches.ts)
 *
 * Transactional workloads (transactionRecords > 0) run one transactional producer per producer lane
 * instead of the slots (transactions.ts): each transaction adds its partitions, sends its batches with up
 * to maxInFlight requests in flight and commits; the next begins once the commit is acknowledged.
 * Records count as produced when their transaction commits; commit latency = EndTxn acknowledged − the
 * transaction's intended begin. Consumers then read with isolation read_committed.
 *
 * Partition i goes to producer i mod P and to consumer i mod C. Each producer and each consumer has its
 * own connection per leader (lanes of a client's connection pool), as separate client processes would; the
 * consumers run in a thread of their own with a client of their own (consumer-thread.ts).
 * A run is: optional warm-up (counted but not reported), the measured window, then a short drain in which
 * consumers catch up with what was produced. Catch-up workloads first write a backlog, then time consumers
 * reading it from the earliest offset.
 */
import { performance } from 'node:perf_hooks';
import type { Histogram } from 'hdr-histogram-js';
import { errorByCode } from '../../protocol/error-codes.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import type { ProduceRequest, ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { KafkaClient, KafkaClientOptions } from '../../src/client/index.js';
import { OffsetSpec } from '../../src/client/index.js';
import type { BatchTemplate } from './batches.js';
import { copyTemplate, nowMs, stampBatch } from './batches.js';
import type { ConsumerLane, PhaseCounters, TopicPartition } from './consume.js';
import { describeError as describe, sleep, tpKey, zeroCounters as zero } from './consume.js';
import { ConsumerThread } from './consumer-thread.js';
import type { ConsumersResult } from './consumer-thread.js';
import type { LatencySummary } from './stats.js';
import type { TransactionalProducer } from './transactions.js';
import { PRODUCE_TXN_V1_MAX_VERSION, TransactionError, addPartitionsToTxn, endTxn, findTransactionCoordinator, initTransactions } from './transactions.js';
import { addEncodedHistogram, latencyHistogram, recordMs, summarize } from './stats.js';
import type { BrokerProbes, WindowUsage } from './usage.js';
import { startWindow } from './usage.js';
import type { Workload } from './workload.js';

export type { PhaseCounters, TopicPartition } from './consume.js';
export { tpKey } from './consume.js';

export interface TimelinePoint {
  /** Seconds since the phase started. */
  t: number;
  producedMiBps: number;
  consumedMiBps: number;
}

export interface TransactionFigures {
  /** Transactions committed in the window (begun in it). */
  committed: number;
  perSec: number;
  /** From a transaction's intended begin to its EndTxn(commit) acknowledged. */
  commitLatency: LatencySummary;
  /** AddPartitionsToTxn retries on CONCURRENT_TRANSACTIONS (the previous commit still completing), whole run. */
  concurrentRetries: number;
}

export interface LoadResult {
  /** Length of the measured window in seconds. */
  seconds: number;
  produced: PhaseCounters;
  consumed: PhaseCounters;
  /** Records per second and payload MiB per second over the window. */
  produceRate: { recordsPerSec: number; mibPerSec: number };
  consumeRate: { recordsPerSec: number; mibPerSec: number };
  produceLatency: LatencySummary;
  endToEndLatency: LatencySummary;
  /** Errors by Kafka error name or client error code, whole run. */
  errors: Record<string, number>;
  /** CPU used by this process (the load generator, its consumers' thread included) over the window, in % of one core. */
  clientCpuPercent: number;
  /** GC pauses of this process's threads (producers' and consumers') over the window, in seconds. */
  clientGcSeconds?: number;
  /**
   * How late the producers' event loop ran, 99th percentile over the window, ms (usage.ts): the floor under the
   * produce latencies; absent in older results.
   */
  clientLoopDelayP99Ms?: number | null;
  /** CPU seconds the broker's processes used over the window (see LoadOptions.brokerCpuSeconds), or null. */
  brokerCpuSeconds: number | null;
  /** Seconds the broker's processes spent in GC pauses over the window (LoadOptions.brokerGcSeconds), or null. */
  brokerGcSeconds?: number | null;
  timeline: TimelinePoint[];
  /** Records produced but never consumed by the end of the drain (should be 0). */
  unconsumedRecords: number;
  /** Fixed-rate runs: the rate asked for. */
  targetRecordsPerSec: number | null;
  /** Transactional workloads only. */
  transactions?: TransactionFigures;
}

export interface LoadOptions {
  client: KafkaClient;
  /** How `client` connected: the consumers' thread connects a client of its own with these (consumer-thread.ts). */
  clientOptions?: KafkaClientOptions;
  workload: Workload;
  template: BatchTemplate;
  partitions: readonly TopicPartition[];
  /** Messages per second for the whole run, or null for max. */
  rate: number | null;
  durationMs: number;
  warmupMs: number;
  /** Progress lines. */
  log?: (line: string) => void;
  /** Skip the consumers (backlog writing). */
  produceOnly?: boolean;
  /** Stop producing once this much payload has been acknowledged (backlog writing). */
  stopAfterBytes?: number;
  /**
   * The CPU seconds the broker's processes have used so far (read from /proc), when the harness started
   * the broker; sampled at the window's start and end.
   */
  brokerCpuSeconds?: () => number | null;
  /** The seconds the broker's processes have spent in GC pauses so far (StartedBroker.gcSeconds), likewise. */
  brokerGcSeconds?: () => Promise<number | null>;
}

function probesOf(o: LoadOptions): BrokerProbes {
  return { cpuSeconds: o.brokerCpuSeconds, gcSeconds: o.brokerGcSeconds };
}

const DRAIN_MS = 10_000;

class Meter {
  measuring = false;
  produced: PhaseCounters = zero();
  /** The consumers' counts of the window, once they stopped (consumer-thread.ts). */
  consumed: PhaseCounters = zero();
  /** Totals since the start, for the drain and the timeline. */
  producedTotal = 0;
  producedBytesTotal = 0;
  readonly produceLatency: Histogram = latencyHistogram();
  readonly e2eLatency: Histogram = latencyHistogram();
  readonly commitLatency: Histogram = latencyHistogram();
  transactions = 0;
  concurrentRetries = 0;
  readonly errors: Record<string, number> = {};
  measureStart = 0;
  /** The consumers' thread, when the run has consumers. */
  consumers: ConsumerThread | null = null;

  get consumedTotal(): number {
    return this.consumers?.consumedTotal ?? 0;
  }

  get consumedBytesTotal(): number {
    return this.consumers?.consumedBytesTotal ?? 0;
  }

  error(name: string, n = 1): void {
    this.errors[name] = (this.errors[name] ?? 0) + n;
  }

  startMeasuring(): void {
    this.measuring = true;
    this.produced = zero();
    this.consumed = zero();
    this.produceLatency.reset();
    this.e2eLatency.reset();
    this.commitLatency.reset();
    this.transactions = 0;
    this.measureStart = nowMs();
  }

  /** Takes in what the consumers counted. */
  addConsumers(r: ConsumersResult): void {
    this.consumed = r.consumed;
    addEncodedHistogram(this.e2eLatency, r.e2e);
    for (const [name, n] of Object.entries(r.errors)) this.error(name, n);
  }
}

function groupByLeader(client: KafkaClient, parts: readonly TopicPartition[]): Map<number, TopicPartition[]> {
  const groups = new Map<number, TopicPartition[]>();
  for (const tp of parts) {
    const leader = client.cluster.leaderFor(tp.topic, tp.partition);
    const list = groups.get(leader);
    if (list) list.push(tp);
    else groups.set(leader, [tp]);
  }
  return groups;
}

/** Offsets for every partition, retrying the transient errors a just-created topic answers with. */
export async function offsetsFor(client: KafkaClient, parts: readonly TopicPartition[], spec: bigint, timeoutMs = 60_000): Promise<Map<string, bigint>> {
  const out = new Map<string, bigint>();
  const deadline = Date.now() + timeoutMs;
  let pending = [...parts];
  while (pending.length > 0) {
    const next: TopicPartition[] = [];
    for (let i = 0; i < pending.length; i += 1000) {
      const chunk = pending.slice(i, i + 1000);
      const results = await client.listOffsets(chunk.map((tp) => ({ ...tp, timestamp: spec })));
      for (const r of results) {
        if (r.errorCode === 0) out.set(tpKey(r), r.offset);
        else next.push({ topic: r.topic, partition: r.partition });
      }
    }
    if (next.length > 0) {
      if (Date.now() > deadline) throw new Error(`ListOffsets still failing for ${next.length} partitions (e.g. ${next[0]!.topic}-${next[0]!.partition})`);
      await sleep(200);
      await client.metadata([...new Set(next.map((t) => t.topic))]);
    }
    pending = next;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Producers

interface ProducerLane {
  readonly leader: number;
  readonly lane: number;
  readonly partitions: readonly TopicPartition[];
  cursor: number;
  /** Intended send time of the next request, for fixed-rate runs. */
  nextSendAt: number;
  /** Milliseconds between requests (transactions) at the lane's share of the rate. */
  intervalMs: number;
  /** Transactional workloads: the lane's producer, its coordinator and its next sequence per partition. */
  txn?: LaneTransactions;
}

interface LaneTransactions {
  producer: TransactionalProducer;
  readonly coordinator: number;
  readonly sequences: Map<string, number>;
}

async function producerSlot(o: LoadOptions, meter: Meter, lane: ProducerLane, stop: { produce: boolean }): Promise<void> {
  const { client, workload, template } = o;
  const perRequest = Math.min(workload.partitionsPerRequest, lane.partitions.length);
  const batches = Array.from({ length: perRequest }, () => copyTemplate(template));
  for (;;) {
    if (!stop.produce) return;
    let intended: number;
    if (lane.intervalMs > 0) {
      intended = lane.nextSendAt;
      lane.nextSendAt += lane.intervalMs;
      const wait = intended - nowMs();
      if (wait > 1) await sleep(wait);
      if (!stop.produce) return;
    } else {
      intended = nowMs();
    }
    const byTopic = new Map<string, Array<{ index: number; records: Buffer }>>();
    for (let i = 0; i < perRequest; i++) {
      const tp = lane.partitions[lane.cursor]!;
      lane.cursor = (lane.cursor + 1) % lane.partitions.length;
      const b = batches[i]!;
      stampBatch(b, template, intended);
      const list = byTopic.get(tp.topic);
      if (list) list.push({ index: tp.partition, records: b });
      else byTopic.set(tp.topic, [{ index: tp.partition, records: b }]);
    }
    const request: ProduceRequest = {
      transactionalId: null,
      acks: workload.acks,
      timeoutMs: 30_000,
      topicData: [...byTopic].map(([name, partitionData]) => ({ name, topicId: ZERO_UUID, partitionData })),
    };
    try {
      const conn = await client.cluster.connectionTo(lane.leader, lane.lane);
      const version = conn.versionFor(ProduceApi, { max: 12 }); // v13 names topics by id only (KIP-516)
      if (workload.acks === 0) {
        await conn.send(ProduceApi, request, { version });
        account(meter, o, perRequest, intended);
        continue;
      }
      const response: ProduceResponse = await conn.request(ProduceApi, request, { version });
      let ok = 0;
      for (const t of response.responses) {
        for (const p of t.partitionResponses) {
          if (p.errorCode === 0) ok++;
          else meter.error(errorByCode(p.errorCode).name);
        }
      }
      account(meter, o, ok, intended);
    } catch (e) {
      meter.error(describe(e));
      await sleep(100);
    }
  }
}

function account(meter: Meter, o: LoadOptions, batchesOk: number, intended: number): void {
  const done = nowMs();
  const records = batchesOk * o.template.recordCount;
  const bytes = batchesOk * o.template.payloadBytes;
  meter.producedTotal += records;
  meter.producedBytesTotal += bytes;
  if (meter.measuring && intended >= meter.measureStart) {
    meter.produced.records += records;
    meter.produced.bytes += bytes;
    meter.produced.batches += batchesOk;
    meter.produced.requests += 1;
    if (batchesOk > 0) recordMs(meter.produceLatency, done - intended, batchesOk);
  }
}

/** The run's first unrecoverable error: it ends the window early and is thrown once the lanes have stopped. */
interface Fatal {
  error: Error | null;
}

/** The transactional id of a producer lane: unique per run (the topic names are), one per connection. */
function transactionalIdOf(o: LoadOptions, lane: ProducerLane): string {
  return `${o.partitions[0]!.topic}-txn-${lane.lane}-${lane.leader}`;
}

/** FindCoordinator and InitProducerId for every lane, before anything is produced; throws the first failure. */
async function initTransactionalLanes(o: LoadOptions, lanes: ProducerLane[]): Promise<void> {
  await Promise.all(
    lanes.map(async (lane) => {
      const id = transactionalIdOf(o, lane);
      const conn = await o.client.cluster.connectionTo(lane.leader, lane.lane);
      const coordinator = await findTransactionCoordinator(conn, id);
      if (!o.client.cluster.brokers.has(coordinator)) await o.client.metadata([]);
      const producer = await initTransactions(await o.client.cluster.connectionTo(coordinator, lane.lane), id);
      lane.txn = { producer, coordinator, sequences: new Map() };
    }),
  );
}

/**
 * One transactional producer (see the top of this file): transactions back to back (or on the lane's
 * schedule at a fixed rate), each over the next batches of the lane's partitions in turn. A failed
 * transaction is counted as an error, aborted, and the producer initialized again (a new epoch,
 * sequences from 0), as Kafka's producer recovers; a failure to initialize again is fatal.
 */
async function transactionLoop(o: LoadOptions, meter: Meter, lane: ProducerLane, stop: { produce: boolean }, fatal: Fatal): Promise<void> {
  const { client, workload, template } = o;
  const txn = lane.txn!;
  const perRequest = Math.min(workload.partitionsPerRequest, lane.partitions.length);
  const batchesPerTxn = workload.transactionRecords / template.recordCount;
  const requestsPerTxn = Math.ceil(batchesPerTxn / perRequest);
  const slots = Math.min(workload.maxInFlight, requestsPerTxn);
  const buffers = Array.from({ length: slots }, () => Array.from({ length: perRequest }, () => copyTemplate(template)));
  while (stop.produce && fatal.error === null) {
    let intended: number;
    if (lane.intervalMs > 0) {
      intended = lane.nextSendAt;
      lane.nextSendAt += lane.intervalMs;
      const wait = intended - nowMs();
      if (wait > 1) await sleep(wait);
      if (!stop.produce) return;
    } else {
      intended = nowMs();
    }
    const measured = (): boolean => meter.measuring && intended >= meter.measureStart;
    // The transaction's batches go to the lane's partitions in turn; a request holds distinct partitions.
    const requests: TopicPartition[][] = [];
    for (let b = 0; b < batchesPerTxn; b++) {
      if (b % perRequest === 0) requests.push([]);
      requests.at(-1)!.push(lane.partitions[lane.cursor]!);
      lane.cursor = (lane.cursor + 1) % lane.partitions.length;
    }
    const topics = new Map<string, Set<number>>();
    for (const tp of requests.flat()) {
      const set = topics.get(tp.topic);
      if (set) set.add(tp.partition);
      else topics.set(tp.topic, new Set([tp.partition]));
    }
    let coordinator;
    try {
      const conn = await client.cluster.connectionTo(lane.leader, lane.lane);
      coordinator = await client.cluster.connectionTo(txn.coordinator, lane.lane);
      // Not `meter.concurrentRetries += await ...`: that reads the count before the await, and the producers
      // waiting at the same time would overwrite each other's retries.
      const retries = await addPartitionsToTxn(coordinator, txn.producer, [...topics].map(([topic, ps]) => ({ topic, partitions: [...ps] })));
      meter.concurrentRetries += retries;
      const version = conn.versionFor(ProduceApi, { max: PRODUCE_TXN_V1_MAX_VERSION });
      let next = 0;
      let failed: Error | null = null;
      await Promise.all(
        buffers.map(async (batches) => {
          while (next < requests.length && failed === null) {
            const parts = requests[next++]!;
            const sent = nowMs();
            // Sequences are taken in send order, and stamping and sending happen in one turn: one connection keeps them in order.
            const byTopic = new Map<string, Array<{ index: number; records: Buffer }>>();
            parts.forEach((tp, i) => {
              const key = tpKey(tp);
              const baseSequence = txn.sequences.get(key) ?? 0;
              txn.sequences.set(key, (baseSequence + template.recordCount) | 0);
              const b = batches[i]!;
              stampBatch(b, template, sent, { producerId: txn.producer.producerId, producerEpoch: txn.producer.producerEpoch, baseSequence });
              const list = byTopic.get(tp.topic);
              if (list) list.push({ index: tp.partition, records: b });
              else byTopic.set(tp.topic, [{ index: tp.partition, records: b }]);
            });
            const request: ProduceRequest = {
              transactionalId: txn.producer.transactionalId,
              acks: -1,
              timeoutMs: 30_000,
              topicData: [...byTopic].map(([name, partitionData]) => ({ name, topicId: ZERO_UUID, partitionData })),
            };
            let response: ProduceResponse;
            try {
              response = await conn.request(ProduceApi, request, { version });
            } catch (e) {
              failed ??= e as Error;
              return;
            }
            let ok = 0;
            for (const t of response.responses) {
              for (const p of t.partitionResponses) {
                if (p.errorCode === 0) ok++;
                else failed ??= new TransactionError('Produce', errorByCode(p.errorCode).name, `Produce ${t.name}-${p.index} in transactional id ${JSON.stringify(txn.producer.transactionalId)} answered ${errorByCode(p.errorCode).name}`);
              }
            }
            if (ok > 0 && measured()) recordMs(meter.produceLatency, nowMs() - sent, ok);
          }
        }),
      );
      if (failed !== null) throw failed;
      await endTxn(coordinator, txn.producer, true);
      const done = nowMs();
      const records = workload.transactionRecords;
      meter.producedTotal += records;
      meter.producedBytesTotal += records * workload.recordSize;
      if (measured()) {
        meter.produced.records += records;
        meter.produced.bytes += records * workload.recordSize;
        meter.produced.batches += batchesPerTxn;
        meter.produced.requests += requests.length;
        meter.transactions += 1;
        recordMs(meter.commitLatency, done - intended);
      }
    } catch (e) {
      meter.error(describeTxn(e));
      try {
        if (coordinator) await endTxn(coordinator, txn.producer, false, { timeoutMs: 5000 }).catch(() => undefined);
        const again = await client.cluster.connectionTo(txn.coordinator, lane.lane);
        txn.producer = await initTransactions(again, txn.producer.transactionalId, { timeoutMs: 30_000 });
        txn.sequences.clear();
      } catch (e2) {
        fatal.error ??= e2 as Error;
        return;
      }
    }
  }
}

function describeTxn(e: unknown): string {
  return e instanceof TransactionError ? `${e.request} ${e.errorName}` : describe(e);
}

// ---------------------------------------------------------------------------------------------------
// ---------------------------------------------------------------------------------------------------

function laneIntervals(lanes: ProducerLane[], o: LoadOptions, total: number): void {
  if (o.rate === null) return;
  // A lane's unit of work: a request, or a whole transaction.
  const perRequestRecords = (l: ProducerLane): number =>
    o.workload.transactionRecords > 0 ? o.workload.transactionRecords : Math.min(o.workload.partitionsPerRequest, l.partitions.length) * o.template.recordCount;
  const start = nowMs() + 5;
  for (const l of lanes) {
    const share = (o.rate * l.partitions.length) / total; // records per second for this lane
    l.intervalMs = (1000 * perRequestRecords(l)) / share;
    // Spread the lanes' first sends over one interval so they do not all fire together.
    l.nextSendAt = start + Math.random() * l.intervalMs;
  }
}

function producerLanes(o: LoadOptions): ProducerLane[] {
  const lanes: ProducerLane[] = [];
  for (let p = 0; p < o.workload.producers; p++) {
    const mine = o.partitions.filter((_, i) => i % o.workload.producers === p);
    for (const [leader, parts] of groupByLeader(o.client, mine)) {
      lanes.push({ leader, lane: p, partitions: parts, cursor: 0, nextSendAt: 0, intervalMs: 0 });
    }
  }
  return lanes;
}

function consumerLanes(o: LoadOptions, start: Map<string, bigint>, end?: Map<string, bigint>): ConsumerLane[] {
  const lanes: ConsumerLane[] = [];
  for (let c = 0; c < o.workload.consumers; c++) {
    const mine = o.partitions.filter((_, i) => i % o.workload.consumers === c);
    for (const [leader, parts] of groupByLeader(o.client, mine)) {
      const offsets = new Map(parts.map((tp) => [tpKey(tp), start.get(tpKey(tp)) ?? 0n] as const));
      lanes.push({ leader, lane: c, partitions: parts, offsets, endOffsets: end });
    }
  }
  return lanes;
}

function timelineSampler(meter: Meter): { points: TimelinePoint[]; stop: () => void } {
  const points: TimelinePoint[] = [];
  const t0 = nowMs();
  let lastP = 0;
  let lastC = 0;
  let lastT = t0;
  const timer = setInterval(() => {
    const now = nowMs();
    const dt = (now - lastT) / 1000;
    points.push({
      t: Math.round((now - t0) / 100) / 10,
      producedMiBps: (meter.producedBytesTotal - lastP) / dt / 2 ** 20,
      consumedMiBps: (meter.consumedBytesTotal - lastC) / dt / 2 ** 20,
    });
    lastP = meter.producedBytesTotal;
    lastC = meter.consumedBytesTotal;
    lastT = now;
  }, 1000);
  return { points, stop: () => clearInterval(timer) };
}

function finish(meter: Meter, seconds: number, usage: WindowUsage, timeline: TimelinePoint[], o: LoadOptions): LoadResult {
  const rate = (c: PhaseCounters): { recordsPerSec: number; mibPerSec: number } => ({
    recordsPerSec: c.records / seconds,
    mibPerSec: c.bytes / seconds / 2 ** 20,
  });
  return {
    seconds,
    produced: meter.produced,
    consumed: meter.consumed,
    produceRate: rate(meter.produced),
    consumeRate: rate(meter.consumed),
    produceLatency: summarize(meter.produceLatency),
    endToEndLatency: summarize(meter.e2eLatency),
    errors: meter.errors,
    clientCpuPercent: usage.clientCpuPercent,
    clientGcSeconds: usage.clientGcSeconds,
    clientLoopDelayP99Ms: usage.clientLoopDelayP99Ms,
    brokerCpuSeconds: usage.brokerCpuSeconds,
    brokerGcSeconds: usage.brokerGcSeconds,
    timeline,
    unconsumedRecords: o.produceOnly ? 0 : Math.max(0, meter.producedTotal - meter.consumedTotal),
    targetRecordsPerSec: o.rate,
    transactions:
      o.workload.transactionRecords > 0
        ? { committed: meter.transactions, perSec: meter.transactions / seconds, commitLatency: summarize(meter.commitLatency), concurrentRetries: meter.concurrentRetries }
        : undefined,
  };
}

/** Produces (and consumes, unless produceOnly) for warm-up + duration; see the top of this file. */
export async function runLive(o: LoadOptions): Promise<LoadResult> {
  const log = o.log ?? (() => undefined);
  const meter = new Meter();
  const stop = { produce: true };
  const fatal: Fatal = { error: null };
  const lanes = producerLanes(o);
  // Transactional producers are set up before any consumer starts, so a broker that refuses them fails the run at once.
  const transactional = o.workload.transactionRecords > 0 && !o.produceOnly;
  if (transactional) await initTransactionalLanes(o, lanes);
  let consumers: ConsumerThread | null = null;
  if (!o.produceOnly && o.workload.consumers > 0) {
    const start = await offsetsFor(o.client, o.partitions, OffsetSpec.LATEST);
    consumers = await startConsumers(o, consumerLanes(o, start), { recordEndToEnd: true });
    meter.consumers = consumers;
    consumers.run();
  }
  const sampler = timelineSampler(meter);
  try {
    // The schedule starts now, once the consumers are fetching: a start set before the consumers' thread was up
    // would charge its start-up to the first requests as queueing (50-120 ms in a run without warm-up).
    laneIntervals(lanes, o, o.partitions.length);
    const slots: Array<Promise<void>> = [];
    for (const lane of lanes) {
      if (transactional) slots.push(transactionLoop(o, meter, lane, stop, fatal));
      else for (let s = 0; s < o.workload.maxInFlight; s++) slots.push(producerSlot(o, meter, lane, stop));
    }
    if (o.warmupMs > 0) {
      const warm = nowMs() + o.warmupMs;
      while (nowMs() < warm && fatal.error === null) await sleep(Math.min(200, Math.max(1, warm - nowMs())));
      log(`warm-up done (${(meter.producedBytesTotal / 2 ** 20).toFixed(0)} MiB produced)`);
    }
    // Sampled before the window opens: reading a JVM's GC counters takes a few hundred ms.
    const usage = await startWindow(probesOf(o));
    const consumersGc0 = consumers?.gcSeconds ?? 0;
    meter.startMeasuring();
    consumers?.startMeasuring(meter.measureStart);
    const window0 = nowMs();
    const consumedBytes0 = meter.consumedBytesTotal;
    const end = window0 + o.durationMs;
    let lastLog = window0;
    while (nowMs() < end && fatal.error === null) {
      if (o.stopAfterBytes !== undefined && meter.producedBytesTotal >= o.stopAfterBytes) break;
      await sleep(Math.min(200, Math.max(1, end - nowMs())));
      if (nowMs() - lastLog >= 5000) {
        lastLog = nowMs();
        const s = (lastLog - window0) / 1000;
        log(`${s.toFixed(0)} s: produced ${(meter.produced.bytes / 2 ** 20 / s).toFixed(1)} MiB/s, consumed ${((meter.consumedBytesTotal - consumedBytes0) / 2 ** 20 / s).toFixed(1)} MiB/s`);
      }
    }
    const window1 = nowMs();
    const used = await usage.end();
    if (consumers) used.clientGcSeconds += consumers.gcSeconds - consumersGc0;
    stop.produce = false;
    await Promise.all(slots);
    // Drain: let consumers catch up with everything produced, within a bound.
    const drainUntil = nowMs() + DRAIN_MS;
    while (consumers && meter.consumedTotal < meter.producedTotal && nowMs() < drainUntil) await sleep(20);
    meter.measuring = false;
    if (consumers) meter.addConsumers(await consumers.stop());
    sampler.stop();
    if (fatal.error) throw fatal.error;
    const seconds = (window1 - window0) / 1000;
    return finish(meter, seconds, used, sampler.points, o);
  } finally {
    // A run that failed leaves no timer and no thread behind to keep the process alive.
    sampler.stop();
    await consumers?.terminate();
  }
}

/**
 * Catch-up read: consumers read every partition from `start` to `end` offsets as fast as they can.
 * The measured window is the whole read.
 */
export async function runCatchUp(o: LoadOptions, start: Map<string, bigint>, end: Map<string, bigint>): Promise<LoadResult> {
  const meter = new Meter();
  const lanes = consumerLanes(o, start, end);
  const consumers = await startConsumers(o, lanes, { recordEndToEnd: false, deadline: Date.now() + Math.max(o.durationMs, 600_000) });
  meter.consumers = consumers;
  const sampler = timelineSampler(meter);
  try {
    meter.startMeasuring();
    const usage = await startWindow(probesOf(o));
    const consumersGc0 = consumers.gcSeconds;
    const t0 = performance.now();
    // Backlog batches were sent before the window: count them all.
    consumers.run(0);
    const counted = await consumers.finished();
    const ms = performance.now() - t0;
    const used = await usage.end();
    used.clientGcSeconds += consumers.gcSeconds - consumersGc0;
    sampler.stop();
    meter.measuring = false;
    meter.addConsumers(counted);
    const result = finish(meter, ms / 1000, used, sampler.points, o);
    let remaining = 0n;
    for (const l of lanes) {
      for (const tp of l.partitions) {
        const left = (end.get(tpKey(tp)) ?? 0n) - (counted.offsets.get(tpKey(tp)) ?? 0n);
        if (left > 0n) remaining += left;
      }
    }
    result.unconsumedRecords = Number(remaining);
    return result;
  } finally {
    sampler.stop();
    await consumers.terminate();
  }
}

/** The consumers' thread for `lanes`, connected and ready to `run`. */
function startConsumers(o: LoadOptions, lanes: ConsumerLane[], how: { recordEndToEnd: boolean; deadline?: number }): Promise<ConsumerThread> {
  if (!o.clientOptions) throw new Error('a run with consumers needs LoadOptions.clientOptions, to connect their thread');
  return ConsumerThread.start({
    client: { ...o.clientOptions, clientId: `${o.clientOptions.clientId ?? 'ledgerline-bench'}-consumers`, connectionsPerBroker: Math.max(1, o.workload.consumers) },
    lanes,
    recordSize: o.workload.recordSize,
    readCommitted: o.workload.transactionRecords > 0,
    ...how,
  });
}
