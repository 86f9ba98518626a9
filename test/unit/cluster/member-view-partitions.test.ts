/**
 * MemberView over real partition logs: two brokers, each with its own topic registry and partition manager, on
 * one metadata store and one ledger store. A partition moves by closing (sealing) and reopening, not by copying:
 * the next owner finds every record, with a higher leader epoch, and finds the previous owner's ledgers sealed.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { MemberView } from '../../../src/cluster/member-view.js';
import { PartitionManager } from '../../../src/cluster/partitions.js';
import { rendezvousOwner } from '../../../src/cluster/rendezvous.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import { ledgersPrefix, openMemoryMetadataStore } from '../../../src/metadata/index.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { buildBatch, until } from '../log/support.js';

const silent = pino({ level: 'silent' });
const PARTITIONS = 8;

interface Member {
  readonly id: number;
  readonly topics: TopicManager;
  readonly view: MemberView;
  readonly partitions: PartitionManager;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function member(id: number, metadata: MetadataStore, ledgers: LocalLedgerStore, onAcquired?: (m: Member, t: string, p: number) => void): Promise<Member> {
  const config = loadConfig({ overrides: [['log.dirs', '/unused'], ['node.id', String(id)]] });
  const topics = new TopicManager(metadata, config);
  await topics.load();
  const view = new MemberView({ store: metadata, nodeId: id, endpoints: () => [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id }], topics, leaseTtlSeconds: 3 });
  const partitions = new PartitionManager({ topics, view, metadata, ledgers, config, log: silent });
  const m = { id, topics, view, partitions };
  if (onAcquired) view.subscribe({ acquired: (t, p) => onAcquired(m, t, p) });
  await view.start();
  cleanups.push(async () => {
    await view.stop();
    await partitions.close();
    await topics.close();
  });
  return m;
}

function ownsByRule(members: readonly Member[]): boolean {
  const ids = members.map((m) => m.id).sort((a, b) => a - b);
  for (let p = 0; p < PARTITIONS; p++) for (const m of members) if (m.view.owns('t', p) !== (m.id === rendezvousOwner('t', p, ids))) return false;
  return true;
}

describe('MemberView with partition logs', () => {
  it('moves partitions between brokers by sealing and reopening their logs: every record there, a higher epoch', async () => {
    const metadata = await openMemoryMetadataStore();
    const ledgers = await LocalLedgerStore.open('/ledgers', { fs: new MemoryLedgerFs() });
    cleanups.push(async () => {
      await ledgers.close();
      await metadata.close();
    });
    // At every acquisition, the partition's ledgers are all sealed: its previous owner closed it before letting go.
    const unsealedAtAcquire: string[] = [];
    const checks: Promise<void>[] = [];
    const checkSealed = (m: Member, t: string, p: number): void => {
      // Read in the same turn as the event: the store answers reads in order, before anything called later.
      checks.push(
        metadata.list(ledgersPrefix(t, p)).then((l) => {
          for (const kv of l.kvs) if ((JSON.parse(kv.value.toString()) as { state: string }).state !== 'sealed') unsealedAtAcquire.push(`${t}-${p} by ${m.id}`);
        }),
      );
    };
    const b1 = await member(1, metadata, ledgers, checkSealed);
    await b1.topics.create('t', { partitions: PARTITIONS, replicationFactor: 1, configs: {} });
    await until(() => ownsByRule([b1]), 5000, 'broker 1 owning every partition');
    const epochs = new Map<number, number>();
    for (let p = 0; p < PARTITIONS; p++) {
      const part = (await b1.partitions.open('t', p))!;
      await part.log.append(buildBatch(2));
      epochs.set(p, part.log.leaderEpoch);
    }

    const b2 = await member(2, metadata, ledgers, checkSealed);
    await until(() => ownsByRule([b1, b2]), 5000, 'the partitions the rule gives broker 2 moving to it');
    const moved = Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => rendezvousOwner('t', p, [1, 2]) === 2);
    expect(moved.length).toBeGreaterThan(0);
    for (const p of moved) {
      expect(b1.partitions.get('t', p)).toBeUndefined();
      const part = (await b2.partitions.open('t', p))!;
      expect(part.log.highWatermark).toBe(2);
      expect(part.log.leaderEpoch).toBeGreaterThan(epochs.get(p)!);
      await part.log.append(buildBatch(3));
      // Broker 1 does not open what it no longer owns.
      expect(await b1.partitions.open('t', p)).toBeUndefined();
    }

    // Broker 2 leaves gracefully: broker 1 takes them back with everything either wrote.
    await b2.view.stop();
    await until(() => ownsByRule([b1]), 5000, 'broker 1 owning every partition again');
    for (const p of moved) {
      expect(b2.partitions.get('t', p)).toBeUndefined();
      const part = (await b1.partitions.open('t', p))!;
      expect(part.log.highWatermark).toBe(5);
      // Two batches, one from each owner.
      expect((await part.log.read(0, { maxBytes: 1 << 20 })).records).toHaveLength(2);
    }
    await Promise.all(checks);
    // Acquired by broker 1 at first, by 2 on its join, by 1 on 2's leave.
    expect(checks.length).toBe(PARTITIONS + 2 * moved.length);
    expect(unsealedAtAcquire).toEqual([]);
  });
});
