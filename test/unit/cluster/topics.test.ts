import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ConfigSource, TOPIC_CONFIG_BY_NAME } from '../../../src/cluster/config-defs.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';
import { TopicManager, type TopicRecord } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { MemoryMetadataVolume, openMemoryMetadataStore } from '../../../src/metadata/index.js';

async function manager(overrides: [string, string][] = [], volume = new MemoryMetadataVolume()): Promise<{ topics: TopicManager; events: string[]; close: () => Promise<void> }> {
  const store = await openMemoryMetadataStore(volume);
  const config = loadConfig({ overrides: [['log.dirs', '/unused'], ...overrides] });
  const topics = new TopicManager(store, config);
  await topics.load();
  const events: string[] = [];
  topics.addListener({
    topicCreated: (t) => void events.push(`created ${t.name} ${t.partitions}`),
    partitionsAdded: (t, from) => void events.push(`added ${t.name} ${from}..${t.partitions - 1}`),
    topicDeleted: (t) => void events.push(`deleted ${t.name}`),
    configsChanged: (t) => void events.push(`configs ${t.name} ${JSON.stringify(t.configs)}`),
  });
  return { topics, events, close: () => store.close() };
}

async function kafkaError(p: Promise<unknown>): Promise<[number, string]> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ClusterApiError) return [e.errorCode, e.message];
    throw e;
  }
  throw new Error('expected a ClusterApiError');
}

const opts = (partitions: number, configs: Record<string, string | null> = {}): { partitions: number; replicationFactor: number; configs: Record<string, string | null> } => ({ partitions, replicationFactor: -1, configs });

describe('TopicManager', () => {
  it('creates topics durably with a topic id, and loads them again from the store', async () => {
    const volume = new MemoryMetadataVolume();
    const a = await manager([], volume);
    const t = await a.topics.create('orders', opts(3, { 'retention.ms': ' 1000 ' }));
    expect(t).toMatchObject({ name: 'orders', partitions: 3, configs: { 'retention.ms': '1000' }, internal: false });
    expect(t.topicId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(a.events).toEqual(['created orders 3']);
    expect(a.topics.getById(t.topicId)).toBe(t);
    await a.close();

    const b = await manager([], volume);
    expect(b.topics.get('orders')).toEqual(t);
    expect(b.topics.getById(t.topicId)?.name).toBe('orders');
    expect(b.topics.list().map((x) => x.name)).toEqual(['orders']);
    await b.close();
  });

  it('uses num.partitions and default.replication.factor for -1', async () => {
    const { topics, close } = await manager([['num.partitions', '4']]);
    expect((await topics.create('defaults', { partitions: -1, replicationFactor: -1, configs: {} })).partitions).toBe(4);
    await close();
  });

  it('refuses invalid names, duplicates, collisions, bad partition counts and replication factors', async () => {
    const { topics, events, close } = await manager();
    await topics.create('a.b', opts(1));
    const cases: [string, { partitions: number; replicationFactor: number; configs: Record<string, string | null> }, number][] = [
      ['', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['.', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['..', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['x'.repeat(250), opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['with space', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['ünïcode', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['a.b', opts(1), ErrorCode.TOPIC_ALREADY_EXISTS],
      ['a_b', opts(1), ErrorCode.INVALID_TOPIC_EXCEPTION],
      ['zero', opts(0), ErrorCode.INVALID_PARTITIONS],
      ['negative', opts(-2), ErrorCode.INVALID_PARTITIONS],
      ['rf0', { partitions: 1, replicationFactor: 0, configs: {} }, ErrorCode.INVALID_REPLICATION_FACTOR],
      ['rf2', { partitions: 1, replicationFactor: 2, configs: {} }, ErrorCode.INVALID_REPLICATION_FACTOR],
      ['cfg-unknown', opts(1, { 'no.such': '1' }), ErrorCode.INVALID_CONFIG],
      ['cfg-null', opts(1, { 'retention.ms': null }), ErrorCode.INVALID_CONFIG],
      ['cfg-type', opts(1, { 'retention.ms': 'forever' }), ErrorCode.INVALID_CONFIG],
      ['cfg-range', opts(1, { 'retention.ms': '-2' }), ErrorCode.INVALID_CONFIG],
      ['cfg-enum', opts(1, { 'cleanup.policy': 'delete,shred' }), ErrorCode.INVALID_CONFIG],
      ['__consumer_offsets', opts(1), ErrorCode.INVALID_REQUEST],
    ];
    for (const [name, o, code] of cases) expect([name, (await kafkaError(topics.create(name, o)))[0]]).toEqual([name, code]);
    expect((await kafkaError(topics.create('a_b', opts(1))))[1]).toContain('collides with existing topic: a.b');
    expect(topics.list().map((t) => t.name)).toEqual(['a.b']);
    expect(events).toEqual(['created a.b 1']);
    // The broker itself may create internal topics.
    expect((await topics.create('__consumer_offsets', { ...opts(2), allowInternal: true })).internal).toBe(true);
    await close();
  });

  it('checks without creating when validateOnly is set', async () => {
    const { topics, events, close } = await manager();
    const t = await topics.create('maybe', { ...opts(2), validateOnly: true });
    expect(t.partitions).toBe(2);
    expect(topics.get('maybe')).toBeUndefined();
    expect(events).toEqual([]);
    await close();
  });

  it('deletes a topic, frees its name and its collision, and refuses internal or unknown ones', async () => {
    const { topics, events, close } = await manager();
    const t = await topics.create('x.y', opts(1));
    await topics.delete('x.y');
    expect(topics.get('x.y')).toBeUndefined();
    expect(topics.getById(t.topicId)).toBeUndefined();
    expect((await topics.create('x_y', opts(1))).name).toBe('x_y');
    expect((await kafkaError(topics.delete('x.y')))[0]).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await topics.create('__transaction_state', { ...opts(1), allowInternal: true });
    expect((await kafkaError(topics.delete('__transaction_state')))[0]).toBe(ErrorCode.INVALID_REQUEST);
    expect(events).toEqual(['created x.y 1', 'deleted x.y', 'created x_y 1', 'created __transaction_state 1']);
    await close();
  });

  it('adds partitions and refuses anything but an increase', async () => {
    const volume = new MemoryMetadataVolume();
    const { topics, events, close } = await manager([], volume);
    await topics.create('grow', opts(2));
    expect((await topics.addPartitions('grow', 5, false)).partitions).toBe(5);
    expect(events).toContain('added grow 2..4');
    expect((await kafkaError(topics.addPartitions('grow', 5, false)))[0]).toBe(ErrorCode.INVALID_PARTITIONS);
    expect((await kafkaError(topics.addPartitions('grow', 3, false)))[0]).toBe(ErrorCode.INVALID_PARTITIONS);
    expect((await kafkaError(topics.addPartitions('nope', 3, false)))[0]).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect((await topics.addPartitions('grow', 9, true)).partitions).toBe(9);
    expect(topics.get('grow')!.partitions).toBe(5);
    await close();
    const again = await manager([], volume);
    expect(again.topics.get('grow')!.partitions).toBe(5);
    await again.close();
  });

  it('bounds a creation and an increase at Kafka\'s 10,000 partitions per request with POLICY_VIOLATION, whoever asks (auto-creation too)', async () => {
    const { topics, events, close } = await manager([['num.partitions', '20000']]);
    const excessive: [number, string] = [ErrorCode.POLICY_VIOLATION, 'Excessively large number of partitions per request.'];
    expect(await kafkaError(topics.create('huge', opts(0x40000001)))).toEqual(excessive);
    expect(await kafkaError(topics.create('defaulted', opts(-1)))).toEqual(excessive);
    expect((await topics.create('edge', { ...opts(10_000), validateOnly: true })).partitions).toBe(10_000);
    await topics.create('small', opts(1));
    expect(await kafkaError(topics.addPartitions('small', 10_002, false))).toEqual(excessive);
    expect((await topics.addPartitions('small', 10_001, true)).partitions).toBe(10_001);
    expect(topics.list().map((t) => t.name)).toEqual(['small']);
    expect(events).toEqual(['created small 1']);
    await close();
  });

  it('quotes at most 256 characters of a too-long name in its error message', async () => {
    const { topics, close } = await manager();
    const [code, message] = await kafkaError(topics.create('x'.repeat(0x7fff), opts(1)));
    expect(code).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    expect(message).toBe(`Topic name is illegal, it can't be longer than 249 characters, topic name: ${'x'.repeat(256)}... (32767 characters)`);
    await close();
  });

  it('replaces config overrides and tells listeners', async () => {
    const { topics, events, close } = await manager();
    await topics.create('cfg', opts(1, { 'retention.ms': '1000' }));
    await topics.setConfigs('cfg', { 'segment.ms': '5000' }, false);
    expect(topics.get('cfg')!.configs).toEqual({ 'segment.ms': '5000' });
    expect(events.at(-1)).toBe('configs cfg {"segment.ms":"5000"}');
    await topics.setConfigs('cfg', {}, true);
    expect(topics.get('cfg')!.configs).toEqual({ 'segment.ms': '5000' });
    expect((await kafkaError(topics.setConfigs('cfg', { 'segment.ms': '0' }, false)))[0]).toBe(ErrorCode.INVALID_CONFIG);
    expect((await kafkaError(topics.setConfigs('nope', {}, false)))[0]).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    await close();
  });

  it('resolves retention.ms and segment.ms through Kafka\'s unit-converted broker synonyms', async () => {
    const resolveWith = async (overrides: [string, string][], name: string) => {
      const store = await openMemoryMetadataStore();
      const cfg = loadConfig({ overrides: [['log.dirs', '/d'], ...overrides] });
      const m = new TopicManager(store, cfg);
      const t = await m.create('t', { partitions: 1, replicationFactor: 1, configs: {} });
      const r = m.resolve(t, TOPIC_CONFIG_BY_NAME.get(name)!);
      await store.close();
      return r;
    };
    const dflt = await resolveWith([], 'retention.ms');
    expect(dflt.value).toBe(String(168 * 3_600_000));
    expect(dflt.source).toBe(ConfigSource.DEFAULT_CONFIG);
    expect(dflt.synonyms).toEqual([{ name: 'log.retention.hours', value: '168', source: ConfigSource.DEFAULT_CONFIG }]);
    expect((await resolveWith([['log.retention.hours', '2']], 'retention.ms')).value).toBe(String(2 * 3_600_000));
    const minutes = await resolveWith([['log.retention.hours', '2'], ['log.retention.minutes', '5']], 'retention.ms');
    expect(minutes.value).toBe('300000');
    expect(minutes.source).toBe(ConfigSource.STATIC_BROKER_CONFIG);
    expect(minutes.synonyms.map((s) => s.name)).toEqual(['log.retention.minutes', 'log.retention.hours', 'log.retention.hours']);
    expect((await resolveWith([['log.retention.minutes', '5'], ['log.retention.ms', '42']], 'retention.ms')).value).toBe('42');
    expect((await resolveWith([['log.roll.hours', '1']], 'segment.ms')).value).toBe('3600000');
  });

  it('resolves a config from the topic override, then the broker config, then Kafka default, with synonyms', async () => {
    const { topics, close } = await manager([
      ['log.retention.hours', '48'],
      ['message.max.bytes', '2000000'],
    ]);
    const t: TopicRecord = await topics.create('resolved', opts(1, { 'max.message.bytes': '3000000' }));
    const def = (name: string): NonNullable<ReturnType<typeof TOPIC_CONFIG_BY_NAME.get>> => TOPIC_CONFIG_BY_NAME.get(name)!;

    const maxMessage = topics.resolve(t, def('max.message.bytes'));
    expect(maxMessage).toMatchObject({ value: '3000000', source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    expect(maxMessage.synonyms).toEqual([
      { name: 'max.message.bytes', value: '3000000', source: ConfigSource.DYNAMIC_TOPIC_CONFIG },
      { name: 'message.max.bytes', value: '2000000', source: ConfigSource.STATIC_BROKER_CONFIG },
      // The default entry carries Kafka's default, as DescribeConfigs reports it.
      { name: 'message.max.bytes', value: '1048588', source: ConfigSource.DEFAULT_CONFIG },
    ]);
    // log.retention.hours feeds retention.ms through log.retention.ms's fallback.
    expect(topics.configValue(t, 'retention.ms')).toBe(String(48 * 3_600_000));
    expect(topics.resolve(t, def('segment.bytes'))).toMatchObject({ value: '1073741824', source: ConfigSource.DEFAULT_CONFIG });
    expect(topics.resolveAll(t).map((c) => c.def.name)).toEqual([...topics.resolveAll(t).map((c) => c.def.name)].sort());
    expect(() => topics.configValue(t, 'no.such')).toThrow();
    await close();
  });

  it('serializes concurrent changes: two creations of one name give one topic', async () => {
    const { topics, close } = await manager();
    const results = await Promise.allSettled([topics.create('race', opts(1)), topics.create('race', opts(2))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(((results[1] as PromiseRejectedResult).reason as ClusterApiError).errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    expect(topics.get('race')!.partitions).toBe(1);
    await close();
  });
});
