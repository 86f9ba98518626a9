import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { OwnershipEvents, SingleNodeView, type ClusterView, type CoordinatorKeyType, type CoordinatorLocation, type LiveBroker, type OwnershipListener } from '../../../src/cluster/cluster-view.js';
import { PartitionManager } from '../../../src/cluster/partitions.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import { topicPartitionsPrefix } from '../../../src/metadata/layout.js';
import { buildBatch, MemoryStores, until } from '../log/support.js';

/** A view that owns what a test says it owns, and announces changes when told. */
class FakeView implements ClusterView {
  readonly localNodeId = 1;
  readonly controllerId = 1;
  readonly owned = new Set<string>();
  private readonly events = new OwnershipEvents();
  liveBrokers(): readonly LiveBroker[] {
    return [];
  }
  broker(): LiveBroker | undefined {
    return undefined;
  }
  owns(topic: string, partition: number): boolean {
    return this.owned.has(`${topic}-${partition}`);
  }
  owner(topic: string, partition: number): number {
    return this.owns(topic, partition) ? 1 : 2;
  }
  replicas(): readonly number[] {
    return [1];
  }
  isr(): readonly number[] {
    return [1];
  }
  coordinator(type: CoordinatorKeyType): CoordinatorLocation {
    return { topic: type === 'group' ? '__consumer_offsets' : '__transaction_state', partition: 0, nodeId: 1 };
  }
  subscribe(l: OwnershipListener): () => void {
    return this.events.subscribe(l);
  }
  acquire(topic: string, p: number): void {
    this.owned.add(`${topic}-${p}`);
    this.events.acquired(topic, p);
  }
  release(topic: string, p: number): void {
    this.owned.delete(`${topic}-${p}`);
    this.events.released(topic, p);
  }
}

const config = loadConfig({ overrides: [['log.dirs', '/unused']] });
const silent = pino({ level: 'silent' });

async function setup(stores = new MemoryStores(), makeView?: (topics: TopicManager) => ClusterView) {
  const { metadata } = await stores.open().then(async (s) => {
    await s.ledgers.close();
    return s;
  });
  const ledgers = await LocalLedgerStore.open('/ledgers', { fs: stores.fs });
  const topics = new TopicManager(metadata, config);
  await topics.load();
  const view = makeView?.(topics) ?? new FakeView();
  const partitions = new PartitionManager({ topics, view, metadata, ledgers, config, log: silent });
  const close = async (): Promise<void> => {
    await partitions.close();
    await ledgers.close();
  };
  return { stores, metadata, ledgers, topics, view, partitions, close };
}

const opts = (n: number) => ({ partitions: n, replicationFactor: -1, configs: {} });

describe('PartitionManager: lazy partitions', () => {
  it('opens nothing at start or on topic creation, and opens a partition once on its first uses', async () => {
    const { topics, view, partitions, metadata, close } = await setup();
    await topics.create('t', opts(3));
    (view as FakeView).acquire('t', 0);
    expect(partitions.openCount).toBe(0);
    expect(partitions.get('t', 0)).toBeUndefined();
    // No chain was written for a partition nobody used.
    expect((await metadata.list(topicPartitionsPrefix('t'))).kvs).toHaveLength(0);

    const [a, b] = await Promise.all([partitions.open('t', 0), partitions.open('t', 0)]);
    expect(a).toBeDefined();
    expect(b).toBe(a);
    expect(partitions.get('t', 0)).toBe(a);
    expect(await partitions.open('t', 0)).toBe(a);
    expect(partitions.openCount).toBe(1);
    await close();
  });

  it('opens no partition this broker does not own, nor one that does not exist', async () => {
    const { topics, view, partitions, close } = await setup();
    await topics.create('t', opts(2));
    (view as FakeView).acquire('t', 0);
    expect(await partitions.open('t', 1)).toBeUndefined();
    expect(await partitions.open('t', 2)).toBeUndefined();
    expect(await partitions.open('t', -1)).toBeUndefined();
    expect(await partitions.open('nope', 0)).toBeUndefined();
    expect(partitions.openCount).toBe(0);
    await close();
  });

  it('closes a released partition, sealing its ledger, and takes it over with a new epoch when acquired again', async () => {
    const { topics, view, partitions, close } = await setup();
    const fake = view as FakeView;
    await topics.create('t', opts(1));
    fake.acquire('t', 0);
    const first = (await partitions.open('t', 0))!;
    await first.log.append(buildBatch(3));
    const epoch = first.log.leaderEpoch;
    fake.release('t', 0);
    expect(partitions.get('t', 0)).toBeUndefined();
    expect(await partitions.open('t', 0)).toBeUndefined();
    await until(() => first.log.describeLedgers().every((l) => l.sealed), 5000, 'the released log to seal its ledger');

    fake.acquire('t', 0);
    const again = (await partitions.open('t', 0))!;
    expect(again).not.toBe(first);
    expect(again.log.highWatermark).toBe(3);
    expect(again.log.leaderEpoch).toBeGreaterThan(epoch);
    await close();
  });

  it('lets go of a log fenced while this broker still owns the partition, and opens it again on its next use', async () => {
    const { topics, view, partitions, metadata, ledgers, close } = await setup();
    const fake = view as FakeView;
    await topics.create('t', opts(1));
    fake.acquire('t', 0);
    const first = (await partitions.open('t', 0))!;
    await first.log.append(buildBatch(2));
    // Another owner takes the partition over meanwhile (as one does while this broker's lease has lapsed),
    // writes and hands it back: this broker never saw a release.
    const other = await PartitionLog.open({ topic: 't', partition: 0, ledgers, metadata, owner: 'node-2' });
    await other.append(buildBatch(3));
    await until(() => first.log.state === 'fenced', 5000, 'the first log to see the other owner');
    await other.close();

    expect(partitions.get('t', 0)).toBeUndefined();
    const again = (await partitions.open('t', 0))!;
    expect(again).not.toBe(first);
    expect(again.log.state).toBe('open');
    expect(again.log.highWatermark).toBe(5);
    await again.log.append(buildBatch(1));
    expect(partitions.get('t', 0)).toBe(again);
    expect(again.log.highWatermark).toBe(6);
    await close();
  });

  it('deletes every partition of a deleted topic, whether this run opened it or not', async () => {
    const stores = new MemoryStores();
    const single = (t: TopicManager) => new SingleNodeView({ nodeId: 1, topics: t, endpoints: () => [] });
    const one = await setup(stores, single);
    await one.topics.create('gone', opts(4));
    for (const p of [0, 1]) await (await one.partitions.open('gone', p))!.log.append(buildBatch(2));
    await one.close();
    await one.topics.close();
    await one.metadata.close();

    // The next run opens partition 0 only; partition 1 has data but is not open when the topic is deleted.
    const two = await setup(stores, single);
    await (await two.partitions.open('gone', 0))!.log.append(buildBatch(1));
    expect(two.partitions.openCount).toBe(1);
    expect((await two.metadata.list(topicPartitionsPrefix('gone'))).kvs.map((kv) => kv.key).filter((k) => k.includes('/gone/1/')).length).toBeGreaterThan(0);
    await two.topics.delete('gone');
    expect((await two.metadata.list(topicPartitionsPrefix('gone'))).kvs).toHaveLength(0);
    expect(two.partitions.openCount).toBe(0);
    await two.close();
  });

  it('keeps what was written across a graceful stop: only opened partitions are closed, and they reopen with their data', async () => {
    const stores = new MemoryStores();
    const one = await setup(stores, (t) => new SingleNodeView({ nodeId: 1, topics: t, endpoints: () => [] }));
    await one.topics.create('keep', opts(100));
    const part = (await one.partitions.open('keep', 42))!;
    await part.log.append(buildBatch(5));
    expect(one.partitions.openCount).toBe(1);
    await one.close();
    await one.topics.close();
    await one.metadata.close();

    const two = await setup(stores, (t) => new SingleNodeView({ nodeId: 1, topics: t, endpoints: () => [] }));
    expect(two.partitions.openCount).toBe(0);
    expect((await two.partitions.open('keep', 42))!.log.highWatermark).toBe(5);
    expect((await two.partitions.open('keep', 7))!.log.highWatermark).toBe(0);
    await two.close();
  });
  it('applies retention to partitions nobody opened since the start: due ones are opened and trimmed, the others stay closed', async () => {
    const stores = new MemoryStores();
    const single = (t: TopicManager) => new SingleNodeView({ nodeId: 1, topics: t, endpoints: () => [] });
    const one = await setup(stores, single);
    // One batch per ledger, batches stamped in 2023: past a retention.ms of one hour, and kept forever by -1.
    await one.topics.create('expiring', { ...opts(1), configs: { 'ledgerline.segment.entries': '1', 'retention.ms': '3600000' } });
    await one.topics.create('forever', { ...opts(1), configs: { 'ledgerline.segment.entries': '1', 'retention.ms': '-1' } });
    await one.topics.create('compacted', { ...opts(1), configs: { 'ledgerline.segment.entries': '1', 'retention.ms': '3600000', 'cleanup.policy': 'compact' } });
    for (const t of ['expiring', 'forever', 'compacted']) {
      const log = (await one.partitions.open(t, 0))!.log;
      for (let i = 0; i < 3; i++) await log.append(buildBatch([{ key: Buffer.from('k'), value: Buffer.from('v') }]));
    }
    await one.close();
    await one.topics.close();
    await one.metadata.close();

    const two = await setup(stores, single);
    expect(two.partitions.openCount).toBe(0);
    expect(await two.partitions.sweepUnopened()).toBe(1);
    const expiring = two.partitions.get('expiring', 0)!;
    expect(expiring.log.logStartOffset).toBeGreaterThan(0);
    expect(expiring.log.highWatermark).toBe(3);
    expect(two.partitions.get('forever', 0)).toBeUndefined();
    expect(two.partitions.get('compacted', 0)).toBeUndefined();
    // Nothing left past retention: the next pass opens nothing.
    expect(await two.partitions.sweepUnopened()).toBe(0);
    await two.close();
    await two.topics.close();
    await two.metadata.close();

    const three = await setup(stores, single);
    expect((await three.partitions.open('forever', 0))!.log.logStartOffset).toBe(0);
    expect((await three.partitions.open('expiring', 0))!.log.logStartOffset).toBe(expiring.log.logStartOffset);
    await three.close();
  });

  it('reports every hosted partition, open or not, without opening the others: owned ones only, as the request names them', async () => {
    const stores = new MemoryStores();
    const one = await setup(stores, (t) => new SingleNodeView({ nodeId: 1, topics: t, endpoints: () => [] }));
    await one.topics.create('s', opts(4));
    // More topics than are read one range scan each: the unfiltered read is one scan of every partition.
    for (let i = 0; i < 70; i++) await one.topics.create(`many-${i}`, opts(1));
    const written = new Map<string, { sizeInBytes: number; highWatermark: number }>();
    for (const [t, p, n] of [['s', 1, 3], ['s', 3, 1], ['many-69', 0, 2]] as const) {
      const log = (await one.partitions.open(t, p))!.log;
      for (let i = 0; i < n; i++) await log.append(buildBatch(2));
      written.set(`${t}-${p}`, { sizeInBytes: log.stats.sizeInBytes, highWatermark: log.highWatermark });
    }
    await one.close();
    await one.topics.close();
    await one.metadata.close();

    const two = await setup(stores);
    const view = two.view as FakeView;
    for (const t of two.topics.list()) for (let p = 0; p < t.partitions; p++) if (!(t.name === 's' && p === 2)) view.acquire(t.name, p);
    const open = (await two.partitions.open('s', 3))!;
    await open.log.append(buildBatch(1));
    const key = (s: { topic: string; partition: number }) => `${s.topic}-${s.partition}`;

    const all = await two.partitions.hostedStats(null, { highWatermarks: true });
    expect(all).toHaveLength(4 - 1 + 70);
    const byKey = new Map(all.map((s) => [key(s), s]));
    expect(byKey.has('s-2')).toBe(false); // another broker's
    expect(byKey.get('s-1')).toMatchObject({ ...written.get('s-1'), open: false });
    expect(byKey.get('many-69-0')).toMatchObject({ ...written.get('many-69-0'), open: false });
    expect(byKey.get('s-0')).toMatchObject({ sizeInBytes: 0, ledgers: 0, logStartOffset: 0, highWatermark: 0, open: false });
    expect(byKey.get('s-3')).toMatchObject({ sizeInBytes: open.log.stats.sizeInBytes, highWatermark: 3, open: true });
    expect(two.partitions.openCount).toBe(1);

    const wanted = new Map([
      ['s', new Set([0, 1, 2, 3, 9, -1])],
      ['no-such-topic', new Set([0])],
    ]);
    const some = await two.partitions.hostedStats(wanted);
    expect(some.map(key).sort()).toEqual(['s-0', 's-1', 's-3']);
    expect(some.find((s) => s.partition === 1)).toMatchObject({ topicId: two.topics.get('s')!.topicId, sizeInBytes: written.get('s-1')!.sizeInBytes, highWatermark: null });
    const s1 = some.find((s) => s.partition === 1)!;
    expect(two.partitions.hosts(s1.topicId, 's', 1)).toBe(true);
    expect(two.partitions.hosts(s1.topicId, 's', 2)).toBe(false); // another broker's
    expect(two.partitions.hosts(s1.topicId, 's', 4)).toBe(false);
    expect(two.partitions.hosts('another-id', 's', 1)).toBe(false); // a topic of the same name created again
    expect(two.partitions.openCount).toBe(1);
    await two.close();
  });
});
