/**
 * A graceful stop of many opened partitions, on the real stores (the local ledger store on a temp dir, the
 * SQLite metadata store): its cost in fsyncs and metadata commits is bounded, not one or more per partition,
 * and the next start finds every ledger sealed, every acknowledged record there, and nothing to recover
 * (no ledger to fence, no ledger indexed from its data, no producer batch replayed).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { SingleNodeView } from '../../../src/cluster/cluster-view.js';
import { PartitionManager } from '../../../src/cluster/partitions.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { FaultInjectingLedgerFs } from '../../../src/ledger/fault-fs.js';
import { nodeLedgerFs } from '../../../src/ledger/fs.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import type { StorageBackend } from '../../../src/metadata/backend.js';
import { LocalMetadataStore } from '../../../src/metadata/local-store.js';
import { SqliteBackend } from '../../../src/metadata/sqlite-backend.js';
import { buildBatch } from '../log/support.js';

const TOPICS = 3;
const PER_TOPIC = 100;
const PARTITIONS = TOPICS * PER_TOPIC;
/** Far below one per partition: what a stop of PARTITIONS partitions may cost, in fsyncs and in metadata commits. */
const BOUND = 20;

const config = loadConfig({ overrides: [['log.dirs', '/unused']] });
const silent = pino({ level: 'silent' });

/** The SQLite backend, counting its commits (the outermost `atomically` calls: one WAL fsync each). */
function countingBackend(inner: StorageBackend): { backend: StorageBackend; commits: () => number } {
  let commits = 0;
  let depth = 0;
  const backend = new Proxy(inner, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'atomically' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return <T>(fn: () => T): T => {
        depth++;
        try {
          const result = (value as StorageBackend['atomically']).call(target, fn) as T;
          if (depth === 1) commits++;
          return result;
        } finally {
          depth--;
        }
      };
    },
  });
  return { backend, commits: () => commits };
}

async function startNode(dir: string) {
  const ledgerFs = new FaultInjectingLedgerFs(nodeLedgerFs);
  const ledgers = await LocalLedgerStore.open(path.join(dir, 'ledgers'), { fs: ledgerFs });
  const { backend, commits } = countingBackend(SqliteBackend.open(path.join(dir, 'metadata')));
  const metadata = LocalMetadataStore.open(backend);
  const topics = new TopicManager(metadata, config);
  await topics.load();
  const view = new SingleNodeView({ nodeId: 1, topics, endpoints: () => [] });
  const partitions = new PartitionManager({ topics, view, metadata, ledgers, config, log: silent });
  const fsyncs = (): number => ledgerFs.counts.datasync + ledgerFs.counts.syncDir;
  const stop = async (): Promise<void> => {
    await partitions.close();
    await topics.close();
    await ledgers.close();
    await metadata.close();
  };
  return { ledgers, metadata, topics, partitions, fsyncs, commits, stop };
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('PartitionManager: a graceful stop of many open partitions', () => {
  it(`seals ${PARTITIONS} open partitions with a bounded number of fsyncs and metadata commits, and the restart recovers nothing`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'll-stop-'));
    dirs.push(dir);
    const first = await startNode(dir);
    const names = Array.from({ length: TOPICS }, (_, t) => `stop-${t}`);
    for (const name of names) await first.topics.create(name, { partitions: PER_TOPIC, replicationFactor: -1, configs: {} });
    const all = names.flatMap((topic) => Array.from({ length: PER_TOPIC }, (_, p) => ({ topic, p })));
    // Every partition opened and acknowledged one batch, as a producer touching each of them would.
    await Promise.all(
      all.map(async ({ topic, p }) => {
        const part = (await first.partitions.open(topic, p))!;
        await part.log.append(buildBatch([{ value: Buffer.from(`${topic}/${p}`) }]));
      }),
    );
    expect(first.partitions.openCount).toBe(PARTITIONS);

    const fsyncsBefore = first.fsyncs();
    const commitsBefore = first.commits();
    await first.stop();
    const fsyncs = first.fsyncs() - fsyncsBefore;
    const commits = first.commits() - commitsBefore;
    // Before group commits a stop cost two metadata commits per partition (the seal's chain txn, then the
    // snapshots'), each a WAL fsync; the ledger store already group-committed the seals.
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThanOrEqual(BOUND);
    expect(fsyncs).toBeGreaterThan(0);
    expect(fsyncs).toBeLessThanOrEqual(BOUND);

    // The next start: the ledger store holds no open ledger, so no takeover has anything to fence.
    const second = await startNode(dir);
    expect((await second.ledgers.list()).filter((l) => l.state === 'open')).toEqual([]);
    for (const { topic, p } of all) {
      const part = (await second.partitions.open(topic, p))!;
      const stats = part.log.stats;
      // Indexed from the index snapshot written at the stop, the producer state from its snapshot.
      expect({ fromData: stats.ledgersFromData, fromSnapshots: stats.ledgersFromSnapshots, replayed: stats.producerState.replayedBatches }).toEqual({
        fromData: 0,
        fromSnapshots: 1,
        replayed: 0,
      });
      expect(part.log.highWatermark).toBe(1);
      const read = await part.log.read(0);
      expect(read.records).toHaveLength(1);
      expect(read.records[0]!.includes(Buffer.from(`${topic}/${p}`))).toBe(true);
    }
    await second.stop();
  }, 120_000);
});
