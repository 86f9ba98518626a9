/**
 * The embedded ledger store (Ledgerline's default): every ledger of the broker in one directory, written
 * through one shared, segmented journal with group commit. The on-disk format is drawn and specified at the
 * top of format.ts; the design, guarantees and options are in README.md beside this file.
 *
 * In BookKeeper terms this is a bookie whose journal is also its entry log (as in Kafka, where the log is
 * the only copy): an append is written once, and one fdatasync makes a whole group of appends durable,
 * whichever ledgers they belong to.
 *
 * ```
 *   append(L1,e) append(L2,e) append(L1,e) …      seal / fence / create / delete
 *          │            │            │                        │
 *          ▼            ▼            ▼                        ▼
 *   ┌──────────────── pending queue (FIFO, all ledgers) ──────────────┐
 *   └──────────────────────────────┬──────────────────────────────────┘
 *            commit loop: take ≤ maxGroupBytes → one writev → one fdatasync
 *                                  │
 *          ┌───────────────────────▼──────────────────────┐
 *          │ active segment  …│rec│rec│rec│rec│ ← append  │   older segments: read only, reclaimed
 *          └───────────────────────┬──────────────────────┘   when no live entry is left (compaction
 *                                  │                          copies the few live ones out)
 *                                  │ on success, in queue order:
 *            index each entry (LedgerIndex: 8 bytes/entry), add to the tail cache, advance
 *            lastAddConfirmed, resolve the appends. On failure: fail the group, roll to a new segment
 *            whose header excludes the failed bytes, rewind the affected ledgers' next entry ids.
 * ```
 */
import path from 'node:path';
import {
  EntryTooLargeError,
  LedgerCorruptError,
  LedgerError,
  LedgerFencedError,
  LedgerInvalidArgumentError,
  LedgerSealedError,
  LedgerStorageError,
  LedgerStoreClosedError,
  LedgerStoreLockedError,
  NoSuchLedgerError,
} from './errors.js';
import {
  CHECKPOINT_FILE,
  LEGACY_PID_LOCK_FILE,
  LOCK_FILE,
  RECORD_HEADER_BYTES,
  RecordType,
  SEGMENT_HEADER_BYTES,
  decodeRecordHeader,
  decodeSegmentHeader,
  encodeCheckpoint,
  encodeControlRecord,
  encodeSegmentHeader,
  encodeSegmentIndex,
  indexFileName,
  parseSegmentSeq,
  recordCrcMatches,
  sealRecordCrc,
  segmentFileName,
  writeRecordHeader,
  type Checkpoint,
  type IndexRun,
  type SegmentIndex,
} from './format.js';
import { LockHeldError, nodeLedgerFs, type LedgerFile, type LedgerFs, type LedgerFsLock } from './fs.js';
import { GC_DEFAULTS, GarbageCollector, type GarbageCollectorOptions, type GcHost } from './garbage-collector.js';
import { RecoveredEntries } from './recovered-entries.js';
import { applyRun, readCheckpoint, readSegmentHeader, readSegmentIndex, scanSegment } from './recovery-scan.js';
import { isEnoent, metadataOf, newLedger, readFully, type Ledger, type Op, type RecoveringLedger, type Segment, type WrittenGroup } from './store-state.js';
import { TailCache } from './tail-cache.js';
import { MemoryLedgerFs } from './memory-fs.js';
import type {
  EntryId,
  LedgerEntry,
  LedgerFlushPolicy,
  LedgerId,
  LedgerMetadata,
  LedgerReadOptions,
  LedgerStore,
  LedgerWriter,
} from './types.js';

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
  /** Most rolled segments kept open for reads at once (least recently used are closed). Default 32. */
  readonly maxOpenSegments?: number;
  /** Errors no caller is waiting for (a background fsync or checkpoint that failed). Default: ignored. */
  readonly onBackgroundError?: (err: LedgerError) => void;
  /**
   * Space reclamation (garbage-collector.ts): how often it runs, the live fractions below which minor and
   * major compaction copy a segment's live entries out, how often each runs, and the copy rate limit.
   */
  readonly gc?: Partial<GarbageCollectorOptions>;
}

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
}

const DEFAULTS = {
  segmentBytes: 256 * 1024 * 1024,
  maxEntryBytes: 8 * 1024 * 1024,
  maxGroupBytes: 4 * 1024 * 1024,
  cacheBytes: 64 * 1024 * 1024,
  cacheEntries: 65536,
  maxOpenSegments: 32,
};

/** Entries up to this size are copied into the group's staging buffer; larger ones are written by reference. */
const COPY_THRESHOLD = 4096;
/** Largest single read when streaming old entries from disk. */
const READ_CHUNK_BYTES = 256 * 1024;
/** Parallel positioned reads per `read()` call. */
const READ_CONCURRENCY = 4;
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

  append(data: Uint8Array): Promise<EntryId> {
    return this.store.appendTo(this.ledger, data);
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
  private readonly fs: LedgerFs;
  private readonly durable: boolean;
  private readonly flushMessages: number;
  private readonly flushMs: number;
  private readonly segmentBytes: number;
  private readonly maxEntryBytes: number;
  private readonly maxGroupBytes: number;
  private readonly maxOpenSegments: number;
  private readonly onBackgroundError: (err: LedgerError) => void;

  private readonly ledgers = new Map<LedgerId, Ledger>();
  private nextLedgerId = 1;
  private readonly segments = new Map<number, Segment>();
  private active!: Segment;
  /** Rolled segments with an open handle, least recently used first. */
  private readonly openRolled = new Set<Segment>();

  /**
   * Pending operations from queueHead on. Slots before queueHead are cleared as groups are taken: an entry
   * op holds its data, often a view of a whole request buffer, which must not outlive the write.
   */
  private queue: (Op | undefined)[] = [];
  private queueHead = 0;
  private loopRunning = false;
  private loopScheduled = false;
  private loopDone: Promise<void> = Promise.resolve();
  private signalLoopDone: () => void = () => undefined;
  /** A write or fsync failed: the next group first rolls to a segment that excludes the failed bytes. */
  private mustRoll = false;
  private lastSyncError: unknown = null;
  /** Groups written and waiting for their fsync, in write order (all in the active segment). */
  private inflight: WrittenGroup[] = [];
  private inflightBytes = 0;
  private syncing = false;
  private syncWaiters: (() => void)[] = [];
  private unflushedEntries = 0;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushDue = false;

  private readonly cache: TailCache;

  private checkpointChain: Promise<void> = Promise.resolve();
  private checkpointQueued = false;
  private replayFromSegment = 1;

  private closing = false;
  private closed = false;
  private readonly gc: GarbageCollector;
  /** Waiting for the commit loop to roll the active segment (for the garbage collector). */
  private rollWaiters: (() => void)[] = [];
  private lock: LedgerFsLock | null = null;

  readonly stats: LocalLedgerStoreStats = {
    groupCommits: 0,
    fsyncs: 0,
    entriesAppended: 0,
    bytesAppended: 0,
    cacheHits: 0,
    diskReads: 0,
    cachedEntries: 0,
    cachedBytes: 0,
    segments: 0,
    segmentsReclaimed: 0,
    bytesReclaimed: 0,
    bytesCompacted: 0,
    segmentsCompacted: 0,
    recoveryMs: 0,
    gcRuns: 0,
  };

  private constructor(
    readonly dir: string,
    options: LocalLedgerStoreOptions,
  ) {
    this.fs = options.fs ?? nodeLedgerFs;
    const messages = options.flush?.messages ?? 1;
    const ms = options.flush?.ms ?? Infinity;
    if (!(messages >= 1) || (Number.isFinite(messages) && !Number.isInteger(messages))) {
      throw new LedgerInvalidArgumentError(`flush.messages must be a positive integer or Infinity, got ${messages}`);
    }
    if (!(ms >= 0)) throw new LedgerInvalidArgumentError(`flush.ms must be >= 0, got ${ms}`);
    this.durable = messages === 1;
    this.flushMessages = messages;
    this.flushMs = ms;
    this.segmentBytes = Math.min(options.segmentBytes ?? DEFAULTS.segmentBytes, MAX_SEGMENT_BYTES);
    this.maxEntryBytes = options.maxEntryBytes ?? DEFAULTS.maxEntryBytes;
    this.maxGroupBytes = options.maxGroupBytes ?? DEFAULTS.maxGroupBytes;
    this.maxOpenSegments = Math.max(1, options.maxOpenSegments ?? DEFAULTS.maxOpenSegments);
    this.onBackgroundError = options.onBackgroundError ?? (() => undefined);
    this.gc = new GarbageCollector(
      this.gcHost(),
      { ...GC_DEFAULTS, activeRollGarbageBytes: Math.min(GC_DEFAULTS.activeRollGarbageBytes, Math.floor(this.segmentBytes / 4)), ...stripUndefined(options.gc ?? {}) },
      this.stats,
    );
    this.cache = new TailCache(options.cacheBytes ?? DEFAULTS.cacheBytes, options.cacheEntries ?? DEFAULTS.cacheEntries, this.stats);
    if (this.segmentBytes < SEGMENT_HEADER_BYTES + RECORD_HEADER_BYTES + this.maxEntryBytes) {
      throw new LedgerInvalidArgumentError('segmentBytes must hold at least one entry of maxEntryBytes');
    }
  }

  /**
   * Opens (creating if needed) the store in `dir`, recovering from whatever a crash left: a torn tail of
   * the active segment is cut off, and every entry that was acknowledged under the durable policy is back.
   */
  static async open(dir: string, options: LocalLedgerStoreOptions = {}): Promise<LocalLedgerStore> {
    const store = new LocalLedgerStore(dir, options);
    const started = performance.now();
    try {
      await store.fs.mkdir(dir);
    } catch (err) {
      throw new LedgerStorageError(`cannot create the store directory ${dir}`, {}, err);
    }
    try {
      store.lock = await store.fs.lock(path.join(dir, LOCK_FILE));
    } catch (err) {
      if (err instanceof LockHeldError) throw new LedgerStoreLockedError(dir, LOCK_FILE);
      throw new LedgerStorageError(`cannot lock the store directory ${dir}`, { file: LOCK_FILE }, err);
    }
    // Earlier versions locked with a pid file; with the kernel lock held it is only a leftover.
    await store.fs.unlink(path.join(dir, LEGACY_PID_LOCK_FILE)).catch(() => undefined);
    try {
      await store.recover();
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
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = newLedger(this.nextLedgerId++, Date.now());
    return new Promise<LedgerWriter>((resolve, reject) => {
      this.enqueue({ kind: 'create', ledger, resolve, reject });
    });
  }

  fence(ledgerId: LedgerId): Promise<LedgerMetadata> {
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = this.ledgers.get(ledgerId);
    if (!ledger || ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledgerId));
    if (ledger.sealed) return Promise.resolve(metadataOf(ledger));
    ledger.fenced = true;
    // Appends not yet being written fail now (BookKeeper: adds reaching a fenced bookie are rejected);
    // the group in flight, if any, completes and decides the last entry.
    this.removeQueued(ledger, (op) => op.kind === 'entry', () => new LedgerFencedError(ledgerId));
    return this.enqueueSeal(ledger);
  }

  async read(ledgerId: LedgerId, firstEntryId: EntryId, lastEntryId: EntryId, options?: LedgerReadOptions): Promise<LedgerEntry[]> {
    if (this.closing) throw new LedgerStoreClosedError();
    if (!Number.isSafeInteger(firstEntryId) || !Number.isSafeInteger(lastEntryId) || firstEntryId < 0 || lastEntryId < firstEntryId) {
      throw new LedgerInvalidArgumentError(`invalid entry range ${firstEntryId}..${lastEntryId}`, { ledgerId });
    }
    const ledger = this.ledgers.get(ledgerId);
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
    const cacheStart = ledger.index.size - (ledger.cache.length - ledger.cacheHead);
    const cacheFrom = Math.max(firstEntryId, cacheStart);
    for (let id = cacheFrom; id < stop; id++) {
      out[id - firstEntryId] = { entryId: id, data: ledger.cache[ledger.cacheHead + id - cacheStart]! };
    }
    if (stop > cacheFrom) this.stats.cacheHits += stop - cacheFrom;
    const diskEnd = Math.min(stop, cacheFrom);
    if (diskEnd > firstEntryId) await this.readFromDisk(ledger, firstEntryId, diskEnd, out, firstEntryId);
    return out;
  }

  async getMetadata(ledgerId: LedgerId): Promise<LedgerMetadata> {
    if (this.closing) throw new LedgerStoreClosedError();
    const ledger = this.ledgers.get(ledgerId);
    if (!ledger || ledger.deleted) throw new NoSuchLedgerError(ledgerId);
    return metadataOf(ledger);
  }

  async list(): Promise<LedgerMetadata[]> {
    if (this.closing) throw new LedgerStoreClosedError();
    const out: LedgerMetadata[] = [];
    for (const l of this.ledgers.values()) if (!l.deleted) out.push(metadataOf(l));
    return out.sort((a, b) => a.ledgerId - b.ledgerId);
  }

  delete(ledgerId: LedgerId): Promise<void> {
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    const ledger = this.ledgers.get(ledgerId);
    if (!ledger || ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledgerId));
    ledger.deleting = true;
    this.removeQueued(ledger, () => true, () => new NoSuchLedgerError(ledgerId));
    return new Promise<void>((resolve, reject) => {
      this.enqueue({ kind: 'delete', ledger, resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.closing) {
      await this.loopDone;
      return;
    }
    this.closing = true;
    let firstError: unknown = null;
    try {
      // A collection in progress stops at its next step; copies it queued are committed below.
      await this.gc.stop();
      // Appends already issued are committed (or failed) before the files close.
      while (this.loopRunning || this.loopScheduled || this.queueLength() > 0 || this.syncing || this.inflight.length > 0) {
        if (!this.loopRunning && !this.loopScheduled && this.queueLength() > 0) this.scheduleLoop();
        await Promise.all([this.loopDone, this.drainSyncs()]);
      }
      if (this.flushTimer) clearTimeout(this.flushTimer);
      if (this.unflushedEntries > 0 && !this.mustRoll) await this.flushActive();
      this.queueCheckpoint();
      await this.checkpointChain;
    } catch (err) {
      firstError = err;
    }
    this.closed = true;
    await this.releaseFiles();
    if (firstError) throw firstError;
  }

  /**
   * Bytes on disk that hold no live entry (deleted ledgers' entries, copies compaction superseded, control
   * records): what the garbage collector can give back.
   */
  get reclaimableBytes(): number {
    let n = 0;
    for (const s of this.segments.values()) if (!s.reclaimed) n += Math.max(0, s.size - SEGMENT_HEADER_BYTES - s.liveBytes);
    return n;
  }

  /**
   * Runs the garbage collector now (it also runs every `gc.gcIntervalMs`): rolls a mostly-garbage active
   * segment, compacts segments below the minor threshold (and the major one with `{ major: true }`), and
   * deletes segments left without live entries.
   */
  collectGarbage(force: { minor?: boolean; major?: boolean } = { minor: true }): Promise<void> {
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    return this.gc.run(force);
  }

  /** Number of ledgers whose state is held in memory (open and sealed). */
  get ledgerCount(): number {
    return this.ledgers.size;
  }

  // ── writer operations ────────────────────────────────────────────────────────────────────────────────

  /** @internal Used by LocalLedgerWriter. */
  appendTo(ledger: Ledger, data: Uint8Array): Promise<EntryId> {
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    if (ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledger.id));
    if (ledger.fenced) return Promise.reject(new LedgerFencedError(ledger.id));
    if (ledger.sealing || ledger.sealed) return Promise.reject(new LedgerSealedError(ledger.id));
    if (data.byteLength > this.maxEntryBytes) return Promise.reject(new EntryTooLargeError(ledger.id, data.byteLength, this.maxEntryBytes));
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const entryId = ledger.nextEntryId++;
    return new Promise<EntryId>((resolve, reject) => {
      this.enqueue({ kind: 'entry', ledger, entryId, data: buf, resolve, reject });
    });
  }

  /** @internal Used by LocalLedgerWriter. */
  sealByWriter(ledger: Ledger): Promise<LedgerMetadata> {
    if (this.closing) return Promise.reject(new LedgerStoreClosedError());
    if (ledger.deleting) return Promise.reject(new NoSuchLedgerError(ledger.id));
    if (ledger.fenced) return Promise.reject(new LedgerFencedError(ledger.id));
    if (ledger.sealed) return Promise.resolve(metadataOf(ledger));
    ledger.sealing = true;
    return this.enqueueSeal(ledger);
  }

  private enqueueSeal(ledger: Ledger): Promise<LedgerMetadata> {
    if (ledger.sealPromise) return ledger.sealPromise;
    const p = new Promise<LedgerMetadata>((resolve, reject) => {
      this.enqueue({ kind: 'seal', ledger, sealedAtMs: 0, resolve, reject });
    });
    ledger.sealPromise = p;
    return p;
  }

  // ── group commit ─────────────────────────────────────────────────────────────────────────────────────

  private queueLength(): number {
    return this.queue.length - this.queueHead;
  }

  private enqueue(op: Op): void {
    this.queue.push(op);
    this.scheduleLoop();
  }

  /** Removes a ledger's queued (not yet being written) operations matching `which`, rejecting them. */
  private removeQueued(ledger: Ledger, which: (op: Op) => boolean, error: () => Error): void {
    const kept: Op[] = [];
    let firstRemovedEntry = -1;
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const op = this.queue[i]!;
      if (op.ledger === ledger && which(op)) {
        if (op.kind === 'entry' && firstRemovedEntry < 0) firstRemovedEntry = op.entryId;
        if (op.kind === 'seal') ledger.sealPromise = null;
        op.reject(error());
      } else {
        kept.push(op);
      }
    }
    this.queue = kept;
    this.queueHead = 0;
    // The removed entries were the ledger's newest ids; hand them out again so ids stay dense.
    if (firstRemovedEntry >= 0) ledger.nextEntryId = firstRemovedEntry;
  }

  private scheduleLoop(): void {
    if (this.loopRunning || this.loopScheduled) return;
    this.loopScheduled = true;
    this.loopDone = new Promise<void>((resolve) => {
      this.signalLoopDone = resolve;
    });
    // setImmediate rather than a microtask: appends issued in the same turn of the event loop (e.g. from
    // one network read) join the first group instead of each paying for an fsync.
    setImmediate(() => {
      this.loopScheduled = false;
      void this.commitLoop();
    });
  }

  private async commitLoop(): Promise<void> {
    this.loopRunning = true;
    try {
      for (;;) {
        if (this.rollWaiters.length > 0) await this.rollForCollector();
        if (this.queueLength() === 0) {
          if (this.flushDue && this.unflushedEntries > 0) await this.backgroundFlush();
          this.flushDue = false;
          if (this.queueLength() === 0) break;
        }
        if (this.mustRoll) {
          await this.drainSyncs();
          try {
            await this.roll(this.active.size);
          } catch (err) {
            // The disk still fails: everything waiting fails; the next append tries again.
            this.failGroup(this.takeAll(), this.storageError('cannot start a new segment after a failed write', err));
            continue;
          }
        }
        // Bound the bytes written ahead of the fsync in progress (BookKeeper's journal queue between the
        // journal thread and the force-write thread).
        while (this.inflightBytes >= 2 * this.maxGroupBytes) await this.syncProgress();
        if (this.mustRoll) continue; // an fsync failed meanwhile: roll first
        await this.writeGroup(this.takeGroup());
      }
    } finally {
      this.loopRunning = false;
      this.signalLoopDone();
      if ((this.queueLength() > 0 || this.rollWaiters.length > 0) && !this.closed) this.scheduleLoop();
    }
  }

  /** Rolls the active segment between groups, as the garbage collector asked (a failure is reported). */
  private async rollForCollector(): Promise<void> {
    const waiters = this.rollWaiters.splice(0);
    try {
      if (!this.mustRoll && this.active.size > SEGMENT_HEADER_BYTES) {
        await this.drainSyncs();
        await this.roll(this.active.size);
      }
    } catch (err) {
      this.mustRoll = true;
      this.onBackgroundError(this.storageError('cannot roll the active segment for garbage collection', err));
    } finally {
      for (const w of waiters) w();
    }
  }

  private takeAll(): Op[] {
    const ops = this.queue.slice(this.queueHead) as Op[];
    this.queue = [];
    this.queueHead = 0;
    return ops;
  }

  private takeGroup(): Op[] {
    // A group never overfills a segment: at most what an empty segment holds after its header.
    const cap = Math.min(this.maxGroupBytes, this.segmentBytes - SEGMENT_HEADER_BYTES);
    let bytes = 0;
    let end = this.queueHead;
    while (end < this.queue.length) {
      const next = bytes + this.recordBytes(this.queue[end]!);
      if (end > this.queueHead && next > cap) break;
      bytes = next;
      end++;
    }
    const group = this.queue.slice(this.queueHead, end) as Op[];
    this.queue.fill(undefined, this.queueHead, end);
    this.queueHead = end;
    if (this.queueHead === this.queue.length) {
      this.queue = [];
      this.queueHead = 0;
    } else if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.queueHead);
      this.queueHead = 0;
    }
    return group;
  }

  private recordBytes(op: Op): number {
    if (op.kind === 'entry' || op.kind === 'move') return RECORD_HEADER_BYTES + op.data.length;
    return RECORD_HEADER_BYTES + (op.kind === 'delete' ? 0 : 8);
  }

  /**
   * Writes one group with one writev. Under the durable policy the group then waits for an fsync (see
   * syncLoop) while the next group is already being framed and written: as in BookKeeper, where the
   * journal thread writes and the force-write thread fsyncs, one fsync covers every group written before
   * it started.
   */
  private async writeGroup(group: Op[]): Promise<void> {
    let total = 0;
    for (const op of group) total += this.recordBytes(op);
    if (this.active.writePos + total > this.segmentBytes && this.active.writePos > SEGMENT_HEADER_BYTES) {
      await this.drainSyncs();
      try {
        await this.roll(this.active.size);
      } catch (err) {
        this.failGroup(group, this.storageError('cannot roll to a new segment', err));
        this.mustRoll = true;
        return;
      }
    }
    const segment = this.active;
    const position = segment.writePos;
    const { buffers, offsets } = this.assemble(group, position, total);
    try {
      await segment.file!.writev(buffers, position);
    } catch (err) {
      // Nothing of this group becomes visible. Its bytes may or may not be on disk: the next group goes to a
      // new segment whose header records the end of the last good group, so they can never resurface.
      this.failGroup(group, this.storageError('write failed', err, segment.seq, position));
      this.mustRoll = true;
      return;
    }
    if (this.mustRoll) {
      // An fsync failed while this group was being written: the segment is abandoned from before it.
      this.failGroup(group, this.storageError('fsync of an earlier group failed', this.lastSyncError, segment.seq, position));
      return;
    }
    segment.writePos = position + total;
    const written: WrittenGroup = { group, segment, position, total, offsets };
    if (this.durable) {
      this.inflight.push(written);
      this.inflightBytes += total;
      if (!this.syncing) void this.syncLoop();
    } else {
      this.complete(written);
      await this.afterNonDurableWrite(group.length);
    }
  }

  /** The force-write stage: fsyncs until every written group is durable, completing groups in order. */
  private async syncLoop(): Promise<void> {
    this.syncing = true;
    try {
      while (this.inflight.length > 0) {
        const covered = this.inflight.length;
        const segment = this.inflight[0]!.segment;
        try {
          this.stats.fsyncs++;
          await segment.file!.datasync();
        } catch (err) {
          // Every group written and not yet durable fails, including any written during this fsync.
          this.lastSyncError = err;
          this.mustRoll = true;
          const failed = this.inflight.splice(0);
          this.inflightBytes = 0;
          const error = this.storageError('fsync failed', err, segment.seq, failed[0]!.position);
          for (const w of failed) this.failGroup(w.group, error);
          break;
        }
        for (const w of this.inflight.splice(0, covered)) {
          this.inflightBytes -= w.total;
          this.complete(w);
        }
        this.notifySyncProgress();
      }
    } finally {
      this.syncing = false;
      this.notifySyncProgress();
      if (this.inflight.length > 0 && !this.mustRoll) void this.syncLoop();
    }
  }

  private syncProgress(): Promise<void> {
    return new Promise<void>((resolve) => this.syncWaiters.push(resolve));
  }

  private notifySyncProgress(): void {
    const waiters = this.syncWaiters;
    this.syncWaiters = [];
    for (const w of waiters) w();
  }

  /** Waits until no written group awaits its fsync. */
  private async drainSyncs(): Promise<void> {
    while (this.syncing || this.inflight.length > 0) await this.syncProgress();
  }

  private complete(w: WrittenGroup): void {
    w.segment.size = w.position + w.total;
    this.stats.groupCommits++;
    this.stats.bytesAppended += w.total;
    this.apply(w.group, w.segment, w.offsets);
  }

  /** Frames a group's records: headers (and small payloads) in one staging buffer, large payloads by reference. */
  private assemble(group: Op[], position: number, total: number): { buffers: Buffer[]; offsets: number[] } {
    let stagingBytes = 0;
    for (const op of group) {
      stagingBytes += op.kind === 'entry' || op.kind === 'move' ? RECORD_HEADER_BYTES + (op.data.length <= COPY_THRESHOLD ? op.data.length : 0) : this.recordBytes(op);
    }
    const staging = Buffer.allocUnsafe(stagingBytes);
    const buffers: Buffer[] = [];
    const offsets: number[] = new Array<number>(group.length);
    let sp = 0;
    let stageStart = 0;
    let pos = position;
    for (let i = 0; i < group.length; i++) {
      const op = group[i]!;
      offsets[i] = pos;
      if (op.kind === 'entry' || op.kind === 'move') {
        const len = op.data.length;
        writeRecordHeader(staging, sp, RecordType.ENTRY, op.ledger.id, op.entryId, len);
        sealRecordCrc(staging, sp, op.data);
        sp += RECORD_HEADER_BYTES;
        if (len <= COPY_THRESHOLD) {
          op.data.copy(staging, sp);
          sp += len;
        } else {
          buffers.push(staging.subarray(stageStart, sp), op.data);
          stageStart = sp;
        }
        pos += RECORD_HEADER_BYTES + len;
      } else {
        if (op.kind === 'seal') op.sealedAtMs = Date.now();
        const rec =
          op.kind === 'create'
            ? encodeControlRecord(RecordType.CREATE, op.ledger.id, 0, op.ledger.createdAtMs)
            : op.kind === 'seal'
              ? encodeControlRecord(RecordType.SEAL, op.ledger.id, op.ledger.nextEntryId, op.sealedAtMs)
              : encodeControlRecord(RecordType.DELETE, op.ledger.id, 0, null);
        rec.copy(staging, sp);
        sp += rec.length;
        pos += rec.length;
      }
    }
    if (sp > stageStart) buffers.push(staging.subarray(stageStart, sp));
    if (pos - position !== total) throw new Error('group framing size mismatch');
    return { buffers, offsets };
  }

  /** Makes a committed group visible, in queue order. */
  private apply(group: Op[], segment: Segment, offsets: number[]): void {
    for (let i = 0; i < group.length; i++) {
      const op = group[i]!;
      const ledger = op.ledger;
      switch (op.kind) {
        case 'entry': {
          const len = op.data.length;
          ledger.index.push(segment.seq, offsets[i]!, len);
          ledger.length += len;
          segment.ledgers.add(ledger.id);
          if (!ledger.deleted) this.countLive(ledger, segment, RECORD_HEADER_BYTES + len);
          this.stats.entriesAppended++;
          if (!ledger.deleted) this.cache.add(ledger, op.data);
          op.resolve(op.entryId);
          break;
        }
        case 'create':
          this.ledgers.set(ledger.id, ledger);
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
          const from = this.segments.get(op.from);
          const moved = !ledger.deleted && op.entryId < ledger.index.size && ledger.index.segmentOf(op.entryId) === op.from && from !== undefined;
          if (moved) {
            const rec = RECORD_HEADER_BYTES + op.data.length;
            ledger.index.relocate(op.entryId, segment.seq, offsets[i]!);
            this.countLive(ledger, from, -rec);
            this.countLive(ledger, segment, rec);
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
            const seg = this.segments.get(seq);
            if (seg) seg.liveBytes -= bytes;
          }
          ledger.bytesIn.clear();
          this.ledgers.delete(ledger.id);
          this.cache.dropLedger(ledger);
          op.resolve();
          this.queueCheckpoint();
          break;
      }
    }
  }

  /** Adds `delta` record bytes of `ledger` to `segment`'s live bytes (a ledger with none there leaves it). */
  private countLive(ledger: Ledger, segment: Segment, delta: number): void {
    segment.liveBytes += delta;
    const now = (ledger.bytesIn.get(segment.seq) ?? 0) + delta;
    if (now > 0) {
      ledger.bytesIn.set(segment.seq, now);
    } else {
      ledger.bytesIn.delete(segment.seq);
      segment.ledgers.delete(ledger.id);
    }
  }

  /**
   * Fails every operation of a group that could not be made durable, and every later queued append of the
   * same ledgers (their ids follow the failed ones), then rewinds those ledgers' next entry ids to their
   * first failed id, so ids stay dense. (Groups fail as a suffix of what was written: a failed group's
   * successors in flight fail too, so the rewound id is lastAddConfirmed + 1 once earlier groups settle.)
   */
  private failGroup(group: Op[], error: LedgerError): void {
    const rewound = new Map<Ledger, number>();
    for (const op of group) {
      const ledger = op.ledger;
      if (op.kind === 'entry' && !rewound.has(ledger)) rewound.set(ledger, op.entryId);
      if (op.kind === 'seal') {
        ledger.sealing = false;
        ledger.sealPromise = null;
      }
      if (op.kind === 'delete') ledger.deleting = false;
      op.reject(error);
    }
    for (const [ledger, firstFailed] of rewound) {
      this.removeQueued(ledger, (op) => op.kind === 'entry', () => error);
      ledger.nextEntryId = Math.min(ledger.nextEntryId, firstFailed);
    }
  }

  private async afterNonDurableWrite(entries: number): Promise<void> {
    this.unflushedEntries += entries;
    if (this.unflushedEntries >= this.flushMessages) {
      await this.backgroundFlush();
    } else if (!this.flushTimer && Number.isFinite(this.flushMs)) {
      this.flushTimer = setTimeout(() => {
        this.flushTimer = null;
        this.flushDue = true;
        this.scheduleLoop();
      }, this.flushMs);
      this.flushTimer.unref();
    }
  }

  /** fsync under a non-durable policy: nobody waits on it; a failure is reported and the segment abandoned. */
  private async backgroundFlush(): Promise<void> {
    try {
      await this.flushActive();
    } catch (err) {
      // The entries written so far were acknowledged already; keep them (they are in the page cache and
      // were valid when written) but stop writing to a file whose writeback failed.
      this.mustRoll = true;
      this.onBackgroundError(this.storageError('background fsync failed', err, this.active.seq));
    }
  }

  private async flushActive(): Promise<void> {
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = null;
    }
    if (this.unflushedEntries === 0) return;
    this.stats.fsyncs++;
    await this.active.file!.datasync();
    this.unflushedEntries = 0;
  }

  // ── garbage collection (the collector itself is in garbage-collector.ts) ─────────────────────────────

  private gcHost(): GcHost {
    return {
      isClosing: () => this.closing,
      segments: () => {
        const rolled: Segment[] = [];
        for (const s of this.segments.values()) {
          // Only segments a durable checkpoint indexes: recovery reads them from their index file, never
          // replays their control records, so once their entries live elsewhere nothing needs them.
          if (s !== this.active && !s.reclaimed && s.indexDurable && s.seq < this.replayFromSegment) rolled.push(s);
        }
        return { active: this.active, rolled };
      },
      liveRuns: (seq) => {
        const segment = this.segments.get(seq);
        const runs: { ledgerId: number; firstEntryId: number; count: number }[] = [];
        if (!segment) return runs;
        for (const id of segment.ledgers) {
          const l = this.ledgers.get(id);
          if (!l || l.deleted || l.deleting) continue;
          for (const run of l.index.segmentRuns()) if (run.segmentSeq === seq) runs.push({ ledgerId: id, firstEntryId: run.firstEntryId, count: run.count });
        }
        return runs;
      },
      read: async (ledgerId, first, last, maxBytes) => {
        const l = this.ledgers.get(ledgerId);
        if (!l || l.deleted || l.deleting || this.closing) return null;
        try {
          return await this.read(ledgerId, first, last, { maxBytes });
        } catch (err) {
          if (err instanceof NoSuchLedgerError || err instanceof LedgerStoreClosedError) return null;
          throw err;
        }
      },
      move: (ledgerId, entryId, from, data) => {
        const ledger = this.ledgers.get(ledgerId);
        if (!ledger || ledger.deleting || this.closing) return Promise.resolve(false);
        const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
        return new Promise<boolean>((resolve, reject) => {
          this.enqueue({ kind: 'move', ledger, entryId, from, data: buf, resolve, reject });
        }).catch((err: unknown) => {
          if (err instanceof NoSuchLedgerError) return false;
          throw err;
        });
      },
      syncCopies: async () => {
        if (this.durable) return;
        // Copies sit in the active segment, or in segments rolled since (a roll fsyncs what it leaves).
        const segment = this.active;
        const file = await this.acquire(segment);
        try {
          this.stats.fsyncs++;
          await file.datasync();
        } finally {
          this.release(segment);
        }
      },
      rollActive: async () => {
        await new Promise<void>((resolve) => {
          this.rollWaiters.push(resolve);
          this.scheduleLoop();
        });
        await this.checkpointChain;
      },
      checkpoint: async () => {
        this.queueCheckpoint();
        await this.checkpointChain;
      },
      reportError: (err) => this.onBackgroundError(err instanceof LedgerError ? err : this.storageError('garbage collection failed', err)),
    };
  }

  // ── segments ─────────────────────────────────────────────────────────────────────────────────────────

  private segmentPath(seq: number): string {
    return path.join(this.dir, segmentFileName(seq));
  }

  private indexPath(seq: number): string {
    return path.join(this.dir, indexFileName(seq));
  }

  /**
   * Starts the next segment. `validBytes` is how much of the current one counts: its header records it, so
   * after a failed write the failed bytes are excluded from recovery once this returns.
   */
  private async roll(validBytes: number): Promise<void> {
    const old = this.active;
    if (!this.mustRoll && this.unflushedEntries > 0) await this.flushActive();
    await this.startSegment(old.seq + 1, old.seq, validBytes);
    old.size = validBytes;
    old.writePos = validBytes;
    this.mustRoll = false;
    this.unflushedEntries = 0;
    this.touchRolled(old);
    this.queueCheckpoint();
  }

  private async startSegment(seq: number, prevSeq: number, prevValidBytes: number): Promise<void> {
    const file = await this.fs.open(this.segmentPath(seq), 'w+');
    try {
      await file.writev([encodeSegmentHeader({ segmentSeq: seq, prevSegmentSeq: prevSeq, prevSegmentValidBytes: prevValidBytes, createdAtMs: Date.now() })], 0);
      await file.datasync();
      await this.fs.syncDir(this.dir);
    } catch (err) {
      await file.close().catch(() => undefined);
      await this.fs.unlink(this.segmentPath(seq)).catch(() => undefined);
      throw err;
    }
    const segment: Segment = { seq, size: SEGMENT_HEADER_BYTES, writePos: SEGMENT_HEADER_BYTES, file, opening: null, refs: 0, ledgers: new Set(), liveBytes: 0, pins: 0, compacting: false, indexDurable: false, reclaimed: false };
    this.segments.set(seq, segment);
    this.stats.segments = this.segments.size;
    this.active = segment;
  }

  /** Marks a rolled segment's handle as recently used; closes the least recently used beyond the budget. */
  private touchRolled(segment: Segment): void {
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

  private async acquire(segment: Segment): Promise<LedgerFile> {
    segment.refs++;
    try {
      if (segment.file) {
        if (segment !== this.active) this.touchRolled(segment);
        return segment.file;
      }
      if (!segment.opening) {
        segment.opening = this.fs.open(this.segmentPath(segment.seq), 'r').finally(() => {
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

  private release(segment: Segment): void {
    segment.refs--;
    if (segment.refs === 0 && segment.reclaimed && segment.file) {
      const f = segment.file;
      segment.file = null;
      void f.close().catch(() => undefined);
    }
  }

  // ── reads ────────────────────────────────────────────────────────────────────────────────────────────

  /**
   * Reads entries [from, to) of a ledger into out[id - base]: adjacent records of one segment are fetched
   * with positioned reads of at most READ_CHUNK_BYTES (a catch-up read streams, it never loads a whole
   * file), and every record is checked against its CRC, ledger id and entry id before it is returned.
   */
  private async readFromDisk(ledger: Ledger, from: number, to: number, out: LedgerEntry[], base: number): Promise<void> {
    const index = ledger.index;
    const chunks: { seq: number; position: number; bytes: number; first: number; count: number }[] = [];
    let id = from;
    while (id < to) {
      const seq = index.segmentOf(id);
      const runEnd = Math.min(to, index.segmentRunEnd(id));
      const position = index.offsetOf(id);
      let end = position + RECORD_HEADER_BYTES + index.lengthOf(id);
      let next = id + 1;
      while (next < runEnd && index.offsetOf(next) === end) {
        const recEnd = end + RECORD_HEADER_BYTES + index.lengthOf(next);
        if (recEnd - position > READ_CHUNK_BYTES) break;
        end = recEnd;
        next++;
      }
      chunks.push({ seq, position, bytes: end - position, first: id, count: next - id });
      id = next;
    }
    this.stats.diskReads += to - from;
    // Pin the segments now, before any await: compaction may move these entries meanwhile, and the segment
    // the plan reads from must not be deleted until the read is done.
    const pinned = new Set<Segment>();
    for (const c of chunks) {
      const segment = this.segments.get(c.seq);
      if (segment && !segment.reclaimed && !pinned.has(segment)) {
        segment.pins++;
        pinned.add(segment);
      }
    }
    let nextChunk = 0;
    const worker = async (): Promise<void> => {
      while (nextChunk < chunks.length) {
        const c = chunks[nextChunk++]!;
        const segment = this.segments.get(c.seq);
        if (!segment || segment.reclaimed) {
          if (ledger.deleted) throw new NoSuchLedgerError(ledger.id);
          throw new LedgerCorruptError(`segment ${c.seq} holding ledger ${ledger.id} is missing`, { ledgerId: ledger.id, entryId: c.first, file: segmentFileName(c.seq) });
        }
        const buf = Buffer.allocUnsafe(c.bytes);
        let file: LedgerFile;
        try {
          file = await this.acquire(segment);
        } catch (err) {
          throw this.storageError('cannot open segment for reading', err, c.seq);
        }
        try {
          await readFully(file, buf, c.position);
        } catch (err) {
          if (ledger.deleted) throw new NoSuchLedgerError(ledger.id);
          if (err instanceof LedgerError) throw err;
          throw this.storageError('read failed', err, c.seq, c.position);
        } finally {
          this.release(segment);
        }
        let p = 0;
        for (let k = 0; k < c.count; k++) {
          const entryId = c.first + k;
          const expected = index.lengthOf(entryId);
          const h = p + RECORD_HEADER_BYTES <= buf.length ? decodeRecordHeader(buf, p) : null;
          if (
            !h ||
            h.type !== RecordType.ENTRY ||
            h.ledgerId !== ledger.id ||
            h.arg !== entryId ||
            h.payloadLength !== expected ||
            p + RECORD_HEADER_BYTES + expected > buf.length ||
            !recordCrcMatches(buf, p, expected)
          ) {
            throw new LedgerCorruptError(`entry ${entryId} of ledger ${ledger.id} does not match its checksum or framing`, {
              ledgerId: ledger.id,
              entryId,
              file: segmentFileName(c.seq),
              position: c.position + p,
            });
          }
          const start = p + RECORD_HEADER_BYTES;
          out[entryId - base] = { entryId, data: buf.subarray(start, start + expected) };
          p = start + expected;
        }
      }
    };
    const workers: Promise<void>[] = [];
    for (let w = 0; w < Math.min(READ_CONCURRENCY, chunks.length); w++) workers.push(worker());
    const results = await Promise.allSettled(workers);
    for (const segment of pinned) segment.pins--;
    for (const r of results) if (r.status === 'rejected') throw r.reason;
  }

  // ── checkpoints and space reclamation ────────────────────────────────────────────────────────────────

  /** Runs a checkpoint after the ones already queued (at most one waits). Failures are reported, not thrown. */
  private queueCheckpoint(): void {
    if (this.checkpointQueued || this.closed) return;
    this.checkpointQueued = true;
    this.checkpointChain = this.checkpointChain.then(async () => {
      this.checkpointQueued = false;
      if (this.closed) return;
      try {
        await this.checkpoint();
      } catch (err) {
        this.onBackgroundError(err instanceof LedgerError ? err : this.storageError('checkpoint failed', err));
      }
    });
  }

  /**
   * Takes one snapshot of the store, synchronously, then writes it out:
   * 1. the index file of every rolled segment that lacks a durable one;
   * 2. the checkpoint: ledger table, next ledger id, and the first segment recovery must scan;
   * 3. then deletes rolled segments below that with no live entry left (BookKeeper's garbage collection
   *    of entry logs; compaction, which moves the last live entries out, is in garbage-collector.ts).
   * The index files and the table come from the same instant, so they agree on which ledgers exist. Deletes,
   * seals and appends that commit while the files are being written belong to the next checkpoint (a delete
   * queues one): in particular a segment is only deleted once a durable checkpoint no longer lists any of
   * its ledgers, or recovery from this checkpoint would look for entries in a segment that is gone.
   */
  private async checkpoint(): Promise<void> {
    const active = this.active;
    const indexes: { segment: Segment; bytes: Buffer }[] = [];
    for (const segment of this.segments.values()) {
      if (segment === active || segment.reclaimed || segment.indexDurable) continue;
      indexes.push({ segment, bytes: encodeSegmentIndex(this.segmentIndexOf(segment)) });
    }
    const table: Checkpoint['ledgers'] = [];
    for (const l of this.ledgers.values()) {
      if (l.deleted) continue;
      // sealedAtMs 0 means "open" in the checkpoint, so a sealed ledger always records at least 1.
      table.push({ ledgerId: l.id, createdAtMs: l.createdAtMs, sealedAtMs: l.sealed ? Math.max(1, l.sealedAtMs ?? 1) : 0, entryCount: l.sealed ? l.index.size : 0 });
    }
    const nextLedgerId = this.nextLedgerId;
    const activeSegmentDurableBytes = active.size;
    // Under a non-durable flush policy the snapshot may describe entries, seals and deletes not yet fsynced:
    // make everything written before it durable first, so neither the table nor an index outruns the log.
    if (!this.durable) {
      this.stats.fsyncs++;
      await active.file!.datasync();
    }
    let replayFrom = active.seq;
    let wroteIndex = false;
    for (const { segment, bytes } of indexes) {
      try {
        await this.writeAtomically(this.indexPath(segment.seq), bytes, false);
        segment.indexDurable = true;
        wroteIndex = true;
      } catch (err) {
        replayFrom = Math.min(replayFrom, segment.seq);
        this.onBackgroundError(this.storageError('cannot write segment index', err, segment.seq));
      }
    }
    if (wroteIndex) await this.fs.syncDir(this.dir);
    await this.writeAtomically(
      path.join(this.dir, CHECKPOINT_FILE),
      encodeCheckpoint({ nextLedgerId, replayFromSegment: replayFrom, writtenAtMs: Date.now(), activeSegment: active.seq, activeSegmentDurableBytes, ledgers: table }),
      true,
    );
    this.replayFromSegment = replayFrom;
    await this.reclaim(new Set(table.map((l) => l.ledgerId)));
  }

  private segmentIndexOf(segment: Segment): SegmentIndex {
    const runs: IndexRun[] = [];
    for (const id of segment.ledgers) {
      const l = this.ledgers.get(id);
      if (!l || l.deleted) continue;
      for (const run of l.index.segmentRuns()) {
        if (run.segmentSeq !== segment.seq) continue;
        const offsets = new Uint32Array(run.count);
        const lengths = new Uint32Array(run.count);
        for (let i = 0; i < run.count; i++) {
          offsets[i] = l.index.offsetOf(run.firstEntryId + i);
          lengths[i] = l.index.lengthOf(run.firstEntryId + i);
        }
        runs.push({ ledgerId: id, firstEntryId: run.firstEntryId, offsets, lengths });
      }
    }
    return { segmentSeq: segment.seq, validBytes: segment.size, runs };
  }

  /**
   * Deletes the rolled segments below the replay start none of whose ledgers is in `checkpointed` (the table
   * of the checkpoint just made durable, which recovery would start from) or live in memory. A ledger
   * deleted after that table was taken keeps its segments until the next checkpoint.
   */
  private async reclaim(checkpointed: ReadonlySet<LedgerId>): Promise<void> {
    const dead: Segment[] = [];
    for (const segment of this.segments.values()) {
      if (segment === this.active || segment.reclaimed || segment.seq >= this.replayFromSegment) continue;
      // A read planned on it, or live entries being copied out and not yet durable elsewhere: next time.
      if (segment.pins > 0 || segment.compacting) continue;
      let live = false;
      for (const id of segment.ledgers) {
        const l = this.ledgers.get(id);
        if (checkpointed.has(id) || (l && !l.deleted)) {
          live = true;
          break;
        }
      }
      if (!live) dead.push(segment);
    }
    if (dead.length === 0) return;
    for (const segment of dead) {
      segment.reclaimed = true;
      this.segments.delete(segment.seq);
      this.openRolled.delete(segment);
      if (segment.file && segment.refs === 0) {
        const f = segment.file;
        segment.file = null;
        await f.close().catch(() => undefined);
      }
      // Unlinking is safe with reads still holding the handle: the bytes stay until the last close.
      await this.fs.unlink(this.segmentPath(segment.seq)).catch((err) => {
        if (!isEnoent(err)) throw err;
      });
      await this.fs.unlink(this.indexPath(segment.seq)).catch((err) => {
        if (!isEnoent(err)) throw err;
      });
      this.stats.segmentsReclaimed++;
      this.stats.bytesReclaimed += segment.size;
    }
    this.stats.segments = this.segments.size;
    await this.fs.syncDir(this.dir);
  }

  /** Writes `name.tmp`, fsyncs it and renames it over `name` (the directory is synced when `syncDir`). */
  private async writeAtomically(file: string, data: Buffer, syncDir: boolean): Promise<void> {
    const tmp = `${file}.tmp`;
    const f = await this.fs.open(tmp, 'w+');
    try {
      await f.writev([data], 0);
      await f.datasync();
    } finally {
      await f.close().catch(() => undefined);
    }
    await this.fs.rename(tmp, file);
    if (syncDir) await this.fs.syncDir(this.dir);
  }

  // ── recovery ─────────────────────────────────────────────────────────────────────────────────────────

  private async recover(): Promise<void> {
    const names = await this.fs.readdir(this.dir);
    for (const name of names) {
      if (name.endsWith('.tmp')) await this.fs.unlink(path.join(this.dir, name)).catch(() => undefined);
    }
    const seqs = names.map((n) => parseSegmentSeq(n, '.seg')).filter((s): s is number => s !== null).sort((a, b) => a - b);
    const indexSeqs = new Set(names.map((n) => parseSegmentSeq(n, '.idx')).filter((s): s is number => s !== null));
    // An index whose segment is gone: a crash between the two unlinks of a reclaim. It is never read.
    const segmentSeqs = new Set(seqs);
    for (const seq of indexSeqs) {
      if (segmentSeqs.has(seq)) continue;
      await this.fs.unlink(this.indexPath(seq)).catch(() => undefined);
      indexSeqs.delete(seq);
    }

    const checkpoint = names.includes(CHECKPOINT_FILE) ? await readCheckpoint(this.fs, this.dir) : null;
    if (!checkpoint) {
      if (seqs.length > 0) throw new LedgerCorruptError(`segments exist but ${CHECKPOINT_FILE} is missing`, { file: CHECKPOINT_FILE });
      // A new store: the checkpoint comes first, so a directory with segments always has one.
      await this.writeAtomically(path.join(this.dir, CHECKPOINT_FILE), encodeCheckpoint({ nextLedgerId: 1, replayFromSegment: 1, writtenAtMs: Date.now(), activeSegment: 1, activeSegmentDurableBytes: 0, ledgers: [] }), true);
      await this.startSegment(1, 0, 0);
      return;
    }
    this.nextLedgerId = Math.max(1, checkpoint.nextLedgerId);
    this.replayFromSegment = checkpoint.replayFromSegment;
    const recovering = new Map<LedgerId, RecoveringLedger>();
    for (const c of checkpoint.ledgers) {
      const ledger = newLedger(c.ledgerId, c.createdAtMs);
      if (c.sealedAtMs > 0) ledger.sealedAtMs = c.sealedAtMs;
      recovering.set(c.ledgerId, { ledger, entryCount: c.sealedAtMs > 0 ? c.entryCount : null, found: new RecoveredEntries(c.ledgerId) });
    }

    // Segment headers: each records the valid length of its predecessor.
    const headers = new Map<number, ReturnType<typeof decodeSegmentHeader>>();
    for (const seq of seqs) headers.set(seq, await readSegmentHeader(this.fs, this.segmentPath(seq)));
    while (seqs.length > 0) {
      const last = seqs[seqs.length - 1]!;
      const h = headers.get(last)!;
      if (typeof h !== 'string') break;
      // A roll that failed or crashed before its header was durable leaves at most a partial header: no
      // record is ever written before the header is. Anything longer is real damage.
      if ((await this.fs.stat(this.segmentPath(last))).size > SEGMENT_HEADER_BYTES) break;
      await this.fs.unlink(this.segmentPath(last));
      seqs.pop();
    }
    for (const seq of seqs) {
      const h = headers.get(seq)!;
      if (typeof h === 'string') throw new LedgerCorruptError(`segment ${seq}: ${h}`, { file: segmentFileName(seq) });
      if (h.segmentSeq !== seq) throw new LedgerCorruptError(`segment ${seq} says it is segment ${h.segmentSeq}`, { file: segmentFileName(seq) });
    }

    for (let i = 0; i < seqs.length; i++) {
      const seq = seqs[i]!;
      const isLast = i === seqs.length - 1;
      const next = seqs[i + 1];
      const nextHeader = next !== undefined ? headers.get(next) : undefined;
      let validBytes: number | null = null;
      if (nextHeader && typeof nextHeader !== 'string' && next === seq + 1 && nextHeader.prevSegmentSeq === seq) {
        validBytes = nextHeader.prevSegmentValidBytes;
      }
      const segment: Segment = { seq, size: SEGMENT_HEADER_BYTES, writePos: SEGMENT_HEADER_BYTES, file: null, opening: null, refs: 0, ledgers: new Set(), liveBytes: 0, pins: 0, compacting: false, indexDurable: false, reclaimed: false };
      this.segments.set(seq, segment);
      let loaded = false;
      if (seq < this.replayFromSegment && indexSeqs.has(seq)) {
        const index = await readSegmentIndex(this.fs, this.indexPath(seq), seq);
        if (index && (validBytes === null || validBytes === index.validBytes)) {
          for (const run of index.runs) applyRun(recovering, segment, run);
          segment.size = index.validBytes;
          segment.writePos = index.validBytes;
          segment.indexDurable = true;
          loaded = true;
        }
      }
      if (!loaded) {
        if (validBytes === null && !isLast) {
          throw new LedgerCorruptError(`cannot tell the valid length of segment ${seq}: no index and no successor header`, { file: segmentFileName(seq) });
        }
        const durableBytes = seq === checkpoint.activeSegment ? checkpoint.activeSegmentDurableBytes : 0;
        await scanSegment(this.fs, this.segmentPath(seq), segment, validBytes, durableBytes, seq >= this.replayFromSegment, recovering, isLast, (id) => {
          if (id >= this.nextLedgerId) this.nextLedgerId = id + 1;
        });
      }
    }

    for (const { ledger, entryCount, found } of recovering.values()) {
      ledger.length = found.assemble(ledger.index, entryCount);
      // Live bytes, from the index (the copy recovery chose of each entry is the live one).
      for (const run of ledger.index.segmentRuns()) {
        const segment = this.segments.get(run.segmentSeq)!;
        let bytes = 0;
        for (let id = run.firstEntryId; id < run.firstEntryId + run.count; id++) bytes += RECORD_HEADER_BYTES + ledger.index.lengthOf(id);
        this.countLive(ledger, segment, bytes);
        segment.ledgers.add(ledger.id);
      }
      if (entryCount !== null) {
        ledger.sealed = true;
        ledger.sealedAtMs ??= 0;
      }
      ledger.nextEntryId = ledger.index.size;
      this.ledgers.set(ledger.id, ledger);
      if (ledger.id >= this.nextLedgerId) this.nextLedgerId = ledger.id + 1;
    }

    if (seqs.length === 0) {
      await this.startSegment(Math.max(1, this.replayFromSegment), 0, 0);
    } else {
      const last = this.segments.get(seqs[seqs.length - 1]!)!;
      const file = await this.fs.open(this.segmentPath(last.seq), 'r+');
      last.file = file;
      // It takes new records from now on: an index file it may have is stale and is rewritten at its roll.
      last.indexDurable = false;
      this.active = last;
      if ((await file.size()) > last.size) {
        // Cut the torn or unacknowledged tail, so new records follow the last valid one.
        await file.truncate(last.size);
        await file.datasync();
      }
    }
    this.stats.segments = this.segments.size;
    // Index the rolled segments recovery had to scan, and drop any left dead by a crash mid-reclaim.
    this.queueCheckpoint();
  }

  // ── helpers ──────────────────────────────────────────────────────────────────────────────────────────

  private storageError(message: string, cause: unknown, seq?: number, position?: number): LedgerError {
    if (cause instanceof LedgerError) return cause;
    return new LedgerStorageError(message, { ...(seq !== undefined ? { file: segmentFileName(seq) } : {}), ...(position !== undefined ? { position } : {}) }, cause);
  }

  private async releaseFiles(): Promise<void> {
    this.closed = true;
    this.closing = true;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    for (const segment of this.segments.values()) {
      const f = segment.file;
      segment.file = null;
      if (f) await f.close().catch(() => undefined);
    }
    this.openRolled.clear();
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
