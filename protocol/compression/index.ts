/**
 * The record batch compression codecs behind one interface, by Kafka's compression type id (the low three
 * bits of a batch's attributes):
 *
 *   id  codec   compress                          decompress                          sync?
 *   0   none    -                                 -                                   yes
 *   1   gzip    node:zlib gzip, level 6           node:zlib unzip (gzip or zlib)      yes (async = thread pool)
 *   2   snappy  snappyjs, xerial framing          own raw/xerial decoder              yes (pure JS, in-thread)
 *   3   lz4     lz4-napi blocks, Java's framing   own frame walker + lz4-napi         yes (native, in-thread)
 *   4   zstd    @mongodb-js/zstd, level 3         @mongodb-js/zstd after a size bound  no (thread pool only)
 *
 * The async functions work for every codec; the sync ones for all but zstd (`hasSyncCodec`). The async
 * gzip and zstd paths run on the libuv thread pool; snappy and lz4 are fast enough that a hop to the pool
 * costs more than it saves at Kafka batch sizes, so their async forms run the sync code.
 *
 * Every decompression takes `maxOutputBytes` and fails with DecompressionLimitError rather than produce or
 * allocate more (see each codec for how it bounds its output).
 */
import { CompressionError, DecompressionLimitError, UnsupportedCompressionError } from './errors.js';
import { gzipCompress, gzipCompressSync, gzipDecompress, gzipDecompressSync } from './gzip.js';
import { lz4CompressSync, lz4DecompressSync } from './lz4.js';
import { snappyCompress, snappyDecompress } from './snappy.js';
import type { SnappyFraming } from './snappy.js';
import { zstdCompress, zstdDecompress } from './zstd.js';

export { CompressionError, DecompressionLimitError, UnsupportedCompressionError };

/** Kafka's `CompressionType` ids. */
export const CompressionType = {
  NONE: 0,
  GZIP: 1,
  SNAPPY: 2,
  LZ4: 3,
  ZSTD: 4,
} as const;

export type CompressionTypeId = (typeof CompressionType)[keyof typeof CompressionType];

const NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const;
export type CompressionName = (typeof NAMES)[number];

/** Default decompression limit when a caller gives none. Callers should pass their own. */
export const DEFAULT_MAX_DECOMPRESSED_BYTES = 128 * 1024 * 1024;

export function isCompressionType(id: number): id is CompressionTypeId {
  return Number.isInteger(id) && id >= 0 && id <= 4;
}

/** Kafka's name for a compression type id (`compression.type` values). */
export function compressionName(id: number): CompressionName {
  if (!isCompressionType(id)) throw new UnsupportedCompressionError(id, `unknown compression type id ${id}`);
  return NAMES[id];
}

/** The id for a Kafka `compression.type` name. */
export function compressionTypeByName(name: string): CompressionTypeId {
  const id = NAMES.indexOf(name as CompressionName);
  if (id < 0) throw new UnsupportedCompressionError(-1, `unknown compression type ${JSON.stringify(name)}`);
  return id as CompressionTypeId;
}

export interface CompressOptions {
  /** gzip: 1-9 (or -1 for the default 6); zstd: 1-22 (default 3). Ignored by snappy and lz4. */
  level?: number;
  /** Snappy framing to write; default xerial (what Java writes). */
  snappyFraming?: SnappyFraming;
}

export interface DecompressOptions {
  /** Upper limit of the decompressed size; default DEFAULT_MAX_DECOMPRESSED_BYTES. */
  maxOutputBytes?: number;
  /** LZ4 only: skip the frame header checksum (legacy magic-0 messages, see lz4.ts). */
  lz4IgnoreHeaderChecksum?: boolean;
}

/** Whether the sync functions support this compression type. */
export function hasSyncCodec(id: number): boolean {
  return isCompressionType(id) && id !== CompressionType.ZSTD;
}

function unknown(id: number): never {
  throw new UnsupportedCompressionError(id, `unknown compression type id ${id}`);
}

function noSync(id: number): never {
  throw new UnsupportedCompressionError(
    id,
    `${compressionName(id)} has no synchronous codec in this runtime; use the async function`,
  );
}

function limitOf(options: DecompressOptions | undefined): number {
  const max = options?.maxOutputBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  if (!(max >= 0)) throw new RangeError(`maxOutputBytes must be >= 0, got ${max}`);
  return max;
}

export function compressSync(id: number, data: Buffer, options?: CompressOptions): Buffer {
  switch (id) {
    case CompressionType.NONE:
      return data;
    case CompressionType.GZIP:
      return gzipCompressSync(data, options?.level);
    case CompressionType.SNAPPY:
      return snappyCompress(data, options?.snappyFraming);
    case CompressionType.LZ4:
      return lz4CompressSync(data);
    case CompressionType.ZSTD:
      return noSync(id);
    default:
      return unknown(id);
  }
}

export async function compress(id: number, data: Buffer, options?: CompressOptions): Promise<Buffer> {
  switch (id) {
    case CompressionType.GZIP:
      return gzipCompress(data, options?.level);
    case CompressionType.ZSTD:
      return zstdCompress(data, options?.level);
    default:
      return compressSync(id, data, options);
  }
}

export function decompressSync(id: number, data: Buffer, options?: DecompressOptions): Buffer {
  const max = limitOf(options);
  switch (id) {
    case CompressionType.NONE:
      if (data.length > max) throw new DecompressionLimitError('none', max, `${data.length} bytes`);
      return data;
    case CompressionType.GZIP:
      return gzipDecompressSync(data, max);
    case CompressionType.SNAPPY:
      return snappyDecompress(data, max);
    case CompressionType.LZ4:
      return lz4DecompressSync(data, max, { ignoreHeaderChecksum: options?.lz4IgnoreHeaderChecksum === true });
    case CompressionType.ZSTD:
      return noSync(id);
    default:
      return unknown(id);
  }
}

export async function decompress(id: number, data: Buffer, options?: DecompressOptions): Promise<Buffer> {
  switch (id) {
    case CompressionType.GZIP:
      return gzipDecompress(data, limitOf(options));
    case CompressionType.ZSTD:
      return zstdDecompress(data, limitOf(options));
    default:
      return decompressSync(id, data, options);
  }
}
