import { describe, expect, it } from 'vitest';
import { CompressionType } from '../../../../protocol/compression/index.js';
import { crc32c } from '../../../../protocol/crc32c.js';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import {
  BatchField,
  RecordsError,
  buildEndTxnMarkerBatch,
  buildRecordBatch,
  buildRecordBatchSync,
  validateProducePartitionRecords,
} from '../../../../protocol/records/index.js';
import { KafkajsCompression, kafkajsBatch, kafkajsMessageSet } from './kafkajs-fixtures.js';

const T0 = 1_700_000_000_000;
const records = [
  { key: 'k', value: 'v', timestamp: T0 },
  { key: 'k2', value: 'v2', timestamp: T0 + 1 },
];

function rejection(records: Buffer | null, version: number, options = {}): RecordsError {
  try {
    validateProducePartitionRecords(records, version, options);
  } catch (e) {
    expect(e).toBeInstanceOf(RecordsError);
    return e as RecordsError;
  }
  throw new Error('expected the records to be rejected');
}

function edit(buf: Buffer, f: (b: Buffer) => void, recomputeCrc = true): Buffer {
  const b = Buffer.from(buf);
  f(b);
  if (recomputeCrc) b.writeUInt32BE(crc32c(b.subarray(BatchField.ATTRIBUTES)), BatchField.CRC);
  return b;
}

describe('validating a produced partition', () => {
  it('accepts what kafkajs produces and returns a view over the request bytes', async () => {
    const req = await kafkajsBatch(records, { compression: KafkajsCompression.GZIP });
    const batch = validateProducePartitionRecords(req, 3);
    expect(batch.recordCount).toBe(2);
    batch.setBaseOffset(500);
    batch.setPartitionLeaderEpoch(3);
    expect(req.readBigInt64BE(0)).toBe(500n);
    batch.validate();
  });

  it('accepts idempotent batches with a sequence', () => {
    const buf = buildRecordBatchSync(records, { producerId: 10, producerEpoch: 0, baseSequence: 0 });
    expect(validateProducePartitionRecords(buf, 9).producerIdNumber).toBe(10);
  });

  it('requires at least one batch', () => {
    for (const empty of [null, Buffer.alloc(0)]) {
      const e = rejection(empty, 9);
      expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
      expect(e.message).toContain('must have at least one record batch per partition');
    }
  });

  it('allows exactly one batch per partition', () => {
    const one = buildRecordBatchSync(records);
    const e = rejection(Buffer.concat([one, one]), 9);
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(e.message).toContain('exactly one record batch per partition');
  });

  it('allows only magic 2', () => {
    const e = rejection(kafkajsMessageSet(1, [{ key: 'k', value: 'v', timestamp: T0 }]), 3);
    expect(e).toMatchObject({ code: 'LL_ERR_INVALID_RECORD', kafkaErrorCode: ErrorCode.INVALID_RECORD, magic: 1 });
    expect(e.message).toContain('only allowed to contain record batches with magic version 2');
  });

  it('refuses zstd before Produce v7 with UNSUPPORTED_COMPRESSION_TYPE', async () => {
    const zstd = await buildRecordBatch(records, { compression: CompressionType.ZSTD });
    const e = rejection(zstd, 6);
    expect(e.kafkaErrorCode).toBe(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
    expect(validateProducePartitionRecords(zstd, 7).compressionType).toBe(CompressionType.ZSTD);
  });

  it('rejects truncated batches and trailing bytes as corrupt', () => {
    const one = buildRecordBatchSync(records);
    for (const bad of [one.subarray(0, 10), one.subarray(0, 40), one.subarray(0, one.length - 1), Buffer.concat([one, Buffer.alloc(5)])]) {
      expect(rejection(bad, 9).kafkaErrorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    }
  });

  it('requires baseOffset 0 from clients', () => {
    const e = rejection(edit(buildRecordBatchSync(records), (b) => b.writeBigInt64BE(5n, 0), false), 9);
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
    expect(e.message).toContain('should be 0, but it is 5');
  });

  it('rejects a batch over max.message.bytes', () => {
    const one = buildRecordBatchSync(records);
    expect(rejection(one, 9, { maxMessageBytes: one.length - 1 }).kafkaErrorCode).toBe(ErrorCode.MESSAGE_TOO_LARGE);
    expect(validateProducePartitionRecords(one, 9, { maxMessageBytes: one.length }).sizeInBytes).toBe(one.length);
  });

  it('rejects a CRC mismatch as CORRUPT_MESSAGE', () => {
    const bad = edit(buildRecordBatchSync(records), (b) => (b[b.length - 1]! ^= 1), false);
    expect(rejection(bad, 9).kafkaErrorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
  });

  it('checks offsets against the record count as LogValidator does', () => {
    const one = buildRecordBatchSync(records);
    const cases: Array<[(b: Buffer) => void, string]> = [
      [(b) => b.writeInt32BE(-1, BatchField.LAST_OFFSET_DELTA), 'invalid offset range'],
      [(b) => b.writeInt32BE(0, BatchField.RECORD_COUNT), 'Invalid reported count for record batch: 0'],
      [(b) => b.writeInt32BE(3, BatchField.RECORD_COUNT), 'Inconsistent batch offset range [0, 1] and count of records 3'],
      [(b) => b.writeInt32BE(5, BatchField.LAST_OFFSET_DELTA), 'Inconsistent batch offset range [0, 5]'],
    ];
    for (const [f, message] of cases) {
      const e = rejection(edit(one, f), 9);
      expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
      expect(e.message).toContain(message);
    }
  });

  it('refuses control batches from clients', () => {
    const marker = buildEndTxnMarkerBatch({ commit: true, producerId: 1, producerEpoch: 0, coordinatorEpoch: 0, timestamp: T0 });
    const e = rejection(marker, 9);
    expect(e.message).toContain('Clients are not allowed to write control records');
  });

  it('requires a sequence when the batch has a producer id, and only then', () => {
    const e = rejection(buildRecordBatchSync(records, { producerId: 3, producerEpoch: 0, baseSequence: -1 }), 9);
    expect(e.message).toContain('Invalid sequence number -1 in record batch with producerId 3');
    // producerId -1 with any epoch/sequence is a plain producer (kafkajs sends -1/0/0, Java -1/-1/-1).
    validateProducePartitionRecords(buildRecordBatchSync(records, { producerId: -1, producerEpoch: -1, baseSequence: -1 }), 9);
    validateProducePartitionRecords(buildRecordBatchSync(records, { producerId: -1, producerEpoch: 0, baseSequence: 0 }), 9);
  });

  it('rejects compression ids 5-7', () => {
    const e = rejection(edit(buildRecordBatchSync(records), (b) => (b[BatchField.ATTRIBUTES + 1] = 5)), 9);
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_RECORD);
  });
});
