/**
 * The cells of the ACL denial matrix (test/integration/acl-denial-matrix.test.ts): for each API and the
 * resources it touches, the ACLs a principal needs, and a request whose answer shows whether it was allowed.
 * Each cell is run twice on a broker: by a user holding exactly the cell's ACLs and by one holding none; the
 * answers, reduced to their error codes, the names they list and the authorized-operation bit fields
 * (`outcome`), must be Apache Kafka's.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { ApiDescriptor } from '../../protocol/api.js';
import { AddOffsetsToTxnApi } from '../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { AddPartitionsToTxnApi, createAddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { AlterConfigsApi, createAlterConfigsRequestAlterConfigsResource, createAlterConfigsRequestAlterableConfig } from '../../protocol/messages/033-alter-configs.gen.js';
import { AlterPartitionReassignmentsApi } from '../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { AlterUserScramCredentialsApi } from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { ConsumerGroupDescribeApi } from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { CreateAclsApi, createCreateAclsRequestAclCreation } from '../../protocol/messages/030-create-acls.gen.js';
import { CreatePartitionsApi, createCreatePartitionsRequestCreatePartitionsTopic } from '../../protocol/messages/037-create-partitions.gen.js';
import { CreateTopicsApi, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { DeleteAclsApi, createDeleteAclsRequestDeleteAclsFilter } from '../../protocol/messages/031-delete-acls.gen.js';
import { DeleteGroupsApi } from '../../protocol/messages/042-delete-groups.gen.js';
import { DeleteRecordsApi, createDeleteRecordsRequestDeleteRecordsPartition, createDeleteRecordsRequestDeleteRecordsTopic } from '../../protocol/messages/021-delete-records.gen.js';
import { DeleteTopicsApi } from '../../protocol/messages/020-delete-topics.gen.js';
import { DescribeAclsApi } from '../../protocol/messages/029-describe-acls.gen.js';
import { DescribeClusterApi } from '../../protocol/messages/060-describe-cluster.gen.js';
import { DescribeConfigsApi, createDescribeConfigsRequestDescribeConfigsResource } from '../../protocol/messages/032-describe-configs.gen.js';
import { DescribeGroupsApi } from '../../protocol/messages/015-describe-groups.gen.js';
import { DescribeLogDirsApi } from '../../protocol/messages/035-describe-log-dirs.gen.js';
import { DescribeProducersApi, createDescribeProducersRequestTopicRequest } from '../../protocol/messages/061-describe-producers.gen.js';
import { DescribeTopicPartitionsApi, createDescribeTopicPartitionsRequestTopicRequest } from '../../protocol/messages/075-describe-topic-partitions.gen.js';
import { DescribeTransactionsApi } from '../../protocol/messages/065-describe-transactions.gen.js';
import { DescribeUserScramCredentialsApi } from '../../protocol/messages/050-describe-user-scram-credentials.gen.js';
import { ElectLeadersApi, createElectLeadersRequestTopicPartitions } from '../../protocol/messages/043-elect-leaders.gen.js';
import { EndTxnApi } from '../../protocol/messages/026-end-txn.gen.js';
import { FetchApi } from '../../protocol/messages/001-fetch.gen.js';
import { HeartbeatApi } from '../../protocol/messages/012-heartbeat.gen.js';
import { LeaveGroupApi, createLeaveGroupRequestMemberIdentity } from '../../protocol/messages/013-leave-group.gen.js';
import { SyncGroupApi } from '../../protocol/messages/014-sync-group.gen.js';
import { ConsumerGroupHeartbeatApi } from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { ListConfigResourcesApi } from '../../protocol/messages/074-list-config-resources.gen.js';
import { FindCoordinatorApi } from '../../protocol/messages/010-find-coordinator.gen.js';
import { IncrementalAlterConfigsApi, createIncrementalAlterConfigsRequestAlterConfigsResource, createIncrementalAlterConfigsRequestAlterableConfig } from '../../protocol/messages/044-incremental-alter-configs.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { JoinGroupApi, createJoinGroupRequestProtocol } from '../../protocol/messages/011-join-group.gen.js';
import { ListGroupsApi } from '../../protocol/messages/016-list-groups.gen.js';
import { ListOffsetsApi, createListOffsetsRequestListOffsetsPartition, createListOffsetsRequestListOffsetsTopic } from '../../protocol/messages/002-list-offsets.gen.js';
import { ListPartitionReassignmentsApi } from '../../protocol/messages/046-list-partition-reassignments.gen.js';
import { ListTransactionsApi } from '../../protocol/messages/066-list-transactions.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { OffsetCommitApi, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../protocol/messages/008-offset-commit.gen.js';
import { OffsetDeleteApi, createOffsetDeleteRequestPartition, createOffsetDeleteRequestTopic } from '../../protocol/messages/047-offset-delete.gen.js';
import { OffsetFetchApi, createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../protocol/messages/009-offset-fetch.gen.js';
import { OffsetForLeaderEpochApi, createOffsetForLeaderEpochRequestOffsetForLeaderPartition, createOffsetForLeaderEpochRequestOffsetForLeaderTopic } from '../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { TxnOffsetCommitApi, createTxnOffsetCommitRequestPartition, createTxnOffsetCommitRequestTopic } from '../../protocol/messages/028-txn-offset-commit.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { AclOperation as Op, ResourceType as Res, PatternType, AclPermissionType } from '../../src/security/acl/model.js';
import { fetchRequest, metadataRequest, produceRequest } from './requests.js';

/** The topic every cell reads, writes or describes; it holds a few records. */
export const TOPIC = 'acl-t';
/** The group whose committed offsets the setup creates. */
export const GROUP = 'acl-g';

/** What a cell's user is granted: an ALLOW (or DENY) of one operation on one resource pattern. */
export interface Grant {
  readonly type: number;
  readonly name: string;
  readonly op: number;
  readonly pattern?: number;
  readonly deny?: boolean;
}

/** What a cell sends requests through: one authenticated connection to the broker. */
export interface CellClient {
  request<Req, Res>(api: ApiDescriptor<Req, Res>, version: number, body: Req): Promise<Res>;
}

export interface Cell {
  readonly name: string;
  readonly grants: readonly Grant[];
  /** The code the user without ACLs must see somewhere in its answer. */
  readonly deniedCode: number;
  /** Runs the cell; `id` is unique to the run (a transactional id, a new topic's name). */
  run(c: CellClient, id: string): Promise<unknown>;
  /** Keys of the answer left out of the outcome: what differs between brokers for reasons unrelated to ACLs. */
  readonly ignore?: readonly string[];
}

const allow = (type: number, name: string, op: number, pattern: number = PatternType.LITERAL): Grant => ({ type, name, op, pattern });
const topicGrant = (op: number, name = TOPIC): Grant => allow(Res.TOPIC, name, op);
const groupGrant = (op: number, name = GROUP): Grant => allow(Res.GROUP, name, op);
const clusterGrant = (op: number): Grant => allow(Res.CLUSTER, 'kafka-cluster', op);
const txnGrant = (op: number, id: string): Grant => allow(Res.TRANSACTIONAL_ID, id, op);

/** The ACL creation of a grant for `principal`. */
export function aclCreation(principal: string, g: Grant) {
  return createCreateAclsRequestAclCreation({
    resourceType: g.type,
    resourceName: g.name,
    resourcePatternType: g.pattern ?? PatternType.LITERAL,
    principal,
    host: '*',
    operation: g.op,
    permissionType: g.deny ? AclPermissionType.DENY : AclPermissionType.ALLOW,
  });
}

/** Keys never compared: offsets, timestamps, ids and addresses, which differ between any two brokers. */
const VOLATILE = new Set([
  'throttleTimeMs',
  'errorMessage',
  'topicConfigErrorMessage',
  'brokers',
  'configs',
  'records',
  'abortedTransactions',
  'nodeEndpoints',
  'members',
  'assignment',
  'replicaNodes',
  'isrNodes',
  'offlineReplicas',
  'eligibleLeaderReplicas',
  'lastKnownElr',
  'activeProducers',
  'protocolData',
  'apiKeys',
]);

const LABEL_KEYS = ['name', 'topic', 'groupId', 'transactionalId', 'resourceName', 'user', 'partitionIndex', 'index', 'partition', 'key'];

/**
 * An answer reduced to what authorization decides: every error code and authorized-operations field with the
 * path of names leading to it, and the names each list holds (a filtered list shows as its names).
 */
export function outcome(res: unknown, ignore: readonly string[] = []): string[] {
  const out: string[] = [];
  const skip = new Set([...VOLATILE, ...ignore]);
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) {
      const labels = v.map((e, i) => labelOf(e) ?? String(i));
      if (v.length > 0 && v.every((e) => labelOf(e) !== null)) out.push(`${path}[]=${[...labels].sort().join(',')}`);
      v.forEach((e, i) => walk(e, `${path}[${labels[i]}]`));
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (skip.has(k)) continue;
      if ((k === 'errorCode' || k.endsWith('ErrorCode')) && typeof x === 'number') out.push(`${path}.${k}=${x}`);
      else if (/authorizedOperations$/i.test(k) && typeof x === 'number') out.push(`${path}.${k}=${x}`);
      else if (typeof x === 'object') walk(x, `${path}.${k}`);
    }
  };
  walk(res, '');
  return out.sort();
}

function labelOf(e: unknown): string | null {
  if (e === null || typeof e !== 'object') return null;
  for (const k of LABEL_KEYS) {
    const v = (e as Record<string, unknown>)[k];
    if (typeof v === 'string' || typeof v === 'number') return `${k}:${v}`;
  }
  return null;
}

/** Retries an answer the broker gives while a coordinator is loading: both brokers load at their own pace. */
const RETRIABLE = new Set<number>([ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS]);

export async function settled<T>(send: () => Promise<T>, code: (res: T) => number): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await send();
    if (!RETRIABLE.has(code(res)) || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function initProducerId(c: CellClient, transactionalId: string | null) {
  return settled(
    () => c.request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 })),
    (r) => r.errorCode,
  );
}

const records = () => buildRecordBatch([{ key: 'k', value: 'v' }]);

/** The matrix. */
export const CELLS: readonly Cell[] = [
  {
    name: 'Produce: WRITE on the topic',
    grants: [topicGrant(Op.WRITE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: async (c) => c.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition: 0, records: await records() }])),
  },
  {
    name: 'Produce: a transactional batch needs WRITE on the transactional id',
    grants: [topicGrant(Op.WRITE), txnGrant(Op.WRITE, 'acl-tx-produce')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const batch = await buildRecordBatch([{ value: 'v' }], { producerId: 1000n, producerEpoch: 0, baseSequence: 0, isTransactional: true });
      return c.request(ProduceApi, 9, { ...produceRequest([{ topic: TOPIC, partition: 0, records: batch }]), transactionalId: 'acl-tx-produce' });
    },
  },
  {
    name: 'Produce: a PREFIXED ALLOW',
    grants: [allow(Res.TOPIC, 'acl-', Op.WRITE, PatternType.PREFIXED)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: async (c) => c.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition: 0, records: await records() }])),
  },
  {
    name: 'Fetch: READ on the topic',
    grants: [topicGrant(Op.READ)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ignore: ['highWatermark', 'lastStableOffset', 'logStartOffset', 'preferredReadReplica', 'sessionId'],
    run: (c) => c.request(FetchApi, 12, fetchRequest({ topics: [{ topic: TOPIC, partitions: [{ partition: 0, offset: 0n }] }] })),
  },
  {
    name: 'ListOffsets: DESCRIBE on the topic',
    grants: [topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        ListOffsetsApi,
        7,
        ListOffsetsApi.request.create({
          replicaId: -1,
          isolationLevel: 0,
          topics: [createListOffsetsRequestListOffsetsTopic({ name: TOPIC, partitions: [createListOffsetsRequestListOffsetsPartition({ partitionIndex: 0, timestamp: -1n })] })],
        }),
      ),
  },
  {
    name: 'Metadata (named, with operations): DESCRIBE on the topic, a missing topic hidden',
    grants: [topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) => c.request(MetadataApi, 12, { ...metadataRequest([TOPIC, 'acl-missing'], false), includeTopicAuthorizedOperations: true }),
  },
  {
    name: 'Metadata (all topics): only the describable ones listed',
    grants: [topicGrant(Op.READ)],
    deniedCode: -1,
    run: (c) => c.request(MetadataApi, 12, { ...metadataRequest(null, false), includeTopicAuthorizedOperations: true }),
  },
  {
    name: 'Metadata (v10, cluster operations): DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE), clusterGrant(Op.ALTER)],
    deniedCode: -1,
    run: (c) => c.request(MetadataApi, 10, { ...metadataRequest([], false), includeClusterAuthorizedOperations: true }),
  },
  {
    name: 'Metadata (auto-creation): DESCRIBE without CREATE',
    grants: [allow(Res.TOPIC, 'acl-auto-', Op.DESCRIBE, PatternType.PREFIXED)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c, id) => c.request(MetadataApi, 12, metadataRequest([`acl-auto-${id}`], true)),
  },
  {
    name: 'CreateTopics: CREATE on the topic (validate only)',
    grants: [allow(Res.TOPIC, 'acl-new-', Op.CREATE, PatternType.PREFIXED)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c, id) =>
      c.request(CreateTopicsApi, 7, CreateTopicsApi.request.create({ topics: [createCreateTopicsRequestCreatableTopic({ name: `acl-new-${id}`, numPartitions: 1, replicationFactor: 1 })], timeoutMs: 10_000, validateOnly: true })),
  },
  {
    name: 'CreateTopics: CREATE on the cluster',
    grants: [clusterGrant(Op.CREATE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c, id) =>
      c.request(CreateTopicsApi, 7, CreateTopicsApi.request.create({ topics: [createCreateTopicsRequestCreatableTopic({ name: `acl-new2-${id}`, numPartitions: 1, replicationFactor: 1 })], timeoutMs: 10_000, validateOnly: true })),
  },
  {
    name: 'DeleteTopics: DELETE on the topic (a missing one)',
    grants: [topicGrant(Op.DELETE, 'acl-gone')],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) => c.request(DeleteTopicsApi, 6, DeleteTopicsApi.request.create({ topics: [{ name: 'acl-gone', topicId: ZERO_UUID }], timeoutMs: 10_000 })),
  },
  {
    name: 'DeleteRecords: DELETE on the topic',
    grants: [topicGrant(Op.DELETE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        DeleteRecordsApi,
        2,
        DeleteRecordsApi.request.create({ topics: [createDeleteRecordsRequestDeleteRecordsTopic({ name: TOPIC, partitions: [createDeleteRecordsRequestDeleteRecordsPartition({ partitionIndex: 0, offset: 0n })] })], timeoutMs: 10_000 }),
      ),
  },
  {
    name: 'CreatePartitions: ALTER on the topic (validate only)',
    grants: [topicGrant(Op.ALTER)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) => c.request(CreatePartitionsApi, 3, CreatePartitionsApi.request.create({ topics: [createCreatePartitionsRequestCreatePartitionsTopic({ name: TOPIC, count: 2, assignments: null })], timeoutMs: 10_000, validateOnly: true })),
  },
  {
    name: 'DescribeConfigs: DESCRIBE_CONFIGS on the topic',
    grants: [topicGrant(Op.DESCRIBE_CONFIGS)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) => c.request(DescribeConfigsApi, 4, DescribeConfigsApi.request.create({ resources: [createDescribeConfigsRequestDescribeConfigsResource({ resourceType: 2, resourceName: TOPIC, configurationKeys: ['retention.ms'] })] })),
  },
  {
    name: 'IncrementalAlterConfigs: ALTER_CONFIGS on the topic (validate only)',
    grants: [topicGrant(Op.ALTER_CONFIGS)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        IncrementalAlterConfigsApi,
        1,
        IncrementalAlterConfigsApi.request.create({
          resources: [createIncrementalAlterConfigsRequestAlterConfigsResource({ resourceType: 2, resourceName: TOPIC, configs: [createIncrementalAlterConfigsRequestAlterableConfig({ name: 'retention.ms', configOperation: 0, value: '3600000' })] })],
          validateOnly: true,
        }),
      ),
  },
  {
    name: 'AlterConfigs: ALTER_CONFIGS on the topic (validate only)',
    grants: [topicGrant(Op.ALTER_CONFIGS)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        AlterConfigsApi,
        2,
        AlterConfigsApi.request.create({
          resources: [createAlterConfigsRequestAlterConfigsResource({ resourceType: 2, resourceName: TOPIC, configs: [createAlterConfigsRequestAlterableConfig({ name: 'retention.ms', value: '3600000' })] })],
          validateOnly: true,
        }),
      ),
  },
  {
    name: 'FindCoordinator (group): DESCRIBE on the group',
    grants: [groupGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['nodeId', 'host', 'port'],
    run: (c) => c.request(FindCoordinatorApi, 4, FindCoordinatorApi.request.create({ keyType: 0, coordinatorKeys: [GROUP] })),
  },
  {
    name: 'FindCoordinator (transaction): DESCRIBE on the transactional id',
    grants: [txnGrant(Op.DESCRIBE, 'acl-fc-tx')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: (c) => settled(() => c.request(FindCoordinatorApi, 4, FindCoordinatorApi.request.create({ keyType: 1, coordinatorKeys: ['acl-fc-tx'] })), (r) => r.coordinators[0]?.errorCode ?? 0),
  },
  {
    name: 'JoinGroup: READ on the group',
    grants: [groupGrant(Op.READ, 'acl-join')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['memberId', 'leader'],
    run: (c) =>
      c.request(
        JoinGroupApi,
        9,
        JoinGroupApi.request.create({
          groupId: 'acl-join',
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: '',
          groupInstanceId: null,
          protocolType: 'consumer',
          protocols: [createJoinGroupRequestProtocol({ name: 'range', metadata: Buffer.alloc(0) })],
          reason: null,
        }),
      ),
  },
  {
    name: 'OffsetCommit: READ on the group and on the topic',
    grants: [groupGrant(Op.READ), topicGrant(Op.READ)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => commit(c),
  },
  {
    name: 'OffsetCommit: READ on the group only',
    grants: [groupGrant(Op.READ)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => commit(c),
  },
  {
    name: 'OffsetFetch: DESCRIBE on the group and the topic',
    grants: [groupGrant(Op.DESCRIBE), topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['committedOffset', 'committedLeaderEpoch', 'metadata'],
    run: (c) =>
      c.request(
        OffsetFetchApi,
        8,
        OffsetFetchApi.request.create({ groups: [createOffsetFetchRequestGroup({ groupId: GROUP, topics: [createOffsetFetchRequestTopics({ name: TOPIC, partitionIndexes: [0] })] })], requireStable: false }),
      ),
  },
  {
    name: 'OffsetFetch (all topics): DESCRIBE on the group, topics filtered',
    grants: [groupGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => c.request(OffsetFetchApi, 8, OffsetFetchApi.request.create({ groups: [createOffsetFetchRequestGroup({ groupId: GROUP, topics: null })], requireStable: false })),
  },
  {
    name: 'OffsetFetch: DESCRIBE on the group only, a named topic refused',
    grants: [groupGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['committedOffset', 'committedLeaderEpoch', 'metadata'],
    run: (c) =>
      c.request(
        OffsetFetchApi,
        8,
        OffsetFetchApi.request.create({ groups: [createOffsetFetchRequestGroup({ groupId: GROUP, topics: [createOffsetFetchRequestTopics({ name: TOPIC, partitionIndexes: [0] })] })], requireStable: false }),
      ),
  },
  {
    name: 'Heartbeat: READ on the group',
    grants: [groupGrant(Op.READ, 'acl-join')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => c.request(HeartbeatApi, 4, HeartbeatApi.request.create({ groupId: 'acl-join', generationId: 1, memberId: 'm', groupInstanceId: null })),
  },
  {
    name: 'SyncGroup: READ on the group',
    grants: [groupGrant(Op.READ, 'acl-join')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => c.request(SyncGroupApi, 5, SyncGroupApi.request.create({ groupId: 'acl-join', generationId: 1, memberId: 'm', groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] })),
  },
  {
    name: 'LeaveGroup: READ on the group',
    grants: [groupGrant(Op.READ, 'acl-join')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['memberId', 'groupInstanceId'],
    run: (c) => c.request(LeaveGroupApi, 5, LeaveGroupApi.request.create({ groupId: 'acl-join', memberId: '', members: [createLeaveGroupRequestMemberIdentity({ memberId: 'm', groupInstanceId: null, reason: null })] })),
  },
  {
    name: 'ConsumerGroupHeartbeat: READ on the group',
    grants: [groupGrant(Op.READ, 'acl-cg'), topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['memberId', 'memberEpoch', 'heartbeatIntervalMs', 'assignment'],
    run: (c, id) =>
      c.request(
        ConsumerGroupHeartbeatApi,
        0,
        ConsumerGroupHeartbeatApi.request.create({ groupId: 'acl-cg', memberId: `m-${id}-0123456789abcdef`, memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 10_000, subscribedTopicNames: [TOPIC], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [] }),
      ),
  },
  {
    name: 'DescribeGroups: DESCRIBE on the group, with its operations',
    grants: [groupGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    ignore: ['groupState', 'protocolType', 'protocolData'],
    run: (c) => c.request(DescribeGroupsApi, 5, DescribeGroupsApi.request.create({ groups: [GROUP], includeAuthorizedOperations: true })),
  },
  {
    name: 'ListGroups: groups filtered by DESCRIBE',
    grants: [groupGrant(Op.DESCRIBE)],
    deniedCode: -1,
    ignore: ['protocolType', 'groupState', 'groupType'],
    run: (c) => c.request(ListGroupsApi, 4, ListGroupsApi.request.create({ statesFilter: [] })),
  },
  {
    name: 'DeleteGroups: DELETE on the group (a missing one)',
    grants: [groupGrant(Op.DELETE, 'acl-gone-g')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => c.request(DeleteGroupsApi, 2, DeleteGroupsApi.request.create({ groupsNames: ['acl-gone-g'] })),
  },
  {
    name: 'OffsetDelete: DELETE on the group, READ on the topic',
    grants: [groupGrant(Op.DELETE, 'acl-gone-g'), topicGrant(Op.READ)],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(OffsetDeleteApi, 0, OffsetDeleteApi.request.create({ groupId: 'acl-gone-g', topics: [createOffsetDeleteRequestTopic({ name: TOPIC, partitions: [createOffsetDeleteRequestPartition({ partitionIndex: 0 })] })] })),
  },
  {
    name: 'InitProducerId (idempotent): IDEMPOTENT_WRITE on the cluster',
    grants: [clusterGrant(Op.IDEMPOTENT_WRITE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ignore: ['producerId', 'producerEpoch'],
    run: (c) => initProducerId(c, null),
  },
  {
    name: 'InitProducerId (idempotent): WRITE on some topic (KIP-679)',
    grants: [topicGrant(Op.WRITE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ignore: ['producerId', 'producerEpoch'],
    run: (c) => initProducerId(c, null),
  },
  {
    name: 'InitProducerId (transactional): WRITE on the transactional id',
    grants: [txnGrant(Op.WRITE, 'acl-tx-init')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    ignore: ['producerId', 'producerEpoch'],
    run: (c) => initProducerId(c, 'acl-tx-init'),
  },
  {
    name: 'AddPartitionsToTxn: WRITE on the transactional id and the topic',
    grants: [txnGrant(Op.WRITE, 'acl-tx-add'), topicGrant(Op.WRITE)],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: (c) => addPartitions(c, 'acl-tx-add'),
  },
  {
    name: 'AddPartitionsToTxn: WRITE on the transactional id only',
    grants: [txnGrant(Op.WRITE, 'acl-tx-add2')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: (c) => addPartitions(c, 'acl-tx-add2'),
  },
  {
    name: 'AddOffsetsToTxn: WRITE on the transactional id, READ on the group',
    grants: [txnGrant(Op.WRITE, 'acl-tx-off')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const p = await initProducerId(c, 'acl-tx-off');
      return c.request(AddOffsetsToTxnApi, 3, AddOffsetsToTxnApi.request.create({ transactionalId: 'acl-tx-off', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: GROUP }));
    },
  },
  {
    name: 'AddOffsetsToTxn: WRITE on the transactional id and READ on the group',
    grants: [txnGrant(Op.WRITE, 'acl-tx-off2'), groupGrant(Op.READ)],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const p = await initProducerId(c, 'acl-tx-off2');
      return settled(() => c.request(AddOffsetsToTxnApi, 3, AddOffsetsToTxnApi.request.create({ transactionalId: 'acl-tx-off2', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: GROUP })), (r) => r.errorCode);
    },
  },
  {
    name: 'EndTxn: WRITE on the transactional id',
    grants: [txnGrant(Op.WRITE, 'acl-tx-end')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const p = await initProducerId(c, 'acl-tx-end');
      return c.request(EndTxnApi, 3, EndTxnApi.request.create({ transactionalId: 'acl-tx-end', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false }));
    },
  },
  {
    name: 'TxnOffsetCommit: WRITE on the transactional id, READ on the group and the topic',
    grants: [txnGrant(Op.WRITE, 'acl-tx-toc'), groupGrant(Op.READ)],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const p = await initProducerId(c, 'acl-tx-toc');
      return txnOffsetCommit(c, 'acl-tx-toc', p);
    },
  },
  {
    name: 'TxnOffsetCommit: WRITE on the transactional id, READ on the group and on the topic',
    grants: [txnGrant(Op.WRITE, 'acl-tx-toc2'), groupGrant(Op.READ), topicGrant(Op.READ)],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: async (c) => {
      const p = await initProducerId(c, 'acl-tx-toc2');
      const added = await settled(() => c.request(AddOffsetsToTxnApi, 3, AddOffsetsToTxnApi.request.create({ transactionalId: 'acl-tx-toc2', producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: GROUP })), (r) => r.errorCode);
      const committed = await txnOffsetCommit(c, 'acl-tx-toc2', p);
      const ended = await settled(() => c.request(EndTxnApi, 3, EndTxnApi.request.create({ transactionalId: 'acl-tx-toc2', producerId: p.producerId, producerEpoch: p.producerEpoch, committed: false })), (r) => r.errorCode);
      return { added, committed, ended };
    },
  },
  {
    name: 'DescribeTransactions: DESCRIBE on the transactional id',
    grants: [txnGrant(Op.DESCRIBE, 'acl-tx-missing')],
    deniedCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
    run: (c) => c.request(DescribeTransactionsApi, 0, DescribeTransactionsApi.request.create({ transactionalIds: ['acl-tx-missing'] })),
  },
  {
    name: 'ListTransactions: filtered by DESCRIBE on the transactional id',
    grants: [txnGrant(Op.DESCRIBE, 'acl-tx-init')],
    deniedCode: -1,
    ignore: ['producerId', 'transactionState'],
    run: (c) => c.request(ListTransactionsApi, 1, ListTransactionsApi.request.create({ stateFilters: [], producerIdFilters: [], durationFilter: -1n })),
  },
  {
    name: 'DescribeProducers: READ on the topic',
    grants: [topicGrant(Op.READ)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: (c) => c.request(DescribeProducersApi, 0, DescribeProducersApi.request.create({ topics: [createDescribeProducersRequestTopicRequest({ name: TOPIC, partitionIndexes: [0] })] })),
  },
  {
    name: 'OffsetForLeaderEpoch: DESCRIBE on the topic',
    grants: [topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ignore: ['leaderEpoch', 'endOffset'],
    run: (c) =>
      c.request(
        OffsetForLeaderEpochApi,
        4,
        OffsetForLeaderEpochApi.request.create({
          replicaId: -1,
          topics: [createOffsetForLeaderEpochRequestOffsetForLeaderTopic({ topic: TOPIC, partitions: [createOffsetForLeaderEpochRequestOffsetForLeaderPartition({ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 })] })],
        }),
      ),
  },
  {
    name: 'DescribeTopicPartitions: DESCRIBE on the topic',
    grants: [topicGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    ignore: ['leaderId', 'leaderEpoch', 'partitions', 'nextCursor'],
    run: (c) => c.request(DescribeTopicPartitionsApi, 0, DescribeTopicPartitionsApi.request.create({ topics: [createDescribeTopicPartitionsRequestTopicRequest({ name: TOPIC })], responsePartitionLimit: 100, cursor: null })),
  },
  {
    name: 'DescribeCluster: cluster operations need DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE), clusterGrant(Op.IDEMPOTENT_WRITE)],
    deniedCode: -1,
    ignore: ['clusterId', 'controllerId'],
    run: (c) => c.request(DescribeClusterApi, 1, DescribeClusterApi.request.create({ includeClusterAuthorizedOperations: true, endpointType: 1 })),
  },
  {
    name: 'ListConfigResources: DESCRIBE_CONFIGS on the cluster',
    grants: [clusterGrant(Op.DESCRIBE_CONFIGS)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ignore: ['configResources'],
    run: (c) => c.request(ListConfigResourcesApi, 1, ListConfigResourcesApi.request.create({ resourceTypes: [] })),
  },
  {
    name: 'IncrementalAlterConfigs (cluster default): ALTER_CONFIGS on the cluster (validate only)',
    grants: [clusterGrant(Op.ALTER_CONFIGS)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        IncrementalAlterConfigsApi,
        1,
        IncrementalAlterConfigsApi.request.create({
          resources: [createIncrementalAlterConfigsRequestAlterConfigsResource({ resourceType: 4, resourceName: '', configs: [createIncrementalAlterConfigsRequestAlterableConfig({ name: 'log.retention.ms', configOperation: 0, value: '3600000' })] })],
          validateOnly: true,
        }),
      ),
  },
  {
    name: 'DescribeLogDirs: DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    ignore: ['results'],
    run: (c) => c.request(DescribeLogDirsApi, 4, DescribeLogDirsApi.request.create({ topics: [] })),
  },
  {
    name: 'DescribeAcls: DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(DescribeAclsApi, 3, DescribeAclsApi.request.create({ resourceTypeFilter: Res.TOPIC, resourceNameFilter: 'acl-nothing', patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY })),
  },
  {
    name: 'CreateAcls: ALTER on the cluster',
    grants: [clusterGrant(Op.ALTER)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c, id) => c.request(CreateAclsApi, 3, CreateAclsApi.request.create({ creations: [aclCreation('User:nobody', topicGrant(Op.READ, `acl-x-${id}`)), aclCreation('User:nobody', allow(Res.CLUSTER, 'other', Op.ALTER))] })),
  },
  {
    name: 'DeleteAcls: ALTER on the cluster',
    grants: [clusterGrant(Op.ALTER)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) =>
      c.request(
        DeleteAclsApi,
        3,
        DeleteAclsApi.request.create({ filters: [createDeleteAclsRequestDeleteAclsFilter({ resourceTypeFilter: Res.TOPIC, resourceNameFilter: 'acl-nothing', patternTypeFilter: PatternType.ANY, principalFilter: null, hostFilter: null, operation: Op.ANY, permissionType: AclPermissionType.ANY })] }),
      ),
  },
  {
    name: 'DescribeUserScramCredentials: DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(DescribeUserScramCredentialsApi, 0, DescribeUserScramCredentialsApi.request.create({ users: [{ name: 'acl-nobody' }] })),
  },
  {
    name: 'AlterUserScramCredentials: ALTER on the cluster',
    grants: [clusterGrant(Op.ALTER)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(AlterUserScramCredentialsApi, 0, AlterUserScramCredentialsApi.request.create({ deletions: [{ name: 'acl-nobody', mechanism: 2 }], upsertions: [] })),
  },
  {
    name: 'ElectLeaders: ALTER on the cluster',
    grants: [clusterGrant(Op.ALTER)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(ElectLeadersApi, 2, ElectLeadersApi.request.create({ electionType: 0, topicPartitions: [createElectLeadersRequestTopicPartitions({ topic: TOPIC, partitions: [0] })], timeoutMs: 10_000 })),
  },
  {
    name: 'ListPartitionReassignments: DESCRIBE on the cluster',
    grants: [clusterGrant(Op.DESCRIBE)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(ListPartitionReassignmentsApi, 0, ListPartitionReassignmentsApi.request.create({ timeoutMs: 10_000, topics: null })),
  },
  {
    name: 'AlterPartitionReassignments: ALTER on the cluster',
    grants: [clusterGrant(Op.ALTER)],
    deniedCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
    run: (c) => c.request(AlterPartitionReassignmentsApi, 0, AlterPartitionReassignmentsApi.request.create({ timeoutMs: 10_000, topics: [] })),
  },
  {
    name: 'ConsumerGroupDescribe: DESCRIBE on the group',
    grants: [groupGrant(Op.DESCRIBE, 'acl-gone-g')],
    deniedCode: ErrorCode.GROUP_AUTHORIZATION_FAILED,
    run: (c) => c.request(ConsumerGroupDescribeApi, 0, ConsumerGroupDescribeApi.request.create({ groupIds: ['acl-gone-g'], includeAuthorizedOperations: true })),
  },
  {
    name: 'A DENY wins over ALLOW ALL on every topic',
    grants: [allow(Res.TOPIC, '*', Op.ALL), { type: Res.TOPIC, name: 'acl-', op: Op.WRITE, pattern: PatternType.PREFIXED, deny: true }],
    deniedCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
    run: async (c) => c.request(ProduceApi, 9, produceRequest([{ topic: TOPIC, partition: 0, records: await records() }])),
  },
];

async function commit(c: CellClient) {
  return settled(
    () =>
      c.request(
        OffsetCommitApi,
        8,
        OffsetCommitApi.request.create({
          groupId: GROUP,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          groupInstanceId: null,
          topics: [createOffsetCommitRequestTopic({ name: TOPIC, partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 1n, committedMetadata: null })] })],
        }),
      ),
    (r) => r.topics[0]?.partitions[0]?.errorCode ?? 0,
  );
}

/** TxnOffsetCommit of offset 0 of the topic's partition 0 for the group, in the producer's transaction. */
function txnOffsetCommit(c: CellClient, transactionalId: string, p: { producerId: bigint; producerEpoch: number }) {
  return c.request(
    TxnOffsetCommitApi,
    3,
    TxnOffsetCommitApi.request.create({
      transactionalId,
      groupId: GROUP,
      producerId: p.producerId,
      producerEpoch: p.producerEpoch,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [createTxnOffsetCommitRequestTopic({ name: TOPIC, partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 0n })] })],
    }),
  );
}

async function addPartitions(c: CellClient, transactionalId: string) {
  const p = await initProducerId(c, transactionalId);
  return c.request(
    AddPartitionsToTxnApi,
    3,
    AddPartitionsToTxnApi.request.create({
      v3AndBelowTransactionalId: transactionalId,
      v3AndBelowProducerId: p.producerId,
      v3AndBelowProducerEpoch: p.producerEpoch,
      v3AndBelowTopics: [createAddPartitionsToTxnRequestAddPartitionsToTxnTopic({ name: TOPIC, partitions: [0] })],
      transactions: [],
    }),
  );
}
