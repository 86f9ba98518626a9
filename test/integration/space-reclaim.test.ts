/**
 * Deleting a topic gives its disk space back while __consumer_offsets, a long-lived ledger with entries in
 * every segment the topic's data went to, stays active: the ledger store's garbage collector rolls the
 * mostly-garbage active segment and compacts the segments the offsets ledger pins, so `du` of the data
 * directory drops by at least 90% of the topic's bytes within 60 s, with the default settings.
 *
 * LEDGERLINE_RECLAIM_TEST_MIB sets the topic's size (default 96 MiB, for the 2-core test machine);
 * `LEDGERLINE_RECLAIM_TEST_MIB=1024 npx vitest run test/integration/space-reclaim.test.ts` is the full 1 GiB check.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import kafkajs from 'kafkajs';
import type { Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

const TOPIC_MIB = Number(process.env.LEDGERLINE_RECLAIM_TEST_MIB ?? 96);
const DEADLINE_MS = Number(process.env.LEDGERLINE_RECLAIM_TEST_DEADLINE_MS ?? 60_000);
const PARTITIONS = 4;
const RECORD_BYTES = 16 * 1024;
const RECORDS_PER_BATCH = 60; // ~983 KB per batch, under message.max.bytes

/** Bytes the files under `dir` occupy on disk (what du counts). */
function du(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p);
    n += st.isDirectory() ? du(p) : st.blocks * 512;
  }
  return n;
}

describe.sequential('disk space after DeleteTopics', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;
  let producer: Producer;
  let consumer: Consumer;
  let stopTicks = false;
  let ticks: Promise<void>;
  let commits = 0;
  let adminUrl: string;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'ledgerline.admin.listener': 'http://127.0.0.1:0' } });
    const line = broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'));
    adminUrl = (JSON.parse(line!) as { url: string }).url;
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, requestTimeoutMs: 60_000 });
    const created = await client.createTopics([
      { name: 'bulk', numPartitions: PARTITIONS },
      { name: 'ticks', numPartitions: 1 },
    ]);
    expect(created.map((c) => c.errorCode)).toEqual([0, 0]);
    // A consumer group committing all along keeps __consumer_offsets appending to every segment.
    const kafka = new Kafka({ clientId: 'reclaim', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    producer = kafka.producer();
    await producer.connect();
    consumer = kafka.consumer({ groupId: 'reclaim-group', heartbeatInterval: 500, sessionTimeout: 10_000 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'ticks', fromBeginning: true });
    consumer.on(consumer.events.COMMIT_OFFSETS, () => commits++);
    await consumer.run({ autoCommitInterval: 100, autoCommitThreshold: 1, eachMessage: async () => undefined });
    ticks = (async () => {
      let i = 0;
      while (!stopTicks) {
        await producer.send({ topic: 'ticks', messages: [{ value: `tick-${i++}` }] });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }, 60_000);

  afterAll(async () => {
    stopTicks = true;
    await ticks?.catch(() => undefined);
    await consumer?.disconnect().catch(() => undefined);
    await producer?.disconnect().catch(() => undefined);
    await client?.close();
    await broker?.stop();
  });

  it(`frees >= 90% of a deleted ${TOPIC_MIB} MiB topic within ${DEADLINE_MS / 1000} s while __consumer_offsets is active`, async () => {
    const value = Buffer.alloc(RECORD_BYTES, 0x61);
    const batch = await buildRecordBatch(Array.from({ length: RECORDS_PER_BATCH }, (_, i) => ({ key: `k${i}`, value })));
    const batches = Math.ceil((TOPIC_MIB * 1024 * 1024) / batch.length);
    const produceStarted = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARTITIONS * 2 }, async (_, w) => {
        while (next < batches) {
          next++;
          const [r] = await client.produce([{ topic: 'bulk', partition: w % PARTITIONS, records: batch }], { acks: 1 });
          if (r!.errorCode !== 0) throw new Error(`produce failed with ${r!.errorCode}`);
        }
      }),
    );
    const topicBytes = batches * batch.length;
    const produceS = (performance.now() - produceStarted) / 1000;
    await waitFor('offset commits of the consumer group', () => commits >= 5, 30_000);
    const commitsBefore = commits;
    const before = du(broker.dataDir);
    expect(before).toBeGreaterThanOrEqual(topicBytes);

    const [deleted] = await client.deleteTopics(['bulk']);
    expect(deleted!.errorCode).toBe(0);
    const deletedAt = performance.now();
    let now = before;
    await waitFor(
      `du of the data directory to drop by 90% of ${topicBytes} bytes`,
      () => {
        now = du(broker.dataDir);
        return before - now >= 0.9 * topicBytes;
      },
      DEADLINE_MS,
      250,
    );
    const freedS = (performance.now() - deletedAt) / 1000;
    // The broker counts a segment's bytes once its unlink has returned to it; `du` sees the space back the
    // moment the kernel did it. So the counters are waited for too (within what is left of the deadline),
    // not read once right after `du` moved: under load that read can come before the broker has counted.
    const metric = (metrics: string, name: string): number => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(metrics)?.[1]);
    let reclaimed = 0;
    let reclaimable = Infinity;
    await waitFor(
      'the storage metrics to count the space given back',
      async () => {
        const metrics = await (await fetch(`${adminUrl}/metrics`)).text();
        reclaimed = metric(metrics, 'ledgerline_storage_reclaimed_bytes_total');
        reclaimable = metric(metrics, 'ledgerline_storage_reclaimable_bytes');
        return reclaimed >= 0.9 * topicBytes && reclaimable < 0.1 * topicBytes;
      },
      Math.max(5_000, DEADLINE_MS - (performance.now() - deletedAt)),
      250,
    ).catch(() => undefined);
    expect(reclaimed).toBeGreaterThanOrEqual(0.9 * topicBytes);
    expect(reclaimable).toBeLessThan(0.1 * topicBytes);
    // The group went on committing throughout: the offsets ledger was live in every segment.
    expect(commits).toBeGreaterThan(commitsBefore);
    console.log(
      `topic ${(topicBytes / 2 ** 20).toFixed(0)} MiB produced in ${produceS.toFixed(1)} s; du ${(before / 2 ** 20).toFixed(0)} MiB → ${(now / 2 ** 20).toFixed(0)} MiB ` +
        `(${(((before - now) / topicBytes) * 100).toFixed(1)}% of the topic freed) ${freedS.toFixed(1)} s after DeleteTopics`,
    );
  }, 600_000);
});
