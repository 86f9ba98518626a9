/**
 * Crash recovery at every step. A workload runs over the in-memory file system; for each step that changes
 * the disk (creating a file, a write, an fsync, a truncate, a rename, an unlink, a directory sync) one run is
 * cut right after that step, by a process kill (every completed write survives) and by a power loss (only
 * synced bytes survive). The store must then open with every acknowledged entry, seal and delete, and
 * nothing that fails its check. Every file-system call also yields to the event loop, so group commits,
 * segment rolls, checkpoints and reclaims interleave as they do against a real disk; the workload is
 * deterministic, so run k stops at the same place every time.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LedgerFile, LedgerFs, LedgerFsLock, LedgerFsOpenMode } from '../../../src/ledger/fs.js';
import { LocalLedgerStore, type LocalLedgerStoreOptions } from '../../../src/ledger/local-store.js';
import {
  CHECKPOINT_FILE,
  RECORD_HEADER_BYTES,
  RecordType,
  SEGMENT_HEADER_BYTES,
  decodeCheckpoint,
  decodeRecordHeader,
  indexFileName,
  parseSegmentSeq,
  recordCrcMatches,
  segmentFileName,
} from '../../../src/ledger/format.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import type { LedgerFlushPolicy, LedgerWriter } from '../../../src/ledger/types.js';
import { entryBytes, expectIntact } from './helpers.js';

const DIR = '/data/ledgers';
/** Small segments, so a few entries roll one and every roll runs a checkpoint that writes an index file. */
const OPTIONS: LocalLedgerStoreOptions = { segmentBytes: 2048, maxEntryBytes: 1024 };
const sizeOf = (entryId: number): number => 200 + ((entryId * 37) % 300);

type Cut = 'kill' | 'power';

interface Step {
  readonly op: string;
  readonly file: string;
}

interface Hold {
  readonly match: (step: Step) => boolean;
  readonly reached: () => void;
  readonly gate: Promise<void>;
}

/**
 * A LedgerFs over MemoryLedgerFs that numbers the steps changing the disk, can hold one until released,
 * and cuts the run right after step `cutAfter`: `after` is then the file system the next process finds.
 */
class StepFs implements LedgerFs {
  readonly steps: string[] = [];
  after: MemoryLedgerFs | null = null;
  private holds: Hold[] = [];
  private cutWaiters: (() => void)[] = [];
  private doneWaiters: { match: (step: Step) => boolean; done: () => void }[] = [];

  constructor(
    private readonly mem: MemoryLedgerFs,
    private readonly cutAfter = Infinity,
    private readonly cut: Cut = 'kill',
    /** Event-loop turns a step on this file takes (latency relative to the other steps). */
    private readonly turns: (file: string) => number = () => 1,
  ) {}

  /** Holds the next step matching `match` before it runs, until `release()`. */
  hold(match: (step: Step) => boolean): { reached: Promise<void>; release: () => void } {
    let reached!: () => void;
    let release!: () => void;
    const reachedP = new Promise<void>((r) => (reached = r));
    const gate = new Promise<void>((r) => (release = r));
    this.holds.push({ match, reached, gate });
    return { reached: reachedP, release };
  }

  /** Resolves once a step matching `match` has run. */
  ran(match: (step: Step) => boolean): Promise<void> {
    return new Promise((done) => this.doneWaiters.push({ match, done }));
  }

  /** Resolves with the surviving file system once the run has been cut. */
  whenCut(): Promise<MemoryLedgerFs> {
    if (this.after) return Promise.resolve(this.after);
    return new Promise((resolve) => this.cutWaiters.push(() => resolve(this.after!)));
  }

  private async wait(file: string): Promise<void> {
    for (let t = this.turns(path.basename(file)); t > 0; t--) await new Promise((r) => setImmediate(r));
  }

  async pass<T>(file: string, run: () => Promise<T>): Promise<T> {
    await this.wait(file);
    return run();
  }

  async change<T>(op: string, file: string, run: () => Promise<T>): Promise<T> {
    await this.wait(file);
    const step = { op, file: path.basename(file) };
    const hold = this.holds.find((h) => h.match(step));
    if (hold) {
      this.holds = this.holds.filter((h) => h !== hold);
      hold.reached();
      await hold.gate;
    }
    const result = await run(); // fails with EIO once the run was cut: the process is gone
    this.steps.push(`${step.op} ${step.file}`);
    for (const w of this.doneWaiters.filter((d) => d.match(step))) {
      this.doneWaiters = this.doneWaiters.filter((d) => d !== w);
      w.done();
    }
    if (this.steps.length === this.cutAfter) {
      this.after = this.cut === 'kill' ? this.mem.kill() : this.mem.crash();
      for (const w of this.cutWaiters.splice(0)) w();
    }
    return result;
  }

  async open(file: string, mode: LedgerFsOpenMode): Promise<LedgerFile> {
    const inner = mode === 'w+' || mode === 'wx+' ? await this.change('create', file, () => this.mem.open(file, mode)) : await this.pass(file, () => this.mem.open(file, mode));
    return new StepFile(this, inner, file);
  }

  readdir(dir: string): Promise<string[]> {
    return this.pass(dir, () => this.mem.readdir(dir));
  }

  stat(file: string): Promise<{ size: number }> {
    return this.pass(file, () => this.mem.stat(file));
  }

  unlink(file: string): Promise<void> {
    return this.change('unlink', file, () => this.mem.unlink(file));
  }

  rename(from: string, to: string): Promise<void> {
    return this.change('rename', to, () => this.mem.rename(from, to));
  }

  mkdir(dir: string): Promise<void> {
    return this.mem.mkdir(dir);
  }

  syncDir(dir: string): Promise<void> {
    return this.change('syncDir', dir, () => this.mem.syncDir(dir));
  }

  lock(file: string): Promise<LedgerFsLock> {
    return this.mem.lock(file);
  }
}

class StepFile implements LedgerFile {
  constructor(
    private readonly fs: StepFs,
    private readonly inner: LedgerFile,
    private readonly name: string,
  ) {}

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> {
    return this.fs.pass(this.name, () => this.inner.read(buffer, offset, length, position));
  }

  writev(buffers: readonly Uint8Array[], position: number): Promise<void> {
    return this.fs.change('writev', this.name, () => this.inner.writev(buffers, position));
  }

  datasync(): Promise<void> {
    return this.fs.change('datasync', this.name, () => this.inner.datasync());
  }

  truncate(length: number): Promise<void> {
    return this.fs.change('truncate', this.name, () => this.inner.truncate(length));
  }

  size(): Promise<number> {
    return this.fs.pass(this.name, () => this.inner.size());
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** What the store acknowledged, and so must hold after any crash; and the deletes whose outcome a crash decides. */
interface Known {
  readonly created: Set<number>;
  readonly acked: Map<number, number>;
  readonly sealed: Map<number, number>;
  readonly deleted: Set<number>;
  readonly deleteIssued: Set<number>;
}

function noneKnown(): Known {
  return { created: new Set(), acked: new Map(), sealed: new Map(), deleted: new Set(), deleteIssued: new Set() };
}

function copyKnown(k: Known): Known {
  return { created: new Set(k.created), acked: new Map(k.acked), sealed: new Map(k.sealed), deleted: new Set(k.deleted), deleteIssued: new Set(k.deleteIssued) };
}

/** Marks a promise as handled (a cut run abandons some) while the caller can still await it. */
function handled<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}

/**
 * One incarnation of a partition owner, as crash-child.ts runs it: take over (fence) the ledgers left open,
 * delete the oldest sealed ones, create new ledgers, append concurrently (sealing one ledger midway), close.
 * Outcomes are recorded only once acknowledged. Stops quietly when the run is cut under it.
 */
async function incarnation(fs: StepFs, known: Known, appends: number, flush?: LedgerFlushPolicy): Promise<void> {
  let store: LocalLedgerStore;
  try {
    store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs, ...(flush ? { flush } : {}) });
  } catch (err) {
    if (!fs.after) throw err;
    return;
  }
  try {
    const ops: Promise<unknown>[] = [];
    for (const m of await store.list()) {
      if (m.state === 'open') ops.push(handled(store.fence(m.ledgerId).then((s) => known.sealed.set(m.ledgerId, s.lastAddConfirmed))));
    }
    await Promise.all(ops);
    const sealed = (await store.list()).filter((m) => m.state === 'sealed');
    // Deletes race the checkpoint that recovery queued, and the appends below.
    const deletes = sealed.slice(0, Math.max(0, sealed.length - 1)).map((m) => {
      known.deleteIssued.add(m.ledgerId);
      return handled(store.delete(m.ledgerId).then(() => known.deleted.add(m.ledgerId)));
    });
    const writers: LedgerWriter[] = await Promise.all([store.create(), store.create(), store.create()]);
    for (const w of writers) known.created.add(w.ledgerId);
    let issued = 0;
    let sealing: Promise<unknown> | null = null;
    await Promise.all([
      ...deletes,
      ...Array.from({ length: 4 }, async (_, a) => {
        while (issued < appends) {
          const n = issued++;
          if (n === appends >> 1 && !sealing) {
            const w = writers[0]!;
            sealing = handled(w.seal().then((s) => known.sealed.set(w.ledgerId, s.lastAddConfirmed)));
            await sealing;
            continue;
          }
          const w = writers[sealing ? 1 + ((n + a) % 2) : (n + a) % 3]!;
          const entryId = w.lastAddPushed + 1;
          const id = await w.append(entryBytes(w.ledgerId, entryId, sizeOf(entryId)));
          if (id !== entryId) throw new Error(`ledger ${w.ledgerId}: expected entry ${entryId}, got ${id}`);
          known.acked.set(w.ledgerId, Math.max(known.acked.get(w.ledgerId) ?? -1, id));
        }
      }),
    ]);
    await store.close();
  } catch (err) {
    // Only the cut may stop an incarnation: the file system then fails every call with EIO.
    if (!fs.after) throw err;
    await store.close().catch(() => undefined);
  }
}

/**
 * The checkpoint's promise to recovery, checked on the files themselves: every ledger the durable checkpoint
 * lists still has all its entries, dense from 0 (and at least its sealed count), in the segment files on disk.
 */
async function expectCheckpointCovered(mem: MemoryLedgerFs, label: string): Promise<void> {
  const checkpoint = decodeCheckpoint(await readAll(mem, CHECKPOINT_FILE));
  if (typeof checkpoint === 'string') throw new Error(`${label}: ${checkpoint}`);
  const found = new Map<number, Set<number>>();
  for (const name of await mem.readdir(DIR)) {
    if (parseSegmentSeq(name, '.seg') === null) continue;
    const buf = await readAll(mem, name);
    for (let pos = SEGMENT_HEADER_BYTES; pos + RECORD_HEADER_BYTES <= buf.length; ) {
      const h = decodeRecordHeader(buf, pos);
      if (!h || pos + RECORD_HEADER_BYTES + h.payloadLength > buf.length || !recordCrcMatches(buf, pos, h.payloadLength)) break;
      if (h.type === RecordType.ENTRY) found.set(h.ledgerId, (found.get(h.ledgerId) ?? new Set()).add(h.arg));
      pos += RECORD_HEADER_BYTES + h.payloadLength;
    }
  }
  for (const l of checkpoint.ledgers) {
    const ids = [...(found.get(l.ledgerId) ?? [])].sort((x, y) => x - y);
    const missing: string[] = [];
    for (let i = 0, next = 0; i < ids.length; next = ids[i++]! + 1) if (ids[i]! > next) missing.push(`${next}..${ids[i]! - 1}`);
    expect(missing, `${label}: entries missing on disk for ledger ${l.ledgerId}, which the checkpoint lists`).toEqual([]);
    if (l.sealedAtMs > 0) expect(ids.length, `${label}: sealed ledger ${l.ledgerId} on disk`).toBeGreaterThanOrEqual(l.entryCount);
  }
}

/** Opens the store found after a crash and checks everything in `known` is there, and every entry present is dense and intact. */
async function verify(mem: MemoryLedgerFs, known: Known, label: string): Promise<void> {
  await expectCheckpointCovered(mem, label);
  let store: LocalLedgerStore;
  try {
    store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: mem });
  } catch (err) {
    throw new Error(`${label}: the store does not open: ${(err as Error).message}`, { cause: err });
  }
  try {
    const present = new Map((await store.list()).map((m) => [m.ledgerId, m]));
    // A delete issued but not acknowledged may have landed or not; anything else acknowledged must be there.
    const gone = (id: number): boolean => known.deleted.has(id) || (known.deleteIssued.has(id) && !present.has(id));
    for (const id of known.deleted) expect(present.has(id), `${label}: deleted ledger ${id} is back`).toBe(false);
    for (const id of known.created) if (!gone(id)) expect(present.has(id), `${label}: created ledger ${id} is missing`).toBe(true);
    for (const [id, last] of known.sealed) {
      if (!gone(id)) expect(present.get(id), `${label}: seal of ledger ${id}`).toMatchObject({ state: 'sealed', lastAddConfirmed: last });
    }
    for (const [id, last] of known.acked) {
      if (!gone(id)) expect(present.get(id)!.lastAddConfirmed, `${label}: ledger ${id} lost acknowledged entries`).toBeGreaterThanOrEqual(last);
    }
    for (const id of present.keys()) await expectIntact(store, id, sizeOf);
  } finally {
    await store.close();
  }
}

/** Two clean incarnations: sealed ledgers spanning rolled segments, one ledger left open. */
async function baseState(): Promise<{ mem: MemoryLedgerFs; known: Known }> {
  const mem = new MemoryLedgerFs();
  const known = noneKnown();
  await incarnation(new StepFs(mem), known, 18);
  await incarnation(new StepFs(mem), known, 18);
  return { mem, known };
}

/**
 * Ledger A fills segment 1 and part of segment 2 and is sealed; B shares segment 2 and goes on into segment
 * 3 (the active one). Closed cleanly: segments 1 and 2 have index files.
 */
async function twoLedgers(): Promise<{ mem: MemoryLedgerFs; a: number; b: number }> {
  const mem = new MemoryLedgerFs();
  const store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: mem });
  const a = await store.create();
  for (let i = 0; i < 4; i++) await a.append(entryBytes(a.ledgerId, i, sizeOf(i)));
  const b = await store.create();
  for (let i = 4; i < 6; i++) await a.append(entryBytes(a.ledgerId, i, sizeOf(i)));
  await a.seal();
  for (let i = 0; i < 8; i++) await b.append(entryBytes(b.ledgerId, i, sizeOf(i)));
  await store.close();
  expect(await mem.readdir(DIR)).toEqual(expect.arrayContaining([segmentFileName(1), indexFileName(1), indexFileName(2), segmentFileName(3)]));
  return { mem, a: a.ledgerId, b: b.ledgerId };
}

async function readAll(mem: MemoryLedgerFs, name: string): Promise<Buffer> {
  const f = await mem.open(path.join(DIR, name), 'r');
  const buf = Buffer.alloc(await f.size());
  await f.read(buf, 0, buf.length, 0);
  return buf;
}

async function writeAll(mem: MemoryLedgerFs, name: string, data: Buffer): Promise<void> {
  const f = await mem.open(path.join(DIR, name), 'w+');
  await f.writev([data], 0);
  await f.datasync();
}

describe('ledger store crash at every step', () => {
  // Latency profiles: every step one event-loop turn; or checkpoint and index files slow (small-file fsync,
  // rename and directory fsync on a loaded machine), so group commits, seals and deletes land while a
  // checkpoint is being written.
  // Each also under a non-durable flush policy, where a checkpoint must fsync what it describes first.
  const uniform = (): number => 1;
  const slowCheckpoints = (file: string): number => (file.endsWith('.seg') ? 1 : 6);
  const profiles: { name: string; turns: (file: string) => number; flush?: LedgerFlushPolicy }[] = [
    { name: 'uniform', turns: uniform },
    { name: 'slow checkpoints', turns: slowCheckpoints },
    { name: 'uniform, flush.messages 4', turns: uniform, flush: { messages: 4 } },
    { name: 'slow checkpoints, flush.messages 4', turns: slowCheckpoints, flush: { messages: 4 } },
  ];

  it.each(profiles)(
    'opens with every acknowledged entry, seal and delete after a kill or power loss right after any step ($name)',
    { timeout: 60_000 },
    async ({ turns, flush }) => {
      const base = await baseState();
      const measure = new StepFs(base.mem.snapshot(), Infinity, 'kill', turns);
      await incarnation(measure, copyKnown(base.known), 18, flush);
      const total = measure.steps.length;
      expect(measure.steps.filter((s) => s.startsWith('unlink') && s.endsWith('.seg')).length, 'the run reclaims segments').toBeGreaterThan(0);
      expect(measure.steps.filter((s) => s.startsWith('rename') && s.endsWith('.idx')).length, 'the run writes segment indexes').toBeGreaterThan(0);
      for (const cut of ['kill', 'power'] as const) {
        for (let k = 1; k <= total; k++) {
          const known = copyKnown(base.known);
          const before = copyKnown(known);
          const fs = new StepFs(base.mem.snapshot(), k, cut, turns);
          await incarnation(fs, known, 18, flush);
          // A process crash loses nothing acknowledged under any policy. A power loss under a non-durable policy
          // may take back what this incarnation acknowledged, but nothing that was durable before it.
          const expected = cut === 'kill' || !flush ? known : { ...before, deleteIssued: known.deleteIssued };
          await verify(fs.after!, expected, `${cut} after step ${k}/${total} (${fs.steps[k - 1]})`);
        }
      }
    },
  );

  it('never reclaims a segment the durable checkpoint still needs when a delete lands during the checkpoint', async () => {
    // Reopen; hold the checkpoint recovery queues just before it replaces ledgers.ckpt (its table still
    // lists A), and delete A meanwhile: the DELETE record is durable before that checkpoint completes.
    const race = async (run: StepFs, a: number): Promise<{ stepsBefore: number; deleted: boolean }> => {
      const held = run.hold((s) => s.op === 'rename' && s.file === CHECKPOINT_FILE);
      const store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: run });
      await held.reached;
      const stepsBefore = run.steps.length;
      // The delete fails when the run is cut before its fsync: then either outcome is right.
      const deleted = await store.delete(a).then(
        () => true,
        () => false,
      );
      held.release();
      // The held checkpoint, its reclaim and the checkpoint the delete queued finish, or the run is cut.
      await Promise.race([run.whenCut(), store.close().catch(() => undefined)]);
      return { stepsBefore, deleted };
    };

    const { mem, a, b } = await twoLedgers();
    const measure = new StepFs(mem.snapshot());
    const { stepsBefore } = await race(measure, a);
    const reclaimAt = measure.steps.indexOf(`unlink ${segmentFileName(1)}`);
    expect(reclaimAt, 'segment 1 (only A) is reclaimed after the delete').toBeGreaterThanOrEqual(stepsBefore);
    // Kill the process right after each step from the delete on, including between unlinking a segment and
    // writing the checkpoint that no longer lists its ledgers.
    for (let k = stepsBefore + 1; k <= measure.steps.length; k++) {
      const run = new StepFs(mem.snapshot(), k, 'kill');
      const { deleted } = await race(run, a);
      const known: Known = { ...noneKnown(), created: new Set([a, b]), acked: new Map([[b, 7]]), sealed: new Map([[a, 5]]), deleteIssued: new Set([a]) };
      if (deleted) known.deleted.add(a);
      await verify(run.after!, known, `kill after step ${k} (${run.steps[k - 1]})`);
    }
  });

  it('rebuilds lost index files under a non-durable policy so that a power loss at any step leaves a store that opens', async () => {
    // Index files can be dropped and rebuilt by scanning: the checkpoint after recovery writes them again.
    // A delete that lands meanwhile is written but not fsynced (flush.messages 1000): whatever the power
    // loss keeps, the rebuilt indexes and the checkpoint must agree with the log.
    const flush = { messages: 1000 };
    const { mem, a, b } = await twoLedgers();
    await mem.unlink(path.join(DIR, indexFileName(1)));
    await mem.unlink(path.join(DIR, indexFileName(2)));
    const race = async (run: StepFs, a: number): Promise<number> => {
      const held = run.hold((s) => s.op === 'rename' && s.file === indexFileName(1));
      const store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: run, flush });
      await held.reached;
      const stepsBefore = run.steps.length;
      await store.delete(a).catch(() => undefined);
      held.release();
      // Not close(): it would fsync the delete. The checkpoint runs to its end, or the run is cut.
      const checkpointed = run.ran((s) => s.op === 'rename' && s.file === CHECKPOINT_FILE);
      if ((await Promise.race([run.whenCut().then(() => 'cut'), checkpointed])) !== 'cut') await store.close().catch(() => undefined);
      return stepsBefore;
    };
    const measure = new StepFs(mem.snapshot());
    const stepsBefore = await race(measure, a);
    expect(measure.steps.slice(stepsBefore)).toEqual(expect.arrayContaining([`rename ${indexFileName(1)}`, `rename ${indexFileName(2)}`, `rename ${CHECKPOINT_FILE}`]));
    for (let k = stepsBefore + 1; k <= measure.steps.length; k++) {
      const run = new StepFs(mem.snapshot(), k, 'power');
      await race(run, a);
      // B was durable before; A's delete may or may not survive the power loss.
      const known: Known = { ...noneKnown(), created: new Set([a, b]), acked: new Map([[b, 7]]), sealed: new Map([[a, 5]]), deleteIssued: new Set([a]) };
      await verify(run.after!, known, `power loss after step ${k} (${run.steps[k - 1]})`);
    }
  });
});

describe('ledger store recovery of a checkpoint that outlived a segment', () => {
  it('opens when the checkpoint lists a ledger whose first segment is gone but a later DELETE record removed it', async () => {
    // The state a kill could leave before segment reclaim waited for a checkpoint without the ledger: the
    // checkpoint lists A, segment 1 (A's first entries) is deleted, and A's DELETE record is durable in the
    // active segment. Recovery meets A's later entries (segment 2's index) before that DELETE record.
    const { mem, a, b } = await twoLedgers();
    const checkpointListingA = await readAll(mem, CHECKPOINT_FILE);
    const index1 = await readAll(mem, indexFileName(1));
    let store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: mem });
    await store.delete(a);
    await store.close();
    expect(await mem.readdir(DIR)).not.toContain(segmentFileName(1));
    await writeAll(mem, CHECKPOINT_FILE, checkpointListingA);
    // …and the kill came between unlinking segment 1 and its index.
    await writeAll(mem, indexFileName(1), index1);

    store = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: mem });
    try {
      expect((await store.list()).map((m) => m.ledgerId)).toEqual([b]);
      expect(await expectIntact(store, b, sizeOf)).toBe(8);
      expect(await mem.readdir(DIR), 'the index of a missing segment is removed').not.toContain(indexFileName(1));
    } finally {
      await store.close();
    }
  });

  it('still refuses to open when a ledger that survives recovery misses entries', async () => {
    const { mem, a } = await twoLedgers();
    await mem.unlink(path.join(DIR, segmentFileName(1)));
    const err = await LocalLedgerStore.open(DIR, { ...OPTIONS, fs: mem }).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe('LL_ERR_LEDGER_CORRUPT');
    expect(err?.message).toMatch(new RegExp(`^ledger ${a}: found entry [1-9]\\d* where entry 0 was expected$`));
  });
});
