/**
 * What recovery finds of one ledger's entries, before they become its index. Segment index files and scans
 * of segments yield entries as runs ("pieces") in whatever order the segments are read, and since compaction
 * copies live entries of old segments into the active one, the same entry may be found twice (a crash after
 * the copy was durable and before the old segment was removed), and a ledger's entries need not come in id
 * order (entries 0..99 copied into segment 9, entries 100..199 still in segment 4). Both copies of an entry
 * are valid records with the same bytes (each was CRC-checked or indexed when written); recovery keeps the
 * one in the newest segment, so the older copy becomes garbage and its segment can be reclaimed.
 */
import { LedgerCorruptError } from './errors.js';
import { segmentFileName } from './format.js';
import type { LedgerIndex } from './ledger-index.js';

interface Piece {
  readonly first: number;
  readonly segmentSeq: number;
  readonly offsets: number[] | Uint32Array;
  readonly lengths: number[] | Uint32Array;
}

export class RecoveredEntries {
  private readonly pieces: Piece[] = [];
  /** The piece scans are appending to (number arrays that grow), if any. */
  private open: { first: number; segmentSeq: number; offsets: number[]; lengths: number[] } | null = null;

  constructor(private readonly ledgerId: number) {}

  /** A run from a segment index file. */
  addRun(segmentSeq: number, first: number, offsets: Uint32Array, lengths: Uint32Array): void {
    this.open = null;
    if (offsets.length > 0) this.pieces.push({ first, segmentSeq, offsets, lengths });
  }

  /** One ENTRY record found by a scan. */
  addEntry(segmentSeq: number, entryId: number, offset: number, length: number): void {
    const o = this.open;
    if (o && o.segmentSeq === segmentSeq && entryId === o.first + o.offsets.length) {
      o.offsets.push(offset);
      o.lengths.push(length);
      return;
    }
    const piece = { first: entryId, segmentSeq, offsets: [offset], lengths: [length] };
    this.pieces.push(piece);
    this.open = piece;
  }

  /**
   * Fills `index` with entries 0.. in id order, each from the newest segment that has it, stopping at
   * `entryCount` for a sealed ledger (entries beyond its seal were never acknowledged). Returns the payload
   * bytes indexed. Throws LL_ERR_LEDGER_CORRUPT if an entry is missing (a gap), or if a sealed ledger has
   * fewer than `entryCount` entries.
   */
  assemble(index: LedgerIndex, entryCount: number | null): number {
    this.open = null;
    // By first entry; for the same first entry the newest segment first.
    const sorted = [...this.pieces].sort((a, b) => a.first - b.first || b.segmentSeq - a.segmentSeq);
    const limit = entryCount ?? Infinity;
    let next = 0;
    let bytes = 0;
    for (let k = 0; k < sorted.length && next < limit; k++) {
      const p = sorted[k]!;
      const end = p.first + p.offsets.length;
      if (end <= next) continue;
      if (p.first > next) {
        throw new LedgerCorruptError(`ledger ${this.ledgerId}: found entry ${p.first} where entry ${next} was expected`, {
          ledgerId: this.ledgerId,
          entryId: p.first,
          file: segmentFileName(p.segmentSeq),
          position: p.offsets[0],
        });
      }
      // Where two pieces overlap, prefer a piece of a newer segment that starts at the same entry: take
      // entries of this piece only up to where a newer piece starting inside it would take over.
      let stop = Math.min(end, limit);
      for (let j = k + 1; j < sorted.length && sorted[j]!.first < stop; j++) {
        const q = sorted[j]!;
        if (q.segmentSeq > p.segmentSeq && q.first > next) {
          stop = q.first;
          break;
        }
      }
      for (let id = next; id < stop; id++) {
        const len = p.lengths[id - p.first]!;
        index.push(p.segmentSeq, p.offsets[id - p.first]!, len);
        bytes += len;
      }
      next = stop;
    }
    this.pieces.length = 0;
    if (entryCount !== null && next < entryCount) {
      throw new LedgerCorruptError(`ledger ${this.ledgerId} is sealed at ${entryCount} entries but only ${next} were found`, { ledgerId: this.ledgerId });
    }
    return bytes;
  }
}
