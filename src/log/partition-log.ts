/**
 * PartitionLog: one Kafka partition as an ordered chain of ledgers (Pulsar's ManagedLedger over the ledger
 * store), with Kafka's log semantics (UnifiedLog): offsets, high watermark, last stable offset, log start
 * offset, rollover, retention, DeleteRecords, ListOffsets and Fetch reads. Design notes: README.md here.
 *
 * ```
 *   append(batch) ─► waiting ─► issue: rewrite baseOffset + partitionLeaderEpoch in place ─► writer.append
 *                                                                                              │ durable
 *   resolve {baseOffset, …} ◄─ high watermark ◄─ index.push ◄─ in offset order, once the ledger ◄┘
 *                                                              is recorded in the chain
 *
 *   chain:  [ledger 7 sealed][ledger 9 sealed] … [ledger 15 open] ← appends
 *   roll:   create ledger 16 (while 15 drains) → switch → seal 15 + one chain txn {15 sealed, 16 open}
 * ```
 *
 * Only one ledger ever has appends in flight: a roll first lets the old ledger's appends settle (the ledger
 * store resolves them in entry order), then issues to the new one. Acknowledgements of the new ledger's
 * appends wait for the chain txn that records it, so an acknowledged batch is always reachable from the
 * chain after a crash. A storage failure makes the log roll to a new ledger before it takes more appends.
 */
import { randomUUID } from 'node:crypto';
import { RecordBatch } from '../../protocol/records/batch.js';
import { RecordTooLargeError, isRecordsError } from '../../protocol/records/errors.js';
import { findStoredRecord, type TimestampAndOffsetOfRecord } from '../../protocol/records/scan.js';
import { LedgerError } from '../ledger/errors.js';
import type { LedgerEntry, LedgerMetadata, LedgerStore, LedgerWriter } from '../ledger/types.js';
import { systemClock, type Clock, type ClockTimer } from '../metadata/clock.js';
import type { MetadataStore, Watch } from '../metadata/types.js';
import {
  ChainKeys,
  MAX_DELETES_PER_TXN,
  commitChainChange,
  decodeHead,
  deleteChain,
  loadChain,
  type ChainChange,
  type ChainHead,
  type ChainLedger,
  type CommitResult,
  type LoadedChain,
  type OpenChainLedger,
  type SealedChainLedger,
} from './chain.js';
import { resolveLogConfig, retentionDeletes, type PartitionLogConfig } from './config.js';
import {
  InvalidAppendOffsetError,
  LogClosedError,
  LogCorruptError,
  LogDeletedError,
  LogError,
  LogFencedError,
  LogInvalidArgumentError,
  LogStorageError,
  OffsetOutOfRangeError,
} from './errors.js';
import { decodeIndexSnapshot, encodeIndexSnapshot } from './index-snapshot.js';
import { IndexedLedger, PartitionIndex, type BatchPosition } from './offset-index.js';
import {
  ListOffsetsTimestamp,
  type AppendOptions,
  type AppendResult,
  type EpochEndOffset,
  type IsolationLevel,
  type LogLogger,
  type PartitionLogOptions,
  type PartitionLogState,
  type PartitionLogStats,
  type ReadOptions,
  type ReadResult,
  type RetentionResult,
  type TimestampAndOffset,
} from './types.js';

export * from './types.js';

// ---------------------------------------------------------------------------------------------- internals

const DEFAULT_MAX_BYTES = 1024 * 1024;
const REBUILD_READ_BYTES = 16 * 1024 * 1024;
const OPEN_ATTEMPTS = 5;

interface ActiveLedger {
  readonly writer: LedgerWriter;
  readonly indexed: IndexedLedger;
  /** Resolves once the chain records this ledger; rejects if it never will. */
  commit: Promise<void>;
  committed: boolean;
  issued: number;
  issuedBytes: number;
  inflight: number;
  /** First failure of an append to this ledger: the log rolls before issuing more. */
  failed: unknown;
  firstAppendAtMs: number | null;
  /** Called once no append to this ledger is in flight. */
  settledWaiters: Array<() => void>;
  rollTimer: ClockTimer | null;
}

type PendingState = 'waiting' | 'inflight' | 'durable' | 'failed';

interface PendingAppend {
  readonly batch: Buffer;
  readonly view: RecordBatch;
  readonly requestedOffset: number | undefined;
  readonly leaderEpoch: number | undefined;
  state: PendingState;
  ledger: ActiveLedger | null;
  entryId: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
  logAppendTime: number;
  resolve(result: AppendResult): void;
  reject(err: unknown): void;
}

interface Waiter {
  readonly offset: number;
  readonly resolve: (ready: boolean) => void;
  readonly cleanup: () => void;
}

/** What onData returns when it woke its caller at once: nothing to cancel. */
const NO_WAIT = (): void => undefined;

function isLedgerError(err: unknown, code: string): boolean {
  return err instanceof LedgerError && err.code === code;
}

function sealedRecord(l: IndexedLedger, indexLedgerId: number | null = l.indexLedgerId): SealedChainLedger {
  return {
    ledgerId: l.ledgerId,
    state: 'sealed',
    startOffset: l.startOffset,
    epoch: l.epoch,
    createdAtMs: l.createdAtMs,
    endOffset: l.endOffset,
    entries: l.count,
    bytes: l.bytes,
    maxTimestamp: l.maxTimestamp,
    sealedAtMs: l.sealedAtMs ?? 0,
    indexLedgerId,
  };
}

function openRecord(l: IndexedLedger): OpenChainLedger {
  return { ledgerId: l.ledgerId, state: 'open', startOffset: l.startOffset, epoch: l.epoch, createdAtMs: l.createdAtMs };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

// ---------------------------------------------------------------------------------------------- the log

export class PartitionLog {
  readonly topic: string;
  readonly partition: number;
  /** `topic-partition`, as Kafka names it. */
  readonly name: string;

  readonly #ledgers: LedgerStore;
  readonly #metadata: MetadataStore;
  readonly #keys: ChainKeys;
  readonly #clock: Clock;
  readonly #ownerId = randomUUID();
  readonly #owner: string;
  readonly #requestedEpoch: number | undefined;
  readonly #snapshots: boolean;
  readonly #retentionIntervalMs: number;
  readonly #openConcurrency: number;
  readonly #onBackgroundError: (err: Error) => void;
  readonly #logger: LogLogger | undefined;
  /** Stored batches whose records did not decode, reported and not decoded again (ledgerId:entryId; at most 1024). */
  readonly #undecodable = new Set<string>();
  #config: PartitionLogConfig;

  #state: PartitionLogState = 'open';
  #failure: LogError | null = null;
  readonly #index = new PartitionIndex();
  #head!: ChainHead;
  #headRevision = 0;
  #active: ActiveLedger | null = null;

  /** Offset the next batch gets (Kafka's log end offset, counting appends in flight). */
  #nextOffset = 0;
  /** Offset after the last durable batch recorded in the chain. */
  #highWatermark = 0;
  #logStartOffset = 0;
  /** First offset of the oldest open transaction (set by the transaction layer); null when none. */
  #firstUnstableOffset: number | null = null;

  #waiting: PendingAppend[] = [];
  #waitingHead = 0;
  #pending: PendingAppend[] = [];
  #pendingHead = 0;
  #rolling: Promise<void> | null = null;
  #chainTail: Promise<unknown> = Promise.resolve();
  #snapshotTail: Promise<void> = Promise.resolve();
  #backgroundTasks = new Set<Promise<unknown>>();
  readonly #waiters = new Set<Waiter>();
  #retentionTimer: ClockTimer | null = null;
  #watch: Watch | null = null;

  #openMs = 0;
  #fromSnapshots = 0;
  #fromData = 0;
  readonly #rolls: Record<string, number> = {};

  private constructor(options: PartitionLogOptions) {
    if (typeof options.topic !== 'string' || options.topic.length === 0) {
      throw new LogInvalidArgumentError('topic must be a non-empty string');
    }
    if (!Number.isInteger(options.partition) || options.partition < 0 || options.partition > 0x7fffffff) {
      throw new LogInvalidArgumentError(`partition must be an int32 >= 0, got ${options.partition}`);
    }
    this.topic = options.topic;
    this.partition = options.partition;
    this.name = `${options.topic}-${options.partition}`;
    this.#ledgers = options.ledgers;
    this.#metadata = options.metadata;
    this.#keys = new ChainKeys(options.topic, options.partition);
    this.#clock = options.clock ?? systemClock;
    this.#owner = options.owner ?? '';
    const epoch = options.leaderEpoch;
    if (epoch !== undefined && (!Number.isInteger(epoch) || epoch < 0 || epoch > 0x7fffffff)) {
      throw new LogInvalidArgumentError(`leaderEpoch must be an int32 >= 0, got ${options.leaderEpoch}`);
    }
    this.#requestedEpoch = options.leaderEpoch;
    this.#snapshots = options.indexSnapshots ?? true;
    this.#retentionIntervalMs = options.retentionCheckIntervalMs ?? 300_000;
    this.#openConcurrency = Math.max(1, options.openConcurrency ?? 8);
    this.#onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.#logger = options.logger;
    this.#config = resolveLogConfig(options.config);
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
    await log.#open();
    return log;
  }

  // ---- offsets and state ---------------------------------------------------------------------------

  get state(): PartitionLogState {
    return this.#state;
  }

  get config(): PartitionLogConfig {
    return this.#config;
  }

  /** The partition leader epoch this owner writes into batches (raised by each takeover). */
  get leaderEpoch(): number {
    return this.#head.epoch;
  }

  /** Kafka's log start offset: the first offset a consumer may fetch. */
  get logStartOffset(): number {
    return this.#logStartOffset;
  }

  /** Offset after the last durable batch: what consumers may read (single node: HW = durable log end). */
  get highWatermark(): number {
    return this.#highWatermark;
  }

  /** Offset the next appended batch gets (includes appends not yet durable). */
  get logEndOffset(): number {
    return this.#nextOffset;
  }

  /**
   * Kafka's last stable offset: the high watermark, or the first offset of the oldest open transaction if
   * that is lower (set through `setFirstUnstableOffset` by the transaction layer).
   */
  get lastStableOffset(): number {
    const fuo = this.#firstUnstableOffset;
    return fuo === null ? this.#highWatermark : Math.max(this.#logStartOffset, Math.min(fuo, this.#highWatermark));
  }

  /** Where the transaction layer reports the first offset of the oldest ongoing transaction (null: none). */
  setFirstUnstableOffset(offset: number | null): void {
    if (offset !== null && (!Number.isSafeInteger(offset) || offset < 0)) {
      throw new LogInvalidArgumentError(`first unstable offset must be a non-negative integer, got ${offset}`);
    }
    this.#firstUnstableOffset = offset;
  }

  get stats(): PartitionLogStats {
    return {
      ledgers: this.#index.ledgers.length,
      batches: this.#index.batchCount,
      sizeInBytes: this.#index.sizeInBytes,
      indexMemoryBytes: this.#index.memoryBytes,
      openMs: this.#openMs,
      ledgersFromSnapshots: this.#fromSnapshots,
      ledgersFromData: this.#fromData,
      rolls: { ...this.#rolls },
    };
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
    return this.#index.ledgers.map((l) => ({
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
    this.#config = resolveLogConfig({ ...this.#config, ...config });
    const a = this.#active;
    if (a && a.firstAppendAtMs !== null) this.#armRollTimer(a);
  }

  // ---- append ----------------------------------------------------------------------------------------

  /**
   * Appends one record batch (already validated by the caller: CRC, producer rules). The log assigns its
   * offsets by rewriting baseOffset and partitionLeaderEpoch in place (and, for LogAppendTime topics, the
   * timestamp type, maxTimestamp and CRC), so the buffer must not be reused. Resolves once the batch is
   * durable, in offset order with the other appends; rejects with LogFencedError, LogClosedError,
   * LogDeletedError, InvalidAppendOffsetError, LogStorageError, EntryTooLargeError (ledger store) or
   * CorruptRecordError (not a batch v2).
   */
  append(batch: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    const unavailable = this.#writeError();
    if (unavailable) return Promise.reject(unavailable);
    let view: RecordBatch;
    try {
      view = RecordBatch.wrap(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    if (batch.length > this.#config.maxMessageBytes) {
      // Kafka's UnifiedLog.analyzeAndValidateRecords: RecordTooLargeException (MESSAGE_TOO_LARGE).
      return Promise.reject(
        new RecordTooLargeError(
          `The record batch of ${batch.length} bytes is larger than max.message.bytes ` +
            `${this.#config.maxMessageBytes} of ${this.name}`,
        ),
      );
    }
    if (view.lastOffsetDelta < 0) {
      return Promise.reject(new LogInvalidArgumentError(`batch has a negative lastOffsetDelta ${view.lastOffsetDelta}`));
    }
    const requested = options.baseOffset;
    if (requested !== undefined && (!Number.isSafeInteger(requested) || requested < 0)) {
      return Promise.reject(new LogInvalidArgumentError(`baseOffset must be a non-negative integer, got ${requested}`));
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.#waiting.push({
        batch,
        view,
        requestedOffset: requested,
        leaderEpoch: options.partitionLeaderEpoch,
        state: 'waiting',
        ledger: null,
        entryId: -1,
        baseOffset: -1,
        lastOffset: -1,
        maxTimestamp: -1,
        logAppendTime: -1,
        resolve,
        reject,
      });
      this.#pump();
    });
  }

  /** Issues waiting appends to the open ledger, unless a roll must come first. */
  #pump(): void {
    while (this.#waitingHead < this.#waiting.length) {
      if (this.#rolling || this.#state !== 'open') return;
      const a = this.#active;
      if (!a) return;
      const p = this.#waiting[this.#waitingHead]!;
      if (a.failed !== null) {
        this.#startRoll('failure');
        return;
      }
      const reason = this.#rollReason(a, p.batch.length);
      if (reason) {
        this.#startRoll(reason);
        return;
      }
      this.#waiting[this.#waitingHead++] = undefined as unknown as PendingAppend;
      const base = p.requestedOffset ?? this.#nextOffset;
      if (base < this.#nextOffset) {
        p.state = 'failed';
        p.reject(new InvalidAppendOffsetError(this.name, base, this.#nextOffset));
        continue;
      }
      this.#issue(a, p, base);
    }
    this.#waiting = [];
    this.#waitingHead = 0;
  }

  #issue(a: ActiveLedger, p: PendingAppend, base: number): void {
    const view = p.view;
    view.setBaseOffset(base);
    view.setPartitionLeaderEpoch(p.leaderEpoch ?? this.#head.epoch);
    if (this.#config.messageTimestampType === 'LogAppendTime') {
      // Kafka's LogValidator with LOG_APPEND_TIME: the batch gets the broker's time (new CRC).
      p.logAppendTime = this.#clock.now();
      view.setLogAppendTime(p.logAppendTime);
    }
    p.baseOffset = base;
    p.lastOffset = base + view.lastOffsetDelta;
    p.maxTimestamp = view.maxTimestamp;
    p.ledger = a;
    p.entryId = a.issued++;
    p.state = 'inflight';
    a.issuedBytes += p.batch.length;
    a.inflight++;
    if (a.firstAppendAtMs === null) {
      a.firstAppendAtMs = this.#clock.now();
      this.#armRollTimer(a);
    }
    this.#nextOffset = p.lastOffset + 1;
    this.#pending.push(p);
    a.writer.append(p.batch).then(
      (entryId) => this.#onAppended(a, p, entryId),
      (err) => this.#onAppendFailed(a, p, err),
    );
  }

  #onAppended(a: ActiveLedger, p: PendingAppend, entryId: number): void {
    a.inflight--;
    if (p.state === 'inflight') {
      if (a.failed === null && entryId === p.entryId) {
        p.state = 'durable';
      } else {
        // After a failure the store may hand out entry ids again: whatever follows is reconciled by the
        // roll that comes next (it reads what the sealed ledger really holds).
        if (a.failed === null) a.failed = new Error(`ledger store returned entry ${entryId} for entry ${p.entryId}`);
        p.state = 'failed';
        p.reject(new LogStorageError(`append to ${this.name} was not acknowledged`, { partition: this.name }, a.failed));
      }
      this.#completeHead();
    }
    if (a.inflight === 0) this.#settled(a);
  }

  #onAppendFailed(a: ActiveLedger, p: PendingAppend, err: unknown): void {
    a.inflight--;
    if (p.state === 'inflight') {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        this.#fence(new LogFencedError(this.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err));
      } else {
        if (a.failed === null) a.failed = err;
        p.state = 'failed';
        p.reject(
          isLedgerError(err, 'LL_ERR_ENTRY_TOO_LARGE')
            ? err
            : new LogStorageError(`append to ${this.name} failed`, { partition: this.name, ledgerId: a.writer.ledgerId }, err),
        );
        this.#completeHead();
        if (this.#state === 'open') this.#startRoll('failure');
      }
    }
    if (a.inflight === 0) this.#settled(a);
  }

  /** Acknowledges appends at the head of the queue that are durable and recorded in the chain. */
  #completeHead(): void {
    const pending = this.#pending;
    let advanced = false;
    while (this.#pendingHead < pending.length) {
      const p = pending[this.#pendingHead]!;
      if (p.state === 'inflight') break;
      if (p.state === 'durable') {
        const a = p.ledger!;
        if (!a.committed) break;
        a.indexed.push(p.lastOffset, p.maxTimestamp, p.batch.length);
        this.#highWatermark = p.lastOffset + 1;
        advanced = true;
        p.resolve({
          baseOffset: p.baseOffset,
          lastOffset: p.lastOffset,
          logAppendTime: p.logAppendTime,
          logStartOffset: this.#logStartOffset,
        });
      }
      pending[this.#pendingHead++] = undefined as unknown as PendingAppend;
    }
    if (this.#pendingHead === pending.length) {
      this.#pending = [];
      this.#pendingHead = 0;
    } else if (this.#pendingHead > 4096 && this.#pendingHead * 2 > pending.length) {
      this.#pending = pending.slice(this.#pendingHead);
      this.#pendingHead = 0;
    }
    if (advanced) this.#notifyWaiters();
  }

  // ---- rollover ------------------------------------------------------------------------------------

  /** Kafka's LogSegment.shouldRoll, by size, entry count and age; an empty ledger never rolls. */
  #rollReason(a: ActiveLedger, nextBatchBytes: number): string | null {
    if (a.issued === 0) return null;
    const c = this.#config;
    if (a.issuedBytes > c.segmentBytes - nextBatchBytes) return 'segment.bytes';
    if (a.issued >= c.segmentEntries) return 'ledgerline.segment.entries';
    if (a.firstAppendAtMs !== null && this.#clock.now() - a.firstAppendAtMs >= c.segmentMs) return 'segment.ms';
    return null;
  }

  #armRollTimer(a: ActiveLedger): void {
    a.rollTimer?.cancel();
    const due = a.firstAppendAtMs! + this.#config.segmentMs - this.#clock.now();
    // segment.ms also rolls an idle ledger, so that retention can delete it (Kafka rolls on the next append
    // only; Pulsar checks ledgers periodically).
    a.rollTimer = this.#clock.setTimer(Math.max(0, due), () => {
      a.rollTimer = null;
      if (this.#active === a && this.#state === 'open' && a.issued > 0) this.#startRoll('segment.ms');
    });
  }

  /** Seals the open ledger and opens a new one now, if the open ledger holds any batch. */
  async roll(): Promise<void> {
    const err = this.#writeError();
    if (err) throw err;
    if (this.#rolling) await this.#rolling;
    const a = this.#active;
    if (!a || a.issued === 0) return;
    await this.#startRoll('requested');
    await this.#active?.commit;
  }

  #startRoll(reason: string): Promise<void> {
    if (!this.#rolling) {
      this.#rolling = this.#roll(reason)
        .catch((err: unknown) => this.#rollFailed(err))
        .finally(() => {
          this.#rolling = null;
          this.#pump();
        });
    }
    return this.#rolling;
  }

  async #roll(reason: string): Promise<void> {
    const old = this.#active!;
    old.rollTimer?.cancel();
    old.rollTimer = null;
    // Create the next ledger while the old one's appends settle.
    const creating = this.#ledgers.create();
    creating.catch(() => undefined);
    let writer: LedgerWriter;
    try {
      await this.#drain(old);
      await old.commit;
      if (this.#state !== 'open') {
        creating.then((w) => this.#deleteLedgersQuietly([w.ledgerId]), () => undefined);
        return;
      }
      if (old.failed !== null) await this.#reconcileFailedLedger(old);
      writer = await creating;
    } catch (err) {
      creating.then((w) => this.#deleteLedgersQuietly([w.ledgerId]), () => undefined);
      this.#rollFailed(err);
      return;
    }
    if (this.#state !== 'open') {
      this.#deleteLedgersQuietly([writer.ledgerId]);
      return;
    }
    // Every append issued to `old` has settled and the durable ones are in the index.
    this.#nextOffset = this.#highWatermark;
    const next = this.#newActive(writer, this.#nextOffset);
    this.#active = next;
    this.#rolls[reason] = (this.#rolls[reason] ?? 0) + 1;
    const replace = old.indexed.count === 0;
    next.commit = this.#chainOp(async () => {
      const sealedAt = await this.#sealWriter(old);
      // An empty ledger is replaced in place: its successor takes its key (same start offset).
      const change: ChainChange = replace
        ? { put: [openRecord(next.indexed)] }
        : { put: [{ ...sealedRecord(old.indexed), sealedAtMs: sealedAt }, openRecord(next.indexed)] };
      await this.#commit(change);
      if (replace) {
        this.#index.removeLast();
      } else {
        this.#index.sealLast(sealedAt);
      }
      this.#index.add(next.indexed);
      next.committed = true;
      this.#completeHead();
      if (replace) this.#deleteLedgersQuietly([old.writer.ledgerId]);
      else this.#scheduleSnapshot(old.indexed);
    });
    next.commit.catch((err) => this.#chainFailed(err));
  }

  /**
   * Seals a ledger whose appends have all settled and checks that it holds exactly what the log
   * acknowledged. Returns the sealing time.
   */
  async #sealWriter(a: ActiveLedger): Promise<number> {
    if (a.failed !== null) await this.#reconcileFailedLedger(a);
    let meta: LedgerMetadata;
    try {
      meta = await a.writer.seal();
    } catch (err) {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        throw new LogFencedError(this.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err);
      }
      throw new LogStorageError(`cannot seal ledger ${a.writer.ledgerId} of ${this.name}`, { partition: this.name }, err);
    }
    if (meta.lastAddConfirmed + 1 !== a.indexed.count) {
      throw new LogCorruptError(
        `ledger ${a.writer.ledgerId} sealed with ${meta.lastAddConfirmed + 1} entries, the log acknowledged ${a.indexed.count}`,
        { partition: this.name, ledgerId: a.writer.ledgerId },
      );
    }
    // The log's clock, not the store's: retention compares it with the log's clock.
    return this.#clock.now();
  }

  #newActive(writer: LedgerWriter, startOffset: number): ActiveLedger {
    return {
      writer,
      indexed: new IndexedLedger(writer.ledgerId, startOffset, this.#head.epoch, this.#clock.now()),
      commit: Promise.resolve(),
      committed: false,
      issued: 0,
      issuedBytes: 0,
      inflight: 0,
      failed: null,
      firstAppendAtMs: null,
      settledWaiters: [],
      rollTimer: null,
    };
  }

  /** Resolves once no append to `a` is in flight. */
  #drain(a: ActiveLedger): Promise<void> {
    if (a.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => a.settledWaiters.push(resolve));
  }

  #settled(a: ActiveLedger): void {
    const waiters = a.settledWaiters;
    a.settledWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * After a failed append: seal the ledger at what is really durable and index any entry the log had
   * given up on (an append issued while an earlier failure was being reported can still have landed: it
   * is in the ledger, so it is in the log, like a produce that timed out after being written).
   */
  async #reconcileFailedLedger(a: ActiveLedger): Promise<void> {
    let meta: LedgerMetadata;
    try {
      meta = await a.writer.seal();
    } catch (err) {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        throw new LogFencedError(this.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err);
      }
      throw new LogStorageError(`cannot seal ledger ${a.writer.ledgerId} of ${this.name}`, { partition: this.name }, err);
    }
    const known = a.indexed.count;
    if (meta.lastAddConfirmed + 1 > known) {
      const extra = await this.#readBatches(a.indexed, known, meta.lastAddConfirmed);
      let last = known === 0 ? a.indexed.startOffset - 1 : a.indexed.lastOffsetAt(known - 1);
      for (const e of extra) {
        const view = RecordBatch.unchecked(e.data);
        const lastOffset = view.lastOffsetNumber;
        if (lastOffset <= last) {
          throw new LogCorruptError(`ledger ${a.writer.ledgerId} entry ${e.entryId} goes back to offset ${lastOffset}`, {
            partition: this.name,
            ledgerId: a.writer.ledgerId,
          });
        }
        a.indexed.push(lastOffset, view.maxTimestamp, e.data.length);
        last = lastOffset;
        this.#highWatermark = lastOffset + 1;
      }
      this.#notifyWaiters();
    }
    a.failed = null;
  }

  /** A roll could not finish (storage down): fail what waits; the next append tries again. */
  #rollFailed(err: unknown): void {
    if (this.#state !== 'open') return;
    const error =
      err instanceof LogError
        ? err
        : new LogStorageError(`cannot roll ${this.name} to a new ledger`, { partition: this.name }, err);
    if (error instanceof LogFencedError) {
      this.#fence(error);
      return;
    }
    const a = this.#active;
    if (a && a.failed === null) a.failed = error;
    this.#rejectWaiting(error);
  }

  // ---- chain changes -------------------------------------------------------------------------------

  /** Runs chain changes one at a time, in call order. */
  #chainOp<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chainTail.then(fn, fn);
    this.#chainTail = run.catch(() => undefined);
    return run;
  }

  /** One chain txn against the head revision this owner last wrote. Throws LogFencedError if it moved. */
  async #commit(change: ChainChange, logStartOffset = this.#head.logStartOffset): Promise<void> {
    if (this.#state === 'fenced' || this.#state === 'deleted') throw this.#failure!;
    const head: ChainHead = {
      ...this.#head,
      logStartOffset,
      changes: this.#head.changes + 1,
      updatedAtMs: this.#clock.now(),
    };
    let result: CommitResult;
    try {
      result = await commitChainChange(this.#metadata, this.#keys, this.#headRevision, head, change);
    } catch (err) {
      throw new LogStorageError(`cannot update the chain of ${this.name}`, { partition: this.name, key: this.#keys.head }, err);
    }
    if (!result.ok) {
      const err = new LogFencedError(this.name, 'the ledger chain was changed by another owner');
      this.#fence(err);
      throw err;
    }
    this.#head = head;
    this.#headRevision = result.revision;
  }

  /** A chain change failed: fenced (already handled) or the metadata store failed (the log stops taking appends). */
  #chainFailed(err: unknown): void {
    if (this.#state !== 'open' && this.#state !== 'closing') return;
    if (err instanceof LogFencedError) {
      this.#fence(err);
      return;
    }
    const error =
      err instanceof LogError ? err : new LogStorageError(`chain update of ${this.name} failed`, { partition: this.name }, err);
    this.#logger?.warn({ partition: this.name, err: error }, 'partition log failed: reopen it to recover');
    this.#stop('failed', error);
  }

  // ---- read ----------------------------------------------------------------------------------------

  /**
   * Reads whole stored batches from `fromOffset` (Fetch): from the batch holding that offset (or the first
   * one after it when it falls in a gap), up to `maxBytes`, never past the high watermark (or the last stable
   * offset for read_committed). Returns no batches when `fromOffset` is at the end. Throws
   * OffsetOutOfRangeError when `fromOffset` is below the log start offset or above the log end offset
   * (Kafka's OFFSET_OUT_OF_RANGE), LogFencedError/LogClosedError/LogDeletedError when this owner cannot serve.
   */
  async read(fromOffset: number, options: ReadOptions = {}): Promise<ReadResult> {
    const unavailable = this.#readError();
    if (unavailable) throw unavailable;
    if (!Number.isSafeInteger(fromOffset)) throw new LogInvalidArgumentError(`offset must be an integer, got ${fromOffset}`);
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const minOne = options.minOneBatch ?? true;
    const highWatermark = this.#highWatermark;
    const lastStableOffset = this.lastStableOffset;
    const logStartOffset = this.#logStartOffset;
    if (fromOffset < logStartOffset || fromOffset > this.#nextOffset) throw this.#outOfRange(fromOffset);
    const upper = options.isolation === 'read_committed' ? lastStableOffset : highWatermark;
    const records: Buffer[] = [];
    let size = 0;
    let nextOffset = fromOffset;
    let pos: BatchPosition | null = fromOffset < upper ? this.#index.lookup(fromOffset) : null;
    while (pos) {
      const { ledger, entryId } = pos;
      let lastEntry = ledger.count - 1;
      if (upper < ledger.endOffset) lastEntry = ledger.entryForOffset(upper) - 1;
      if (lastEntry < entryId) break;
      const budget = maxBytes - size;
      if (budget <= 0 && !(minOne && records.length === 0)) break;
      let entries: LedgerEntry[];
      try {
        entries = await this.#ledgers.read(ledger.ledgerId, entryId, lastEntry, { maxBytes: Math.max(budget, 1) });
      } catch (err) {
        if (isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
          // Deleted by retention while we read: whatever came before it is still a valid answer.
          if (records.length > 0) break;
          if (fromOffset < this.#logStartOffset) throw this.#outOfRange(fromOffset);
          const gone = this.#readError();
          if (gone) throw gone;
        }
        throw new LogStorageError(
          `cannot read ${this.name} at offset ${fromOffset}`,
          { partition: this.name, ledgerId: ledger.ledgerId },
          err,
        );
      }
      let taken = 0;
      for (const e of entries) {
        if (size + e.data.length > maxBytes && !(minOne && records.length === 0)) break;
        records.push(e.data);
        size += e.data.length;
        taken++;
      }
      if (taken === 0) break;
      nextOffset = ledger.lastOffsetAt(entryId + taken - 1) + 1;
      if (taken < entries.length || entryId + taken - 1 < lastEntry || lastEntry < ledger.count - 1) break;
      pos = nextOffset < upper ? this.#index.lookup(nextOffset) : null;
    }
    return { records, sizeInBytes: size, highWatermark, lastStableOffset, logStartOffset, nextOffset };
  }

  /**
   * Resolves true once a batch at or after `offset` is readable (high watermark > offset), or at once if it
   * already is or the log can no longer serve (the caller's next read reports why); false when `signal`
   * aborts first (Fetch's max_wait_ms). No polling: the append that moves the high watermark wakes it.
   */
  waitForData(offset: number, signal?: AbortSignal): Promise<boolean> {
    if (this.#highWatermark > offset || this.#readError()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        cancel();
        resolve(false);
      };
      const cancel = this.onData(offset, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Calls `wake` once a batch at or after `offset` is readable (or the log can no longer serve) — at once,
   * synchronously, if that is already so. Returns a function that cancels the wait. Takes no AbortSignal,
   * so a caller waiting on many partitions (a Fetch long-poll) adds one abort listener for its whole wait,
   * not one per partition.
   */
  onData(offset: number, wake: () => void): () => void {
    if (this.#highWatermark > offset || this.#readError()) {
      wake();
      return NO_WAIT;
    }
    const w: Waiter = { offset, resolve: wake, cleanup: () => undefined };
    this.#waiters.add(w);
    return () => {
      this.#waiters.delete(w);
    };
  }

  #notifyWaiters(): void {
    if (this.#waiters.size === 0) return;
    const hw = this.#highWatermark;
    for (const w of this.#waiters) {
      if (w.offset < hw) {
        this.#waiters.delete(w);
        w.cleanup();
        w.resolve(true);
      }
    }
  }

  #wakeAllWaiters(): void {
    for (const w of this.#waiters) {
      w.cleanup();
      w.resolve(true);
    }
    this.#waiters.clear();
  }

  // ---- ListOffsets -----------------------------------------------------------------------------------

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
    const unavailable = this.#readError();
    if (unavailable) throw unavailable;
    const bound = options.isolation === 'read_committed' ? this.lastStableOffset : this.#highWatermark;
    switch (timestamp) {
      case ListOffsetsTimestamp.LATEST:
        return { timestamp: -1, offset: bound, leaderEpoch: this.#head.epoch };
      case ListOffsetsTimestamp.EARLIEST:
      case ListOffsetsTimestamp.EARLIEST_LOCAL:
        return { timestamp: -1, offset: this.#logStartOffset, leaderEpoch: this.#epochForOffset(this.#logStartOffset) };
      case ListOffsetsTimestamp.LATEST_TIERED:
        return { timestamp: -1, offset: -1, leaderEpoch: -1 };
      case ListOffsetsTimestamp.MAX_TIMESTAMP: {
        const found = await this.#maxTimestampRecord();
        return found && found.offset < bound ? found : null;
      }
      default: {
        if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
          throw new LogInvalidArgumentError(`unsupported ListOffsets timestamp ${timestamp}`, { partition: this.name });
        }
        const found = await this.#offsetForTimestamp(timestamp);
        return found && found.offset < bound ? found : null;
      }
    }
  }

  /** Kafka's searchForTimestamp: first batch with maxTimestamp ≥ t, then its first record with timestamp ≥ t. */
  async #offsetForTimestamp(timestamp: number): Promise<TimestampAndOffset | null> {
    let from = this.#logStartOffset;
    for (;;) {
      const pos = this.#index.findByTimestamp(timestamp, from);
      if (!pos) return null;
      const batch = await this.#readBatchAt(pos);
      const startAt = Math.max(from, this.#logStartOffset);
      const found = await this.#findRecord(batch, pos, (ts, offset) => ts >= timestamp && offset >= startAt);
      if (found) return { timestamp: found.timestamp, offset: found.offset, leaderEpoch: epochOrUnknown(batch) };
      // Its records at or above the target all lie below the log start offset: look further.
      from = pos.ledger.lastOffsetAt(pos.entryId) + 1;
    }
  }

  /** Kafka's MAX_TIMESTAMP: the batch with the largest maxTimestamp, then its first record with that timestamp. */
  async #maxTimestampRecord(): Promise<TimestampAndOffset | null> {
    const pos = this.#index.findMaxTimestamp();
    if (!pos) return null;
    const batch = await this.#readBatchAt(pos);
    const max = batch.maxTimestamp;
    const found = await this.#findRecord(batch, pos, (ts) => ts === max);
    // A batch whose records do not decode answers with its first offset: the offsets are the header's.
    if (found === undefined) return { timestamp: max, offset: batch.baseOffsetNumber, leaderEpoch: epochOrUnknown(batch) };
    return found && { timestamp: max, offset: found.offset, leaderEpoch: epochOrUnknown(batch) };
  }

  /**
   * The first record of a stored batch that `match` accepts, null if none; undefined when the batch's
   * records do not decode (stored by a broker that did not validate records): reported once per batch and
   * skipped, so ListOffsets (and the producer-state rebuild, which uses it) never fails on old bad data.
   */
  async #findRecord(batch: RecordBatch, pos: BatchPosition, match: (timestamp: number, offset: number) => boolean): Promise<TimestampAndOffsetOfRecord | null | undefined> {
    // Stored batches never change: one known not to decode is not inflated again (a bomb costs the read limit).
    const key = `${pos.ledger.ledgerId}:${pos.entryId}`;
    if (this.#undecodable.has(key)) return undefined;
    try {
      return await findStoredRecord(batch, match);
    } catch (err) {
      if (!isRecordsError(err)) throw err;
      if (this.#undecodable.size < 1024) this.#undecodable.add(key);
      this.#logger?.warn(
        { partition: this.name, ledgerId: pos.ledger.ledgerId, entryId: pos.entryId, baseOffset: batch.baseOffsetNumber, err: err.message },
        'stored record batch does not decode: ListOffsets skips its records',
      );
      return undefined;
    }
  }

  async #readBatchAt(pos: BatchPosition): Promise<RecordBatch> {
    let entries: LedgerEntry[];
    try {
      entries = await this.#ledgers.read(pos.ledger.ledgerId, pos.entryId, pos.entryId);
    } catch (err) {
      throw new LogStorageError(`cannot read ${this.name}`, { partition: this.name, ledgerId: pos.ledger.ledgerId }, err);
    }
    if (entries.length !== 1) {
      throw new LogCorruptError(`ledger ${pos.ledger.ledgerId} has no entry ${pos.entryId}`, { partition: this.name });
    }
    return RecordBatch.wrap(entries[0]!.data);
  }

  #epochForOffset(offset: number): number {
    const i = this.#index.ledgerIndexFor(offset);
    const ledger = this.#index.ledgers[Math.max(0, i)];
    return ledger ? ledger.epoch : this.#head.epoch;
  }

  /**
   * OffsetsForLeaderEpoch (KIP-101/279, Kafka's LeaderEpochFileCache.endOffsetFor): the largest epoch ≤ the
   * requested one and the offset where the next higher epoch starts (the log end offset for the current
   * epoch); {-1, -1} for an undefined epoch or one above every known epoch.
   */
  endOffsetForEpoch(requestedEpoch: number): EpochEndOffset {
    const undefinedResult = { leaderEpoch: -1, endOffset: -1 };
    if (requestedEpoch < 0) return undefinedResult;
    if (requestedEpoch === this.#head.epoch) return { leaderEpoch: requestedEpoch, endOffset: this.#nextOffset };
    // Epoch start offsets: the first ledger of each epoch (the first one clipped to the log start offset).
    let floor: { epoch: number; start: number } | null = null;
    for (const l of this.#index.ledgers) {
      const start = Math.max(l.startOffset, this.#logStartOffset);
      if (l.epoch > requestedEpoch) {
        return floor ? { leaderEpoch: floor.epoch, endOffset: start } : { leaderEpoch: requestedEpoch, endOffset: start };
      }
      if (!floor || l.epoch > floor.epoch) floor = { epoch: l.epoch, start };
    }
    return undefinedResult;
  }

  // ---- retention, DeleteRecords, deletion ------------------------------------------------------------

  /**
   * Kafka's DeleteRecords on the leader: moves the log start offset to `offset` (-1: the high watermark);
   * ledgers wholly below it are deleted. Throws OffsetOutOfRangeError for an offset above the high watermark
   * (or negative). Resolves with the new low watermark (the log start offset), which never moves back.
   */
  async deleteRecords(offset: number): Promise<{ lowWatermark: number }> {
    const err = this.#writeError();
    if (err) throw err;
    return this.#chainOp(async () => {
      const target = offset === -1 ? this.#highWatermark : offset;
      if (!Number.isSafeInteger(target) || target < 0 || target > this.#highWatermark) {
        throw new OffsetOutOfRangeError(
          `cannot delete records of ${this.name} before offset ${offset}: the high watermark is ${this.#highWatermark}`,
          { partition: this.name, offset, highWatermark: this.#highWatermark },
        );
      }
      if (target > this.#logStartOffset) await this.#deleteLedgersBelow(target, 0);
      return { lowWatermark: this.#logStartOffset };
    });
  }

  /**
   * Kafka's deleteOldSegments: deletes, oldest first, sealed ledgers past retention.ms (their newest batch
   * timestamp older than now − retention.ms; the sealing time when no batch had a timestamp), then while the
   * partition stays above retention.bytes without them, then those wholly below the log start offset. The
   * open ledger is never deleted (segment.ms seals it eventually). Advances the log start offset.
   */
  async enforceRetention(): Promise<RetentionResult> {
    const err = this.#writeError();
    if (err) throw err;
    return this.#chainOp(async () => {
      const ls = this.#index.ledgers;
      const sealed = ls.length - 1;
      // Kafka's UnifiedLog.deleteOldSegments: time and size retention only when cleanup.policy includes
      // `delete`; ledgers below the log start offset (DeleteRecords) go whatever the policy.
      const deletes = retentionDeletes(this.#config);
      const retentionMs = deletes ? this.#config.retentionMs : -1;
      const retentionBytes = deletes ? this.#config.retentionBytes : -1;
      const now = this.#clock.now();
      let n = 0;
      if (retentionMs >= 0) {
        while (n < sealed) {
          const l = ls[n]!;
          const newest = l.maxTimestamp >= 0 ? l.maxTimestamp : (l.sealedAtMs ?? now);
          if (now - newest <= retentionMs) break;
          n++;
        }
      }
      if (retentionBytes >= 0) {
        let diff = this.#index.sizeInBytes - retentionBytes;
        for (let i = 0; i < n; i++) diff -= ls[i]!.bytes;
        while (n < sealed && diff - ls[n]!.bytes >= 0) {
          diff -= ls[n]!.bytes;
          n++;
        }
      }
      while (n < sealed && ls[n]!.endOffset <= this.#logStartOffset) n++;
      if (n === 0) return { deletedLedgers: 0, deletedBytes: 0, logStartOffset: this.#logStartOffset };
      const newStart = Math.max(this.#logStartOffset, ls[n]!.startOffset);
      return this.#deleteLedgersBelow(newStart, n);
    });
  }

  /**
   * Sets the log start offset to `newStart` and deletes the first ledgers: at least `count`, plus every
   * sealed one wholly below `newStart`. Chain first (in txns of at most MAX_DELETES_PER_TXN keys), then the
   * index, then the ledger store: a crash in between leaves unreferenced ledgers, never a dangling key.
   */
  async #deleteLedgersBelow(newStart: number, count: number): Promise<RetentionResult> {
    const ls = this.#index.ledgers;
    let n = count;
    while (n < ls.length - 1 && ls[n]!.endOffset <= newStart) n++;
    let deletedLedgers = 0;
    let deletedBytes = 0;
    let done = 0;
    do {
      const k = Math.min(MAX_DELETES_PER_TXN, n - done);
      const batch = ls.slice(0, k);
      const start = done + k === n ? newStart : Math.max(this.#logStartOffset, ls[k]!.startOffset);
      await this.#commit({ delete: batch.map((l) => l.startOffset) }, start);
      this.#index.removeFirst(k);
      this.#logStartOffset = Math.max(this.#logStartOffset, start);
      const ids: number[] = [];
      for (const l of batch) {
        ids.push(l.ledgerId);
        if (l.indexLedgerId !== null) ids.push(l.indexLedgerId);
        deletedBytes += l.bytes;
      }
      deletedLedgers += batch.length;
      done += k;
      await this.#deleteLedgersNow(ids);
    } while (done < n);
    return { deletedLedgers, deletedBytes, logStartOffset: this.#logStartOffset };
  }

  /**
   * Deletes the partition (topic deletion): every ledger and the chain. Appends and reads fail with
   * LogDeletedError afterwards.
   */
  async delete(): Promise<void> {
    const err = this.#state === 'failed' ? null : this.#writeError();
    if (err) throw err;
    await this.#chainOp(async () => {
      const gone = new LogDeletedError(this.name);
      let ok: boolean;
      try {
        ok = await deleteChain(this.#metadata, this.#keys, this.#headRevision);
      } catch (e) {
        throw new LogStorageError(`cannot delete the chain of ${this.name}`, { partition: this.name }, e);
      }
      if (!ok) {
        const fenced = new LogFencedError(this.name, 'the ledger chain was changed by another owner');
        this.#fence(fenced);
        throw fenced;
      }
      const ids: number[] = [];
      for (const l of this.#index.ledgers) {
        ids.push(l.ledgerId);
        if (l.indexLedgerId !== null) ids.push(l.indexLedgerId);
      }
      const active = this.#active;
      if (active && !active.committed) ids.push(active.writer.ledgerId);
      this.#stop('deleted', gone);
      await Promise.all(ids.map((id) => this.#deleteLedgerQuietly(id)));
    });
  }

  /**
   * Deletes a partition whatever its state and owner (topic deletion from a controller): fences its open
   * ledger, so a live owner stops, removes the chain, then deletes every ledger. A no-op if it does not exist.
   */
  static async deletePartition(
    options: Pick<PartitionLogOptions, 'topic' | 'partition' | 'ledgers' | 'metadata'>,
  ): Promise<void> {
    const keys = new ChainKeys(options.topic, options.partition);
    for (let attempt = 1; ; attempt++) {
      const chain = await loadChain(options.metadata, keys);
      if (!chain.head) return;
      for (const l of chain.ledgers) {
        if (l.state === 'open') {
          await options.ledgers.fence(l.ledgerId).catch((err: unknown) => {
            if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
          });
        }
      }
      if (await deleteChain(options.metadata, keys, chain.head.modRevision)) {
        for (const l of chain.ledgers) {
          for (const id of [l.ledgerId, l.state === 'sealed' ? l.indexLedgerId : null]) {
            if (id === null) continue;
            await options.ledgers.delete(id).catch((err: unknown) => {
              if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
            });
          }
        }
        return;
      }
      if (attempt >= OPEN_ATTEMPTS) throw new LogFencedError(`${options.topic}-${options.partition}`, 'the chain kept changing');
    }
  }

  // ---- close ---------------------------------------------------------------------------------------

  /**
   * Releases the partition: appends not yet issued fail with LogClosedError, issued ones complete, the open
   * ledger is sealed and recorded as sealed (with its index snapshot), timers and the watch stop.
   */
  async close(): Promise<void> {
    if (this.#state !== 'open' && this.#state !== 'failed') {
      await this.#settleBackground();
      return;
    }
    const wasOpen = this.#state === 'open';
    this.#state = 'closing';
    const closed = new LogClosedError(this.name);
    this.#rejectWaiting(closed);
    this.#retentionTimer?.cancel();
    this.#retentionTimer = null;
    if (this.#rolling) await this.#rolling.catch(() => undefined);
    const a = this.#active;
    if (wasOpen && a) {
      a.rollTimer?.cancel();
      await this.#drain(a);
      try {
        await a.commit;
        await this.#chainOp(async () => {
          const sealedAt = await this.#sealWriter(a);
          await this.#commit({ put: [{ ...sealedRecord(a.indexed), sealedAtMs: sealedAt }] });
          this.#index.sealLast(sealedAt);
          if (a.indexed.count > 0) this.#scheduleSnapshot(a.indexed);
        });
      } catch (err) {
        this.#logger?.warn({ partition: this.name, err }, 'could not seal the open ledger on close; the next owner fences it');
      }
    }
    await this.#settleBackground();
    this.#stop('closed', closed);
  }

  get #terminal(): boolean {
    return this.#state === 'closed' || this.#state === 'fenced' || this.#state === 'deleted';
  }

  async #settleBackground(): Promise<void> {
    await this.#chainTail.catch(() => undefined);
    await this.#snapshotTail.catch(() => undefined);
    while (this.#backgroundTasks.size > 0) await Promise.allSettled([...this.#backgroundTasks]);
  }

  /** Ends the log: rejects every append not yet acknowledged, wakes readers, stops timers and the watch. */
  #stop(state: 'closed' | 'fenced' | 'deleted' | 'failed', failure: LogError): void {
    if (this.#terminal) return;
    this.#state = state;
    this.#failure = failure;
    this.#rejectWaiting(failure);
    for (let i = this.#pendingHead; i < this.#pending.length; i++) {
      const p = this.#pending[i]!;
      if (p.state === 'inflight' || p.state === 'durable') {
        p.state = 'failed';
        p.reject(failure);
      }
    }
    this.#pending = [];
    this.#pendingHead = 0;
    this.#active?.rollTimer?.cancel();
    this.#retentionTimer?.cancel();
    this.#retentionTimer = null;
    const watch = this.#watch;
    this.#watch = null;
    if (watch) this.#track(watch.cancel());
    this.#wakeAllWaiters();
  }

  #fence(err: LogFencedError): void {
    if (this.#terminal) return;
    this.#logger?.warn({ partition: this.name, err }, 'partition log fenced: another owner took over');
    this.#stop('fenced', err);
  }

  #rejectWaiting(err: unknown): void {
    for (let i = this.#waitingHead; i < this.#waiting.length; i++) {
      const p = this.#waiting[i]!;
      p.state = 'failed';
      p.reject(err);
    }
    this.#waiting = [];
    this.#waitingHead = 0;
  }

  #writeError(): LogError | null {
    if (this.#state === 'open') return null;
    if (this.#state === 'closing') return new LogClosedError(this.name);
    return this.#failure;
  }

  #readError(): LogError | null {
    if (this.#state === 'open' || this.#state === 'failed') return null;
    if (this.#state === 'closing') return new LogClosedError(this.name);
    return this.#failure;
  }

  #outOfRange(offset: number): OffsetOutOfRangeError {
    return new OffsetOutOfRangeError(
      `offset ${offset} is out of range for ${this.name}: [${this.#logStartOffset}, ${this.#nextOffset}]`,
      { partition: this.name, offset, logStartOffset: this.#logStartOffset, logEndOffset: this.#nextOffset },
    );
  }

  // ---- background work -------------------------------------------------------------------------------

  #track(p: Promise<unknown>): void {
    const t = p.catch((err: unknown) => this.#onBackgroundError(err instanceof Error ? err : new Error(String(err))));
    this.#backgroundTasks.add(t);
    void t.finally(() => this.#backgroundTasks.delete(t));
  }

  /** Deletes ledgers the chain no longer names; a failure leaves an unreferenced ledger and is reported. */
  async #deleteLedgersNow(ids: readonly number[]): Promise<void> {
    const results = await Promise.allSettled(ids.map((id) => this.#deleteLedgerQuietly(id)));
    for (const r of results) {
      if (r.status === 'rejected') this.#onBackgroundError(r.reason instanceof Error ? r.reason : new Error(String(r.reason)));
    }
  }

  #deleteLedgersQuietly(ids: readonly number[]): void {
    for (const id of ids) this.#track(this.#deleteLedgerQuietly(id));
  }

  async #deleteLedgerQuietly(id: number): Promise<void> {
    try {
      await this.#ledgers.delete(id);
    } catch (err) {
      if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
    }
  }

  #scheduleSnapshot(ledger: IndexedLedger): void {
    if (!this.#snapshots) return;
    const run = this.#snapshotTail.then(() => this.#writeSnapshot(ledger));
    this.#snapshotTail = run.catch((err: unknown) => {
      this.#onBackgroundError(err instanceof Error ? err : new Error(String(err)));
    });
  }

  /** Writes a sealed ledger's index into a new index ledger and records it in the chain. */
  async #writeSnapshot(ledger: IndexedLedger): Promise<void> {
    if (this.#state !== 'open' && this.#state !== 'closing') return;
    if (!this.#index.ledgers.includes(ledger) || ledger.sealedAtMs === null) return;
    const chunks = encodeIndexSnapshot(ledger);
    const writer = await this.#ledgers.create();
    let recorded = false;
    try {
      await Promise.all(chunks.map((c) => writer.append(c)));
      await writer.seal();
      await this.#chainOp(async () => {
        if (!this.#index.ledgers.includes(ledger)) return;
        const previous = ledger.indexLedgerId;
        await this.#commit({ put: [sealedRecord(ledger, writer.ledgerId)] });
        ledger.indexLedgerId = writer.ledgerId;
        recorded = true;
        if (previous !== null) this.#deleteLedgersQuietly([previous]);
      });
    } finally {
      if (!recorded) this.#deleteLedgersQuietly([writer.ledgerId]);
    }
  }

  #armRetention(): void {
    if (this.#retentionIntervalMs <= 0) return;
    this.#retentionTimer = this.#clock.setTimer(this.#retentionIntervalMs, () => {
      this.#retentionTimer = null;
      if (this.#state !== 'open') return;
      this.#track(
        this.enforceRetention().finally(() => {
          if (this.#state === 'open') this.#armRetention();
        }),
      );
    });
  }

  async #watchHead(fromRevision: number): Promise<void> {
    const watch = await this.#metadata.watch(
      { key: this.#keys.head },
      {
        onEvents: (response) => {
          for (const event of response.events) {
            if (event.type === 'delete') {
              this.#stop('deleted', new LogDeletedError(this.name));
              return;
            }
            let ownerId: string;
            try {
              ownerId = decodeHead(event.kv.value, this.#keys.head).ownerId;
            } catch {
              continue;
            }
            if (ownerId !== this.#ownerId) {
              this.#fence(new LogFencedError(this.name, 'the chain head names another owner'));
              return;
            }
          }
        },
        onError: (err) => {
          if (this.#state === 'open') this.#onBackgroundError(err);
        },
      },
      { startRevision: fromRevision },
    );
    if (this.#state === 'open' || this.#state === 'closing') this.#watch = watch;
    else await watch.cancel();
  }

  // ---- open / takeover -----------------------------------------------------------------------------

  async #open(): Promise<void> {
    const started = performance.now();
    const cache = new Map<number, IndexedLedger>();
    for (let attempt = 1; ; attempt++) {
      let chain: LoadedChain;
      try {
        chain = await loadChain(this.#metadata, this.#keys);
      } catch (err) {
        if (err instanceof LogError) throw err;
        throw new LogStorageError(`cannot load the chain of ${this.name}`, { partition: this.name }, err);
      }
      // A stale opener must not fence anything: check the epoch before touching the ledgers.
      const current = chain.head?.value.epoch;
      if (this.#requestedEpoch !== undefined && current !== undefined && this.#requestedEpoch <= current) {
        throw new LogFencedError(this.name, `leader epoch ${this.#requestedEpoch} is not above the partition's epoch ${current}`);
      }
      const ledgers = chain.ledgers;
      const last = ledgers[ledgers.length - 1];
      // Fence the previous owner's open ledger: from here on its appends fail.
      let fencedEntries = 0;
      if (last?.state === 'open') {
        try {
          fencedEntries = (await this.#ledgers.fence(last.ledgerId)).lastAddConfirmed + 1;
        } catch (err) {
          throw this.#openError(err, last);
        }
      }
      const indexed = await mapLimit(ledgers, this.#openConcurrency, async (l) => {
        if (l.state === 'open') return this.#indexFromData(l, fencedEntries);
        const hit = cache.get(l.ledgerId);
        if (hit) return hit;
        const built = await this.#indexSealed(l);
        cache.set(l.ledgerId, built);
        return built;
      });
      let writer: LedgerWriter;
      try {
        writer = await this.#ledgers.create();
      } catch (err) {
        throw new LogStorageError(`cannot create a ledger for ${this.name}`, { partition: this.name }, err);
      }
      const now = this.#clock.now();
      const prevHead = chain.head?.value;
      const lastIndexed = indexed[indexed.length - 1];
      const firstIndexed = indexed[0];
      const startOffset = lastIndexed ? lastIndexed.endOffset : (prevHead?.logStartOffset ?? 0);
      const logStartOffset = Math.max(prevHead?.logStartOffset ?? 0, firstIndexed?.startOffset ?? 0);
      const head: ChainHead = {
        epoch: this.#requestedEpoch ?? (prevHead ? prevHead.epoch + 1 : 0),
        ownerId: this.#ownerId,
        owner: this.#owner,
        logStartOffset,
        changes: (prevHead?.changes ?? 0) + 1,
        updatedAtMs: now,
      };
      this.#head = head;
      const active = this.#newActive(writer, startOffset);
      // An empty last ledger is replaced in place (its key is the new ledger's); a fenced one is sealed.
      const replace = lastIndexed !== undefined && lastIndexed.count === 0;
      const put: ChainLedger[] = [];
      if (last?.state === 'open' && !replace) put.push({ ...sealedRecord(lastIndexed!), sealedAtMs: now });
      put.push(openRecord(active.indexed));
      let result: CommitResult;
      try {
        result = await commitChainChange(this.#metadata, this.#keys, chain.head?.modRevision ?? 0, head, { put });
      } catch (err) {
        await this.#deleteLedgerQuietly(writer.ledgerId).catch(() => undefined);
        throw new LogStorageError(`cannot record the takeover of ${this.name}`, { partition: this.name }, err);
      }
      if (!result.ok) {
        await this.#deleteLedgerQuietly(writer.ledgerId).catch(() => undefined);
        if (attempt >= OPEN_ATTEMPTS) {
          throw new LogFencedError(this.name, `lost the race for the chain ${attempt} times in a row`);
        }
        continue;
      }
      this.#headRevision = result.revision;
      // Install the state.
      const needSnapshot: IndexedLedger[] = [];
      for (let i = 0; i < indexed.length; i++) {
        const l = indexed[i]!;
        if (i === indexed.length - 1 && replace) break;
        if (l.sealedAtMs === null) {
          l.seal(now);
          needSnapshot.push(l);
        } else if (l.indexLedgerId === null || !this.#loadedFromSnapshot.has(l)) {
          needSnapshot.push(l);
        }
        this.#index.add(l);
      }
      this.#index.add(active.indexed);
      active.committed = true;
      this.#active = active;
      this.#logStartOffset = logStartOffset;
      this.#highWatermark = startOffset;
      this.#nextOffset = startOffset;
      if (replace) {
        const ids = [lastIndexed!.ledgerId];
        if (lastIndexed!.indexLedgerId !== null) ids.push(lastIndexed!.indexLedgerId);
        this.#deleteLedgersQuietly(ids);
      }
      for (const l of needSnapshot) this.#scheduleSnapshot(l);
      this.#loadedFromSnapshot.clear();
      this.#openMs = performance.now() - started;
      try {
        await this.#watchHead(result.revision + 1);
      } catch (err) {
        this.#onBackgroundError(err instanceof Error ? err : new Error(String(err)));
      }
      this.#armRetention();
      return;
    }
  }

  /** Ledgers whose index came from a valid snapshot during open (their index ledger is kept). */
  readonly #loadedFromSnapshot = new Set<IndexedLedger>();

  #openError(err: unknown, l: ChainLedger): LogError {
    if (err instanceof LogError) return err;
    if (isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
      return new LogCorruptError(`the chain of ${this.name} names ledger ${l.ledgerId}, which does not exist`, {
        partition: this.name,
        ledgerId: l.ledgerId,
      });
    }
    return new LogStorageError(
      `cannot open ledger ${l.ledgerId} of ${this.name}`,
      { partition: this.name, ledgerId: l.ledgerId },
      err,
    );
  }

  /** A sealed ledger's index: from its snapshot when one is usable, else from its batches. */
  async #indexSealed(l: SealedChainLedger): Promise<IndexedLedger> {
    if (l.indexLedgerId !== null) {
      let reason: string;
      try {
        const chunks = await this.#ledgers.read(l.indexLedgerId, 0, Number.MAX_SAFE_INTEGER);
        const decoded = decodeIndexSnapshot(
          chunks.map((c) => c.data),
          l,
        );
        if (typeof decoded !== 'string') {
          decoded.indexLedgerId = l.indexLedgerId;
          this.#loadedFromSnapshot.add(decoded);
          this.#fromSnapshots++;
          return decoded;
        }
        reason = decoded;
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      this.#logger?.warn(
        { partition: this.name, ledgerId: l.ledgerId, indexLedgerId: l.indexLedgerId, reason },
        'index snapshot unusable; indexing the ledger from its batches',
      );
    }
    const built = await this.#indexFromData(l, l.entries);
    if (built.endOffset > l.endOffset) {
      throw new LogCorruptError(
        `ledger ${l.ledgerId} holds offsets up to ${built.endOffset - 1}, the chain says ${l.endOffset - 1}`,
        { partition: this.name, ledgerId: l.ledgerId },
      );
    }
    built.indexLedgerId = l.indexLedgerId;
    built.seal(l.sealedAtMs);
    return built;
  }

  /** Indexes entries 0..entries-1 of a ledger from its batches' headers (reads the batches). */
  async #indexFromData(l: ChainLedger, entries: number): Promise<IndexedLedger> {
    const ledger = new IndexedLedger(l.ledgerId, l.startOffset, l.epoch, l.createdAtMs, Math.max(1, entries));
    if (entries > 0) {
      const read = await this.#readBatches(ledger, 0, entries - 1).catch((err: unknown) => {
        throw this.#openError(err, l);
      });
      let prev = l.startOffset - 1;
      for (const e of read) {
        let view: RecordBatch;
        try {
          view = RecordBatch.wrap(e.data);
        } catch (err) {
          throw new LogCorruptError(`ledger ${l.ledgerId} entry ${e.entryId} is not a record batch: ${(err as Error).message}`, {
            partition: this.name,
            ledgerId: l.ledgerId,
          });
        }
        const lastOffset = view.lastOffsetNumber;
        if (view.baseOffsetNumber <= prev || lastOffset < view.baseOffsetNumber) {
          throw new LogCorruptError(`ledger ${l.ledgerId} entry ${e.entryId} does not continue the offsets after ${prev}`, {
            partition: this.name,
            ledgerId: l.ledgerId,
          });
        }
        ledger.push(lastOffset, view.maxTimestamp, e.data.length);
        prev = lastOffset;
      }
    }
    if (ledger.count !== entries) {
      throw new LogCorruptError(`ledger ${l.ledgerId} returned ${ledger.count} of its ${entries} entries`, {
        partition: this.name,
        ledgerId: l.ledgerId,
      });
    }
    if (entries > 0) this.#fromData++;
    return ledger;
  }

  /** Entries first..last of a ledger, read in bounded chunks. */
  async #readBatches(ledger: IndexedLedger, first: number, last: number): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    let next = first;
    while (next <= last) {
      const entries = await this.#ledgers.read(ledger.ledgerId, next, last, { maxBytes: REBUILD_READ_BYTES });
      if (entries.length === 0) break;
      for (const e of entries) out.push(e);
      next += entries.length;
    }
    return out;
  }
}

function epochOrUnknown(batch: RecordBatch): number {
  const epoch = batch.partitionLeaderEpoch;
  return epoch >= 0 ? epoch : -1;
}
