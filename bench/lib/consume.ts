/**
 * The load generator's consumers: one Fetch loop per lane (a consumer's partitions on one leader, over its own
 * connection), each in an incremental fetch session (KIP-227) as Kafka's consumer keeps, from given offsets.
 * They run in a thread of their own (consumer-thread.ts), apart from the producers: see there why.
 *
 *   lane ── leader connection ──► Fetch (session) ─► split batches ─► count, and for batches sent in the window,
 *                                                                  e2e latency = now − send time they carry
 */
import type { Histogram } from 'hdr-histogram-js';
import { errorByCode } from '../../protocol/error-codes.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import type { FetchRequest, FetchResponse } from '../../protocol/messages/001-fetch.gen.js';
import { ControlRecordType, MAGIC_V2, RecordBatch, frameEntryAt, parseControlRecordType } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { KafkaClient, SessionPartition } from '../../src/client/index.js';
import { FetchSession, IsolationLevel } from '../../src/client/index.js';
import { nowMs, sendTimeOf } from './batches.js';
import { latencyHistogram, recordMs } from './stats.js';
import { AbortedTransactions } from './transactions.js';

const FETCH_MAX_WAIT_MS = 500;
const PARTITION_MAX_BYTES = 1024 * 1024;
const FETCH_MAX_BYTES = 50 * 1024 * 1024;

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

export interface PhaseCounters {
  records: number;
  /** Record payload bytes (records × recordSize). */
  bytes: number;
  batches: number;
  requests: number;
}

export function zeroCounters(): PhaseCounters {
  return { records: 0, bytes: 0, batches: 0, requests: 0 };
}

export interface ConsumerLane {
  readonly leader: number;
  /** The client's connection lane to the leader. */
  readonly lane: number;
  readonly partitions: readonly TopicPartition[];
  /** Next offset per partition (tpKey), advanced as records arrive. */
  readonly offsets: Map<string, bigint>;
  /** Offsets to reach before a catch-up read is complete. */
  readonly endOffsets?: Map<string, bigint>;
}

/** What the consumers count. */
export class ConsumeMeter {
  /** Counting into `consumed` and the latency (the measured window). */
  measuring = false;
  /** Batches sent before this (ms since the epoch) are not the window's. */
  measureStart = 0;
  /** False for catch-up reads, where a batch's age is not a latency. */
  recordEndToEnd = true;
  consumed: PhaseCounters = zeroCounters();
  /** Totals since the start, for the drain and the timeline. */
  consumedTotal = 0;
  consumedBytesTotal = 0;
  readonly e2eLatency: Histogram = latencyHistogram();
  readonly errors: Record<string, number> = {};

  error(name: string, n = 1): void {
    this.errors[name] = (this.errors[name] ?? 0) + n;
  }

  startMeasuring(at: number): void {
    this.measuring = true;
    this.measureStart = at;
    this.consumed = zeroCounters();
    this.e2eLatency.reset();
  }
}

export interface ConsumeOptions {
  readonly recordSize: number;
  /** Transactional workloads read as Kafka's consumers of transactional data do: committed records only. */
  readonly readCommitted: boolean;
  /** Called after each response's records were counted. */
  readonly onProgress?: () => void;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function describeError(e: unknown): string {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : e instanceof Error ? e.name : 'error';
}

/** Fetches the lane's partitions until `stop()` says so or, for a catch-up read, every one reached its end offset. */
export async function consumerLoop(client: KafkaClient, o: ConsumeOptions, meter: ConsumeMeter, lane: ConsumerLane, stop: () => boolean): Promise<void> {
  // With thousands of partitions a fetch in a session names only the partitions whose position moved.
  const session = new FetchSession();
  while (!stop()) {
    try {
      const conn = await client.cluster.connectionTo(lane.leader, lane.lane);
      const version = conn.versionFor(FetchApi);
      const wanted: SessionPartition[] = [];
      for (const tp of lane.partitions) {
        const offset = lane.offsets.get(tpKey(tp)) ?? 0n;
        if (lane.endOffsets && offset >= (lane.endOffsets.get(tpKey(tp)) ?? 0n)) continue;
        wanted.push({ topic: tp.topic, topicId: client.cluster.topic(tp.topic)?.topicId ?? ZERO_UUID, partition: tp.partition, fetchOffset: offset, partitionMaxBytes: PARTITION_MAX_BYTES });
      }
      if (wanted.length === 0) return; // catch-up read complete
      const fields = session.build(wanted, version);
      const request: FetchRequest = FetchApi.request.create({
        maxWaitMs: FETCH_MAX_WAIT_MS,
        minBytes: 1,
        maxBytes: FETCH_MAX_BYTES,
        sessionId: fields.sessionId,
        sessionEpoch: fields.sessionEpoch,
        isolationLevel: o.readCommitted ? IsolationLevel.READ_COMMITTED : IsolationLevel.READ_UNCOMMITTED,
        topics: fields.topics,
        forgottenTopicsData: fields.forgottenTopicsData,
      });
      let response: FetchResponse;
      try {
        response = await conn.request(FetchApi, request, { version, timeoutMs: 30_000 + FETCH_MAX_WAIT_MS });
      } catch (e) {
        session.onError();
        throw e;
      }
      if (!session.onResponse(response) || response.errorCode !== 0) {
        meter.error(errorByCode(response.errorCode).name);
        await sleep(100);
        continue;
      }
      const now = nowMs();
      for (const t of response.responses) {
        const topic = version >= 13 ? client.cluster.topicNameById(t.topicId) : t.topic;
        if (topic === undefined) continue;
        for (const p of t.partitions) {
          if (p.errorCode !== 0) {
            meter.error(errorByCode(p.errorCode).name);
            continue;
          }
          // Decoders always produce one buffer (the list form of `Records` is for encoders).
          const records = p.records as Buffer | null;
          const aborted = p.abortedTransactions && p.abortedTransactions.length > 0 ? new AbortedTransactions(p.abortedTransactions) : null;
          if (records && records.length > 0) consumeRecords(o, meter, lane, { topic, partition: p.partitionIndex }, records, now, aborted);
        }
      }
      o.onProgress?.();
    } catch (e) {
      meter.error(describeError(e));
      await sleep(100);
    }
  }
}

function consumeRecords(o: ConsumeOptions, meter: ConsumeMeter, lane: ConsumerLane, tp: TopicPartition, records: Buffer, now: number, aborted: AbortedTransactions | null): void {
  const key = tpKey(tp);
  let offset = lane.offsets.get(key) ?? 0n;
  let pos = 0;
  for (;;) {
    const span = frameEntryAt(records, pos);
    if (span === null) break; // a partial batch at the end of the response
    pos = span.end;
    if (span.magic !== MAGIC_V2) continue;
    const batch = RecordBatch.unchecked(records.subarray(span.start, span.end));
    const next = batch.lastOffset + 1n;
    if (next <= offset) continue;
    offset = next;
    if (aborted?.skip(batch, batch.isControl && isAbortMarker(batch))) continue;
    if (batch.isControl) continue;
    const count = batch.recordCount;
    const bytes = count * o.recordSize;
    meter.consumedTotal += count;
    meter.consumedBytesTotal += bytes;
    if (!meter.measuring) continue;
    const sent = sendTimeOf(batch);
    if (sent !== null && sent < meter.measureStart) continue;
    meter.consumed.records += count;
    meter.consumed.bytes += bytes;
    meter.consumed.batches += 1;
    if (sent !== null && meter.recordEndToEnd) recordMs(meter.e2eLatency, now - sent);
  }
  lane.offsets.set(key, offset);
}

function isAbortMarker(batch: RecordBatch): boolean {
  const first = batch.records().next();
  return !first.done && parseControlRecordType(first.value.key) === ControlRecordType.ABORT;
}
