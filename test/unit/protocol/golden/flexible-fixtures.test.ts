/**
 * Annotated hex fixtures (test/golden/) for the versions kafkajs never sends: flexible versions (KIP-482)
 * with compact strings, arrays and bytes and tagged fields, built field by field from Kafka's message
 * schemas, and frames captured from real clients (librdkafka 2.0.2 through kcat, Kafka's Java client
 * 4.4.0). Every hand-built fixture was also read and re-serialized by Kafka's own generated Java message
 * classes (kafka-clients 4.4.0), which consumed every byte and wrote the same bytes back.
 *
 * Each fixture must decode into the message written out below, field by field, and that message must
 * encode back to the fixture byte for byte.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor, MessageCodec } from '../../../../protocol/api.js';
import { decodeResponseFrame, encodeRequestFrame, encodeResponseFrame, readRequestHeader } from '../../../../protocol/headers.js';
import * as produce from '../../../../protocol/messages/000-produce.gen.js';
import * as fetch from '../../../../protocol/messages/001-fetch.gen.js';
import * as listOffsets from '../../../../protocol/messages/002-list-offsets.gen.js';
import * as metadata from '../../../../protocol/messages/003-metadata.gen.js';
import * as offsetCommit from '../../../../protocol/messages/008-offset-commit.gen.js';
import * as offsetFetch from '../../../../protocol/messages/009-offset-fetch.gen.js';
import * as findCoordinator from '../../../../protocol/messages/010-find-coordinator.gen.js';
import * as joinGroup from '../../../../protocol/messages/011-join-group.gen.js';
import * as heartbeat from '../../../../protocol/messages/012-heartbeat.gen.js';
import * as syncGroup from '../../../../protocol/messages/014-sync-group.gen.js';
import * as apiVersions from '../../../../protocol/messages/018-api-versions.gen.js';
import * as createTopics from '../../../../protocol/messages/019-create-topics.gen.js';
import * as initProducerId from '../../../../protocol/messages/022-init-producer-id.gen.js';
import * as describeClientQuotas from '../../../../protocol/messages/048-describe-client-quotas.gen.js';
import * as describeCluster from '../../../../protocol/messages/060-describe-cluster.gen.js';
import * as consumerGroupHeartbeat from '../../../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import * as consumerGroupDescribe from '../../../../protocol/messages/069-consumer-group-describe.gen.js';
import * as describeGroups from '../../../../protocol/messages/015-describe-groups.gen.js';
import { encodeRequestHeader } from '../../../../protocol/messages/request-header.gen.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { Writer } from '../../../../protocol/wire/writer.js';
import { ZERO_UUID } from '../../../../protocol/wire/uuid.js';
import { decodeWith, encodeWith, hex, listGoldenFiles, loadGolden, recordBatchV2 } from '../../../support/golden.js';

const TOPIC_ID = 'ABEiM0RVZneImaq7zN3u_w'; // 00 11 22 … ff
const OTHER_TOPIC_ID = 'obLD1OX2BxgpOktcbX6PkA'; // a1 b2 c3 … 90
const DIRECTORY_ID = 'Dx4tPEtaaXiHlqW0w9Lh8A'; // 0f 1e 2d … f0
const KIP848_MEMBER_ID = 'VHxn-AQxTveZLwOLR2Jvyg';
const T0 = 1_700_000_000_000n;

/** The 73-byte record batch inside the Produce and Fetch fixtures: one record, null key, value "hello". */
const HELLO_BATCH = recordBatchV2({
  partitionLeaderEpoch: -1,
  baseTimestamp: T0,
  maxTimestamp: T0,
  producerId: -1n,
  producerEpoch: -1,
  baseSequence: -1,
  records: [{ timestampDelta: 0, key: null, value: Buffer.from('hello') }],
});

/** ConsumerProtocolSubscription v1 (version prefix included) for topic "orders", null user data, no owned partitions. */
const ORDERS_SUBSCRIPTION_V1 = Buffer.from('0001000000010006' + Buffer.from('orders').toString('hex') + 'ffffffff00000000', 'hex');

interface BodyFixture<T> {
  file: string;
  codec: MessageCodec<T>;
  version: number;
  expected: T;
}

const bodies: BodyFixture<unknown>[] = [];
function body<T>(file: string, codec: MessageCodec<T>, version: number, expected: T): void {
  bodies.push({ file, codec, version, expected } as BodyFixture<unknown>);
}

// ---- ApiVersions ----------------------------------------------------------------------------------------

const av = apiVersions;
body('api-versions/v3-response-000.hex', av.ApiVersionsApi.response, 3, av.createApiVersionsResponse({
  errorCode: 0,
  apiKeys: [
    av.createApiVersionsResponseApiVersion({ apiKey: 0, minVersion: 3, maxVersion: 11 }),
    av.createApiVersionsResponseApiVersion({ apiKey: 1, minVersion: 4, maxVersion: 17 }),
    av.createApiVersionsResponseApiVersion({ apiKey: 18, minVersion: 0, maxVersion: 4 }),
  ],
  throttleTimeMs: 0,
  supportedFeatures: [av.createApiVersionsResponseSupportedFeatureKey({ name: 'metadata.version', minVersion: 1, maxVersion: 21 })],
  finalizedFeaturesEpoch: 42n,
  finalizedFeatures: [av.createApiVersionsResponseFinalizedFeatureKey({ name: 'metadata.version', maxVersionLevel: 21, minVersionLevel: 21 })],
  zkMigrationReady: true,
}));

body('api-versions/v3-response-001.hex', av.ApiVersionsApi.response, 3, av.createApiVersionsResponse({
  errorCode: 35,
  apiKeys: [av.createApiVersionsResponseApiVersion({ apiKey: 18, minVersion: 0, maxVersion: 4 })],
}));

// ---- Metadata -------------------------------------------------------------------------------------------

const md = metadata;
body('metadata/v12-request-000.hex', md.MetadataApi.request, 12, md.createMetadataRequest({
  topics: [md.createMetadataRequestTopic({ topicId: TOPIC_ID, name: null }), md.createMetadataRequestTopic({ topicId: ZERO_UUID, name: 'payments' })],
  allowAutoTopicCreation: false,
  includeTopicAuthorizedOperations: true,
}));

body('metadata/v12-request-001.hex', md.MetadataApi.request, 12, md.createMetadataRequest({ topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false }));

body('metadata/v12-request-002.hex', md.MetadataApi.request, 12, md.createMetadataRequest({
  topics: [md.createMetadataRequestTopic({ topicId: ZERO_UUID, name: 't'.repeat(130) }), md.createMetadataRequestTopic({ topicId: ZERO_UUID, name: 'größe-⚖' })],
  allowAutoTopicCreation: true,
  includeTopicAuthorizedOperations: false,
}));

body('metadata/v12-response-000.hex', md.MetadataApi.response, 12, md.createMetadataResponse({
  throttleTimeMs: 0,
  brokers: [
    md.createMetadataResponseBroker({ nodeId: 1, host: 'broker-1', port: 9092, rack: 'rack-a' }),
    md.createMetadataResponseBroker({ nodeId: 2, host: 'broker-2', port: 9093, rack: null }),
  ],
  clusterId: 'golden-cluster',
  controllerId: 1,
  topics: [
    md.createMetadataResponseTopic({
      errorCode: 0,
      name: 'orders',
      topicId: TOPIC_ID,
      isInternal: false,
      partitions: [
        md.createMetadataResponsePartition({ errorCode: 0, partitionIndex: 0, leaderId: 1, leaderEpoch: 5, replicaNodes: [1, 2], isrNodes: [1, 2], offlineReplicas: [] }),
        md.createMetadataResponsePartition({ errorCode: 0, partitionIndex: 1, leaderId: 2, leaderEpoch: 5, replicaNodes: [2, 1], isrNodes: [2], offlineReplicas: [1] }),
      ],
      topicAuthorizedOperations: 280,
    }),
    md.createMetadataResponseTopic({ errorCode: 100, name: null, topicId: OTHER_TOPIC_ID, isInternal: false, partitions: [], topicAuthorizedOperations: -2147483648 }),
  ],
}));

// ---- Produce --------------------------------------------------------------------------------------------

const pr = produce;
body('produce/v9-request-000.hex', pr.ProduceApi.request, 9, pr.createProduceRequest({
  transactionalId: null,
  acks: -1,
  timeoutMs: 30_000,
  topicData: [pr.createProduceRequestTopicProduceData({ name: 'orders', partitionData: [pr.createProduceRequestPartitionProduceData({ index: 0, records: HELLO_BATCH })] })],
}));

body('produce/v11-request-000.hex', pr.ProduceApi.request, 11, pr.createProduceRequest({
  transactionalId: 'tx-golden',
  acks: -1,
  timeoutMs: 60_000,
  topicData: [
    pr.createProduceRequestTopicProduceData({
      name: 'orders',
      partitionData: [pr.createProduceRequestPartitionProduceData({ index: 2, records: HELLO_BATCH }), pr.createProduceRequestPartitionProduceData({ index: 3, records: null })],
    }),
  ],
}));

body('produce/v9-response-000.hex', pr.ProduceApi.response, 9, pr.createProduceResponse({
  responses: [
    pr.createProduceResponseTopicProduceResponse({
      name: 'orders',
      partitionResponses: [
        pr.createProduceResponsePartitionProduceResponse({ index: 0, errorCode: 0, baseOffset: 100n, logAppendTimeMs: -1n, logStartOffset: 0n, recordErrors: [], errorMessage: null }),
        pr.createProduceResponsePartitionProduceResponse({
          index: 1,
          errorCode: 87,
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: -1n,
          recordErrors: [pr.createProduceResponseBatchIndexAndErrorMessage({ batchIndex: 3, batchIndexErrorMessage: 'bad key' })],
          errorMessage: 'rejected',
        }),
      ],
    }),
  ],
  throttleTimeMs: 0,
}));

body('produce/v10-response-000.hex', pr.ProduceApi.response, 10, pr.createProduceResponse({
  responses: [
    pr.createProduceResponseTopicProduceResponse({
      name: 'orders',
      partitionResponses: [
        pr.createProduceResponsePartitionProduceResponse({
          index: 0,
          errorCode: 6,
          baseOffset: -1n,
          logAppendTimeMs: -1n,
          logStartOffset: -1n,
          currentLeader: pr.createProduceResponseLeaderIdAndEpoch({ leaderId: 2, leaderEpoch: 7 }),
        }),
      ],
    }),
  ],
  throttleTimeMs: 0,
  nodeEndpoints: [pr.createProduceResponseNodeEndpoint({ nodeId: 2, host: 'broker-2', port: 9093, rack: null })],
}));

// ---- Fetch ----------------------------------------------------------------------------------------------

const fe = fetch;
const followerPartition = (): fetch.FetchRequestFetchPartition =>
  fe.createFetchRequestFetchPartition({ partition: 0, currentLeaderEpoch: 5, fetchOffset: 100n, lastFetchedEpoch: 5, logStartOffset: 0n, partitionMaxBytes: 1_048_576 });

body('fetch/v12-request-000.hex', fe.FetchApi.request, 12, fe.createFetchRequest({
  clusterId: 'golden-cluster',
  replicaId: -1,
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 52_428_800,
  isolationLevel: 1,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [
    fe.createFetchRequestFetchTopic({
      topic: 'orders',
      partitions: [fe.createFetchRequestFetchPartition({ partition: 0, currentLeaderEpoch: 5, fetchOffset: 42n, lastFetchedEpoch: 4, logStartOffset: -1n, partitionMaxBytes: 1_048_576 })],
    }),
  ],
  forgottenTopicsData: [fe.createFetchRequestForgottenTopic({ topic: 'retired', partitions: [1, 2] })],
  rackId: 'rack-a',
}));

body('fetch/v13-request-000.hex', fe.FetchApi.request, 13, fe.createFetchRequest({
  replicaId: -1,
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 0x7fffffff,
  isolationLevel: 0,
  sessionId: 7,
  sessionEpoch: 3,
  topics: [
    fe.createFetchRequestFetchTopic({
      topicId: TOPIC_ID,
      partitions: [
        fe.createFetchRequestFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1_048_576 }),
        fe.createFetchRequestFetchPartition({ partition: 1, fetchOffset: 9007199254740993n, partitionMaxBytes: 1_048_576 }),
      ],
    }),
  ],
  forgottenTopicsData: [fe.createFetchRequestForgottenTopic({ topicId: OTHER_TOPIC_ID, partitions: [0] })],
  rackId: '',
}));

body('fetch/v15-request-000.hex', fe.FetchApi.request, 15, fe.createFetchRequest({
  replicaState: fe.createFetchRequestReplicaState({ replicaId: 2, replicaEpoch: 9n }),
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 10_485_760,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [fe.createFetchRequestFetchTopic({ topicId: TOPIC_ID, partitions: [followerPartition()] })],
  forgottenTopicsData: [],
  rackId: '',
}));

body('fetch/v17-request-000.hex', fe.FetchApi.request, 17, fe.createFetchRequest({
  replicaState: fe.createFetchRequestReplicaState({ replicaId: 2, replicaEpoch: 9n }),
  maxWaitMs: 500,
  minBytes: 1,
  maxBytes: 10_485_760,
  isolationLevel: 0,
  sessionId: 0,
  sessionEpoch: -1,
  topics: [fe.createFetchRequestFetchTopic({ topicId: TOPIC_ID, partitions: [{ ...followerPartition(), replicaDirectoryId: DIRECTORY_ID }] })],
  forgottenTopicsData: [],
  rackId: '',
}));

body('fetch/v12-response-000.hex', fe.FetchApi.response, 12, fe.createFetchResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 77,
  responses: [
    fe.createFetchResponseFetchableTopicResponse({
      topic: 'orders',
      partitions: [
        fe.createFetchResponsePartitionData({
          partitionIndex: 0,
          errorCode: 0,
          highWatermark: 44n,
          lastStableOffset: 44n,
          logStartOffset: 0n,
          currentLeader: fe.createFetchResponseLeaderIdAndEpoch({ leaderId: 1, leaderEpoch: 5 }),
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: HELLO_BATCH,
        }),
        fe.createFetchResponsePartitionData({
          partitionIndex: 1,
          errorCode: 0,
          highWatermark: 10n,
          lastStableOffset: 10n,
          logStartOffset: 0n,
          divergingEpoch: fe.createFetchResponseEpochEndOffset({ epoch: 3, endOffset: 8n }),
          snapshotId: fe.createFetchResponseSnapshotId({ endOffset: 100n, epoch: 2 }),
          abortedTransactions: [fe.createFetchResponseAbortedTransaction({ producerId: 4000n, firstOffset: 5n })],
          preferredReadReplica: -1,
          records: Buffer.alloc(0),
        }),
      ],
    }),
  ],
}));

body('fetch/v16-response-000.hex', fe.FetchApi.response, 16, fe.createFetchResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  sessionId: 0,
  responses: [
    fe.createFetchResponseFetchableTopicResponse({
      topicId: TOPIC_ID,
      partitions: [
        fe.createFetchResponsePartitionData({
          partitionIndex: 0,
          errorCode: 6,
          highWatermark: -1n,
          lastStableOffset: -1n,
          logStartOffset: -1n,
          currentLeader: fe.createFetchResponseLeaderIdAndEpoch({ leaderId: 2, leaderEpoch: 8 }),
          abortedTransactions: null,
          preferredReadReplica: -1,
          records: Buffer.alloc(0),
        }),
      ],
    }),
  ],
  nodeEndpoints: [fe.createFetchResponseNodeEndpoint({ nodeId: 2, host: 'broker-2', port: 9093, rack: 'rack-b' })],
}));

// ---- JoinGroup, OffsetCommit, OffsetFetch, FindCoordinator ----------------------------------------------

const jg = joinGroup;
body('join-group/v6-request-000.hex', jg.JoinGroupApi.request, 6, jg.createJoinGroupRequest({
  groupId: 'golden-group',
  sessionTimeoutMs: 60_000,
  rebalanceTimeoutMs: 300_000,
  memberId: '',
  groupInstanceId: 'instance-1',
  protocolType: 'consumer',
  protocols: [jg.createJoinGroupRequestProtocol({ name: 'range', metadata: ORDERS_SUBSCRIPTION_V1 }), jg.createJoinGroupRequestProtocol({ name: 'uniform', metadata: Buffer.alloc(0) })],
}));

body('join-group/v8-request-000.hex', jg.JoinGroupApi.request, 8, jg.createJoinGroupRequest({
  groupId: 'golden-group',
  sessionTimeoutMs: 60_000,
  rebalanceTimeoutMs: 300_000,
  memberId: 'member-1',
  groupInstanceId: null,
  protocolType: 'consumer',
  protocols: [jg.createJoinGroupRequestProtocol({ name: 'range', metadata: Buffer.alloc(0) })],
  reason: 'rebalance in progress',
}));

body('join-group/v6-response-000.hex', jg.JoinGroupApi.response, 6, jg.createJoinGroupResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  generationId: 3,
  protocolName: 'range',
  leader: 'member-1',
  memberId: 'member-1',
  members: [
    jg.createJoinGroupResponseMember({ memberId: 'member-1', groupInstanceId: 'instance-1', metadata: ORDERS_SUBSCRIPTION_V1 }),
    jg.createJoinGroupResponseMember({ memberId: 'member-2', groupInstanceId: null, metadata: Buffer.alloc(0) }),
  ],
}));

body('join-group/v7-response-000.hex', jg.JoinGroupApi.response, 7, jg.createJoinGroupResponse({
  throttleTimeMs: 0,
  errorCode: 79,
  generationId: -1,
  protocolType: null,
  protocolName: null,
  leader: '',
  memberId: 'member-1',
  members: [],
}));

body('join-group/v9-response-000.hex', jg.JoinGroupApi.response, 9, jg.createJoinGroupResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  generationId: 4,
  protocolType: 'consumer',
  protocolName: 'range',
  leader: 'member-1',
  skipAssignment: true,
  memberId: 'member-1',
  members: [jg.createJoinGroupResponseMember({ memberId: 'member-1', groupInstanceId: null, metadata: Buffer.alloc(0) })],
}));

const oc = offsetCommit;
body('offset-commit/v8-request-000.hex', oc.OffsetCommitApi.request, 8, oc.createOffsetCommitRequest({
  groupId: 'golden-group',
  generationIdOrMemberEpoch: 3,
  memberId: 'member-1',
  groupInstanceId: 'instance-1',
  topics: [
    oc.createOffsetCommitRequestTopic({
      name: 'orders',
      partitions: [
        oc.createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: 5, committedMetadata: 'checkpoint' }),
        oc.createOffsetCommitRequestPartition({ partitionIndex: 1, committedOffset: 200n, committedLeaderEpoch: -1, committedMetadata: null }),
      ],
    }),
  ],
}));

body('offset-commit/v9-request-000.hex', oc.OffsetCommitApi.request, 9, oc.createOffsetCommitRequest({
  groupId: 'golden-group',
  generationIdOrMemberEpoch: 12,
  memberId: KIP848_MEMBER_ID,
  groupInstanceId: null,
  topics: [oc.createOffsetCommitRequestTopic({ name: 'orders', partitions: [oc.createOffsetCommitRequestPartition({ partitionIndex: 2, committedOffset: 300n, committedLeaderEpoch: 7, committedMetadata: '' })] })],
}));

body('offset-commit/v8-response-000.hex', oc.OffsetCommitApi.response, 8, oc.createOffsetCommitResponse({
  throttleTimeMs: 0,
  topics: [
    oc.createOffsetCommitResponseTopic({
      name: 'orders',
      partitions: [oc.createOffsetCommitResponsePartition({ partitionIndex: 0, errorCode: 0 }), oc.createOffsetCommitResponsePartition({ partitionIndex: 1, errorCode: 22 })],
    }),
  ],
}));

const of = offsetFetch;
body('offset-fetch/v8-request-000.hex', of.OffsetFetchApi.request, 8, of.createOffsetFetchRequest({
  groups: [
    of.createOffsetFetchRequestGroup({ groupId: 'golden-group', topics: [of.createOffsetFetchRequestTopics({ name: 'orders', partitionIndexes: [0, 1] })] }),
    of.createOffsetFetchRequestGroup({ groupId: 'audit', topics: null }),
  ],
  requireStable: true,
}));

body('offset-fetch/v9-request-000.hex', of.OffsetFetchApi.request, 9, of.createOffsetFetchRequest({
  groups: [
    of.createOffsetFetchRequestGroup({
      groupId: 'golden-group',
      memberId: KIP848_MEMBER_ID,
      memberEpoch: 12,
      topics: [of.createOffsetFetchRequestTopics({ name: 'orders', partitionIndexes: [2] })],
    }),
  ],
  requireStable: false,
}));

body('offset-fetch/v8-response-000.hex', of.OffsetFetchApi.response, 8, of.createOffsetFetchResponse({
  throttleTimeMs: 0,
  groups: [
    of.createOffsetFetchResponseGroup({
      groupId: 'golden-group',
      topics: [
        of.createOffsetFetchResponseTopics({
          name: 'orders',
          partitions: [
            of.createOffsetFetchResponsePartitions({ partitionIndex: 0, committedOffset: 100n, committedLeaderEpoch: 5, metadata: 'checkpoint', errorCode: 0 }),
            of.createOffsetFetchResponsePartitions({ partitionIndex: 1, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: 0 }),
          ],
        }),
      ],
      errorCode: 0,
    }),
    of.createOffsetFetchResponseGroup({ groupId: 'audit', topics: [], errorCode: 14 }),
  ],
}));

const fc = findCoordinator;
body('find-coordinator/v4-request-000.hex', fc.FindCoordinatorApi.request, 4, fc.createFindCoordinatorRequest({ keyType: 0, coordinatorKeys: ['golden-group', 'audit'] }));

body('find-coordinator/v4-response-000.hex', fc.FindCoordinatorApi.response, 4, fc.createFindCoordinatorResponse({
  throttleTimeMs: 0,
  coordinators: [
    fc.createFindCoordinatorResponseCoordinator({ key: 'golden-group', nodeId: 2, host: 'broker-2', port: 9093, errorCode: 0, errorMessage: null }),
    fc.createFindCoordinatorResponseCoordinator({ key: 'audit', nodeId: -1, host: '', port: -1, errorCode: 15, errorMessage: '' }),
  ],
}));

// ---- ConsumerGroupHeartbeat (KIP-848) -------------------------------------------------------------------

const cgh = consumerGroupHeartbeat;
body('consumer-group-heartbeat/v0-request-000.hex', cgh.ConsumerGroupHeartbeatApi.request, 0, cgh.createConsumerGroupHeartbeatRequest({
  groupId: 'golden-group',
  memberId: '',
  memberEpoch: 0,
  instanceId: null,
  rackId: 'rack-a',
  rebalanceTimeoutMs: 300_000,
  subscribedTopicNames: ['orders', 'audit'],
  serverAssignor: 'uniform',
  topicPartitions: [],
}));

body('consumer-group-heartbeat/v0-request-001.hex', cgh.ConsumerGroupHeartbeatApi.request, 0, cgh.createConsumerGroupHeartbeatRequest({
  groupId: 'golden-group',
  memberId: KIP848_MEMBER_ID,
  memberEpoch: 12,
  instanceId: null,
  rackId: null,
  rebalanceTimeoutMs: -1,
  subscribedTopicNames: null,
  serverAssignor: null,
  topicPartitions: null,
}));

body('consumer-group-heartbeat/v0-response-000.hex', cgh.ConsumerGroupHeartbeatApi.response, 0, cgh.createConsumerGroupHeartbeatResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  errorMessage: null,
  memberId: KIP848_MEMBER_ID,
  memberEpoch: 1,
  heartbeatIntervalMs: 5000,
  assignment: cgh.createConsumerGroupHeartbeatResponseAssignment({
    topicPartitions: [
      cgh.createConsumerGroupHeartbeatResponseTopicPartitions({ topicId: TOPIC_ID, partitions: [0, 1, 2] }),
      cgh.createConsumerGroupHeartbeatResponseTopicPartitions({ topicId: OTHER_TOPIC_ID, partitions: [] }),
    ],
  }),
}));

body('consumer-group-heartbeat/v0-response-001.hex', cgh.ConsumerGroupHeartbeatApi.response, 0, cgh.createConsumerGroupHeartbeatResponse({
  throttleTimeMs: 0,
  errorCode: 110,
  errorMessage: 'leaving',
  memberId: null,
  memberEpoch: -1,
  heartbeatIntervalMs: 5000,
  assignment: null,
}));

// Versions from Kafka 4.0 that the 3.9 schema set lacks (protocol/gen/amendments.ts).
body('consumer-group-heartbeat/v1-request-000.hex', cgh.ConsumerGroupHeartbeatApi.request, 1, cgh.createConsumerGroupHeartbeatRequest({
  groupId: 'golden-group',
  memberId: KIP848_MEMBER_ID,
  memberEpoch: 0,
  instanceId: null,
  rackId: null,
  rebalanceTimeoutMs: 300_000,
  subscribedTopicNames: null,
  subscribedTopicRegex: 'orders|audit-.*',
  serverAssignor: null,
  topicPartitions: [],
}));

const cgd = consumerGroupDescribe;
const ordersPartitions = (partitions: number[]) =>
  cgd.createConsumerGroupDescribeResponseAssignment({
    topicPartitions: [cgd.createConsumerGroupDescribeResponseTopicPartitions({ topicId: TOPIC_ID, topicName: 'orders', partitions })],
  });
body('consumer-group-describe/v1-response-000.hex', cgd.ConsumerGroupDescribeApi.response, 1, cgd.createConsumerGroupDescribeResponse({
  throttleTimeMs: 0,
  groups: [
    cgd.createConsumerGroupDescribeResponseDescribedGroup({
      groupId: 'golden-group',
      groupState: 'Stable',
      groupEpoch: 3,
      assignmentEpoch: 3,
      assignorName: 'range',
      members: [
        cgd.createConsumerGroupDescribeResponseMember({
          memberId: KIP848_MEMBER_ID,
          memberEpoch: 3,
          clientId: 'consumer-1',
          clientHost: '/127.0.0.1',
          subscribedTopicNames: ['orders'],
          assignment: ordersPartitions([0, 1, 2]),
          targetAssignment: ordersPartitions([0, 1]),
          memberType: 1,
        }),
      ],
      authorizedOperations: -2147483648,
    }),
    cgd.createConsumerGroupDescribeResponseDescribedGroup({
      errorCode: 69,
      errorMessage: 'Group missing-group not found.',
      groupId: 'missing-group',
      authorizedOperations: -2147483648,
    }),
  ],
}));

const dg = describeGroups;
body('describe-groups/v6-response-000.hex', dg.DescribeGroupsApi.response, 6, dg.createDescribeGroupsResponse({
  throttleTimeMs: 0,
  groups: [
    dg.createDescribeGroupsResponseDescribedGroup({ errorCode: 69, errorMessage: 'Group missing-group not found.', groupId: 'missing-group', groupState: 'Dead', authorizedOperations: -2147483648 }),
    dg.createDescribeGroupsResponseDescribedGroup({
      groupId: 'golden-group',
      groupState: 'Stable',
      protocolType: 'consumer',
      protocolData: 'range',
      members: [
        dg.createDescribeGroupsResponseDescribedGroupMember({
          memberId: 'm-1',
          clientId: 'consumer-1',
          clientHost: '/127.0.0.1',
          memberMetadata: Buffer.from([0, 1, 2]),
          memberAssignment: Buffer.alloc(0),
        }),
      ],
      authorizedOperations: 256,
    }),
  ],
}));

// ---- CreateTopics, DescribeCluster, InitProducerId ------------------------------------------------------

const ct = createTopics;
body('create-topics/v5-request-000.hex', ct.CreateTopicsApi.request, 5, ct.createCreateTopicsRequest({
  topics: [
    ct.createCreateTopicsRequestCreatableTopic({
      name: 'orders',
      numPartitions: 3,
      replicationFactor: 1,
      assignments: [],
      configs: [ct.createCreateTopicsRequestCreatableTopicConfig({ name: 'cleanup.policy', value: 'compact' }), ct.createCreateTopicsRequestCreatableTopicConfig({ name: 'retention.ms', value: null })],
    }),
    ct.createCreateTopicsRequestCreatableTopic({
      name: 'audit',
      numPartitions: -1,
      replicationFactor: -1,
      assignments: [
        ct.createCreateTopicsRequestCreatableReplicaAssignment({ partitionIndex: 0, brokerIds: [1, 2] }),
        ct.createCreateTopicsRequestCreatableReplicaAssignment({ partitionIndex: 1, brokerIds: [2, 3] }),
      ],
      configs: [],
    }),
  ],
  timeoutMs: 30_000,
  validateOnly: true,
}));

body('create-topics/v5-response-000.hex', ct.CreateTopicsApi.response, 5, ct.createCreateTopicsResponse({
  throttleTimeMs: 0,
  topics: [
    ct.createCreateTopicsResponseCreatableTopicResult({
      name: 'orders',
      errorCode: 0,
      errorMessage: null,
      numPartitions: 3,
      replicationFactor: 1,
      configs: [
        ct.createCreateTopicsResponseCreatableTopicConfigs({ name: 'cleanup.policy', value: 'compact', readOnly: false, configSource: 1, isSensitive: false }),
        ct.createCreateTopicsResponseCreatableTopicConfigs({ name: 'retention.ms', value: '604800000', readOnly: false, configSource: 5, isSensitive: false }),
      ],
    }),
    ct.createCreateTopicsResponseCreatableTopicResult({
      name: 'audit',
      errorCode: 36,
      errorMessage: 'Topic already exists.',
      topicConfigErrorCode: 29,
      numPartitions: -1,
      replicationFactor: -1,
      configs: null,
    }),
  ],
}));

body('create-topics/v7-response-000.hex', ct.CreateTopicsApi.response, 7, ct.createCreateTopicsResponse({
  throttleTimeMs: 0,
  topics: [ct.createCreateTopicsResponseCreatableTopicResult({ name: 'orders', topicId: TOPIC_ID, errorCode: 0, errorMessage: null, numPartitions: 3, replicationFactor: 1, configs: [] })],
}));

const dc = describeCluster;
body('describe-cluster/v0-request-000.hex', dc.DescribeClusterApi.request, 0, dc.createDescribeClusterRequest({ includeClusterAuthorizedOperations: true }));
body('describe-cluster/v1-request-000.hex', dc.DescribeClusterApi.request, 1, dc.createDescribeClusterRequest({ includeClusterAuthorizedOperations: false, endpointType: 2 }));

body('describe-cluster/v0-response-000.hex', dc.DescribeClusterApi.response, 0, dc.createDescribeClusterResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  errorMessage: null,
  clusterId: 'golden-cluster',
  controllerId: 1,
  brokers: [
    dc.createDescribeClusterResponseDescribeClusterBroker({ brokerId: 1, host: 'broker-1', port: 9092, rack: 'rack-a' }),
    dc.createDescribeClusterResponseDescribeClusterBroker({ brokerId: 2, host: 'broker-2', port: 9093, rack: null }),
  ],
  clusterAuthorizedOperations: 8096,
}));

body('describe-cluster/v1-response-000.hex', dc.DescribeClusterApi.response, 1, dc.createDescribeClusterResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  errorMessage: null,
  endpointType: 2,
  clusterId: 'golden-cluster',
  controllerId: 1,
  brokers: [dc.createDescribeClusterResponseDescribeClusterBroker({ brokerId: 1, host: 'broker-1', port: 9091, rack: null })],
  clusterAuthorizedOperations: -2147483648,
}));

const dq = describeClientQuotas;
body('describe-client-quotas/v1-response-000.hex', dq.DescribeClientQuotasApi.response, 1, dq.createDescribeClientQuotasResponse({
  throttleTimeMs: 0,
  errorCode: 0,
  errorMessage: null,
  entries: [
    dq.createDescribeClientQuotasResponseEntryData({
      entity: [dq.createDescribeClientQuotasResponseEntityData({ entityType: 'user', entityName: 'alice' })],
      values: [
        dq.createDescribeClientQuotasResponseValueData({ key: 'producer_byte_rate', value: 1048576.5 }),
        dq.createDescribeClientQuotasResponseValueData({ key: 'request_percentage', value: 0.25 }),
      ],
    }),
    dq.createDescribeClientQuotasResponseEntryData({ entity: [dq.createDescribeClientQuotasResponseEntityData({ entityType: 'user', entityName: null })], values: [] }),
  ],
}));

const ip = initProducerId;
body('init-producer-id/v2-request-000.hex', ip.InitProducerIdApi.request, 2, ip.createInitProducerIdRequest({ transactionalId: 'tx-golden', transactionTimeoutMs: 60_000 }));
body('init-producer-id/v3-request-000.hex', ip.InitProducerIdApi.request, 3, ip.createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: -1, producerId: 4000n, producerEpoch: 2 }));
body('init-producer-id/v5-request-000.hex', ip.InitProducerIdApi.request, 5, ip.createInitProducerIdRequest({ transactionalId: 'tx-golden', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
body('init-producer-id/v2-response-000.hex', ip.InitProducerIdApi.response, 2, ip.createInitProducerIdResponse({ throttleTimeMs: 0, errorCode: 0, producerId: 4000n, producerEpoch: 3 }));

// ---- Whole frames: headers and captured client requests -------------------------------------------------

interface RequestFrameFixture<Req> {
  file: string;
  api: ApiDescriptor<Req, unknown>;
  version: number;
  correlationId: number;
  clientId: string | null;
  /** Tagged fields of the header that no schema defines, as raw bytes. */
  headerTags?: { tag: number; data: Buffer }[];
  body: Req;
}

const requestFrames: RequestFrameFixture<unknown>[] = [];
function requestFrame<Req>(f: RequestFrameFixture<Req>): void {
  requestFrames.push(f as RequestFrameFixture<unknown>);
}

requestFrame({
  file: 'headers/request-frame-v2-000.hex',
  api: md.MetadataApi,
  version: 12,
  correlationId: 7,
  clientId: 'golden-client',
  headerTags: [{ tag: 3, data: Buffer.from([0xab, 0xcd]) }],
  body: md.createMetadataRequest({ topics: null, allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false }),
});

requestFrame({
  file: 'headers/request-frame-v2-002.hex',
  api: av.ApiVersionsApi,
  version: 3,
  correlationId: 11,
  clientId: 'c',
  headerTags: [{ tag: 300, data: Buffer.alloc(130, 0x5a) }],
  body: av.createApiVersionsRequest({ clientSoftwareName: '', clientSoftwareVersion: '' }),
});

requestFrame({
  file: 'headers/request-frame-v2-001.hex',
  api: dc.DescribeClusterApi,
  version: 0,
  correlationId: 8,
  clientId: null,
  body: dc.createDescribeClusterRequest({ includeClusterAuthorizedOperations: true }),
});

const LIBRDKAFKA = { software: 'librdkafka', version: '2.0.2' };
const consumer = { clientId: 'golden-consumer' };

requestFrame({
  file: 'captured/librdkafka-2.0.2-api-versions-v3-request.hex',
  api: av.ApiVersionsApi,
  version: 3,
  correlationId: 1,
  clientId: 'rdkafka',
  body: av.ApiVersionsApi.request.create({ clientSoftwareName: LIBRDKAFKA.software, clientSoftwareVersion: LIBRDKAFKA.version }),
});

requestFrame({
  file: 'captured/java-4.4.0-api-versions-v4-request.hex',
  api: av.ApiVersionsApi,
  version: 4,
  correlationId: 1,
  clientId: 'golden-java',
  body: av.ApiVersionsApi.request.create({ clientSoftwareName: 'apache-kafka-java', clientSoftwareVersion: '4.4.0' }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-init-producer-id-v4-request.hex',
  api: ip.InitProducerIdApi,
  version: 4,
  correlationId: 3,
  clientId: 'golden-producer',
  body: ip.createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: -1, producerId: -1n, producerEpoch: -1 }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-metadata-v4-request.hex',
  api: md.MetadataApi,
  version: 4,
  correlationId: 2,
  ...consumer,
  body: md.createMetadataRequest({ topics: [], allowAutoTopicCreation: false }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-find-coordinator-v2-request.hex',
  api: fc.FindCoordinatorApi,
  version: 2,
  correlationId: 3,
  ...consumer,
  body: fc.createFindCoordinatorRequest({ key: 'golden-group', keyType: 0 }),
});

/** librdkafka's subscription: ConsumerProtocolSubscription v1, topics ["golden"], empty user data, nothing owned. */
const LIBRDKAFKA_SUBSCRIPTION = Buffer.from('0001' + '00000001' + '0006' + Buffer.from('golden').toString('hex') + '00000000' + '00000000', 'hex');
/** librdkafka's assignment: ConsumerProtocolAssignment v0, golden [0], empty user data. */
const LIBRDKAFKA_ASSIGNMENT = Buffer.from('0000' + '00000001' + '0006' + Buffer.from('golden').toString('hex') + '00000001' + '00000000' + '00000000', 'hex');

requestFrame({
  file: 'captured/librdkafka-2.0.2-join-group-v5-request.hex',
  api: jg.JoinGroupApi,
  version: 5,
  correlationId: 3,
  ...consumer,
  body: jg.createJoinGroupRequest({
    groupId: 'golden-group',
    sessionTimeoutMs: 45_000,
    rebalanceTimeoutMs: 300_000,
    memberId: '',
    groupInstanceId: 'instance-1',
    protocolType: 'consumer',
    protocols: [jg.createJoinGroupRequestProtocol({ name: 'range', metadata: LIBRDKAFKA_SUBSCRIPTION }), jg.createJoinGroupRequestProtocol({ name: 'roundrobin', metadata: LIBRDKAFKA_SUBSCRIPTION })],
  }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-sync-group-v3-request.hex',
  api: syncGroup.SyncGroupApi,
  version: 3,
  correlationId: 5,
  ...consumer,
  body: syncGroup.createSyncGroupRequest({
    groupId: 'golden-group',
    generationId: 1,
    memberId: 'member-1',
    groupInstanceId: 'instance-1',
    assignments: [syncGroup.createSyncGroupRequestAssignment({ memberId: 'member-1', assignment: LIBRDKAFKA_ASSIGNMENT })],
  }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-heartbeat-v3-request.hex',
  api: heartbeat.HeartbeatApi,
  version: 3,
  correlationId: 6,
  ...consumer,
  body: heartbeat.createHeartbeatRequest({ groupId: 'golden-group', generationId: 1, memberId: 'member-1', groupInstanceId: 'instance-1' }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-offset-fetch-v7-request.hex',
  api: of.OffsetFetchApi,
  version: 7,
  correlationId: 7,
  ...consumer,
  body: of.createOffsetFetchRequest({ groupId: 'golden-group', topics: [of.createOffsetFetchRequestTopic({ name: 'golden', partitionIndexes: [0] })], requireStable: true }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-list-offsets-v2-request.hex',
  api: listOffsets.ListOffsetsApi,
  version: 2,
  correlationId: 6,
  ...consumer,
  body: listOffsets.createListOffsetsRequest({
    replicaId: -1,
    isolationLevel: 1,
    topics: [
      listOffsets.createListOffsetsRequestListOffsetsTopic({ name: 'golden', partitions: [listOffsets.createListOffsetsRequestListOffsetsPartition({ partitionIndex: 0, timestamp: -1n })] }),
    ],
  }),
});

requestFrame({
  file: 'captured/librdkafka-2.0.2-fetch-v11-request.hex',
  api: fe.FetchApi,
  version: 11,
  correlationId: 7,
  ...consumer,
  body: fe.createFetchRequest({
    replicaId: -1,
    maxWaitMs: 500,
    minBytes: 1,
    maxBytes: 52_428_800,
    isolationLevel: 1,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [fe.createFetchRequestFetchTopic({ topic: 'golden', partitions: [fe.createFetchRequestFetchPartition({ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1_048_576 })] })],
    forgottenTopicsData: [],
    rackId: '',
  }),
});

interface ResponseFrameFixture<Res> {
  file: string;
  api: ApiDescriptor<unknown, Res>;
  version: number;
  correlationId: number;
  body: Res;
  /** False when the header carries a tagged field the encoder does not write back. */
  reencodes: boolean;
}

const responseFrames: ResponseFrameFixture<unknown>[] = [];
function responseFrame<Res>(f: ResponseFrameFixture<Res>): void {
  responseFrames.push(f as ResponseFrameFixture<unknown>);
}

const producerIdGranted = ip.createInitProducerIdResponse({ throttleTimeMs: 0, errorCode: 0, producerId: 4000n, producerEpoch: 3 });
responseFrame({ file: 'headers/response-frame-v1-000.hex', api: ip.InitProducerIdApi, version: 2, correlationId: 7, body: producerIdGranted, reencodes: true });
responseFrame({ file: 'headers/response-frame-v1-001.hex', api: ip.InitProducerIdApi, version: 2, correlationId: 9, body: producerIdGranted, reencodes: false });
responseFrame({
  file: 'headers/response-frame-api-versions-v3.hex',
  api: av.ApiVersionsApi,
  version: 3,
  correlationId: 1,
  body: av.createApiVersionsResponse({ errorCode: 35, apiKeys: [av.createApiVersionsResponseApiVersion({ apiKey: 18, minVersion: 0, maxVersion: 4 })] }),
  reencodes: true,
});

// ---------------------------------------------------------------------------------------------------------

describe('flexible-version message fixtures', () => {
  it.each(bodies)('$file decodes into the expected message and encodes back byte for byte', ({ file, codec, version, expected }) => {
    const golden = loadGolden(file);
    const decoded = decodeWith(codec, golden, version);
    expect(decoded).toEqual(expected);
    expect(hex(encodeWith(codec, decoded, version))).toBe(hex(golden));
    expect(hex(encodeWith(codec, expected, version))).toBe(hex(golden));
  });
});

describe('request frames (request header v1/v2, captured clients)', () => {
  it.each(requestFrames)('$file: header and body decode as expected and the frame encodes back byte for byte', (f) => {
    const golden = loadGolden(f.file);
    expect(golden.readInt32BE(0)).toBe(golden.length - 4);
    const r = new Reader(golden, 4);
    const { header, api, versionKnown } = readRequestHeader(r);
    expect(api).toBe(f.api);
    expect(versionKnown).toBe(true);
    expect(header).toEqual({ requestApiKey: f.api.apiKey, requestApiVersion: f.version, correlationId: f.correlationId, clientId: f.clientId, unknownTaggedFields: f.headerTags });
    const decoded = f.api.request.decode(r, f.version);
    r.complete();
    expect(decoded).toEqual(f.body);
    let again: Buffer;
    if (f.headerTags) {
      const w = new Writer();
      w.int32(golden.length - 4);
      encodeRequestHeader(w, header, 2);
      f.api.request.encode(w, decoded, f.version);
      again = w.toBuffer();
    } else {
      again = Buffer.concat(encodeRequestFrame(f.api, f.version, f.correlationId, f.clientId, f.body));
    }
    expect(hex(again)).toBe(hex(golden));
  });

  it('reads a Java 4.4 ApiVersions v5 request, which the 4.4.0 schemas define, header and body', () => {
    const golden = loadGolden('captured/java-4.4.0-api-versions-v5-request.hex');
    const r = new Reader(golden, 4);
    const { header, api, versionKnown } = readRequestHeader(r);
    r.check();
    expect(api).toBe(av.ApiVersionsApi);
    expect(versionKnown).toBe(true);
    expect(header).toMatchObject({ requestApiKey: 18, requestApiVersion: 5, correlationId: 0, clientId: 'golden-java' });
    expect(golden.readUInt8(r.pos)).toBe(0x12); // compact length of "apache-kafka-java"
    const body = av.ApiVersionsApi.request.decode(r, 5);
    r.complete();
    expect(body.clientSoftwareName).toBe('apache-kafka-java');
    expect(body.clientSoftwareVersion).toMatch(/^4\.4/);
  });
});

describe('response frames (response header v0/v1)', () => {
  it.each(responseFrames)('$file decodes as expected', (f) => {
    const golden = loadGolden(f.file);
    expect(golden.readInt32BE(0)).toBe(golden.length - 4);
    const { correlationId, response } = decodeResponseFrame(f.api, f.version, golden.subarray(4));
    expect(correlationId).toBe(f.correlationId);
    expect(response).toEqual(f.body);
    if (f.reencodes) expect(hex(Buffer.concat(encodeResponseFrame(f.api, f.version, f.correlationId, f.body)))).toBe(hex(golden));
  });
});

describe('fixture inventory', () => {
  it('has an expectation for every message and frame fixture under test/golden/', () => {
    const covered = new Set([...bodies, ...requestFrames, ...responseFrames].map((f) => f.file));
    covered.add('captured/java-4.4.0-api-versions-v5-request.hex');
    const files = listGoldenFiles().filter((f) => !f.startsWith('consumer-protocol/') && !f.startsWith('coordinator-records/'));
    expect(files.filter((f) => !covered.has(f))).toEqual([]);
    expect([...covered].filter((f) => !files.includes(f))).toEqual([]);
  });
});
