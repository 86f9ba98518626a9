/**
 * Refused requests leave one log line on the broker, with the client, API, version, correlation id and
 * reason: an InitProducerId with an empty transactional id (answered INVALID_REQUEST, which clients report as "see the broker
 * logs"), and a CreateTopics whose topic is refused (INVALID_REPLICATION_FACTOR). A client retrying the
 * same refused request does not flood the log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreateTopicsApi } from '../../protocol/messages/019-create-topics.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { fetchRequest, metadataRequest } from '../support/requests.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

interface LogLine {
  level: number;
  msg: string;
  clientId?: string;
  remote?: string;
  api?: string;
  apiVersion?: number;
  correlationId?: number;
  reason?: string;
  error?: string;
  resource?: string;
}

describe('refused requests in the broker log', () => {
  let broker: BrokerProcess;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
  });
  afterAll(async () => broker?.stop());

  const refusals = (api: string): LogLine[] =>
    broker.logs
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as LogLine)
      .filter((l) => l.api === api && l.msg.startsWith('refused '));

  it('logs the refusal of an InitProducerId with an empty transactional id once, with client, API, version, correlation id and reason', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const ids: number[] = [];
      // A client retrying five times, as a producer whose init keeps failing would.
      for (let i = 0; i < 5; i++) {
        const id = c.send(InitProducerIdApi, 4, { transactionalId: '', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false }, undefined, 'tx-client');
        ids.push(id);
        const res = await c.receive(InitProducerIdApi, 4, id);
        expect(res.errorCode).toBe(ErrorCode.INVALID_REQUEST);
      }
      const [line] = await waitFor('the refusal log line', () => (refusals('InitProducerId').length > 0 ? refusals('InitProducerId') : null));
      expect(line).toMatchObject({ level: 40, clientId: 'tx-client', api: 'InitProducerId', apiVersion: 4, correlationId: ids[0], error: 'INVALID_REQUEST' });
      expect(line!.remote).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(line!.reason).toMatch(/empty transactional id/);
      // A request answered after the five proves their lines would have been written by now.
      await c.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false });
      expect(refusals('InitProducerId')).toHaveLength(1);
    } finally {
      c.destroy();
    }
    // The same client on a new connection is still the same client: no second line.
    const again = await RawConnection.connect(broker.port);
    try {
      const id = again.send(InitProducerIdApi, 4, { transactionalId: '', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false }, undefined, 'tx-client');
      expect((await again.receive(InitProducerIdApi, 4, id)).errorCode).toBe(ErrorCode.INVALID_REQUEST);
      await again.request(InitProducerIdApi, 4, { transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1, enable2Pc: false, keepPreparedTxn: false });
    } finally {
      again.destroy();
    }
    expect(refusals('InitProducerId')).toHaveLength(1);
  });

  it('logs a refused topic of a CreateTopics with the error, the topic and Kafka\'s message', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const res = await c.request(CreateTopicsApi, 7, {
        topics: [{ name: 'three-replicas', numPartitions: 1, replicationFactor: 3, assignments: [], configs: [] }],
        timeoutMs: 10_000,
        validateOnly: false,
      });
      expect(res.topics[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
      const [line] = await waitFor('the refusal log line', () => (refusals('CreateTopics').length > 0 ? refusals('CreateTopics') : null));
      expect(line).toMatchObject({ clientId: 'raw-test', apiVersion: 7, error: 'INVALID_REPLICATION_FACTOR', resource: 'three-replicas' });
      expect(line!.reason!.length).toBeGreaterThan(0);
    } finally {
      c.destroy();
    }
  });

  it('logs a version it does not serve once, however often the client reconnects and tries again', async () => {
    for (let i = 0; i < 3; i++) {
      const c = await RawConnection.connect(broker.port);
      // Fetch v3: removed by Kafka 4, refused by closing the connection.
      c.send(FetchApi, 3, fetchRequest({ topics: [] }), 77, 'old-consumer');
      await c.waitClosed(5000);
    }
    const healthy = await RawConnection.connect(broker.port);
    await healthy.request(MetadataApi, 12, metadataRequest([], false));
    healthy.destroy();
    const lines = refusals('Fetch');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ clientId: 'old-consumer', apiVersion: 3, correlationId: 77 });
    expect(lines[0]!.reason).toMatch(/outside the served 4-18; closing the connection/);
  });
});
