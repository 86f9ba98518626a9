/**
 * The segment files of the local ledger store: which exist, which one is active (takes new records), and the
 * handles of the rolled ones, opened lazily for reads and closed least recently used first beyond a budget.
 * The layout of a segment (header, records) is drawn in format.ts; what is written into one is decided by
 * the commit pipeline (commit-pipeline.ts), and when one is deleted by the checkpointer (checkpoint.ts).
 *
 * ```
 *   <dir>/…0001.seg  …0002.seg  …0003.seg   …0004.seg
 *         └───────── rolled: read only ───┘  └ active ┘
 *         handles: open while read recently (≤ maxOpenSegments), or pinned by a read in progress (refs)
 * ```
 */
import path from 'node:path';
import { SEGMENT_HEADER_BYTES, encodeSegmentHeader, indexFileName, segmentFileName } from './format.js';
import type { LedgerFile, LedgerFs } from './fs.js';
import { isEnoent, newSegment, type LocalLedgerStoreStats, type Segment } from './store-state.js';

export class SegmentFiles {
  /** Every segment not yet reclaimed, by sequence number. */
  readonly all = new Map<number, Segment>();
  /** The segment new records are written to: always the highest. */
  active!: Segment;
  /** Rolled segments with an open handle, least recently used first. */
  private readonly openRolled = new Set<Segment>();

  constructor(
    private readonly fs: LedgerFs,
    private readonly dir: string,
    private readonly maxOpenSegments: number,
    private readonly stats: LocalLedgerStoreStats,
    /** Whether appends to the active segment may bypass the page cache (direct-file.ts). */
    private readonly directAppend = false,
  ) {}

  /**
   * Opens segment `seq` to take new records: created (`w+`) or the one recovery found last (`r+`); the stats
   * say whether its appends bypass the page cache.
   */
  async openForAppend(seq: number, mode: 'w+' | 'r+'): Promise<LedgerFile> {
    const file = await this.fs.open(this.segmentPath(seq), mode, { directAppend: this.directAppend, directRead: this.directAppend });
    this.stats.directIo = file.direct === true;
    return file;
  }

  segmentPath(seq: number): string {
    return path.join(this.dir, segmentFileName(seq));
  }

  indexPath(seq: number): string {
    return path.join(this.dir, indexFileName(seq));
  }

  /**
   * Creates segment `seq` and makes it the active one. Its header, fsynced with the directory before this
   * returns, records `prevValidBytes`, how much of segment `prevSeq` counts: after a failed write the failed
   * bytes are excluded from recovery from then on. A header that cannot be made durable leaves no file.
   */
  async start(seq: number, prevSeq: number, prevValidBytes: number): Promise<void> {
    const file = await this.openForAppend(seq, 'w+');
    try {
      await file.writev([encodeSegmentHeader({ segmentSeq: seq, prevSegmentSeq: prevSeq, prevSegmentValidBytes: prevValidBytes, createdAtMs: Date.now() })], 0);
      await file.datasync();
      await this.fs.syncDir(this.dir);
    } catch (err) {
      await file.close().catch(() => undefined);
      await this.fs.unlink(this.segmentPath(seq)).catch(() => undefined);
      throw err;
    }
    const segment = newSegment(seq, file);
    this.all.set(seq, segment);
    this.stats.segments = this.all.size;
    this.active = segment;
  }

  /** Marks a rolled segment's handle as recently used; closes the least recently used beyond the budget. */
  touchRolled(segment: Segment): void {
    if (!segment.file) return;
    this.openRolled.delete(segment);
    this.openRolled.add(segment);
    if (this.openRolled.size <= this.maxOpenSegments) return;
    for (const s of this.openRolled) {
      if (this.openRolled.size <= this.maxOpenSegments) break;
      if (s.refs > 0 || s === this.active) continue;
      this.openRolled.delete(s);
      const f = s.file;
      s.file = null;
      void f?.close().catch(() => undefined);
    }
  }

  /** A handle on the segment for reading, held until `release()`; rolled segments are opened on demand. */
  async acquire(segment: Segment): Promise<LedgerFile> {
    segment.refs++;
    try {
      if (segment.file) {
        if (segment !== this.active) this.touchRolled(segment);
        return segment.file;
      }
      if (!segment.opening) {
        segment.opening = this.fs.open(this.segmentPath(segment.seq), 'r', { directRead: this.directAppend }).finally(() => {
          segment.opening = null;
        });
      }
      const file = await segment.opening;
      if (!segment.file) {
        segment.file = file;
      } else if (segment.file !== file) {
        void file.close().catch(() => undefined);
      }
      this.touchRolled(segment);
      return segment.file;
    } catch (err) {
      segment.refs--;
      throw err;
    }
  }

  release(segment: Segment): void {
    segment.refs--;
    if (segment.refs === 0 && segment.reclaimed && segment.file) {
      const f = segment.file;
      segment.file = null;
      void f.close().catch(() => undefined);
    }
  }

  /**
   * Deletes a rolled segment's files (segment, then index). Reads still holding its handle finish: the bytes
   * stay until the last close. The caller syncs the directory once it has deleted all it meant to.
   */
  async remove(segment: Segment): Promise<void> {
    segment.reclaimed = true;
    this.all.delete(segment.seq);
    this.openRolled.delete(segment);
    if (segment.file && segment.refs === 0) {
      const f = segment.file;
      segment.file = null;
      await f.close().catch(() => undefined);
    }
    await this.fs.unlink(this.segmentPath(segment.seq)).catch((err) => {
      if (!isEnoent(err)) throw err;
    });
    // Counted the moment the segment file is gone, which is when its bytes are given back (what `du` sees),
    // not after the index file's unlink too: a reader of the counter who saw the space come back would
    // otherwise find it uncounted for as long as that second unlink takes.
    this.stats.segmentsReclaimed++;
    this.stats.bytesReclaimed += segment.size;
    await this.fs.unlink(this.indexPath(segment.seq)).catch((err) => {
      if (!isEnoent(err)) throw err;
    });
  }

  /** Bytes on disk that hold no live entry: what the garbage collector can give back. */
  get reclaimableBytes(): number {
    let n = 0;
    for (const s of this.all.values()) if (!s.reclaimed) n += Math.max(0, s.size - SEGMENT_HEADER_BYTES - s.liveBytes);
    return n;
  }

  /** Closes every handle (the store is closing or failed to open). */
  async closeAll(): Promise<void> {
    for (const segment of this.all.values()) {
      const f = segment.file;
      segment.file = null;
      if (f) await f.close().catch(() => undefined);
    }
    this.openRolled.clear();
  }
}
