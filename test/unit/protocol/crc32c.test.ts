import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  crc32,
  crc32Native,
  crc32Software,
  crc32c,
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
