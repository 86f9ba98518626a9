/**
 * A watch from a past revision replays the history of its own key or prefix only (read through the engine's
 * key index, as etcd's watchable store syncs an unsynced watcher from its key range), and that replay is
 * exactly what the whole history filtered by the target gives: revision order, each revision whole, prevKv,
 * no gap or duplicate between history and live events, COMPACTED below the compaction point.
 */

import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, type MetadataError, type MetadataStore, type WatchResponse } from '../../../src/metadata/index.js';
import { Recorder, bytes, engines, until, type EngineInstance } from './support.js';

async function rejection(promise: Promise<unknown>): Promise<MetadataError> {
  try {
    await promise;
  } catch (err) {
    return err as MetadataError;
  }
  throw new Error('expected the promise to reject');
}

/** The responses of a watch of everything, narrowed to a target from a revision: what a replay must give. */
function expectedReplay(all: readonly WatchResponse[], from: number, matches: (key: string) => boolean): WatchResponse[] {
  return all
    .filter((r) => r.revision >= from)
    .map((r) => ({ revision: r.revision, events: r.events.filter((e) => matches(e.kv.key)) }))
    .filter((r) => r.events.length > 0);
}

describe.each(engines)('watch replay by key: $name', (engine) => {
  let instance: EngineInstance;
  let store: MetadataStore;

  beforeEach(async () => {
    instance = engine.create();
    store = await instance.open({ clock: new ManualClock() });
  });

  afterEach(async () => {
    await store.close();
    instance.dispose();
  });

  it('replays one key whose history interleaves with many other keys, then streams, without gap or duplicate', async () => {
    const expected: string[] = [];
    for (let i = 0; i < 50; i++) {
      // Forty other partitions' heads change between two changes of the watched one.
      for (let j = 0; j < 40; j++) await store.put(`/partitions/t/${j}/state`, bytes(`${i}`));
      const { revision } = await store.put('/partitions/t/7/stat', bytes(`w${i}`));
      expected.push(`put /partitions/t/7/stat=w${i}@${revision}`);
    }
    const { revision: txnRevision } = await store.txn({
      success: [
        { type: 'put', key: '/partitions/t/6/state', value: bytes('x') },
        { type: 'delete', key: '/partitions/t/7/stat' },
        { type: 'put', key: '/partitions/t/8/state', value: bytes('x') },
      ],
    });
    expected.push(`delete /partitions/t/7/stat@${txnRevision}`);
    const from = txnRevision - 100; // inside the interleaved history
    const rec = new Recorder();
    await store.watch({ key: '/partitions/t/7/stat' }, rec, { startRevision: from, prevKv: true });
    const { revision: live } = await store.put('/partitions/t/7/stat', bytes('again'));
    await store.put('/partitions/t/7/state', bytes('other key'));
    const want = [...expected.filter((s) => Number(s.split('@')[1]) >= from), `put /partitions/t/7/stat=again@${live}`];
    await rec.waitForEvents(want.length);
    await store.put('/partitions/t/7/stat', bytes('last'));
    await rec.waitForEvents(want.length + 1);
    expect(rec.summary).toEqual([...want, `put /partitions/t/7/stat=last@${live + 2}`]);
    expect(rec.responses.map((r) => r.events.length)).toEqual(rec.responses.map(() => 1));
    const deleted = rec.events.find((e) => e.type === 'delete')!;
    expect(deleted.prevKv).toMatchObject({ key: '/partitions/t/7/stat', value: bytes('w49'), version: 50 });
    expect(rec.errors).toEqual([]);
  });

  it('replays a prefix from its key range only: not the key before it, nor keys that sort just past it', async () => {
    const keys = ['/p', '/p/a', '/p0', '/p/\u{ffff}', '/o/z', '/p/\u{1F600}', '/p/', '/q/p/a', '/p\u{10000}'];
    const revisions = new Map<string, number[]>();
    for (let round = 0; round < 3; round++) {
      for (const key of keys) {
        const { revision } = await store.put(key, bytes(`${round}`));
        revisions.set(key, [...(revisions.get(key) ?? []), revision]);
      }
    }
    const { revision: deletedAt } = await store.deletePrefix('/p/');
    const from = revisions.get('/p')![1]!; // the second round
    const rec = new Recorder();
    await store.watch({ prefix: '/p/' }, rec, { startRevision: from, prevKv: true });
    const inside = ['/p/a', '/p/\u{ffff}', '/p/\u{1F600}', '/p/'];
    const want: string[] = [];
    for (let round = 1; round < 3; round++) {
      for (const key of keys) if (inside.includes(key)) want.push(`put ${key}=${round}@${revisions.get(key)![round]}`);
    }
    // The delete of the subtree is one revision, its keys in byte order.
    const deletions = ['/p/', '/p/a', '/p/\u{ffff}', '/p/\u{1F600}'].map((k) => `delete ${k}@${deletedAt}`);
    await rec.waitForEvents(want.length + deletions.length);
    expect(rec.summary).toEqual([...want, ...deletions]);
    expect(rec.responses.at(-1)).toMatchObject({ revision: deletedAt });
    expect(rec.responses.at(-1)!.events).toHaveLength(4);
    expect(rec.events.at(-1)!.prevKv).toMatchObject({ value: bytes('2') });
  });

  it('replays only the writes of a turn that committed, not one whose lease was gone', async () => {
    const first = store.put('/g/k', bytes('1'));
    const refused = store.put('/g/k', bytes('refused'), { lease: '999' });
    const other = store.put('/g/other', bytes('1'));
    const last = store.put('/g/k', bytes('2'));
    expect((await rejection(refused)).code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
    const [a, , b] = await Promise.all([first, other, last]);
    const rec = new Recorder();
    await store.watch({ key: '/g/k' }, rec, { startRevision: 2 });
    await rec.waitForEvents(2);
    expect(rec.summary).toEqual([`put /g/k=1@${a.revision}`, `put /g/k=2@${b.revision}`]);
  });

  it('refuses a key watch from below the compaction point and replays only the kept events of that key', async () => {
    const own: number[] = [];
    for (let i = 0; i < 10; i++) {
      await store.put('/c/other', bytes(`${i}`));
      own.push((await store.put('/c/key', bytes(`${i}`))).revision);
    }
    await store.compact(own[5]!);
    const err = await rejection(store.watch({ key: '/c/key' }, new Recorder(), { startRevision: own[5]! - 1 }));
    expect(err.code).toBe('LL_ERR_METADATA_COMPACTED');
    const rec = new Recorder();
    await store.watch({ key: '/c/key' }, rec, { startRevision: own[5]! });
    await rec.waitForEvents(5);
    expect(rec.summary).toEqual(own.slice(5).map((r, i) => `put /c/key=${i + 5}@${r}`));
    // After a reopen the history is read again from the engine, by key.
    await store.close();
    store = await instance.open({ clock: new ManualClock() });
    const again = new Recorder();
    await store.watch({ key: '/c/key' }, again, { startRevision: own[8]! });
    await again.waitForEvents(2);
    expect(again.summary).toEqual([`put /c/key=8@${own[8]}`, `put /c/key=9@${own[9]}`]);
  });
});

const KEYS = ['/a', '/a/', '/a/b', '/ab', '/b', '/a\u0000', '/\u00e9', '/\u{E000}', '/\u{1F600}'];
const PREFIXES = ['', '/', '/a', '/a/', '/ab', '/\u{E000}', '/\u{1F600}'];

type Op = { op: 'put'; key: string } | { op: 'delete'; key: string } | { op: 'deletePrefix'; prefix: string } | { op: 'pair'; a: string; b: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ op: fc.constant('put' as const), key: fc.constantFrom(...KEYS) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('delete' as const), key: fc.constantFrom(...KEYS) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('deletePrefix' as const), prefix: fc.constantFrom(...PREFIXES.slice(1)) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('pair' as const), a: fc.constantFrom(...KEYS), b: fc.constantFrom(...KEYS) }) },
);

describe('watch replay by key on every engine', () => {
  it('equals the whole history narrowed to the key or prefix, from any start revision, with prevKv', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 5, maxLength: 30 }), fc.nat(40), async (ops, startAt) => {
        for (const engine of engines) {
          const instance = engine.create();
          const store = await instance.open({ clock: new ManualClock(), historyRetention: 1_000 });
          try {
            const all = new Recorder();
            await store.watch({ prefix: '' }, all, { prevKv: true });
            for (const [i, o] of ops.entries()) {
              const value = bytes(String(i));
              if (o.op === 'put') await store.put(o.key, value);
              else if (o.op === 'delete') await store.delete(o.key);
              else if (o.op === 'deletePrefix') await store.deletePrefix(o.prefix);
              else if (o.a !== o.b) {
                await store.txn({ success: [{ type: 'put', key: o.a, value }, { type: 'delete', key: o.b }] });
              }
            }
            const revision = await store.revision();
            await until(() => all.responses.at(-1)?.revision === revision || revision === 1, 'the last revision delivered');
            const from = 1 + (startAt % revision);
            const targets = [...KEYS.map((key) => ({ key })), ...PREFIXES.map((prefix) => ({ prefix }))];
            for (const target of targets) {
              const matches = 'key' in target ? (k: string) => k === target.key : (k: string) => k.startsWith(target.prefix);
              const want = expectedReplay(all.responses, from, matches);
              const rec = new Recorder();
              const watch = await store.watch(target, rec, { startRevision: from, prevKv: true });
              await until(() => rec.responses.length >= want.length, `${want.length} replayed revisions`);
              await new Promise<void>((resolve) => setImmediate(resolve)); // and nothing more
              await watch.cancel();
              expect(rec.responses, `${engine.name} ${JSON.stringify(target)} from ${from}`).toEqual(want);
            }
          } finally {
            await store.close();
            instance.dispose();
          }
        }
      }),
      { numRuns: 30 },
    );
  }, 30_000);
});
