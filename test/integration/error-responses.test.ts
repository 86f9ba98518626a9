/**
 * A storage failure reaches the client as Kafka's error for it, and the connection stays open: a real broker
 * process whose ledger store's fsyncs are made to fail (test/support/fault-broker.ts) is asked to produce to a
 * partition it has not opened yet; opening it fails, the client gets KAFKA_STORAGE_ERROR for that partition
 * (Kafka's answer for a partition whose log it cannot serve), the failure is logged once, the same connection
 * goes on being served, and the next produce after the fault clears succeeds. (Requests whose handler throws
 * are answered with their API's error response; test/unit/server/dispatch.test.ts covers that path.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { produceRequest } from '../support/requests.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

let broker: BrokerProcess;

beforeAll(async () => {
  broker = await BrokerProcess.start({ entry: 'test/support/fault-broker.ts' });
}, 60_000);

afterAll(async () => {
  await broker?.stop();
});

async function inject(command: string): Promise<void> {
  const before = broker.logs.filter((l) => l.includes('"fault injected"')).length;
  broker.command(command);
  await waitFor(`the broker to apply "${command}"`, () => broker.logs.filter((l) => l.includes('"fault injected"')).length > before);
}

describe('a storage failure', () => {
  it('is answered with KAFKA_STORAGE_ERROR for the partition it hit, logged once, and leaves the connection open', async () => {
    const conn = await RawConnection.connect(broker.port);
    try {
      const created = await conn.request(
        CreateTopicsApi,
        7,
        createCreateTopicsRequest({ topics: [createCreateTopicsRequestCreatableTopic({ name: 'storage-fails', numPartitions: 2, replicationFactor: 1 })], timeoutMs: 10_000 }),
        30_000,
      );
      expect(created.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE]);
      await inject('failSyncs 1000');
      const produce = async (partition: number) =>
        (await conn.request(ProduceApi, 9, produceRequest([{ topic: 'storage-fails', partition, records: await buildRecordBatch([{ value: 'x' }]) }]), 30_000)).responses[0]!.partitionResponses[0]!;
      expect((await produce(0)).errorCode).toBe(ErrorCode.KAFKA_STORAGE_ERROR);
      expect(conn.isClosed).toBe(false);
      const failures = await waitFor('the failure log line', () => {
        const lines = broker.logs.filter((l) => l.includes('"opening a partition failed; its next use tries again"'));
        return lines.length > 0 ? lines : null;
      });
      expect(failures).toHaveLength(1);
      expect(JSON.parse(failures[0]!)).toMatchObject({ topic: 'storage-fails', partition: 0 });

      await inject('clear');
      // The same connection is still served, and the partition opens on its next use.
      const versions = await conn.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'test', clientSoftwareVersion: '1' }));
      expect(versions.errorCode).toBe(ErrorCode.NONE);
      expect(await produce(0)).toMatchObject({ errorCode: ErrorCode.NONE, baseOffset: 0n });
      const md = await conn.request(MetadataApi, 12, createMetadataRequest({ topics: [], allowAutoTopicCreation: false }));
      expect(md.brokers).toHaveLength(1);
      expect(conn.isClosed).toBe(false);
    } finally {
      conn.destroy();
    }
  }, 90_000);
});
