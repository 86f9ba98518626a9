import { describe, expect, it } from 'vitest';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import { ProducerIdAllocator } from '../../../src/cluster/producer-state.js';

describe('ProducerIdAllocator', () => {
  it('hands out distinct ids, also across a restart on the same store', async () => {
    const store = await openMemoryMetadataStore();
    const a = new ProducerIdAllocator(store);
    const first = await Promise.all(Array.from({ length: 20 }, () => a.allocate()));
    expect(new Set(first).size).toBe(20);
    const b = new ProducerIdAllocator(store);
    const second = await Promise.all(Array.from({ length: 5 }, () => b.allocate()));
    for (const id of second) expect(first).not.toContain(id);
    await store.close();
  });
});
