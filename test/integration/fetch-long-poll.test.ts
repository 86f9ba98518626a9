/**
 * A Fetch that long-polls many partitions: one abort listener for the whole wait, so Node never warns
 * "MaxListenersExceededWarning: 11 abort listeners added to [AbortSignal]", on stderr or in the log; and a
 * wait over many partitions still wakes on an append to any one of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { fetchRequest } from '../support/requests.js';

const PARTITIONS = 24;

describe('Fetch long-polling many partitions', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'long-poll-admin' });
    const [created] = await client.createTopics([{ name: 'wide', numPartitions: PARTITIONS }]);
    expect(created!.errorCode).toBe(0);
    await client.waitForTopics(['wide']);
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop();
  });

  const allPartitions = (): { partition: number; offset: bigint }[] => Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, offset: 0n }));

  it('prints no MaxListenersExceededWarning when a Fetch waits on 24 partitions, several at once on one connection', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const started = Date.now();
      // Twelve concurrent long-polls on one connection (the connection's own signal then has twelve
      // waits on it) and each wait covers every partition.
      const ids = Array.from({ length: 12 }, () => c.send(FetchApi, 12, fetchRequest({ topics: [{ topic: 'wide', partitions: allPartitions() }], maxWaitMs: 300, minBytes: 1 })));
      for (const id of ids) {
        const res = await c.receive(FetchApi, 12, id, 10_000);
        expect(res.errorCode).toBe(0);
        expect(res.responses[0]!.partitions).toHaveLength(PARTITIONS);
      }
      // They did wait (max_wait_ms), rather than answering at once.
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      c.destroy();
    }
    // Node emits its warnings on the next tick; a Metadata round trip later it would have been printed.
    await client.waitForTopics(['wide']);
    const warnings = broker.logs.filter((l) => l.includes('MaxListenersExceededWarning'));
    expect(warnings).toEqual([]);
    expect(broker.logs.filter((l) => l.startsWith('stderr:'))).toEqual([]);
  });

  it('wakes a wait over 24 partitions on an append to one of them', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const started = Date.now();
      const id = c.send(FetchApi, 12, fetchRequest({ topics: [{ topic: 'wide', partitions: allPartitions() }], maxWaitMs: 20_000, minBytes: 1 }));
      // Let the fetch reach its wait, then append to partition 17.
      await expect(c.nextFrame(200)).rejects.toThrow(/no response/);
      const [r] = await client.produce([{ topic: 'wide', partition: 17, records: await buildRecordBatch([{ value: 'wake' }]) }]);
      expect(r!.errorCode).toBe(0);
      const res = await c.receive(FetchApi, 12, id, 10_000);
      const p17 = res.responses[0]!.partitions.find((p) => p.partitionIndex === 17);
      expect(p17?.records?.length ?? 0).toBeGreaterThan(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      c.destroy();
    }
  });
});
