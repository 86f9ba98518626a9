/**
 * An in-memory `LedgerFs` that also models what survives a power loss, for tests and for an embedded store
 * that needs no disk (`openMemoryLedgerStore()` in local-store.ts).
 *
 * Durability model (the one the local store is written against):
 * - A file's bytes up to its last `datasync()` survive `crash()`; bytes written after it survive only as a
 *   random prefix, optionally followed by garbage (a torn write), or not at all.
 * - Writing below the synced size makes the synced size fall back to the write's position (the model is
 *   precise for append-only files, which is how the store writes).
 * - Directory operations (create, rename, unlink) are durable at once: `syncDir` is a no-op here.
 * - `crash()` returns the file system as it comes back after the power loss; the crashed instance is dead
 *   (every call and every handle it gave out fails with EIO, as a killed process can do nothing more).
 * - `kill()` models the process being killed (SIGKILL) while the machine stays up: every completed write
 *   survives, synced or not (it is in the kernel's page cache); the instance dies the same way.
 * - `snapshot()` copies what the file system holds now, so a test can start many runs from one state.
 */
import { LockHeldError, type LedgerFile, type LedgerFs, type LedgerFsLock, type LedgerFsOpenMode } from './fs.js';

function fsError(code: string, syscall: string, file: string): NodeJS.ErrnoException {
  const err = new Error(`${code}: ${syscall} '${file}'`) as NodeJS.ErrnoException;
  err.code = code;
  err.syscall = syscall;
  err.path = file;
  return err;
}

class MemNode {
  data = Buffer.alloc(0);
  size = 0;
  syncedSize = 0;

  /** A copy of the first `size` bytes, all synced: the file as found after a crash. */
  prefix(size: number): MemNode {
    const copy = new MemNode();
    copy.ensure(size);
    this.data.copy(copy.data, 0, 0, size);
    copy.size = size;
    copy.syncedSize = size;
    return copy;
  }

  ensure(capacity: number): void {
    if (capacity <= this.data.length) return;
    const next = Buffer.alloc(Math.max(capacity, this.data.length * 2, 4096));
    this.data.copy(next, 0, 0, this.size);
    this.data = next;
  }
}

class MemFile implements LedgerFile {
  constructor(
    private readonly fs: MemoryLedgerFs,
    private readonly node: MemNode,
    private readonly name: string,
    private readonly writable: boolean,
  ) {}

  private check(syscall: string): void {
    if (this.fs.dead) throw fsError('EIO', syscall, this.name);
  }

  async read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    this.check('read');
    const n = Math.max(0, Math.min(length, this.node.size - position));
    if (n > 0) this.node.data.copy(buffer, offset, position, position + n);
    return n;
  }

  async writev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    this.check('writev');
    if (!this.writable) throw fsError('EBADF', 'writev', this.name);
    let total = 0;
    for (const b of buffers) total += b.byteLength;
    const node = this.node;
    node.ensure(position + total);
    if (position > node.size) node.data.fill(0, node.size, position);
    let pos = position;
    for (const b of buffers) {
      node.data.set(b, pos);
      pos += b.byteLength;
    }
    if (position < node.syncedSize) node.syncedSize = position;
    node.size = Math.max(node.size, pos);
  }

  async datasync(): Promise<void> {
    this.check('fdatasync');
    this.node.syncedSize = this.node.size;
  }

  async truncate(length: number): Promise<void> {
    this.check('ftruncate');
    const node = this.node;
    node.ensure(length);
    if (length > node.size) node.data.fill(0, node.size, length);
    node.size = length;
    // A truncation is a metadata change: modelled as durable with the next datasync, but never resurrecting
    // bytes beyond the new length.
    node.syncedSize = Math.min(node.syncedSize, length);
  }

  async size(): Promise<number> {
    this.check('fstat');
    return this.node.size;
  }

  async close(): Promise<void> {
    // Closing never fails and never syncs.
  }
}

export class MemoryLedgerFs implements LedgerFs {
  private files = new Map<string, MemNode>();
  private dirs = new Set<string>(['/']);
  private readonly locks = new Set<string>();
  /** Set by `crash()`: this instance stands for the machine that lost power. */
  dead = false;

  private alive(syscall: string, file: string): void {
    if (this.dead) throw fsError('EIO', syscall, file);
  }

  async open(file: string, mode: LedgerFsOpenMode): Promise<LedgerFile> {
    this.alive('open', file);
    let node = this.files.get(file);
    if (mode === 'wx+' && node) throw fsError('EEXIST', 'open', file);
    if ((mode === 'r' || mode === 'r+') && !node) throw fsError('ENOENT', 'open', file);
    if (!node || mode === 'w+') {
      if (!this.dirs.has(parent(file))) throw fsError('ENOENT', 'open', file);
      node = new MemNode();
      this.files.set(file, node);
    }
    return new MemFile(this, node, file, mode !== 'r');
  }

  async readdir(dir: string): Promise<string[]> {
    this.alive('scandir', dir);
    if (!this.dirs.has(dir)) throw fsError('ENOENT', 'scandir', dir);
    const prefix = dir.endsWith('/') ? dir : `${dir}/`;
    const out: string[] = [];
    for (const name of this.files.keys()) {
      if (name.startsWith(prefix) && !name.slice(prefix.length).includes('/')) out.push(name.slice(prefix.length));
    }
    return out.sort();
  }

  async stat(file: string): Promise<{ size: number }> {
    this.alive('stat', file);
    const node = this.files.get(file);
    if (!node) throw fsError('ENOENT', 'stat', file);
    return { size: node.size };
  }

  async unlink(file: string): Promise<void> {
    this.alive('unlink', file);
    if (!this.files.delete(file)) throw fsError('ENOENT', 'unlink', file);
  }

  async rename(from: string, to: string): Promise<void> {
    this.alive('rename', from);
    const node = this.files.get(from);
    if (!node) throw fsError('ENOENT', 'rename', from);
    this.files.delete(from);
    this.files.set(to, node);
  }

  async mkdir(dir: string): Promise<void> {
    this.alive('mkdir', dir);
    let d = dir;
    while (d !== '/' && d !== '.' && d !== '') {
      this.dirs.add(d);
      d = parent(d);
    }
  }

  async syncDir(dir: string): Promise<void> {
    this.alive('fsync', dir);
    if (!this.dirs.has(dir)) throw fsError('ENOENT', 'fsync', dir);
  }

  async lock(file: string): Promise<LedgerFsLock> {
    this.alive('lock', file);
    if (this.locks.has(file)) throw new LockHeldError(file);
    this.locks.add(file);
    return {
      release: async () => {
        this.locks.delete(file);
      },
    };
  }

  /** Total bytes held by files (current content). */
  usedBytes(): number {
    let n = 0;
    for (const node of this.files.values()) n += node.size;
    return n;
  }

  /**
   * Simulates a power loss and returns the file system as found after it. This instance dies. Each file
   * keeps its synced bytes plus, when `random` is given, a random part of its unsynced tail, possibly ending
   * in garbage (a torn write). Without `random`, unsynced bytes are lost.
   */
  crash(random?: () => number): MemoryLedgerFs {
    this.dead = true;
    const after = new MemoryLedgerFs();
    after.dirs = new Set(this.dirs);
    for (const [name, node] of this.files) {
      const unsynced = node.size - node.syncedSize;
      let keep = 0;
      if (random && unsynced > 0) keep = Math.floor(random() * (unsynced + 1));
      const copy = node.prefix(node.syncedSize + keep);
      if (random && keep > 0 && random() < 0.5) {
        // Tear: the last few kept bytes are garbage, as when a sector was half written.
        const garbage = Math.min(keep, 1 + Math.floor(random() * 64));
        for (let i = copy.size - garbage; i < copy.size; i++) copy.data[i] = Math.floor(random() * 256);
      }
      after.files.set(name, copy);
    }
    return after;
  }

  /**
   * Simulates the process being killed (SIGKILL) and returns the file system as the next process finds it.
   * This instance dies. Every write that completed survives, synced or not: it is in the kernel's page
   * cache, which a process crash does not touch.
   */
  kill(): MemoryLedgerFs {
    const after = this.snapshot();
    this.dead = true;
    return after;
  }

  /** A copy of what the file system holds now, every completed write included; this instance goes on. */
  snapshot(): MemoryLedgerFs {
    const copy = new MemoryLedgerFs();
    copy.dirs = new Set(this.dirs);
    for (const [name, node] of this.files) copy.files.set(name, node.prefix(node.size));
    return copy;
  }
}

function parent(file: string): string {
  const i = file.lastIndexOf('/');
  return i <= 0 ? '/' : file.slice(0, i);
}
