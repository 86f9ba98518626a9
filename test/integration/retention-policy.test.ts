/**
 * Time retention leaves cleanup.policy=compact topics alone (Kafka deletes by time or size only when the
 * policy includes `delete`): Kafka Connect's config and offset topics, Kafka Streams changelogs and
 * MirrorMaker 2 checkpoints keep every record until compaction exists. The probe: topics with
 * retention.ms=1000 and segment.ms=1000, 10 records, then 10 more once the first ledger has aged; the
 * `delete` topic's log start moves to 10, the `compact` one's stays at 0; then a runtime change of the
 * compact topic's cleanup.policy to `compact,delete` lets retention run on it too.
 */
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient, OffsetSpec } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

describe.sequential('retention and cleanup.policy', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'log.retention.check.interval.ms': '200' } });
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap });
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop();
  });

  async function logStart(topic: string): Promise<bigint> {
    const [r] = await client.listOffsets([{ topic, partition: 0, timestamp: OffsetSpec.EARLIEST }]);
    expect(r!.errorCode).toBe(0);
    return r!.offset;
  }

  async function produce10(topic: string, round: number): Promise<void> {
    const records = await buildRecordBatch(Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `r${round}-${i}` })));
    const [r] = await client.produce([{ topic, partition: 0, records }], { acks: -1 });
    expect(r!.errorCode).toBe(0);
  }

  it('keeps a compact topic whole past retention.ms, and applies retention once the policy includes delete', async () => {
    const configs = { 'retention.ms': '1000', 'segment.ms': '1000' };
    const created = await client.createTopics([
      { name: 'probe-compact', numPartitions: 1, configs: { ...configs, 'cleanup.policy': 'compact' } },
      { name: 'probe-delete', numPartitions: 1, configs: { ...configs, 'cleanup.policy': 'delete' } },
    ]);
    expect(created.map((c) => c.errorCode)).toEqual([0, 0]);
    for (const t of ['probe-compact', 'probe-delete']) await produce10(t, 1);
    // The first ledgers age past segment.ms (which seals them) and retention.ms.
    await waitFor('the delete topic to roll and expire its first ledger', async () => {
      await produce10('probe-delete', 2);
      return (await logStart('probe-delete')) >= 10n;
    }, 20_000, 500);
    await produce10('probe-compact', 2);
    // The delete topic's retention has run (more than once, every 200 ms) with the compact topic's records
    // just as old: the compact topic still starts at 0.
    expect(await logStart('probe-compact')).toBe(0n);

    const kafka = new Kafka({ clientId: 'retention-policy', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'probe-compact', configEntries: [{ name: 'cleanup.policy', value: 'compact,delete' }, ...Object.entries(configs).map(([name, value]) => ({ name, value }))] }],
      });
    } finally {
      await admin.disconnect();
    }
    await waitFor('retention on the compact,delete topic', async () => {
      await produce10('probe-compact', 3);
      return (await logStart('probe-compact')) >= 10n;
    }, 20_000, 500);
  });
});
