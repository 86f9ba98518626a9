/**
 * One __transaction_state partition as the transaction coordinator runs it: the transactional ids it holds and
 * the write path to its log (CoordinatorStorage: group commit, replay; the broker's log cleaner compacts it).
 *
 * ```
 *   loading ──replay done──► active ──append failed──► loading (reload from the log) ──► active
 *      │                        │
 *      └──────── close ─────────┴──► closed
 * ```
 *
 * Every load starts a new generation: work begun under an older one (marker sending, a write's completion)
 * sees the change and stops, and the loaded state resumes it (Kafka's coordinator epoch guards the same).
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { Clock, ClockTimer } from '../../metadata/clock.js';
import { CoordinatorCorruptError, GroupApiError } from '../errors.js';
import type { EncodedRecord } from '../records.js';
import { CoordinatorStorage, type CoordinatorPartitionLog } from '../storage.js';
import { decodeTxnRecord } from './records.js';
import { TransactionMetadata } from './state.js';

export type TxnShardStatus = 'loading' | 'active' | 'failed' | 'closed';

export interface TxnShardHooks {
  /** After a load, before requests: resume markers of Prepare* transactions, start timers. */
  onLoaded(shard: TxnShard): void;
  onLoadFailed(shard: TxnShard, err: Error): void;
  onUndecodable(shard: TxnShard, err: CoordinatorCorruptError): void;
}

export interface TxnShardOptions {
  readonly partition: number;
  readonly clock: Clock;
  readonly openLog: (partition: number) => Promise<CoordinatorPartitionLog>;
  /** The coordinator epoch of a loaded partition (its leader epoch, as Kafka's); read after the log opens. */
  readonly coordinatorEpoch?: (partition: number) => number;
  readonly hooks: TxnShardHooks;
}

const RELOAD_BACKOFF_MS = [100, 500, 1000, 5000];

export class TxnShard {
  readonly partition: number;
  status: TxnShardStatus = 'loading';
  txns = new Map<string, TransactionMetadata>();
  coordinatorEpoch = 0;
  /** Incremented by every load attempt. */
  generation = 0;
  private storage: CoordinatorStorage | null = null;
  private loading: Promise<void> | null = null;
  private loadAttempts = 0;
  private readonly timers = new Set<ClockTimer>();

  constructor(private readonly options: TxnShardOptions) {
    this.partition = options.partition;
  }

  /** The error Kafka answers while this partition cannot take requests, or NONE. */
  get errorCode(): number {
    switch (this.status) {
      case 'active':
        return ErrorCode.NONE;
      case 'loading':
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
      case 'failed':
        return ErrorCode.COORDINATOR_NOT_AVAILABLE;
      default:
        return ErrorCode.NOT_COORDINATOR;
    }
  }

  load(): Promise<void> {
    this.loading ??= this.attempt().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  whenLoaded(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private async attempt(): Promise<void> {
    if (this.status === 'closed') return;
    this.status = 'loading';
    const generation = ++this.generation;
    this.txns = new Map();
    try {
      const log = await this.options.openLog(this.partition);
      const storage = new CoordinatorStorage(log, {
        partition: this.partition,
        clock: this.options.clock,
        onFailure: () => {
          if (this.storage === storage) this.reload();
        },
      });
      const txns = new Map<string, TransactionMetadata>();
      const onUndecodable = (err: CoordinatorCorruptError): void => this.options.hooks.onUndecodable(this, err);
      await storage.replay((rec, offset) => {
        try {
          const r = decodeTxnRecord(rec.key, rec.value, { partition: this.partition, offset });
          if (r === null) return;
          if (r.value === null) txns.delete(r.transactionalId);
          else txns.set(r.transactionalId, new TransactionMetadata(r.transactionalId, r.value));
        } catch (e) {
          if (!(e instanceof CoordinatorCorruptError)) throw e;
          onUndecodable(e);
        }
      }, onUndecodable);
      if (this.status !== 'loading' || this.generation !== generation) return;
      this.coordinatorEpoch = Math.max(0, this.options.coordinatorEpoch?.(this.partition) ?? 0);
      this.txns = txns;
      this.storage = storage;
      this.status = 'active';
      this.loadAttempts = 0;
      this.options.hooks.onLoaded(this);
    } catch (e) {
      if (this.status !== 'loading' || this.generation !== generation) return;
      this.status = 'failed';
      this.options.hooks.onLoadFailed(this, e as Error);
      const delay = RELOAD_BACKOFF_MS[Math.min(this.loadAttempts++, RELOAD_BACKOFF_MS.length - 1)]!;
      this.setTimer(delay, () => {
        if (this.status === 'failed') void this.load();
      });
    }
  }

  /** Drops memory and loads again from the log (after a failed append: memory may be ahead of it). */
  private reload(): void {
    if (this.status !== 'active') return;
    this.cancelTimers();
    this.storage = null;
    this.status = 'loading';
    void this.load();
  }

  async close(): Promise<void> {
    if (this.status === 'closed') return;
    const storage = this.storage;
    this.status = 'closed';
    this.generation++;
    this.cancelTimers();
    this.storage = null;
    await storage?.flushed();
  }

  /** Runs `fn` after `ms` unless the shard closes or reloads first. */
  setTimer(ms: number, fn: () => void): void {
    const t = this.options.clock.setTimer(ms, () => {
      this.timers.delete(t);
      fn();
    });
    this.timers.add(t);
  }

  private cancelTimers(): void {
    for (const t of this.timers) t.cancel();
    this.timers.clear();
  }

  /**
   * Appends records after every write queued before; resolves once durable. Rejects with GroupApiError carrying
   * NOT_COORDINATOR (the shard closed or reloaded meanwhile) or COORDINATOR_NOT_AVAILABLE (the log failed).
   */
  async append(records: readonly EncodedRecord[], generation: number): Promise<void> {
    if (this.status !== 'active' || this.generation !== generation) throw new GroupApiError(this.status === 'active' ? ErrorCode.NOT_COORDINATOR : this.errorCode);
    const storage = this.storage!;
    try {
      await storage.append(records);
    } catch (e) {
      if (this.storage === storage) this.reload();
      throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `__transaction_state-${this.partition} is not writable: ${(e as Error).message}`);
    }
    if (this.generation !== generation) throw new GroupApiError(ErrorCode.NOT_COORDINATOR);
  }
}
