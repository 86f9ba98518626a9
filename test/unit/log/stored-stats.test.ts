/**
 * The stats of partition logs that are not open, read from the chain and the ledger store alone
 * (src/log/stored-stats.ts), over the real local ledger store and SQLite metadata store in a temp dir: the
 * same size, ledgers and offsets the opened log reports, for a log closed gracefully and one whose owner
 * stopped without closing (its last ledger still open in the chain), without taking either over.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ChainKeys, loadChain } from '../../../src/log/chain.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { readStoredPartitionStats } from '../../../src/log/stored-stats.js';
import { buildBatch, openDiskStores, removeDir, tempDir, type Stores } from './support.js';

describe('stored partition stats', () => {
  let dir: string | undefined;
  let stores: Stores | undefined;
  afterEach(async () => {
    await stores?.close();
    stores = undefined;
    if (dir) removeDir(dir);
    dir = undefined;
  });

  const open = (s: Stores, topic: string, partition: number): Promise<PartitionLog> =>
    PartitionLog.open({ topic, partition, ledgers: s.ledgers, metadata: s.metadata, config: { segmentEntries: 3 }, retentionCheckIntervalMs: 0, onBackgroundError: () => undefined });

  it('reports the size, ledgers and offsets an opened log reports, for a closed log and one left open, without opening them', async () => {
    dir = tempDir('ll-stored-stats-');
    stores = await openDiskStores(dir);
    // orders-0: several sealed ledgers (3 batches each), DeleteRecords moved its start, closed gracefully.
    const closed = await open(stores, 'orders', 0);
    for (let i = 0; i < 8; i++) await closed.append(buildBatch(2, { valueBytes: 50 + i }));
    await closed.deleteRecords(7);
    await closed.close();
    // orders-1: written and never closed, as after a SIGKILL: the chain's last ledger is still open.
    const left = await open(stores, 'orders', 1);
    for (let i = 0; i < 4; i++) await left.append(buildBatch(1, { valueBytes: 100 }));
    const figures = (log: PartitionLog) => ({ sizeInBytes: log.stats.sizeInBytes, ledgers: log.stats.ledgers, logStartOffset: log.logStartOffset, logEndOffset: log.logEndOffset });
    const expected = new Map([
      [0, figures(closed)],
      [1, figures(left)],
    ]);
    expect(expected.get(0)!.ledgers).toBeGreaterThan(1);
    expect(expected.get(0)!.sizeInBytes).toBeGreaterThan(0);
    expect(expected.get(0)!.logStartOffset).toBe(7);
    // A topic whose name extends the other's: its keys are not the first topic's.
    const other = await open(stores, 'orders-eu', 0);
    await other.append(buildBatch(1));
    await other.close();
    await stores.close();

    stores = await openDiskStores(dir);
    const headBefore = await loadChain(stores.metadata, new ChainKeys('orders', 1));
    expect(headBefore.ledgers.at(-1)!.state).toBe('open');

    const stats = await readStoredPartitionStats(stores.metadata, stores.ledgers, { topics: ['orders'], endOffsets: true });
    expect([...stats.keys()]).toEqual(['orders']);
    const orders = stats.get('orders')!;
    expect([...orders.keys()].sort()).toEqual([0, 1]);
    for (const [p, want] of expected) {
      const got = orders.get(p)!;
      expect(got).toEqual(want);
    }

    // Nothing was taken over: the head and the open ledger are as the previous owner left them.
    const headAfter = await loadChain(stores.metadata, new ChainKeys('orders', 1));
    expect(headAfter.head!.modRevision).toBe(headBefore.head!.modRevision);
    expect((await stores.ledgers.getMetadata(headAfter.ledgers.at(-1)!.ledgerId)).state).toBe('open');

    // Without end offsets, and one scan of every partition, filtered.
    const all = await readStoredPartitionStats(stores.metadata, stores.ledgers, { include: (t, p) => !(t === 'orders' && p === 0) });
    expect([...all.keys()].sort()).toEqual(['orders', 'orders-eu']);
    expect([...all.get('orders')!.keys()]).toEqual([1]);
    expect(all.get('orders')!.get(1)!.sizeInBytes).toBe(expected.get(1)!.sizeInBytes);
    expect(all.get('orders')!.get(1)!.logEndOffset).toBeNull();
    expect(all.get('orders-eu')!.get(0)!.sizeInBytes).toBe(buildBatch(1).length);

    // The log, once opened, reports the size and offsets read without opening it (its takeover adds a ledger).
    for (const [p, want] of expected) {
      const log = await open(stores, 'orders', p);
      expect({ ...figures(log), ledgers: want.ledgers }).toEqual(want);
      await log.close();
    }
  });

  it('leaves out partitions with no stored key and unknown topics', async () => {
    dir = tempDir('ll-stored-stats-');
    stores = await openDiskStores(dir);
    const log = await open(stores, 'a', 2);
    await log.close();
    const stats = await readStoredPartitionStats(stores.metadata, stores.ledgers, { topics: ['a', 'nope'], endOffsets: true });
    expect([...stats.keys()]).toEqual(['a']);
    expect([...stats.get('a')!]).toEqual([[2, { sizeInBytes: 0, ledgers: 1, logStartOffset: 0, logEndOffset: 0 }]]);
  });
});
