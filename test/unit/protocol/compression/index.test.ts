import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CompressionError,
  CompressionType,
  DecompressionLimitError,
  UnsupportedCompressionError,
  compress,
  compressSync,
  compressionName,
  compressionTypeByName,
  decompress,
  decompressSync,
  hasSyncCodec,
} from '../../../../protocol/compression/index.js';
import { expectBytes } from './fixtures.js';

const data = Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, name: `user-${i % 50}` }))));
const CODECS = [CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];

describe('compression codecs by Kafka type id', () => {
  it.each(CODECS)('round-trips type %i through the async interface', async (id) => {
    const compressed = await compress(id, data);
    expect(compressed.length).toBeLessThan(data.length / 2);
    expectBytes(await decompress(id, compressed, { maxOutputBytes: data.length }), data);
    await expect(decompress(id, compressed, { maxOutputBytes: data.length - 1 })).rejects.toBeInstanceOf(
      DecompressionLimitError,
    );
  });

  it('offers sync codecs for none, gzip, snappy and lz4, and refuses sync zstd with a typed error', () => {
    for (const id of [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4]) {
      expect(hasSyncCodec(id)).toBe(true);
      expectBytes(decompressSync(id, compressSync(id, data), { maxOutputBytes: data.length }), data);
    }
    expect(hasSyncCodec(CompressionType.ZSTD)).toBe(false);
    expect(() => compressSync(CompressionType.ZSTD, data)).toThrow(UnsupportedCompressionError);
    expect(() => decompressSync(CompressionType.ZSTD, data)).toThrow(UnsupportedCompressionError);
  });

  it('reads codec output written by another framing choice (raw snappy)', () => {
    const raw = compressSync(CompressionType.SNAPPY, data, { snappyFraming: 'raw' });
    expectBytes(decompressSync(CompressionType.SNAPPY, raw), data);
  });

  it("uses Kafka's names and rejects ids 5-7 and unknown names", async () => {
    expect([0, 1, 2, 3, 4].map(compressionName)).toEqual(['none', 'gzip', 'snappy', 'lz4', 'zstd']);
    expect(compressionTypeByName('zstd')).toBe(4);
    expect(() => compressionTypeByName('brotli')).toThrow(UnsupportedCompressionError);
    for (const id of [5, 6, 7, -1]) {
      expect(() => compressionName(id)).toThrow(UnsupportedCompressionError);
      expect(() => decompressSync(id, data)).toThrow(UnsupportedCompressionError);
      await expect(compress(id, data)).rejects.toMatchObject({ kafkaErrorCode: 76, compressionType: id });
    }
  });

  it('treats uncompressed data against the limit too', () => {
    expect(() => decompressSync(CompressionType.NONE, data, { maxOutputBytes: 10 })).toThrow(DecompressionLimitError);
  });

  it('throws only CompressionError for arbitrary input to any codec', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...CODECS), fc.uint8Array({ maxLength: 256 }), async (id, bytes) => {
        try {
          const out = await decompress(id, Buffer.from(bytes), { maxOutputBytes: 65536 });
          expect(out.length).toBeLessThanOrEqual(65536);
        } catch (e) {
          expect(e).toBeInstanceOf(CompressionError);
        }
      }),
      { numRuns: 400 },
    );
  });
});
