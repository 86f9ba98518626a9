/**
 * The development cluster (compat/cluster/): a real ZooKeeper 3.9 and three BookKeeper 4.17 bookies on
 * loopback. BookKeeper's own tools work on it (BookieShell simpletest with ensemble 3, write quorum 2, ack
 * quorum 2; BkTool writing and reading a ledger with BookKeeper's client); a bookie killed with SIGKILL leaves
 * /ledgers/available once its ZooKeeper session expires and registers again on restart (same directory and
 * port: its cookie matches), its ledger still readable; a paused one (SIGSTOP) leaves and comes back once
 * resumed; stop leaves no process behind.
 *
 * Needs compat/bookkeeper built (`mvn -B -q -Dmaven.repo.local=compat/.work/m2 -f compat/pom.xml -pl bookkeeper
 * -am package`, or `npm run compat`); skipped without it unless LEDGERLINE_REQUIRE_BOOKKEEPER=1 (CI).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PortInUseError,
  bkTool,
  bookKeeperClasspath,
  bookieShell,
  entryBytes,
  requireBookKeeper,
  startBookie,
  startDevCluster,
  type BkEntry,
  type BkLedgerMetadata,
  type DevClusterHandle,
} from '../../compat/cluster/index.js';
import { children, connectZk, waitForZnode, type ZkClient } from '../../compat/cluster/zk-client.js';

const missing = bookKeeperClasspath() === undefined ? 'compat/bookkeeper is not built' : null;
if (missing !== null && !requireBookKeeper()) console.warn(`development cluster tests skipped: ${missing}`);

/** The process groups alive now (every process of the cluster leads its own). */
function liveGroups(): Set<number> {
  const ps = spawnSync('ps', ['-eo', 'pgid='], { encoding: 'utf8' });
  return new Set(ps.stdout.split('\n').filter((l) => l.trim() !== '').map((l) => Number(l.trim())));
}

describe.skipIf(missing !== null && !requireBookKeeper()).sequential('development cluster: ZooKeeper + 3 bookies', () => {
  let cluster: DevClusterHandle;
  let zk: ZkClient;
  let ledgerId = -1;

  beforeAll(async () => {
    if (missing !== null) throw new Error(`LEDGERLINE_REQUIRE_BOOKKEEPER=1, but ${missing}`);
    cluster = await startDevCluster({ bookies: 3 });
    zk = await connectZk(cluster.zkConnect, 30_000);
  }, 180_000);

  afterAll(async () => {
    zk?.close();
    await cluster?.stop();
    if (cluster) rmSync(cluster.dir, { recursive: true, force: true });
  }, 60_000);

  it('registers every bookie in /ledgers/available as 127.0.0.1:<port>', async () => {
    expect(cluster.metadataServiceUri).toBe(`zk+hierarchical://${cluster.zkConnect}/ledgers`);
    const available = (await children(zk, '/ledgers/available')).filter((c) => c !== 'readonly').sort();
    expect(available).toEqual(cluster.bookies.map((b) => `127.0.0.1:${b.port}`).sort());
    expect(cluster.bookies.map((b) => b.address)).toEqual(cluster.bookies.map((b) => `127.0.0.1:${b.port}`));
  });

  it("BookieShell simpletest writes a ledger with ensemble 3, write quorum 2, ack quorum 2", async () => {
    const r = await bookieShell(['simpletest', '-ensemble', '3', '-writeQuorum', '2', '-ackQuorum', '2', '-numEntries', '50'], {
      metadataServiceUri: cluster.metadataServiceUri,
    });
    expect(r.code, r.output.slice(-3000)).toBe(0);
    expect(r.output).toMatch(/50 entries written to ledger \d+/);
  }, 120_000);

  it("BkTool writes a ledger over the three bookies that BookKeeper's client lists, describes and reads back", async () => {
    const opts = { metadataServiceUri: cluster.metadataServiceUri };
    const [written] = await bkTool<{ ledgerId: number; lastEntryId: number }>(
      ['write', '--ensemble', '3', '--write-quorum', '2', '--ack-quorum', '2', '--entries', '20', '--custom', 'application=ledgerline'],
      opts,
    );
    expect(written.lastEntryId).toBe(19);
    ledgerId = written.ledgerId;
    const [meta] = await bkTool<BkLedgerMetadata>(['meta', String(ledgerId)], opts);
    expect(meta).toMatchObject({ ledgerId, state: 'CLOSED', lastEntryId: 19, ensembleSize: 3, writeQuorumSize: 2, ackQuorumSize: 2, digestType: 'CRC32C' });
    expect(meta.customMetadata).toEqual({ application: 'ledgerline' });
    expect([...meta.ensemble].sort()).toEqual(cluster.bookies.map((b) => b.address).sort());
    const listed = await bkTool<BkLedgerMetadata>(['list'], opts);
    expect(listed.map((l) => l.ledgerId)).toContain(ledgerId);
    const entries = await bkTool<BkEntry>(['read', String(ledgerId)], opts);
    expect(entries.map((e) => e.entryId)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(entries.map((e) => entryBytes(e).toString())).toEqual(Array.from({ length: 20 }, (_, i) => `entry-${i}`));
  }, 120_000);

  it('a bookie killed with SIGKILL leaves /ledgers/available when its session expires and registers again on restart', async () => {
    const victim = cluster.bookies[0]!;
    const path = `/ledgers/available/${victim.address}`;
    await victim.kill();
    // Its znode is ephemeral: gone once ZooKeeper expires the dead bookie's session (zkTimeout 4 s).
    await waitForZnode(zk, path, false, 30_000);
    const others = (await children(zk, '/ledgers/available')).filter((c) => c !== 'readonly').sort();
    expect(others).toEqual(cluster.bookies.slice(1).map((b) => b.address).sort());
    // Same directory and port: the cookie in its directories matches the one in ZooKeeper.
    await victim.restart();
    await waitForZnode(zk, path, true, 1000);
    expect(victim.address).toBe(path.slice('/ledgers/available/'.length));
    // The ledger written before the crash is still whole, read through recovery.
    const entries = await bkTool<BkEntry>(['read', String(ledgerId), '--recovery'], { metadataServiceUri: cluster.metadataServiceUri });
    expect(entries).toHaveLength(20);
  }, 120_000);

  it('a paused bookie (SIGSTOP) leaves /ledgers/available when its session expires and registers again once resumed', async () => {
    const bookie = cluster.bookies[1]!;
    const path = `/ledgers/available/${bookie.address}`;
    bookie.pause();
    try {
      await waitForZnode(zk, path, false, 30_000);
    } finally {
      bookie.resume();
    }
    // Its session expired while it was stopped: the bookie opens a new one and registers again.
    await waitForZnode(zk, path, true, 60_000);
  }, 120_000);

  it('a bookie started again on its directory without a port comes back on the port its cookie names', async () => {
    const original = cluster.bookies[2]!;
    await original.stop();
    const again = await startBookie({ zkConnect: cluster.zkConnect, dir: original.dir });
    try {
      expect(again.address).toBe(original.address);
      expect(await children(zk, '/ledgers/available')).toContain(original.address);
    } finally {
      await again.stop();
    }
    await original.restart();
  }, 120_000);

  it('a bookie whose port is taken fails with PortInUseError and its log tail (an ephemeral port is then picked again)', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const port = (squatter.address() as { port: number }).port;
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-bookie-taken-'));
    try {
      const err = await startBookie({ zkConnect: cluster.zkConnect, port, dir }).then(
        () => null,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(PortInUseError);
      expect(err!.message).toContain(`bookie 127.0.0.1:${port} did not start`);
      expect(err!.message).toMatch(/Address already in use/);
      const available = await children(zk, '/ledgers/available');
      expect(available).not.toContain(`127.0.0.1:${port}`);
    } finally {
      squatter.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('stop leaves no process (and no temporary directory) behind', async () => {
    const groups = [cluster.zk.pid, ...cluster.bookies.map((b) => b.pid)].filter((p): p is number => p !== undefined);
    expect(groups).toHaveLength(4);
    for (const g of groups) expect(liveGroups().has(g)).toBe(true);
    zk.close();
    await cluster.stop();
    const left = liveGroups();
    expect(groups.filter((g) => left.has(g))).toEqual([]);
    // The temporary directory it made itself goes with it.
    expect(existsSync(cluster.dir)).toBe(false);
  }, 60_000);
});
