import { describe, expect, it } from 'vitest';
import { CompressionType } from '../../../../protocol/compression/index.js';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import {
  CorruptRecordError,
  LegacyMessageFormatError,
  RecordTooLargeError,
  buildRecordBatch,
  buildRecordBatchSync,
  completeEntriesLength,
  splitRecordBatches,
} from '../../../../protocol/records/index.js';
import { kafkajsMessageSet } from './kafkajs-fixtures.js';

const T0 = 1_700_000_000_000;

async function threeBatches(): Promise<Buffer[]> {
  return [
    buildRecordBatchSync([{ value: 'a', timestamp: T0 }], { baseOffset: 0 }),
    await buildRecordBatch([{ value: 'b', timestamp: T0 }, { value: 'c', timestamp: T0 }], {
      baseOffset: 1,
      compression: CompressionType.ZSTD,
    }),
    buildRecordBatchSync([{ value: 'd'.repeat(500), timestamp: T0 }], { baseOffset: 3, compression: CompressionType.LZ4 }),
  ];
}

function corrupt(fn: () => unknown): CorruptRecordError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CorruptRecordError);
    expect((e as CorruptRecordError).kafkaErrorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    return e as CorruptRecordError;
  }
  throw new Error('expected a CorruptRecordError');
}

describe('splitting concatenated batches', () => {
  it('splits a stored run of batches into views sharing its memory', async () => {
    const parts = await threeBatches();
    const buf = Buffer.concat(parts);
    const batches = splitRecordBatches(buf);
    expect(batches.map((b) => [b.baseOffsetNumber, b.recordCount, b.sizeInBytes])).toEqual([
      [0, 1, parts[0]!.length],
      [1, 2, parts[1]!.length],
      [3, 1, parts[2]!.length],
    ]);
    for (const b of batches) b.validate();
    batches[1]!.setBaseOffset(77);
    expect(buf.readBigInt64BE(parts[0]!.length)).toBe(77n);
    expect(completeEntriesLength(buf)).toBe(buf.length);
    expect(splitRecordBatches(Buffer.alloc(0))).toEqual([]);
  });

  it('drops a partial last batch when reading a fetch response, and rejects it otherwise', async () => {
    const parts = await threeBatches();
    const full = Buffer.concat(parts);
    for (const cut of [1, 11, 12, 16, 17, 60, parts[2]!.length - 1]) {
      const buf = full.subarray(0, full.length - cut);
      expect(splitRecordBatches(buf, { allowPartialTail: true }).map((b) => b.baseOffsetNumber)).toEqual([0, 1]);
      expect(completeEntriesLength(buf)).toBe(parts[0]!.length + parts[1]!.length);
      expect(corrupt(() => splitRecordBatches(buf)).message).toContain('Truncated');
    }
  });

  it('rejects a length below the smallest entry and an unknown magic even in a fetch response', async () => {
    const [a] = await threeBatches();
    const tiny = Buffer.from(a!);
    tiny.writeInt32BE(13, 8);
    expect(corrupt(() => splitRecordBatches(tiny, { allowPartialTail: true })).message).toContain(
      'less than the minimum record overhead (14)',
    );
    const negative = Buffer.from(a!);
    negative.writeInt32BE(-1, 8);
    corrupt(() => splitRecordBatches(negative, { allowPartialTail: true }));
    const magic = Buffer.from(a!);
    magic.writeInt8(5, 16);
    expect(corrupt(() => splitRecordBatches(magic, { allowPartialTail: true })).message).toContain('Invalid magic found in record: 5');
  });

  it('rejects a v2 batch shorter than its header', () => {
    const buf = Buffer.alloc(12 + 40);
    buf.writeInt32BE(40, 8);
    buf.writeInt8(2, 16);
    expect(corrupt(() => splitRecordBatches(buf)).message).toContain('smaller than the minimum allowed overhead 61');
  });

  it('notices a batchLength that lies short: the next entry is garbage or the CRC fails', async () => {
    const parts = await threeBatches();
    const buf = Buffer.concat(parts);
    buf.writeInt32BE(parts[0]!.length - 12 - 3, 8);
    try {
      const batches = splitRecordBatches(buf);
      for (const b of batches) b.validate();
      throw new Error('a shortened batch passed');
    } catch (e) {
      expect(e).toBeInstanceOf(CorruptRecordError);
    }
  });

  it('refuses legacy message sets where batches v2 are required, or skips them when asked', async () => {
    const legacy = kafkajsMessageSet(1, [{ key: 'k', value: 'v', timestamp: T0 }]);
    const [v2] = await threeBatches();
    const mixed = Buffer.concat([v2!, legacy]);
    try {
      splitRecordBatches(mixed);
      throw new Error('legacy accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(LegacyMessageFormatError);
      expect(e).toMatchObject({ magic: 1, kafkaErrorCode: ErrorCode.INVALID_RECORD, offset: v2!.length });
    }
    expect(splitRecordBatches(mixed, { skipLegacy: true })).toHaveLength(1);
  });

  it('rejects a batch above the size limit as MESSAGE_TOO_LARGE', async () => {
    const parts = await threeBatches();
    try {
      splitRecordBatches(Buffer.concat(parts), { maxBatchSize: parts[2]!.length - 1 });
      throw new Error('oversized accepted');
    } catch (e) {
      expect(e).toBeInstanceOf(RecordTooLargeError);
      expect(e).toMatchObject({ kafkaErrorCode: ErrorCode.MESSAGE_TOO_LARGE });
    }
  });
});
