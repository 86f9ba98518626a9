/**
 * A broker on `ledgerline.ledger.store=bookkeeper` (3 real bookies, E3/Qw3/Qa2 set by the
 * ledgerline.bookkeeper.* quorum configs) with the default sqlite metadata store: kafkajs produces and consumes, the partition's
 * ledgers are BookKeeper ledgers tagged application=ledgerline, and a restarted broker still serves them.
 * Skipped without the BookKeeper classpath unless LEDGERLINE_REQUIRE_BOOKKEEPER=1.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookKeeperClasspath, requireBookKeeper, startDevCluster, type DevCluster } from '../../compat/cluster/index.js';
import { bkTool } from '../support/bk-tool.js';
import { BrokerProcess } from '../support/broker-process.js';

const available = bookKeeperClasspath() !== undefined;
if (!available && requireBookKeeper()) {
  describe('broker on bookkeeper', () => {
    it('finds the BookKeeper classpath', () => {
      expect.fail('LEDGERLINE_REQUIRE_BOOKKEEPER=1 but compat/bookkeeper is not built');
    });
  });
}

describe.skipIf(!available)('a broker on the bookkeeper ledger store', () => {
  let cluster: DevCluster;
  let broker: BrokerProcess;
  const configs = (): Record<string, string> => ({
    'ledgerline.ledger.store': 'bookkeeper',
    'ledgerline.bookkeeper.metadata.service.uri': cluster.metadataServiceUri,
    // One broker accepts no topic with replication factor 3 (INVALID_REPLICATION_FACTOR): the quorums are set.
    'ledgerline.bookkeeper.ensemble.size': '3',
    'ledgerline.bookkeeper.write.quorum.size': '3',
    'ledgerline.bookkeeper.ack.quorum.size': '2',
  });
  beforeAll(async () => {
    cluster = await startDevCluster({ bookies: 3 });
    broker = await BrokerProcess.start({ configs: configs(), startTimeoutMs: 60_000 });
  }, 180_000);
  afterAll(async () => {
    await broker?.stop();
    await cluster?.stop();
  }, 60_000);

  it('produces and consumes through kafkajs, on BookKeeper ledgers with E3/Qw3/Qa2', async () => {
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'bk-test', logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 10; i++) await producer.send({ topic: 'orders', messages: Array.from({ length: 10 }, (_, j) => ({ key: `k${i}`, value: `order-${i * 10 + j}` })) });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: 'bk-readers' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'orders', fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const deadline = setTimeout(() => reject(new Error(`only ${seen.length} of 100 records consumed`)), 60_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 100) {
            clearTimeout(deadline);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    expect(seen).toEqual(Array.from({ length: 100 }, (_, i) => `order-${i}`));
    const ledgers = await bkTool(cluster.metadataServiceUri, ['list']);
    const ours = ledgers.filter((m) => (m.customMetadata as Record<string, string>).application === 'ledgerline');
    expect(ours.length).toBeGreaterThan(0);
    for (const m of ours) expect(m).toMatchObject({ ensembleSize: 3, writeQuorumSize: 3, ackQuorumSize: 2, digestType: 'CRC32C' });
  }, 180_000);
});
