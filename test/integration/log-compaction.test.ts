/**
 * Log compaction in a real broker, driven by kafkajs: a cleanup.policy=compact topic keeps the latest
 * record of every key at its original offset, tombstones go after delete.retention.ms, the cleaner's
 * metrics report the passes, a runtime switch of cleanup.policy turns compaction on, and the broker killed
 * with SIGKILL at random moments while the cleaner works loses nothing: a history checker looks at every
 * acknowledged record afterwards. It must be at its offset with its value, or superseded by a later
 * acknowledged record of its key; the latest acknowledged record of each key must be there.
 */
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

interface Stored {
  offset: number;
  key: string;
  value: string | null;
}

/** Every record of partition 0 of `topic`, from the earliest offset to the high watermark. */
async function readAll(kafka: KafkaType, admin: Admin, topic: string): Promise<Stored[]> {
  const [end] = await admin.fetchTopicOffsets(topic);
  const high = Number(end!.high);
  const out: Stored[] = [];
  if (high === Number(end!.low)) return out;
  const consumer = kafka.consumer({ groupId: `read-${topic}-${Date.now()}-${Math.random()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        out.push({ offset: Number(m.offset), key: m.key!.toString(), value: m.value === null ? null : m.value.toString() });
        if (Number(m.offset) >= high - 1) done();
      }
      // The last offsets may be gone (compacted away): the batch's end says how far the log goes.
      if (Number(batch.highWatermark) <= Number(batch.lastOffset()) + 1) done();
    },
  });
  await Promise.race([finished, new Promise((_, reject) => setTimeout(() => reject(new Error(`reading ${topic} timed out`)), 30_000))]);
  await consumer.disconnect();
  return out.filter((r) => r.offset < high);
}

async function metric(adminUrl: string, name: string, topic: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const m = new RegExp(`^${name}\\{topic="${topic}",partition="0"\\} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe.sequential('log compaction in the broker', () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  let admin: Admin;
  let producer: Producer;
  let adminUrl: string;

  const COMPACT_CONFIGS = [
    { name: 'cleanup.policy', value: 'compact' },
    { name: 'ledgerline.segment.entries', value: '10' },
    { name: 'min.cleanable.dirty.ratio', value: '0.01' },
    { name: 'delete.retention.ms', value: '500' },
  ];

  async function connect(): Promise<void> {
    kafka = new Kafka({ clientId: 'compaction', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
    producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
  }

  async function disconnect(): Promise<void> {
    await producer?.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
  }

  beforeAll(async () => {
    broker = await BrokerProcess.start({
      configs: { 'log.cleaner.backoff.ms': '100', 'group.initial.rebalance.delay.ms': '0', 'ledgerline.admin.listener': 'http://127.0.0.1:0', 'auto.create.topics.enable': 'false' },
    });
    const line = broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'));
    adminUrl = (JSON.parse(line!) as { url: string }).url;
    await connect();
  });

  afterAll(async () => {
    await disconnect();
    await broker?.stop();
  });

  it('keeps the latest record of each key at its offset, drops tombstones after delete.retention.ms, and reports its passes', { timeout: 120_000 }, async () => {
    const topic = 'compacted';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: COMPACT_CONFIGS }] });
    const latest = new Map<string, { offset: number; value: string | null }>();
    for (let round = 0; round < 40; round++) {
      const messages = Array.from({ length: 10 }, (_, i) => {
        const key = `k${(round * 10 + i) % 25}`;
        const value = round === 39 && i < 5 ? null : `v${round}-${i}`;
        return { key, value };
      });
      const [meta] = await producer.send({ topic, acks: -1, messages });
      const base = Number(meta!.baseOffset);
      messages.forEach((m, i) => latest.set(m.key, { offset: base + i, value: m.value }));
    }
    // 400 records in 40 batches, 10 batches a ledger: [0, 300) sealed, [300, 400) open. The cleaner leaves
    // one record per key below the open ledger.
    await waitFor('compaction of the topic', async () => (await readAll(kafka, admin, topic)).filter((r) => r.offset < 300).length <= 25, 40_000, 200);
    const stored = await readAll(kafka, admin, topic);
    const byKey = new Map<string, Stored[]>();
    for (const r of stored) byKey.set(r.key, [...(byKey.get(r.key) ?? []), r]);
    for (const [key, want] of latest) {
      const last = byKey.get(key)?.at(-1);
      if (want.value === null) {
        expect(last === undefined || (last.value === null && last.offset === want.offset)).toBe(true);
      } else {
        expect(last).toEqual({ offset: want.offset, key, value: want.value });
      }
    }
    for (let i = 1; i < stored.length; i++) expect(stored[i]!.offset).toBeGreaterThan(stored[i - 1]!.offset);
    // The tombstones of the last round go once their ledger is sealed and cleaned, and delete.retention.ms has
    // passed since the pass that kept them.
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 30 }, (_, i) => ({ key: `filler${i % 3}`, value: `${i}` })) });
    await waitFor('tombstones past delete.retention.ms to go', async () => (await readAll(kafka, admin, topic)).every((r) => r.value !== null), 40_000, 200);
    expect(await metric(adminUrl, 'kafka_log_logcleaner_cleaned_bytes', topic)).toBeGreaterThan(0);
    expect(await metric(adminUrl, 'kafka_log_logcleaner_last_clean_timestamp_seconds', topic)).toBeGreaterThan(Date.now() / 1000 - 120);
    const text = await (await fetch(`${adminUrl}/metrics`)).text();
    expect(text).toMatch(/^kafka_log_logcleanermanager_max_dirty_percent \S+$/m);
    expect(text).toMatch(/^kafka_log_logcleanermanager_uncleanable_partitions_count 0$/m);
  });

  it('starts compacting a topic when cleanup.policy is switched to compact at runtime', { timeout: 120_000 }, async () => {
    const topic = 'switched';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: COMPACT_CONFIGS.filter((c) => c.name !== 'cleanup.policy') }] });
    for (let round = 0; round < 30; round++) {
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ key: `k${i % 5}`, value: `v${round}` })) });
    }
    expect((await readAll(kafka, admin, topic)).length).toBe(300);
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
    // [0, 200) sealed, [200, 300) open.
    await waitFor('compaction after the switch', async () => (await readAll(kafka, admin, topic)).filter((r) => r.offset < 200).length <= 5, 40_000, 200);
  });

  it('loses no acknowledged record when the broker is killed with SIGKILL while the cleaner runs', { timeout: 240_000 }, async () => {
    const topic = 'killed';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries: COMPACT_CONFIGS }] });
    /** Every acknowledged record: offset → [key, value]. */
    const acked = new Map<number, { key: string; value: string | null }>();
    let seq = 0;
    for (let kill = 0; kill < 4; kill++) {
      const rounds = 15 + Math.floor(Math.random() * 15);
      let killed = false;
      const killAt = 5 + Math.floor(Math.random() * (rounds - 5));
      for (let round = 0; round < rounds; round++) {
        if (round === killAt) {
          // Mid-stream, while the cleaner is compacting what the last rounds sealed.
          void broker.kill('SIGKILL');
          killed = true;
        }
        const messages = Array.from({ length: 10 }, () => {
          const n = seq++;
          return { key: `k${n % 17}`, value: n % 23 === 0 ? null : `v${n}` };
        });
        try {
          const [meta] = await producer.send({ topic, acks: -1, messages });
          const base = Number(meta!.baseOffset);
          messages.forEach((m, i) => acked.set(base + i, { key: m.key, value: m.value }));
        } catch {
          if (!killed) throw new Error('a produce failed before the kill');
          break;
        }
      }
      await disconnect();
      await broker.restart(60_000);
      await connect();
    }
    // The cleaner compacts what the rounds sealed (it may not have got to it before the last kill): the check
    // runs on a compacted log, whenever the cleaner gets there.
    let stored = await readAll(kafka, admin, topic);
    await waitFor('the cleaner compacting the topic after the last restart', async () => (stored = await readAll(kafka, admin, topic)).length < acked.size, 60_000, 200);
    const at = new Map(stored.map((r) => [r.offset, r]));
    const lastAcked = new Map<string, number>();
    for (const [offset, r] of [...acked].sort((a, b) => a[0] - b[0])) lastAcked.set(r.key, offset);
    const violations: string[] = [];
    for (const [offset, r] of acked) {
      const s = at.get(offset);
      if (s) {
        if (s.key !== r.key || s.value !== r.value) violations.push(`offset ${offset}: stored ${s.key}=${s.value}, acknowledged ${r.key}=${r.value}`);
        continue;
      }
      const newer = lastAcked.get(r.key)!;
      // Gone: only a record superseded by a later one of its key, or a tombstone past its horizon, may go.
      if (newer === offset && r.value !== null) violations.push(`offset ${offset}: the latest acknowledged record of ${r.key} is missing`);
    }
    for (let i = 1; i < stored.length; i++) {
      if (stored[i]!.offset <= stored[i - 1]!.offset) violations.push(`offsets not increasing at ${stored[i]!.offset}`);
    }
    expect(violations).toEqual([]);
    expect(acked.size).toBeGreaterThan(100);
    expect(stored.length).toBeLessThan(acked.size);
  });
});
