/**
 * Requests that name tens of thousands of groups or partitions are answered in full by a broker whose JavaScript
 * heap is capped far below what starting every element's work at once would take (src/api/bounded-map.ts). The
 * protocol fuzzer (test/integration/fuzz.test.ts) builds such requests: arrays of 30,000 copies of one element;
 * 30,000 distinct group ids take 330 KB.
 * Before the work was bounded, each of them took the broker past its old generation's cap (it died of it): the
 * OffsetFetch below needed more than 120 MiB, and one of 100,000 groups took the broker to 830 MiB RSS.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import {
  AddPartitionsToTxnApi,
  createAddPartitionsToTxnRequest,
  createAddPartitionsToTxnRequestAddPartitionsToTxnTopic,
  createAddPartitionsToTxnRequestAddPartitionsToTxnTransaction,
} from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { ConsumerGroupDescribeApi, createConsumerGroupDescribeRequest } from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { DescribeGroupsApi, createDescribeGroupsRequest } from '../../protocol/messages/015-describe-groups.gen.js';
import { DeleteRecordsApi, createDeleteRecordsRequest, createDeleteRecordsRequestDeleteRecordsPartition, createDeleteRecordsRequestDeleteRecordsTopic } from '../../protocol/messages/021-delete-records.gen.js';
import { DescribeProducersApi, createDescribeProducersRequest, createDescribeProducersRequestTopicRequest } from '../../protocol/messages/061-describe-producers.gen.js';
import { OffsetCommitApi, createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import { OffsetFetchApi, createOffsetFetchRequest, createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../protocol/messages/009-offset-fetch.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';

/** The broker's old generation, in MiB: an idle broker uses about 25 of it. */
const OLD_SPACE_MIB = 96;
const COPIES = 30_000;
const TOPIC = 'fan-out';
const GROUP = 'fan-out-group';

describe.sequential(`requests of ${COPIES.toLocaleString('en')} elements, with the old generation capped at ${OLD_SPACE_MIB} MiB`, () => {
  let broker: BrokerProcess;
  let conn: RawConnection;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ nodeOptions: [`--max-old-space-size=${OLD_SPACE_MIB}`] });
    conn = await RawConnection.connect(broker.port);
    const created = await conn.request(
      CreateTopicsApi,
      7,
      createCreateTopicsRequest({ topics: [createCreateTopicsRequestCreatableTopic({ name: TOPIC, numPartitions: 3, replicationFactor: -1 })], timeoutMs: 30_000 }),
    );
    expect(created.topics[0]!.errorCode).toBe(ErrorCode.NONE);
    const committed = await conn.request(
      OffsetCommitApi,
      8,
      createOffsetCommitRequest({
        groupId: GROUP,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        topics: [createOffsetCommitRequestTopic({ name: TOPIC, partitions: [0, 1, 2].map((p) => createOffsetCommitRequestPartition({ partitionIndex: p, committedOffset: BigInt(p * 10), committedMetadata: 'm' })) })],
      }),
      30_000,
    );
    expect(committed.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, 0, 0]);
  });

  beforeEach(() => {
    // A broker that dies of its heap says so on stderr ("Reached heap limit"), with its last collections.
    onTestFailed(() => console.error(`broker's last log lines:\n${broker.logs.slice(-40).join('\n')}`));
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  it('answers an OffsetFetch v9 of 30,000 groups (1.2 MiB) with every group\'s offsets', async () => {
    const group = createOffsetFetchRequestGroup({ groupId: GROUP, memberId: null, memberEpoch: -1, topics: [createOffsetFetchRequestTopics({ name: TOPIC, partitionIndexes: [0, 1, 2] })] });
    const res = await conn.request(OffsetFetchApi, 9, createOffsetFetchRequest({ groups: Array.from({ length: COPIES }, () => group) }), 60_000);
    expect(res.groups).toHaveLength(COPIES);
    const offsets = new Set(res.groups.map((g) => `${g.errorCode}:${g.topics.flatMap((t) => t.partitions.map((p) => p.committedOffset)).join(',')}`));
    expect([...offsets]).toEqual(['0:0,10,20']);
    expect(broker.running).toBe(true);
  }, 90_000);

  it('answers a DescribeProducers of 30,000 topic entries, 90,000 partitions, with each of them', async () => {
    const topic = createDescribeProducersRequestTopicRequest({ name: TOPIC, partitionIndexes: [0, 1, 2] });
    const res = await conn.request(DescribeProducersApi, 0, createDescribeProducersRequest({ topics: Array.from({ length: COPIES }, () => topic) }), 60_000);
    expect(res.topics).toHaveLength(COPIES);
    const answers = new Set(res.topics.map((t) => `${t.name}:${t.partitions.map((p) => `${p.partitionIndex}/${p.errorCode}`).join(',')}`));
    expect([...answers]).toEqual([`${TOPIC}:0/0,1/0,2/0`]);
    expect(broker.running).toBe(true);
  }, 90_000);

  it('answers a DeleteRecords of 30,000 topic entries, 90,000 partitions, with each of them', async () => {
    const topic = createDeleteRecordsRequestDeleteRecordsTopic({ name: TOPIC, partitions: [0, 1, 2].map((p) => createDeleteRecordsRequestDeleteRecordsPartition({ partitionIndex: p, offset: -1n })) });
    const res = await conn.request(DeleteRecordsApi, 2, createDeleteRecordsRequest({ topics: Array.from({ length: COPIES }, () => topic), timeoutMs: 30_000 }), 60_000);
    expect(res.topics).toHaveLength(COPIES);
    const answers = new Set(res.topics.map((t) => `${t.name}:${t.partitions.map((p) => `${p.partitionIndex}/${p.errorCode}/${p.lowWatermark}`).join(',')}`));
    expect([...answers]).toEqual([`${TOPIC}:0/0/0,1/0/0,2/0/0`]);
    expect(broker.running).toBe(true);
  }, 90_000);

  it('describes 30,000 distinct groups in one DescribeGroups v5, and in one ConsumerGroupDescribe', async () => {
    const ids = Array.from({ length: COPIES }, (_, i) => `absent-${i}`);
    const classic = await conn.request(DescribeGroupsApi, 5, createDescribeGroupsRequest({ groups: ids }), 60_000);
    expect(classic.groups.map((g) => g.groupId)).toEqual(ids);
    expect(new Set(classic.groups.map((g) => `${g.errorCode}:${g.groupState}`))).toEqual(new Set(['0:Dead']));
    const consumer = await conn.request(ConsumerGroupDescribeApi, 0, createConsumerGroupDescribeRequest({ groupIds: ids }), 60_000);
    expect(consumer.groups.map((g) => g.groupId)).toEqual(ids);
    expect(new Set(consumer.groups.map((g) => g.errorCode))).toEqual(new Set([ErrorCode.GROUP_ID_NOT_FOUND]));
    expect(broker.running).toBe(true);
  }, 90_000);

  it('answers an AddPartitionsToTxn v4 (a broker\'s, KIP-890) of 30,000 transactions with each of them', async () => {
    const txn = createAddPartitionsToTxnRequestAddPartitionsToTxnTransaction({
      transactionalId: 'fan-out-txn',
      producerId: 7n,
      producerEpoch: 0,
      topics: [createAddPartitionsToTxnRequestAddPartitionsToTxnTopic({ name: TOPIC, partitions: [0, 1, 2] })],
    });
    const res = await conn.request(AddPartitionsToTxnApi, 4, createAddPartitionsToTxnRequest({ transactions: Array.from({ length: COPIES }, () => txn) }), 60_000);
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(res.resultsByTransaction).toHaveLength(COPIES);
    // No such transactional id: each partition of each transaction says so.
    const answers = new Set(res.resultsByTransaction.map((t) => `${t.transactionalId}:${t.topicResults.flatMap((r) => r.resultsByPartition.map((p) => `${p.partitionIndex}/${p.partitionErrorCode}`)).join(',')}`));
    expect(answers.size).toBe(1);
    expect([...answers][0]).toMatch(/^fan-out-txn:0\/[1-9]\d*,1\/[1-9]\d*,2\/[1-9]\d*$/);
    expect(broker.running).toBe(true);
  }, 90_000);
});
