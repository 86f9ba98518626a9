/**
 * Storage faults: a failed fsync, a torn write, a full disk, damaged bytes and power loss. The store must
 * surface the error to the appenders it concerns, never make a failed or damaged entry visible, keep entry
 * ids dense, and work again once the fault clears.
 */
import { closeSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FaultInjectingLedgerFs } from '../../../src/ledger/fault-fs.js';
import type { LedgerError, LedgerStorageError } from '../../../src/ledger/errors.js';
import type { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import { diskHarness, entryBytes, errorCode, expectIntact, memoryHarness, type StoreHarness } from './helpers.js';

/** Polls a condition until it holds, failing after a deadline. */
async function waitFor(condition: () => boolean, deadlineMs = 5000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met before the deadline');
    await new Promise((r) => setImmediate(r));
  }
}

/** Settles every promise, returning the ids that resolved and the errors that rejected. */
async function settle(appends: Promise<number>[]): Promise<{ ids: number[]; errors: LedgerStorageError[] }> {
  const results = await Promise.allSettled(appends);
  return {
    ids: results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value),
    errors: results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as LedgerStorageError),
  };
}

describe('ledger store faults', () => {
  let memfs: MemoryLedgerFs;
  let faults: FaultInjectingLedgerFs;
  let h: StoreHarness;
  let store: LocalLedgerStore | null = null;

  function setup(): StoreHarness {
    memfs = new MemoryLedgerFs();
    h = memoryHarness(memfs, (fs) => (faults = new FaultInjectingLedgerFs(fs)));
    return h;
  }

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    store = null;
  });

  it('fails the appends a failed fsync covered, shows none of them, and reuses their ids once the fault clears', async () => {
    store = await setup().open();
    const w = await store.create();
    for (let i = 0; i < 5; i++) await w.append(entryBytes(w.ledgerId, i));
    faults.failSyncs(1);
    const failed = await settle(Array.from({ length: 5 }, () => w.append(Buffer.from('never visible'))));
    expect(failed.ids).toEqual([]);
    expect(failed.errors).toHaveLength(5);
    for (const e of failed.errors) {
      expect(e.code).toBe('LL_ERR_LEDGER_STORAGE');
      expect(e.errno).toBe('EIO');
    }
    expect(w.lastAddConfirmed).toBe(4);
    expect(await store.read(w.ledgerId, 0, 100)).toHaveLength(5);
    // The failed bytes did reach the file; the store moved on to a new segment that excludes them.
    expect(await w.append(entryBytes(w.ledgerId, 5))).toBe(5);
    expect(await w.append(entryBytes(w.ledgerId, 6))).toBe(6);
    expect(store.stats.segments).toBe(2);
    expect(await expectIntact(store, w.ledgerId)).toBe(7);
    await store.close();
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId)).toBe(7);
  });

  it('never resurrects the entries of a failed fsync after a crash, even when their bytes are on disk', async () => {
    store = await setup().open();
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    faults.failSyncs(1);
    await settle([w.append(Buffer.from('failed-1')), w.append(Buffer.from('failed-2'))]);
    expect(await w.append(entryBytes(w.ledgerId, 1))).toBe(1);
    // Power loss right after: everything synced survives, and the failed group's bytes survive too.
    const after = memfs.crash(() => 0.999);
    store = null;
    const recovered = await memoryHarness(after).open();
    expect(await expectIntact(recovered, w.ledgerId)).toBe(2);
    await recovered.close();
  });

  it('fails every ledger in a group whose fsync failed and keeps each ledger dense', async () => {
    store = await setup().open();
    const writers = await Promise.all(Array.from({ length: 4 }, () => store!.create()));
    for (const w of writers) await w.append(entryBytes(w.ledgerId, 0));
    faults.failSyncs(1);
    const results = await settle(writers.map((w) => w.append(Buffer.from('x'))));
    expect(results.errors).toHaveLength(4);
    for (const w of writers) expect(await w.append(entryBytes(w.ledgerId, 1))).toBe(1);
    for (const w of writers) expect(await expectIntact(store, w.ledgerId)).toBe(2);
  });

  it('streams old entries with bounded reads and a bounded number of open segment files', async () => {
    store = await setup().open({ segmentBytes: 256 * 1024, maxEntryBytes: 16 * 1024, cacheBytes: 0, maxOpenSegments: 2 });
    const w = await store.create();
    for (let i = 0; i < 512; i += 32) await Promise.all(Array.from({ length: 32 }, (_, k) => w.append(entryBytes(w.ledgerId, i + k, 8000))));
    expect(store.stats.segments).toBeGreaterThan(10);
    const largestBefore = faults.counts.largestRead;
    faults.counts.peakOpenFiles = faults.counts.openFiles;
    let next = 0;
    while (next < 512) {
      const entries = await store.read(w.ledgerId, next, 511, { maxBytes: 64 * 1024 });
      entries.forEach((e, k) => expect(e.data.equals(entryBytes(w.ledgerId, next + k, 8000))).toBe(true));
      next += entries.length;
    }
    // 4 MiB of entries read back through reads of at most 256 KiB each.
    expect(Math.max(largestBefore, faults.counts.largestRead)).toBeLessThanOrEqual(256 * 1024);
    expect(store.stats.diskReads).toBe(512);
    // The active segment, at most two rolled ones, and a checkpoint's file.
    expect(faults.counts.peakOpenFiles).toBeLessThanOrEqual(4);
  });

  it('writes the next group while an fsync is in flight and completes both in order with one more fsync', async () => {
    store = await setup().open();
    const w = await store.create();
    const release = faults.holdSyncs();
    const order: number[] = [];
    const first = w.append(entryBytes(w.ledgerId, 0)).then((id) => order.push(id));
    await waitFor(() => faults.syncsHeld === 1);
    const writesBefore = faults.counts.writev;
    const second = Promise.all([1, 2].map((i) => w.append(entryBytes(w.ledgerId, i)).then((id) => order.push(id))));
    // The second group is written while the first fsync is still held.
    await waitFor(() => faults.counts.writev === writesBefore + 1);
    expect(w.lastAddConfirmed).toBe(-1);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual([0, 1, 2]);
    expect(await expectIntact(store, w.ledgerId)).toBe(3);
  });

  it('fails the group written during a failing fsync too, and rewinds to the first failed id', async () => {
    store = await setup().open();
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    const release = faults.holdSyncs();
    const first = w.append(Buffer.from('lost-1'));
    await waitFor(() => faults.syncsHeld === 1);
    const writesBefore = faults.counts.writev;
    const second = w.append(Buffer.from('lost-2'));
    await waitFor(() => faults.counts.writev === writesBefore + 1);
    faults.failSyncs(1);
    release();
    const results = await settle([first, second]);
    expect(results.ids).toEqual([]);
    expect(results.errors.map((e) => e.code)).toEqual(['LL_ERR_LEDGER_STORAGE', 'LL_ERR_LEDGER_STORAGE']);
    expect(await w.append(entryBytes(w.ledgerId, 1))).toBe(1);
    // Power loss that keeps the failed groups' bytes: recovery must still exclude them.
    const after = memfs.crash(() => 0.999);
    store = null;
    const recovered = await memoryHarness(after).open();
    expect(await expectIntact(recovered, w.ledgerId)).toBe(2);
    await recovered.close();
  });

  it('fails a torn write without exposing the torn entry, and recovers', async () => {
    store = await setup().open();
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    faults.tearNextWrite(40);
    expect(await errorCode(w.append(Buffer.alloc(5000, 7)))).toBe('LL_ERR_LEDGER_STORAGE');
    expect(w.lastAddConfirmed).toBe(0);
    expect(await w.append(entryBytes(w.ledgerId, 1))).toBe(1);
    await store.close();
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId)).toBe(2);
  });

  it('surfaces ENOSPC to appenders while the disk is full and works again once space is freed', async () => {
    store = await setup().open();
    const w = await store.create();
    let next = 0;
    while (next < 3) expect(await w.append(entryBytes(w.ledgerId, next))).toBe(next++);
    faults.fillDisk(3000);
    const codes = new Set<string | undefined>();
    for (let i = 0; i < 10; i++) {
      try {
        expect(await w.append(entryBytes(w.ledgerId, next, 1000))).toBe(next);
        next++;
      } catch (err) {
        expect((err as LedgerError).code).toBe('LL_ERR_LEDGER_STORAGE');
        codes.add((err as LedgerStorageError).errno);
      }
    }
    expect(codes).toEqual(new Set(['ENOSPC']));
    const whileFull = next;
    faults.clear();
    for (let i = 0; i < 3; i++) expect(await w.append(entryBytes(w.ledgerId, next))).toBe(next++);
    const size = (id: number): number | undefined => (id >= 3 && id < whileFull ? 1000 : undefined);
    expect(await expectIntact(store, w.ledgerId, size)).toBe(next);
    await store.close();
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId, size)).toBe(next);
  });

  it('a seal whose write fails rejects, leaves the ledger open, and can be retried', async () => {
    store = await setup().open();
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    faults.failSyncs(1);
    expect(await errorCode(w.seal())).toBe('LL_ERR_LEDGER_STORAGE');
    expect((await store.getMetadata(w.ledgerId)).state).toBe('open');
    expect(await store.fence(w.ledgerId)).toMatchObject({ state: 'sealed', lastAddConfirmed: 0 });
  });

  it('reports a failed background fsync under a non-durable policy and keeps going', async () => {
    const reported: LedgerError[] = [];
    store = await setup().open({ flush: { messages: 3 }, onBackgroundError: (e) => reported.push(e) });
    const w = await store.create();
    faults.failSyncs(1);
    for (let i = 0; i < 6; i++) expect(await w.append(entryBytes(w.ledgerId, i))).toBe(i);
    expect(reported.map((e) => e.code)).toEqual(['LL_ERR_LEDGER_STORAGE']);
    await store.close();
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId)).toBe(6);
  });

  it('recovers with all acknowledged entries after power loss at random moments (200 crashes)', async () => {
    let seed = 12345;
    const random = (): number => {
      seed = (seed * 1103515245 + 12345) >>> 0;
      return seed / 0x1_0000_0000;
    };
    let fs = new MemoryLedgerFs();
    const acked = new Map<number, number>(); // ledger → highest acknowledged entry id
    const sealedAt = new Map<number, number>();
    const deleted = new Set<number>(); // deletes acknowledged under the durable policy
    const deleteIssued = new Set<number>(); // deletes whose outcome a crash may have decided either way
    const mismatches: string[] = [];
    let crashesMidWrite = 0;
    for (let round = 0; round < 200; round++) {
      const s = await memoryHarness(fs).open({ segmentBytes: 16 * 1024, maxEntryBytes: 4096, flush: round % 4 === 3 ? { messages: 5 } : {} });
      const durable = round % 4 !== 3;
      // Everything acknowledged before is still there, intact and dense; seals and deletes stuck.
      for (const [id, last] of acked) {
        if (deleted.has(id)) {
          expect(await errorCode(s.getMetadata(id))).toBe('LL_ERR_NO_SUCH_LEDGER');
          continue;
        }
        if (deleteIssued.has(id) && !(await s.list()).some((m) => m.ledgerId === id)) {
          deleted.add(id);
          continue;
        }
        const meta = await s.getMetadata(id);
        expect(meta.lastAddConfirmed).toBeGreaterThanOrEqual(last);
        if (sealedAt.has(id)) expect(meta).toMatchObject({ state: 'sealed', lastAddConfirmed: sealedAt.get(id) });
        const n = await expectIntact(s, id);
        acked.set(id, n - 1);
      }
      // Take over ledgers left open, start new ones, append concurrently, seal or delete some.
      for (const m of await s.list()) {
        if (m.state === 'open' && random() < 0.5) {
          const sealed = await s.fence(m.ledgerId);
          if (durable) sealedAt.set(m.ledgerId, sealed.lastAddConfirmed);
        }
      }
      const writers = await Promise.all([s.create(), s.create()]);
      for (const w of writers) if (durable) acked.set(w.ledgerId, -1);
      const ops: Promise<unknown>[] = [];
      const steps = 1 + Math.floor(random() * 40);
      for (let i = 0; i < steps; i++) {
        const w = writers[Math.floor(random() * writers.length)]!;
        const entryId = w.lastAddPushed + 1;
        ops.push(
          w.append(entryBytes(w.ledgerId, entryId)).then((id) => {
            if (id !== entryId) mismatches.push(`ledger ${w.ledgerId}: expected entry ${entryId}, got ${id}`);
            if (durable) acked.set(w.ledgerId, Math.max(acked.get(w.ledgerId) ?? -1, id));
          }),
        );
        if (random() < 0.3) await ops[ops.length - 1]!.catch(() => undefined);
      }
      // Retention: delete the oldest sealed ledgers beyond four, so the store stays small.
      const victims = (await s.list()).filter((m) => m.state === 'sealed');
      for (const v of victims.slice(0, Math.max(0, victims.length - 4))) {
        const id = v.ledgerId;
        deleteIssued.add(id);
        ops.push(
          s.delete(id).then(() => {
            if (durable) deleted.add(id);
          }),
        );
      }
      // Let a random number of event-loop turns and microtask hops pass (the in-memory file system answers
      // within a few of them, so this lands between any two steps of a group commit), then cut the power.
      const turns = Math.floor(random() * 3);
      for (let t = 0; t < turns; t++) await new Promise((r) => setImmediate(r));
      const hops = Math.floor(random() * 60);
      for (let t = 0; t < hops; t++) await Promise.resolve();
      fs = fs.crash(random);
      if ((await Promise.allSettled(ops)).some((r) => r.status === 'rejected')) crashesMidWrite++;
      await s.close().catch(() => undefined);
    }
    expect(mismatches).toEqual([]);
    expect(acked.size).toBeGreaterThan(100);
    expect(deleted.size).toBeGreaterThan(10);
    // The power went out while appends were in flight in a good share of the rounds.
    expect(crashesMidWrite).toBeGreaterThan(50);
  });
});

describe('ledger store damage on disk', () => {
  let h: StoreHarness;
  let store: LocalLedgerStore | null = null;

  afterEach(async () => {
    await store?.close().catch(() => undefined);
    h.cleanup();
  });

  function flipByte(file: string, position: number): void {
    const fd = openSync(file, 'r+');
    const b = Buffer.alloc(1);
    readSync(fd, b, 0, 1, position);
    b[0] = b[0]! ^ 0x5a;
    writeSync(fd, b, 0, 1, position);
    closeSync(fd);
  }

  it('returns LL_ERR_LEDGER_CORRUPT instead of a damaged entry in a rolled segment', async () => {
    h = diskHarness();
    store = await h.open({ segmentBytes: 16 * 1024, maxEntryBytes: 4096 });
    const w = await store.create();
    for (let i = 0; i < 40; i++) await w.append(entryBytes(w.ledgerId, i, 1000));
    await store.close();
    // Entry 2 of the first segment: header 64 bytes, then records of 32 + 1000 bytes.
    flipByte(path.join(h.dir, '00000000000000000001.seg'), 64 + 2 * 1032 + 32 + 500);
    store = await h.open({ segmentBytes: 16 * 1024, maxEntryBytes: 4096 });
    expect(await errorCode(store.read(w.ledgerId, 0, 5))).toBe('LL_ERR_LEDGER_CORRUPT');
    expect((await store.read(w.ledgerId, 0, 1)).map((e) => e.entryId)).toEqual([0, 1]);
    expect((await store.read(w.ledgerId, 3, 39)).length).toBe(37);
  });

  it('refuses to open rather than cut checkpointed entries of the active segment', async () => {
    h = diskHarness();
    store = await h.open();
    const w = await store.create();
    for (let i = 0; i < 10; i++) await w.append(entryBytes(w.ledgerId, i, 1000));
    await store.close();
    store = null;
    const seg = readdirSync(h.dir).find((n) => n.endsWith('.seg'))!;
    flipByte(path.join(h.dir, seg), 64 + 40 /* CREATE record */ + 3 * 1032 + 32 + 10);
    expect(await errorCode(h.open())).toBe('LL_ERR_LEDGER_CORRUPT');
  });

  it('cuts a torn tail of the active segment and keeps everything before it', async () => {
    h = diskHarness();
    store = await h.open();
    const w = await store.create();
    for (let i = 0; i < 10; i++) await w.append(entryBytes(w.ledgerId, i, 1000));
    // A crash leaves half a record behind (and no newer checkpoint).
    const seg = path.join(h.dir, readdirSync(h.dir).find((n) => n.endsWith('.seg'))!);
    const fd = openSync(seg, 'r+');
    const { size } = statSync(seg);
    writeSync(fd, Buffer.alloc(500, 0x33), 0, 500, size);
    closeSync(fd);
    await store.close();
    // close() wrote a checkpoint covering the 10 entries; the torn bytes are beyond it.
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId, () => 1000)).toBe(10);
    const w2 = await store.create();
    expect(await w2.append(entryBytes(w2.ledgerId, 0))).toBe(0);
  });
});
