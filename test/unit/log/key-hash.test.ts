import { describe, expect, it } from 'vitest';
import { murmur3x86x128 } from '../../../src/log/key-hash.js';

// Python's mmh3.hash128(key, 0, x64arch=False, signed=False), as little-endian 32-bit words h1..h4.
const VECTORS: Array<[string, number[]]> = [
  ['', [0x0, 0x0, 0x0, 0x0]],
  ['61', [0xa794933c, 0x5556b01b, 0x5556b01b, 0x5556b01b]],
  ['68656c6c6f', [0x2b2444a0, 0xdb91def7, 0x9adb31b6, 0x9adb31b6]],
  ['6b65792d303030313233', [0x10ebc442, 0xcdbf1413, 0xebbda173, 0x61c74c46]],
  [Buffer.from('The quick brown fox jumps over the lazy dog').toString('hex'), [0x2f1583c3, 0xecee2c67, 0x5d7bf66c, 0xe5e91d2c]],
  [Buffer.from(Array.from({ length: 31 }, (_, i) => i)).toString('hex'), [0x24ab92ee, 0xac1d89ca, 0x45f5bc18, 0x9ad5dda3]],
];

describe('murmur3x86x128', () => {
  it.each(VECTORS)('hashes %s as the reference implementation does', (hex, words) => {
    const out = new Uint32Array(4);
    murmur3x86x128(Buffer.from(hex, 'hex'), 0, hex.length / 2, out);
    expect([...out]).toEqual(words);
  });

  it('hashes a key inside a larger buffer by its bounds alone', () => {
    const key = Buffer.from('The quick brown fox jumps over the lazy dog');
    const framed = Buffer.concat([Buffer.from('xx'), key, Buffer.from('yyy')]);
    const a = new Uint32Array(4);
    const b = new Uint32Array(4);
    murmur3x86x128(key, 0, key.length, a);
    murmur3x86x128(framed, 2, 2 + key.length, b);
    expect([...b]).toEqual([...a]);
  });
});
