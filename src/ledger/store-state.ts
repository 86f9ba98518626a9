/**
 * The in-memory state of the local ledger store (local-store.ts): a ledger, a segment, a queued operation,
 * what every part of the store shares (StoreCore), and the small helpers over them that its parts use.
 */
import { LedgerCorruptError, LedgerError, LedgerStorageError } from './errors.js';
import { SEGMENT_HEADER_BYTES, segmentFileName } from './format.js';
import type { LedgerFile, LedgerFs } from './fs.js';
import { LedgerIndex } from './ledger-index.js';
import type { RecoveredEntries } from './recovered-entries.js';
import type { SegmentFiles } from './segment-files.js';
import type { EntryId, LedgerId, LedgerMetadata, LedgerWriter } from './types.js';

/** Counters for benchmarks, tests and metrics. */
export interface LocalLedgerStoreStats {
  /** Group commits that succeeded (one writev each). */
  groupCommits: number;
  /** fdatasync calls on segment files. */
  fsyncs: number;
  entriesAppended: number;
  /** Bytes written to segments (records including headers). */
  bytesAppended: number;
  /** Entries served from the tail cache / read from disk. */
  cacheHits: number;
  diskReads: number;
  /** Entries read ahead of their readers (read-ahead.ts), and of them those a reader took. */
  readAheadEntries: number;
  readAheadHits: number;
  /** Entries currently cached and their payload bytes. */
  cachedEntries: number;
  cachedBytes: number;
  /** Segment files on disk, and segment files deleted since open. */
  segments: number;
  segmentsReclaimed: number;
  /** Bytes of segment files deleted since open (whole segments, after compaction or not). */
  bytesReclaimed: number;
  /** Record bytes compaction copied into the active segment, and segments it emptied, since open. */
  bytesCompacted: number;
  segmentsCompacted: number;
  /** Milliseconds `open()` spent recovering. */
  recoveryMs: number;
  /** Garbage collector runs since open. */
  gcRuns: number;
  /** Whether appends to the active segment bypass the page cache (O_DIRECT taken by the file system). */
  directIo: boolean;
}

/**
 * Told of each group commit of the durable policy (one fdatasync and what it made durable), for the broker's
 * metrics: the histograms of group-commit sizes and fsync times. Called on the commit path, so it must be cheap
 * and must not throw.
 */
export interface GroupCommitObserver {
  /** One fdatasync made `entries` appended entries durable, `bytes` record bytes in all. */
  committed(entries: number, bytes: number, fsyncSeconds: number): void;
}

/**
 * What the parts of the local store share: the directory and its file system, the ledger table, the segment
 * files, the counters, and whether the store is closing. The store (local-store.ts) owns it; the commit
 * pipeline, the checkpointer, recovery and the collector's host each take it at construction.
 */
export interface StoreCore {
  readonly fs: LedgerFs;
  readonly dir: string;
  /** Appends are fsynced before they resolve (flush.messages = 1). */
  readonly durable: boolean;
  readonly stats: LocalLedgerStoreStats;
  /** Every ledger created and not deleted (open and sealed). */
  readonly ledgers: Map<LedgerId, Ledger>;
  /** The id the next `create()` takes; ids are never reused. */
  nextLedgerId: number;
  readonly files: SegmentFiles;
  /** Errors no caller is waiting for (a background fsync or checkpoint that failed). */
  readonly onBackgroundError: (err: LedgerError) => void;
  /** `close()` was called: new operations are refused. */
  closing: boolean;
  /** The files are being released: no more background work starts. */
  closed: boolean;
  /** Told of each durable group commit (LocalLedgerStore.observeGroupCommits), or null. */
  commitObserver: GroupCommitObserver | null;
}

export interface Ledger {
  readonly id: LedgerId;
  readonly createdAtMs: number;
  sealedAtMs: number | null;
  /** Entries 0..index.size-1 are durable and readable: lastAddConfirmed = index.size - 1. */
  readonly index: LedgerIndex;
  /** Payload bytes of the indexed entries. */
  length: number;
  /** Next entry id an append gets. Entries index.size..nextEntryId-1 are queued or being written. */
  nextEntryId: number;
  /** The writer sealed the ledger or a seal is in progress: new appends fail with LL_ERR_LEDGER_SEALED. */
  sealing: boolean;
  sealed: boolean;
  /** Another party fenced the ledger: the writer's appends fail with LL_ERR_LEDGER_FENCED. */
  fenced: boolean;
  /** A delete is in progress or done. */
  deleting: boolean;
  deleted: boolean;
  /** The pending seal, shared by concurrent seal()/fence() calls. */
  sealPromise: Promise<LedgerMetadata> | null;
  /**
   * Tail cache: the newest entries, held in cache[cacheHead..]. Always a suffix of the ledger, ending at
   * lastAddConfirmed (entries join in id order and leave oldest first).
   */
  cache: (Buffer | undefined)[];
  cacheHead: number;
  /** Record bytes (headers included) of this ledger's indexed entries, per segment: its share of each. */
  readonly bytesIn: Map<number, number>;
}

export type Op =
  | {
      kind: 'entry';
      ledger: Ledger;
      entryId: number;
      data: Buffer;
      /** The CRC-32C of `data` when the writer knew it (LedgerAppendOptions.crc32c). */
      crc: number | undefined;
      resolve: (id: EntryId) => void;
      reject: (e: Error) => void;
    }
  | { kind: 'create'; ledger: Ledger; resolve: (w: LedgerWriter) => void; reject: (e: Error) => void }
  | { kind: 'seal'; ledger: Ledger; sealedAtMs: number; resolve: (m: LedgerMetadata) => void; reject: (e: Error) => void }
  | { kind: 'delete'; ledger: Ledger; resolve: () => void; reject: (e: Error) => void }
  /** Compaction: a copy of entry `entryId`, now in segment `from`, written again to the active segment. */
  | { kind: 'move'; ledger: Ledger; entryId: number; from: number; data: Buffer; resolve: (moved: boolean) => void; reject: (e: Error) => void };

/** A group written to its segment, waiting for the fsync that makes it durable. */
export interface WrittenGroup {
  readonly group: Op[];
  readonly segment: Segment;
  readonly position: number;
  readonly total: number;
  /** Entry operations among `group` (the others are seals, creates, deletes and compaction's moves). */
  readonly entries: number;
  readonly offsets: number[];
}

/** A ledger while recovery rebuilds its index: its seal from the checkpoint or a SEAL record, and its entries found. */
export interface RecoveringLedger {
  readonly ledger: Ledger;
  /** Entry count of a sealed ledger (entries beyond it were never acknowledged); null while open. */
  entryCount: number | null;
  /**
   * Its entries as found. Assembled (and checked for gaps) once every segment is read, for the ledgers that
   * survive: index files and the checkpoint are read before the segments replayed after them, so a ledger may
   * show a gap (its oldest segment reclaimed) and be deleted by a DELETE record further on.
   */
  readonly found: RecoveredEntries;
}

export interface Segment {
  readonly seq: number;
  /** Valid bytes: the header and every committed group (durable, or written under a non-durable policy). */
  size: number;
  /** Where the next group goes: `size` plus groups written and awaiting their fsync. */
  writePos: number;
  /** Open handle (always for the active segment; lazily, LRU-bounded, for rolled ones). */
  file: LedgerFile | null;
  opening: Promise<LedgerFile> | null;
  /** Reads in progress holding `file`. */
  refs: number;
  /**
   * Ledgers with entries in this segment: live ones whose index points here, and deleted ones that did when
   * they were deleted (they pin the segment until a checkpoint no longer lists them).
   */
  readonly ledgers: Set<LedgerId>;
  /** Record bytes of live ledgers' indexed entries here; the rest of `size` (after the header) is garbage. */
  liveBytes: number;
  /** Reads planned on this segment: it is not deleted while any runs. */
  pins: number;
  /** Its live entries are being copied out: not deleted until the copies are durable. */
  compacting: boolean;
  /** Its index file is durable (rolled segments only). */
  indexDurable: boolean;
  reclaimed: boolean;
}

export function metadataOf(l: Ledger): LedgerMetadata {
  return {
    ledgerId: l.id,
    state: l.sealed ? 'sealed' : 'open',
    lastAddConfirmed: l.index.size - 1,
    length: l.length,
    createdAtMs: l.createdAtMs,
    sealedAtMs: l.sealedAtMs,
  };
}

export function newLedger(id: LedgerId, createdAtMs: number): Ledger {
  return {
    id,
    createdAtMs,
    sealedAtMs: null,
    index: new LedgerIndex(),
    length: 0,
    nextEntryId: 0,
    sealing: false,
    sealed: false,
    fenced: false,
    deleting: false,
    deleted: false,
    sealPromise: null,
    cache: [],
    cacheHead: 0,
    bytesIn: new Map(),
  };
}

/** Adds `delta` record bytes of `ledger` to `segment`'s live bytes (a ledger with none there leaves it). */
export function countLive(ledger: Ledger, segment: Segment, delta: number): void {
  segment.liveBytes += delta;
  const now = (ledger.bytesIn.get(segment.seq) ?? 0) + delta;
  if (now > 0) {
    ledger.bytesIn.set(segment.seq, now);
  } else {
    ledger.bytesIn.delete(segment.seq);
    segment.ledgers.delete(ledger.id);
  }
}

/** A fresh segment record: just its header, no records yet. */
export function newSegment(seq: number, file: LedgerFile | null): Segment {
  return { seq, size: SEGMENT_HEADER_BYTES, writePos: SEGMENT_HEADER_BYTES, file, opening: null, refs: 0, ledgers: new Set(), liveBytes: 0, pins: 0, compacting: false, indexDurable: false, reclaimed: false };
}

/** `cause` as a LedgerError: itself if it is one, else LL_ERR_LEDGER_STORAGE naming the segment and position. */
export function storageError(message: string, cause: unknown, seq?: number, position?: number): LedgerError {
  if (cause instanceof LedgerError) return cause;
  return new LedgerStorageError(message, { ...(seq !== undefined ? { file: segmentFileName(seq) } : {}), ...(position !== undefined ? { position } : {}) }, cause);
}

export function isEnoent(err: unknown): boolean {
  return (err as NodeJS.ErrnoException)?.code === 'ENOENT';
}

/** Reads exactly buf.length bytes at `position`; a short file is corruption (an index pointed past its end). */
export async function readFully(file: LedgerFile, buf: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < buf.length) {
    const n = await file.read(buf, done, buf.length - done, position + done);
    if (n === 0) throw new LedgerCorruptError(`file ends at ${position + done}, expected ${buf.length - done} more bytes`, { position: position + done });
    done += n;
  }
}
