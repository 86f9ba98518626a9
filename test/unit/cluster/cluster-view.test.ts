import { describe, expect, it } from 'vitest';
import { OwnershipEvents, SingleNodeView } from '../../../src/cluster/cluster-view.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';

async function setup(offsetsPartitions = 50) {
  const store = await openMemoryMetadataStore();
  const topics = new TopicManager(store, loadConfig({ overrides: [['log.dirs', '/unused']] }));
  await topics.load();
  const view = new SingleNodeView({ nodeId: 7, topics, endpoints: () => [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }], offsetsTopicPartitions: offsetsPartitions, transactionTopicPartitions: 10 });
  const events: string[] = [];
  view.subscribe({ acquired: (t, p) => void events.push(`+${t}-${p}`), released: (t, p) => void events.push(`-${t}-${p}`) });
  return { store, topics, view, events };
}

const opts = (partitions: number) => ({ partitions, replicationFactor: -1, configs: {} });

describe('SingleNodeView', () => {
  it('owns, leads and is the only replica of every partition of every topic, and nothing else', async () => {
    const { store, topics, view } = await setup();
    await topics.create('orders', opts(2));
    expect([view.owns('orders', 0), view.owns('orders', 1), view.owns('orders', 2), view.owns('orders', -1), view.owns('nope', 0)]).toEqual([true, true, false, false, false]);
    expect([view.owner('orders', 1), view.owner('orders', 2)]).toEqual([7, -1]);
    expect(view.replicas('orders', 0)).toEqual([7]);
    expect(view.isr('orders', 0)).toEqual([7]);
    expect(view.replicas('orders', 5)).toEqual([]);
    // Asked on every request: the same array each time, nothing allocated.
    expect(view.replicas('orders', 0)).toBe(view.replicas('orders', 1));
    expect(view.controllerId).toBe(7);
    expect(view.liveBrokers()).toEqual([{ nodeId: 7, rack: null, endpoints: [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }] }]);
    expect(view.broker(7)?.nodeId).toBe(7);
    expect(view.broker(8)).toBeUndefined();
    await store.close();
  });

  it('acquires the partitions of a created topic and of added partitions, and releases those of a deleted topic', async () => {
    const { store, topics, events } = await setup();
    await topics.create('a', opts(2));
    await topics.addPartitions('a', 3, false);
    await topics.delete('a');
    expect(events).toEqual(['+a-0', '+a-1', '+a-2', '-a-0', '-a-1', '-a-2']);
    await store.close();
  });

  it('places group and transactional ids on internal topic partitions as Kafka hashes them', async () => {
    const { store, topics, view } = await setup(50);
    // Before __consumer_offsets exists: offsets.topic.num.partitions, and this node coordinates.
    expect(view.coordinator('group', 'hello')).toEqual({ topic: '__consumer_offsets', partition: 99162322 % 50, nodeId: 7 });
    expect(view.coordinator('group', 'polygenelubricants').partition).toBe(0);
    expect(view.coordinator('transaction', 'hello')).toEqual({ topic: '__transaction_state', partition: 99162322 % 10, nodeId: 7 });
    // Once it exists, its partition count decides.
    await topics.create('__consumer_offsets', { ...opts(3), allowInternal: true });
    expect(view.coordinator('group', 'hello')).toEqual({ topic: '__consumer_offsets', partition: 99162322 % 3, nodeId: 7 });
    await store.close();
  });
});

describe('OwnershipEvents.releasedInOrder', () => {
  it('tells the last subscribed first, waits for each, and goes on past one that fails', async () => {
    const events = new OwnershipEvents();
    const log: string[] = [];
    const slow = (name: string) => async () => {
      log.push(`${name} start`);
      await new Promise((r) => setImmediate(r));
      log.push(`${name} done`);
    };
    events.subscribe({ released: slow('partitions') });
    events.subscribe({ released: () => Promise.reject(new Error('shard close failed')) });
    events.subscribe({ released: slow('transactions') });
    await events.releasedInOrder('t', 0);
    expect(log).toEqual(['transactions start', 'transactions done', 'partitions start', 'partitions done']);
  });
});
