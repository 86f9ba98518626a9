// OffsetCommit v2-10 (v0-1 removed by Kafka 4, KIP-896) · v2-4: retention time (OffsetCommitValue v1 with an
// expire timestamp) · v3: throttle time · v5: retention time removed · v6: committed leader epoch (KIP-320)
// · v7: group instance id (KIP-345) · v8+: flexible · v9: KIP-848 members commit with their member epoch;
// GROUP_ID_NOT_FOUND for an unknown group · v10: topics by id instead of name, both ways (KIP-848): as
// Kafka's handleOffsetCommitRequest, an id this node does not know is UNKNOWN_TOPIC_ID for each of its
// partitions, and the others are committed under their topic's name.
// Authorization as KafkaApis.handleOffsetCommitRequest: READ on the group (GROUP_AUTHORIZATION_FAILED for every
// partition otherwise), then READ on each topic (TOPIC_AUTHORIZATION_FAILED for each partition of the others),
// before topics are looked for; the coordinator is asked for the authorized ones only.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetCommitApi,
  createOffsetCommitResponse,
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
  type OffsetCommitRequest,
  type OffsetCommitRequestTopic,
  type OffsetCommitResponse,
  type OffsetCommitResponseTopic,
} from '../../protocol/messages/008-offset-commit.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

/** Every partition of `t` answered `errorCode` (by name below v10, by id from v10). */
function errorTopic(t: OffsetCommitRequestTopic, errorCode: number, version: number): OffsetCommitResponseTopic {
  return createOffsetCommitResponseTopic({
    name: version >= 10 ? '' : t.name,
    topicId: t.topicId,
    partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode })),
  });
}

export const offsetCommit = defineHandler({
  api: OffsetCommitApi,
  uses: ['groups', 'topics'],
  versions: { min: 2, max: 10 },
  async handle(req, ctx) {
    const v = ctx.apiVersion;
    // Kafka's getErrorResponse: the group's refusal for every partition of the request.
    if (!ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, req.groupId)) {
      return createOffsetCommitResponse({ topics: req.topics.map((t) => errorTopic(t, ErrorCode.GROUP_AUTHORIZATION_FAILED, v)) });
    }
    // v10: each id named first (null: not known here); Kafka authorizes the request's name ("") for those.
    const names = req.topics.map((t) => (v >= 10 ? (ctx.services.topics.getById(t.topicId)?.name ?? null) : t.name));
    const allowed = ctx.access.allowedNames(AclOperation.READ, ResourceType.TOPIC, names.map((n, i) => n ?? req.topics[i]!.name));
    const groups = groupCoordinatorOf(ctx);
    if (!groups) {
      return createOffsetCommitResponse({
        topics: req.topics.map((t, i) => {
          const name = names[i];
          return errorTopic(t, name !== null && !allowed.has(name) ? ErrorCode.TOPIC_AUTHORIZATION_FAILED : ErrorCode.COORDINATOR_NOT_AVAILABLE, v);
        }),
      });
    }
    const refused: OffsetCommitResponseTopic[] = [];
    const authorized: OffsetCommitRequestTopic[] = [];
    const idOf = new Map<string, string>();
    req.topics.forEach((t, i) => {
      const name = names[i];
      if (name === null) refused.push(errorTopic(t, ErrorCode.UNKNOWN_TOPIC_ID, v));
      else if (!allowed.has(name)) refused.push(errorTopic(t, ErrorCode.TOPIC_AUTHORIZATION_FAILED, v));
      else {
        if (v >= 10) idOf.set(name, t.topicId);
        authorized.push({ ...t, name });
      }
    });
    // As Kafka: nothing left to commit, the coordinator is not asked.
    if (authorized.length === 0) return createOffsetCommitResponse({ topics: refused });
    // v5+ has no retention time: the broker's offsets.retention.minutes applies (-1).
    const asked: OffsetCommitRequest = { ...req, topics: authorized, ...(v >= 5 ? { retentionTimeMs: -1n } : {}) };
    const res: OffsetCommitResponse = await groups.commitOffsets(asked, v);
    // v10: the coordinator keeps offsets by name; answered by id.
    if (v >= 10) res.topics = res.topics.map((t) => ({ ...t, name: '', topicId: idOf.get(t.name) ?? t.topicId }));
    res.topics.push(...refused);
    return res;
  },
});
