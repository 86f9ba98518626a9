/**
 * Bounds on the admin APIs, over the wire against a real broker: Kafka's 10,000-partition bound per
 * CreateTopics/CreatePartitions request, many partitions created without waiting for every log, topic and
 * resource names of any length answered with INVALID_TOPIC_EXCEPTION (in non-flexible versions too, whose
 * strings are int16-length), Metadata v10-11 by topic id, and IncrementalAlterConfigs' DELETE of configs the
 * broker does not know.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreatePartitionsApi, createCreatePartitionsRequest, createCreatePartitionsRequestCreatePartitionsTopic } from '../../protocol/messages/037-create-partitions.gen.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { DescribeConfigsApi, createDescribeConfigsRequest, createDescribeConfigsRequestDescribeConfigsResource } from '../../protocol/messages/032-describe-configs.gen.js';
import {
  IncrementalAlterConfigsApi,
  createIncrementalAlterConfigsRequest,
  createIncrementalAlterConfigsRequestAlterableConfig,
  createIncrementalAlterConfigsRequestAlterConfigsResource,
} from '../../protocol/messages/044-incremental-alter-configs.gen.js';
import { AlterConfigsApi, createAlterConfigsRequest, createAlterConfigsRequestAlterConfigsResource } from '../../protocol/messages/033-alter-configs.gen.js';
import { MetadataApi, createMetadataRequestTopic } from '../../protocol/messages/003-metadata.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { metadataRequest, produceRequest } from '../support/requests.js';

const TOPIC = 2;
const SET = 0;
const DELETE = 1;
const EXCESSIVE = 'Excessively large number of partitions per request.';
const EXCESSIVE_BATCH = 'Unable to perform excessively large batch operation.';

const newTopic = (name: string, numPartitions: number) => createCreateTopicsRequestCreatableTopic({ name, numPartitions, replicationFactor: 1 });

describe.sequential('admin API bounds', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'auto.create.topics.enable': 'false' } });
    conn = await RawConnection.connect(broker.port);
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  async function topicNames(): Promise<string[]> {
    return (await conn.request(MetadataApi, 12, metadataRequest(null, false))).topics.map((t) => t.name!);
  }

  describe('partitions per request', () => {
    it('refuses a CreateTopics of 0x40000001 partitions at once with POLICY_VIOLATION, creates nothing, and keeps serving', async () => {
      const started = Date.now();
      const res = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('huge', 0x40000001)], timeoutMs: 30_000 }));
      expect(res.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([['huge', ErrorCode.POLICY_VIOLATION, EXCESSIVE]]);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(await topicNames()).not.toContain('huge');
    });

    it('counts the partitions of every topic of a request, as Kafka does: 5,000 + 5,000 + 1 fails every topic, even valid ones', async () => {
      const res = await conn.request(
        CreateTopicsApi,
        4,
        createCreateTopicsRequest({ topics: [newTopic('half-a', 5000), newTopic('half-b', 5000), newTopic('one-more', 1)], timeoutMs: 30_000 }),
      );
      expect(res.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([
        ['half-a', ErrorCode.POLICY_VIOLATION, EXCESSIVE],
        ['half-b', ErrorCode.POLICY_VIOLATION, EXCESSIVE],
        ['one-more', ErrorCode.POLICY_VIOLATION, EXCESSIVE],
      ]);
      const validateOnly = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('just-fits', 9_999)], validateOnly: true, timeoutMs: 30_000 }));
      expect(validateOnly.topics.map((t) => [t.errorCode, t.numPartitions])).toEqual([[ErrorCode.NONE, 9_999]]);
      expect(await topicNames()).not.toContain('half-a');
    });

    it('bounds the records of a request as Kafka\'s controller does: a topic\'s, one per partition, one per config, at most 10,000', async () => {
      const batch: [string, number, string | null][] = [];
      // 10,000 partitions and a TopicRecord: one record too many, validateOnly or not.
      const one = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('ten-thousand', 10_000)], validateOnly: true, timeoutMs: 30_000 }));
      batch.push(...one.topics.map((t) => [t.name, t.errorCode, t.errorMessage] as [string, number, string | null]));
      // 100 topics of 100: 10,000 partitions, 10,100 records; every topic fails and none is created.
      const many = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: Array.from({ length: 100 }, (_, i) => newTopic(`rec-${i}`, 100)), timeoutMs: 30_000 }));
      expect(new Set(many.topics.map((t) => `${t.errorCode} ${t.errorMessage}`))).toEqual(new Set([`${ErrorCode.POLICY_VIOLATION} ${EXCESSIVE_BATCH}`]));
      expect(batch).toEqual([['ten-thousand', ErrorCode.POLICY_VIOLATION, EXCESSIVE_BATCH]]);
      expect((await topicNames()).filter((n) => n.startsWith('rec-'))).toEqual([]);
      // 99 of them fit (9,999 records).
      const fits = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: Array.from({ length: 99 }, (_, i) => newTopic(`rec-${i}`, 100)), validateOnly: true, timeoutMs: 30_000 }));
      expect(fits.topics.every((t) => t.errorCode === ErrorCode.NONE)).toBe(true);
    });

    it('answers a CreateTopics of many partitions before every log is open, reports the others LEADER_NOT_AVAILABLE, then serves them all', async () => {
      const res = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('many', 400)], timeoutMs: 30_000 }));
      expect(res.topics.map((t) => [t.errorCode, t.numPartitions])).toEqual([[ErrorCode.NONE, 400]]);
      const first = (await conn.request(MetadataApi, 12, metadataRequest(['many'], false))).topics[0]!;
      expect(first.partitions).toHaveLength(400);
      for (const p of first.partitions) {
        if (p.errorCode === ErrorCode.NONE) expect(p.leaderId).toBe(1);
        else expect([p.errorCode, p.leaderId]).toEqual([ErrorCode.LEADER_NOT_AVAILABLE, -1]);
      }
      await waitFor(
        'every partition of "many" to have a leader',
        async () => (await conn.request(MetadataApi, 12, metadataRequest(['many'], false))).topics[0]!.partitions.every((p) => p.errorCode === ErrorCode.NONE && p.leaderId === 1),
        60_000,
        200,
      );
      const batch = await buildRecordBatch([{ value: 'last' }]);
      const produced = await conn.request(ProduceApi, 9, produceRequest([{ topic: 'many', partition: 399, records: batch }]));
      expect(produced.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    });

    it('bounds CreatePartitions at 10,000 new partitions per request, counted over its topics in order', async () => {
      const created = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('grow-a', 1), newTopic('grow-b', 1)], timeoutMs: 30_000 }));
      expect(created.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
      const res = await conn.request(
        CreatePartitionsApi,
        1,
        createCreatePartitionsRequest({
          topics: [
            createCreatePartitionsRequestCreatePartitionsTopic({ name: 'grow-a', count: 3, assignments: null }),
            createCreatePartitionsRequestCreatePartitionsTopic({ name: 'grow-b', count: 0x40000001, assignments: null }),
          ],
          timeoutMs: 30_000,
          validateOnly: false,
        }),
      );
      expect(res.results.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
        ['grow-a', ErrorCode.NONE, null],
        ['grow-b', ErrorCode.POLICY_VIOLATION, EXCESSIVE],
      ]);
      const md = await conn.request(MetadataApi, 12, metadataRequest(['grow-a', 'grow-b'], false));
      expect(md.topics.map((t) => [t.name, t.partitions.length])).toEqual([
        ['grow-a', 3],
        ['grow-b', 1],
      ]);
    });
  });

  describe('names longer than Kafka allows', () => {
    const longest16 = 'n'.repeat(0x7fff);
    const flexibleOnly = 'f'.repeat(40_000);

    it('answers INVALID_TOPIC_EXCEPTION to CreateTopics with a 32,767-character name in v4 (non-flexible) and a 40,000-character one in v7', async () => {
      const v4 = await conn.request(CreateTopicsApi, 4, createCreateTopicsRequest({ topics: [newTopic(longest16, 1)], timeoutMs: 30_000 }));
      expect([v4.topics[0]!.name.length, v4.topics[0]!.errorCode]).toEqual([0x7fff, ErrorCode.INVALID_TOPIC_EXCEPTION]);
      expect(v4.topics[0]!.errorMessage).toMatch(/^Topic name is illegal, it can't be longer than 249 characters, topic name: n+\.\.\. \(32767 characters\)$/);
      const v7 = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic(flexibleOnly, 1)], timeoutMs: 30_000 }));
      expect(v7.topics[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
      expect(conn.isClosed).toBe(false);
    });

    it('answers INVALID_TOPIC_EXCEPTION to Metadata naming such topics, in v8 and v12', async () => {
      const v8 = await conn.request(MetadataApi, 8, metadataRequest([longest16], true));
      expect(v8.topics.map((t) => t.errorCode)).toEqual([ErrorCode.INVALID_TOPIC_EXCEPTION]);
      const v12 = await conn.request(MetadataApi, 12, metadataRequest([flexibleOnly], true));
      expect(v12.topics.map((t) => [t.name?.length, t.errorCode])).toEqual([[40_000, ErrorCode.INVALID_TOPIC_EXCEPTION]]);
    });

    it('answers INVALID_TOPIC_EXCEPTION to DescribeConfigs, AlterConfigs and IncrementalAlterConfigs of such topic resources', async () => {
      const describe = (name: string) => createDescribeConfigsRequest({ resources: [createDescribeConfigsRequestDescribeConfigsResource({ resourceType: TOPIC, resourceName: name, configurationKeys: null })] });
      const v3 = await conn.request(DescribeConfigsApi, 3, describe(longest16));
      expect([v3.results[0]!.errorCode, v3.results[0]!.errorMessage!.length < 1000]).toEqual([ErrorCode.INVALID_TOPIC_EXCEPTION, true]);
      const v4 = await conn.request(DescribeConfigsApi, 4, describe(flexibleOnly));
      expect(v4.results[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
      const alter = await conn.request(AlterConfigsApi, 0, createAlterConfigsRequest({ resources: [createAlterConfigsRequestAlterConfigsResource({ resourceType: TOPIC, resourceName: longest16, configs: [] })] }));
      expect(alter.responses[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
      const incremental = await conn.request(
        IncrementalAlterConfigsApi,
        0,
        createIncrementalAlterConfigsRequest({ resources: [createIncrementalAlterConfigsRequestAlterConfigsResource({ resourceType: TOPIC, resourceName: longest16, configs: [] })] }),
      );
      expect(incremental.responses[0]!.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
      // A 32,767-character config name and value quoted in messages of the non-flexible AlterConfigs v0.
      await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('configured', 1)], timeoutMs: 30_000 }));
      const badConfig = await conn.request(
        AlterConfigsApi,
        0,
        createAlterConfigsRequest({ resources: [createAlterConfigsRequestAlterConfigsResource({ resourceType: TOPIC, resourceName: 'configured', configs: [{ name: longest16, value: '1' }] })] }),
      );
      expect(badConfig.responses[0]!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
      const badValue = await conn.request(
        AlterConfigsApi,
        0,
        createAlterConfigsRequest({ resources: [createAlterConfigsRequestAlterConfigsResource({ resourceType: TOPIC, resourceName: 'configured', configs: [{ name: 'retention.ms', value: longest16 }] })] }),
      );
      expect(badValue.responses[0]!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
      expect(conn.isClosed).toBe(false);
    });
  });

  it('answers Metadata v10 and v11 naming a topic by id (name null) with INVALID_REQUEST, as Kafka does below v12, and stays open', async () => {
    const created = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('by-id-old', 1)], timeoutMs: 30_000 }));
    const id = created.topics[0]!.topicId;
    for (const v of [10, 11]) {
      const res = await conn.request(MetadataApi, v, { ...metadataRequest(null, false), topics: [createMetadataRequestTopic({ topicId: id, name: null }), createMetadataRequestTopic({ topicId: ZERO_UUID, name: 'by-id-old' })] });
      expect(res.topics.map((t) => [t.name, t.topicId, t.errorCode])).toEqual([
        ['', id, ErrorCode.INVALID_REQUEST],
        ['by-id-old', ZERO_UUID, ErrorCode.INVALID_REQUEST],
      ]);
    }
    const byName = await conn.request(MetadataApi, 11, metadataRequest(['by-id-old'], false));
    expect(byName.topics.map((t) => [t.name, t.errorCode])).toEqual([['by-id-old', ErrorCode.NONE]]);
  });

  it('treats IncrementalAlterConfigs DELETE of a config the topic does not set, known or not, as a no-op (MirrorMaker 2 deletes every source default)', async () => {
    await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [newTopic('mirrored', 1)], timeoutMs: 30_000 }));
    const op = (name: string, configOperation: number, value: string | null = null) => createIncrementalAlterConfigsRequestAlterableConfig({ name, configOperation, value });
    const res = await conn.request(
      IncrementalAlterConfigsApi,
      1,
      createIncrementalAlterConfigsRequest({
        resources: [
          createIncrementalAlterConfigsRequestAlterConfigsResource({
            resourceType: TOPIC,
            resourceName: 'mirrored',
            configs: [op('errors.deadletterqueue.group.enable', DELETE), op('some.future.topic.config', DELETE), op('segment.jitter.ms', DELETE), op('retention.ms', SET, '3600000')],
          }),
        ],
      }),
    );
    expect(res.responses.map((r) => r.errorCode)).toEqual([ErrorCode.NONE]);
    const described = await conn.request(
      DescribeConfigsApi,
      4,
      createDescribeConfigsRequest({ resources: [createDescribeConfigsRequestDescribeConfigsResource({ resourceType: TOPIC, resourceName: 'mirrored', configurationKeys: ['retention.ms', 'errors.deadletterqueue.group.enable'] })] }),
    );
    expect(described.results[0]!.configs.map((c) => [c.name, c.value])).toEqual([
      ['errors.deadletterqueue.group.enable', 'false'],
      ['retention.ms', '3600000'],
    ]);
    // SET of an unknown name still fails the resource, as in Kafka.
    const unknown = await conn.request(
      IncrementalAlterConfigsApi,
      1,
      createIncrementalAlterConfigsRequest({ resources: [createIncrementalAlterConfigsRequestAlterConfigsResource({ resourceType: TOPIC, resourceName: 'mirrored', configs: [op('some.future.topic.config', SET, '1')] })] }),
    );
    expect(unknown.responses.map((r) => [r.errorCode, r.errorMessage])).toEqual([[ErrorCode.INVALID_CONFIG, 'Unknown topic config name: some.future.topic.config']]);
  });
});
