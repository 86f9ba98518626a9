/**
 * @platformatic/kafka 1.35.0 against a real broker process. It speaks the newest versions (Metadata v12,
 * Produce v9+, Fetch v17 by topic id, CreateTopics v7, DescribeConfigs v4, IncrementalAlterConfigs v1,
 * DeleteRecords v2, CreatePartitions v3), so this file covers the flexible encodings and the admin APIs:
 * topics and their errors, every codec it has on Node 20 (zstd needs node:zlib's zstd, absent here),
 * fetch by topic id, ListOffsets, DescribeConfigs with synonyms, AlterConfigs, IncrementalAlterConfigs
 * (SET, DELETE, APPEND, SUBTRACT), DeleteRecords, CreatePartitions, DescribeLogDirs, the idempotent
 * producer, and a SIGKILL restart.
 */
import { Admin, ConfigResourceTypes, Consumer, IncrementalAlterConfigOperationTypes, Producer } from '@platformatic/kafka';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigSource } from '../../src/cluster/config-defs.js';
import { BrokerProcess } from '../support/broker-process.js';

/** Kafka error names carried by a platformatic error (one per failed entity). */
function errorIds(e: unknown): string[] {
  const out: string[] = [];
  const walk = (x: unknown): void => {
    if (!x || typeof x !== 'object') return;
    const o = x as { apiId?: string; errors?: unknown[]; cause?: unknown };
    if (typeof o.apiId === 'string') out.push(o.apiId);
    for (const inner of o.errors ?? []) walk(inner);
    if (o.cause) walk(o.cause);
  };
  walk(e);
  return out;
}

async function failure(p: Promise<unknown>): Promise<string[]> {
  try {
    await p;
  } catch (e) {
    // A retried request fails once per attempt with the same error.
    const ids = [...new Set(errorIds(e))];
    return ids.length > 0 ? ids : [String(e)];
  }
  return [];
}

interface Fetched {
  offset: bigint;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  attributes: number;
}

describe.sequential('@platformatic/kafka 1.35.0', () => {
  let broker: BrokerProcess;
  let admin: Admin;
  let producer: Producer<Buffer, Buffer, Buffer, Buffer>;
  let consumer: Consumer<Buffer, Buffer, Buffer, Buffer>;
  const common = (): { clientId: string; bootstrapBrokers: string[]; retries: number; retryDelay: number; timeout: number } => ({
    clientId: 'platformatic-it',
    bootstrapBrokers: [broker.bootstrap],
    retries: 3,
    retryDelay: 100,
    timeout: 10_000,
  });

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'log.retention.bytes': '1073741824' } });
    admin = new Admin(common());
    producer = new Producer({ ...common(), autocreateTopics: false });
    consumer = new Consumer({ ...common(), groupId: 'unused-no-group-calls', maxWaitTime: 100 });
  });

  afterAll(async () => {
    await consumer?.close(true);
    await producer?.close(true);
    await admin?.close();
    await broker?.stop();
  });

  /** Every record of a partition from `from`, read with platformatic's raw Fetch (v17, by topic id). */
  async function fetchAll(topic: string, partition: number, from = 0n): Promise<{ records: Fetched[]; highWatermark: bigint; logStartOffset: bigint }> {
    const md = await admin.metadata({ topics: [topic], forceUpdate: true });
    const topicId = md.topics.get(topic)!.id;
    const out: Fetched[] = [];
    let offset = from;
    for (;;) {
      const res = await consumer.fetch({
        node: 1,
        maxWaitTime: 0,
        minBytes: 0,
        topics: [{ topicId, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: 4 * 1024 * 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }],
      });
      const p = res.responses[0]!.partitions[0]!;
      expect(res.responses[0]!.topicId).toBe(topicId);
      expect(p.errorCode).toBe(0);
      const batches = p.records ?? [];
      for (const b of batches) {
        for (const r of b.records) {
          const o = b.firstOffset + BigInt(r.offsetDelta);
          if (o < offset) continue;
          const headers: Record<string, string> = {};
          for (const [k, v] of r.headers) headers[k!.toString()] = v === null ? '<null>' : v.toString();
          out.push({ offset: o, key: r.key?.toString() ?? null, value: r.value === null ? null : r.value.toString(), headers, attributes: b.attributes });
        }
      }
      const last = batches[batches.length - 1];
      if (!last || last.firstOffset + BigInt(last.lastOffsetDelta) + 1n >= p.highWatermark) return { records: out, highWatermark: p.highWatermark, logStartOffset: p.logStartOffset };
      offset = last.firstOffset + BigInt(last.lastOffsetDelta) + 1n;
    }
  }

  it('creates topics with configs and answers errors per topic', async () => {
    const created = await admin.createTopics({ topics: ['pf-codecs'], partitions: 4, replicas: 1, configs: [{ name: 'retention.ms', value: '3600000' }] });
    expect(created).toEqual([expect.objectContaining({ name: 'pf-codecs', partitions: 4, replicas: 1 })]);
    // platformatic prints topic ids as UUIDs.
    expect(created[0]!.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(created[0]!.id).not.toBe('00000000-0000-0000-0000-000000000000');
    expect(created[0]!.configuration['retention.ms']).toBe('3600000');
    expect(await failure(admin.createTopics({ topics: ['pf-codecs'], partitions: 1, replicas: 1 }))).toEqual(['TOPIC_ALREADY_EXISTS']);
    expect(await failure(admin.createTopics({ topics: ['bad/name'], partitions: 1, replicas: 1 }))).toEqual(['INVALID_TOPIC_EXCEPTION']);
    expect(await failure(admin.createTopics({ topics: ['pf-zero'], partitions: 0, replicas: 1 }))).toEqual(['INVALID_PARTITIONS']);
    expect(await failure(admin.createTopics({ topics: ['pf-rf'], partitions: 1, replicas: 3 }))).toEqual(['INVALID_REPLICATION_FACTOR']);
    expect(await failure(admin.createTopics({ topics: ['pf-cfg'], partitions: 1, replicas: 1, configs: [{ name: 'no.such.config', value: '1' }] }))).toEqual(['INVALID_CONFIG']);
    expect(await failure(admin.createTopics({ topics: ['pf-cfg'], partitions: 1, replicas: 1, configs: [{ name: 'retention.ms', value: 'soon' }] }))).toEqual(['INVALID_CONFIG']);
    await admin.createTopics({ topics: ['pf.collide'], partitions: 1, replicas: 1 });
    expect(await failure(admin.createTopics({ topics: ['pf_collide'], partitions: 1, replicas: 1 }))).toEqual(['INVALID_TOPIC_EXCEPTION']);
    const topics = await admin.listTopics();
    expect(topics).toEqual(expect.arrayContaining(['pf-codecs', 'pf.collide']));
    for (const t of ['pf-zero', 'pf-rf', 'pf-cfg', 'pf_collide']) expect(topics).not.toContain(t);
    await admin.deleteTopics({ topics: ['pf.collide'] });
    // Once the colliding topic is gone the other spelling may be created.
    await admin.createTopics({ topics: ['pf_collide'], partitions: 1, replicas: 1 });
  });

  it('produces with none, gzip, snappy and lz4, with keys, headers and empty values, read back by topic id', async () => {
    const codecs = ['none', 'gzip', 'snappy', 'lz4'] as const;
    for (const [partition, compression] of codecs.entries()) {
      const messages = Array.from({ length: 25 }, (_, i) => ({
        topic: 'pf-codecs',
        partition,
        key: Buffer.from(`k-${compression}-${i}`),
        value: Buffer.from(i === 4 ? '' : `${compression} value ${i} `.repeat(i + 1)),
        headers: i % 2 === 0 ? new Map([[Buffer.from('codec'), Buffer.from(compression)], [Buffer.from('idx'), Buffer.from(String(i))]]) : undefined,
      }));
      const res = await producer.send({ messages, compression, acks: -1 });
      expect(res.offsets).toEqual([{ topic: 'pf-codecs', partition, offset: 0n }]);
      const { records, highWatermark } = await fetchAll('pf-codecs', partition);
      expect(highWatermark).toBe(25n);
      expect(records.map((r) => r.offset)).toEqual(messages.map((_, i) => BigInt(i)));
      records.forEach((r, i) => {
        expect(r.key).toBe(`k-${compression}-${i}`);
        expect(r.value).toBe(messages[i]!.value.toString());
        expect(r.headers).toEqual(i % 2 === 0 ? { codec: compression, idx: String(i) } : {});
        expect(r.attributes & 7).toBe(partition);
      });
    }
  });

  it('lists offsets: earliest, latest and by timestamp', async () => {
    await admin.createTopics({ topics: ['pf-times'], partitions: 1, replicas: 1 });
    const t0 = BigInt(Date.now() - 100_000);
    for (let i = 0; i < 6; i++) {
      await producer.send({ messages: [{ topic: 'pf-times', partition: 0, value: Buffer.from(`t${i}`), timestamp: t0 + BigInt(i * 10_000) }], acks: -1 });
    }
    const list = async (timestamp: bigint): Promise<{ offset: bigint; timestamp: bigint }> => {
      const [t] = await admin.listOffsets({ topics: [{ name: 'pf-times', partitions: [{ partitionIndex: 0, timestamp }] }] });
      return t!.partitions[0]!;
    };
    expect((await list(-2n)).offset).toBe(0n);
    expect((await list(-1n)).offset).toBe(6n);
    expect(await list(t0 + 25_000n)).toEqual(expect.objectContaining({ offset: 3n, timestamp: t0 + 30_000n }));
    expect(await list(t0 + 50_000n)).toEqual(expect.objectContaining({ offset: 5n, timestamp: t0 + 50_000n }));
    expect(await list(t0 + 50_001n)).toEqual(expect.objectContaining({ offset: -1n, timestamp: -1n }));
    // KIP-734: the record with the largest timestamp.
    expect(await list(-3n)).toEqual(expect.objectContaining({ offset: 5n, timestamp: t0 + 50_000n }));
  });

  it('describes topic and broker configs with their sources and synonyms', async () => {
    const [topic] = await admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-codecs', configurationKeys: ['retention.ms', 'retention.bytes', 'segment.bytes'] }], includeSynonyms: true });
    const byName = new Map(topic!.configs.map((c) => [c.name, c]));
    expect([...byName.keys()].sort()).toEqual(['retention.bytes', 'retention.ms', 'segment.bytes']);
    const retentionMs = byName.get('retention.ms')!;
    expect(retentionMs.value).toBe('3600000');
    expect(retentionMs.configSource).toBe(ConfigSource.DYNAMIC_TOPIC_CONFIG);
    expect(retentionMs.synonyms.map((s) => [s.name, s.value, s.source])).toEqual([
      ['retention.ms', '3600000', ConfigSource.DYNAMIC_TOPIC_CONFIG],
      ['log.retention.hours', '168', ConfigSource.DEFAULT_CONFIG],
    ]);
    // log.retention.bytes was set on the command line: a static broker config.
    const retentionBytes = byName.get('retention.bytes')!;
    expect(retentionBytes.value).toBe('1073741824');
    expect(retentionBytes.configSource).toBe(ConfigSource.STATIC_BROKER_CONFIG);
    expect(retentionBytes.synonyms.map((s) => [s.name, s.source])).toEqual([
      ['log.retention.bytes', ConfigSource.STATIC_BROKER_CONFIG],
      ['log.retention.bytes', ConfigSource.DEFAULT_CONFIG],
    ]);
    expect(byName.get('segment.bytes')!.configSource).toBe(ConfigSource.DEFAULT_CONFIG);

    const [brokerRes] = await admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: '1', configurationKeys: ['log.retention.bytes', 'num.partitions'] }], includeSynonyms: false });
    expect(new Map(brokerRes!.configs.map((c) => [c.name, [c.value, c.configSource]]))).toEqual(
      new Map([
        ['log.retention.bytes', ['1073741824', ConfigSource.STATIC_BROKER_CONFIG]],
        ['num.partitions', ['1', ConfigSource.DEFAULT_CONFIG]],
      ]),
    );
    expect(await failure(admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-missing' }] }))).toEqual(['UNKNOWN_TOPIC_OR_PARTITION']);
  });

  it('replaces overrides with AlterConfigs and edits them with IncrementalAlterConfigs', async () => {
    const topicConfigs = async (): Promise<Record<string, string>> => {
      const [r] = await admin.describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-codecs' }] });
      const out: Record<string, string> = {};
      for (const c of r!.configs) if (c.configSource === ConfigSource.DYNAMIC_TOPIC_CONFIG) out[c.name] = c.value!;
      return out;
    };
    expect(await topicConfigs()).toEqual({ 'retention.ms': '3600000' });
    // AlterConfigs replaces the whole set of overrides.
    await admin.alterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-codecs', configs: [{ name: 'cleanup.policy', value: 'delete' }, { name: 'segment.ms', value: '60000' }] }] });
    expect(await topicConfigs()).toEqual({ 'cleanup.policy': 'delete', 'segment.ms': '60000' });
    // validateOnly changes nothing.
    await admin.alterConfigs({ validateOnly: true, resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-codecs', configs: [] }] });
    expect(await topicConfigs()).toEqual({ 'cleanup.policy': 'delete', 'segment.ms': '60000' });

    const inc = (configs: { name: string; configOperation: number; value?: string }[]): Promise<void> =>
      admin.incrementalAlterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: 'pf-codecs', configs: configs as never }] });
    await inc([{ name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.APPEND, value: 'compact' }]);
    expect((await topicConfigs())['cleanup.policy']).toBe('delete,compact');
    // Appending what is there already adds nothing.
    await inc([{ name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.APPEND, value: 'delete' }]);
    expect((await topicConfigs())['cleanup.policy']).toBe('delete,compact');
    await inc([{ name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.SUBTRACT, value: 'delete' }]);
    expect((await topicConfigs())['cleanup.policy']).toBe('compact');
    await inc([
      { name: 'segment.ms', configOperation: IncrementalAlterConfigOperationTypes.DELETE },
      { name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '7200000' },
    ]);
    expect(await topicConfigs()).toEqual({ 'cleanup.policy': 'compact', 'retention.ms': '7200000' });
    // APPEND is only for list configs; invalid values and unknown names are INVALID_CONFIG; nothing changes.
    expect(await failure(inc([{ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.APPEND, value: '1' }]))).toEqual(['INVALID_CONFIG']);
    expect(await failure(inc([{ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '-5' }]))).toEqual(['INVALID_CONFIG']);
    expect(await failure(inc([{ name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.SET, value: 'forever' }]))).toEqual(['INVALID_CONFIG']);
    expect(await failure(inc([{ name: 'no.such', configOperation: IncrementalAlterConfigOperationTypes.SET, value: '1' }]))).toEqual(['INVALID_CONFIG']);
    expect(await topicConfigs()).toEqual({ 'cleanup.policy': 'compact', 'retention.ms': '7200000' });
    // A broker's own dynamic value of a reconfigurable config is taken; one Kafka cannot change at runtime is not.
    const brokerConfig = (name: string, value: string | null) =>
      admin.incrementalAlterConfigs({
        resources: [{ resourceType: ConfigResourceTypes.BROKER, resourceName: '1', configs: [{ name, ...(value === null ? { configOperation: IncrementalAlterConfigOperationTypes.DELETE } : { configOperation: IncrementalAlterConfigOperationTypes.SET, value }) }] }],
      });
    await brokerConfig('log.retention.ms', '86400000');
    await brokerConfig('log.retention.ms', null);
    expect(await failure(brokerConfig('log.dirs', '/elsewhere'))).toEqual(['INVALID_CONFIG']);
    await inc([{ name: 'cleanup.policy', configOperation: IncrementalAlterConfigOperationTypes.SET, value: 'delete' }]);
  });

  it('moves the log start offset with DeleteRecords and refuses offsets past the high watermark', async () => {
    await admin.createTopics({ topics: ['pf-trim'], partitions: 2, replicas: 1 });
    for (let i = 0; i < 10; i++) await producer.send({ messages: [{ topic: 'pf-trim', partition: 0, value: Buffer.from(`r${i}`) }], acks: -1 });
    const [deleted] = await admin.deleteRecords({ topics: [{ name: 'pf-trim', partitions: [{ partition: 0, offset: 4n }] }] });
    expect(deleted!.partitions).toEqual([{ partition: 0, lowWatermark: 4n }]);
    const after = await fetchAll('pf-trim', 0, 4n);
    expect(after.logStartOffset).toBe(4n);
    expect(after.records.map((r) => r.value)).toEqual(['r4', 'r5', 'r6', 'r7', 'r8', 'r9']);
    const [earliest] = await admin.listOffsets({ topics: [{ name: 'pf-trim', partitions: [{ partitionIndex: 0, timestamp: -2n }] }] });
    expect(earliest!.partitions[0]!.offset).toBe(4n);
    // A fetch below the log start offset is out of range.
    const md = await admin.metadata({ topics: ['pf-trim'] });
    const res = await consumer.fetch({ node: 1, maxWaitTime: 0, minBytes: 0, topics: [{ topicId: md.topics.get('pf-trim')!.id, partitions: [{ partition: 0, fetchOffset: 1n, partitionMaxBytes: 1024, currentLeaderEpoch: -1, lastFetchedEpoch: -1 }] }] }).catch((e: unknown) => e);
    expect(errorIds(res)).toContain('OFFSET_OUT_OF_RANGE');
    expect(await failure(admin.deleteRecords({ topics: [{ name: 'pf-trim', partitions: [{ partition: 0, offset: 11n }] }] }))).toEqual(['OFFSET_OUT_OF_RANGE']);
    // -1: up to the high watermark.
    const [all] = await admin.deleteRecords({ topics: [{ name: 'pf-trim', partitions: [{ partition: 0, offset: -1n }] }] });
    expect(all!.partitions[0]!.lowWatermark).toBe(10n);
  });

  it('adds partitions with CreatePartitions and refuses decreases', async () => {
    await admin.createTopics({ topics: ['pf-grow'], partitions: 2, replicas: 1 });
    await admin.createPartitions({ topics: [{ name: 'pf-grow', count: 5 }] });
    const md = await admin.metadata({ topics: ['pf-grow'], forceUpdate: true });
    expect(md.topics.get('pf-grow')!.partitionsCount).toBe(5);
    const res = await producer.send({ messages: [{ topic: 'pf-grow', partition: 4, value: Buffer.from('in a new partition') }], acks: -1 });
    expect(res.offsets).toEqual([{ topic: 'pf-grow', partition: 4, offset: 0n }]);
    expect((await fetchAll('pf-grow', 4)).records.map((r) => r.value)).toEqual(['in a new partition']);
    expect(await failure(admin.createPartitions({ topics: [{ name: 'pf-grow', count: 3 }] }))).toEqual(['INVALID_PARTITIONS']);
    expect(await failure(admin.createPartitions({ topics: [{ name: 'pf-grow', count: 5 }] }))).toEqual(['INVALID_PARTITIONS']);
    expect(await failure(admin.createPartitions({ topics: [{ name: 'pf-nope', count: 5 }] }))).toEqual(['UNKNOWN_TOPIC_OR_PARTITION']);
    await admin.createPartitions({ topics: [{ name: 'pf-grow', count: 9 }], validateOnly: true });
    expect((await admin.metadata({ topics: ['pf-grow'], forceUpdate: true })).topics.get('pf-grow')!.partitionsCount).toBe(5);
  });

  it('describes the log directory with partition sizes', async () => {
    const dirs = await admin.describeLogDirs({ topics: [{ name: 'pf-codecs', partitions: [0, 1, 2, 3] }] });
    expect(dirs).toHaveLength(1);
    expect(dirs[0]!.broker).toBe(1);
    const logDir = dirs[0]!.results[0]!;
    expect(logDir.logDir).toBe(broker.dataDir);
    expect(logDir.totalBytes).toBeGreaterThan(0n);
    expect(logDir.usableBytes).toBeGreaterThan(0n);
    const parts = logDir.topics.find((t) => t.name === 'pf-codecs')!.partitions;
    expect(parts.map((p) => p.partitionIndex).sort()).toEqual([0, 1, 2, 3]);
    expect(parts.every((p) => p.partitionSize > 0n)).toBe(true);
  });

  it('runs an idempotent producer and keeps its records after a SIGKILL restart', async () => {
    await admin.createTopics({ topics: ['pf-idem'], partitions: 3, replicas: 1 });
    const idem = new Producer({ ...common(), idempotent: true, autocreateTopics: false });
    try {
      for (let round = 0; round < 4; round++) {
        await idem.send({ messages: [0, 1, 2].map((partition) => ({ topic: 'pf-idem', partition, key: Buffer.from(`r${round}`), value: Buffer.from(`round ${round} p${partition}`) })), acks: -1 });
      }
      await broker.restart();
      // The same producer goes on after the restart: the broker rebuilt its sequence state from the log.
      const res = await idem.send({ messages: [0, 1, 2].map((partition) => ({ topic: 'pf-idem', partition, value: Buffer.from(`after p${partition}`) })), acks: -1 });
      expect(res.offsets!.map((o) => o.offset)).toEqual([4n, 4n, 4n]);
    } finally {
      await idem.close(true);
    }
    for (const partition of [0, 1, 2]) {
      const { records } = await fetchAll('pf-idem', partition);
      expect(records.map((r) => r.value)).toEqual([...[0, 1, 2, 3].map((r) => `round ${r} p${partition}`), `after p${partition}`]);
    }
    // Everything written before the restart is still there.
    for (let partition = 0; partition < 4; partition++) expect((await fetchAll('pf-codecs', partition)).records).toHaveLength(25);
    expect((await fetchAll('pf-trim', 0, 10n)).logStartOffset).toBe(10n);
  });
});
