import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompressionType, compressSync } from '../../../../protocol/compression/index.js';
import { crc32c } from '../../../../protocol/crc32c.js';
import {
  BatchField,
  InvalidRecordError,
  RecordBatch,
  RecordIterator,
  RecordsError,
  buildRecordBatchSync,
  splitRecordBatches,
} from '../../../../protocol/records/index.js';

const T0 = 1_700_000_000_000;
const ctx = { baseOffset: 0, baseTimestamp: T0, logAppendTime: null };

/** A batch header with a valid CRC around arbitrary record bytes. */
function batchAround(payload: Buffer, count: number, compression = 0): Buffer {
  const header = buildRecordBatchSync([], { now: T0 }).subarray(0, 61);
  const buf = Buffer.concat([header, payload]);
  buf.writeInt32BE(buf.length - 12, BatchField.BATCH_LENGTH);
  buf.writeInt16BE(compression, BatchField.ATTRIBUTES);
  buf.writeInt32BE(count, BatchField.RECORD_COUNT);
  buf.writeInt32BE(Math.max(count - 1, 0), BatchField.LAST_OFFSET_DELTA);
  buf.writeUInt32BE(crc32c(buf.subarray(BatchField.ATTRIBUTES)), BatchField.CRC);
  return buf;
}

function invalid(payload: number[], count = 1): InvalidRecordError {
  try {
    new RecordIterator(Buffer.from(payload), count, ctx).toArray();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidRecordError);
    return e as InvalidRecordError;
  }
  throw new Error('expected an InvalidRecordError');
}

describe('decoding records', () => {
  it('decodes a hand-written record: zigzag varints, null key, header with null value', () => {
    // length 11 (zigzag 22), attributes 0, tsDelta -1 (zigzag 1), offsetDelta 0, key null (1), value "hi" (4, 'h','i'),
    // 1 header: key "k" (2, 'k'), value null (1)
    const body = [0, 1, 0, 1, 4, 0x68, 0x69, 2, 2, 0x6b, 1];
    const [r] = new RecordIterator(Buffer.from([22, ...body]), 1, ctx).toArray();
    expect(r).toMatchObject({ offset: 0, timestamp: T0 - 1, timestampDelta: -1, key: null, sizeInBytes: 12 });
    expect(r!.value!.toString()).toBe('hi');
    expect(r!.headers).toEqual([{ key: 'k', value: null }]);
  });

  it('rejects records whose fields do not fill their length, with Kafka messages', () => {
    // Declared body 13 bytes but the fields take 11.
    expect(invalid([26, 0, 0, 0, 1, 4, 0x68, 0x69, 2, 2, 0x6b, 1, 0, 0]).message).toContain(
      'Invalid record size: expected to read 13 bytes in record payload, but instead read 11',
    );
    // Declared body longer than the payload.
    expect(invalid([100, 0, 0, 0, 0, 0, 0]).message).toContain('Invalid record size: expected 50 bytes');
    // Negative length.
    expect(invalid([1, 0, 0, 0, 0, 0, 0]).message).toContain('Invalid record size');
    // Key overruns the record.
    expect(invalid([10, 0, 0, 0, 40, 1, 1, 1, 1]).message).toContain('overruns');
    // Negative header count, header count larger than the bytes left, negative header key length.
    expect(invalid([12, 0, 0, 0, 1, 1, 1]).message).toContain('invalid number of record headers -1');
    expect(invalid([12, 0, 0, 0, 1, 1, 20]).message).toContain('larger than the remaining size');
    expect(invalid([14, 0, 0, 0, 1, 1, 2, 1, 1]).message).toContain('Invalid negative header key size');
    // Varint longer than 5 bytes.
    expect(invalid([0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0]).message).toContain('varint is too long');
  });

  it('rejects a payload with bytes after the last record or too few records', () => {
    // The smallest record: length 6 (zigzag 12), attributes, ts, offset, key null, value null, no headers.
    const smallest = [12, 0, 0, 0, 1, 1, 0];
    expect(new RecordIterator(Buffer.from(smallest), 1, ctx).toArray()).toHaveLength(1);
    expect(invalid([...smallest, 0]).message).toContain('records still remaining');
    expect(invalid([...smallest, 12, 0, 0, 2, 1, 1, 0], 3).message).toContain('premature EOF');
    // Enough bytes for the count, but the second record declares more than is left.
    expect(invalid([...smallest, 20, 0, 0, 2, 1, 1, 0], 2).message).toContain('Invalid record size: expected 10');
  });

  it('throws only RecordsError for arbitrary record bytes and counts', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 120 }), fc.integer({ min: -2, max: 40 }), (bytes, count) => {
        try {
          const records = RecordBatch.wrap(batchAround(Buffer.from(bytes), count)).records().toArray();
          expect(records.length).toBe(count);
        } catch (e) {
          expect(e).toBeInstanceOf(RecordsError);
        }
      }),
      { numRuns: 3000 },
    );
  });

  it('throws only RecordsError for arbitrary bytes inside a well-compressed payload', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 120 }),
        fc.integer({ min: 0, max: 20 }),
        fc.constantFrom(CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4),
        (bytes, count, compression) => {
          const payload = compressSync(compression, Buffer.from(bytes));
          try {
            RecordBatch.wrap(batchAround(payload, count, compression)).records().toArray();
          } catch (e) {
            expect(e).toBeInstanceOf(RecordsError);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('throws only RecordsError when random bytes are framed, validated and decoded as batches', () => {
    const real = buildRecordBatchSync([{ key: 'k', value: 'v', timestamp: T0 }, { value: null, timestamp: T0 }]);
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.array(fc.tuple(fc.nat(real.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 6 }),
        fc.boolean(),
        (noise, flips, useReal) => {
          const buf = useReal ? Buffer.from(real) : Buffer.from(noise);
          if (useReal) for (const [at, v] of flips) buf[at] = v;
          try {
            for (const batch of splitRecordBatches(buf, { allowPartialTail: true })) {
              batch.validate();
              batch.records().toArray();
            }
          } catch (e) {
            expect(e).toBeInstanceOf(RecordsError);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });
});
