import { describe, expect, it } from 'vitest';
import { crc32c } from '../../../protocol/crc32c.js';
import {
  RECORD_HEADER_BYTES,
  RecordType,
  decodeCheckpoint,
  decodeRecordHeader,
  decodeSegmentHeader,
  decodeSegmentIndex,
  encodeCheckpoint,
  encodeControlRecord,
  encodeSegmentHeader,
  encodeSegmentIndex,
  parseSegmentSeq,
  readU64,
  recordCrcMatches,
  sealRecordCrc,
  segmentFileName,
  writeRecordHeader,
  writeU64,
} from '../../../src/ledger/format.js';

function entryRecord(ledgerId: number, entryId: number, payload: Buffer): Buffer {
  const buf = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
  writeRecordHeader(buf, 0, RecordType.ENTRY, ledgerId, entryId, payload.length);
  payload.copy(buf, RECORD_HEADER_BYTES);
  sealRecordCrc(buf, 0, payload);
  return buf;
}

describe('ledger on-disk format', () => {
  it("derives a record's CRC from its payload's CRC-32C exactly as from its bytes", () => {
    for (const n of [0, 1, 31, 4096, 70_000]) {
      const payload = Buffer.from(Array.from({ length: n }, (_, i) => (i * 7 + n) & 0xff));
      const fromBytes = entryRecord(9, 4, payload);
      const fromCrc = Buffer.from(fromBytes);
      fromCrc.writeUInt32LE(0, 0);
      sealRecordCrc(fromCrc, 0, payload, crc32c(payload));
      expect(fromCrc.readUInt32LE(0)).toBe(fromBytes.readUInt32LE(0));
      expect(recordCrcMatches(fromCrc, 0, n)).toBe(true);
    }
  });

  it('round-trips u64 values up to 2^53 and flags larger ones as garbage', () => {
    const buf = Buffer.alloc(8);
    for (const v of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 12345, Number.MAX_SAFE_INTEGER]) {
      writeU64(buf, 0, v);
      expect(readU64(buf, 0)).toBe(v);
    }
    buf.fill(0xff);
    expect(readU64(buf, 0)).toBe(-1);
  });

  it('encodes an entry record whose CRC covers header and payload', () => {
    const rec = entryRecord(7, 2 ** 33, Buffer.from('hello ledger'));
    const h = decodeRecordHeader(rec, 0)!;
    expect(h).toMatchObject({ type: RecordType.ENTRY, ledgerId: 7, arg: 2 ** 33, payloadLength: 12 });
    expect(recordCrcMatches(rec, 0, 12)).toBe(true);
    for (const at of [4, 12, 20, RECORD_HEADER_BYTES, rec.length - 1]) {
      const damaged = Buffer.from(rec);
      damaged[at] = damaged[at]! ^ 1;
      const dh = decodeRecordHeader(damaged, 0);
      expect(dh === null || dh.payloadLength > damaged.length || !recordCrcMatches(damaged, 0, dh.payloadLength)).toBe(true);
    }
  });

  it('rejects record headers with an unknown type or version', () => {
    const rec = encodeControlRecord(RecordType.SEAL, 3, 10, 1234);
    expect(decodeRecordHeader(rec, 0)).toMatchObject({ type: RecordType.SEAL, ledgerId: 3, arg: 10, payloadLength: 8 });
    expect(recordCrcMatches(rec, 0, 8)).toBe(true);
    const badType = Buffer.from(rec);
    badType[8] = 9;
    expect(decodeRecordHeader(badType, 0)).toBeNull();
    const badVersion = Buffer.from(rec);
    badVersion[9] = 2;
    expect(decodeRecordHeader(badVersion, 0)).toBeNull();
    expect(decodeRecordHeader(Buffer.alloc(32), 0)).toBeNull();
  });

  it('round-trips a segment header and refuses a damaged or foreign one', () => {
    const h = { segmentSeq: 42, prevSegmentSeq: 41, prevSegmentValidBytes: 123456789, createdAtMs: 1_700_000_000_000 };
    const buf = encodeSegmentHeader(h);
    expect(buf.length).toBe(64);
    expect(decodeSegmentHeader(buf)).toEqual(h);
    const damaged = Buffer.from(buf);
    damaged[33] = damaged[33]! ^ 0x10;
    expect(decodeSegmentHeader(damaged)).toBe('segment header checksum does not match');
    expect(decodeSegmentHeader(Buffer.from('not a segment header at all, just some text that is long enough!'))).toBe('segment magic does not match');
    expect(decodeSegmentHeader(buf.subarray(0, 30))).toBe('segment header is truncated');
  });

  it('round-trips a segment index and detects any flipped byte', () => {
    const index = {
      segmentSeq: 5,
      validBytes: 99_999,
      runs: [
        { ledgerId: 1, firstEntryId: 100, offsets: Uint32Array.from([64, 200, 400]), lengths: Uint32Array.from([104, 168, 10]) },
        { ledgerId: 9, firstEntryId: 0, offsets: Uint32Array.from([96]), lengths: Uint32Array.from([0]) },
      ],
    };
    const buf = encodeSegmentIndex(index);
    expect(decodeSegmentIndex(buf)).toEqual(index);
    for (let at = 0; at < buf.length; at += 7) {
      const damaged = Buffer.from(buf);
      damaged[at] = damaged[at]! ^ 0x80;
      expect(typeof decodeSegmentIndex(damaged)).toBe('string');
    }
  });

  it('round-trips a checkpoint and detects truncation', () => {
    const c = {
      nextLedgerId: 77,
      replayFromSegment: 12,
      writtenAtMs: 1_700_000_000_123,
      activeSegment: 13,
      activeSegmentDurableBytes: 4096,
      ledgers: [
        { ledgerId: 3, createdAtMs: 1, sealedAtMs: 0, entryCount: 0 },
        { ledgerId: 70, createdAtMs: 2, sealedAtMs: 3, entryCount: 10_000_000 },
      ],
    };
    const buf = encodeCheckpoint(c);
    expect(decodeCheckpoint(buf)).toEqual(c);
    expect(typeof decodeCheckpoint(buf.subarray(0, buf.length - 1))).toBe('string');
  });

  it('names segment files with zero-padded sequence numbers and parses them back', () => {
    expect(segmentFileName(3)).toBe('00000000000000000003.seg');
    expect(parseSegmentSeq('00000000000000000003.seg', '.seg')).toBe(3);
    expect(parseSegmentSeq('00000000000000000003.idx', '.seg')).toBeNull();
    expect(parseSegmentSeq('00000000000000000000.seg', '.seg')).toBeNull();
    expect(parseSegmentSeq('ledgers.ckpt', '.seg')).toBeNull();
  });
});
