/**
 * Record batches v2 whose header and CRC are right but whose records are not: the shapes a broker must
 * refuse on produce (and tolerate when an older broker stored them). Records are written field by field so
 * each rule can be broken on its own; the header is then assembled around the (compressed) payload with
 * a correct CRC.
 */
import zlib from 'node:zlib';
import { CompressionType, compress } from '../../protocol/compression/index.js';
import { crc32c } from '../../protocol/crc32c.js';
import { BatchField, RECORD_BATCH_OVERHEAD, writeInt64 } from '../../protocol/records/batch.js';
import { writeVarint, writeVarlong } from '../../protocol/records/varint.js';

export const T0 = 1_700_000_000_000;

export interface RawRecordSpec {
  offsetDelta: number;
  timestampDelta?: number;
  key?: Buffer | null;
  value?: Buffer | null;
  /** Header count as written (default: headers.length). */
  headerCount?: number;
  headers?: [string, Buffer | null][];
  /** Length varint as written (default: the body's real length). */
  length?: number;
  /** Raw bytes written in place of the offsetDelta varint (e.g. a 6-byte varint). */
  offsetDeltaBytes?: Buffer;
}

function varintBytes(v: number): Buffer {
  const b = Buffer.alloc(5);
  return b.subarray(0, writeVarint(b, 0, v));
}

function bytesField(b: Buffer | null | undefined): Buffer {
  if (b === null || b === undefined) return varintBytes(-1);
  return Buffer.concat([varintBytes(b.length), b]);
}

/** One record's bytes, length varint included. */
export function rawRecord(spec: RawRecordSpec): Buffer {
  const ts = Buffer.alloc(10);
  const parts = [
    Buffer.from([0]),
    ts.subarray(0, writeVarlong(ts, 0, spec.timestampDelta ?? 0)),
    spec.offsetDeltaBytes ?? varintBytes(spec.offsetDelta),
    bytesField(spec.key),
    bytesField(spec.value === undefined ? Buffer.from(`value ${spec.offsetDelta}`) : spec.value),
    varintBytes(spec.headerCount ?? spec.headers?.length ?? 0),
  ];
  for (const [k, v] of spec.headers ?? []) parts.push(bytesField(Buffer.from(k)), bytesField(v));
  const body = Buffer.concat(parts);
  return Buffer.concat([varintBytes(spec.length ?? body.length), body]);
}

/** `n` well-formed records with offset deltas 0..n-1, as a payload. */
export function goodPayload(n: number): Buffer {
  return Buffer.concat(Array.from({ length: n }, (_, i) => rawRecord({ offsetDelta: i, key: Buffer.from(`k${i}`) })));
}

export interface BatchSpec {
  /** recordCount and lastOffsetDelta + 1 (default: given by the caller). */
  count: number;
  compression?: number;
  /** The payload as stored (already compressed, or deliberately not decompressable). */
  stored: Buffer;
  baseTimestamp?: number;
  maxTimestamp?: number;
  /** Attribute bits beyond the compression (e.g. 0x08 for LogAppendTime). */
  attributes?: number;
}

/** A batch v2 around `stored`, with a correct batchLength and CRC. */
export function batchAround(spec: BatchSpec): Buffer {
  const out = Buffer.alloc(RECORD_BATCH_OVERHEAD + spec.stored.length);
  spec.stored.copy(out, RECORD_BATCH_OVERHEAD);
  out.writeInt32BE(out.length - 12, BatchField.BATCH_LENGTH);
  out.writeInt32BE(-1, BatchField.PARTITION_LEADER_EPOCH);
  out.writeInt8(2, BatchField.MAGIC);
  out.writeInt16BE((spec.compression ?? 0) | (spec.attributes ?? 0), BatchField.ATTRIBUTES);
  out.writeInt32BE(spec.count - 1, BatchField.LAST_OFFSET_DELTA);
  writeInt64(out, BatchField.BASE_TIMESTAMP, spec.baseTimestamp ?? T0);
  writeInt64(out, BatchField.MAX_TIMESTAMP, spec.maxTimestamp ?? T0);
  writeInt64(out, BatchField.PRODUCER_ID, -1);
  out.writeInt16BE(-1, BatchField.PRODUCER_EPOCH);
  out.writeInt32BE(-1, BatchField.BASE_SEQUENCE);
  out.writeInt32BE(spec.count, BatchField.RECORD_COUNT);
  out.writeUInt32BE(crc32c(out.subarray(BatchField.ATTRIBUTES)), BatchField.CRC);
  return out;
}

/** A batch of `payload` compressed with `compression`. */
export async function compressedBatch(payload: Buffer, count: number, compression: number): Promise<Buffer> {
  return batchAround({ count, compression, stored: await compress(compression, payload) });
}

/** A zstd frame of RLE blocks (128 KiB of zeros each, 4 bytes in the frame): `blocks` × 128 KiB decoded. */
export function zstdRleBomb(blocks: number): Buffer {
  const header = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x38]); // magic, FHD (no size, no checksum), window 128 KiB
  const body = Buffer.alloc(blocks * 4);
  const size = 128 * 1024;
  for (let i = 0; i < blocks; i++) {
    const h = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (size << 3); // last flag, RLE, size
    body[i * 4] = h & 0xff;
    body[i * 4 + 1] = (h >>> 8) & 0xff;
    body[i * 4 + 2] = (h >>> 16) & 0xff;
    body[i * 4 + 3] = 0; // the repeated byte
  }
  return Buffer.concat([header, body]);
}

/** A gzip stream of `bytes` zeros, compressed a MiB at a time (no buffer of `bytes` is ever held). */
export async function gzipZeros(bytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1024 * 1024);
  const gz = zlib.createGzip({ level: 9 });
  const parts: Buffer[] = [];
  gz.on('data', (b: Buffer) => parts.push(b));
  const done = new Promise<void>((resolve, reject) => {
    gz.once('end', resolve);
    gz.once('error', reject);
  });
  for (let left = bytes; left > 0; left -= chunk.length) {
    const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
    if (!gz.write(piece)) await new Promise((r) => gz.once('drain', r));
  }
  gz.end();
  await done;
  return Buffer.concat(parts);
}

export interface PoisonedCase {
  name: string;
  batch: Buffer;
  /** The partition error code a produce gets. */
  errorCode: number;
}

/** The shapes a produce must refuse, one batch each (no bomb: those are large to build). */
export async function poisonedBatches(): Promise<PoisonedCase[]> {
  const INVALID_RECORD = 87;
  const CORRUPT_MESSAGE = 2;
  const two = goodPayload(2);
  const sixByteVarint = Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x00]);
  return [
    { name: 'negative header count', batch: batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, headerCount: -1 }) }), errorCode: INVALID_RECORD },
    { name: 'record length longer than its fields', batch: batchAround({ count: 2, stored: Buffer.concat([rawRecord({ offsetDelta: 0, length: 30 }), rawRecord({ offsetDelta: 1 })]) }), errorCode: INVALID_RECORD },
    { name: 'record length shorter than its fields', batch: batchAround({ count: 2, stored: Buffer.concat([rawRecord({ offsetDelta: 0, length: 5 }), rawRecord({ offsetDelta: 1 })]) }), errorCode: INVALID_RECORD },
    { name: '6-byte varint', batch: batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, offsetDeltaBytes: sixByteVarint }) }), errorCode: INVALID_RECORD },
    { name: 'recordCount above the records', batch: batchAround({ count: 3, stored: Buffer.concat([two, Buffer.alloc(14)]) }), errorCode: INVALID_RECORD },
    { name: 'recordCount below the records', batch: batchAround({ count: 1, stored: two }), errorCode: INVALID_RECORD },
    { name: 'gzip recordCount above the records', batch: await compressedBatch(two, 3, CompressionType.GZIP), errorCode: INVALID_RECORD },
    { name: 'offset deltas out of order', batch: batchAround({ count: 2, stored: Buffer.concat([rawRecord({ offsetDelta: 1 }), rawRecord({ offsetDelta: 0 })]) }), errorCode: INVALID_RECORD },
    { name: 'undecompressable gzip', batch: batchAround({ count: 2, compression: CompressionType.GZIP, stored: Buffer.from('1f8b0800000000000003ffffffff', 'hex') }), errorCode: CORRUPT_MESSAGE },
    { name: 'undecompressable snappy', batch: batchAround({ count: 2, compression: CompressionType.SNAPPY, stored: Buffer.from([0x40, 0xff, 0xff, 0xff, 0xff, 0x01]) }), errorCode: CORRUPT_MESSAGE },
    { name: 'undecompressable lz4', batch: batchAround({ count: 2, compression: CompressionType.LZ4, stored: Buffer.from('04224d18604082ffff0000', 'hex') }), errorCode: CORRUPT_MESSAGE },
    { name: 'undecompressable zstd', batch: batchAround({ count: 2, compression: CompressionType.ZSTD, stored: Buffer.from('28b52ffd0038ffffff', 'hex') }), errorCode: CORRUPT_MESSAGE },
    ...[5, 6, 7].map((id) => ({ name: `compression id ${id}`, batch: batchAround({ count: 2, compression: id, stored: two }), errorCode: INVALID_RECORD })),
  ];
}
