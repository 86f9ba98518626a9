/**
 * An in-memory partition log with the coordinator's storage contract (CoordinatorPartitionLog): batches get
 * consecutive offsets, reads return whole batches, deleteRecords moves the log start offset. For tests of the
 * coordinator (failures can be injected into appends) and for brokers run without durable storage.
 *
 * ```
 *   batches: [base 0 │ 3 records][base 3 │ 1 record][base 4 │ 2 records]   logStartOffset ≤ 0, highWatermark 6
 * ```
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { CoordinatorPartitionLog } from './storage.js';

export class MemoryPartitionLog implements CoordinatorPartitionLog {
  private batches: Buffer[] = [];
  private start = 0;
  private end = 0;
  private failures: Error[] = [];
  /** Appends that have been called, including failed ones. */
  appendCalls = 0;

  get logStartOffset(): number {
    return this.start;
  }

  get highWatermark(): number {
    return this.end;
  }

  /** Every stored batch, oldest first (a copy of the list). */
  get storedBatches(): readonly Buffer[] {
    return [...this.batches];
  }

  /** Makes the next appends fail with `err`, one per call, before anything is stored. */
  failNextAppends(count: number, err: Error = new Error('injected append failure')): void {
    for (let i = 0; i < count; i++) this.failures.push(err);
  }

  async append(batch: Buffer): Promise<{ baseOffset: number; lastOffset: number }> {
    this.appendCalls++;
    await Promise.resolve();
    const failure = this.failures.shift();
    if (failure) throw failure;
    const copy = Buffer.from(batch);
    const view = RecordBatch.wrap(copy);
    view.setBaseOffset(this.end);
    this.batches.push(copy);
    const baseOffset = this.end;
    this.end = view.nextOffsetNumber;
    return { baseOffset, lastOffset: this.end - 1 };
  }

  async read(fromOffset: number, options: { maxBytes?: number } = {}): Promise<{ records: Buffer[]; nextOffset: number }> {
    const maxBytes = options.maxBytes ?? 1024 * 1024;
    const out: Buffer[] = [];
    let bytes = 0;
    let next = fromOffset;
    for (const b of this.batches) {
      const view = RecordBatch.wrap(b);
      if (view.nextOffsetNumber <= fromOffset || view.nextOffsetNumber <= this.start) continue;
      if (out.length > 0 && bytes + b.length > maxBytes) break;
      out.push(b);
      bytes += b.length;
      next = view.nextOffsetNumber;
    }
    return { records: out, nextOffset: next };
  }

  async deleteRecords(offset: number): Promise<{ lowWatermark: number }> {
    if (offset > this.end) throw new RangeError(`offset ${offset} is above the high watermark ${this.end}`);
    if (offset > this.start) {
      this.start = offset;
      this.batches = this.batches.filter((b) => RecordBatch.wrap(b).nextOffsetNumber > offset);
    }
    return { lowWatermark: this.start };
  }
}
