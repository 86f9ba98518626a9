/**
 * How transactions end and ids go away, once a shard holds them: the markers of a Prepare* transaction written
 * to every partition, retried until all are (Kafka's TransactionMarkerChannelManager), then its Complete*
 * state; and the two timers of a loaded partition, Kafka's abortTimedOutTransactions and
 * removeExpiredTransactionalIds.
 *
 * ```
 *   PrepareCommit ─► sink.write(markers of the partitions left) ─► all NONE? ─► CompleteCommit durable
 *        ▲                     │ some failed                                   │ failed
 *        │ load resumes        ▼                                               ▼
 *   (reload)             retry after backoff (100 ms … 5 s) ◄──────────────────┘
 * ```
 *
 * A partition whose topic no longer exists is dropped from the markers, as Kafka drops partitions its metadata
 * cache does not know, and so is one answering UNSUPPORTED_FOR_MESSAGE_FORMAT or UNSUPPORTED_VERSION; every other
 * error is retried. INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED from a partition means this
 * coordinator's epoch is stale: sending stops, as Kafka's does, and the state is left to the partition's next
 * load. Work started under one load of the shard stops when it reloads or closes; the next load resumes it.
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { Clock } from '../../metadata/clock.js';
import type { CoordinatorLogger } from '../context.js';
import type { TransactionCoordinatorConfig } from './config.js';
import type { TxnShard } from './shard.js';
import { NO_PRODUCER_ID, partitionList, supportsEpochBump, TxnState, type TransactionMetadata, type TxnValue } from './state.js';
import type { TxnMarkerResult, TxnMarkerSink } from './types.js';

/** Waits between marker attempts (Kafka retries every retry.backoff.ms, 100 ms); the last one repeats. */
export const MARKER_BACKOFF_MS = [100, 200, 500, 1000, 2000, 5000];

export interface TxnCompletionOptions {
  readonly clock: Clock;
  readonly log: CoordinatorLogger;
  readonly config: TransactionCoordinatorConfig;
  readonly markers: TxnMarkerSink;
  readonly partitionExists: (topic: string, partition: number) => boolean;
  /** Writes a transit (null: a tombstone) and applies it once durable; an error code. */
  readonly commit: (shard: TxnShard, generation: number, txn: TransactionMetadata, next: TxnValue | null, completing?: boolean) => Promise<number>;
  /** Aborts an ongoing transaction with an epoch bump; an error code. */
  readonly abort: (shard: TxnShard, txn: TransactionMetadata) => Promise<number>;
}

const key = (topic: string, partition: number): string => `${topic}\0${partition}`;

/**
 * Kafka's prepareComplete: with transaction version 2, a transaction that ended with an exhausted epoch hands
 * over to its next producer id at epoch 0 (its markers carried the old id at the last epoch); the transit's
 * previous producer id is the one it leaves.
 */
function completeProducer(v: TxnValue): Partial<TxnValue> {
  if (!supportsEpochBump(v.clientTransactionVersion)) return {};
  if (v.nextProducerId === NO_PRODUCER_ID) return { previousProducerId: v.producerId };
  return { producerId: v.nextProducerId, producerEpoch: 0, previousProducerId: v.producerId, nextProducerId: NO_PRODUCER_ID };
}

export class TxnCompletion {
  constructor(private readonly o: TxnCompletionOptions) {}

  /** A shard loaded: resume the markers of its Prepare* transactions, start its timers. */
  onLoaded(shard: TxnShard): void {
    for (const txn of shard.txns.values()) {
      if (txn.state === TxnState.PrepareCommit || txn.state === TxnState.PrepareAbort) void this.sendMarkers(shard, txn);
    }
    this.scheduleAbortTimedOut(shard);
    this.scheduleRemoveExpired(shard);
  }

  /**
   * Writes the markers of `txn` (in PrepareCommit or PrepareAbort) until all are written, then its Complete* state.
   * The promise settles (never rejects) when the first attempt ends: the transaction complete, a retry scheduled
   * after a failure, or the work stopped because the shard moved on.
   */
  sendMarkers(shard: TxnShard, txn: TransactionMetadata): Promise<void> {
    const generation = shard.generation;
    const v = txn.value;
    const commit = v.state === TxnState.PrepareCommit;
    let remaining = partitionList(v.partitions);
    let attempt = 0;
    // Kafka's prepareComplete: Complete* is pending while the markers are written, so every request for the id
    // answers CONCURRENT_TRANSACTIONS until the transaction completed.
    txn.pending = commit ? TxnState.CompleteCommit : TxnState.CompleteAbort;
    const current = (): boolean => shard.generation === generation && shard.status === 'active' && shard.txns.get(txn.transactionalId) === txn && txn.value === v;
    const step = async (): Promise<void> => {
      if (!current()) return;
      remaining = remaining.filter((p) => this.o.partitionExists(p.topic, p.partition));
      if (remaining.length > 0) {
        let results: TxnMarkerResult[] = [];
        try {
          results = await this.o.markers.write([{ producerId: v.producerId, producerEpoch: v.producerEpoch, coordinatorEpoch: shard.coordinatorEpoch, commit, partitions: remaining }]);
        } catch (err) {
          this.o.log.warn({ err, transactionalId: txn.transactionalId }, 'writing transaction markers failed; retrying');
        }
        if (!current()) return;
        const written = new Set<string>();
        for (const r of results) {
          for (const p of r.partitions) {
            if (p.errorCode === ErrorCode.NONE) written.add(key(p.topic, p.partition));
            // Kafka's TransactionMarkerRequestCompletionHandler: the producer could not have written to such a
            // partition, which is dropped from the markers.
            else if (p.errorCode === ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT || p.errorCode === ErrorCode.UNSUPPORTED_VERSION) written.add(key(p.topic, p.partition));
            else if (p.errorCode === ErrorCode.INVALID_PRODUCER_EPOCH || p.errorCode === ErrorCode.TRANSACTION_COORDINATOR_FENCED) {
              this.o.log.error(
                { transactionalId: txn.transactionalId, topic: p.topic, partition: p.partition, errorCode: p.errorCode, coordinatorEpoch: shard.coordinatorEpoch },
                'a transaction marker was refused as stale; this coordinator stops sending its markers',
              );
              return;
            }
          }
        }
        remaining = remaining.filter((p) => !written.has(key(p.topic, p.partition)));
      }
      if (remaining.length === 0) {
        const next = txn.transit(commit ? TxnState.CompleteCommit : TxnState.CompleteAbort, { partitions: new Map(), lastUpdateTimestamp: this.o.clock.now(), ...completeProducer(v) });
        const code = await this.o.commit(shard, generation, txn, next, true);
        if (code === ErrorCode.NONE || !current()) return;
      }
      const delay = MARKER_BACKOFF_MS[Math.min(attempt++, MARKER_BACKOFF_MS.length - 1)]!;
      shard.setTimer(delay, run);
    };
    let firstAttemptEnded!: () => void;
    const firstAttempt = new Promise<void>((resolve) => (firstAttemptEnded = resolve));
    const run = (): void => {
      step()
        .catch((err: unknown) => this.o.log.error({ err, transactionalId: txn.transactionalId }, 'completing a transaction failed'))
        .finally(firstAttemptEnded);
    };
    run();
    return firstAttempt;
  }

  private scheduleAbortTimedOut(shard: TxnShard): void {
    shard.setTimer(this.o.config.abortTimedOutIntervalMs, () => {
      this.abortTimedOut(shard);
      this.scheduleAbortTimedOut(shard);
    });
  }

  /** Kafka's abortTimedOutTransactions: ongoing transactions past their timeout abort with a fenced epoch. */
  abortTimedOut(shard: TxnShard): void {
    if (shard.status !== 'active') return;
    const now = this.o.clock.now();
    for (const txn of [...shard.txns.values()]) {
      const v = txn.value;
      if (v.state !== TxnState.Ongoing || txn.pendingTransitionInProgress || v.startTimestamp + v.timeoutMs >= now) continue;
      this.o.log.info({ transactionalId: txn.transactionalId, producerId: v.producerId, producerEpoch: v.producerEpoch, timeoutMs: v.timeoutMs }, 'aborting a transaction past its timeout');
      this.o.abort(shard, txn).then(
        (code) => {
          if (code !== ErrorCode.NONE) this.o.log.warn({ transactionalId: txn.transactionalId, errorCode: code }, 'aborting a timed-out transaction failed; retried at the next check');
        },
        (err: unknown) => this.o.log.error({ err, transactionalId: txn.transactionalId }, 'aborting a timed-out transaction failed'),
      );
    }
  }

  private scheduleRemoveExpired(shard: TxnShard): void {
    shard.setTimer(this.o.config.removeExpiredIntervalMs, () => {
      this.removeExpired(shard);
      this.scheduleRemoveExpired(shard);
    });
  }

  /** Kafka's removeExpiredTransactionalIds: ids without a transaction, idle for transactional.id.expiration.ms, are tombstoned. */
  removeExpired(shard: TxnShard): void {
    if (shard.status !== 'active') return;
    const now = this.o.clock.now();
    const generation = shard.generation;
    for (const txn of [...shard.txns.values()]) {
      const v = txn.value;
      const idle = v.state === TxnState.Empty || v.state === TxnState.CompleteCommit || v.state === TxnState.CompleteAbort;
      if (!idle || txn.pendingTransitionInProgress || v.lastUpdateTimestamp > now - this.o.config.transactionalIdExpirationMs) continue;
      this.o.commit(shard, generation, txn, null).then(
        (code) => {
          if (code === ErrorCode.NONE) this.o.log.debug({ transactionalId: txn.transactionalId }, 'removed an expired transactional id');
        },
        (err: unknown) => this.o.log.error({ err, transactionalId: txn.transactionalId }, 'removing an expired transactional id failed'),
      );
    }
  }
}
