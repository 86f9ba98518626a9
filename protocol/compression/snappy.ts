/**
 * Snappy (Kafka compression type 2), in the two framings Kafka clients use.
 *
 * Raw: one Snappy block, as librdkafka, kafkajs-snappy, franz-go and sarama write by default.
 *
 *   [uncompressed length: uvarint][elements: literal | copy ...]
 *
 * Xerial: what Java's client writes (org.xerial.snappy.SnappyOutputStream, 32 KiB chunks):
 *
 *   0       8         12             16
 *   +-------+---------+--------------+---------------------------+---------------------------+--
 *   | magic | version | min-compat   | int32 BE length | block   | int32 BE length | block   | ...
 *   +-------+---------+--------------+---------------------------+---------------------------+--
 *   82 53 4E 41 50 50 59 00, version 1, min-compat 1, then raw Snappy blocks of at most 32 KiB input each.
 *
 * Reading: a payload that starts with the xerial magic is read as xerial, anything else as raw, which is the
 * detection Java (SnappyInputStream falls back to raw), librdkafka and kafkajs-snappy perform.
 *
 * Writing: xerial by default. Java's consumer is the reference reader and every other client reads xerial
 * because Java producers write it, so xerial output is readable by everything that reads Kafka; and its
 * 32 KiB chunks keep each block's declared length small. Raw is available for callers that want it.
 *
 * The raw block decoder is written here rather than taken from snappyjs: snappyjs's decoder writes through
 * a typed array without checking the output bounds of copies or that the declared length was produced, so
 * corrupt input yields silently wrong bytes. This decoder rejects every malformed element and checks the
 * declared length against the caller's limit before allocating. Compression uses snappyjs.
 */
import snappyjs from 'snappyjs';
import { CompressionError, DecompressionLimitError } from './errors.js';

const CODEC = 'snappy';

export const XERIAL_MAGIC: Buffer = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
export const XERIAL_HEADER_SIZE = 16;
/** Java's SnappyOutputStream default block size, which Kafka uses. */
export const XERIAL_BLOCK_SIZE = 32 * 1024;

export type SnappyFraming = 'xerial' | 'raw';

export function isXerial(data: Uint8Array): boolean {
  if (data.length < XERIAL_MAGIC.length) return false;
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (data[i] !== XERIAL_MAGIC[i]) return false;
  return true;
}

/** One raw Snappy block. */
export function snappyCompressRaw(data: Buffer): Buffer {
  return snappyjs.compress(data);
}

/** Xerial framing: header, then 32 KiB chunks each compressed as one raw block. */
export function snappyCompressXerial(data: Buffer, blockSize = XERIAL_BLOCK_SIZE): Buffer {
  const header = Buffer.allocUnsafe(XERIAL_HEADER_SIZE);
  XERIAL_MAGIC.copy(header, 0);
  header.writeInt32BE(1, 8); // version
  header.writeInt32BE(1, 12); // minimum compatible version
  const parts: Buffer[] = [header];
  let total = XERIAL_HEADER_SIZE;
  for (let off = 0; off < data.length; off += blockSize) {
    const block = snappyjs.compress(data.subarray(off, Math.min(off + blockSize, data.length)));
    const len = Buffer.allocUnsafe(4);
    len.writeInt32BE(block.length, 0);
    parts.push(len, block);
    total += 4 + block.length;
  }
  return Buffer.concat(parts, total);
}

export function snappyCompress(data: Buffer, framing: SnappyFraming = 'xerial'): Buffer {
  return framing === 'xerial' ? snappyCompressXerial(data) : snappyCompressRaw(data);
}

/** Reads the uvarint length preamble of a raw block: [length, bytes used], or throws. */
function readPreamble(src: Uint8Array, start: number, end: number): [number, number] {
  let result = 0;
  for (let i = 0; i < 5; i++) {
    const p = start + i;
    if (p >= end) throw new CompressionError(CODEC, 'truncated length preamble', { offset: start });
    const b = src[p]!;
    if (i === 4 && b > 0x0f) throw new CompressionError(CODEC, 'length preamble exceeds 32 bits', { offset: start });
    result += (b & 0x7f) * 2 ** (7 * i);
    if ((b & 0x80) === 0) return [result, i + 1];
  }
  throw new CompressionError(CODEC, 'length preamble exceeds 32 bits', { offset: start });
}

/**
 * The most a raw block can expand: a 3-byte copy element produces at most 64 bytes, nothing does better, so
 * no valid block decodes to more than 64/3 times its size.
 */
const MAX_EXPANSION = 22;

/**
 * Declared uncompressed length of the raw block at `src[start, end)`. A length the block could not produce
 * (more than MAX_EXPANSION times its size) is corrupt, and is refused before anything is allocated for it.
 */
export function snappyRawLength(src: Uint8Array, start = 0, end = src.length): number {
  const length = readPreamble(src, start, end)[0];
  if (length > MAX_EXPANSION * (end - start)) {
    throw new CompressionError(CODEC, `declared length ${length} is impossible for a ${end - start}-byte block`, {
      offset: start,
    });
  }
  return length;
}

/**
 * Decodes the raw block at `src[start, end)` into `out` at `outStart`; the block's declared length must fit
 * (the caller sized `out` from `snappyRawLength`). Returns the number of bytes written, always the declared
 * length. Every element is checked: a literal or copy that would read or write out of bounds, a copy offset
 * of 0 or before the start of the block's output, and a stream that ends early or late all throw.
 */
export function snappyDecodeRawInto(src: Buffer, start: number, end: number, out: Buffer, outStart: number): number {
  const [length, used] = readPreamble(src, start, end);
  snappyRawLength(src, start, end);
  const outEnd = outStart + length;
  if (outEnd > out.length) throw new CompressionError(CODEC, 'output buffer too small for declared length');
  let ip = start + used;
  let op = outStart;
  while (ip < end) {
    const tag = src[ip]!;
    const tagAt = ip;
    ip++;
    switch (tag & 3) {
      case 0: {
        let len = tag >>> 2;
        if (len >= 60) {
          const extra = len - 59; // 1-4 little-endian bytes hold length-1
          if (ip + extra > end) throw new CompressionError(CODEC, 'truncated literal length', { offset: tagAt });
          len = 0;
          for (let k = extra - 1; k >= 0; k--) len = len * 256 + src[ip + k]!;
          ip += extra;
        }
        len += 1;
        if (ip + len > end) throw new CompressionError(CODEC, 'literal runs past the input', { offset: tagAt });
        if (op + len > outEnd) throw new CompressionError(CODEC, 'literal runs past the declared length', { offset: tagAt });
        if (len < 32) {
          for (let k = 0; k < len; k++) out[op + k] = src[ip + k]!;
        } else {
          src.copy(out, op, ip, ip + len);
        }
        ip += len;
        op += len;
        continue;
      }
      case 1: {
        if (ip + 1 > end) throw new CompressionError(CODEC, 'truncated copy', { offset: tagAt });
        const len = ((tag >>> 2) & 7) + 4;
        const offset = ((tag >>> 5) << 8) | src[ip]!;
        ip += 1;
        op = copyMatch(out, op, offset, len, outStart, outEnd, tagAt);
        continue;
      }
      case 2: {
        if (ip + 2 > end) throw new CompressionError(CODEC, 'truncated copy', { offset: tagAt });
        const len = (tag >>> 2) + 1;
        const offset = src[ip]! | (src[ip + 1]! << 8);
        ip += 2;
        op = copyMatch(out, op, offset, len, outStart, outEnd, tagAt);
        continue;
      }
      default: {
        if (ip + 4 > end) throw new CompressionError(CODEC, 'truncated copy', { offset: tagAt });
        const len = (tag >>> 2) + 1;
        const offset = (src[ip]! | (src[ip + 1]! << 8) | (src[ip + 2]! << 16) | (src[ip + 3]! << 24)) >>> 0;
        ip += 4;
        op = copyMatch(out, op, offset, len, outStart, outEnd, tagAt);
      }
    }
  }
  if (op !== outEnd) {
    throw new CompressionError(CODEC, `block produced ${op - outStart} bytes, declared ${length}`, { offset: end });
  }
  return length;
}

function copyMatch(
  out: Buffer,
  op: number,
  offset: number,
  len: number,
  outStart: number,
  outEnd: number,
  tagAt: number,
): number {
  if (offset === 0 || offset > op - outStart) {
    throw new CompressionError(CODEC, `copy offset ${offset} outside the output`, { offset: tagAt });
  }
  if (op + len > outEnd) throw new CompressionError(CODEC, 'copy runs past the declared length', { offset: tagAt });
  let from = op - offset;
  if (offset >= len && len >= 32) {
    out.copyWithin(op, from, from + len);
    return op + len;
  }
  // Overlapping copies repeat the last `offset` bytes; a forward byte loop does exactly that.
  const stop = op + len;
  while (op < stop) out[op++] = out[from++]!;
  return op;
}

function decodeRaw(data: Buffer, maxOutputBytes: number): Buffer {
  const length = snappyRawLength(data);
  if (length > maxOutputBytes) {
    throw new DecompressionLimitError(CODEC, maxOutputBytes, `raw block declares ${length} bytes`);
  }
  const out = Buffer.allocUnsafe(length);
  snappyDecodeRawInto(data, 0, data.length, out, 0);
  return out;
}

function decodeXerial(data: Buffer, maxOutputBytes: number): Buffer {
  if (data.length < XERIAL_HEADER_SIZE) throw new CompressionError(CODEC, 'truncated xerial header', { offset: 0 });
  const minCompat = data.readInt32BE(12);
  if (minCompat > 1) {
    throw new CompressionError(CODEC, `xerial stream needs reader version ${minCompat}`, { offset: 12 });
  }
  // First pass: frame the chunks and add up their declared lengths, so the output is allocated once and
  // only after the total is known to be within the limit.
  let total = 0;
  let pos = XERIAL_HEADER_SIZE;
  while (pos < data.length) {
    if (pos + 4 > data.length) throw new CompressionError(CODEC, 'truncated xerial chunk length', { offset: pos });
    const len = data.readInt32BE(pos);
    if (len < 0 || pos + 4 + len > data.length) {
      throw new CompressionError(CODEC, `xerial chunk length ${len} exceeds the input`, { offset: pos });
    }
    total += snappyRawLength(data, pos + 4, pos + 4 + len);
    if (total > maxOutputBytes) {
      throw new DecompressionLimitError(CODEC, maxOutputBytes, `xerial chunks declare at least ${total} bytes`);
    }
    pos += 4 + len;
  }
  const out = Buffer.allocUnsafe(total);
  let op = 0;
  pos = XERIAL_HEADER_SIZE;
  while (pos < data.length) {
    const len = data.readInt32BE(pos);
    op += snappyDecodeRawInto(data, pos + 4, pos + 4 + len, out, op);
    pos += 4 + len;
  }
  return out;
}

/** Decodes raw or xerial-framed Snappy, never producing (or allocating) more than `maxOutputBytes`. */
export function snappyDecompress(data: Buffer, maxOutputBytes: number): Buffer {
  return isXerial(data) ? decodeXerial(data, maxOutputBytes) : decodeRaw(data, maxOutputBytes);
}
