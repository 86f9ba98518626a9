// OffsetFetch v1-10 (v0 removed by Kafka 4: offsets in ZooKeeper) · v2: top-level error code, null topics =
// every committed offset · v3: throttle time · v5: committed leader epoch · v6+: flexible · v7: require_stable
// (KIP-447): a partition with a pending transactional offset answers UNSTABLE_OFFSET_COMMIT, per partition in
// every version as Kafka's OffsetMetadataManager answers it · v8: several groups per request (KIP-709) · v9: member id and epoch of KIP-848 members · v10:
// topics by id instead of name, both ways (KIP-848). As Kafka's fetchOffsetsForGroup, an id this node does
// not know is UNKNOWN_TOPIC_ID for each partition asked; as its fetchAllOffsetsForGroup, offsets of a topic
// that no longer exists (no id to name it by) are left out of "every committed offset".
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetFetchApi,
  createOffsetFetchRequestGroup,
  createOffsetFetchRequestTopics,
  createOffsetFetchResponse,
  createOffsetFetchResponseGroup,
  createOffsetFetchResponsePartition,
  createOffsetFetchResponseTopic,
  createOffsetFetchResponsePartitions,
  createOffsetFetchResponseTopics,
  type OffsetFetchRequestGroup,
  type OffsetFetchResponseGroup,
  type OffsetFetchResponseTopics,
} from '../../protocol/messages/009-offset-fetch.gen.js';
import type { TopicService } from './services.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

function fetchGroup(groups: GroupCoordinator | null, g: OffsetFetchRequestGroup, requireStable: boolean): Promise<OffsetFetchResponseGroup> {
  if (!groups) return Promise.resolve(createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
  return groups.fetchOffsets(g, requireStable);
}

/** v10: names the topics for the coordinator, which keeps offsets by name, and answers by id. */
async function fetchGroupByTopicId(
  groups: GroupCoordinator | null,
  topics: Pick<TopicService, 'get' | 'getById'>,
  g: OffsetFetchRequestGroup,
  requireStable: boolean,
): Promise<OffsetFetchResponseGroup> {
  const unknown: OffsetFetchResponseTopics[] = [];
  let named: OffsetFetchRequestGroup['topics'] = null;
  if (g.topics !== null) {
    named = [];
    for (const t of g.topics) {
      const topic = topics.getById(t.topicId);
      if (topic) {
        named.push({ ...t, name: topic.name });
        continue;
      }
      unknown.push(
        createOffsetFetchResponseTopics({
          topicId: t.topicId,
          partitions: t.partitionIndexes.map((p) => createOffsetFetchResponsePartitions({ partitionIndex: p, committedOffset: -1n, metadata: '', errorCode: ErrorCode.UNKNOWN_TOPIC_ID })),
        }),
      );
    }
  }
  const res = await fetchGroup(groups, { ...g, topics: named }, requireStable);
  const byId: OffsetFetchResponseTopics[] = [];
  for (const t of res.topics) {
    const id = topics.get(t.name)?.topicId;
    if (id !== undefined) byId.push({ ...t, name: '', topicId: id });
  }
  res.topics = res.errorCode === ErrorCode.NONE ? [...byId, ...unknown] : byId;
  return res;
}

export const offsetFetch = defineHandler({
  api: OffsetFetchApi,
  uses: ['groups', 'topics'],
  versions: { min: 1, max: 10 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    const v = ctx.apiVersion;
    // require_stable is false below v7 (the field's default).
    const stable = req.requireStable;
    if (v >= 10) return createOffsetFetchResponse({ groups: await Promise.all(req.groups.map((g) => fetchGroupByTopicId(groups, ctx.services.topics, g, stable))) });
    if (v >= 8) return createOffsetFetchResponse({ groups: await Promise.all(req.groups.map((g) => fetchGroup(groups, g, stable))) });

    const result = await fetchGroup(
      groups,
      createOffsetFetchRequestGroup({
        groupId: req.groupId,
        memberId: null,
        memberEpoch: -1,
        topics: req.topics === null ? null : req.topics.map((t) => createOffsetFetchRequestTopics({ name: t.name, partitionIndexes: t.partitionIndexes })),
      }),
      stable,
    );
    // One group: its error goes to the top level (v2+) or, before v2, to every requested partition.
    const groupError = result.errorCode;
    const topics =
      v < 2 && groupError !== ErrorCode.NONE
        ? (req.topics ?? []).map((t) =>
            createOffsetFetchResponseTopic({
              name: t.name,
              partitions: t.partitionIndexes.map((p) => createOffsetFetchResponsePartition({ partitionIndex: p, committedOffset: -1n, metadata: '', errorCode: groupError })),
            }),
          )
        : result.topics.map((t) =>
            createOffsetFetchResponseTopic({
              name: t.name,
              partitions: t.partitions.map((p) =>
                createOffsetFetchResponsePartition({
                  partitionIndex: p.partitionIndex,
                  committedOffset: p.committedOffset,
                  committedLeaderEpoch: p.committedLeaderEpoch,
                  metadata: p.metadata,
                  errorCode: p.errorCode,
                }),
              ),
            }),
          );
    return createOffsetFetchResponse({ errorCode: v >= 2 ? groupError : ErrorCode.NONE, topics });
  },
});
