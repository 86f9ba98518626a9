/**
 * The state one PartitionLog instance shares between its parts (append pipeline, roll, reads, lookups,
 * retention, snapshots, takeover), and what they all use: chain changes one at a time, the log's end
 * (stop, fence, close), waking readers, background work. Internal to src/log: PartitionLog is the API.
 *
 * ```
 *                     ┌──────────── PartitionLog (partition-log.ts: the public API) ───────────┐
 *                     │                                                                        │
 *   append.ts  roll.ts  read.ts  list-offsets.ts  retention.ts  snapshot-writer.ts  takeover.ts
 *       └─────────┴───────┴───────────┴──────────────┴───────────────┴──────────────────┘
 *                                          LogCore (here)
 *            offsets · index · chain head · active ledger · state · waiters · background work
 * ```
 *
 * Every part imports this file and no other part: where one part calls another (a roll pumps the
 * appends, the log's end fails them, retention runs on the core's timer) it goes through the ports
 * declared here, which PartitionLog fills in when it builds the parts. So the files form no import cycle.
 */
import { randomUUID } from 'node:crypto';
import type { RecordBatch } from '../../protocol/records/batch.js';
import { LedgerError } from '../ledger/errors.js';
import type { LedgerEntry, LedgerStore, LedgerWriter } from '../ledger/types.js';
import { systemClock, type Clock, type ClockTimer } from '../metadata/clock.js';
import type { MetadataStore, Watch } from '../metadata/types.js';
import { ChainKeys, commitChainChange, decodeHead, type ChainChange, type ChainHead, type CommitResult, type OpenChainLedger, type SealedChainLedger } from './chain.js';
import { resolveLogConfig, type PartitionLogConfig } from './config.js';
import {
  LogClosedError,
  LogDeletedError,
  LogError,
  LogFencedError,
  LogInvalidArgumentError,
  LogStorageError,
  OffsetOutOfRangeError,
} from './errors.js';
import { PartitionIndex, type IndexedLedger } from './offset-index.js';
import { encodeProducerSnapshot } from './producer-snapshot.js';
import { PartitionProducerState } from './producer-state.js';
import { TxnIndex, type AbortedTxnEntry } from './txn-index.js';
import type {
  AppendResult,
  IsolationLevel,
  LogLogger,
  PartitionLogOptions,
  PartitionLogState,
  ProducerStateLoad,
  ReadOptions,
  ReadResult,
  RetentionResult,
  TimestampAndOffset,
} from './types.js';

const REBUILD_READ_BYTES = 16 * 1024 * 1024;

/** The open ledger: the only one with appends in flight. */
export interface ActiveLedger {
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

export type PendingState = 'waiting' | 'inflight' | 'durable' | 'failed';

export interface PendingAppend {
  readonly batch: Buffer;
  readonly view: RecordBatch;
  readonly requestedOffset: number | undefined;
  /** AppendOptions.expectedLogEnd. */
  readonly expectedLogEnd: number | undefined;
  readonly leaderEpoch: number | undefined;
  /** AppendOptions.mirrored: the batch's timestamps are kept. */
  readonly mirrored: boolean;
  /** AppendOptions.crcChecked. */
  readonly crcChecked: boolean;
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

/**
 * Told, synchronously, each time what a reader at the end of the log sees may have changed: the high watermark
 * or last stable offset moved, the log start offset rose, or the log ended. Registered for as long as the
 * watcher likes (a fetch session watches its partitions between requests), unlike a Waiter, which is woken
 * once.
 */
export interface LogStateWatcher {
  logStateChanged(): void;
}

export interface Waiter {
  readonly offset: number;
  /** Waits for the last stable offset (read_committed) to pass `offset`, not the high watermark. */
  readonly committed?: boolean;
  readonly resolve: (ready: boolean) => void;
  readonly cleanup: () => void;
}

/** What the append pipeline (append.ts) offers the other parts. */
export interface AppenderPort {
  pump(): void;
  completeHead(): void;
  rejectWaiting(err: unknown): void;
  /** The log ends: every append not yet acknowledged fails with `failure`. */
  failAll(failure: unknown): void;
}

/** What rollover (roll.ts) offers the other parts. */
export interface RollerPort {
  readonly rolling: Promise<void> | null;
  rollReason(a: ActiveLedger, nextBatchBytes: number): string | null;
  armRollTimer(a: ActiveLedger): void;
  startRoll(reason: string): Promise<void>;
  newActive(writer: LedgerWriter, startOffset: number): ActiveLedger;
  drain(a: ActiveLedger): Promise<void>;
  settled(a: ActiveLedger): void;
  sealWriter(a: ActiveLedger): Promise<number>;
}

export interface ReaderPort {
  read(fromOffset: number, options?: ReadOptions): Promise<ReadResult>;
}

export interface LookupsPort {
  listOffsets(timestamp: number, options?: { isolation?: IsolationLevel }): Promise<TimestampAndOffset | null>;
}

export interface RetentionPort {
  enforceRetention(): Promise<RetentionResult>;
}

/** What a sealed ledger's snapshot write covers (snapshot-writer.ts). */
export interface SnapshotWork {
  /** Write the ledger's index snapshot (default: when index snapshots are on). */
  readonly index?: boolean;
  /** The producer state as of the ledger's end offset, encoded (producer-snapshot.ts); null: none. */
  readonly producers?: Buffer[] | null;
}

/** Snapshot ledgers written for a ledger, not yet named by its chain record. */
export interface WrittenSnapshots {
  readonly indexLedgerId: number | null;
  readonly producerSnapshotLedgerId: number | null;
  /** Every ledger written, to delete if the chain never names them. */
  readonly ids: readonly number[];
}

export interface SnapshotWriterPort {
  readonly snapshotTail: Promise<void>;
  scheduleSnapshot(ledger: IndexedLedger, work?: SnapshotWork): void;
  /** `aborted`: the aborted transactions to record with the index (default: the log's, in the ledger's range). */
  writeLedgers(ledger: IndexedLedger, index: boolean, producers: Buffer[] | null, aborted?: readonly AbortedTxnEntry[]): Promise<WrittenSnapshots>;
  recordChange(ledger: IndexedLedger, written: WrittenSnapshots, sealedAtMs?: number): { put: SealedChainLedger[]; committed(): void };
}

export function isLedgerError(err: unknown, code: string): boolean {
  return err instanceof LedgerError && err.code === code;
}

export function sealedRecord(
  l: IndexedLedger,
  indexLedgerId: number | null = l.indexLedgerId,
  producerSnapshotLedgerId: number | null = l.producerSnapshotLedgerId,
): SealedChainLedger {
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
    ...(producerSnapshotLedgerId !== null ? { producerSnapshotLedgerId } : {}),
  };
}

/** The ledgers that go with a data ledger: itself, its index snapshot and its producer snapshot. */
export function ledgerIdsOf(l: { ledgerId: number; indexLedgerId: number | null; producerSnapshotLedgerId: number | null }): number[] {
  const ids = [l.ledgerId];
  if (l.indexLedgerId !== null) ids.push(l.indexLedgerId);
  if (l.producerSnapshotLedgerId !== null) ids.push(l.producerSnapshotLedgerId);
  return ids;
}

export function openRecord(l: IndexedLedger): OpenChainLedger {
  return { ledgerId: l.ledgerId, state: 'open', startOffset: l.startOffset, epoch: l.epoch, createdAtMs: l.createdAtMs };
}

export class LogCore {
  readonly topic: string;
  readonly partition: number;
  /** `topic-partition`, as Kafka names it. */
  readonly name: string;

  readonly ledgers: LedgerStore;
  readonly metadata: MetadataStore;
  readonly keys: ChainKeys;
  readonly clock: Clock;
  readonly ownerId = randomUUID();
  readonly owner: string;
  readonly requestedEpoch: number | undefined;
  readonly snapshots: boolean;
  readonly retentionIntervalMs: number;
  readonly openConcurrency: number;
  readonly onBackgroundError: (err: Error) => void;
  readonly logger: LogLogger | undefined;
  config: PartitionLogConfig;

  state: PartitionLogState = 'open';
  failure: LogError | null = null;
  readonly index = new PartitionIndex();
  head!: ChainHead;
  headRevision = 0;
  active: ActiveLedger | null = null;

  /** Offset the next batch gets (Kafka's log end offset, counting appends in flight). */
  nextOffset = 0;
  /** Offset after the last durable batch recorded in the chain. */
  highWatermark = 0;
  logStartOffset = 0;

  chainTail: Promise<unknown> = Promise.resolve();
  backgroundTasks = new Set<Promise<unknown>>();
  readonly waiters = new Set<Waiter>();
  readonly stateWatchers = new Set<LogStateWatcher>();
  /**
   * Counts the changes LogStateWatchers are told of. A reader that saw the log at one version and sees it at the
   * same version later knows that its read would answer the same: the fetch path skips caught-up partitions so.
   */
  stateVersion = 0;
  retentionTimer: ClockTimer | null = null;
  watch: Watch | null = null;

  openMs = 0;
  fromSnapshots = 0;
  fromData = 0;
  readonly rolls: Record<string, number> = {};
  producerLoad: ProducerStateLoad = { snapshotOffset: -1, replayedBatches: 0, replayedBytes: 0, producers: 0, ms: 0 };

  /** Idempotent-producer state of the partition: the durable batches, applied as they become durable. */
  readonly producers = new PartitionProducerState();
  /** Aborted transactions by marker offset (txn-index.ts), filled as the producer state applies markers. */
  readonly txnIndex = new TxnIndex();
  readonly producerSnapshots: boolean;
  readonly producerIdExpirationMs: number;

  // The parts, as far as they call each other; PartitionLog (partition-log.ts) wires them in. No part
  // imports another: each knows this file only.
  appender!: AppenderPort;
  roller!: RollerPort;
  reader!: ReaderPort;
  lookups!: LookupsPort;
  retention!: RetentionPort;
  snapshotWriter!: SnapshotWriterPort;

  constructor(options: PartitionLogOptions) {
    if (typeof options.topic !== 'string' || options.topic.length === 0) {
      throw new LogInvalidArgumentError('topic must be a non-empty string');
    }
    if (!Number.isInteger(options.partition) || options.partition < 0 || options.partition > 0x7fffffff) {
      throw new LogInvalidArgumentError(`partition must be an int32 >= 0, got ${options.partition}`);
    }
    this.topic = options.topic;
    this.partition = options.partition;
    this.name = `${options.topic}-${options.partition}`;
    this.ledgers = options.ledgers;
    this.metadata = options.metadata;
    this.keys = new ChainKeys(options.topic, options.partition);
    this.clock = options.clock ?? systemClock;
    this.owner = options.owner ?? '';
    const epoch = options.leaderEpoch;
    if (epoch !== undefined && (!Number.isInteger(epoch) || epoch < 0 || epoch > 0x7fffffff)) {
      throw new LogInvalidArgumentError(`leaderEpoch must be an int32 >= 0, got ${options.leaderEpoch}`);
    }
    this.requestedEpoch = options.leaderEpoch;
    this.snapshots = options.indexSnapshots ?? true;
    this.producerSnapshots = options.producerSnapshots ?? true;
    this.producerIdExpirationMs = options.producerIdExpirationMs ?? 86_400_000;
    this.retentionIntervalMs = options.retentionCheckIntervalMs ?? 300_000;
    this.openConcurrency = Math.max(1, options.openConcurrency ?? 8);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.logger = options.logger;
    this.config = resolveLogConfig(options.config);
    this.producers.onAbortedTxn = (txn, lastStableOffset) =>
      this.txnIndex.add({ producerId: txn.producerId, firstOffset: txn.firstOffset, lastOffset: txn.lastOffset, lastStableOffset });
  }

  /** Runs chain changes one at a time, in call order. */
  chainOp<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chainTail.then(fn, fn);
    this.chainTail = run.catch(() => undefined);
    return run;
  }

  /** One chain txn against the head revision this owner last wrote. Throws LogFencedError if it moved. */
  async commit(
    change: ChainChange,
    logStartOffset = this.head.logStartOffset,
    cleaner?: Pick<ChainHead, 'cleanerCheckpoint' | 'deleteHorizonMs'>,
  ): Promise<void> {
    if (this.state === 'fenced' || this.state === 'deleted') throw this.failure!;
    const { cleanerCheckpoint: _c, deleteHorizonMs: _h, ...rest } = this.head;
    const kept = cleaner ?? { cleanerCheckpoint: _c, deleteHorizonMs: _h };
    const head: ChainHead = {
      ...rest,
      ...(kept.cleanerCheckpoint !== undefined ? { cleanerCheckpoint: kept.cleanerCheckpoint } : {}),
      ...(kept.deleteHorizonMs !== undefined ? { deleteHorizonMs: kept.deleteHorizonMs } : {}),
      logStartOffset,
      changes: this.head.changes + 1,
      updatedAtMs: this.clock.now(),
    };
    let result: CommitResult;
    try {
      result = await commitChainChange(this.metadata, this.keys, this.headRevision, head, change);
    } catch (err) {
      throw new LogStorageError(`cannot update the chain of ${this.name}`, { partition: this.name, key: this.keys.head }, err);
    }
    if (!result.ok) {
      const err = new LogFencedError(this.name, 'the ledger chain was changed by another owner');
      this.fence(err);
      throw err;
    }
    this.head = head;
    this.headRevision = result.revision;
  }

  /** A chain change failed: fenced (already handled) or the metadata store failed (the log stops taking appends). */
  chainFailed(err: unknown): void {
    if (this.state !== 'open' && this.state !== 'closing') return;
    if (err instanceof LogFencedError) {
      this.fence(err);
      return;
    }
    const error =
      err instanceof LogError ? err : new LogStorageError(`chain update of ${this.name} failed`, { partition: this.name }, err);
    this.logger?.warn({ partition: this.name, err: error }, 'partition log failed: reopen it to recover');
    this.stop('failed', error);
  }

  notifyWaiters(): void {
    this.stateChanged();
    if (this.waiters.size === 0) return;
    const hw = this.highWatermark;
    const lso = this.lastStableOffset;
    for (const w of this.waiters) {
      if (w.offset < (w.committed ? lso : hw)) {
        this.waiters.delete(w);
        w.cleanup();
        w.resolve(true);
      }
    }
  }

  /** Bumps the state version and tells the watchers (see LogStateWatcher for when). */
  stateChanged(): void {
    this.stateVersion++;
    for (const w of this.stateWatchers) w.logStateChanged();
  }

  wakeAllWaiters(): void {
    for (const w of this.waiters) {
      w.cleanup();
      w.resolve(true);
    }
    this.waiters.clear();
  }

  get terminal(): boolean {
    return this.state === 'closed' || this.state === 'fenced' || this.state === 'deleted';
  }

  async settleBackground(): Promise<void> {
    await this.chainTail.catch(() => undefined);
    await this.snapshotWriter.snapshotTail.catch(() => undefined);
    while (this.backgroundTasks.size > 0) await Promise.allSettled([...this.backgroundTasks]);
  }

  /** Ends the log: rejects every append not yet acknowledged, wakes readers, stops timers and the watch. */
  stop(state: 'closed' | 'fenced' | 'deleted' | 'failed', failure: LogError): void {
    if (this.terminal) return;
    this.state = state;
    this.failure = failure;
    this.appender.failAll(failure);
    this.active?.rollTimer?.cancel();
    this.retentionTimer?.cancel();
    this.retentionTimer = null;
    const watch = this.watch;
    this.watch = null;
    if (watch) this.track(watch.cancel());
    this.wakeAllWaiters();
    this.stateChanged();
    // An ended log tells nothing more: a watcher finds the partition's next log (or its error) on its next read.
    this.stateWatchers.clear();
  }

  fence(err: LogFencedError): void {
    if (this.terminal) return;
    this.logger?.warn({ partition: this.name, err }, 'partition log fenced: another owner took over');
    this.stop('fenced', err);
  }

  writeError(): LogError | null {
    if (this.state === 'open') return null;
    if (this.state === 'closing') return new LogClosedError(this.name);
    return this.failure;
  }

  readError(): LogError | null {
    if (this.state === 'open' || this.state === 'failed') return null;
    if (this.state === 'closing') return new LogClosedError(this.name);
    return this.failure;
  }

  outOfRange(offset: number): OffsetOutOfRangeError {
    return new OffsetOutOfRangeError(
      `offset ${offset} is out of range for ${this.name}: [${this.logStartOffset}, ${this.nextOffset}]`,
      { partition: this.name, offset, logStartOffset: this.logStartOffset, logEndOffset: this.nextOffset },
    );
  }

  track(p: Promise<unknown>): void {
    const t = p.catch((err: unknown) => this.onBackgroundError(err instanceof Error ? err : new Error(String(err))));
    this.backgroundTasks.add(t);
    void t.finally(() => this.backgroundTasks.delete(t));
  }

  /** Deletes ledgers the chain no longer names; a failure leaves an unreferenced ledger and is reported. */
  async deleteLedgersNow(ids: readonly number[]): Promise<void> {
    const results = await Promise.allSettled(ids.map((id) => this.deleteLedgerQuietly(id)));
    for (const r of results) {
      if (r.status === 'rejected') this.onBackgroundError(r.reason instanceof Error ? r.reason : new Error(String(r.reason)));
    }
  }

  deleteLedgersQuietly(ids: readonly number[]): void {
    for (const id of ids) this.track(this.deleteLedgerQuietly(id));
  }

  async deleteLedgerQuietly(id: number): Promise<void> {
    try {
      await this.ledgers.delete(id);
    } catch (err) {
      if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
    }
  }

  armRetention(): void {
    if (this.retentionIntervalMs <= 0) return;
    this.retentionTimer = this.clock.setTimer(this.retentionIntervalMs, () => {
      this.retentionTimer = null;
      if (this.state !== 'open') return;
      // Kafka's removeExpiredProducers runs on its own timer (producer.id.expiration.check.interval.ms).
      this.producers.expire(this.clock.now(), this.producerIdExpirationMs);
      this.track(
        this.retention.enforceRetention().finally(() => {
          if (this.state === 'open') this.armRetention();
        }),
      );
    });
  }

  async watchHead(fromRevision: number): Promise<void> {
    const watch = await this.metadata.watch(
      { key: this.keys.head },
      {
        onEvents: (response) => {
          for (const event of response.events) {
            if (event.type === 'delete') {
              this.stop('deleted', new LogDeletedError(this.name));
              return;
            }
            let ownerId: string;
            try {
              ownerId = decodeHead(event.kv.value, this.keys.head).ownerId;
            } catch {
              continue;
            }
            if (ownerId !== this.ownerId) {
              this.fence(new LogFencedError(this.name, 'the chain head names another owner'));
              return;
            }
          }
        },
        onError: (err) => {
          if (this.state === 'open') this.onBackgroundError(err);
        },
      },
      { startRevision: fromRevision },
    );
    if (this.state === 'open' || this.state === 'closing') this.watch = watch;
    else await watch.cancel();
  }

  /** Entries first..last of a ledger, read in bounded chunks. */
  async readBatches(ledger: IndexedLedger, first: number, last: number): Promise<LedgerEntry[]> {
    const out: LedgerEntry[] = [];
    let next = first;
    while (next <= last) {
      const entries = await this.ledgers.read(ledger.ledgerId, next, last, { maxBytes: REBUILD_READ_BYTES });
      if (entries.length === 0) break;
      for (const e of entries) out.push(e);
      next += entries.length;
    }
    return out;
  }

  /**
   * Releases the partition: appends not yet issued fail with LogClosedError, issued ones complete, the open
   * ledger is sealed and recorded as sealed (with its index snapshot), timers and the watch stop.
   */
  async close(): Promise<void> {
    if (this.state !== 'open' && this.state !== 'failed') {
      await this.settleBackground();
      return;
    }
    const wasOpen = this.state === 'open';
    this.state = 'closing';
    const closed = new LogClosedError(this.name);
    this.appender.rejectWaiting(closed);
    this.retentionTimer?.cancel();
    this.retentionTimer = null;
    if (this.roller.rolling) await this.roller.rolling.catch(() => undefined);
    const a = this.active;
    if (wasOpen && a) {
      a.rollTimer?.cancel();
      await this.roller.drain(a);
      try {
        await a.commit;
        await this.chainOp(async () => {
          // The seal and the ledger's snapshots (index, producer state as of its end: no append is in flight)
          // are written side by side and recorded by one chain txn, not a txn for the seal and another for
          // the snapshots: a stop of many partitions costs one txn each, which the metadata store
          // group-commits. The snapshot ledgers are named by no chain record until that txn commits (a
          // crash before it leaves unreferenced ledgers, as a roll's snapshots do).
          // After a failed append the seal first indexes what did land (reconcileFailedLedger): then the
          // snapshots are taken once it has, and recorded by a txn of their own as a roll's are.
          const afterFailure = a.failed !== null;
          const producers = afterFailure ? null : this.producerSnapshotAt(a.indexed.endOffset);
          const index = this.snapshots;
          const writing =
            !afterFailure && a.indexed.count > 0 && (index || (this.producerSnapshots && producers !== null))
              ? this.snapshotWriter.writeLedgers(a.indexed, index, this.producerSnapshots ? producers : null)
              : null;
          const [sealed, snapshots] = await Promise.allSettled([this.roller.sealWriter(a), writing]);
          const written = snapshots.status === 'fulfilled' ? snapshots.value : null;
          if (snapshots.status === 'rejected') {
            this.logger?.warn({ partition: this.name, err: snapshots.reason }, 'could not write the snapshots of the ledger sealed on close');
          }
          if (sealed.status === 'rejected') {
            if (written) this.deleteLedgersQuietly(written.ids);
            throw sealed.reason;
          }
          const sealedAt = sealed.value;
          const change = written ? this.snapshotWriter.recordChange(a.indexed, written, sealedAt) : null;
          try {
            await this.commit({ put: change ? change.put : [{ ...sealedRecord(a.indexed), sealedAtMs: sealedAt }] });
          } catch (err) {
            if (written) this.deleteLedgersQuietly(written.ids);
            throw err;
          }
          this.index.sealLast(sealedAt);
          change?.committed();
          if (afterFailure && a.indexed.count > 0) this.snapshotWriter.scheduleSnapshot(a.indexed, { producers: this.producerSnapshotAt(a.indexed.endOffset) });
        });
      } catch (err) {
        this.logger?.warn({ partition: this.name, err }, 'could not seal the open ledger on close; the next owner fences it');
      }
    }
    await this.settleBackground();
    this.stop('closed', closed);
  }

  /**
   * The producer state encoded as of `offset`, which must be the high watermark with no append in flight
   * (the state holds exactly the batches below it): at a roll's switch, at close, after open's replay.
   */
  producerSnapshotAt(offset: number): Buffer[] | null {
    if (!this.producerSnapshots || offset !== this.highWatermark) return null;
    return encodeProducerSnapshot(offset, this.clock.now(), this.producers.entries());
  }

  /**
   * Kafka's last stable offset: the high watermark, or the first offset of the oldest ongoing transaction
   * if that is lower (UnifiedLog.firstUnstableOffset, from the producer state).
   */
  get lastStableOffset(): number {
    const fuo = this.producers.firstUnstableOffset();
    return fuo === null ? this.highWatermark : Math.max(this.logStartOffset, Math.min(fuo, this.highWatermark));
  }
}
