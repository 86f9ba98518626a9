/**
 * CRC-32C (Castagnoli), the checksum of record batches v2 (Kafka's `Crc32C`, KIP-98), and CRC-32 (IEEE 802.3),
 * the checksum of legacy messages v0/v1 (Kafka's `Crc32`).
 *
 * Both use `@node-rs/crc32` (SSE4.2 / ARMv8 CRC instructions) and fall back to a table-driven implementation
 * in TypeScript when the native package cannot be loaded (unsupported platform, missing prebuilt binary).
 * The fallback processes 8 bytes per step ("slicing-by-8": eight 256-entry tables, one lookup per input
 * byte, no dependency between the lookups of one step).
 *
 * `initial` continues a checksum: `crc32c(b, crc32c(a)) === crc32c(concat(a, b))`, the convention of the
 * native package (the value passed is a previous result, not the raw register).
 */
import { createRequire } from 'node:module';

export type CrcFunction = (data: Uint8Array, initial?: number) => number;

interface NativeCrc {
  crc32(input: Uint8Array, initialState?: number | null): number;
  crc32c(input: Uint8Array, initialState?: number | null): number;
}

/** Builds slicing-by-8 tables for a reflected polynomial. */
function makeTables(polyReflected: number): Int32Array[] {
  const t0 = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ polyReflected : c >>> 1;
    t0[n] = c;
  }
  const tables = [t0];
  for (let t = 1; t < 8; t++) {
    const prev = tables[t - 1]!;
    const cur = new Int32Array(256);
    for (let n = 0; n < 256; n++) cur[n] = (prev[n]! >>> 8) ^ t0[prev[n]! & 0xff]!;
    tables.push(cur);
  }
  return tables;
}

/** A pure TypeScript CRC over a reflected polynomial (init and final XOR 0xFFFFFFFF, as CRC-32 and CRC-32C). */
function makeSoftwareCrc(polyReflected: number): CrcFunction {
  const [t0, t1, t2, t3, t4, t5, t6, t7] = makeTables(polyReflected) as [
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
    Int32Array,
  ];
  return function softwareCrc(data: Uint8Array, initial = 0): number {
    let crc = ~initial;
    const len = data.length;
    let i = 0;
    const end8 = len - 8;
    // Little-endian 32-bit loads through a DataView: about a third faster than assembling bytes.
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    while (i <= end8) {
      const a = crc ^ view.getInt32(i, true);
      const b = view.getInt32(i + 4, true);
      crc =
        t7[a & 0xff]! ^
        t6[(a >>> 8) & 0xff]! ^
        t5[(a >>> 16) & 0xff]! ^
        t4[a >>> 24]! ^
        t3[b & 0xff]! ^
        t2[(b >>> 8) & 0xff]! ^
        t1[(b >>> 16) & 0xff]! ^
        t0[b >>> 24]!;
      i += 8;
    }
    while (i < len) crc = (crc >>> 8) ^ t0[(crc ^ data[i++]!) & 0xff]!;
    return ~crc >>> 0;
  };
}

/** CRC-32C in TypeScript; always available. */
export const crc32cSoftware: CrcFunction = makeSoftwareCrc(0x82f63b78);
/** CRC-32 (IEEE) in TypeScript; always available. */
export const crc32Software: CrcFunction = makeSoftwareCrc(0xedb88320);

export interface CrcImplementations {
  readonly kind: 'native' | 'software';
  /** Why the native binding is not used, when it is not. */
  readonly loadError: unknown;
  readonly crc32c: CrcFunction;
  readonly crc32: CrcFunction;
}

/**
 * Picks the native binding if `load` returns one that computes the published check values, the software
 * implementation otherwise (a binding that loads but computes something else would corrupt every batch).
 */
export function selectCrcImplementations(load: () => unknown): CrcImplementations {
  let native: NativeCrc;
  try {
    native = load() as NativeCrc;
    const probe = Buffer.from('123456789');
    if (native.crc32c(probe) !== 0xe3069283 || native.crc32(probe) !== 0xcbf43926) {
      throw new Error('the CRC binding returned wrong check values');
    }
  } catch (loadError) {
    return { kind: 'software', loadError, crc32c: crc32cSoftware, crc32: crc32Software };
  }
  return {
    kind: 'native',
    loadError: null,
    crc32c: (data, initial = 0) => native.crc32c(data, initial),
    crc32: (data, initial = 0) => native.crc32(data, initial),
  };
}

const selected = selectCrcImplementations(() => createRequire(import.meta.url)('@node-rs/crc32'));

/** Which implementation `crc32c`/`crc32` use, and why the native one is absent if it is. */
export const crcImplementation: { readonly kind: 'native' | 'software'; readonly loadError: unknown } = {
  kind: selected.kind,
  loadError: selected.loadError,
};

/** The native binding's CRC-32C, or null when it did not load. */
export const crc32cNative: CrcFunction | null = selected.kind === 'native' ? selected.crc32c : null;
/** The native binding's CRC-32, or null when it did not load. */
export const crc32Native: CrcFunction | null = selected.kind === 'native' ? selected.crc32 : null;

/** CRC-32C of `data`, continuing from `initial` (a previous result). Unsigned 32-bit. */
export const crc32c: CrcFunction = selected.crc32c;

/** CRC-32 (IEEE) of `data`, continuing from `initial`. Unsigned 32-bit. Used by legacy messages v0/v1. */
export const crc32: CrcFunction = selected.crc32;

// ── combining ────────────────────────────────────────────────────────────────────────────────────────────
//
// The CRC of a concatenation from the CRCs of its parts, without the bytes (zlib's crc32_combine, by the
// same algebra): a CRC is the message polynomial times x^32 modulo P, with the register's pre- and
// post-inversion, so appending n bytes to A multiplies A's contribution by x^(8n) mod P:
//
//     crc(A ‖ B) = crc(A) · x^(8·|B|) mod P  ⊕  crc(B)
//
// (the inversions cancel: both sides carry the same all-ones terms). x^(8n) mod P is a product of the
// squarings x^(2^k) mod P, so a combine costs about 32 · log2(8n) shifts, a microsecond for a 1 MiB B,
// where reading B again would cost hundreds. Polynomials are reflected, as in the table code above: bit 31
// holds x^0.

const CASTAGNOLI_REFLECTED = 0x82f63b78;
const X0 = 0x80000000;

/** a · b mod P, reflected. */
function multiplyModP(a: number, b: number): number {
  let product = 0;
  for (let bit = X0; bit !== 0; bit >>>= 1) {
    if (a & bit) product ^= b;
    b = b & 1 ? (b >>> 1) ^ CASTAGNOLI_REFLECTED : b >>> 1;
  }
  return product >>> 0;
}

/** X_TO_2_TO[k] = x^(2^k) mod P, for every k a safe-integer length can need (8 · 2^53 = 2^56). */
const X_TO_2_TO: number[] = (() => {
  const table = [X0 >>> 1]; // x^1
  for (let k = 1; k < 57; k++) table.push(multiplyModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(8·bytes) mod P. */
function xToEightTimes(bytes: number): number {
  let power = X0;
  let k = 3; // 8 = 2^3
  for (let n = bytes; n > 0; n = Math.floor(n / 2), k++) if (n % 2 === 1) power = multiplyModP(X_TO_2_TO[k]!, power);
  return power;
}

/**
 * CRC-32C of A ‖ B from `crcA` = crc32c(A), `crcB` = crc32c(B) and B's length in bytes, without reading either.
 * `crc32cCombine(crc32c(a), crc32c(b), b.length) === crc32c(Buffer.concat([a, b]))`.
 */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  if (!Number.isSafeInteger(lengthB) || lengthB < 0) throw new RangeError(`lengthB must be a non-negative integer, got ${lengthB}`);
  if (lengthB === 0) return crcA >>> 0;
  return (multiplyModP(xToEightTimes(lengthB), crcA) ^ crcB) >>> 0;
}
