// DeleteTopics v1-6 (v0 removed by Kafka 4) · v4+: flexible · v5: per-topic error message · v6: topics by
// name or id (KIP-516).
//
// Authorization (Kafka's ControllerApis.deleteTopics, where a Kafka 4 broker forwards it): DELETE on the
// cluster (not logged when denied) allows every topic; else DESCRIBE and DELETE on each topic named or whose id
// resolves. A topic named without DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether it exists or not; one with
// DESCRIBE but not DELETE is TOPIC_AUTHORIZATION_FAILED once it is known to exist. An unknown id is
// UNKNOWN_TOPIC_ID (it names nothing to authorize); a known id without DELETE is TOPIC_AUTHORIZATION_FAILED,
// its name returned only with DESCRIBE. Kafka refuses the whole request with TOPIC_DELETION_DISABLED before
// any of this; here, as before, a topic that would be deleted is answered so, after DESCRIBE and existence.
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import {
  DeleteTopicsApi,
  createDeleteTopicsResponse,
  createDeleteTopicsResponseDeletableTopicResult,
  type DeleteTopicsResponseDeletableTopicResult,
} from '../../protocol/messages/020-delete-topics.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { ClusterApiError } from '../cluster/errors.js';
import { AclOperation, ResourceType } from './access.js';
import { THROTTLED } from './019-create-topics.js';
import { defineHandler } from './handler.js';

export const deleteTopics = defineHandler({
  api: DeleteTopicsApi,
  uses: ['config', 'topics', 'mutationQuotas'],
  versions: { min: 1, max: 6 },
  async handle(req, ctx) {
    const { config, topics } = ctx.services;
    const v = ctx.apiVersion;
    // KIP-599: strict from v5 (a topic over the quota refused), permissive before (the response throttled).
    const quota = ctx.services.mutationQuotas.quotaFor(ctx.principal.name, ctx.header.clientId ?? '', v >= 5);
    const wanted = v >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId })) : req.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    // The names to authorize: those given, and those of the ids that resolve.
    const named = new Set<string>();
    for (const w of wanted) {
      if (w.name !== null && w.topicId !== ZERO_UUID) continue;
      const name = w.name ?? topics.getById(w.topicId)?.name;
      if (name !== undefined) named.add(name);
    }
    const clusterWide = ctx.access.authorizeCluster(AclOperation.DELETE, { logIfDenied: false });
    const describable = clusterWide ? named : ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, named);
    const deletable = clusterWide ? named : ctx.access.allowedNames(AclOperation.DELETE, ResourceType.TOPIC, named);
    const denied = (r: DeleteTopicsResponseDeletableTopicResult): void => {
      r.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
      r.errorMessage = errorByCode(ErrorCode.TOPIC_AUTHORIZATION_FAILED).message;
    };
    const responses: DeleteTopicsResponseDeletableTopicResult[] = [];
    for (const w of wanted) {
      const r = createDeleteTopicsResponseDeletableTopicResult({ name: w.name, topicId: w.topicId });
      responses.push(r);
      if (w.name !== null && w.topicId !== ZERO_UUID) {
        r.errorCode = ErrorCode.INVALID_REQUEST;
        r.errorMessage = 'You may not specify both topic name and topic id.';
        continue;
      }
      if (w.name !== null && !describable.has(w.name)) {
        denied(r);
        continue;
      }
      const t = w.name !== null ? topics.get(w.name) : topics.getById(w.topicId);
      if (!t) {
        r.errorCode = w.name !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : ErrorCode.UNKNOWN_TOPIC_ID;
        r.errorMessage = w.name !== null ? 'This server does not host this topic-partition.' : 'This server does not host this topic ID.';
        continue;
      }
      if (!config.deleteTopicEnable) {
        r.errorCode = ErrorCode.TOPIC_DELETION_DISABLED;
        r.errorMessage = 'Topic deletion is disabled.';
        continue;
      }
      if (!deletable.has(t.name)) {
        // By id: the name only to whom may DESCRIBE it, so that an id reveals no name.
        if (describable.has(t.name)) r.name = t.name;
        denied(r);
        continue;
      }
      r.name = t.name;
      r.topicId = t.topicId;
      try {
        // KIP-599: the topic's partitions come off the client's controller mutation quota.
        if (!quota.record(t.partitions)) throw new ClusterApiError(ErrorCode.THROTTLING_QUOTA_EXCEEDED, THROTTLED);
        await topics.delete(t.name);
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        r.errorCode = e.errorCode;
        r.errorMessage = e.message;
      }
    }
    for (const r of responses) if (v < 5) r.errorMessage = null;
    return createDeleteTopicsResponse({ responses, throttleTimeMs: quota.throttleTimeMs() });
  },
});
