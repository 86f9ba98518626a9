// CreatePartitions v0-3 · v1: same as v0 · v2+: flexible.
//
// Authorization (Kafka's ControllerApis.createPartitions, where a Kafka 4 broker forwards it): ALTER on each
// topic named once; a topic denied is TOPIC_AUTHORIZATION_FAILED (no message) whether it exists or not, and
// adds nothing toward the request's bound.
import { ErrorCode } from '../../protocol/error-codes.js';
import { CreatePartitionsApi, createCreatePartitionsResponse, createCreatePartitionsResponseCreatePartitionsTopicResult } from '../../protocol/messages/037-create-partitions.gen.js';
import { ClusterApiError } from '../cluster/errors.js';
import { EXCESSIVE_PARTITIONS_MESSAGE, MAX_PARTITIONS_PER_REQUEST } from '../cluster/topics.js';
import { AclOperation, ResourceType } from './access.js';
import { THROTTLED } from './019-create-topics.js';
import { defineHandler } from './handler.js';

export const createPartitions = defineHandler({
  api: CreatePartitionsApi,
  uses: ['node', 'topics', 'mutationQuotas'],
  versions: { min: 0, max: 3 },
  async handle(req, ctx) {
    // KIP-599: strict from v3 (a topic over the quota refused), permissive before (the response throttled).
    const quota = ctx.services.mutationQuotas.quotaFor(ctx.principal.name, ctx.header.clientId ?? '', ctx.apiVersion >= 3);
    const { node, topics } = ctx.services;
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const alterable = ctx.access.allowedNames(AclOperation.ALTER, ResourceType.TOPIC, [...counts.keys()].filter((n) => counts.get(n) === 1));
    const results = [];
    // Kafka bounds the records of one request at QuorumController.MAX_RECORDS_PER_USER_OP (10,000): the
    // increases are counted in request order and the topic that would take the request past the bound fails.
    // Kafka answers that topic UNKNOWN_SERVER_ERROR (its BoundedList overflow is caught per topic, after part of
    // the increase was listed); Ledgerline creates none of it and answers POLICY_VIOLATION with CreateTopics'
    // message, the error Kafka gives a request over the same bound.
    let added = 0;
    for (const t of req.topics) {
      const r = createCreatePartitionsResponseCreatePartitionsTopicResult({ name: t.name });
      results.push(r);
      try {
        if (counts.get(t.name)! > 1) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.');
        if (!alterable.has(t.name)) {
          r.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
          continue;
        }
        const existing = topics.get(t.name);
        if (existing && t.assignments !== null) {
          if (t.assignments.length !== t.count - existing.partitions) {
            throw new ClusterApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, `Increasing the number of partitions by ${t.count - existing.partitions} but ${t.assignments.length} assignments provided.`);
          }
          if (t.assignments.some((a) => a.brokerIds.some((b) => b !== node.nodeId))) {
            throw new ClusterApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, 'The manual partition assignment includes a broker that is not registered.');
          }
        }
        const increase = existing ? t.count - existing.partitions : 0;
        if (increase > 0 && added + increase > MAX_PARTITIONS_PER_REQUEST) throw new ClusterApiError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE);
        if (quota.bounded && !req.validateOnly) {
          // KIP-599: a valid increase takes its new partitions from the client's controller mutation quota.
          await topics.addPartitions(t.name, t.count, true);
          if (!quota.record(increase)) throw new ClusterApiError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLED);
        }
        await topics.addPartitions(t.name, t.count, req.validateOnly);
        added += increase;
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        r.errorCode = e.errorCode;
        r.errorMessage = e.message;
      }
    }
    return createCreatePartitionsResponse({ results, throttleTimeMs: quota.throttleTimeMs() });
  },
});
