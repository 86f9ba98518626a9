import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompressionType } from '../../../../protocol/compression/index.js';
import type { CompressionTypeId } from '../../../../protocol/compression/index.js';
import { EncodeError } from '../../../../protocol/errors.js';
import {
  RecordBatch,
  TimestampType,
  buildRecordBatch,
  buildRecordBatchSync,
  encodeRecordsPayload,
} from '../../../../protocol/records/index.js';
import type { RecordInput } from '../../../../protocol/records/index.js';
import { expectBytes } from '../compression/fixtures.js';
import { decodeWithKafkajs } from './kafkajs-fixtures.js';

const T0 = 1_700_000_000_000;
const ALL_CODECS: CompressionTypeId[] = [
  CompressionType.NONE,
  CompressionType.GZIP,
  CompressionType.SNAPPY,
  CompressionType.LZ4,
  CompressionType.ZSTD,
];

const bytes = fc.oneof(
  fc.constant(null),
  fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
  fc.string({ maxLength: 40 }).map((s) => Buffer.from(s)),
);

const recordArb: fc.Arbitrary<RecordInput> = fc.record({
  key: bytes,
  value: bytes,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 12, unit: 'grapheme' }), value: bytes }), { maxLength: 4 }),
  timestamp: fc.integer({ min: T0 - 10_000_000, max: T0 + 10_000_000 }),
});

function asBuffer(v: Buffer | string | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : v;
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

describe('building record batches', () => {
  it('round-trips arbitrary records through builder and view, for every codec', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(recordArb, { minLength: 1, maxLength: 25 }),
        fc.constantFrom(...ALL_CODECS),
        fc.record({
          baseOffset: fc.integer({ min: 0, max: 2 ** 52 }),
          producerId: fc.integer({ min: -1, max: 2 ** 40 }),
          producerEpoch: fc.integer({ min: -1, max: 32767 }),
          baseSequence: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
          isTransactional: fc.boolean(),
          partitionLeaderEpoch: fc.integer({ min: -1, max: 2 ** 31 - 1 }),
        }),
        async (records, compression, opts) => {
          const buf = await buildRecordBatch(records, { ...opts, compression });
          const batch = RecordBatch.wrap(buf);
          batch.validate();
          expect(batch.compressionType).toBe(compression);
          expect(batch.recordCount).toBe(records.length);
          expect(batch.lastOffsetDelta).toBe(records.length - 1);
          expect(batch.baseOffsetNumber).toBe(opts.baseOffset);
          expect(batch.producerIdNumber).toBe(opts.producerId);
          expect(batch.producerEpoch).toBe(opts.producerEpoch);
          expect(batch.baseSequence).toBe(opts.baseSequence);
          expect(batch.isTransactional).toBe(opts.isTransactional);
          expect(batch.partitionLeaderEpoch).toBe(opts.partitionLeaderEpoch);
          expect(batch.baseTimestamp).toBe(records[0]!.timestamp);
          expect(batch.maxTimestamp).toBe(Math.max(...records.map((r) => r.timestamp!)));
          const decoded = await batch.readRecords();
          expect(decoded.length).toBe(records.length);
          decoded.forEach((d, i) => {
            const r = records[i]!;
            expect(d.offset).toBe(opts.baseOffset + i);
            expect(d.timestamp).toBe(r.timestamp);
            expect(sameBytes(d.key, asBuffer(r.key))).toBe(true);
            expect(sameBytes(d.value, asBuffer(r.value))).toBe(true);
            expect(d.headers.length).toBe(r.headers!.length);
            d.headers.forEach((h, j) => {
              expect(h.key).toBe(r.headers![j]!.key);
              expect(sameBytes(h.value, asBuffer(r.headers![j]!.value))).toBe(true);
            });
          });
        },
      ),
      { numRuns: 150 },
    );
  });

  it('builds the same bytes synchronously and asynchronously for the sync codecs', async () => {
    const records: RecordInput[] = [
      { key: 'a', value: 'x'.repeat(5000), timestamp: T0 },
      { key: null, value: 'y', timestamp: T0 + 3, headers: [{ key: 'h', value: null }] },
    ];
    for (const compression of [CompressionType.NONE, CompressionType.SNAPPY, CompressionType.LZ4] as const) {
      expectBytes(
        buildRecordBatchSync(records, { compression }),
        await buildRecordBatch(records, { compression }),
      );
    }
    expect(() => buildRecordBatchSync(records, { compression: CompressionType.ZSTD })).toThrow(EncodeError);
  });

  it('writes what kafkajs decodes (uncompressed and gzip)', async () => {
    for (const compression of [CompressionType.NONE, CompressionType.GZIP] as const) {
      const buf = await buildRecordBatch(
        [
          { key: 'k1', value: 'v1', timestamp: T0, headers: [{ key: 'h', value: 'hv' }] },
          { key: null, value: 'v2', timestamp: T0 + 7 },
        ],
        { compression, baseOffset: 40, producerId: 9, producerEpoch: 1, baseSequence: 0, isTransactional: true },
      );
      const decoded = await decodeWithKafkajs(buf);
      expect(decoded.firstOffset).toBe('40');
      expect(decoded.producerId).toBe('9');
      expect(decoded.inTransaction).toBe(true);
      expect(decoded.records.map((r) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value?.toString()])).toEqual([
        ['40', String(T0), 'k1', 'v1'],
        ['41', String(T0 + 7), null, 'v2'],
      ]);
      expect(decoded.records[0]!.headers.h!.toString()).toBe('hv');
    }
  });

  it('uses Kafka defaults: no producer id, sequence or leader epoch, CreateTime, records at now', () => {
    const batch = RecordBatch.wrap(buildRecordBatchSync([{ value: 'v' }, { value: 'w' }], { now: T0 }));
    expect(batch.producerId).toBe(-1n);
    expect(batch.producerEpoch).toBe(-1);
    expect(batch.baseSequence).toBe(-1);
    expect(batch.partitionLeaderEpoch).toBe(-1);
    expect(batch.timestampType).toBe(TimestampType.CREATE_TIME);
    expect([...batch.records()].map((r) => r.timestamp)).toEqual([T0, T0]);
  });

  it('writes LogAppendTime batches whose records read the append time', () => {
    const batch = RecordBatch.wrap(
      buildRecordBatchSync([{ value: 'v', timestamp: T0 }], {
        timestampType: TimestampType.LOG_APPEND_TIME,
        logAppendTime: T0 + 50,
      }),
    );
    batch.validate();
    expect(batch.maxTimestamp).toBe(T0 + 50);
    expect([...batch.records()][0]!.timestamp).toBe(T0 + 50);
  });

  it('keeps explicit offset deltas and an empty batch that preserves an offset range', () => {
    const sparse = RecordBatch.wrap(
      buildRecordBatchSync([
        { value: 'a', offsetDelta: 0, timestamp: T0 },
        { value: 'b', offsetDelta: 5, timestamp: T0 },
      ]),
    );
    expect(sparse.lastOffsetDelta).toBe(5);
    expect([...sparse.records()].map((r) => r.offset)).toEqual([0, 5]);
    const empty = RecordBatch.wrap(buildRecordBatchSync([], { baseOffset: 100, lastOffsetDelta: 9, now: T0 }));
    empty.validate();
    expect(empty.recordCount).toBe(0);
    expect(empty.lastOffsetNumber).toBe(109);
    expect([...empty.records()]).toEqual([]);
  });

  it('encodes the records payload alone, as the codecs see it', () => {
    const records: RecordInput[] = [{ key: 'k', value: 'v', timestamp: T0 }];
    const batch = buildRecordBatchSync(records);
    expectBytes(encodeRecordsPayload(records), batch.subarray(61));
  });

  it('rejects inputs it cannot encode with an EncodeError', () => {
    expect(() => buildRecordBatchSync([{ value: 'v', timestamp: 1.5 }])).toThrow(EncodeError);
    expect(() => buildRecordBatchSync([{ value: 'v', offsetDelta: 2 ** 31 }])).toThrow(EncodeError);
    expect(() => buildRecordBatchSync([{ value: 'v' }], { compression: 9 as CompressionTypeId })).toThrow(EncodeError);
  });
});
