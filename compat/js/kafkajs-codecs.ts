/**
 * kafkajs ships gzip only and takes other codecs as plugins (CompressionCodecs[type] = () => codec).
 * The published plugins either build native code that fails on Node 20 (@kafkajs/zstd) or are not
 * installed here, so the suite registers small ones over the packages the repository already has:
 * snappyjs (raw Snappy; xerial-framed input, as the Java client writes it, is unframed first),
 * lz4-napi (LZ4 frame format, as KIP-57 requires) and @mongodb-js/zstd.
 */
import { createRequire } from 'node:module';
import kafkajs from 'kafkajs';

const require = createRequire(import.meta.url);
const snappy = require('snappyjs') as { compress(b: Buffer): Buffer; uncompress(b: Buffer): Buffer };
const lz4 = require('lz4-napi') as { compressFrame(b: Buffer): Promise<Buffer>; decompressFrame(b: Buffer): Promise<Buffer> };
const zstd = require('@mongodb-js/zstd') as { compress(b: Buffer, level?: number): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> };

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);

/** xerial snappy-java framing: 8-byte magic, two int32 versions, then [int32 length][raw block]... */
function snappyDecompress(buf: Buffer): Buffer {
  if (buf.length < 16 || !buf.subarray(0, 8).equals(XERIAL_MAGIC)) return Buffer.from(snappy.uncompress(buf));
  const parts: Buffer[] = [];
  for (let off = 16; off + 4 <= buf.length; ) {
    const len = buf.readInt32BE(off);
    off += 4;
    parts.push(Buffer.from(snappy.uncompress(buf.subarray(off, off + len))));
    off += len;
  }
  return Buffer.concat(parts);
}

interface Encoder {
  buffer: Buffer;
}

export function registerCodecs(): void {
  const { CompressionCodecs, CompressionTypes } = kafkajs;
  const codecs = CompressionCodecs as Record<number, () => unknown>;
  codecs[CompressionTypes.Snappy] = () => ({
    compress: async (e: Encoder) => Buffer.from(snappy.compress(e.buffer)),
    decompress: async (b: Buffer) => snappyDecompress(b),
  });
  codecs[CompressionTypes.LZ4] = () => ({
    compress: (e: Encoder) => lz4.compressFrame(e.buffer),
    decompress: (b: Buffer) => lz4.decompressFrame(b),
  });
  codecs[CompressionTypes.ZSTD] = () => ({
    compress: (e: Encoder) => zstd.compress(e.buffer, 3),
    decompress: (b: Buffer) => zstd.decompress(b),
  });
}
