/**
 * Rollover of a PartitionLog's open ledger (Kafka's LogSegment.shouldRoll), and sealing a ledger at what is
 * really durable after a failed append.
 *
 * ```
 *   chain:  [ledger 7 sealed][ledger 9 sealed] … [ledger 15 open] ← appends
 *   roll:   create ledger 16 (while 15 drains) → switch → seal 15 + one chain txn {15 sealed, 16 open}
 * ```
 *
 * Only one ledger ever has appends in flight: a roll first lets the old ledger's appends settle (the ledger
 * store resolves them in entry order), then issues to the new one. Acknowledgements of the new ledger's
 * appends wait for the chain txn that records it, so an acknowledged batch is always reachable from the
 * chain after a crash. A storage failure makes the log roll to a new ledger before it takes more appends.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { LedgerMetadata, LedgerWriter } from '../ledger/types.js';
import type { ChainChange } from './chain.js';
import { maxSegmentMs } from './config.js';
import { LogCorruptError, LogError, LogFencedError, LogStorageError } from './errors.js';
import { isLedgerError, openRecord, sealedRecord, type ActiveLedger, type LogCore } from './log-core.js';
import { IndexedLedger } from './offset-index.js';
import { applyStoredBatch } from './producer-state.js';

export class Roller {
  rolling: Promise<void> | null = null;

  constructor(private readonly core: LogCore) {}

  /** Kafka's LogSegment.shouldRoll, by size, entry count and age; an empty ledger never rolls. */
  rollReason(a: ActiveLedger, nextBatchBytes: number): string | null {
    if (a.issued === 0) return null;
    const c = this.core.config;
    if (a.issuedBytes > c.segmentBytes - nextBatchBytes) return 'segment.bytes';
    if (a.issued >= c.segmentEntries) return 'ledgerline.segment.entries';
    if (a.firstAppendAtMs !== null && this.core.clock.now() - a.firstAppendAtMs >= maxSegmentMs(c)) return 'segment.ms';
    return null;
  }

  armRollTimer(a: ActiveLedger): void {
    a.rollTimer?.cancel();
    const due = a.firstAppendAtMs! + maxSegmentMs(this.core.config) - this.core.clock.now();
    // segment.ms also rolls an idle ledger, so that retention can delete it (Kafka rolls on the next append
    // only; Pulsar checks ledgers periodically).
    a.rollTimer = this.core.clock.setTimer(Math.max(0, due), () => {
      a.rollTimer = null;
      if (this.core.active === a && this.core.state === 'open' && a.issued > 0) this.startRoll('segment.ms');
    });
  }

  /** Seals the open ledger and opens a new one now, if the open ledger holds any batch. */
  async roll(): Promise<void> {
    const err = this.core.writeError();
    if (err) throw err;
    if (this.rolling) await this.rolling;
    const a = this.core.active;
    if (!a || a.issued === 0) return;
    await this.startRoll('requested');
    await this.core.active?.commit;
  }

  startRoll(reason: string): Promise<void> {
    if (!this.rolling) {
      this.rolling = this.rollOver(reason)
        .catch((err: unknown) => this.rollFailed(err))
        .finally(() => {
          this.rolling = null;
          this.core.appender.pump();
        });
    }
    return this.rolling;
  }

  async rollOver(reason: string): Promise<void> {
    const old = this.core.active!;
    old.rollTimer?.cancel();
    old.rollTimer = null;
    // Create the next ledger while the old one's appends settle.
    const creating = this.core.ledgers.create(this.core.config.ledgerReplication);
    creating.catch(() => undefined);
    let writer: LedgerWriter;
    try {
      await this.drain(old);
      await old.commit;
      if (this.core.state !== 'open') {
        creating.then((w) => this.core.deleteLedgersQuietly([w.ledgerId]), () => undefined);
        return;
      }
      if (old.failed !== null) await this.reconcileFailedLedger(old);
      writer = await creating;
    } catch (err) {
      creating.then((w) => this.core.deleteLedgersQuietly([w.ledgerId]), () => undefined);
      this.rollFailed(err);
      return;
    }
    if (this.core.state !== 'open') {
      this.core.deleteLedgersQuietly([writer.ledgerId]);
      return;
    }
    // Every append issued to `old` has settled and the durable ones are in the index.
    this.core.nextOffset = this.core.highWatermark;
    const next = this.newActive(writer, this.core.nextOffset);
    this.core.active = next;
    this.core.rolls[reason] = (this.core.rolls[reason] ?? 0) + 1;
    const replace = old.indexed.count === 0;
    // The producer state now holds exactly the batches of the ledgers up to `old`: snapshot it here.
    const producers = replace ? null : this.core.producerSnapshotAt(old.indexed.endOffset);
    next.commit = this.core.chainOp(async () => {
      const sealedAt = await this.sealWriter(old);
      // An empty ledger is replaced in place: its successor takes its key (same start offset).
      const change: ChainChange = replace
        ? { put: [openRecord(next.indexed)] }
        : { put: [{ ...sealedRecord(old.indexed), sealedAtMs: sealedAt }, openRecord(next.indexed)] };
      await this.core.commit(change);
      if (replace) {
        this.core.index.removeLast();
      } else {
        this.core.index.sealLast(sealedAt);
      }
      this.core.index.add(next.indexed);
      next.committed = true;
      this.core.appender.completeHead();
      if (replace) this.core.deleteLedgersQuietly([old.writer.ledgerId]);
      else this.core.snapshotWriter.scheduleSnapshot(old.indexed, { producers });
    });
    next.commit.catch((err) => this.core.chainFailed(err));
  }

  /**
   * Seals a ledger whose appends have all settled and checks that it holds exactly what the log
   * acknowledged. Returns the sealing time.
   */
  async sealWriter(a: ActiveLedger): Promise<number> {
    if (a.failed !== null) await this.reconcileFailedLedger(a);
    let meta: LedgerMetadata;
    try {
      meta = await a.writer.seal();
    } catch (err) {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        throw new LogFencedError(this.core.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err);
      }
      throw new LogStorageError(`cannot seal ledger ${a.writer.ledgerId} of ${this.core.name}`, { partition: this.core.name }, err);
    }
    if (meta.lastAddConfirmed + 1 !== a.indexed.count) {
      throw new LogCorruptError(
        `ledger ${a.writer.ledgerId} sealed with ${meta.lastAddConfirmed + 1} entries, the log acknowledged ${a.indexed.count}`,
        { partition: this.core.name, ledgerId: a.writer.ledgerId },
      );
    }
    // The log's clock, not the store's: retention compares it with the log's clock.
    return this.core.clock.now();
  }

  newActive(writer: LedgerWriter, startOffset: number): ActiveLedger {
    return {
      writer,
      indexed: new IndexedLedger(writer.ledgerId, startOffset, this.core.head.epoch, this.core.clock.now()),
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
  drain(a: ActiveLedger): Promise<void> {
    if (a.inflight === 0) return Promise.resolve();
    return new Promise((resolve) => a.settledWaiters.push(resolve));
  }

  settled(a: ActiveLedger): void {
    const waiters = a.settledWaiters;
    a.settledWaiters = [];
    for (const w of waiters) w();
  }

  /**
   * After a failed append: seal the ledger at what is really durable and index any entry the log had
   * given up on (an append issued while an earlier failure was being reported can still have landed: it
   * is in the ledger, so it is in the log, like a produce that timed out after being written).
   */
  async reconcileFailedLedger(a: ActiveLedger): Promise<void> {
    let meta: LedgerMetadata;
    try {
      meta = await a.writer.seal();
    } catch (err) {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        throw new LogFencedError(this.core.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err);
      }
      throw new LogStorageError(`cannot seal ledger ${a.writer.ledgerId} of ${this.core.name}`, { partition: this.core.name }, err);
    }
    const known = a.indexed.count;
    if (meta.lastAddConfirmed + 1 > known) {
      const extra = await this.core.readBatches(a.indexed, known, meta.lastAddConfirmed);
      let last = known === 0 ? a.indexed.startOffset - 1 : a.indexed.lastOffsetAt(known - 1);
      for (const e of extra) {
        const view = RecordBatch.unchecked(e.data);
        const lastOffset = view.lastOffsetNumber;
        if (lastOffset <= last) {
          throw new LogCorruptError(`ledger ${a.writer.ledgerId} entry ${e.entryId} goes back to offset ${lastOffset}`, {
            partition: this.core.name,
            ledgerId: a.writer.ledgerId,
          });
        }
        a.indexed.push(lastOffset, view.maxTimestamp, e.data.length);
        // It landed, so it is in the log: its producer's retry must find it (a duplicate, not a new batch).
        applyStoredBatch(this.core.producers, view, view.baseOffsetNumber, lastOffset);
        last = lastOffset;
        this.core.highWatermark = lastOffset + 1;
      }
      this.core.notifyWaiters();
    }
    a.failed = null;
  }

  /** A roll could not finish (storage down): fail what waits; the next append tries again. */
  rollFailed(err: unknown): void {
    if (this.core.state !== 'open') return;
    const error =
      err instanceof LogError
        ? err
        : new LogStorageError(`cannot roll ${this.core.name} to a new ledger`, { partition: this.core.name }, err);
    if (error instanceof LogFencedError) {
      this.core.fence(error);
      return;
    }
    const a = this.core.active;
    if (a && a.failed === null) a.failed = error;
    this.core.appender.rejectWaiting(error);
  }
}
