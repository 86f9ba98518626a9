/** BookKeeper's entry digests and master key, as DigestManager and MacDigestManager compute them. */
import { createHash, createHmac } from 'node:crypto';
import { crc32c } from '@node-rs/crc32';
import { describe, expect, it } from 'vitest';
import { DigestManager, DigestMismatchError, DigestType, genDigest, masterKey } from '../../../../src/ledger/bookkeeper/digest.js';

const payload = Buffer.from('entry-0 of a ledger');

describe('bookkeeper entry digest', () => {
  it('resumes CRC32C over the header then the payload, as crc32c of the concatenation', () => {
    const a = Buffer.from('header bytes'), b = Buffer.from('payload bytes');
    expect(crc32c(b, crc32c(a))).toBe(crc32c(Buffer.concat([a, b])));
  });

  it('packs the 32-byte header (ledger, entry, LAC, length), a 4-byte CRC32C and the payload', () => {
    const d = new DigestManager(DigestType.CRC32C, Buffer.alloc(0));
    const p = d.pack(7, 3, 2, 1234, payload);
    expect(p.length).toBe(32 + 4 + payload.length);
    expect(p.readBigInt64BE(0)).toBe(7n);
    expect(p.readBigInt64BE(8)).toBe(3n);
    expect(p.readBigInt64BE(16)).toBe(2n);
    expect(p.readBigInt64BE(24)).toBe(1234n);
    expect(p.readUInt32BE(32)).toBe(crc32c(Buffer.concat([p.subarray(0, 32), payload])) >>> 0);
    expect(p.subarray(36).equals(payload)).toBe(true);
    expect(d.unpack(7, p, 3)).toMatchObject({ ledgerId: 7, entryId: 3, lastAddConfirmed: 2, length: 1234 });
  });

  it("derives a CRC32C digest from the payload's CRC-32C when the writer knows it, the same header and digest", () => {
    const d = new DigestManager(DigestType.CRC32C, Buffer.alloc(0));
    for (const p of [Buffer.alloc(0), payload, Buffer.alloc(70_000, 0x5a)]) {
      expect(d.packHeader(7, 3, 2, 1234, p, crc32c(p)).equals(d.packHeader(7, 3, 2, 1234, p))).toBe(true);
    }
    // Other digests read the payload whatever they are given.
    const crc32 = new DigestManager(DigestType.CRC32, Buffer.alloc(0));
    expect(crc32.packHeader(7, 3, 2, 1234, payload, 0).equals(crc32.packHeader(7, 3, 2, 1234, payload))).toBe(true);
  });

  it('keys HMAC-SHA1 with SHA-1("mac" ++ password) and writes CRC32 as an 8-byte long', () => {
    const pw = Buffer.from('secret');
    const mac = new DigestManager(DigestType.HMAC, pw).pack(1, 0, -1, payload.length, payload);
    const key = createHash('sha1').update('mac').update(pw).digest();
    expect(mac.subarray(32, 52).equals(createHmac('sha1', key).update(Buffer.concat([mac.subarray(0, 32), payload])).digest())).toBe(true);
    const crc = new DigestManager(DigestType.CRC32, pw).pack(1, 0, -1, payload.length, payload);
    expect(crc.readUInt32BE(32)).toBe(0);
    expect(crc.length).toBe(32 + 8 + payload.length);
    expect(new DigestManager(DigestType.DUMMY, pw).pack(1, 0, -1, 0, payload).length).toBe(32 + payload.length);
  });

  it('refuses a flipped payload bit, another ledger or entry id, and a short packet', () => {
    const d = new DigestManager(DigestType.CRC32C, Buffer.alloc(0));
    const p = d.pack(7, 3, 2, 10, payload);
    const flipped = Buffer.from(p);
    flipped[flipped.length - 1] ^= 1;
    expect(() => d.unpack(7, flipped, 3)).toThrow(DigestMismatchError);
    expect(() => d.unpack(8, p, 3)).toThrow(DigestMismatchError);
    expect(() => d.unpack(7, p, 4)).toThrow(DigestMismatchError);
    expect(() => d.unpack(7, p.subarray(0, 20))).toThrow(DigestMismatchError);
  });

  it('derives the master key as SHA-1("ledger" ++ password) (MacDigestManager.genDigest)', () => {
    expect(masterKey(Buffer.alloc(0)).toString('hex')).toBe(createHash('sha1').update('ledger').digest('hex'));
    expect(genDigest('ledger', Buffer.from('pw')).equals(createHash('sha1').update('ledgerpw').digest())).toBe(true);
  });

  it('round-trips an explicit LAC body', () => {
    const d = new DigestManager(DigestType.CRC32C, Buffer.alloc(0));
    expect(d.unpackLac(5, d.packLac(5, 41))).toBe(41);
    expect(() => d.unpackLac(6, d.packLac(5, 41))).toThrow(DigestMismatchError);
  });
});
