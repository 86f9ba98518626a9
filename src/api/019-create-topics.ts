// CreateTopics v2-7 (v0-1 removed by Kafka 4, KIP-896) · v1: validateOnly, errorMessage · v4: -1 partitions /
// replication factor mean the broker defaults (KIP-464) · v5+: flexible, the created topic's configs,
// partitions and replication factor in the response · v7: topic id.
//
// Authorization (Kafka's ControllerApis.createTopics, where a Kafka 4 broker forwards it): CREATE on the
// cluster (not logged when denied) allows every topic, else CREATE on each topic; a topic denied is
// TOPIC_AUTHORIZATION_FAILED "Authorization failed." and counts toward no bound. DESCRIBE_CONFIGS on each
// topic (not logged when denied) decides whether a created topic's configs, partitions and replication
// factor are returned (ReplicationControlManager.createTopic): without it topicConfigErrorCode is
// TOPIC_AUTHORIZATION_FAILED. __cluster_metadata is never authorized: its creation is prohibited.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  CreateTopicsApi,
  createCreateTopicsResponse,
  createCreateTopicsResponseCreatableTopicConfigs,
  createCreateTopicsResponseCreatableTopicResult,
  type CreateTopicsRequestCreatableTopic,
  type CreateTopicsResponseCreatableTopicResult,
} from '../../protocol/messages/019-create-topics.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { ClusterApiError } from '../cluster/errors.js';
import { EXCESSIVE_BATCH_MESSAGE, EXCESSIVE_PARTITIONS_MESSAGE, MAX_PARTITIONS_PER_REQUEST, MAX_RECORDS_PER_REQUEST, replicationFactorOf, requestedPartitions, type CreateTopicOptions } from '../cluster/topics.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

/** Kafka's Topic.CLUSTER_METADATA_TOPIC_NAME: the KRaft log, which CreateTopics may not create. */
const CLUSTER_METADATA_TOPIC = '__cluster_metadata';

/** Errors.THROTTLING_QUOTA_EXCEEDED's message, as Kafka's ThrottlingQuotaExceededException carries it. */
export const THROTTLED = 'The throttling quota has been exceeded.';

export const createTopics = defineHandler({
  api: CreateTopicsApi,
  uses: ['node', 'config', 'topics', 'mutationQuotas'],
  versions: { min: 2, max: 7 },
  async handle(req, ctx) {
    const { topics, config, node } = ctx.services;
    const v = ctx.apiVersion;
    const seen = new Map<string, number>();
    for (const t of req.topics) seen.set(t.name, (seen.get(t.name) ?? 0) + 1);
    // KIP-599: strict from v6 (a topic over the quota refused), permissive before (the response throttled).
    const quota = ctx.services.mutationQuotas.quotaFor(ctx.principal.name, ctx.header.clientId ?? '', v >= 6);
    // ControllerApis: the names given once, but __cluster_metadata, are authorized; the others are answered below.
    const names = [...seen.keys()].filter((n) => seen.get(n) === 1 && n !== CLUSTER_METADATA_TOPIC);
    const creatable = ctx.access.authorizeCluster(AclOperation.CREATE, { logIfDenied: false }) ? new Set(names) : ctx.access.allowedNames(AclOperation.CREATE, ResourceType.TOPIC, names);
    const describable = ctx.access.allowedNames(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, names, { logIfDenied: false });
    const results: CreateTopicsResponseCreatableTopicResult[] = [];
    // Kafka's ReplicationControlManager.validateTotalNumberOfPartitions, before any other check: a request for
    // more than 10,000 partitions in all fails whole, every topic answered POLICY_VIOLATION (the controller's
    // exception through CreateTopicsRequest.getErrorResponse). Only the topics the controller sees count: Kafka's
    // ControllerApis takes out duplicates and the topics not authorized.
    let total = 0;
    for (const t of req.topics) {
      if (creatable.has(t.name)) total += requestedPartitions(t.numPartitions, t.assignments.length, config.numPartitions);
    }
    const refuseAll = (errorMessage: string) =>
      createCreateTopicsResponse({
        topics: req.topics.map((t) =>
          createCreateTopicsResponseCreatableTopicResult({ name: t.name, topicId: ZERO_UUID, errorCode: ErrorCode.POLICY_VIOLATION, errorMessage, numPartitions: -1, replicationFactor: -1, configs: null }),
        ),
      });
    if (total > MAX_PARTITIONS_PER_REQUEST) return refuseAll(EXCESSIVE_PARTITIONS_MESSAGE);
    // Kafka's controller then collects the records of the topics it would create (a TopicRecord, a PartitionRecord
    // per partition, a ConfigRecord per config) in a list bounded at QuorumController.MAX_RECORDS_PER_USER_OP; past it
    // the request fails whole with POLICY_VIOLATION, validateOnly or not. Only a request that may pass the bound is
    // checked topic by topic here, as the topics that fail on their own write no record.
    const unique = req.topics.filter((t) => creatable.has(t.name));
    const recordsAtMost = (t: CreateTopicsRequestCreatableTopic): number => 1 + requestedPartitions(t.numPartitions, t.assignments.length, config.numPartitions) + t.configs.filter((c) => c.value !== null).length;
    if (unique.reduce((n, t) => n + recordsAtMost(t), 0) > MAX_RECORDS_PER_REQUEST) {
      let records = 0;
      for (const t of unique) {
        try {
          const created = await topics.create(t.name, { ...createOptions(t, node.nodeId), validateOnly: true });
          records += 1 + created.partitions + Object.keys(created.configs).length;
        } catch (e) {
          if (!(e instanceof ClusterApiError)) throw e;
        }
      }
      if (records > MAX_RECORDS_PER_REQUEST) return refuseAll(EXCESSIVE_BATCH_MESSAGE);
    }
    for (const t of req.topics) {
      const result = createCreateTopicsResponseCreatableTopicResult({ name: t.name, topicId: ZERO_UUID, numPartitions: -1, replicationFactor: -1, configs: null });
      results.push(result);
      if (seen.get(t.name)! > 1) {
        // Kafka: a topic named twice in one request fails every occurrence.
        result.errorCode = ErrorCode.INVALID_REQUEST;
        result.errorMessage = `Duplicate topic name.`;
        continue;
      }
      if (t.name === CLUSTER_METADATA_TOPIC) {
        result.errorCode = ErrorCode.INVALID_REQUEST;
        result.errorMessage = `Creation of internal topic ${CLUSTER_METADATA_TOPIC} is prohibited.`;
        continue;
      }
      if (!creatable.has(t.name)) {
        result.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        result.errorMessage = 'Authorization failed.';
        continue;
      }
      try {
        if (quota.bounded && !req.validateOnly) {
          // KIP-599: a topic that passes its checks takes its partitions from the client's controller mutation quota.
          const valid = await topics.create(t.name, { ...createOptions(t, node.nodeId), validateOnly: true });
          if (!quota.record(valid.partitions)) throw new ClusterApiError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLED);
        }
        const created = await topics.create(t.name, { ...createOptions(t, node.nodeId), validateOnly: req.validateOnly });
        if (!req.validateOnly || v >= 5) {
          result.topicId = req.validateOnly ? ZERO_UUID : created.topicId;
        }
        if (!describable.has(t.name)) {
          // Created, but what it was created with is not told (Kafka: no configs, partitions or replication factor).
          result.configs = [];
          result.topicConfigErrorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
        } else if (!req.validateOnly || v >= 5) {
          result.numPartitions = created.partitions;
          result.replicationFactor = replicationFactorOf(created);
          if (v >= 5) {
            result.configs = topics.resolveAll(created).map((c) =>
              createCreateTopicsResponseCreatableTopicConfigs({
                name: c.def.name,
                value: c.def.sensitive ? null : c.value,
                readOnly: c.def.readOnly ?? false,
                configSource: c.source,
                isSensitive: c.def.sensitive ?? false,
              }),
            );
          }
        }
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        result.errorCode = e.errorCode;
        result.errorMessage = e.message;
      }
    }
    return createCreateTopicsResponse({ topics: results, throttleTimeMs: quota.throttleTimeMs() });
  },
});

/**
 * What CreateTopics asks of one topic: its partitions and replication factor from the counts or the manual
 * assignments (never both), and its configs. Throws ClusterApiError for an assignment Kafka refuses.
 */
function createOptions(t: CreateTopicsRequestCreatableTopic, nodeId: number): CreateTopicOptions {
  if (t.assignments.length > 0) {
    if (t.numPartitions !== -1 || t.replicationFactor !== -1) {
      throw new ClusterApiError(ErrorCode.INVALID_REQUEST, 'Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.');
    }
    for (const a of t.assignments) {
      if (a.brokerIds.some((b) => b !== nodeId)) {
        throw new ClusterApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Unable to replicate the partition ${a.partitionIndex}: broker ids ${a.brokerIds.join(',')} are not all registered.`);
      }
    }
  }
  const configs: Record<string, string | null> = {};
  for (const c of t.configs) configs[c.name] = c.value;
  return {
    partitions: t.assignments.length > 0 ? t.assignments.length : t.numPartitions,
    replicationFactor: t.assignments.length > 0 ? t.assignments[0]!.brokerIds.length : t.replicationFactor,
    configs,
  };
}
