/**
 * An incremental fetch session (KIP-227) over hundreds of mostly idle partitions, against a real broker: the
 * broker reads only the partitions that changed (src/cluster/fetch-sessions.ts), and the consumer must still
 * get every record exactly once, in order, through long polls woken by sparse appends, and hear of a quiet
 * partition's raised log start offset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeleteRecordsRequest, DeleteRecordsApi } from '../../protocol/messages/021-delete-records.gen.js';
import { createFetchRequest, FetchApi, type FetchResponse } from '../../protocol/messages/001-fetch.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { FetchSession, KafkaClient, type SessionPartition } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { decodeRecordSet } from '../support/records.js';
import { produceRequest } from '../support/requests.js';

const TOPIC = 'sparse';
const PARTITIONS = 400;
const RECORDS = 300;
const FETCH_V = 12;

describe('a fetch session over many idle partitions', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'sessions-admin' });
    const [created] = await client.createTopics([{ name: TOPIC, numPartitions: PARTITIONS }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics([TOPIC]);
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop();
  });

  it('delivers every record of sparse appends exactly once and in order, and tells of a raised log start offset', async () => {
    const producer = await RawConnection.connect(broker.port);
    const consumer = await RawConnection.connect(broker.port);
    const session = new FetchSession();
    const positions = new Array<bigint>(PARTITIONS).fill(0n);
    const received: string[][] = Array.from({ length: PARTITIONS }, () => []);
    const logStart = new Array<bigint>(PARTITIONS).fill(0n);
    let total = 0;
    let fetches = 0;

    const fetchOnce = async (maxWaitMs: number): Promise<void> => {
      const wanted: SessionPartition[] = positions.map((fetchOffset, partition) => ({ topic: TOPIC, topicId: ZERO_UUID, partition, fetchOffset, partitionMaxBytes: 1 << 20 }));
      const fields = session.build(wanted, FETCH_V);
      const req = createFetchRequest({ maxWaitMs, minBytes: 1, maxBytes: 50 << 20, sessionId: fields.sessionId, sessionEpoch: fields.sessionEpoch, topics: fields.topics, forgottenTopicsData: fields.forgottenTopicsData });
      const res: FetchResponse = await consumer.request(FetchApi, FETCH_V, req, maxWaitMs + 10_000);
      expect(session.onResponse(res)).toBe(true);
      expect(res.errorCode).toBe(0);
      fetches++;
      for (const t of res.responses) {
        for (const p of t.partitions) {
          expect(p.errorCode).toBe(0);
          logStart[p.partitionIndex] = p.logStartOffset;
          const { records } = await decodeRecordSet(p.records as Buffer | null);
          for (const r of records) {
            if (BigInt(r.offset) < positions[p.partitionIndex]!) continue; // the start of a batch already read
            expect(BigInt(r.offset)).toBe(positions[p.partitionIndex]);
            received[p.partitionIndex]!.push(r.value!.toString('utf8'));
            positions[p.partitionIndex] = BigInt(r.offset) + 1n;
            total++;
          }
        }
      }
    };

    try {
      await fetchOnce(0); // the session's full fetch: every partition, all empty
      // Appends one record at a time to partitions spread over the topic while the consumer long-polls.
      const sent: string[][] = Array.from({ length: PARTITIONS }, () => []);
      const producing = (async () => {
        for (let i = 0; i < RECORDS; i++) {
          const partition = (i * 7919) % PARTITIONS;
          const value = `v-${i}`;
          const res = await producer.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition, records: await buildRecordBatch([{ value }]) }]));
          expect(res.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
          sent[partition]!.push(value);
        }
      })();
      const deadline = Date.now() + 45_000;
      let produced = false;
      void producing.then(() => (produced = true));
      while (!(produced && total === RECORDS) && Date.now() < deadline) await fetchOnce(500);
      await producing;
      expect(total).toBe(RECORDS);
      expect(received).toEqual(sent);
      // Long polls woken by appends, not one fetch per record answered empty.
      expect(fetches).toBeLessThan(RECORDS * 3);

      // A caught-up, quiet partition whose log start offset rises is answered with it.
      const target = received.findIndex((r) => r.length > 0);
      const del = await producer.request(
        DeleteRecordsApi,
        2,
        createDeleteRecordsRequest({ timeoutMs: 10_000, topics: [{ name: TOPIC, partitions: [{ partitionIndex: target, offset: positions[target]! }] }] }),
      );
      expect(del.topics[0]!.partitions[0]!.errorCode).toBe(0);
      const until = Date.now() + 10_000;
      while (logStart[target] !== positions[target] && Date.now() < until) await fetchOnce(200);
      expect(logStart[target]).toBe(positions[target]);
    } finally {
      producer.destroy();
      consumer.destroy();
    }
  }, 90_000);
});
