/**
 * Cluster-wide id counters (ledger ids, …) on a MetadataStore key. The key holds the next unallocated id
 * in decimal ASCII; allocating is a compare-and-set on its modRevision, retried when another allocator got
 * there first, so two brokers never receive the same id. Ask for a block (`count` > 1) and hand ids out
 * locally to pay one metadata write per block instead of one per id.
 */

import { MetadataConflictError, MetadataFormatError, MetadataInvalidArgumentError } from './errors.js';
import type { KeyValue, MetadataStore } from './types.js';

export interface IdBlock {
  /** First id of the block; the block is [first, first + count). */
  readonly first: number;
  readonly count: number;
}

/** The first id a counter hands out. */
export const FIRST_ID = 1;

function nextIdOf(kv: KeyValue | null, key: string): number {
  if (kv === null) return FIRST_ID;
  const text = kv.value.toString('ascii');
  const n = Number(text);
  if (!/^[0-9]{1,16}$/.test(text) || !Number.isSafeInteger(n)) {
    throw new MetadataFormatError(`id counter ${key} holds ${JSON.stringify(text)}`, { key });
  }
  return n;
}

export async function allocateIds(store: MetadataStore, key: string, count = 1, maxAttempts = 64): Promise<IdBlock> {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new MetadataInvalidArgumentError('id block size must be a positive integer', { count });
  }
  let current = await store.get(key);
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    const first = nextIdOf(current, key);
    if (!Number.isSafeInteger(first + count)) {
      throw new MetadataInvalidArgumentError(`id counter ${key} would pass 2^53`, { key, first, count });
    }
    const result = await store.compareAndSet(
      key,
      { modRevision: current?.modRevision ?? 0 },
      Buffer.from(String(first + count), 'ascii'),
    );
    if (result.succeeded) return { first, count };
    current = result.current;
  }
  throw new MetadataConflictError(key, maxAttempts);
}

/**
 * Moves the counter past `id`, so that no later allocation hands it out (ids another cluster allocated that now
 * live here: a mirror topic's producers). Nothing changes when the counter is past it already.
 */
export async function reserveIdsThrough(store: MetadataStore, key: string, id: number, maxAttempts = 64): Promise<void> {
  if (!Number.isSafeInteger(id) || id < 0 || !Number.isSafeInteger(id + 1)) {
    throw new MetadataInvalidArgumentError('an id to reserve must be a non-negative safe integer', { id });
  }
  let current = await store.get(key);
  for (let attempt = 0; attempt < maxAttempts; attempt++) {
    if (nextIdOf(current, key) > id) return;
    const result = await store.compareAndSet(key, { modRevision: current?.modRevision ?? 0 }, Buffer.from(String(id + 1), 'ascii'));
    if (result.succeeded) return;
    current = result.current;
  }
  throw new MetadataConflictError(key, maxAttempts);
}
