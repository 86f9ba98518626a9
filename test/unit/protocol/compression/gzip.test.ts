import { randomBytes } from 'node:crypto';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { expectBytes } from './fixtures.js';
import { CompressionError, DecompressionLimitError } from '../../../../protocol/compression/errors.js';
import {
  gzipCompress,
  gzipCompressSync,
  gzipDecompress,
  gzipDecompressSync,
} from '../../../../protocol/compression/gzip.js';

const text = Buffer.from('the quick brown fox jumps over the lazy dog '.repeat(2000));

describe('gzip codec', () => {
  it('round-trips synchronously and on the thread pool', async () => {
    for (const data of [Buffer.alloc(0), Buffer.from('x'), text, randomBytes(70_000)]) {
      expectBytes(gzipDecompressSync(gzipCompressSync(data), data.length), data);
      expectBytes(await gzipDecompress(await gzipCompress(data), data.length), data);
    }
  });

  it('writes a standard gzip member', () => {
    const out = gzipCompressSync(text);
    expect(out.subarray(0, 3)).toEqual(Buffer.from([0x1f, 0x8b, 0x08]));
    expectBytes(zlib.gunzipSync(out), text);
  });

  it('reads zlib-wrapped deflate and concatenated gzip members (librdkafka reads both)', () => {
    expectBytes(gzipDecompressSync(zlib.deflateSync(text), text.length), text);
    const twice = Buffer.concat([zlib.gzipSync(text), zlib.gzipSync(text)]);
    expectBytes(gzipDecompressSync(twice, 2 * text.length), Buffer.concat([text, text]));
  });

  it('stops a gzip bomb at the limit', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(16 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(32 * 1024);
    expect(() => gzipDecompressSync(bomb, 1024 * 1024)).toThrow(DecompressionLimitError);
    await expect(gzipDecompress(bomb, 1024 * 1024)).rejects.toBeInstanceOf(DecompressionLimitError);
    const err = (() => {
      try {
        gzipDecompressSync(bomb, 1000);
      } catch (e) {
        return e as DecompressionLimitError;
      }
    })();
    expect(err).toMatchObject({ code: 'LL_ERR_DECOMPRESSION_LIMIT', limit: 1000, kafkaErrorCode: 10 });
  });

  it('enforces a limit of zero', () => {
    expectBytes(gzipDecompressSync(zlib.gzipSync(Buffer.alloc(0)), 0), Buffer.alloc(0));
    expect(() => gzipDecompressSync(zlib.gzipSync(Buffer.from('a')), 0)).toThrow(DecompressionLimitError);
  });

  it('rejects garbage, truncation and empty input with a typed error', async () => {
    const good = zlib.gzipSync(text);
    for (const bad of [Buffer.from('definitely not gzip'), good.subarray(0, good.length - 9), Buffer.alloc(0)]) {
      expect(() => gzipDecompressSync(bad, 1 << 20)).toThrow(CompressionError);
      await expect(gzipDecompress(bad, 1 << 20)).rejects.toMatchObject({ code: 'LL_ERR_COMPRESSION', codec: 'gzip' });
    }
  });
});
