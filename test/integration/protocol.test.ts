/**
 * Broker behaviour seen over the wire with requests built by the codec: idempotent produce (duplicates,
 * sequence and epoch errors, state rebuilt after a SIGKILL restart), Fetch long-polling and minBytes,
 * incremental fetch sessions (KIP-227), topic ids in Fetch v13+ (KIP-516), OFFSET_OUT_OF_RANGE, and
 * Metadata's topic auto-creation switched on and off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { FetchApi, type FetchResponse, type FetchResponsePartitionData } from '../../protocol/messages/001-fetch.gen.js';
import { DescribeProducersApi } from '../../protocol/messages/061-describe-producers.gen.js';
import { ProduceApi, type ProduceResponse } from '../../protocol/messages/000-produce.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { AlterConfigsApi } from '../../protocol/messages/033-alter-configs.gen.js';
import { CreateTopicsApi } from '../../protocol/messages/019-create-topics.gen.js';
import { DeleteTopicsApi } from '../../protocol/messages/020-delete-topics.gen.js';
import { DescribeClusterApi } from '../../protocol/messages/060-describe-cluster.gen.js';
import { OffsetForLeaderEpochApi } from '../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { buildRecordBatch, type RecordBatchOptions } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { decodeRecordSet, readPartition } from '../support/records.js';
import { fetchRequest, metadataRequest, produceRequest } from '../support/requests.js';

const PRODUCE_V = 9;
const FETCH_V = 12;

function values(prefix: string, n: number): { value: string }[] {
  return Array.from({ length: n }, (_, i) => ({ value: `${prefix}-${i}` }));
}

describe.sequential('the broker over the wire', () => {
  let broker: BrokerProcess;
  let client: KafkaClient;
  let conn: RawConnection;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'num.partitions': '3', 'log.retention.check.interval.ms': '200' } });
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'protocol-it' });
    const created = await client.createTopics([
      { name: 'idem', numPartitions: 1 },
      { name: 'poll', numPartitions: 2 },
      { name: 'sessions', numPartitions: 3 },
    ]);
    expect(created.map((c) => c.errorCode)).toEqual([0, 0, 0]);
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await client?.close();
    await broker?.stop();
  });

  async function produce(c: RawConnection, topic: string, partition: number, batch: Buffer): Promise<{ errorCode: number; baseOffset: bigint; errorMessage: string | null }> {
    const res: ProduceResponse = await c.request(ProduceApi, PRODUCE_V, produceRequest([{ topic, partition, records: batch }]));
    const p = res.responses[0]!.partitionResponses[0]!;
    return { errorCode: p.errorCode, baseOffset: p.baseOffset, errorMessage: p.errorMessage };
  }

  async function highWatermark(topic: string, partition: number): Promise<bigint> {
    const [r] = await client.listOffsets([{ topic, partition, timestamp: -1n }]);
    return r!.offset;
  }

  describe.sequential('idempotent produce', () => {
    let producerId: bigint;
    const batch = (epoch: number, baseSequence: number, n: number, tag: string, extra: RecordBatchOptions = {}): Promise<Buffer> =>
      buildRecordBatch(values(tag, n), { producerId, producerEpoch: epoch, baseSequence, ...extra });

    it('gives out distinct producer ids with epoch 0', async () => {
      const a = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
      const b = await conn.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
      expect(a.errorCode).toBe(0);
      expect(a.producerEpoch).toBe(0);
      expect(b.producerId).not.toBe(a.producerId);
      producerId = a.producerId;
    });

    it('answers a resent batch with the first offset and appends nothing', async () => {
      const first = await batch(0, 0, 3, 'a');
      expect(await produce(conn, 'idem', 0, first)).toMatchObject({ errorCode: 0, baseOffset: 0n });
      // The producer's connection drops before it reads the answer; it reconnects and sends the batch again.
      conn.destroy();
      conn = await RawConnection.connect(broker.port);
      expect(await produce(conn, 'idem', 0, first)).toMatchObject({ errorCode: 0, baseOffset: 0n });
      expect(await highWatermark('idem', 0)).toBe(3n);
      expect(await produce(conn, 'idem', 0, await batch(0, 3, 2, 'b'))).toMatchObject({ errorCode: 0, baseOffset: 3n });
      // A retry of an older batch, still among the last five, is also recognised.
      expect(await produce(conn, 'idem', 0, first)).toMatchObject({ errorCode: 0, baseOffset: 0n });
      expect(await highWatermark('idem', 0)).toBe(5n);
    });

    it('answers a pipelined duplicate with the original offset once the original is durable', async () => {
      const b = await batch(0, 5, 4, 'c');
      const ids = [conn.send(ProduceApi, PRODUCE_V, produceRequest([{ topic: 'idem', partition: 0, records: b }])), conn.send(ProduceApi, PRODUCE_V, produceRequest([{ topic: 'idem', partition: 0, records: b }]))];
      const answers = [await conn.receive(ProduceApi, PRODUCE_V, ids[0]!), await conn.receive(ProduceApi, PRODUCE_V, ids[1]!)];
      expect(answers.map((a) => [a.responses[0]!.partitionResponses[0]!.errorCode, a.responses[0]!.partitionResponses[0]!.baseOffset])).toEqual([
        [0, 5n],
        [0, 5n],
      ]);
      expect(await highWatermark('idem', 0)).toBe(9n);
    });

    it('refuses a sequence gap with OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
      const r = await produce(conn, 'idem', 0, await batch(0, 20, 1, 'gap'));
      expect(r.errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect(await highWatermark('idem', 0)).toBe(9n);
    });

    it('fences an older epoch and requires sequence 0 from a newer one', async () => {
      expect((await produce(conn, 'idem', 0, await batch(1, 4, 1, 'e1-bad'))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect(await produce(conn, 'idem', 0, await batch(1, 0, 2, 'e1'))).toMatchObject({ errorCode: 0, baseOffset: 9n });
      expect((await produce(conn, 'idem', 0, await batch(0, 9, 1, 'e0-late'))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(await highWatermark('idem', 0)).toBe(11n);
    });

    it('describes the partition\'s producers with their epoch and last sequence (DescribeProducers)', async () => {
      const res = await conn.request(DescribeProducersApi, 0, DescribeProducersApi.request.create({ topics: [{ name: 'idem', partitionIndexes: [0, 9] }] }));
      const [p0, p9] = res.topics[0]!.partitions;
      expect(p0!.errorCode).toBe(0);
      expect(p0!.activeProducers.map((s) => [s.producerId, s.producerEpoch, s.lastSequence])).toEqual([[producerId, 1, 1]]);
      expect(p9!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    });

    it('rebuilds the producer state from the log after a SIGKILL restart', async () => {
      const last = await batch(1, 0, 2, 'e1');
      const epochBefore = (await conn.request(MetadataApi, 12, metadataRequest(['idem'], false))).topics[0]!.partitions[0]!.leaderEpoch;
      await broker.restart();
      conn.destroy();
      conn = await RawConnection.connect(broker.port);

      // Taking the log over after the crash started a new leader epoch, beginning at the old log end.
      const epochAfter = (await conn.request(MetadataApi, 12, metadataRequest(['idem'], false))).topics[0]!.partitions[0]!.leaderEpoch;
      expect(epochAfter).toBeGreaterThan(epochBefore);
      const epochs = await conn.request(
        OffsetForLeaderEpochApi,
        4,
        OffsetForLeaderEpochApi.request.create({ topics: [{ topic: 'idem', partitions: [{ partition: 0, currentLeaderEpoch: epochAfter, leaderEpoch: epochBefore }] }] }),
      );
      expect(epochs.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderEpoch: epochBefore, endOffset: 11n });
      const fenced = await conn.request(
        OffsetForLeaderEpochApi,
        4,
        OffsetForLeaderEpochApi.request.create({ topics: [{ topic: 'idem', partitions: [{ partition: 0, currentLeaderEpoch: epochBefore, leaderEpoch: epochBefore }] }] }),
      );
      expect(fenced.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.FENCED_LEADER_EPOCH);
      // A fetch that names the old epoch is fenced too (KIP-320), the current one is served.
      const withEpoch = async (epoch: number): Promise<FetchResponsePartitionData> => {
        const req = fetchRequest({ topics: [{ topic: 'idem', partitions: [{ partition: 0, offset: 0n }] }] });
        req.topics[0]!.partitions[0]!.currentLeaderEpoch = epoch;
        const r: FetchResponse = await conn.request(FetchApi, FETCH_V, req);
        return r.responses[0]!.partitions[0]!;
      };
      expect(await withEpoch(epochBefore)).toMatchObject({ errorCode: ErrorCode.FENCED_LEADER_EPOCH, currentLeader: { leaderId: 1, leaderEpoch: epochAfter } });
      expect(await withEpoch(epochAfter + 1)).toMatchObject({ errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH });
      expect(await withEpoch(epochAfter)).toMatchObject({ errorCode: 0 });

      // The last batch sent before the crash is still recognised as a duplicate...
      expect(await produce(conn, 'idem', 0, last)).toMatchObject({ errorCode: 0, baseOffset: 9n });
      // ...the sequence goes on where it stopped, gaps and old epochs are still refused.
      expect((await produce(conn, 'idem', 0, await batch(1, 5, 1, 'gap'))).errorCode).toBe(ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER);
      expect((await produce(conn, 'idem', 0, await batch(0, 9, 1, 'old'))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(await produce(conn, 'idem', 0, await batch(1, 2, 3, 'e1-more'))).toMatchObject({ errorCode: 0, baseOffset: 11n });
      const read = await readPartition(client, 'idem', 0);
      expect(read.map((r) => r.value!.toString())).toEqual([
        ...values('a', 3),
        ...values('b', 2),
        ...values('c', 4),
        ...values('e1', 2),
        ...values('e1-more', 3),
      ].map((v) => v.value));
      expect(read.map((r) => r.offset)).toEqual(read.map((_, i) => i));
    });
  });

  describe.sequential('fetch', () => {
    it('returns at once with data, and waits maxWaitMs when there is none', async () => {
      expect((await produce(conn, 'poll', 0, await buildRecordBatch(values('p', 5)))).errorCode).toBe(0);
      const t0 = Date.now();
      const withData: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 5000, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: 0n }] }] }));
      expect(Date.now() - t0).toBeLessThan(2500);
      const { records } = await decodeRecordSet(withData.responses[0]!.partitions[0]!.records as Buffer);
      expect(records.map((r) => r.value!.toString())).toEqual(values('p', 5).map((v) => v.value));
      const t1 = Date.now();
      const empty: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 400, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: 5n }] }] }));
      expect(Date.now() - t1).toBeGreaterThanOrEqual(380);
      expect(empty.responses[0]!.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 5n });
      // An empty record set, never a null one: librdkafka fails a null one as "invalid MessageSetSize -1".
      expect(empty.responses[0]!.partitions[0]!.records).toEqual(Buffer.alloc(0));
    });

    it('ends a long poll as soon as data arrives on any partition of the request', async () => {
      const other = await RawConnection.connect(broker.port);
      try {
        const t0 = Date.now();
        const id = conn.send(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 20_000, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: 5n }, { partition: 1, offset: 0n }] }] }));
        // The fetch is parked; nothing comes back while nothing is produced.
        await expect(conn.nextFrame(300)).rejects.toThrow(/no response/);
        expect((await produce(other, 'poll', 1, await buildRecordBatch(values('late', 2)))).errorCode).toBe(0);
        const res = await conn.receive(FetchApi, FETCH_V, id, 10_000);
        expect(Date.now() - t0).toBeLessThan(10_000);
        const p1 = res.responses[0]!.partitions.find((p) => p.partitionIndex === 1)!;
        expect((await decodeRecordSet(p1.records as Buffer)).records.map((r) => r.value!.toString())).toEqual(['late-0', 'late-1']);
      } finally {
        other.destroy();
      }
    });

    it('keeps waiting until minBytes have accumulated, or answers with what there is at maxWaitMs', async () => {
      const other = await RawConnection.connect(broker.port);
      try {
        const hw = await highWatermark('poll', 0);
        const t0 = Date.now();
        const id = conn.send(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 20_000, minBytes: 4000, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: hw }] }] }));
        await expect(conn.nextFrame(200)).rejects.toThrow(/no response/);
        // A small batch is not enough...
        expect((await produce(other, 'poll', 0, await buildRecordBatch([{ value: 'small' }]))).errorCode).toBe(0);
        await expect(conn.nextFrame(400)).rejects.toThrow(/no response/);
        // ...a large one is.
        expect((await produce(other, 'poll', 0, await buildRecordBatch([{ value: Buffer.alloc(5000, 1) }]))).errorCode).toBe(0);
        const res = await conn.receive(FetchApi, FETCH_V, id, 10_000);
        expect(Date.now() - t0).toBeLessThan(10_000);
        const got = await decodeRecordSet(res.responses[0]!.partitions[0]!.records as Buffer);
        expect(got.records.map((r) => r.value!.length)).toEqual([5, 5000]);

        const t1 = Date.now();
        const partial: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 500, minBytes: 1_000_000, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: hw }] }] }));
        expect(Date.now() - t1).toBeGreaterThanOrEqual(480);
        expect((await decodeRecordSet(partial.responses[0]!.partitions[0]!.records as Buffer)).records).toHaveLength(2);
      } finally {
        other.destroy();
      }
    });

    it('ends a parked fetch at once when its topic is deleted', async () => {
      const [created] = await client.createTopics([{ name: 'doomed', numPartitions: 1 }]);
      expect(created!.errorCode).toBe(0);
      await client.waitForTopics(['doomed']);
      const t0 = Date.now();
      const id = conn.send(FetchApi, FETCH_V, fetchRequest({ maxWaitMs: 20_000, topics: [{ topic: 'doomed', partitions: [{ partition: 0, offset: 0n }] }] }));
      await expect(conn.nextFrame(200)).rejects.toThrow(/no response/);
      expect((await client.deleteTopics(['doomed']))[0]!.errorCode).toBe(0);
      const res = await conn.receive(FetchApi, FETCH_V, id, 15_000);
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(res.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    });

    it('returns the first batch whole even when it is larger than the byte limits (KIP-74), and no more', async () => {
      // Partition 0 ends with the 5000-byte record of the previous test.
      const hw = await highWatermark('poll', 0);
      const res: FetchResponse = await conn.request(
        FetchApi,
        FETCH_V,
        fetchRequest({ maxBytes: 100, topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: hw - 1n, maxBytes: 100 }, { partition: 1, offset: 0n, maxBytes: 100 }] }] }),
      );
      const [p0, p1] = res.responses[0]!.partitions;
      expect((await decodeRecordSet(p0!.records as Buffer)).records.map((r) => [r.offset, r.value!.length])).toEqual([[Number(hw - 1n), 5000]]);
      // The response budget is spent: the next partition, which has data, gets none this time.
      expect(p1).toMatchObject({ errorCode: 0, records: Buffer.alloc(0) });
    });

    it('answers OFFSET_OUT_OF_RANGE above the log end and below the log start, with the partition offsets', async () => {
      const hw = await highWatermark('poll', 0);
      const res: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ topics: [{ topic: 'poll', partitions: [{ partition: 0, offset: hw + 10n }, { partition: 1, offset: 0n }] }] }));
      const [p0, p1] = res.responses[0]!.partitions;
      expect(p0).toMatchObject({ partitionIndex: 0, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, highWatermark: hw, logStartOffset: 0n, records: Buffer.alloc(0) });
      // Other partitions of the request are still served.
      expect(p1).toMatchObject({ partitionIndex: 1, errorCode: 0 });
      const unknown: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ topics: [{ topic: 'no-such-topic', partitions: [{ partition: 0, offset: 0n }] }, { topic: 'poll', partitions: [{ partition: 9, offset: 0n }] }] }));
      expect(unknown.responses.flatMap((t) => t.partitions.map((p) => p.errorCode))).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    });

    it('names topics by id from Fetch v13 and answers UNKNOWN_TOPIC_ID for an unknown id', async () => {
      const md = await conn.request(MetadataApi, 12, metadataRequest(['poll'], false));
      const topicId = md.topics[0]!.topicId;
      expect(topicId).not.toBe(ZERO_UUID);
      const bogus = 'AAAAAAAAAAAAAAAAAAAAAQ';
      const res: FetchResponse = await conn.request(FetchApi, 13, fetchRequest({ topics: [{ topicId, partitions: [{ partition: 0, offset: 0n }] }, { topicId: bogus, partitions: [{ partition: 0, offset: 0n }] }] }));
      const known = res.responses.find((t) => t.topicId === topicId)!;
      expect(known.topic).toBe('');
      expect(known.partitions[0]!.errorCode).toBe(0);
      expect((await decodeRecordSet(known.partitions[0]!.records as Buffer)).records[0]!.value!.toString()).toBe('p-0');
      expect(res.responses.find((t) => t.topicId === bogus)!.partitions).toEqual([expect.objectContaining({ partitionIndex: 0, errorCode: ErrorCode.UNKNOWN_TOPIC_ID })]);
      // v17, the newest, answers the same way.
      const v17: FetchResponse = await conn.request(FetchApi, 17, fetchRequest({ topics: [{ topicId, partitions: [{ partition: 1, offset: 0n }] }] }));
      expect(v17.responses[0]!.partitions[0]).toMatchObject({ partitionIndex: 1, errorCode: 0, highWatermark: 2n });
    });

    it('runs an incremental fetch session: unchanged partitions are left out, errors for bad ids and epochs', async () => {
      const all = [0, 1, 2].map((partition) => ({ partition, offset: 0n }));
      const full: FetchResponse = await conn.request(FetchApi, FETCH_V, fetchRequest({ sessionId: 0, sessionEpoch: 0, minBytes: 0, topics: [{ topic: 'sessions', partitions: all }] }));
      expect(full.errorCode).toBe(0);
      const sessionId = full.sessionId;
      expect(sessionId).toBeGreaterThan(0);
      expect(full.responses[0]!.partitions.map((p) => p.partitionIndex)).toEqual([0, 1, 2]);

      const incremental = (epoch: number, spec: Partial<Parameters<typeof fetchRequest>[0]> = {}): Promise<FetchResponse> =>
        conn.request(FetchApi, FETCH_V, fetchRequest({ sessionId, sessionEpoch: epoch, minBytes: 0, maxWaitMs: 0, topics: [], ...spec }));
      // Nothing changed: nothing to say.
      let res = await incremental(1);
      expect(res).toMatchObject({ errorCode: 0, sessionId });
      expect(res.responses).toEqual([]);

      // New data on partition 1 only: the answer names partition 1 only, with its records.
      expect((await produce(conn, 'sessions', 1, await buildRecordBatch(values('s1', 3)))).errorCode).toBe(0);
      res = await incremental(2);
      expect(res.responses.flatMap((t) => t.partitions.map((p) => p.partitionIndex))).toEqual([1]);
      expect((await decodeRecordSet(res.responses[0]!.partitions[0]!.records as Buffer)).records.map((r) => r.offset)).toEqual([0, 1, 2]);

      // The client moves partition 1's position past what it read: nothing new, nothing said.
      res = await incremental(3, { topics: [{ topic: 'sessions', partitions: [{ partition: 1, offset: 3n }] }] });
      expect(res.responses).toEqual([]);

      // Partition 2 is dropped from the session: data arriving there is not reported.
      res = await incremental(4, { forgotten: [{ topic: 'sessions', partitions: [2] }] });
      expect(res.responses).toEqual([]);
      expect((await produce(conn, 'sessions', 2, await buildRecordBatch(values('s2', 1)))).errorCode).toBe(0);
      expect((await produce(conn, 'sessions', 0, await buildRecordBatch(values('s0', 1)))).errorCode).toBe(0);
      res = await incremental(5);
      expect(res.responses.flatMap((t) => t.partitions.map((p) => p.partitionIndex))).toEqual([0]);

      // A wrong epoch or an unknown session id is a session-level error with no partitions.
      res = await incremental(9);
      expect(res).toMatchObject({ errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH, responses: [] });
      res = await conn.request(FetchApi, FETCH_V, fetchRequest({ sessionId: sessionId ^ 0x5a5a, sessionEpoch: 1, topics: [] }));
      expect(res).toMatchObject({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses: [] });
      // The session survived the bad epoch: the expected epoch still works.
      res = await incremental(6);
      expect(res.errorCode).toBe(0);

      // Epoch -1 closes the session and fetches sessionlessly.
      res = await conn.request(FetchApi, FETCH_V, fetchRequest({ sessionId, sessionEpoch: -1, minBytes: 0, topics: [{ topic: 'sessions', partitions: [{ partition: 0, offset: 0n }] }] }));
      expect(res).toMatchObject({ errorCode: 0, sessionId: 0 });
      res = await incremental(7);
      expect(res.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    });
  });

  describe.sequential('topic configs at work', () => {
    it('stamps LogAppendTime on append when the topic asks for it, and keeps CreateTime otherwise', async () => {
      const [created] = await client.createTopics([{ name: 'append-time', numPartitions: 1, configs: { 'message.timestamp.type': 'LogAppendTime' } }]);
      expect(created!.errorCode).toBe(0);
      const old = Date.now() - 3_600_000;
      const before = Date.now();
      const res = await conn.request(ProduceApi, PRODUCE_V, produceRequest([{ topic: 'append-time', partition: 0, records: await buildRecordBatch([{ value: 'a', timestamp: old }, { value: 'b', timestamp: old + 1 }]) }]));
      const p = res.responses[0]!.partitionResponses[0]!;
      expect(p.errorCode).toBe(0);
      expect(Number(p.logAppendTimeMs)).toBeGreaterThanOrEqual(before - 1000);
      expect(Number(p.logAppendTimeMs)).toBeLessThanOrEqual(Date.now() + 1000);
      const read = await readPartition(client, 'append-time', 0);
      expect(read.map((r) => r.timestamp)).toEqual([Number(p.logAppendTimeMs), Number(p.logAppendTimeMs)]);

      // Switched back to CreateTime (AlterConfigs reaches the open log), new batches keep their timestamps.
      const altered = await conn.request(
        AlterConfigsApi,
        2,
        AlterConfigsApi.request.create({ resources: [{ resourceType: 2, resourceName: 'append-time', configs: [{ name: 'message.timestamp.type', value: 'CreateTime' }] }], validateOnly: false }),
      );
      expect(altered.responses[0]!.errorCode).toBe(0);
      expect((await produce(conn, 'append-time', 0, await buildRecordBatch([{ value: 'c', timestamp: old + 2 }]))).errorCode).toBe(0);
      expect((await readPartition(client, 'append-time', 0, 2n)).map((r) => r.timestamp)).toEqual([old + 2]);
    });

    it('refuses CreateTime timestamps too far ahead with INVALID_TIMESTAMP (message.timestamp.after.max.ms)', async () => {
      const future = Date.now() + 2 * 3_600_000;
      const r = await produce(conn, 'sessions', 0, await buildRecordBatch([{ value: 'from the future', timestamp: future }]));
      expect(r.errorCode).toBe(ErrorCode.INVALID_TIMESTAMP);
    });

    it('refuses zstd before Produce v7 (KIP-110) with UNSUPPORTED_COMPRESSION_TYPE', async () => {
      const zstd = await buildRecordBatch([{ value: 'zstd' }], { compression: 4 });
      const old = await conn.request(ProduceApi, 6, produceRequest([{ topic: 'sessions', partition: 0, records: zstd }]));
      expect(old.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.UNSUPPORTED_COMPRESSION_TYPE);
      const v7 = await conn.request(ProduceApi, 7, produceRequest([{ topic: 'sessions', partition: 0, records: zstd }]));
      expect(v7.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
    });

    it('deletes old ledgers by retention.bytes and moves the log start offset', async () => {
      const [created] = await client.createTopics([{ name: 'retained', numPartitions: 1, configs: { 'segment.bytes': '4096', 'retention.bytes': '8192' } }]);
      expect(created!.errorCode).toBe(0);
      for (let i = 0; i < 24; i++) {
        expect((await produce(conn, 'retained', 0, await buildRecordBatch([{ value: Buffer.alloc(1000, i) }]))).errorCode).toBe(0);
      }
      const start = await waitFor('retention to delete old ledgers', async () => {
        const [r] = await client.listOffsets([{ topic: 'retained', partition: 0, timestamp: -2n }]);
        return r!.offset > 0n ? r!.offset : null;
      });
      expect(start).toBeLessThan(24n);
      const read = await readPartition(client, 'retained', 0, start);
      expect(read.map((r) => r.offset)).toEqual(Array.from({ length: 24 - Number(start) }, (_, i) => Number(start) + i));
      expect(read.map((r) => r.value![0])).toEqual(read.map((r) => r.offset));
    });
  });

  describe.sequential('admin requests over the wire', () => {
    it('creates topics from manual assignments and refuses duplicates and unknown brokers', async () => {
      const topic = (name: string, init: Record<string, unknown>): ReturnType<typeof CreateTopicsApi.request.create>['topics'][number] =>
        ({ name, numPartitions: -1, replicationFactor: -1, assignments: [], configs: [], ...init }) as never;
      const res = await conn.request(
        CreateTopicsApi,
        7,
        CreateTopicsApi.request.create({
          topics: [
            topic('assigned', { assignments: [{ partitionIndex: 0, brokerIds: [1] }, { partitionIndex: 1, brokerIds: [1] }] }),
            topic('elsewhere', { assignments: [{ partitionIndex: 0, brokerIds: [2] }] }),
            topic('twice', { numPartitions: 1 }),
            topic('twice', { numPartitions: 2 }),
            topic('defaults', {}),
          ],
        }),
      );
      const byName = res.topics.map((t) => [t.name, t.errorCode, t.numPartitions]);
      expect(byName).toEqual([
        ['assigned', 0, 2],
        ['elsewhere', ErrorCode.INVALID_REPLICA_ASSIGNMENT, -1],
        ['twice', ErrorCode.INVALID_REQUEST, -1],
        ['twice', ErrorCode.INVALID_REQUEST, -1],
        ['defaults', 0, 3],
      ]);
      expect(res.topics[0]!.topicId).not.toBe(ZERO_UUID);
      // v5+: the created topic's configs come back with their sources.
      expect(res.topics[0]!.configs!.find((c) => c.name === 'retention.ms')).toMatchObject({ value: '604800000', configSource: 5 });
    });

    it('deletes topics by id (DeleteTopics v6) and answers UNKNOWN_TOPIC_ID and INVALID_REQUEST', async () => {
      const md = await conn.request(MetadataApi, 12, metadataRequest(['assigned'], false));
      const topicId = md.topics[0]!.topicId;
      const res = await conn.request(
        DeleteTopicsApi,
        6,
        DeleteTopicsApi.request.create({
          timeoutMs: 10_000,
          topics: [
            { name: null, topicId },
            { name: null, topicId: 'AAAAAAAAAAAAAAAAAAAAAQ' },
            { name: 'defaults', topicId: md.topics[0]!.topicId },
            { name: 'defaults', topicId: ZERO_UUID },
          ],
        }),
      );
      expect(res.responses.map((r) => [r.name, r.errorCode])).toEqual([
        ['assigned', 0],
        [null, ErrorCode.UNKNOWN_TOPIC_ID],
        ['defaults', ErrorCode.INVALID_REQUEST],
        ['defaults', 0],
      ]);
      expect((await conn.request(MetadataApi, 12, metadataRequest(['assigned', 'defaults'], false))).topics.map((t) => t.errorCode)).toEqual([
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ]);
    });

    it('describes the cluster: this broker at its advertised address', async () => {
      const res = await conn.request(DescribeClusterApi, 1, DescribeClusterApi.request.create({ includeClusterAuthorizedOperations: true, endpointType: 1 }));
      expect(res).toMatchObject({ errorCode: 0, controllerId: 1, brokers: [{ brokerId: 1, host: '127.0.0.1', port: broker.port, rack: null }] });
      expect(res.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(res.clusterAuthorizedOperations).toBeGreaterThan(0);
      const controllers = await conn.request(DescribeClusterApi, 1, DescribeClusterApi.request.create({ endpointType: 2 }));
      // Kafka's AuthHelper: a broker listener asked for controllers answers MISMATCHED_ENDPOINT_TYPE; an
      // endpoint type that is neither, UNSUPPORTED_ENDPOINT_TYPE.
      expect(controllers).toMatchObject({ errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE, errorMessage: 'The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER', brokers: [] });
      const unknown = await conn.request(DescribeClusterApi, 1, DescribeClusterApi.request.create({ endpointType: 3 }));
      expect(unknown).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, errorMessage: 'Unsupported endpoint type 3' });
    });
  });

  describe('Metadata by topic id (v12)', () => {
    it('looks topics up by id, ignoring the names of such a request (the Java consumer sends ""), and never creates any', async () => {
      const named = await conn.request(MetadataApi, 12, metadataRequest(['by-id'], true));
      const id = named.topics[0]!.topicId;
      const bogus = 'AAAAAAAAAAAAAAAAAAAAAQ';
      const res = await conn.request(MetadataApi, 12, {
        ...metadataRequest(null, true),
        topics: [
          { topicId: id, name: '' },
          { topicId: bogus, name: 'would-be-auto-created' },
          { topicId: id, name: null },
        ],
      });
      expect(res.topics.map((t) => [t.name, t.topicId, t.errorCode, t.partitions.length])).toEqual([
        ['by-id', id, ErrorCode.NONE, 3],
        [null, bogus, ErrorCode.UNKNOWN_TOPIC_ID, 0],
      ]);
      expect((await client.metadata(null)).topics.map((t) => t.name)).not.toContain('would-be-auto-created');
    });
  });

  describe.sequential('Metadata topic auto-creation', () => {
    it('creates a topic with num.partitions when the request allows it, and only then', async () => {
      const refused = await conn.request(MetadataApi, 12, metadataRequest(['auto-no'], false));
      expect(refused.topics).toEqual([expect.objectContaining({ name: 'auto-no', errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })]);
      const created = await conn.request(MetadataApi, 12, metadataRequest(['auto-yes'], true));
      expect(created.topics[0]).toMatchObject({ name: 'auto-yes', errorCode: 0 });
      expect(created.topics[0]!.partitions.map((p) => [p.partitionIndex, p.leaderId])).toEqual([
        [0, 1],
        [1, 1],
        [2, 1],
      ]);
      // Metadata v3 has no flag (the codec only accepts its default, true): it auto-creates, as Kafka does.
      const v3 = await conn.request(MetadataApi, 3, metadataRequest(['auto-v3'], true));
      expect(v3.topics[0]).toMatchObject({ name: 'auto-v3', errorCode: 0 });
      const invalid = await conn.request(MetadataApi, 12, metadataRequest(['bad name'], true));
      expect(invalid.topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
      expect((await client.metadata(null)).topics.map((t) => t.name)).toEqual(expect.arrayContaining(['auto-yes', 'auto-v3']));
    });

    it('never creates topics on a broker with auto.create.topics.enable=false', async () => {
      const off = await BrokerProcess.start({ configs: { 'auto.create.topics.enable': 'false' } });
      const c = await RawConnection.connect(off.port);
      try {
        for (const v of [3, 12]) {
          const res = await c.request(MetadataApi, v, metadataRequest([`auto-off-${v}`], true));
          expect(res.topics).toEqual([expect.objectContaining({ name: `auto-off-${v}`, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })]);
        }
        expect((await c.request(MetadataApi, 12, metadataRequest(null, true))).topics.filter((t) => !t.isInternal)).toEqual([]);
      } finally {
        c.destroy();
        await off.stop();
      }
    });
  });
});
