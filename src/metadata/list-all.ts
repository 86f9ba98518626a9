/**
 * Every key under a prefix, read page by page (a store answers a list with at most `limit` keys and `more` when
 * there are others): what a component that follows a kind of record reads once its watch is in place.
 */
import type { KeyValue, MetadataStore } from './types.js';

const PAGE = 1000;

export async function listAll(store: Pick<MetadataStore, 'list'>, prefix: string): Promise<KeyValue[]> {
  const out: KeyValue[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.list(prefix, after === undefined ? { limit: PAGE } : { limit: PAGE, startAfter: after });
    out.push(...page.kvs);
    if (!page.more || page.kvs.length === 0) return out;
    after = page.kvs[page.kvs.length - 1]!.key;
  }
}
