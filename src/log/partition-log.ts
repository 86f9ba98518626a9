/**
 * PartitionLog: one Kafka partition as an ordered chain of ledgers (Pulsar's ManagedLedger over the ledger
 * store), with Kafka's log semantics (UnifiedLog): offsets, high watermark, last stable offset, log start
 * offset, rollover, retention, DeleteRecords, ListOffsets and Fetch reads. Design notes: README.md here.
 *
 * ```
 *   chain:  [ledger 7 sealed][ledger 9 sealed] … [ledger 15 open] ← appends (append.ts, roll.ts)
 *             ▲ reads, ListOffsets (read.ts, list-offsets.ts)      ▲ takeover fences it (takeover.ts)
 *             └ retention, DeleteRecords delete from here (retention.ts)
 * ```
 *
 * This file is the API the broker calls; each concern lives in its own file, all over one LogCore
 * (log-core.ts) that holds the partition's offsets, index, chain head and open ledger.
 */
import { Appender } from './append.js';
import { Compaction, type CleanableState, type CompactionOptions, type CompactionResult } from './compaction.js';
import { OffsetLookups } from './list-offsets.js';
import { LogCore, type LogStateWatcher } from './log-core.js';
import { Reader } from './read.js';
import { Roller } from './roll.js';
import { SnapshotWriter } from './snapshot-writer.js';
import { Takeover } from './takeover.js';
import { resolveLogConfig, type PartitionLogConfig } from './config.js';
import { buildEndTxnMarkerBatch } from '../../protocol/records/control.js';
import { LogInvalidArgumentError, TxnMarkerRefusedError } from './errors.js';
import type { PartitionProducerState } from './producer-state.js';
import { Retention, deletePartition } from './retention.js';
import type {
  AppendOptions,
  AppendResult,
  EpochEndOffset,
  IsolationLevel,
  PartitionLogOptions,
  PartitionLogState,
  PartitionLogStats,
  ReadOptions,
  ReadResult,
  RetentionResult,
  TimestampAndOffset,
  TxnMarker,
} from './types.js';

export * from './types.js';
export type { LogStateWatcher } from './log-core.js';

/**
 * The public face of one partition's log. Its parts share one LogCore (log-core.ts): the append pipeline
 * (append.ts), rollover (roll.ts), reads (read.ts), ListOffsets and OffsetsForLeaderEpoch (list-offsets.ts),
 * retention and deletion (retention.ts), index snapshots (snapshot-writer.ts) and the takeover (takeover.ts).
 */
export class PartitionLog {
  readonly topic: string;
  readonly partition: number;
  /** `topic-partition`, as Kafka names it. */
  readonly name: string;

  readonly #core: LogCore;
  readonly #appender: Appender;
  readonly #roller: Roller;
  readonly #reader: Reader;
  readonly #lookups: OffsetLookups;
  readonly #retention: Retention;
  readonly #takeover: Takeover;
  readonly #compaction: Compaction;

  private constructor(options: PartitionLogOptions) {
    const core = (this.#core = new LogCore(options));
    // The parts know the core only; the core reaches them through the ports it declares (log-core.ts).
    core.appender = this.#appender = new Appender(core);
    core.roller = this.#roller = new Roller(core);
    core.reader = this.#reader = new Reader(core);
    core.lookups = this.#lookups = new OffsetLookups(core);
    core.retention = this.#retention = new Retention(core);
    core.snapshotWriter = new SnapshotWriter(core);
    this.#takeover = new Takeover(core);
    this.#compaction = new Compaction(core);
    this.topic = this.#core.topic;
    this.partition = this.#core.partition;
    this.name = this.#core.name;
  }

  /**
   * Takes ownership of the partition (creating it if its chain does not exist): loads the chain, fences the
   * previous owner's open ledger (ledger store `fence`: its writer's appends fail from now on, and the ledger
   * is sealed at its last durable entry), indexes every ledger (from persisted snapshots where present),
   * opens a new ledger and records all of it with one compare-and-set on the chain head, raising the
   * partition leader epoch. No data is copied. Fails with LogFencedError if other owners keep winning the
   * race for the chain.
   */
  static async open(options: PartitionLogOptions): Promise<PartitionLog> {
    const log = new PartitionLog(options);
    await log.#takeover.open();
    return log;
  }

  // ---- offsets and state ---------------------------------------------------------------------------

  get state(): PartitionLogState {
    return this.#core.state;
  }

  get config(): PartitionLogConfig {
    return this.#core.config;
  }

  /** The partition leader epoch this owner writes into batches (raised by each takeover). */
  get leaderEpoch(): number {
    return this.#core.head.epoch;
  }

  /** Kafka's log start offset: the first offset a consumer may fetch. */
  get logStartOffset(): number {
    return this.#core.logStartOffset;
  }

  /** Offset after the last durable batch: what consumers may read (single node: HW = durable log end). */
  get highWatermark(): number {
    return this.#core.highWatermark;
  }

  /** Offset the next appended batch gets (includes appends not yet durable). */
  get logEndOffset(): number {
    return this.#core.nextOffset;
  }

  /**
   * Kafka's last stable offset: the high watermark, or the first offset of the oldest ongoing transaction
   * if that is lower (from the producer state: transactional batches start one, markers end it).
   */
  get lastStableOffset(): number {
    return this.#core.lastStableOffset;
  }

  get stats(): PartitionLogStats {
    return {
      ledgers: this.#core.index.ledgers.length,
      batches: this.#core.index.batchCount,
      sizeInBytes: this.#core.index.sizeInBytes,
      indexMemoryBytes: this.#core.index.memoryBytes,
      openMs: this.#core.openMs,
      ledgersFromSnapshots: this.#core.fromSnapshots,
      ledgersFromData: this.#core.fromData,
      rolls: { ...this.#core.rolls },
      producerState: { ...this.#core.producerLoad },
    };
  }

  /**
   * The partition's idempotent-producer state (producer-state.ts): Produce checks batches against it, and
   * the log keeps it, applying every batch as it becomes durable and persisting it with each sealed ledger.
   */
  get producers(): PartitionProducerState {
    return this.#core.producers;
  }

  /** The ledgers of the chain, oldest first: id, offsets, batches, bytes, state. For admin tools and tests. */
  describeLedgers(): Array<{
    ledgerId: number;
    startOffset: number;
    endOffset: number;
    batches: number;
    bytes: number;
    maxTimestamp: number;
    epoch: number;
    sealed: boolean;
    indexLedgerId: number | null;
  }> {
    return this.#core.index.ledgers.map((l) => ({
      ledgerId: l.ledgerId,
      startOffset: l.startOffset,
      endOffset: l.endOffset,
      batches: l.count,
      bytes: l.bytes,
      maxTimestamp: l.maxTimestamp,
      epoch: l.epoch,
      sealed: l.sealedAtMs !== null,
      indexLedgerId: l.indexLedgerId,
    }));
  }

  /** Applies new topic configs (AlterConfigs); a smaller segment limit takes effect at the next append. */
  updateConfig(config: Partial<PartitionLogConfig>): void {
    this.#core.config = resolveLogConfig({ ...this.#core.config, ...config });
    const a = this.#core.active;
    if (a && a.firstAppendAtMs !== null) this.#roller.armRollTimer(a);
  }

  // ---- compaction ----------------------------------------------------------------------------------

  /** Where the log stands for the log cleaner: dirty ratio, cleanable range, whether a pass is due (compaction.ts). */
  cleanableState(nowMs: number): CleanableState {
    return this.#compaction.cleanableState(nowMs);
  }

  /**
   * One compaction pass (Kafka's LogCleaner over this log), run by the broker's LogCleaner (log-cleaner.ts):
   * null when the log does not compact (cleanup.policy), is not open or no pass is due.
   */
  compact(options: CompactionOptions): Promise<CompactionResult | null> {
    return this.#compaction.compact(options);
  }

  // ---- append, read, lookups ----------------------------------------------------------------------

  /**
   * Appends one record batch (already validated by the caller: CRC, producer rules). The log assigns its
   * offsets by rewriting baseOffset and partitionLeaderEpoch in place (and, for LogAppendTime topics, the
   * timestamp type, maxTimestamp and CRC), so the buffer must not be reused. Resolves once the batch is
   * durable, in offset order with the other appends; rejects with LogFencedError, LogClosedError,
   * LogDeletedError, InvalidAppendOffsetError, LogStorageError, EntryTooLargeError (ledger store) or
   * CorruptRecordError (not a batch v2).
   */
  append(batch: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    return this.#appender.append(batch, options);
  }

  /**
   * Appends a COMMIT or ABORT marker for a producer's transaction (WriteTxnMarkers, KIP-98): a control
   * batch (protocol/records/control.ts) that, once durable, ends the producer's ongoing transaction here
   * (the last stable offset moves; an aborted one enters the aborted-transaction index). Refused with
   * TxnMarkerRefusedError (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED) for an older producer or
   * coordinator epoch, as Kafka's appendEndTxnMarker; a producer with no state here gets its marker
   * written. Otherwise fails as `append` does.
   */
  writeTxnMarker(m: TxnMarker): Promise<AppendResult> {
    if (m.producerId < 0n || !Number.isInteger(m.producerEpoch) || m.producerEpoch < 0 || m.producerEpoch > 0x7fff) {
      return Promise.reject(new LogInvalidArgumentError(`invalid producer ${m.producerId} epoch ${m.producerEpoch} for a transaction marker`));
    }
    if (!Number.isInteger(m.coordinatorEpoch) || m.coordinatorEpoch < -0x80000000 || m.coordinatorEpoch > 0x7fffffff) {
      return Promise.reject(new LogInvalidArgumentError(`coordinator epoch must be an int32, got ${m.coordinatorEpoch}`));
    }
    const refused = this.#core.producers.checkMarker(m.producerId, m.producerEpoch, m.coordinatorEpoch, this.#core.nextOffset);
    if (refused) return Promise.reject(new TxnMarkerRefusedError(this.name, refused.errorCode, refused.message));
    const now = this.#core.clock.now();
    return this.#appender.append(buildEndTxnMarkerBatch({ ...m, timestamp: now }));
  }

  /** Seals the open ledger and opens a new one now, if the open ledger holds any batch. */
  async roll(): Promise<void> {
    return this.#roller.roll();
  }

  /**
   * Reads whole stored batches from `fromOffset` (Fetch): from the batch holding that offset (or the first
   * one after it when it falls in a gap), up to `maxBytes`, never past the high watermark (or the last stable
   * offset for read_committed). Returns no batches when `fromOffset` is at the end. Throws
   * OffsetOutOfRangeError when `fromOffset` is below the log start offset or above the log end offset
   * (Kafka's OFFSET_OUT_OF_RANGE), LogFencedError/LogClosedError/LogDeletedError when this owner cannot serve.
   */
  async read(fromOffset: number, options: ReadOptions = {}): Promise<ReadResult> {
    return this.#reader.read(fromOffset, options);
  }

  /** `read`'s answer when there is nothing to read at `fromOffset`, synchronously; undefined otherwise (read.ts). */
  readAtEnd(fromOffset: number, isolation?: IsolationLevel): ReadResult | undefined {
    return this.#reader.readAtEnd(fromOffset, isolation);
  }

  /**
   * Resolves true once a batch at or after `offset` is readable (high watermark > offset), or at once if it
   * already is or the log can no longer serve (the caller's next read reports why); false when `signal`
   * aborts first (Fetch's max_wait_ms). No polling: the append that moves the high watermark wakes it.
   */
  waitForData(offset: number, signal?: AbortSignal, isolation?: IsolationLevel): Promise<boolean> {
    return this.#reader.waitForData(offset, signal, isolation);
  }

  /**
   * Calls `wake` once a batch at or after `offset` is readable (or the log can no longer serve) — at once,
   * synchronously, if that is already so. Returns a function that cancels the wait. Takes no AbortSignal,
   * so a caller waiting on many partitions (a Fetch long-poll) adds one abort listener for its whole wait,
   * not one per partition. With `read_committed` it waits for the last stable offset to pass `offset` (a
   * marker ending a transaction moves it), not the high watermark.
   */
  onData(offset: number, wake: () => void, isolation?: IsolationLevel): () => void {
    return this.#reader.onData(offset, wake, isolation);
  }

  /**
   * Changes each time what a reader at the end of the log sees may have changed: the high watermark or last stable
   * offset moved, the log start offset rose, or the log ended. Equal versions mean a caught-up read would answer
   * the same.
   */
  get stateVersion(): number {
    return this.#core.stateVersion;
  }

  /**
   * Tells `w` of each change that moves stateVersion, until unwatchState or the log's end (the last change it is
   * told of). Watching is idempotent and costs each append one call per watcher.
   */
  watchState(w: LogStateWatcher): void {
    if (!this.#core.terminal) this.#core.stateWatchers.add(w);
  }

  unwatchState(w: LogStateWatcher): void {
    this.#core.stateWatchers.delete(w);
  }

  /**
   * ListOffsets for one partition (Kafka's UnifiedLog.fetchOffsetByTimestamp plus Partition's isolation
   * bound). `timestamp` is a time in ms or one of ListOffsetsTimestamp:
   * - LATEST (-1): the high watermark (read_uncommitted) or last stable offset (read_committed);
   * - EARLIEST (-2) and EARLIEST_LOCAL (-4): the log start offset;
   * - MAX_TIMESTAMP (-3, KIP-734): the first record carrying the largest timestamp in the log;
   * - LATEST_TIERED (-5, KIP-1005): -1, since no ledger is tiered;
   * - t ≥ 0: the earliest offset whose record timestamp is ≥ t, from the log start offset on.
   * Returns null where Kafka answers offset -1 / timestamp -1 (no such record below the isolation bound).
   */
  async listOffsets(timestamp: number, options: { isolation?: IsolationLevel } = {}): Promise<TimestampAndOffset | null> {
    return this.#lookups.listOffsets(timestamp, options);
  }

  /**
   * OffsetsForLeaderEpoch (KIP-101/279, Kafka's LeaderEpochFileCache.endOffsetFor): the largest epoch ≤ the
   * requested one and the offset where the next higher epoch starts (the log end offset for the current
   * epoch); {-1, -1} for an undefined epoch or one above every known epoch.
   */
  endOffsetForEpoch(requestedEpoch: number): EpochEndOffset {
    return this.#lookups.endOffsetForEpoch(requestedEpoch);
  }

  // ---- retention, DeleteRecords, deletion, close -------------------------------------------------

  /**
   * Kafka's DeleteRecords on the leader: moves the log start offset to `offset` (-1: the high watermark);
   * ledgers wholly below it are deleted. Throws OffsetOutOfRangeError for an offset above the high watermark
   * (or negative). Resolves with the new low watermark (the log start offset), which never moves back.
   */
  async deleteRecords(offset: number): Promise<{ lowWatermark: number }> {
    return this.#retention.deleteRecords(offset);
  }

  /**
   * Kafka's deleteOldSegments: deletes, oldest first, sealed ledgers past retention.ms (their newest batch
   * timestamp older than now − retention.ms; the sealing time when no batch had a timestamp), then while the
   * partition stays above retention.bytes without them, then those wholly below the log start offset. The
   * open ledger is never deleted (segment.ms seals it eventually). Advances the log start offset.
   */
  async enforceRetention(): Promise<RetentionResult> {
    return this.#retention.enforceRetention();
  }

  /**
   * Deletes the partition (topic deletion): every ledger and the chain. Appends and reads fail with
   * LogDeletedError afterwards.
   */
  async delete(): Promise<void> {
    return this.#retention.delete();
  }

  /**
   * Deletes a partition whatever its state and owner (topic deletion from a controller): fences its open
   * ledger, so a live owner stops, removes the chain, then deletes every ledger. A no-op if it does not exist.
   */
  static async deletePartition(
    options: Pick<PartitionLogOptions, 'topic' | 'partition' | 'ledgers' | 'metadata'>,
  ): Promise<void> {
    return deletePartition(options);
  }

  /**
   * Releases the partition: appends not yet issued fail with LogClosedError, issued ones complete, the open
   * ledger is sealed and recorded as sealed (with its index snapshot), timers and the watch stop.
   */
  async close(): Promise<void> {
    return this.#core.close();
  }
}
