/**
 * The answer to a request whose handling failed unexpectedly: Kafka's `AbstractRequest.getErrorResponse`.
 * Kafka does not close the connection when a handler throws (KafkaApis.handleError → requestHelper.
 * handleError): it answers with the API's error response, which mirrors the request and carries the error
 * code at every level a client reads it from (each topic/partition, group, resource, or the top level), so
 * every client sees the failure where it looks for it. Each builder below follows its request class in
 * Kafka (clients/.../common/requests/<Api>Request.getErrorResponse), with Kafka's "unknown" values
 * (offsets -1, node -1 and host "", empty members) in the other fields.
 *
 * Messages follow Kafka's `ApiError.fromThrowable`: the failure's own message, except for
 * UNKNOWN_SERVER_ERROR (not to leak internals) or when it is only the code's default text. APIs whose
 * builder uses `new ApiError(error)` or `error.message()` (DescribeConfigs, FindCoordinator) carry the code's
 * default message instead.
 *
 * Produce with acks=0 gets no response (Kafka returns null). Fields a version does not have are left at
 * their defaults so that every served version encodes.
 */
import { errorByCode, ErrorCode } from '../../protocol/error-codes.js';
import { isLedgerlineError } from '../../protocol/errors.js';
import { ApiVersionsApi, createApiVersionsResponse, createApiVersionsResponseApiVersion } from '../../protocol/messages/018-api-versions.gen.js';
import {
  createProduceResponse,
  createProduceResponsePartitionProduceResponse,
  createProduceResponseTopicProduceResponse,
  type ProduceRequest,
  type ProduceResponseTopicProduceResponse,
} from '../../protocol/messages/000-produce.gen.js';
import { createFetchResponse, createFetchResponseFetchableTopicResponse, createFetchResponsePartitionData, type FetchRequest } from '../../protocol/messages/001-fetch.gen.js';
import {
  createListOffsetsResponse,
  createListOffsetsResponseListOffsetsPartitionResponse,
  createListOffsetsResponseListOffsetsTopicResponse,
  type ListOffsetsRequest,
} from '../../protocol/messages/002-list-offsets.gen.js';
import { createMetadataResponse, createMetadataResponseTopic, type MetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import {
  createOffsetCommitResponse,
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
  type OffsetCommitRequest,
} from '../../protocol/messages/008-offset-commit.gen.js';
import {
  createOffsetFetchResponse,
  createOffsetFetchResponseGroup,
  createOffsetFetchResponsePartition,
  createOffsetFetchResponseTopic,
  type OffsetFetchRequest,
} from '../../protocol/messages/009-offset-fetch.gen.js';
import { createFindCoordinatorResponse, createFindCoordinatorResponseCoordinator, type FindCoordinatorRequest } from '../../protocol/messages/010-find-coordinator.gen.js';
import { createJoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import { createHeartbeatResponse } from '../../protocol/messages/012-heartbeat.gen.js';
import { createLeaveGroupResponse } from '../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { createDescribeGroupsResponse, createDescribeGroupsResponseDescribedGroup, type DescribeGroupsRequest } from '../../protocol/messages/015-describe-groups.gen.js';
import { createListGroupsResponse } from '../../protocol/messages/016-list-groups.gen.js';
import { createCreateTopicsResponse, createCreateTopicsResponseCreatableTopicResult, type CreateTopicsRequest } from '../../protocol/messages/019-create-topics.gen.js';
import { createDeleteTopicsResponse, createDeleteTopicsResponseDeletableTopicResult, type DeleteTopicsRequest } from '../../protocol/messages/020-delete-topics.gen.js';
import {
  createDeleteRecordsResponse,
  createDeleteRecordsResponseDeleteRecordsPartitionResult,
  createDeleteRecordsResponseDeleteRecordsTopicResult,
  type DeleteRecordsRequest,
} from '../../protocol/messages/021-delete-records.gen.js';
import { createInitProducerIdResponse } from '../../protocol/messages/022-init-producer-id.gen.js';
import {
  createAddPartitionsToTxnResponse,
  createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult,
  createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult,
  type AddPartitionsToTxnRequest,
} from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { createAddOffsetsToTxnResponse } from '../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { createEndTxnResponse } from '../../protocol/messages/026-end-txn.gen.js';
import { createDescribeTransactionsResponse, createDescribeTransactionsResponseTransactionState, type DescribeTransactionsRequest } from '../../protocol/messages/065-describe-transactions.gen.js';
import { createListTransactionsResponse } from '../../protocol/messages/066-list-transactions.gen.js';
import {
  createOffsetForLeaderEpochResponse,
  createOffsetForLeaderEpochResponseEpochEndOffset,
  createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult,
  type OffsetForLeaderEpochRequest,
} from '../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import {
  createTxnOffsetCommitResponse,
  createTxnOffsetCommitResponsePartition,
  createTxnOffsetCommitResponseTopic,
  type TxnOffsetCommitRequest,
} from '../../protocol/messages/028-txn-offset-commit.gen.js';
import {
  createDescribeConfigsResponse,
  createDescribeConfigsResponseDescribeConfigsResult,
  type DescribeConfigsRequest,
} from '../../protocol/messages/032-describe-configs.gen.js';
import { createElectLeadersResponse, createElectLeadersResponsePartitionResult, createElectLeadersResponseReplicaElectionResult, type ElectLeadersRequest } from '../../protocol/messages/043-elect-leaders.gen.js';
import {
  createAlterPartitionReassignmentsResponse,
  createAlterPartitionReassignmentsResponseReassignablePartitionResponse,
  createAlterPartitionReassignmentsResponseReassignableTopicResponse,
  type AlterPartitionReassignmentsRequest,
} from '../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { createListPartitionReassignmentsResponse } from '../../protocol/messages/046-list-partition-reassignments.gen.js';
import { createDescribeQuorumResponse } from '../../protocol/messages/055-describe-quorum.gen.js';
import { createListConfigResourcesResponse } from '../../protocol/messages/074-list-config-resources.gen.js';
import { createDescribeTopicPartitionsResponse, createDescribeTopicPartitionsResponseTopic, type DescribeTopicPartitionsRequest } from '../../protocol/messages/075-describe-topic-partitions.gen.js';
import {
  createAlterConfigsResponse,
  createAlterConfigsResponseAlterConfigsResourceResponse,
  type AlterConfigsRequest,
} from '../../protocol/messages/033-alter-configs.gen.js';
import { createDescribeLogDirsResponse } from '../../protocol/messages/035-describe-log-dirs.gen.js';
import {
  createWriteTxnMarkersResponse,
  createWriteTxnMarkersResponseWritableTxnMarkerPartitionResult,
  createWriteTxnMarkersResponseWritableTxnMarkerResult,
  createWriteTxnMarkersResponseWritableTxnMarkerTopicResult,
  type WriteTxnMarkersRequest,
} from '../../protocol/messages/027-write-txn-markers.gen.js';
import {
  createCreatePartitionsResponse,
  createCreatePartitionsResponseCreatePartitionsTopicResult,
  type CreatePartitionsRequest,
} from '../../protocol/messages/037-create-partitions.gen.js';
import { createDeleteGroupsResponse, createDeleteGroupsResponseDeletableGroupResult, type DeleteGroupsRequest } from '../../protocol/messages/042-delete-groups.gen.js';
import {
  createIncrementalAlterConfigsResponse,
  createIncrementalAlterConfigsResponseAlterConfigsResourceResponse,
  type IncrementalAlterConfigsRequest,
} from '../../protocol/messages/044-incremental-alter-configs.gen.js';
import { createOffsetDeleteResponse } from '../../protocol/messages/047-offset-delete.gen.js';
import { createDescribeClientQuotasResponse } from '../../protocol/messages/048-describe-client-quotas.gen.js';
import { createAlterClientQuotasResponse, type AlterClientQuotasRequest } from '../../protocol/messages/049-alter-client-quotas.gen.js';
import { createDescribeClusterResponse } from '../../protocol/messages/060-describe-cluster.gen.js';
import {
  createDescribeProducersResponse,
  createDescribeProducersResponsePartitionResponse,
  createDescribeProducersResponseTopicResponse,
  type DescribeProducersRequest,
} from '../../protocol/messages/061-describe-producers.gen.js';
import { createConsumerGroupHeartbeatResponse } from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import {
  createConsumerGroupDescribeResponse,
  createConsumerGroupDescribeResponseDescribedGroup,
  type ConsumerGroupDescribeRequest,
} from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { createSaslHandshakeResponse } from '../../protocol/messages/017-sasl-handshake.gen.js';
import { createSaslAuthenticateResponse } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import {
  createDescribeUserScramCredentialsResponse,
  createDescribeUserScramCredentialsResponseDescribeUserScramCredentialsResult,
  type DescribeUserScramCredentialsRequest,
} from '../../protocol/messages/050-describe-user-scram-credentials.gen.js';
import {
  createAlterUserScramCredentialsResponse,
  createAlterUserScramCredentialsResponseAlterUserScramCredentialsResult,
  type AlterUserScramCredentialsRequest,
} from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { createDescribeAclsResponse } from '../../protocol/messages/029-describe-acls.gen.js';
import { createCreateAclsResponse, type CreateAclsRequest } from '../../protocol/messages/030-create-acls.gen.js';
import { createDeleteAclsResponse, type DeleteAclsRequest } from '../../protocol/messages/031-delete-acls.gen.js';
import { NO_RESPONSE } from './handler.js';

/** A failure as Kafka's ApiError holds it: the code, and the message a response may carry (or null). */
export interface ApiError {
  readonly code: number;
  readonly message: string | null;
}

/**
 * Kafka's `ApiError.fromThrowable` for `code`, the code chosen for `err` (kafkaErrorOf): the error's own
 * message, except for UNKNOWN_SERVER_ERROR and for a message that is only the code's default text. A
 * failure that is not one of Ledgerline's (a bug: TypeError, ...) has no message to show.
 */
export function apiErrorOf(err: unknown, code: number): ApiError {
  if (code === ErrorCode.UNKNOWN_SERVER_ERROR || !isLedgerlineError(err)) return { code, message: null };
  const message = err.message === errorByCode(code).message ? null : err.message;
  return { code, message };
}

/** The code's default text: Kafka's `Errors.message()`, used where Kafka writes `error.message()`. */
function defaultMessage(code: number): string | null {
  return errorByCode(code).message;
}

type Builder = (request: any, version: number, error: ApiError) => unknown;

/** Kafka's getErrorResponse, by API key, for every API Ledgerline serves (src/api/index.ts). */
const BUILDERS: ReadonlyMap<number, Builder> = new Map<number, Builder>([
  // ProduceRequest: each partition of the request (once per topic-partition), offsets unknown.
  [0, (req: ProduceRequest, v, e) => {
    if (req.acks === 0) return NO_RESPONSE;
    const res = createProduceResponse();
    const byTopic = new Map<string, { topic: ProduceResponseTopicProduceResponse; seen: Set<number> }>();
    for (const t of req.topicData) {
      let entry = byTopic.get(t.name);
      if (!entry) {
        entry = { topic: createProduceResponseTopicProduceResponse({ name: t.name, partitionResponses: [] }), seen: new Set() };
        byTopic.set(t.name, entry);
        res.responses.push(entry.topic);
      }
      for (const p of t.partitionData) {
        if (entry.seen.has(p.index)) continue;
        entry.seen.add(p.index);
        entry.topic.partitionResponses.push(
          createProduceResponsePartitionProduceResponse({
            index: p.index,
            errorCode: e.code,
            baseOffset: -1n,
            logAppendTimeMs: -1n,
            logStartOffset: -1n,
            recordErrors: [],
            errorMessage: v >= 8 ? e.message : null,
          }),
        );
      }
    }
    return res;
  }],
  // FetchRequest: the top-level code; before v13 every requested partition too (high watermark -1). The
  // session id is echoed.
  [1, (req: FetchRequest, v, e) =>
    createFetchResponse({
      errorCode: e.code,
      sessionId: req.sessionId,
      responses: v >= 13 ? [] : req.topics.map((t) =>
        createFetchResponseFetchableTopicResponse({
          topic: t.topic,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => createFetchResponsePartitionData({ partitionIndex: p.partition, errorCode: e.code, highWatermark: -1n })),
        }),
      ),
    })],
  // ListOffsetsRequest: each partition; v0 no old-style offsets, v1+ offset and timestamp -1.
  [2, (req: ListOffsetsRequest, v, e) =>
    createListOffsetsResponse({
      topics: req.topics.map((t) =>
        createListOffsetsResponseListOffsetsTopicResponse({
          name: t.name,
          partitions: t.partitions.map((p) =>
            createListOffsetsResponseListOffsetsPartitionResponse({
              partitionIndex: p.partitionIndex,
              errorCode: e.code,
              oldStyleOffsets: [],
              ...(v >= 1 ? { offset: -1n, timestamp: -1n } : {}),
            }),
          ),
        }),
      ),
    })],
  // MetadataRequest: each named topic (a null name becomes ""), no partitions; no brokers.
  [3, (req: MetadataRequest, _v, e) =>
    createMetadataResponse({
      topics: (req.topics ?? []).map((t) =>
        createMetadataResponseTopic({ name: t.name ?? '', topicId: t.topicId, errorCode: e.code, isInternal: false, partitions: [] }),
      ),
    })],
  // OffsetCommitRequest: each partition.
  [8, (req: OffsetCommitRequest, _v, e) =>
    createOffsetCommitResponse({
      topics: req.topics.map((t) =>
        createOffsetCommitResponseTopic({
          name: t.name,
          partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: e.code })),
        }),
      ),
    })],
  // OffsetFetchRequest: v0-1 each partition (offset -1, metadata ""), v2-7 the top-level code alone, v8+
  // each group.
  [9, (req: OffsetFetchRequest, v, e) => {
    if (v >= 8) {
      return createOffsetFetchResponse({ groups: req.groups.map((g) => createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: e.code, topics: [] })) });
    }
    if (v >= 2) return createOffsetFetchResponse({ errorCode: e.code, topics: [] });
    return createOffsetFetchResponse({
      topics: (req.topics ?? []).map((t) =>
        createOffsetFetchResponseTopic({
          name: t.name,
          partitions: t.partitionIndexes.map((i) =>
            createOffsetFetchResponsePartition({ partitionIndex: i, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: e.code }),
          ),
        }),
      ),
    });
  }],
  // FindCoordinatorRequest: before v4 the top level, v4+ each key; no node (-1, "", -1), the code's message.
  [10, (req: FindCoordinatorRequest, v, e) => {
    if (v < 4) {
      return createFindCoordinatorResponse({ errorCode: e.code, errorMessage: v >= 1 ? defaultMessage(e.code) : null, nodeId: -1, host: '', port: -1 });
    }
    return createFindCoordinatorResponse({
      coordinators: req.coordinatorKeys.map((key) =>
        createFindCoordinatorResponseCoordinator({ key, nodeId: -1, host: '', port: -1, errorCode: e.code, errorMessage: defaultMessage(e.code) }),
      ),
    });
  }],
  // JoinGroupRequest: generation -1, no leader or member id, no members; protocol name "" before v7, null after.
  [11, (_req, v, e) =>
    createJoinGroupResponse({ errorCode: e.code, generationId: -1, protocolName: v >= 7 ? null : '', leader: '', memberId: '', members: [] })],
  [12, (_req, _v, e) => createHeartbeatResponse({ errorCode: e.code })],
  // LeaveGroupRequest: the top level alone.
  [13, (_req, _v, e) => createLeaveGroupResponse({ errorCode: e.code, members: [] })],
  [14, (_req, _v, e) => createSyncGroupResponse({ errorCode: e.code, assignment: Buffer.alloc(0) })],
  // DescribeGroupsRequest: each group, state, protocol type and protocol "", authorized operations omitted.
  [15, (req: DescribeGroupsRequest, v, e) =>
    createDescribeGroupsResponse({
      groups: req.groups.map((groupId) =>
        createDescribeGroupsResponseDescribedGroup({
          groupId,
          errorCode: e.code,
          errorMessage: v >= 6 ? defaultMessage(e.code) : null,
          groupState: '',
          protocolType: '',
          protocolData: '',
          members: [],
          authorizedOperations: -2147483648,
        }),
      ),
    })],
  [16, (_req, _v, e) => createListGroupsResponse({ errorCode: e.code, groups: [] })],
  // ApiVersionsRequest: the code; for UNSUPPORTED_VERSION the ApiVersions range alone (KIP-511).
  [18, (_req, _v, e) =>
    createApiVersionsResponse({
      errorCode: e.code,
      apiKeys: e.code === ErrorCode.UNSUPPORTED_VERSION
        ? [createApiVersionsResponseApiVersion({ apiKey: ApiVersionsApi.apiKey, minVersion: ApiVersionsApi.validVersions.min, maxVersion: ApiVersionsApi.validVersions.max })]
        : [],
    })],
  // CreateTopicsRequest: each topic, with ApiError's message (v1+).
  [19, (req: CreateTopicsRequest, v, e) =>
    createCreateTopicsResponse({
      topics: req.topics.map((t) => createCreateTopicsResponseCreatableTopicResult({ name: t.name, errorCode: e.code, errorMessage: v >= 1 ? e.message : null })),
    })],
  // DeleteTopicsRequest: each topic, by name (v0-5) or by name and id (v6+).
  [20, (req: DeleteTopicsRequest, v, e) =>
    createDeleteTopicsResponse({
      responses: v >= 6
        ? req.topics.map((t) => createDeleteTopicsResponseDeletableTopicResult({ name: t.name, topicId: t.topicId, errorCode: e.code }))
        : req.topicNames.map((name) => createDeleteTopicsResponseDeletableTopicResult({ name, errorCode: e.code })),
    })],
  // DeleteRecordsRequest: each partition, low watermark -1.
  [21, (req: DeleteRecordsRequest, _v, e) =>
    createDeleteRecordsResponse({
      topics: req.topics.map((t) =>
        createDeleteRecordsResponseDeleteRecordsTopicResult({
          name: t.name,
          partitions: t.partitions.map((p) => createDeleteRecordsResponseDeleteRecordsPartitionResult({ partitionIndex: p.partitionIndex, errorCode: e.code, lowWatermark: -1n })),
        }),
      ),
    })],
  [22, (_req, _v, e) => createInitProducerIdResponse({ errorCode: e.code, producerId: -1n, producerEpoch: -1 })],
  // AddPartitionsToTxnRequest: each partition before v4, the top level from v4 (the batched, broker-to-broker form).
  [24, (req: AddPartitionsToTxnRequest, v, e) =>
    v >= 4
      ? createAddPartitionsToTxnResponse({ errorCode: e.code })
      : createAddPartitionsToTxnResponse({
          resultsByTopicV3AndBelow: req.v3AndBelowTopics.map((t) =>
            createAddPartitionsToTxnResponseAddPartitionsToTxnTopicResult({
              name: t.name,
              resultsByPartition: t.partitions.map((partitionIndex) => createAddPartitionsToTxnResponseAddPartitionsToTxnPartitionResult({ partitionIndex, partitionErrorCode: e.code })),
            }),
          ),
        })],
  [25, (_req, _v, e) => createAddOffsetsToTxnResponse({ errorCode: e.code })],
  [26, (_req, _v, e) => createEndTxnResponse({ errorCode: e.code })],
  // DescribeTransactionsRequest: each transactional id.
  [65, (req: DescribeTransactionsRequest, _v, e) =>
    createDescribeTransactionsResponse({ transactionStates: req.transactionalIds.map((transactionalId) => createDescribeTransactionsResponseTransactionState({ transactionalId, errorCode: e.code })) })],
  [66, (_req, _v, e) => createListTransactionsResponse({ errorCode: e.code })],
  // OffsetsForLeaderEpochRequest: each partition, epoch and end offset undefined (-1).
  [23, (req: OffsetForLeaderEpochRequest, _v, e) =>
    createOffsetForLeaderEpochResponse({
      topics: req.topics.map((t) =>
        createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult({
          topic: t.topic,
          partitions: t.partitions.map((p) => createOffsetForLeaderEpochResponseEpochEndOffset({ partition: p.partition, errorCode: e.code, leaderEpoch: -1, endOffset: -1n })),
        }),
      ),
    })],
  // TxnOffsetCommitRequest: each partition, under its name (v6: its id).
  [28, (req: TxnOffsetCommitRequest, _v, e) =>
    createTxnOffsetCommitResponse({
      topics: req.topics.map((t) =>
        createTxnOffsetCommitResponseTopic({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((p) => createTxnOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: e.code })),
        }),
      ),
    })],
  // DescribeConfigsRequest: each resource, with the code's message.
  [32, (req: DescribeConfigsRequest, _v, e) =>
    createDescribeConfigsResponse({
      results: req.resources.map((r) =>
        createDescribeConfigsResponseDescribeConfigsResult({ resourceType: r.resourceType, resourceName: r.resourceName, errorCode: e.code, errorMessage: defaultMessage(e.code), configs: [] }),
      ),
    })],
  [33, (req: AlterConfigsRequest, _v, e) =>
    createAlterConfigsResponse({
      responses: req.resources.map((r) =>
        createAlterConfigsResponseAlterConfigsResourceResponse({ resourceType: r.resourceType, resourceName: r.resourceName, errorCode: e.code, errorMessage: e.message }),
      ),
    })],
  // DescribeLogDirsRequest: the top-level code, which only v3+ has; no log dirs.
  [35, (_req, v, e) => createDescribeLogDirsResponse({ errorCode: v >= 3 ? e.code : ErrorCode.NONE, results: [] })],
  [37, (req: CreatePartitionsRequest, _v, e) =>
    createCreatePartitionsResponse({
      results: req.topics.map((t) => createCreatePartitionsResponseCreatePartitionsTopicResult({ name: t.name, errorCode: e.code, errorMessage: e.message })),
    })],
  [42, (req: DeleteGroupsRequest, _v, e) =>
    createDeleteGroupsResponse({ results: req.groupsNames.map((groupId) => createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: e.code })) })],
  [44, (req: IncrementalAlterConfigsRequest, _v, e) =>
    createIncrementalAlterConfigsResponse({
      responses: req.resources.map((r) =>
        createIncrementalAlterConfigsResponseAlterConfigsResourceResponse({ resourceType: r.resourceType, resourceName: r.resourceName, errorCode: e.code, errorMessage: e.message }),
      ),
    })],
  // OffsetDeleteRequest: the top level alone.
  [47, (_req, _v, e) => createOffsetDeleteResponse({ errorCode: e.code, topics: [] })],
  // DescribeClientQuotasRequest: the top level (ApiError.fromThrowable), entries null.
  [48, (_req, _v, e) => createDescribeClientQuotasResponse({ errorCode: e.code, errorMessage: e.message, entries: null })],
  // AlterClientQuotasRequest: each entry of the request with its entity as sent, the code's default message.
  [49, (req: AlterClientQuotasRequest, _v, e) =>
    createAlterClientQuotasResponse({
      entries: req.entries.map((entry) => ({
        errorCode: e.code,
        errorMessage: defaultMessage(e.code),
        entity: entry.entity.map((c) => ({ entityType: c.entityType, entityName: c.entityName })),
      })),
    })],
  // WriteTxnMarkersRequest: each partition of each marker.
  [27, (req: WriteTxnMarkersRequest, _v, e) =>
    createWriteTxnMarkersResponse({
      markers: req.markers.map((m) =>
        createWriteTxnMarkersResponseWritableTxnMarkerResult({
          producerId: m.producerId,
          topics: m.topics.map((t) =>
            createWriteTxnMarkersResponseWritableTxnMarkerTopicResult({
              name: t.name,
              partitions: t.partitionIndexes.map((i) => createWriteTxnMarkersResponseWritableTxnMarkerPartitionResult({ partitionIndex: i, errorCode: e.code })),
            }),
          ),
        }),
      ),
    })],
  [60, (_req, _v, e) => createDescribeClusterResponse({ errorCode: e.code, errorMessage: e.message })],
  // DescribeProducersRequest: each partition.
  [61, (req: DescribeProducersRequest, _v, e) =>
    createDescribeProducersResponse({
      topics: req.topics.map((t) =>
        createDescribeProducersResponseTopicResponse({
          name: t.name,
          partitions: t.partitionIndexes.map((i) => createDescribeProducersResponsePartitionResponse({ partitionIndex: i, errorCode: e.code, activeProducers: [] })),
        }),
      ),
    })],
  [68, (_req, _v, e) => createConsumerGroupHeartbeatResponse({ errorCode: e.code })],
  [69, (req: ConsumerGroupDescribeRequest, _v, e) =>
    createConsumerGroupDescribeResponse({ groups: req.groupIds.map((groupId) => createConsumerGroupDescribeResponseDescribedGroup({ groupId, errorCode: e.code })) })],
  // ElectLeadersRequest: each named partition, and the top level from v1 (a null list, every partition, gets none).
  [43, (req: ElectLeadersRequest, v, e) =>
    createElectLeadersResponse({
      errorCode: v >= 1 ? e.code : ErrorCode.NONE,
      replicaElectionResults: (req.topicPartitions ?? []).map((t) =>
        createElectLeadersResponseReplicaElectionResult({
          topic: t.topic,
          partitionResult: t.partitions.map((partitionId) => createElectLeadersResponsePartitionResult({ partitionId, errorCode: e.code, errorMessage: e.message })),
        }),
      ),
    })],
  // AlterPartitionReassignmentsRequest: the top level and each partition.
  [45, (req: AlterPartitionReassignmentsRequest, _v, e) =>
    createAlterPartitionReassignmentsResponse({
      errorCode: e.code,
      errorMessage: e.message,
      allowReplicationFactorChange: req.allowReplicationFactorChange,
      responses: req.topics.map((t) =>
        createAlterPartitionReassignmentsResponseReassignableTopicResponse({
          name: t.name,
          partitions: t.partitions.map((p) => createAlterPartitionReassignmentsResponseReassignablePartitionResponse({ partitionIndex: p.partitionIndex, errorCode: e.code, errorMessage: e.message })),
        }),
      ),
    })],
  // SaslHandshakeRequest: the code alone, no mechanisms.
  [17, (_req, _v, e) => createSaslHandshakeResponse({ errorCode: e.code, mechanisms: [] })],
  // SaslAuthenticateRequest: the code and message.
  [36, (_req, _v, e) => createSaslAuthenticateResponse({ errorCode: e.code, errorMessage: e.message })],
  // DescribeUserScramCredentialsRequest: the top level, and a result (without its user, as Kafka's) per user named.
  [50, (req: DescribeUserScramCredentialsRequest, _v, e) =>
    createDescribeUserScramCredentialsResponse({
      errorCode: e.code,
      errorMessage: e.message,
      results: (req.users ?? []).map(() => createDescribeUserScramCredentialsResponseDescribeUserScramCredentialsResult({ user: '', errorCode: e.code, errorMessage: e.message })),
    })],
  // AlterUserScramCredentialsRequest: every user of the deletions and upsertions once, in name order.
  [51, (req: AlterUserScramCredentialsRequest, _v, e) =>
    createAlterUserScramCredentialsResponse({
      results: [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])]
        .sort()
        .map((user) => createAlterUserScramCredentialsResponseAlterUserScramCredentialsResult({ user, errorCode: e.code, errorMessage: e.message })),
    })],
  // ListPartitionReassignmentsRequest: the top level alone.
  // DescribeAclsRequest: the top level; CreateAclsRequest: each creation; DeleteAclsRequest: each filter.
  [29, (_req, _v, e) => createDescribeAclsResponse({ errorCode: e.code, errorMessage: e.message })],
  [30, (req: CreateAclsRequest, _v, e) => createCreateAclsResponse({ results: req.creations.map(() => ({ errorCode: e.code, errorMessage: e.message })) })],
  [31, (req: DeleteAclsRequest, _v, e) => createDeleteAclsResponse({ filterResults: req.filters.map(() => ({ errorCode: e.code, errorMessage: e.message, matchingAcls: [] })) })],
  [46, (_req, _v, e) => createListPartitionReassignmentsResponse({ errorCode: e.code, errorMessage: e.message, topics: [] })],
  // DescribeQuorumRequest.getTopLevelErrorResponse; the message field exists from v2.
  [55, (_req, _v, e) => createDescribeQuorumResponse({ errorCode: e.code, errorMessage: e.message, topics: [], nodes: [] })],
  // ListConfigResourcesRequest: the top level alone.
  [74, (_req, _v, e) => createListConfigResourcesResponse({ errorCode: e.code, configResources: [] })],
  // DescribeTopicPartitionsRequest: each named topic, no cursor.
  [75, (req: DescribeTopicPartitionsRequest, _v, e) =>
    createDescribeTopicPartitionsResponse({ topics: req.topics.map((t) => createDescribeTopicPartitionsResponseTopic({ name: t.name, errorCode: e.code })), nextCursor: null })],
]);

/** True for an API key that has an error response here. */
export function hasErrorResponse(apiKey: number): boolean {
  return BUILDERS.has(apiKey);
}

/**
 * The error response to `request` (of API `apiKey`, at `version`) for `error`: Kafka's getErrorResponse.
 * NO_RESPONSE where Kafka sends none (Produce with acks=0). Throws for an API without a builder, which the
 * unit test rules out for every served API.
 */
export function errorResponse(apiKey: number, version: number, request: unknown, error: ApiError): unknown {
  const build = BUILDERS.get(apiKey);
  if (!build) throw new Error(`no error response for API key ${apiKey}`);
  return build(request, version, error);
}
