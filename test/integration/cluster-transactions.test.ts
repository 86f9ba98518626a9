/**
 * Transactions across the brokers of one cluster (ledgerline.cluster.membership=shared, src/cluster/txn-routing.ts):
 * three brokers on one ZooKeeper metadata store and three BookKeeper bookies (the development cluster), a topic
 * whose partitions spread over all three, and transactional producers whose coordinators sit on one broker
 * while their partitions (and their groups' __consumer_offsets partitions) sit on the others. The coordinator's
 * markers reach those partitions by WriteTxnMarkers to their owners, and the partition leaders verify a
 * producer's first batch (KIP-890) by AddPartitionsToTxn to the coordinator's owner.
 *
 * kafkajs producers (transaction version 1) each commit a transaction over every partition, abort one, and
 * commit one with offsets for a group (TxnOffsetCommit, the markers then reach the group's coordinator): a
 * read_committed consumer reads exactly the committed records, each once, and the groups hold the offsets. The
 * internal topics have their three replicas: they were created once three brokers were live, as Kafka's are.
 *
 * It skips itself where the engines are missing (as cluster-membership.test.ts), failing instead with
 * LEDGERLINE_REQUIRE_BOOKKEEPER=1 when only the BookKeeper classpath is.
 */
import kafkajs from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { KafkaClient } from '../../src/client/index.js';
import { startDevCluster } from '../../compat/cluster/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { clusterEngineGate, startMembers } from '../support/cluster-members.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

const { missing, required } = clusterEngineGate();

const TOPIC = 'cluster-txn';
const PARTITIONS = 6;
const PRODUCERS = 4;

const started: BrokerProcess[] = [];
afterAll(async () => {
  await Promise.all(started.map((b) => b.stop()));
});

describe('transactions across brokers', () => {
  it.skipIf(missing !== null && !required)(`commits and aborts transactions whose partitions and coordinator are on different brokers${missing ? ` (not run: ${missing})` : ''}`, async () => {
    if (missing !== null) throw new Error(`LEDGERLINE_REQUIRE_BOOKKEEPER=1 but ${missing}`);
    const dev = await startDevCluster({ bookies: 3 });
    const disconnect: { disconnect(): Promise<void> }[] = [];
    try {
      const brokers = await startMembers(dev, 3, started, { 'group.initial.rebalance.delay.ms': '0' });
      const client = await KafkaClient.connect({ bootstrap: brokers.map((b) => b.bootstrap) });
      try {
        await waitFor('three live brokers in Metadata', async () => (await client.metadata([])).brokers.length === 3, 30_000);
        const [created] = await client.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3 }]);
        expect(created!.errorCode).toBe(0);
        let leaders: number[] = [];
        await waitFor(
          'a leader for every partition',
          async () => {
            leaders = (await client.metadata([TOPIC])).topics[0]!.partitions.map((p) => (p.errorCode === 0 ? p.leaderId : -1));
            return leaders.length === PARTITIONS && leaders.every((l) => l > 0);
          },
          30_000,
        );
        expect(new Set(leaders).size, `partition leaders ${leaders.join(',')}`).toBeGreaterThan(1);
      } finally {
        await client.close();
      }

      const kafka = new Kafka({ clientId: 'cluster-txn', brokers: brokers.map((b) => b.bootstrap), logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 200 } });
      const admin = kafka.admin();
      disconnect.push(admin);
      await admin.connect();

      const committed = new Set<string>();
      const aborted = new Set<string>();
      for (let n = 0; n < PRODUCERS; n++) {
        const producer = kafka.producer({ transactionalId: `cluster-txn-${n}`, idempotent: true, maxInFlightRequests: 1 });
        disconnect.push(producer);
        await producer.connect();
        const messages = (what: string) => Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: `${n}-${what}-${p}` }));
        const send = async (what: string, end: 'commit' | 'abort', offsetsFor?: string) => {
          const txn = await producer.transaction();
          await txn.send({ topic: TOPIC, messages: messages(what) });
          if (offsetsFor) await txn.sendOffsets({ consumerGroupId: offsetsFor, topics: [{ topic: TOPIC, partitions: Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, offset: String(10 + n) })) }] });
          await (end === 'commit' ? txn.commit() : txn.abort());
          for (const m of messages(what)) (end === 'commit' ? committed : aborted).add(m.value);
        };
        await send('first', 'commit');
        await send('aborted', 'abort');
        await send('with-offsets', 'commit', `cluster-txn-group-${n}`);
        await producer.disconnect();
      }

      // Everything committed, each once, nothing aborted: the markers reached every partition's owner.
      const consumer = kafka.consumer({ groupId: 'cluster-txn-reader', readUncommitted: false, sessionTimeout: 10_000, heartbeatInterval: 1000 });
      disconnect.push(consumer);
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
      await waitFor(`the ${committed.size} committed records read with read_committed`, async () => seen.length >= committed.size, 60_000);
      await consumer.disconnect();
      expect(seen.filter((v) => aborted.has(v)), 'aborted records read').toEqual([]);
      expect([...seen].sort()).toEqual([...committed].sort());

      // The internal topics were created with their configured three replicas, once the three brokers were
      // live (the first broker started alone): on BookKeeper, ledgers of ensemble 3.
      const internal = await admin.fetchTopicMetadata({ topics: ['__consumer_offsets', '__transaction_state'] });
      for (const t of internal.topics) {
        expect(t.partitions.length, t.name).toBe(50);
        expect(new Set(t.partitions.map((p) => p.replicas.length)), `${t.name} replicas`).toEqual(new Set([3]));
      }

      // The offsets committed in the transactions are the groups' (their coordinators took the markers too).
      for (let n = 0; n < PRODUCERS; n++) {
        const [fetched] = await admin.fetchOffsets({ groupId: `cluster-txn-group-${n}`, topics: [TOPIC] });
        expect(fetched!.partitions.map((p) => Number(p.offset)).sort(), `cluster-txn-group-${n}`).toEqual(Array.from({ length: PARTITIONS }, () => 10 + n));
      }
    } finally {
      for (const c of disconnect.reverse()) await c.disconnect().catch(() => undefined);
      await Promise.all(started.splice(0).map((b) => b.stop()));
      await dev.stop();
    }
  }, 300_000);
});
