/**
 * The file-system layer under the local ledger store. Every byte the store reads or writes goes through
 * `LedgerFs`, so tests can swap in an in-memory file system (memory-fs.ts) that simulates power loss, or a
 * fault-injecting wrapper (fault-fs.ts) that fails the next fsync, tears a write or fills the disk.
 *
 * `nodeLedgerFs` is the real implementation over node:fs file descriptors. It uses the callback API wrapped
 * in promises (cheaper per call than FileHandle), `writev` for gathered writes and `fdatasync` for flushes.
 * A file opened with `directAppend` (a segment) appends with O_DIRECT where the file system allows it
 * (direct-file.ts); one opened with `directRead` reads its runs with O_DIRECT, in windows the read pool caches.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { DirectAppender, openDirectFd } from './direct-file.js';
import { ReadPool, type RunsRead } from './read-pool.js';

/** The worker threads of every store of the process (read-pool.ts): two, one per core of a small machine. */
const READ_THREADS = 2;
let readPool: ReadPool | undefined;

function sharedReadPool(): ReadPool {
  readPool ??= new ReadPool(READ_THREADS);
  return readPool;
}

/** The read workers running in this process (for tests and diagnostics). */
export function readWorkersRunning(): number {
  return readPool?.running ?? 0;
}

/** `r`: read only. `r+`: read and write an existing file. `w+`: create or truncate. `wx+`: create, failing with EEXIST. */
export type LedgerFsOpenMode = 'r' | 'r+' | 'w+' | 'wx+';

export interface LedgerFile {
  /** Reads up to `length` bytes at `position` into `buffer[offset…]`; resolves with the count read (0 at end of file). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /**
   * Optional: reads each run into a buffer of its own, exactly its length, rejecting with a PooledReadError
   * (code `EOF` when the file ends inside a run); with `checkRecords`, also checks the CRCs of the runs'
   * records (format.ts) where it reads. nodeLedgerFs's files do it in worker threads (read-pool.ts); without it
   * the store reads through `read`. The file must stay open until the promise settles.
   */
  readRuns?(runs: readonly { readonly position: number; readonly length: number }[], options?: ReadRunsOptions): Promise<RunsRead>;
  /** Writes all `buffers` back to back starting at `position`, or rejects (possibly after writing a prefix). */
  writev(buffers: readonly Uint8Array[], position: number): Promise<void>;
  /** fdatasync: the file's data (and the size needed to read it) are durable when this resolves. */
  datasync(): Promise<void>;
  /** Whether its appends bypass the page cache (opened with `directAppend` and taken); absent means no. */
  readonly direct?: boolean;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

export interface ReadRunsOptions {
  /** Also check the CRCs of the runs' records (format.ts). */
  readonly checkRecords?: boolean;
  /**
   * The file's first `stableBytes` do not change while it is open (a segment's committed bytes): a reader may
   * keep them cached. Nothing past them is.
   */
  readonly stableBytes?: number;
}

/** A held exclusive lock on a store directory. */
export interface LedgerFsLock {
  release(): Promise<void>;
}

export interface LedgerFsOpenOptions {
  /**
   * The file is appended to at its end (a segment): its writes may bypass the page cache (direct-file.ts).
   * A file system that cannot, or an implementation without a page cache, ignores it.
   */
  readonly directAppend?: boolean;
  /**
   * Reads of runs (`readRuns`) may bypass the page cache: the file is read in aligned windows with O_DIRECT,
   * which the read pool keeps below `stableBytes` (read-pool.ts). For files whose bytes were written past the
   * page cache too, so that no read of them would find it warm.
   */
  readonly directRead?: boolean;
}

export interface LedgerFs {
  open(file: string, mode: LedgerFsOpenMode, options?: LedgerFsOpenOptions): Promise<LedgerFile>;
  /** Names (not paths) of the entries of a directory. */
  readdir(dir: string): Promise<string[]>;
  /** Size of a file; rejects with ENOENT if absent. */
  stat(file: string): Promise<{ size: number }>;
  unlink(file: string): Promise<void>;
  /** Atomically replaces `to` with `from`. */
  rename(from: string, to: string): Promise<void>;
  /** Creates a directory and its parents; no error if it exists. */
  mkdir(dir: string): Promise<void>;
  /** Makes the directory's entries (creations, renames, unlinks) durable. */
  syncDir(dir: string): Promise<void>;
  /**
   * Takes an exclusive lock named by `file`; rejects at once with LockHeldError while another process, or
   * another holder in this process, has it. The lock must end with its holder: a process that dies (even
   * by SIGKILL) must not leave it taken.
   */
  lock(file: string): Promise<LedgerFsLock>;
}

/** Thrown by `LedgerFs.lock` when another holder has the lock. */
export class LockHeldError extends Error {
  readonly code = 'EBUSY';
  constructor(readonly file: string) {
    super(`${file} is locked by another process or another holder in this process`);
  }
}

function cb<T>(executor: (done: (err: NodeJS.ErrnoException | null, value?: T) => void) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    executor((err, value) => (err ? reject(err) : resolve(value as T)));
  });
}

/** Keys of the read pool's window cache: one per open file of the process, never reused. */
let nextFileKey = 0;

class NodeLedgerFile implements LedgerFile {
  private readonly key = nextFileKey++;

  constructor(
    private readonly fd: number,
    /** Set for a file opened with `directAppend` where direct I/O is possible. */
    private readonly appender: DirectAppender | null = null,
    /** An O_DIRECT descriptor for `readRuns`, for a file opened with `directRead` where direct I/O is possible. */
    private readonly directReadFd: number | null = null,
  ) {}

  get direct(): boolean {
    return this.appender?.direct ?? false;
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return cb<number>((done) => fs.read(this.fd, buffer, offset, length, position, done));
  }

  readRuns(runs: readonly { readonly position: number; readonly length: number }[], options: ReadRunsOptions = {}): Promise<RunsRead> {
    const direct = this.directReadFd === null ? undefined : { fd: this.directReadFd, key: this.key, cacheBelow: options.stableBytes ?? 0 };
    return sharedReadPool().read(
      runs.map((r) => ({ fd: this.fd, position: r.position, length: r.length })),
      { checkRecords: options.checkRecords, direct },
    );
  }

  writev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    if (this.appender) return this.appender.writev(buffers, position, (b, p) => this.writevBuffered(b, p));
    return this.writevBuffered(buffers, position);
  }

  private async writevBuffered(buffers: readonly Uint8Array[], position: number): Promise<void> {
    let bufs = buffers as Uint8Array[];
    let pos = position;
    let remaining = 0;
    for (const b of bufs) remaining += b.byteLength;
    // writev on a regular file normally writes everything; loop on a short write (e.g. a signal) until done
    // or until the kernel reports the error (ENOSPC, EIO) on the next call.
    while (remaining > 0) {
      const n = await cb<number>((done) => fs.writev(this.fd, bufs, pos, done));
      remaining -= n;
      pos += n;
      if (remaining > 0) bufs = dropPrefix(bufs, n);
    }
  }

  datasync(): Promise<void> {
    return cb<void>((done) => fs.fdatasync(this.fd, done));
  }

  truncate(length: number): Promise<void> {
    const truncate = (l: number): Promise<void> => cb<void>((done) => fs.ftruncate(this.fd, l, done));
    return this.appender ? this.appender.truncate(length, truncate) : truncate(length);
  }

  async size(): Promise<number> {
    if (this.appender) return this.appender.size;
    const st = await cb<fs.Stats>((done) => fs.fstat(this.fd, done));
    return st.size;
  }

  async close(): Promise<void> {
    try {
      await this.appender?.close();
    } finally {
      const direct = this.directReadFd;
      if (direct !== null) await cb<void>((done) => fs.close(direct, done)).catch(() => undefined);
      await cb<void>((done) => fs.close(this.fd, done));
    }
  }
}

/** The buffers that remain after skipping the first `n` bytes. */
export function dropPrefix(buffers: readonly Uint8Array[], n: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let skip = n;
  for (const b of buffers) {
    if (skip >= b.byteLength) {
      skip -= b.byteLength;
      continue;
    }
    out.push(skip > 0 ? b.subarray(skip) : b);
    skip = 0;
  }
  return out;
}

/**
 * An exclusive lock the kernel releases when its process dies: Node has no flock(2), so this takes SQLite's
 * POSIX (fcntl) lock on a small database file, with `locking_mode=EXCLUSIVE` and a write transaction begun
 * and never committed, held until `release()`. fcntl locks belong to the process and vanish with it however
 * it ends (SIGKILL included), so a crashed owner never blocks a restart and there is no pid to go stale or be
 * reused. Another process is refused at once (busy timeout 0), and so is a second holder in this process:
 * SQLite tracks the locks of every connection to the same file within a process. Nothing is ever written to
 * the file.
 */
function takeKernelLock(file: string): { release(): void } {
  let db: Database.Database;
  try {
    db = new Database(file, { timeout: 0 });
  } catch (err) {
    throw Object.assign(new Error(`cannot open the lock file ${file}: ${(err as Error).message}`), { cause: err });
  }
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY' || (err as { code?: string }).code === 'SQLITE_LOCKED') throw new LockHeldError(file);
    throw err;
  }
  return { release: () => db.close() };
}

export const nodeLedgerFs: LedgerFs = {
  async open(file, mode, options) {
    const fd = await cb<number>((done) => fs.open(file, mode, 0o644, done));
    const opened = [fd];
    try {
      const directReadFd = options?.directRead ? await openDirectFd(file, 'read') : null;
      if (directReadFd !== null) {
        opened.push(directReadFd);
        // A store reading its segments directly reads them all through the pool: its workers start with the
        // store, not with the first Fetch that misses the tail cache (read-pool.ts `start`).
        sharedReadPool().start();
      }
      if (!options?.directAppend || mode === 'r') return new NodeLedgerFile(fd, null, directReadFd);
      const directFd = await openDirectFd(file, 'write');
      if (directFd === null) return new NodeLedgerFile(fd, null, directReadFd);
      opened.push(directFd);
      const st = await cb<fs.Stats>((done) => fs.fstat(fd, done));
      return new NodeLedgerFile(fd, new DirectAppender(fd, directFd, st.size), directReadFd);
    } catch (err) {
      for (const f of opened.reverse()) await cb<void>((done) => fs.close(f, done)).catch(() => undefined);
      throw err;
    }
  },
  readdir: (dir) => fs.promises.readdir(dir),
  stat: (file) => fs.promises.stat(file),
  unlink: (file) => fs.promises.unlink(file),
  rename: (from, to) => fs.promises.rename(from, to),
  async mkdir(dir) {
    await fs.promises.mkdir(dir, { recursive: true });
  },
  async syncDir(dir) {
    const fd = await cb<number>((done) => fs.open(dir, 'r', done));
    try {
      await cb<void>((done) => fs.fsync(fd, done));
    } finally {
      await cb<void>((done) => fs.close(fd, done));
    }
  },
  async lock(file) {
    const held = takeKernelLock(path.resolve(file));
    return {
      async release() {
        held.release();
      },
    };
  },
};
