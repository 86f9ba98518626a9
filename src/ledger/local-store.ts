/**
 * The embedded ledger store (Ledgerline's default): every ledger of the broker in one directory, written
 * through one shared, segmented journal with group commit. The on-disk format is drawn and specified at the
 * top of format.ts; the design, guarantees and options are in README.md beside this file.
 *
 * In BookKeeper terms this is a bookie whose journal is also its entry log (as in Kafka, where the log is
 * the only copy): an append is written once, and one fdatasync makes a whole group of appends durable,
 * whichever ledgers they belong to. This file holds the contract's operations (types.ts) and what a
 * committed operation changes in the store's state; the parts, one concern each:
 *
 * ```
 *   LocalLedgerStore ── create / append / seal / fence / delete ──► commit-pipeline.ts ─► group-framing.ts
 *     │  read ─► tail-cache.ts, then segment-reads.ts               │ apply (here), roll
 *     │                                                             ▼
 *     │  open ─► recovery.ts ─► recovery-scan.ts, recovered-entries.ts      segment-files.ts
 *     │  checkpoints, dead segments ─► checkpoint.ts                        (handles, active segment)
 *     └  space reclamation ─► garbage-collector.ts through gc-host.ts
 *   shared state: store-state.ts (StoreCore, Ledger, Segment, Op)
 * ```
 */
import path from 'node:path';
import { Checkpointer } from './checkpoint.js';
import { CommitPipeline } from './commit-pipeline.js';
import {
  EntryTooLargeError,
  LedgerError,
  LedgerFencedError,
  LedgerInvalidArgumentError,
  LedgerSealedError,
  LedgerStorageError,
  LedgerStoreClosedError,
  LedgerStoreLockedError,
  NoSuchLedgerError,
} from './errors.js';
import { LEGACY_PID_LOCK_FILE, LOCK_FILE, RECORD_HEADER_BYTES, SEGMENT_HEADER_BYTES } from './format.js';
import { LockHeldError, nodeLedgerFs, type LedgerFs, type LedgerFsLock } from './fs.js';
import { GC_DEFAULTS, GarbageCollector, type GarbageCollectorOptions } from './garbage-collector.js';
import { collectorHost } from './gc-host.js';
import { MemoryLedgerFs } from './memory-fs.js';
import { ReadAhead } from './read-ahead.js';
import { recoverStore } from './recovery.js';
import { SegmentFiles } from './segment-files.js';
import { readFromSegments } from './segment-reads.js';
import { countLive, metadataOf, newLedger, type GroupCommitObserver, type Ledger, type LocalLedgerStoreStats, type Op, type Segment, type StoreCore } from './store-state.js';
import { TailCache } from './tail-cache.js';
import type {
  EntryId,
  LedgerAppendOptions,
  LedgerEntry,
  LedgerFlushPolicy,
  LedgerId,
  LedgerMetadata,
  LedgerReadOptions,
  LedgerStore,
  LedgerWriter,
} from './types.js';

export type { GroupCommitObserver, LocalLedgerStoreStats } from './store-state.js';

export interface LocalLedgerStoreOptions {
  /** File system to use; default the real one. Tests pass MemoryLedgerFs or FaultInjectingLedgerFs. */
  readonly fs?: LedgerFs;
  /** When appends are fsynced (Kafka's flush.messages / flush.ms). Default: durable (fsync before ack). */
  readonly flush?: LedgerFlushPolicy;
  /** Roll to a new segment file once the active one would exceed this (Kafka's segment.bytes). Default 256 MiB. */
  readonly segmentBytes?: number;
  /** Largest entry accepted (Kafka's message.max.bytes). Default 8 MiB. */
  readonly maxEntryBytes?: number;
  /** Most bytes written by one group commit (one writev + one fsync). Default 4 MiB. */
  readonly maxGroupBytes?: number;
  /** Budget of the tail cache that serves recent entries without a disk read. Default 64 MiB. */
  readonly cacheBytes?: number;
  /** Most entries held by the tail cache, whatever their size. Default 65536. */
  readonly cacheEntries?: number;
  /**
   * Budget of the read-ahead (read-ahead.ts): a read that went to the segment files starts reading the
   * entries after it, as many bytes as it read (at most 8 MiB), for the next read of that ledger. 0 turns it
   * off. Default 64 MiB.
   */
  readonly readAheadBytes?: number;
  /** Most rolled segments kept open for reads at once (least recently used are closed). Default 32. */
  readonly maxOpenSegments?: number;
  /**
   * Appends to the active segment bypass the page cache (O_DIRECT) where the file system allows it
   * (direct-file.ts); the tail cache serves tailing readers. Default true.
   */
  readonly directIo?: boolean;
  /** Errors no caller is waiting for (a background fsync or checkpoint that failed). Default: ignored. */
  readonly onBackgroundError?: (err: LedgerError) => void;
  /**
   * Space reclamation (garbage-collector.ts): how often it runs, the live fractions below which minor and
   * major compaction copy a segment's live entries out, how often each runs, and the copy rate limit.
   */
  readonly gc?: Partial<GarbageCollectorOptions>;
}

const DEFAULTS = {
  segmentBytes: 256 * 1024 * 1024,
  maxEntryBytes: 8 * 1024 * 1024,
  maxGroupBytes: 4 * 1024 * 1024,
  cacheBytes: 64 * 1024 * 1024,
  cacheEntries: 65536,
  readAheadBytes: 64 * 1024 * 1024,
  maxOpenSegments: 32,
  directIo: true,
};

/** Most payload bytes one read-ahead covers. */
const READ_AHEAD_MAX_BYTES = 8 * 1024 * 1024;

/** The first entry of `ledger` its tail cache holds (its size when it holds none). */
function tailCacheStart(ledger: Ledger): number {
  return ledger.index.size - (ledger.cache.length - ledger.cacheHead);
}

/** Largest valid segment (offsets in the index are u32). */
const MAX_SEGMENT_BYTES = 0xffff_ffff;

class LocalLedgerWriter implements LedgerWriter {
  constructor(
    private readonly store: LocalLedgerStore,
    private readonly ledger: Ledger,
  ) {}

  get ledgerId(): LedgerId {
    return this.ledger.id;
  }

  get lastAddConfirmed(): EntryId {
    return this.ledger.index.size - 1;
  }

  get lastAddPushed(): EntryId {
    return this.ledger.nextEntryId - 1;
  }

  append(data: Uint8Array, options?: LedgerAppendOptions): Promise<EntryId> {
    return this.store.appendTo(this.ledger, data, options?.crc32c);
  }

  seal(): Promise<LedgerMetadata> {
    return this.store.sealByWriter(this.ledger);
  }
}

/** An in-memory store with the same code paths (over MemoryLedgerFs): for tests of the layers above. */
export async function openMemoryLedgerStore(options: Omit<LocalLedgerStoreOptions, 'fs'> = {}): Promise<LocalLedgerStore> {
  return LocalLedgerStore.open('/ledgers', { ...options, fs: new MemoryLedgerFs() });
}

export class LocalLedgerStore implements LedgerStore {
  private readonly core: StoreCore;
  private readonly maxEntryBytes: number;
  private readonly cache: TailCache;
  private readonly readAhead: ReadAhead;
  private readonly checkpointer: Checkpointer;
  private readonly pipeline: CommitPipeline;
  private readonly gc: GarbageCollector;
  private lock: LedgerFsLock | null = null;

  readonly stats: LocalLedgerStoreStats = {
    groupCommits: 0,
    fsyncs: 0,
    entriesAppended: 0,
    bytesAppended: 0,
    cacheHits: 0,
    diskReads: 0,
    readAheadEntries: 0,
    readAheadHits: 0,
    cachedEntries: 0,
    cachedBytes: 0,
    segments: 0,
    segmentsReclaimed: 0,
    bytesReclaimed: 0,
    bytesCompacted: 0,
    segmentsCompacted: 0,
    recoveryMs: 0,
    gcRuns: 0,
    directIo: false,
  };

  private constructor(
    readonly dir: string,
    options: LocalLedgerStoreOptions,
  ) {
    const fs = options.fs ?? nodeLedgerFs;
    const messages = options.flush?.messages ?? 1;
    const ms = options.flush?.ms ?? Infinity;
    if (!(messages >= 1) || (Number.isFinite(messages) && !Number.isInteger(messages))) {
      throw new LedgerInvalidArgumentError(`flush.messages must be a positive integer or Infinity, got ${messages}`);
    }
    if (!(ms >= 0)) throw new LedgerInvalidArgumentError(`flush.ms must be >= 0, got ${ms}`);
    const segmentBytes = Math.min(options.segmentBytes ?? DEFAULTS.segmentBytes, MAX_SEGMENT_BYTES);
    this.maxEntryBytes = options.maxEntryBytes ?? DEFAULTS.maxEntryBytes;
    const maxOpenSegments = Math.max(1, options.maxOpenSegments ?? DEFAULTS.maxOpenSegments);
    this.core = {
      fs,
      dir,
      durable: messages === 1,
      stats: this.stats,
      ledgers: new Map<LedgerId, Ledger>(),
      nextLedgerId: 1,
      files: new SegmentFiles(fs, dir, maxOpenSegments, this.stats, options.directIo ?? DEFAULTS.directIo),
      onBackgroundError: options.onBackgroundError ?? (() => undefined),
      closing: false,
      closed: false,
      commitObserver: null,
    };
    this.checkpointer = new Checkpointer(this.core);
    this.pipeline = new CommitPipeline(this.core, this.checkpointer, {
      flushMessages: messages,
      flushMs: ms,
      segmentBytes,
      maxGroupBytes: options.maxGroupBytes ?? DEFAULTS.maxGroupBytes,
      apply: (group, segment, offsets) => this.apply(group, segment, offsets),
    });
    this.gc = new GarbageCollector(
      // Compaction reads each entry once, in no reader's order: no read-ahead for it.
      collectorHost({ core: this.core, pipeline: this.pipeline, checkpointer: this.checkpointer, read: (id, first, last, o) => this.readEntries(id, first, last, o, false) }),
      { ...GC_DEFAULTS, activeRollGarbageBytes: Math.min(GC_DEFAULTS.activeRollGarbageBytes, Math.floor(segmentBytes / 4)), ...stripUndefined(options.gc ?? {}) },
      this.stats,
    );
    this.cache = new TailCache(options.cacheBytes ?? DEFAULTS.cacheBytes, options.cacheEntries ?? DEFAULTS.cacheEntries, this.stats);
    this.readAhead = new ReadAhead(
      Math.max(0, options.readAheadBytes ?? DEFAULTS.readAheadBytes),
      READ_AHEAD_MAX_BYTES,
      (ledger, from, to, out) => readFromSegments(this.core.files, this.stats, ledger, from, to, out, from),
      this.stats,
    );
    if (segmentBytes < SEGMENT_HEADER_BYTES + RECORD_HEADER_BYTES + this.maxEntryBytes) {
      throw new LedgerInvalidArgumentError('segmentBytes must hold at least one entry of maxEntryBytes');
    }
  }

  /**
   * Opens (creating if needed) the store in `dir`, recovering from whatever a crash left: a torn tail of
   * the active segment is cut off, and every entry that was acknowledged under the durable policy is back.
   */
  static async open(dir: string, options: LocalLedgerStoreOptions = {}): Promise<LocalLedgerStore> {
    const store = new LocalLedgerStore(dir, options);
    const fs = store.core.fs;
    const started = performance.now();
    try {
      await fs.mkdir(dir);
    } catch (err) {
      throw new LedgerStorageError(`cannot create the store directory ${dir}`, {}, err);
    }
    try {
      store.lock = await fs.lock(path.join(dir, LOCK_FILE));
    } catch (err) {
      if (err instanceof LockHeldError) throw new LedgerStoreLockedError(dir, LOCK_FILE);
      throw new LedgerStorageError(`cannot lock the store directory ${dir}`, { file: LOCK_FILE }, err);
    }
    // Earlier versions locked with a pid file; with the kernel lock held it is only a leftover.
    await fs.unlink(path.join(dir, LEGACY_PID_LOCK_FILE)).catch(() => undefined);
    try {
      await recoverStore(store.core, store.checkpointer);
    } catch (err) {
      await store.releaseFiles();
      if (err instanceof LedgerError) throw err;
      throw new LedgerStorageError('recovery failed', {}, err);
    }
    store.stats.recoveryMs = performance.now() - started;
    store.gc.start();
    return store;
  }

  // ── public API ───────────────────────────────────────────────────────────────────────────────────────

  create(): Promise<LedgerWriter> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = newLedger(this.core.nextLedgerId++, Date.now());
    return new Promise<LedgerWriter>((resolve, reject) => {
      this.pipeline.enqueue({ kind: 'create', ledger, resolve, reject });
    });
  }

  fence(ledgerId: LedgerId): Promise<LedgerMetadata> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = this.core.ledgers.get(ledgerId);
    if (!ledger || ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledgerId));
    if (ledger.sealed) return Promise.resolve(metadataOf(ledger));
    ledger.fenced = true;
    // Appends not yet being written fail now (BookKeeper: adds reaching a fenced bookie are rejected);
    // the group in flight, if any, completes and decides the last entry.
    this.pipeline.removeQueued(ledger, (op) => op.kind === 'entry', () => new LedgerFencedError(ledgerId));
    return this.enqueueSeal(ledger);
  }

  read(ledgerId: LedgerId, firstEntryId: EntryId, lastEntryId: EntryId, options?: LedgerReadOptions): Promise<LedgerEntry[]> {
    return this.readEntries(ledgerId, firstEntryId, lastEntryId, options, true);
  }

  private async readEntries(ledgerId: LedgerId, firstEntryId: EntryId, lastEntryId: EntryId, options: LedgerReadOptions | undefined, readAhead: boolean): Promise<LedgerEntry[]> {
    if (this.core.closing) throw new LedgerStoreClosedError();
    if (!Number.isSafeInteger(firstEntryId) || !Number.isSafeInteger(lastEntryId) || firstEntryId < 0 || lastEntryId < firstEntryId) {
      throw new LedgerInvalidArgumentError(`invalid entry range ${firstEntryId}..${lastEntryId}`, { ledgerId });
    }
    const ledger = this.core.ledgers.get(ledgerId);
    if (!ledger || ledger.deleted) throw new NoSuchLedgerError(ledgerId);
    const end = Math.min(lastEntryId, ledger.index.size - 1);
    if (firstEntryId > end) return [];
    // Apply the byte budget (always at least one entry, KIP-74).
    const maxBytes = options?.maxBytes ?? Infinity;
    let stop = firstEntryId;
    let bytes = 0;
    while (stop <= end) {
      const len = ledger.index.lengthOf(stop);
      if (stop > firstEntryId && bytes + len > maxBytes) break;
      bytes += len;
      stop++;
    }
    const out: LedgerEntry[] = new Array<LedgerEntry>(stop - firstEntryId);
    // Recent entries from the tail cache (taken synchronously, so eviction during the disk read is harmless).
    const cacheStart = tailCacheStart(ledger);
    const cacheFrom = Math.max(firstEntryId, cacheStart);
    for (let id = cacheFrom; id < stop; id++) {
      out[id - firstEntryId] = { entryId: id, data: ledger.cache[ledger.cacheHead + id - cacheStart]! };
    }
    if (stop > cacheFrom) this.stats.cacheHits += stop - cacheFrom;
    const diskEnd = Math.min(stop, cacheFrom);
    if (diskEnd <= firstEntryId) return out;
    let from = firstEntryId;
    if (readAhead) {
      const taken = await this.readAhead.take(ledger, firstEntryId, diskEnd);
      for (let i = 0; i < taken.length; i++) out[i] = taken[i]!;
      from += taken.length;
    }
    if (diskEnd > from) await readFromSegments(this.core.files, this.stats, ledger, from, diskEnd, out, firstEntryId);
    // The entries after these that only the segment files hold (the tail cache may have moved meanwhile), for
    // this reader's next read.
    if (readAhead && !this.core.closing && !ledger.deleted) this.readAhead.start(ledger, diskEnd, tailCacheStart(ledger), bytes);
    return out;
  }

  async getMetadata(ledgerId: LedgerId): Promise<LedgerMetadata> {
    if (this.core.closing) throw new LedgerStoreClosedError();
    const ledger = this.core.ledgers.get(ledgerId);
    if (!ledger || ledger.deleted) throw new NoSuchLedgerError(ledgerId);
    return metadataOf(ledger);
  }

  async list(): Promise<LedgerMetadata[]> {
    if (this.core.closing) throw new LedgerStoreClosedError();
    const out: LedgerMetadata[] = [];
    for (const l of this.core.ledgers.values()) if (!l.deleted) out.push(metadataOf(l));
    return out.sort((a, b) => a.ledgerId - b.ledgerId);
  }

  delete(ledgerId: LedgerId): Promise<void> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = this.core.ledgers.get(ledgerId);
    if (!ledger || ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledgerId));
    ledger.deleting = true;
    this.pipeline.removeQueued(ledger, () => true, () => new NoSuchLedgerError(ledgerId));
    return new Promise<void>((resolve, reject) => {
      this.pipeline.enqueue({ kind: 'delete', ledger, resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.core.closing) {
      await this.pipeline.idle;
      return;
    }
    this.core.closing = true;
    let firstError: unknown = null;
    try {
      // A collection in progress stops at its next step; copies it queued are committed below.
      await this.gc.stop();
      // Appends already issued are committed (or failed) before the files close.
      await this.pipeline.drain();
      this.checkpointer.queue();
      await this.checkpointer.done;
    } catch (err) {
      firstError = err;
    }
    // No read-ahead starts once closing; those under way finish before their files close.
    await this.readAhead.close();
    this.core.closed = true;
    await this.releaseFiles();
    if (firstError) throw firstError;
  }

  /**
   * Tells `observer` of every group commit from now on (under the durable flush policy: each fdatasync and what
   * it made durable); null stops it.
   */
  observeGroupCommits(observer: GroupCommitObserver | null): void {
    this.core.commitObserver = observer;
  }

  /**
   * Bytes on disk that hold no live entry (deleted ledgers' entries, copies compaction superseded, control
   * records): what the garbage collector can give back.
   */
  get reclaimableBytes(): number {
    return this.core.files.reclaimableBytes;
  }

  /**
   * Runs the garbage collector now (it also runs every `gc.gcIntervalMs`): rolls a mostly-garbage active
   * segment, compacts segments below the minor threshold (and the major one with `{ major: true }`), and
   * deletes segments left without live entries.
   */
  collectGarbage(force: { minor?: boolean; major?: boolean } = { minor: true }): Promise<void> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    return this.gc.run(force);
  }

  /** Number of ledgers whose state is held in memory (open and sealed). */
  get ledgerCount(): number {
    return this.core.ledgers.size;
  }

  // ── writer operations ────────────────────────────────────────────────────────────────────────────────

  /** @internal Used by LocalLedgerWriter. */
  appendTo(ledger: Ledger, data: Uint8Array, crc: number | undefined): Promise<EntryId> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    if (ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledger.id));
    if (ledger.fenced) return Promise.reject(new LedgerFencedError(ledger.id));
    if (ledger.sealing || ledger.sealed) return Promise.reject(new LedgerSealedError(ledger.id));
    if (data.byteLength > this.maxEntryBytes) return Promise.reject(new EntryTooLargeError(ledger.id, data.byteLength, this.maxEntryBytes));
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const entryId = ledger.nextEntryId++;
    return new Promise<EntryId>((resolve, reject) => {
      this.pipeline.enqueue({ kind: 'entry', ledger, entryId, data: buf, crc, resolve, reject });
    });
  }

  /** @internal Used by LocalLedgerWriter. */
  sealByWriter(ledger: Ledger): Promise<LedgerMetadata> {
    if (this.core.closing) return Promise.reject(new LedgerStoreClosedError());
    if (ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledger.id));
    if (ledger.fenced) return Promise.reject(new LedgerFencedError(ledger.id));
    if (ledger.sealed) return Promise.resolve(metadataOf(ledger));
    ledger.sealing = true;
    return this.enqueueSeal(ledger);
  }

  private enqueueSeal(ledger: Ledger): Promise<LedgerMetadata> {
    if (ledger.sealPromise) return ledger.sealPromise;
    const p = new Promise<LedgerMetadata>((resolve, reject) => {
      this.pipeline.enqueue({ kind: 'seal', ledger, sealedAtMs: 0, resolve, reject });
    });
    ledger.sealPromise = p;
    return p;
  }

  // ── committed operations ─────────────────────────────────────────────────────────────────────────────

  /** Makes a committed group visible, in queue order. */
  private apply(group: Op[], segment: Segment, offsets: number[]): void {
    const together = bytesPerBuffer(group);
    for (let i = 0; i < group.length; i++) {
      const op = group[i]!;
      const ledger = op.ledger;
      switch (op.kind) {
        case 'entry': {
          const len = op.data.length;
          ledger.index.push(segment.seq, offsets[i]!, len);
          ledger.length += len;
          segment.ledgers.add(ledger.id);
          if (!ledger.deleted) countLive(ledger, segment, RECORD_HEADER_BYTES + len);
          this.stats.entriesAppended++;
          if (!ledger.deleted) this.cache.add(ledger, op.data, together?.get(op.data.buffer) ?? 0);
          op.resolve(op.entryId);
          break;
        }
        case 'create':
          this.core.ledgers.set(ledger.id, ledger);
          op.resolve(new LocalLedgerWriter(this, ledger));
          break;
        case 'seal':
          ledger.sealed = true;
          ledger.sealing = false;
          ledger.sealedAtMs = op.sealedAtMs;
          ledger.sealPromise = null;
          op.resolve(metadataOf(ledger));
          break;
        case 'move': {
          // The entry may have been deleted, or moved already, since its copy was queued: then the copy
          // is garbage in this segment, and the index keeps pointing where it did.
          const from = this.core.files.all.get(op.from);
          const moved = !ledger.deleted && op.entryId < ledger.index.size && ledger.index.segmentOf(op.entryId) === op.from && from !== undefined;
          if (moved) {
            const rec = RECORD_HEADER_BYTES + op.data.length;
            ledger.index.relocate(op.entryId, segment.seq, offsets[i]!);
            countLive(ledger, from, -rec);
            countLive(ledger, segment, rec);
            segment.ledgers.add(ledger.id);
            this.stats.bytesCompacted += rec;
          }
          op.resolve(moved);
          break;
        }
        case 'delete':
          ledger.deleted = true;
          // Its bytes are garbage now; the segments keep it in `ledgers` until a checkpoint drops it.
          for (const [seq, bytes] of ledger.bytesIn) {
            const seg = this.core.files.all.get(seq);
            if (seg) seg.liveBytes -= bytes;
          }
          ledger.bytesIn.clear();
          this.core.ledgers.delete(ledger.id);
          this.cache.dropLedger(ledger);
          op.resolve();
          this.checkpointer.queue();
          break;
      }
    }
  }

  private async releaseFiles(): Promise<void> {
    this.core.closed = true;
    this.core.closing = true;
    this.pipeline.stopTimer();
    await this.core.files.closeAll();
    if (this.lock) {
      const lock = this.lock;
      this.lock = null;
      await lock.release().catch(() => undefined);
    }
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/**
 * The bytes of a group's entries per ArrayBuffer they are slices of (null for a group of one entry): the tail
 * cache keeps entries by reference when those of one buffer, cached together, are a fair share of it
 * (retained-buffers.ts).
 */
function bytesPerBuffer(group: readonly Op[]): Map<ArrayBufferLike, number> | null {
  if (group.length < 2) return null;
  const bytes = new Map<ArrayBufferLike, number>();
  for (const op of group) if (op.kind === 'entry') bytes.set(op.data.buffer, (bytes.get(op.data.buffer) ?? 0) + op.data.byteLength);
  return bytes;
}
