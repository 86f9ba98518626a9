/**
 * Every key under a prefix, read page by page (a store answers a list with at most `limit` keys and `more` when
 * there are others).
 */
import type { KeyValue, MetadataStore } from './types.js';

const PAGE = 1000;

/** The pages of one read: not one snapshot, each page at a revision no older than the one before. */
export interface PagedRead {
  readonly kvs: KeyValue[];
  /** The first page's revision: a watch from `first + 1` misses nothing the read did not see. */
  readonly first: number;
  /** The last page's revision: every key's state in the read is at most this new. */
  readonly last: number;
}

export async function readPages(store: Pick<MetadataStore, 'list'>, prefix: string, pageSize = PAGE): Promise<PagedRead> {
  const kvs: KeyValue[] = [];
  let first = -1;
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? { limit: pageSize } : { limit: pageSize, startAfter: after });
    if (first < 0) first = page.revision;
    kvs.push(...page.kvs);
    if (!page.more || page.kvs.length === 0) return { kvs, first, last: page.revision };
    after = page.kvs[page.kvs.length - 1]!.key;
  }
}

export async function listAll(store: Pick<MetadataStore, 'list'>, prefix: string): Promise<KeyValue[]> {
  return (await readPages(store, prefix)).kvs;
}
