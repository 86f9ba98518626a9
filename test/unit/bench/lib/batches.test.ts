import { describe, expect, it } from 'vitest';
import { RecordBatch } from '../../../../protocol/records/index.js';
import { buildTemplate, copyTemplate, sendTimeOf, stampBatch } from '../../../../bench/lib/batches.js';
import { parseWorkload } from '../../../../bench/lib/workload.js';

describe('benchmark batches', () => {
  it('stamps the send time with µs resolution into an uncompressed batch and keeps its CRC valid', async () => {
    const t = await buildTemplate(parseWorkload({ name: 'w', recordSize: 100, batchBytes: 1000 }));
    expect(t.recordCount).toBe(10);
    expect(t.payloadBytes).toBe(1000);
    const b = copyTemplate(t);
    const sent = 1_790_000_000_123.456;
    stampBatch(b, t, sent);
    const batch = RecordBatch.wrap(b);
    expect(batch.isValid()).toBe(true);
    expect(batch.baseTimestamp).toBe(1_790_000_000_123);
    expect(batch.recordCount).toBe(10);
    expect(sendTimeOf(batch)).toBeCloseTo(sent, 3);
    // The template itself is untouched.
    expect(RecordBatch.wrap(t.bytes).baseTimestamp).not.toBe(1_790_000_000_123);
  });

  it('falls back to the batch timestamp (ms) when the batch is compressed', async () => {
    const t = await buildTemplate(parseWorkload({ name: 'w', recordSize: 200, batchBytes: 2000, compression: 'lz4' }));
    expect(t.compressed).toBe(true);
    const b = copyTemplate(t);
    stampBatch(b, t, 1_790_000_000_999.9);
    const batch = RecordBatch.wrap(b);
    expect(batch.isValid()).toBe(true);
    expect(sendTimeOf(batch)).toBe(1_790_000_000_999);
    expect(batch.records().toArray()).toHaveLength(10);
  });
});
