/**
 * A `LedgerFs` wrapper that injects the failures storage code must survive, for tests:
 * - `failSyncs(n)`: the next n fsyncs (file or directory) fail with EIO, as a disk error reported at
 *   writeback does. The bytes written before stay where they are, like Linux's page cache after a failed
 *   fsync: the caller must not assume either way.
 * - `tearNextWrite(keep)`: the next write stores only its first `keep` bytes, then fails with EIO.
 * - `fillDisk(freeBytes)`: from now on at most `freeBytes` more bytes can be written in total; a write that
 *   would go past that stores what fits and fails with ENOSPC (and so does creating a file once full).
 * - `failNext(op, code)`: the next call of one operation fails with the given errno code.
 * - `holdSyncs()`: fsyncs wait until the returned function is called, so a test can act while one is in
 *   flight (e.g. see the next group written meanwhile).
 * - `clear()`: every fault is lifted ("the disk was replaced / space was freed").
 * It counts operations (`counts`) so tests can assert, for example, that many appends shared one fsync.
 */
import type { LedgerFile, LedgerFs, LedgerFsLock, LedgerFsOpenMode, LedgerFsOpenOptions } from './fs.js';

export type FaultableOp = 'open' | 'read' | 'writev' | 'datasync' | 'truncate' | 'unlink' | 'rename' | 'readdir' | 'syncDir';

function injected(code: string, syscall: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: injected fault in ${syscall}`) as NodeJS.ErrnoException;
  err.code = code;
  err.syscall = syscall;
  return err;
}

export class FaultInjectingLedgerFs implements LedgerFs {
  readonly counts = { writev: 0, bytesWritten: 0, datasync: 0, syncDir: 0, read: 0, largestRead: 0, openFiles: 0, peakOpenFiles: 0 };
  private syncFailures = 0;
  private tearAt: number | null = null;
  private freeBytes = Infinity;
  private readonly failures = new Map<FaultableOp, string>();
  private syncGate: Promise<void> | null = null;
  /** fsyncs waiting at the gate of `holdSyncs()`. */
  syncsHeld = 0;

  constructor(private readonly inner: LedgerFs) {}

  failSyncs(n = 1): void {
    this.syncFailures = n;
  }

  tearNextWrite(keepBytes: number): void {
    this.tearAt = keepBytes;
  }

  fillDisk(freeBytes = 0): void {
    this.freeBytes = freeBytes;
  }

  failNext(op: FaultableOp, code = 'EIO'): void {
    this.failures.set(op, code);
  }

  holdSyncs(): () => void {
    let open!: () => void;
    this.syncGate = new Promise<void>((resolve) => (open = resolve));
    return () => {
      this.syncGate = null;
      open();
    };
  }

  /** Waits at the gate of `holdSyncs()`, if one is set. */
  async syncGateWait(): Promise<void> {
    if (!this.syncGate) return;
    this.syncsHeld++;
    try {
      await this.syncGate;
    } finally {
      this.syncsHeld--;
    }
  }

  clear(): void {
    this.syncFailures = 0;
    this.tearAt = null;
    this.freeBytes = Infinity;
    this.failures.clear();
  }

  /** Throws the fault armed for `op`, once. */
  check(op: FaultableOp): void {
    const code = this.failures.get(op);
    if (code !== undefined) {
      this.failures.delete(op);
      throw injected(code, op);
    }
  }

  /** Called by files on datasync and by syncDir. */
  takeSyncFailure(): boolean {
    if (this.syncFailures <= 0) return false;
    this.syncFailures--;
    return true;
  }

  /** How many of `wanted` bytes the next write may store, and the error to raise after storing them. */
  admitWrite(wanted: number): { allowed: number; error: NodeJS.ErrnoException | null } {
    let allowed = wanted;
    let error: NodeJS.ErrnoException | null = null;
    if (this.tearAt !== null) {
      allowed = Math.min(allowed, this.tearAt);
      this.tearAt = null;
      error = injected('EIO', 'writev');
    }
    if (allowed > this.freeBytes) {
      allowed = this.freeBytes;
      error = injected('ENOSPC', 'writev');
    }
    if (this.freeBytes !== Infinity) this.freeBytes -= allowed;
    return { allowed, error };
  }

  async open(file: string, mode: LedgerFsOpenMode, options?: LedgerFsOpenOptions): Promise<LedgerFile> {
    this.check('open');
    if ((mode === 'w+' || mode === 'wx+') && this.freeBytes <= 0) throw injected('ENOSPC', 'open');
    const handle = new FaultFile(this, await this.inner.open(file, mode, options));
    this.counts.openFiles++;
    this.counts.peakOpenFiles = Math.max(this.counts.peakOpenFiles, this.counts.openFiles);
    return handle;
  }

  async readdir(dir: string): Promise<string[]> {
    this.check('readdir');
    return this.inner.readdir(dir);
  }

  stat(file: string): Promise<{ size: number }> {
    return this.inner.stat(file);
  }

  async unlink(file: string): Promise<void> {
    this.check('unlink');
    return this.inner.unlink(file);
  }

  async rename(from: string, to: string): Promise<void> {
    this.check('rename');
    return this.inner.rename(from, to);
  }

  mkdir(dir: string): Promise<void> {
    return this.inner.mkdir(dir);
  }

  async syncDir(dir: string): Promise<void> {
    this.check('syncDir');
    this.counts.syncDir++;
    if (this.takeSyncFailure()) throw injected('EIO', 'fsync');
    return this.inner.syncDir(dir);
  }

  lock(file: string): Promise<LedgerFsLock> {
    return this.inner.lock(file);
  }
}

class FaultFile implements LedgerFile {
  constructor(
    private readonly fs: FaultInjectingLedgerFs,
    private readonly inner: LedgerFile,
  ) {}

  async read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    this.fs.check('read');
    this.fs.counts.read++;
    this.fs.counts.largestRead = Math.max(this.fs.counts.largestRead, length);
    return this.inner.read(buffer, offset, length, position);
  }

  async writev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    this.fs.check('writev');
    let total = 0;
    for (const b of buffers) total += b.byteLength;
    const { allowed, error } = this.fs.admitWrite(total);
    this.fs.counts.writev++;
    this.fs.counts.bytesWritten += allowed;
    if (!error) return this.inner.writev(buffers, position);
    // Store the prefix that "made it", then fail.
    const prefix: Uint8Array[] = [];
    let left = allowed;
    for (const b of buffers) {
      if (left <= 0) break;
      prefix.push(b.byteLength <= left ? b : b.subarray(0, left));
      left -= b.byteLength;
    }
    if (prefix.length > 0) await this.inner.writev(prefix, position);
    throw error;
  }

  async datasync(): Promise<void> {
    this.fs.check('datasync');
    this.fs.counts.datasync++;
    await this.fs.syncGateWait();
    if (this.fs.takeSyncFailure()) throw injected('EIO', 'fdatasync');
    return this.inner.datasync();
  }

  async truncate(length: number): Promise<void> {
    this.fs.check('truncate');
    return this.inner.truncate(length);
  }

  size(): Promise<number> {
    return this.inner.size();
  }

  private closed = false;

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.fs.counts.openFiles--;
    }
    return this.inner.close();
  }
}
