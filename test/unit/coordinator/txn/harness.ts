/**
 * A transaction coordinator on a manual clock over in-memory __transaction_state logs (kept across coordinator
 * instances, so a new instance reloads what the last one wrote), a topic registry of its own, a counting
 * producer-id allocator and a marker sink that records what it is asked and answers as told.
 */
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { ManualClock } from '../../../../src/metadata/clock.js';
import { MemoryPartitionLog } from '../../../../src/coordinator/memory-log.js';
import { TransactionCoordinator } from '../../../../src/coordinator/txn/coordinator.js';
import { transactionCoordinatorConfig, type TransactionCoordinatorConfig } from '../../../../src/coordinator/txn/config.js';
import type { TxnMarkerEntry, TxnMarkerResult, TxnMarkerSink } from '../../../../src/coordinator/txn/types.js';
import { FakeTopics } from '../harness.js';

export class RecordingSink implements TxnMarkerSink {
  readonly calls: TxnMarkerEntry[][] = [];
  /** Every partition a marker was written to (answered NONE), as `topic-partition:COMMIT|ABORT`. */
  readonly written: string[] = [];
  /** The error each partition answers (NONE unless set). */
  answer: (topic: string, partition: number) => number = () => ErrorCode.NONE;
  /** When set, every write waits for it (a partition slow to take its markers). */
  held: Promise<void> | null = null;

  async write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> {
    this.calls.push([...markers]);
    if (this.held) await this.held;
    return markers.map((m) => ({
      producerId: m.producerId,
      partitions: m.partitions.map((p) => {
        const errorCode = this.answer(p.topic, p.partition);
        if (errorCode === ErrorCode.NONE) this.written.push(`${p.topic}-${p.partition}:${m.commit ? 'COMMIT' : 'ABORT'}`);
        return { topic: p.topic, partition: p.partition, errorCode };
      }),
    }));
  }
}

export interface TxnHarnessOptions {
  readonly config?: Partial<TransactionCoordinatorConfig>;
  readonly owns?: (partition: number) => boolean;
}

export class TxnHarness {
  readonly clock = new ManualClock();
  readonly topics = new FakeTopics();
  readonly logs = new Map<number, MemoryPartitionLog>();
  readonly sink = new RecordingSink();
  nextProducerId = 1000n;
  coordinator!: TransactionCoordinator;
  /** Partitions whose log is being opened and not yet given (openLog waits on these). */
  readonly heldOpen = new Map<number, () => void>();
  holdOpens = false;

  constructor(private readonly o: TxnHarnessOptions = {}) {
    this.topics.add('orders', 3);
    this.topics.add('payments', 1);
    this.topics.add('__consumer_offsets', 50, true);
  }

  log(partition: number): MemoryPartitionLog {
    let l = this.logs.get(partition);
    if (!l) this.logs.set(partition, (l = new MemoryPartitionLog()));
    return l;
  }

  /** A coordinator over the harness's logs (the previous one is stopped first). */
  async start(): Promise<TransactionCoordinator> {
    await this.coordinator?.stop();
    this.coordinator = new TransactionCoordinator({
      config: transactionCoordinatorConfig(new Map(), { numPartitions: 5, ...this.o.config }),
      topics: this.topics,
      openLog: async (p) => {
        if (this.holdOpens) await new Promise<void>((r) => this.heldOpen.set(p, r));
        return this.log(p);
      },
      producerIds: { allocate: async () => this.nextProducerId++ },
      markers: this.sink,
      groupPartitionFor: (g) => g.length % 50,
      ...(this.o.owns ? { ownership: { owns: this.o.owns } } : {}),
      clock: this.clock,
    });
    await this.coordinator.start();
    return this.coordinator;
  }

  /** Lets the event loop run the coordinator's pending promise chains. */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  }

  /** Moves the manual clock and lets the work its timers start run. */
  async advance(ms: number): Promise<void> {
    this.clock.advance(ms);
    await this.settle();
  }

  /** InitProducerId, expecting success. */
  async init(id: string, timeoutMs = 60_000): Promise<{ producerId: bigint; producerEpoch: number }> {
    const r = await this.coordinator.initProducerId(id, timeoutMs, null);
    if (r.errorCode !== ErrorCode.NONE) throw new Error(`InitProducerId ${id}: error ${r.errorCode}`);
    return r;
  }
}
