/**
 * An in-memory partition log with the coordinator's storage contract (CoordinatorPartitionLog): batches get
 * consecutive offsets from 0, reads return whole batches; nothing is ever compacted or deleted. For tests of the
 * coordinator (failures can be injected into appends) and for brokers run without durable storage.
 *
 * ```
 *   batches: [base 0 │ 3 records][base 3 │ 1 record][base 4 │ 2 records]   logStartOffset 0, highWatermark 6
 * ```
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { CoordinatorPartitionLog } from './storage.js';

export class MemoryPartitionLog implements CoordinatorPartitionLog {
  private batches: Buffer[] = [];
  private end = 0;
  private failures: Error[] = [];
  /** Appends that have been called, including failed ones. */
  appendCalls = 0;

  get logStartOffset(): number {
    return 0;
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
      if (view.nextOffsetNumber <= fromOffset) continue;
      if (out.length > 0 && bytes + b.length > maxBytes) break;
      out.push(b);
      bytes += b.length;
      next = view.nextOffsetNumber;
    }
    return { records: out, nextOffset: next };
  }
}
