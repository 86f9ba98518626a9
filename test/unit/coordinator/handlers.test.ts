/**
 * The group API handlers' version rules, over a coordinator on a manual clock: what each version of a request
 * means and how each version of the response carries the result.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createFindCoordinatorRequest } from '../../../protocol/messages/010-find-coordinator.gen.js';
import { createLeaveGroupRequest } from '../../../protocol/messages/013-leave-group.gen.js';
import { createOffsetFetchRequest, createOffsetFetchRequestGroup, createOffsetFetchRequestTopic, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createSyncGroupRequest } from '../../../protocol/messages/014-sync-group.gen.js';
import { createDescribeGroupsRequest } from '../../../protocol/messages/015-describe-groups.gen.js';
import { ListGroupsApi, createListGroupsRequest, createListGroupsResponseListedGroup, type ListGroupsResponse } from '../../../protocol/messages/016-list-groups.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { createConsumerGroupHeartbeatRequest } from '../../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import type { RequestContext } from '../../../src/api/handler.js';
import { offsetCommit } from '../../../src/api/008-offset-commit.js';
import { offsetFetch } from '../../../src/api/009-offset-fetch.js';
import { findCoordinator } from '../../../src/api/010-find-coordinator.js';
import { joinGroup } from '../../../src/api/011-join-group.js';
import { leaveGroup } from '../../../src/api/013-leave-group.js';
import { syncGroup } from '../../../src/api/014-sync-group.js';
import { describeGroups } from '../../../src/api/015-describe-groups.js';
import { listGroups } from '../../../src/api/016-list-groups.js';
import { consumerGroupHeartbeat } from '../../../src/api/068-consumer-group-heartbeat.js';
import { clientHostOf } from '../../../src/coordinator/request-context.js';
import { ClassicGroup } from '../../../src/coordinator/classic-group.js';
import type { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { harness, joinRequest } from './harness.js';
import { fakeCluster, fakeNode, requestContext } from '../api/fakes.js';
import type { TopicService, TransactionService } from '../../../src/api/services.js';

function context(groups: GroupCoordinator | undefined, apiVersion: number, signal = new AbortController().signal): RequestContext<'groups' | 'node' | 'cluster' | 'topics' | 'transactions'> {
  // OffsetCommit and OffsetFetch v10 look topics up by id; these tests name them (v9 and below).
  const topics = { getById: () => undefined, get: () => undefined } as unknown as TopicService;
  const transactions = { isActive: true } as TransactionService;
  return requestContext({ groups: groups as GroupCoordinator, node: fakeNode(), cluster: fakeCluster(), topics, transactions }, { apiVersion, signal });
}

describe('group API handlers', () => {
  it('FindCoordinator names this node for groups and transactions, one result per key from v4', async () => {
    const h = await harness();
    const v0 = await findCoordinator.handle(createFindCoordinatorRequest({ key: 'g' }), context(h.coordinator, 0));
    expect(v0).toMatchObject({ errorCode: 0, nodeId: 7, host: 'broker.example', port: 9092 });
    const v4 = await findCoordinator.handle(createFindCoordinatorRequest({ keyType: 1, coordinatorKeys: ['tx-a', 'tx-b'] }), context(h.coordinator, 4));
    expect(v4).toMatchObject({ coordinators: [{ key: 'tx-a', nodeId: 7, errorCode: 0 }, { key: 'tx-b', nodeId: 7 }] });
    const share = await findCoordinator.handle(createFindCoordinatorRequest({ keyType: 2, coordinatorKeys: ['s'] }), context(h.coordinator, 6));
    expect(share).toMatchObject({ coordinators: [{ key: 's', errorCode: ErrorCode.INVALID_REQUEST, nodeId: -1 }] });
    const unknown = await findCoordinator.handle(createFindCoordinatorRequest({ key: 'g', keyType: 9 }), context(h.coordinator, 2));
    expect(unknown).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, nodeId: -1, port: -1 });
    const notStarted = await findCoordinator.handle(createFindCoordinatorRequest({ key: 'g' }), context(undefined, 1));
    expect(notStarted).toMatchObject({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, nodeId: -1 });
  });

  it('JoinGroup sends an empty protocol name before v7 and null from v7 when there is none', async () => {
    const h = await harness();
    const v6 = await joinGroup.handle(joinRequest('g'), context(h.coordinator, 6));
    expect(v6).toMatchObject({ errorCode: ErrorCode.MEMBER_ID_REQUIRED, protocolName: '' });
    const v7 = await joinGroup.handle(joinRequest('g'), context(h.coordinator, 7));
    expect(v7).toMatchObject({ errorCode: ErrorCode.MEMBER_ID_REQUIRED, protocolName: null });
    // The member's host is recorded as Kafka prints it.
    expect(clientHostOf('10.0.0.5:53122')).toBe('/10.0.0.5');
    expect(clientHostOf('[::1]:9092')).toBe('/::1');
  });

  it('JoinGroup v0 joins without a member id round trip and rebalances within the session timeout (it has no rebalance timeout)', async () => {
    const h = await harness();
    // v0 carries no RebalanceTimeoutMs: the codec leaves the default, the handler uses the session timeout.
    const joined = joinGroup.handle(joinRequest('g', { sessionTimeoutMs: 7000, rebalanceTimeoutMs: -1 }), context(h.coordinator, 0));
    await h.advance(3000);
    const r = (await joined) as { errorCode: number; memberId: string; generationId: number };
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, generationId: 1 });
    const g = h.coordinator.shard(h.coordinator.partitionFor('g')).groups.get('g') as ClassicGroup;
    expect(g.member(r.memberId).rebalanceTimeoutMs).toBe(7000);
  });

  it('JoinGroup stops waiting when the connection closes', async () => {
    const h = await harness();
    const first = await joinGroup.handle(joinRequest('g'), context(h.coordinator, 9));
    const abort = new AbortController();
    const parked = joinGroup.handle(joinRequest('g', { memberId: (first as { memberId: string }).memberId }), context(h.coordinator, 9, abort.signal));
    abort.abort();
    expect(await parked).toMatchObject({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
  });

  it('SyncGroup v5 requires the protocol type and name', async () => {
    const h = await harness();
    const r = await syncGroup.handle(createSyncGroupRequest({ groupId: 'g', memberId: 'm', protocolType: null, protocolName: 'range' }), context(h.coordinator, 5));
    expect(r).toMatchObject({ errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });
    const v4 = await syncGroup.handle(createSyncGroupRequest({ groupId: 'g', memberId: 'm' }), context(h.coordinator, 4));
    expect(v4).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
  });

  it('LeaveGroup before v3 answers the single member\'s error at the top level', async () => {
    const h = await harness();
    const v2 = await leaveGroup.handle(createLeaveGroupRequest({ groupId: 'g', memberId: 'ghost' }), context(h.coordinator, 2));
    expect(v2).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, members: [] });
  });

  it('OffsetFetch puts a group error on every partition before v2, at the top level from v2, per group from v8', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    // A stopped coordinator answers COORDINATOR_NOT_AVAILABLE for every group.
    await h.coordinator.stop();
    const topics = [createOffsetFetchRequestTopic({ name: 't', partitionIndexes: [0] })];
    const stopped = context(h.coordinator, 1);
    const v1 = await offsetFetch.handle(createOffsetFetchRequest({ groupId: 'g', topics }), stopped);
    expect(v1).toMatchObject({ errorCode: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: -1n, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }] }] });
    const v2 = await offsetFetch.handle(createOffsetFetchRequest({ groupId: 'g', topics }), context(h.coordinator, 2));
    expect(v2).toMatchObject({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, topics: [] });
    const v8 = await offsetFetch.handle(
      createOffsetFetchRequest({ groups: [createOffsetFetchRequestGroup({ groupId: 'a', topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] })] }),
      context(h.coordinator, 8),
    );
    expect(v8).toMatchObject({ groups: [{ groupId: 'a', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }] });
  });

  it('OffsetCommit ignores the retention time from v5 and honours it before', async () => {
    const h = await harness({ offsetsRetentionCheckIntervalMs: 1000 });
    h.topics.add('t', 1);
    const req = (retentionTimeMs: bigint, groupId: string) =>
      createOffsetCommitRequest({
        groupId,
        retentionTimeMs,
        topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 1n })] })],
      });
    await offsetCommit.handle(req(1000n, 'v4'), context(h.coordinator, 4));
    await offsetCommit.handle(req(1000n, 'v5'), context(h.coordinator, 5));
    await h.advance(2000);
    const fetched = await offsetFetch.handle(
      createOffsetFetchRequest({
        groups: ['v4', 'v5'].map((groupId) => createOffsetFetchRequestGroup({ groupId, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] })),
      }),
      context(h.coordinator, 8),
    );
    expect((fetched as { groups: Array<{ topics: Array<{ partitions: Array<{ committedOffset: bigint }> }> }> }).groups.map((g) => g.topics[0]!.partitions[0]!.committedOffset)).toEqual([-1n, 1n]);
  });

  it('DescribeGroups adds authorized operations from v3 when asked; ListGroups filters from v4/v5 only', async () => {
    const h = await harness();
    const d = await describeGroups.handle(createDescribeGroupsRequest({ groups: ['x'], includeAuthorizedOperations: true }), context(h.coordinator, 3));
    expect(d).toMatchObject({ groups: [{ groupId: 'x', groupState: 'Dead', authorizedOperations: (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11) }] });
    const v2 = await describeGroups.handle(createDescribeGroupsRequest({ groups: ['x'], includeAuthorizedOperations: true }), context(h.coordinator, 2));
    expect(v2).toMatchObject({ groups: [{ authorizedOperations: -2147483648 }] });
    const l = await listGroups.handle(createListGroupsRequest({ statesFilter: ['stable'] }), context(h.coordinator, 3));
    expect(l).toMatchObject({ errorCode: 0, groups: [] });
  });

  it('ListGroups v0-2 leave out a group whose id their int16 strings cannot carry, so the response still encodes', async () => {
    const huge = 'g'.repeat(40_000);
    const fake = {
      isActive: true,
      listGroups: async () => ({
        errorCode: ErrorCode.NONE,
        groups: [createListGroupsResponseListedGroup({ groupId: huge, protocolType: 'consumer' }), createListGroupsResponseListedGroup({ groupId: 'ok', protocolType: 'consumer' })],
      }),
    } as unknown as GroupCoordinator;
    for (const v of [0, 1, 2]) {
      const r = (await listGroups.handle(createListGroupsRequest({}), context(fake, v))) as ListGroupsResponse;
      expect(r.groups.map((g) => g.groupId)).toEqual(['ok']);
      expect(() => ListGroupsApi.response.encode(new Writer(), r, v)).not.toThrow();
    }
    const flexible = (await listGroups.handle(createListGroupsRequest({}), context(fake, 3))) as ListGroupsResponse;
    expect(flexible.groups.map((g) => g.groupId.length)).toEqual([40_000, 2]);
  });

  it('ConsumerGroupHeartbeat v0 joins a group', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const r = await consumerGroupHeartbeat.handle(
      createConsumerGroupHeartbeatRequest({ groupId: 'g', memberEpoch: 0, rebalanceTimeoutMs: 5000, subscribedTopicNames: ['t'], topicPartitions: [] }),
      context(h.coordinator, 0),
    );
    expect(r).toMatchObject({ errorCode: 0, memberEpoch: 1 });
    const [d] = await h.coordinator.consumerGroupDescribe(['g']);
    expect(d!.members[0]).toMatchObject({ clientId: 'cli', clientHost: '/10.0.0.5' });
  });

  it('ConsumerGroupHeartbeat v1 joins as librdkafka does: its own member id, topic names and an empty regex', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    // librdkafka 2.10+ sends v1 only; it generates the member id (KIP-1082) and, subscribed by names alone,
    // sends an empty SubscribedTopicRegex, which Kafka accepts as "no regex".
    const first = createConsumerGroupHeartbeatRequest({
      groupId: 'g',
      memberId: 'consumer-made-id',
      memberEpoch: 0,
      rebalanceTimeoutMs: 300000,
      subscribedTopicNames: ['t'],
      subscribedTopicRegex: '',
      topicPartitions: [],
    });
    const r = await consumerGroupHeartbeat.handle(first, context(h.coordinator, 1));
    expect(r).toMatchObject({ errorCode: 0, memberId: 'consumer-made-id', memberEpoch: 1, assignment: { topicPartitions: [{ topicId: t.topicId, partitions: [0, 1] }] } });
    const noId = await consumerGroupHeartbeat.handle({ ...first, memberId: '' }, context(h.coordinator, 1));
    expect(noId).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "MemberId can't be empty." });
  });
});
