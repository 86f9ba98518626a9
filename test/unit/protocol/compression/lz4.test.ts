import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import * as lz4napi from 'lz4-napi';
import { describe, expect, it } from 'vitest';
import { CompressionError, DecompressionLimitError } from '../../../../protocol/compression/errors.js';
import { LZ4_BLOCK_SIZE, lz4CompressSync, lz4DecompressSync } from '../../../../protocol/compression/lz4.js';
import { xxh32 } from '../../../../protocol/compression/xxhash32.js';
import { expectBytes, lz4Frame } from './fixtures.js';

const text = Buffer.from('value-0123456789 lz4 test payload, repeated; '.repeat(6000)); // ~270 KB

const KAFKAJS_LZ4 = { flg: 0x64, bd: 0x70, blockSize: 4 * 1024 * 1024, contentChecksum: true };
const JAVA = { flg: 0x60, bd: 0x40, blockSize: 64 * 1024 };

function codecError(fn: () => unknown): CompressionError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CompressionError);
    return e as CompressionError;
  }
  throw new Error('expected a CompressionError');
}

describe('xxh32', () => {
  it('matches the reference values and the checksums lz4_flex writes', () => {
    expect(xxh32(Buffer.alloc(0))).toBe(0x02cc5d05);
    expect(xxh32(Buffer.from('abc'))).toBe(0x32d153ff);
    for (const n of [1, 15, 16, 17, 1000, 70_000]) {
      const data = randomBytes(n);
      const f = lz4napi.compressFrameSync(data, { contentChecksum: true });
      expect(f.readUInt32LE(f.length - 4)).toBe(xxh32(data));
    }
  });
});

describe('LZ4 frame codec', () => {
  it('round-trips', () => {
    for (const data of [Buffer.alloc(0), Buffer.from('z'), text, randomBytes(200_000)]) {
      expectBytes(lz4DecompressSync(lz4CompressSync(data), data.length), data);
    }
  });

  it("writes Java's framing: FLG 0x60, BD 0x40, 64 KiB independent blocks, end mark, no checksums", () => {
    const out = lz4CompressSync(text);
    expect(out.subarray(0, 7).toString('hex')).toBe('04224d18604082');
    let pos = 7;
    let blocks = 0;
    for (;;) {
      const word = out.readUInt32LE(pos);
      pos += 4;
      if (word === 0) break;
      expect(word & 0x7fffffff).toBeLessThanOrEqual(LZ4_BLOCK_SIZE);
      pos += word & 0x7fffffff;
      blocks++;
    }
    expect(pos).toBe(out.length);
    expect(blocks).toBe(Math.ceil(text.length / LZ4_BLOCK_SIZE));
    // lz4_flex's own frame decoder reads it too.
    expectBytes(lz4napi.decompressFrameSync(out), text);
  });

  it('stores incompressible blocks uncompressed, as Java does', () => {
    const noise = randomBytes(100_000);
    const out = lz4CompressSync(noise);
    expect(out.readUInt32LE(7) >>> 31).toBe(1);
    expectBytes(lz4DecompressSync(out, noise.length), noise);
  });

  it("reads frames as kafkajs-lz4 writes them (4 MiB blocks, content checksum) and lz4_flex's own frames", () => {
    expectBytes(lz4DecompressSync(lz4Frame(text, KAFKAJS_LZ4), text.length), text);
    const flex = lz4napi.compressFrameSync(text, { contentChecksum: true, blockChecksums: true });
    expectBytes(lz4DecompressSync(flex, text.length), text);
    expectBytes(lz4DecompressSync(lz4Frame(text, { ...JAVA, storeUncompressed: true, blockChecksums: true, flg: 0x70 }), 1 << 20), text);
  });

  it('reads frames with a content size, checks it, and never trusts it for the bound', () => {
    expectBytes(lz4DecompressSync(lz4Frame(text, { ...JAVA, flg: 0x68 }), text.length), text);
    const lyingShort = lz4Frame(text, { ...JAVA, flg: 0x68, contentSize: 10 });
    expect(codecError(() => lz4DecompressSync(lyingShort, 1 << 20)).message).toMatch(/declares 10 bytes|ContentLengthError/);
    expect(codecError(() => lz4DecompressSync(lyingShort, text.length)).message).toContain('declares 10 bytes');
    // A small declared size does not let a large frame through the limit.
    expect(() => lz4DecompressSync(lyingShort, 1000)).toThrow(DecompressionLimitError);
    const lyingLong = lz4Frame(text, { ...JAVA, flg: 0x68, contentSize: 10 * text.length });
    expect(codecError(() => lz4DecompressSync(lyingLong, 1 << 30)).message).toContain('larger than the blocks');
  });

  it('decodes a frame with a loose bound exactly when its real size fits the limit', () => {
    // One 4 MiB block holding 270 KB: the bound is 4 MiB, the limit is the real size.
    const f = lz4Frame(text, KAFKAJS_LZ4);
    expectBytes(lz4DecompressSync(f, text.length), text);
    expect(() => lz4DecompressSync(f, text.length - 1)).toThrow(DecompressionLimitError);
  });

  it('reads concatenated frames and skips skippable frames', () => {
    const skippable = Buffer.from([0x5a, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3]);
    const both = Buffer.concat([lz4CompressSync(text), skippable, lz4Frame(text, KAFKAJS_LZ4)]);
    expectBytes(lz4DecompressSync(both, 2 * text.length), Buffer.concat([text, text]));
    expect(() => lz4DecompressSync(both, 2 * text.length - 1)).toThrow(DecompressionLimitError);
  });

  it('stops an LZ4 bomb at the limit', () => {
    const zeros = Buffer.alloc(LZ4_BLOCK_SIZE);
    const oneBlock = lz4CompressSync(zeros);
    const blockBytes = oneBlock.subarray(7, oneBlock.length - 4);
    // 2000 copies of a compressed 64 KiB block of zeros: ~125 MiB from ~600 KB.
    const bomb = Buffer.concat([oneBlock.subarray(0, 7), ...Array.from({ length: 2000 }, () => blockBytes), Buffer.alloc(4)]);
    const before = process.memoryUsage().arrayBuffers;
    const err = (() => {
      try {
        lz4DecompressSync(bomb, 1024 * 1024);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DecompressionLimitError);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(32 * 1024 * 1024);
  });

  it('checks the header checksum, and skips it only when asked (legacy magic 0 frames)', () => {
    const broken = lz4Frame(text, { ...JAVA, brokenHeaderChecksum: true });
    expect(codecError(() => lz4DecompressSync(broken, 1 << 20)).message).toContain('header checksum');
    expectBytes(lz4DecompressSync(broken, 1 << 20, { ignoreHeaderChecksum: true }), text);
  });

  it('verifies block and content checksums', () => {
    const withBlockSums = lz4Frame(text, { ...JAVA, flg: 0x70, blockChecksums: true });
    const badBlock = Buffer.from(withBlockSums);
    badBlock[7 + 4 + 2] ^= 0xff; // inside the first block's data
    expect(codecError(() => lz4DecompressSync(badBlock, 1 << 20)).message).toContain('checksum');
    const withContentSum = lz4Frame(text, KAFKAJS_LZ4);
    const badContent = Buffer.from(withContentSum);
    badContent[badContent.length - 1] ^= 1;
    // Both decoding paths: one frame call within the bound, block by block above it.
    expect(codecError(() => lz4DecompressSync(badContent, 8 << 20)).message).toContain('ContentChecksum');
    expect(codecError(() => lz4DecompressSync(badContent, text.length)).message).toContain('content checksum');
  });

  it('refuses what Java refuses: dependent blocks, dictionary ids, reserved bits, bad block sizes', () => {
    expect(codecError(() => lz4DecompressSync(lz4Frame(text, { ...JAVA, flg: 0x40 }), 1 << 20)).message).toContain('dependent');
    expect(codecError(() => lz4DecompressSync(lz4Frame(text, { ...JAVA, flg: 0x61 }), 1 << 20)).message).toContain('dictionary');
    expect(codecError(() => lz4DecompressSync(lz4Frame(text, { ...JAVA, flg: 0x62 }), 1 << 20)).message).toContain('reserved');
    expect(codecError(() => lz4DecompressSync(lz4Frame(text, { ...JAVA, bd: 0x30 }), 1 << 20)).message).toContain('block maximum');
    expect(codecError(() => lz4DecompressSync(lz4Frame(text, { ...JAVA, flg: 0xa0 }), 1 << 20)).message).toContain('version');
    // A stored block larger than BD allows, and a compressed one that decodes past it.
    const big = lz4Frame(text, { ...JAVA, blockSize: 100_000, storeUncompressed: true });
    expect(codecError(() => lz4DecompressSync(big, 1 << 20)).message).toContain('exceeds');
    const overflowing = lz4Frame(text, { ...JAVA, blockSize: 100_000 });
    codecError(() => lz4DecompressSync(overflowing, 1 << 20));
    codecError(() => lz4DecompressSync(overflowing, 70_000));
  });

  it('rejects corrupt blocks, truncation and garbage with a typed error', () => {
    const good = lz4CompressSync(text);
    const corrupt = Buffer.from(good);
    for (let i = 20; i < 60; i++) corrupt[i] = 0xff;
    codecError(() => lz4DecompressSync(corrupt, 1 << 20));
    codecError(() => lz4DecompressSync(corrupt, 1000)); // block-by-block path
    for (const cut of [3, 6, 10, good.length - 4, good.length - 1]) codecError(() => lz4DecompressSync(good.subarray(0, cut), 1 << 20));
    codecError(() => lz4DecompressSync(Buffer.from('certainly not an lz4 frame'), 1 << 20));
    codecError(() => lz4DecompressSync(Buffer.alloc(0), 1 << 20));
  });

  it('throws only typed errors on arbitrary bytes after a valid header', () => {
    const header = Buffer.from('04224d18604082', 'hex');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, withHeader) => {
        const input = withHeader ? Buffer.concat([header, Buffer.from(bytes)]) : Buffer.from(bytes);
        for (const limit of [100_000, 50]) {
          try {
            expect(lz4DecompressSync(input, limit).length).toBeLessThanOrEqual(limit);
          } catch (e) {
            expect(e).toBeInstanceOf(CompressionError);
          }
        }
      }),
      { numRuns: 1500 },
    );
  });
});
