/**
 * Idempotent-producer state per partition (KIP-98): for each producer id, its epoch and the sequence
 * ranges and offsets of its last five batches. Produce checks every batch of an idempotent producer here
 * before it is appended, in partition order:
 *
 *  - same epoch, same sequence range as a remembered batch → a retry of an appended batch: answered with
 *    the original offsets, not appended again;
 *  - same epoch, first sequence = last sequence + 1 (wrapping at 2^31) → appended;
 *  - a newer epoch must start at sequence 0 (OUT_OF_ORDER_SEQUENCE_NUMBER otherwise);
 *  - an older epoch → INVALID_PRODUCER_EPOCH (the producer was fenced by a newer instance);
 *  - an unknown producer (no state, e.g. after retention removed its batches) is accepted at any sequence,
 *    as Kafka's ProducerAppendInfo.checkSequence does;
 *  - anything else → OUT_OF_ORDER_SEQUENCE_NUMBER.
 *
 * A batch is remembered when its check passes (so a pipelined next batch sees it) and forgotten again if
 * its append fails, so a retry is not mistaken for a duplicate of data that was never written. After a
 * restart the state is rebuilt by replaying the batch headers of the log. Producers idle longer than
 * `producer.id.expiration.ms` are forgotten.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { allocateIds } from '../metadata/id-allocator.js';
import { idCounterKey } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';

/** How many batches per producer are remembered for duplicate detection (Kafka's NUM_BATCHES_TO_RETAIN). */
export const BATCHES_TO_RETAIN = 5;

export interface BatchIdentity {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  /** recordCount - 1 for a batch with dense offset deltas; Kafka uses lastOffsetDelta. */
  lastOffsetDelta: number;
}

interface BatchMeta {
  firstSeq: number;
  lastSeq: number;
  baseOffset: bigint;
  lastOffset: bigint;
  timestamp: bigint;
  /** False until the append resolved. */
  committed: boolean;
  /** Settles with the batch's offsets once appended, or null if its append failed. */
  settled: Promise<AppendedBatch | null>;
  settle: (r: AppendedBatch | null) => void;
}

export interface AppendedBatch {
  baseOffset: bigint;
  lastOffset: bigint;
  timestamp: bigint;
}

interface ProducerEntry {
  epoch: number;
  batches: BatchMeta[];
  lastUpdateMs: number;
}

export type SequenceCheck =
  | { kind: 'append'; commit(baseOffset: bigint, lastOffset: bigint, timestamp: bigint): void; abort(): void }
  /** A retry of a batch already accepted: its offsets once it is durable (null if its append failed). */
  | { kind: 'duplicate'; original: Promise<AppendedBatch | null> }
  | { kind: 'error'; errorCode: number; message: string };

const INT_MAX = 0x7fffffff;

function lastSequence(baseSequence: number, lastOffsetDelta: number): number {
  const s = baseSequence + lastOffsetDelta;
  return s > INT_MAX ? s - INT_MAX - 1 : s;
}

function inSequence(lastSeq: number, nextFirst: number): boolean {
  return nextFirst === lastSeq + 1 || (lastSeq === INT_MAX && nextFirst === 0);
}

function pendingBatch(firstSeq: number, lastSeq: number): BatchMeta {
  let settle!: (r: AppendedBatch | null) => void;
  const settled = new Promise<AppendedBatch | null>((r) => (settle = r));
  return { firstSeq, lastSeq, baseOffset: -1n, lastOffset: -1n, timestamp: -1n, committed: false, settled, settle };
}

const APPEND_NOTHING: SequenceCheck = { kind: 'append', commit() {}, abort() {} };

export class PartitionProducerState {
  private readonly producers = new Map<bigint, ProducerEntry>();

  get size(): number {
    return this.producers.size;
  }

  /** Checks a batch about to be appended; see the module comment. Non-idempotent batches always pass. */
  check(b: BatchIdentity, nowMs: number): SequenceCheck {
    if (b.producerId < 0n) return APPEND_NOTHING;
    const firstSeq = b.baseSequence;
    const lastSeq = lastSequence(firstSeq, b.lastOffsetDelta);
    let entry = this.producers.get(b.producerId);
    if (entry) {
      if (b.producerEpoch < entry.epoch) {
        return {
          kind: 'error',
          errorCode: ErrorCode.INVALID_PRODUCER_EPOCH,
          message: `Epoch of producer ${b.producerId} at offset is ${b.producerEpoch}, which is smaller than the last seen epoch ${entry.epoch}`,
        };
      }
      if (b.producerEpoch === entry.epoch) {
        const dup = entry.batches.find((x) => x.firstSeq === firstSeq && x.lastSeq === lastSeq);
        // Kafka answers a retry with the original batch's offsets once the original is acknowledged.
        if (dup) return { kind: 'duplicate', original: dup.settled };
        const last = entry.batches[entry.batches.length - 1];
        if (last && !inSequence(last.lastSeq, firstSeq)) {
          return {
            kind: 'error',
            errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
            message: `Out of order sequence number for producer ${b.producerId}: ${firstSeq} (incoming seq. number), ${last.lastSeq} (current end sequence number)`,
          };
        }
      } else if (firstSeq !== 0) {
        return {
          kind: 'error',
          errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
          message: `Invalid sequence number for new epoch of producer ${b.producerId}: ${b.producerEpoch} (request epoch), ${firstSeq} (seq. number), ${entry.epoch} (current producer epoch)`,
        };
      } else {
        entry.epoch = b.producerEpoch;
        entry.batches = [];
      }
    } else {
      entry = { epoch: b.producerEpoch, batches: [], lastUpdateMs: nowMs };
      this.producers.set(b.producerId, entry);
    }
    const meta = pendingBatch(firstSeq, lastSeq);
    entry.batches.push(meta);
    if (entry.batches.length > BATCHES_TO_RETAIN) entry.batches.shift();
    entry.lastUpdateMs = nowMs;
    const e = entry;
    return {
      kind: 'append',
      commit(baseOffset, lastOffset, timestamp) {
        meta.baseOffset = baseOffset;
        meta.lastOffset = lastOffset;
        meta.timestamp = timestamp;
        meta.committed = true;
        meta.settle({ baseOffset, lastOffset, timestamp });
      },
      abort: () => {
        meta.settle(null);
        const i = e.batches.indexOf(meta);
        if (i >= 0) e.batches.splice(i, 1);
        if (e.batches.length === 0 && this.producers.get(b.producerId) === e) this.producers.delete(b.producerId);
      },
    };
  }

  /** Rebuild: a batch read back from the log, in offset order. */
  replay(b: BatchIdentity, baseOffset: bigint, lastOffset: bigint, timestamp: bigint, nowMs: number): void {
    if (b.producerId < 0n) return;
    let entry = this.producers.get(b.producerId);
    if (!entry || b.producerEpoch > entry.epoch) {
      entry = { epoch: b.producerEpoch, batches: [], lastUpdateMs: nowMs };
      this.producers.set(b.producerId, entry);
    } else if (b.producerEpoch < entry.epoch) {
      return;
    }
    const meta = pendingBatch(b.baseSequence, lastSequence(b.baseSequence, b.lastOffsetDelta));
    Object.assign(meta, { baseOffset, lastOffset, timestamp, committed: true });
    meta.settle({ baseOffset, lastOffset, timestamp });
    entry.batches.push(meta);
    if (entry.batches.length > BATCHES_TO_RETAIN) entry.batches.shift();
  }

  /** Forgets producers idle for longer than `expirationMs`. */
  expire(nowMs: number, expirationMs: number): void {
    for (const [pid, e] of this.producers) if (nowMs - e.lastUpdateMs > expirationMs && e.batches.every((b) => b.committed)) this.producers.delete(pid);
  }

  /**
   * Producers with an appended batch, for DescribeProducers: id, epoch, the last batch's last sequence
   * and max timestamp (Kafka's ProducerStateEntry view).
   */
  *activeProducers(): Iterable<{ producerId: bigint; producerEpoch: number; lastSequence: number; lastTimestamp: bigint }> {
    for (const [producerId, e] of this.producers) {
      const last = [...e.batches].reverse().find((b) => b.committed);
      if (last) yield { producerId, producerEpoch: e.epoch, lastSequence: last.lastSeq, lastTimestamp: last.timestamp };
    }
  }

  /** The last epoch seen for a producer, or -1. */
  epochOf(producerId: bigint): number {
    return this.producers.get(producerId)?.epoch ?? -1;
  }
}

/** How many producer ids one metadata write reserves. */
const PRODUCER_ID_BLOCK = 1000;

/**
 * Producer ids for InitProducerId. Ids come from a counter in the metadata store, reserved in blocks so
 * that a restart never hands out an id twice (the rest of a block is skipped); epochs start at 0.
 */
export class ProducerIdAllocator {
  private next = 0;
  private end = 0;
  private pending: Promise<void> | null = null;

  constructor(private readonly store: MetadataStore) {}

  async allocate(): Promise<bigint> {
    while (this.next >= this.end) {
      this.pending ??= allocateIds(this.store, idCounterKey('producer-id'), PRODUCER_ID_BLOCK).then(
        (block) => {
          this.next = block.first;
          this.end = block.first + block.count;
          this.pending = null;
        },
        (e: unknown) => {
          this.pending = null;
          throw e;
        },
      );
      await this.pending;
    }
    return BigInt(this.next++);
  }
}
