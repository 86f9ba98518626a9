// OffsetCommit v2-10 (v0-1 removed by Kafka 4, KIP-896) · v2-4: retention time (OffsetCommitValue v1 with an
// expire timestamp) · v3: throttle time · v5: retention time removed · v6: committed leader epoch (KIP-320)
// · v7: group instance id (KIP-345) · v8+: flexible · v9: KIP-848 members commit with their member epoch;
// GROUP_ID_NOT_FOUND for an unknown group · v10: topics by id instead of name, both ways (KIP-848): as
// Kafka's handleOffsetCommitRequest, an id this node does not know is UNKNOWN_TOPIC_ID for each of its
// partitions, and the others are committed under their topic's name.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetCommitApi,
  createOffsetCommitResponse,
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
  type OffsetCommitRequest,
  type OffsetCommitResponse,
  type OffsetCommitResponseTopic,
} from '../../protocol/messages/008-offset-commit.gen.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import type { TopicService } from './services.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

export const offsetCommit = defineHandler({
  api: OffsetCommitApi,
  uses: ['groups', 'topics'],
  versions: { min: 2, max: 10 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    if (!groups) {
      return createOffsetCommitResponse({
        topics: req.topics.map((t) =>
          createOffsetCommitResponseTopic({
            name: t.name,
            topicId: t.topicId,
            partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })),
          }),
        ),
      });
    }
    // v5+ has no retention time: the broker's offsets.retention.minutes applies (-1).
    const asked = ctx.apiVersion >= 5 ? { ...req, retentionTimeMs: -1n } : req;
    if (ctx.apiVersion < 10) return groups.commitOffsets(asked, ctx.apiVersion);
    return commitByTopicId(groups, ctx.services.topics, asked, ctx.apiVersion);
  },
});

/** v10: names the topics for the coordinator, which keeps offsets by name, and answers by id. */
async function commitByTopicId(groups: GroupCoordinator, topics: Pick<TopicService, 'getById'>, req: OffsetCommitRequest, version: number): Promise<OffsetCommitResponse> {
  const unknown: OffsetCommitResponseTopic[] = [];
  const idOf = new Map<string, string>();
  const named = [];
  for (const t of req.topics) {
    const topic = topics.getById(t.topicId);
    if (!topic) {
      unknown.push(
        createOffsetCommitResponseTopic({
          topicId: t.topicId,
          partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_ID })),
        }),
      );
      continue;
    }
    idOf.set(topic.name, t.topicId);
    named.push({ ...t, name: topic.name });
  }
  const res = named.length > 0 ? await groups.commitOffsets({ ...req, topics: named }, version) : createOffsetCommitResponse();
  res.topics = [...res.topics.map((t) => ({ ...t, name: '', topicId: idOf.get(t.name) ?? t.topicId })), ...unknown];
  return res;
}
