/**
 * What the log cleaner knows of transactions while it walks a range of the log in offset order (Kafka's
 * CleanedTransactionMetadata): which data batches belong to an aborted transaction (discarded), and whether
 * a transaction marker may go (once its transaction has no data left, and then only after its delete
 * horizon, KIP-534 / KIP-98's cleaner rules).
 *
 * ```
 *   aborted txns overlapping the range (txn-index.ts), by first offset ──► consumed as the walk passes them
 *   data batch  of an aborted txn  → discard (and remember its offset)
 *               of another txn     → committed: kept, and its COMMIT marker must stay this pass
 *   ABORT marker, data seen this walk → kept, and its aborted-txn entry goes with the cleaned ledger
 *                no data seen         → may go (after its horizon)
 *   COMMIT marker, data seen          → kept;   none seen → may go (after its horizon)
 * ```
 */
import type { RecordBatch } from '../../protocol/records/batch.js';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control.js';
import type { AbortedTxnEntry } from './txn-index.js';

interface OngoingAborted {
  readonly entry: AbortedTxnEntry;
  seenData: boolean;
}

export class CleanedTxns {
  readonly #aborted: AbortedTxnEntry[];
  #next = 0;
  readonly #ongoingAborted = new Map<bigint, OngoingAborted>();
  readonly #ongoingCommitted = new Set<bigint>();
  /** The aborted transactions whose markers stay, with data of theirs removed in this walk. */
  readonly retainedEntries: AbortedTxnEntry[] = [];

  /** `aborted`: the log's aborted transactions overlapping the walked range. */
  constructor(aborted: readonly AbortedTxnEntry[]) {
    this.#aborted = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  #consumeUpTo(offset: number): void {
    while (this.#next < this.#aborted.length && this.#aborted[this.#next]!.firstOffset <= offset) {
      const e = this.#aborted[this.#next++]!;
      this.#ongoingAborted.set(e.producerId, { entry: e, seenData: false });
    }
  }

  /** A data batch: true when it belongs to an aborted transaction (its records are discarded). */
  onBatch(b: RecordBatch): boolean {
    this.#consumeUpTo(b.lastOffsetNumber);
    if (!b.isTransactional) return false;
    const aborted = this.#ongoingAborted.get(b.producerId);
    if (aborted) {
      aborted.seenData = true;
      return true;
    }
    this.#ongoingCommitted.add(b.producerId);
    return false;
  }

  /** A control batch (its first record's key names it): true when it may be discarded. */
  onControl(b: RecordBatch, firstKey: Buffer | null): boolean {
    this.#consumeUpTo(b.lastOffsetNumber);
    // An empty control batch was cleaned before: nothing in it to keep.
    if (b.recordCount === 0 || firstKey === null) return true;
    let type: number;
    try {
      type = parseControlRecordType(firstKey);
    } catch {
      return false;
    }
    const pid = b.producerId;
    if (type === ControlRecordType.ABORT) {
      const aborted = this.#ongoingAborted.get(pid);
      this.#ongoingAborted.delete(pid);
      if (aborted?.seenData) {
        this.retainedEntries.push(aborted.entry);
        return false;
      }
      return true;
    }
    if (type === ControlRecordType.COMMIT) return !this.#ongoingCommitted.delete(pid);
    return false;
  }
}
