/**
 * One __consumer_offsets partition as the coordinator runs it (Kafka's coordinator shard): the groups and
 * offsets it holds, their timers, and the write path to its log.
 *
 * ```
 *   loading ──replay done──► active ──append failed──► loading (reload from the log) ──► active
 *      │                        │
 *      └──────── stop ──────────┴──► closed
 * ```
 *
 * A write operation runs synchronously against the in-memory state and returns records plus a response; its
 * records are replayed into memory at once (unless the operation already applied them itself, as classic
 * group writes do) and appended; the response is released once they are durable. An operation without records
 * still waits for the appends before it, so no response overtakes the durability of an earlier change. When an
 * append fails, every later write queued behind it fails too and the partition is reloaded from its log, which
 * puts memory back to what is durable (Kafka reverts its timeline snapshot instead).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Clock, ClockTimer } from '../metadata/clock.js';
import { CoordinatorCorruptError, CoordinatorStorageError, GroupApiError } from './errors.js';
import { replayRecord, type Group, type ReplayTarget } from './group-records.js';
import { OffsetStore } from './offsets.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from './records.js';
import { CoordinatorStorage, type CoordinatorPartitionLog, type ReplayStats, type TxnMarkerWrite, type TxnProducer } from './storage.js';
import { KeyedTimer } from './timer.js';
import { TxnOffsets } from './txn-offsets.js';

export interface OpResult<T> {
  readonly records: readonly CoordinatorRecord[];
  readonly response: T;
  /** Replay the records into memory before appending them (default true). */
  readonly replay?: boolean;
  /** The records are a TxnOffsetCommit's: one transactional batch of this producer, pending until its marker. */
  readonly transactional?: TxnProducer;
  /** Called once the records are durable (null) or could not be written. */
  readonly onAppend?: (err: Error | null) => void;
}

export type ShardStatus = 'loading' | 'active' | 'failed' | 'closed';

export interface ShardHooks {
  /** After a load: schedule member timers (Kafka's onLoaded). */
  onLoaded(shard: Shard): void;
  /** Before state is dropped: answer parked requests (Kafka's onUnloaded). */
  onUnloaded(shard: Shard): void;
  /** A group object left the map (tombstone replay or replacement). */
  onGroupRemoved(shard: Shard, group: Group): void;
  onLoadFailed(shard: Shard, err: Error): void;
  onBackgroundError(shard: Shard, err: Error): void;
  /** A stored record or batch that does not decode, skipped while loading. */
  onUndecodable(shard: Shard, err: CoordinatorCorruptError): void;
}

export interface ShardOptions {
  readonly partition: number;
  readonly clock: Clock;
  readonly openLog: (partition: number) => Promise<CoordinatorPartitionLog>;
  readonly hooks: ShardHooks;
}

const RELOAD_BACKOFF_MS = [100, 500, 1000, 5000];

export class Shard implements ReplayTarget {
  readonly partition: number;
  status: ShardStatus = 'loading';
  groups = new Map<string, Group>();
  offsets = new OffsetStore();
  txnOffsets = new TxnOffsets();
  readonly timer: KeyedTimer;
  lastLoad: (ReplayStats & { durationMs: number }) | null = null;
  private storage: CoordinatorStorage | null = null;
  private loading: Promise<void> | null = null;
  private loadAttempts = 0;
  private retry: ClockTimer | null = null;
  /** The order of the last record replayed: its log offset when loading, then one more per record written. */
  private recordOrder = -1;
  /** The epoch of each producer with a transaction open here, the one its writes and marker must not be below. */
  private openEpochs = new Map<bigint, number>();

  constructor(private readonly options: ShardOptions) {
    this.partition = options.partition;
    this.timer = new KeyedTimer(options.clock);
  }

  now(): number {
    return this.options.clock.now();
  }

  onGroupRemoved(group: Group): void {
    this.options.hooks.onGroupRemoved(this, group);
  }

  /** Throws the error Kafka answers with when this partition cannot take requests. */
  checkActive(): void {
    if (this.status === 'active') return;
    if (this.status === 'loading') throw new GroupApiError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, undefined, { partition: this.partition });
    if (this.status === 'failed') throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, undefined, { partition: this.partition });
    throw new GroupApiError(ErrorCode.NOT_COORDINATOR, undefined, { partition: this.partition });
  }

  /**
   * Loads the partition (replays its log). Resolves when the attempt is over: active, or failed, in which case
   * another attempt is scheduled with backoff (requests meanwhile get COORDINATOR_NOT_AVAILABLE).
   */
  load(): Promise<void> {
    this.loading ??= this.attempt().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** A promise that settles once the current load attempt (if any) is over. */
  whenLoaded(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private async attempt(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'loading';
    const started = this.options.clock.now();
    this.groups = new Map();
    this.offsets = new OffsetStore();
    this.txnOffsets = new TxnOffsets();
    this.recordOrder = -1;
    this.openEpochs = new Map();
    try {
      const log = await this.options.openLog(this.partition);
      const storage = new CoordinatorStorage(log, {
        partition: this.partition,
        clock: this.options.clock,
        // A failed append: memory may be ahead of the log, rebuild it.
        onFailure: () => {
          if (this.storage === storage) this.reload();
        },
      });
      const onUndecodable = (err: CoordinatorCorruptError): void => this.options.hooks.onUndecodable(this, err);
      const stats = await storage.replay(
        (rec, offset, producerId, producerEpoch) => {
          this.recordOrder = offset;
          if (producerId >= 0n) this.openEpochs.set(producerId, Math.max(producerEpoch, this.openEpochs.get(producerId) ?? -1));
          let record: CoordinatorRecord;
          try {
            record = decodeRecord(rec.key, rec.value, { partition: this.partition, offset });
          } catch (e) {
            // A stored record this version cannot read is reported and skipped, never a partition that cannot load.
            if (!(e instanceof CoordinatorCorruptError)) throw e;
            onUndecodable(e);
            return;
          }
          replayRecord(this, record, producerId, offset);
        },
        onUndecodable,
        // Kafka's replayEndTransactionMarker.
        (marker) => {
          this.openEpochs.delete(marker.producerId);
          this.txnOffsets.complete(marker.producerId, marker.commit, this.offsets);
        },
      );
      if (this.status !== 'loading') return;
      this.recordOrder = Math.max(this.recordOrder, log.highWatermark);
      this.storage = storage;
      this.status = 'active';
      this.loadAttempts = 0;
      this.lastLoad = { ...stats, durationMs: this.options.clock.now() - started };
      this.options.hooks.onLoaded(this);
    } catch (e) {
      if (this.status !== 'loading') return;
      this.status = 'failed';
      this.groups = new Map();
      this.offsets = new OffsetStore();
      this.txnOffsets = new TxnOffsets();
      this.options.hooks.onLoadFailed(this, e as Error);
      const delay = RELOAD_BACKOFF_MS[Math.min(this.loadAttempts++, RELOAD_BACKOFF_MS.length - 1)]!;
      this.retry = this.options.clock.setTimer(delay, () => {
        this.retry = null;
        if (this.status === 'failed') void this.load();
      });
    }
  }

  /** Drops the in-memory state (answering parked requests) and loads again from the log. */
  private reload(): void {
    if (this.status !== 'active') return;
    this.unloadState();
    this.status = 'loading';
    void this.load();
  }

  private unloadState(): void {
    this.options.hooks.onUnloaded(this);
    this.timer.cancelAll();
    this.storage = null;
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    const storage = this.storage;
    const wasActive = this.status === 'active';
    this.status = 'closed';
    this.retry?.cancel();
    if (wasActive) this.unloadState();
    else this.timer.cancelAll();
    await storage?.flushed();
  }

  /**
   * Runs a write operation. Rejects with GroupApiError when the partition is not active or the operation
   * refused; with CoordinatorStorageError when its records could not be written (the partition then reloads).
   */
  async write<T>(op: () => OpResult<T>): Promise<T> {
    this.checkActive();
    const storage = this.storage!;
    const result = op();
    const encoded = result.records.map(encodeRecord);
    const txn = result.transactional;
    if (txn && CoordinatorStorage.batchBytes(encoded) > storage.batchBytesLimit) {
      // Kafka's runtime writes a transactional write as one batch and refuses one that does not fit
      // (RecordTooLargeException, answered UNKNOWN_SERVER_ERROR by handleOperationException).
      throw new GroupApiError(ErrorCode.UNKNOWN_SERVER_ERROR, `The transactional offset commit does not fit in one batch of ${storage.batchBytesLimit} bytes.`, {
        partition: this.partition,
      });
    }
    if (txn) {
      this.checkProducerEpoch(txn.producerId, txn.producerEpoch);
      this.openEpochs.set(txn.producerId, txn.producerEpoch);
    }
    if (result.replay !== false) {
      try {
        for (const r of result.records) replayRecord(this, r, txn ? txn.producerId : -1n, ++this.recordOrder);
      } catch (e) {
        // Memory no longer matches any sequence of records: rebuild it from the log.
        this.reload();
        throw e;
      }
    }
    try {
      await (txn ? storage.appendTransactional(txn, encoded) : storage.append(encoded));
    } catch (e) {
      const err = e instanceof CoordinatorStorageError ? e : new CoordinatorStorageError(`__consumer_offsets-${this.partition} is not writable`, { partition: this.partition }, e);
      result.onAppend?.(err);
      if (this.storage === storage) this.reload();
      throw err;
    }
    result.onAppend?.(null);
    return result.response;
  }

  /**
   * Writes a transaction marker after everything queued before (Kafka's scheduleTransactionCompletion): the
   * producer's pending offsets are committed or dropped in memory at once, and the marker is appended.
   */
  async writeMarker(marker: TxnMarkerWrite): Promise<void> {
    this.checkActive();
    const storage = this.storage!;
    this.checkProducerEpoch(marker.producerId, marker.producerEpoch);
    this.openEpochs.delete(marker.producerId);
    this.txnOffsets.complete(marker.producerId, marker.commit, this.offsets);
    ++this.recordOrder;
    try {
      await storage.appendMarker(marker);
    } catch (e) {
      if (this.storage === storage) this.reload();
      throw e instanceof CoordinatorStorageError ? e : new CoordinatorStorageError(`__consumer_offsets-${this.partition} is not writable`, { partition: this.partition }, e);
    }
  }

  /**
   * Kafka's ProducerAppendInfo.checkProducerEpoch for the coordinator's own appends: a transactional write or a
   * marker of an older epoch than the producer's open transaction here is refused with INVALID_PRODUCER_EPOCH
   * (a zombie producer, fenced by a newer instance). Outside a transaction the transaction coordinator's
   * verification fences it.
   */
  checkProducerEpoch(producerId: bigint, producerEpoch: number): void {
    const open = this.openEpochs.get(producerId);
    if (open !== undefined && producerEpoch < open) {
      throw new GroupApiError(
        ErrorCode.INVALID_PRODUCER_EPOCH,
        `Epoch of producer ${producerId} is ${producerEpoch}, which is smaller than the last seen epoch ${open}`,
        { partition: this.partition },
      );
    }
  }

  /** Runs a write from a timer: its failure is logged, not answered. */
  runScheduled(op: () => OpResult<void>): void {
    if (this.status !== 'active') return;
    this.write(op).catch((err: Error) => {
      if (!(err instanceof GroupApiError)) this.options.hooks.onBackgroundError(this, err);
    });
  }

  /** Runs a read once every write accepted before it is durable. */
  async read<T>(fn: () => T): Promise<T> {
    this.checkActive();
    await this.storage!.flushed();
    this.checkActive();
    return fn();
  }
}
