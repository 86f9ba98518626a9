/**
 * The load generator's consumers run in a worker thread of their own, with their own client and connections,
 * as a consumer application beside the producing one would: their fetches, decoding and collections no longer
 * delay the producers' sends and acknowledgements, which share no event loop and no heap with them.
 *
 * In the producers' thread they were most of the load generator's floor under the half-load produce tail: at
 * 91,347 msg/s (1-topic-16-partitions-1kb-50pct), the same run without consumers had produce p99 5.5 ms against
 * 12.2 with them, and the thread's event loop ran 3.7–4.2 ms late at p99 against 1.0.
 *
 * The totals the drain and the timeline watch (records and bytes consumed so far) and the thread's GC seconds are
 * in shared memory; the window's counters, e2e latencies and errors come back when the consumers stop.
 * End-to-end latencies compare the send time a batch carries (batches.ts, `nowMs` in the producers' thread) with
 * `nowMs` in this one: both are the process's wall clock at its thread's start plus a monotonic clock since.
 */
import { Worker } from 'node:worker_threads';
import type { KafkaClientOptions } from '../../src/client/index.js';
import type { ConsumerLane, PhaseCounters, TopicPartition } from './consume.js';

/** A lane as it crosses to the thread. */
interface LaneData {
  readonly leader: number;
  readonly lane: number;
  readonly partitions: readonly TopicPartition[];
  readonly offsets: Array<[string, bigint]>;
  readonly endOffsets?: Array<[string, bigint]>;
}

export interface ConsumerThreadData {
  /** How the thread's client connects (bootstrap, TLS, SASL). */
  readonly client: KafkaClientOptions;
  readonly lanes: readonly LaneData[];
  readonly recordSize: number;
  readonly readCommitted: boolean;
  /** False for catch-up reads, where a batch's age is not a latency. */
  readonly recordEndToEnd: boolean;
  /** Date.now() past which the consumers stop by themselves, or null. */
  readonly deadline: number | null;
  /**
   * Float64Array over it: records consumed, bytes consumed, the thread's GC seconds, and the start of the window
   * it counts (NaN until it counts one).
   */
  readonly totals: SharedArrayBuffer;
}

export type ToConsumers = { type: 'start'; measureFrom: number | null } | { type: 'measure'; at: number } | { type: 'stop' };

export type FromConsumers =
  | { type: 'ready' }
  | { type: 'done'; consumed: PhaseCounters; e2e: string; errors: Record<string, number>; offsets: Array<[string, bigint]> }
  | { type: 'failed'; message: string };

/** What the consumers counted, once they stopped. */
export interface ConsumersResult {
  /** In the measured window. */
  readonly consumed: PhaseCounters;
  /** The window's e2e latencies (stats.ts `encodeHistogram`). */
  readonly e2e: string;
  /** Whole run. */
  readonly errors: Record<string, number>;
  /** Where each partition's consumer got to (tpKey). */
  readonly offsets: Map<string, bigint>;
}

export interface ConsumerThreadOptions {
  readonly client: KafkaClientOptions;
  readonly lanes: readonly ConsumerLane[];
  readonly recordSize: number;
  readonly readCommitted: boolean;
  readonly recordEndToEnd: boolean;
  readonly deadline?: number;
}

export class ConsumerThread {
  private readonly totals: Float64Array;
  private readonly result: Promise<ConsumersResult>;

  private constructor(
    private readonly worker: Worker,
    totals: SharedArrayBuffer,
    result: Promise<ConsumersResult>,
  ) {
    this.totals = new Float64Array(totals);
    this.result = result;
  }

  /** Starts the thread; settles once its client is connected and has the lanes' metadata (see `run`). */
  static async start(o: ConsumerThreadOptions): Promise<ConsumerThread> {
    const totals = new SharedArrayBuffer(4 * Float64Array.BYTES_PER_ELEMENT);
    new Float64Array(totals)[3] = Number.NaN;
    const data: ConsumerThreadData = {
      client: o.client,
      lanes: o.lanes.map((l) => ({
        leader: l.leader,
        lane: l.lane,
        partitions: l.partitions.map((tp) => ({ topic: tp.topic, partition: tp.partition })),
        offsets: [...l.offsets],
        endOffsets: l.endOffsets ? [...l.endOffsets] : undefined,
      })),
      recordSize: o.recordSize,
      readCommitted: o.readCommitted,
      recordEndToEnd: o.recordEndToEnd,
      deadline: o.deadline ?? null,
      totals,
    };
    // The thread runs TypeScript as this process does, whether or not this process was started through tsx
    // (vitest is not).
    const worker = new Worker(new URL('./consumer-worker.ts', import.meta.url), { workerData: data, execArgv: ['--import', 'tsx'], name: 'bench-consumers' });
    let signalReady: () => void = () => undefined;
    const ready = new Promise<void>((resolve) => (signalReady = resolve));
    const result = new Promise<ConsumersResult>((resolve, reject) => {
      worker.on('message', (m: FromConsumers) => {
        if (m.type === 'ready') signalReady();
        else if (m.type === 'done') resolve({ consumed: m.consumed, e2e: m.e2e, errors: m.errors, offsets: new Map(m.offsets) });
        else reject(new Error(`the consumer thread failed: ${m.message}`));
      });
      worker.on('error', reject);
      worker.on('exit', (code) => reject(new Error(`the consumer thread exited (code ${code}) before its consumers stopped`)));
    });
    // A thread that fails before it is ready rejects `result`: surface that instead of waiting forever.
    try {
      await Promise.race([ready, result.then(() => undefined)]);
    } catch (e) {
      await worker.terminate();
      throw e;
    }
    return new ConsumerThread(worker, totals, result);
  }

  /**
   * Starts the consumers' fetches; with `measureFrom` (nowMs), counting the window that began then from their
   * first fetch on.
   */
  run(measureFrom: number | null = null): void {
    this.post({ type: 'start', measureFrom });
  }

  /** Records consumed so far. */
  get consumedTotal(): number {
    return this.totals[0]!;
  }

  /** Payload bytes consumed so far. */
  get consumedBytesTotal(): number {
    return this.totals[1]!;
  }

  /** Seconds of the thread's GC pauses so far. */
  get gcSeconds(): number {
    return this.totals[2]!;
  }

  /**
   * Counts the window that began at `at` (nowMs): batches sent before it are not the window's. The thread takes
   * the message before the answer to any fetch that could hold a batch sent after `at` (posted first, and that
   * batch has a broker to go through); `measuringFrom` says when it has.
   */
  startMeasuring(at: number): void {
    this.post({ type: 'measure', at });
  }

  /** The start of the window the thread counts (`startMeasuring`, or `run`'s), or null before it counts one. */
  get measuringFrom(): number | null {
    const at = this.totals[3]!;
    return Number.isNaN(at) ? null : at;
  }

  /** Stops the consumers; settles with what they counted once the thread has closed its client. */
  async stop(): Promise<ConsumersResult> {
    this.post({ type: 'stop' });
    return this.finished();
  }

  /** Settles once the consumers have stopped, by themselves (a catch-up read's end or its deadline) or told to. */
  async finished(): Promise<ConsumersResult> {
    try {
      return await this.result;
    } finally {
      await this.worker.terminate();
    }
  }

  /** Ends the thread wherever it is (after `finished`, or on a failed run); what it counted is lost. */
  async terminate(): Promise<void> {
    await this.worker.terminate();
  }

  private post(m: ToConsumers): void {
    this.worker.postMessage(m);
  }
}
