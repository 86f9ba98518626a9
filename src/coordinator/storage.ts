/**
 * Durable storage of one __consumer_offsets partition for the coordinator: records go to the partition log as
 * record batches v2 (Kafka's format: see records.ts), and come back, in order, when the partition is loaded.
 *
 * ```
 *   log:  [history …][ rewrite of the live records ][ later changes … ]
 *          ^ dropped by deleteRecords once the rewrite is durable
 *
 *   ops ─► append(records) ─► pending ─┐   one append in flight at a time; every op queued
 *                                      ├─► meanwhile goes into the next batch (group commit),
 *   ops ─► append(records) ─► pending ─┘   which is acknowledged or failed as a whole
 * ```
 *
 * Compaction without a log cleaner: the storage keeps the latest value of every live key (the "image", the
 * records a compacted log would keep). Once more records were appended since the last rewrite than the image
 * holds (and at least `compactionMinRecords`), it appends the image as fresh batches after everything queued
 * before, and then moves the log start offset to the rewrite's first offset (Kafka's DeleteRecords). Replaying
 * the rewrite restates values already in effect, so a rewrite cut short by a crash is harmless; history is only
 * dropped once the whole rewrite is durable. Loading therefore reads O(live records + recent changes), not the
 * partition's whole history.
 *
 * Transactions (KIP-98, KIP-447): a TxnOffsetCommit's records go out as one transactional batch of the producer
 * (sequence -1, as Kafka's coordinator writes them) and stay pending until the producer's COMMIT or ABORT control
 * batch; only then do committed ones join the image (where their record is newer than the image's: see
 * txn-offsets.ts), aborted ones are dropped. A rewrite never drops history at or above the first offset of a
 * pending transactional batch, so a load still finds every pending offset; nor the image record of a key a pending
 * offset would replace at commit, which it leaves out (restated, it would be newer than the pending record and
 * win over it at commit).
 *
 * A failed append fails its whole group and everything queued after it: those records were computed from state
 * that included the failed ones. The owner (the shard) then reloads the partition from the log.
 */
import { buildRecordBatchSync, type RecordInput } from '../../protocol/records/builder.js';
import { RecordBatch } from '../../protocol/records/batch.js';
import { buildEndTxnMarkerBatch, parseEndTxnMarker } from '../../protocol/records/control.js';
import { isRecordsError } from '../../protocol/records/errors.js';
import type { Clock } from '../metadata/clock.js';
import { CoordinatorCorruptError, CoordinatorStorageError } from './errors.js';
import { compactionRank, recordKeyId, type EncodedRecord } from './records.js';

/** What the coordinator needs of a partition log (src/log's PartitionLog provides it). */
export interface CoordinatorPartitionLog {
  readonly logStartOffset: number;
  readonly highWatermark: number;
  /** Appends one record batch; resolves once it is durable. */
  append(batch: Buffer): Promise<{ baseOffset: number; lastOffset: number }>;
  /** Whole batches from `fromOffset` (the first may start before it). */
  read(fromOffset: number, options?: { maxBytes?: number }): Promise<{ records: Buffer[]; nextOffset: number }>;
  /** Moves the log start offset forward (Kafka's DeleteRecords). */
  deleteRecords(offset: number): Promise<{ lowWatermark: number }>;
}

export interface CoordinatorStorageOptions {
  readonly partition: number;
  readonly clock: Clock;
  /** Rewrite the live records once this many records were appended since the last rewrite (and more than are live). */
  readonly compactionMinRecords: number;
  /** Largest batch written, in bytes of keys and values (Kafka's default max.message.bytes is about 1 MiB). */
  readonly maxBatchBytes?: number;
  readonly onCompaction?: (info: { liveRecords: number; droppedBefore: number }) => void;
  readonly onBackgroundError?: (err: Error) => void;
  /** Called once, when the first append fails (every later append fails too). */
  readonly onFailure?: (err: Error) => void;
}

export interface ReplayStats {
  readonly batches: number;
  readonly records: number;
  /** Transactional batches (TxnOffsetCommit) replayed, and transaction markers (control batches) applied. */
  readonly transactional: number;
  readonly markers: number;
  /** Batches whose records do not decode, reported through `onUndecodable` and skipped. */
  readonly skippedUndecodable: number;
  readonly fromOffset: number;
  readonly toOffset: number;
}

/** The producer of a transactional write (TxnOffsetCommit). */
export interface TxnProducer {
  readonly producerId: bigint;
  readonly producerEpoch: number;
}

/** A transaction marker written to the partition (Kafka's WriteTxnMarkers for __consumer_offsets). */
export interface TxnMarkerWrite extends TxnProducer {
  readonly coordinatorEpoch: number;
  readonly commit: boolean;
}

type Write =
  | { readonly kind: 'records'; readonly records: readonly EncodedRecord[] }
  | { readonly kind: 'txn'; readonly producer: TxnProducer; readonly records: readonly EncodedRecord[] }
  | { readonly kind: 'marker'; readonly marker: TxnMarkerWrite }
  | { readonly kind: 'compact' };

interface QueueEntry {
  readonly write: Write;
  resolve(): void;
  reject(err: Error): void;
}

/** A record of the image or of a pending transaction, with the offset it was written at. */
interface Kept {
  readonly rec: EncodedRecord;
  readonly offset: number;
}

interface PendingTxn {
  /** The first offset of the producer's pending batches here: history from it on is kept. */
  readonly firstOffset: number;
  readonly records: Map<string, Kept>;
}

const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;
const RECORD_OVERHEAD = 24;
const READ_BYTES = 4 * 1024 * 1024;

export class CoordinatorStorage {
  private readonly queue: QueueEntry[] = [];
  private inflight = false;
  private failure: Error | null = null;
  /** Latest value of every live key, in first-write order. */
  private readonly image = new Map<string, Kept>();
  /** Records of open transactions, by producer. */
  private readonly pending = new Map<bigint, PendingTxn>();
  private appendedSinceCompaction = 0;
  private compactionQueued = false;
  /** A rewrite found nothing it could drop (pending transactions hold the history): retried once one completes. */
  private compactionHeld = false;
  private readonly maxBatchBytes: number;

  constructor(
    private readonly log: CoordinatorPartitionLog,
    private readonly options: CoordinatorStorageOptions,
  ) {
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
  }

  /** Live keys (what a compacted log would keep). */
  get liveRecords(): number {
    return this.image.size;
  }

  get failed(): Error | null {
    return this.failure;
  }

  /** The largest batch written: a transactional write must fit in one. */
  get batchBytesLimit(): number {
    return this.maxBatchBytes;
  }

  /** The bytes a batch of these records takes, as the write path counts them. */
  static batchBytes(records: readonly EncodedRecord[]): number {
    let bytes = 0;
    for (const r of records) bytes += r.key.length + (r.value?.length ?? 0) + RECORD_OVERHEAD;
    return bytes;
  }

  /** Producers with a pending transaction in this partition. */
  get openTransactions(): number {
    return this.pending.size;
  }

  /**
   * Reads the partition from its log start offset to its high watermark, calling `onRecord` for each record
   * in offset order. Fills the image used for compaction.
   */
  async replay(
    onRecord: (record: EncodedRecord, offset: number, producerId: bigint, producerEpoch: number) => void,
    onUndecodable: (err: CoordinatorCorruptError) => void = () => undefined,
    onMarker: (marker: { producerId: bigint; producerEpoch: number; coordinatorEpoch: number; commit: boolean }, offset: number) => void = () => undefined,
  ): Promise<ReplayStats> {
    const fromOffset = this.log.logStartOffset;
    const end = this.log.highWatermark;
    let offset = fromOffset;
    let batches = 0;
    let records = 0;
    let transactional = 0;
    let markers = 0;
    let skippedUndecodable = 0;
    while (offset < end) {
      let res: { records: Buffer[]; nextOffset: number };
      try {
        res = await this.log.read(offset, { maxBytes: READ_BYTES });
      } catch (e) {
        throw new CoordinatorStorageError(`cannot read __consumer_offsets-${this.options.partition} at ${offset}`, { partition: this.options.partition, offset }, e);
      }
      if (res.records.length === 0 || res.nextOffset <= offset) break;
      for (const buf of res.records) {
        const batch = RecordBatch.wrap(buf);
        if (batch.lastOffsetNumber < offset) continue;
        batches++;
        // Only a transactional batch with a producer carries offsets of a transaction or ends one (KIP-98).
        const producerId = batch.isTransactional && batch.producerId >= 0n ? batch.producerId : -1n;
        if (batch.isControl && producerId < 0n) continue;
        // A batch whose records do not decode is reported and skipped: the records before it and after it
        // still load, rather than the partition's groups staying unavailable.
        try {
          if (batch.isControl) {
            for (const r of batch.records()) {
              const m = parseEndTxnMarker(r.key, r.value);
              this.completeTxn(producerId, m.commit);
              onMarker({ producerId, producerEpoch: batch.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.commit }, r.offset);
              markers++;
              break;
            }
            continue;
          }
          if (producerId >= 0n) transactional++;
          for (const r of batch.records()) {
            if (r.offset < offset || r.key === null) continue;
            // Copy: the batch buffer may be reused by the log's reader.
            const rec: EncodedRecord = { key: Buffer.from(r.key), value: r.value === null ? null : Buffer.from(r.value) };
            if (producerId >= 0n) this.rememberTxn(producerId, rec, r.offset);
            else this.remember(rec, r.offset);
            onRecord(rec, r.offset, producerId, batch.producerEpoch);
            records++;
          }
        } catch (e) {
          if (!isRecordsError(e)) throw e;
          skippedUndecodable++;
          onUndecodable(
            new CoordinatorCorruptError(
              `skipped the batch at offset ${batch.baseOffsetNumber} of __consumer_offsets-${this.options.partition}: its records do not decode`,
              { partition: this.options.partition, offset: batch.baseOffsetNumber },
              e,
            ),
          );
        }
      }
      offset = res.nextOffset;
    }
    this.appendedSinceCompaction = Math.max(0, records - this.image.size);
    this.maybeQueueCompaction();
    return { batches, records, transactional, markers, skippedUndecodable, fromOffset, toOffset: offset };
  }

  /** Appends records after everything queued before; resolves once they are durable. An empty list waits for the queue. */
  append(records: readonly EncodedRecord[]): Promise<void> {
    return this.enqueue({ kind: 'records', records });
  }

  /** Appends a transactional write's records as one transactional batch of its producer (the caller checked its size). */
  appendTransactional(producer: TxnProducer, records: readonly EncodedRecord[]): Promise<void> {
    return this.enqueue({ kind: 'txn', producer, records });
  }

  /** Appends a COMMIT or ABORT marker of a producer's transaction (a control batch). */
  appendMarker(marker: TxnMarkerWrite): Promise<void> {
    return this.enqueue({ kind: 'marker', marker });
  }

  private enqueue(write: Write): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ write, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once every append queued so far settled (without failing on their failure). */
  flushed(): Promise<void> {
    return this.append([]).catch(() => undefined);
  }

  /** A plain record: the image keeps it; a tombstone also removes the key from every open transaction (as replay does). */
  private remember(rec: EncodedRecord, offset: number): void {
    const id = recordKeyId(rec.key);
    this.image.delete(id);
    if (rec.value !== null) this.image.set(id, { rec, offset });
    else for (const p of this.pending.values()) p.records.delete(id);
  }

  private rememberTxn(producerId: bigint, rec: EncodedRecord, offset: number): void {
    let p = this.pending.get(producerId);
    if (!p) this.pending.set(producerId, (p = { firstOffset: offset, records: new Map() }));
    if (rec.value === null) {
      this.remember(rec, offset);
      return;
    }
    const id = recordKeyId(rec.key);
    p.records.delete(id);
    p.records.set(id, { rec, offset });
  }

  /** A marker: committed records join the image where they are newer than its record of their key (txn-offsets.ts). */
  private completeTxn(producerId: bigint, commit: boolean): void {
    const p = this.pending.get(producerId);
    if (!p) return;
    this.pending.delete(producerId);
    this.compactionHeld = false;
    if (!commit) return;
    for (const [id, kept] of p.records) {
      const current = this.image.get(id);
      if (current !== undefined && current.offset > kept.offset) continue;
      this.image.delete(id);
      this.image.set(id, kept);
    }
  }

  private maybeQueueCompaction(): void {
    if (this.compactionQueued || this.compactionHeld || this.failure) return;
    if (this.appendedSinceCompaction < Math.max(this.options.compactionMinRecords, this.image.size)) return;
    this.compactionQueued = true;
    this.queue.push({
      write: { kind: 'compact' },
      resolve: () => undefined,
      reject: (err) => this.options.onBackgroundError?.(err),
    });
    this.pump();
  }

  private pump(): void {
    if (this.inflight || this.queue.length === 0) return;
    this.inflight = true;
    const head = this.queue[0]!.write;
    if (head.kind !== 'records') {
      const entry = this.queue.shift()!;
      const run = head.kind === 'compact' ? this.compact() : head.kind === 'txn' ? this.writeTxn(head.producer, head.records) : this.writeMarker(head.marker);
      void run.then(
        () => {
          this.settle([entry], null);
          if (head.kind !== 'compact') this.maybeQueueCompaction();
        },
        (err: Error) => this.settle([entry], err),
      );
      return;
    }
    let n = 0;
    while (n < this.queue.length && this.queue[n]!.write.kind === 'records') n++;
    const group = this.queue.splice(0, n);
    const records: EncodedRecord[] = [];
    for (const e of group) records.push(...(e.write as { records: readonly EncodedRecord[] }).records);
    void this.write(records).then(
      () => {
        this.appendedSinceCompaction += records.length;
        this.settle(group, null);
        this.maybeQueueCompaction();
      },
      (err: Error) => this.settle(group, err),
    );
  }

  private settle(group: QueueEntry[], err: Error | null): void {
    this.inflight = false;
    if (err) {
      const first = this.failure === null;
      this.failure = err;
      for (const e of group) e.reject(err);
      for (const e of this.queue.splice(0)) e.reject(err);
      if (first) this.options.onFailure?.(err);
      return;
    }
    for (const e of group) e.resolve();
    this.pump();
  }

  /**
   * Writes plain records as batches of at most maxBatchBytes, one after the other, each remembered in the image
   * once durable; resolves with the first offset.
   */
  private async write(records: readonly EncodedRecord[]): Promise<number> {
    let first = -1;
    let start = 0;
    while (start < records.length) {
      let end = start;
      let bytes = 0;
      while (end < records.length) {
        const r = records[end]!;
        const size = r.key.length + (r.value?.length ?? 0) + RECORD_OVERHEAD;
        if (end > start && bytes + size > this.maxBatchBytes) break;
        bytes += size;
        end++;
      }
      const now = this.options.clock.now();
      const slice = records.slice(start, end);
      const base = await this.appendBatch(buildRecordBatchSync(slice.map((r) => ({ key: r.key, value: r.value, timestamp: now })), { now }), slice.length);
      if (first < 0) first = base;
      slice.forEach((r, i) => this.remember(r, base + i));
      start = end;
    }
    return first;
  }

  /** One transactional batch of the producer: sequence -1, as Kafka's coordinator writes TxnOffsetCommit records. */
  private async writeTxn(producer: TxnProducer, records: readonly EncodedRecord[]): Promise<void> {
    if (records.length === 0) return;
    const now = this.options.clock.now();
    const inputs: RecordInput[] = records.map((r) => ({ key: r.key, value: r.value, timestamp: now }));
    const batch = buildRecordBatchSync(inputs, { now, producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: -1, isTransactional: true });
    const base = await this.appendBatch(batch, records.length);
    records.forEach((r, i) => this.rememberTxn(producer.producerId, r, base + i));
    this.appendedSinceCompaction += records.length;
  }

  private async writeMarker(m: TxnMarkerWrite): Promise<void> {
    const batch = buildEndTxnMarkerBatch({ ...m, timestamp: this.options.clock.now() });
    await this.appendBatch(batch, 1);
    this.completeTxn(m.producerId, m.commit);
    this.appendedSinceCompaction++;
  }

  private async appendBatch(batch: Buffer, records: number): Promise<number> {
    try {
      return (await this.log.append(batch)).baseOffset;
    } catch (e) {
      throw new CoordinatorStorageError(`cannot append ${records} records to __consumer_offsets-${this.options.partition}`, { partition: this.options.partition }, e);
    }
  }

  /**
   * Appends the live records again and drops the history before them, or before what open transactions hold:
   * the first offset of their batches, and the record of every key one of their records would replace at commit
   * (that key is not rewritten: see the top of the file).
   */
  private async compact(): Promise<void> {
    this.compactionQueued = false;
    let bound = Number.POSITIVE_INFINITY;
    const held = new Set<string>();
    for (const p of this.pending.values()) {
      bound = Math.min(bound, p.firstOffset);
      for (const [id, kept] of p.records) {
        const current = this.image.get(id);
        if (current === undefined || current.offset > kept.offset) continue;
        held.add(id);
        bound = Math.min(bound, current.offset);
      }
    }
    if (bound <= this.log.logStartOffset) {
      // Nothing could be dropped: wait for a transaction to complete.
      this.compactionHeld = true;
      return;
    }
    const live = [...this.image].filter(([id]) => !held.has(id)).map(([, k]) => k.rec);
    live.sort((a, b) => compactionRank(a.key) - compactionRank(b.key));
    const appended = this.appendedSinceCompaction;
    if (live.length === 0) {
      // Nothing is live (but what transactions hold): everything up to the end is history.
      const end = Math.min(this.log.highWatermark, bound);
      await this.truncate(end);
      this.appendedSinceCompaction = 0;
      this.options.onCompaction?.({ liveRecords: held.size, droppedBefore: end });
      return;
    }
    const first = Math.min(await this.write(live), bound);
    this.appendedSinceCompaction = Math.max(0, this.appendedSinceCompaction - appended);
    await this.truncate(first);
    this.options.onCompaction?.({ liveRecords: live.length + held.size, droppedBefore: first });
  }

  private async truncate(offset: number): Promise<void> {
    if (offset <= this.log.logStartOffset) return;
    try {
      await this.log.deleteRecords(offset);
    } catch (e) {
      // The rewrite is durable; the history before it is only kept longer than needed.
      this.options.onBackgroundError?.(
        new CoordinatorStorageError(`cannot drop history of __consumer_offsets-${this.options.partition} before ${offset}`, { partition: this.options.partition, offset }, e),
      );
    }
  }
}
