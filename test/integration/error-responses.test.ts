/**
 * A request whose handling fails unexpectedly is answered with its API's error response (Kafka's
 * getErrorResponse), not by closing the connection: a real broker process whose ledger store's fsyncs are
 * made to fail (test/support/fault-broker.ts) is asked to create topics; the storage failure escapes the
 * handler, the client gets KAFKA_STORAGE_ERROR for each topic, and the same connection goes on being served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
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

describe('a handler failure', () => {
  it('is answered with the error code at every level of the request and leaves the connection open', async () => {
    const conn = await RawConnection.connect(broker.port);
    try {
      await inject('failSyncs 1000');
      const names = ['storage-fails-a', 'storage-fails-b'];
      const res = await conn.request(
        CreateTopicsApi,
        7,
        createCreateTopicsRequest({ topics: names.map((name) => createCreateTopicsRequestCreatableTopic({ name, numPartitions: 1, replicationFactor: 1 })), timeoutMs: 10_000 }),
        30_000,
      );
      expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual(names.map((n) => [n, ErrorCode.KAFKA_STORAGE_ERROR]));
      // Kafka's ApiError.fromThrowable: the failure's own message goes with the code.
      expect(res.topics[0]!.errorMessage).toMatch(/\S/);
      expect(conn.isClosed).toBe(false);
      // The failure is logged once per request, with the API, version and correlation id.
      const failures = await waitFor('the failure log line', () => {
        const lines = broker.logs.filter((l) => l.includes('"request failed; answered with its error response"'));
        return lines.length > 0 ? lines : null;
      });
      expect(failures).toHaveLength(1);
      expect(JSON.parse(failures[0]!)).toMatchObject({ api: 'CreateTopics', apiVersion: 7, errorCode: ErrorCode.KAFKA_STORAGE_ERROR });

      await inject('clear');
      // The same connection is still served.
      const versions = await conn.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'test', clientSoftwareVersion: '1' }));
      expect(versions.errorCode).toBe(ErrorCode.NONE);
      const md = await conn.request(MetadataApi, 12, createMetadataRequest({ topics: [], allowAutoTopicCreation: false }));
      expect(md.brokers).toHaveLength(1);
      expect(conn.isClosed).toBe(false);
    } finally {
      conn.destroy();
    }
  }, 90_000);
});
