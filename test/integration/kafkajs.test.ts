/**
 * kafkajs 2.2.4 against a real broker process: topic administration and its errors, producing with every
 * compression codec, keys, null values, headers, 1 MiB records, many partitions, idempotence, offsets by
 * time, and everything read back byte for byte at the offsets the broker acknowledged, before and after
 * the broker is killed with SIGKILL and restarted on the same data directory.
 *
 * kafkajs consumers need consumer groups, so records are read back with the project's own client.
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType, Producer, RecordMetadata } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionType } from '../../protocol/compression/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { registerKafkajsCodecs } from '../support/kafkajs-codecs.js';
import { readPartition, type ReadRecord } from '../support/records.js';

const { Kafka, logLevel, CompressionTypes } = kafkajs;

registerKafkajsCodecs();

interface Sent {
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
  compression: number;
}

describe.sequential('kafkajs 2.2.4', () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  let admin: Admin;
  let producer: Producer;
  let client: KafkaClient;
  /** Every acknowledged record, to be read back after the restart. */
  const sent: Sent[] = [];

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    kafka = new Kafka({ clientId: 'kafkajs-it', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await producer.connect();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'readback' });
  });

  afterAll(async () => {
    await producer?.disconnect();
    await admin?.disconnect();
    await client?.close();
    await broker?.stop();
  });

  function remember(meta: RecordMetadata[], topic: string, partition: number, messages: { key: string | null; value: Buffer | null; headers?: Record<string, string> }[], compression: number): void {
    const m = meta.find((x) => x.topicName === topic && x.partition === partition)!;
    expect(m.errorCode).toBe(0);
    const base = Number(m.baseOffset);
    messages.forEach((msg, i) => sent.push({ topic, partition, offset: base + i, key: msg.key, value: msg.value, headers: msg.headers ?? {}, compression }));
  }

  function expectSame(read: ReadRecord[], expected: Sent[]): void {
    expect(read.map((r) => r.offset)).toEqual(expected.map((s) => s.offset));
    read.forEach((r, i) => {
      const s = expected[i]!;
      expect(r.key).toBe(s.key);
      if (s.value === null) expect(r.value).toBeNull();
      else expect(r.value!.equals(s.value)).toBe(true);
      expect(r.headers).toEqual(s.headers);
      expect(r.compression).toBe(s.compression);
    });
  }

  it('creates topics and lists them; answers TOPIC_ALREADY_EXISTS for a second creation', async () => {
    expect(await admin.createTopics({ topics: [{ topic: 'codecs', numPartitions: 5 }, { topic: 'dotted.name', numPartitions: 1 }] })).toBe(true);
    // kafkajs turns an all-TOPIC_ALREADY_EXISTS answer into `false`.
    expect(await admin.createTopics({ topics: [{ topic: 'codecs', numPartitions: 5 }] })).toBe(false);
    const topics = await admin.listTopics();
    expect(topics).toEqual(expect.arrayContaining(['codecs', 'dotted.name']));
    const md = await admin.fetchTopicMetadata({ topics: ['codecs'] });
    expect(md.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3, 4]);
    expect(md.topics[0]!.partitions.every((p) => p.leader === 1 && p.replicas.length === 1)).toBe(true);
  });

  it('refuses invalid names, "."/"_" collisions and invalid partition counts', async () => {
    const attempt = async (topic: string, numPartitions = 1): Promise<string> => {
      try {
        await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: false });
        return 'created';
      } catch (e) {
        const err = e as { errors?: { type: string }[]; type?: string };
        return err.errors?.[0]?.type ?? err.type ?? String(e);
      }
    };
    expect(await attempt('bad name!')).toBe('INVALID_TOPIC_EXCEPTION');
    expect(await attempt('x'.repeat(250))).toBe('INVALID_TOPIC_EXCEPTION');
    expect(await attempt('..')).toBe('INVALID_TOPIC_EXCEPTION');
    // 'dotted.name' exists: 'dotted_name' collides with it.
    expect(await attempt('dotted_name')).toBe('INVALID_TOPIC_EXCEPTION');
    expect(await attempt('zero-partitions', 0)).toBe('INVALID_PARTITIONS');
    expect(await attempt('negative-partitions', -7)).toBe('INVALID_PARTITIONS');
    expect(await admin.listTopics()).not.toEqual(expect.arrayContaining(['dotted_name']));
  });

  it('deletes a topic, after which it is unknown and its name can be reused empty', async () => {
    await admin.createTopics({ topics: [{ topic: 'short-lived', numPartitions: 2 }] });
    // A producer of its own: a kafkajs producer keeps refreshing metadata of every topic it ever sent to.
    const once = kafka.producer({ createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await once.connect();
    const meta = await once.send({ topic: 'short-lived', messages: [{ partition: 0, value: 'gone soon' }] });
    await once.disconnect();
    expect(meta[0]!.errorCode).toBe(0);
    await admin.deleteTopics({ topics: ['short-lived'] });
    expect(await admin.listTopics()).not.toContain('short-lived');
    // kafkajs retries UNKNOWN_TOPIC_OR_PARTITION; the broker's answer is what matters.
    expect(await client.deleteTopics(['short-lived'])).toEqual([expect.objectContaining({ name: 'short-lived', errorCode: 3 })]);
    await admin.createTopics({ topics: [{ topic: 'short-lived', numPartitions: 1 }] });
    const offsets = await admin.fetchTopicOffsets('short-lived');
    expect(offsets).toEqual([expect.objectContaining({ partition: 0, low: '0', high: '0' })]);
  });

  it('produces with every codec, keys, null values and headers, and reads them back at the acknowledged offsets', async () => {
    const codecs = [
      [CompressionTypes.None, CompressionType.NONE],
      [CompressionTypes.GZIP, CompressionType.GZIP],
      [CompressionTypes.Snappy, CompressionType.SNAPPY],
      [CompressionTypes.LZ4, CompressionType.LZ4],
      [CompressionTypes.ZSTD, CompressionType.ZSTD],
    ] as const;
    for (const [i, [kafkajsType, id]] of codecs.entries()) {
      const messages = Array.from({ length: 40 }, (_, j) => ({
        key: j % 5 === 0 ? null : `key-${i}-${j}`,
        value: j % 7 === 3 ? null : Buffer.from(`value ${i}/${j} `.repeat(1 + (j % 11))),
        headers: (j % 3 === 0 ? { 'h-one': `one-${j}`, trace: 'x'.repeat(j) } : {}) as Record<string, string>,
      }));
      const meta = await producer.send({ topic: 'codecs', compression: kafkajsType, acks: -1, messages: messages.map((m) => ({ ...m, partition: i })) });
      remember(meta, 'codecs', i, messages, id);
    }
    for (let p = 0; p < codecs.length; p++) {
      const expected = sent.filter((s) => s.topic === 'codecs' && s.partition === p);
      expect(expected[0]!.offset).toBe(0);
      expectSame(await readPartition(client, 'codecs', p), expected);
    }
  });

  it('accepts a 1 MiB record where max.message.bytes allows it and answers MESSAGE_TOO_LARGE below it', async () => {
    await admin.createTopics({ topics: [{ topic: 'large', numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: String(3 * 1024 * 1024) }] }, { topic: 'small-limit', numPartitions: 1 }] });
    const big = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
    const meta = await producer.send({ topic: 'large', acks: -1, messages: [{ partition: 0, key: 'big-1', value: big }, { partition: 0, key: 'big-2', value: big.subarray(1) }] });
    remember(meta, 'large', 0, [{ key: 'big-1', value: big }, { key: 'big-2', value: Buffer.from(big.subarray(1)) }], CompressionType.NONE);
    expectSame(await readPartition(client, 'large', 0), sent.filter((s) => s.topic === 'large'));
    // The default max.message.bytes (1048588) is below a batch carrying a 1 MiB value plus overhead.
    await expect(producer.send({ topic: 'small-limit', acks: -1, messages: [{ partition: 0, value: Buffer.concat([big, Buffer.alloc(100)]) }] })).rejects.toMatchObject({
      type: 'MESSAGE_TOO_LARGE',
    });
    expect(await admin.fetchTopicOffsets('small-limit')).toEqual([expect.objectContaining({ high: '0' })]);
  });

  it('spreads keyed records over 48 partitions and reads each partition back in order', async () => {
    await admin.createTopics({ topics: [{ topic: 'wide', numPartitions: 48 }] });
    const messages = Array.from({ length: 600 }, (_, i) => ({ key: `k${i % 97}`, value: Buffer.from(`v${i}`) }));
    const meta = await producer.send({ topic: 'wide', acks: -1, compression: CompressionTypes.LZ4, messages });
    const used = new Set(meta.map((m) => m.partition));
    expect(used.size).toBeGreaterThan(20);
    let total = 0;
    for (const m of meta) {
      const rs = await readPartition(client, 'wide', m.partition);
      total += rs.length;
      expect(rs[0]!.offset).toBe(Number(m.baseOffset));
      expect(rs.map((r) => r.offset)).toEqual(rs.map((_, i) => i));
      // Records of a key stay in one partition and in production order.
      const values = rs.map((r) => Number(r.value!.toString().slice(1)));
      expect([...values].sort((a, b) => a - b)).toEqual(values);
      for (const r of rs) sent.push({ topic: 'wide', partition: m.partition, offset: r.offset, key: r.key, value: r.value, headers: {}, compression: CompressionType.LZ4 });
    }
    expect(total).toBe(600);
  });

  it('reports earliest, latest and by-timestamp offsets through ListOffsets', async () => {
    await admin.createTopics({ topics: [{ topic: 'timed', numPartitions: 1 }] });
    const t0 = Date.now() - 60_000;
    const messages = Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `at ${i}`, timestamp: String(t0 + i * 1000) }));
    for (const m of messages) remember(await producer.send({ topic: 'timed', acks: -1, messages: [m] }), 'timed', 0, [{ key: null, value: Buffer.from(m.value) }], CompressionType.NONE);
    expect(await admin.fetchTopicOffsets('timed')).toEqual([expect.objectContaining({ partition: 0, low: '0', high: '10' })]);
    expect(await admin.fetchTopicOffsetsByTimestamp('timed', t0 + 3500)).toEqual([{ partition: 0, offset: '4' }]);
    expect(await admin.fetchTopicOffsetsByTimestamp('timed', t0)).toEqual([{ partition: 0, offset: '0' }]);
    // Later than every record: the log end offset (Kafka answers -1; kafkajs maps it to the high watermark).
    expect(await admin.fetchTopicOffsetsByTimestamp('timed', t0 + 3_600_000)).toEqual([{ partition: 0, offset: '10' }]);
    const read = await readPartition(client, 'timed', 0);
    expect(read.map((r) => r.timestamp)).toEqual(messages.map((m) => Number(m.timestamp)));
  });

  it('keeps an idempotent producer in sequence across records and partitions', async () => {
    await admin.createTopics({ topics: [{ topic: 'idempotent', numPartitions: 2 }] });
    const idem = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await idem.connect();
    try {
      for (let round = 0; round < 5; round++) {
        for (const partition of [0, 1]) {
          const messages = Array.from({ length: 3 }, (_, i) => ({ key: `r${round}`, value: Buffer.from(`p${partition} r${round} i${i}`) }));
          const meta = await idem.send({ topic: 'idempotent', acks: -1, messages: messages.map((m) => ({ ...m, partition })) });
          remember(meta, 'idempotent', partition, messages, CompressionType.NONE);
        }
      }
    } finally {
      await idem.disconnect();
    }
    for (const partition of [0, 1]) {
      const read = await readPartition(client, 'idempotent', partition);
      expectSame(read, sent.filter((s) => s.topic === 'idempotent' && s.partition === partition));
      expect(new Set(read.map((r) => r.producerId)).size).toBe(1);
      expect(read[0]!.producerId).toBeGreaterThanOrEqual(0n);
    }
  });

  it('describes and alters configs, adds partitions and deletes records through the kafkajs admin', async () => {
    const { ConfigResourceTypes } = kafkajs;
    await admin.createTopics({ topics: [{ topic: 'admin-ops', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '86400000' }] }] });
    const described = await admin.describeConfigs({ includeSynonyms: true, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'admin-ops', configNames: ['retention.ms', 'cleanup.policy'] }] });
    const entries = new Map(described.resources[0]!.configEntries.map((e) => [e.configName, e]));
    expect(entries.get('retention.ms')).toMatchObject({ configValue: '86400000', isDefault: false, readOnly: false });
    expect(entries.get('retention.ms')!.configSynonyms.map((s) => s.configName)).toEqual(['retention.ms', 'log.retention.hours']);
    expect(entries.get('cleanup.policy')).toMatchObject({ configValue: 'delete', isDefault: true });
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'admin-ops', configEntries: [{ name: 'segment.ms', value: '3600000' }] }] });
    const after = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'admin-ops', configNames: ['retention.ms', 'segment.ms'] }] });
    // AlterConfigs replaces every override: retention.ms is back to its default.
    expect(Object.fromEntries(after.resources[0]!.configEntries.map((e) => [e.configName, [e.configValue, e.isDefault]]))).toEqual({
      'retention.ms': ['604800000', true],
      'segment.ms': ['3600000', false],
    });
    await expect(
      admin.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: 'admin-ops', configEntries: [{ name: 'segment.ms', value: 'never' }] }] }),
    ).rejects.toMatchObject({ type: 'INVALID_CONFIG' });

    await admin.createPartitions({ topicPartitions: [{ topic: 'admin-ops', count: 3 }] });
    expect((await admin.fetchTopicMetadata({ topics: ['admin-ops'] })).topics[0]!.partitions).toHaveLength(3);
    const meta = await producer.send({ topic: 'admin-ops', acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ partition: 2, value: `d${i}` })) });
    remember(meta, 'admin-ops', 2, Array.from({ length: 6 }, (_, i) => ({ key: null, value: Buffer.from(`d${i}`) })), CompressionType.NONE);
    await admin.deleteTopicRecords({ topic: 'admin-ops', partitions: [{ partition: 2, offset: '4' }] });
    expect((await admin.fetchTopicOffsets('admin-ops')).find((o) => o.partition === 2)).toMatchObject({ low: '4', high: '6' });
    // What was deleted is not expected back after the restart either.
    sent.splice(0, sent.length, ...sent.filter((s) => !(s.topic === 'admin-ops' && s.offset < 4)));
  });

  it('reads back every acknowledged record after the broker is killed with SIGKILL and restarted', async () => {
    const before = sent.length;
    expect(before).toBeGreaterThan(800);
    await broker.restart();
    await client.close();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'readback-2' });
    const byPartition = new Map<string, Sent[]>();
    for (const s of sent) {
      const k = `${s.topic}/${s.partition}`;
      if (!byPartition.has(k)) byPartition.set(k, []);
      byPartition.get(k)!.push(s);
    }
    for (const [k, list] of byPartition) {
      const [topic, p] = k.split('/') as [string, string];
      list.sort((a, b) => a.offset - b.offset);
      expectSame(await readPartition(client, topic, Number(p), BigInt(list[0]!.offset)), list);
    }
    // The topics, their partition counts and configs survived too.
    expect((await admin.fetchTopicMetadata({ topics: ['wide'] })).topics[0]!.partitions).toHaveLength(48);
    // kafkajs reconnects by itself and goes on producing after the last offset.
    const meta = await producer.send({ topic: 'codecs', acks: -1, messages: [{ partition: 0, value: 'after restart' }] });
    expect(meta[0]!.baseOffset).toBe('40');
  });
});
