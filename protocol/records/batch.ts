/**
 * Record batch v2 (magic 2, KIP-98), Kafka's DefaultRecordBatch, as a zero-copy view over its bytes.
 *
 *   offset  field                 type    covered by CRC
 *   0       baseOffset            int64   no   (rewritten by the broker on append)
 *   8       batchLength           int32   no   (bytes after this field)
 *   12      partitionLeaderEpoch  int32   no   (rewritten by the broker on append)
 *   16      magic = 2             int8    no
 *   17      crc                   uint32  -    CRC-32C of bytes 21..end
 *   21      attributes            int16   yes  bits 0-2 compression, 3 timestamp type (1 = LogAppendTime),
 *                                              4 transactional, 5 control, 6 delete horizon set
 *   23      lastOffsetDelta       int32   yes
 *   27      baseTimestamp         int64   yes  (the delete horizon when bit 6 is set)
 *   35      maxTimestamp          int64   yes
 *   43      producerId            int64   yes  -1 = not idempotent, whatever epoch and sequence say
 *   51      producerEpoch         int16   yes
 *   53      baseSequence          int32   yes
 *   57      recordCount           int32   yes  never compressed
 *   61      records               -       yes  compressed as one stream when bits 0-2 are not 0
 *
 * Reading a header field reads the buffer; nothing is parsed up front or cached, so a view costs one object
 * and the broker's produce path (frame, check CRC, rewrite baseOffset) touches no record bytes.
 */
import {
  CompressionError,
  CompressionType,
  DecompressionLimitError,
  UnsupportedCompressionError,
  compressionName,
  decompress,
  decompressSync,
  hasSyncCodec,
  isCompressionType,
} from '../compression/index.js';
import type { DecompressOptions } from '../compression/index.js';
import { crc32c, crc32cCombine } from '../crc32c.js';
import {
  CorruptRecordError,
  InvalidRecordError,
  RecordTooLargeError,
  UnsupportedRecordCompressionError,
} from './errors.js';
import { RecordIterator } from './record.js';
import type { Record } from './record.js';

/** Byte offsets of the header fields. */
export const BatchField = {
  BASE_OFFSET: 0,
  BATCH_LENGTH: 8,
  PARTITION_LEADER_EPOCH: 12,
  MAGIC: 16,
  CRC: 17,
  ATTRIBUTES: 21,
  LAST_OFFSET_DELTA: 23,
  BASE_TIMESTAMP: 27,
  MAX_TIMESTAMP: 35,
  PRODUCER_ID: 43,
  PRODUCER_EPOCH: 51,
  BASE_SEQUENCE: 53,
  RECORD_COUNT: 57,
  RECORDS: 61,
} as const;

/** baseOffset + batchLength: the part of every entry in a log or message set before its own length counts. */
export const LOG_OVERHEAD = 12;
/** Header size of a batch v2 (Kafka's RECORD_BATCH_OVERHEAD). */
export const RECORD_BATCH_OVERHEAD = 61;
export const MAGIC_V2 = 2;

export const BatchAttribute = {
  COMPRESSION_MASK: 0x07,
  TIMESTAMP_TYPE: 0x08,
  TRANSACTIONAL: 0x10,
  CONTROL: 0x20,
  DELETE_HORIZON: 0x40,
} as const;

export const TimestampType = {
  CREATE_TIME: 0,
  LOG_APPEND_TIME: 1,
} as const;
export type TimestampTypeId = (typeof TimestampType)[keyof typeof TimestampType];

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_TIMESTAMP = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

const TWO_32 = 2 ** 32;
const EMPTY = Buffer.alloc(0);

/** int64 at `pos` as a Number (exact when |value| <= 2^53, as offsets and millisecond timestamps are). */
export function readInt64Number(buf: Buffer, pos: number): number {
  return buf.readInt32BE(pos) * TWO_32 + buf.readUInt32BE(pos + 4);
}

/** Writes a safe integer or a bigint as an int64. */
export function writeInt64(buf: Buffer, pos: number, v: bigint | number): void {
  if (typeof v === 'bigint') {
    buf.writeBigInt64BE(v, pos);
    return;
  }
  if (!Number.isSafeInteger(v)) throw new RangeError(`int64 field needs a safe integer or a bigint, got ${v}`);
  const hi = Math.floor(v / TWO_32);
  buf.writeInt32BE(hi, pos);
  buf.writeUInt32BE(v - hi * TWO_32, pos + 4);
}

/** Kafka's DefaultRecordBatch.incrementSequence: sequences wrap from Integer.MAX_VALUE to 0. */
export function incrementSequence(sequence: number, increment: number): number {
  if (sequence > 0x7fffffff - increment) return increment - (0x7fffffff - sequence) - 1;
  return sequence + increment;
}

/** Options for reading records: the decompression limit (maxOutputBytes). */
export type RecordsReadOptions = DecompressOptions;

export class RecordBatch {
  /** Exactly the batch's bytes: `LOG_OVERHEAD + batchLength` long. Rewrites go to this memory. */
  readonly buffer: Buffer;

  private constructor(buffer: Buffer) {
    this.buffer = buffer;
  }

  /**
   * A view over `buf`, which must hold exactly one batch v2: at least 61 bytes, batchLength equal to what
   * follows it, magic 2. Throws CorruptRecordError otherwise. Does not check the CRC (`validate()` does).
   */
  static wrap(buf: Buffer): RecordBatch {
    if (buf.length < RECORD_BATCH_OVERHEAD) {
      throw new CorruptRecordError(
        `Record batch is corrupt (the size ${buf.length} is smaller than the minimum allowed overhead ${RECORD_BATCH_OVERHEAD})`,
        { offset: 0 },
      );
    }
    const batchLength = buf.readInt32BE(BatchField.BATCH_LENGTH);
    if (batchLength + LOG_OVERHEAD !== buf.length) {
      throw new CorruptRecordError(
        `Record batch length ${batchLength} does not match the ${buf.length - LOG_OVERHEAD} bytes that follow it`,
        { offset: BatchField.BATCH_LENGTH },
      );
    }
    const magic = buf.readInt8(BatchField.MAGIC);
    if (magic !== MAGIC_V2) {
      throw new CorruptRecordError(`Invalid magic found in record batch: ${magic}`, { offset: BatchField.MAGIC });
    }
    return new RecordBatch(buf);
  }

  /** For callers that framed the bytes themselves (the splitter): no checks. */
  static unchecked(buf: Buffer): RecordBatch {
    return new RecordBatch(buf);
  }

  // ---- header fields -------------------------------------------------------------------------------

  get baseOffset(): bigint {
    return this.buffer.readBigInt64BE(BatchField.BASE_OFFSET);
  }

  /** baseOffset as a Number (exact below 2^53). */
  get baseOffsetNumber(): number {
    return readInt64Number(this.buffer, BatchField.BASE_OFFSET);
  }

  get batchLength(): number {
    return this.buffer.readInt32BE(BatchField.BATCH_LENGTH);
  }

  /** Bytes of the whole batch (Kafka's sizeInBytes). */
  get sizeInBytes(): number {
    return this.buffer.length;
  }

  get partitionLeaderEpoch(): number {
    return this.buffer.readInt32BE(BatchField.PARTITION_LEADER_EPOCH);
  }

  get magic(): number {
    return this.buffer.readInt8(BatchField.MAGIC);
  }

  /** The stored CRC-32C, unsigned. */
  get crc(): number {
    return this.buffer.readUInt32BE(BatchField.CRC);
  }

  get attributes(): number {
    return this.buffer.readInt16BE(BatchField.ATTRIBUTES);
  }

  /** Compression type id, 0-7 (only 0-4 are defined). */
  get compressionType(): number {
    return this.buffer[BatchField.ATTRIBUTES + 1]! & BatchAttribute.COMPRESSION_MASK;
  }

  get isCompressed(): boolean {
    return this.compressionType !== CompressionType.NONE;
  }

  get timestampType(): TimestampTypeId {
    return this.buffer[BatchField.ATTRIBUTES + 1]! & BatchAttribute.TIMESTAMP_TYPE ? 1 : 0;
  }

  get isTransactional(): boolean {
    return (this.buffer[BatchField.ATTRIBUTES + 1]! & BatchAttribute.TRANSACTIONAL) !== 0;
  }

  get isControl(): boolean {
    return (this.buffer[BatchField.ATTRIBUTES + 1]! & BatchAttribute.CONTROL) !== 0;
  }

  get hasDeleteHorizon(): boolean {
    return (this.buffer[BatchField.ATTRIBUTES + 1]! & BatchAttribute.DELETE_HORIZON) !== 0;
  }

  /** The delete horizon (kept in baseTimestamp when the attribute is set, KIP-534), or null. */
  get deleteHorizonMs(): number | null {
    return this.hasDeleteHorizon ? this.baseTimestamp : null;
  }

  get lastOffsetDelta(): number {
    return this.buffer.readInt32BE(BatchField.LAST_OFFSET_DELTA);
  }

  get lastOffset(): bigint {
    return this.baseOffset + BigInt(this.lastOffsetDelta);
  }

  get lastOffsetNumber(): number {
    return this.baseOffsetNumber + this.lastOffsetDelta;
  }

  /** The offset after this batch (Kafka's nextOffset). */
  get nextOffsetNumber(): number {
    return this.lastOffsetNumber + 1;
  }

  get baseTimestamp(): number {
    return readInt64Number(this.buffer, BatchField.BASE_TIMESTAMP);
  }

  get maxTimestamp(): number {
    return readInt64Number(this.buffer, BatchField.MAX_TIMESTAMP);
  }

  get producerId(): bigint {
    return this.buffer.readBigInt64BE(BatchField.PRODUCER_ID);
  }

  /** producerId as a Number (exact below 2^53; Kafka allocates producer ids upwards from 0). */
  get producerIdNumber(): number {
    return readInt64Number(this.buffer, BatchField.PRODUCER_ID);
  }

  /** Kafka's hasProducerId: producerId > -1. Idempotence is judged on the id alone. */
  get hasProducerId(): boolean {
    return this.buffer.readInt32BE(BatchField.PRODUCER_ID) >= 0;
  }

  get producerEpoch(): number {
    return this.buffer.readInt16BE(BatchField.PRODUCER_EPOCH);
  }

  get baseSequence(): number {
    return this.buffer.readInt32BE(BatchField.BASE_SEQUENCE);
  }

  /** Sequence of the last record (wrapping as Kafka's), or -1 without a sequence. */
  get lastSequence(): number {
    const base = this.baseSequence;
    return base === NO_SEQUENCE ? NO_SEQUENCE : incrementSequence(base, this.lastOffsetDelta);
  }

  get recordCount(): number {
    return this.buffer.readInt32BE(BatchField.RECORD_COUNT);
  }

  // ---- integrity -----------------------------------------------------------------------------------

  /** CRC-32C of attributes..end, as it should be stored. */
  computeCrc(): number {
    return crc32c(this.buffer.subarray(BatchField.ATTRIBUTES));
  }

  /**
   * CRC-32C of the whole batch, baseOffset to end, as it is now: the 21 bytes before attributes read afresh
   * and joined to the stored CRC (crc32cCombine), the rest not read again. Right only while the stored CRC is
   * (`validate()` checked it, or the broker set it), as a store that checksums the batch may then rely on.
   */
  crc32cOfWhole(): number {
    const head = crc32c(this.buffer.subarray(0, BatchField.ATTRIBUTES));
    return crc32cCombine(head, this.crc, this.buffer.length - BatchField.ATTRIBUTES);
  }

  /** Kafka's isValid: the stored CRC matches. */
  isValid(): boolean {
    return this.crc === this.computeCrc();
  }

  /**
   * Kafka's ensureValid: the framing (size, batchLength against the buffer, magic; already true of a view
   * made by `wrap`) and then the CRC. Throws CorruptRecordError.
   */
  validate(): void {
    const buf = this.buffer;
    if (
      buf.length < RECORD_BATCH_OVERHEAD ||
      buf.readInt32BE(BatchField.BATCH_LENGTH) + LOG_OVERHEAD !== buf.length ||
      buf.readInt8(BatchField.MAGIC) !== MAGIC_V2
    ) {
      RecordBatch.wrap(buf); // throws the specific framing error
    }
    const stored = this.crc;
    const computed = this.computeCrc();
    if (stored !== computed) {
      throw new CorruptRecordError(`Record is corrupt (stored crc = ${stored}, computed crc = ${computed})`, {
        offset: BatchField.CRC,
      });
    }
  }

  // ---- in-place rewrites ---------------------------------------------------------------------------

  /** Sets baseOffset. Not covered by the CRC: no recomputation. */
  setBaseOffset(offset: bigint | number): void {
    writeInt64(this.buffer, BatchField.BASE_OFFSET, offset);
  }

  /** Sets baseOffset so that the last offset is `offset` (Kafka's setLastOffset). */
  setLastOffset(offset: bigint | number): void {
    if (typeof offset === 'bigint') this.setBaseOffset(offset - BigInt(this.lastOffsetDelta));
    else this.setBaseOffset(offset - this.lastOffsetDelta);
  }

  /** Sets partitionLeaderEpoch. Not covered by the CRC: no recomputation. */
  setPartitionLeaderEpoch(epoch: number): void {
    this.buffer.writeInt32BE(epoch, BatchField.PARTITION_LEADER_EPOCH);
  }

  /**
   * Kafka's setMaxTimestamp(timestampType, maxTimestamp): sets the timestamp type attribute and maxTimestamp,
   * then recomputes the CRC (both fields are covered). A no-op when both already have those values. Used
   * with LOG_APPEND_TIME when the topic's message.timestamp.type is LogAppendTime: every record of the batch
   * then reads its timestamp as maxTimestamp.
   */
  setMaxTimestamp(timestampType: TimestampTypeId, maxTimestamp: number): void {
    if (this.timestampType === timestampType && this.maxTimestamp === maxTimestamp) return;
    const low = this.buffer[BatchField.ATTRIBUTES + 1]!;
    this.buffer[BatchField.ATTRIBUTES + 1] =
      timestampType === TimestampType.LOG_APPEND_TIME
        ? low | BatchAttribute.TIMESTAMP_TYPE
        : low & ~BatchAttribute.TIMESTAMP_TYPE;
    writeInt64(this.buffer, BatchField.MAX_TIMESTAMP, maxTimestamp);
    this.buffer.writeUInt32BE(this.computeCrc(), BatchField.CRC);
  }

  /** Marks the batch LogAppendTime with the broker's append time (new CRC). */
  setLogAppendTime(timestamp: number): void {
    this.setMaxTimestamp(TimestampType.LOG_APPEND_TIME, timestamp);
  }

  // ---- records -------------------------------------------------------------------------------------

  /** The bytes after recordCount, as stored (compressed when the batch is). A slice, not a copy. */
  get recordsBytes(): Buffer {
    return this.buffer.subarray(RECORD_BATCH_OVERHEAD);
  }

  /**
   * Checks what must hold before the payload is worth decompressing: a known codec and a non-negative record
   * count. Returns the payload when no decompression is needed (uncompressed, or no records: Kafka does not
   * open the compressed stream of an empty batch), else null.
   */
  private payloadWithoutDecompression(): Buffer | null {
    const type = this.compressionType;
    if (!isCompressionType(type)) {
      throw new InvalidRecordError(`Unknown compression type id ${type} in record batch attributes`, {
        offset: BatchField.ATTRIBUTES,
      });
    }
    const count = this.recordCount;
    if (count < 0) {
      throw new InvalidRecordError(`Found invalid record count ${count} in magic v2 batch`, {
        offset: BatchField.RECORD_COUNT,
      });
    }
    if (type === CompressionType.NONE) return this.recordsBytes;
    if (count === 0) return EMPTY;
    return null;
  }

  private codecError(err: unknown): unknown {
    if (err instanceof DecompressionLimitError) {
      return new RecordTooLargeError(`Records of the batch decompress past the limit: ${err.message}`, {
        offset: RECORD_BATCH_OVERHEAD,
        cause: err,
      });
    }
    if (err instanceof CompressionError) {
      return new CorruptRecordError(`Failed to decompress record stream: ${err.message}`, {
        offset: RECORD_BATCH_OVERHEAD,
        cause: err,
      });
    }
    if (err instanceof UnsupportedCompressionError) {
      return new UnsupportedRecordCompressionError(err.message, { offset: BatchField.ATTRIBUTES, cause: err });
    }
    return err;
  }

  /**
   * The records payload, decompressed: a slice for an uncompressed batch, a new bounded buffer otherwise.
   * Synchronous for every codec but zstd (which throws UnsupportedRecordCompressionError: use
   * `recordsPayload()`).
   */
  recordsPayloadSync(options?: RecordsReadOptions): Buffer {
    const direct = this.payloadWithoutDecompression();
    if (direct !== null) return direct;
    const type = this.compressionType;
    if (!hasSyncCodec(type)) {
      throw new UnsupportedRecordCompressionError(
        `${compressionName(type)} batches decompress asynchronously only; use recordsPayload()`,
      );
    }
    try {
      return decompressSync(type, this.recordsBytes, options);
    } catch (err) {
      throw this.codecError(err);
    }
  }

  /** The records payload, decompressed, for any codec. */
  async recordsPayload(options?: RecordsReadOptions): Promise<Buffer> {
    const direct = this.payloadWithoutDecompression();
    if (direct !== null) return direct;
    try {
      return await decompress(this.compressionType, this.recordsBytes, options);
    } catch (err) {
      throw this.codecError(err);
    }
  }

  /** Iterates the records of `payload` (from recordsPayload/recordsPayloadSync). */
  iterateRecords(payload: Buffer): RecordIterator {
    return new RecordIterator(payload, this.recordCount, {
      baseOffset: this.baseOffsetNumber,
      baseTimestamp: this.baseTimestamp,
      logAppendTime: this.timestampType === TimestampType.LOG_APPEND_TIME ? this.maxTimestamp : null,
      // Error offsets count from the batch start when the payload is the batch's own bytes.
      errorOffsetBase: this.isCompressed ? 0 : RECORD_BATCH_OVERHEAD,
    });
  }

  /**
   * The records, synchronously (every codec but zstd). Uncompressed keys and values are slices of the
   * batch. Throws RecordsError subclasses only.
   */
  records(options?: RecordsReadOptions): RecordIterator {
    return this.iterateRecords(this.recordsPayloadSync(options));
  }

  /** All records, for any codec. */
  async readRecords(options?: RecordsReadOptions): Promise<Record[]> {
    return this.iterateRecords(await this.recordsPayload(options)).toArray();
  }

  toString(): string {
    return (
      `RecordBatch(magic=${this.magic}, offsets=[${this.baseOffset}, ${this.lastOffset}], ` +
      `count=${this.recordCount}, size=${this.sizeInBytes}, compression=${this.compressionType}, ` +
      `producerId=${this.producerId}, epoch=${this.producerEpoch}, sequence=${this.baseSequence}, ` +
      `transactional=${this.isTransactional}, control=${this.isControl}, crc=${this.crc})`
    );
  }
}
