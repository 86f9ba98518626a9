/**
 * The aborted-transaction index of a partition (Kafka's TransactionIndex, one `.txnindex` per segment):
 * one entry per aborted transaction that holds data here, `{producerId, firstOffset, lastOffset (the ABORT
 * marker's offset), lastStableOffset (the LSO once it completed)}`, kept in marker-offset order. A
 * read_committed Fetch gets the aborted transactions overlapping what it read (Kafka's
 * UnifiedLog.collectAbortedTransactions), so the consumer drops their records.
 *
 * Entries belong to the ledger holding their marker. The producer state adds them as markers are applied
 * (producer-state.ts `onAbortedTxn`: on append and on the replay at open). A sealed ledger's entries are
 * stored in its index ledger (index-snapshot.ts), after the index chunks, as chunks of their own, all
 * integers little-endian:
 *
 * ```
 *   ┌─ header, 32 bytes ───────────────────────────────────────────────────────────────────┐
 *   │ 0 magic "LLTXNIDX" │ 8 version u16 (1) │ 10 reserved u16 │ 12 count u32               │
 *   │ 16 dataLedgerId i64 │ 24 startOffset i64 (the ledger's)                              │
 *   ├─ count × 32 bytes: { producerId i64, firstOffset i64, lastOffset i64,                 │
 *   │                      lastStableOffset i64 }, lastOffset increasing                    │
 *   ├─ crc32c u32 of every byte before it ─────────────────────────────────────────────────┤
 * ```
 *
 * An index ledger without such a chunk (written before transactions existed, when no transactional batch
 * could be appended) holds no aborted transaction. A chunk that does not decode makes the index snapshot
 * unusable: the ledger is indexed from its batches, where the takeover finds its markers and the first
 * transactional batch of each transaction, carried from one such ledger to the next (takeover.ts
 * LedgerAbortScan); the producer replay gives exact entries for the ledgers it covers. A transaction begun in
 * an earlier ledger that was not read gets the marker ledger's start as its first offset.
 * Migrating: bump TXN_INDEX_VERSION and keep decoding the old one.
 */
import { crc32c } from '../../protocol/crc32c.js';

export const TXN_INDEX_MAGIC = Buffer.from('LLTXNIDX', 'latin1');
export const TXN_INDEX_VERSION = 1;
const HEADER_BYTES = 32;
const ROW_BYTES = 32;
/** Entries per chunk: 1 MiB chunks. */
export const CHUNK_TXNS = 32768;

export interface AbortedTxnEntry {
  readonly producerId: bigint;
  readonly firstOffset: number;
  readonly lastOffset: number;
  readonly lastStableOffset: number;
}

/** What a read_committed Fetch returns per aborted transaction (FetchResponse AbortedTransaction). */
export interface AbortedTxn {
  producerId: bigint;
  firstOffset: number;
}

export class TxnIndex {
  /** Sorted by lastOffset (unique: one marker per offset). */
  private entries: AbortedTxnEntry[] = [];
  /** The largest lastOffset - firstOffset: how far before `upper` a transaction may start. */
  private maxSpan = 0;

  get size(): number {
    return this.entries.length;
  }

  /** Adds an entry; one with the same marker offset is replaced (the replay's exact entry wins). */
  add(e: AbortedTxnEntry): void {
    const es = this.entries;
    const span = e.lastOffset - e.firstOffset;
    if (span > this.maxSpan) this.maxSpan = span;
    const last = es[es.length - 1];
    if (!last || last.lastOffset < e.lastOffset) {
      es.push(e);
      return;
    }
    const i = this.lowerBound(e.lastOffset);
    if (es[i]?.lastOffset === e.lastOffset) es[i] = e;
    else es.splice(i, 0, e);
  }

  /** Retention deleted the ledgers below `offset`: their entries go with them. */
  dropBefore(offset: number): void {
    const i = this.lowerBound(offset);
    if (i > 0) this.entries.splice(0, i);
  }

  /** The entries whose marker lies in [start, end) become `entries` (the log cleaner kept only those). */
  replaceRange(start: number, end: number, entries: readonly AbortedTxnEntry[]): void {
    const from = this.lowerBound(start);
    let to = from;
    while (to < this.entries.length && this.entries[to]!.lastOffset < end) to++;
    this.entries.splice(from, to - from, ...entries.filter((e) => e.lastOffset >= start && e.lastOffset < end));
  }

  clear(): void {
    this.entries = [];
    this.maxSpan = 0;
  }

  /** The entries whose marker lies in [start, end): one ledger's. Copies. */
  inRange(start: number, end: number): AbortedTxnEntry[] {
    const out: AbortedTxnEntry[] = [];
    for (let i = this.lowerBound(start); i < this.entries.length && this.entries[i]!.lastOffset < end; i++) out.push(this.entries[i]!);
    return out;
  }

  /**
   * Kafka's collectAbortedTransactions(fetchOffset, upperBoundOffset): entries with lastOffset ≥ fetchOffset
   * and firstOffset < upper, in marker order.
   */
  collect(fetchOffset: number, upper: number): AbortedTxn[] {
    const out: AbortedTxn[] = [];
    const es = this.entries;
    const stopAt = upper + this.maxSpan;
    for (let i = this.lowerBound(fetchOffset); i < es.length; i++) {
      const e = es[i]!;
      if (e.lastOffset >= stopAt) break;
      if (e.firstOffset < upper) out.push({ producerId: e.producerId, firstOffset: e.firstOffset });
    }
    return out;
  }

  private lowerBound(offset: number): number {
    const es = this.entries;
    let lo = 0;
    let hi = es.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (es[mid]!.lastOffset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

const TWO_32 = 2 ** 32;

function writeI64(buf: Buffer, pos: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  buf.writeUInt32LE(v - hi * TWO_32, pos);
  buf.writeInt32LE(hi, pos + 4);
}

function readI64(buf: Buffer, pos: number): number {
  return buf.readInt32LE(pos + 4) * TWO_32 + buf.readUInt32LE(pos);
}

export function isTxnIndexChunk(buf: Buffer): boolean {
  return buf.length >= 8 && buf.subarray(0, 8).equals(TXN_INDEX_MAGIC);
}

/** The chunks holding one ledger's aborted transactions (none: no chunk). */
export function encodeTxnIndex(ledgerId: number, startOffset: number, entries: readonly AbortedTxnEntry[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let first = 0; first < entries.length; first += CHUNK_TXNS) {
    const part = entries.slice(first, first + CHUNK_TXNS);
    const buf = Buffer.alloc(HEADER_BYTES + part.length * ROW_BYTES + 4);
    TXN_INDEX_MAGIC.copy(buf, 0);
    buf.writeUInt16LE(TXN_INDEX_VERSION, 8);
    buf.writeUInt32LE(part.length, 12);
    writeI64(buf, 16, ledgerId);
    writeI64(buf, 24, startOffset);
    let pos = HEADER_BYTES;
    for (const e of part) {
      buf.writeBigInt64LE(e.producerId, pos);
      writeI64(buf, pos + 8, e.firstOffset);
      writeI64(buf, pos + 16, e.lastOffset);
      writeI64(buf, pos + 24, e.lastStableOffset);
      pos += ROW_BYTES;
    }
    buf.writeUInt32LE(crc32c(buf.subarray(0, pos)), pos);
    chunks.push(buf);
  }
  return chunks;
}

/**
 * A ledger's aborted transactions from its txn-index chunks (in order), or why they cannot be used: wrong
 * version, checksum, ledger, or entries outside the ledger or out of order. Allocates only what the chunks'
 * length bounds.
 */
export function decodeTxnIndex(
  chunks: readonly Buffer[],
  expect: { ledgerId: number; startOffset: number; endOffset: number },
): AbortedTxnEntry[] | string {
  const out: AbortedTxnEntry[] = [];
  let prev = expect.startOffset - 1;
  for (const buf of chunks) {
    if (buf.length < HEADER_BYTES + 4 || !isTxnIndexChunk(buf)) return 'not a txn index chunk';
    const version = buf.readUInt16LE(8);
    if (version !== TXN_INDEX_VERSION) return `unsupported txn index version ${version}`;
    const count = buf.readUInt32LE(12);
    if (buf.length !== HEADER_BYTES + count * ROW_BYTES + 4) return 'txn index chunk length does not match its count';
    const end = buf.length - 4;
    if (crc32c(buf.subarray(0, end)) !== buf.readUInt32LE(end)) return 'txn index checksum mismatch';
    if (readI64(buf, 16) !== expect.ledgerId) return `txn index of ledger ${readI64(buf, 16)}`;
    if (readI64(buf, 24) !== expect.startOffset) return 'txn index start offset differs from the chain';
    for (let pos = HEADER_BYTES; pos < end; pos += ROW_BYTES) {
      const producerId = buf.readBigInt64LE(pos);
      const firstOffset = readI64(buf, pos + 8);
      const lastOffset = readI64(buf, pos + 16);
      const lastStableOffset = readI64(buf, pos + 24);
      if (lastOffset <= prev || lastOffset >= expect.endOffset || firstOffset < 0 || firstOffset > lastOffset || producerId < 0n) {
        return `txn index entry out of range at byte ${pos}`;
      }
      out.push({ producerId, firstOffset, lastOffset, lastStableOffset });
      prev = lastOffset;
    }
  }
  return out;
}
