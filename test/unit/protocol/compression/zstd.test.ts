import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CompressionError, DecompressionLimitError } from '../../../../protocol/compression/errors.js';
import { zstdCompress, zstdDecodedSizeBound, zstdDecompress } from '../../../../protocol/compression/zstd.js';
import { expectBytes } from './fixtures.js';

const MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** A zstd block header: 3 bytes little-endian (last flag, type, size). */
function block(last: boolean, type: 0 | 1 | 2, size: number, content: Buffer): Buffer {
  const h = Buffer.alloc(3);
  h.writeUIntLE((last ? 1 : 0) | (type << 1) | (size << 3), 0, 3);
  return Buffer.concat([h, content]);
}

const raw = (last: boolean, data: Buffer) => block(last, 0, data.length, data);
const rle = (last: boolean, byte: number, n: number) => block(last, 1, n, Buffer.from([byte]));

/** Frame without a content size (what streaming encoders such as zstd-jni's ZstdOutputStream write). */
function frameWithoutSize(...blocks: Buffer[]): Buffer {
  return Buffer.concat([MAGIC, Buffer.from([0x00, 0x58]), ...blocks]); // window 2 MiB
}

/** Single-segment frame with a 4-byte content size. */
function frameWithSize(size: number, ...blocks: Buffer[]): Buffer {
  const fcs = Buffer.alloc(4);
  fcs.writeUInt32LE(size);
  return Buffer.concat([MAGIC, Buffer.from([0xa0]), fcs, ...blocks]);
}

async function codecError(p: Promise<unknown>): Promise<CompressionError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(CompressionError);
    return e as CompressionError;
  }
  throw new Error('expected a CompressionError');
}

const text = Buffer.from('zstd payload with some repetition, some repetition. '.repeat(8000)); // ~400 KB

describe('zstd codec', () => {
  it('round-trips', async () => {
    for (const data of [Buffer.alloc(0), Buffer.from('q'), text, randomBytes(300_000)]) {
      expectBytes(await zstdDecompress(await zstdCompress(data), data.length), data);
    }
  });

  it('writes standard frames at level 3 that carry no content size', async () => {
    const out = await zstdCompress(text);
    expect(out.subarray(0, 4)).toEqual(MAGIC);
    expect(out[4]! >>> 6).toBe(0); // Frame_Content_Size_flag 0
    expect(out[4]! & 0x20).toBe(0); // not single segment
    expect(out.length).toBeLessThan(text.length / 10);
  });

  it('decodes hand-built frames with and without a content size, raw and RLE blocks', async () => {
    const hello = Buffer.from('hello zstd ');
    const expected = Buffer.concat([hello, Buffer.alloc(1000, 0x41)]);
    expectBytes(await zstdDecompress(frameWithoutSize(raw(false, hello), rle(true, 0x41, 1000)), 2000), expected);
    expectBytes(await zstdDecompress(frameWithSize(1011, raw(false, hello), rle(true, 0x41, 1000)), 2000), expected);
    expect(zstdDecodedSizeBound(frameWithSize(1011, raw(false, hello), rle(true, 0x41, 1000)))).toBe(1011);
  });

  it('decodes concatenated frames and skips skippable frames', async () => {
    const skippable = Buffer.concat([Buffer.from([0x53, 0x2a, 0x4d, 0x18, 2, 0, 0, 0]), Buffer.from([7, 7])]);
    const a = await zstdCompress(text);
    const input = Buffer.concat([a, skippable, frameWithoutSize(raw(true, Buffer.from('tail')))]);
    expectBytes(await zstdDecompress(input, text.length + 4), Buffer.concat([text, Buffer.from('tail')]));
  });

  it('refuses a zstd bomb before decoding it', async () => {
    // 4096 RLE blocks of 128 KiB: 512 MiB from 16 KiB.
    const blocks = Array.from({ length: 4096 }, (_, i) => rle(i === 4095, 0, 128 * 1024));
    const bomb = frameWithoutSize(...blocks);
    expect(bomb.length).toBeLessThan(20_000);
    expect(zstdDecodedSizeBound(bomb)).toBe(512 * 1024 * 1024);
    const before = process.memoryUsage().arrayBuffers;
    await expect(zstdDecompress(bomb, 8 * 1024 * 1024)).rejects.toBeInstanceOf(DecompressionLimitError);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses a frame whose content size is above the limit, and one that lies about it', async () => {
    const big = frameWithSize(1_000_000, ...Array.from({ length: 8 }, (_, i) => rle(i === 7, 1, 125_000)));
    await expect(zstdDecompress(big, 100_000)).rejects.toMatchObject({ code: 'LL_ERR_DECOMPRESSION_LIMIT' });
    expect((await zstdDecompress(big, 1_000_000)).length).toBe(1_000_000);
    const lying = frameWithSize(12, raw(true, Buffer.from('only eleven')));
    await codecError(zstdDecompress(lying, 100));
    // A small declared size does not lower the bound of what the blocks can produce.
    const lyingSmall = frameWithSize(1000, ...Array.from({ length: 100 }, (_, i) => rle(i === 99, 2, 1000)));
    expect(zstdDecodedSizeBound(lyingSmall)).toBe(100_000);
    await expect(zstdDecompress(lyingSmall, 1000)).rejects.toBeInstanceOf(CompressionError);
  });

  it('enforces the limit exactly for frames without a content size', async () => {
    const out = await zstdCompress(text);
    expectBytes(await zstdDecompress(out, text.length), text);
    await expect(zstdDecompress(out, text.length - 1)).rejects.toBeInstanceOf(DecompressionLimitError);
  });

  it('rejects garbage, truncation, reserved fields and trailing bytes with a typed error', async () => {
    const good = await zstdCompress(text);
    await codecError(zstdDecompress(Buffer.from('not a zstd frame at all'), 1 << 20));
    await codecError(zstdDecompress(Buffer.alloc(0), 1 << 20));
    for (const cut of [3, 5, 8, good.length - 1]) await codecError(zstdDecompress(good.subarray(0, cut), 1 << 20));
    await codecError(zstdDecompress(Buffer.concat([good, Buffer.from([1, 2, 3])]), 1 << 20));
    await codecError(zstdDecompress(Buffer.concat([MAGIC, Buffer.from([0x08, 0x58]), raw(true, Buffer.from('x'))]), 99));
    await codecError(zstdDecompress(frameWithoutSize(block(true, 3 as 2, 1, Buffer.from('x'))), 99));
    const corrupt = Buffer.from(good);
    for (let i = 10; i < 40; i++) corrupt[i] ^= 0x5a;
    await codecError(zstdDecompress(corrupt, 1 << 20));
  });

  it('throws only typed errors on arbitrary bytes after a frame header', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (bytes) => {
        const input = Buffer.concat([MAGIC, Buffer.from([0x00, 0x50]), Buffer.from(bytes)]);
        try {
          expect((await zstdDecompress(input, 10_000)).length).toBeLessThanOrEqual(10_000);
        } catch (e) {
          expect(e).toBeInstanceOf(CompressionError);
        }
      }),
      { numRuns: 300 },
    );
  });
});
