/**
 * Builds record batches v2 (the bytes Kafka's MemoryRecordsBuilder writes): for the broker's own records
 * (coordinator records, transaction markers), for tests and for benchmarks.
 *
 * Encoding is two passes over the records: the first computes every record's size, the second writes
 * into one buffer allocated at the exact size (the header and, uncompressed, the records; compressed, the
 * records go to a payload buffer that the codec reads, and the header is joined to its output). The CRC is
 * computed once at the end.
 */
import { CompressionType, compress, compressSync, hasSyncCodec, isCompressionType } from '../compression/index.js';
import type { CompressOptions, CompressionTypeId } from '../compression/index.js';
import { EncodeError } from '../errors.js';
import { crc32c } from '../crc32c.js';
import {
  BatchAttribute,
  BatchField,
  MAGIC_V2,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_SEQUENCE,
  RECORD_BATCH_OVERHEAD,
  LOG_OVERHEAD,
  TimestampType,
  writeInt64,
} from './batch.js';
import type { TimestampTypeId } from './batch.js';
import { sizeOfVarint, sizeOfVarlong, writeBytes, writeVarint, writeVarlong } from './varint.js';

export type BytesInput = Buffer | string | null | undefined;

export interface RecordHeaderInput {
  key: string;
  value?: BytesInput;
}

export interface RecordInput {
  key?: BytesInput;
  value?: BytesInput;
  headers?: readonly RecordHeaderInput[];
  /** CreateTime in ms; default `now` of the batch options. */
  timestamp?: number;
  /** Default: the record's index in the batch. */
  offsetDelta?: number;
}

export interface RecordBatchOptions {
  baseOffset?: bigint | number;
  /** Default -1 (Kafka's NO_PARTITION_LEADER_EPOCH, as producers send it). */
  partitionLeaderEpoch?: number;
  compression?: CompressionTypeId;
  /** gzip/zstd level; snappy framing. */
  compressionOptions?: CompressOptions;
  timestampType?: TimestampTypeId;
  /** With LOG_APPEND_TIME: the append time, stored as maxTimestamp. Default `now`. */
  logAppendTime?: number;
  /** Default -1: not idempotent. */
  producerId?: bigint | number;
  producerEpoch?: number;
  baseSequence?: number;
  isTransactional?: boolean;
  isControl?: boolean;
  /** Sets the delete-horizon attribute and stores the horizon as baseTimestamp (KIP-534). */
  deleteHorizonMs?: number;
  /** Overrides lastOffsetDelta (e.g. an empty batch that keeps the offsets of removed records). */
  lastOffsetDelta?: number;
  /** Timestamp for records without one; default Date.now(). */
  now?: number;
}

/**
 * The records flattened for the two passes: every byte field (key, value, then header key/value pairs) in
 * one array with its UTF-8 or byte length (-1 for null), so strings are measured once and written straight
 * into the batch without an intermediate Buffer.
 */
interface Prepared {
  fields: (Buffer | string | null)[];
  lengths: number[];
  timestamps: number[];
  offsetDeltas: number[];
  bodySizes: number[];
  headerCounts: number[];
  payloadSize: number;
  baseTimestamp: number;
  maxTimestamp: number;
  lastOffsetDelta: number;
  attributes: number;
}

function isInt32(v: number): boolean {
  return Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff;
}

function fieldLength(v: BytesInput): number {
  if (v === null || v === undefined) return -1;
  return typeof v === 'string' ? Buffer.byteLength(v, 'utf8') : v.length;
}

function sizeOfField(len: number): number {
  return len < 0 ? 1 : sizeOfVarint(len) + len;
}

function prepare(inputs: readonly RecordInput[], options: RecordBatchOptions): Prepared {
  const compression = options.compression ?? CompressionType.NONE;
  if (!isCompressionType(compression)) throw new EncodeError(`unknown compression type ${compression}`);
  const now = options.now ?? Date.now();
  const n = inputs.length;
  const timestamps = new Array<number>(n);
  const offsetDeltas = new Array<number>(n);
  const bodySizes = new Array<number>(n);
  const headerCounts = new Array<number>(n);
  const fields: (Buffer | string | null)[] = [];
  const lengths: number[] = [];
  let maxTimestamp = -1;
  for (let i = 0; i < n; i++) {
    const input = inputs[i]!;
    const timestamp = input.timestamp ?? now;
    if (!Number.isSafeInteger(timestamp)) throw new EncodeError(`record ${i}: timestamp ${timestamp} is not an integer`);
    if (timestamp > maxTimestamp) maxTimestamp = timestamp;
    const offsetDelta = input.offsetDelta ?? i;
    if (!isInt32(offsetDelta)) throw new EncodeError(`record ${i}: offsetDelta ${offsetDelta} is not an int32`);
    timestamps[i] = timestamp;
    offsetDeltas[i] = offsetDelta;
  }
  // Kafka's builder uses the first record's timestamp as baseTimestamp; with a delete horizon that field
  // holds the horizon and record timestamps are deltas from it.
  const baseTimestamp = options.deleteHorizonMs ?? (n > 0 ? timestamps[0]! : now);
  let payloadSize = 0;
  for (let i = 0; i < n; i++) {
    const input = inputs[i]!;
    const keyLen = fieldLength(input.key);
    const valueLen = fieldLength(input.value);
    fields.push(input.key ?? null, input.value ?? null);
    lengths.push(keyLen, valueLen);
    const headers = input.headers;
    const headerCount = headers?.length ?? 0;
    let size =
      1 +
      sizeOfVarlong(timestamps[i]! - baseTimestamp) +
      sizeOfVarint(offsetDeltas[i]!) +
      sizeOfField(keyLen) +
      sizeOfField(valueLen) +
      sizeOfVarint(headerCount);
    for (let h = 0; h < headerCount; h++) {
      const header = headers![h]!;
      if (typeof header.key !== 'string') throw new EncodeError(`record ${i}: header ${h} key must be a string`);
      const hkLen = Buffer.byteLength(header.key, 'utf8');
      const hvLen = fieldLength(header.value);
      fields.push(header.key, header.value ?? null);
      lengths.push(hkLen, hvLen);
      size += sizeOfField(hkLen) + sizeOfField(hvLen);
    }
    bodySizes[i] = size;
    headerCounts[i] = headerCount;
    payloadSize += sizeOfVarint(size) + size;
  }
  const timestampType = options.timestampType ?? TimestampType.CREATE_TIME;
  let attributes = compression;
  if (timestampType === TimestampType.LOG_APPEND_TIME) attributes |= BatchAttribute.TIMESTAMP_TYPE;
  if (options.isTransactional) attributes |= BatchAttribute.TRANSACTIONAL;
  if (options.isControl) attributes |= BatchAttribute.CONTROL;
  if (options.deleteHorizonMs !== undefined) attributes |= BatchAttribute.DELETE_HORIZON;
  return {
    fields,
    lengths,
    timestamps,
    offsetDeltas,
    bodySizes,
    headerCounts,
    payloadSize,
    baseTimestamp,
    maxTimestamp:
      timestampType === TimestampType.LOG_APPEND_TIME ? (options.logAppendTime ?? now) : n > 0 ? maxTimestamp : -1,
    lastOffsetDelta: options.lastOffsetDelta ?? (n > 0 ? offsetDeltas[n - 1]! : 0),
    attributes,
  };
}

function writeField(out: Buffer, pos: number, v: Buffer | string | null, len: number): number {
  if (v === null) return writeVarint(out, pos, -1);
  if (typeof v !== 'string') return writeBytes(out, pos, v);
  pos = writeVarint(out, pos, len);
  return pos + out.write(v, pos, len, 'utf8');
}

function writeRecords(p: Prepared, out: Buffer, start: number): number {
  let pos = start;
  let f = 0;
  for (let i = 0; i < p.bodySizes.length; i++) {
    pos = writeVarint(out, pos, p.bodySizes[i]!);
    out[pos++] = 0; // attributes
    pos = writeVarlong(out, pos, p.timestamps[i]! - p.baseTimestamp);
    pos = writeVarint(out, pos, p.offsetDeltas[i]!);
    pos = writeField(out, pos, p.fields[f]!, p.lengths[f]!); // key
    pos = writeField(out, pos, p.fields[f + 1]!, p.lengths[f + 1]!); // value
    f += 2;
    const headerCount = p.headerCounts[i]!;
    pos = writeVarint(out, pos, headerCount);
    for (let h = 0; h < headerCount; h++) {
      pos = writeField(out, pos, p.fields[f]!, p.lengths[f]!);
      pos = writeField(out, pos, p.fields[f + 1]!, p.lengths[f + 1]!);
      f += 2;
    }
  }
  return pos;
}

function writeHeader(p: Prepared, out: Buffer, recordCount: number, options: RecordBatchOptions): void {
  writeInt64(out, BatchField.BASE_OFFSET, options.baseOffset ?? 0);
  out.writeInt32BE(out.length - LOG_OVERHEAD, BatchField.BATCH_LENGTH);
  out.writeInt32BE(options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH, BatchField.PARTITION_LEADER_EPOCH);
  out.writeInt8(MAGIC_V2, BatchField.MAGIC);
  out.writeInt16BE(p.attributes, BatchField.ATTRIBUTES);
  out.writeInt32BE(p.lastOffsetDelta, BatchField.LAST_OFFSET_DELTA);
  writeInt64(out, BatchField.BASE_TIMESTAMP, p.baseTimestamp);
  writeInt64(out, BatchField.MAX_TIMESTAMP, p.maxTimestamp);
  writeInt64(out, BatchField.PRODUCER_ID, options.producerId ?? -1);
  out.writeInt16BE(options.producerEpoch ?? NO_PRODUCER_EPOCH, BatchField.PRODUCER_EPOCH);
  out.writeInt32BE(options.baseSequence ?? NO_SEQUENCE, BatchField.BASE_SEQUENCE);
  out.writeInt32BE(recordCount, BatchField.RECORD_COUNT);
  out.writeUInt32BE(crc32c(out.subarray(BatchField.ATTRIBUTES)), BatchField.CRC);
}

function assemble(p: Prepared, records: Buffer, options: RecordBatchOptions): Buffer {
  const out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + records.length);
  records.copy(out, RECORD_BATCH_OVERHEAD);
  writeHeader(p, out, p.bodySizes.length, options);
  return out;
}

/** The records of a batch, uncompressed, without the header (what a codec compresses). */
export function encodeRecordsPayload(inputs: readonly RecordInput[], options: RecordBatchOptions = {}): Buffer {
  const p = prepare(inputs, options);
  const payload = Buffer.allocUnsafe(p.payloadSize);
  writeRecords(p, payload, 0);
  return payload;
}

function buildUncompressed(p: Prepared, options: RecordBatchOptions): Buffer {
  const out = Buffer.allocUnsafe(RECORD_BATCH_OVERHEAD + p.payloadSize);
  writeRecords(p, out, RECORD_BATCH_OVERHEAD);
  writeHeader(p, out, p.bodySizes.length, options);
  return out;
}

/** Builds a batch synchronously: any compression but zstd. */
export function buildRecordBatchSync(inputs: readonly RecordInput[], options: RecordBatchOptions = {}): Buffer {
  const p = prepare(inputs, options);
  const compression = p.attributes & BatchAttribute.COMPRESSION_MASK;
  if (compression === CompressionType.NONE) return buildUncompressed(p, options);
  if (!hasSyncCodec(compression)) throw new EncodeError('zstd batches can only be built with buildRecordBatch()');
  const payload = Buffer.allocUnsafe(p.payloadSize);
  writeRecords(p, payload, 0);
  return assemble(p, compressSync(compression, payload, options.compressionOptions), options);
}

/** Builds a batch with any compression. */
export async function buildRecordBatch(inputs: readonly RecordInput[], options: RecordBatchOptions = {}): Promise<Buffer> {
  const p = prepare(inputs, options);
  const compression = p.attributes & BatchAttribute.COMPRESSION_MASK;
  if (compression === CompressionType.NONE) return buildUncompressed(p, options);
  const payload = Buffer.allocUnsafe(p.payloadSize);
  writeRecords(p, payload, 0);
  return assemble(p, await compress(compression, payload, options.compressionOptions), options);
}
