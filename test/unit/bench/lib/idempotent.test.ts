import { describe, expect, it } from 'vitest';
import { RecordBatch } from '../../../../protocol/records/index.js';
import { idempotentTemplate, stampIdempotent } from '../../../../bench/lib/idempotent.js';

describe('idempotent benchmark batches', () => {
  it('carry the producer id, epoch and base sequence with a valid CRC', async () => {
    const template = await idempotentTemplate(100, 8);
    const b = RecordBatch.wrap(stampIdempotent(template, 4242n, 3, 640));
    expect(b.isValid()).toBe(true);
    expect(b.producerId).toBe(4242n);
    expect(b.producerEpoch).toBe(3);
    expect(b.baseSequence).toBe(640);
    expect(b.recordCount).toBe(8);
    expect(b.isCompressed).toBe(false);
  });

  it('leave the template untouched', async () => {
    const template = await idempotentTemplate(10, 2);
    const before = Buffer.from(template);
    stampIdempotent(template, 1n, 1, 99);
    expect(template.equals(before)).toBe(true);
  });
});
