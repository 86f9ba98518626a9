/**
 * The client-side entry digest of Apache BookKeeper (DigestManager and its CRC32C, CRC32, MAC and dummy
 * variants), and the ledger master key (MacDigestManager.genDigest).
 *
 * Every entry a bookie stores is the packet the writer built, which the bookie never parses beyond its first
 * two fields:
 *
 * ```
 *   0        8        16                24       32          32+d
 *   ┌────────┬────────┬─────────────────┬────────┬───────────┬──────────────┐
 *   │ledgerId│entryId │lastAddConfirmed │ length │  digest   │   payload    │
 *   │ int64  │ int64  │ int64 (the LAC  │ int64  │ d bytes   │              │
 *   │        │        │ at send time)   │(ledger │ over hdr  │              │
 *   │        │        │                 │ length │ (32 B) ++ │              │
 *   │        │        │                 │ incl.  │ payload   │              │
 *   │        │        │                 │ entry) │           │              │
 *   └────────┴────────┴─────────────────┴────────┴───────────┴──────────────┘
 *   d = 4 (CRC32C: a big-endian int32), 8 (CRC32: the value as an int64), 20 (HMAC-SHA1), 0 (DUMMY)
 * ```
 *
 * CRC32C and CRC32 are resumed over the 32 header bytes and then the payload, starting from 0, as
 * BookKeeper's `update(0, header) → update(digest, payload)` does; HMAC-SHA1 is keyed with
 * SHA-1("mac" ++ password). The master key a bookie checks on every add (and on fencing reads) is
 * SHA-1("ledger" ++ password).
 */
import { createHash, createHmac } from 'node:crypto';
import { crc32, crc32c } from '@node-rs/crc32';
import { crc32cCombine } from '../../../protocol/crc32c.js';

/** LedgerMetadataFormat.DigestType (DataFormats.proto): the numbers stored in ledger metadata. */
export enum DigestType {
  CRC32 = 1,
  HMAC = 2,
  CRC32C = 3,
  DUMMY = 4,
}

/** The names `ledgerline.bookkeeper.digest.type` takes (BookKeeper's DigestType names, `MAC` for HMAC). */
export const DIGEST_TYPE_NAMES: Readonly<Record<string, DigestType>> = { CRC32C: DigestType.CRC32C, CRC32: DigestType.CRC32, MAC: DigestType.HMAC, HMAC: DigestType.HMAC, DUMMY: DigestType.DUMMY };

/** Bytes before the digest: ledgerId, entryId, lastAddConfirmed, length. */
export const METADATA_LENGTH = 32;
/** Bytes of an explicit-LAC body before its digest: ledgerId, lac. */
export const LAC_METADATA_LENGTH = 16;

export function digestLength(type: DigestType): number {
  switch (type) {
    case DigestType.CRC32C:
      return 4;
    case DigestType.CRC32:
      return 8;
    case DigestType.HMAC:
      return 20;
    case DigestType.DUMMY:
      return 0;
  }
}

/** MacDigestManager.genDigest(pad, password): SHA-1 of the pad's UTF-8 bytes then the password. */
export function genDigest(pad: string, password: Uint8Array): Buffer {
  return createHash('sha1').update(pad, 'utf8').update(password).digest();
}

/** The master key a bookie stores with a ledger and checks on adds and fencing reads. */
export function masterKey(password: Uint8Array): Buffer {
  return genDigest('ledger', password);
}

/** A parsed stored entry: what the digest header says, and the payload (a view into the packet). */
export interface UnpackedEntry {
  readonly ledgerId: number;
  readonly entryId: number;
  readonly lastAddConfirmed: number;
  /** The ledger's length including this entry. */
  readonly length: number;
  readonly payload: Buffer;
}

/** Why a packet was refused: the digest does not match, or it names another ledger/entry, or is too short. */
export class DigestMismatchError extends Error {
  readonly code = 'LL_ERR_BK_DIGEST';
}

/** A CRC32C digest as Crc32cDigestManager stores it: the checksum as a big-endian int32. */
function crc32cDigest(crc: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out.writeUInt32BE(crc >>> 0, 0);
  return out;
}

/** Computes and checks digests of one ledger's entries. */
export class DigestManager {
  readonly length: number;
  private readonly macKey: Buffer | null;

  constructor(
    readonly type: DigestType,
    password: Uint8Array,
  ) {
    this.length = digestLength(type);
    this.macKey = type === DigestType.HMAC ? genDigest('mac', password) : null;
  }

  private digest(parts: readonly Uint8Array[]): Buffer {
    switch (this.type) {
      case DigestType.CRC32C: {
        let c = 0;
        for (const p of parts) c = crc32c(p, c);
        return crc32cDigest(c);
      }
      case DigestType.CRC32: {
        let c = 0;
        for (const p of parts) c = crc32(p, c);
        const out = Buffer.alloc(8);
        out.writeUInt32BE(c >>> 0, 4); // CRC32DigestManager writes the checksum as a long
        return out;
      }
      case DigestType.HMAC: {
        const h = createHmac('sha1', this.macKey!);
        for (const p of parts) h.update(p);
        return h.digest();
      }
      case DigestType.DUMMY:
        return Buffer.alloc(0);
    }
  }

  /**
   * The header and digest (32 + d bytes) to send in front of `payload` (the add's body is header ++ payload).
   * `payloadCrc32c`, the payload's CRC-32C when the writer knows it (LedgerAppendOptions.crc32c), spares a
   * CRC32C digest a pass over the payload: the header's CRC is joined to it (crc32cCombine).
   */
  packHeader(ledgerId: number, entryId: number, lastAddConfirmed: number, length: number, payload: Uint8Array, payloadCrc32c?: number): Buffer {
    const header = Buffer.allocUnsafe(METADATA_LENGTH);
    header.writeBigInt64BE(BigInt(ledgerId), 0);
    header.writeBigInt64BE(BigInt(entryId), 8);
    header.writeBigInt64BE(BigInt(lastAddConfirmed), 16);
    header.writeBigInt64BE(BigInt(length), 24);
    const digest =
      this.type === DigestType.CRC32C && payloadCrc32c !== undefined
        ? crc32cDigest(crc32cCombine(crc32c(header), payloadCrc32c, payload.byteLength))
        : this.digest([header, payload]);
    return Buffer.concat([header, digest]);
  }

  /** The whole stored packet of one entry. */
  pack(ledgerId: number, entryId: number, lastAddConfirmed: number, length: number, payload: Uint8Array): Buffer {
    return Buffer.concat([this.packHeader(ledgerId, entryId, lastAddConfirmed, length, payload), payload]);
  }

  /**
   * Checks a stored packet (DigestManager.verifyDigest) and parses it. `entryId` undefined skips the entry-id
   * check (a last-entry read, whose id is not known in advance). Throws DigestMismatchError.
   */
  unpack(ledgerId: number, packet: Uint8Array, entryId?: number): UnpackedEntry {
    const buf = Buffer.isBuffer(packet) ? packet : Buffer.from(packet.buffer, packet.byteOffset, packet.byteLength);
    if (buf.length < METADATA_LENGTH + this.length) throw new DigestMismatchError(`entry of ledger ${ledgerId} too short (${buf.length} bytes) for its digest`);
    const header = buf.subarray(0, METADATA_LENGTH);
    const payload = buf.subarray(METADATA_LENGTH + this.length);
    const expected = this.digest([header, payload]);
    if (!expected.equals(buf.subarray(METADATA_LENGTH, METADATA_LENGTH + this.length))) {
      throw new DigestMismatchError(`digest mismatch in ledger ${ledgerId}${entryId === undefined ? '' : ` entry ${entryId}`}`);
    }
    const actualLedger = Number(header.readBigInt64BE(0));
    const actualEntry = Number(header.readBigInt64BE(8));
    if (actualLedger !== ledgerId) throw new DigestMismatchError(`entry names ledger ${actualLedger}, expected ${ledgerId}`);
    if (entryId !== undefined && actualEntry !== entryId) throw new DigestMismatchError(`entry names entry ${actualEntry}, expected ${entryId} (ledger ${ledgerId})`);
    return { ledgerId, entryId: actualEntry, lastAddConfirmed: Number(header.readBigInt64BE(16)), length: Number(header.readBigInt64BE(24)), payload };
  }

  /** Checks an explicit LAC body (DigestManager.verifyDigestAndReturnLac) and returns the LAC. */
  unpackLac(ledgerId: number, body: Uint8Array): number {
    const buf = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (buf.length < LAC_METADATA_LENGTH + this.length) throw new DigestMismatchError(`LAC of ledger ${ledgerId} too short (${buf.length} bytes)`);
    const header = buf.subarray(0, LAC_METADATA_LENGTH);
    if (!this.digest([header]).equals(buf.subarray(LAC_METADATA_LENGTH, LAC_METADATA_LENGTH + this.length))) throw new DigestMismatchError(`LAC digest mismatch in ledger ${ledgerId}`);
    if (Number(header.readBigInt64BE(0)) !== ledgerId) throw new DigestMismatchError(`LAC names ledger ${Number(header.readBigInt64BE(0))}, expected ${ledgerId}`);
    return Number(header.readBigInt64BE(8));
  }

  /** An explicit LAC body (WriteLac): ledgerId, lac, digest. */
  packLac(ledgerId: number, lac: number): Buffer {
    const header = Buffer.allocUnsafe(LAC_METADATA_LENGTH);
    header.writeBigInt64BE(BigInt(ledgerId), 0);
    header.writeBigInt64BE(BigInt(lac), 8);
    return Buffer.concat([header, this.digest([header])]);
  }
}
