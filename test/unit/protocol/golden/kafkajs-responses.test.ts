/**
 * Responses written by the generated codec, read by kafkajs 2.2.4's own response decoders: for every
 * response version kafkajs can receive, a response frame from `encodeResponseFrame` is stripped of its
 * size and correlation id (as kafkajs's connection does), decoded by kafkajs, and the decoded value must
 * equal what a client would expect field by field. kafkajs decoders do not check for trailing bytes, so the
 * test also requires that kafkajs's top-level decoder consumed the whole payload, and that its `parse`
 * accepts the response.
 *
 * kafkajs behaviours pinned here:
 * - From the version where Kafka started throttling on the client side (KIP-219), kafkajs reports the
 *   broker's throttle as `clientSideThrottleTime` and `throttleTime: 0`.
 * - DeleteGroups v1: kafkajs reads `throttleTimeMs` but copies `throttleTime` into
 *   `clientSideThrottleTime`, so that value is always undefined (a kafkajs bug).
 * - AlterPartitionReassignments v0 / ListPartitionReassignments v0 (flexible): kafkajs reads the response
 *   header's tag buffer as the first body byte and never reads the body's final tag buffer.
 * - Fetch v5+: the log start offset is reported as `lastStartOffset`.
 * - CreateTopics, DeleteTopics, CreatePartitions and DeleteRecords results are sorted by topic name.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor } from '../../../../protocol/api.js';
import { encodeResponseFrame } from '../../../../protocol/headers.js';
import * as produce from '../../../../protocol/messages/000-produce.gen.js';
import * as fetch from '../../../../protocol/messages/001-fetch.gen.js';
import * as listOffsets from '../../../../protocol/messages/002-list-offsets.gen.js';
import * as metadata from '../../../../protocol/messages/003-metadata.gen.js';
import * as offsetCommit from '../../../../protocol/messages/008-offset-commit.gen.js';
import * as offsetFetch from '../../../../protocol/messages/009-offset-fetch.gen.js';
import * as findCoordinator from '../../../../protocol/messages/010-find-coordinator.gen.js';
import * as joinGroup from '../../../../protocol/messages/011-join-group.gen.js';
import * as heartbeat from '../../../../protocol/messages/012-heartbeat.gen.js';
import * as leaveGroup from '../../../../protocol/messages/013-leave-group.gen.js';
import * as syncGroup from '../../../../protocol/messages/014-sync-group.gen.js';
import * as describeGroups from '../../../../protocol/messages/015-describe-groups.gen.js';
import * as listGroups from '../../../../protocol/messages/016-list-groups.gen.js';
import * as saslHandshake from '../../../../protocol/messages/017-sasl-handshake.gen.js';
import * as apiVersions from '../../../../protocol/messages/018-api-versions.gen.js';
import * as createTopics from '../../../../protocol/messages/019-create-topics.gen.js';
import * as deleteTopics from '../../../../protocol/messages/020-delete-topics.gen.js';
import * as deleteRecords from '../../../../protocol/messages/021-delete-records.gen.js';
import * as initProducerId from '../../../../protocol/messages/022-init-producer-id.gen.js';
import * as addPartitionsToTxn from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import * as addOffsetsToTxn from '../../../../protocol/messages/025-add-offsets-to-txn.gen.js';
import * as endTxn from '../../../../protocol/messages/026-end-txn.gen.js';
import * as txnOffsetCommit from '../../../../protocol/messages/028-txn-offset-commit.gen.js';
import * as describeAcls from '../../../../protocol/messages/029-describe-acls.gen.js';
import * as createAcls from '../../../../protocol/messages/030-create-acls.gen.js';
import * as deleteAcls from '../../../../protocol/messages/031-delete-acls.gen.js';
import * as describeConfigs from '../../../../protocol/messages/032-describe-configs.gen.js';
import * as alterConfigs from '../../../../protocol/messages/033-alter-configs.gen.js';
import * as saslAuthenticate from '../../../../protocol/messages/036-sasl-authenticate.gen.js';
import * as createPartitions from '../../../../protocol/messages/037-create-partitions.gen.js';
import * as deleteGroups from '../../../../protocol/messages/042-delete-groups.gen.js';
import * as alterReassignments from '../../../../protocol/messages/045-alter-partition-reassignments.gen.js';
import * as listReassignments from '../../../../protocol/messages/046-list-partition-reassignments.gen.js';
import { kafkajsAssignerProtocol, kafkajsDecode, kafkajsProtocol, kafkajsVersions, legacyMessageSet, recordBatchV2 } from '../../../support/golden.js';

interface ResponseCase<Res> {
  scenario: string;
  api: ApiDescriptor<unknown, Res>;
  kafkajs: string;
  versions: number[];
  /** Arguments kafkajs's `protocol({ version })` needs to build its response codec (DeleteRecords). */
  args?: unknown;
  ours: (v: number) => Res;
  /** What kafkajs's `decode` must return. */
  expected: (v: number) => unknown;
  /** Bytes kafkajs leaves unread at the end (only the flexible APIs' final tag buffer). */
  unread?: number;
}

const cases: ResponseCase<unknown>[] = [];
function add<Res>(c: ResponseCase<Res>): void {
  cases.push(c as ResponseCase<unknown>);
}
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

const THROTTLE = 25;
const T0 = 1_700_000_000_000;
const CORRELATION_ID = 0x0a0b0c0d;

/**
 * kafkajs's throttle fields: none before `since`; `throttleTime` up to the version before
 * `clientSideSince`; from there `throttleTime: 0` and `clientSideThrottleTime` (KIP-219).
 */
function throttle(v: number, since: number, clientSideSince: number): Record<string, number> {
  if (v < since) return {};
  if (v < clientSideSince) return { throttleTime: THROTTLE };
  return { throttleTime: 0, clientSideThrottleTime: THROTTLE };
}
const ours = (v: number, since: number): number => (v >= since ? THROTTLE : 0);

// ---- ApiVersions, Metadata ------------------------------------------------------------------------------

add({
  scenario: 'three APIs',
  api: apiVersions.ApiVersionsApi,
  kafkajs: 'apiVersions',
  versions: range(0, 2),
  ours: (v) =>
    apiVersions.createApiVersionsResponse({
      errorCode: 0,
      throttleTimeMs: ours(v, 1),
      apiKeys: [
        apiVersions.createApiVersionsResponseApiVersion({ apiKey: 0, minVersion: 3, maxVersion: 11 }),
        apiVersions.createApiVersionsResponseApiVersion({ apiKey: 1, minVersion: 4, maxVersion: 17 }),
        apiVersions.createApiVersionsResponseApiVersion({ apiKey: 18, minVersion: 0, maxVersion: 4 }),
      ],
    }),
  expected: (v) => ({
    errorCode: 0,
    apiVersions: [
      { apiKey: 0, minVersion: 3, maxVersion: 11 },
      { apiKey: 1, minVersion: 4, maxVersion: 17 },
      { apiKey: 18, minVersion: 0, maxVersion: 4 },
    ],
    ...throttle(v, 1, 2),
  }),
});

add({
  scenario: 'two brokers (one without rack), a user topic and an internal topic',
  api: metadata.MetadataApi,
  kafkajs: 'metadata',
  versions: range(0, 6),
  ours: (v) =>
    metadata.createMetadataResponse({
      throttleTimeMs: ours(v, 3),
      brokers: [
        metadata.createMetadataResponseBroker({ nodeId: 1, host: 'broker-1.local', port: 9092, rack: v >= 1 ? 'rack-a' : null }),
        metadata.createMetadataResponseBroker({ nodeId: 2, host: 'broker-2.local', port: 9093, rack: null }),
      ],
      clusterId: v >= 2 ? 'cluster-golden' : null,
      controllerId: v >= 1 ? 1 : -1,
      topics: [
        metadata.createMetadataResponseTopic({
          errorCode: 0,
          name: 'orders',
          partitions: [
            metadata.createMetadataResponsePartition({ errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1, 2], isrNodes: [1, 2], offlineReplicas: v >= 5 ? [3] : [] }),
            metadata.createMetadataResponsePartition({ errorCode: 0, partitionIndex: 1, leaderId: 2, replicaNodes: [2], isrNodes: [2] }),
          ],
        }),
        metadata.createMetadataResponseTopic({ errorCode: 0, name: '__consumer_offsets', isInternal: v >= 1, partitions: [] }),
      ],
    }),
  expected: (v) => {
    const partition = (id: number, leader: number, replicas: number[], offline: number[]) => ({
      partitionErrorCode: 0,
      partitionId: id,
      leader,
      replicas,
      isr: replicas,
      ...(v >= 5 ? { offlineReplicas: offline } : {}),
    });
    return {
      ...throttle(v, 3, 6),
      brokers: [
        { nodeId: 1, host: 'broker-1.local', port: 9092, ...(v >= 1 ? { rack: 'rack-a' } : {}) },
        { nodeId: 2, host: 'broker-2.local', port: 9093, ...(v >= 1 ? { rack: null } : {}) },
      ],
      ...(v >= 2 ? { clusterId: 'cluster-golden' } : {}),
      ...(v >= 1 ? { controllerId: 1 } : {}),
      topicMetadata: [
        { topicErrorCode: 0, topic: 'orders', ...(v >= 1 ? { isInternal: false } : {}), partitionMetadata: [partition(0, 1, [1, 2], [3]), partition(1, 2, [2], [])] },
        { topicErrorCode: 0, topic: '__consumer_offsets', ...(v >= 1 ? { isInternal: true } : {}), partitionMetadata: [] },
      ],
    };
  },
});

// ---- Produce, Fetch, ListOffsets ------------------------------------------------------------------------

add({
  scenario: 'two partitions, one offset above 2^53',
  api: produce.ProduceApi,
  kafkajs: 'produce',
  versions: range(0, 7),
  ours: (v) =>
    produce.createProduceResponse({
      throttleTimeMs: ours(v, 1),
      responses: [
        produce.createProduceResponseTopicProduceResponse({
          name: 'orders',
          partitionResponses: [
            produce.createProduceResponsePartitionProduceResponse({ index: 0, errorCode: 0, baseOffset: 100n, logAppendTimeMs: v >= 2 ? BigInt(T0) : -1n, logStartOffset: v >= 5 ? 7n : -1n }),
            produce.createProduceResponsePartitionProduceResponse({ index: 3, errorCode: 0, baseOffset: 9007199254740993n }),
          ],
        }),
      ],
    }),
  expected: (v) => {
    const p = (partition: number, offset: string, appendTime: string, logStart: string) =>
      v < 3
        ? { partition, errorCode: 0, offset, ...(v >= 2 ? { timestamp: appendTime } : {}) }
        : { partition, errorCode: 0, baseOffset: offset, logAppendTime: appendTime, ...(v >= 5 ? { logStartOffset: logStart } : {}) };
    return {
      topics: [{ topicName: 'orders', partitions: [p(0, '100', String(T0), '7'), p(3, '9007199254740993', '-1', '-1')] }],
      ...throttle(v, 1, 6),
    };
  },
});

function fetchRecords(v: number): Buffer {
  if (v < 4) {
    // Fetch v0-1 return message format v0, v2-3 may return v1 (timestamps).
    return legacyMessageSet(v < 2 ? 0 : 1, [
      { offset: 42n, timestamp: BigInt(T0), key: Buffer.from('k1'), value: Buffer.from('v1') },
      { offset: 43n, timestamp: BigInt(T0 + 5), key: null, value: Buffer.from('v2') },
    ]);
  }
  return recordBatchV2({
    baseOffset: 42n,
    partitionLeaderEpoch: 3,
    baseTimestamp: BigInt(T0),
    maxTimestamp: BigInt(T0 + 5),
    records: [
      { timestampDelta: 0, key: Buffer.from('k1'), value: Buffer.from('v1'), headers: [{ key: 'trace', value: Buffer.from('abc') }] },
      { timestampDelta: 5, key: null, value: Buffer.from('v2') },
    ],
  });
}

add({
  scenario: 'a partition with two records and an aborted transaction, an empty partition',
  api: fetch.FetchApi,
  kafkajs: 'fetch',
  versions: range(0, 11),
  ours: (v) =>
    fetch.createFetchResponse({
      throttleTimeMs: ours(v, 1),
      errorCode: 0,
      sessionId: v >= 7 ? 77 : 0,
      responses: [
        fetch.createFetchResponseFetchableTopicResponse({
          topic: 'orders',
          partitions: [
            fetch.createFetchResponsePartitionData({
              partitionIndex: 0,
              errorCode: 0,
              highWatermark: 44n,
              lastStableOffset: v >= 4 ? 40n : -1n,
              logStartOffset: v >= 5 ? 7n : -1n,
              abortedTransactions: v >= 4 ? [fetch.createFetchResponseAbortedTransaction({ producerId: 4000n, firstOffset: 40n })] : null,
              preferredReadReplica: v >= 11 ? 2 : -1,
              records: fetchRecords(v),
            }),
            // Kafka writes empty records for a partition with nothing to return; v4+ also allow null.
            fetch.createFetchResponsePartitionData({ partitionIndex: 1, errorCode: 0, highWatermark: 0n, records: v >= 4 ? null : Buffer.alloc(0) }),
          ],
        }),
      ],
    }),
  expected: (v) => {
    const partition = (index: number, hw: string, lso: string, lss: string, aborted: unknown[], replica: number) => ({
      partition: index,
      errorCode: 0,
      highWatermark: hw,
      ...(v >= 4 ? { lastStableOffset: lso } : {}),
      ...(v >= 5 ? { lastStartOffset: lss } : {}),
      ...(v >= 4 ? { abortedTransactions: aborted } : {}),
      ...(v >= 11 ? { preferredReadReplica: replica } : {}),
      messages: expect.any(Array),
    });
    return {
      ...throttle(v, 1, 8),
      ...(v >= 7 ? { errorCode: 0, sessionId: 77 } : {}),
      responses: [
        {
          topicName: 'orders',
          partitions: [partition(0, '44', '40', '7', [{ producerId: '4000', firstOffset: '40' }], 2), partition(1, '0', '-1', '-1', [], -1)],
        },
      ],
    };
  },
});

add({
  scenario: 'latest offset (v0 old-style offsets)',
  api: listOffsets.ListOffsetsApi,
  kafkajs: 'listOffsets',
  versions: range(0, 3),
  ours: (v) =>
    listOffsets.createListOffsetsResponse({
      throttleTimeMs: ours(v, 2),
      topics: [
        listOffsets.createListOffsetsResponseListOffsetsTopicResponse({
          name: 'orders',
          partitions: [
            listOffsets.createListOffsetsResponseListOffsetsPartitionResponse({
              partitionIndex: 0,
              errorCode: 0,
              oldStyleOffsets: v === 0 ? [42n, 0n] : [],
              timestamp: v >= 1 ? BigInt(T0) : -1n,
              offset: v >= 1 ? 42n : -1n,
            }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 2, 3),
    responses: [{ topic: 'orders', partitions: [v === 0 ? { partition: 0, errorCode: 0, offsets: ['42', '0'] } : { partition: 0, errorCode: 0, timestamp: String(T0), offset: '42' }] }],
  }),
});

// ---- Consumer groups ------------------------------------------------------------------------------------

add({
  scenario: 'two partitions committed',
  api: offsetCommit.OffsetCommitApi,
  kafkajs: 'offsetCommit',
  versions: range(0, 5),
  ours: (v) =>
    offsetCommit.createOffsetCommitResponse({
      throttleTimeMs: ours(v, 3),
      topics: [
        offsetCommit.createOffsetCommitResponseTopic({
          name: 'orders',
          partitions: [offsetCommit.createOffsetCommitResponsePartition({ partitionIndex: 0, errorCode: 0 }), offsetCommit.createOffsetCommitResponsePartition({ partitionIndex: 1, errorCode: 0 })],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 3, 4),
    responses: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, errorCode: 0 },
          { partition: 1, errorCode: 0 },
        ],
      },
    ],
  }),
});

add({
  scenario: 'a committed offset with metadata and an uncommitted partition',
  api: offsetFetch.OffsetFetchApi,
  kafkajs: 'offsetFetch',
  versions: range(1, 4),
  ours: (v) =>
    offsetFetch.createOffsetFetchResponse({
      throttleTimeMs: ours(v, 3),
      errorCode: 0,
      topics: [
        offsetFetch.createOffsetFetchResponseTopic({
          name: 'orders',
          partitions: [
            offsetFetch.createOffsetFetchResponsePartition({ partitionIndex: 0, committedOffset: 100n, metadata: 'checkpoint', errorCode: 0 }),
            offsetFetch.createOffsetFetchResponsePartition({ partitionIndex: 1, committedOffset: -1n, metadata: '', errorCode: 0 }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 3, 4),
    responses: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, offset: '100', metadata: 'checkpoint', errorCode: 0 },
          { partition: 1, offset: '-1', metadata: '', errorCode: 0 },
        ],
      },
    ],
    ...(v >= 2 ? { errorCode: 0 } : {}),
  }),
});

add({
  scenario: 'coordinator found',
  api: findCoordinator.FindCoordinatorApi,
  kafkajs: 'findCoordinator',
  versions: range(0, 2),
  ours: (v) => findCoordinator.createFindCoordinatorResponse({ throttleTimeMs: ours(v, 1), errorCode: 0, errorMessage: null, nodeId: 2, host: 'broker-2.local', port: 9093 }),
  expected: (v) => ({ ...throttle(v, 1, 2), errorCode: 0, ...(v >= 1 ? { errorMessage: null } : {}), coordinator: { nodeId: 2, host: 'broker-2.local', port: 9093 } }),
});

const memberMetadata = kafkajsAssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['orders'] });
const memberAssignment = kafkajsAssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { orders: [0, 1] } });

add({
  scenario: 'leader with two members, one static (v5)',
  api: joinGroup.JoinGroupApi,
  kafkajs: 'joinGroup',
  versions: range(0, 5),
  ours: (v) =>
    joinGroup.createJoinGroupResponse({
      throttleTimeMs: ours(v, 2),
      errorCode: 0,
      generationId: 4,
      protocolName: 'RoundRobinAssigner',
      leader: 'member-1',
      memberId: 'member-1',
      members: [
        joinGroup.createJoinGroupResponseMember({ memberId: 'member-1', groupInstanceId: v >= 5 ? 'instance-1' : null, metadata: memberMetadata }),
        joinGroup.createJoinGroupResponseMember({ memberId: 'member-2', metadata: memberMetadata }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 2, 3),
    errorCode: 0,
    generationId: 4,
    groupProtocol: 'RoundRobinAssigner',
    leaderId: 'member-1',
    memberId: 'member-1',
    members: [
      { memberId: 'member-1', ...(v >= 5 ? { groupInstanceId: 'instance-1' } : {}), memberMetadata },
      { memberId: 'member-2', ...(v >= 5 ? { groupInstanceId: null } : {}), memberMetadata },
    ],
  }),
});

add({
  scenario: 'assignment delivered',
  api: syncGroup.SyncGroupApi,
  kafkajs: 'syncGroup',
  versions: range(0, 3),
  ours: (v) => syncGroup.createSyncGroupResponse({ throttleTimeMs: ours(v, 1), errorCode: 0, assignment: memberAssignment }),
  expected: (v) => ({ ...throttle(v, 1, 2), errorCode: 0, memberAssignment }),
});

add({
  scenario: 'ok',
  api: heartbeat.HeartbeatApi,
  kafkajs: 'heartbeat',
  versions: range(0, 3),
  ours: (v) => heartbeat.createHeartbeatResponse({ throttleTimeMs: ours(v, 1), errorCode: 0 }),
  expected: (v) => ({ ...throttle(v, 1, 2), errorCode: 0 }),
});

add({
  scenario: 'member left (v3 per-member results)',
  api: leaveGroup.LeaveGroupApi,
  kafkajs: 'leaveGroup',
  versions: range(0, 3),
  ours: (v) =>
    leaveGroup.createLeaveGroupResponse({
      throttleTimeMs: ours(v, 1),
      errorCode: 0,
      members: v >= 3 ? [leaveGroup.createLeaveGroupResponseMemberResponse({ memberId: 'member-1', groupInstanceId: null, errorCode: 0 })] : [],
    }),
  expected: (v) => ({ ...throttle(v, 1, 2), errorCode: 0, ...(v >= 3 ? { members: [{ memberId: 'member-1', groupInstanceId: null, errorCode: 0 }] } : {}) }),
});

add({
  scenario: 'a stable group with one member',
  api: describeGroups.DescribeGroupsApi,
  kafkajs: 'describeGroups',
  versions: range(0, 2),
  ours: (v) =>
    describeGroups.createDescribeGroupsResponse({
      throttleTimeMs: ours(v, 1),
      groups: [
        describeGroups.createDescribeGroupsResponseDescribedGroup({
          errorCode: 0,
          groupId: 'golden-group',
          groupState: 'Stable',
          protocolType: 'consumer',
          protocolData: 'RoundRobinAssigner',
          members: [
            describeGroups.createDescribeGroupsResponseDescribedGroupMember({
              memberId: 'member-1',
              clientId: 'client-1',
              clientHost: '/127.0.0.1',
              memberMetadata,
              memberAssignment,
            }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 1, 2),
    groups: [
      {
        errorCode: 0,
        groupId: 'golden-group',
        state: 'Stable',
        protocolType: 'consumer',
        protocol: 'RoundRobinAssigner',
        members: [{ memberId: 'member-1', clientId: 'client-1', clientHost: '/127.0.0.1', memberMetadata, memberAssignment }],
      },
    ],
  }),
});

add({
  scenario: 'two groups',
  api: listGroups.ListGroupsApi,
  kafkajs: 'listGroups',
  versions: range(0, 2),
  ours: (v) =>
    listGroups.createListGroupsResponse({
      throttleTimeMs: ours(v, 1),
      errorCode: 0,
      groups: [listGroups.createListGroupsResponseListedGroup({ groupId: 'golden-group', protocolType: 'consumer' }), listGroups.createListGroupsResponseListedGroup({ groupId: 'connect', protocolType: '' })],
    }),
  expected: (v) => ({
    ...throttle(v, 1, 2),
    errorCode: 0,
    groups: [
      { groupId: 'golden-group', protocolType: 'consumer' },
      { groupId: 'connect', protocolType: '' },
    ],
  }),
});

add({
  scenario: 'two groups deleted',
  api: deleteGroups.DeleteGroupsApi,
  kafkajs: 'deleteGroups',
  versions: range(0, 1),
  ours: () =>
    deleteGroups.createDeleteGroupsResponse({
      throttleTimeMs: THROTTLE,
      results: [deleteGroups.createDeleteGroupsResponseDeletableGroupResult({ groupId: 'golden-group', errorCode: 0 }), deleteGroups.createDeleteGroupsResponseDeletableGroupResult({ groupId: 'other', errorCode: 0 })],
    }),
  expected: (v) => ({
    throttleTimeMs: THROTTLE,
    results: [
      { groupId: 'golden-group', errorCode: 0 },
      { groupId: 'other', errorCode: 0 },
    ],
    ...(v >= 1 ? { throttleTime: 0, clientSideThrottleTime: undefined } : {}),
  }),
});

// ---- SASL -----------------------------------------------------------------------------------------------

add({
  scenario: 'mechanisms',
  api: saslHandshake.SaslHandshakeApi,
  kafkajs: 'saslHandshake',
  versions: range(0, 1),
  ours: () => saslHandshake.createSaslHandshakeResponse({ errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] }),
  expected: () => ({ errorCode: 0, enabledMechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] }),
});

const serverFinal = Buffer.from('v=rmF9pqV8S7suAoZWja4dJRkFsKQ=', 'utf8');
add({
  scenario: 'SCRAM server-final message',
  api: saslAuthenticate.SaslAuthenticateApi,
  kafkajs: 'saslAuthenticate',
  versions: range(0, 1),
  ours: (v) => saslAuthenticate.createSaslAuthenticateResponse({ errorCode: 0, errorMessage: null, authBytes: serverFinal, sessionLifetimeMs: v >= 1 ? 3_600_000n : 0n }),
  expected: (v) => ({
    errorCode: 0,
    errorMessage: null,
    // kafkajs re-frames the bytes (int32 length + data) for its SASL mechanisms.
    authBytes: Buffer.concat([Buffer.from([0, 0, 0, serverFinal.length]), serverFinal]),
    ...(v >= 1 ? { sessionLifetimeMs: '3600000' } : {}),
  }),
});

// ---- Admin ----------------------------------------------------------------------------------------------

add({
  scenario: 'two topics created (kafkajs sorts them)',
  api: createTopics.CreateTopicsApi,
  kafkajs: 'createTopics',
  versions: range(0, 3),
  ours: (v) =>
    createTopics.createCreateTopicsResponse({
      throttleTimeMs: ours(v, 2),
      topics: [
        createTopics.createCreateTopicsResponseCreatableTopicResult({ name: 'orders', errorCode: 0, errorMessage: null }),
        createTopics.createCreateTopicsResponseCreatableTopicResult({ name: 'audit', errorCode: 0, errorMessage: null }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 2, 3),
    topicErrors: [
      { topic: 'audit', errorCode: 0, ...(v >= 1 ? { errorMessage: null } : {}) },
      { topic: 'orders', errorCode: 0, ...(v >= 1 ? { errorMessage: null } : {}) },
    ],
  }),
});

add({
  scenario: 'two topics deleted',
  api: deleteTopics.DeleteTopicsApi,
  kafkajs: 'deleteTopics',
  versions: range(0, 1),
  ours: (v) =>
    deleteTopics.createDeleteTopicsResponse({
      throttleTimeMs: ours(v, 1),
      responses: [deleteTopics.createDeleteTopicsResponseDeletableTopicResult({ name: 'orders', errorCode: 0 }), deleteTopics.createDeleteTopicsResponseDeletableTopicResult({ name: 'audit', errorCode: 0 })],
    }),
  expected: (v) => ({
    ...throttle(v, 1, 1),
    topicErrors: [
      { topic: 'audit', errorCode: 0 },
      { topic: 'orders', errorCode: 0 },
    ],
  }),
});

add({
  scenario: 'records deleted up to a low watermark',
  api: deleteRecords.DeleteRecordsApi,
  kafkajs: 'deleteRecords',
  versions: range(0, 1),
  args: { topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '42' }] }] },
  ours: () =>
    deleteRecords.createDeleteRecordsResponse({
      throttleTimeMs: THROTTLE,
      topics: [
        deleteRecords.createDeleteRecordsResponseDeleteRecordsTopicResult({
          name: 'orders',
          partitions: [deleteRecords.createDeleteRecordsResponseDeleteRecordsPartitionResult({ partitionIndex: 0, lowWatermark: 42n, errorCode: 0 })],
        }),
      ],
    }),
  expected: (v) => ({ ...throttle(v, 0, 1), topics: [{ topic: 'orders', partitions: [{ partition: 0, lowWatermark: 42n, errorCode: 0 }] }] }),
});

add({
  scenario: 'producer id granted',
  api: initProducerId.InitProducerIdApi,
  kafkajs: 'initProducerId',
  versions: range(0, 1),
  ours: () => initProducerId.createInitProducerIdResponse({ throttleTimeMs: THROTTLE, errorCode: 0, producerId: 4000n, producerEpoch: 2 }),
  expected: (v) => ({ ...throttle(v, 0, 1), errorCode: 0, producerId: '4000', producerEpoch: 2 }),
});

add({
  scenario: 'a topic with a default and an overridden config (v1+ synonyms)',
  api: describeConfigs.DescribeConfigsApi,
  kafkajs: 'describeConfigs',
  versions: range(0, 2),
  ours: (v) =>
    describeConfigs.createDescribeConfigsResponse({
      throttleTimeMs: THROTTLE,
      results: [
        describeConfigs.createDescribeConfigsResponseDescribeConfigsResult({
          errorCode: 0,
          errorMessage: null,
          resourceType: 2,
          resourceName: 'orders',
          configs: [
            describeConfigs.createDescribeConfigsResponseDescribeConfigsResourceResult({
              name: 'cleanup.policy',
              value: 'compact',
              readOnly: false,
              isDefault: false,
              configSource: v >= 1 ? 1 : -1,
              isSensitive: false,
              synonyms: v >= 1 ? [describeConfigs.createDescribeConfigsResponseDescribeConfigsSynonym({ name: 'cleanup.policy', value: 'compact', source: 1 })] : [],
            }),
            describeConfigs.createDescribeConfigsResponseDescribeConfigsResourceResult({
              name: 'retention.ms',
              value: '604800000',
              readOnly: false,
              isDefault: v === 0,
              configSource: v >= 1 ? 5 : -1,
              isSensitive: false,
            }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 0, 2),
    resources: [
      {
        errorCode: 0,
        errorMessage: null,
        resourceType: 2,
        resourceName: 'orders',
        configEntries: [
          // v0 has no config source on the wire: kafkajs derives TOPIC_CONFIG (1) or DEFAULT_CONFIG (5).
          {
            configName: 'cleanup.policy',
            configValue: 'compact',
            readOnly: false,
            isDefault: false,
            configSource: 1,
            isSensitive: false,
            ...(v >= 1 ? { configSynonyms: [{ configName: 'cleanup.policy', configValue: 'compact', configSource: 1 }] } : {}),
          },
          { configName: 'retention.ms', configValue: '604800000', readOnly: false, isDefault: true, configSource: 5, isSensitive: false, ...(v >= 1 ? { configSynonyms: [] } : {}) },
        ],
      },
    ],
  }),
});

add({
  scenario: 'one resource altered',
  api: alterConfigs.AlterConfigsApi,
  kafkajs: 'alterConfigs',
  versions: range(0, 1),
  ours: () =>
    alterConfigs.createAlterConfigsResponse({
      throttleTimeMs: THROTTLE,
      responses: [alterConfigs.createAlterConfigsResponseAlterConfigsResourceResponse({ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders' })],
    }),
  expected: (v) => ({ ...throttle(v, 0, 1), resources: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders' }] }),
});

add({
  scenario: 'two topics extended (kafkajs sorts them)',
  api: createPartitions.CreatePartitionsApi,
  kafkajs: 'createPartitions',
  versions: range(0, 1),
  ours: () =>
    createPartitions.createCreatePartitionsResponse({
      throttleTimeMs: THROTTLE,
      results: [
        createPartitions.createCreatePartitionsResponseCreatePartitionsTopicResult({ name: 'orders', errorCode: 0, errorMessage: null }),
        createPartitions.createCreatePartitionsResponseCreatePartitionsTopicResult({ name: 'audit', errorCode: 0, errorMessage: null }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 0, 1),
    topicErrors: [
      { topic: 'audit', errorCode: 0, errorMessage: null },
      { topic: 'orders', errorCode: 0, errorMessage: null },
    ],
  }),
});

// ---- Transactions ---------------------------------------------------------------------------------------

add({
  scenario: 'two partitions added',
  api: addPartitionsToTxn.AddPartitionsToTxnApi,
  kafkajs: 'addPartitionsToTxn',
  versions: range(0, 1),
  ours: () =>
    addPartitionsToTxn.createAddPartitionsToTxnResponse({
      throttleTimeMs: THROTTLE,
      resultsByTopicV3AndBelow: [
        addPartitionsToTxn.createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult({
          name: 'orders',
          resultsByPartition: [
            addPartitionsToTxn.createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult({ partitionIndex: 0, partitionErrorCode: 0 }),
            addPartitionsToTxn.createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult({ partitionIndex: 1, partitionErrorCode: 0 }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 0, 1),
    errors: [
      {
        topic: 'orders',
        partitionErrors: [
          { partition: 0, errorCode: 0 },
          { partition: 1, errorCode: 0 },
        ],
      },
    ],
  }),
});

add({
  scenario: 'ok',
  api: addOffsetsToTxn.AddOffsetsToTxnApi,
  kafkajs: 'addOffsetsToTxn',
  versions: range(0, 1),
  ours: () => addOffsetsToTxn.createAddOffsetsToTxnResponse({ throttleTimeMs: THROTTLE, errorCode: 0 }),
  expected: (v) => ({ ...throttle(v, 0, 1), errorCode: 0 }),
});

add({
  scenario: 'ok',
  api: endTxn.EndTxnApi,
  kafkajs: 'endTxn',
  versions: range(0, 1),
  ours: () => endTxn.createEndTxnResponse({ throttleTimeMs: THROTTLE, errorCode: 0 }),
  expected: (v) => ({ ...throttle(v, 0, 1), errorCode: 0 }),
});

add({
  scenario: 'one partition committed',
  api: txnOffsetCommit.TxnOffsetCommitApi,
  kafkajs: 'txnOffsetCommit',
  versions: range(0, 1),
  ours: () =>
    txnOffsetCommit.createTxnOffsetCommitResponse({
      throttleTimeMs: THROTTLE,
      topics: [txnOffsetCommit.createTxnOffsetCommitResponseTopic({ name: 'orders', partitions: [txnOffsetCommit.createTxnOffsetCommitResponsePartition({ partitionIndex: 0, errorCode: 0 })] })],
    }),
  expected: (v) => ({ ...throttle(v, 0, 1), topics: [{ topic: 'orders', partitions: [{ partition: 0, errorCode: 0 }] }] }),
});

// ---- ACLs -----------------------------------------------------------------------------------------------

add({
  scenario: 'one ACL created',
  api: createAcls.CreateAclsApi,
  kafkajs: 'createAcls',
  versions: range(0, 1),
  ours: () => createAcls.createCreateAclsResponse({ throttleTimeMs: THROTTLE, results: [createAcls.createCreateAclsResponseAclCreationResult({ errorCode: 0, errorMessage: null })] }),
  expected: (v) => ({ ...throttle(v, 0, 1), creationResponses: [{ errorCode: 0, errorMessage: null }] }),
});

add({
  scenario: 'one ACL matched and deleted',
  api: deleteAcls.DeleteAclsApi,
  kafkajs: 'deleteAcls',
  versions: range(0, 1),
  ours: () =>
    deleteAcls.createDeleteAclsResponse({
      throttleTimeMs: THROTTLE,
      filterResults: [
        deleteAcls.createDeleteAclsResponseDeleteAclsFilterResult({
          errorCode: 0,
          errorMessage: null,
          matchingAcls: [
            deleteAcls.createDeleteAclsResponseDeleteAclsMatchingAcl({
              errorCode: 0,
              errorMessage: null,
              resourceType: 2,
              resourceName: 'orders',
              patternType: 3,
              principal: 'User:alice',
              host: '*',
              operation: 3,
              permissionType: 3,
            }),
          ],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 0, 1),
    filterResponses: [
      {
        errorCode: 0,
        errorMessage: null,
        matchingAcls: [
          { errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 'orders', ...(v >= 1 ? { resourcePatternType: 3 } : {}), principal: 'User:alice', host: '*', operation: 3, permissionType: 3 },
        ],
      },
    ],
  }),
});

add({
  scenario: 'one resource with one ACL',
  api: describeAcls.DescribeAclsApi,
  kafkajs: 'describeAcls',
  versions: range(0, 1),
  ours: () =>
    describeAcls.createDescribeAclsResponse({
      throttleTimeMs: THROTTLE,
      errorCode: 0,
      errorMessage: null,
      resources: [
        describeAcls.createDescribeAclsResponseDescribeAclsResource({
          resourceType: 2,
          resourceName: 'orders',
          patternType: 3,
          acls: [describeAcls.createDescribeAclsResponseAclDescription({ principal: 'User:alice', host: '*', operation: 3, permissionType: 3 })],
        }),
      ],
    }),
  expected: (v) => ({
    ...throttle(v, 0, 1),
    errorCode: 0,
    errorMessage: null,
    resources: [{ resourceType: 2, resourceName: 'orders', ...(v >= 1 ? { resourcePatternType: 3 } : {}), acls: [{ principal: 'User:alice', host: '*', operation: 3, permissionType: 3 }] }],
  }),
});

// ---- The two flexible responses kafkajs reads -----------------------------------------------------------

add({
  scenario: 'two partitions reassigned (flexible v0)',
  api: alterReassignments.AlterPartitionReassignmentsApi,
  kafkajs: 'alterPartitionReassignments',
  versions: [0],
  unread: 1,
  ours: () =>
    alterReassignments.createAlterPartitionReassignmentsResponse({
      throttleTimeMs: THROTTLE,
      errorCode: 0,
      errorMessage: null,
      responses: [
        alterReassignments.createAlterPartitionReassignmentsResponseReassignableTopicResponse({
          name: 'orders',
          partitions: [
            alterReassignments.createAlterPartitionReassignmentsResponseReassignablePartitionResponse({ partitionIndex: 0, errorCode: 0, errorMessage: null }),
            alterReassignments.createAlterPartitionReassignmentsResponseReassignablePartitionResponse({ partitionIndex: 1, errorCode: 0, errorMessage: null }),
          ],
        }),
      ],
    }),
  expected: () => ({
    throttleTime: THROTTLE,
    errorCode: 0,
    responses: [
      {
        topic: 'orders',
        partitions: [
          { partition: 0, errorCode: 0 },
          { partition: 1, errorCode: 0 },
        ],
      },
    ],
  }),
});

add({
  scenario: 'one ongoing reassignment (flexible v0)',
  api: listReassignments.ListPartitionReassignmentsApi,
  kafkajs: 'listPartitionReassignments',
  versions: [0],
  unread: 1,
  ours: () =>
    listReassignments.createListPartitionReassignmentsResponse({
      throttleTimeMs: THROTTLE,
      errorCode: 0,
      errorMessage: null,
      topics: [
        listReassignments.createListPartitionReassignmentsResponseOngoingTopicReassignment({
          name: 'orders',
          partitions: [listReassignments.createListPartitionReassignmentsResponseOngoingPartitionReassignment({ partitionIndex: 0, replicas: [1, 2, 3], addingReplicas: [3], removingReplicas: [1] })],
        }),
      ],
    }),
  expected: () => ({
    throttleTime: THROTTLE,
    errorCode: 0,
    topics: [{ name: 'orders', partitions: [{ partition: 0, replicas: [1, 2, 3], addingReplicas: [3], removingReplicas: [1] }] }],
  }),
});

// ---------------------------------------------------------------------------------------------------------

const rows = cases.flatMap((c) => c.versions.map((v) => ({ label: `${c.api.name} v${v}: ${c.scenario}`, c, v })));

/** What kafkajs's connection hands a response decoder: the frame after size and correlation id. */
function payloadOf(c: ResponseCase<unknown>, v: number): Buffer {
  const frame = Buffer.concat(encodeResponseFrame(c.api, v, CORRELATION_ID, c.ours(v)));
  expect(frame.readInt32BE(0)).toBe(frame.length - 4);
  expect(frame.readInt32BE(4)).toBe(CORRELATION_ID);
  return frame.subarray(8);
}

describe('responses read by kafkajs 2.2.4', () => {
  it.each(rows)('$label', async ({ c, v }) => {
    const { response } = kafkajsProtocol(c.kafkajs, v, c.args ?? {});
    const { decoded, unread } = await kafkajsDecode(response, payloadOf(c, v));
    expect(decoded).toEqual(c.expected(v));
    expect(unread).toBe(c.unread ?? 0);
    await expect(response.parse(decoded)).resolves.toBeDefined();
  });
});

describe('records inside Fetch responses', () => {
  it.each(range(0, 11))('kafkajs reads the records of a Fetch v%i response', async (v) => {
    const c = cases.find((x) => x.kafkajs === 'fetch')!;
    const { response } = kafkajsProtocol('fetch', v, {});
    const { decoded } = await kafkajsDecode(response, payloadOf(c, v));
    const [withRecords, empty] = decoded.responses[0].partitions;
    expect(empty.messages).toEqual([]);
    const messages = withRecords.messages.map((m: { offset: string; timestamp?: string; key: Buffer | null; value: Buffer; headers?: Record<string, Buffer> }) => ({
      offset: m.offset,
      timestamp: m.timestamp,
      key: m.key?.toString() ?? null,
      value: m.value.toString(),
      headers: m.headers,
    }));
    const hasTimestamps = v >= 2;
    const headers = (h: Record<string, Buffer>) => (v >= 4 ? h : undefined);
    expect(messages).toEqual([
      { offset: '42', timestamp: hasTimestamps ? String(T0) : undefined, key: 'k1', value: 'v1', headers: headers({ trace: Buffer.from('abc') }) },
      { offset: '43', timestamp: hasTimestamps ? String(T0 + 5) : undefined, key: null, value: 'v2', headers: headers({}) },
    ]);
  });
});

describe('coverage', () => {
  it('reads every response version kafkajs 2.2.4 implements for the APIs above', () => {
    const covered = new Map<string, Set<number>>();
    for (const c of cases) {
      const set = covered.get(c.kafkajs) ?? new Set<number>();
      for (const v of c.versions) set.add(v);
      covered.set(c.kafkajs, set);
    }
    for (const [api, versions] of covered) expect([...versions].sort((a, b) => a - b), api).toEqual(kafkajsVersions(api));
  });
});
