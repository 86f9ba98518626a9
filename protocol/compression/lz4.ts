/**
 * LZ4 (Kafka compression type 3): the LZ4 frame format (KIP-57), block coding by lz4-napi (lz4_flex).
 *
 *   +-----------+-----+----+--------------+----+---------------------------------------+-------+----------+
 *   | 04 22 4D 18 | FLG | BD | content size | HC | block: [u32 LE size|flag][data][xxh32]... | 0000 | xxh32 all |
 *   +-----------+-----+----+--------------+----+---------------------------------------+-------+----------+
 *     magic      FLG: version 01, block independence, block checksum, content size, content checksum
 *                BD: maximum block size (4 = 64 KiB, 5 = 256 KiB, 6 = 1 MiB, 7 = 4 MiB)
 *                content size (8 bytes) only if FLG says so; HC = second byte of xxh32(FLG..content size)
 *                a block whose size has the high bit set is stored uncompressed; block checksum only if FLG
 *                says so; end mark 0; content checksum only if FLG says so
 *
 * Writing: what Java's Lz4BlockOutputStream writes: FLG 0x60 (independent blocks, no checksums, no content
 * size), BD 0x40 (64 KiB blocks), a block stored uncompressed when compressing does not make it smaller.
 * lz4-napi's own frame encoder picks the block size from the input length, so frames are assembled here from
 * its block encoder.
 *
 * Reading: any frame Java, librdkafka or kafkajs-lz4 (npm `lz4`: 4 MiB blocks and a content checksum) writes,
 * concatenated frames and skippable frames included. Like Java, frames with dependent blocks or a dictionary
 * id are refused. Checksums present in the frame are verified. For legacy magic-0 messages, Kafka before 0.10
 * computed the header checksum over the magic too (KAFKA-3160); `ignoreHeaderChecksum` skips the check, as
 * Kafka's reader does for magic 0.
 *
 * Bounded: the frame is walked first (headers and block sizes, no decoding). A compressed block never decodes
 * to more than the frame's maximum block size, so the walk gives an upper bound. Blocks are then decoded one
 * at a time with an exact output budget, so a frame whose bound is loose (4 MiB blocks holding little data)
 * still decodes when its real size fits; a frame of large blocks (over 256 KiB) whose bound is within the
 * limit is handed to lz4_flex's frame decoder in one call instead.
 */
import * as lz4napi from 'lz4-napi';
import { CompressionError, DecompressionLimitError } from './errors.js';
import { xxh32 } from './xxhash32.js';

const CODEC = 'lz4';

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const UNCOMPRESSED_FLAG = 0x80000000;

/** Kafka's LZ4 block size (Lz4BlockOutputStream.BLOCKSIZE_64KB). */
export const LZ4_BLOCK_SIZE = 64 * 1024;
const FLG_JAVA = 0x60; // version 01, independent blocks
const BD_64KB = 0x40;

/** Up to this block size a frame is decoded block by block (see lz4DecompressSync). */
const SMALL_BLOCK_MAX = 256 * 1024;

const BLOCK_MAX_BY_ID = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

export interface Lz4DecompressOptions {
  /** Skip the frame header checksum (Kafka's reader does for magic-0 messages, whose writers got it wrong). */
  ignoreHeaderChecksum?: boolean;
}

// The frame header written for every frame: magic, FLG, BD, HC.
const HEADER: Buffer = (() => {
  const h = Buffer.allocUnsafe(7);
  h.writeUInt32LE(FRAME_MAGIC, 0);
  h[4] = FLG_JAVA;
  h[5] = BD_64KB;
  h[6] = (xxh32(h, 4, 6) >>> 8) & 0xff;
  return h;
})();

/**
 * One frame as Java writes it. Each 64 KiB block is compressed independently by lz4_flex's block encoder
 * (which prefixes the uncompressed size as a u32; that prefix is dropped).
 */
export function lz4CompressSync(data: Buffer): Buffer {
  const parts: Buffer[] = [HEADER];
  let total = HEADER.length;
  for (let off = 0; off < data.length; off += LZ4_BLOCK_SIZE) {
    const block = data.subarray(off, Math.min(off + LZ4_BLOCK_SIZE, data.length));
    const prefixed = lz4napi.compressSync(block);
    const size = Buffer.allocUnsafe(4);
    if (prefixed.length - 4 < block.length) {
      size.writeUInt32LE(prefixed.length - 4, 0);
      parts.push(size, prefixed.subarray(4));
      total += prefixed.length;
    } else {
      size.writeUInt32LE((block.length | UNCOMPRESSED_FLAG) >>> 0, 0);
      parts.push(size, block);
      total += 4 + block.length;
    }
  }
  parts.push(Buffer.alloc(4)); // end mark
  total += 4;
  return Buffer.concat(parts, total);
}

interface FrameBlock {
  /** Start of the block data. */
  start: number;
  size: number;
  compressed: boolean;
}

interface WalkedFrame {
  start: number;
  end: number;
  blockMax: number;
  blocks: FrameBlock[];
  contentChecksum: boolean;
  /** The declared content size, or -1. Checked after decoding; never trusted for the bound. */
  contentSize: number;
  /** Upper bound of the decoded size, from the blocks alone. */
  bound: number;
}

function fail(message: string, offset: number): never {
  throw new CompressionError(CODEC, message, { offset });
}

/** Validates one frame's structure starting at `pos` (the magic) and lists its blocks. */
function walkFrame(data: Buffer, pos: number, ignoreHeaderChecksum: boolean): WalkedFrame {
  const start = pos;
  if (pos + 7 > data.length) fail('truncated frame header', pos);
  const flg = data[pos + 4]!;
  const bd = data[pos + 5]!;
  if (flg >>> 6 !== 1) fail(`unsupported frame version ${flg >>> 6}`, pos + 4);
  if ((flg & 0x02) !== 0) fail('reserved FLG bit set', pos + 4);
  if ((flg & 0x20) === 0) fail('dependent blocks are not supported (Kafka writes independent blocks)', pos + 4);
  if ((flg & 0x01) !== 0) fail('frames with a dictionary id are not supported', pos + 4);
  if ((bd & 0x8f) !== 0) fail('reserved BD bits set', pos + 5);
  const blockMax = BLOCK_MAX_BY_ID[(bd >>> 4) & 7]!;
  if (blockMax === 0) fail(`invalid block maximum size id ${(bd >>> 4) & 7}`, pos + 5);
  const blockChecksum = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  let p = pos + 6;
  let contentSize = -1;
  if (hasContentSize) {
    if (p + 8 + 1 > data.length) fail('truncated frame header', p);
    const lo = data.readUInt32LE(p);
    const hi = data.readUInt32LE(p + 4);
    contentSize = hi * 2 ** 32 + lo;
    p += 8;
  }
  if (!ignoreHeaderChecksum) {
    const hc = (xxh32(data, pos + 4, p) >>> 8) & 0xff;
    if (data[p] !== hc) fail('frame header checksum mismatch', p);
  }
  p += 1;

  const blocks: FrameBlock[] = [];
  let bound = 0;
  for (;;) {
    if (p + 4 > data.length) fail('truncated block size', p);
    const word = data.readUInt32LE(p);
    p += 4;
    if (word === 0) break; // end mark
    const size = (word & ~UNCOMPRESSED_FLAG) >>> 0;
    const compressed = (word & UNCOMPRESSED_FLAG) === 0;
    if (size > blockMax) fail(`block of ${size} bytes exceeds the frame's maximum ${blockMax}`, p - 4);
    if (p + size + (blockChecksum ? 4 : 0) > data.length) fail('truncated block', p);
    if (blockChecksum && data.readUInt32LE(p + size) !== xxh32(data, p, p + size)) {
      fail('block checksum mismatch', p + size);
    }
    blocks.push({ start: p, size, compressed });
    bound += compressed ? blockMax : size;
    p += size + (blockChecksum ? 4 : 0);
  }
  if (contentChecksum) {
    if (p + 4 > data.length) fail('truncated content checksum', p);
    p += 4;
  }
  if (contentSize > bound) fail(`content size ${contentSize} larger than the blocks can hold`, pos + 6);
  return { start, end: p, blockMax, blocks, contentChecksum, contentSize, bound };
}

/** Decodes a walked frame block by block, never producing more than `budget` bytes. */
function decodeBlocks(data: Buffer, frame: WalkedFrame, budget: number, limit: number): Buffer[] {
  const out: Buffer[] = [];
  let produced = 0;
  let scratch = Buffer.allocUnsafe(0);
  for (const block of frame.blocks) {
    const left = budget - produced;
    if (!block.compressed) {
      if (block.size > left) throw new DecompressionLimitError(CODEC, limit, 'uncompressed block past the limit');
      out.push(Buffer.from(data.subarray(block.start, block.start + block.size))); // never alias the input
      produced += block.size;
      continue;
    }
    // lz4_flex's size-prefixed block API takes the u32 LE prefix as the output capacity and fails rather
    // than write past it.
    if (scratch.length < 4 + block.size) scratch = Buffer.allocUnsafe(4 + block.size);
    data.copy(scratch, 4, block.start, block.start + block.size);
    const cap = Math.min(frame.blockMax, left);
    scratch.writeUInt32LE(cap, 0);
    const input = scratch.subarray(0, 4 + block.size);
    let decoded: Buffer;
    try {
      decoded = lz4napi.uncompressSync(input);
    } catch (err) {
      if (cap < frame.blockMax) {
        // Too small a budget or a corrupt block: decide with the block's full capacity (bounded by blockMax).
        scratch.writeUInt32LE(frame.blockMax, 0);
        try {
          lz4napi.uncompressSync(input);
        } catch (err2) {
          throw new CompressionError(CODEC, `invalid block (${(err2 as Error).message})`, {
            offset: block.start,
            cause: err2,
          });
        }
        throw new DecompressionLimitError(CODEC, limit, 'block decodes past the limit');
      }
      throw new CompressionError(CODEC, `invalid block (${(err as Error).message})`, { offset: block.start, cause: err });
    }
    out.push(decoded);
    produced += decoded.length;
  }
  return out;
}

function concatChecked(parts: Buffer[], frame: WalkedFrame, data: Buffer): Buffer {
  const content = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  if (frame.contentChecksum) {
    const stored = data.readUInt32LE(frame.end - 4);
    if (stored !== xxh32(content)) fail('content checksum mismatch', frame.end - 4);
  }
  return content;
}

/**
 * Decodes one or more concatenated LZ4 frames (skippable frames are skipped), producing at most
 * `maxOutputBytes`.
 */
export function lz4DecompressSync(data: Buffer, maxOutputBytes: number, options: Lz4DecompressOptions = {}): Buffer {
  const outputs: Buffer[] = [];
  let produced = 0;
  let pos = 0;
  if (data.length === 0) fail('empty input', 0);
  while (pos < data.length) {
    if (pos + 4 > data.length) fail('truncated frame magic', pos);
    const magic = data.readUInt32LE(pos);
    if (((magic & SKIPPABLE_MAGIC_MASK) >>> 0) === SKIPPABLE_MAGIC) {
      if (pos + 8 > data.length) fail('truncated skippable frame', pos);
      const size = data.readUInt32LE(pos + 4);
      if (pos + 8 + size > data.length) fail('truncated skippable frame', pos);
      pos += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) fail(`bad frame magic 0x${magic.toString(16)}`, pos);
    const frame = walkFrame(data, pos, options.ignoreHeaderChecksum === true);
    const budget = maxOutputBytes - produced;
    let content: Buffer;
    // lz4-napi's frame decoder is about 5x slower than its block decoder on Kafka's 64 KiB blocks (measured
    // on a 1 MiB batch: 24 ms against 5 ms, bench/validate.ts), so frames of small blocks are decoded block
    // by block; the frame decoder stays for large blocks, where a block call would allocate blockMax each time.
    if (frame.bound <= budget && frame.blockMax > SMALL_BLOCK_MAX && !options.ignoreHeaderChecksum) {
      try {
        content = lz4napi.decompressFrameSync(data.subarray(frame.start, frame.end));
      } catch (err) {
        throw new CompressionError(CODEC, `invalid frame (${(err as Error).message})`, { offset: pos, cause: err });
      }
      if (content.length > budget) throw new DecompressionLimitError(CODEC, maxOutputBytes, 'frame decodes past the limit');
    } else {
      content = concatChecked(decodeBlocks(data, frame, budget, maxOutputBytes), frame, data);
    }
    if (frame.contentSize >= 0 && content.length !== frame.contentSize) {
      fail(`frame declares ${frame.contentSize} bytes of content but decodes to ${content.length}`, pos + 6);
    }
    outputs.push(content);
    produced += content.length;
    pos = frame.end;
  }
  return outputs.length === 1 ? outputs[0]! : Buffer.concat(outputs, produced);
}
