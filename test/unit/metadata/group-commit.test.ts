/**
 * The embedded store's group commit (local-store.ts): the kv writes called in one turn of the event loop are
 * committed by one backend commit (one WAL fsync on SQLite), each at its own revision, in call order; a write
 * whose own rule fails (a lease gone) fails alone; any other call first commits what is queued.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StorageBackend } from '../../../src/metadata/backend.js';
import { LocalMetadataStore } from '../../../src/metadata/local-store.js';
import { SqliteBackend } from '../../../src/metadata/sqlite-backend.js';
import type { WatchEvent } from '../../../src/metadata/types.js';
import { bytes, tempDir } from './support.js';

/** Counts the backend's commits: its outermost `atomically` calls. */
function counted(inner: StorageBackend): { backend: StorageBackend; commits: () => number } {
  let commits = 0;
  let depth = 0;
  const backend = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'atomically') return value.bind(target);
      return <T>(fn: () => T): T => {
        depth++;
        try {
          const result = (value as StorageBackend['atomically']).call(target, fn) as T;
          if (depth === 1) commits++;
          return result;
        } finally {
          depth--;
        }
      };
    },
  });
  return { backend, commits: () => commits };
}

describe('metadata store group commit', () => {
  let root: string;
  beforeEach(() => {
    root = tempDir('group-commit');
  });
  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('commits the writes of one turn with one SQLite commit, each at its own revision, and fails only the one whose lease is gone', async () => {
    const { backend, commits } = counted(SqliteBackend.open(join(root, 'metadata')));
    const store = LocalMetadataStore.open(backend);
    const events: WatchEvent[] = [];
    await store.watch({ key: '/k/050' }, { onEvents: (r) => events.push(...r.events) });
    const start = await store.revision();
    const before = commits();
    const writes = Array.from({ length: 100 }, (_, i) => store.put(`/k/${String(i).padStart(3, '0')}`, bytes(`v${i}`)));
    const leased = store.put('/leased', bytes('x'), { lease: '999' });
    const cas = store.txn({ compare: [{ key: '/k/000', target: 'version', op: '==', value: 1 }], success: [{ type: 'put', key: '/k/000', value: bytes('again') }] });
    const results = await Promise.all(writes);
    await expect(leased).rejects.toMatchObject({ code: 'LL_ERR_METADATA_LEASE_NOT_FOUND' });
    // The txn sees the put of /k/000 called before it.
    expect((await cas).succeeded).toBe(true);
    expect(commits() - before).toBe(1);
    expect(results.map((r) => r.revision)).toEqual(Array.from({ length: 100 }, (_, i) => start + 1 + i));
    expect((await store.get('/k/000'))?.value.toString()).toBe('again');
    expect(await store.revision()).toBe(start + 101);
    expect(events.map((e) => e.kv.value.toString())).toEqual(['v50']);
    await store.close();

    // Durable: a new store on the file has them all.
    const again = LocalMetadataStore.open(SqliteBackend.open(join(root, 'metadata')));
    expect((await again.list('/k/')).kvs).toHaveLength(100);
    expect(await again.get('/leased')).toBeNull();
    await again.close();
  });

  it('commits what is queued before a read, so a read sees every write called before it', async () => {
    const { backend, commits } = counted(SqliteBackend.open(join(root, 'metadata')));
    const store = LocalMetadataStore.open(backend);
    const before = commits();
    const put = store.put('/a', bytes('1'));
    const read = store.get('/a');
    expect((await read)?.value.toString()).toBe('1');
    expect((await put).revision).toBe((await read)!.modRevision);
    expect(commits() - before).toBe(1);
    await store.close();
  });
});
