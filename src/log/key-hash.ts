/**
 * MurmurHash3 x86_128 (Austin Appleby's public-domain MurmurHash3_x86_128, seed 0) of a record key: the
 * 16-byte key digest of the cleaner's offset map (offset-map.ts). Kafka's SkimpyOffsetMap stores an MD5
 * digest of each key for the same purpose; a 128-bit non-cryptographic hash has the same collision
 * odds for keys nobody chose to collide and costs ~50 ns per short key in JavaScript, against ~3 µs for
 * node:crypto's MD5 (a native call per key). Checked against the reference implementation's output
 * (Python's mmh3.hash128(x64arch=False)) in test/unit/log/key-hash.test.ts.
 */

const C1 = 0x239b961b;
const C2 = 0xab0e9789;
const C3 = 0x38b34ae5;
const C4 = 0xa1e38b93;

function rotl(x: number, r: number): number {
  return (x << r) | (x >>> (32 - r));
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}

/** Writes the four 32-bit words h1..h4 of the hash of `key[start, end)` into `out[0..3]`. */
export function murmur3x86x128(key: Uint8Array, start: number, end: number, out: Uint32Array): void {
  const len = end - start;
  let h1 = 0;
  let h2 = 0;
  let h3 = 0;
  let h4 = 0;
  const blocksEnd = start + (len & ~15);
  let i = start;
  for (; i < blocksEnd; i += 16) {
    let k1 = key[i]! | (key[i + 1]! << 8) | (key[i + 2]! << 16) | (key[i + 3]! << 24);
    let k2 = key[i + 4]! | (key[i + 5]! << 8) | (key[i + 6]! << 16) | (key[i + 7]! << 24);
    let k3 = key[i + 8]! | (key[i + 9]! << 8) | (key[i + 10]! << 16) | (key[i + 11]! << 24);
    let k4 = key[i + 12]! | (key[i + 13]! << 8) | (key[i + 14]! << 16) | (key[i + 15]! << 24);
    k1 = Math.imul(rotl(Math.imul(k1, C1), 15), C2);
    h1 ^= k1;
    h1 = (Math.imul(rotl(h1, 19) + h2, 5) + 0x561ccd1b) | 0;
    k2 = Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h2 ^= k2;
    h2 = (Math.imul(rotl(h2, 17) + h3, 5) + 0x0bcaa747) | 0;
    k3 = Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    h3 ^= k3;
    h3 = (Math.imul(rotl(h3, 15) + h4, 5) + 0x96cd1c35) | 0;
    k4 = Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    h4 ^= k4;
    h4 = (Math.imul(rotl(h4, 13) + h1, 5) + 0x32ac3b17) | 0;
  }
  const rest = len & 15;
  if (rest > 0) {
    let k1 = 0;
    let k2 = 0;
    let k3 = 0;
    let k4 = 0;
    for (let j = rest - 1; j >= 0; j--) {
      const b = key[i + j]!;
      if (j >= 12) k4 = (k4 << 8) | b;
      else if (j >= 8) k3 = (k3 << 8) | b;
      else if (j >= 4) k2 = (k2 << 8) | b;
      else k1 = (k1 << 8) | b;
    }
    if (rest > 12) h4 ^= Math.imul(rotl(Math.imul(k4, C4), 18), C1);
    if (rest > 8) h3 ^= Math.imul(rotl(Math.imul(k3, C3), 17), C4);
    if (rest > 4) h2 ^= Math.imul(rotl(Math.imul(k2, C2), 16), C3);
    h1 ^= Math.imul(rotl(Math.imul(k1, C1), 15), C2);
  }
  h1 ^= len;
  h2 ^= len;
  h3 ^= len;
  h4 ^= len;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix(h1);
  h2 = fmix(h2);
  h3 = fmix(h3);
  h4 = fmix(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  out[0] = h1;
  out[1] = h2;
  out[2] = h3;
  out[3] = h4;
}
