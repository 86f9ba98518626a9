/**
 * The client against a real Apache Kafka 4.4.0 broker (KRaft, one node), started with the compatibility
 * suite's launcher. Skipped, with the reason, when Java or the Kafka jars are not on this machine
 * (`npm run compat -- --only kafka` resolves the jars into compat/.work/).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReferenceKafka } from '../../../compat/lib/brokers.js';
import { COMPAT_DIR } from '../../../compat/lib/paths.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ProduceApi } from '../../../protocol/messages/000-produce.gen.js';
import { FetchApi } from '../../../protocol/messages/001-fetch.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { CompressionType } from '../../../protocol/compression/index.js';
import { buildRecordBatch, splitRecordBatches } from '../../../protocol/records/index.js';
import { Connection } from '../../../src/client/connection.js';
import { FetchSession } from '../../../src/client/fetch-session.js';
import type { FetchResponse } from '../../../protocol/messages/001-fetch.gen.js';
import { KafkaClient, OffsetSpec } from '../../../src/client/client.js';

function whyNoKafka(): string | null {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'java is not installed';
  if (!existsSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt'))) {
    return 'the Kafka jars are not resolved (run `npm run compat -- --only kafka` once)';
  }
  return null;
}

const skipReason = whyNoKafka();
if (skipReason) console.warn(`client tests against Apache Kafka skipped: ${skipReason}`);

describe.skipIf(skipReason !== null)('KafkaClient against Apache Kafka 4.4', () => {
  let kafka: ReferenceKafka;
  let client: KafkaClient;
  const topic = `client-test-${process.pid}`;

  beforeAll(async () => {
    kafka = new ReferenceKafka({ label: 'kafka', logDir: mkdtempSync(join(tmpdir(), 'client-test-kafka-logs-')), heapMiB: 512, keepData: false });
    const started = await kafka.start();
    if (!started.ok) throw new Error(`Kafka did not start: ${started.reason}`);
    client = await KafkaClient.connect({ bootstrap: kafka.bootstrap, clientId: 'client-test' });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await kafka?.stop();
  }, 60_000);

  it('negotiates the newest versions both sides know', async () => {
    const conn = await client.cluster.anyConnection();
    // Kafka 4.4 serves ApiVersions v5, beyond this codec: the client's v4 request is still answered in v4.
    expect(conn.versions?.brokerRange(ApiVersionsApi.apiKey)?.max).toBeGreaterThanOrEqual(4);
    for (const api of [ProduceApi, FetchApi, MetadataApi]) {
      const broker = conn.versions!.brokerRange(api.apiKey)!;
      expect(conn.versionFor(api)).toBe(Math.min(broker.max, api.validVersions.max));
    }
    expect(client.cluster.brokers.size).toBe(1);
    expect(client.cluster.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('creates a topic, produces batches, reads them back and lists offsets', async () => {
    const created = await client.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1 }]);
    expect(created).toEqual([expect.objectContaining({ name: topic, errorCode: 0, numPartitions: 2 })]);
    const again = await client.createTopics([{ name: topic, numPartitions: 2 }]);
    expect(again[0]!.errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    await client.waitForTopics([topic], { timeoutMs: 30_000 });

    const plain = await buildRecordBatch([{ key: 'k0', value: 'v0' }, { key: 'k1', value: 'v1' }]);
    const gzip = await buildRecordBatch([{ value: 'compressed '.repeat(50) }], { compression: CompressionType.GZIP });
    // A just-created partition can answer NOT_LEADER_OR_FOLLOWER until its leader has loaded it.
    let produced = await client.produce([{ topic, partition: 0, records: plain }, { topic, partition: 1, records: gzip }], { acks: -1 });
    for (let i = 0; i < 50 && produced.some((r) => r.errorCode === ErrorCode.NOT_LEADER_OR_FOLLOWER); i++) {
      await new Promise((r) => setTimeout(r, 100));
      produced = await client.produce([{ topic, partition: 0, records: plain }, { topic, partition: 1, records: gzip }], { acks: -1 });
    }
    expect(produced.map((r) => [r.partition, r.errorCode])).toEqual([
      [0, 0],
      [1, 0],
    ]);
    const base0 = produced[0]!.baseOffset;

    const fetched = await client.fetch([{ topic, partition: 0, offset: base0 }, { topic, partition: 1, offset: produced[1]!.baseOffset }], { maxWaitMs: 100 });
    expect(fetched.map((f) => f.errorCode)).toEqual([0, 0]);
    expect(fetched[0]!.highWatermark).toBe(base0 + 2n);
    const [b0] = splitRecordBatches(fetched[0]!.records!);
    expect(b0!.baseOffset).toBe(base0);
    expect(b0!.records().toArray().map((r) => r.value?.toString())).toEqual(['v0', 'v1']);
    const [b1] = splitRecordBatches(fetched[1]!.records!);
    expect(b1!.compressionType).toBe(CompressionType.GZIP);
    expect(b1!.records().next().value?.value?.toString()).toBe('compressed '.repeat(50));

    const offsets = await client.listOffsets([
      { topic, partition: 0, timestamp: OffsetSpec.EARLIEST },
      { topic, partition: 0, timestamp: OffsetSpec.LATEST },
    ]);
    expect(offsets.map((o) => [o.errorCode, o.offset])).toEqual([
      [0, 0n],
      [0, base0 + 2n],
    ]);

    const outOfRange = await client.fetch([{ topic, partition: 0, offset: 1000n }], { maxWaitMs: 10 });
    expect(outOfRange[0]!.errorCode).toBe(ErrorCode.OFFSET_OUT_OF_RANGE);
  });

  it('pipelines many requests on one connection to Kafka', async () => {
    const conn = await Connection.connect({ host: kafka.bootstrap.split(':')[0]!, port: Number(kafka.bootstrap.split(':')[1]) });
    try {
      const answers = await Promise.all(Array.from({ length: 100 }, () => conn.request(MetadataApi, MetadataApi.request.create({ topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: topic }] }))));
      expect(answers.every((a) => a.topics[0]?.name === topic && a.topics[0].partitions.length === 2)).toBe(true);
    } finally {
      await conn.close();
    }
  });

  it('keeps an incremental fetch session: later fetches name and return only what moved', async () => {
    const conn = await client.cluster.leaderConnection(topic, 0);
    const version = conn.versionFor(FetchApi);
    const topicId = client.cluster.topic(topic)!.topicId;
    const session = new FetchSession();
    const offsets = [0n, 0n];
    const fetch = async (): Promise<FetchResponse> => {
      const f = session.build(
        offsets.map((fetchOffset, partition) => ({ topic, topicId, partition, fetchOffset, partitionMaxBytes: 1 << 20 })),
        version,
      );
      const response = await conn.request(
        FetchApi,
        FetchApi.request.create({ maxWaitMs: 50, minBytes: 0, sessionId: f.sessionId, sessionEpoch: f.sessionEpoch, topics: f.topics, forgottenTopicsData: f.forgottenTopicsData }),
        { version },
      );
      expect(session.onResponse(response)).toBe(true);
      for (const t of response.responses) for (const p of t.partitions) offsets[p.partitionIndex] = p.highWatermark;
      return response;
    };
    const first = await fetch();
    expect(session.sessionId).not.toBe(0);
    expect(first.responses.flatMap((t) => t.partitions).length).toBe(2);
    const quiet = await fetch();
    expect(quiet.responses.flatMap((t) => t.partitions)).toEqual([]);
    await client.produce([{ topic, partition: 1, records: await buildRecordBatch([{ value: 'news' }]) }], { acks: -1 });
    const news = await fetch();
    expect(news.responses.flatMap((t) => t.partitions.map((p) => p.partitionIndex))).toEqual([1]);
  });

  it('deletes the topic', async () => {
    const deleted = await client.deleteTopics([topic]);
    expect(deleted).toEqual([expect.objectContaining({ name: topic, errorCode: 0 })]);
    const md = await client.metadata([topic]);
    expect(md.topics[0]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(client.cluster.topic(topic)).toBeUndefined();
  });
});
