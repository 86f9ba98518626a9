/**
 * The commit pipeline of the local ledger store: every operation that changes the disk (append, create,
 * seal, delete, compaction's copies) goes through one FIFO queue shared by all ledgers, and one fdatasync
 * makes a whole group of them durable, whichever ledgers they belong to. In BookKeeper terms this is a
 * bookie's journal (which is also its entry log, as in Kafka, where the log is the only copy): the journal
 * thread writes groups while the force-write thread fsyncs the ones already written.
 *
 * ```
 *   append(L1,e) append(L2,e) append(L1,e) …      seal / fence / create / delete / move
 *          │            │            │                        │
 *          ▼            ▼            ▼                        ▼
 *   ┌──────────────── pending queue (FIFO, all ledgers) ──────────────┐
 *   └──────────────────────────────┬──────────────────────────────────┘
 *            commit loop: take ≤ maxGroupBytes → one writev → one fdatasync
 *                                  │
 *          ┌───────────────────────▼──────────────────────┐
 *          │ active segment  …│rec│rec│rec│rec│ ← append  │   older segments: read only, reclaimed
 *          └───────────────────────┬──────────────────────┘   when no live entry is left (compaction
 *                                  │                          copies the few live ones out)
 *                                  │ on success, in queue order:
 *            index each entry (LedgerIndex: 8 bytes/entry), add to the tail cache, advance
 *            lastAddConfirmed, resolve the appends. On failure: fail the group, roll to a new segment
 *            whose header excludes the failed bytes, rewind the affected ledgers' next entry ids.
 * ```
 *
 * The records a group is framed into are in group-framing.ts; what a committed group changes in the
 * store's state (the `apply` hook) is in local-store.ts.
 */
import type { Checkpointer } from './checkpoint.js';
import type { LedgerError } from './errors.js';
import { SEGMENT_HEADER_BYTES } from './format.js';
import { frameGroup, recordBytes } from './group-framing.js';
import { storageError, type Ledger, type Op, type Segment, type StoreCore, type WrittenGroup } from './store-state.js';

export interface CommitPipelineOptions {
  /** flush.messages and flush.ms (types.ts, LedgerFlushPolicy); `core.durable` is messages = 1. */
  readonly flushMessages: number;
  readonly flushMs: number;
  readonly segmentBytes: number;
  readonly maxGroupBytes: number;
  /** Makes a committed group visible, in queue order (local-store.ts). */
  readonly apply: (group: Op[], segment: Segment, offsets: number[]) => void;
}

export class CommitPipeline {
  /**
   * Pending operations from queueHead on. Slots before queueHead are cleared as groups are taken: an entry
   * op holds its data, often a view of a whole request buffer, which must not outlive the write.
   */
  private queue: (Op | undefined)[] = [];
  private queueHead = 0;
  private loopRunning = false;
  private loopScheduled = false;
  private loopDone: Promise<void> = Promise.resolve();
  private signalLoopDone: () => void = () => undefined;
  /** A write or fsync failed: the next group first rolls to a segment that excludes the failed bytes. */
  private mustRoll = false;
  private lastSyncError: unknown = null;
  /** Groups written and waiting for their fsync, in write order (all in the active segment). */
  private inflight: WrittenGroup[] = [];
  private inflightBytes = 0;
  private syncing = false;
  private syncWaiters: (() => void)[] = [];
  private unflushedEntries = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushDue = false;
  /** Waiting for the commit loop to roll the active segment (for the garbage collector). */
  private rollWaiters: (() => void)[] = [];

  constructor(
    private readonly core: StoreCore,
    private readonly checkpointer: Checkpointer,
    private readonly options: CommitPipelineOptions,
  ) {}

  /** Settles when the commit loop running now (if any) stops. */
  get idle(): Promise<void> {
    return this.loopDone;
  }

  enqueue(op: Op): void {
    this.queue.push(op);
    this.scheduleLoop();
  }

  /** Rolls the active segment between two groups, for the garbage collector; resolves once done (or failed). */
  requestRoll(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.rollWaiters.push(resolve);
      this.scheduleLoop();
    });
  }

  /** Removes a ledger's queued (not yet being written) operations matching `which`, rejecting them. */
  removeQueued(ledger: Ledger, which: (op: Op) => boolean, error: () => Error): void {
    const kept: Op[] = [];
    let firstRemovedEntry = -1;
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const op = this.queue[i]!;
      if (op.ledger === ledger && which(op)) {
        if (op.kind === 'entry' && firstRemovedEntry < 0) firstRemovedEntry = op.entryId;
        if (op.kind === 'seal') ledger.sealPromise = null;
        op.reject(error());
      } else {
        kept.push(op);
      }
    }
    this.queue = kept;
    this.queueHead = 0;
    // The removed entries were the ledger's newest ids; hand them out again so ids stay dense.
    if (firstRemovedEntry >= 0) ledger.nextEntryId = firstRemovedEntry;
  }

  /**
   * For `close()`: commits (or fails) every operation already queued, waits for their fsyncs, and under a
   * non-durable policy fsyncs what is still unflushed, unless the segment was abandoned after a failure.
   */
  async drain(): Promise<void> {
    while (this.loopRunning || this.loopScheduled || this.queueLength() > 0 || this.syncing || this.inflight.length > 0) {
      if (!this.loopRunning && !this.loopScheduled && this.queueLength() > 0) this.scheduleLoop();
      await Promise.all([this.loopDone, this.drainSyncs()]);
    }
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.unflushedEntries > 0 && !this.mustRoll) await this.flushActive();
  }

  /** Stops the flush.ms timer (the store's files are being released). */
  stopTimer(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
  }

  private queueLength(): number {
    return this.queue.length - this.queueHead;
  }

  private scheduleLoop(): void {
    if (this.loopRunning || this.loopScheduled) return;
    this.loopScheduled = true;
    this.loopDone = new Promise<void>((resolve) => {
      this.signalLoopDone = resolve;
    });
    // setImmediate rather than a microtask: appends issued in the same turn of the event loop (e.g. from
    // one network read) join the first group instead of each paying for an fsync.
    setImmediate(() => {
      this.loopScheduled = false;
      void this.commitLoop();
    });
  }

  private async commitLoop(): Promise<void> {
    this.loopRunning = true;
    try {
      for (;;) {
        if (this.rollWaiters.length > 0) await this.rollForCollector();
        if (this.queueLength() === 0) {
          if (this.flushDue && this.unflushedEntries > 0) await this.backgroundFlush();
          this.flushDue = false;
          if (this.queueLength() === 0) break;
        }
        if (this.mustRoll) {
          await this.drainSyncs();
          try {
            await this.roll(this.core.files.active.size);
          } catch (err) {
            // The disk still fails: everything waiting fails; the next append tries again.
            this.failGroup(this.takeAll(), storageError('cannot start a new segment after a failed write', err));
            continue;
          }
        }
        // Bound the bytes written ahead of the fsync in progress (BookKeeper's journal queue between the
        // journal thread and the force-write thread).
        while (this.inflightBytes >= 2 * this.options.maxGroupBytes) await this.syncProgress();
        if (this.mustRoll) continue; // an fsync failed meanwhile: roll first
        await this.writeGroup(this.takeGroup());
      }
    } finally {
      this.loopRunning = false;
      this.signalLoopDone();
      if ((this.queueLength() > 0 || this.rollWaiters.length > 0) && !this.core.closed) this.scheduleLoop();
    }
  }

  /** Rolls the active segment between groups, as the garbage collector asked (a failure is reported). */
  private async rollForCollector(): Promise<void> {
    const waiters = this.rollWaiters.splice(0);
    try {
      if (!this.mustRoll && this.core.files.active.size > SEGMENT_HEADER_BYTES) {
        await this.drainSyncs();
        await this.roll(this.core.files.active.size);
      }
    } catch (err) {
      this.mustRoll = true;
      this.core.onBackgroundError(storageError('cannot roll the active segment for garbage collection', err));
    } finally {
      for (const w of waiters) w();
    }
  }

  private takeAll(): Op[] {
    const ops = this.queue.slice(this.queueHead) as Op[];
    this.queue = [];
    this.queueHead = 0;
    return ops;
  }

  private takeGroup(): Op[] {
    // A group never overfills a segment: at most what an empty segment holds after its header.
    const cap = Math.min(this.options.maxGroupBytes, this.options.segmentBytes - SEGMENT_HEADER_BYTES);
    let bytes = 0;
    let end = this.queueHead;
    while (end < this.queue.length) {
      const next = bytes + recordBytes(this.queue[end]!);
      if (end > this.queueHead && next > cap) break;
      bytes = next;
      end++;
    }
    const group = this.queue.slice(this.queueHead, end) as Op[];
    this.queue.fill(undefined, this.queueHead, end);
    this.queueHead = end;
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    return group;
  }

  /**
   * Writes one group with one writev. Under the durable policy the group then waits for an fsync (see
   * syncLoop) while the next group is already being framed and written: as in BookKeeper, where the
   * journal thread writes and the force-write thread fsyncs, one fsync covers every group written before
   * it started.
   */
  private async writeGroup(group: Op[]): Promise<void> {
    const files = this.core.files;
    let total = 0;
    let entries = 0;
    for (const op of group) {
      total += recordBytes(op);
      if (op.kind === 'entry') entries++;
    }
    if (files.active.writePos + total > this.options.segmentBytes && files.active.writePos > SEGMENT_HEADER_BYTES) {
      await this.drainSyncs();
      try {
        await this.roll(files.active.size);
      } catch (err) {
        this.failGroup(group, storageError('cannot roll to a new segment', err));
        this.mustRoll = true;
        return;
      }
    }
    const segment = files.active;
    const position = segment.writePos;
    const { buffers, offsets } = frameGroup(group, position, total);
    try {
      await segment.file!.writev(buffers, position);
    } catch (err) {
      // Nothing of this group becomes visible. Its bytes may or may not be on disk: the next group goes to a
      // new segment whose header records the end of the last good group, so they can never resurface.
      this.failGroup(group, storageError('write failed', err, segment.seq, position));
      this.mustRoll = true;
      return;
    }
    if (this.mustRoll) {
      // An fsync failed while this group was being written: the segment is abandoned from before it.
      this.failGroup(group, storageError('fsync of an earlier group failed', this.lastSyncError, segment.seq, position));
      return;
    }
    segment.writePos = position + total;
    const written: WrittenGroup = { group, segment, position, total, entries, offsets };
    if (this.core.durable) {
      this.inflight.push(written);
      this.inflightBytes += total;
      if (!this.syncing) void this.syncLoop();
    } else {
      this.complete(written);
      await this.afterNonDurableWrite(group.length);
    }
  }

  /** The force-write stage: fsyncs until every written group is durable, completing groups in order. */
  private async syncLoop(): Promise<void> {
    this.syncing = true;
    try {
      while (this.inflight.length > 0) {
        const covered = this.inflight.length;
        const segment = this.inflight[0]!.segment;
        const started = performance.now();
        try {
          this.core.stats.fsyncs++;
          await segment.file!.datasync();
        } catch (err) {
          // Every group written and not yet durable fails, including any written during this fsync.
          this.lastSyncError = err;
          this.mustRoll = true;
          const failed = this.inflight.splice(0);
          this.inflightBytes = 0;
          const error = storageError('fsync failed', err, segment.seq, failed[0]!.position);
          for (const w of failed) this.failGroup(w.group, error);
          break;
        }
        const observer = this.core.commitObserver;
        let entries = 0;
        let bytes = 0;
        for (const w of this.inflight.splice(0, covered)) {
          this.inflightBytes -= w.total;
          entries += w.entries;
          bytes += w.total;
          this.complete(w);
        }
        observer?.committed(entries, bytes, (performance.now() - started) / 1000);
        this.notifySyncProgress();
      }
    } finally {
      this.syncing = false;
      this.notifySyncProgress();
      if (this.inflight.length > 0 && !this.mustRoll) void this.syncLoop();
    }
  }

  private syncProgress(): Promise<void> {
    return new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  private notifySyncProgress(): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }

  /** Waits until no written group awaits its fsync. */
  private async drainSyncs(): Promise<void> {
    while (this.syncing || this.inflight.length > 0) await this.syncProgress();
  }

  private complete(w: WrittenGroup): void {
    w.segment.size = w.position + w.total;
    this.core.stats.groupCommits++;
    this.core.stats.bytesAppended += w.total;
    this.options.apply(w.group, w.segment, w.offsets);
  }

  /**
   * Fails every operation of a group that could not be made durable, and every later queued append of the
   * same ledgers (their ids follow the failed ones), then rewinds those ledgers' next entry ids to their
   * first failed id, so ids stay dense. (Groups fail as a suffix of what was written: a failed group's
   * successors in flight fail too, so the rewound id is lastAddConfirmed + 1 once earlier groups settle.)
   */
  private failGroup(group: Op[], error: LedgerError): void {
    const rewound = new Map<Ledger, number>();
    for (const op of group) {
      const ledger = op.ledger;
      if (op.kind === 'entry' && !rewound.has(ledger)) rewound.set(ledger, op.entryId);
      if (op.kind === 'seal') {
        ledger.sealing = false;
        ledger.sealPromise = null;
      }
      if (op.kind === 'delete') ledger.deleting = false;
      op.reject(error);
    }
    for (const [ledger, firstFailed] of rewound) {
      this.removeQueued(ledger, (op) => op.kind === 'entry', () => error);
      ledger.nextEntryId = Math.min(ledger.nextEntryId, firstFailed);
    }
  }

  private async afterNonDurableWrite(entries: number): Promise<void> {
    this.unflushedEntries += entries;
    if (this.unflushedEntries >= this.options.flushMessages) {
      await this.backgroundFlush();
    } else if (!this.flushTimer && Number.isFinite(this.options.flushMs)) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        this.flushDue = true;
        this.scheduleLoop();
      }, this.options.flushMs);
      this.flushTimer.unref();
    }
  }

  /** fsync under a non-durable policy: nobody waits on it; a failure is reported and the segment abandoned. */
  private async backgroundFlush(): Promise<void> {
    try {
      await this.flushActive();
    } catch (err) {
      // The entries written so far were acknowledged already; keep them (they are in the page cache and
      // were valid when written) but stop writing to a file whose writeback failed.
      this.mustRoll = true;
      this.core.onBackgroundError(storageError('background fsync failed', err, this.core.files.active.seq));
    }
  }

  private async flushActive(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.unflushedEntries === 0) return;
    this.core.stats.fsyncs++;
    await this.core.files.active.file!.datasync();
    this.unflushedEntries = 0;
  }

  /**
   * Starts the next segment. `validBytes` is how much of the current one counts: its header records it, so
   * after a failed write the failed bytes are excluded from recovery once this returns.
   */
  private async roll(validBytes: number): Promise<void> {
    const files = this.core.files;
    const old = files.active;
    if (!this.mustRoll && this.unflushedEntries > 0) await this.flushActive();
    await files.start(old.seq + 1, old.seq, validBytes);
    old.size = validBytes;
    old.writePos = validBytes;
    this.mustRoll = false;
    this.unflushedEntries = 0;
    files.touchRolled(old);
    this.checkpointer.queue();
  }
}
