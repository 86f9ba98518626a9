/**
 * Replication lag for the mirror benchmark (bench/mirror.ts): a paced producer on the source that reports every
 * acknowledged batch's partition and end offset, a poller on the destination that observes each mirror
 * partition's high watermark, and the tracker that pairs the two.
 *
 *   producer lanes (source) ── Produce at the lane's share of the rate ─► ack: (partition, baseOffset + count, t_ack)
 *   poller (destination)    ── long-poll Fetch, or ListOffsets LATEST every few ms ─► (partition, HW, t_seen)
 *   LagTracker              ── lag of a batch = first t_seen with HW ≥ its end offset − t_ack
 *
 * The lag is what a consumer failing over to the destination would miss: the time between the source telling a
 * producer its batch is stored and the destination serving that batch. A batch the destination already served
 * when its acknowledgement arrived counts as 0 (and is counted apart: `coveredBeforeAck`).
 *
 * Observation resolution: a Fetch long-poll (minBytes 1, maxBytes 1, from each partition's last seen high
 * watermark) is answered by the destination as soon as an append moves a high watermark past it, so a move is
 * seen one answer later at most (one round trip, reported as the rounds' durations); ListOffsets polling adds up
 * to its interval.
 */
import { performance } from 'node:perf_hooks';
import type { Histogram } from 'hdr-histogram-js';
import { errorByCode } from '../../protocol/error-codes.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import type { ProduceRequest, ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { KafkaClient } from '../../src/client/index.js';
import { OffsetSpec } from '../../src/client/index.js';
import type { BatchTemplate } from './batches.js';
import { copyTemplate, nowMs, stampBatch } from './batches.js';
import type { LatencySummary } from './stats.js';
import { latencyHistogram, recordMs, summarize } from './stats.js';

// ---------------------------------------------------------------------------------------------------
// The tracker (pure)

export interface LagSummary extends LatencySummary {
  /** Batches the destination served before their acknowledgement reached the producer (counted as 0 ms). */
  coveredBeforeAck: number;
  /** Batches acknowledged but never seen on the destination by the end. */
  uncovered: number;
}

/** Pairs acknowledged batches with the destination's high watermarks; see the top of this file. */
export class LagTracker {
  private readonly pending: Array<Array<{ end: number; ackMs: number }>>;
  private readonly hw: number[];
  private readonly lags: Histogram = latencyHistogram();
  coveredBeforeAck = 0;

  constructor(partitions: number) {
    this.pending = Array.from({ length: partitions }, () => []);
    this.hw = new Array<number>(partitions).fill(-1);
  }

  /** The source acknowledged a batch of `partition` ending before offset `end` (base offset + record count) at `ackMs`. */
  acked(partition: number, end: number, ackMs: number): void {
    if (this.hw[partition]! >= end) {
      this.coveredBeforeAck++;
      recordMs(this.lags, 0);
      return;
    }
    const q = this.pending[partition]!;
    // Acknowledgements of one partition arrive in offset order on one connection; keep the queue sorted anyway.
    let i = q.length;
    while (i > 0 && q[i - 1]!.end > end) i--;
    q.splice(i, 0, { end, ackMs });
  }

  /** The destination's high watermark of `partition` was `hw` when seen at `atMs`. */
  observed(partition: number, hw: number, atMs: number): void {
    if (hw <= this.hw[partition]!) return;
    this.hw[partition] = hw;
    const q = this.pending[partition]!;
    let n = 0;
    while (n < q.length && q[n]!.end <= hw) {
      recordMs(this.lags, Math.max(0, atMs - q[n]!.ackMs));
      n++;
    }
    if (n > 0) q.splice(0, n);
  }

  /** The last high watermark seen for `partition` (-1 before any). */
  highWatermark(partition: number): number {
    return this.hw[partition]!;
  }

  /** Batches acknowledged and not yet seen on the destination. */
  pendingCount(): number {
    let n = 0;
    for (const q of this.pending) n += q.length;
    return n;
  }

  summary(): LagSummary {
    return { ...summarize(this.lags), coveredBeforeAck: this.coveredBeforeAck, uncovered: this.pendingCount() };
  }
}

/** Milliseconds between requests of a producer lane that carries `lanePartitions` of `totalPartitions` at `recordsPerSec`. */
export function laneIntervalMs(recordsPerSec: number, recordsPerRequest: number, lanePartitions: number, totalPartitions: number): number {
  if (!(recordsPerSec > 0)) throw new Error(`the rate must be positive, got ${recordsPerSec}`);
  const share = (recordsPerSec * lanePartitions) / totalPartitions;
  return (1000 * recordsPerRequest) / share;
}

// ---------------------------------------------------------------------------------------------------
// The paced producer (source)

export interface PacedOptions {
  client: KafkaClient;
  topic: string;
  partitions: number;
  template: BatchTemplate;
  recordsPerSec: number;
  durationMs: number;
  /** Lanes (connections); partition i goes to lane i mod producers. */
  producers: number;
  partitionsPerRequest: number;
  maxInFlight: number;
  /** Called for every batch acknowledged without error. */
  onAck(partition: number, end: number, ackMs: number): void;
}

export interface PacedResult {
  seconds: number;
  records: number;
  bytes: number;
  targetRecordsPerSec: number;
  /** From each request's intended send time to its acknowledgement (no coordinated omission). */
  produceLatency: LatencySummary;
  errors: Record<string, number>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Produces at `recordsPerSec` for `durationMs`, acks=all, and reports every acknowledged batch (onAck). */
export async function producePaced(o: PacedOptions): Promise<PacedResult> {
  const latency = latencyHistogram();
  const errors: Record<string, number> = {};
  const error = (name: string): void => {
    errors[name] = (errors[name] ?? 0) + 1;
  };
  let records = 0;
  const start = nowMs() + 5;
  const end = start + o.durationMs;
  const lanes = Array.from({ length: o.producers }, (_, lane) => {
    const parts = Array.from({ length: o.partitions }, (_, p) => p).filter((p) => p % o.producers === lane);
    const perRequest = Math.min(o.partitionsPerRequest, parts.length);
    const intervalMs = parts.length === 0 ? 0 : laneIntervalMs(o.recordsPerSec, perRequest * o.template.recordCount, parts.length, o.partitions);
    // Lanes start spread over one interval so they do not all fire together.
    return { lane, parts, perRequest, intervalMs, cursor: 0, nextSendAt: start + Math.random() * intervalMs };
  }).filter((l) => l.parts.length > 0);

  const slot = async (l: (typeof lanes)[number]): Promise<void> => {
    const batches = Array.from({ length: l.perRequest }, () => copyTemplate(o.template));
    for (;;) {
      const intended = l.nextSendAt;
      if (intended >= end) return;
      l.nextSendAt += l.intervalMs;
      const wait = intended - nowMs();
      if (wait > 1) await sleep(wait);
      const parts: number[] = [];
      const partitionData = [];
      for (let i = 0; i < l.perRequest; i++) {
        const p = l.parts[l.cursor]!;
        l.cursor = (l.cursor + 1) % l.parts.length;
        stampBatch(batches[i]!, o.template, intended);
        parts.push(p);
        partitionData.push({ index: p, records: batches[i]! });
      }
      const request: ProduceRequest = { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: o.topic, topicId: ZERO_UUID, partitionData }] };
      try {
        const conn = await o.client.cluster.connectionTo(o.client.cluster.leaderFor(o.topic, parts[0]!), l.lane);
        const version = conn.versionFor(ProduceApi, { max: 12 }); // v13 names topics by id only (KIP-516)
        const response: ProduceResponse = await conn.request(ProduceApi, request, { version });
        const ackMs = nowMs();
        let ok = 0;
        for (const t of response.responses) {
          for (const p of t.partitionResponses) {
            if (p.errorCode !== 0) {
              error(errorByCode(p.errorCode).name);
              continue;
            }
            ok++;
            o.onAck(p.index, Number(p.baseOffset) + o.template.recordCount, ackMs);
          }
        }
        records += ok * o.template.recordCount;
        if (ok > 0) recordMs(latency, ackMs - intended, ok);
      } catch (e) {
        const code = (e as { code?: unknown }).code;
        error(typeof code === 'string' ? code : e instanceof Error ? e.name : 'error');
        await sleep(100);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(lanes.flatMap((l) => Array.from({ length: o.maxInFlight }, () => slot(l))));
  const seconds = (performance.now() - t0) / 1000;
  return {
    seconds,
    records,
    bytes: records * (o.template.payloadBytes / o.template.recordCount),
    targetRecordsPerSec: o.recordsPerSec,
    produceLatency: summarize(latency),
    errors,
  };
}

// ---------------------------------------------------------------------------------------------------
// The poller (destination)

export type LagPoll = 'fetch' | 'list-offsets';

export interface PollResult {
  mode: LagPoll;
  /** ListOffsets: the pause between polls. */
  intervalMs: number | null;
  rounds: number;
  /** Each request's duration: a long-poll's includes its wait. */
  roundMs: LatencySummary;
  errors: number;
}

const LONG_POLL_MAX_WAIT_MS = 500;

/**
 * Observes the destination's high watermark of every partition of `topic` until `stop()` is true, feeding
 * `tracker`. `fetch`: one long-poll Fetch for all partitions from their last seen high watermarks, maxBytes 1 (the
 * destination returns one batch at most, so the poller reads next to nothing); `list-offsets`: ListOffsets LATEST
 * every `intervalMs`.
 */
export async function pollHighWatermarks(client: KafkaClient, topic: string, partitions: number, tracker: LagTracker, mode: LagPoll, intervalMs: number, stop: () => boolean): Promise<PollResult> {
  const rounds = latencyHistogram();
  let errors = 0;
  const all = Array.from({ length: partitions }, (_, p) => p);
  while (!stop()) {
    const t0 = nowMs();
    try {
      if (mode === 'fetch') {
        const results = await client.fetch(
          all.map((p) => ({ topic, partition: p, offset: BigInt(Math.max(0, tracker.highWatermark(p))), maxBytes: 1 })),
          { maxWaitMs: LONG_POLL_MAX_WAIT_MS, minBytes: 1, maxBytes: 1 },
        );
        const at = nowMs();
        for (const r of results) {
          if (r.errorCode === 0) tracker.observed(r.partition, Number(r.highWatermark), at);
          else errors++;
        }
      } else {
        const results = await client.listOffsets(all.map((p) => ({ topic, partition: p, timestamp: OffsetSpec.LATEST })));
        const at = nowMs();
        for (const r of results) {
          if (r.errorCode === 0) tracker.observed(r.partition, Number(r.offset), at);
          else errors++;
        }
      }
      recordMs(rounds, nowMs() - t0);
    } catch {
      errors++;
      await sleep(50);
    }
    if (mode === 'list-offsets' && intervalMs > 0) await sleep(intervalMs);
  }
  return { mode, intervalMs: mode === 'list-offsets' ? intervalMs : null, rounds: rounds.totalCount, roundMs: summarize(rounds), errors };
}
