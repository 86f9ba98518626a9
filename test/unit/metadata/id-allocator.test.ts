import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { allocateIds, openMemoryMetadataStore, type MetadataStore } from '../../../src/metadata/index.js';
import { bytes } from './support.js';

describe('allocateIds', () => {
  let store: MetadataStore;

  beforeEach(async () => {
    store = await openMemoryMetadataStore();
  });

  afterEach(async () => {
    await store.close();
  });

  it('hands out consecutive blocks starting at 1 and stores the next free id', async () => {
    expect(await allocateIds(store, '/ids/ledger')).toEqual({ first: 1, count: 1 });
    expect(await allocateIds(store, '/ids/ledger', 100)).toEqual({ first: 2, count: 100 });
    expect((await store.get('/ids/ledger'))?.value.toString()).toBe('102');
  });

  it('never hands the same id to concurrent allocators', async () => {
    const blocks = await Promise.all(Array.from({ length: 12 }, (_, i) => allocateIds(store, '/ids/ledger', i + 1)));
    const ids = blocks.flatMap((b) => Array.from({ length: b.count }, (_, i) => b.first + i));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort((x, y) => x - y)).toEqual(Array.from({ length: ids.length }, (_, i) => i + 1));
  });

  it('gives up with LL_ERR_METADATA_CONFLICT when it keeps losing the race', async () => {
    const rival = { ...store, compareAndSet: store.compareAndSet.bind(store), get: store.get.bind(store) };
    let n = 0;
    rival.compareAndSet = async (key, _expect, value) => {
      await store.put(key, bytes(String(1000 + n++))); // someone else always gets there first
      return store.compareAndSet(key, { modRevision: 0 }, value);
    };
    await expect(allocateIds(rival as MetadataStore, '/ids/x', 1, 3)).rejects.toMatchObject({
      code: 'LL_ERR_METADATA_CONFLICT',
    });
  });

  it('refuses a counter that does not hold a number', async () => {
    await store.put('/ids/bad', bytes('twelve'));
    await expect(allocateIds(store, '/ids/bad')).rejects.toMatchObject({ code: 'LL_ERR_METADATA_FORMAT' });
  });
});
