/**
 * Positioned reads of the local store's segment files in worker threads, many per message.
 *
 * A catch-up read of 16 partitions written together finds each partition's entries scattered through the
 * segment files (every ledger's records interleave, as in a BookKeeper entry log), so it is one pread per entry:
 * about 16 KiB each. Through `fs.read` each of them is a trip to libuv's thread pool and back to the event loop,
 * and that trip, not the copy, is most of the cost: 7 µs of the event loop's time per 16 KiB read here, a third
 * of a broker's busy time while it serves a catch-up read. A worker does the same preads with `readSync`, a
 * batch per message, and hands back the filled buffers by transfer (no copy):
 *
 * ```
 *   event loop ── { id, fds[], positions[], lengths[] } ──►  worker: for each run, a buffer of its own,
 *              ◄── { id, buffers[] } (transferred) ───────            readSync until full (EOF: an error)
 * ```
 *
 * Measured on 512 MiB of 16 KiB reads from the page cache (2 cores): the event loop's busy time fell from
 * 246-406 ms to 48-54 ms and the process's CPU time from 480-730 ms to 420-440 ms. A read that misses the page
 * cache blocks its worker, never the event loop.
 *
 * Asked to (`checkRecords`), the worker also checks each run as a sequence of the store's records (format.ts)
 * against their CRC-32C, the other large cost of a read, and says per run where the first record that fails is
 * (-1: none); the caller still checks each record's framing, and checks the CRCs itself when a run fails.
 *
 * Each run's buffer is exactly its length (`allocUnsafeSlow`): a transferred ArrayBuffer must be the run's own,
 * and a pooled slab could not be transferred. The caller keeps every fd open until the read settles.
 *
 * **Direct reads.** A store that appends with O_DIRECT leaves nothing of its segments in the page cache, so every
 * read of them went to the disk through fresh page-cache pages, and the kernel's copy out of those pages was the
 * read's largest cost: 1.5-1.9 s of system time per GiB in the workers (a virtual machine pays for the first
 * touch of each page), where the same copy from warm pages takes 0.25. Given the file's O_DIRECT descriptor
 * (`direct`), a worker instead reads the file in aligned windows (1 MiB, the size at which direct reads reach the
 * disk's sequential rate) straight from the device into page-aligned memory of its own, and copies each run out
 * of them; as BookKeeper's DbLedgerStorage read-ahead cache does, it keeps the windows it read, so the other
 * partitions interleaved in them are read from memory:
 *
 * ```
 *   segment  |  window 0 (1 MiB)  |  window 1  |  window 2  | ...     runs: [a a][b][a a a][c] ... (interleaved)
 *                 │ pread, O_DIRECT, 1 MiB at 1 MiB-aligned offsets
 *   worker   [ slot 0 | slot 1 | ... | slot 31 ]   one WebAssembly.Memory (page-aligned), LRU by (file, window)
 *                 │ copy of each run's bytes, then its CRCs
 *   reply    { buffers[] } (transferred)
 * ```
 *
 * The reads of one file all go to one worker, which owns the cache of its windows. A window is kept only when
 * it lies wholly below the caller's `cacheBelow` (a segment's committed bytes, which never change); a window of
 * the active segment's tail is read for the request alone. Up to CONCURRENT requests of a worker read at once
 * (the others wait, and are taken in window order), each pinning at most GROUP windows while it copies from
 * them, their disk reads in flight together on libuv's pool; a window another request is already reading is
 * waited for, not read twice. A file system that refuses direct reads (EINVAL) has the file read through the
 * page cache from then on.
 *
 * Measured by hand on a 2 GiB backlog of 16 interleaved partitions (`npm run bench -- run catch-up-read`): the
 * workers' CPU time fell from 322-391 to 110-136 ticks, and the broker's whole from 2.5 to 1.2-1.3 s per GiB read.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { RECORD_HEADER_BYTES } from './format.js';

export interface Run {
  readonly fd: number;
  readonly position: number;
  readonly length: number;
}

/** A read that failed in a worker: the errno code (`EBADF`, `EIO`, ...) or `EOF` for a file shorter than the run. */
export class PooledReadError extends Error {
  constructor(
    message: string,
    readonly code: string,
    /** The index of the run that failed. */
    readonly run: number,
    /** For EOF, the file offset where the file ended. */
    readonly position: number,
  ) {
    super(message);
    this.name = 'PooledReadError';
  }
}

export interface RunsRead {
  /** Each run's bytes, in a buffer of its own. */
  readonly buffers: Buffer[];
  /**
   * With `checkRecords`: per run, the offset of the first record whose CRC-32C does not match or whose length
   * runs past the run, -1 when every record holds. Null when the runs were not checked.
   */
  readonly firstBadRecord: number[] | null;
}

/**
 * Where the runs of one read may come from without the page cache: `fd`, the same file opened with O_DIRECT,
 * read in aligned windows that the worker caches under `key` (unique to that open file in the process) while
 * they lie wholly below `cacheBelow`, the bytes of the file that no longer change.
 */
export interface DirectSource {
  readonly fd: number;
  readonly key: number;
  readonly cacheBelow: number;
}

export interface ReadOptions {
  /** Check each run as a sequence of the store's records against their CRC-32C (`firstBadRecord`). */
  readonly checkRecords?: boolean;
  /** Read the runs (all of one file) through its direct descriptor and the window cache. */
  readonly direct?: DirectSource;
}

export interface ReadPoolOptions {
  /** Size of a direct read and of a cached window: a multiple of 4096 (O_DIRECT's alignment). */
  readonly windowBytes?: number;
  /** Windows each worker keeps. */
  readonly cacheWindows?: number;
}

/** Direct reads: windows read from the disk, and windows found in a worker's cache. */
export interface ReadPoolStats {
  windowReads: number;
  windowHits: number;
}

interface Request {
  readonly id: number;
  readonly fds: number[];
  readonly positions: number[];
  readonly lengths: number[];
  readonly checkRecords: boolean;
  readonly direct: DirectSource | null;
}

type Reply =
  | { readonly id: number; readonly buffers: ArrayBuffer[]; readonly firstBad: number[] | null; readonly windowReads: number; readonly windowHits: number }
  | { readonly id: number; readonly failed: number; readonly code: string; readonly message: string; readonly position: number };

/**
 * The worker's whole program (CommonJS, evaluated): reads each run into a buffer of its own, and checks its
 * records when asked and the CRC-32C binding loaded. A record (format.ts) is a header of RECORD_HEADER_BYTES,
 * its CRC at 0 and its payload length at 4, then the payload; the CRC covers header bytes 4.. and the payload.
 */
const WORKER_SOURCE = `
const { read, readSync } = require('node:fs');
const { parentPort, workerData } = require('node:worker_threads');
const HEADER = ${RECORD_HEADER_BYTES};
const WINDOW = workerData.windowBytes;
const SLOTS = workerData.cacheWindows;
let crc32c = null;
try {
  const m = require(workerData.crcModule);
  if (m.crc32c(Buffer.from('123456789')) === 0xe3069283) crc32c = m.crc32c;
} catch {}
function firstBadRecord(buf) {
  let p = 0;
  while (p < buf.length) {
    if (p + HEADER > buf.length) return p;
    const end = p + HEADER + buf.readUInt32LE(p + 4);
    if (end > buf.length) return p;
    let crc = crc32c(buf.subarray(p + 4, p + HEADER));
    if (end > p + HEADER) crc = crc32c(buf.subarray(p + HEADER, end), crc);
    if (crc !== buf.readUInt32LE(p)) return p;
    p = end;
  }
  return -1;
}
// The window cache: SLOTS page-aligned windows of one WebAssembly.Memory, made on the first direct read. byKey
// (file key * 2^21 + window index -> slot) iterates oldest first: a hit moves its key to the end. Up to
// CONCURRENT requests read at once, each holding at most GROUP windows pinned, so an unpinned slot is always to be
// had. A window being read from the disk is in loading until it is in, for whoever else wants it meanwhile; one
// that may still change (it ends past cacheBelow) is read for its request alone and never cached.
const CONCURRENT = Math.min(4, SLOTS);
const GROUP = Math.max(1, Math.floor(SLOTS / CONCURRENT));
let slots = null;
const free = [];
const byKey = new Map();
const loading = new Map();
const filled = [];
const pins = [];
const cachedAs = [];
const refused = new Set();
function takeSlot() {
  if (!slots) {
    const memory = new WebAssembly.Memory({ initial: Math.ceil((WINDOW * SLOTS) / 65536) });
    slots = [];
    for (let i = 0; i < SLOTS; i++) { slots.push(Buffer.from(memory.buffer, i * WINDOW, WINDOW)); free.push(i); filled.push(0); pins.push(0); cachedAs.push(-1); }
  }
  if (free.length > 0) return free.pop();
  for (const [key, slot] of byKey) {
    if (pins[slot] > 0) continue;
    byKey.delete(key);
    cachedAs[slot] = -1;
    return slot;
  }
  throw new Error('every window slot is pinned');
}
function unpin(slot) {
  if (--pins[slot] === 0 && cachedAs[slot] === -1) free.push(slot);
}
// Window w of d, pinned: { slot, ready } (ready: a promise, or null when it is there already).
function pinWindow(d, w, counts) {
  const key = d.key * 2097152 + w;
  const cached = byKey.get(key);
  if (cached !== undefined) {
    byKey.delete(key);
    byKey.set(key, cached);
    pins[cached]++;
    counts.hits++;
    return { slot: cached, ready: null };
  }
  const inFlight = loading.get(key);
  if (inFlight) {
    pins[inFlight.slot]++;
    counts.hits++;
    return inFlight;
  }
  const slot = takeSlot();
  pins[slot]++;
  counts.reads++;
  const cacheable = (w + 1) * WINDOW <= d.cacheBelow;
  const ready = new Promise((resolve, reject) => read(d.fd, slots[slot], 0, WINDOW, w * WINDOW, (err, n) => (err ? reject(err) : resolve(n)))).then(
    (n) => {
      filled[slot] = n;
      if (!cacheable) return;
      loading.delete(key);
      if (n === WINDOW) {
        byKey.set(key, slot);
        cachedAs[slot] = key;
      }
    },
    (err) => {
      if (cacheable) loading.delete(key);
      throw err;
    },
  );
  const entry = { slot, ready };
  if (cacheable) loading.set(key, entry);
  return entry;
}
// Fills bufs[i] with run i through the windows of d, GROUP windows at a time, the disk reads of a group in flight
// together. Resolves with null, or { run, position } for the first run the file ends inside.
async function readDirect(d, m, bufs, counts) {
  const windows = [];
  const seen = new Set();
  for (let i = 0; i < bufs.length; i++) {
    const last = Math.floor((m.positions[i] + Math.max(1, m.lengths[i]) - 1) / WINDOW);
    for (let w = Math.floor(m.positions[i] / WINDOW); w <= last; w++) if (!seen.has(w)) { seen.add(w); windows.push(w); }
  }
  let eof = null;
  for (let g = 0; g < windows.length; g += GROUP) {
    const group = new Map();
    try {
      for (const w of windows.slice(g, g + GROUP)) group.set(w, pinWindow(d, w, counts));
      await Promise.all([...group.values()].map((e) => e.ready));
      for (let i = 0; i < bufs.length; i++) {
        const start = m.positions[i];
        const end = start + m.lengths[i];
        for (let w = Math.floor(start / WINDOW); w * WINDOW < end; w++) {
          const entry = group.get(w);
          if (entry === undefined) continue;
          const from = Math.max(start, w * WINDOW);
          const to = Math.min(end, w * WINDOW + filled[entry.slot]);
          if (to > from) slots[entry.slot].copy(bufs[i], from - start, from - w * WINDOW, to - w * WINDOW);
          if (to < Math.min(end, (w + 1) * WINDOW) && (!eof || i < eof.run)) eof = { run: i, position: Math.max(from, w * WINDOW + filled[entry.slot]) };
        }
      }
    } finally {
      await Promise.allSettled([...group.values()].map((e) => e.ready));
      for (const { slot } of group.values()) unpin(slot);
    }
  }
  return eof;
}
let reading = 0;
const waiting = [];
// Where the last request to start reads first: the sweep's position (file key * 2^21 + window index).
let head = 0;
// A request that finds CONCURRENT reading waits; one that finishes hands its place to a waiting one, taken in
// window order as a disk elevator (C-SCAN) takes requests: the nearest at or past the last one started, else the
// lowest. A request waits at most one sweep. In arrival order, a fetch of partitions larger than the cache's
// reach (16 interleaved partitions of 4 MiB span 64 windows) read one partition's windows after another, and
// each next partition found the windows it shared with the one before evicted: 4.4 window reads per MiB asked,
// 2.5 in window order (1.05 for partitions of 1 MiB either way).
function nextWaiting() {
  let best = -1;
  let wrap = -1;
  for (let i = 0; i < waiting.length; i++) {
    const at = waiting[i].at;
    if (at >= head && (best < 0 || at < waiting[best].at)) best = i;
    if (wrap < 0 || at < waiting[wrap].at) wrap = i;
  }
  const chosen = best >= 0 ? best : wrap;
  return chosen < 0 ? null : waiting.splice(chosen, 1)[0];
}
async function readDirectWhenFree(d, m, bufs, counts) {
  let first = Infinity;
  for (const p of m.positions) if (p < first) first = p;
  const at = d.key * 2097152 + Math.floor(first / WINDOW);
  if (reading < CONCURRENT) reading++;
  else await new Promise((resolve) => waiting.push({ at, resolve }));
  head = at;
  try {
    return await readDirect(d, m, bufs, counts);
  } finally {
    const next = nextWaiting();
    if (next) next.resolve();
    else reading--;
  }
}
function fail(m, i, code, message, position) {
  parentPort.postMessage({ id: m.id, failed: i, code, message, position });
}
async function serve(m) {
  const bufs = m.lengths.map((length) => Buffer.allocUnsafeSlow(length));
  const counts = { reads: 0, hits: 0 };
  const direct = m.direct && typeof WebAssembly === 'object' && !refused.has(m.direct.key) ? m.direct : null;
  let pread = !direct;
  if (direct) {
    try {
      const eof = await readDirectWhenFree(direct, m, bufs, counts);
      if (eof) return fail(m, eof.run, 'EOF', 'the file ends inside the run', eof.position);
    } catch (err) {
      // EINVAL: this file system takes no direct reads after all; this file is read through the page cache.
      if (err.code !== 'EINVAL') return fail(m, 0, String(err.code || 'EIO'), String(err.message), m.positions[0]);
      refused.add(direct.key);
      pread = true;
    }
  }
  for (let i = 0; pread && i < bufs.length; i++) {
    const length = m.lengths[i];
    let done = 0;
    try {
      while (done < length) {
        const n = readSync(m.fds[i], bufs[i], done, length - done, m.positions[i] + done);
        if (n === 0) return fail(m, i, 'EOF', 'the file ends inside the run', m.positions[i] + done);
        done += n;
      }
    } catch (err) {
      return fail(m, i, String(err.code || 'EIO'), String(err.message), m.positions[i] + done);
    }
  }
  const firstBad = m.checkRecords && crc32c ? bufs.map(firstBadRecord) : null;
  const buffers = bufs.map((b) => b.buffer);
  parentPort.postMessage({ id: m.id, buffers, firstBad, windowReads: counts.reads, windowHits: counts.hits }, buffers);
}
parentPort.on('message', (m) => {
  serve(m).catch((err) => fail(m, 0, 'EIO', String(err && err.message), m.positions[0] ?? 0));
});
`;

/** The CRC-32C binding format.ts uses, by path: an evaluated worker resolves modules from the working directory. */
function crcModulePath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('@node-rs/crc32');
  } catch {
    return null;
  }
}

interface Pending {
  resolve(read: RunsRead): void;
  reject(err: Error): void;
}

/** 1 MiB: a direct read this large runs at the disk's sequential rate (1.9 GB/s here, against 0.9 for 64 KiB). */
const WINDOW_BYTES = 1024 * 1024;
/** Windows per worker: 32 MiB, twice what one fetch of 16 interleaved partitions, 1 MiB each, spans. */
const CACHE_WINDOWS = 32;

class ReadWorker {
  readonly pending = new Map<number, Pending>();
  private readonly worker: Worker;
  dead = false;

  constructor(
    windows: { readonly windowBytes: number; readonly cacheWindows: number },
    private readonly stats: ReadPoolStats,
    onDeath: (w: ReadWorker) => void,
  ) {
    // execArgv []: none of the process's flags (an inherited --input-type=module would make the source an ES module).
    this.worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], name: 'ledgerline-segment-reads', workerData: { crcModule: crcModulePath(), ...windows } });
    this.worker.on('message', (reply: Reply) => this.settle(reply));
    const die = (err: Error): void => {
      if (this.dead) return;
      this.dead = true;
      onDeath(this);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    this.worker.on('error', (err) => die(err));
    this.worker.on('exit', (code) => die(new Error(`the segment read worker exited (code ${code})`)));
    // Referenced only while reads are pending: an idle worker must not keep a process alive, a busy one must.
    // After the listeners: adding a 'message' listener refs the worker again, and one started ahead of any read
    // (`start`) held its process open until the first read had come and gone.
    this.worker.unref();
  }

  send(request: Request, pending: Pending): void {
    if (this.pending.size === 0) this.worker.ref();
    this.pending.set(request.id, pending);
    this.worker.postMessage(request);
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private settle(reply: Reply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('buffers' in reply) {
      this.stats.windowReads += reply.windowReads;
      this.stats.windowHits += reply.windowHits;
      p.resolve({ buffers: reply.buffers.map((b) => Buffer.from(b)), firstBadRecord: reply.firstBad });
    }
    else p.reject(new PooledReadError(`${reply.code}: ${reply.message}`, reply.code, reply.failed, reply.position));
  }
}

export class ReadPool {
  readonly stats: ReadPoolStats = { windowReads: 0, windowHits: 0 };
  /** Worker i, once made (undefined before, and after it died). */
  private workers: (ReadWorker | undefined)[];
  private readonly windows: { readonly windowBytes: number; readonly cacheWindows: number };
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly threads = 2,
    options: ReadPoolOptions = {},
  ) {
    this.workers = new Array<ReadWorker | undefined>(threads).fill(undefined);
    const windowBytes = options.windowBytes ?? WINDOW_BYTES;
    if (!Number.isInteger(windowBytes) || windowBytes <= 0 || windowBytes % 4096 !== 0) throw new RangeError('windowBytes must be a positive multiple of 4096');
    this.windows = { windowBytes, cacheWindows: Math.max(1, options.cacheWindows ?? CACHE_WINDOWS) };
  }

  /**
   * Reads every run into a buffer of its own, in order, checking them as runs of records when asked; rejects
   * with PooledReadError when one fails. A direct read goes to the worker that caches its file's windows.
   */
  read(runs: readonly Run[], options: ReadOptions = {}): Promise<RunsRead> {
    if (this.closed) return Promise.reject(new Error('the segment read pool is closed'));
    const direct = options.direct ?? null;
    const request: Request = {
      id: this.nextId++,
      fds: runs.map((r) => r.fd),
      positions: runs.map((r) => r.position),
      lengths: runs.map((r) => r.length),
      checkRecords: options.checkRecords ?? false,
      direct,
    };
    const worker = direct ? this.worker(direct.key % this.threads) : this.leastBusy();
    return new Promise((resolve, reject) => worker.send(request, { resolve, reject }));
  }

  /** Workers running now (they start on first use, or all at once with `start`). */
  get running(): number {
    return this.workers.filter((w) => w !== undefined).length;
  }

  /**
   * Starts every worker now rather than at the first read that needs one. A worker takes 40-90 ms to start on
   * 2 cores (its isolate and the CRC binding), and the first Fetch that missed the tail cache after a broker
   * started paid for both: in the mirror benchmark, the source's first read of 15 MiB took 136-138 ms with
   * the workers started by it and 68-82 ms with them started before (the next reads 30-45 ms), and the first
   * record reached the destination 332-346 ms after the mirror was created against 251-263 ms.
   */
  start(): void {
    if (this.closed) return;
    for (let i = 0; i < this.threads; i++) this.worker(i);
  }

  async close(): Promise<void> {
    this.closed = true;
    const workers = this.workers;
    this.workers = [];
    await Promise.all(workers.map((w) => w?.terminate()));
  }

  /** An idle worker, else a new one while there are fewer than `threads`, else the one with the fewest reads. */
  private leastBusy(): ReadWorker {
    let best: ReadWorker | undefined;
    let empty = -1;
    this.workers.forEach((w, i) => {
      if (!w) empty = empty < 0 ? i : empty;
      else if (!best || w.pending.size < best.pending.size) best = w;
    });
    if (best && (best.pending.size === 0 || empty < 0)) return best;
    return this.worker(empty);
  }

  /** Worker i, made if it is not there. */
  private worker(i: number): ReadWorker {
    const existing = this.workers[i];
    if (existing) return existing;
    const w = new ReadWorker(this.windows, this.stats, (dead) => {
      if (this.workers[i] === dead) this.workers[i] = undefined;
    });
    this.workers[i] = w;
    return w;
  }
}
