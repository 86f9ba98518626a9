import { describe, expect, it } from 'vitest';
import { findUnreferencedLedgers } from '../../../src/log/orphans.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { MemoryStores, buildBatch } from './support.js';

describe('unreferenced ledgers', () => {
  it('reports ledgers no chain names (a crash between creating and recording one), not the chains’ own', async () => {
    const stores = await new MemoryStores().open();
    try {
      const logs = await Promise.all(
        [0, 1].map((partition) =>
          PartitionLog.open({ topic: 't', partition, ledgers: stores.ledgers, metadata: stores.metadata, config: { segmentEntries: 2 } }),
        ),
      );
      for (const log of logs) for (let i = 0; i < 5; i++) await log.append(buildBatch(1));
      for (const log of logs) await log.close();
      const stray = await stores.ledgers.create();
      await stray.append(buildBatch(1));
      const found = await findUnreferencedLedgers(stores.ledgers, stores.metadata, { olderThanMs: 0, now: Date.now() + 1 });
      expect(found.map((m) => m.ledgerId)).toEqual([stray.ledgerId]);
      expect(await findUnreferencedLedgers(stores.ledgers, stores.metadata, { olderThanMs: 60_000 })).toEqual([]);
    } finally {
      await stores.close();
    }
  });
});
