/**
 * Authorization of the group and transaction handlers, as Kafka's KafkaApis checks each API: the operation and
 * resource of every check, their order, the error code and where it is answered (top level, group, topic,
 * partition), what is left out silently, and that a refused resource is never asked of the coordinator. Checks
 * are recorded as `OPERATION TYPE name` (fakes.ts); `deny(...)` allows everything but the checks it names.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic, type OffsetCommitRequest } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequest, createOffsetFetchRequestGroup, createOffsetFetchRequestTopic, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { createFindCoordinatorRequest } from '../../../protocol/messages/010-find-coordinator.gen.js';
import { createHeartbeatRequest } from '../../../protocol/messages/012-heartbeat.gen.js';
import { createLeaveGroupRequest } from '../../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupRequest } from '../../../protocol/messages/014-sync-group.gen.js';
import { createDescribeGroupsRequest } from '../../../protocol/messages/015-describe-groups.gen.js';
import { createListGroupsRequest } from '../../../protocol/messages/016-list-groups.gen.js';
import { createInitProducerIdRequest } from '../../../protocol/messages/022-init-producer-id.gen.js';
import { createAddPartitionsToTxnRequest } from '../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { createAddOffsetsToTxnRequest } from '../../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { createEndTxnRequest } from '../../../protocol/messages/026-end-txn.gen.js';
import { createWriteTxnMarkersRequest } from '../../../protocol/messages/027-write-txn-markers.gen.js';
import { createTxnOffsetCommitRequest, createTxnOffsetCommitRequestPartition, createTxnOffsetCommitRequestTopic } from '../../../protocol/messages/028-txn-offset-commit.gen.js';
import { createDeleteGroupsRequest } from '../../../protocol/messages/042-delete-groups.gen.js';
import { createOffsetDeleteRequest } from '../../../protocol/messages/047-offset-delete.gen.js';
import { createDescribeProducersRequest } from '../../../protocol/messages/061-describe-producers.gen.js';
import { createDescribeTransactionsRequest } from '../../../protocol/messages/065-describe-transactions.gen.js';
import { createListTransactionsRequest } from '../../../protocol/messages/066-list-transactions.gen.js';
import { createConsumerGroupHeartbeatRequest } from '../../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { createConsumerGroupDescribeRequest } from '../../../protocol/messages/069-consumer-group-describe.gen.js';
import { randomUuid } from '../../../protocol/wire/uuid.js';
import { offsetCommit } from '../../../src/api/008-offset-commit.js';
import { offsetFetch } from '../../../src/api/009-offset-fetch.js';
import { findCoordinator } from '../../../src/api/010-find-coordinator.js';
import { joinGroup } from '../../../src/api/011-join-group.js';
import { heartbeat } from '../../../src/api/012-heartbeat.js';
import { leaveGroup } from '../../../src/api/013-leave-group.js';
import { syncGroup } from '../../../src/api/014-sync-group.js';
import { describeGroups } from '../../../src/api/015-describe-groups.js';
import { listGroups } from '../../../src/api/016-list-groups.js';
import { initProducerId } from '../../../src/api/022-init-producer-id.js';
import { addPartitionsToTxn } from '../../../src/api/024-add-partitions-to-txn.js';
import { addOffsetsToTxn } from '../../../src/api/025-add-offsets-to-txn.js';
import { endTxn } from '../../../src/api/026-end-txn.js';
import { writeTxnMarkers } from '../../../src/api/027-write-txn-markers.js';
import { txnOffsetCommit } from '../../../src/api/028-txn-offset-commit.js';
import { deleteGroups } from '../../../src/api/042-delete-groups.js';
import { offsetDelete } from '../../../src/api/047-offset-delete.js';
import { describeProducers } from '../../../src/api/061-describe-producers.js';
import { describeTransactions } from '../../../src/api/065-describe-transactions.js';
import { listTransactions } from '../../../src/api/066-list-transactions.js';
import { consumerGroupHeartbeat } from '../../../src/api/068-consumer-group-heartbeat.js';
import { consumerGroupDescribe } from '../../../src/api/069-consumer-group-describe.js';
import { ALLOW_ALL, AclOperation, type Access, type AuthorizeOptions } from '../../../src/api/access.js';
import type { TopicService, TransactionService } from '../../../src/api/services.js';
import { NO_REPLICA_READS } from '../../../src/cluster/replica-reads.js';
import type { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import { operationName, resourceTypeName } from '../../../src/security/acl/model.js';
import { consumerGroupHeartbeat as heartbeatAs, harness, joinRequest, type Harness } from '../coordinator/harness.js';
import { TxnHarness } from '../coordinator/txn/harness.js';
import { answer, FakeTopicsAndPartitions, FakeTransactions, RecordingTxnMarkers, fakeAccess, fakeCluster, requestContext, topicRecord } from './fakes.js';

const G = 'orders-app';

/** Allows every check but those named (`READ TOPIC secret`); records each check in `checks`. */
function deny(...refused: string[]): { access: Access; checks: string[] } {
  const checks: string[] = [];
  const no = new Set(refused);
  return { checks, access: fakeAccess((op, type, name) => !no.has(`${operationName(op)} ${resourceTypeName(type)} ${name}`), checks) };
}

/** `access` that also records the checks made with logIfDenied=false (Kafka's quiet checks). */
function quietChecks(access: Access): { access: Access; quiet: string[] } {
  const quiet: string[] = [];
  const note = (op: number, type: number, name: string, opts?: AuthorizeOptions): void => {
    if (opts?.logIfDenied === false) quiet.push(`${operationName(op)} ${resourceTypeName(type)} ${name}`);
  };
  return {
    quiet,
    access: {
      ...access,
      authorize: (op, type, name, opts) => (note(op, type, name, opts), access.authorize(op, type, name, opts)),
      authorizeCluster: (op, opts) => (note(op, 4, 'kafka-cluster', opts), access.authorizeCluster(op, opts)),
    },
  };
}

/** Group handlers' services over a coordinator harness (topics looked up in its registry). */
function groupServices(h: Harness | null) {
  return {
    groups: (h?.coordinator ?? undefined) as GroupCoordinator,
    topics: { get: (n: string) => h?.topics.get(n), getById: (id: string) => h?.topics.getById(id) } as unknown as TopicService,
  };
}

function commitRequest(topics: Array<{ name?: string; topicId?: string; partitions: number[] }>, groupId = G): OffsetCommitRequest {
  return createOffsetCommitRequest({
    groupId,
    generationIdOrMemberEpoch: -1,
    topics: topics.map((t) =>
      createOffsetCommitRequestTopic({
        ...(t.name !== undefined ? { name: t.name } : {}),
        ...(t.topicId !== undefined ? { topicId: t.topicId } : {}),
        partitions: t.partitions.map((p) => createOffsetCommitRequestPartition({ partitionIndex: p, committedOffset: 10n + BigInt(p) })),
      }),
    ),
  });
}

/** The committed offset of each partition, straight from the coordinator (-1: none). */
async function committed(h: Harness, groupId: string, topic: string, partitions: number[]): Promise<bigint[]> {
  const r = await h.coordinator.fetchOffsets(createOffsetFetchRequestGroup({ groupId, topics: [createOffsetFetchRequestTopics({ name: topic, partitionIndexes: partitions })] }));
  return r.topics[0]?.partitions.map((p) => p.committedOffset) ?? [];
}

const codes = (topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; errorCode: number }> }>) => topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)]);

describe('OffsetCommit', () => {
  it('answers GROUP_AUTHORIZATION_FAILED for every partition without READ on the group, and commits nothing', async () => {
    const h = await harness();
    h.topics.add('pub', 2);
    const { access, checks } = deny(`READ GROUP ${G}`);
    const res = await answer(offsetCommit.handle(commitRequest([{ name: 'pub', partitions: [0, 1] }]), requestContext(groupServices(h), { apiVersion: 8, access })));
    expect(codes(res.topics)).toEqual([['pub', [ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED]]]);
    expect(checks).toEqual([`READ GROUP ${G}`]);
    expect(await committed(h, G, 'pub', [0])).toEqual([-1n]);
  });

  it('checks READ on each topic before it is looked for: refused topics TOPIC_AUTHORIZATION_FAILED per partition, the others committed', async () => {
    const h = await harness();
    h.topics.add('pub', 2);
    h.topics.add('secret', 1);
    const { access, checks } = deny('READ TOPIC secret', 'READ TOPIC hidden-ghost');
    const res = await answer(
      offsetCommit.handle(
        commitRequest([{ name: 'pub', partitions: [0, 1] }, { name: 'secret', partitions: [0] }, { name: 'ghost', partitions: [0] }, { name: 'hidden-ghost', partitions: [3] }]),
        requestContext(groupServices(h), { apiVersion: 8, access }),
      ),
    );
    expect(codes(res.topics).sort()).toEqual([
      ['ghost', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
      ['hidden-ghost', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['pub', [ErrorCode.NONE, ErrorCode.NONE]],
      ['secret', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
    expect(checks).toEqual([`READ GROUP ${G}`, 'READ TOPIC pub', 'READ TOPIC secret', 'READ TOPIC ghost', 'READ TOPIC hidden-ghost']);
    expect(await committed(h, G, 'pub', [0, 1])).toEqual([10n, 11n]);
    expect(await committed(h, G, 'secret', [0])).toEqual([-1n]);
  });

  it('v10: an unknown id is UNKNOWN_TOPIC_ID before topics are authorized; a refused topic is answered by id', async () => {
    const h = await harness();
    const pub = h.topics.add('pub', 1);
    const secret = h.topics.add('secret', 1);
    const unknown = randomUuid();
    const { access } = deny('READ TOPIC secret', 'READ TOPIC ');
    const res = await answer(
      offsetCommit.handle(
        commitRequest([{ topicId: pub.topicId, partitions: [0] }, { topicId: secret.topicId, partitions: [0] }, { topicId: unknown, partitions: [0] }]),
        requestContext(groupServices(h), { apiVersion: 10, access }),
      ),
    );
    expect(res.topics.map((t) => [t.name, t.topicId, t.partitions.map((p) => p.errorCode)])).toEqual([
      ['', pub.topicId, [ErrorCode.NONE]],
      ['', secret.topicId, [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['', unknown, [ErrorCode.UNKNOWN_TOPIC_ID]],
    ]);
  });

  it('keeps refused topics refused while the coordinator is not active', async () => {
    const { access } = deny('READ TOPIC secret');
    const res = await answer(offsetCommit.handle(commitRequest([{ name: 'pub', partitions: [0] }, { name: 'secret', partitions: [0] }]), requestContext(groupServices(null), { apiVersion: 8, access })));
    expect(codes(res.topics)).toEqual([
      ['pub', [ErrorCode.COORDINATOR_NOT_AVAILABLE]],
      ['secret', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
  });
});

describe('OffsetFetch', () => {
  async function withOffsets(): Promise<Harness> {
    const h = await harness();
    h.topics.add('pub', 2);
    h.topics.add('secret', 1);
    for (const groupId of ['g1', 'g2', G]) await h.coordinator.commitOffsets(commitRequest([{ name: 'pub', partitions: [0, 1] }, { name: 'secret', partitions: [0] }], groupId), 8);
    return h;
  }

  it('v8: DESCRIBE per group (GROUP_AUTHORIZATION_FAILED for that group only); named topics refused TOPIC_AUTHORIZATION_FAILED, "all topics" filtered silently', async () => {
    const h = await withOffsets();
    const { access, checks } = deny('DESCRIBE GROUP g1', 'DESCRIBE TOPIC secret');
    const res = await answer(
      offsetFetch.handle(
        createOffsetFetchRequest({
          groups: [
            createOffsetFetchRequestGroup({ groupId: 'g1', topics: [createOffsetFetchRequestTopics({ name: 'pub', partitionIndexes: [0] })] }),
            createOffsetFetchRequestGroup({ groupId: 'g2', topics: [createOffsetFetchRequestTopics({ name: 'pub', partitionIndexes: [0, 1] }), createOffsetFetchRequestTopics({ name: 'secret', partitionIndexes: [0] })] }),
            createOffsetFetchRequestGroup({ groupId: G, topics: null }),
          ],
        }),
        requestContext(groupServices(h), { apiVersion: 8, access }),
      ),
    );
    expect(res.groups.map((g) => [g.groupId, g.errorCode])).toEqual([
      ['g1', ErrorCode.GROUP_AUTHORIZATION_FAILED],
      ['g2', ErrorCode.NONE],
      [G, ErrorCode.NONE],
    ]);
    expect(res.groups[0]!.topics).toEqual([]);
    expect(res.groups[1]!.topics.map((t) => [t.name, t.partitions.map((p) => [p.committedOffset, p.errorCode])])).toEqual([
      ['pub', [[10n, 0], [11n, 0]]],
      ['secret', [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
    ]);
    expect(res.groups[2]!.topics.map((t) => t.name)).toEqual(['pub']);
    expect(checks).toEqual(['DESCRIBE GROUP g1', 'DESCRIBE GROUP g2', 'DESCRIBE TOPIC pub', 'DESCRIBE TOPIC secret', `DESCRIBE GROUP ${G}`, 'DESCRIBE TOPIC pub', 'DESCRIBE TOPIC secret']);
  });

  it('one group (v1-7): the group refusal at the top level from v2, on each partition asked before; refused topics per partition', async () => {
    const h = await withOffsets();
    const named = [createOffsetFetchRequestTopic({ name: 'pub', partitionIndexes: [0] }), createOffsetFetchRequestTopic({ name: 'secret', partitionIndexes: [0] })];
    const group = deny(`DESCRIBE GROUP ${G}`).access;
    const v1 = await answer(offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: named }), requestContext(groupServices(h), { apiVersion: 1, access: group })));
    expect(v1.topics.map((t) => [t.name, t.partitions.map((p) => [p.committedOffset, p.errorCode])])).toEqual([
      ['pub', [[-1n, ErrorCode.GROUP_AUTHORIZATION_FAILED]]],
      ['secret', [[-1n, ErrorCode.GROUP_AUTHORIZATION_FAILED]]],
    ]);
    const v7 = await answer(offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: named }), requestContext(groupServices(h), { apiVersion: 7, access: group })));
    expect([v7.errorCode, v7.topics]).toEqual([ErrorCode.GROUP_AUTHORIZATION_FAILED, []]);

    const topic = deny('DESCRIBE TOPIC secret').access;
    const mixed = await answer(offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: named }), requestContext(groupServices(h), { apiVersion: 7, access: topic })));
    expect(mixed.errorCode).toBe(ErrorCode.NONE);
    expect(mixed.topics.map((t) => [t.name, t.partitions.map((p) => [p.committedOffset, p.errorCode])])).toEqual([
      ['pub', [[10n, 0]]],
      ['secret', [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
    ]);
    const all = await answer(offsetFetch.handle(createOffsetFetchRequest({ groupId: G, topics: null }), requestContext(groupServices(h), { apiVersion: 7, access: topic })));
    expect(all.topics.map((t) => t.name)).toEqual(['pub']);
  });

  it('v10: unknown ids UNKNOWN_TOPIC_ID, refused ids TOPIC_AUTHORIZATION_FAILED, after the offsets found', async () => {
    const h = await withOffsets();
    const pub = h.topics.get('pub')!;
    const secret = h.topics.get('secret')!;
    const unknown = randomUuid();
    const { access } = deny('DESCRIBE TOPIC secret');
    const res = await answer(
      offsetFetch.handle(
        createOffsetFetchRequest({
          groups: [
            createOffsetFetchRequestGroup({
              groupId: G,
              topics: [
                createOffsetFetchRequestTopics({ topicId: secret.topicId, partitionIndexes: [0] }),
                createOffsetFetchRequestTopics({ topicId: unknown, partitionIndexes: [0] }),
                createOffsetFetchRequestTopics({ topicId: pub.topicId, partitionIndexes: [1] }),
              ],
            }),
          ],
        }),
        requestContext(groupServices(h), { apiVersion: 10, access }),
      ),
    );
    expect(res.groups[0]!.topics.map((t) => [t.topicId, t.partitions.map((p) => [p.committedOffset, p.errorCode])])).toEqual([
      [pub.topicId, [[11n, 0]]],
      [secret.topicId, [[-1n, ErrorCode.TOPIC_AUTHORIZATION_FAILED]]],
      [unknown, [[-1n, ErrorCode.UNKNOWN_TOPIC_ID]]],
    ]);
  });
});

describe('FindCoordinator', () => {
  const services = (h: Harness) => ({ cluster: fakeCluster(), groups: h.coordinator, transactions: { isActive: true } as TransactionService });

  it('checks DESCRIBE on the group or transactional id before telling the coordinator: top level before v4, per key from v4', async () => {
    const h = await harness();
    const { access, checks } = deny('DESCRIBE GROUP no', 'DESCRIBE TRANSACTIONAL_ID tx-no');
    const v0 = await answer(findCoordinator.handle(createFindCoordinatorRequest({ key: 'no' }), requestContext(services(h), { apiVersion: 0, access })));
    expect(v0).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, nodeId: -1, host: '', port: -1 });
    const v1 = await answer(findCoordinator.handle(createFindCoordinatorRequest({ key: 'tx-no', keyType: 1 }), requestContext(services(h), { apiVersion: 1, access })));
    expect(v1).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, nodeId: -1 });
    const v4 = await answer(findCoordinator.handle(createFindCoordinatorRequest({ keyType: 0, coordinatorKeys: ['ok', 'no'] }), requestContext(services(h), { apiVersion: 4, access })));
    expect(v4.coordinators.map((c) => [c.key, c.errorCode, c.nodeId])).toEqual([
      ['ok', ErrorCode.NONE, 7],
      ['no', ErrorCode.GROUP_AUTHORIZATION_FAILED, -1],
    ]);
    expect(checks).toEqual(['DESCRIBE GROUP no', 'DESCRIBE TRANSACTIONAL_ID tx-no', 'DESCRIBE GROUP ok', 'DESCRIBE GROUP no']);
  });

  it('v6 share keys need CLUSTER_ACTION: the whole request CLUSTER_AUTHORIZATION_FAILED without it', async () => {
    const h = await harness();
    const req = createFindCoordinatorRequest({ keyType: 2, coordinatorKeys: ['s1', 's2'] });
    const refused = await answer(findCoordinator.handle(req, requestContext(services(h), { apiVersion: 6, access: deny('CLUSTER_ACTION CLUSTER kafka-cluster').access })));
    expect(refused.coordinators.map((c) => [c.key, c.errorCode, c.nodeId])).toEqual([
      ['s1', ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1],
      ['s2', ErrorCode.CLUSTER_AUTHORIZATION_FAILED, -1],
    ]);
    const allowed = deny();
    const res = await answer(findCoordinator.handle(req, requestContext(services(h), { apiVersion: 6, access: allowed.access })));
    expect(res.coordinators.map((c) => c.errorCode)).toEqual([ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    expect(allowed.checks).toEqual(['CLUSTER_ACTION CLUSTER kafka-cluster', 'CLUSTER_ACTION CLUSTER kafka-cluster']);
  });
});

describe('JoinGroup, SyncGroup, Heartbeat, LeaveGroup', () => {
  const denied = () => deny(`READ GROUP ${G}`);

  it('JoinGroup without READ on the group: Kafka\'s error response, and the coordinator never sees the member', async () => {
    const h = await harness();
    const { access, checks } = denied();
    const v7 = await answer(joinGroup.handle(joinRequest(G, { memberId: 'm-1' }), requestContext(groupServices(h), { apiVersion: 7, access })));
    expect(v7).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, generationId: -1, memberId: '', leader: '', protocolName: null, members: [] });
    const v6 = await answer(joinGroup.handle(joinRequest(G), requestContext(groupServices(h), { apiVersion: 6, access })));
    expect(v6).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, protocolName: '' });
    expect(checks).toEqual([`READ GROUP ${G}`, `READ GROUP ${G}`]);
    const [d] = await h.coordinator.describeGroups([G], 5);
    expect(d!.groupState).toBe('Dead');
    const allowed = await answer(joinGroup.handle(joinRequest(G), requestContext(groupServices(h), { apiVersion: 7, access: deny().access })));
    expect(allowed.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
  });

  it('SyncGroup checks the v5 protocol fields first, then READ on the group', async () => {
    const h = await harness();
    const { access, checks } = denied();
    const missing = await answer(syncGroup.handle(createSyncGroupRequest({ groupId: G, memberId: 'm', generationId: 1, protocolType: null, protocolName: null }), requestContext(groupServices(h), { apiVersion: 5, access })));
    expect(missing.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect(checks).toEqual([]);
    const res = await answer(syncGroup.handle(createSyncGroupRequest({ groupId: G, memberId: 'm', generationId: 1, protocolType: 'consumer', protocolName: 'range' }), requestContext(groupServices(h), { apiVersion: 5, access })));
    expect(res.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect(checks).toEqual([`READ GROUP ${G}`]);
  });

  it('Heartbeat and LeaveGroup without READ: GROUP_AUTHORIZATION_FAILED at the top level; with it, the coordinator answers', async () => {
    const h = await harness();
    const { access } = denied();
    const hb = createHeartbeatRequest({ groupId: G, generationId: 1, memberId: 'm' });
    expect((await answer(heartbeat.handle(hb, requestContext(groupServices(h), { apiVersion: 4, access })))).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect((await answer(heartbeat.handle(hb, requestContext(groupServices(h), { apiVersion: 4, access: deny().access })))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    const leave = createLeaveGroupRequest({ groupId: G, members: [{ memberId: 'm', groupInstanceId: null, reason: null }] });
    expect(await answer(leaveGroup.handle(leave, requestContext(groupServices(h), { apiVersion: 3, access })))).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] });
    const v0 = await answer(leaveGroup.handle(createLeaveGroupRequest({ groupId: G, memberId: 'm' }), requestContext(groupServices(h), { apiVersion: 0, access })));
    expect(v0.errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
  });
});

describe('DescribeGroups, ListGroups, DeleteGroups, OffsetDelete', () => {
  it('DescribeGroups: refused groups GROUP_AUTHORIZATION_FAILED ahead of the others; authorized operations are the requester\'s', async () => {
    const h = await harness();
    // The requester may READ and DESCRIBE group "open", and nothing on "closed".
    const checks: string[] = [];
    const access = fakeAccess((op, type, name) => type !== 3 || (name === 'open' && (op === AclOperation.READ || op === AclOperation.DESCRIBE)), checks);
    const res = await answer(describeGroups.handle(createDescribeGroupsRequest({ groups: ['open', 'closed', 'open'], includeAuthorizedOperations: true }), requestContext(groupServices(h), { apiVersion: 5, access })));
    expect(res.groups.map((g) => [g.groupId, g.errorCode, g.groupState, g.authorizedOperations])).toEqual([
      ['closed', ErrorCode.GROUP_AUTHORIZATION_FAILED, '', -2147483648],
      ['open', ErrorCode.NONE, 'Dead', (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)],
    ]);
    expect(checks).toEqual(['DESCRIBE GROUP open', 'DESCRIBE GROUP closed']);
    const notAsked = await answer(describeGroups.handle(createDescribeGroupsRequest({ groups: ['open'], includeAuthorizedOperations: false }), requestContext(groupServices(h), { apiVersion: 5, access })));
    expect(notAsked.groups[0]!.authorizedOperations).toBe(-2147483648);
    const v2 = await answer(describeGroups.handle(createDescribeGroupsRequest({ groups: ['open'], includeAuthorizedOperations: true }), requestContext(groupServices(h), { apiVersion: 2, access })));
    expect(v2.groups[0]!.authorizedOperations).toBe(-2147483648);
  });

  it('ListGroups: DESCRIBE on the cluster lists all; otherwise the groups the requester may DESCRIBE; neither check logs a denial', async () => {
    const h = await harness();
    h.topics.add('pub', 1);
    for (const groupId of ['ga', 'gb']) await h.coordinator.commitOffsets(commitRequest([{ name: 'pub', partitions: [0] }], groupId), 8);
    const cluster = quietChecks(deny('DESCRIBE GROUP gb').access);
    const all = await answer(listGroups.handle(createListGroupsRequest(), requestContext(groupServices(h), { apiVersion: 4, access: cluster.access })));
    expect(all.groups.map((g) => g.groupId).sort()).toEqual(['ga', 'gb']);
    expect(cluster.quiet).toEqual(['DESCRIBE CLUSTER kafka-cluster']);

    const { access, checks } = deny('DESCRIBE CLUSTER kafka-cluster', 'DESCRIBE GROUP gb');
    const groupsOnly = quietChecks(access);
    const some = await answer(listGroups.handle(createListGroupsRequest(), requestContext(groupServices(h), { apiVersion: 4, access: groupsOnly.access })));
    expect([some.errorCode, some.groups.map((g) => g.groupId)]).toEqual([ErrorCode.NONE, ['ga']]);
    expect(checks.slice().sort()).toEqual(['DESCRIBE CLUSTER kafka-cluster', 'DESCRIBE GROUP ga', 'DESCRIBE GROUP gb']);
    expect(groupsOnly.quiet.slice().sort()).toEqual(checks.slice().sort());
  });

  it('DeleteGroups: DELETE per group; refused groups GROUP_AUTHORIZATION_FAILED after the others and left as they are', async () => {
    const h = await harness();
    h.topics.add('pub', 1);
    for (const groupId of ['ga', 'gb']) await h.coordinator.commitOffsets(commitRequest([{ name: 'pub', partitions: [0] }], groupId), 8);
    const { access, checks } = deny('DELETE GROUP gb');
    const res = await answer(deleteGroups.handle(createDeleteGroupsRequest({ groupsNames: ['gb', 'ga', 'gb'] }), requestContext(groupServices(h), { apiVersion: 3, access })));
    expect(res.results.map((r) => [r.groupId, r.errorCode, r.errorMessage])).toEqual([
      ['ga', ErrorCode.NONE, null],
      ['gb', ErrorCode.GROUP_AUTHORIZATION_FAILED, 'Group authorization failed.'],
    ]);
    expect(checks).toEqual(['DELETE GROUP gb', 'DELETE GROUP ga']);
    expect(await committed(h, 'gb', 'pub', [0])).toEqual([10n]);
    expect(await committed(h, 'ga', 'pub', [0])).toEqual([-1n]);
  });

  it('OffsetDelete: DELETE on the group (top level), then READ per topic (TOPIC_AUTHORIZATION_FAILED per partition, kept)', async () => {
    const h = await harness();
    h.topics.add('pub', 1);
    h.topics.add('secret', 1);
    await h.coordinator.commitOffsets(commitRequest([{ name: 'pub', partitions: [0] }, { name: 'secret', partitions: [0] }]), 8);
    const req = createOffsetDeleteRequest({ groupId: G, topics: [{ name: 'pub', partitions: [{ partitionIndex: 0 }] }, { name: 'secret', partitions: [{ partitionIndex: 0 }] }] });
    const group = deny(`DELETE GROUP ${G}`);
    expect(await answer(offsetDelete.handle(req, requestContext(groupServices(h), { apiVersion: 0, access: group.access })))).toMatchObject({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] });
    expect(group.checks).toEqual([`DELETE GROUP ${G}`]);
    const { access, checks } = deny('READ TOPIC secret');
    const res = await answer(offsetDelete.handle(req, requestContext(groupServices(h), { apiVersion: 0, access })));
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(codes(res.topics)).toEqual([
      ['pub', [ErrorCode.NONE]],
      ['secret', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
    expect(checks).toEqual([`DELETE GROUP ${G}`, 'READ TOPIC pub', 'READ TOPIC secret']);
    expect(await committed(h, G, 'pub', [0])).toEqual([-1n]);
    expect(await committed(h, G, 'secret', [0])).toEqual([10n]);
  });
});

describe('ConsumerGroupHeartbeat and ConsumerGroupDescribe', () => {
  const join = (groupId: string, topics: string[]) =>
    createConsumerGroupHeartbeatRequest({ groupId, memberId: randomUuid(), memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: topics, topicPartitions: [] });

  it('READ on the group, then DESCRIBE on every subscribed topic: TOPIC_AUTHORIZATION_FAILED for the whole heartbeat if one is refused', async () => {
    const h = await harness();
    h.topics.add('pub', 2);
    h.topics.add('secret', 1);
    const group = deny(`READ GROUP ${G}`);
    expect((await answer(consumerGroupHeartbeat.handle(join(G, ['pub']), requestContext(groupServices(h), { apiVersion: 1, access: group.access })))).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect(group.checks).toEqual([`READ GROUP ${G}`]);
    const { access, checks } = deny('DESCRIBE TOPIC secret');
    const refused = await answer(consumerGroupHeartbeat.handle(join(G, ['pub', 'secret', 'pub']), requestContext(groupServices(h), { apiVersion: 1, access })));
    expect([refused.errorCode, refused.memberEpoch, refused.assignment]).toEqual([ErrorCode.TOPIC_AUTHORIZATION_FAILED, 0, null]);
    expect(checks).toEqual([`READ GROUP ${G}`, 'DESCRIBE TOPIC pub', 'DESCRIBE TOPIC secret']);
    const [none] = await h.coordinator.consumerGroupDescribe([G]);
    expect(none!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const joined = await answer(consumerGroupHeartbeat.handle(join(G, ['pub']), requestContext(groupServices(h), { apiVersion: 1, access })));
    expect([joined.errorCode, joined.memberEpoch]).toEqual([ErrorCode.NONE, 1]);
  });

  it('ConsumerGroupDescribe: refused groups GROUP_AUTHORIZATION_FAILED first; a group assigned a topic the requester may not DESCRIBE is TOPIC_AUTHORIZATION_FAILED', async () => {
    const h = await harness();
    h.topics.add('pub', 2);
    h.topics.add('secret', 2);
    await heartbeatAs(h, 'ga', { memberId: randomUuid(), memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['pub'], topicPartitions: [] });
    await heartbeatAs(h, 'gb', { memberId: randomUuid(), memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['pub', 'secret'], topicPartitions: [] });
    const checks: string[] = [];
    // Everything but the group "gc" and the topic "secret"; on group "ga" only READ and DESCRIBE.
    const access = fakeAccess((op, type, name) => {
      if (type === 3) return name === 'ga' ? op === AclOperation.READ || op === AclOperation.DESCRIBE : name !== 'gc';
      return !(type === 2 && name === 'secret');
    }, checks);
    const res = await answer(consumerGroupDescribe.handle(createConsumerGroupDescribeRequest({ groupIds: ['ga', 'gb', 'gc'], includeAuthorizedOperations: true }), requestContext(groupServices(h), { apiVersion: 1, access })));
    expect(res.groups.map((g) => [g.groupId, g.errorCode, g.errorMessage, g.members.length, g.authorizedOperations])).toEqual([
      ['gc', ErrorCode.GROUP_AUTHORIZATION_FAILED, null, 0, -2147483648],
      ['ga', ErrorCode.NONE, null, 1, (1 << AclOperation.READ) | (1 << AclOperation.DESCRIBE)],
      ['gb', ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'The group has described topic(s) that the client is not authorized to describe.', 0, -2147483648],
    ]);
    expect(checks).toEqual(['DESCRIBE GROUP ga', 'DESCRIBE GROUP gb', 'DESCRIBE GROUP gc', 'DESCRIBE TOPIC pub', 'DESCRIBE TOPIC secret']);
    // No authorizer: no topic check, every group described.
    const open = await answer(consumerGroupDescribe.handle(createConsumerGroupDescribeRequest({ groupIds: ['gb'] }), requestContext(groupServices(h), { apiVersion: 1, access: ALLOW_ALL })));
    expect([open.groups[0]!.errorCode, open.groups[0]!.members.length]).toEqual([ErrorCode.NONE, 1]);
  });
});

describe('InitProducerId', () => {
  const producerIds = { allocate: async () => 7n };
  const ctx = (t: TransactionService, access: Access, apiVersion = 4) => requestContext({ transactions: t, producerIds }, { apiVersion, access });

  it('needs WRITE on the transactional id (even an empty one), and TWO_PHASE_COMMIT for a v6 two-phase-commit producer', async () => {
    const t = new FakeTransactions();
    const { access, checks } = deny('WRITE TRANSACTIONAL_ID tx', 'WRITE TRANSACTIONAL_ID ', 'TWO_PHASE_COMMIT TRANSACTIONAL_ID tx2');
    expect(await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 1 }), ctx(t, access)))).toMatchObject({
      errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
      producerId: -1n,
      producerEpoch: -1,
    });
    expect((await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: '', transactionTimeoutMs: 1 }), ctx(t, access)))).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect((await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx2', transactionTimeoutMs: 1, enable2Pc: true }), ctx(t, access, 6)))).errorCode).toBe(
      ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    );
    expect(t.calls).toEqual([]);
    expect((await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx2', transactionTimeoutMs: 1 }), ctx(t, access, 6)))).errorCode).toBe(ErrorCode.NONE);
    expect(checks).toEqual(['WRITE TRANSACTIONAL_ID tx', 'WRITE TRANSACTIONAL_ID ', 'WRITE TRANSACTIONAL_ID tx2', 'TWO_PHASE_COMMIT TRANSACTIONAL_ID tx2', 'WRITE TRANSACTIONAL_ID tx2']);
  });

  it('idempotent: IDEMPOTENT_WRITE on the cluster (denial not logged) or WRITE on some topic, else CLUSTER_AUTHORIZATION_FAILED', async () => {
    const t = new FakeTransactions();
    const req = createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: 1 });
    const topicWriter = deny('IDEMPOTENT_WRITE CLUSTER kafka-cluster');
    const quiet = quietChecks(topicWriter.access);
    expect(await answer(initProducerId.handle(req, ctx(t, quiet.access)))).toMatchObject({ errorCode: ErrorCode.NONE, producerId: 7n, producerEpoch: 0 });
    expect(topicWriter.checks).toEqual(['IDEMPOTENT_WRITE CLUSTER kafka-cluster', 'WRITE TOPIC <any>']);
    expect(quiet.quiet).toEqual(['IDEMPOTENT_WRITE CLUSTER kafka-cluster']);
    const nobody = deny('IDEMPOTENT_WRITE CLUSTER kafka-cluster', 'WRITE TOPIC ');
    expect(await answer(initProducerId.handle(req, ctx(t, nobody.access)))).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 });
  });
});

describe('AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, WriteTxnMarkers', () => {
  let h: TxnHarness | null = null;
  afterEach(async () => {
    await h?.coordinator.stop();
    h = null;
  });
  const producerIds = { allocate: async () => 7n };
  const ctx = (t: TransactionService, access: Access, apiVersion: number) => requestContext({ transactions: t, producerIds }, { apiVersion, access });

  it('v0-3 without WRITE on the transactional id: TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition, topics not checked', async () => {
    const t = new FakeTransactions();
    const { access, checks } = deny('WRITE TRANSACTIONAL_ID tx');
    const req = createAddPartitionsToTxnRequest({ v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: 1n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: 'a', partitions: [0, 1] }, { name: 'b', partitions: [0] }] });
    const r = await answer(addPartitionsToTxn.handle(req, ctx(t, access, 3)));
    expect(r.resultsByTopicV3AndBelow.map((x) => [x.name, x.resultsByPartition.map((p) => p.partitionErrorCode)])).toEqual([
      ['a', [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]],
      ['b', [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]],
    ]);
    expect(checks).toEqual(['WRITE TRANSACTIONAL_ID tx']);
    expect(t.calls).toEqual([]);
  });

  it('v0-3 with a refused topic adds nothing: TOPIC_AUTHORIZATION_FAILED (internal topics too), UNKNOWN_TOPIC_OR_PARTITION, OPERATION_NOT_ATTEMPTED', async () => {
    h = new TxnHarness();
    const c = await h.start();
    const init = await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 60_000 }), ctx(c, ALLOW_ALL, 4)));
    const { access, checks } = deny('WRITE TOPIC payments');
    const req = createAddPartitionsToTxnRequest({
      v3AndBelowTransactionalId: 'tx',
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [
        { name: 'orders', partitions: [0, 7] },
        { name: 'payments', partitions: [0] },
        { name: 'ghost', partitions: [0] },
        { name: '__consumer_offsets', partitions: [1] },
      ],
    });
    const r = await answer(addPartitionsToTxn.handle(req, ctx(c, access, 3)));
    expect(r.resultsByTopicV3AndBelow.map((x) => [x.name, x.resultsByPartition.map((p) => p.partitionErrorCode)])).toEqual([
      ['orders', [ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
      ['payments', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['ghost', [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]],
      ['__consumer_offsets', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
    expect(checks).toEqual(['WRITE TRANSACTIONAL_ID tx', 'WRITE TOPIC orders', 'WRITE TOPIC payments', 'WRITE TOPIC ghost']);
    // Every allowed partition exists: still nothing added, OPERATION_NOT_ATTEMPTED.
    const existing = createAddPartitionsToTxnRequest({
      v3AndBelowTransactionalId: 'tx',
      v3AndBelowProducerId: init.producerId,
      v3AndBelowProducerEpoch: init.producerEpoch,
      v3AndBelowTopics: [{ name: 'orders', partitions: [0, 1] }, { name: 'payments', partitions: [0] }],
    });
    const r2 = await answer(addPartitionsToTxn.handle(existing, ctx(c, access, 3)));
    expect(r2.resultsByTopicV3AndBelow.map((x) => [x.name, x.resultsByPartition.map((p) => p.partitionErrorCode)])).toEqual([
      ['orders', [ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.OPERATION_NOT_ATTEMPTED]],
      ['payments', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
    const [d] = await c.describeTransactions(['tx']);
    expect([d!.state, d!.partitions]).toEqual(['Empty', []]);
    // Every topic allowed: the partitions are added.
    const ok = createAddPartitionsToTxnRequest({ v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: init.producerId, v3AndBelowProducerEpoch: init.producerEpoch, v3AndBelowTopics: [{ name: 'orders', partitions: [0] }] });
    const added = await answer(addPartitionsToTxn.handle(ok, ctx(c, access, 3)));
    expect(added.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(ErrorCode.NONE);
    const [after] = await c.describeTransactions(['tx']);
    expect([after!.state, after!.partitions]).toEqual(['Ongoing', [{ topic: 'orders', partitions: [0] }]]);
  });

  it('v4+ (from brokers) needs CLUSTER_ACTION: CLUSTER_AUTHORIZATION_FAILED at the top level, no topic checked', async () => {
    const t = new FakeTransactions();
    const req = createAddPartitionsToTxnRequest({ transactions: [{ transactionalId: 'x', producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: 'a', partitions: [0] }] }] });
    const refused = deny('CLUSTER_ACTION CLUSTER kafka-cluster');
    expect(await answer(addPartitionsToTxn.handle(req, ctx(t, refused.access, 4)))).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, resultsByTransaction: [] });
    expect(t.calls).toEqual([]);
    const allowed = deny();
    const r = await answer(addPartitionsToTxn.handle(req, ctx(t, allowed.access, 5)));
    expect([r.errorCode, r.resultsByTransaction.map((x) => x.transactionalId)]).toEqual([ErrorCode.NONE, ['x']]);
    expect(allowed.checks).toEqual(['CLUSTER_ACTION CLUSTER kafka-cluster']);
  });

  it('AddOffsetsToTxn: WRITE on the transactional id, then READ on the group; EndTxn: WRITE on the transactional id', async () => {
    const t = new FakeTransactions();
    const add = createAddOffsetsToTxnRequest({ transactionalId: 'tx', producerId: 5n, producerEpoch: 1, groupId: 'g' });
    const txn = deny('WRITE TRANSACTIONAL_ID tx');
    expect((await answer(addOffsetsToTxn.handle(add, ctx(t, txn.access, 3)))).errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    expect(txn.checks).toEqual(['WRITE TRANSACTIONAL_ID tx']);
    const group = deny('READ GROUP g');
    expect((await answer(addOffsetsToTxn.handle(add, ctx(t, group.access, 3)))).errorCode).toBe(ErrorCode.GROUP_AUTHORIZATION_FAILED);
    expect(group.checks).toEqual(['WRITE TRANSACTIONAL_ID tx', 'READ GROUP g']);
    const end = createEndTxnRequest({ transactionalId: 'tx', producerId: 5n, producerEpoch: 1, committed: true });
    expect(await answer(endTxn.handle(end, ctx(t, txn.access, 5)))).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 });
    expect(t.calls).toEqual([]);
    expect((await answer(addOffsetsToTxn.handle(add, ctx(t, deny().access, 3)))).errorCode).toBe(ErrorCode.NONE);
    expect(t.calls.map((c) => c.op)).toEqual(['addOffsetsToTxn']);
  });

  it('WriteTxnMarkers: ALTER on the cluster (denial not logged) or CLUSTER_ACTION, else CLUSTER_AUTHORIZATION_FAILED per partition and nothing written', async () => {
    const req = createWriteTxnMarkersRequest({
      markers: [{ producerId: 9n, producerEpoch: 0, transactionResult: true, coordinatorEpoch: 1, transactionVersion: 0, topics: [{ name: 'orders', partitionIndexes: [0, 1] }] }],
    });
    const markers = new RecordingTxnMarkers();
    const nobody = deny('ALTER CLUSTER kafka-cluster', 'CLUSTER_ACTION CLUSTER kafka-cluster');
    const quiet = quietChecks(nobody.access);
    const refused = await answer(writeTxnMarkers.handle(req, requestContext({ txnMarkers: markers }, { apiVersion: 1, access: quiet.access })));
    expect(refused.markers.map((m) => [m.producerId, m.topics.map((t) => [t.name, t.partitions.map((p) => p.errorCode)])])).toEqual([
      [9n, [['orders', [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]]]],
    ]);
    expect(markers.written).toEqual([]);
    expect(nobody.checks).toEqual(['ALTER CLUSTER kafka-cluster', 'CLUSTER_ACTION CLUSTER kafka-cluster']);
    expect(quiet.quiet).toEqual(['ALTER CLUSTER kafka-cluster']);
    const broker = deny('ALTER CLUSTER kafka-cluster');
    const written = await answer(writeTxnMarkers.handle(req, requestContext({ txnMarkers: markers }, { apiVersion: 1, access: broker.access })));
    expect(written.markers[0]!.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(markers.written).toHaveLength(1);
  });
});

describe('TxnOffsetCommit', () => {
  function request(topics: Array<{ name?: string; topicId?: string; partitions: number[] }>) {
    return createTxnOffsetCommitRequest({
      transactionalId: 'tx',
      groupId: G,
      producerId: 11n,
      producerEpoch: 0,
      topics: topics.map((t) =>
        createTxnOffsetCommitRequestTopic({
          ...(t.name !== undefined ? { name: t.name } : {}),
          ...(t.topicId !== undefined ? { topicId: t.topicId } : {}),
          partitions: t.partitions.map((p) => createTxnOffsetCommitRequestPartition({ partitionIndex: p, committedOffset: 40n })),
        }),
      ),
    });
  }

  it('WRITE on the transactional id, then READ on the group: the refusal for every partition', async () => {
    const h = await harness();
    h.topics.add('pub', 2);
    const req = request([{ name: 'pub', partitions: [0, 1] }]);
    const txn = deny('WRITE TRANSACTIONAL_ID tx');
    const r1 = await answer(txnOffsetCommit.handle(req, requestContext(groupServices(h), { apiVersion: 3, access: txn.access })));
    expect(codes(r1.topics)).toEqual([['pub', [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]]]);
    expect(txn.checks).toEqual(['WRITE TRANSACTIONAL_ID tx']);
    const group = deny(`READ GROUP ${G}`);
    const r2 = await answer(txnOffsetCommit.handle(req, requestContext(groupServices(h), { apiVersion: 3, access: group.access })));
    expect(codes(r2.topics)).toEqual([['pub', [ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.GROUP_AUTHORIZATION_FAILED]]]);
    expect(group.checks).toEqual(['WRITE TRANSACTIONAL_ID tx', `READ GROUP ${G}`]);
  });

  it('READ per topic before it is looked for; v6 refuses by id after naming it', async () => {
    const h = await harness();
    const pub = h.topics.add('pub', 1);
    const secret = h.topics.add('secret', 1);
    const { access, checks } = deny('READ TOPIC secret', 'READ TOPIC nowhere');
    const r = await answer(
      txnOffsetCommit.handle(request([{ name: 'secret', partitions: [0] }, { name: 'pub', partitions: [0] }, { name: 'nowhere', partitions: [0] }]), requestContext(groupServices(h), { apiVersion: 3, access })),
    );
    expect(codes(r.topics)).toEqual([
      ['pub', [ErrorCode.NONE]],
      ['secret', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['nowhere', [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
    ]);
    expect(checks).toEqual(['WRITE TRANSACTIONAL_ID tx', `READ GROUP ${G}`, 'READ TOPIC secret', 'READ TOPIC pub', 'READ TOPIC nowhere']);
    const unknown = randomUuid();
    const v6 = await answer(
      txnOffsetCommit.handle(
        request([{ topicId: secret.topicId, partitions: [0] }, { topicId: unknown, partitions: [0] }, { topicId: pub.topicId, partitions: [0] }]),
        requestContext(groupServices(h), { apiVersion: 6, access }),
      ),
    );
    expect(v6.topics.map((t) => [t.name, t.topicId, t.partitions.map((p) => p.errorCode)])).toEqual([
      ['', pub.topicId, [ErrorCode.NONE]],
      ['', secret.topicId, [ErrorCode.TOPIC_AUTHORIZATION_FAILED]],
      ['', unknown, [ErrorCode.UNKNOWN_TOPIC_ID]],
    ]);
  });
});

describe('DescribeProducers', () => {
  it('per topic: an invalid name INVALID_TOPIC_EXCEPTION unchecked, then READ (TOPIC_AUTHORIZATION_FAILED with its message) before existence', async () => {
    const world = new FakeTopicsAndPartitions();
    try {
      await world.addTopic(topicRecord('orders', 1));
      await world.addTopic(topicRecord('payments', 1));
      const { access, checks } = deny('READ TOPIC payments', 'READ TOPIC ghost');
      const res = await answer(
        describeProducers.handle(
          createDescribeProducersRequest({
            topics: [
              { name: 'orders', partitionIndexes: [0] },
              { name: 'payments', partitionIndexes: [0] },
              { name: 'ghost', partitionIndexes: [0, 1] },
              { name: 'phantom', partitionIndexes: [0] },
              { name: 'bad name', partitionIndexes: [0] },
            ],
          }),
          requestContext({ topics: world.topicService, cluster: fakeCluster(), partitions: world.partitionService, replicaReads: NO_REPLICA_READS }, { apiVersion: 0, apiKey: 61, access }),
        ),
      );
      expect(res.topics.map((t) => [t.name, t.partitions.map((p) => [p.errorCode, p.errorMessage])])).toEqual([
        ['orders', [[ErrorCode.NONE, null]]],
        ['payments', [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.']]],
        ['ghost', [[ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.'], [ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Topic authorization failed.']]],
        ['phantom', [[ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.']]],
        ['bad name', [[ErrorCode.INVALID_TOPIC_EXCEPTION, 'Topic name "bad name" is illegal, it contains a character other than ASCII alphanumerics, \'.\', \'_\' and \'-\'']]],
      ]);
      expect(checks).toEqual(['READ TOPIC orders', 'READ TOPIC payments', 'READ TOPIC ghost', 'READ TOPIC phantom']);
    } finally {
      await world.close();
    }
  });
});

describe('DescribeTransactions and ListTransactions', () => {
  let h: TxnHarness;
  afterEach(async () => h.coordinator.stop());
  const producerIds = { allocate: async () => 7n };
  const ctx = (t: TransactionService, access: Access, apiVersion = 0) => requestContext({ transactions: t, producerIds }, { apiVersion, access });

  async function twoTransactions(): Promise<TransactionService> {
    h = new TxnHarness();
    const c = await h.start();
    for (const id of ['tx', 'hidden']) {
      const init = await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: id, transactionTimeoutMs: 60_000 }), ctx(c, ALLOW_ALL, 4)));
      const add = createAddPartitionsToTxnRequest({
        v3AndBelowTransactionalId: id,
        v3AndBelowProducerId: init.producerId,
        v3AndBelowProducerEpoch: init.producerEpoch,
        v3AndBelowTopics: [{ name: 'orders', partitions: [0] }, { name: 'payments', partitions: [0] }],
      });
      await answer(addPartitionsToTxn.handle(add, ctx(c, ALLOW_ALL, 3)));
    }
    return c;
  }

  it('DescribeTransactions: TRANSACTIONAL_ID_AUTHORIZATION_FAILED for a refused id; only the topics the requester may DESCRIBE', async () => {
    const c = await twoTransactions();
    const { access, checks } = deny('DESCRIBE TRANSACTIONAL_ID hidden', 'DESCRIBE TOPIC payments');
    const res = await answer(describeTransactions.handle(createDescribeTransactionsRequest({ transactionalIds: ['tx', 'hidden'] }), ctx(c, access)));
    expect(res.transactionStates.map((s) => [s.transactionalId, s.errorCode, s.transactionState, s.producerId, s.topics.map((t) => t.topic)])).toEqual([
      ['tx', ErrorCode.NONE, 'Ongoing', 1000n, ['orders']],
      ['hidden', ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, '', 0n, []],
    ]);
    expect(checks).toEqual(['DESCRIBE TRANSACTIONAL_ID tx', 'DESCRIBE TOPIC orders', 'DESCRIBE TOPIC payments', 'DESCRIBE TRANSACTIONAL_ID hidden']);
  });

  it('ListTransactions: the ids the requester may not DESCRIBE are left out, without an error', async () => {
    const c = await twoTransactions();
    const { access, checks } = deny('DESCRIBE TRANSACTIONAL_ID hidden');
    const res = await answer(listTransactions.handle(createListTransactionsRequest({ stateFilters: [], producerIdFilters: [] }), ctx(c, access)));
    expect([res.errorCode, res.transactionStates.map((s) => [s.transactionalId, s.transactionState])]).toEqual([ErrorCode.NONE, [['tx', 'Ongoing']]]);
    expect(checks.slice().sort()).toEqual(['DESCRIBE TRANSACTIONAL_ID hidden', 'DESCRIBE TRANSACTIONAL_ID tx']);
  });
});
