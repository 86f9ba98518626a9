import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { CompressionType, compressSync } from '../../../../protocol/compression/index.js';
import { crc32 } from '../../../../protocol/crc32c.js';
import {
  CorruptRecordError,
  InvalidRecordError,
  RecordTooLargeError,
  TimestampType,
  buildRecordBatchSync,
  decodeLegacyMessageSet,
  expandLegacyWrapper,
} from '../../../../protocol/records/index.js';
import { lz4Frame } from '../compression/fixtures.js';
import { KafkajsCompression, kafkajsInnerSet, kafkajsMessageSet, legacyWrapper } from './kafkajs-fixtures.js';

const T0 = 1_500_000_000_000;
const entries = [
  { key: 'k0', value: 'v0', timestamp: T0 },
  { key: null, value: 'v1', timestamp: T0 + 1 },
  { key: 'k2', value: null, timestamp: T0 + 2 },
];

/** Recomputes a legacy message's CRC-32 after a test edits it (entry starts at `at`). */
function recrc(buf: Buffer, at = 0): Buffer {
  const end = at + 12 + buf.readInt32BE(at + 8);
  buf.writeUInt32BE(crc32(buf.subarray(at + 16, end)), at + 12);
  return buf;
}

describe('legacy message sets (magic 0 and 1)', () => {
  it('decodes an uncompressed v0 message set written by kafkajs', () => {
    const messages = decodeLegacyMessageSet(kafkajsMessageSet(0, entries));
    expect(messages.map((m) => [m.magic, m.offset, m.timestamp, m.key?.toString() ?? null, m.value?.toString() ?? null])).toEqual([
      [0, -1, -1, 'k0', 'v0'],
      [0, -1, -1, null, 'v1'],
      [0, -1, -1, 'k2', null],
    ]);
    expect(messages[0]!.sizeInBytes).toBe(12 + 14 + 2 + 2);
  });

  it('decodes an uncompressed v1 message set with timestamps', () => {
    const messages = decodeLegacyMessageSet(kafkajsMessageSet(1, entries));
    expect(messages.map((m) => [m.magic, m.timestamp, m.timestampType])).toEqual([
      [1, T0, TimestampType.CREATE_TIME],
      [1, T0 + 1, TimestampType.CREATE_TIME],
      [1, T0 + 2, TimestampType.CREATE_TIME],
    ]);
  });

  it('expands a gzip v1 wrapper into inner messages with absolute offsets (KIP-31)', () => {
    const inner = kafkajsInnerSet(1, entries);
    const wrapperBuf = legacyWrapper(1, KafkajsCompression.GZIP!, zlib.gzipSync(inner), 1002, T0 + 2);
    const [wrapper] = decodeLegacyMessageSet(wrapperBuf);
    expect(wrapper!.compressionType).toBe(CompressionType.GZIP);
    const expanded = expandLegacyWrapper(wrapper!);
    expect(expanded.map((m) => [m.offset, m.key?.toString() ?? null, m.value?.toString() ?? null, m.timestamp])).toEqual([
      [1000, 'k0', 'v0', T0],
      [1001, null, 'v1', T0 + 1],
      [1002, 'k2', null, T0 + 2],
    ]);
  });

  it('gives inner messages the wrapper timestamp when the wrapper is LogAppendTime', () => {
    const inner = kafkajsInnerSet(1, entries);
    const buf = legacyWrapper(1, KafkajsCompression.GZIP!, zlib.gzipSync(inner), 2, T0 + 99);
    buf[17] = (buf[17]! | 0x08) & 0xff; // attributes: LogAppendTime
    const [wrapper] = decodeLegacyMessageSet(recrc(buf));
    expect(expandLegacyWrapper(wrapper!).map((m) => [m.timestamp, m.timestampType])).toEqual([
      [T0 + 99, TimestampType.LOG_APPEND_TIME],
      [T0 + 99, TimestampType.LOG_APPEND_TIME],
      [T0 + 99, TimestampType.LOG_APPEND_TIME],
    ]);
  });

  it('keeps v0 inner offsets and reads LZ4 with the pre-0.10 header checksum for magic 0', () => {
    const inner = kafkajsInnerSet(0, entries);
    const frame = lz4Frame(inner, { flg: 0x60, bd: 0x40, blockSize: 65536, brokenHeaderChecksum: true });
    const [wrapper] = decodeLegacyMessageSet(legacyWrapper(0, CompressionType.LZ4, frame, 2));
    expect(expandLegacyWrapper(wrapper!).map((m) => m.offset)).toEqual([0, 1, 2]);
  });

  it('reads snappy wrappers in either framing', () => {
    for (const framing of ['raw', 'xerial'] as const) {
      const inner = kafkajsInnerSet(1, entries);
      const compressed = compressSync(CompressionType.SNAPPY, inner, { snappyFraming: framing });
      const [wrapper] = decodeLegacyMessageSet(legacyWrapper(1, CompressionType.SNAPPY, compressed, 7, T0));
      expect(expandLegacyWrapper(wrapper!).map((m) => m.offset)).toEqual([5, 6, 7]);
    }
  });

  it('bounds and checks what a wrapper decompresses to', () => {
    const inner = kafkajsInnerSet(1, entries);
    const [wrapper] = decodeLegacyMessageSet(legacyWrapper(1, CompressionType.GZIP, zlib.gzipSync(inner), 2, T0));
    expect(() => expandLegacyWrapper(wrapper!, { maxOutputBytes: 10 })).toThrow(RecordTooLargeError);
    const [garbage] = decodeLegacyMessageSet(legacyWrapper(1, CompressionType.GZIP, Buffer.from('not gzip'), 2, T0));
    expect(() => expandLegacyWrapper(garbage!)).toThrow(CorruptRecordError);
    const nested = legacyWrapper(1, CompressionType.GZIP, zlib.gzipSync(inner), 2, T0);
    const [twice] = decodeLegacyMessageSet(legacyWrapper(1, CompressionType.GZIP, zlib.gzipSync(nested), 0, T0));
    expect(() => expandLegacyWrapper(twice!)).toThrow(InvalidRecordError);
  });

  it('rejects a CRC-32 mismatch, truncation and bad lengths as corrupt', () => {
    const good = kafkajsMessageSet(1, entries);
    const flipped = Buffer.from(good);
    flipped[30]! ^= 1;
    expect(() => decodeLegacyMessageSet(flipped)).toThrow(/stored crc = \d+, computed crc/);
    expect(() => decodeLegacyMessageSet(good.subarray(0, good.length - 1))).toThrow(CorruptRecordError);
    expect(decodeLegacyMessageSet(good.subarray(0, good.length - 1), { allowPartialTail: true })).toHaveLength(2);
    const lyingKey = Buffer.from(good);
    lyingKey.writeInt32BE(1000, 12 + 4 + 1 + 1 + 8); // key length
    expect(() => decodeLegacyMessageSet(recrc(lyingKey))).toThrow(CorruptRecordError);
    const shortV1 = Buffer.from(good);
    shortV1.writeInt32BE(14, 8); // a valid v0 size, too small for v1
    expect(() => decodeLegacyMessageSet(shortV1, { allowPartialTail: true })).toThrow(CorruptRecordError);
  });

  it('refuses a record batch v2 inside a legacy message set', () => {
    const mixed = Buffer.concat([kafkajsMessageSet(1, entries), buildRecordBatchSync([{ value: 'x' }])]);
    expect(() => decodeLegacyMessageSet(mixed)).toThrow(InvalidRecordError);
  });
});
