import { describe, expect, it } from 'vitest';
import { CompressionType } from '../../../../protocol/compression/index.js';
import { crc32c } from '../../../../protocol/crc32c.js';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import {
  BatchField,
  CorruptRecordError,
  InvalidRecordError,
  RecordBatch,
  RecordTooLargeError,
  RecordsError,
  TimestampType,
  UnsupportedRecordCompressionError,
  buildRecordBatch,
  buildRecordBatchSync,
} from '../../../../protocol/records/index.js';
import { expectBytes } from '../compression/fixtures.js';
import { KafkajsCompression, kafkajsBatch } from './kafkajs-fixtures.js';
import type { KafkajsMessage } from './kafkajs-fixtures.js';

const T0 = 1_700_000_000_000;

const messages: KafkajsMessage[] = [
  { key: 'key-0', value: 'value-0', timestamp: T0 + 5, headers: { trace: 'abc', multi: ['x', 'y'] } },
  { key: null, value: 'value-1', timestamp: T0 },
  { key: 'key-2', value: null, timestamp: T0 + 9 },
  { key: Buffer.from([0, 1, 2, 255]), value: Buffer.alloc(3000, 7), timestamp: T0 + 1 },
];

/** Recomputes a batch's CRC after a test edits bytes the CRC covers. */
function recrc(buf: Buffer): Buffer {
  buf.writeUInt32BE(crc32c(buf.subarray(BatchField.ATTRIBUTES)), BatchField.CRC);
  return buf;
}

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  throw new Error('expected an error');
}

async function rejected(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

const CODECS: Array<[string, number, 'raw' | 'xerial' | undefined]> = [
  ['none', KafkajsCompression.None!, undefined],
  ['gzip', KafkajsCompression.GZIP!, undefined],
  ['snappy raw (kafkajs-snappy)', KafkajsCompression.Snappy!, 'raw'],
  ['snappy xerial (Java framing)', KafkajsCompression.Snappy!, 'xerial'],
  ['lz4 (kafkajs-lz4 frame)', KafkajsCompression.LZ4!, undefined],
  ['zstd', KafkajsCompression.ZSTD!, undefined],
];

describe('RecordBatch view over batches kafkajs encodes', () => {
  it.each(CODECS)('decodes a %s batch', async (_name, compression, snappy) => {
    const buf = await kafkajsBatch(messages, { compression, snappy });
    const batch = RecordBatch.wrap(buf);
    batch.validate();
    expect(batch.magic).toBe(2);
    expect(batch.compressionType).toBe(compression);
    expect(batch.sizeInBytes).toBe(buf.length);
    expect(batch.batchLength).toBe(buf.length - 12);
    expect(batch.baseOffset).toBe(0n);
    expect(batch.lastOffsetDelta).toBe(3);
    expect(batch.recordCount).toBe(4);
    expect(batch.baseTimestamp).toBe(T0);
    expect(batch.maxTimestamp).toBe(T0 + 9);
    expect(batch.timestampType).toBe(TimestampType.CREATE_TIME);
    // kafkajs's non-idempotent producer: -1 / 0 / 0. The id alone says "not idempotent".
    expect(batch.producerId).toBe(-1n);
    expect(batch.producerEpoch).toBe(0);
    expect(batch.baseSequence).toBe(0);
    expect(batch.hasProducerId).toBe(false);
    expect(batch.isTransactional).toBe(false);
    expect(batch.isControl).toBe(false);

    const records = await batch.readRecords();
    expect(records.map((r) => [r.offset, r.offsetDelta, r.timestamp])).toEqual([
      [0, 0, T0 + 5],
      [1, 1, T0],
      [2, 2, T0 + 9],
      [3, 3, T0 + 1],
    ]);
    expect(records[0]!.key!.toString()).toBe('key-0');
    expect(records[0]!.value!.toString()).toBe('value-0');
    expect(records[0]!.headers.map((h) => [h.key, h.value!.toString()])).toEqual([
      ['trace', 'abc'],
      ['multi', 'x'],
      ['multi', 'y'],
    ]);
    expect(records[1]!.key).toBeNull();
    expect(records[2]!.value).toBeNull();
    expectBytes(records[3]!.key!, Buffer.from([0, 1, 2, 255]));
    expectBytes(records[3]!.value!, Buffer.alloc(3000, 7));
  });

  it('reads the flags and ids of an idempotent, transactional kafkajs batch', async () => {
    const buf = await kafkajsBatch(messages, { producerId: 4321, producerEpoch: 3, firstSequence: 17, transactional: true });
    const batch = RecordBatch.wrap(buf);
    batch.validate();
    expect(batch.producerId).toBe(4321n);
    expect(batch.producerIdNumber).toBe(4321);
    expect(batch.hasProducerId).toBe(true);
    expect(batch.producerEpoch).toBe(3);
    expect(batch.baseSequence).toBe(17);
    expect(batch.lastSequence).toBe(20);
    expect(batch.isTransactional).toBe(true);
  });

  it('gives uncompressed keys and values as slices of the batch, not copies', async () => {
    const buf = await kafkajsBatch(messages);
    const [first] = RecordBatch.wrap(buf).records();
    expect(first!.value!.buffer).toBe(buf.buffer);
    first!.value![0] = 0x56; // 'V'
    expect(buf.includes(Buffer.from('Value-0'))).toBe(true);
  });
});

describe('RecordBatch integrity', () => {
  it('rejects a batch whose CRC does not match, anywhere the CRC covers', async () => {
    const good = await kafkajsBatch(messages);
    for (const at of [BatchField.ATTRIBUTES + 1, BatchField.MAX_TIMESTAMP + 7, BatchField.RECORD_COUNT + 3, good.length - 1]) {
      const bad = Buffer.from(good);
      bad[at]! ^= 0x01;
      const batch = RecordBatch.wrap(bad);
      expect(batch.isValid()).toBe(false);
      const err = thrown(() => batch.validate());
      expect(err).toBeInstanceOf(CorruptRecordError);
      expect(err).toMatchObject({ code: 'LL_ERR_CORRUPT_RECORD', kafkaErrorCode: ErrorCode.CORRUPT_MESSAGE });
      expect((err as Error).message).toMatch(/stored crc = \d+, computed crc = \d+/);
    }
  });

  it('keeps the CRC valid when baseOffset and partitionLeaderEpoch are rewritten in place', async () => {
    const buf = await kafkajsBatch(messages, { compression: KafkajsCompression.GZIP });
    const crcBefore = buf.readUInt32BE(BatchField.CRC);
    const batch = RecordBatch.wrap(buf);
    batch.setBaseOffset(9_007_199_254_740_000);
    batch.setPartitionLeaderEpoch(42);
    expect(batch.baseOffsetNumber).toBe(9_007_199_254_740_000);
    expect(batch.baseOffset).toBe(9_007_199_254_740_000n);
    expect(batch.lastOffsetNumber).toBe(9_007_199_254_740_003);
    expect(batch.partitionLeaderEpoch).toBe(42);
    expect(batch.crc).toBe(crcBefore);
    batch.validate();
    batch.setBaseOffset(123n);
    expect(batch.baseOffsetNumber).toBe(123);
    batch.setLastOffset(1000);
    expect(batch.baseOffset).toBe(997n);
    expect((await batch.readRecords()).map((r) => r.offset)).toEqual([997, 998, 999, 1000]);
    batch.validate();
  });

  it('sets LogAppendTime with a new CRC; records then carry the append time', async () => {
    const buf = await kafkajsBatch(messages, { compression: KafkajsCompression.LZ4 });
    const batch = RecordBatch.wrap(buf);
    const compressedBefore = Buffer.from(batch.recordsBytes);
    batch.setLogAppendTime(T0 + 1000);
    batch.validate();
    expect(batch.timestampType).toBe(TimestampType.LOG_APPEND_TIME);
    expect(batch.attributes & 0x08).toBe(0x08);
    expect(batch.compressionType).toBe(CompressionType.LZ4);
    expect(batch.maxTimestamp).toBe(T0 + 1000);
    expectBytes(batch.recordsBytes, compressedBefore);
    expect((await batch.readRecords()).map((r) => r.timestamp)).toEqual([T0 + 1000, T0 + 1000, T0 + 1000, T0 + 1000]);
    // Back to CreateTime restores per-record timestamps.
    batch.setMaxTimestamp(TimestampType.CREATE_TIME, T0 + 9);
    batch.validate();
    expect((await batch.readRecords()).map((r) => r.timestamp)).toEqual([T0 + 5, T0, T0 + 9, T0 + 1]);
  });

  it("gives the whole batch's CRC-32C from its own CRC, through the broker's rewrites of it", async () => {
    const buf = await kafkajsBatch(messages, { compression: KafkajsCompression.GZIP });
    const batch = RecordBatch.wrap(buf);
    expect(batch.crc32cOfWhole()).toBe(crc32c(buf));
    batch.setBaseOffset(77n);
    batch.setPartitionLeaderEpoch(5);
    expect(batch.crc32cOfWhole()).toBe(crc32c(buf));
    batch.setLogAppendTime(T0 + 3);
    expect(batch.crc32cOfWhole()).toBe(crc32c(buf));
    // It trusts the stored CRC: bytes changed behind it are not seen (which is why only checked batches use it).
    buf[buf.length - 1]! ^= 1;
    expect(batch.crc32cOfWhole()).not.toBe(crc32c(buf));
  });

  it('refuses to wrap a truncated batch, a lying batchLength or a wrong magic', async () => {
    const good = await kafkajsBatch(messages);
    const cases: Buffer[] = [
      good.subarray(0, 60),
      good.subarray(0, good.length - 1),
      Buffer.concat([good, Buffer.from([0])]),
      (() => {
        const b = Buffer.from(good);
        b.writeInt32BE(b.length, BatchField.BATCH_LENGTH); // claims 12 more bytes than there are
        return b;
      })(),
      (() => {
        const b = Buffer.from(good);
        b.writeInt8(1, BatchField.MAGIC);
        return b;
      })(),
      (() => {
        const b = Buffer.from(good);
        b.writeInt8(3, BatchField.MAGIC);
        return b;
      })(),
    ];
    for (const bad of cases) {
      const err = thrown(() => RecordBatch.wrap(bad));
      expect(err).toBeInstanceOf(CorruptRecordError);
      expect((err as RecordsError).kafkaErrorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
      // validate() checks the framing too, for views made without wrap().
      expect(() => RecordBatch.unchecked(bad).validate()).toThrow(CorruptRecordError);
    }
  });
});

describe('RecordBatch record counts and payloads', () => {
  it('rejects a record count larger than the records present', async () => {
    const buf = await kafkajsBatch(messages);
    buf.writeInt32BE(5, BatchField.RECORD_COUNT);
    const batch = RecordBatch.wrap(recrc(buf));
    batch.validate();
    const err = thrown(() => [...batch.records()]);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect((err as Error).message).toContain('premature EOF');
    expect((err as RecordsError).kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
  });

  it('rejects a record count smaller than the records present', async () => {
    const buf = await kafkajsBatch(messages);
    buf.writeInt32BE(3, BatchField.RECORD_COUNT);
    const err = thrown(() => [...RecordBatch.wrap(recrc(buf)).records()]);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect((err as Error).message).toContain('records still remaining');
  });

  it('rejects a negative or absurd record count before decoding anything', async () => {
    for (const count of [-1, 0x7fffffff]) {
      const buf = await kafkajsBatch(messages, { compression: KafkajsCompression.GZIP });
      buf.writeInt32BE(count, BatchField.RECORD_COUNT);
      const err = await rejected(RecordBatch.wrap(recrc(buf)).readRecords());
      expect(err).toBeInstanceOf(InvalidRecordError);
    }
  });

  it('rejects a zero count with records present, and reads an empty compressed batch without decompressing', async () => {
    const buf = await kafkajsBatch(messages);
    buf.writeInt32BE(0, BatchField.RECORD_COUNT);
    expect(() => [...RecordBatch.wrap(recrc(buf)).records()]).toThrow(InvalidRecordError);
    const gz = await kafkajsBatch(messages, { compression: KafkajsCompression.GZIP });
    gz.writeInt32BE(0, BatchField.RECORD_COUNT);
    gz.fill(0xee, BatchField.RECORDS); // not a gzip stream any more: never opened
    expect(await RecordBatch.wrap(recrc(gz)).readRecords()).toEqual([]);
  });

  it('maps corrupt compressed records to CORRUPT_MESSAGE and a decompression past the limit to MESSAGE_TOO_LARGE', async () => {
    for (const compression of [KafkajsCompression.GZIP!, KafkajsCompression.Snappy!, KafkajsCompression.LZ4!, KafkajsCompression.ZSTD!]) {
      const buf = await kafkajsBatch(messages, { compression });
      const tooSmall = await rejected(RecordBatch.wrap(buf).readRecords({ maxOutputBytes: 100 }));
      expect(tooSmall).toBeInstanceOf(RecordTooLargeError);
      expect(tooSmall).toMatchObject({ kafkaErrorCode: ErrorCode.MESSAGE_TOO_LARGE });
      buf.fill(0x5a, BatchField.RECORDS, buf.length);
      const corrupt = await rejected(RecordBatch.wrap(recrc(buf)).readRecords());
      expect(corrupt).toBeInstanceOf(CorruptRecordError);
      expect(corrupt).toMatchObject({ kafkaErrorCode: ErrorCode.CORRUPT_MESSAGE });
      expect((corrupt as Error).cause).toBeDefined();
    }
  });

  it('reads zstd batches asynchronously only, saying so with a typed error', async () => {
    const batch = RecordBatch.wrap(await kafkajsBatch(messages, { compression: KafkajsCompression.ZSTD }));
    expect(() => batch.records()).toThrow(UnsupportedRecordCompressionError);
    expect((await batch.readRecords()).length).toBe(4);
  });

  it('rejects compression type ids 5-7', () => {
    const buf = buildRecordBatchSync([{ value: 'v', timestamp: T0 }]);
    buf[BatchField.ATTRIBUTES + 1] = (buf[BatchField.ATTRIBUTES + 1]! & ~7) | 6;
    const batch = RecordBatch.wrap(recrc(buf));
    expect(batch.compressionType).toBe(6);
    expect(() => batch.records()).toThrow(InvalidRecordError);
  });

  it('reports the delete horizon kept in baseTimestamp', async () => {
    const batch = RecordBatch.wrap(
      await buildRecordBatch([{ key: 'k', value: null, timestamp: T0 }], { deleteHorizonMs: T0 + 86_400_000 }),
    );
    expect(batch.hasDeleteHorizon).toBe(true);
    expect(batch.deleteHorizonMs).toBe(T0 + 86_400_000);
    expect([...batch.records()][0]!.timestamp).toBe(T0);
  });
});
