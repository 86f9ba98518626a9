/**
 * Record-level validation through a real broker, over raw Produce requests: batches whose header and CRC
 * are right but whose records are not are refused with Kafka's error codes (and per-record errors on v8+),
 * nothing of them is stored, the broker restarts and still serves the good data. Then the case a broker
 * that did not validate records left behind: a data directory holding such batches (written through the
 * storage layer, as it would have stored them) still starts, reports each bad batch once and answers
 * ListOffsets by timestamp and Fetch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionType } from '../../protocol/compression/index.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ProduceApi, type ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch, buildRecordBatchSync } from '../../protocol/records/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { PartitionLog } from '../../src/log/partition-log.js';
import { BrokerProcess } from '../support/broker-process.js';
import { batchAround, gzipZeros, poisonedBatches, rawRecord, zstdRleBomb } from '../support/poisoned-batches.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { decodeRecordSet, readPartition } from '../support/records.js';
import { produceRequest } from '../support/requests.js';
import { openDiskStores } from '../unit/log/support.js';

function partitionOf(res: ProduceResponse): ProduceResponse['responses'][number]['partitionResponses'][number] {
  return res.responses[0]!.partitionResponses[0]!;
}

describe.sequential('record validation on produce, through a broker', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await BrokerProcess.start();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'record-validation' });
    const created = await client.createTopics([
      { name: 'records', numPartitions: 1 },
      { name: 'ordered', numPartitions: 1 },
    ]);
    expect(created.map((c) => c.errorCode)).toEqual([0, 0]);
    await client.waitForTopics(['records', 'ordered']);
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop();
  });

  it('refuses batches whose records are malformed, bombs included, and stores none of them', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const good = buildRecordBatchSync([{ key: 'k', value: 'before' }]);
      expect(partitionOf(await c.request(ProduceApi, 11, produceRequest([{ topic: 'records', partition: 0, records: good }]))).errorCode).toBe(0);

      const cases = [
        ...(await poisonedBatches()).map((p) => [p.name, p.batch, p.errorCode] as const),
        ['gzip bomb', batchAround({ count: 1000, compression: CompressionType.GZIP, stored: await gzipZeros(256 * 1024 * 1024) }), ErrorCode.MESSAGE_TOO_LARGE] as const,
        ['zstd bomb', batchAround({ count: 1000, compression: CompressionType.ZSTD, stored: zstdRleBomb(8192) }), ErrorCode.MESSAGE_TOO_LARGE] as const,
      ];
      for (const [what, batch, expected] of cases) {
        const p = partitionOf(await c.request(ProduceApi, 11, produceRequest([{ topic: 'records', partition: 0, records: batch }])));
        expect([what, p.errorCode, p.baseOffset]).toEqual([what, expected, -1n]);
        expect([what, p.errorMessage]).toEqual([what, expect.any(String)]);
      }

      // v8+: the record at fault in recordErrors (KIP-467).
      const secondBad = batchAround({ count: 2, stored: Buffer.concat([rawRecord({ offsetDelta: 0 }), rawRecord({ offsetDelta: 1, headerCount: -1 })]) });
      const p = partitionOf(await c.request(ProduceApi, 11, produceRequest([{ topic: 'records', partition: 0, records: secondBad }])));
      expect(p.errorCode).toBe(ErrorCode.INVALID_RECORD);
      expect(p.recordErrors).toEqual([{ batchIndex: 1, batchIndexErrorMessage: expect.stringMatching(/^Found invalid number of record headers -1/) }]);

      const after = buildRecordBatchSync([{ key: 'k', value: 'after' }]);
      expect(partitionOf(await c.request(ProduceApi, 11, produceRequest([{ topic: 'records', partition: 0, records: after }]))).baseOffset).toBe(1n);
    } finally {
      c.destroy();
    }
    expect((await readPartition(client, 'records', 0)).map((r) => r.value!.toString())).toEqual(['before', 'after']);
  }, 60_000);

  it('keeps the append order of pipelined produces when a zstd batch comes first', async () => {
    const c = await RawConnection.connect(broker.port);
    try {
      const zstd = await buildRecordBatch(Array.from({ length: 200 }, (_, i) => ({ value: `zstd ${i}` })), { compression: CompressionType.ZSTD });
      const ids = [
        c.send(ProduceApi, 11, produceRequest([{ topic: 'ordered', partition: 0, records: zstd }])),
        c.send(ProduceApi, 11, produceRequest([{ topic: 'ordered', partition: 0, records: buildRecordBatchSync([{ value: 'plain' }]) }])),
      ];
      const offsets = [];
      for (const id of ids) offsets.push(partitionOf(await c.receive(ProduceApi, 11, id)).baseOffset);
      expect(offsets).toEqual([0n, 200n]);
    } finally {
      c.destroy();
    }
  });

  it('restarts after the refused batches and still serves the good data', async () => {
    await broker.restart();
    await client.close();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'record-validation-2' });
    await client.waitForTopics(['records']);
    expect((await readPartition(client, 'records', 0)).map((r) => r.value!.toString())).toEqual(['before', 'after']);
    const [byTime] = await client.listOffsets([{ topic: 'records', partition: 0, timestamp: 0n }]);
    expect([byTime!.errorCode, byTime!.offset]).toEqual([0, 0n]);
  });
});

describe.sequential('a data directory holding batches a broker did not validate', () => {
  let broker: BrokerProcess | undefined;

  afterAll(async () => {
    await broker?.stop();
  });

  it('still starts, reports each bad batch once and answers ListOffsets by timestamp and Fetch', async () => {
    broker = await BrokerProcess.start();
    let client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'poisoned-dir' });
    expect((await client.createTopics([{ name: 'poisoned', numPartitions: 1 }]))[0]!.errorCode).toBe(0);
    await client.waitForTopics(['poisoned']);
    const t0 = Date.now();
    // Older than producer.id.expiration.ms (a day): the producer-state rebuild at start searches by
    // timestamp from a day ago and lands on the first bad batch, as it did when start failed.
    const old = t0 - 2 * 86_400_000;
    const [first] = await client.produce([{ topic: 'poisoned', partition: 0, records: buildRecordBatchSync([{ value: 'good 0', timestamp: old }]) }]);
    expect(first!.errorCode).toBe(0);
    await client.close();
    await broker.kill('SIGTERM');

    // What an older broker stored: written through the storage layer, no record validation.
    const stores = await openDiskStores(broker.dataDir);
    const log = await PartitionLog.open({ topic: 'poisoned', partition: 0, ledgers: stores.ledgers, metadata: stores.metadata, retentionCheckIntervalMs: 0 });
    const poisoned = [
      batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, headerCount: -1 }), baseTimestamp: t0 + 1, maxTimestamp: t0 + 1 }),
      batchAround({ count: 1000, compression: CompressionType.GZIP, stored: await gzipZeros(256 * 1024 * 1024), baseTimestamp: t0 + 2, maxTimestamp: t0 + 2 }),
      batchAround({ count: 1000, compression: CompressionType.ZSTD, stored: zstdRleBomb(8192), baseTimestamp: t0 + 3, maxTimestamp: t0 + 3 }),
    ];
    for (const b of poisoned) await log.append(b);
    const lastGood = await log.append(buildRecordBatchSync([{ value: 'good 1', timestamp: t0 + 10 }]));
    await log.close();
    await stores.close();

    await broker.restart();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'poisoned-dir-2' });
    try {
      await client.waitForTopics(['poisoned']);
      const [byTime] = await client.listOffsets([{ topic: 'poisoned', partition: 0, timestamp: BigInt(t0 + 1) }]);
      expect([byTime!.errorCode, byTime!.offset, byTime!.timestamp]).toEqual([0, BigInt(lastGood.baseOffset), BigInt(t0 + 10)]);
      // Reported by the rebuild at start, then skipped silently by the ListOffsets above: once per batch.
      const reported = await waitFor('the bad batches reported', () => {
        const lines = broker!.logs.filter((l) => l.includes('stored record batch does not decode'));
        return lines.length >= poisoned.length ? lines : null;
      });
      const batches = reported.map((l) => JSON.parse(l) as { entryId: number; ledgerId: number }).map((l) => `${l.ledgerId}:${l.entryId}`);
      expect(new Set(batches).size).toBe(poisoned.length);
      expect(reported).toHaveLength(poisoned.length);
      const [earliest] = await client.listOffsets([{ topic: 'poisoned', partition: 0, timestamp: BigInt(old) }]);
      expect([earliest!.errorCode, earliest!.offset]).toEqual([0, 0n]);
      // Fetch serves every batch as stored; the good ones decode.
      const values = async (offset: number): Promise<string[]> => {
        const [r] = await client.fetch([{ topic: 'poisoned', partition: 0, offset: BigInt(offset), maxBytes: 1 }], { maxWaitMs: 0, minBytes: 0 });
        expect(r!.errorCode).toBe(0);
        return (await decodeRecordSet(r!.records)).records.map((x) => x.value!.toString());
      };
      expect(await values(0)).toEqual(['good 0']);
      expect(await values(lastGood.baseOffset)).toEqual(['good 1']);
      const [produced] = await client.produce([{ topic: 'poisoned', partition: 0, records: buildRecordBatchSync([{ value: 'good 2' }]) }]);
      expect([produced!.errorCode, produced!.baseOffset]).toEqual([0, BigInt(lastGood.lastOffset + 1)]);
    } finally {
      await client.close();
    }
  }, 90_000);
});
