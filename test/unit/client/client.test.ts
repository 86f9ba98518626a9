import { afterEach, describe, expect, it } from 'vitest';
import type { VersionRange } from '../../../protocol/api.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ProduceApi } from '../../../protocol/messages/000-produce.gen.js';
import type { ProduceRequest } from '../../../protocol/messages/000-produce.gen.js';
import { FetchApi } from '../../../protocol/messages/001-fetch.gen.js';
import type { FetchRequest } from '../../../protocol/messages/001-fetch.gen.js';
import { ListOffsetsApi } from '../../../protocol/messages/002-list-offsets.gen.js';
import type { ListOffsetsRequest } from '../../../protocol/messages/002-list-offsets.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { MetadataRequest, MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { CreateTopicsApi } from '../../../protocol/messages/019-create-topics.gen.js';
import type { CreateTopicsRequest } from '../../../protocol/messages/019-create-topics.gen.js';
import { DeleteTopicsApi } from '../../../protocol/messages/020-delete-topics.gen.js';
import type { DeleteTopicsRequest } from '../../../protocol/messages/020-delete-topics.gen.js';
import { apis } from '../../../protocol/messages/index.gen.js';
import { KafkaClient, OffsetSpec } from '../../../src/client/client.js';
import { FakeBroker, NO_REPLY, until } from './fake-broker.js';
import type { ReceivedRequest } from './fake-broker.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';
const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/** Two fake brokers; partition i of topic `t` is led by node (i % 2) + 1, unless `leaders` says otherwise. */
async function twoBrokers(options: { apiVersions?: Map<number, VersionRange>; leaders?: () => number[] } = {}): Promise<FakeBroker[]> {
  const bs = [await FakeBroker.start({ apiVersions: options.apiVersions }), await FakeBroker.start({ apiVersions: options.apiVersions })];
  open.push(...bs);
  // Answers for the topics asked for (all of them for a null list), as a broker does.
  const answer = (req: ReceivedRequest): MetadataResponse =>
    MetadataApi.response.create({
      brokers: bs.map((b, i) => ({ nodeId: i + 1, host: '127.0.0.1', port: b.port, rack: null })),
      clusterId: 'c',
      controllerId: 2,
      topics: [
        {
          errorCode: 0,
          name: 't',
          topicId: TOPIC_ID,
          isInternal: false,
          topicAuthorizedOperations: 0,
          partitions: (options.leaders?.() ?? [1, 2, 1, 2]).map((leaderId, i) => ({
            errorCode: leaderId < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : 0,
            partitionIndex: i,
            leaderId,
            leaderEpoch: 3,
            replicaNodes: [],
            isrNodes: [],
            offlineReplicas: [],
          })),
        },
      ].filter((t) => {
        const asked = (req.body as MetadataRequest).topics;
        return asked === null || asked.some((a) => a.name === t.name);
      }),
    });
  for (const b of bs) b.handlers[MetadataApi.apiKey] = answer;
  return bs;
}

async function client(bs: FakeBroker[]): Promise<KafkaClient> {
  const c = await KafkaClient.connect({ bootstrap: bs[0]!.address, clientId: 'unit' });
  open.push(c);
  return c;
}

describe('KafkaClient.produce', () => {
  it('sends each partition to its leader, one request per leader, and returns results in entry order', async () => {
    const bs = await twoBrokers();
    for (const [i, b] of bs.entries()) {
      b.handlers[ProduceApi.apiKey] = (req) => {
        const r = req.body as ProduceRequest;
        return ProduceApi.response.create({
          responses: r.topicData.map((t) => ({
            name: t.name,
            topicId: t.topicId,
            partitionResponses: t.partitionData.map((p) => ({
              ...ProduceApi.response.create().responses[0],
              index: p.index,
              errorCode: p.index === 3 ? ErrorCode.NOT_LEADER_OR_FOLLOWER : 0,
              baseOffset: BigInt(100 * (i + 1) + p.index),
              logAppendTimeMs: -1n,
              logStartOffset: 0n,
              recordErrors: [],
              errorMessage: null,
              currentLeader: { leaderId: -1, leaderEpoch: -1 },
            })),
          })),
        });
      };
    }
    const c = await client(bs);
    const batch = (n: number): Buffer => Buffer.alloc(70, n);
    const results = await c.produce(
      [3, 0, 1, 2].map((p) => ({ topic: 't', partition: p, records: batch(p) })),
      { acks: 1, timeoutMs: 1234 },
    );
    expect(results.map((r) => [r.partition, r.baseOffset, r.errorCode])).toEqual([
      [3, 203n, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [0, 100n, 0],
      [1, 201n, 0],
      [2, 102n, 0],
    ]);
    const seen = bs.map((b) => b.requests(ProduceApi).map((r) => r.body as ProduceRequest));
    expect(seen.map((rs) => rs.length)).toEqual([1, 1]);
    expect(seen[0]![0]!.topicData[0]!.partitionData.map((p) => p.index)).toEqual([0, 2]);
    expect(seen[1]![0]!.topicData[0]!.partitionData.map((p) => p.index)).toEqual([3, 1]);
    expect(seen[0]![0]!).toMatchObject({ acks: 1, timeoutMs: 1234 });
    expect(seen[0]![0]!.topicData[0]!.partitionData[1]!.records).toEqual(batch(2));
    expect(bs[0]!.requests(ProduceApi)[0]!.header.clientId).toBe('unit');
  });

  it('returns at once with acks=0, which the broker does not answer', async () => {
    const bs = await twoBrokers();
    for (const b of bs) b.handlers[ProduceApi.apiKey] = () => NO_REPLY;
    const c = await client(bs);
    const results = await c.produce([{ topic: 't', partition: 1, records: Buffer.alloc(61) }], { acks: 0 });
    expect(results).toEqual([expect.objectContaining({ topic: 't', partition: 1, errorCode: 0, baseOffset: -1n })]);
    await until(() => bs[1]!.requests(ProduceApi).length === 1);
  });

  it('loads metadata for a topic it does not know before routing', async () => {
    const bs = await twoBrokers();
    for (const b of bs) b.handlers[ProduceApi.apiKey] = () => NO_REPLY;
    const c = await client(bs);
    expect(c.cluster.topic('t')).toBeUndefined();
    await c.produce([{ topic: 't', partition: 0, records: Buffer.alloc(61) }], { acks: 0 });
    expect(c.cluster.topic('t')?.partitions).toHaveLength(4);
  });
});

describe('KafkaClient.fetch', () => {
  function fetchHandler(b: FakeBroker): void {
    b.handlers[FetchApi.apiKey] = (req) => {
      const r = req.body as FetchRequest;
      return FetchApi.response.create({
        responses: r.topics.map((t) => ({
          topic: t.topic,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => ({
            ...FetchApi.response.create({ responses: [] }),
            partitionIndex: p.partition,
            errorCode: 0,
            highWatermark: p.fetchOffset + 10n,
            lastStableOffset: p.fetchOffset + 10n,
            logStartOffset: 0n,
            divergingEpoch: { epoch: -1, endOffset: -1n },
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
            snapshotId: { endOffset: -1n, epoch: -1 },
            abortedTransactions: null,
            preferredReadReplica: -1,
            records: Buffer.from(`records of ${p.partition} from ${p.fetchOffset}`),
          })),
        })),
      });
    };
  }

  it('names topics by id from v13 on and maps the answer back to names', async () => {
    const bs = await twoBrokers();
    bs.forEach(fetchHandler);
    const c = await client(bs);
    const results = await c.fetch(
      [
        { topic: 't', partition: 1, offset: 5n },
        { topic: 't', partition: 0, offset: 7n, maxBytes: 4096 },
      ],
      { maxWaitMs: 100, minBytes: 10 },
    );
    expect(results.map((r) => [r.topic, r.partition, r.highWatermark, r.records?.toString()])).toEqual([
      ['t', 1, 15n, 'records of 1 from 5'],
      ['t', 0, 17n, 'records of 0 from 7'],
    ]);
    const req = bs[0]!.requests(FetchApi)[0]!;
    expect(req.version).toBe(FetchApi.validVersions.max);
    const body = req.body as FetchRequest;
    expect(body.topics[0]!.topicId).toBe(TOPIC_ID);
    expect(body).toMatchObject({ maxWaitMs: 100, minBytes: 10, sessionId: 0, sessionEpoch: -1, replicaId: -1 });
    expect(body.topics[0]!.partitions[0]).toMatchObject({ partition: 0, fetchOffset: 7n, partitionMaxBytes: 4096 });
  });

  it('stays on name-addressed Fetch (v12) when Metadata gave no topic ids', async () => {
    const ranges = new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
    ranges.set(MetadataApi.apiKey, { min: 0, max: 9 }); // topic ids arrive with Metadata v10
    const bs = await twoBrokers({ apiVersions: ranges });
    // A v9 Metadata answer has no topic id field; the fake broker encodes it at v9, dropping it.
    bs.forEach(fetchHandler);
    const c = await client(bs);
    const [r] = await c.fetch([{ topic: 't', partition: 0, offset: 0n }]);
    expect(r!.records?.toString()).toBe('records of 0 from 0');
    const req = bs[0]!.requests(FetchApi)[0]!;
    expect(req.version).toBe(12);
    expect((req.body as FetchRequest).topics[0]!.topic).toBe('t');
  });

  it('throws a top-level Fetch error as LL_ERR_KAFKA', async () => {
    const bs = await twoBrokers();
    for (const b of bs) b.handlers[FetchApi.apiKey] = () => FetchApi.response.create({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND });
    const c = await client(bs);
    await expect(c.fetch([{ topic: 't', partition: 0, offset: 0n }])).rejects.toMatchObject({
      code: 'LL_ERR_KAFKA',
      errorName: 'FETCH_SESSION_ID_NOT_FOUND',
      retriable: true,
    });
  });
});

describe('KafkaClient.listOffsets', () => {
  it('reads the single offset of v1+ answers and the offset list of v0 answers', async () => {
    for (const max of [ListOffsetsApi.validVersions.max, 0]) {
      const ranges = new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
      ranges.set(ListOffsetsApi.apiKey, { min: 0, max });
      const bs = await twoBrokers({ apiVersions: ranges });
      for (const b of bs) {
        b.handlers[ListOffsetsApi.apiKey] = (req) => {
          const r = req.body as ListOffsetsRequest;
          return ListOffsetsApi.response.create({
            topics: r.topics.map((t) => ({
              name: t.name,
              partitions: t.partitions.map((p) => ({
                partitionIndex: p.partitionIndex,
                errorCode: 0,
                oldStyleOffsets: req.version === 0 ? [p.timestamp === OffsetSpec.EARLIEST ? 4n : 40n] : [],
                timestamp: -1n,
                offset: req.version === 0 ? -1n : p.timestamp === OffsetSpec.EARLIEST ? 4n : 40n,
                leaderEpoch: req.version >= 4 ? 3 : -1,
              })),
            })),
          });
        };
      }
      const c = await client(bs);
      const results = await c.listOffsets([
        { topic: 't', partition: 0, timestamp: OffsetSpec.EARLIEST },
        { topic: 't', partition: 1, timestamp: OffsetSpec.LATEST },
      ]);
      expect(results.map((r) => r.offset)).toEqual([4n, 40n]);
      expect(bs[0]!.requests(ListOffsetsApi)[0]!.version).toBe(max);
    }
  });
});

describe('KafkaClient with a partition named twice', () => {
  it('sends the repeats in a later request and returns results in entry order', async () => {
    const bs = await twoBrokers();
    let base = 0n;
    bs[0]!.handlers[ProduceApi.apiKey] = (req) => {
      const r = req.body as ProduceRequest;
      const names = r.topicData.flatMap((t) => t.partitionData.map((p) => `${t.name}-${p.index}`));
      // Kafka names each partition once per request.
      expect(new Set(names).size).toBe(names.length);
      return ProduceApi.response.create({
        responses: r.topicData.map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitionResponses: t.partitionData.map((p) => ({
            ...ProduceApi.response.create().responses[0],
            index: p.index,
            errorCode: 0,
            baseOffset: (base += 10n),
            logAppendTimeMs: -1n,
            logStartOffset: 0n,
            recordErrors: [],
            errorMessage: null,
            currentLeader: { leaderId: -1, leaderEpoch: -1 },
          })),
        })),
      });
    };
    const c = await client(bs);
    const results = await c.produce([0, 2, 0, 0].map((partition) => ({ topic: 't', partition, records: Buffer.alloc(61) })), { acks: -1 });
    expect(bs[0]!.requests(ProduceApi)).toHaveLength(3);
    expect(results.map((r) => [r.partition, r.baseOffset])).toEqual([
      [0, 10n],
      [2, 20n],
      [0, 30n],
      [0, 40n],
    ]);
  });
});

describe('KafkaClient admin helpers', () => {
  it('creates topics through the controller named by Metadata', async () => {
    const bs = await twoBrokers();
    bs[1]!.handlers[CreateTopicsApi.apiKey] = (req) =>
      CreateTopicsApi.response.create({
        topics: (req.body as CreateTopicsRequest).topics.map((t) => ({
          ...CreateTopicsApi.response.create().topics[0],
          name: t.name,
          topicId: TOPIC_ID,
          errorCode: t.name === 'exists' ? ErrorCode.TOPIC_ALREADY_EXISTS : 0,
          errorMessage: t.name === 'exists' ? 'Topic exists.' : null,
          topicConfigErrorCode: 0,
          numPartitions: t.numPartitions,
          replicationFactor: 1,
          configs: [],
        })),
      });
    const c = await client(bs);
    const results = await c.createTopics(
      [
        { name: 'n', numPartitions: 3, configs: { 'retention.ms': '-1' } },
        { name: 'exists', numPartitions: 1 },
      ],
      { timeoutMs: 5000 },
    );
    expect(results.map((r) => [r.name, r.errorCode, r.numPartitions])).toEqual([
      ['n', 0, 3],
      ['exists', ErrorCode.TOPIC_ALREADY_EXISTS, 1],
    ]);
    expect(bs[0]!.requests(CreateTopicsApi)).toHaveLength(0);
    const req = bs[1]!.requests(CreateTopicsApi)[0]!.body as CreateTopicsRequest;
    expect(req.timeoutMs).toBe(5000);
    expect(req.topics[0]).toMatchObject({ name: 'n', numPartitions: 3, replicationFactor: -1, configs: [{ name: 'retention.ms', value: '-1' }] });
  });

  it('deletes topics by name in the layout of the version in use', async () => {
    for (const max of [DeleteTopicsApi.validVersions.max, 5]) {
      const ranges = new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
      ranges.set(DeleteTopicsApi.apiKey, { min: 0, max });
      const bs = await twoBrokers({ apiVersions: ranges });
      bs[1]!.handlers[DeleteTopicsApi.apiKey] = (req) => {
        const r = req.body as DeleteTopicsRequest;
        const names = req.version >= 6 ? r.topics.map((t) => t.name) : r.topicNames;
        return DeleteTopicsApi.response.create({
          responses: names.map((name) => ({ name, topicId: TOPIC_ID, errorCode: 0, errorMessage: null })),
        });
      };
      const c = await client(bs);
      const results = await c.deleteTopics(['a', 'b']);
      expect(results.map((r) => r.name)).toEqual(['a', 'b']);
      expect(bs[1]!.requests(DeleteTopicsApi)[0]!.version).toBe(max);
    }
  });

  it('waits for topics until every partition has a leader', async () => {
    let calls = 0;
    const bs = await twoBrokers({ leaders: () => (++calls < 4 ? [1, -1] : [1, 2]) });
    const c = await client(bs);
    await c.waitForTopics(['t'], { timeoutMs: 5000 });
    expect(c.cluster.leaderFor('t', 1)).toBe(2);
    expect(calls).toBeGreaterThanOrEqual(4);
  });

  it('gives up waiting for topics at the deadline with the reason', async () => {
    const bs = await twoBrokers({ leaders: () => [1, -1] });
    const c = await client(bs);
    await expect(c.waitForTopics(['t'], { timeoutMs: 150 })).rejects.toMatchObject({
      code: 'LL_ERR_CLIENT_METADATA',
      message: expect.stringContaining('t-1: LEADER_NOT_AVAILABLE'),
    });
  });

  it('negotiated ApiVersions before anything else on every connection', async () => {
    const bs = await twoBrokers();
    bs.forEach((b) => (b.handlers[ProduceApi.apiKey] = () => NO_REPLY));
    const c = await client(bs);
    await c.produce([{ topic: 't', partition: 1, records: Buffer.alloc(61) }], { acks: 0 });
    for (const b of bs) {
      const byConn = new Map<number, string[]>();
      for (const r of b.received) byConn.set(r.connection, [...(byConn.get(r.connection) ?? []), r.api.name]);
      for (const names of byConn.values()) expect(names[0]).toBe(ApiVersionsApi.name);
    }
  });
});
