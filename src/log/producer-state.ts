/**
 * Idempotent-producer state of one partition (KIP-98; Kafka's ProducerStateManager): for each producer id,
 * its epoch and the sequence ranges and offsets of its last five batches in the log. Produce checks every
 * batch of an idempotent producer here before it is appended, in partition order:
 *
 *  - same epoch, same sequence range as a remembered batch → a retry of an appended batch: answered with
 *    the original offsets, not appended again;
 *  - same epoch, first sequence = last sequence + 1 (wrapping at 2^31) → appended;
 *  - a newer epoch must start at sequence 0 (OUT_OF_ORDER_SEQUENCE_NUMBER otherwise), and so must the first
 *    batch of an epoch a marker set (transaction version 2 markers carry the bumped epoch, KIP-890 part 2);
 *  - an older epoch → INVALID_PRODUCER_EPOCH (the producer was fenced by a newer instance);
 *  - an unknown producer (no state, e.g. after retention removed its batches) is accepted at any sequence,
 *    as Kafka's ProducerAppendInfo.checkSequence does;
 *  - anything else → OUT_OF_ORDER_SEQUENCE_NUMBER.
 *
 * Transactions (KIP-98; Kafka's ProducerAppendInfo.appendDataBatch / appendEndTxnMarker): a transactional
 * data batch starts the producer's transaction in this partition unless one is ongoing
 * (currentTxnFirstOffset = its base offset); a non-transactional batch while one is ongoing is refused with
 * INVALID_TXN_STATE. A COMMIT/ABORT marker (control batch) ends it and records its coordinator epoch; before
 * one is appended, `checkMarker` refuses an older producer epoch (INVALID_PRODUCER_EPOCH) and an older
 * coordinator epoch (TRANSACTION_COORDINATOR_FENCED). Applying never refuses: the durable state follows
 * the log whatever it holds (Kafka's AppendOrigin.REPLICATION). The first offsets of ongoing transactions
 * give the log's first unstable offset (the LSO); an aborted non-empty transaction is reported to
 * `onAbortedTxn` (the log's aborted-transaction index, txn-index.ts).
 *
 * Two layers:
 *
 * ```
 *   check(batch) ──► pending (checked, being written) ──┐ the log applies each batch the moment it is
 *                     │ abort(): forgotten               │ durable, in offset order (apply): the
 *                     ▼                                  ▼ pending entry settles with its offsets
 *                 duplicates of a pending batch     durable: what the log holds below its high
 *                 wait for its offsets              watermark, no more, no less  ──► snapshots
 * ```
 *
 * The durable layer is a pure function of the log's batches below the high watermark, whoever appended
 * them, so a snapshot of it at offset X followed by the batches from X on gives exactly what replaying the
 * whole log gives (producer-snapshot.ts stores it; takeover.ts loads it). A checked batch is pending until
 * the log applies it (so a pipelined next batch sees it) and forgotten if its append fails, so a retry is
 * not mistaken for a duplicate of data that was never written. Producers whose last batch timestamp is
 * `producer.id.expiration.ms` old are forgotten (Kafka's removeExpiredProducers).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { RecordBatch } from '../../protocol/records/batch.js';
import { ControlRecordType, parseControlRecordType, parseEndTxnMarker, type EndTxnMarker } from '../../protocol/records/control.js';

/** How many batches per producer are remembered for duplicate detection (Kafka's NUM_BATCHES_TO_RETAIN). */
export const BATCHES_TO_RETAIN = 5;

export interface BatchIdentity {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /** recordCount - 1 for a batch with dense offset deltas; Kafka uses lastOffsetDelta. */
  lastOffsetDelta: number;
  /** A batch of a transaction (attribute bit 4); absent: false. */
  isTransactional?: boolean;
}

/** A transaction a marker completed in this partition (Kafka's CompletedTxn). */
export interface CompletedTxn {
  readonly producerId: bigint;
  readonly firstOffset: number;
  /** The marker's offset. */
  readonly lastOffset: number;
  readonly aborted: boolean;
}

/** One remembered batch of a producer (Kafka's BatchMetadata). */
export interface ProducerBatch {
  readonly firstSeq: number;
  readonly lastSeq: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The batch's max timestamp. */
  readonly timestamp: number;
}

/** The durable state of one producer (Kafka's ProducerStateEntry), as snapshots store it. */
export interface ProducerStateEntry {
  readonly producerId: bigint;
  epoch: number;
  /** Oldest first, at most BATCHES_TO_RETAIN. */
  batches: ProducerBatch[];
  /** Max timestamp of its last batch: expiration counts from it. -1 when unknown. */
  lastTimestamp: number;
  /** The coordinator epoch of its last transaction marker, -1 before any. */
  coordinatorEpoch: number;
  /** First offset of its ongoing transaction in this partition, -1 when none. */
  currentTxnFirstOffset: number;
}

export interface AppendedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  timestamp: bigint;
}

export type SequenceCheck =
  | { kind: 'append'; commit(baseOffset: bigint, lastOffset: bigint, timestamp: bigint): void; abort(): void }
  /** A retry of a batch already accepted: its offsets once it is durable (null if its append failed). */
  | { kind: 'duplicate'; original: Promise<AppendedBatch | null> }
  | { kind: 'error'; errorCode: number; message: string };

interface PendingBatch {
  readonly epoch: number;
  readonly firstSeq: number;
  readonly lastSeq: number;
  done: boolean;
  readonly settled: Promise<AppendedBatch | null>;
  readonly settle: (r: AppendedBatch | null) => void;
}

const INT_MAX = 0x7fffffff;

function lastSequence(baseSequence: number, lastOffsetDelta: number): number {
  const s = baseSequence + lastOffsetDelta;
  return s > INT_MAX ? s - INT_MAX - 1 : s;
}

function inSequence(lastSeq: number, nextFirst: number): boolean {
  return nextFirst === lastSeq + 1 || (lastSeq === INT_MAX && nextFirst === 0);
}

function appended(b: ProducerBatch): AppendedBatch {
  return { baseOffset: BigInt(b.baseOffset), lastOffset: BigInt(b.lastOffset), timestamp: BigInt(b.timestamp) };
}

/**
 * The transaction marker a stored control batch holds, or null (not a COMMIT/ABORT marker, or a record that
 * does not decode: Kafka skips control records of other types the same way).
 */
export function readTxnMarker(b: RecordBatch): EndTxnMarker | null {
  if (!b.isControl || b.isCompressed) return null;
  try {
    const it = b.records();
    const first = it.next();
    if (first.done) return null;
    const type = parseControlRecordType(first.value.key);
    if (type !== ControlRecordType.ABORT && type !== ControlRecordType.COMMIT) return null;
    return parseEndTxnMarker(first.value.key, first.value.value);
  } catch {
    return null;
  }
}

/** A stored batch's header into the state: an idempotent data batch, or a transaction marker. */
export function applyStoredBatch(state: PartitionProducerState, b: RecordBatch, baseOffset: number, lastOffset: number): void {
  if (!b.hasProducerId) return;
  if (b.isControl) {
    const marker = readTxnMarker(b);
    if (marker) state.applyMarker(b.producerId, b.producerEpoch, marker, baseOffset, b.maxTimestamp);
    return;
  }
  state.apply(
    {
      producerId: b.producerId,
      producerEpoch: b.producerEpoch,
      baseSequence: b.baseSequence,
      lastOffsetDelta: b.lastOffsetDelta,
      isTransactional: b.isTransactional,
    },
    baseOffset,
    lastOffset,
    b.maxTimestamp,
  );
}

const APPEND_NOTHING: SequenceCheck = { kind: 'append', commit() {}, abort() {} };

export class PartitionProducerState {
  private readonly durable = new Map<bigint, ProducerStateEntry>();
  private readonly pending = new Map<bigint, PendingBatch[]>();
  /** Ongoing transactions: producer id → first offset (the durable entries' currentTxnFirstOffset ≥ 0). */
  private readonly ongoing = new Map<bigint, number>();
  /** The smallest value of `ongoing`, or null when it is empty or must be recomputed. */
  private minOngoing: number | null = null;
  /** Told of every aborted non-empty transaction as its marker is applied (the log's txn index). */
  onAbortedTxn: ((txn: CompletedTxn, lastStableOffset: number) => void) | null = null;

  /** Producers known, durable or with a batch being written. */
  get size(): number {
    let n = this.durable.size;
    for (const pid of this.pending.keys()) if (!this.durable.has(pid)) n++;
    return n;
  }

  /** Checks a batch about to be appended; see the module comment. Non-idempotent batches always pass. */
  check(b: BatchIdentity, _nowMs: number): SequenceCheck {
    if (b.producerId < 0n) return APPEND_NOTHING;
    const firstSeq = b.baseSequence;
    const lastSeq = lastSequence(firstSeq, b.lastOffsetDelta);
    const d = this.durable.get(b.producerId);
    const pend = this.pending.get(b.producerId);
    const lastPending = pend?.[pend.length - 1];
    const epoch = lastPending?.epoch ?? d?.epoch;
    if (!b.isTransactional && d && d.currentTxnFirstOffset >= 0 && b.producerEpoch >= d.epoch) {
      // Kafka's ProducerAppendInfo.appendDataBatch: a non-transactional batch while a transaction is active.
      return {
        kind: 'error',
        errorCode: ErrorCode.INVALID_TXN_STATE,
        message: `Expected transactional write from producer ${b.producerId}: its transaction begun at offset ${d.currentTxnFirstOffset} is ongoing`,
      };
    }
    if (epoch !== undefined) {
      if (b.producerEpoch < epoch) {
        return {
          kind: 'error',
          errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
          message: `Epoch of producer ${b.producerId} at offset is ${b.producerEpoch}, which is smaller than the last seen epoch ${epoch}`,
        };
      }
      if (b.producerEpoch === epoch) {
        // Kafka answers a retry with the original batch's offsets once the original is acknowledged.
        if (d && d.epoch === epoch) {
          const dup = d.batches.find((x) => x.firstSeq === firstSeq && x.lastSeq === lastSeq);
          if (dup) return { kind: 'duplicate', original: Promise.resolve(appended(dup)) };
        }
        const pdup = pend?.find((x) => x.epoch === epoch && x.firstSeq === firstSeq && x.lastSeq === lastSeq);
        if (pdup) return { kind: 'duplicate', original: pdup.settled };
        // A producer known at this epoch with no batch of it (its epoch came from a marker: a transaction version 2
        // end bumps it, KIP-890 part 2) continues from no sequence, so at 0, as Kafka's checkSequence has it.
        const last = lastPending?.epoch === epoch ? lastPending.lastSeq : d?.epoch === epoch ? (d.batches[d.batches.length - 1]?.lastSeq ?? -1) : undefined;
        if (last !== undefined && !inSequence(last, firstSeq)) {
          return {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            message: `Out of order sequence number for producer ${b.producerId}: ${firstSeq} (incoming seq. number), ${last} (current end sequence number)`,
          };
        }
      } else if (firstSeq !== 0) {
        return {
          kind: 'error',
          errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          message: `Invalid sequence number for new epoch of producer ${b.producerId}: ${b.producerEpoch} (request epoch), ${firstSeq} (seq. number), ${epoch} (current producer epoch)`,
        };
      }
    }
    let settle!: (r: AppendedBatch | null) => void;
    const settled = new Promise<AppendedBatch | null>((r) => (settle = r));
    const meta: PendingBatch = { epoch: b.producerEpoch, firstSeq, lastSeq, done: false, settled, settle };
    if (pend) pend.push(meta);
    else this.pending.set(b.producerId, [meta]);
    return {
      kind: 'append',
      // The log applies the batch when it becomes durable (before the append resolves); this covers a
      // state used without a log.
      commit: (baseOffset, lastOffset, timestamp) => {
        if (!meta.done) this.apply(b, Number(baseOffset), Number(lastOffset), Number(timestamp));
      },
      abort: () => {
        if (meta.done) return;
        meta.done = true;
        this.removePending(b.producerId, meta);
        meta.settle(null);
      },
    };
  }

  /**
   * A batch that is now in the log below the high watermark, in offset order (the log calls this for
   * every durable batch, and on replay): it joins its producer's last batches and settles its pending check.
   */
  apply(b: BatchIdentity, baseOffset: number, lastOffset: number, timestamp: number): void {
    if (b.producerId < 0n) return;
    const firstSeq = b.baseSequence;
    const lastSeq = lastSequence(firstSeq, b.lastOffsetDelta);
    let d = this.durable.get(b.producerId);
    if (!d) {
      d = { producerId: b.producerId, epoch: b.producerEpoch, batches: [], lastTimestamp: -1, coordinatorEpoch: -1, currentTxnFirstOffset: -1 };
      this.durable.set(b.producerId, d);
    } else if (b.producerEpoch > d.epoch) {
      // Kafka's maybeUpdateProducerEpoch: a new epoch forgets the batches; the coordinator epoch and an
      // ongoing transaction stay (its marker, not a data batch, ends it).
      d.epoch = b.producerEpoch;
      d.batches = [];
    }
    const batch: ProducerBatch = { firstSeq, lastSeq, baseOffset, lastOffset, timestamp };
    if (b.producerEpoch === d.epoch) {
      d.batches.push(batch);
      if (d.batches.length > BATCHES_TO_RETAIN) d.batches.shift();
      d.lastTimestamp = timestamp;
      if (b.isTransactional && d.currentTxnFirstOffset < 0) {
        // Began a transaction (Kafka: currentTxnFirstOffset = the batch's first offset).
        d.currentTxnFirstOffset = baseOffset;
        this.startOngoing(b.producerId, baseOffset);
      }
    }
    const pend = this.pending.get(b.producerId);
    const meta = pend?.find((x) => !x.done && x.epoch === b.producerEpoch && x.firstSeq === firstSeq && x.lastSeq === lastSeq);
    if (meta) {
      meta.done = true;
      this.removePending(b.producerId, meta);
      meta.settle(appended(batch));
    }
  }

  /**
   * Checks a transaction marker about to be appended (Kafka's appendEndTxnMarker: checkProducerEpoch, then
   * checkCoordinatorEpoch). Null: it may be written. A producer with no state passes (Kafka writes it too).
   */
  checkMarker(producerId: bigint, producerEpoch: number, coordinatorEpoch: number, offset: number): { errorCode: number; message: string } | null {
    const epoch = this.epochOf(producerId);
    if (epoch >= 0 && producerEpoch < epoch) {
      return {
        errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
        message: `Epoch of producer ${producerId} at offset ${offset} is ${producerEpoch}, which is smaller than the last seen epoch ${epoch}`,
      };
    }
    const d = this.durable.get(producerId);
    if (d && d.coordinatorEpoch > coordinatorEpoch) {
      return {
        errorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED,
        message: `Invalid coordinator epoch for producerId ${producerId} at offset ${offset}: ${coordinatorEpoch} (zombie), ${d.coordinatorEpoch} (current)`,
      };
    }
    return null;
  }

  /**
   * A transaction marker now in the log below the high watermark (Kafka's appendEndTxnMarker, as a
   * replica applies it: never refused). Ends the producer's ongoing transaction, records the marker's
   * coordinator epoch, and returns the transaction it completed (null for a marker of no data here).
   */
  applyMarker(producerId: bigint, producerEpoch: number, marker: EndTxnMarker, offset: number, timestamp: number): CompletedTxn | null {
    if (producerId < 0n) return null;
    let d = this.durable.get(producerId);
    if (!d) {
      d = { producerId, epoch: producerEpoch, batches: [], lastTimestamp: -1, coordinatorEpoch: -1, currentTxnFirstOffset: -1 };
      this.durable.set(producerId, d);
    } else if (producerEpoch > d.epoch) {
      d.epoch = producerEpoch;
      d.batches = [];
    }
    d.coordinatorEpoch = marker.coordinatorEpoch;
    d.lastTimestamp = timestamp;
    const first = d.currentTxnFirstOffset;
    if (first < 0) return null;
    d.currentTxnFirstOffset = -1;
    this.endOngoing(producerId);
    const txn: CompletedTxn = { producerId, firstOffset: first, lastOffset: offset, aborted: !marker.commit };
    // Kafka's ProducerStateManager.lastStableOffset(completedTxn): the next incomplete transaction's first
    // offset, else the offset after the marker.
    if (txn.aborted) this.onAbortedTxn?.(txn, this.firstUnstableOffset() ?? offset + 1);
    return txn;
  }

  /** First offset of the producer's ongoing transaction in this partition (durable), -1 when none. */
  ongoingTxnFirstOffset(producerId: bigint): number {
    return this.durable.get(producerId)?.currentTxnFirstOffset ?? -1;
  }

  /** Kafka's firstUnstableOffset: the first offset of the oldest ongoing transaction, null when none. */
  firstUnstableOffset(): number | null {
    if (this.ongoing.size === 0) return null;
    if (this.minOngoing === null) {
      let min = Infinity;
      for (const o of this.ongoing.values()) if (o < min) min = o;
      this.minOngoing = min;
    }
    return this.minOngoing;
  }

  private startOngoing(producerId: bigint, firstOffset: number): void {
    this.ongoing.set(producerId, firstOffset);
    if (this.minOngoing !== null && firstOffset < this.minOngoing) this.minOngoing = firstOffset;
    else if (this.ongoing.size === 1) this.minOngoing = firstOffset;
  }

  private endOngoing(producerId: bigint): void {
    const o = this.ongoing.get(producerId);
    if (o === undefined) return;
    this.ongoing.delete(producerId);
    if (o === this.minOngoing) this.minOngoing = null;
  }

  /** Rebuild from a batch read back from the log (offsets as the codec's int64s). */
  replay(b: BatchIdentity, baseOffset: bigint, lastOffset: bigint, timestamp: bigint, _nowMs: number): void {
    this.apply(b, Number(baseOffset), Number(lastOffset), Number(timestamp));
  }

  /**
   * Kafka's removeExpiredProducers: forgets producers whose last batch timestamp is at least `expirationMs`
   * old, unless a batch of theirs is being written or a transaction of theirs is ongoing.
   */
  expire(nowMs: number, expirationMs: number): number {
    let removed = 0;
    for (const [pid, e] of this.durable) {
      if (nowMs - e.lastTimestamp >= expirationMs && e.currentTxnFirstOffset < 0 && !this.pending.has(pid)) {
        this.durable.delete(pid);
        removed++;
      }
    }
    return removed;
  }

  /**
   * Producers with a batch in the log, for DescribeProducers: id, epoch, the last batch's last sequence and
   * max timestamp (Kafka's ProducerStateEntry view).
   */
  *activeProducers(): Iterable<{
    producerId: bigint;
    producerEpoch: number;
    lastSequence: number;
    lastTimestamp: bigint;
    coordinatorEpoch: number;
    currentTxnStartOffset: number;
  }> {
    for (const [producerId, e] of this.durable) {
      const last = e.batches[e.batches.length - 1];
      if (last || e.currentTxnFirstOffset >= 0 || e.coordinatorEpoch >= 0) {
        yield {
          producerId,
          producerEpoch: e.epoch,
          lastSequence: last?.lastSeq ?? -1,
          lastTimestamp: BigInt(last?.timestamp ?? e.lastTimestamp),
          coordinatorEpoch: e.coordinatorEpoch,
          currentTxnStartOffset: e.currentTxnFirstOffset,
        };
      }
    }
  }

  /** The last epoch seen for a producer (durable or being written), or -1. */
  epochOf(producerId: bigint): number {
    const pend = this.pending.get(producerId);
    return pend?.[pend.length - 1]?.epoch ?? this.durable.get(producerId)?.epoch ?? -1;
  }

  /** The durable state, ordered by producer id (what a snapshot holds). Copies. */
  entries(): ProducerStateEntry[] {
    return [...this.durable.values()]
      .sort((a, b) => (a.producerId < b.producerId ? -1 : a.producerId > b.producerId ? 1 : 0))
      .map((e) => ({ ...e, batches: e.batches.map((x) => ({ ...x })) }));
  }

  /** Replaces the durable state with a snapshot's (on open, before any check). */
  load(entries: readonly ProducerStateEntry[]): void {
    this.durable.clear();
    this.ongoing.clear();
    this.minOngoing = null;
    for (const e of entries) {
      this.durable.set(e.producerId, { ...e, batches: e.batches.map((x) => ({ ...x })) });
      if (e.currentTxnFirstOffset >= 0) this.startOngoing(e.producerId, e.currentTxnFirstOffset);
    }
  }

  private removePending(pid: bigint, meta: PendingBatch): void {
    const pend = this.pending.get(pid);
    if (!pend) return;
    const i = pend.indexOf(meta);
    if (i >= 0) pend.splice(i, 1);
    if (pend.length === 0) this.pending.delete(pid);
  }
}
