/**
 * Legacy message sets, magic 0 and 1 (Kafka's LegacyRecord, before KIP-98): decoding only, so the broker can
 * name what a very old client sent and read data written in that format.
 *
 *   offset      int64     absolute; inside a compressed v1 wrapper, relative (0, 1, ...)
 *   messageSize int32     bytes that follow
 *   crc         uint32    CRC-32 (IEEE, not Castagnoli) of magic..end
 *   magic       int8      0 or 1
 *   attributes  int8      bits 0-2 compression (gzip, snappy, lz4; never zstd), bit 3 timestamp type (v1)
 *   timestamp   int64     v1 only
 *   key         int32 length (-1 = null) + bytes
 *   value       int32 length (-1 = null) + bytes
 *
 * A compressed message is a wrapper whose value is a compressed message set of inner messages
 * (`expandLegacyWrapper`). In v1 the inner offsets are relative and the wrapper carries the absolute offset
 * of the last inner message (KIP-31); in v0 they are absolute. Wrappers do not nest.
 */
import { CompressionType, CompressionError, DecompressionLimitError, decompressSync, isCompressionType } from '../compression/index.js';
import type { DecompressOptions } from '../compression/index.js';
import { crc32 } from '../crc32c.js';
import { LOG_OVERHEAD, TimestampType, readInt64Number } from './batch.js';
import type { TimestampTypeId } from './batch.js';
import { CorruptRecordError, InvalidRecordError, RecordTooLargeError } from './errors.js';
import { frameEntryAt } from './split.js';

export const LEGACY_RECORD_OVERHEAD_V0 = 14;
export const LEGACY_RECORD_OVERHEAD_V1 = 22;

export interface LegacyMessage {
  /** The offset field as stored (relative inside a v1 wrapper until expanded). */
  offset: number;
  magic: 0 | 1;
  crc: number;
  attributes: number;
  compressionType: number;
  /** v1: CreateTime or LogAppendTime; v0 has no timestamps (CREATE_TIME with timestamp -1). */
  timestampType: TimestampTypeId;
  /** -1 for v0. */
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  /** Whole entry, offset and size included. */
  sizeInBytes: number;
}

export interface LegacyDecodeOptions {
  /** Drop an incomplete entry at the end instead of failing (Fetch responses). */
  allowPartialTail?: boolean;
}

function nullableBytes(buf: Buffer, pos: number, end: number, what: string): [Buffer | null, number] {
  if (pos + 4 > end) throw new CorruptRecordError(`Legacy message truncated before its ${what} length`, { offset: pos });
  const len = buf.readInt32BE(pos);
  pos += 4;
  if (len < 0) {
    if (len !== -1) throw new CorruptRecordError(`Invalid ${what} length ${len} in legacy message`, { offset: pos - 4 });
    return [null, pos];
  }
  if (len > end - pos) {
    throw new CorruptRecordError(`Legacy message ${what} of ${len} bytes overruns the message`, { offset: pos - 4 });
  }
  return [buf.subarray(pos, pos + len), pos + len];
}

/** Decodes the legacy message whose entry spans `buf[start, end)`. Checks its CRC-32. */
function decodeMessage(buf: Buffer, start: number, end: number): LegacyMessage {
  const size = end - start - LOG_OVERHEAD;
  let pos = start + LOG_OVERHEAD;
  const crc = buf.readUInt32BE(pos);
  const magic = buf.readInt8(pos + 4);
  if (magic !== 0 && magic !== 1) throw new CorruptRecordError(`Invalid magic found in record: ${magic}`, { offset: pos + 4 });
  const overhead = magic === 0 ? LEGACY_RECORD_OVERHEAD_V0 : LEGACY_RECORD_OVERHEAD_V1;
  if (size < overhead) {
    throw new CorruptRecordError(`Record is corrupt (size ${size} is below the v${magic} minimum ${overhead})`, {
      offset: start + 8,
    });
  }
  const computed = crc32(buf.subarray(pos + 4, end));
  if (computed !== crc) {
    throw new CorruptRecordError(`Record is corrupt (stored crc = ${crc}, computed crc = ${computed})`, { offset: pos });
  }
  const attributes = buf.readInt8(pos + 5);
  pos += 6;
  let timestamp = -1;
  let timestampType: TimestampTypeId = TimestampType.CREATE_TIME;
  if (magic === 1) {
    timestamp = readInt64Number(buf, pos);
    pos += 8;
    if (attributes & 0x08) timestampType = TimestampType.LOG_APPEND_TIME;
  }
  let key: Buffer | null;
  let value: Buffer | null;
  [key, pos] = nullableBytes(buf, pos, end, 'key');
  [value, pos] = nullableBytes(buf, pos, end, 'value');
  if (pos !== end) {
    throw new CorruptRecordError(`Legacy message has ${end - pos} bytes after its value`, { offset: pos });
  }
  return {
    offset: readInt64Number(buf, start),
    magic,
    crc,
    attributes,
    compressionType: attributes & 0x07,
    timestampType,
    timestamp,
    key,
    value,
    sizeInBytes: end - start,
  };
}

/**
 * Decodes a message set of magic 0/1 messages (wrappers are returned as they are; see expandLegacyWrapper).
 * Throws CorruptRecordError on framing and CRC errors and InvalidRecordError on a batch v2 inside the set.
 */
export function decodeLegacyMessageSet(buf: Buffer, options: LegacyDecodeOptions = {}): LegacyMessage[] {
  const messages: LegacyMessage[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const span = frameEntryAt(buf, pos);
    if (span === null) {
      if (options.allowPartialTail) break;
      throw new CorruptRecordError(`Truncated message set: ${buf.length - pos} bytes left at the end`, { offset: pos });
    }
    if (span.magic > 1) {
      throw new InvalidRecordError(`Record batch v${span.magic} found inside a legacy message set`, { offset: pos });
    }
    messages.push(decodeMessage(buf, span.start, span.end));
    pos = span.end;
  }
  return messages;
}

/**
 * The inner messages of a compressed wrapper, with absolute offsets (and, for a LogAppendTime v1 wrapper,
 * the wrapper's timestamp, as Kafka reads them). Keys and values are slices of the decompressed bytes.
 */
export function expandLegacyWrapper(wrapper: LegacyMessage, options: DecompressOptions = {}): LegacyMessage[] {
  const type = wrapper.compressionType;
  if (type === CompressionType.NONE) return [wrapper];
  if (!isCompressionType(type) || type === CompressionType.ZSTD) {
    throw new InvalidRecordError(`Compression type id ${type} is not valid for message format v${wrapper.magic}`);
  }
  if (wrapper.value === null) throw new InvalidRecordError('Compressed legacy message has a null value');
  let inner: Buffer;
  try {
    inner = decompressSync(type, wrapper.value, {
      ...options,
      // Kafka before 0.10 wrote the LZ4 header checksum over the wrong bytes; Kafka skips it for magic 0.
      lz4IgnoreHeaderChecksum: wrapper.magic === 0,
    });
  } catch (err) {
    if (err instanceof DecompressionLimitError) {
      throw new RecordTooLargeError(`Legacy wrapper decompresses past the limit: ${err.message}`, { cause: err });
    }
    if (err instanceof CompressionError) {
      throw new CorruptRecordError(`Failed to decompress legacy wrapper: ${err.message}`, { cause: err });
    }
    throw err;
  }
  const messages = decodeLegacyMessageSet(inner);
  if (messages.length === 0) throw new InvalidRecordError('Compressed legacy message has no inner messages');
  const last = messages[messages.length - 1]!;
  const base = wrapper.magic === 1 ? wrapper.offset - last.offset : 0;
  for (const m of messages) {
    if (m.magic !== wrapper.magic) {
      throw new InvalidRecordError(`Inner message magic ${m.magic} differs from the wrapper's ${wrapper.magic}`);
    }
    if (m.compressionType !== CompressionType.NONE) throw new InvalidRecordError('Inner messages must not be compressed');
    m.offset += base;
    if (wrapper.magic === 1 && wrapper.timestampType === TimestampType.LOG_APPEND_TIME) {
      m.timestamp = wrapper.timestamp;
      m.timestampType = TimestampType.LOG_APPEND_TIME;
    }
  }
  return messages;
}
