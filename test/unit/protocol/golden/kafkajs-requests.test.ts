/**
 * Golden bytes against kafkajs 2.2.4: every request version kafkajs sends is encoded twice, by kafkajs's own
 * protocol encoders and by the generated codec, and the two must agree byte for byte, size prefix and
 * request header included. The frame kafkajs wrote is then read back with `readRequestHeader` and the
 * generated decoder and must give the message the codec was asked to write.
 *
 * Produce bodies carry record batches (v3+) and legacy message sets (v0-2) that kafkajs builds itself; the
 * test builds the same batches from the record format spec (test/support/golden.ts), so the whole body is
 * checked, batch bytes and CRCs included.
 *
 * kafkajs behaviours the cases pin down (each is how kafkajs talks, not a codec choice):
 * - Metadata v1+, OffsetFetch v3+, DescribeConfigs and CreatePartitions write an empty array as null
 *   (`writeNullableArray`), so kafkajs cannot ask for "no topics" / "no config keys" / "no assignment".
 * - AlterPartitionReassignments v0 and ListPartitionReassignments v0 (flexible) are sent with a v1 request
 *   header whose body starts with an empty tag buffer: on the wire that is exactly a v2 header.
 * - SaslAuthenticate's auth bytes arrive already length-prefixed from the SASL mechanism.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor } from '../../../../protocol/api.js';
import { isFlexible } from '../../../../protocol/api.js';
import { encodeRequestFrame, readRequestHeader } from '../../../../protocol/headers.js';
import { createProduceRequest, createProduceRequestPartitionProduceData, createProduceRequestTopicProduceData, ProduceApi } from '../../../../protocol/messages/000-produce.gen.js';
import { createFetchRequest, createFetchRequestFetchPartition, createFetchRequestFetchTopic, createFetchRequestForgottenTopic, FetchApi } from '../../../../protocol/messages/001-fetch.gen.js';
import { createListOffsetsRequest, createListOffsetsRequestListOffsetsPartition, createListOffsetsRequestListOffsetsTopic, ListOffsetsApi } from '../../../../protocol/messages/002-list-offsets.gen.js';
import { createMetadataRequest, createMetadataRequestTopic, MetadataApi } from '../../../../protocol/messages/003-metadata.gen.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic, OffsetCommitApi } from '../../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequest, createOffsetFetchRequestTopic, OffsetFetchApi } from '../../../../protocol/messages/009-offset-fetch.gen.js';
import { createFindCoordinatorRequest, FindCoordinatorApi } from '../../../../protocol/messages/010-find-coordinator.gen.js';
import { createJoinGroupRequest, createJoinGroupRequestProtocol, JoinGroupApi } from '../../../../protocol/messages/011-join-group.gen.js';
import { createHeartbeatRequest, HeartbeatApi } from '../../../../protocol/messages/012-heartbeat.gen.js';
import { createLeaveGroupRequest, createLeaveGroupRequestMemberIdentity, LeaveGroupApi } from '../../../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupRequest, createSyncGroupRequestAssignment, SyncGroupApi } from '../../../../protocol/messages/014-sync-group.gen.js';
import { createDescribeGroupsRequest, DescribeGroupsApi } from '../../../../protocol/messages/015-describe-groups.gen.js';
import { createListGroupsRequest, ListGroupsApi } from '../../../../protocol/messages/016-list-groups.gen.js';
import { createSaslHandshakeRequest, SaslHandshakeApi } from '../../../../protocol/messages/017-sasl-handshake.gen.js';
import { ApiVersionsApi, createApiVersionsRequest } from '../../../../protocol/messages/018-api-versions.gen.js';
import {
  createCreateTopicsRequest,
  createCreateTopicsRequestCreatableReplicaAssignment,
  createCreateTopicsRequestCreatableTopic,
  createCreateTopicsRequestCreatableTopicConfig,
  CreateTopicsApi,
} from '../../../../protocol/messages/019-create-topics.gen.js';
import { createDeleteTopicsRequest, DeleteTopicsApi } from '../../../../protocol/messages/020-delete-topics.gen.js';
import { createDeleteRecordsRequest, createDeleteRecordsRequestDeleteRecordsPartition, createDeleteRecordsRequestDeleteRecordsTopic, DeleteRecordsApi } from '../../../../protocol/messages/021-delete-records.gen.js';
import { createInitProducerIdRequest, InitProducerIdApi } from '../../../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi, createAddPartitionsToTxnRequest, createAddPartitionsToTxnRequestAddPartitionsToTxnTopic } from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { AddOffsetsToTxnApi, createAddOffsetsToTxnRequest } from '../../../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { createEndTxnRequest, EndTxnApi } from '../../../../protocol/messages/026-end-txn.gen.js';
import { createTxnOffsetCommitRequest, createTxnOffsetCommitRequestPartition, createTxnOffsetCommitRequestTopic, TxnOffsetCommitApi } from '../../../../protocol/messages/028-txn-offset-commit.gen.js';
import { createDescribeAclsRequest, DescribeAclsApi } from '../../../../protocol/messages/029-describe-acls.gen.js';
import { CreateAclsApi, createCreateAclsRequest, createCreateAclsRequestAclCreation } from '../../../../protocol/messages/030-create-acls.gen.js';
import { createDeleteAclsRequest, createDeleteAclsRequestDeleteAclsFilter, DeleteAclsApi } from '../../../../protocol/messages/031-delete-acls.gen.js';
import { createDescribeConfigsRequest, createDescribeConfigsRequestDescribeConfigsResource, DescribeConfigsApi } from '../../../../protocol/messages/032-describe-configs.gen.js';
import { AlterConfigsApi, createAlterConfigsRequest, createAlterConfigsRequestAlterableConfig, createAlterConfigsRequestAlterConfigsResource } from '../../../../protocol/messages/033-alter-configs.gen.js';
import { createSaslAuthenticateRequest, SaslAuthenticateApi } from '../../../../protocol/messages/036-sasl-authenticate.gen.js';
import {
  createCreatePartitionsRequest,
  createCreatePartitionsRequestCreatePartitionsAssignment,
  createCreatePartitionsRequestCreatePartitionsTopic,
  CreatePartitionsApi,
} from '../../../../protocol/messages/037-create-partitions.gen.js';
import { createDeleteGroupsRequest, DeleteGroupsApi } from '../../../../protocol/messages/042-delete-groups.gen.js';
import {
  AlterPartitionReassignmentsApi,
  createAlterPartitionReassignmentsRequest,
  createAlterPartitionReassignmentsRequestReassignablePartition,
  createAlterPartitionReassignmentsRequestReassignableTopic,
} from '../../../../protocol/messages/045-alter-partition-reassignments.gen.js';
import {
  createListPartitionReassignmentsRequest,
  createListPartitionReassignmentsRequestListPartitionReassignmentsTopics,
  ListPartitionReassignmentsApi,
} from '../../../../protocol/messages/046-list-partition-reassignments.gen.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { encodeWith, hex, kafkajsAssignerProtocol, kafkajsProtocol, kafkajsRequestBody, kafkajsRequestFrame, kafkajsVersions, legacyMessageSet, recordBatchV2 } from '../../../support/golden.js';

interface RequestCase<Req> {
  /** What the request asks, for the test name. */
  scenario: string;
  api: ApiDescriptor<Req, unknown>;
  /** kafkajs's folder under src/protocol/requests/. */
  kafkajs: string;
  versions: number[];
  /** Arguments for kafkajs's `protocol({ version })(args)`. */
  args: (v: number) => unknown;
  /** The same request as a generated-codec message. */
  ours: (v: number) => Req;
}

const cases: RequestCase<unknown>[] = [];
function add<Req>(c: RequestCase<Req>): void {
  cases.push(c as RequestCase<unknown>);
}
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const T0 = 1_700_000_000_000;
const CLIENT_ID = 'ledgerline-golden';
const CORRELATION_ID = 0x01020304;

// ---- ApiVersions, Metadata ------------------------------------------------------------------------------

add({
  scenario: 'versions probe',
  api: ApiVersionsApi,
  kafkajs: 'apiVersions',
  versions: range(0, 2),
  args: () => ({}),
  ours: () => createApiVersionsRequest(),
});

add({
  scenario: 'two named topics',
  api: MetadataApi,
  kafkajs: 'metadata',
  versions: range(0, 6),
  args: () => ({ topics: ['orders', 'payments.v2'], allowAutoTopicCreation: false }),
  ours: (v) =>
    createMetadataRequest({
      topics: ['orders', 'payments.v2'].map((name) => createMetadataRequestTopic({ name })),
      allowAutoTopicCreation: v < 4,
    }),
});

add({
  scenario: 'all topics (empty list in v0, null in v1+)',
  api: MetadataApi,
  kafkajs: 'metadata',
  versions: range(0, 6),
  args: () => ({ topics: [] }),
  ours: (v) => createMetadataRequest({ topics: v === 0 ? [] : null, allowAutoTopicCreation: true }),
});

// ---- Produce --------------------------------------------------------------------------------------------

const produceArgs = (v: number): unknown => ({
  acks: -1,
  timeout: 30_000,
  compression: 0,
  ...(v >= 3 ? { transactionalId: 'tx-golden', producerId: 4000, producerEpoch: 2 } : {}),
  topicData: [
    {
      topic: 'orders',
      partitions: [
        {
          partition: 0,
          firstSequence: 5,
          messages: [
            { key: 'k1', value: 'v1', timestamp: T0, headers: { trace: 'abc', tenant: 't-7' } },
            { key: null, value: 'v2', timestamp: T0 + 5 },
            { key: 'gone', value: null, timestamp: T0 + 7 },
          ],
        },
        // Over 1 KiB, so the generated writer appends the batch by reference (zero-copy chunk).
        { partition: 3, firstSequence: 0, messages: [{ key: 'big', value: 'x'.repeat(1500), timestamp: T0 + 9 }] },
      ],
    },
    { topic: 'audit', partitions: [{ partition: 1, firstSequence: 17, messages: [{ key: null, value: 'a', timestamp: T0 }] }] },
  ],
});

function produceBatches(v: number): Buffer[] {
  const utf8 = (s: string | null): Buffer | null => (s === null ? null : Buffer.from(s, 'utf8'));
  if (v < 3) {
    // Produce v0-1 carry message format v0, v2 message format v1 (with timestamps). kafkajs gives the
    // messages of an uncompressed v2 set offset -1, but numbers those of v0-1 sets 0, 1, 2… (its v0-1
    // encoder passes no compression type, which its message-set writer takes for "compressed").
    const magic = v < 2 ? 0 : 1;
    const set = (msgs: { key: string | null; value: string | null; timestamp: number }[]): Buffer =>
      legacyMessageSet(
        magic,
        msgs.map((m, i) => ({ offset: v < 2 ? BigInt(i) : -1n, timestamp: BigInt(m.timestamp), key: utf8(m.key), value: utf8(m.value) })),
      );
    return [
      set([
        { key: 'k1', value: 'v1', timestamp: T0 },
        { key: null, value: 'v2', timestamp: T0 + 5 },
        { key: 'gone', value: null, timestamp: T0 + 7 },
      ]),
      set([{ key: 'big', value: 'x'.repeat(1500), timestamp: T0 + 9 }]),
      set([{ key: null, value: 'a', timestamp: T0 }]),
    ];
  }
  // kafkajs marks every batch of a transactional producer transactional (attributes bit 4).
  const common = { attributes: 0x10, producerId: 4000n, producerEpoch: 2 };
  return [
    recordBatchV2({
      ...common,
      baseSequence: 5,
      baseTimestamp: BigInt(T0),
      maxTimestamp: BigInt(T0 + 7),
      records: [
        {
          timestampDelta: 0,
          key: utf8('k1'),
          value: utf8('v1'),
          headers: [
            { key: 'trace', value: Buffer.from('abc') },
            { key: 'tenant', value: Buffer.from('t-7') },
          ],
        },
        { timestampDelta: 5, key: null, value: utf8('v2') },
        { timestampDelta: 7, key: utf8('gone'), value: null },
      ],
    }),
    recordBatchV2({
      ...common,
      baseSequence: 0,
      baseTimestamp: BigInt(T0 + 9),
      maxTimestamp: BigInt(T0 + 9),
      records: [{ timestampDelta: 0, key: utf8('big'), value: utf8('x'.repeat(1500)) }],
    }),
    recordBatchV2({ ...common, baseSequence: 17, baseTimestamp: BigInt(T0), maxTimestamp: BigInt(T0), records: [{ timestampDelta: 0, key: null, value: utf8('a') }] }),
  ];
}

add({
  scenario: 'two topics, three batches (one over 1 KiB), headers, null key and tombstone',
  api: ProduceApi,
  kafkajs: 'produce',
  versions: range(0, 7),
  args: produceArgs,
  ours: (v) => {
    const [b0, b1, b2] = produceBatches(v);
    return createProduceRequest({
      transactionalId: v >= 3 ? 'tx-golden' : null,
      acks: -1,
      timeoutMs: 30_000,
      topicData: [
        createProduceRequestTopicProduceData({
          name: 'orders',
          partitionData: [
            createProduceRequestPartitionProduceData({ index: 0, records: b0! }),
            createProduceRequestPartitionProduceData({ index: 3, records: b1! }),
          ],
        }),
        createProduceRequestTopicProduceData({ name: 'audit', partitionData: [createProduceRequestPartitionProduceData({ index: 1, records: b2! })] }),
      ],
    });
  },
});

// ---- Fetch, ListOffsets ---------------------------------------------------------------------------------

add({
  scenario: 'read_committed, two partitions, a forgotten topic (v7+) and a rack (v11)',
  api: FetchApi,
  kafkajs: 'fetch',
  versions: range(0, 11),
  args: () => ({
    replicaId: -1,
    maxWaitTime: 500,
    minBytes: 1,
    maxBytes: 52_428_800,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    forgottenTopics: [{ topic: 'retired', partitions: [1, 2] }],
    rackId: 'rack-a',
    topics: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, currentLeaderEpoch: 3, fetchOffset: '42', logStartOffset: '7', maxBytes: 1_048_576 },
          { partition: 2, fetchOffset: '9007199254740993', maxBytes: 65_536 },
        ],
      },
    ],
  }),
  ours: (v) =>
    createFetchRequest({
      replicaId: -1,
      maxWaitMs: 500,
      minBytes: 1,
      maxBytes: v >= 3 ? 52_428_800 : 0x7fffffff,
      isolationLevel: v >= 4 ? 1 : 0,
      sessionId: 0,
      sessionEpoch: -1,
      forgottenTopicsData: v >= 7 ? [createFetchRequestForgottenTopic({ topic: 'retired', partitions: [1, 2] })] : [],
      rackId: v >= 11 ? 'rack-a' : '',
      topics: [
        createFetchRequestFetchTopic({
          topic: 'orders',
          partitions: [
            createFetchRequestFetchPartition({
              partition: 0,
              currentLeaderEpoch: v >= 9 ? 3 : -1,
              fetchOffset: 42n,
              logStartOffset: v >= 5 ? 7n : -1n,
              partitionMaxBytes: 1_048_576,
            }),
            // An offset above 2^53: int64 must not pass through a double.
            createFetchRequestFetchPartition({ partition: 2, fetchOffset: 9007199254740993n, partitionMaxBytes: 65_536 }),
          ],
        }),
      ],
    }),
});

add({
  scenario: 'latest and by-timestamp offsets',
  api: ListOffsetsApi,
  kafkajs: 'listOffsets',
  versions: range(0, 3),
  args: () => ({
    replicaId: -1,
    isolationLevel: 1,
    topics: [{ topic: 'orders', partitions: [{ partition: 0, timestamp: -1 }, { partition: 1, timestamp: T0 }] }],
  }),
  ours: (v) =>
    createListOffsetsRequest({
      replicaId: -1,
      isolationLevel: v >= 2 ? 1 : 0,
      topics: [
        createListOffsetsRequestListOffsetsTopic({
          name: 'orders',
          partitions: [
            createListOffsetsRequestListOffsetsPartition({ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1 }),
            createListOffsetsRequestListOffsetsPartition({ partitionIndex: 1, timestamp: BigInt(T0), maxNumOffsets: 1 }),
          ],
        }),
      ],
    }),
});

// ---- Consumer groups ------------------------------------------------------------------------------------

add({
  scenario: 'two partitions, null and set metadata',
  api: OffsetCommitApi,
  kafkajs: 'offsetCommit',
  versions: range(0, 5),
  args: () => ({
    groupId: 'golden-group',
    groupGenerationId: 7,
    memberId: 'member-1',
    retentionTime: 86_400_000,
    topics: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, offset: '100', timestamp: T0 },
          { partition: 1, offset: '200', metadata: 'checkpoint', timestamp: T0 },
        ],
      },
    ],
  }),
  ours: (v) =>
    createOffsetCommitRequest({
      groupId: 'golden-group',
      generationIdOrMemberEpoch: v >= 1 ? 7 : -1,
      memberId: v >= 1 ? 'member-1' : '',
      retentionTimeMs: v >= 2 && v <= 4 ? 86_400_000n : -1n,
      topics: [
        createOffsetCommitRequestTopic({
          name: 'orders',
          partitions: [
            createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 100n, commitTimestamp: v === 1 ? BigInt(T0) : -1n, committedMetadata: null }),
            createOffsetCommitRequestPartition({ partitionIndex: 1, committedOffset: 200n, commitTimestamp: v === 1 ? BigInt(T0) : -1n, committedMetadata: 'checkpoint' }),
          ],
        }),
      ],
    }),
});

add({
  scenario: 'named partitions',
  api: OffsetFetchApi,
  kafkajs: 'offsetFetch',
  versions: range(1, 4),
  args: () => ({ groupId: 'golden-group', topics: [{ topic: 'orders', partitions: [{ partition: 0 }, { partition: 1 }] }] }),
  ours: () => createOffsetFetchRequest({ groupId: 'golden-group', topics: [createOffsetFetchRequestTopic({ name: 'orders', partitionIndexes: [0, 1] })] }),
});

add({
  scenario: 'all committed offsets (null topics)',
  api: OffsetFetchApi,
  kafkajs: 'offsetFetch',
  versions: range(3, 4),
  args: () => ({ groupId: 'golden-group', topics: [] }),
  ours: () => createOffsetFetchRequest({ groupId: 'golden-group', topics: null }),
});

add({
  scenario: 'group coordinator (v0) / transaction coordinator (v1+)',
  api: FindCoordinatorApi,
  kafkajs: 'findCoordinator',
  versions: range(0, 2),
  args: (v) => ({ groupId: v === 0 ? 'golden-group' : 'tx-golden', coordinatorType: 1 }),
  ours: (v) => createFindCoordinatorRequest({ key: v === 0 ? 'golden-group' : 'tx-golden', keyType: v === 0 ? 0 : 1 }),
});

const subscription = kafkajsAssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['orders', 'audit'], userData: Buffer.from('ud') });

add({
  scenario: 'consumer protocol with two assignors, static member (v5)',
  api: JoinGroupApi,
  kafkajs: 'joinGroup',
  versions: range(0, 5),
  args: () => ({
    groupId: 'golden-group',
    sessionTimeout: 30_000,
    rebalanceTimeout: 60_000,
    memberId: '',
    groupInstanceId: 'instance-1',
    protocolType: 'consumer',
    groupProtocols: [{ name: 'RoundRobinAssigner', metadata: subscription }, { name: 'empty' }],
  }),
  ours: (v) =>
    createJoinGroupRequest({
      groupId: 'golden-group',
      sessionTimeoutMs: 30_000,
      rebalanceTimeoutMs: v >= 1 ? 60_000 : -1,
      memberId: '',
      groupInstanceId: v >= 5 ? 'instance-1' : null,
      protocolType: 'consumer',
      protocols: [createJoinGroupRequestProtocol({ name: 'RoundRobinAssigner', metadata: subscription }), createJoinGroupRequestProtocol({ name: 'empty', metadata: Buffer.alloc(0) })],
    }),
});

const assignment = kafkajsAssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { orders: [0, 2], audit: [1] } });

add({
  scenario: 'leader assigns two members, static member (v3)',
  api: SyncGroupApi,
  kafkajs: 'syncGroup',
  versions: range(0, 3),
  args: () => ({
    groupId: 'golden-group',
    generationId: 3,
    memberId: 'member-1',
    groupInstanceId: 'instance-1',
    groupAssignment: [
      { memberId: 'member-1', memberAssignment: assignment },
      { memberId: 'member-2', memberAssignment: Buffer.alloc(0) },
    ],
  }),
  ours: (v) =>
    createSyncGroupRequest({
      groupId: 'golden-group',
      generationId: 3,
      memberId: 'member-1',
      groupInstanceId: v >= 3 ? 'instance-1' : null,
      assignments: [createSyncGroupRequestAssignment({ memberId: 'member-1', assignment }), createSyncGroupRequestAssignment({ memberId: 'member-2', assignment: Buffer.alloc(0) })],
    }),
});

add({
  scenario: 'member heartbeat, static member (v3)',
  api: HeartbeatApi,
  kafkajs: 'heartbeat',
  versions: range(0, 3),
  args: () => ({ groupId: 'golden-group', groupGenerationId: 3, memberId: 'member-1', groupInstanceId: 'instance-1' }),
  ours: (v) => createHeartbeatRequest({ groupId: 'golden-group', generationId: 3, memberId: 'member-1', groupInstanceId: v >= 3 ? 'instance-1' : null }),
});

add({
  scenario: 'dynamic member leaves (v3 batches members)',
  api: LeaveGroupApi,
  kafkajs: 'leaveGroup',
  versions: range(0, 3),
  args: () => ({ groupId: 'golden-group', memberId: 'member-1', groupInstanceId: null }),
  ours: (v) =>
    createLeaveGroupRequest({
      groupId: 'golden-group',
      memberId: v <= 2 ? 'member-1' : '',
      members: v >= 3 ? [createLeaveGroupRequestMemberIdentity({ memberId: 'member-1', groupInstanceId: null })] : [],
    }),
});

add({
  scenario: 'two groups',
  api: DescribeGroupsApi,
  kafkajs: 'describeGroups',
  versions: range(0, 2),
  args: () => ({ groupIds: ['golden-group', 'other'] }),
  ours: () => createDescribeGroupsRequest({ groups: ['golden-group', 'other'] }),
});

add({ scenario: 'all groups', api: ListGroupsApi, kafkajs: 'listGroups', versions: range(0, 2), args: () => ({}), ours: () => createListGroupsRequest() });

add({
  scenario: 'two groups',
  api: DeleteGroupsApi,
  kafkajs: 'deleteGroups',
  versions: range(0, 1),
  args: () => ['golden-group', 'other'],
  ours: () => createDeleteGroupsRequest({ groupsNames: ['golden-group', 'other'] }),
});

// ---- SASL -----------------------------------------------------------------------------------------------

add({ scenario: 'PLAIN', api: SaslHandshakeApi, kafkajs: 'saslHandshake', versions: range(0, 1), args: () => ({ mechanism: 'PLAIN' }), ours: () => createSaslHandshakeRequest({ mechanism: 'PLAIN' }) });

const plainToken = Buffer.from('\0alice\0secret', 'utf8');
add({
  scenario: 'PLAIN token',
  api: SaslAuthenticateApi,
  kafkajs: 'saslAuthenticate',
  versions: range(0, 1),
  // kafkajs hands SaslAuthenticate the mechanism's bytes already framed as `bytes` (int32 length + data).
  args: () => ({ authBytes: Buffer.concat([Buffer.from([0, 0, 0, plainToken.length]), plainToken]) }),
  ours: () => createSaslAuthenticateRequest({ authBytes: plainToken }),
});

// ---- Admin ----------------------------------------------------------------------------------------------

add({
  scenario: 'one topic with configs, one with a manual assignment',
  api: CreateTopicsApi,
  kafkajs: 'createTopics',
  versions: range(0, 3),
  args: () => ({
    timeout: 5000,
    validateOnly: true,
    topics: [
      { topic: 'orders', numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: '-1' }] },
      {
        topic: 'manual',
        replicaAssignment: [
          { partition: 0, replicas: [1, 2] },
          { partition: 1, replicas: [2, 3] },
        ],
      },
    ],
  }),
  ours: (v) =>
    createCreateTopicsRequest({
      timeoutMs: 5000,
      validateOnly: v >= 1,
      topics: [
        createCreateTopicsRequestCreatableTopic({
          name: 'orders',
          numPartitions: 3,
          replicationFactor: 1,
          assignments: [],
          configs: [createCreateTopicsRequestCreatableTopicConfig({ name: 'cleanup.policy', value: 'compact' }), createCreateTopicsRequestCreatableTopicConfig({ name: 'retention.ms', value: '-1' })],
        }),
        createCreateTopicsRequestCreatableTopic({
          name: 'manual',
          numPartitions: -1,
          replicationFactor: -1,
          assignments: [
            createCreateTopicsRequestCreatableReplicaAssignment({ partitionIndex: 0, brokerIds: [1, 2] }),
            createCreateTopicsRequestCreatableReplicaAssignment({ partitionIndex: 1, brokerIds: [2, 3] }),
          ],
          configs: [],
        }),
      ],
    }),
});

add({
  scenario: 'two topics',
  api: DeleteTopicsApi,
  kafkajs: 'deleteTopics',
  versions: range(0, 1),
  args: () => ({ topics: ['orders', 'audit'], timeout: 5000 }),
  ours: () => createDeleteTopicsRequest({ topicNames: ['orders', 'audit'], timeoutMs: 5000 }),
});

add({
  scenario: 'truncate one partition',
  api: DeleteRecordsApi,
  kafkajs: 'deleteRecords',
  versions: range(0, 1),
  args: () => ({ topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '42' }, { partition: 1, offset: '-1' }] }], timeout: 5000 }),
  ours: () =>
    createDeleteRecordsRequest({
      timeoutMs: 5000,
      topics: [
        createDeleteRecordsRequestDeleteRecordsTopic({
          name: 'orders',
          partitions: [createDeleteRecordsRequestDeleteRecordsPartition({ partitionIndex: 0, offset: 42n }), createDeleteRecordsRequestDeleteRecordsPartition({ partitionIndex: 1, offset: -1n })],
        }),
      ],
    }),
});

add({
  scenario: 'transactional producer',
  api: InitProducerIdApi,
  kafkajs: 'initProducerId',
  versions: range(0, 1),
  args: () => ({ transactionalId: 'tx-golden', transactionTimeout: 60_000 }),
  ours: () => createInitProducerIdRequest({ transactionalId: 'tx-golden', transactionTimeoutMs: 60_000 }),
});

add({
  scenario: 'idempotent producer (null transactional id)',
  api: InitProducerIdApi,
  kafkajs: 'initProducerId',
  versions: range(0, 1),
  args: () => ({ transactionalId: null, transactionTimeout: 5000 }),
  ours: () => createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: 5000 }),
});

add({
  scenario: 'named keys for a topic, all keys for a broker (null)',
  api: DescribeConfigsApi,
  kafkajs: 'describeConfigs',
  versions: range(0, 2),
  args: () => ({
    includeSynonyms: true,
    resources: [
      { type: 2, name: 'orders', configNames: ['cleanup.policy', 'retention.ms'] },
      { type: 4, name: '1' },
    ],
  }),
  ours: (v) =>
    createDescribeConfigsRequest({
      includeSynonyms: v >= 1,
      resources: [
        createDescribeConfigsRequestDescribeConfigsResource({ resourceType: 2, resourceName: 'orders', configurationKeys: ['cleanup.policy', 'retention.ms'] }),
        createDescribeConfigsRequestDescribeConfigsResource({ resourceType: 4, resourceName: '1', configurationKeys: null }),
      ],
    }),
});

add({
  scenario: 'set one topic config',
  api: AlterConfigsApi,
  kafkajs: 'alterConfigs',
  versions: range(0, 1),
  args: () => ({ validateOnly: false, resources: [{ type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '1000' }, { name: 'segment.bytes', value: null }] }] }),
  ours: () =>
    createAlterConfigsRequest({
      validateOnly: false,
      resources: [
        createAlterConfigsRequestAlterConfigsResource({
          resourceType: 2,
          resourceName: 'orders',
          configs: [createAlterConfigsRequestAlterableConfig({ name: 'retention.ms', value: '1000' }), createAlterConfigsRequestAlterableConfig({ name: 'segment.bytes', value: null })],
        }),
      ],
    }),
});

add({
  scenario: 'explicit assignment for one topic, none (null) for another',
  api: CreatePartitionsApi,
  kafkajs: 'createPartitions',
  versions: range(0, 1),
  args: () => ({
    timeout: 5000,
    validateOnly: true,
    topicPartitions: [
      { topic: 'orders', count: 5, assignments: [[1, 2], [2, 3]] },
      { topic: 'audit', count: 4 },
    ],
  }),
  ours: () =>
    createCreatePartitionsRequest({
      timeoutMs: 5000,
      validateOnly: true,
      topics: [
        createCreatePartitionsRequestCreatePartitionsTopic({
          name: 'orders',
          count: 5,
          assignments: [createCreatePartitionsRequestCreatePartitionsAssignment({ brokerIds: [1, 2] }), createCreatePartitionsRequestCreatePartitionsAssignment({ brokerIds: [2, 3] })],
        }),
        createCreatePartitionsRequestCreatePartitionsTopic({ name: 'audit', count: 4, assignments: null }),
      ],
    }),
});

// ---- Transactions ---------------------------------------------------------------------------------------

const txn = { transactionalId: 'tx-golden', producerId: '4000', producerEpoch: 2 };

add({
  scenario: 'two partitions of one topic',
  api: AddPartitionsToTxnApi,
  kafkajs: 'addPartitionsToTxn',
  versions: range(0, 1),
  args: () => ({ ...txn, topics: [{ topic: 'orders', partitions: [0, 1] }] }),
  ours: () =>
    createAddPartitionsToTxnRequest({
      v3AndBelowTransactionalId: 'tx-golden',
      v3AndBelowProducerId: 4000n,
      v3AndBelowProducerEpoch: 2,
      v3AndBelowTopics: [createAddPartitionsToTxnRequestAddPartitionsToTxnTopic({ name: 'orders', partitions: [0, 1] })],
    }),
});

add({
  scenario: 'consumer group offsets',
  api: AddOffsetsToTxnApi,
  kafkajs: 'addOffsetsToTxn',
  versions: range(0, 1),
  args: () => ({ ...txn, groupId: 'golden-group' }),
  ours: () => createAddOffsetsToTxnRequest({ transactionalId: 'tx-golden', producerId: 4000n, producerEpoch: 2, groupId: 'golden-group' }),
});

add({
  scenario: 'commit',
  api: EndTxnApi,
  kafkajs: 'endTxn',
  versions: range(0, 1),
  args: () => ({ ...txn, transactionResult: true }),
  ours: () => createEndTxnRequest({ transactionalId: 'tx-golden', producerId: 4000n, producerEpoch: 2, committed: true }),
});

add({
  scenario: 'one partition offset',
  api: TxnOffsetCommitApi,
  kafkajs: 'txnOffsetCommit',
  versions: range(0, 1),
  args: () => ({ ...txn, groupId: 'golden-group', topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '100', metadata: null }] }] }),
  ours: () =>
    createTxnOffsetCommitRequest({
      transactionalId: 'tx-golden',
      groupId: 'golden-group',
      producerId: 4000n,
      producerEpoch: 2,
      topics: [createTxnOffsetCommitRequestTopic({ name: 'orders', partitions: [createTxnOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 100n, committedMetadata: null })] })],
    }),
});

// ---- ACLs -----------------------------------------------------------------------------------------------

// resource type 2 = TOPIC, pattern type 3 = LITERAL, operation 3 = READ, permission 3 = ALLOW.
const acl = { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 };

add({
  scenario: 'allow alice to read a topic',
  api: CreateAclsApi,
  kafkajs: 'createAcls',
  versions: range(0, 1),
  args: () => ({ creations: [acl] }),
  ours: () => createCreateAclsRequest({ creations: [createCreateAclsRequestAclCreation({ resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '*', operation: 3, permissionType: 3 })] }),
});

add({
  scenario: 'filter by topic and principal',
  api: DescribeAclsApi,
  kafkajs: 'describeAcls',
  versions: range(0, 1),
  args: () => acl,
  ours: () => createDescribeAclsRequest({ resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '*', operation: 3, permissionType: 3 }),
});

add({
  scenario: 'filter by topic and principal',
  api: DeleteAclsApi,
  kafkajs: 'deleteAcls',
  versions: range(0, 1),
  args: () => ({ filters: [acl] }),
  ours: () =>
    createDeleteAclsRequest({
      filters: [createDeleteAclsRequestDeleteAclsFilter({ resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '*', operation: 3, permissionType: 3 })],
    }),
});

// ---- The two flexible requests kafkajs sends ------------------------------------------------------------

add({
  scenario: 'move two partitions (flexible v0)',
  api: AlterPartitionReassignmentsApi,
  kafkajs: 'alterPartitionReassignments',
  versions: [0],
  args: () => ({
    timeout: 5000,
    topics: [
      {
        topic: 'orders',
        partitionAssignment: [
          { partition: 0, replicas: [1, 2, 3] },
          { partition: 1, replicas: [3] },
        ],
      },
    ],
  }),
  ours: () =>
    createAlterPartitionReassignmentsRequest({
      timeoutMs: 5000,
      topics: [
        createAlterPartitionReassignmentsRequestReassignableTopic({
          name: 'orders',
          partitions: [
            createAlterPartitionReassignmentsRequestReassignablePartition({ partitionIndex: 0, replicas: [1, 2, 3] }),
            createAlterPartitionReassignmentsRequestReassignablePartition({ partitionIndex: 1, replicas: [3] }),
          ],
        }),
      ],
    }),
});

add({
  scenario: 'one topic (flexible v0)',
  api: ListPartitionReassignmentsApi,
  kafkajs: 'listPartitionReassignments',
  versions: [0],
  args: () => ({ timeout: 5000, topics: [{ topic: 'orders', partitions: [0, 1] }] }),
  ours: () =>
    createListPartitionReassignmentsRequest({
      timeoutMs: 5000,
      topics: [createListPartitionReassignmentsRequestListPartitionReassignmentsTopics({ name: 'orders', partitionIndexes: [0, 1] })],
    }),
});

add({
  scenario: 'every reassignment (null topics, flexible v0)',
  api: ListPartitionReassignmentsApi,
  kafkajs: 'listPartitionReassignments',
  versions: [0],
  args: () => ({ timeout: 5000, topics: null }),
  ours: () => createListPartitionReassignmentsRequest({ timeoutMs: 5000, topics: null }),
});

// ---------------------------------------------------------------------------------------------------------

const rows = cases.flatMap((c) => c.versions.map((v) => ({ label: `${c.api.name} v${v}: ${c.scenario}`, c, v })));

function ourFrame(c: RequestCase<unknown>, v: number): Buffer {
  return Buffer.concat(encodeRequestFrame(c.api, v, CORRELATION_ID, CLIENT_ID, c.ours(v)));
}

describe('requests kafkajs 2.2.4 sends', () => {
  it.each(rows)('$label: the body is byte-identical', async ({ c, v }) => {
    const { request } = kafkajsProtocol(c.kafkajs, v, c.args(v));
    expect(request.apiKey).toBe(c.api.apiKey);
    expect(request.apiVersion).toBe(v);
    const theirs = await kafkajsRequestBody(request);
    const ours = encodeWith(c.api.request, c.ours(v), v);
    if (isFlexible(c.api, v)) {
      // kafkajs writes the v2 header's empty tag buffer as the first body byte (see the file comment).
      expect(theirs[0]).toBe(0);
      expect(hex(theirs.subarray(1))).toBe(hex(ours));
    } else {
      expect(hex(theirs)).toBe(hex(ours));
    }
  });

  it.each(rows)('$label: the whole frame (size, header, body) is byte-identical', async ({ c, v }) => {
    const { request } = kafkajsProtocol(c.kafkajs, v, c.args(v));
    const theirs = await kafkajsRequestFrame(request, CORRELATION_ID, CLIENT_ID);
    expect(hex(theirs)).toBe(hex(ourFrame(c, v)));
  });

  it.each(rows)('$label: decodes kafkajs\'s frame into the same message', async ({ c, v }) => {
    const { request } = kafkajsProtocol(c.kafkajs, v, c.args(v));
    const frame = await kafkajsRequestFrame(request, CORRELATION_ID, CLIENT_ID);
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    const r = new Reader(frame, 4);
    const { header, api, versionKnown } = readRequestHeader(r);
    expect(api).toBe(c.api);
    expect(versionKnown).toBe(true);
    expect(header).toMatchObject({ requestApiKey: c.api.apiKey, requestApiVersion: v, correlationId: CORRELATION_ID, clientId: CLIENT_ID });
    const decoded = c.api.request.decode(r, v);
    r.complete();
    expect(decoded).toEqual(c.ours(v));
  });
});

describe('coverage', () => {
  it('compares every request version kafkajs 2.2.4 implements for the APIs above', () => {
    const covered = new Map<string, Set<number>>();
    for (const c of cases) {
      const set = covered.get(c.kafkajs) ?? new Set<number>();
      for (const v of c.versions) set.add(v);
      covered.set(c.kafkajs, set);
    }
    for (const [api, versions] of covered) expect([...versions].sort((a, b) => a - b), api).toEqual(kafkajsVersions(api));
  });
});
