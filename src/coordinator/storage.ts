/**
 * Durable storage of one __consumer_offsets partition for the coordinator: records go to the partition log as
 * record batches v2 (Kafka's format: see records.ts), and come back, in order, when the partition is loaded.
 *
 * ```
 *   log:  [ cleaned: the latest record of each key, at its offset ][ dirty tail … ][ open ledger ]
 *          ^ the broker's log cleaner (src/log/log-cleaner.ts)       loading replays all of it, in offset order
 *
 *   ops ─► append(records) ─► pending ─┐   one append in flight at a time; every op queued
 *                                      ├─► meanwhile goes into the next batch (group commit),
 *   ops ─► append(records) ─► pending ─┘   which is acknowledged or failed as a whole
 * ```
 *
 * Compaction is the log cleaner's, as Kafka's __consumer_offsets and __transaction_state are compacted by its
 * LogCleaner: the topics are created with cleanup.policy=compact, and a pass keeps the latest record of every key
 * at its original offset, drops tombstones delete.retention.ms after the pass that first kept them (KIP-534),
 * drops the data of aborted transactions and keeps a COMMIT or ABORT marker while data of its transaction is left
 * (src/log/compaction.ts). Offsets never move, so replaying what the cleaner left restates the same state in the
 * same order: loading reads the cleaned part plus the dirty tail (Kafka's CoordinatorLoaderImpl), and takes time
 * in proportion to the live records and what was written since the last pass.
 *
 * Transactions (KIP-98, KIP-447): a TxnOffsetCommit's records go out as one transactional batch of the producer
 * (sequence -1, as Kafka's coordinator writes them) and stay pending until the producer's COMMIT or ABORT control
 * batch (`appendMarker`); the partition log counts them as an ongoing transaction, so its last stable offset stays
 * at or below their batch and the cleaner, which never cleans at or after the last stable offset, leaves them and
 * everything after them alone until the marker is written. Replay hands each record its producer and each marker
 * to the shard, which keeps the pending offsets (txn-offsets.ts).
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
import type { EncodedRecord } from './records.js';

/** What the coordinator needs of a partition log (src/log's PartitionLog provides it). */
export interface CoordinatorPartitionLog {
  readonly logStartOffset: number;
  readonly highWatermark: number;
  /** Appends one record batch; resolves once it is durable. */
  append(batch: Buffer): Promise<{ baseOffset: number; lastOffset: number }>;
  /** Whole batches from `fromOffset` (the first may start before it; offsets a compaction removed are skipped). */
  read(fromOffset: number, options?: { maxBytes?: number }): Promise<{ records: Buffer[]; nextOffset: number }>;
}

export interface CoordinatorStorageOptions {
  readonly partition: number;
  readonly clock: Clock;
  /** Largest batch written, in bytes of keys and values (Kafka's default max.message.bytes is about 1 MiB). */
  readonly maxBatchBytes?: number;
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
  | { readonly kind: 'marker'; readonly marker: TxnMarkerWrite };

interface QueueEntry {
  readonly write: Write;
  resolve(): void;
  reject(err: Error): void;
}

const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;
const RECORD_OVERHEAD = 24;
const READ_BYTES = 4 * 1024 * 1024;

export class CoordinatorStorage {
  private readonly queue: QueueEntry[] = [];
  private inflight = false;
  private failure: Error | null = null;
  private readonly maxBatchBytes: number;

  constructor(
    private readonly log: CoordinatorPartitionLog,
    private readonly options: CoordinatorStorageOptions,
  ) {
    this.maxBatchBytes = options.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
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

  /**
   * Reads the partition from its log start offset to its high watermark, calling `onRecord` for each record
   * in offset order (with its producer when it is in a transactional batch) and `onMarker` for each COMMIT or
   * ABORT marker.
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
            // A marker the cleaner emptied (its transaction has no data left) has no record: nothing to apply.
            for (const r of batch.records()) {
              const m = parseEndTxnMarker(r.key, r.value);
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

  private pump(): void {
    if (this.inflight || this.queue.length === 0) return;
    this.inflight = true;
    const head = this.queue[0]!.write;
    if (head.kind !== 'records') {
      const entry = this.queue.shift()!;
      const run = head.kind === 'txn' ? this.writeTxn(head.producer, head.records) : this.writeMarker(head.marker);
      void run.then(
        () => this.settle([entry], null),
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
      () => this.settle(group, null),
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

  /** Writes plain records as batches of at most maxBatchBytes, one after the other. */
  private async write(records: readonly EncodedRecord[]): Promise<void> {
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
      await this.appendBatch(buildRecordBatchSync(slice.map((r) => ({ key: r.key, value: r.value, timestamp: now })), { now }), slice.length);
      start = end;
    }
  }

  /** One transactional batch of the producer: sequence -1, as Kafka's coordinator writes TxnOffsetCommit records. */
  private async writeTxn(producer: TxnProducer, records: readonly EncodedRecord[]): Promise<void> {
    if (records.length === 0) return;
    const now = this.options.clock.now();
    const inputs: RecordInput[] = records.map((r) => ({ key: r.key, value: r.value, timestamp: now }));
    const batch = buildRecordBatchSync(inputs, { now, producerId: producer.producerId, producerEpoch: producer.producerEpoch, baseSequence: -1, isTransactional: true });
    await this.appendBatch(batch, records.length);
  }

  private async writeMarker(m: TxnMarkerWrite): Promise<void> {
    await this.appendBatch(buildEndTxnMarkerBatch({ ...m, timestamp: this.options.clock.now() }), 1);
  }

  private async appendBatch(batch: Buffer, records: number): Promise<number> {
    try {
      return (await this.log.append(batch)).baseOffset;
    } catch (e) {
      throw new CoordinatorStorageError(`cannot append ${records} records to __consumer_offsets-${this.options.partition}`, { partition: this.options.partition }, e);
    }
  }
}
