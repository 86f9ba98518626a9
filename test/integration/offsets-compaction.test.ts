/**
 * __consumer_offsets compacted by the broker's log cleaner, as Kafka's is: kafkajs consumers commit offsets many
 * times for a few groups; with small ledgers (offsets.topic.segment.bytes=4096, whose minimum is Kafka's, 1) and the
 * cleaner looking every 100 ms (log.cleaner.backoff.ms), the partition's stored bytes shrink to about the live
 * records while the high watermark keeps counting every commit; the topic carries Kafka's configs; and a broker
 * stopped gracefully (SIGTERM), then killed with SIGKILL after more commits, comes back with every group's
 * committed offsets intact.
 */
import kafkajs from 'kafkajs';
import type { Admin, Consumer, Kafka as KafkaType } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

const GROUPS = ['g0', 'g1', 'g2', 'g3'];
const PARTITIONS = 4;
const ROUNDS = 60;

function adminUrl(b: BrokerProcess): string {
  const line = [...b.logs].reverse().find((l) => l.includes('"admin HTTP endpoint listening"'));
  if (!line) throw new Error('no admin endpoint in the broker log');
  return (JSON.parse(line) as { url: string }).url;
}

/** A per-partition metric of __consumer_offsets-0, 0 when not reported. */
async function offsetsMetric(b: BrokerProcess, name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl(b)}/metrics`)).text();
  const m = new RegExp(`^${name}\\{topic="__consumer_offsets",partition="0"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe.sequential('__consumer_offsets compacted by the log cleaner', () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  let admin: Admin;

  async function connect(): Promise<void> {
    kafka = new Kafka({ clientId: 'offsets-compaction', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 8, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
  }

  beforeAll(async () => {
    broker = await BrokerProcess.start({
      configs: {
        'log.cleaner.backoff.ms': '100',
        'offsets.topic.num.partitions': '1',
        'offsets.topic.segment.bytes': '4096',
        'ledgerline.admin.listener': 'http://127.0.0.1:0',
        'group.initial.rebalance.delay.ms': '0',
      },
    });
    await connect();
  });

  /** One classic consumer per group, joined, commits every partition of t once a round (OffsetCommit with its generation). */
  async function commitRounds(from: number, to: number, expected: Map<string, Map<number, string>>): Promise<void> {
    const consumers: Consumer[] = [];
    try {
      for (const groupId of GROUPS) {
        const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100 });
        consumers.push(consumer);
        const joined = new Promise<void>((resolve) => consumer.on(consumer.events.GROUP_JOIN, () => resolve()));
        await consumer.connect();
        await consumer.subscribe({ topic: 't', fromBeginning: true });
        await consumer.run({ autoCommit: false, eachBatch: async () => undefined });
        await joined;
      }
      for (let round = from; round < to; round++) {
        for (const [i, groupId] of GROUPS.entries()) {
          const partitions = Array.from({ length: PARTITIONS }, (_, p) => ({ topic: 't', partition: p, offset: String(round * 10 + p) }));
          await consumers[i]!.commitOffsets(partitions);
          for (const { partition, offset } of partitions) expected.get(groupId)!.set(partition, offset);
        }
      }
    } finally {
      for (const c of consumers) await c.disconnect().catch(() => undefined);
    }
  }

  afterAll(async () => {
    await admin?.disconnect().catch(() => undefined);
    await broker?.stop();
  });

  it('shrinks the partition to its live records while every commit is counted, and a restarted broker loads every group\'s offsets', { timeout: 180_000 }, async () => {
    await admin.createTopics({ topics: [{ topic: 't', numPartitions: PARTITIONS }] });
    const expected = new Map<string, Map<number, string>>(GROUPS.map((g) => [g, new Map()]));
    await commitRounds(0, ROUNDS, expected);
    // Every OffsetCommit wrote PARTITIONS records; the high watermark counts them all, compaction or not.
    const [end] = await admin.fetchTopicOffsets('__consumer_offsets');
    expect(Number(end!.high)).toBeGreaterThanOrEqual(ROUNDS * GROUPS.length * PARTITIONS);

    // Kafka's GroupCoordinatorService.groupMetadataTopicConfigs.
    const described = await admin.describeConfigs({ resources: [{ type: 2, name: '__consumer_offsets', configNames: ['cleanup.policy', 'compression.type', 'segment.bytes'] }], includeSynonyms: false });
    expect(Object.fromEntries(described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]))).toEqual({
      'cleanup.policy': 'compact',
      'compression.type': 'producer',
      'segment.bytes': '4096',
    });

    // Uncompacted, every commit's batch would stay: at least a 61-byte header and 4 records of 20 bytes or more.
    // Compacted, about one record of each group and partition is left, with the open ledger (at most 4096 bytes)
    // and what came after the last pass.
    const uncompactedAtLeast = ROUNDS * GROUPS.length * (61 + PARTITIONS * 20);
    let size = 0;
    await waitFor(
      'the cleaner to compact __consumer_offsets-0',
      async () => {
        size = await offsetsMetric(broker, 'ledgerline_partition_size_bytes');
        return (await offsetsMetric(broker, 'kafka_log_logcleaner_cleaned_bytes')) > 0 && size > 0 && size < uncompactedAtLeast / 3;
      },
      60_000,
      100,
    );
    expect(size).toBeLessThan(4 * 4096);

    const fetchAll = async (): Promise<Map<string, Map<number, string>>> => {
      const out = new Map<string, Map<number, string>>();
      for (const groupId of GROUPS) {
        const [t] = await admin.fetchOffsets({ groupId, topics: ['t'] });
        out.set(groupId, new Map(t!.partitions.map((p) => [p.partition, p.offset])));
      }
      return out;
    };
    expect(await fetchAll()).toEqual(expected);

    await admin.disconnect();
    await broker.kill('SIGTERM');
    await broker.restart(60_000);
    await connect();
    expect(await fetchAll()).toEqual(expected);

    // More commits, the cleaner at work on them, and a SIGKILL: the last ledger is left open.
    await commitRounds(ROUNDS, ROUNDS + 20, expected);
    await admin.disconnect();
    await broker.restart(60_000);
    await connect();
    expect(await fetchAll()).toEqual(expected);
  });
});
