/**
 * On-disk format of the local ledger store, format version 1. All integers little-endian; u64 values are
 * safe integers (< 2^53). Every structure carries a magic and the format version; every record and every
 * metadata file carries a CRC-32C (Castagnoli, as Kafka's record batches use).
 *
 * A store directory:
 *
 * ```
 *   <dir>/LOCK.sqlite                   the directory lock: empty SQLite database, POSIX-locked by the owner
 *   <dir>/ledgers.ckpt                  checkpoint: ledger table + where replay starts (tmp + rename)
 *   <dir>/00000000000000000001.seg      segment: shared, append-only log of records of all ledgers (deleted
 *                                       once it has no live entry; compaction copies the few live ones out)
 *   <dir>/00000000000000000001.idx      index of a rolled segment's entries (written after the roll)
 *   <dir>/00000000000000000002.seg      … the highest-numbered segment is the active one
 * ```
 *
 * Segment file (one journal for every ledger: entries of many ledgers interleave, so one fsync commits a
 * group of appends to any number of ledgers):
 *
 * ```
 *   ┌──────────────────── segment header, 64 bytes ────────────────────┐
 *   │ 0 magic "LLSEGMNT" │ 8 version u16 │ 10 headerLength u16 (64)    │
 *   │ 12 reserved u32    │ 16 segmentSeq u64 │ 24 prevSegmentSeq u64   │
 *   │ 32 prevSegmentValidBytes u64 │ 40 createdAtMs u64                │
 *   │ 48 reserved (12)   │ 60 crc32c u32 of bytes 0..59                │
 *   ├──────────────────── record (32-byte header + payload) ───────────┤
 *   │ 0 crc32c u32 of bytes 4..end of payload │ 4 payloadLength u32    │
 *   │ 8 type u8 │ 9 recordVersion u8 │ 10 reserved u16                 │
 *   │ 12 ledgerId u64 │ 20 arg u64 │ 28 reserved u32                   │
 *   │ 32 payload …                                                     │
 *   ├──────────────────── record ──────────────────────────────────────┤
 *   │ …                                                                │
 *   └──────────────────────────────────────────────────────────────────┘
 *
 *   type 1 ENTRY   arg = entryId,    payload = the entry's bytes
 *   type 2 CREATE  arg = 0,          payload = createdAtMs u64
 *   type 3 SEAL    arg = entryCount, payload = sealedAtMs u64   (entryCount = lastEntryId + 1)
 *   type 4 DELETE  arg = 0,          payload = empty
 * ```
 *
 * `prevSegmentValidBytes` is how the store "truncates" a segment it can no longer trust: when a write or
 * fsync fails, the store rolls to a new segment whose header records how many bytes of the previous one are
 * valid, so bytes of failed appends can never be recovered later, even if they did reach the disk.
 *
 * Index file of a rolled segment (lets recovery skip scanning it):
 *
 * ```
 *   0 magic "LLSEGIDX" │ 8 version u16 │ 10 reserved u16 │ 12 runCount u32 │ 16 segmentSeq u64 │ 24 validBytes u64
 *   32 runCount × { ledgerId u64, firstEntryId u64, count u32, reserved u32 }          (24 bytes each)
 *   then for each run in order: count × offset u32 (record start in the segment), count × payloadLength u32
 *   last 4 bytes: crc32c u32 of everything before
 * ```
 *
 * Checkpoint `ledgers.ckpt` (rewritten whole: write `ledgers.ckpt.tmp`, fsync, rename, fsync the directory):
 *
 * ```
 *   0 magic "LLLEDCKP" │ 8 version u16 │ 10 reserved u16 │ 12 ledgerCount u32 │ 16 nextLedgerId u64
 *   24 replayFromSegment u64 │ 32 writtenAtMs u64 │ 40 activeSegment u64 │ 48 activeSegmentDurableBytes u64
 *   56 ledgerCount × { ledgerId u64, createdAtMs u64, sealedAtMs u64 (0 = open), entryCount u64 (if sealed) }
 *   last 4 bytes: crc32c u32 of everything before
 * ```
 *
 * The checkpoint is a promise to recovery: every ledger it lists has all its entries in the segments on disk.
 * So a segment below `replayFromSegment` is deleted only after a checkpoint that lists none of its ledgers is
 * durable, and an index file agrees with the ledger table written after it (both come from one snapshot).
 *
 * Recovery cuts the active segment at its first torn or mismatching record (a crash mid-write), except
 * below `activeSegmentDurableBytes`: those bytes were durable when the checkpoint was written, so a bad
 * record there is damage, reported as LL_ERR_LEDGER_CORRUPT rather than silently cut.
 *
 * Compaction (garbage-collector.ts) changed no byte of this format, only what recovery must accept: it copies
 * a live entry of an old segment into the active one as an ordinary ENTRY record, so one entry may be found
 * twice (the old segment is deleted once the copy is durable; a crash in between leaves both), a ledger's
 * entries need not be in segment order, and an index file may hold several runs of one ledger. Recovery keeps
 * the copy in the newest segment. A build older than compaction refuses such a store (LL_ERR_LEDGER_CORRUPT,
 * "found entry N where entry M was expected") rather than misreading it: do not downgrade past it.
 *
 * Migrating the format: bump FORMAT_VERSION, keep decoding version N-1 alongside N (records carry their own
 * version byte, so old records stay readable in place; segment, index and checkpoint headers carry the
 * version of the file), and always write the current version. Index and checkpoint files can simply be
 * rebuilt: a store that finds one it cannot decode scans the segments instead.
 */
import { crc32c } from '@node-rs/crc32';
import { crc32cCombine } from '../../protocol/crc32c.js';

export const FORMAT_VERSION = 1;
export const RECORD_VERSION = 1;

export const SEGMENT_MAGIC = Buffer.from('LLSEGMNT', 'latin1');
export const INDEX_MAGIC = Buffer.from('LLSEGIDX', 'latin1');
export const CHECKPOINT_MAGIC = Buffer.from('LLLEDCKP', 'latin1');

export const SEGMENT_HEADER_BYTES = 64;
export const RECORD_HEADER_BYTES = 32;
const INDEX_HEADER_BYTES = 32;
const INDEX_RUN_BYTES = 24;
const CHECKPOINT_HEADER_BYTES = 56;
const CHECKPOINT_LEDGER_BYTES = 32;

export const RecordType = {
  ENTRY: 1,
  CREATE: 2,
  SEAL: 3,
  DELETE: 4,
} as const;
export type RecordType = (typeof RecordType)[keyof typeof RecordType];

/** Largest payload a record may declare; anything larger is treated as garbage when scanning. */
export const MAX_RECORD_PAYLOAD = 0x7fff_ffff;

const TWO_32 = 0x1_0000_0000;

export function writeU64(buf: Buffer, offset: number, value: number): void {
  buf.writeUInt32LE(value >>> 0, offset);
  buf.writeUInt32LE(Math.floor(value / TWO_32), offset + 4);
}

/** Reads a u64; returns -1 when it is not a safe integer (never written by this format: garbage). */
export function readU64(buf: Buffer, offset: number): number {
  const hi = buf.readUInt32LE(offset + 4);
  if (hi >= 0x20_0000) return -1;
  return hi * TWO_32 + buf.readUInt32LE(offset);
}

export function segmentFileName(seq: number): string {
  return `${String(seq).padStart(20, '0')}.seg`;
}

export function indexFileName(seq: number): string {
  return `${String(seq).padStart(20, '0')}.idx`;
}

export const CHECKPOINT_FILE = 'ledgers.ckpt';
/** The lock of the directory (an empty SQLite database whose POSIX lock the owner holds: see fs.ts). */
export const LOCK_FILE = 'LOCK.sqlite';
/** The pid file earlier versions locked with; removed once the lock is held (it locks nothing). */
export const LEGACY_PID_LOCK_FILE = 'LOCK';

/** The sequence number of a segment or index file name, or null for any other name. */
export function parseSegmentSeq(name: string, ext: '.seg' | '.idx'): number | null {
  if (name.length !== 20 + ext.length || !name.endsWith(ext)) return null;
  const digits = name.slice(0, 20);
  if (!/^\d{20}$/.test(digits)) return null;
  const seq = Number(digits);
  return Number.isSafeInteger(seq) && seq > 0 ? seq : null;
}

// ── segment header ─────────────────────────────────────────────────────────────────────────────────────

export interface SegmentHeader {
  readonly segmentSeq: number;
  readonly prevSegmentSeq: number;
  readonly prevSegmentValidBytes: number;
  readonly createdAtMs: number;
}

export function encodeSegmentHeader(h: SegmentHeader): Buffer {
  const buf = Buffer.alloc(SEGMENT_HEADER_BYTES);
  SEGMENT_MAGIC.copy(buf, 0);
  buf.writeUInt16LE(FORMAT_VERSION, 8);
  buf.writeUInt16LE(SEGMENT_HEADER_BYTES, 10);
  writeU64(buf, 16, h.segmentSeq);
  writeU64(buf, 24, h.prevSegmentSeq);
  writeU64(buf, 32, h.prevSegmentValidBytes);
  writeU64(buf, 40, h.createdAtMs);
  buf.writeUInt32LE(crc32c(buf.subarray(0, 60)), 60);
  return buf;
}

/** Decodes a segment header; returns a string saying what is wrong when it is not a valid one. */
export function decodeSegmentHeader(buf: Buffer): SegmentHeader | string {
  if (buf.length < SEGMENT_HEADER_BYTES) return 'segment header is truncated';
  if (!buf.subarray(0, 8).equals(SEGMENT_MAGIC)) return 'segment magic does not match';
  if (buf.readUInt32LE(60) !== crc32c(buf.subarray(0, 60))) return 'segment header checksum does not match';
  const version = buf.readUInt16LE(8);
  if (version !== FORMAT_VERSION) return `segment format version ${version} is not supported`;
  const h = {
    segmentSeq: readU64(buf, 16),
    prevSegmentSeq: readU64(buf, 24),
    prevSegmentValidBytes: readU64(buf, 32),
    createdAtMs: readU64(buf, 40),
  };
  if (h.segmentSeq <= 0 || h.prevSegmentSeq < 0 || h.prevSegmentValidBytes < 0) return 'segment header fields are out of range';
  return h;
}

// ── records ────────────────────────────────────────────────────────────────────────────────────────────

/** Writes a record header (all but its CRC) into `buf` at `offset`; `sealRecordCrc` completes it. */
export function writeRecordHeader(buf: Buffer, offset: number, type: RecordType, ledgerId: number, arg: number, payloadLength: number): void {
  buf.writeUInt32LE(payloadLength, offset + 4);
  buf[offset + 8] = type;
  buf[offset + 9] = RECORD_VERSION;
  buf.writeUInt16LE(0, offset + 10);
  writeU64(buf, offset + 12, ledgerId);
  writeU64(buf, offset + 20, arg);
  buf.writeUInt32LE(0, offset + 28);
}

/**
 * Computes the record CRC over header bytes 4..31 and the payload, and stores it at header byte 0. Given the
 * payload's own CRC-32C (`payloadCrc`, LedgerAppendOptions.crc32c), it is derived from that without reading
 * the payload: at 100 MiB/s of produce that second pass over every byte was 7% of the event loop's busy time.
 */
export function sealRecordCrc(buf: Buffer, offset: number, payload: Uint8Array, payloadCrc?: number): void {
  const headerCrc = crc32c(buf.subarray(offset + 4, offset + RECORD_HEADER_BYTES));
  const crc =
    payload.byteLength === 0 ? headerCrc : payloadCrc !== undefined ? crc32cCombine(headerCrc, payloadCrc, payload.byteLength) : crc32c(payload, headerCrc);
  buf.writeUInt32LE(crc, offset);
}

export interface RecordHeader {
  readonly crc: number;
  readonly payloadLength: number;
  readonly type: RecordType;
  readonly ledgerId: number;
  readonly arg: number;
}

/** Decodes a record header (not yet its CRC); null when the fields cannot belong to a valid record. */
export function decodeRecordHeader(buf: Buffer, offset: number): RecordHeader | null {
  const type = buf[offset + 8]!;
  if (type < RecordType.ENTRY || type > RecordType.DELETE) return null;
  if (buf[offset + 9] !== RECORD_VERSION) return null;
  const payloadLength = buf.readUInt32LE(offset + 4);
  const ledgerId = readU64(buf, offset + 12);
  const arg = readU64(buf, offset + 20);
  if (payloadLength > MAX_RECORD_PAYLOAD || ledgerId <= 0 || arg < 0) return null;
  return { crc: buf.readUInt32LE(offset), payloadLength, type: type as RecordType, ledgerId, arg };
}

/** True when the record at `offset` (header and payload both in `buf`) matches its CRC. */
export function recordCrcMatches(buf: Buffer, offset: number, payloadLength: number): boolean {
  const headerCrc = crc32c(buf.subarray(offset + 4, offset + RECORD_HEADER_BYTES));
  const start = offset + RECORD_HEADER_BYTES;
  const crc = payloadLength === 0 ? headerCrc : crc32c(buf.subarray(start, start + payloadLength), headerCrc);
  return crc === buf.readUInt32LE(offset);
}

/** A complete control record (CREATE/SEAL/DELETE) with its CRC. */
export function encodeControlRecord(type: RecordType, ledgerId: number, arg: number, timestampMs: number | null): Buffer {
  const payloadLength = timestampMs === null ? 0 : 8;
  const buf = Buffer.alloc(RECORD_HEADER_BYTES + payloadLength);
  writeRecordHeader(buf, 0, type, ledgerId, arg, payloadLength);
  if (timestampMs !== null) writeU64(buf, RECORD_HEADER_BYTES, timestampMs);
  sealRecordCrc(buf, 0, buf.subarray(RECORD_HEADER_BYTES));
  return buf;
}

// ── segment index ──────────────────────────────────────────────────────────────────────────────────────

export interface IndexRun {
  readonly ledgerId: number;
  readonly firstEntryId: number;
  /** Record start of each entry in the segment. */
  readonly offsets: Uint32Array;
  /** Payload length of each entry. */
  readonly lengths: Uint32Array;
}

export interface SegmentIndex {
  readonly segmentSeq: number;
  readonly validBytes: number;
  readonly runs: IndexRun[];
}

export function encodeSegmentIndex(index: SegmentIndex): Buffer {
  let entries = 0;
  for (const r of index.runs) entries += r.offsets.length;
  const size = INDEX_HEADER_BYTES + index.runs.length * INDEX_RUN_BYTES + entries * 8 + 4;
  const buf = Buffer.alloc(size);
  INDEX_MAGIC.copy(buf, 0);
  buf.writeUInt16LE(FORMAT_VERSION, 8);
  buf.writeUInt32LE(index.runs.length, 12);
  writeU64(buf, 16, index.segmentSeq);
  writeU64(buf, 24, index.validBytes);
  let pos = INDEX_HEADER_BYTES;
  for (const r of index.runs) {
    writeU64(buf, pos, r.ledgerId);
    writeU64(buf, pos + 8, r.firstEntryId);
    buf.writeUInt32LE(r.offsets.length, pos + 16);
    pos += INDEX_RUN_BYTES;
  }
  for (const r of index.runs) {
    for (let i = 0; i < r.offsets.length; i++, pos += 4) buf.writeUInt32LE(r.offsets[i]!, pos);
    for (let i = 0; i < r.lengths.length; i++, pos += 4) buf.writeUInt32LE(r.lengths[i]!, pos);
  }
  buf.writeUInt32LE(crc32c(buf.subarray(0, pos)), pos);
  return buf;
}

export function decodeSegmentIndex(buf: Buffer): SegmentIndex | string {
  if (buf.length < INDEX_HEADER_BYTES + 4) return 'index file is truncated';
  if (!buf.subarray(0, 8).equals(INDEX_MAGIC)) return 'index magic does not match';
  const end = buf.length - 4;
  if (buf.readUInt32LE(end) !== crc32c(buf.subarray(0, end))) return 'index checksum does not match';
  const version = buf.readUInt16LE(8);
  if (version !== FORMAT_VERSION) return `index format version ${version} is not supported`;
  const runCount = buf.readUInt32LE(12);
  const segmentSeq = readU64(buf, 16);
  const validBytes = readU64(buf, 24);
  let pos = INDEX_HEADER_BYTES;
  if (pos + runCount * INDEX_RUN_BYTES > end) return 'index run table is truncated';
  const heads: { ledgerId: number; firstEntryId: number; count: number }[] = [];
  for (let i = 0; i < runCount; i++, pos += INDEX_RUN_BYTES) {
    heads.push({ ledgerId: readU64(buf, pos), firstEntryId: readU64(buf, pos + 8), count: buf.readUInt32LE(pos + 16) });
  }
  const runs: IndexRun[] = [];
  for (const h of heads) {
    if (pos + h.count * 8 > end || h.ledgerId <= 0 || h.firstEntryId < 0) return 'index run is out of range';
    const offsets = new Uint32Array(h.count);
    const lengths = new Uint32Array(h.count);
    for (let i = 0; i < h.count; i++, pos += 4) offsets[i] = buf.readUInt32LE(pos);
    for (let i = 0; i < h.count; i++, pos += 4) lengths[i] = buf.readUInt32LE(pos);
    runs.push({ ledgerId: h.ledgerId, firstEntryId: h.firstEntryId, offsets, lengths });
  }
  if (pos !== end) return 'index has trailing bytes';
  return { segmentSeq, validBytes, runs };
}

// ── checkpoint ─────────────────────────────────────────────────────────────────────────────────────────

export interface CheckpointLedger {
  readonly ledgerId: number;
  readonly createdAtMs: number;
  /** 0 while open. */
  readonly sealedAtMs: number;
  /** Final entry count of a sealed ledger; 0 for an open one. */
  readonly entryCount: number;
}

export interface Checkpoint {
  readonly nextLedgerId: number;
  readonly replayFromSegment: number;
  readonly writtenAtMs: number;
  /** The active segment when written, and how many of its bytes were durable then. */
  readonly activeSegment: number;
  readonly activeSegmentDurableBytes: number;
  readonly ledgers: CheckpointLedger[];
}

export function encodeCheckpoint(c: Checkpoint): Buffer {
  const size = CHECKPOINT_HEADER_BYTES + c.ledgers.length * CHECKPOINT_LEDGER_BYTES + 4;
  const buf = Buffer.alloc(size);
  CHECKPOINT_MAGIC.copy(buf, 0);
  buf.writeUInt16LE(FORMAT_VERSION, 8);
  buf.writeUInt32LE(c.ledgers.length, 12);
  writeU64(buf, 16, c.nextLedgerId);
  writeU64(buf, 24, c.replayFromSegment);
  writeU64(buf, 32, c.writtenAtMs);
  writeU64(buf, 40, c.activeSegment);
  writeU64(buf, 48, c.activeSegmentDurableBytes);
  let pos = CHECKPOINT_HEADER_BYTES;
  for (const l of c.ledgers) {
    writeU64(buf, pos, l.ledgerId);
    writeU64(buf, pos + 8, l.createdAtMs);
    writeU64(buf, pos + 16, l.sealedAtMs);
    writeU64(buf, pos + 24, l.entryCount);
    pos += CHECKPOINT_LEDGER_BYTES;
  }
  buf.writeUInt32LE(crc32c(buf.subarray(0, pos)), pos);
  return buf;
}

export function decodeCheckpoint(buf: Buffer): Checkpoint | string {
  if (buf.length < CHECKPOINT_HEADER_BYTES + 4) return 'checkpoint is truncated';
  if (!buf.subarray(0, 8).equals(CHECKPOINT_MAGIC)) return 'checkpoint magic does not match';
  const end = buf.length - 4;
  if (buf.readUInt32LE(end) !== crc32c(buf.subarray(0, end))) return 'checkpoint checksum does not match';
  const version = buf.readUInt16LE(8);
  if (version !== FORMAT_VERSION) return `checkpoint format version ${version} is not supported`;
  const count = buf.readUInt32LE(12);
  if (CHECKPOINT_HEADER_BYTES + count * CHECKPOINT_LEDGER_BYTES !== end) return 'checkpoint length does not match its ledger count';
  const ledgers: CheckpointLedger[] = [];
  for (let i = 0, pos = CHECKPOINT_HEADER_BYTES; i < count; i++, pos += CHECKPOINT_LEDGER_BYTES) {
    ledgers.push({ ledgerId: readU64(buf, pos), createdAtMs: readU64(buf, pos + 8), sealedAtMs: readU64(buf, pos + 16), entryCount: readU64(buf, pos + 24) });
  }
  return {
    nextLedgerId: readU64(buf, 16),
    replayFromSegment: readU64(buf, 24),
    writtenAtMs: readU64(buf, 32),
    activeSegment: readU64(buf, 40),
    activeSegmentDurableBytes: readU64(buf, 48),
    ledgers,
  };
}
