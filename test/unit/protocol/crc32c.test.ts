import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  crc32,
  crc32Native,
  crc32Software,
  crc32c,
  crc32cCombine,
  crc32cNative,
  crc32cSoftware,
  crcImplementation,
  selectCrcImplementations,
} from '../../../protocol/crc32c.js';

const CHECK = Buffer.from('123456789');

// Published check values (RFC 3720 appendix B.4 for CRC-32C; the "123456789" catalogue values).
const CRC32C_VECTORS: Array<[Buffer, number]> = [
  [CHECK, 0xe3069283],
  [Buffer.alloc(0), 0x00000000],
  [Buffer.alloc(32, 0x00), 0x8a9136aa],
  [Buffer.alloc(32, 0xff), 0x62a8ab43],
  [Buffer.from(Array.from({ length: 32 }, (_, i) => i)), 0x46dd794e],
  [Buffer.from(Array.from({ length: 32 }, (_, i) => 31 - i)), 0x113fdb5c],
];

describe('CRC-32C', () => {
  it('loads the native implementation on this platform', () => {
    expect(crcImplementation.kind).toBe('native');
    expect(crc32cNative).not.toBeNull();
  });

  it.each(CRC32C_VECTORS.map(([b, c]) => [b.toString('hex').slice(0, 16) || '(empty)', b, c] as const))(
    'matches the published check value for %s',
    (_name, data, expected) => {
      expect(crc32c(data)).toBe(expected);
      expect(crc32cSoftware(data)).toBe(expected);
      expect(crc32cNative!(data)).toBe(expected);
    },
  );

  it('computes CRC-32 (IEEE) for legacy messages', () => {
    expect(crc32(CHECK)).toBe(0xcbf43926);
    expect(crc32Software(CHECK)).toBe(0xcbf43926);
    expect(crc32Native!(CHECK)).toBe(0xcbf43926);
  });

  it('gives the same result natively and in software on random data of every length and alignment', () => {
    const pool = randomBytes(4096 + 16);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 4096 }), (start, len) => {
        const data = pool.subarray(start, start + len);
        expect(crc32cSoftware(data)).toBe(crc32cNative!(data));
        expect(crc32Software(data)).toBe(crc32Native!(data));
      }),
      { numRuns: 300 },
    );
  });

  it('continues a checksum from an initial value, in pieces of any size, both implementations alike', () => {
    const data = randomBytes(20_000);
    const whole = crc32c(data);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: data.length }), { maxLength: 8 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), data.length];
        let native = 0;
        let software = 0;
        for (let i = 1; i < points.length; i++) {
          const piece = data.subarray(points[i - 1], points[i]);
          native = crc32cNative!(piece, native);
          software = crc32cSoftware(piece, software);
        }
        expect(native).toBe(whole);
        expect(software).toBe(whole);
      }),
      { numRuns: 100 },
    );
  });

  it('matches on large buffers (1 MiB)', () => {
    const data = randomBytes(1024 * 1024);
    expect(crc32cSoftware(data)).toBe(crc32cNative!(data));
  });
});

describe('crc32cCombine', () => {
  it('gives the CRC of a concatenation from the CRCs of its parts, for every split of random data', () => {
    const data = randomBytes(70_000);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: data.length }), fc.integer({ min: 0, max: data.length }), (a, b) => {
        const [from, to] = a <= b ? [a, b] : [b, a];
        const head = data.subarray(0, from);
        const tail = data.subarray(from, to);
        expect(crc32cCombine(crc32c(head), crc32c(tail), tail.length)).toBe(crc32c(data.subarray(0, to)));
      }),
      { numRuns: 300 },
    );
  });

  it('leaves the first CRC as it is for an empty second part, and joins onto an empty first part', () => {
    expect(crc32cCombine(0xe3069283, 0, 0)).toBe(0xe3069283);
    expect(crc32cCombine(0, 0xe3069283, CHECK.length)).toBe(0xe3069283);
    expect(crc32cCombine(crc32c(CHECK.subarray(0, 4)), crc32c(CHECK.subarray(4)), 5)).toBe(0xe3069283);
  });

  it('combines across lengths whose bits reach far up (a long run of zeros, 2^31 + 5 bytes, by doubling)', () => {
    // crc32c of 2^k zero bytes continued from c, built by combining a run with itself k times, checked
    // against the CRC continued over the zeros in 1 MiB pieces for the lengths a test can afford.
    const zeros = Buffer.alloc(1 << 20);
    let direct = 0x12345678;
    for (let i = 0; i < 8; i++) direct = crc32c(zeros, direct);
    let zerosCrc = crc32c(zeros); // 2^20 bytes
    for (let k = 20; k < 23; k++) zerosCrc = crc32cCombine(zerosCrc, zerosCrc, 2 ** k);
    expect(crc32cCombine(0x12345678, zerosCrc, 2 ** 23)).toBe(direct);
    // Far beyond: associativity of combining must hold whatever the length's bits.
    const big = 2 ** 31 + 5;
    const x = crc32c(CHECK);
    expect(crc32cCombine(crc32cCombine(x, x, 9), zerosCrc, big)).toBe(crc32cCombine(x, crc32cCombine(x, zerosCrc, big), 9 + big));
  });

  it('refuses a negative or fractional length', () => {
    expect(() => crc32cCombine(0, 0, -1)).toThrow(RangeError);
    expect(() => crc32cCombine(0, 0, 1.5)).toThrow(RangeError);
  });
});

describe('choosing the CRC implementation', () => {
  it('falls back to the software implementation when the native package fails to load', () => {
    const chosen = selectCrcImplementations(() => {
      throw new Error('Cannot find module @node-rs/crc32-linux-x64-gnu');
    });
    expect(chosen.kind).toBe('software');
    expect((chosen.loadError as Error).message).toContain('Cannot find module');
    expect(chosen.crc32c(CHECK)).toBe(0xe3069283);
    expect(chosen.crc32(CHECK)).toBe(0xcbf43926);
  });

  it('refuses a binding that loads but computes wrong values', () => {
    const chosen = selectCrcImplementations(() => ({ crc32c: () => 0, crc32: () => 0 }));
    expect(chosen.kind).toBe('software');
    expect(chosen.crc32c(CHECK)).toBe(0xe3069283);
  });

  it('uses a binding that computes the check values', () => {
    const chosen = selectCrcImplementations(() => ({ crc32c: crc32cSoftware, crc32: crc32Software }));
    expect(chosen.kind).toBe('native');
    expect(chosen.crc32c(CHECK, 0)).toBe(0xe3069283);
  });
});
