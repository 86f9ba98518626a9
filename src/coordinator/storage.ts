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
 * A failed append fails its whole group and everything queued after it: those records were computed from state
 * that included the failed ones. The owner (the shard) then reloads the partition from the log.
 */
import { buildRecordBatchSync, type RecordInput } from '../../protocol/records/builder.js';
import { RecordBatch } from '../../protocol/records/batch.js';
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
  /** Batches written by transactional producers (TxnOffsetCommit), skipped: not replayed by this coordinator. */
  readonly skippedTransactional: number;
  /** Batches whose records do not decode, reported through `onUndecodable` and skipped. */
  readonly skippedUndecodable: number;
  readonly fromOffset: number;
  readonly toOffset: number;
}

interface QueueEntry {
  readonly records: readonly EncodedRecord[] | 'compact';
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
  /** Latest value of every live key, in first-write order. */
  private readonly image = new Map<string, EncodedRecord>();
  private appendedSinceCompaction = 0;
  private compactionQueued = false;
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

  /**
   * Reads the partition from its log start offset to its high watermark, calling `onRecord` for each record
   * in offset order. Fills the image used for compaction.
   */
  async replay(
    onRecord: (record: EncodedRecord, offset: number) => void,
    onUndecodable: (err: CoordinatorCorruptError) => void = () => undefined,
  ): Promise<ReplayStats> {
    const fromOffset = this.log.logStartOffset;
    const end = this.log.highWatermark;
    let offset = fromOffset;
    let batches = 0;
    let records = 0;
    let skippedTransactional = 0;
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
        if (batch.isControl) continue;
        if (batch.isTransactional) {
          skippedTransactional++;
          continue;
        }
        // A batch whose records do not decode is reported and skipped: the records before it and after it
        // still load, rather than the partition's groups staying unavailable.
        try {
          for (const r of batch.records()) {
            if (r.offset < offset || r.key === null) continue;
            // Copy: the batch buffer may be reused by the log's reader.
            const rec: EncodedRecord = { key: Buffer.from(r.key), value: r.value === null ? null : Buffer.from(r.value) };
            this.remember(rec);
            onRecord(rec, r.offset);
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
    return { batches, records, skippedTransactional, skippedUndecodable, fromOffset, toOffset: offset };
  }

  /** Appends records after everything queued before; resolves once they are durable. An empty list waits for the queue. */
  append(records: readonly EncodedRecord[]): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ records, resolve, reject });
      this.pump();
    });
  }

  /** Resolves once every append queued so far settled (without failing on their failure). */
  flushed(): Promise<void> {
    return this.append([]).catch(() => undefined);
  }

  private remember(rec: EncodedRecord): void {
    const id = recordKeyId(rec.key);
    if (rec.value === null) this.image.delete(id);
    else {
      this.image.delete(id);
      this.image.set(id, rec);
    }
  }

  private maybeQueueCompaction(): void {
    if (this.compactionQueued || this.failure) return;
    if (this.appendedSinceCompaction < Math.max(this.options.compactionMinRecords, this.image.size)) return;
    this.compactionQueued = true;
    this.queue.push({
      records: 'compact',
      resolve: () => undefined,
      reject: (err) => this.options.onBackgroundError?.(err),
    });
    this.pump();
  }

  private pump(): void {
    if (this.inflight || this.queue.length === 0) return;
    this.inflight = true;
    if (this.queue[0]!.records === 'compact') {
      const entry = this.queue.shift()!;
      void this.compact().then(
        () => this.settle([entry], null),
        (err: Error) => this.settle([entry], err),
      );
      return;
    }
    let n = 0;
    while (n < this.queue.length && this.queue[n]!.records !== 'compact') n++;
    const group = this.queue.splice(0, n);
    const records: EncodedRecord[] = [];
    for (const e of group) records.push(...(e.records as readonly EncodedRecord[]));
    void this.write(records).then(
      () => {
        for (const r of records) this.remember(r);
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

  /** Writes records as batches of at most maxBatchBytes, one after the other; resolves with the first offset. */
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
      const inputs: RecordInput[] = records.slice(start, end).map((r) => ({ key: r.key, value: r.value, timestamp: now }));
      const batch = buildRecordBatchSync(inputs, { now });
      try {
        const res = await this.log.append(batch);
        if (first < 0) first = res.baseOffset;
      } catch (e) {
        throw new CoordinatorStorageError(
          `cannot append ${end - start} records to __consumer_offsets-${this.options.partition}`,
          { partition: this.options.partition },
          e,
        );
      }
      start = end;
    }
    return first;
  }

  /** Appends the live records again and drops the history before them. */
  private async compact(): Promise<void> {
    this.compactionQueued = false;
    const live = [...this.image.values()].sort((a, b) => compactionRank(a.key) - compactionRank(b.key));
    const appended = this.appendedSinceCompaction;
    if (live.length === 0) {
      // Nothing is live: everything up to the end is history.
      const end = this.log.highWatermark;
      await this.truncate(end);
      this.appendedSinceCompaction = 0;
      this.options.onCompaction?.({ liveRecords: 0, droppedBefore: end });
      return;
    }
    const first = await this.write(live);
    this.appendedSinceCompaction = Math.max(0, this.appendedSinceCompaction - appended);
    await this.truncate(first);
    this.options.onCompaction?.({ liveRecords: live.length, droppedBefore: first });
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
