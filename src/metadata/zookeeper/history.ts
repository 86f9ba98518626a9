/**
 * Reading the ZooKeeper metadata store's history znodes (`/history/<revision>`, codec.ts) for watch replay,
 * and the small helpers the store's reads share.
 */
import type { StoredEvent } from '../backend.js';
import { MetadataCompactedError } from '../errors.js';
import type { WatchTarget } from '../types.js';
import type { ZooKeeperClient } from '../../zookeeper/client.js';
import { ZooKeeperNoNodeError } from '../../zookeeper/errors.js';
import { decodeHistory, historyName } from './codec.js';

/** Reads in flight at once (one round trip's worth). */
export const READ_BATCH = 128;

export const historyPath = (revision: number): string => `/history/${historyName(revision)}`;

/** Runs `fn` over `items` at most `width` at a time; results in order. */
export async function inBatches<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

/** A catch handler that turns one error class into `undefined` and rethrows the rest. */
export function ignore(cls: new (...args: never[]) => Error): (err: unknown) => undefined {
  return (err: unknown) => {
    if (err instanceof cls) return undefined;
    throw err;
  };
}

/**
 * The events of revisions [from, to] that match `target`, by revision. With `prevKv`, each event's previous
 * value is read from the revision that wrote it (history keeps previous states without their values); a
 * revision compacted away fails the replay with LL_ERR_METADATA_COMPACTED, as etcd fails a watch whose
 * history is gone.
 */
export async function readHistory(
  zk: ZooKeeperClient,
  from: number,
  to: number,
  target: WatchTarget,
  prevKv: boolean,
  compactRevision: () => Promise<number>,
): Promise<Array<[number, StoredEvent[]]>> {
  const matches = (key: string): boolean => ('key' in target ? key === target.key : key.startsWith(target.prefix));
  // Revision 1 is the empty store's: no change, no history znode.
  const revisions: number[] = [];
  for (let r = Math.max(2, from); r <= to; r++) revisions.push(r);
  const byRevision = new Map<number, StoredEvent[]>();
  const read = async (r: number): Promise<StoredEvent[]> => {
    const known = byRevision.get(r);
    if (known) return known;
    const got = await zk.get(historyPath(r)).catch(ignore(ZooKeeperNoNodeError));
    if (got === undefined) throw new MetadataCompactedError(from, await compactRevision());
    const { events } = decodeHistory(got.data, r, historyPath(r));
    byRevision.set(r, events);
    return events;
  };
  await inBatches(revisions, READ_BATCH, read);
  const out: Array<[number, StoredEvent[]]> = [];
  for (const r of revisions) {
    const events = byRevision.get(r)!.filter((e) => matches(e.kv.key));
    if (events.length === 0) continue;
    if (prevKv) {
      for (let i = 0; i < events.length; i++) {
        const e = events[i]!;
        if (e.prev === null) continue;
        const source = (await read(e.prev.modRevision)).find((x) => x.kv.key === e.kv.key && x.type === 'put');
        if (source === undefined) throw new MetadataCompactedError(from, await compactRevision());
        events[i] = { ...e, prev: { ...e.prev, value: source.kv.value } };
      }
    }
    out.push([r, events]);
  }
  return out;
}
