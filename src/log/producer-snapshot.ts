/**
 * Persisted idempotent-producer state of a partition at an offset (Kafka's ProducerStateManager snapshot
 * files, `<offset>.snapshot`), so that opening a partition replays only the batches after it instead of
 * `producer.id.expiration.ms` of data.
 *
 * When a ledger is sealed (roll, close, takeover), its owner writes the producer state as of the ledger's
 * end offset into a small ledger of its own and records its id in the sealed ledger's chain record
 * (`producerSnapshotLedgerId`), beside the index snapshot (index-snapshot.ts): the same store, so it works
 * unchanged when the store is replicated, and deleted with the ledger it ends (retention, DeleteRecords,
 * topic deletion). The newest two are kept (Kafka keeps one per segment; two are enough to fall back on).
 *
 * Each entry of a snapshot ledger is one chunk of up to CHUNK_PRODUCERS producers, integers big-endian:
 *
 * ```
 *   ┌─ header, 48 bytes ─────────────────────────────────────────────────────────────────────────┐
 *   │ 0 magic "LLPRODST" │ 8 version u16 (1) │ 10 flags u16 (0) │ 12 count u32 (in this chunk)    │
 *   │ 16 offset i64: the state of every batch below it │ 24 takenAtMs i64                         │
 *   │ 32 chunk u32 │ 36 chunks u32 │ 40 producers u32 (all chunks) │ 44 reserved u32              │
 *   ├─ count × producer, 32 + 32 × batches bytes ────────────────────────────────────────────────┤
 *   │ 0 producerId i64 │ 8 epoch i16 │ 10 batches u8 (≤ 5) │ 11 reserved u8                        │
 *   │ 12 coordinatorEpoch i32 (-1) │ 16 currentTxnFirstOffset i64 (-1: none) │ 24 lastTimestamp i64 │
 *   │ batches × { firstSeq i32, lastSeq i32, baseOffset i64, lastOffset i64, timestamp i64 }      │
 *   ├─ crc32c u32 of every byte before it ───────────────────────────────────────────────────────┤
 * ```
 *
 * `coordinatorEpoch` and `currentTxnFirstOffset` are Kafka's snapshot fields for transactions (the
 * ongoing transaction's first offset gives the last stable offset on open); they are written as -1 until
 * transactions exist, so transactions need no format change. Migrating: bump SNAPSHOT_VERSION and keep
 * decoding the old one; a snapshot that does not decode is ignored (the state is replayed from the log).
 */
import { crc32c } from '../../protocol/crc32c.js';
import { BATCHES_TO_RETAIN, type ProducerBatch, type ProducerStateEntry } from './producer-state.js';

export const PRODUCER_SNAPSHOT_MAGIC = Buffer.from('LLPRODST', 'latin1');
export const PRODUCER_SNAPSHOT_VERSION = 1;
const HEADER_BYTES = 48;
const PRODUCER_BYTES = 32;
const BATCH_BYTES = 32;
/** Producers per chunk: at most 1.5 MiB entries, well under the ledger store's entry limit. */
export const CHUNK_PRODUCERS = 8192;

export interface ProducerSnapshot {
  /** Every batch below this offset is in the state; none at or above it. */
  readonly offset: number;
  readonly takenAtMs: number;
  readonly producers: ProducerStateEntry[];
}

/** The chunks (entries of a snapshot ledger) holding `producers` as of `offset`. No producer: one empty chunk. */
export function encodeProducerSnapshot(offset: number, takenAtMs: number, producers: readonly ProducerStateEntry[]): Buffer[] {
  const chunks: Buffer[] = [];
  const total = producers.length;
  const chunkCount = Math.max(1, Math.ceil(total / CHUNK_PRODUCERS));
  for (let c = 0; c < chunkCount; c++) {
    const part = producers.slice(c * CHUNK_PRODUCERS, (c + 1) * CHUNK_PRODUCERS);
    let size = HEADER_BYTES + 4;
    for (const p of part) size += PRODUCER_BYTES + BATCH_BYTES * p.batches.length;
    const buf = Buffer.alloc(size);
    PRODUCER_SNAPSHOT_MAGIC.copy(buf, 0);
    buf.writeUInt16BE(PRODUCER_SNAPSHOT_VERSION, 8);
    buf.writeUInt32BE(part.length, 12);
    buf.writeBigInt64BE(BigInt(offset), 16);
    buf.writeBigInt64BE(BigInt(takenAtMs), 24);
    buf.writeUInt32BE(c, 32);
    buf.writeUInt32BE(chunkCount, 36);
    buf.writeUInt32BE(total, 40);
    let pos = HEADER_BYTES;
    for (const p of part) {
      if (p.batches.length > BATCHES_TO_RETAIN) throw new RangeError(`producer ${p.producerId} has ${p.batches.length} batches`);
      buf.writeBigInt64BE(p.producerId, pos);
      buf.writeInt16BE(p.epoch, pos + 8);
      buf.writeUInt8(p.batches.length, pos + 10);
      buf.writeInt32BE(p.coordinatorEpoch, pos + 12);
      buf.writeBigInt64BE(BigInt(p.currentTxnFirstOffset), pos + 16);
      buf.writeBigInt64BE(BigInt(p.lastTimestamp), pos + 24);
      pos += PRODUCER_BYTES;
      for (const b of p.batches) {
        buf.writeInt32BE(b.firstSeq, pos);
        buf.writeInt32BE(b.lastSeq, pos + 4);
        buf.writeBigInt64BE(BigInt(b.baseOffset), pos + 8);
        buf.writeBigInt64BE(BigInt(b.lastOffset), pos + 16);
        buf.writeBigInt64BE(BigInt(b.timestamp), pos + 24);
        pos += BATCH_BYTES;
      }
    }
    buf.writeUInt32BE(crc32c(buf.subarray(0, pos)), pos);
    chunks.push(buf);
  }
  return chunks;
}

function readSafe(buf: Buffer, pos: number): number | null {
  const v = buf.readBigInt64BE(pos);
  return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : null;
}

/**
 * The producer state in a snapshot's chunks, or a reason why it cannot be used (wrong magic, version,
 * checksum, chunk order, an offset other than `expectOffset`, or fields out of range). Allocates nothing
 * the chunks' own length does not bound.
 */
export function decodeProducerSnapshot(chunks: readonly Buffer[], expectOffset: number): ProducerSnapshot | string {
  const producers: ProducerStateEntry[] = [];
  let takenAtMs = -1;
  let total = -1;
  let chunkCount = -1;
  if (chunks.length === 0) return 'no chunks';
  for (let c = 0; c < chunks.length; c++) {
    const buf = chunks[c]!;
    if (buf.length < HEADER_BYTES + 4) return 'chunk too short';
    if (!buf.subarray(0, 8).equals(PRODUCER_SNAPSHOT_MAGIC)) return 'bad magic';
    const version = buf.readUInt16BE(8);
    if (version !== PRODUCER_SNAPSHOT_VERSION) return `unsupported version ${version}`;
    const end = buf.length - 4;
    if (crc32c(buf.subarray(0, end)) !== buf.readUInt32BE(end)) return 'checksum mismatch';
    const offset = readSafe(buf, 16);
    if (offset !== expectOffset) return `snapshot at offset ${String(offset)}, expected ${expectOffset}`;
    if (buf.readUInt32BE(32) !== c) return `chunk ${buf.readUInt32BE(32)} where ${c} was expected`;
    if (c === 0) {
      takenAtMs = readSafe(buf, 24) ?? -1;
      chunkCount = buf.readUInt32BE(36);
      total = buf.readUInt32BE(40);
      if (chunkCount !== chunks.length) return `snapshot has ${chunkCount} chunks, the ledger ${chunks.length}`;
    } else if (buf.readUInt32BE(36) !== chunkCount || buf.readUInt32BE(40) !== total) {
      return 'chunks disagree on their totals';
    }
    const count = buf.readUInt32BE(12);
    let pos = HEADER_BYTES;
    for (let i = 0; i < count; i++) {
      if (pos + PRODUCER_BYTES > end) return 'producer past the end of its chunk';
      const producerId = buf.readBigInt64BE(pos);
      const epoch = buf.readInt16BE(pos + 8);
      const n = buf.readUInt8(pos + 10);
      const coordinatorEpoch = buf.readInt32BE(pos + 12);
      const currentTxnFirstOffset = readSafe(buf, pos + 16);
      const lastTimestamp = readSafe(buf, pos + 24);
      if (producerId < 0n || n > BATCHES_TO_RETAIN || currentTxnFirstOffset === null || lastTimestamp === null) {
        return `bad producer at byte ${pos}`;
      }
      pos += PRODUCER_BYTES;
      if (pos + n * BATCH_BYTES > end) return 'batches past the end of their chunk';
      const batches: ProducerBatch[] = [];
      for (let j = 0; j < n; j++, pos += BATCH_BYTES) {
        const baseOffset = readSafe(buf, pos + 8);
        const lastOffset = readSafe(buf, pos + 16);
        const timestamp = readSafe(buf, pos + 24);
        const firstSeq = buf.readInt32BE(pos);
        const lastSeq = buf.readInt32BE(pos + 4);
        // Sequences and epochs are whatever the producer sent (the CRC vouches for them); offsets are the log's.
        if (baseOffset === null || lastOffset === null || timestamp === null) return `bad batch at byte ${pos}`;
        if (baseOffset < 0 || lastOffset < baseOffset || lastOffset >= expectOffset) return `batch offsets out of range at byte ${pos}`;
        batches.push({ firstSeq, lastSeq, baseOffset, lastOffset, timestamp });
      }
      producers.push({ producerId, epoch, batches, lastTimestamp, coordinatorEpoch, currentTxnFirstOffset });
    }
    if (pos !== end) return 'chunk length does not match its producers';
  }
  if (producers.length !== total) return `snapshot holds ${producers.length} producers, its header ${total}`;
  return { offset: expectOffset, takenAtMs, producers };
}
