// DeleteTopics v1-6 (v0 removed by Kafka 4) · v4+: flexible · v5: per-topic error message · v6: topics by
// name or id (KIP-516).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DeleteTopicsApi,
  createDeleteTopicsResponse,
  createDeleteTopicsResponseDeletableTopicResult,
  type DeleteTopicsResponseDeletableTopicResult,
} from '../../protocol/messages/020-delete-topics.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { ClusterApiError } from '../cluster/errors.js';
import { defineHandler } from './handler.js';

export const deleteTopics = defineHandler({
  api: DeleteTopicsApi,
  uses: ['config', 'topics'],
  versions: { min: 1, max: 6 },
  async handle(req, ctx) {
    const { config, topics } = ctx.services;
    const v = ctx.apiVersion;
    const wanted = v >= 6 ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId })) : req.topicNames.map((name) => ({ name, topicId: ZERO_UUID }));
    const responses: DeleteTopicsResponseDeletableTopicResult[] = [];
    for (const w of wanted) {
      const r = createDeleteTopicsResponseDeletableTopicResult({ name: w.name, topicId: w.topicId });
      responses.push(r);
      if (w.name !== null && w.topicId !== ZERO_UUID) {
        r.errorCode = ErrorCode.INVALID_REQUEST;
        r.errorMessage = 'You may not specify both topic name and topic id.';
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
      r.name = t.name;
      r.topicId = t.topicId;
      try {
        await topics.delete(t.name);
      } catch (e) {
        if (!(e instanceof ClusterApiError)) throw e;
        r.errorCode = e.errorCode;
        r.errorMessage = e.message;
      }
    }
    for (const r of responses) if (v < 5) r.errorMessage = null;
    return createDeleteTopicsResponse({ responses });
  },
});
