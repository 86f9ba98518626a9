import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MetadataInvalidArgumentError } from '../../../src/metadata/errors.js';
import { checkKey, compareKeys, prefixRangeEnd } from '../../../src/metadata/key-order.js';

describe('metadata key order', () => {
  it('orders well-formed strings exactly as their UTF-8 bytes', () => {
    const text = fc.string({ unit: 'grapheme', maxLength: 6 });
    fc.assert(
      fc.property(text, text, (a, b) => {
        const expected = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(Math.sign(compareKeys(a, b))).toBe(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('puts U+E000 before U+1F600 although UTF-16 code units say otherwise', () => {
    expect('\u{1F600}' < '\u{E000}').toBe(true);
    expect(compareKeys('\u{E000}', '\u{1F600}')).toBeLessThan(0);
  });

  it('computes the end of a prefix range like etcd', () => {
    expect(prefixRangeEnd(Buffer.from('/a/'))).toEqual(Buffer.from('/a0'));
    expect(prefixRangeEnd(Buffer.from([0x61, 0xff, 0xff]))).toEqual(Buffer.from([0x62]));
    expect(prefixRangeEnd(Buffer.from([0xff]))).toBeNull();
    expect(prefixRangeEnd(Buffer.alloc(0))).toBeNull();
  });

  it('accepts any well-formed non-empty key and rejects the rest', () => {
    expect(() => checkKey('/\u{1F600}\u0000')).not.toThrow();
    for (const bad of ['', '\ud800', 'a\udc00b', 42]) {
      expect(() => checkKey(bad)).toThrow(MetadataInvalidArgumentError);
    }
  });
});
