import { describe, expect, it } from 'vitest';
import { classicMemberId, exceedsInt16String, MAX_STRING_BYTES, truncateUtf8 } from '../../../src/coordinator/string-bounds.js';

describe('bounds on strings the coordinator keeps', () => {
  it('counts UTF-8 bytes, not characters, against the int16 string length', () => {
    expect(exceedsInt16String(null)).toBe(false);
    expect(exceedsInt16String('a'.repeat(MAX_STRING_BYTES))).toBe(false);
    expect(exceedsInt16String('a'.repeat(MAX_STRING_BYTES + 1))).toBe(true);
    // 'é' is two bytes: 16,384 of them are 32,768 bytes.
    expect(exceedsInt16String('é'.repeat(16_383))).toBe(false);
    expect(exceedsInt16String('é'.repeat(16_384))).toBe(true);
  });

  it('cuts a string to a byte budget without splitting a character', () => {
    expect(truncateUtf8('abc', 10)).toBe('abc');
    expect(truncateUtf8('abcdef', 3)).toBe('abc');
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('a😀b', 4)).toBe('a');
    expect(truncateUtf8('a😀b', 5)).toBe('a😀');
  });

  it('builds a member id from a 32,767-byte client id that still fits an int16 string, keeping the UUID whole', () => {
    const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e';
    const id = classicMemberId('€'.repeat(0x7fff / 3), uuid);
    expect(Buffer.byteLength(id, 'utf8')).toBeLessThanOrEqual(MAX_STRING_BYTES);
    expect(id.endsWith(`-${uuid}`)).toBe(true);
    expect(classicMemberId('consumer-1', uuid)).toBe(`consumer-1-${uuid}`);
  });
});
