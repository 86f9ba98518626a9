/**
 * Keys are strings at the interface and UTF-8 bytes underneath, ordered byte-wise as etcd orders them.
 * Byte order of UTF-8 is code point order, which differs from JavaScript's `<` (UTF-16 code units) for
 * characters above U+FFFF against U+E000..U+FFFF; every engine sorts with `compareKeys` or on the bytes.
 */

import { MetadataInvalidArgumentError } from './errors.js';

const LONE_SURROGATE = /\p{Cs}/u;

/** A key must be a non-empty, well-formed string (no lone surrogate, which UTF-8 cannot carry). */
export function checkKey(key: unknown, what = 'key'): asserts key is string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new MetadataInvalidArgumentError(`${what} must be a non-empty string`, { [what]: key });
  }
  if (LONE_SURROGATE.test(key)) {
    throw new MetadataInvalidArgumentError(`${what} contains a lone surrogate and has no UTF-8 form`, { [what]: key });
  }
}

/** A prefix may be empty (the whole key space) but must be well-formed. */
export function checkPrefix(prefix: unknown): asserts prefix is string {
  if (typeof prefix !== 'string') {
    throw new MetadataInvalidArgumentError('prefix must be a string', { prefix });
  }
  if (LONE_SURROGATE.test(prefix)) {
    throw new MetadataInvalidArgumentError('prefix contains a lone surrogate and has no UTF-8 form', { prefix });
  }
}

// Maps a UTF-16 code unit so that comparing mapped units orders well-formed strings by code point:
// surrogates (D800..DFFF, which start code points >= U+10000) move above E000..FFFF.
function rank(unit: number): number {
  if (unit >= 0xe000) return unit - 0x800;
  if (unit >= 0xd800) return unit + 0x2000;
  return unit;
}

/** Negative, zero or positive as `a` sorts before, with or after `b` in UTF-8 byte order. */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * The smallest byte string greater than every key with this prefix (etcd's GetPrefixRangeEnd): the prefix
 * with trailing 0xff bytes dropped and its last byte incremented. Null when there is none (empty prefix, or
 * only 0xff bytes, which UTF-8 never produces): the range is then unbounded above.
 */
export function prefixRangeEnd(prefix: Buffer): Buffer | null {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return null;
  const out = Buffer.from(prefix.subarray(0, end));
  out[end - 1] = out[end - 1]! + 1;
  return out;
}
