/**
 * Fetch reads of a PartitionLog: whole stored batches up to the high watermark (or the last stable offset
 * for read_committed), and the long-poll waits on new data.
 */
import type { LedgerEntry } from '../ledger/types.js';
import { LogInvalidArgumentError, LogStorageError } from './errors.js';
import { isLedgerError, type LogCore, type Waiter } from './log-core.js';
import type { BatchPosition } from './offset-index.js';
import type { IsolationLevel, ReadOptions, ReadResult } from './types.js';

const DEFAULT_MAX_BYTES = 1024 * 1024;
/** Times one read looks its offset up again after the cleaner replaced the ledger it was reading. */
const MAX_RELOOKUPS = 3;

/** What onData returns when it woke its caller at once: nothing to cancel. */
const NO_WAIT = (): void => undefined;

export class Reader {
  constructor(private readonly core: LogCore) {}

  /** Data at or after `offset` is readable: below the high watermark, or the last stable offset (read_committed). */
  private readable(offset: number, committed: boolean): boolean {
    return (committed ? this.core.lastStableOffset : this.core.highWatermark) > offset;
  }

  /**
   * Reads whole stored batches from `fromOffset` (Fetch): from the batch holding that offset (or the first
   * one after it when it falls in a gap), up to `maxBytes`, never past the high watermark (or the last stable
   * offset for read_committed). Returns no batches when `fromOffset` is at the end. Throws
   * OffsetOutOfRangeError when `fromOffset` is below the log start offset or above the log end offset
   * (Kafka's OFFSET_OUT_OF_RANGE), LogFencedError/LogClosedError/LogDeletedError when this owner cannot serve.
   */
  async read(fromOffset: number, options: ReadOptions = {}): Promise<ReadResult> {
    const unavailable = this.core.readError();
    if (unavailable) throw unavailable;
    if (!Number.isSafeInteger(fromOffset)) throw new LogInvalidArgumentError(`offset must be an integer, got ${fromOffset}`);
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    const minOne = options.minOneBatch ?? true;
    const highWatermark = this.core.highWatermark;
    const lastStableOffset = this.core.lastStableOffset;
    const logStartOffset = this.core.logStartOffset;
    if (fromOffset < logStartOffset || fromOffset > this.core.nextOffset) throw this.core.outOfRange(fromOffset);
    const upper = options.isolation === 'read_committed' ? lastStableOffset : highWatermark;
    const records: Buffer[] = [];
    let size = 0;
    let nextOffset = fromOffset;
    let pos: BatchPosition | null = fromOffset < upper ? this.core.index.lookup(fromOffset) : null;
    let relookups = 0;
    while (pos) {
      const { ledger, entryId } = pos;
      let lastEntry = ledger.count - 1;
      if (upper < ledger.endOffset) lastEntry = ledger.entryForOffset(upper) - 1;
      if (lastEntry < entryId) break;
      const budget = maxBytes - size;
      if (budget <= 0 && !(minOne && records.length === 0)) break;
      let entries: LedgerEntry[];
      try {
        entries = await this.core.ledgers.read(ledger.ledgerId, entryId, lastEntry, { maxBytes: Math.max(budget, 1) });
      } catch (err) {
        if (isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
          // Deleted by retention while we read: whatever came before it is still a valid answer.
          if (records.length > 0) break;
          if (fromOffset < this.core.logStartOffset) throw this.core.outOfRange(fromOffset);
          const gone = this.core.readError();
          if (gone) throw gone;
          // Replaced by the log cleaner's compacted ledger (compaction.ts), which holds the same offsets:
          // look the offset up again in the index as it is now.
          if (!this.core.index.ledgers.includes(ledger) && relookups++ < MAX_RELOOKUPS) {
            pos = nextOffset < upper ? this.core.index.lookup(nextOffset) : null;
            continue;
          }
        }
        throw new LogStorageError(
          `cannot read ${this.core.name} at offset ${fromOffset}`,
          { partition: this.core.name, ledgerId: ledger.ledgerId },
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
      pos = nextOffset < upper ? this.core.index.lookup(nextOffset) : null;
    }
    // Kafka's collectAbortedTransactions: the aborted transactions overlapping [fromOffset, what was read).
    const abortedTransactions =
      options.isolation === 'read_committed' && records.length > 0 ? this.core.txnIndex.collect(fromOffset, nextOffset) : [];
    return { records, sizeInBytes: size, highWatermark, lastStableOffset, logStartOffset, nextOffset, abortedTransactions };
  }

  /**
   * What `read` answers when nothing is readable at `fromOffset` (it is at or past the high watermark, or the
   * last stable offset for read_committed, and within the log), without a promise: a fetch of thousands of
   * partitions asks this of each before it reads, and most are caught up. Undefined when `read` would return
   * batches or throw: the caller reads.
   */
  readAtEnd(fromOffset: number, isolation?: IsolationLevel): ReadResult | undefined {
    const c = this.core;
    const upper = isolation === 'read_committed' ? c.lastStableOffset : c.highWatermark;
    if (fromOffset < upper || fromOffset < c.logStartOffset || fromOffset > c.nextOffset || !Number.isSafeInteger(fromOffset) || c.readError()) return undefined;
    return { records: [], sizeInBytes: 0, highWatermark: c.highWatermark, lastStableOffset: c.lastStableOffset, logStartOffset: c.logStartOffset, nextOffset: fromOffset, abortedTransactions: [] };
  }

  /**
   * Resolves true once a batch at or after `offset` is readable (high watermark > offset), or at once if it
   * already is or the log can no longer serve (the caller's next read reports why); false when `signal`
   * aborts first (Fetch's max_wait_ms). No polling: the append that moves the high watermark wakes it.
   */
  waitForData(offset: number, signal?: AbortSignal, isolation?: IsolationLevel): Promise<boolean> {
    if (this.readable(offset, isolation === 'read_committed') || this.core.readError()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const onAbort = (): void => {
        cancel();
        resolve(false);
      };
      const cancel = this.onData(
        offset,
        () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(true);
        },
        isolation,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /**
   * Calls `wake` once a batch at or after `offset` is readable (or the log can no longer serve) — at once,
   * synchronously, if that is already so. Returns a function that cancels the wait. Takes no AbortSignal,
   * so a caller waiting on many partitions (a Fetch long-poll) adds one abort listener for its whole wait,
   * not one per partition.
   */
  onData(offset: number, wake: () => void, isolation?: IsolationLevel): () => void {
    const committed = isolation === 'read_committed';
    if (this.readable(offset, committed) || this.core.readError()) {
      wake();
      return NO_WAIT;
    }
    const w: Waiter = { offset, committed, resolve: wake, cleanup: () => undefined };
    this.core.waiters.add(w);
    return () => {
      this.core.waiters.delete(w);
    };
  }
}
