/**
 * The ledger store contract (src/ledger/types.ts), run unchanged against every implementation. An engine is
 * done when this suite passes. Tests of the local store's own mechanics (segment files, tail cache, fsync
 * counts, flush policy, directory lock) run only for engines with `local` (helpers.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { engines, entryBytes, errorCode, expectIntact, type StoreHarness } from './helpers.js';

describe.each(engines)('ledger store contract: $name', (engine) => {
  let h: StoreHarness;
  let store: LocalLedgerStore;

  beforeEach(async () => {
    h = engine.harness();
    store = await h.open();
  });

  afterEach(async () => {
    await store.close().catch(() => undefined);
    h.cleanup();
  });

  async function reopen(options?: Parameters<StoreHarness['open']>[0]): Promise<LocalLedgerStore> {
    await store.close();
    store = await h.open(options);
    return store;
  }

  it('creates empty open ledgers with increasing ids', async () => {
    const a = await store.create();
    const b = await store.create();
    expect(b.ledgerId).toBeGreaterThan(a.ledgerId);
    expect(a.lastAddConfirmed).toBe(-1);
    const meta = await store.getMetadata(a.ledgerId);
    expect(meta).toMatchObject({ ledgerId: a.ledgerId, state: 'open', lastAddConfirmed: -1, length: 0, sealedAtMs: null });
  });

  it('appends return dense entry ids in order and reads return the exact bytes', async () => {
    const w = await store.create();
    const ids = await Promise.all(Array.from({ length: 50 }, (_, i) => w.append(entryBytes(w.ledgerId, i))));
    expect(ids).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(w.lastAddConfirmed).toBe(49);
    expect(w.lastAddPushed).toBe(49);
    expect(await expectIntact(store, w.ledgerId)).toBe(50);
    const meta = await store.getMetadata(w.ledgerId);
    expect(meta.length).toBe(ids.reduce((n, i) => n + entryBytes(w.ledgerId, i).length, 0));
  });

  it('round-trips an empty entry and a large entry', async () => {
    const w = await store.create();
    const big = Buffer.alloc(3 * 1024 * 1024, 0xab);
    expect(await w.append(Buffer.alloc(0))).toBe(0);
    expect(await w.append(big)).toBe(1);
    await store.close();
    store = await h.open();
    const [e0, e1] = await store.read(w.ledgerId, 0, 1);
    expect(e0!.data.length).toBe(0);
    expect(e1!.data.equals(big)).toBe(true);
  });

  it('keeps entry ids dense per ledger under concurrent appends to many ledgers', async () => {
    const writers = await Promise.all(Array.from({ length: 20 }, () => store.create()));
    await Promise.all(writers.flatMap((w) => Array.from({ length: 25 }, (_, i) => w.append(entryBytes(w.ledgerId, i)))));
    for (const w of writers) expect(await expectIntact(store, w.ledgerId)).toBe(25);
  });

  it('clamps reads to lastAddConfirmed and returns [] beyond it', async () => {
    const w = await store.create();
    for (let i = 0; i < 5; i++) await w.append(entryBytes(w.ledgerId, i));
    expect((await store.read(w.ledgerId, 2, 100)).map((e) => e.entryId)).toEqual([2, 3, 4]);
    expect(await store.read(w.ledgerId, 5, 10)).toEqual([]);
  });

  it('rejects malformed ranges and unknown ledgers with typed errors', async () => {
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    expect(await errorCode(store.read(w.ledgerId, -1, 3))).toBe('LL_ERR_INVALID_ARGUMENT');
    expect(await errorCode(store.read(w.ledgerId, 3, 2))).toBe('LL_ERR_INVALID_ARGUMENT');
    expect(await errorCode(store.read(w.ledgerId + 100, 0, 0))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect(await errorCode(store.getMetadata(w.ledgerId + 100))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect(await errorCode(store.fence(w.ledgerId + 100))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect(await errorCode(store.delete(w.ledgerId + 100))).toBe('LL_ERR_NO_SUCH_LEDGER');
  });

  it('stops a read at maxBytes but always returns the first entry', async () => {
    const w = await store.create();
    for (let i = 0; i < 10; i++) await w.append(Buffer.alloc(1000, i));
    expect((await store.read(w.ledgerId, 0, 9, { maxBytes: 2500 })).map((e) => e.entryId)).toEqual([0, 1]);
    expect((await store.read(w.ledgerId, 3, 9, { maxBytes: 10 })).map((e) => e.entryId)).toEqual([3]);
    await reopen();
    expect((await store.read(w.ledgerId, 0, 9, { maxBytes: 3000 })).map((e) => e.entryId)).toEqual([0, 1, 2]);
  });

  it('rejects an entry larger than maxEntryBytes', async () => {
    await reopen({ maxEntryBytes: 1024 });
    const w = await store.create();
    expect(await errorCode(w.append(Buffer.alloc(1025)))).toBe('LL_ERR_ENTRY_TOO_LARGE');
    expect(await w.append(Buffer.alloc(1024))).toBe(0);
  });

  it('seal fixes the last entry: later appends fail with LL_ERR_LEDGER_SEALED and reads stay stable', async () => {
    const w = await store.create();
    for (let i = 0; i < 3; i++) await w.append(entryBytes(w.ledgerId, i));
    const meta = await w.seal();
    expect(meta).toMatchObject({ state: 'sealed', lastAddConfirmed: 2 });
    expect(meta.sealedAtMs).toBeGreaterThan(0);
    expect(await errorCode(w.append(entryBytes(w.ledgerId, 3)))).toBe('LL_ERR_LEDGER_SEALED');
    expect(await w.seal()).toEqual(meta);
    expect(await store.fence(w.ledgerId)).toEqual(meta);
    expect(await expectIntact(store, w.ledgerId)).toBe(3);
    await reopen();
    expect(await store.getMetadata(w.ledgerId)).toEqual(meta);
    expect(await expectIntact(store, w.ledgerId)).toBe(3);
  });

  it('a seal waits for the appends issued before it', async () => {
    const w = await store.create();
    const appends = Array.from({ length: 10 }, (_, i) => w.append(entryBytes(w.ledgerId, i)));
    const sealed = w.seal();
    expect(await errorCode(w.append(entryBytes(w.ledgerId, 10)))).toBe('LL_ERR_LEDGER_SEALED');
    expect(await Promise.all(appends)).toEqual(Array.from({ length: 10 }, (_, i) => i));
    expect((await sealed).lastAddConfirmed).toBe(9);
  });

  it('fence makes the old writer fail with LL_ERR_LEDGER_FENCED and seals at the last durable entry', async () => {
    const w = await store.create();
    for (let i = 0; i < 4; i++) await w.append(entryBytes(w.ledgerId, i));
    const meta = await store.fence(w.ledgerId);
    expect(meta).toMatchObject({ state: 'sealed', lastAddConfirmed: 3 });
    expect(await errorCode(w.append(entryBytes(w.ledgerId, 4)))).toBe('LL_ERR_LEDGER_FENCED');
    expect(await errorCode(w.seal())).toBe('LL_ERR_LEDGER_FENCED');
    expect(await store.fence(w.ledgerId)).toEqual(meta);
  });

  it('fence during appends: every append either lands at or below the sealed last entry or fails fenced', async () => {
    const w = await store.create();
    const appends = Array.from({ length: 200 }, (_, i) =>
      w.append(entryBytes(w.ledgerId, i)).then(
        (id) => ({ ok: true as const, id }),
        (err: { code: string }) => ({ ok: false as const, code: err.code }),
      ),
    );
    // Let part of them reach the disk, then take the ledger over.
    await appends[20];
    const meta = await store.fence(w.ledgerId);
    const results = await Promise.all(appends);
    const landed = results.filter((r) => r.ok).map((r) => (r as { id: number }).id);
    expect(landed).toEqual(Array.from({ length: meta.lastAddConfirmed + 1 }, (_, i) => i));
    for (const r of results) if (!r.ok) expect(r.code).toBe('LL_ERR_LEDGER_FENCED');
    expect(landed.length).toBeGreaterThanOrEqual(21);
    expect(await expectIntact(store, w.ledgerId)).toBe(meta.lastAddConfirmed + 1);
  });

  it('a fence racing the writer seal settles on one sealed state', async () => {
    const w = await store.create();
    const appends = Promise.allSettled(Array.from({ length: 5 }, (_, i) => w.append(entryBytes(w.ledgerId, i))));
    const [bySeal, byFence] = await Promise.all([w.seal(), store.fence(w.ledgerId)]);
    expect(byFence).toEqual(bySeal);
    const landed = (await appends).filter((r) => r.status === 'fulfilled').length;
    expect(bySeal.lastAddConfirmed).toBe(landed - 1);
  });

  it('deleting a ledger with appends in flight fails the rest and leaves nothing readable', async () => {
    const w = await store.create();
    await w.append(entryBytes(w.ledgerId, 0));
    const appends = Promise.allSettled(Array.from({ length: 20 }, (_, i) => w.append(entryBytes(w.ledgerId, i + 1))));
    await store.delete(w.ledgerId);
    for (const r of await appends) {
      if (r.status === 'rejected') expect((r.reason as { code: string }).code).toBe('LL_ERR_NO_SUCH_LEDGER');
    }
    expect(await errorCode(store.read(w.ledgerId, 0, 0))).toBe('LL_ERR_NO_SUCH_LEDGER');
    await reopen();
    expect(await errorCode(store.getMetadata(w.ledgerId))).toBe('LL_ERR_NO_SUCH_LEDGER');
  });

  it('ledgers left open by a previous run stay open and are taken over with fence', async () => {
    const w = await store.create();
    for (let i = 0; i < 7; i++) await w.append(entryBytes(w.ledgerId, i));
    await reopen();
    expect(await store.getMetadata(w.ledgerId)).toMatchObject({ state: 'open', lastAddConfirmed: 6 });
    expect(await errorCode(w.append(entryBytes(w.ledgerId, 7)))).toBe('LL_ERR_LEDGER_STORE_CLOSED');
    expect(await store.fence(w.ledgerId)).toMatchObject({ state: 'sealed', lastAddConfirmed: 6 });
    await reopen();
    expect(await store.getMetadata(w.ledgerId)).toMatchObject({ state: 'sealed', lastAddConfirmed: 6 });
    expect(await expectIntact(store, w.ledgerId)).toBe(7);
  });

  it('delete removes a ledger for good; its writer fails and ids are never reused, also after a restart', async () => {
    const a = await store.create();
    const b = await store.create();
    await a.append(entryBytes(a.ledgerId, 0));
    await b.append(entryBytes(b.ledgerId, 0));
    await store.delete(a.ledgerId);
    expect(await errorCode(store.read(a.ledgerId, 0, 0))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect(await errorCode(a.append(entryBytes(a.ledgerId, 1)))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect(await errorCode(store.delete(a.ledgerId))).toBe('LL_ERR_NO_SUCH_LEDGER');
    expect((await store.list()).map((m) => m.ledgerId)).toEqual([b.ledgerId]);
    await store.delete(b.ledgerId);
    await reopen();
    expect(await store.list()).toEqual([]);
    const c = await store.create();
    expect(c.ledgerId).toBeGreaterThan(b.ledgerId);
  });

  it('lists every ledger in id order with its state', async () => {
    const a = await store.create();
    const b = await store.create();
    await a.append(entryBytes(a.ledgerId, 0));
    await b.seal();
    const list = await store.list();
    expect(list.map((m) => [m.ledgerId, m.state, m.lastAddConfirmed])).toEqual([
      [a.ledgerId, 'open', 0],
      [b.ledgerId, 'sealed', -1],
    ]);
  });

  it.skipIf(!engine.local)('keeps every entry across restarts, rolled segments and an evicted cache', async () => {
    await reopen({ segmentBytes: 64 * 1024, maxEntryBytes: 8 * 1024, cacheBytes: 16 * 1024 });
    const writers = await Promise.all(Array.from({ length: 3 }, () => store.create()));
    for (let i = 0; i < 120; i++) await Promise.all(writers.map((w) => w.append(entryBytes(w.ledgerId, i))));
    expect(store.stats.segments).toBeGreaterThan(3);
    for (const w of writers) expect(await expectIntact(store, w.ledgerId)).toBe(120);
    expect(store.stats.diskReads).toBeGreaterThan(0);
    await reopen({ segmentBytes: 64 * 1024, maxEntryBytes: 8 * 1024 });
    for (const w of writers) expect(await expectIntact(store, w.ledgerId)).toBe(120);
  });

  it.skipIf(!engine.local)('serves recent entries from the tail cache and older ones from disk', async () => {
    await reopen({ cacheBytes: 64 * 1024 });
    const w = await store.create();
    for (let i = 0; i < 100; i++) await w.append(Buffer.alloc(4096, i));
    const hits = store.stats.cacheHits;
    const disk = store.stats.diskReads;
    const recent = await store.read(w.ledgerId, 95, 99);
    expect(store.stats.cacheHits - hits).toBe(5);
    expect(store.stats.diskReads - disk).toBe(0);
    expect(recent[4]!.data.equals(Buffer.alloc(4096, 99))).toBe(true);
    const old = await store.read(w.ledgerId, 0, 4);
    // The 5 asked for, and the 5 after them that a read from disk reads ahead (as many bytes as it read).
    expect(store.stats.diskReads - disk).toBe(10);
    expect(store.stats.readAheadEntries).toBe(5);
    expect(old[2]!.data.equals(Buffer.alloc(4096, 2))).toBe(true);
    expect(store.stats.cachedBytes).toBeLessThanOrEqual(64 * 1024);
  });

  it.skipIf(!engine.local)('reads ahead of a reader that goes through the segment files in order', async () => {
    await reopen({ cacheBytes: 64 * 1024 });
    const w = await store.create();
    for (let i = 0; i < 100; i++) await w.append(Buffer.alloc(4096, i));
    const disk = store.stats.diskReads;
    // Each read takes what the last one read ahead, and reads the next as far ahead.
    for (let first = 0; first < 60; first += 6) {
      const got = await store.read(w.ledgerId, first, first + 5);
      expect(got.map((e) => e.entryId)).toEqual([0, 1, 2, 3, 4, 5].map((k) => first + k));
      for (const e of got) expect(e.data.equals(Buffer.alloc(4096, e.entryId))).toBe(true);
    }
    expect(store.stats.readAheadHits).toBe(54);
    expect(store.stats.diskReads - disk).toBe(66);
    // A read elsewhere neither takes it nor reads twice what it holds; a shorter one leaves the rest in place.
    expect((await store.read(w.ledgerId, 20, 21)).map((e) => e.entryId)).toEqual([20, 21]);
    expect((await store.read(w.ledgerId, 60, 62)).map((e) => e.data[0])).toEqual([60, 61, 62]);
    expect((await store.read(w.ledgerId, 63, 65)).map((e) => e.data[0])).toEqual([63, 64, 65]);
    expect(store.stats.readAheadHits).toBe(60);
    // Entries the tail cache holds are not read ahead: a read that reaches them leaves nothing to read.
    const before = store.stats.readAheadEntries;
    const rest = await store.read(w.ledgerId, 66, 99);
    expect(rest.map((e) => e.data[0])).toEqual(Array.from({ length: 34 }, (_, k) => 66 + k));
    expect(store.stats.readAheadEntries).toBe(before);
    // A store built without it does not read ahead.
    await reopen({ cacheBytes: 64 * 1024, readAheadBytes: 0 });
    await store.read(w.ledgerId, 0, 4);
    await store.read(w.ledgerId, 5, 9);
    expect(store.stats.readAheadEntries).toBe(0);
  });

  it.skipIf(!engine.local)('reclaims the space of deleted ledgers by deleting segment files none of whose ledgers remain', async () => {
    await reopen({ segmentBytes: 32 * 1024, maxEntryBytes: 4096 });
    const doomed = await store.create();
    const kept = await store.create();
    for (let i = 0; i < 60; i++) await doomed.append(Buffer.alloc(2000, 1));
    await kept.append(entryBytes(kept.ledgerId, 0));
    for (let i = 0; i < 30; i++) await doomed.append(Buffer.alloc(2000, 2));
    const segmentsBefore = (await h.fs.readdir(h.dir)).filter((n) => n.endsWith('.seg')).length;
    await store.delete(doomed.ledgerId);
    // Reclamation runs with the next checkpoint; closing runs one.
    await reopen({ segmentBytes: 32 * 1024, maxEntryBytes: 4096 });
    const segmentsAfter = (await h.fs.readdir(h.dir)).filter((n) => n.endsWith('.seg')).length;
    expect(segmentsBefore).toBeGreaterThan(4);
    // Only the segment holding `kept`'s entry and the active one may remain.
    expect(segmentsAfter).toBeLessThanOrEqual(2);
    expect(store.stats.segments).toBe(segmentsAfter);
    expect(await expectIntact(store, kept.ledgerId)).toBe(1);
  });

  it('rejects calls after close with LL_ERR_LEDGER_STORE_CLOSED', async () => {
    const w = await store.create();
    await store.close();
    expect(await errorCode(store.create())).toBe('LL_ERR_LEDGER_STORE_CLOSED');
    expect(await errorCode(w.append(Buffer.alloc(1)))).toBe('LL_ERR_LEDGER_STORE_CLOSED');
    expect(await errorCode(store.read(w.ledgerId, 0, 0))).toBe('LL_ERR_LEDGER_STORE_CLOSED');
    expect(await errorCode(store.list())).toBe('LL_ERR_LEDGER_STORE_CLOSED');
  });

  it('commits appends issued before close', async () => {
    const w = await store.create();
    const appends = Array.from({ length: 30 }, (_, i) => w.append(entryBytes(w.ledgerId, i)));
    await store.close();
    expect(await Promise.all(appends)).toHaveLength(30);
    store = await h.open();
    expect(await expectIntact(store, w.ledgerId)).toBe(30);
  });

  it.skipIf(!engine.local)('refuses a second open of the same directory with LL_ERR_LEDGER_STORE_LOCKED', async () => {
    expect(await errorCode(h.open())).toBe('LL_ERR_LEDGER_STORE_LOCKED');
  });

  it.skipIf(!engine.local)('shares one fsync among concurrent appends to many ledgers', async () => {
    const writers = await Promise.all(Array.from({ length: 50 }, () => store.create()));
    const before = store.stats.fsyncs;
    await Promise.all(writers.flatMap((w) => [0, 1, 2, 3].map((i) => w.append(entryBytes(w.ledgerId, i)))));
    expect(store.stats.entriesAppended).toBe(200);
    expect(store.stats.fsyncs - before).toBeLessThanOrEqual(5);
  });

  it.skipIf(!engine.local)('under a non-durable flush policy, acknowledges before fsync and fsyncs every flush.messages entries', async () => {
    await reopen({ flush: { messages: 10 } });
    const w = await store.create();
    const before = store.stats.fsyncs;
    for (let i = 0; i < 35; i++) await w.append(entryBytes(w.ledgerId, i));
    expect(store.stats.fsyncs - before).toBe(3);
    await reopen();
    expect(await expectIntact(store, w.ledgerId)).toBe(35);
  });

  it.skipIf(!engine.local)('under flush.ms, fsyncs written entries within the interval', async () => {
    await reopen({ flush: { messages: Infinity, ms: 20 } });
    const w = await store.create();
    const before = store.stats.fsyncs;
    await w.append(entryBytes(w.ledgerId, 0));
    const deadline = Date.now() + 5000;
    while (store.stats.fsyncs === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(store.stats.fsyncs).toBe(before + 1);
  });
});
