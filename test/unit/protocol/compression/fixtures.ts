/**
 * Test helpers for the codec tests. Byte comparison goes through Buffer.equals: vitest's deep equality walks
 * large Buffers element by element, which takes seconds for a megabyte.
 *
 * Also the hand-assembled compressed streams other clients write, built from raw codec blocks so every
 * framing field is under the test's control.
 */
import * as lz4napi from 'lz4-napi';
import snappyjs from 'snappyjs';
import { expect } from 'vitest';
import { xxh32 } from '../../../../protocol/compression/xxhash32.js';

/** Asserts two byte sequences are equal; on failure reports the lengths and the first differing offset. */
export function expectBytes(actual: Uint8Array, expected: Uint8Array): void {
  const a = Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength);
  const b = Buffer.from(expected.buffer, expected.byteOffset, expected.byteLength);
  if (a.equals(b)) return;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  expect.fail(
    `byte sequences differ: lengths ${a.length} vs ${b.length}, first difference at ${i} ` +
      `(${a.subarray(i, i + 8).toString('hex')} vs ${b.subarray(i, i + 8).toString('hex')})`,
  );
}

/** A xerial stream as Java's SnappyOutputStream writes it, assembled by hand from raw blocks. */
export function javaXerial(data: Buffer, blockSize = 32 * 1024): Buffer {
  const parts: Buffer[] = [Buffer.from('82534e41505059000000000100000001', 'hex')];
  for (let off = 0; off < data.length; off += blockSize) {
    const block = snappyjs.compress(data.subarray(off, off + blockSize));
    const len = Buffer.alloc(4);
    len.writeInt32BE(block.length);
    parts.push(len, block);
  }
  return Buffer.concat(parts);
}

export interface Lz4FrameSpec {
  flg: number;
  bd: number;
  blockSize: number;
  contentChecksum?: boolean;
  blockChecksums?: boolean;
  storeUncompressed?: boolean;
  /** Kafka < 0.10's header checksum, computed over the magic too. */
  brokenHeaderChecksum?: boolean;
  /** Content size field to write (FLG bit 3 must be set by the caller); default the real size. */
  contentSize?: number;
}

/**
 * An LZ4 frame assembled by hand from raw blocks (lz4-napi's block encoder), so the tests control every
 * header field: kafkajs-lz4 (npm `lz4`) writes 4 MiB blocks with a content checksum, Java 64 KiB blocks.
 */
export function lz4Frame(data: Buffer, spec: Lz4FrameSpec): Buffer {
  const sizeField = Buffer.alloc(spec.flg & 0x08 ? 8 : 0);
  if (sizeField.length) sizeField.writeBigUInt64LE(BigInt(spec.contentSize ?? data.length));
  const header = Buffer.concat([Buffer.from([0x04, 0x22, 0x4d, 0x18, spec.flg, spec.bd]), sizeField, Buffer.alloc(1)]);
  const hcAt = header.length - 1;
  header[hcAt] = (xxh32(header, spec.brokenHeaderChecksum ? 0 : 4, hcAt) >>> 8) & 0xff;
  const parts: Buffer[] = [header];
  for (let off = 0; off < data.length; off += spec.blockSize) {
    const block = data.subarray(off, off + spec.blockSize);
    const compressed = lz4napi.compressSync(block).subarray(4);
    const stored = spec.storeUncompressed ? block : compressed;
    const size = Buffer.alloc(4);
    size.writeUInt32LE((stored.length | (spec.storeUncompressed ? 0x80000000 : 0)) >>> 0);
    parts.push(size, stored);
    if (spec.blockChecksums) {
      const c = Buffer.alloc(4);
      c.writeUInt32LE(xxh32(stored));
      parts.push(c);
    }
  }
  parts.push(Buffer.alloc(4));
  if (spec.contentChecksum) {
    const c = Buffer.alloc(4);
    c.writeUInt32LE(xxh32(data));
    parts.push(c);
  }
  return Buffer.concat(parts);
}

