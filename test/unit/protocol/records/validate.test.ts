import { describe, expect, it } from 'vitest';
import zlib from 'node:zlib';
import { CompressionType } from '../../../../protocol/compression/index.js';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import {
  MAX_RECORD_ERRORS,
  RecordBatch,
  RecordScanner,
  RecordValidationError,
  RecordsError,
  buildRecordBatch,
  validateProducePartitionRecords,
  validateProducedRecords,
} from '../../../../protocol/records/index.js';
import type { RecordValidationOptions, RecordValidationResult } from '../../../../protocol/records/index.js';
import { KafkajsCompression, kafkajsBatch } from './kafkajs-fixtures.js';
import { sizeOfVarint, writeVarint } from '../../../../protocol/records/varint.js';
import { T0, batchAround, compressedBatch, goodPayload, gzipZeros, poisonedBatches, rawRecord, zstdRleBomb } from '../../../support/poisoned-batches.js';

const OPTIONS: RecordValidationOptions = { nowMs: T0, createTime: true, timestampBeforeMaxMs: null, timestampAfterMaxMs: null };

/** Header checks, then record checks, as the produce path runs them. */
async function validate(records: Buffer, options: Partial<RecordValidationOptions> = {}): Promise<RecordValidationResult> {
  const batch = validateProducePartitionRecords(records, 11);
  return validateProducedRecords(batch, { ...OPTIONS, ...options });
}

async function rejection(records: Buffer, options: Partial<RecordValidationOptions> = {}): Promise<RecordsError> {
  try {
    await validate(records, options);
  } catch (e) {
    expect(e).toBeInstanceOf(RecordsError);
    return e as RecordsError;
  }
  throw new Error('expected the batch to be rejected');
}

const CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];

describe('validating every record of a produced batch', () => {
  it.each(CODECS)('accepts a well-formed batch with compression %i and leaves its bytes as they were', async (compression) => {
    const records = await buildRecordBatch(
      Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `value ${i}`, timestamp: T0 + (i % 7), headers: [{ key: 'h', value: 'x' }] })),
      { compression },
    );
    const copy = Buffer.from(records);
    const result = await validate(records);
    expect(result.maxTimestamp).toBe(T0 + 6);
    expect(records.equals(copy)).toBe(true);
  });

  it.each([
    ['none', KafkajsCompression.None!, 'raw'],
    ['gzip', KafkajsCompression.GZIP!, 'raw'],
    ['snappy (raw)', KafkajsCompression.Snappy!, 'raw'],
    ['snappy (xerial, as Java writes it)', KafkajsCompression.Snappy!, 'xerial'],
    ['lz4 (4 MiB blocks, content checksum)', KafkajsCompression.LZ4!, 'raw'],
    ['zstd', KafkajsCompression.ZSTD!, 'raw'],
  ] as const)('accepts what kafkajs produces with %s', async (_name, compression, snappy) => {
    const messages = Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `value ${i}`.repeat(i), timestamp: T0 + i, headers: { h: 'v' } }));
    const records = await kafkajsBatch(messages, { compression, snappy });
    expect((await validate(records)).maxTimestamp).toBe(T0 + 29);
  });

  it('rejects each malformed shape with Kafka error code', async () => {
    for (const c of await poisonedBatches()) {
      const e = await rejection(c.batch);
      expect([c.name, e.kafkaErrorCode]).toEqual([c.name, c.errorCode]);
    }
  });

  it('rejects a negative header count with Kafka message and the index of the record', async () => {
    const stored = Buffer.concat([rawRecord({ offsetDelta: 0 }), rawRecord({ offsetDelta: 1, headerCount: -1 })]);
    const e = await rejection(batchAround({ count: 2, stored }));
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(e.message).toMatch(/^Found invalid number of record headers -1/);
    expect(e.recordIndex).toBe(1);
  });

  it('rejects a record whose length disagrees with its fields with Kafka message', async () => {
    const longer = await rejection(batchAround({ count: 3, stored: Buffer.concat([rawRecord({ offsetDelta: 0, length: 20 }), rawRecord({ offsetDelta: 1 }), rawRecord({ offsetDelta: 2 })]) }));
    expect(longer.message).toMatch(/^Invalid record size: expected to read 20 bytes in record payload, but instead read/);
    const past = await rejection(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, length: 100 }) }));
    expect(past.message).toMatch(/^Invalid record size: expected 100 bytes in record payload, but instead the buffer has only \d+ remaining bytes\./);
  });

  it('rejects varints over 5 bytes and varlongs over 10', async () => {
    const sixBytes = await rejection(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, offsetDeltaBytes: Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x00]) }) }));
    expect(sixBytes.message).toMatch(/varint is too long/);
    // A 5th byte carrying bits past 32.
    const wide = await rejection(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, offsetDeltaBytes: Buffer.from([0x80, 0x80, 0x80, 0x80, 0x10]) }) }));
    expect(wide.message).toMatch(/varint is too long/);
    // An 11-byte timestampDelta: attributes, then the varlong.
    const body = Buffer.concat([Buffer.from([0]), Buffer.alloc(10, 0x80), Buffer.from([0x00, 0x00, 0x01, 0x01, 0x00])]);
    const record = Buffer.concat([Buffer.from([body.length * 2]), body]);
    const longVarlong = await rejection(batchAround({ count: 1, stored: record }));
    expect(longVarlong.message).toMatch(/varlong is too long/);
  });

  it('rejects a recordCount that disagrees with the records, compressed or not', async () => {
    const more = await rejection(batchAround({ count: 3, stored: Buffer.concat([goodPayload(2), Buffer.alloc(14)]) }));
    expect(more.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    const fewer = await rejection(batchAround({ count: 1, stored: goodPayload(2) }));
    expect(fewer.message).toMatch(/^Incorrect declared batch size, records still remaining in file/);
    for (const compression of [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]) {
      const e = await rejection(await compressedBatch(goodPayload(2), 3, compression));
      expect([compression, e.kafkaErrorCode, e.message]).toEqual([compression, ErrorCode.INVALID_RECORD, expect.stringMatching(/^Incorrect declared batch size, premature EOF reached/)]);
    }
  });

  it('rejects codecs 5, 6 and 7 from the header, before any decompression', async () => {
    for (const id of [5, 6, 7]) {
      expect(() => validateProducePartitionRecords(batchAround({ count: 2, compression: id, stored: goodPayload(2) }), 11)).toThrow(/Unknown compression type id/);
    }
  });

  it('rejects payloads that do not decompress as CORRUPT_MESSAGE', async () => {
    const garbage = Buffer.from('this is not compressed data at all, whatever the codec says');
    for (const compression of [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD]) {
      const e = await rejection(batchAround({ count: 2, compression, stored: garbage }));
      expect([compression, e.kafkaErrorCode, e.message]).toEqual([compression, ErrorCode.CORRUPT_MESSAGE, expect.stringMatching(/^Failed to decompress record stream/)]);
    }
    // A gzip stream cut short.
    const full = zlib.gzipSync(goodPayload(50));
    const cut = await rejection(batchAround({ count: 50, compression: CompressionType.GZIP, stored: full.subarray(0, full.length - 20) }));
    expect(cut.kafkaErrorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
  });

  it('refuses a gzip bomb (261 KB to 256 MiB) as MESSAGE_TOO_LARGE', async () => {
    const bomb = await gzipZeros(256 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(300_000);
    const e = await rejection(batchAround({ count: 1000, compression: CompressionType.GZIP, stored: bomb }));
    expect(e.kafkaErrorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
  }, 30_000);

  it('refuses a zstd bomb (32 KB to 1 GiB) before decoding it', async () => {
    const bomb = zstdRleBomb(8192);
    expect(bomb.length).toBeLessThan(33_000);
    const started = performance.now();
    const e = await rejection(batchAround({ count: 1000, compression: CompressionType.ZSTD, stored: bomb }));
    expect(e.kafkaErrorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect(e.message).toMatch(/frames can decode to 1073741824 bytes/);
    // Only the frame walk ran: inflating a GiB takes far longer.
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('accepts 1,000,000 tiny records in one gzip batch, as Kafka does', async () => {
    const n = 1_000_000;
    // Each record: length, attributes, timestampDelta 0, offsetDelta, null key, null value, no headers.
    const payload = Buffer.alloc(n * 9);
    let pos = 0;
    for (let i = 0; i < n; i++) {
      const d = sizeOfVarint(i);
      pos = writeVarint(payload, pos, 5 + d);
      payload[pos++] = 0;
      payload[pos++] = 0;
      pos = writeVarint(payload, pos, i);
      payload[pos++] = 1;
      payload[pos++] = 1;
      payload[pos++] = 0;
    }
    const batch = batchAround({ count: n, compression: CompressionType.GZIP, stored: zlib.gzipSync(payload.subarray(0, pos)) });
    expect(batch.length).toBeLessThan(1_500_000);
    const started = performance.now();
    const result = await validate(batch);
    // One scan, no object per record (a generous bound for a shared machine).
    expect(performance.now() - started).toBeLessThan(2000);
    expect(result.maxTimestamp).toBe(T0);
  }, 30_000);

  it('answers the records with out-of-range timestamps as INVALID_TIMESTAMP, one record error each', async () => {
    const stored = Buffer.concat([
      rawRecord({ offsetDelta: 0 }),
      rawRecord({ offsetDelta: 1, timestampDelta: 10_000 }),
      rawRecord({ offsetDelta: 2 }),
      rawRecord({ offsetDelta: 3, timestampDelta: -10_000 }),
    ]);
    const e = await rejection(batchAround({ count: 4, stored, maxTimestamp: T0 + 10_000 }), { timestampBeforeMaxMs: 1000, timestampAfterMaxMs: 1000 });
    expect(e).toBeInstanceOf(RecordValidationError);
    const v = e as RecordValidationError;
    expect(v.kafkaErrorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(v.message).toBe('One or more records have been rejected due to invalid timestamp');
    expect(v.recordErrors).toEqual([
      { batchIndex: 1, message: `Timestamp ${T0 + 10_000} of message with offset 1 is out of range. The timestamp should be within [${T0 - 1000}, ${T0 + 1000}]` },
      { batchIndex: 3, message: `Timestamp ${T0 - 10_000} of message with offset 3 is out of range. The timestamp should be within [${T0 - 1000}, ${T0 + 1000}]` },
    ]);
    // A LogAppendTime topic does not look at the producer's timestamps.
    await expect(validate(batchAround({ count: 4, stored, maxTimestamp: T0 + 10_000 }), { createTime: false })).resolves.toBeDefined();
  });

  it('rejects a producer batch marked LogAppendTime on a LogAppendTime topic', async () => {
    const e = (await rejection(batchAround({ count: 2, stored: goodPayload(2), attributes: 0x08 }), { createTime: false })) as RecordValidationError;
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    expect(e.recordErrors.map((r) => r.batchIndex)).toEqual([0, 1]);
    expect(e.recordErrors[0]!.message).toMatch(/Producer should not set timestamp type to LogAppendTime\.$/);
  });

  it('reports offset deltas that disagree with the positions as per-record INVALID_RECORD, with Kafka summary', async () => {
    const stored = Buffer.concat([rawRecord({ offsetDelta: 0 }), rawRecord({ offsetDelta: 5 }), rawRecord({ offsetDelta: 2 })]);
    const e = (await rejection(batchAround({ count: 3, stored }))) as RecordValidationError;
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(e.recordErrors).toEqual([{ batchIndex: 1, message: "Record offset delta 5 does not match the record's position 1 in the batch" }]);
    expect(e.message).toBe(
      "One or more records have been rejected due to 1 record errors in total, and only showing the first three errors at most: [RecordError(batchIndex=1, message='Record offset delta 5 does not match the record's position 1 in the batch')]",
    );
  });

  it.each(CODECS)('rejects records without a key on a compacted topic, with compression %i, as Kafka validateKey does', async (compression) => {
    const records = await buildRecordBatch(
      [
        { key: 'k0', value: 'a', timestamp: T0 },
        { key: null, value: 'b', timestamp: T0 },
        { key: 'k2', value: 'c', timestamp: T0 },
      ],
      { compression },
    );
    const e = (await rejection(records, { compacted: true, topicPartition: 'changelog-3' })) as RecordValidationError;
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(e.recordErrors).toEqual([{ batchIndex: 1, message: 'Compacted topic cannot accept message without key in topic partition changelog-3.' }]);
    // The same batch is fine where the topic is not compacted.
    await expect(validate(records, { compacted: false })).resolves.toBeDefined();
  });

  it('keeps at most MAX_RECORD_ERRORS record errors however many records fail', async () => {
    const n = MAX_RECORD_ERRORS + 500;
    const stored = Buffer.concat(Array.from({ length: n }, (_, i) => rawRecord({ offsetDelta: i, timestampDelta: 1_000_000 })));
    const e = (await rejection(batchAround({ count: n, stored }), { timestampAfterMaxMs: 0 })) as RecordValidationError;
    expect(e.recordErrors).toHaveLength(MAX_RECORD_ERRORS);
    expect(e.totalErrors).toBe(n);
  });
});

describe('scanning records', () => {
  it('gives each record its fields without decoding keys or values', () => {
    const payload = Buffer.concat([
      rawRecord({ offsetDelta: 0, key: Buffer.from('abc'), value: null, timestampDelta: -5 }),
      rawRecord({ offsetDelta: 1, key: null, value: Buffer.from('hello'), headers: [['h1', null], ['h2', Buffer.from('v')]] }),
    ]);
    const s = new RecordScanner(payload, 2);
    expect(s.next()).toBe(true);
    expect([s.index, s.offsetDelta, s.timestampDelta, s.keyLength, s.valueLength, s.headerCount]).toEqual([0, 0, -5, 3, -1, 0]);
    expect(payload.toString('utf8', s.keyStart, s.keyStart + s.keyLength)).toBe('abc');
    expect(s.next()).toBe(true);
    expect([s.index, s.offsetDelta, s.keyLength, s.valueLength, s.headerCount, s.end]).toEqual([1, 1, -1, 5, 2, payload.length]);
    expect(payload.toString('utf8', s.valueStart, s.valueStart + s.valueLength)).toBe('hello');
    expect(s.next()).toBe(false);
  });

  it('agrees with the batch record iterator on a built batch', async () => {
    const buf = await buildRecordBatch(Array.from({ length: 20 }, (_, i) => ({ key: i % 3 ? `key-${i}` : null, value: 'v'.repeat(i * 13), timestamp: T0 - i * 1000 })));
    const batch = RecordBatch.wrap(buf);
    const expected = batch.records().toArray();
    const s = new RecordScanner(batch.recordsBytes, batch.recordCount);
    for (const r of expected) {
      expect(s.next()).toBe(true);
      expect([s.offsetDelta, batch.baseTimestamp + s.timestampDelta, s.keyLength, s.valueLength]).toEqual([r.offsetDelta, r.timestamp, r.key?.length ?? -1, r.value?.length ?? -1]);
    }
    expect(s.next()).toBe(false);
  });
});
