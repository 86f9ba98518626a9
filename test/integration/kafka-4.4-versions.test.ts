/**
 * The versions Kafka 4.4 added to the APIs Ledgerline serves, and the small admin APIs Kafka answers on one
 * node, over the wire against a real broker: Produce v13 and OffsetCommit/OffsetFetch v10 by topic id,
 * Fetch v18, ListOffsets v11, Metadata v13, DescribeCluster v2, DeleteGroups v3, ApiVersions v5,
 * InitProducerId v6, DescribeLogDirs v5, and
 * DescribeTopicPartitions, ElectLeaders, partition reassignments, DescribeQuorum and ListConfigResources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { ListOffsetsApi, createListOffsetsRequest } from '../../protocol/messages/002-list-offsets.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { OffsetCommitApi, createOffsetCommitRequest } from '../../protocol/messages/008-offset-commit.gen.js';
import { OffsetFetchApi, createOffsetFetchRequest } from '../../protocol/messages/009-offset-fetch.gen.js';
import { ApiVersionsApi, createApiVersionsRequest } from '../../protocol/messages/018-api-versions.gen.js';
import { CreateTopicsApi, createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { InitProducerIdApi, createInitProducerIdRequest } from '../../protocol/messages/022-init-producer-id.gen.js';
import { DescribeLogDirsApi, createDescribeLogDirsRequest } from '../../protocol/messages/035-describe-log-dirs.gen.js';
import { DeleteGroupsApi, createDeleteGroupsRequest } from '../../protocol/messages/042-delete-groups.gen.js';
import { ElectLeadersApi, createElectLeadersRequest } from '../../protocol/messages/043-elect-leaders.gen.js';
import { AlterPartitionReassignmentsApi, createAlterPartitionReassignmentsRequest } from '../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { ListPartitionReassignmentsApi, createListPartitionReassignmentsRequest } from '../../protocol/messages/046-list-partition-reassignments.gen.js';
import { DescribeQuorumApi, createDescribeQuorumRequest } from '../../protocol/messages/055-describe-quorum.gen.js';
import { DescribeClusterApi, createDescribeClusterRequest } from '../../protocol/messages/060-describe-cluster.gen.js';
import { ListConfigResourcesApi, createListConfigResourcesRequest } from '../../protocol/messages/074-list-config-resources.gen.js';
import { DescribeTopicPartitionsApi, createDescribeTopicPartitionsRequest } from '../../protocol/messages/075-describe-topic-partitions.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { decodeRecordSet } from '../support/records.js';
import { fetchRequest, metadataRequest } from '../support/requests.js';

describe.sequential('Kafka 4.4 versions and single-node admin APIs', () => {
  let broker: BrokerProcess;
  let conn: RawConnection;
  let topicId: string;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: { 'auto.create.topics.enable': 'false' } });
    conn = await RawConnection.connect(broker.port);
    const created = await conn.request(CreateTopicsApi, 7, createCreateTopicsRequest({ topics: [createCreateTopicsRequestCreatableTopic({ name: 'events', numPartitions: 3, replicationFactor: 1 })], timeoutMs: 30_000 }));
    expect(created.topics[0]!.errorCode).toBe(0);
    topicId = created.topics[0]!.topicId;
    await waitFor('the partitions to have their leader', async () => {
      const md = await conn.request(MetadataApi, 13, metadataRequest(['events'], false));
      return md.topics[0]!.partitions.length === 3 && md.topics[0]!.partitions.every((p) => p.errorCode === 0 && p.leaderId === 1) ? md : null;
    });
  });

  afterAll(async () => {
    conn?.destroy();
    await broker?.stop();
  });

  it('Produce v13 appends by topic id and answers by id; an unknown id is UNKNOWN_TOPIC_ID', async () => {
    const records = await buildRecordBatch([{ key: null, value: Buffer.from('by-id') }]);
    const unknown = randomUuid();
    const res = await conn.request(
      ProduceApi,
      13,
      ProduceApi.request.create({ acks: -1, timeoutMs: 30_000, transactionalId: null, topicData: [{ name: '', topicId, partitionData: [{ index: 0, records }] }, { name: '', topicId: unknown, partitionData: [{ index: 0, records }] }] }),
    );
    expect(res.responses.map((t) => [t.topicId, t.partitionResponses[0]!.errorCode])).toEqual([
      [topicId, 0],
      [unknown, ErrorCode.UNKNOWN_TOPIC_ID],
    ]);
    expect(res.responses[0]!.partitionResponses[0]!.baseOffset).toBe(0n);
  });

  it('Fetch v18 reads it back, with the high watermark a consumer sends ignored', async () => {
    const req = fetchRequest({ topics: [{ topicId, partitions: [{ partition: 0, offset: 0n }] }] });
    req.topics[0]!.partitions[0]!.highWatermark = 9223372036854775807n;
    const res = await conn.request(FetchApi, 18, req);
    const { records } = await decodeRecordSet(res.responses[0]!.partitions[0]!.records as Buffer);
    expect(records.map((r) => r.value!.toString())).toEqual(['by-id']);
  });

  it('ListOffsets v11 answers earliest pending upload (-6) with -1, as Kafka without remote storage', async () => {
    const res = await conn.request(ListOffsetsApi, 11, createListOffsetsRequest({ replicaId: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -6n, maxNumOffsets: 1 }] }] }));
    expect(res.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, offset: -1n, timestamp: -1n, leaderEpoch: -1 });
    const latest = await conn.request(ListOffsetsApi, 11, createListOffsetsRequest({ replicaId: -1, topics: [{ name: 'events', partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] }] }));
    expect(latest.topics[0]!.partitions[0]!.offset).toBe(1n);
  });

  it('OffsetCommit and OffsetFetch v10 commit and read offsets by topic id', async () => {
    const commit = await conn.request(
      OffsetCommitApi,
      10,
      createOffsetCommitRequest({ groupId: 'by-id', generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: '', topicId, partitions: [{ partitionIndex: 1, committedOffset: 42n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: 'm' }] }] }),
    );
    expect(commit.topics).toEqual([expect.objectContaining({ topicId, partitions: [expect.objectContaining({ partitionIndex: 1, errorCode: 0 })] })]);
    const unknown = randomUuid();
    const fetched = await conn.request(
      OffsetFetchApi,
      10,
      createOffsetFetchRequest({ groups: [{ groupId: 'by-id', memberId: null, memberEpoch: -1, topics: [{ name: '', topicId, partitionIndexes: [1] }, { name: '', topicId: unknown, partitionIndexes: [0] }] }] }),
    );
    expect(fetched.groups[0]!.topics.map((t) => [t.topicId, t.partitions[0]!.errorCode, t.partitions[0]!.committedOffset])).toEqual([
      [topicId, 0, 42n],
      [unknown, ErrorCode.UNKNOWN_TOPIC_ID, -1n],
    ]);
    const all = await conn.request(OffsetFetchApi, 10, createOffsetFetchRequest({ groups: [{ groupId: 'by-id', memberId: null, memberEpoch: -1, topics: null }] }));
    expect(all.groups[0]!.topics.map((t) => t.topicId)).toEqual([topicId]);
  });

  it('DeleteGroups v3 gives a failed group its error message', async () => {
    const res = await conn.request(DeleteGroupsApi, 3, createDeleteGroupsRequest({ groupsNames: ['by-id', 'never-there'] }));
    expect(res.results.find((r) => r.groupId === 'by-id')).toMatchObject({ errorCode: 0, errorMessage: null });
    const missing = res.results.find((r) => r.groupId === 'never-there')!;
    expect(missing.errorCode).not.toBe(0);
    expect(missing.errorMessage).toEqual(expect.any(String));
  });

  it('Metadata v13, DescribeCluster v2 and ApiVersions v5 answer as a healthy Kafka 4.4 node', async () => {
    expect((await conn.request(MetadataApi, 13, metadataRequest(null, false))).errorCode).toBe(0);
    const cluster = await conn.request(DescribeClusterApi, 2, createDescribeClusterRequest({ includeFencedBrokers: true }));
    expect(cluster.brokers).toEqual([expect.objectContaining({ brokerId: 1, isFenced: false })]);
    const versions = await conn.request(ApiVersionsApi, 5, createApiVersionsRequest({ clientSoftwareName: 'test', clientSoftwareVersion: '1', clusterId: cluster.clusterId, nodeId: 1 }));
    expect(versions.errorCode).toBe(0);
    expect(versions.finalizedFeatures).toContainEqual(expect.objectContaining({ name: 'metadata.version', maxVersionLevel: 33 }));
    const produce = versions.apiKeys.find((k) => k.apiKey === 0)!;
    expect(produce.maxVersion).toBe(13);
    const wrong = await conn.request(ApiVersionsApi, 5, createApiVersionsRequest({ clientSoftwareName: 'test', clientSoftwareVersion: '1', clusterId: 'another-cluster', nodeId: 1 }));
    expect(wrong.errorCode).toBe(ErrorCode.REBOOTSTRAP_REQUIRED);
  });

  it('InitProducerId v6 gives an idempotent producer its id with no ongoing transaction; DescribeLogDirs v5 no cordoned dir', async () => {
    const init = await conn.request(InitProducerIdApi, 6, createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: 60_000 }));
    expect(init).toMatchObject({ errorCode: 0, producerEpoch: 0, ongoingTxnProducerId: -1n, ongoingTxnProducerEpoch: -1 });
    expect(init.producerId).toBeGreaterThanOrEqual(0n);
    const dirs = await conn.request(DescribeLogDirsApi, 5, createDescribeLogDirsRequest({ topics: null }));
    expect(dirs.results).toEqual([expect.objectContaining({ errorCode: 0, isCordoned: false })]);
  });

  it('DescribeTopicPartitions pages the topic by its cursor', async () => {
    const first = await conn.request(DescribeTopicPartitionsApi, 0, createDescribeTopicPartitionsRequest({ topics: [{ name: 'events' }], responsePartitionLimit: 2, cursor: null }));
    expect(first.topics[0]).toMatchObject({ name: 'events', topicId, errorCode: 0 });
    expect(first.topics[0]!.partitions.map((p) => [p.partitionIndex, p.leaderId, p.isrNodes])).toEqual([[0, 1, [1]], [1, 1, [1]]]);
    expect(first.nextCursor).toMatchObject({ topicName: 'events', partitionIndex: 2 });
    const rest = await conn.request(DescribeTopicPartitionsApi, 0, createDescribeTopicPartitionsRequest({ topics: [{ name: 'events' }], responsePartitionLimit: 2, cursor: first.nextCursor }));
    expect(rest.topics[0]!.partitions.map((p) => p.partitionIndex)).toEqual([2]);
    expect(rest.nextCursor).toBeNull();
  });

  it('ElectLeaders answers ELECTION_NOT_NEEDED; reassignments list none and refuse another broker', async () => {
    const elect = await conn.request(ElectLeadersApi, 2, createElectLeadersRequest({ electionType: 0, topicPartitions: [{ topic: 'events', partitions: [0] }] }));
    expect(elect.replicaElectionResults[0]!.partitionResult[0]!.errorCode).toBe(ErrorCode.ELECTION_NOT_NEEDED);
    const list = await conn.request(ListPartitionReassignmentsApi, 0, createListPartitionReassignmentsRequest({ topics: null }));
    expect(list).toMatchObject({ errorCode: 0, topics: [] });
    const alter = await conn.request(AlterPartitionReassignmentsApi, 1, createAlterPartitionReassignmentsRequest({ topics: [{ name: 'events', partitions: [{ partitionIndex: 0, replicas: [2] }] }] }));
    expect(alter.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
  });

  it('DescribeQuorum names this node the leader of __cluster_metadata; ListConfigResources lists the broker and the topic', async () => {
    const quorum = await conn.request(DescribeQuorumApi, 2, createDescribeQuorumRequest({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }));
    expect(quorum.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderId: 1, leaderEpoch: 1 });
    expect(quorum.nodes[0]!.listeners[0]!.port).toBe(broker.port);
    const resources = await conn.request(ListConfigResourcesApi, 1, createListConfigResourcesRequest({ resourceTypes: [] }));
    expect(resources.configResources.map((r) => [r.resourceName, r.resourceType])).toEqual(expect.arrayContaining([['1', 4], ['events', 2]]));
  });
});
