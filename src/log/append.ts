/**
 * The append pipeline of a PartitionLog: appends wait in call order, are issued to the open ledger (offsets
 * assigned by rewriting the batch header in place) and are acknowledged in offset order once durable and
 * recorded in the chain. Rolling to a new ledger is roll.ts.
 *
 * ```
 *   append(batch) ─► waiting ─► issue: rewrite baseOffset + partitionLeaderEpoch in place ─► writer.append
 *                                                                                              │ durable
 *   resolve {baseOffset, …} ◄─ high watermark ◄─ index.push ◄─ in offset order, once the ledger ◄┘
 *                                                              is recorded in the chain
 * ```
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import { RecordTooLargeError } from '../../protocol/records/errors.js';
import { InvalidAppendOffsetError, LogFencedError, LogInvalidArgumentError, LogStorageError, UnexpectedLogEndError } from './errors.js';
import { isLedgerError, type ActiveLedger, type LogCore, type PendingAppend } from './log-core.js';
import { applyStoredBatch } from './producer-state.js';
import type { AppendOptions, AppendResult } from './types.js';

export class Appender {
  waiting: PendingAppend[] = [];
  waitingHead = 0;
  pending: PendingAppend[] = [];
  pendingHead = 0;

  constructor(private readonly core: LogCore) {}

  /**
   * Appends one record batch (already validated by the caller: CRC, producer rules). The log assigns its
   * offsets by rewriting baseOffset and partitionLeaderEpoch in place (and, for LogAppendTime topics, the
   * timestamp type, maxTimestamp and CRC), so the buffer must not be reused. Resolves once the batch is
   * durable, in offset order with the other appends; rejects with LogFencedError, LogClosedError,
   * LogDeletedError, InvalidAppendOffsetError, LogStorageError, EntryTooLargeError (ledger store) or
   * CorruptRecordError (not a batch v2).
   */
  append(batch: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    const unavailable = this.core.writeError();
    if (unavailable) return Promise.reject(unavailable);
    let view: RecordBatch;
    try {
      view = RecordBatch.wrap(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    if (batch.length > this.core.config.maxMessageBytes && options.mirrored !== true) {
      // Kafka's UnifiedLog.analyzeAndValidateRecords: RecordTooLargeException (MESSAGE_TOO_LARGE).
      return Promise.reject(
        new RecordTooLargeError(
          `The record batch of ${batch.length} bytes is larger than max.message.bytes ` +
            `${this.core.config.maxMessageBytes} of ${this.core.name}`,
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
    const expectedLogEnd = options.expectedLogEnd;
    if (expectedLogEnd !== undefined && (!Number.isSafeInteger(expectedLogEnd) || expectedLogEnd < 0 || (requested !== undefined && expectedLogEnd > requested))) {
      return Promise.reject(new LogInvalidArgumentError(`expectedLogEnd must be a non-negative integer no larger than baseOffset, got ${expectedLogEnd}`));
    }
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.push({
        batch,
        view,
        requestedOffset: requested,
        expectedLogEnd,
        leaderEpoch: options.partitionLeaderEpoch,
        mirrored: options.mirrored === true,
        crcChecked: options.crcChecked === true,
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
      this.pump();
    });
  }

  /** The log ends: appends waiting or in flight fail with `failure` (acknowledged ones stay acknowledged). */
  failAll(failure: unknown): void {
    this.rejectWaiting(failure);
    for (let i = this.pendingHead; i < this.pending.length; i++) {
      const p = this.pending[i]!;
      if (p.state === 'inflight' || p.state === 'durable') {
        p.state = 'failed';
        p.reject(failure);
      }
    }
    this.pending = [];
    this.pendingHead = 0;
  }

  /** Issues waiting appends to the open ledger, unless a roll must come first. */
  pump(): void {
    while (this.waitingHead < this.waiting.length) {
      if (this.core.roller.rolling || this.core.state !== 'open') return;
      const a = this.core.active;
      if (!a) return;
      const p = this.waiting[this.waitingHead]!;
      if (a.failed !== null) {
        this.core.roller.startRoll('failure');
        return;
      }
      const reason = this.core.roller.rollReason(a, p.batch.length);
      if (reason) {
        this.core.roller.startRoll(reason);
        return;
      }
      this.waiting[this.waitingHead++] = undefined as unknown as PendingAppend;
      const base = p.requestedOffset ?? this.core.nextOffset;
      if (base < this.core.nextOffset) {
        p.state = 'failed';
        p.reject(new InvalidAppendOffsetError(this.core.name, base, this.core.nextOffset));
        continue;
      }
      if (p.expectedLogEnd !== undefined && p.expectedLogEnd !== this.core.nextOffset) {
        p.state = 'failed';
        p.reject(new UnexpectedLogEndError(this.core.name, base, p.expectedLogEnd, this.core.nextOffset));
        continue;
      }
      this.issue(a, p, base);
    }
    this.waiting = [];
    this.waitingHead = 0;
  }

  issue(a: ActiveLedger, p: PendingAppend, base: number): void {
    const view = p.view;
    view.setBaseOffset(base);
    view.setPartitionLeaderEpoch(p.leaderEpoch ?? this.core.head.epoch);
    if (this.core.config.messageTimestampType === 'LogAppendTime' && !p.mirrored) {
      // Kafka's LogValidator with LOG_APPEND_TIME: the batch gets the broker's time (new CRC).
      p.logAppendTime = this.core.clock.now();
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
      a.firstAppendAtMs = this.core.clock.now();
      this.core.roller.armRollTimer(a);
    }
    this.core.nextOffset = p.lastOffset + 1;
    this.pending.push(p);
    // After the rewrites above: baseOffset and partitionLeaderEpoch lie outside the batch's CRC, and a
    // LogAppendTime stamp recomputes it, so a checked CRC still covers the bytes as they are stored.
    a.writer.append(p.batch, p.crcChecked ? { crc32c: view.crc32cOfWhole() } : undefined).then(
      (entryId) => this.onAppended(a, p, entryId),
      (err) => this.onAppendFailed(a, p, err),
    );
  }

  onAppended(a: ActiveLedger, p: PendingAppend, entryId: number): void {
    a.inflight--;
    if (p.state === 'inflight') {
      if (a.failed === null && entryId === p.entryId) {
        p.state = 'durable';
      } else {
        // After a failure the store may hand out entry ids again: whatever follows is reconciled by the
        // roll that comes next (it reads what the sealed ledger really holds).
        if (a.failed === null) a.failed = new Error(`ledger store returned entry ${entryId} for entry ${p.entryId}`);
        p.state = 'failed';
        p.reject(new LogStorageError(`append to ${this.core.name} was not acknowledged`, { partition: this.core.name }, a.failed));
      }
      this.completeHead();
    }
    if (a.inflight === 0) this.core.roller.settled(a);
  }

  onAppendFailed(a: ActiveLedger, p: PendingAppend, err: unknown): void {
    a.inflight--;
    if (p.state === 'inflight') {
      if (isLedgerError(err, 'LL_ERR_LEDGER_FENCED') || isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
        this.core.fence(new LogFencedError(this.core.name, `ledger ${a.writer.ledgerId} was fenced or deleted`, err));
      } else {
        if (a.failed === null) a.failed = err;
        p.state = 'failed';
        p.reject(
          isLedgerError(err, 'LL_ERR_ENTRY_TOO_LARGE')
            ? err
            : new LogStorageError(`append to ${this.core.name} failed`, { partition: this.core.name, ledgerId: a.writer.ledgerId }, err),
        );
        this.completeHead();
        if (this.core.state === 'open') this.core.roller.startRoll('failure');
      }
    }
    if (a.inflight === 0) this.core.roller.settled(a);
  }

  /** Acknowledges appends at the head of the queue that are durable and recorded in the chain. */
  completeHead(): void {
    const pending = this.pending;
    let advanced = false;
    while (this.pendingHead < pending.length) {
      const p = pending[this.pendingHead]!;
      if (p.state === 'inflight') break;
      if (p.state === 'durable') {
        const a = p.ledger!;
        if (!a.committed) break;
        a.indexed.push(p.lastOffset, p.maxTimestamp, p.batch.length);
        // In the log below the high watermark from now on: the producer state holds it (producer-state.ts).
        applyStoredBatch(this.core.producers, p.view, p.baseOffset, p.lastOffset);
        this.core.highWatermark = p.lastOffset + 1;
        advanced = true;
        p.resolve({
          baseOffset: p.baseOffset,
          lastOffset: p.lastOffset,
          logAppendTime: p.logAppendTime,
          logStartOffset: this.core.logStartOffset,
        });
      }
      pending[this.pendingHead++] = undefined as unknown as PendingAppend;
    }
    if (this.pendingHead === pending.length) {
      this.pending = [];
      this.pendingHead = 0;
    } else if (this.pendingHead > 4096 && this.pendingHead * 2 > pending.length) {
      this.pending = pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
    if (advanced) this.core.notifyWaiters();
  }

  rejectWaiting(err: unknown): void {
    for (let i = this.waitingHead; i < this.waiting.length; i++) {
      const p = this.waiting[i]!;
      p.state = 'failed';
      p.reject(err);
    }
    this.waiting = [];
    this.waitingHead = 0;
  }
}
