/**
 * The partition and coordinator APIs ask the cluster view who owns what: over a view in which this node (7)
 * owns only some partitions and node 8 the others, they serve what 7 owns and point clients at 8 for the rest.
 */
import { NO_MUTATION_QUOTAS } from '../../../src/quota/controller-mutation.js';
import { NO_MIRRORS } from '../../../src/replication/mirrors.js';
import { NO_REPLICA_READS } from '../../../src/cluster/replica-reads.js';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../../protocol/messages/019-create-topics.gen.js';
import { DeleteRecordsApi } from '../../../protocol/messages/021-delete-records.gen.js';
import { DescribeProducersApi } from '../../../protocol/messages/061-describe-producers.gen.js';
import { createFindCoordinatorRequest } from '../../../protocol/messages/010-find-coordinator.gen.js';
import { ListOffsetsApi } from '../../../protocol/messages/002-list-offsets.gen.js';
import { OffsetForLeaderEpochApi } from '../../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { createDescribeClusterRequest } from '../../../protocol/messages/060-describe-cluster.gen.js';
import { produce } from '../../../src/api/000-produce.js';
import { fetch } from '../../../src/api/001-fetch.js';
import { listOffsets } from '../../../src/api/002-list-offsets.js';
import { metadata } from '../../../src/api/003-metadata.js';
import { findCoordinator } from '../../../src/api/010-find-coordinator.js';
import { createTopics } from '../../../src/api/019-create-topics.js';
import { deleteRecords } from '../../../src/api/021-delete-records.js';
import { offsetForLeaderEpoch } from '../../../src/api/023-offset-for-leader-epoch.js';
import { describeCluster } from '../../../src/api/060-describe-cluster.js';
import { describeProducers } from '../../../src/api/061-describe-producers.js';
import type { Services } from '../../../src/api/services.js';
import type { LiveBroker } from '../../../src/cluster/cluster-view.js';
import { FetchSessionCache } from '../../../src/cluster/fetch-sessions.js';
import { PartitionManager } from '../../../src/cluster/partitions.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import { fetchRequest, metadataRequest, produceRequest } from '../../support/requests.js';
import { buildBatch } from '../log/support.js';
import { answer, FakeTxnVerification, fakeCluster, fakeNode, requestContext } from './fakes.js';

const BROKERS: LiveBroker[] = [
  { nodeId: 7, rack: null, endpoints: [{ listenerName: 'PLAINTEXT', host: 'broker.example', port: 9092 }] },
  { nodeId: 8, rack: 'r2', endpoints: [{ listenerName: 'PLAINTEXT', host: 'other.example', port: 9093 }] },
];

/** Node 7 owns orders-0; node 8 owns orders-1; orders-2 has no owner. */
async function setup(o: { coordinatorNode?: number } = {}) {
  /** Partitions the view stopped owning (a lease lost, a handover under way). */
  const revoked = new Set<string>();
  const config = loadConfig({ overrides: [['log.dirs', '/unused']] });
  const log = pino({ level: 'silent' });
  const store = await openMemoryMetadataStore();
  const ledgers = await LocalLedgerStore.open('/ledgers', { fs: new MemoryLedgerFs() });
  const topicManager = new TopicManager(store, config);
  await topicManager.load();
  topicManager.liveBrokerCount = () => BROKERS.length;
  const cluster = fakeCluster({
    brokers: BROKERS,
    controllerId: 8,
    owned: (t, p) => (t !== 'orders' || p === 0) && !revoked.has(`${t}-${p}`),
    ownerOf: (t, p) => (t === 'orders' && p === 1 ? 8 : -1),
    coordinatorNode: o.coordinatorNode,
  });
  const partitions = new PartitionManager({ topics: topicManager, view: cluster, ledgers, metadata: store, config, log });
  await topicManager.create('orders', { partitions: 3, replicationFactor: 1, configs: {} });
  const topics: Services['topics'] = Object.assign(Object.create(topicManager) as TopicManager, { autoCreate: async () => undefined });
  const services = {
    node: fakeNode(),
    config,
    topics,
    cluster,
    partitions,
    fetchSessions: new FetchSessionCache(100),
    metrics: { countAppend: () => undefined, countFetch: () => undefined },
    txnVerification: new FakeTxnVerification(),
    replicaReads: NO_REPLICA_READS,
    mutationQuotas: NO_MUTATION_QUOTAS,
    mirrors: NO_MIRRORS,
    log,
  };
  const close = async (): Promise<void> => {
    await partitions.close();
    await ledgers.close();
    await store.close();
  };
  return { services, partitions, revoked, close };
}

describe('handlers over a cluster view that owns some partitions', () => {
  it('Produce appends to a partition this node owns and answers NOT_LEADER_OR_FOLLOWER for one another node owns, without opening it', async () => {
    const { services, partitions, close } = await setup();
    const res = await answer(produce.handle(
      produceRequest([
        { topic: 'orders', partition: 0, records: buildBatch(2) },
        { topic: 'orders', partition: 1, records: buildBatch(2) },
        { topic: 'orders', partition: 9, records: buildBatch(2) },
      ]),
      requestContext(services, { apiVersion: 9 }),
    ));
    const codes = res.responses[0]!.partitionResponses.map((p) => [p.index, p.errorCode]);
    expect(codes).toEqual([
      [0, ErrorCode.NONE],
      [1, ErrorCode.NOT_LEADER_OR_FOLLOWER],
      [9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    expect([partitions.get('orders', 0)?.log.highWatermark, partitions.get('orders', 1)]).toEqual([2, undefined]);
    await close();
  });

  it('Produce and Fetch answer NOT_LEADER_OR_FOLLOWER for an open partition from the instant the view stops owning it, before its log closes', async () => {
    const { services, partitions, revoked, close } = await setup();
    const first = await answer(produce.handle(produceRequest([{ topic: 'orders', partition: 0, records: buildBatch(2) }]), requestContext(services, { apiVersion: 9 })));
    expect(first.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    revoked.add('orders-0');
    // Still open: the view's release has not closed it yet.
    expect(partitions.get('orders', 0)).toBeDefined();
    const again = await answer(produce.handle(produceRequest([{ topic: 'orders', partition: 0, records: buildBatch(2) }]), requestContext(services, { apiVersion: 9 })));
    expect(again.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const fetched = await answer(fetch.handle(fetchRequest({ topics: [{ topicId: services.topics.get('orders')!.topicId, partitions: [{ partition: 0, offset: 0n }] }] }), requestContext(services, { apiVersion: 16 })));
    expect(fetched.responses[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(partitions.get('orders', 0)!.log.highWatermark).toBe(2);
    await close();
  });

  it('Fetch answers NOT_LEADER_OR_FOLLOWER with the leader and its endpoint (KIP-951) for a partition another node owns', async () => {
    const { services, close } = await setup();
    const res = await answer(fetch.handle(fetchRequest({ topics: [{ topicId: services.topics.get('orders')!.topicId, partitions: [{ partition: 0, offset: 0n }, { partition: 1, offset: 0n }] }] }), requestContext(services, { apiVersion: 16 })));
    const [p0, p1] = res.responses[0]!.partitions;
    expect(p0!.errorCode).toBe(ErrorCode.NONE);
    expect(p1).toMatchObject({ errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, currentLeader: { leaderId: 8, leaderEpoch: -1 } });
    expect(res.nodeEndpoints).toEqual([{ nodeId: 8, host: 'other.example', port: 9093, rack: 'r2' }]);
    await close();
  });

  it('ListOffsets, DeleteRecords, OffsetForLeaderEpoch and DescribeProducers answer NOT_LEADER_OR_FOLLOWER for a partition another node owns', async () => {
    const { services, close } = await setup();
    const ctx = (apiVersion: number) => requestContext(services, { apiVersion });
    const lo = await answer(listOffsets.handle(ListOffsetsApi.request.create({ replicaId: -1, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1, maxNumOffsets: 1 }, { partitionIndex: 1, timestamp: -1n, currentLeaderEpoch: -1, maxNumOffsets: 1 }] }] }), ctx(7)));
    expect(lo.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    const dr = await answer(deleteRecords.handle(DeleteRecordsApi.request.create({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, offset: 0n }] }] }), ctx(2)));
    expect(dr.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    const oe = await answer(offsetForLeaderEpoch.handle(OffsetForLeaderEpochApi.request.create({ topics: [{ topic: 'orders', partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }, { partition: 1, currentLeaderEpoch: -1, leaderEpoch: 0 }] }] }), ctx(4)));
    expect(oe.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NOT_LEADER_OR_FOLLOWER]);
    const dp = await answer(describeProducers.handle(DescribeProducersApi.request.create({ topics: [{ name: 'orders', partitionIndexes: [1] }] }), ctx(0)));
    expect(dp.topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    await close();
  });

  it('Metadata reports the leaders, replicas, in-sync replicas, brokers and controller of the view', async () => {
    const { services, close } = await setup();
    const res = await answer(metadata.handle(metadataRequest(['orders'], false), requestContext(services, { apiVersion: 12 })));
    expect(res.controllerId).toBe(8);
    expect(res.brokers.map((b) => [b.nodeId, b.host, b.port, b.rack])).toEqual([
      [7, 'broker.example', 9092, null],
      [8, 'other.example', 9093, 'r2'],
    ]);
    const [p0, p1, p2] = res.topics[0]!.partitions;
    // Named in the request, the partition this node owns was opened: its leader epoch is known.
    expect(p0).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 7, replicaNodes: [7], isrNodes: [7] });
    expect(p0!.leaderEpoch).toBeGreaterThanOrEqual(0);
    expect(p1).toMatchObject({ errorCode: ErrorCode.NONE, leaderId: 8, leaderEpoch: -1, replicaNodes: [8], isrNodes: [8] });
    expect(p2).toMatchObject({ errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1 });
    const cluster = await answer(describeCluster.handle(createDescribeClusterRequest({ endpointType: 1 }), requestContext(services, { apiVersion: 1 })));
    expect([cluster.controllerId, cluster.brokers.map((b) => b.brokerId)]).toEqual([8, [7, 8]]);
    await close();
  });

  it('FindCoordinator names the broker that owns the key\'s partition, for groups and transactions, one result per key from v4', async () => {
    const groups = { isActive: true } as Services['groups'];
    const transactions = { isActive: true } as Services['transactions'];
    const other = await setup({ coordinatorNode: 8 });
    const ctx = (apiVersion: number) => requestContext({ ...other.services, groups, transactions }, { apiVersion });
    expect(await answer(findCoordinator.handle(createFindCoordinatorRequest({ key: 'g' }), ctx(3)))).toMatchObject({ errorCode: 0, nodeId: 8, host: 'other.example', port: 9093 });
    expect(await answer(findCoordinator.handle(createFindCoordinatorRequest({ keyType: 1, coordinatorKeys: ['tx-a', 'tx-b'] }), ctx(4)))).toMatchObject({
      coordinators: [{ key: 'tx-a', nodeId: 8, host: 'other.example', errorCode: 0 }, { key: 'tx-b', nodeId: 8 }],
    });
    await other.close();
    const none = await setup({ coordinatorNode: -1 });
    const res = await answer(findCoordinator.handle(createFindCoordinatorRequest({ coordinatorKeys: ['g'] }), requestContext({ ...none.services, groups, transactions }, { apiVersion: 4 })));
    expect(res.coordinators[0]).toMatchObject({ key: 'g', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, nodeId: -1 });
    await none.close();
    // Before its internal topic exists (a member waits for its replicas), a coordinator is not available.
    const waiting = await setup({ coordinatorNode: 8 });
    const inactive = { isActive: false } as Services['transactions'];
    const tx = await answer(findCoordinator.handle(createFindCoordinatorRequest({ keyType: 1, coordinatorKeys: ['tx-a'] }), requestContext({ ...waiting.services, groups, transactions: inactive }, { apiVersion: 4 })));
    expect(tx.coordinators[0]).toMatchObject({ key: 'tx-a', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, nodeId: -1 });
    await waiting.close();
  });

  it('CreateTopics stores and reports the replication factor it accepted, and refuses one the live brokers cannot reach', async () => {
    const { services, close } = await setup();
    const res = await answer(createTopics.handle(
      createCreateTopicsRequest({
        topics: [
          createCreateTopicsRequestCreatableTopic({ name: 'two', numPartitions: 1, replicationFactor: 2 }),
          createCreateTopicsRequestCreatableTopic({ name: 'three', numPartitions: 1, replicationFactor: 3 }),
        ],
        timeoutMs: 1000,
      }),
      requestContext(services, { apiVersion: 7 }),
    ));
    expect(res.topics.map((t) => [t.name, t.errorCode, t.replicationFactor])).toEqual([
      ['two', ErrorCode.NONE, 2],
      ['three', ErrorCode.INVALID_REPLICATION_FACTOR, -1],
    ]);
    expect(res.topics[1]!.errorMessage).toContain('only 2 broker(s) are registered');
    expect(services.topics.get('two')?.replicationFactor).toBe(2);
    await close();
  });
});
