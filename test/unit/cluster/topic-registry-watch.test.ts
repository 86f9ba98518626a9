import { describe, expect, it } from 'vitest';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { waitFor } from '../../support/raw-connection.js';
import { laggingPair, zooKeeperAvailable } from '../metadata/support.js';

async function registry(store: MetadataStore, onWatchError?: (err: Error) => void): Promise<{ topics: TopicManager; events: string[] }> {
  const topics = new TopicManager(store, loadConfig({ overrides: [['log.dirs', '/unused']] }), onWatchError);
  await topics.load();
  const events: string[] = [];
  topics.addListener({
    topicCreated: (t) => void events.push(`created ${t.name} ${t.partitions}`),
    partitionsAdded: (t, from) => void events.push(`added ${t.name} ${from}..${t.partitions - 1}`),
    topicDeleted: (t) => void events.push(`deleted ${t.name}`),
    configsChanged: (t) => void events.push(`configs ${t.name} ${JSON.stringify(t.configs)}`),
  });
  return { topics, events };
}

const opts = (partitions: number) => ({ partitions, replicationFactor: -1, configs: {} });

describe('TopicManager following the metadata store', () => {
  it('sees topics another registry of the same store creates, grows, reconfigures and deletes, with the same events', async () => {
    const store = await openMemoryMetadataStore();
    const a = await registry(store);
    const b = await registry(store);

    const created = await a.topics.create('orders', opts(3));
    await waitFor('b to see orders', () => b.topics.get('orders'));
    expect(b.topics.get('orders')).toEqual(created);
    expect(b.topics.getById(created.topicId)?.name).toBe('orders');

    await a.topics.addPartitions('orders', 5, false);
    await waitFor('b to see 5 partitions', () => b.topics.get('orders')?.partitions === 5);
    await a.topics.setConfigs('orders', { 'retention.ms': '1000' }, false);
    await waitFor('b to see the config', () => b.topics.get('orders')?.configs['retention.ms'] === '1000');

    await a.topics.delete('orders');
    await waitFor('b to forget orders', () => b.topics.get('orders') === undefined);
    expect(b.topics.getById(created.topicId)).toBeUndefined();
    expect(b.events).toEqual(['created orders 3', 'added orders 3..4', 'configs orders {"retention.ms":"1000"}', 'deleted orders']);
    // Its own changes are told once, not again when the watch delivers them.
    expect(a.events).toEqual(b.events);

    // The name is free again for b, and a follows b's creation.
    const again = await b.topics.create('orders', opts(1));
    await waitFor('a to see the new orders', () => a.topics.get('orders')?.topicId === again.topicId);
    expect(a.events.at(-1)).toBe('created orders 1');
    expect(b.events.filter((e) => e.startsWith('created')).length).toBe(2);
    await a.topics.close();
    await b.topics.close();
    await store.close();
  });

  it('refresh reads a topic, or a partition, that the watch has not delivered, and tells it as the watch would', async () => {
    const store = await openMemoryMetadataStore();
    const a = await registry(store);
    const b = await registry(store);
    await b.topics.close(); // b stops following: only refresh brings it a's changes
    const created = await a.topics.create('fresh', opts(2));
    expect(b.topics.get('fresh')).toBeUndefined();
    await expect(b.topics.refresh('fresh', 1)).resolves.toBe(true);
    expect(b.topics.get('fresh')).toEqual(created);
    expect(b.topics.getById(created.topicId)?.name).toBe('fresh');
    await expect(b.topics.refresh('fresh', 2)).resolves.toBe(false);
    await expect(b.topics.refresh('absent', 0)).resolves.toBe(false);
    await a.topics.addPartitions('fresh', 3, false);
    const [one, two] = await Promise.all([b.topics.refresh('fresh', 2), b.topics.refresh('fresh', 2)]);
    expect([one, two]).toEqual([true, true]);
    expect(b.events).toEqual(['created fresh 2', 'added fresh 2..2']);
    await a.topics.close();
    await store.close();
  });

  it('a topic refreshed and then delivered by the watch is told once, whichever comes first', async () => {
    const store = await openMemoryMetadataStore();
    const a = await registry(store);
    const b = await registry(store);
    for (let i = 0; i < 20; i++) {
      const name = `t${i}`;
      const creating = a.topics.create(name, opts(1));
      if (i % 2 === 0) await creating;
      await creating.then(() => b.topics.refresh(name, 0));
    }
    await a.topics.create('marker', opts(1));
    await waitFor('b to see marker', () => b.topics.get('marker'));
    expect(b.events).toEqual([...Array.from({ length: 20 }, (_, i) => `created t${i} 1`), 'created marker 1']);
    await a.topics.close();
    await b.topics.close();
    await store.close();
  });

  it('refuses a name another registry took while this one had not heard of it yet', async () => {
    const store = await openMemoryMetadataStore();
    const a = await registry(store);
    const b = await registry(store);
    await a.topics.close(); // a stops following: its cache stays without b's topic
    await b.topics.create('taken', opts(1));
    await expect(a.topics.create('taken', opts(1))).rejects.toMatchObject({ errorCode: 36 }); // TOPIC_ALREADY_EXISTS
    await b.topics.close();
    await store.close();
  });

  it('loads what others changed before it started and follows from that revision, even once the history is compacted', async () => {
    const store = await openMemoryMetadataStore();
    const a = await registry(store);
    const b = await registry(store);
    await b.topics.close();
    await a.topics.create('one', opts(1));
    await a.topics.create('two', opts(2));
    await a.topics.delete('one');
    const c = await registry(store);
    expect(c.topics.list().map((t) => t.name)).toEqual(['two']);
    await store.compact(await store.revision());
    await a.topics.create('three', opts(1));
    await waitFor('c to see three', () => c.topics.get('three'));
    expect(c.events).toEqual(['created three 1']);
    await a.topics.close();
    await c.topics.close();
    await store.close();
  });
});

describe.skipIf(!zooKeeperAvailable)('TopicManager on ZooKeeper stores shared by brokers', () => {
  it('tells its listeners what changed while its store fell behind the kept history, and follows on from there', async () => {
    const pair = await laggingPair('topics');
    const managers: TopicManager[] = [];
    try {
      const a = await registry(pair.writer);
      const errors: Error[] = [];
      const b = await registry(pair.lagging, (err) => errors.push(err));
      managers.push(a.topics, b.topics);
      await a.topics.create('kept', opts(1));
      await a.topics.create('gone', opts(1));
      await waitFor('b to see both topics', () => b.topics.get('gone'));
      // More revisions than the stores keep (5) while b's store cannot read history.
      pair.cutHistoryReads();
      await a.topics.delete('gone');
      await a.topics.addPartitions('kept', 2, false);
      for (let i = 0; i < 6; i++) await a.topics.create(`new${i}`, opts(1));
      pair.readHistoryAgain();
      await a.topics.create('after', opts(1));
      await waitFor('b to see the last topic', () => b.topics.get('after'));
      expect(b.topics.list().map((t) => [t.name, t.partitions, t.topicId])).toEqual(a.topics.list().map((t) => [t.name, t.partitions, t.topicId]));
      expect(b.events.slice(2).sort()).toEqual(['added kept 1..1', 'created after 1', 'deleted gone', ...Array.from({ length: 6 }, (_, i) => `created new${i} 1`)].sort());
      expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
    } finally {
      for (const m of managers) await m.close();
      await pair.close();
    }
  }, 60_000);
});
