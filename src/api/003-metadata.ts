// Metadata v0-12 · v1: null topics = all, controllerId, isInternal · v2: clusterId · v4: allowAutoTopicCreation
// · v5: offlineReplicas · v7: leaderEpoch · v8: authorized operations (KIP-430) · v9+: flexible
// · v10: topic ids (KIP-516) · v11: cluster operations moved to DescribeCluster.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  MetadataApi,
  createMetadataResponse,
  createMetadataResponseBroker,
  createMetadataResponsePartition,
  createMetadataResponseTopic,
  type MetadataResponseTopic,
} from '../../protocol/messages/003-metadata.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { TopicRecord } from '../cluster/topics.js';
import { topicNameError } from '../cluster/topic-names.js';
import { AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_OPERATIONS, TOPIC_OPERATIONS } from './authorized-operations.js';
import { defineHandler, type RequestContext } from './handler.js';
import type { NodeService, PartitionService } from './services.js';

export function describeTopic(services: { readonly node: NodeService; readonly partitions: PartitionService }, t: TopicRecord, includeOps: boolean): MetadataResponseTopic {
  const node = services.node.nodeId;
  const partitions = [];
  for (let p = 0; p < t.partitions; p++) {
    const part = services.partitions.get(t.name, p);
    partitions.push(
      part
        ? createMetadataResponsePartition({ partitionIndex: p, leaderId: node, leaderEpoch: part.log.leaderEpoch, replicaNodes: [node], isrNodes: [node] })
        : // Still opening (src/cluster/partitions.ts, OPEN_INLINE): no leader yet, as Kafka reports a partition
          // whose leader is not available; clients wait for one before they produce or fetch.
          createMetadataResponsePartition({ partitionIndex: p, errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1, leaderEpoch: -1, replicaNodes: [node], isrNodes: [] }),
    );
  }
  return createMetadataResponseTopic({
    name: t.name,
    topicId: t.topicId,
    isInternal: t.internal,
    partitions,
    topicAuthorizedOperations: includeOps ? TOPIC_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
  });
}

function errorTopic(name: string | null, topicId: string, errorCode: number): MetadataResponseTopic {
  return createMetadataResponseTopic({ name, topicId, errorCode, topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });
}

/** The broker list clients see: this node at the advertised address of the listener they came in on. */
export function advertisedSelf(ctx: RequestContext<'node'>): { host: string; port: number } {
  const { host, port } = ctx.services.node.advertisedFor(ctx.connection.listenerName);
  return { host, port };
}

export const metadata = defineHandler({
  api: MetadataApi,
  uses: ['node', 'config', 'topics', 'partitions'],
  versions: { min: 0, max: 12 },
  async handle(req, ctx) {
    const { services } = ctx;
    const { node, config } = services;
    const v = ctx.apiVersion;
    const includeOps = v >= 8 && req.includeTopicAuthorizedOperations;
    // v0: an empty list means every topic; v1+: null means every topic.
    const all = req.topics === null || (v === 0 && req.topics.length === 0);
    const autoCreate = config.autoCreateTopics && (v < 4 || req.allowAutoTopicCreation);
    const topics: MetadataResponseTopic[] = [];
    const byIdError = !all && v < 12 ? req.topics!.find((rt) => rt.name === null || rt.topicId !== ZERO_UUID) : undefined;
    if (byIdError) {
      // v10-11 carry a topic id field but Kafka serves lookups by id from v12 only: a null name or a topic id
      // fails the whole request with INVALID_REQUEST ("Topic name can not be null for version 10", KafkaApis.
      // handleTopicMetadataRequest), each topic answered by MetadataRequest.getErrorResponse with its name, ""
      // for a null one (these versions cannot encode a null name), and its id.
      for (const rt of req.topics!) {
        topics.push(createMetadataResponseTopic({ name: rt.name ?? '', topicId: rt.topicId, errorCode: ErrorCode.INVALID_REQUEST, topicAuthorizedOperations: AUTHORIZED_OPERATIONS_OMITTED }));
      }
    } else if (all) {
      for (const t of services.topics.list()) topics.push(describeTopic(services, t, includeOps));
    } else if (req.topics!.some((rt) => rt.topicId !== ZERO_UUID)) {
      // v12+: as soon as one topic carries an id the request is by id and every name is ignored (Kafka's
      // KafkaApis.handleTopicMetadataRequest). The Java consumer sends the ids of assigned topics it cannot
      // name yet with an empty name, "", not null.
      for (const id of new Set(req.topics!.map((rt) => rt.topicId).filter((id) => id !== ZERO_UUID))) {
        const t = services.topics.getById(id);
        topics.push(t ? describeTopic(services, t, includeOps) : errorTopic(null, id, ErrorCode.UNKNOWN_TOPIC_ID));
      }
    } else {
      for (const rt of req.topics!) {
        if (rt.name === null) {
          topics.push(errorTopic(null, rt.topicId, ErrorCode.UNKNOWN_TOPIC_ID));
          continue;
        }
        let t = services.topics.get(rt.name);
        if (!t && topicNameError(rt.name) !== null) {
          topics.push(errorTopic(rt.name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION));
          continue;
        }
        if (!t && autoCreate) t = await services.topics.autoCreate(rt.name);
        topics.push(t ? describeTopic(services, t, includeOps) : errorTopic(rt.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      }
    }
    const self = advertisedSelf(ctx);
    return createMetadataResponse({
      brokers: [createMetadataResponseBroker({ nodeId: node.nodeId, host: self.host, port: self.port, rack: null })],
      clusterId: node.clusterId,
      controllerId: node.nodeId,
      topics,
      clusterAuthorizedOperations: v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations ? CLUSTER_OPERATIONS : AUTHORIZED_OPERATIONS_OMITTED,
    });
  },
});

