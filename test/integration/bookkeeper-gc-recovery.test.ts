/**
 * BookKeeper treats Ledgerline's ledgers as its own: a deleted topic's ledgers are garbage-collected by the bookies
 * (their index files and entry logs go), and the AutoRecovery daemon re-replicates a ledger whose bookie was lost
 * (the dead bookie leaves every segment's ensemble, BookKeeper's own client reads every entry, and a consumer
 * reads back every record). Skipped without the BookKeeper classpath unless LEDGERLINE_REQUIRE_BOOKKEEPER=1.
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { bkTool, bookKeeperClasspath, requireBookKeeper, startDevCluster, type BkLedgerMetadata, type DevClusterHandle } from '../../compat/cluster/index.js';
import { BrokerProcess } from '../support/broker-process.js';

const available = bookKeeperClasspath() !== undefined;
if (!available && requireBookKeeper()) {
  describe('bookkeeper gc and recovery', () => {
    it('finds the BookKeeper classpath', () => {
      expect.fail('LEDGERLINE_REQUIRE_BOOKKEEPER=1 but compat/bookkeeper is not built');
    });
  });
}

/** Polls `check` until it returns a value other than undefined, or fails with `what` at the deadline. */
async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`${what} not within ${timeoutMs} ms${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Every file under `dir`, recursively, with its size. */
function files(dir: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(d, n);
      try {
        const s = statSync(p);
        if (s.isDirectory()) walk(p);
        else out.push({ path: p, size: s.size });
      } catch {
        // removed while walking (GC, compaction)
      }
    }
  };
  walk(dir);
  return out;
}

/** The bytes of a bookie's entry logs (<hex>.log in its ledger directory's current/). */
function entryLogBytes(bookieDir: string): number {
  return files(join(bookieDir, 'ledgers', 'current'))
    .filter((f) => /\/[0-9a-f]+\.log$/.test(f.path))
    .reduce((a, f) => a + f.size, 0);
}

/** The ledger ids whose index file (<hex id>.idx, InterleavedLedgerStorage's IndexPersistenceMgr) the bookie holds. */
function indexedLedgers(bookieDir: string): Set<number> {
  return new Set(
    files(join(bookieDir, 'ledgers', 'current'))
      .map((f) => /\/([0-9a-f]+)\.idx$/.exec(f.path)?.[1])
      .filter((h): h is string => h !== undefined)
      .map((h) => parseInt(h, 16)),
  );
}

async function ledgerlineLedgers(uri: string): Promise<BkLedgerMetadata[]> {
  const all = await bkTool<BkLedgerMetadata>(['list'], { metadataServiceUri: uri });
  return all.filter((m) => m.customMetadata.application === 'ledgerline');
}

function brokerConfigs(uri: string): Record<string, string> {
  return {
    'ledgerline.ledger.store': 'bookkeeper',
    'ledgerline.bookkeeper.metadata.service.uri': uri,
    'ledgerline.bookkeeper.ensemble.size': '3',
    'ledgerline.bookkeeper.write.quorum.size': '3',
    'ledgerline.bookkeeper.ack.quorum.size': '2',
    'ledgerline.storage.gc.interval.ms': '1000',
  };
}

/** A value of `bytes` bytes that compresses to nothing like itself, naming its index. */
function payload(i: number, bytes: number): string {
  let s = `record-${i}:`;
  let x = (i + 1) * 2654435761;
  while (s.length < bytes) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += x.toString(36);
  }
  return s.slice(0, bytes);
}

async function produce(kafka: Kafka, topic: string, count: number, bytes: number): Promise<string[]> {
  const producer = kafka.producer();
  await producer.connect();
  const values = Array.from({ length: count }, (_, i) => payload(i, bytes));
  for (let i = 0; i < count; i += 50) {
    await producer.send({ topic, acks: -1, messages: values.slice(i, i + 50).map((value, j) => ({ key: `k${i + j}`, value })) });
  }
  await producer.disconnect();
  return values;
}

async function consumeAll(kafka: Kafka, topic: string, count: number, groupId: string): Promise<string[]> {
  const consumer = kafka.consumer({ groupId });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`only ${seen.length} of ${count} records consumed`)), 90_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === count) {
            clearTimeout(deadline);
            resolve();
          }
        },
      });
    });
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

describe.skipIf(!available)('BookKeeper collects and re-replicates bookkeeper ledger store ledgers', () => {
  let cluster: DevClusterHandle | undefined;
  let broker: BrokerProcess | undefined;
  afterEach(async () => {
    await broker?.stop();
    await cluster?.stop();
    broker = undefined;
    cluster = undefined;
  }, 90_000);

  it("frees a deleted topic's ledgers on the bookies (bookie GC) and keeps another topic's readable", async () => {
    cluster = await startDevCluster({
      bookies: 3,
      // GarbageCollectorThread: a pass every second; compaction of entry logs at most 20% (minor) or 80% (major)
      // live, every 2 s and 4 s (the minor period must be the shorter); 1 MiB entry logs so that they rotate and a log of deleted ledgers only can be removed
      // whole; SortedLedgerStorage's memtable flushed to the entry logs every second (SyncThread's flushInterval).
      gcWaitTimeMs: 1000,
      extraConf: {
        minorCompactionInterval: '2',
        majorCompactionInterval: '4',
        minorCompactionThreshold: '0.2',
        majorCompactionThreshold: '0.8',
        gcOverreplicatedLedgerWaitTime: '1000',
        logSizeLimit: String(1024 * 1024),
        flushInterval: '1000',
        skipListSizeLimit: String(1024 * 1024),
      },
    });
    const uri = cluster.metadataServiceUri;
    // A deleted topic's ledgers go file.delete.delay.ms after the deletion (Kafka's log.segment.delete.delay.ms,
    // 60 s by default): 1 s here, so that the wait measures BookKeeper's collection.
    broker = await BrokerProcess.start({ configs: { ...brokerConfigs(uri), 'log.segment.delete.delay.ms': '1000' }, startTimeoutMs: 60_000 });
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'bk-gc', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic: 'kept', numPartitions: 1 }] });
      const kept = await produce(kafka, 'kept', 20, 1000);
      const before = new Set((await ledgerlineLedgers(uri)).map((m) => m.ledgerId));
      expect(before.size).toBeGreaterThan(0);

      await admin.createTopics({ topics: [{ topic: 'doomed', numPartitions: 1, configEntries: [{ name: 'segment.bytes', value: String(1024 * 1024) }] }] });
      await produce(kafka, 'doomed', 600, 10_000); // 6 MB
      const doomedMeta = (await ledgerlineLedgers(uri)).filter((m) => !before.has(m.ledgerId));
      const doomed = doomedMeta.map((m) => m.ledgerId);
      // Closed ledgers with entries (a ledger rolled before its first add holds nothing on any bookie).
      const written = doomedMeta.filter((m) => m.state === 'CLOSED' && m.lastEntryId >= 0).map((m) => m.ledgerId);
      expect(written.length).toBeGreaterThan(1); // 1 MiB segments: several ledgers
      // The entries are on the bookies: every bookie's entry logs hold most of the 6 MB, and every ledger written but
      // the newest two has index files on a bookie (not necessarily on all three: their memtables flush at different
      // moments). An acknowledged entry is in the bookie's journal and SortedLedgerStorage's memtable; its ledger's
      // index file appears only when the memtable is flushed, and EntryMemTable flushes when an add finds it past
      // skipListSizeLimit (1 MiB here): once writes stop, up to that much of the newest entries can stay unflushed and
      // unindexed on every bookie until something is written again (in some runs the last ledgers sat there for over
      // 90 s). If the ledgers are not all indexed after 10 s, 1.2 MB to another topic makes every bookie's next add find
      // its memtable full.
      const bookieDirs = cluster.bookies.map((b) => b.dir);
      const heldBy = (d: string): number[] => written.filter((id) => indexedLedgers(d).has(id));
      const waitStart = Date.now();
      let nudged = false;
      await waitFor('the doomed ledgers on the bookies', 90_000, async () => {
        if (!nudged && Date.now() - waitStart > 10_000) {
          nudged = true;
          await admin.createTopics({ topics: [{ topic: 'nudge', numPartitions: 1 }] });
          await produce(kafka, 'nudge', 120, 10_000);
        }
        const held = bookieDirs.map(heldBy);
        if (bookieDirs.every((d) => entryLogBytes(d) > 4_000_000) && written.slice(0, -2).every((id) => held.some((h) => h.includes(id)))) return true;
        throw new Error(`entry logs ${bookieDirs.map(entryLogBytes).join('/')} bytes, ledgers ${written.join(',')}, indexed ${held.map((h) => h.join(',')).join(' / ')}`);
      });
      const logBytesBefore = bookieDirs.map(entryLogBytes);
      for (const b of logBytesBefore) expect(b).toBeGreaterThan(4_000_000);

      const deletedAt = Date.now();
      await admin.deleteTopics({ topics: ['doomed'], timeout: 30_000 });
      // The metadata goes first: BookKeeper's own client lists none of the ledgers (one JVM a poll).
      await waitFor('the doomed ledgers unlisted', 120_000, async () => {
        const listed = new Set((await ledgerlineLedgers(uri)).map((m) => m.ledgerId));
        return doomed.some((id) => listed.has(id)) ? undefined : true;
      });
      const metadataGoneMs = Date.now() - deletedAt;
      // Then each bookie's GarbageCollectorThread drops the ledgers' index files and removes or compacts the
      // entry logs that held them: the space of 6 MB of records is given back on every bookie.
      await waitFor('the doomed ledgers gone from every bookie', 120_000, async () =>
        bookieDirs.every((d, i) => {
          const held = indexedLedgers(d);
          return doomed.every((id) => !held.has(id)) && entryLogBytes(d) < logBytesBefore[i]! - 3_500_000;
        })
          ? true
          : undefined,
      );
      const dataGoneMs = Date.now() - deletedAt;
      // Opening any of them fails as BookKeeper fails a ledger it has no metadata for (NoSuchLedgerExistsOnMetadataServer, -25).
      for (const id of doomed) await expect(bkTool(['meta', String(id)], { metadataServiceUri: uri })).rejects.toThrow(/"code":-25\b/);
      for (const d of bookieDirs) {
        const held = indexedLedgers(d);
        for (const id of doomed) expect(held.has(id)).toBe(false);
      }
      console.log(`bookie GC: metadata gone ${metadataGoneMs} ms, data gone on 3 bookies ${dataGoneMs} ms after DeleteTopics; entry logs ${logBytesBefore.join('/')} → ${bookieDirs.map(entryLogBytes).join('/')} bytes`);

      // The topic that stayed: its ledgers are still readable by BookKeeper's client, and by a consumer.
      const keptLedgers = (await ledgerlineLedgers(uri)).filter((m) => before.has(m.ledgerId));
      expect(keptLedgers.length).toBeGreaterThan(0);
      for (const m of keptLedgers) {
        // A closed ledger in full; the open one (no recovery: the writer keeps it) up to its last add confirmed.
        const entries = await bkTool<{ entryId: number }>(['read', String(m.ledgerId)], { metadataServiceUri: uri });
        const ids = entries.map((e) => e.entryId);
        expect(ids).toEqual(Array.from({ length: m.state === 'CLOSED' ? m.lastEntryId + 1 : ids.length }, (_, i) => i));
      }
      expect(await consumeAll(kafka, 'kept', kept.length, 'kept-readers')).toEqual(kept);
    } finally {
      await admin.disconnect();
    }
  }, 420_000);

  it("re-replicates a lost bookie's ledgers through AutoRecovery, every record read back intact", async () => {
    // An open ledger whose last ensemble lost a bookie is fenced and re-replicated after openLedgerRereplicationGracePeriod
    // (ReplicationWorker; 30 s by default).
    cluster = await startDevCluster({ bookies: 4, autoRecovery: true, extraConf: { openLedgerRereplicationGracePeriod: '5000' } });
    const uri = cluster.metadataServiceUri;
    broker = await BrokerProcess.start({ configs: brokerConfigs(uri), startTimeoutMs: 60_000 });
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'bk-recovery', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'precious', numPartitions: 2, configEntries: [{ name: 'segment.bytes', value: String(1024 * 1024) }] }] });
    await admin.disconnect();
    const values = await produce(kafka, 'precious', 800, 5_000); // 4 MB over 2 partitions: closed ledgers and open ones
    const ledgers = await ledgerlineLedgers(uri);
    const segmentsOf = (m: BkLedgerMetadata): string[][] => Object.values(m.ensembles);
    // The bookie found in most ledgers' ensembles is the one lost.
    const count = new Map<string, number>();
    for (const m of ledgers) for (const b of new Set(segmentsOf(m).flat())) count.set(b, (count.get(b) ?? 0) + 1);
    const [victimAddress] = [...count].sort((a, b) => b[1] - a[1])[0]!;
    const victim = cluster.bookies.find((b) => b.address === victimAddress)!;
    const affected = ledgers.filter((m) => segmentsOf(m).some((e) => e.includes(victimAddress))).map((m) => m.ledgerId);
    expect(affected.length).toBeGreaterThan(0);

    const lostAt = Date.now();
    await victim.kill();
    rmSync(victim.dir, { recursive: true, force: true });
    for (const id of affected) {
      await waitFor(`ledger ${id} re-replicated off ${victimAddress}`, 180_000, async () => {
        const [m] = await bkTool<BkLedgerMetadata>(['meta', String(id)], { metadataServiceUri: uri });
        return segmentsOf(m!).some((e) => e.includes(victimAddress)) ? undefined : true;
      });
    }
    const replicatedMs = Date.now() - lostAt;
    for (const id of affected) {
      const [m] = await bkTool<BkLedgerMetadata>(['meta', String(id)], { metadataServiceUri: uri });
      for (const e of segmentsOf(m!)) {
        expect(e).not.toContain(victimAddress);
        expect(e.length).toBe(3);
      }
      // Still-open ledgers are read up to their last add confirmed; a closed one in full.
      const entries = await bkTool(['read', String(id)], { metadataServiceUri: uri });
      if (m!.state === 'CLOSED') expect(entries.map((e) => e.entryId)).toEqual(Array.from({ length: m!.lastEntryId + 1 }, (_, i) => i));
    }
    console.log(`autorecovery: ${affected.length} ledgers re-replicated off ${victimAddress} ${replicatedMs} ms after its SIGKILL`);

    const seen = await consumeAll(kafka, 'precious', values.length, 'precious-readers');
    expect([...seen].sort()).toEqual([...values].sort());
  }, 420_000);
});
