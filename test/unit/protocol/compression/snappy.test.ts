import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import snappyjs from 'snappyjs';
import { describe, expect, it } from 'vitest';
import { expectBytes, javaXerial } from './fixtures.js';
import { CompressionError, DecompressionLimitError } from '../../../../protocol/compression/errors.js';
import {
  XERIAL_BLOCK_SIZE,
  isXerial,
  snappyCompress,
  snappyCompressRaw,
  snappyDecompress,
} from '../../../../protocol/compression/snappy.js';

const text = Buffer.from('Kafka record value, fairly repetitive, fairly repetitive. '.repeat(3000));

function expectCodecError(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CompressionError);
    return;
  }
  throw new Error('expected a CompressionError');
}

describe('snappy codec', () => {
  it('round-trips in xerial framing (the default) and raw', () => {
    for (const data of [Buffer.alloc(0), Buffer.from('a'), text, randomBytes(100_000)]) {
      const xerial = snappyCompress(data);
      expect(isXerial(xerial)).toBe(true);
      expectBytes(snappyDecompress(xerial, data.length), data);
      const raw = snappyCompress(data, 'raw');
      expect(isXerial(raw)).toBe(false);
      expectBytes(snappyDecompress(raw, data.length), data);
    }
  });

  it('writes the xerial header Java writes, with 32 KiB chunks', () => {
    const out = snappyCompress(text);
    expect(out.subarray(0, 16).toString('hex')).toBe('82534e41505059000000000100000001');
    // Chunk count: ceil(len / 32 KiB).
    let pos = 16;
    let chunks = 0;
    while (pos < out.length) {
      pos += 4 + out.readInt32BE(pos);
      chunks++;
    }
    expect(pos).toBe(out.length);
    expect(chunks).toBe(Math.ceil(text.length / XERIAL_BLOCK_SIZE));
  });

  it('reads a hand-assembled Java xerial stream and raw snappy from other writers', () => {
    expectBytes(snappyDecompress(javaXerial(text), text.length), text);
    expectBytes(snappyDecompress(javaXerial(text, 1000), text.length), text);
    expectBytes(snappyDecompress(snappyjs.compress(text), text.length), text);
    expectBytes(snappyDecompress(javaXerial(Buffer.alloc(0)), 0), Buffer.alloc(0));
  });

  it('decodes hand-written elements: literals, short and long copies, overlapping copies', () => {
    // "abcd" literal, copy(offset 4, len 8) -> "abcdabcdabcd", copy with 2-byte offset (offset 1, len 5) -> "ddddd"
    const block = Buffer.from([
      17, // preamble: 17 bytes
      0x0c, 0x61, 0x62, 0x63, 0x64, // literal len 4
      0x01 | ((8 - 4) << 2), 0x04, // copy-1: len 8, offset 4
      0x02 | ((5 - 1) << 2), 0x01, 0x00, // copy-2: len 5, offset 1
    ]);
    expect(snappyDecompress(block, 100).toString()).toBe('abcdabcdabcdddddd');
    // Literal with a 1-byte extended length (61 bytes) and a copy with a 4-byte offset.
    const lit = Buffer.alloc(61, 0x41);
    const long = Buffer.concat([Buffer.from([61 + 3, 60 << 2, 60]), lit, Buffer.from([0x03 | (2 << 2), 61, 0, 0, 0])]);
    expect(snappyDecompress(long, 100).toString()).toBe('A'.repeat(61) + 'AAA');
  });

  it('refuses a declared length above the limit, or one the block cannot produce, before allocating it', () => {
    const lying = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x61]); // declares 4 GiB - 1
    expect(() => snappyDecompress(lying, 2 ** 33)).toThrow(/impossible for a 7-byte block/);
    const lyingXerial = Buffer.concat([Buffer.from('82534e41505059000000000100000001', 'hex'), Buffer.from([0, 0, 0, 7]), lying]);
    expect(() => snappyDecompress(lyingXerial, 2 ** 33)).toThrow(/impossible/);
    // The densest valid block: 64-byte copies of 3 bytes each stay within the bound.
    const dense = snappyCompressRaw(Buffer.alloc(1 << 20, 0x61));
    expect(snappyDecompress(dense, 1 << 20).length).toBe(1 << 20);
    const xerialBomb = javaXerial(Buffer.alloc(4 * 1024 * 1024));
    expect(() => snappyDecompress(xerialBomb, 1024 * 1024)).toThrow(DecompressionLimitError);
    expect(() => snappyDecompress(snappyCompressRaw(text), text.length - 1)).toThrow(DecompressionLimitError);
  });

  it('rejects blocks that lie about their length or reference outside the output', () => {
    // Declares 10 bytes, produces 4.
    expectCodecError(() => snappyDecompress(Buffer.from([10, 0x0c, 0x61, 0x62, 0x63, 0x64]), 100));
    // Declares 2 bytes, literal of 4.
    expectCodecError(() => snappyDecompress(Buffer.from([2, 0x0c, 0x61, 0x62, 0x63, 0x64]), 100));
    // Copy before the first byte.
    expectCodecError(() => snappyDecompress(Buffer.from([8, 0x00, 0x61, 0x01 | (3 << 2), 0x05]), 100));
    // Copy with offset 0.
    expectCodecError(() => snappyDecompress(Buffer.from([8, 0x00, 0x61, 0x01 | (3 << 2), 0x00]), 100));
    // Literal running past the input.
    expectCodecError(() => snappyDecompress(Buffer.from([8, 0x1c, 0x61]), 100));
    // Truncated preamble, empty input.
    expectCodecError(() => snappyDecompress(Buffer.from([0x80]), 100));
    expectCodecError(() => snappyDecompress(Buffer.alloc(0), 100));
  });

  it('rejects broken xerial framing', () => {
    const good = javaXerial(text);
    expectCodecError(() => snappyDecompress(good.subarray(0, 12), 1 << 20)); // header cut
    expectCodecError(() => snappyDecompress(good.subarray(0, 18), 1 << 20)); // chunk length cut
    expectCodecError(() => snappyDecompress(good.subarray(0, good.length - 1), 1 << 20)); // chunk cut
    const lying = Buffer.from(good);
    lying.writeInt32BE(0x7fffffff, 16);
    expectCodecError(() => snappyDecompress(lying, 1 << 20));
    const negative = Buffer.from(good);
    negative.writeInt32BE(-5, 16);
    expectCodecError(() => snappyDecompress(negative, 1 << 20));
    const future = Buffer.from(good);
    future.writeInt32BE(2, 12); // min-compat 2
    expectCodecError(() => snappyDecompress(future, 1 << 20));
  });

  it('throws only typed errors on arbitrary input, raw or xerial', () => {
    const header = Buffer.from('82534e41505059000000000100000001', 'hex');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), (bytes, xerial) => {
        const input = xerial ? Buffer.concat([header, Buffer.from(bytes)]) : Buffer.from(bytes);
        try {
          const out = snappyDecompress(input, 4096);
          expect(out.length).toBeLessThanOrEqual(4096);
        } catch (e) {
          expect(e).toBeInstanceOf(CompressionError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
