// Metadata v0-13 · v1: null topics = all, controllerId, isInternal · v2: clusterId · v4: allowAutoTopicCreation
// · v5: offlineReplicas · v7: leaderEpoch · v8: authorized operations (KIP-430) · v9+: flexible
// · v10: topic ids (KIP-516) · v11: cluster operations moved to DescribeCluster · v13: a top-level error code,
// for REBOOTSTRAP_REQUIRED (KIP-1102); this node, which serves its own metadata, answers 0.
//
// Authorization, as KafkaApis.handleTopicMetadataRequest: only topics the principal may DESCRIBE are described.
// Asked for every topic, the others are left out silently; named (or by id), they are answered
// TOPIC_AUTHORIZATION_FAILED without their id, before their existence is looked at. Auto-creating a topic needs
// CREATE on the cluster or on the topic (else TOPIC_AUTHORIZATION_FAILED). Authorized operations (v8+) are the
// principal's, for the topics described and those answered UNKNOWN_TOPIC_OR_PARTITION or INVALID_TOPIC_EXCEPTION.
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
import { AUTHORIZED_OPERATIONS_OMITTED } from './authorized-operations.js';
import { AclOperation, CLUSTER_NAME, ResourceType } from './access.js';
import { mapBounded } from './bounded-map.js';
import { defineHandler, type RequestContext } from './handler.js';
import type { BrokerEndpoint, LiveBroker } from '../cluster/cluster-view.js';
import type { ClusterService, PartitionService } from './services.js';
import { reportedLeaderEpoch } from './node-view.js';

/**
 * Partitions a Metadata request that names its topics opens (when this broker owns them and they are not open
 * yet) before it answers, so that it reports their leader epoch (KIP-320): clients that name a topic are about
 * to use it. Partitions open on first use (src/cluster/partitions.ts); one open costs a few fsyncs, so the rest
 * of a very large topic is reported with leader epoch -1 (unknown, as from a broker before KIP-320) until used.
 */
const METADATA_OPEN_BUDGET = 100;
const METADATA_OPEN_CONCURRENCY = 8;

/** Opens the owned, unopened partitions of the named topics, up to METADATA_OPEN_BUDGET in all. */
async function openNamed(services: { readonly cluster: ClusterService; readonly partitions: PartitionService }, topics: readonly TopicRecord[]): Promise<void> {
  const work: [string, number][] = [];
  for (const t of topics) {
    for (let p = 0; p < t.partitions && work.length < METADATA_OPEN_BUDGET; p++) {
      if (!services.partitions.get(t.name, p) && services.cluster.owns(t.name, p)) work.push([t.name, p]);
    }
  }
  // A partition that fails to open (logged by the partition manager) is described without its epoch.
  await mapBounded(work, ([name, p]) => services.partitions.open(name, p).catch(() => undefined), METADATA_OPEN_CONCURRENCY);
}

/**
 * A topic as Metadata describes it: each partition's leader, replicas and in-sync replicas from the cluster
 * view, its leader epoch as reportedLeaderEpoch gives it.
 */
export function describeTopic(services: { readonly cluster: ClusterService; readonly partitions: PartitionService }, t: TopicRecord, authorizedOperations: number): MetadataResponseTopic {
  const { cluster } = services;
  const partitions = [];
  for (let p = 0; p < t.partitions; p++) {
    const leaderId = cluster.owner(t.name, p);
    const replicaNodes = [...cluster.replicas(t.name, p)];
    partitions.push(
      leaderId >= 0
        ? createMetadataResponsePartition({ partitionIndex: p, leaderId, leaderEpoch: reportedLeaderEpoch(services.partitions, cluster, t.name, p), replicaNodes, isrNodes: [...cluster.isr(t.name, p)] })
        : // No owner: no leader, as Kafka reports a partition whose leader is not available; clients wait for
          // one before they produce or fetch.
          createMetadataResponsePartition({ partitionIndex: p, errorCode: ErrorCode.LEADER_NOT_AVAILABLE, leaderId: -1, leaderEpoch: -1, replicaNodes, isrNodes: [] }),
    );
  }
  return createMetadataResponseTopic({
    name: t.name,
    topicId: t.topicId,
    isInternal: t.internal,
    partitions,
    topicAuthorizedOperations: authorizedOperations,
  });
}

function errorTopic(name: string | null, topicId: string, errorCode: number, authorizedOperations = AUTHORIZED_OPERATIONS_OMITTED): MetadataResponseTopic {
  return createMetadataResponseTopic({ name, topicId, errorCode, topicAuthorizedOperations: authorizedOperations });
}

/** A broker's endpoint for the listener a client came in on (the first one when it has none of that name). */
export function endpointFor(b: LiveBroker, listenerName: string): BrokerEndpoint | undefined {
  return b.endpoints.find((e) => e.listenerName === listenerName) ?? b.endpoints[0];
}

/** This node at the advertised address of the listener the client came in on. */
export function advertisedSelf(ctx: RequestContext<'node'>): { host: string; port: number } {
  const { host, port } = ctx.services.node.advertisedFor(ctx.connection.listenerName);
  return { host, port };
}

export const metadata = defineHandler({
  api: MetadataApi,
  uses: ['node', 'config', 'topics', 'cluster', 'partitions'],
  versions: { min: 0, max: 13 },
  async handle(req, ctx) {
    const { services } = ctx;
    const { node, config } = services;
    const v = ctx.apiVersion;
    const includeOps = v >= 8 && req.includeTopicAuthorizedOperations;
    const opsOf = (name: string): number => (includeOps ? ctx.access.authorizedOperations(ResourceType.TOPIC, name) : AUTHORIZED_OPERATIONS_OMITTED);
    const { access } = ctx;
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
      const listed = services.topics.list();
      const describable = access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, listed.map((t) => t.name), { logIfDenied: false });
      for (const t of listed) if (describable.has(t.name)) topics.push(describeTopic(services, t, opsOf(t.name)));
    } else {
      // Named topics (by id or by name), described once their partitions are open (openNamed).
      const found: (TopicRecord | MetadataResponseTopic)[] = [];
      if (req.topics!.some((rt) => rt.topicId !== ZERO_UUID)) {
        // v12+: as soon as one topic carries an id the request is by id and every name is ignored (Kafka's
        // KafkaApis.handleTopicMetadataRequest). The Java consumer sends the ids of assigned topics it cannot
        // name yet with an empty name, "", not null.
        for (const id of new Set(req.topics!.map((rt) => rt.topicId).filter((id) => id !== ZERO_UUID))) {
          const t = services.topics.getById(id);
          // Topic ids are not secret: an id the principal may not describe is answered with it (Kafka does).
          if (t && !access.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, t.name)) found.push(errorTopic(null, id, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
          else found.push(t ?? errorTopic(null, id, ErrorCode.UNKNOWN_TOPIC_ID));
        }
      } else {
        for (const rt of req.topics!) {
          if (rt.name === null) {
            found.push(errorTopic(null, rt.topicId, ErrorCode.UNKNOWN_TOPIC_ID));
            continue;
          }
          if (!access.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, rt.name)) {
            found.push(errorTopic(rt.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
            continue;
          }
          let t = services.topics.get(rt.name);
          if (!t && autoCreate && !access.authorizeCluster(AclOperation.CREATE, { logIfDenied: false }) && !access.authorize(AclOperation.CREATE, ResourceType.TOPIC, rt.name)) {
            found.push(errorTopic(rt.name, ZERO_UUID, ErrorCode.TOPIC_AUTHORIZATION_FAILED));
            continue;
          }
          if (!t && topicNameError(rt.name) !== null) {
            found.push(errorTopic(rt.name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION, opsOf(rt.name)));
            continue;
          }
          if (!t && autoCreate) t = await services.topics.autoCreate(rt.name);
          found.push(t ?? errorTopic(rt.name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, opsOf(rt.name)));
        }
      }
      const records = found.filter((x): x is TopicRecord => 'partitions' in x && typeof x.partitions === 'number');
      await openNamed(services, records);
      for (const x of found) topics.push(records.includes(x as TopicRecord) ? describeTopic(services, x as TopicRecord, opsOf((x as TopicRecord).name)) : (x as MetadataResponseTopic));
    }
    const brokers = [];
    for (const b of services.cluster.liveBrokers()) {
      const e = endpointFor(b, ctx.connection.listenerName);
      if (e) brokers.push(createMetadataResponseBroker({ nodeId: b.nodeId, host: e.host, port: e.port, rack: b.rack }));
    }
    return createMetadataResponse({
      brokers,
      clusterId: node.clusterId,
      controllerId: services.cluster.controllerId,
      topics,
      clusterAuthorizedOperations:
        v >= 8 && v <= 10 && req.includeClusterAuthorizedOperations
          ? access.authorizeCluster(AclOperation.DESCRIBE)
            ? access.authorizedOperations(ResourceType.CLUSTER, CLUSTER_NAME)
            : 0
          : AUTHORIZED_OPERATIONS_OMITTED,
    });
  },
});

