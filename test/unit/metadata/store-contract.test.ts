/**
 * The MetadataStore contract: one suite, run unchanged against every engine. An engine is done when it
 * passes. The behaviour asserted is etcd v3's wherever etcd defines it (revisions, versions, txn compares,
 * watch ordering and compaction, lease expiry), so that an etcd-backed store can join this list.
 */

import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ManualClock,
  type LocalMetadataStoreOptions,
  type MetadataError,
  type MetadataStore,
} from '../../../src/metadata/index.js';
import { Recorder, bytes, engines, until, type EngineInstance } from './support.js';

const crashWriter = join(fileURLToPath(new URL('.', import.meta.url)), 'fixtures', 'crash-writer.ts');

async function rejection(promise: Promise<unknown>): Promise<MetadataError> {
  try {
    await promise;
  } catch (err) {
    return err as MetadataError;
  }
  throw new Error('expected the promise to reject');
}

describe.each(engines)('MetadataStore contract: $name', (engine) => {
  let instance: EngineInstance;
  let store: MetadataStore;
  let clock: ManualClock;
  const open = (options: LocalMetadataStoreOptions = {}) => instance.open({ clock, ...options });

  beforeEach(async () => {
    instance = engine.create();
    clock = new ManualClock();
    store = await open();
  });

  afterEach(async () => {
    await store.close();
    instance.dispose();
  });

  describe('get and put', () => {
    it('returns null for a key that was never written', async () => {
      expect(await store.get('/nothing')).toBeNull();
    });

    it('starts at revision 1 and gives the first change revision 2, like etcd', async () => {
      expect(await store.revision()).toBe(1);
      const { revision } = await store.put('/a', bytes('1'));
      expect(revision).toBe(2);
      expect(await store.revision()).toBe(2);
    });

    it('stores the bytes with create/mod revision and version 1 on creation', async () => {
      const value = Buffer.from([0, 1, 2, 255]);
      const { revision } = await store.put('/a', value);
      expect(await store.get('/a')).toEqual({
        key: '/a',
        value,
        createRevision: revision,
        modRevision: revision,
        version: 1,
        lease: null,
      });
    });

    it('raises the store revision by exactly one per change and the version by one per put', async () => {
      const r1 = (await store.put('/a', bytes('1'))).revision;
      const r2 = (await store.put('/b', bytes('1'))).revision;
      const r3 = (await store.put('/a', bytes('2'))).revision;
      expect([r2 - r1, r3 - r2]).toEqual([1, 1]);
      const a = await store.get('/a');
      expect(a).toMatchObject({ createRevision: r1, modRevision: r3, version: 2 });
      expect((await store.get('/b'))?.version).toBe(1);
    });

    it('starts a re-created key again at version 1 with a new create revision', async () => {
      await store.put('/a', bytes('1'));
      await store.put('/a', bytes('2'));
      await store.delete('/a');
      const { revision } = await store.put('/a', bytes('3'));
      expect(await store.get('/a')).toMatchObject({ version: 1, createRevision: revision, modRevision: revision });
    });

    it('stores an empty value', async () => {
      await store.put('/empty', Buffer.alloc(0));
      expect((await store.get('/empty'))?.value).toEqual(Buffer.alloc(0));
    });

    it('accepts a plain Uint8Array and keeps its own copy of the bytes', async () => {
      const value = new Uint8Array([1, 2, 3]);
      await store.put('/u8', value);
      value[0] = 9;
      const got = await store.get('/u8');
      expect(got?.value).toEqual(Buffer.from([1, 2, 3]));
      got!.value[1] = 9;
      expect((await store.get('/u8'))?.value).toEqual(Buffer.from([1, 2, 3]));
    });

    it('returns the previous state when asked', async () => {
      const first = await store.put('/a', bytes('1'), { prevKv: true });
      expect(first.prevKv).toBeNull();
      const second = await store.put('/a', bytes('2'), { prevKv: true });
      expect(second.prevKv).toMatchObject({ value: bytes('1'), modRevision: first.revision, version: 1 });
      expect((await store.put('/a', bytes('3'))).prevKv).toBeUndefined();
    });

    it('rejects empty keys, keys with a lone surrogate and non-byte values', async () => {
      expect((await rejection(store.put('', bytes('x')))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect((await rejection(store.put('/bad\ud800', bytes('x')))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect((await rejection(store.put('/a', 'text' as unknown as Buffer))).code).toBe(
        'LL_ERR_METADATA_INVALID_ARGUMENT',
      );
      expect(await store.revision()).toBe(1);
    });

    it('refuses a put larger than the request limit, as etcd does', async () => {
      await store.close();
      store = await open({ maxRequestBytes: 1024 });
      expect((await rejection(store.put('/big', Buffer.alloc(1024)))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      await store.put('/fits', Buffer.alloc(1000));
    });
  });

  describe('compare-and-set', () => {
    it('writes when the mod revision matches and reports the new revision', async () => {
      const { revision } = await store.put('/owner', bytes('broker-1'));
      const result = await store.compareAndSet('/owner', { modRevision: revision }, bytes('broker-2'));
      expect(result).toEqual({ succeeded: true, revision: revision + 1 });
      expect((await store.get('/owner'))?.value.toString()).toBe('broker-2');
    });

    it('changes nothing when the mod revision is stale and returns the current state', async () => {
      const first = await store.put('/owner', bytes('broker-1'));
      await store.put('/owner', bytes('broker-2'));
      const result = await store.compareAndSet('/owner', { modRevision: first.revision }, bytes('broker-3'));
      expect(result.succeeded).toBe(false);
      if (result.succeeded) return;
      expect(result.revision).toBe(first.revision + 1);
      expect(result.current).toMatchObject({ value: bytes('broker-2'), version: 2 });
      expect(await store.revision()).toBe(first.revision + 1);
    });

    it('creates a key only if absent with modRevision 0 (or version 0)', async () => {
      expect((await store.compareAndSet('/new', { modRevision: 0 }, bytes('a'))).succeeded).toBe(true);
      const again = await store.compareAndSet('/new', { modRevision: 0 }, bytes('b'));
      expect(again.succeeded).toBe(false);
      expect(again.succeeded ? null : again.current?.value.toString()).toBe('a');
      expect((await store.compareAndSet('/other', { version: 0 }, bytes('c'))).succeeded).toBe(true);
    });

    it('matches on version, and version repeats after delete and re-create where modRevision does not', async () => {
      const v1 = await store.put('/k', bytes('old'));
      await store.delete('/k');
      await store.put('/k', bytes('new'));
      // A holder of the old state would wrongly win on version (ABA) …
      expect((await store.get('/k'))?.version).toBe(1);
      // … but not on modRevision, which never repeats.
      expect((await store.compareAndSet('/k', { modRevision: v1.revision }, bytes('x'))).succeeded).toBe(false);
      expect((await store.compareAndSet('/k', { version: 1 }, bytes('y'))).succeeded).toBe(true);
    });

    it('fails on a missing key expected to exist', async () => {
      const result = await store.compareAndSet('/missing', { modRevision: 5 }, bytes('x'));
      expect(result).toEqual({ succeeded: false, revision: 1, current: null });
    });

    it('rejects a malformed expectation', async () => {
      const bad = { modRevision: -1 } as const;
      expect((await rejection(store.compareAndSet('/k', bad, bytes('x')))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      const both = { modRevision: 1, version: 1 } as unknown as { version: number };
      expect((await rejection(store.compareAndSet('/k', both, bytes('x')))).code).toBe(
        'LL_ERR_METADATA_INVALID_ARGUMENT',
      );
    });
  });

  describe('delete', () => {
    it('deletes a key at a new revision and returns what it held when asked', async () => {
      const put = await store.put('/a', bytes('1'));
      const result = await store.delete('/a', { prevKv: true });
      expect(result).toEqual({
        succeeded: true,
        deleted: 1,
        revision: put.revision + 1,
        prevKv: expect.objectContaining({ key: '/a', value: bytes('1') }),
      });
      expect(await store.get('/a')).toBeNull();
    });

    it('does not raise the revision when the key does not exist', async () => {
      await store.put('/a', bytes('1'));
      expect(await store.delete('/missing')).toEqual({ succeeded: true, deleted: 0, revision: 2 });
      expect(await store.revision()).toBe(2);
    });

    it('deletes conditionally on the mod revision', async () => {
      const first = await store.put('/a', bytes('1'));
      await store.put('/a', bytes('2'));
      const stale = await store.delete('/a', { expect: { modRevision: first.revision } });
      expect(stale).toMatchObject({ succeeded: false, deleted: 0, current: { value: bytes('2') } });
      expect(await store.get('/a')).not.toBeNull();
      const fresh = await store.delete('/a', { expect: { modRevision: first.revision + 1 } });
      expect(fresh).toMatchObject({ succeeded: true, deleted: 1 });
    });

    it('deletes every key under a prefix in one revision and nothing outside it', async () => {
      await store.put('/t/a/1', bytes('x'));
      await store.put('/t/a/2', bytes('x'));
      await store.put('/t/ab', bytes('x'));
      const { deleted, revision } = await store.deletePrefix('/t/a/');
      expect(deleted).toBe(2);
      expect(revision).toBe(5);
      expect((await store.list('/t/')).kvs.map((kv) => kv.key)).toEqual(['/t/ab']);
    });

    it('refuses to delete the whole key space with an empty prefix', async () => {
      await store.put('/a', bytes('1'));
      expect((await rejection(store.deletePrefix(''))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect(await store.get('/a')).not.toBeNull();
    });
  });

  describe('list', () => {
    it('lists keys under a prefix in byte order without leaking into sibling prefixes', async () => {
      for (const key of ['/p/a/2', '/p/ab', '/p/a/10', '/p/a', '/p/a/1', '/p/b', '/p/a0']) {
        await store.put(key, bytes(key));
      }
      const under = await store.list('/p/a/');
      expect(under.kvs.map((kv) => kv.key)).toEqual(['/p/a/1', '/p/a/10', '/p/a/2']);
      expect(under.more).toBe(false);
      expect((await store.list('/p/a')).kvs.map((kv) => kv.key)).toEqual([
        '/p/a',
        '/p/a/1',
        '/p/a/10',
        '/p/a/2',
        '/p/a0',
        '/p/ab',
      ]);
    });

    it('orders keys by UTF-8 bytes, not UTF-16 code units', async () => {
      // U+E000 is EE 80 80 in UTF-8, U+1F600 is F0 9F 98 80: bytes put U+E000 first, UTF-16 the other way.
      for (const key of ['/u/\u{1F600}', '/u/\u{E000}', '/u/z', '/u/\u00e9']) await store.put(key, bytes('x'));
      expect((await store.list('/u/')).kvs.map((kv) => kv.key)).toEqual([
        '/u/z',
        '/u/\u00e9',
        '/u/\u{E000}',
        '/u/\u{1F600}',
      ]);
      expect((await store.list('/u/\u{1F600}')).kvs).toHaveLength(1);
    });

    it('lists every key with the empty prefix', async () => {
      await store.put('b', bytes('1'));
      await store.put('/a', bytes('1'));
      expect((await store.list('')).kvs.map((kv) => kv.key)).toEqual(['/a', 'b']);
    });

    it('pages with limit and startAfter, reporting whether more keys remain', async () => {
      for (let i = 0; i < 7; i++) await store.put(`/pg/${i}`, bytes(String(i)));
      await store.put('/pg0', bytes('outside'));
      const seen: string[] = [];
      let startAfter: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await store.list('/pg/', { limit: 3, ...(startAfter === undefined ? {} : { startAfter }) });
        pages++;
        seen.push(...page.kvs.map((kv) => kv.key));
        if (!page.more) break;
        startAfter = page.kvs.at(-1)!.key;
      }
      expect(pages).toBe(3);
      expect(seen).toEqual(['/pg/0', '/pg/1', '/pg/2', '/pg/3', '/pg/4', '/pg/5', '/pg/6']);
      const exact = await store.list('/pg/', { limit: 7 });
      expect([exact.kvs.length, exact.more]).toEqual([7, false]);
    });

    it('ignores a startAfter that sorts before the prefix instead of leaking keys outside it', async () => {
      for (const key of ['/a', '/a\u0000', '/a.', '/a/1', '/a/2', '/a0']) await store.put(key, bytes('x'));
      expect((await store.list('/a/', { startAfter: '/a' })).kvs.map((kv) => kv.key)).toEqual(['/a/1', '/a/2']);
      expect((await store.list('/a/', { startAfter: '/a/1' })).kvs.map((kv) => kv.key)).toEqual(['/a/2']);
      expect((await store.list('/a/', { startAfter: '/a0' })).kvs).toEqual([]);
    });

    it('reports the revision the list reflects', async () => {
      await store.put('/r/1', bytes('x'));
      await store.put('/other', bytes('x'));
      expect((await store.list('/r/')).revision).toBe(3);
    });

    it('rejects a limit that is not a positive integer', async () => {
      expect((await rejection(store.list('/', { limit: 0 }))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
    });
  });

  describe('txn', () => {
    it('applies the success branch atomically at a single revision when every compare holds', async () => {
      const head = await store.put('/part/state', bytes('epoch-1'));
      const result = await store.txn({
        compare: [
          { key: '/part/state', target: 'modRevision', op: '==', value: head.revision },
          { key: '/part/ledgers/2', target: 'createRevision', op: '==', value: 0 },
        ],
        success: [
          { type: 'put', key: '/part/ledgers/1', value: bytes('sealed') },
          { type: 'put', key: '/part/ledgers/2', value: bytes('open') },
          { type: 'put', key: '/part/state', value: bytes('epoch-1'), prevKv: true },
          { type: 'get', key: '/part/ledgers/2' },
        ],
        failure: [{ type: 'get', key: '/part/state' }],
      });
      expect(result.succeeded).toBe(true);
      expect(result.revision).toBe(head.revision + 1);
      expect(result.results.map((r) => r.type)).toEqual(['put', 'put', 'put', 'get']);
      expect(result.results[2]).toEqual({ type: 'put', prevKv: expect.objectContaining({ value: bytes('epoch-1') }) });
      // Reads inside the txn see its earlier writes.
      expect(result.results[3]).toEqual({ type: 'get', kv: expect.objectContaining({ value: bytes('open') }) });
      const { kvs } = await store.list('/part/');
      expect(kvs.map((kv) => kv.modRevision)).toEqual([result.revision, result.revision, result.revision]);
    });

    it('runs the failure branch when a compare fails and writes nothing of the success branch', async () => {
      await store.put('/x', bytes('1'));
      const result = await store.txn({
        compare: [{ key: '/x', target: 'version', op: '>', value: 1 }],
        success: [{ type: 'put', key: '/y', value: bytes('never') }],
        failure: [{ type: 'get', key: '/x' }, { type: 'list', prefix: '/' }],
      });
      expect(result.succeeded).toBe(false);
      expect(result.revision).toBe(2);
      expect(result.results[0]).toEqual({ type: 'get', kv: expect.objectContaining({ key: '/x', version: 1 }) });
      expect(result.results[1]).toMatchObject({ type: 'list', more: false, kvs: [{ key: '/x' }] });
      expect(await store.get('/y')).toBeNull();
    });

    it('compares version, revisions, value and lease like etcd, including on missing keys', async () => {
      const lease = await store.grantLease(30);
      const { revision } = await store.put('/k', bytes('m'), { lease: lease.id });
      const holds = async (compare: Parameters<MetadataStore['txn']>[0]['compare']) =>
        (await store.txn({ compare })).succeeded;
      expect(await holds([{ key: '/k', target: 'value', op: '==', value: bytes('m') }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'value', op: '<', value: bytes('n') }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'value', op: '>', value: bytes('l') }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'version', op: '==', value: 1 }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'createRevision', op: '==', value: revision }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'modRevision', op: '<', value: revision + 1 }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'lease', op: '==', value: lease.id }])).toBe(true);
      expect(await holds([{ key: '/k', target: 'lease', op: '!=', value: null }])).toBe(true);
      // A missing key reads version/revisions 0 and lease none …
      expect(await holds([{ key: '/none', target: 'version', op: '==', value: 0 }])).toBe(true);
      expect(await holds([{ key: '/none', target: 'modRevision', op: '==', value: 0 }])).toBe(true);
      expect(await holds([{ key: '/none', target: 'lease', op: '==', value: null }])).toBe(true);
      // … and every value compare on it fails, even "!=" (etcd: no way to represent a missing value).
      expect(await holds([{ key: '/none', target: 'value', op: '!=', value: bytes('x') }])).toBe(false);
      // All compares must hold.
      expect(
        await holds([
          { key: '/k', target: 'version', op: '==', value: 1 },
          { key: '/k', target: 'version', op: '==', value: 2 },
        ]),
      ).toBe(false);
    });

    it('rolls back every write of the branch when one of its puts names an unknown lease', async () => {
      await store.put('/keep', bytes('1'));
      const err = await rejection(
        store.txn({
          success: [
            { type: 'delete', key: '/keep' },
            { type: 'put', key: '/a', value: bytes('1') },
            { type: 'put', key: '/b', value: bytes('1'), lease: '999999' },
          ],
        }),
      );
      expect(err.code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
      expect(await store.get('/a')).toBeNull();
      expect(await store.get('/keep')).not.toBeNull();
      expect(await store.revision()).toBe(2);
    });

    it('refuses a branch that writes the same key twice, before applying anything', async () => {
      for (const success of [
        [
          { type: 'put', key: '/d', value: bytes('1') },
          { type: 'put', key: '/d', value: bytes('2') },
        ],
        [
          { type: 'delete', key: '/d' },
          { type: 'put', key: '/d', value: bytes('2') },
        ],
        [
          { type: 'put', key: '/d/1', value: bytes('2') },
          { type: 'deletePrefix', prefix: '/d/' },
        ],
      ] as const) {
        expect((await rejection(store.txn({ success }))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      }
      expect(await store.revision()).toBe(1);
    });

    it('does not raise the revision for a txn that changes nothing', async () => {
      await store.put('/a', bytes('1'));
      const result = await store.txn({ success: [{ type: 'get', key: '/a' }, { type: 'delete', key: '/missing' }] });
      expect(result).toMatchObject({ succeeded: true, revision: 2 });
      expect(result.results[1]).toEqual({ type: 'delete', deleted: 0 });
    });

    it('refuses more operations than the txn limit', async () => {
      await store.close();
      store = await open({ maxTxnOps: 2 });
      const success = [0, 1, 2].map((i) => ({ type: 'put' as const, key: `/o/${i}`, value: bytes('x') }));
      expect((await rejection(store.txn({ success }))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect((await store.txn({ success: success.slice(0, 2) })).succeeded).toBe(true);
    });
  });

  describe('watch', () => {
    it('streams puts and deletes of one key from now on, not of keys it prefixes', async () => {
      await store.put('/w', bytes('before'));
      const rec = new Recorder();
      await store.watch({ key: '/w' }, rec);
      await store.put('/w', bytes('1'));
      await store.put('/wx', bytes('other key'));
      await store.delete('/w');
      await rec.waitForEvents(2);
      expect(rec.summary).toEqual(['put /w=1@3', 'delete /w@5']);
    });

    it('delivers a delete as an etcd tombstone, with the deleted state as prevKv when asked', async () => {
      const put = await store.put('/t', bytes('gone'));
      const rec = new Recorder();
      await store.watch({ prefix: '/t' }, rec, { prevKv: true });
      const del = await store.delete('/t');
      await rec.waitForEvents(1);
      const event = rec.events[0]!;
      expect(event.type).toBe('delete');
      expect(event.kv).toEqual({
        key: '/t',
        value: Buffer.alloc(0),
        createRevision: 0,
        modRevision: del.revision,
        version: 0,
        lease: null,
      });
      expect(event.prevKv).toMatchObject({ key: '/t', value: bytes('gone'), modRevision: put.revision });
    });

    it('replays history from a past revision, then streams, in revision order without gap or duplicate', async () => {
      await store.put('/h/1', bytes('a')); // 2
      await store.put('/other', bytes('x')); // 3
      await store.put('/h/2', bytes('b')); // 4
      await store.delete('/h/1'); // 5
      const rec = new Recorder();
      await store.watch({ prefix: '/h/' }, rec, { startRevision: 3, prevKv: true });
      await store.put('/h/2', bytes('c')); // 6
      await rec.waitForEvents(3);
      expect(rec.summary).toEqual(['put /h/2=b@4', 'delete /h/1@5', 'put /h/2=c@6']);
      expect(rec.events[1]!.prevKv).toMatchObject({ value: bytes('a'), createRevision: 2 });
      expect(rec.events[2]!.prevKv).toMatchObject({ value: bytes('b'), version: 1 });
      const revisions = rec.responses.map((r) => r.revision);
      expect(revisions).toEqual([...revisions].sort((x, y) => x - y));
    });

    it('misses nothing between a list and a watch from its revision + 1', async () => {
      await store.put('/s/1', bytes('a'));
      const snapshot = await store.list('/s/');
      await store.put('/s/2', bytes('b')); // committed after the list, before the watch exists
      const rec = new Recorder();
      await store.watch({ prefix: '/s/' }, rec, { startRevision: snapshot.revision + 1 });
      await store.put('/s/3', bytes('c'));
      await rec.waitForEvents(2);
      expect(rec.summary).toEqual(['put /s/2=b@3', 'put /s/3=c@4']);
    });

    it('delivers the writes of one txn together in one response', async () => {
      const rec = new Recorder();
      await store.watch({ prefix: '/tx/' }, rec);
      await store.txn({
        success: [
          { type: 'put', key: '/tx/a', value: bytes('1') },
          { type: 'put', key: '/outside', value: bytes('1') },
          { type: 'put', key: '/tx/b', value: bytes('1') },
        ],
      });
      await rec.waitForEvents(2);
      expect(rec.responses).toHaveLength(1);
      expect(rec.responses[0]!.revision).toBe(2);
      expect(rec.summary).toEqual(['put /tx/a=1@2', 'put /tx/b=1@2']);
    });

    it('stops delivering after cancel', async () => {
      const cancelled = new Recorder();
      const control = new Recorder();
      const watch = await store.watch({ prefix: '/c/' }, cancelled);
      await store.watch({ prefix: '/c/' }, control);
      await store.put('/c/1', bytes('1'));
      await cancelled.waitForEvents(1);
      await watch.cancel();
      await store.put('/c/2', bytes('2'));
      await control.waitForEvents(2);
      expect(cancelled.summary).toEqual(['put /c/1=1@2']);
      expect(cancelled.errors).toEqual([]);
    });

    it('lets a listener write to the store from inside onEvents', async () => {
      const mirrored = new Recorder();
      await store.watch({ prefix: '/mirror/' }, mirrored);
      await store.watch(
        { prefix: '/src/' },
        {
          onEvents: (r) => {
            for (const e of r.events) void store.put(`/mirror/${e.kv.key.slice(5)}`, e.kv.value);
          },
        },
      );
      await store.put('/src/a', bytes('1'));
      await store.put('/src/b', bytes('2'));
      await mirrored.waitForEvents(2);
      expect(mirrored.summary.map((s) => s.replace(/@\d+$/, ''))).toEqual(['put /mirror/a=1', 'put /mirror/b=2']);
    });

    it('cancels a watch whose listener throws and reports it through onError', async () => {
      const errors: Error[] = [];
      let calls = 0;
      await store.watch(
        { prefix: '/boom/' },
        {
          onEvents: () => {
            calls++;
            throw new Error('listener bug');
          },
          onError: (e) => errors.push(e),
        },
      );
      await store.put('/boom/1', bytes('1'));
      await until(() => errors.length === 1, 'onError');
      await store.put('/boom/2', bytes('2'));
      await new Promise<void>((resolve) => setImmediate(resolve));
      expect(calls).toBe(1);
      expect((errors[0] as MetadataError).code).toBe('LL_ERR_METADATA_WATCH_LISTENER');
      expect((errors[0] as MetadataError).cause).toMatchObject({ message: 'listener bug' });
    });

    it('refuses a start revision older than the compaction point and accepts one at it', async () => {
      for (let i = 0; i < 5; i++) await store.put('/cp', bytes(String(i))); // revisions 2..6
      await store.compact(4);
      const err = await rejection(store.watch({ key: '/cp' }, new Recorder(), { startRevision: 3 }));
      expect(err.code).toBe('LL_ERR_METADATA_COMPACTED');
      expect(err.context).toMatchObject({ compactRevision: 4, requestedRevision: 3 });
      const rec = new Recorder();
      await store.watch({ key: '/cp' }, rec, { startRevision: 4 });
      await rec.waitForEvents(3);
      expect(rec.summary).toEqual(['put /cp=2@4', 'put /cp=3@5', 'put /cp=4@6']);
      // Compaction keeps the current state of every key.
      expect((await store.get('/cp'))?.value.toString()).toBe('4');
    });

    it('refuses to compact at or below the compaction point or ahead of the current revision', async () => {
      await store.put('/a', bytes('1'));
      await store.put('/a', bytes('2'));
      await store.compact(2);
      expect((await rejection(store.compact(2))).code).toBe('LL_ERR_METADATA_COMPACTED');
      expect((await rejection(store.compact(4))).code).toBe('LL_ERR_METADATA_FUTURE_REVISION');
    });

    it('compacts history by itself beyond the retention, keeping the most recent revisions watchable', async () => {
      await store.close();
      store = await open({ historyRetention: 10 });
      for (let i = 0; i < 30; i++) await store.put('/ret', bytes(String(i))); // revisions 2..31
      const current = await store.revision();
      const old = await rejection(store.watch({ key: '/ret' }, new Recorder(), { startRevision: 2 }));
      expect(old.code).toBe('LL_ERR_METADATA_COMPACTED');
      const rec = new Recorder();
      await store.watch({ key: '/ret' }, rec, { startRevision: current - 9 });
      await rec.waitForEvents(10);
      expect(rec.events[0]!.kv.modRevision).toBe(current - 9);
    });
  });

  describe('leases', () => {
    it('grants a lease and lists the keys attached to it with the time left', async () => {
      const lease = await store.grantLease(10);
      expect(lease.ttl).toBe(10);
      await store.put('/l/b', bytes('1'), { lease: lease.id });
      await store.put('/l/a', bytes('1'), { lease: lease.id });
      expect((await store.get('/l/a'))?.lease).toBe(lease.id);
      clock.advance(2_500);
      expect(await store.leaseTimeToLive(lease.id)).toEqual({ id: lease.id, ttl: 8, grantedTtl: 10, keys: ['/l/a', '/l/b'] });
    });

    it('deletes the attached keys in one revision with delete events when the lease expires', async () => {
      const lease = await store.grantLease(10);
      await store.put('/own/p0', bytes('b1'), { lease: lease.id });
      await store.put('/own/p1', bytes('b1'), { lease: lease.id });
      await store.put('/own/p2', bytes('free'));
      const rec = new Recorder();
      await store.watch({ prefix: '/own/' }, rec);
      clock.advance(9_999);
      expect(await store.get('/own/p0')).not.toBeNull();
      clock.advance(1);
      await rec.waitForEvents(2);
      expect(rec.summary).toEqual(['delete /own/p0@5', 'delete /own/p1@5']);
      expect(rec.responses).toHaveLength(1);
      expect((await store.list('/own/')).kvs.map((kv) => kv.key)).toEqual(['/own/p2']);
      expect(await store.leaseTimeToLive(lease.id)).toBeNull();
      expect((await rejection(store.keepAliveLease(lease.id))).code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
      expect((await rejection(store.put('/own/p3', bytes('x'), { lease: lease.id }))).code).toBe(
        'LL_ERR_METADATA_LEASE_NOT_FOUND',
      );
    });

    it('expires leases that fall due together in the order of their deadlines, whatever the order they were granted in', async () => {
      const later = await store.grantLease(2);
      const sooner = await store.grantLease(1);
      await store.put('/due/later', bytes('1'), { lease: later.id });
      await store.put('/due/sooner', bytes('1'), { lease: sooner.id });
      const rec = new Recorder();
      await store.watch({ prefix: '/due/' }, rec);
      clock.advance(2_000); // both deadlines pass in one step
      await rec.waitForEvents(2);
      expect(rec.summary).toEqual(['delete /due/sooner@4', 'delete /due/later@5']);
    });

    it('postpones expiry on keep-alive', async () => {
      const lease = await store.grantLease(10);
      await store.put('/ka', bytes('1'), { lease: lease.id });
      clock.advance(6_000);
      expect(await store.keepAliveLease(lease.id)).toEqual({ id: lease.id, ttl: 10 });
      clock.advance(6_000);
      expect(await store.get('/ka')).not.toBeNull();
      clock.advance(4_000);
      expect(await store.get('/ka')).toBeNull();
    });

    it('deletes the keys at once on revoke and returns the revision of the deletion', async () => {
      const lease = await store.grantLease(60);
      await store.put('/rv/1', bytes('1'), { lease: lease.id });
      const { revision } = await store.revokeLease(lease.id);
      expect(revision).toBe(3);
      expect(await store.get('/rv/1')).toBeNull();
      expect((await rejection(store.revokeLease(lease.id))).code).toBe('LL_ERR_METADATA_LEASE_NOT_FOUND');
    });

    it('detaches a key put again without the lease, so it outlives the lease', async () => {
      const lease = await store.grantLease(5);
      await store.put('/det', bytes('1'), { lease: lease.id });
      await store.put('/det', bytes('2'));
      expect((await store.get('/det'))?.lease).toBeNull();
      clock.advance(5_000);
      expect((await store.get('/det'))?.value.toString()).toBe('2');
    });

    it('does not raise the revision when a lease without keys ends', async () => {
      const lease = await store.grantLease(5);
      await store.put('/a', bytes('1'));
      expect(await store.revokeLease(lease.id)).toEqual({ revision: 2 });
    });

    it('rejects a put with a lease that was never granted, and malformed lease ids', async () => {
      expect((await rejection(store.put('/x', bytes('1'), { lease: '12345' }))).code).toBe(
        'LL_ERR_METADATA_LEASE_NOT_FOUND',
      );
      expect((await rejection(store.put('/x', bytes('1'), { lease: 'abc' }))).code).toBe(
        'LL_ERR_METADATA_INVALID_ARGUMENT',
      );
      expect((await rejection(store.grantLease(0))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect((await rejection(store.grantLease(1.5))).code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect(await store.get('/x')).toBeNull();
    });

    it('gives a key put in a txn with a lease the lease, and a CAS can attach one too', async () => {
      const lease = await store.grantLease(5);
      await store.txn({ success: [{ type: 'put', key: '/tl', value: bytes('1'), lease: lease.id }] });
      const cas = await store.compareAndSet('/tc', { modRevision: 0 }, bytes('1'), { lease: lease.id });
      expect(cas.succeeded).toBe(true);
      clock.advance(5_000);
      expect(await store.get('/tl')).toBeNull();
      expect(await store.get('/tc')).toBeNull();
    });
  });

  describe('durability', () => {
    it('finds keys, versions, revision and watch history again after close and reopen', async () => {
      await store.put('/d/a', bytes('1'));
      await store.put('/d/a', bytes('2'));
      await store.txn({
        success: [
          { type: 'put', key: '/d/b', value: bytes('3') },
          { type: 'delete', key: '/d/a' },
        ],
      });
      await store.put('/d/c', Buffer.from([0xff, 0x00]));
      const before = await store.list('');
      await store.close();

      store = await open();
      const after = await store.list('');
      expect(after).toEqual(before);
      expect(await store.revision()).toBe(5);
      const rec = new Recorder();
      await store.watch({ prefix: '/d/' }, rec, { startRevision: 2 });
      await rec.waitForEvents(5);
      expect(rec.summary).toEqual(['put /d/a=1@2', 'put /d/a=2@3', 'put /d/b=3@4', 'delete /d/a@4', 'put /d/c=\ufffd\u0000@5']);
      expect((await store.put('/d/e', bytes('x'))).revision).toBe(6);
    });

    it('keeps leases across reopen with a full TTL from the reopen and never reuses a lease id', async () => {
      const lease = await store.grantLease(10);
      await store.put('/dl', bytes('1'), { lease: lease.id });
      clock.advance(8_000);
      await store.close();

      store = await open();
      clock.advance(8_000); // 16 s after the grant, 8 s after the reopen: still alive
      expect(await store.get('/dl')).not.toBeNull();
      expect((await store.leaseTimeToLive(lease.id))?.keys).toEqual(['/dl']);
      const another = await store.grantLease(10);
      expect(another.id).not.toBe(lease.id);
      clock.advance(2_000);
      expect(await store.get('/dl')).toBeNull();
    });

    it('rejects every call after close and ends open watches with LL_ERR_METADATA_CLOSED', async () => {
      const rec = new Recorder();
      await store.watch({ prefix: '/' }, rec);
      await store.put('/last', bytes('1'));
      await store.close();
      await until(() => rec.errors.length === 1, 'the watch to end');
      expect(rec.summary).toEqual(['put /last=1@2']); // what was committed before close is still delivered
      expect((rec.errors[0] as MetadataError).code).toBe('LL_ERR_METADATA_CLOSED');
      expect((await rejection(store.get('/last'))).code).toBe('LL_ERR_METADATA_CLOSED');
      expect((await rejection(store.put('/x', bytes('1')))).code).toBe('LL_ERR_METADATA_CLOSED');
      store = await open();
      expect((await store.get('/last'))?.value.toString()).toBe('1');
    });

    it('refuses a second store on the same storage while the first is open', async () => {
      expect((await rejection(open())).code).toBe('LL_ERR_METADATA_LOCKED');
      expect(await store.revision()).toBe(1);
    });

    it.runIf(engine.survivesProcessKill)(
      'keeps every acknowledged write, and each txn whole or not at all, after the writer is killed with SIGKILL',
      async () => {
        await store.close();
        const dir = join(instance.dir!, 'metadata');
        const acked: Array<{ step: number; revision: number }> = [];
        const child = spawn(process.execPath, ['--import', 'tsx', crashWriter, dir], {
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        let pending = '';
        child.stdout.on('data', (d: Buffer) => {
          pending += d.toString();
          const lines = pending.split('\n');
          pending = lines.pop()!;
          for (const line of lines) {
            const m = /^ack (\d+) (\d+)$/.exec(line);
            if (m) acked.push({ step: Number(m[1]), revision: Number(m[2]) });
          }
        });
        // 'close' comes after stdout has drained: every ack the child printed before dying has been read.
        const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, signal) => resolve(signal)));
        try {
          // Kill at a moment that does not line up with a step boundary.
          const target = 100 + Math.floor(Math.random() * 100);
          await until(() => acked.length >= target || child.exitCode !== null, `${target} acknowledged steps`, 20_000);
          expect(child.exitCode, stderr).toBeNull();
          child.kill('SIGKILL');
          expect(await closed).toBe('SIGKILL');
        } finally {
          child.kill('SIGKILL');
        }

        store = await open();
        const last = acked.at(-1)!;
        expect(await store.revision()).toBeGreaterThanOrEqual(last.revision);
        const a = (await store.list('/crash/a/')).kvs.map((kv) => Number(kv.value.toString()));
        const b = (await store.list('/crash/b/')).kvs.map((kv) => Number(kv.value.toString()));
        // Every acknowledged step is there; at most the step in flight went further; no txn was torn.
        expect(a.length).toBeGreaterThanOrEqual(last.step + 1);
        expect(a.length).toBeLessThanOrEqual(last.step + 2);
        expect(a).toEqual(a.map((_, i) => i));
        expect(b).toEqual(a);
        const count = Number((await store.get('/crash/count'))!.value.toString());
        expect(count).toBeGreaterThanOrEqual(last.step);
        for (const { step, revision } of acked.slice(-20)) {
          const key = `/crash/a/${String(step).padStart(8, '0')}`;
          expect((await store.get(key))?.modRevision).toBe(revision - 1);
        }
        // The reopened store goes on from where the history ends.
        const next = await store.put('/after-crash', bytes('1'));
        expect(next.revision).toBe((await store.list('')).revision);
      },
      30_000,
    );
  });
});
