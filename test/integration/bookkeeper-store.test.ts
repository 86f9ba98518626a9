/**
 * The BookKeeper ledger store on 3 real bookies (BookKeeper 4.17.3, ZooKeeper 3.9.5 from compat/cluster):
 * what it writes BookKeeper's own client reads (entries, digests, metadata), and what BookKeeper's client
 * writes it reads. Skipped without the BookKeeper classpath unless LEDGERLINE_REQUIRE_BOOKKEEPER=1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookKeeperClasspath, requireBookKeeper, startDevCluster, type DevCluster } from '../../compat/cluster/index.js';
import { BookKeeperLedgerStore } from '../../src/ledger/bookkeeper/store.js';
import { bkTool, storeOptions } from '../support/bk-tool.js';

const available = bookKeeperClasspath() !== undefined;
if (!available && requireBookKeeper()) {
  describe('bookkeeper store', () => {
    it('finds the BookKeeper classpath', () => {
      expect.fail('LEDGERLINE_REQUIRE_BOOKKEEPER=1 but compat/bookkeeper is not built');
    });
  });
}


describe.skipIf(!available)('bookkeeper store on 3 bookies', () => {
  let cluster: DevCluster;
  let store: BookKeeperLedgerStore;
  beforeAll(async () => {
    cluster = await startDevCluster({ bookies: 3 });
    store = await BookKeeperLedgerStore.open(storeOptions(cluster.metadataServiceUri));
  }, 180_000);
  afterAll(async () => {
    await store?.close();
    await cluster?.stop();
  }, 60_000);

  it("writes entries and metadata that BookKeeper's own client reads back", async () => {
    const w = await store.create();
    const payloads = Array.from({ length: 30 }, (_, i) => Buffer.from(`ledgerline entry ${i} `.repeat(1 + (i % 7))));
    const ids = await Promise.all(payloads.map((p) => w.append(p)));
    expect(ids).toEqual(payloads.map((_, i) => i));
    expect((await store.read(w.ledgerId, 0, 29)).map((e) => e.data.toString())).toEqual(payloads.map((p) => p.toString()));
    const sealed = await w.seal();
    const total = payloads.reduce((n, p) => n + p.length, 0);
    expect(sealed).toMatchObject({ state: 'sealed', lastAddConfirmed: 29, length: total });
    const [meta] = await bkTool(cluster.metadataServiceUri, ['meta', String(w.ledgerId)]);
    expect(meta).toMatchObject({ state: 'CLOSED', lastEntryId: 29, length: total, ensembleSize: 3, writeQuorumSize: 3, ackQuorumSize: 2, digestType: 'CRC32C', metadataFormatVersion: 3 });
    expect((meta.customMetadata as Record<string, string>).application).toBe('ledgerline');
    const read = await bkTool(cluster.metadataServiceUri, ['read', String(w.ledgerId)]);
    expect(read.map((e) => Buffer.from(e.hex as string, 'hex').toString())).toEqual(payloads.map((p) => p.toString()));
    expect((await bkTool(cluster.metadataServiceUri, ['list'])).map((m) => m.ledgerId)).toContain(w.ledgerId);
  }, 120_000);

  it("reads a ledger BookKeeper's own client wrote, and its metadata as BookKeeper reports it", async () => {
    const [written] = await bkTool(cluster.metadataServiceUri, ['write', '--ensemble', '3', '--write-quorum', '2', '--ack-quorum', '2', '--entries', '25', '--entry-size', '300', '--custom', 'application=ledgerline']);
    const id = written.ledgerId as number;
    const meta = await store.getMetadata(id);
    const [theirs] = await bkTool(cluster.metadataServiceUri, ['meta', String(id)]);
    expect(meta).toMatchObject({ ledgerId: id, state: 'sealed', lastAddConfirmed: theirs.lastEntryId, length: theirs.length, createdAtMs: theirs.ctime });
    const entries = await store.read(id, 0, 100);
    expect(entries.map((e) => e.data.subarray(0, 9).toString().replace(/\0+$/, ''))).toEqual(Array.from({ length: 25 }, (_, i) => `entry-${i}`));
    expect(entries.every((e) => e.data.length === 300)).toBe(true);
  }, 120_000);

  it('leaves ledgers without application=ledgerline alone', async () => {
    const [written] = await bkTool(cluster.metadataServiceUri, ['write', '--entries', '2']);
    const id = written.ledgerId as number;
    expect((await store.list()).map((m) => m.ledgerId)).not.toContain(id);
    await expect(store.delete(id)).rejects.toMatchObject({ code: 'LL_ERR_NO_SUCH_LEDGER' });
    await expect(store.fence(id)).rejects.toMatchObject({ code: 'LL_ERR_NO_SUCH_LEDGER' });
    expect((await bkTool(cluster.metadataServiceUri, ['meta', String(id)]))[0]).toMatchObject({ state: 'CLOSED' });
  }, 120_000);
});
