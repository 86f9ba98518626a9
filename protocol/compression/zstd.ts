/**
 * zstd (Kafka compression type 4, KIP-110; Produce v7+ / Fetch v10+) with @mongodb-js/zstd, which is
 * asynchronous only (it runs on the libuv thread pool).
 *
 * Writing: a standard zstd frame at Kafka's default level 3. The library streams, so its frames carry no
 * content size, like those of Java's zstd-jni ZstdOutputStream; Java, librdkafka and the zstd plugins of
 * kafkajs all read such frames.
 *
 * Reading: one or more frames (skippable frames allowed), with or without a content size. The library
 * has no output limit, so before calling it the input is walked (frame headers and block headers only,
 * nothing decoded) to compute the most it can produce:
 *
 *   frame  = magic 28 B5 2F FD | header descriptor | [window descriptor] | [dictionary id] | [content size]
 *            | block | block | ... | [xxh64 checksum, 4 bytes]
 *   block  = 3-byte LE header (last flag, type, size) | data
 *            raw: `size` bytes, decodes to `size`;  RLE: 1 byte, decodes to `size`;
 *            compressed: `size` bytes, decodes to at most min(window size, 128 KiB)
 *
 * The bound is the sum over blocks, which exceeds the true size by less than one block per frame for
 * encoders that fill their blocks (all of them do). A declared content size is checked against it but never
 * lowers it: libzstd rejects a frame that decodes to a size other than the declared one, but only after
 * decoding it. Input whose bound is well over the limit is refused before any
 * decoding (see zstdDecompress): a zstd bomb (RLE blocks reach about 32000:1) is never inflated.
 */
import * as zstdlib from '@mongodb-js/zstd';
import { CompressionError, DecompressionLimitError } from './errors.js';

const CODEC = 'zstd';

/** Kafka's default `compression.zstd.level`. */
export const ZSTD_DEFAULT_LEVEL = 3;

const FRAME_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const BLOCK_SIZE_MAX = 128 * 1024;

export function zstdCompress(data: Buffer, level = ZSTD_DEFAULT_LEVEL): Promise<Buffer> {
  return zstdlib.compress(data, level);
}

function fail(message: string, offset: number): never {
  throw new CompressionError(CODEC, message, { offset });
}

/**
 * Upper bound of the decoded size of the frames in `data`, validating their framing on the way (magic,
 * reserved bits, block types, every length within the input, nothing after the last frame).
 */
export function zstdDecodedSizeBound(data: Uint8Array): number {
  const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  let pos = 0;
  let total = 0;
  let frames = 0;
  while (pos < view.length) {
    if (pos + 4 > view.length) fail('truncated frame magic', pos);
    const magic = view.readUInt32LE(pos);
    if (((magic & SKIPPABLE_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      if (pos + 8 > view.length) fail('truncated skippable frame', pos);
      const size = view.readUInt32LE(pos + 4);
      if (pos + 8 + size > view.length) fail('truncated skippable frame', pos);
      pos += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) fail(`bad frame magic 0x${magic.toString(16)}`, pos);
    frames++;
    pos += 4;
    if (pos >= view.length) fail('truncated frame header', pos);
    const fhd = view[pos]!;
    pos++;
    const fcsFlag = fhd >>> 6;
    const singleSegment = (fhd & 0x20) !== 0;
    if ((fhd & 0x08) !== 0) fail('reserved frame header bit set', pos - 1);
    const hasChecksum = (fhd & 0x04) !== 0;
    const dictIdSize = [0, 1, 2, 4][fhd & 3]!;
    const fcsSize = fcsFlag === 0 ? (singleSegment ? 1 : 0) : [0, 2, 4, 8][fcsFlag]!;
    let windowSize = 0;
    if (!singleSegment) {
      if (pos >= view.length) fail('truncated window descriptor', pos);
      const wd = view[pos]!;
      pos++;
      const windowLog = 10 + (wd >>> 3);
      const windowBase = 2 ** windowLog;
      windowSize = windowBase + (windowBase / 8) * (wd & 7);
    }
    pos += dictIdSize;
    if (pos + fcsSize > view.length) fail('truncated frame header', pos);
    let contentSize = -1;
    if (fcsSize === 1) contentSize = view[pos]!;
    else if (fcsSize === 2) contentSize = view.readUInt16LE(pos) + 256;
    else if (fcsSize === 4) contentSize = view.readUInt32LE(pos);
    else if (fcsSize === 8) contentSize = view.readUInt32LE(pos + 4) * 2 ** 32 + view.readUInt32LE(pos);
    pos += fcsSize;
    if (singleSegment) windowSize = contentSize;
    const blockMax = Math.min(windowSize, BLOCK_SIZE_MAX);

    let frameBound = 0;
    for (;;) {
      if (pos + 3 > view.length) fail('truncated block header', pos);
      const header = view[pos]! | (view[pos + 1]! << 8) | (view[pos + 2]! << 16);
      const last = (header & 1) !== 0;
      const type = (header >>> 1) & 3;
      const size = header >>> 3;
      const at = pos;
      pos += 3;
      if (type === 3) fail('reserved block type', at);
      if (size > blockMax) fail(`block of ${size} bytes exceeds the maximum ${blockMax}`, at);
      if (type === 0) {
        frameBound += size;
        pos += size;
      } else if (type === 1) {
        frameBound += size;
        pos += 1;
      } else {
        frameBound += blockMax;
        pos += size;
      }
      if (pos > view.length) fail('truncated block', at);
      if (last) break;
    }
    if (hasChecksum) {
      if (pos + 4 > view.length) fail('truncated frame checksum', pos);
      pos += 4;
    }
    // The content size is not used for the bound: a frame could declare a small size and carry many blocks.
    // libzstd rejects a frame whose decoded size differs from its declared size.
    if (contentSize > frameBound) fail(`content size ${contentSize} larger than the blocks can hold`, pos);
    total += frameBound;
  }
  if (frames === 0) fail('no zstd frame', 0);
  return total;
}

/**
 * Decodes zstd frames. Input whose bound exceeds `maxOutputBytes` by more than one block (128 KiB) is
 * refused before decoding; otherwise it is decoded and the real size checked against the limit. The one
 * block of slack lets a frame without content size whose last block is partial decode when its real size is
 * within the limit, while keeping what the library may allocate within the limit plus 128 KiB.
 */
export async function zstdDecompress(data: Buffer, maxOutputBytes: number): Promise<Buffer> {
  const bound = zstdDecodedSizeBound(data);
  if (bound > maxOutputBytes + BLOCK_SIZE_MAX) {
    throw new DecompressionLimitError(CODEC, maxOutputBytes, `frames can decode to ${bound} bytes`);
  }
  let out: Buffer;
  try {
    out = await zstdlib.decompress(data);
  } catch (err) {
    throw new CompressionError(CODEC, `invalid frame (${(err as Error).message})`, { cause: err });
  }
  if (out.length > maxOutputBytes) {
    throw new DecompressionLimitError(CODEC, maxOutputBytes, `decoded ${out.length} bytes`);
  }
  return out;
}
