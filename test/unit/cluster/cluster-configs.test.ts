import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ClusterConfigs, CLUSTER_DYNAMIC_CONFIGS, ELR_MIN_ISR_REMOVAL } from '../../../src/cluster/cluster-configs.js';
import { ConfigSource, TOPIC_CONFIG_BY_NAME } from '../../../src/cluster/config-defs.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { MemoryMetadataVolume, openMemoryMetadataStore } from '../../../src/metadata/index.js';

async function kafkaError(p: Promise<unknown>): Promise<[number, string]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ClusterApiError) return [e.errorCode, e.message];
    throw e;
  }
  throw new Error('expected a ClusterApiError');
}

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function open(volume: MemoryMetadataVolume, staticMinIsr = '1'): Promise<{ configs: ClusterConfigs; close: () => Promise<void> }> {
  const store = await openMemoryMetadataStore(volume);
  const configs = new ClusterConfigs(store, 1);
  await configs.load(staticMinIsr);
  return { configs, close: async () => { await configs.close(); await store.close(); } };
}

describe('ClusterConfigs', () => {
  it('writes the static min.insync.replicas at the cluster level on the first start, and keeps a value set since (KIP-966)', async () => {
    const volume = new MemoryMetadataVolume();
    const first = await open(volume, '2');
    expect(first.configs.get('min.insync.replicas')).toBe('2');
    await first.configs.alter(new Map([['min.insync.replicas', '3']]), { validateOnly: false });
    await first.close();
    const again = await open(volume, '1');
    expect(again.configs.get('min.insync.replicas')).toBe('3');
    expect(again.configs.entries()).toEqual([['min.insync.replicas', '3']]);
    await again.close();
  });

  it('refuses what Kafka refuses at the cluster level, with its codes and messages, and validateOnly stores nothing', async () => {
    const { configs, close } = await open(new MemoryMetadataVolume());
    expect(await kafkaError(configs.alter(new Map([['min.insync.replicas', null]]), { validateOnly: false }))).toEqual([ErrorCode.INVALID_CONFIG, ELR_MIN_ISR_REMOVAL]);
    expect(await kafkaError(configs.alter(new Map([['log.retention.ms', '100']]), { validateOnly: false, replaceAll: true }))).toEqual([ErrorCode.INVALID_CONFIG, ELR_MIN_ISR_REMOVAL]);
    const [code, message] = await kafkaError(configs.alter(new Map([['min.insync.replicas', '0']]), { validateOnly: false }));
    expect(code).toBe(ErrorCode.INVALID_CONFIG);
    expect(message).toMatch(/min\.insync\.replicas: Value must be at least 1/);
    expect((await kafkaError(configs.alter(new Map([['num.network.threads', '4']]), { validateOnly: false })))[0]).toBe(ErrorCode.INVALID_CONFIG);
    await configs.alter(new Map([['log.retention.ms', '1000']]), { validateOnly: true });
    expect(configs.get('log.retention.ms')).toBeUndefined();
    // Removing a value that is not set, known or not, is a no-op.
    await configs.alter(new Map([['log.retention.ms', null], ['no.such.config', null]]), { validateOnly: false });
    expect(configs.entries()).toEqual([['min.insync.replicas', '1']]);
    await close();
  });

  it('takes the first broker synonym of each topic config, not its unit variants', () => {
    expect(CLUSTER_DYNAMIC_CONFIGS.has('log.retention.ms')).toBe(true);
    expect(CLUSTER_DYNAMIC_CONFIGS.has('min.insync.replicas')).toBe(true);
    expect(CLUSTER_DYNAMIC_CONFIGS.has('log.retention.hours')).toBe(false);
    expect(CLUSTER_DYNAMIC_CONFIGS.has('listeners')).toBe(false);
  });

  it('follows a change made through another broker sharing the store', async () => {
    const store = await openMemoryMetadataStore(new MemoryMetadataVolume());
    const a = new ClusterConfigs(store, 1);
    const b = new ClusterConfigs(store, 1);
    await a.load('1');
    await b.load('1');
    let changes = 0;
    b.onChange(() => changes++);
    await a.alter(new Map([['log.retention.ms', '5000']]), { validateOnly: false });
    await until(() => b.get('log.retention.ms') === '5000');
    expect(changes).toBe(1);
    await a.close();
    await b.close();
    await store.close();
  });

  it('is what a topic config falls back to before the static value: source DYNAMIC_DEFAULT_BROKER_CONFIG, under the topic override', async () => {
    const store = await openMemoryMetadataStore(new MemoryMetadataVolume());
    const configs = new ClusterConfigs(store, 1);
    await configs.load('1');
    const topics = new TopicManager(store, loadConfig({ overrides: [['log.dirs', '/unused'], ['log.retention.ms', '7000']] }));
    topics.useDynamicDefaults(configs);
    await topics.load();
    const changed: string[] = [];
    topics.addListener({ configsChanged: (t) => void changed.push(t.name) });
    configs.onChange(() => void topics.dynamicDefaultsChanged());
    const plain = await topics.create('plain', { partitions: 1, replicationFactor: -1, configs: {} });
    const own = await topics.create('own', { partitions: 1, replicationFactor: -1, configs: { 'retention.ms': '9000' } });
    const minIsr = topics.resolve(plain, TOPIC_CONFIG_BY_NAME.get('min.insync.replicas')!);
    expect(minIsr).toMatchObject({ value: '1', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(minIsr.synonyms).toEqual([
      { name: 'min.insync.replicas', value: '1', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG },
      { name: 'min.insync.replicas', value: '1', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    expect(topics.resolve(plain, TOPIC_CONFIG_BY_NAME.get('retention.ms')!)).toMatchObject({ value: '7000', source: ConfigSource.STATIC_BROKER_CONFIG });
    await configs.alter(new Map([['log.retention.ms', '3000']]), { validateOnly: false });
    await until(() => changed.length === 2);
    expect(changed.sort()).toEqual(['own', 'plain']);
    const retention = topics.resolve(plain, TOPIC_CONFIG_BY_NAME.get('retention.ms')!);
    expect(retention).toMatchObject({ value: '3000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    expect(retention.synonyms.map((s) => [s.name, s.value, s.source])).toEqual([
      ['log.retention.ms', '3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
      ['log.retention.ms', '7000', ConfigSource.STATIC_BROKER_CONFIG],
      ['log.retention.hours', '168', ConfigSource.DEFAULT_CONFIG],
    ]);
    expect(topics.configValue(own, 'retention.ms')).toBe('9000');
    await topics.close();
    await configs.close();
    await store.close();
  });

  it('loads after the history of its record was compacted (a store that has written much since), and follows changes', async () => {
    const store = await openMemoryMetadataStore(new MemoryMetadataVolume(), { historyRetention: 10 });
    const first = new ClusterConfigs(store, 1);
    await first.load('1');
    for (let i = 0; i < 100; i++) await store.put(`/other/${i}`, Buffer.from('x'));
    const later = new ClusterConfigs(store, 1);
    await later.load('1');
    expect(later.get('min.insync.replicas')).toBe('1');
    await first.alter(new Map([['log.retention.ms', '1234']]), { validateOnly: false });
    await until(() => later.get('log.retention.ms') === '1234');
    await first.close();
    await later.close();
    await store.close();
  });

  it('keeps per-broker values (DYNAMIC_BROKER_CONFIG) over the cluster-level ones, for that broker only', async () => {
    const store = await openMemoryMetadataStore(new MemoryMetadataVolume());
    const one = new ClusterConfigs(store, 1);
    const two = new ClusterConfigs(store, 2);
    await one.load('1');
    await two.load('1');
    const topics = new TopicManager(store, loadConfig({ overrides: [['log.dirs', '/unused']] }));
    topics.useDynamicDefaults(one);
    await topics.load();
    const t = await topics.create('t', { partitions: 1, replicationFactor: -1, configs: {} });
    await one.alter(new Map([['log.retention.ms', '3000']]), { validateOnly: false });
    await one.alterBroker(new Map([['log.retention.ms', '2000']]), { validateOnly: false });
    expect(one.broker('log.retention.ms')).toBe('2000');
    await until(() => two.get('log.retention.ms') === '3000');
    expect(two.broker('log.retention.ms')).toBeUndefined();
    const retention = topics.resolve(t, TOPIC_CONFIG_BY_NAME.get('retention.ms')!);
    expect(retention).toMatchObject({ value: '2000', source: ConfigSource.DYNAMIC_BROKER_CONFIG });
    expect(retention.synonyms.map((s) => [s.name, s.value, s.source]).slice(0, 2)).toEqual([
      ['log.retention.ms', '2000', ConfigSource.DYNAMIC_BROKER_CONFIG],
      ['log.retention.ms', '3000', ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG],
    ]);
    // KIP-966 keeps min.insync.replicas at the cluster level; what is not reconfigurable is refused as at the cluster level.
    expect((await kafkaError(one.alterBroker(new Map([['min.insync.replicas', '2']]), { validateOnly: false })))[0]).toBe(ErrorCode.INVALID_CONFIG);
    expect(await kafkaError(one.alterBroker(new Map([['num.network.threads', '4']]), { validateOnly: false }))).toEqual([ErrorCode.INVALID_CONFIG, 'Cannot update these configs dynamically: num.network.threads']);
    await one.alterBroker(new Map([['log.retention.ms', null]]), { validateOnly: false });
    expect(topics.resolve(t, TOPIC_CONFIG_BY_NAME.get('retention.ms')!)).toMatchObject({ value: '3000', source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
    // A restart reads them back.
    const again = new ClusterConfigs(store, 1);
    await one.alterBroker(new Map([['log.segment.bytes', '1048576']]), { validateOnly: false });
    await again.load('1');
    expect(again.broker('log.segment.bytes')).toBe('1048576');
    for (const c of [one, two, again]) await c.close();
    await topics.close();
    await store.close();
  });
});
