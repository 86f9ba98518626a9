/**
 * Persisted index of a sealed ledger, so that opening a partition does not read its data.
 *
 * When a ledger is sealed, its owner writes the ledger's offset/time index into a small ledger of its own
 * (the "index ledger", named by `indexLedgerId` in the chain) and seals it. Opening the partition reads these
 * (16 bytes per batch) instead of every batch of every ledger; a ledger without a usable snapshot (never
 * written because the owner crashed first, or failing its checksum) is indexed from its batches' headers.
 * The index ledger lives in the same ledger store as the data, so it works unchanged when the store is
 * replicated and the broker has no local disk, and it is deleted with its data ledger.
 *
 * Each entry of an index ledger is one chunk of up to CHUNK_BATCHES batches, all integers little-endian:
 *
 * ```
 *   ┌─ header, 48 bytes ──────────────────────────────────────────────────────────────────┐
 *   │ 0 magic "LLLOGIDX" │ 8 version u16 (1) │ 10 reserved u16 │ 12 count u32              │
 *   │ 16 dataLedgerId i64 │ 24 firstEntryId i64 │ 32 startOffset i64 │ 40 totalEntries u32 │
 *   │ 44 reserved u32                                                                      │
 *   ├─ count × 16 bytes: { lastOffset i64, maxTimestamp i64 } for entries firstEntryId… ───┤
 *   ├─ crc32c u32 of every byte before it ────────────────────────────────────────────────┤
 * ```
 *
 * Migrating: bump SNAPSHOT_VERSION and keep decoding the old one; a snapshot that cannot be decoded is
 * simply ignored (the ledger is indexed from its data), so dropping support for a version is also safe.
 */
import { crc32c } from '../../protocol/crc32c.js';
import { IndexedLedger } from './offset-index.js';

export const SNAPSHOT_MAGIC = Buffer.from('LLLOGIDX', 'latin1');
export const SNAPSHOT_VERSION = 1;
const HEADER_BYTES = 48;
const ROW_BYTES = 16;
/** Batches per chunk: 1 MiB entries, well under the ledger store's entry limit. */
export const CHUNK_BATCHES = 65536;

const TWO_32 = 2 ** 32;
/** Typed-array views read and write little-endian words only on a little-endian machine. */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function writeI64(buf: Buffer, pos: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  buf.writeUInt32LE(v - hi * TWO_32, pos);
  buf.writeInt32LE(hi, pos + 4);
}

function readI64(buf: Buffer, pos: number): number {
  return buf.readInt32LE(pos + 4) * TWO_32 + buf.readUInt32LE(pos);
}

/** The chunks (entries of the index ledger) holding `ledger`'s index. An empty ledger gives one empty chunk. */
export function encodeIndexSnapshot(ledger: IndexedLedger): Buffer[] {
  const total = ledger.count;
  const chunks: Buffer[] = [];
  for (let first = 0; first === 0 || first < total; first += CHUNK_BATCHES) {
    const count = Math.min(CHUNK_BATCHES, total - first);
    const buf = Buffer.alloc(HEADER_BYTES + count * ROW_BYTES + 4);
    SNAPSHOT_MAGIC.copy(buf, 0);
    buf.writeUInt16LE(SNAPSHOT_VERSION, 8);
    buf.writeUInt32LE(count, 12);
    writeI64(buf, 16, ledger.ledgerId);
    writeI64(buf, 24, first);
    writeI64(buf, 32, ledger.startOffset);
    buf.writeUInt32LE(total, 40);
    // Rows through 32-bit word views of an aligned scratch array, then one copy into the chunk.
    const words = new Uint32Array(count * 4);
    const signed = new Int32Array(words.buffer);
    for (let j = 0, i = first; j < count; j++, i++) {
      const offset = ledger.lastOffsetAt(i);
      const ts = ledger.maxTimestampAt(i);
      const oHi = Math.floor(offset / TWO_32);
      const tHi = Math.floor(ts / TWO_32);
      words[4 * j] = offset - oHi * TWO_32;
      signed[4 * j + 1] = oHi;
      words[4 * j + 2] = ts - tHi * TWO_32;
      signed[4 * j + 3] = tHi;
    }
    const rows = Buffer.from(words.buffer, 0, count * ROW_BYTES);
    if (!LITTLE_ENDIAN) rows.swap32();
    rows.copy(buf, HEADER_BYTES);
    const end = HEADER_BYTES + count * ROW_BYTES;
    buf.writeUInt32LE(crc32c(buf.subarray(0, end)), end);
    chunks.push(buf);
  }
  return chunks;
}

export interface SnapshotExpectation {
  readonly ledgerId: number;
  readonly startOffset: number;
  readonly entries: number;
  readonly epoch: number;
  readonly createdAtMs: number;
  readonly bytes: number;
  readonly sealedAtMs: number;
}

/**
 * Rebuilds a sealed ledger's index from its snapshot chunks, or returns a reason why the snapshot cannot be
 * used (wrong magic, version, checksum, ledger, or entries that do not match what the chain says).
 */
export function decodeIndexSnapshot(chunks: readonly Buffer[], expect: SnapshotExpectation): IndexedLedger | string {
  const lastOffsets = new Float64Array(expect.entries);
  const maxTimestamps = new Float64Array(expect.entries);
  let next = 0;
  let prev = expect.startOffset - 1;
  for (const buf of chunks) {
    if (buf.length < HEADER_BYTES + 4) return 'chunk too short';
    if (!buf.subarray(0, 8).equals(SNAPSHOT_MAGIC)) return 'bad magic';
    const version = buf.readUInt16LE(8);
    if (version !== SNAPSHOT_VERSION) return `unsupported version ${version}`;
    const count = buf.readUInt32LE(12);
    if (buf.length !== HEADER_BYTES + count * ROW_BYTES + 4) return 'chunk length does not match its count';
    const end = buf.length - 4;
    if (crc32c(buf.subarray(0, end)) !== buf.readUInt32LE(end)) return 'checksum mismatch';
    if (readI64(buf, 16) !== expect.ledgerId) return `snapshot of ledger ${readI64(buf, 16)}`;
    if (readI64(buf, 24) !== next) return `chunk starts at entry ${readI64(buf, 24)}, expected ${next}`;
    if (readI64(buf, 32) !== expect.startOffset) return 'start offset differs from the chain';
    if (buf.readUInt32LE(40) !== expect.entries) return `snapshot has ${buf.readUInt32LE(40)} entries, chain ${expect.entries}`;
    if (next + count > expect.entries) return 'more rows than entries';
    // Copy the rows to an aligned array and read them through 32-bit word views.
    const aligned = new Uint32Array(count * 4);
    const bytes = Buffer.from(aligned.buffer);
    buf.copy(bytes, 0, HEADER_BYTES, end);
    if (!LITTLE_ENDIAN) bytes.swap32();
    const signed = new Int32Array(aligned.buffer);
    for (let j = 0; j < count; j++, next++) {
      const lastOffset = signed[4 * j + 1]! * TWO_32 + aligned[4 * j]!;
      if (lastOffset <= prev) return `offsets not increasing at entry ${next}`;
      lastOffsets[next] = lastOffset;
      maxTimestamps[next] = signed[4 * j + 3]! * TWO_32 + aligned[4 * j + 2]!;
      prev = lastOffset;
    }
  }
  if (next !== expect.entries) return `snapshot holds ${next} entries, chain ${expect.entries}`;
  return IndexedLedger.restore(
    expect.ledgerId,
    expect.startOffset,
    expect.epoch,
    expect.createdAtMs,
    lastOffsets,
    maxTimestamps,
    expect.bytes,
    expect.sealedAtMs,
  );
}
