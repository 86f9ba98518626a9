// OffsetFetch v1-10 (v0 removed by Kafka 4: offsets in ZooKeeper) · v2: top-level error code, null topics =
// every committed offset · v3: throttle time · v5: committed leader epoch · v6+: flexible · v7: require_stable
// (KIP-447): a partition with a pending transactional offset answers UNSTABLE_OFFSET_COMMIT, per partition in
// every version as Kafka's OffsetMetadataManager answers it · v8: several groups per request (KIP-709) · v9: member id and epoch of KIP-848 members · v10:
// topics by id instead of name, both ways (KIP-848). As Kafka's fetchOffsetsForGroup, an id this node does
// not know is UNKNOWN_TOPIC_ID for each partition asked; as its fetchAllOffsetsForGroup, offsets of a topic
// that no longer exists (no id to name it by) are left out of "every committed offset".
// Authorization as KafkaApis.handleOffsetFetchRequest, group by group: DESCRIBE on the group
// (GROUP_AUTHORIZATION_FAILED for that group: top level from v2, each partition asked before), then DESCRIBE on
// each topic: the topics asked by name (or id) that may not be described answer TOPIC_AUTHORIZATION_FAILED for
// each partition and are not asked of the coordinator; from "every committed offset" they are left out.
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
  type OffsetFetchRequestTopics,
  type OffsetFetchResponseGroup,
  type OffsetFetchResponseTopics,
} from '../../protocol/messages/009-offset-fetch.gen.js';
import { AclOperation, ResourceType } from './access.js';
import { mapBounded } from './bounded-map.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler, type RequestContext } from './handler.js';

function fetchGroup(groups: GroupCoordinator | null, g: OffsetFetchRequestGroup, requireStable: boolean): Promise<OffsetFetchResponseGroup> {
  if (!groups) return Promise.resolve(createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
  return groups.fetchOffsets(g, requireStable);
}

/** Every partition asked of `t` answered `errorCode` (Kafka's buildErrorResponse); v10 answers by id. */
function errorTopic(t: OffsetFetchRequestTopics, errorCode: number, byId: boolean): OffsetFetchResponseTopics {
  return createOffsetFetchResponseTopics({
    name: byId ? '' : t.name,
    topicId: t.topicId,
    partitions: t.partitionIndexes.map((p) => createOffsetFetchResponsePartitions({ partitionIndex: p, committedOffset: -1n, metadata: '', errorCode })),
  });
}

/**
 * One group's offsets, as KafkaApis.handleOffsetFetchRequest answers them (v10: topics by id, named for the
 * coordinator, which keeps offsets by name).
 */
async function fetchAuthorized(ctx: RequestContext<'groups' | 'topics'>, groups: GroupCoordinator | null, g: OffsetFetchRequestGroup, requireStable: boolean): Promise<OffsetFetchResponseGroup> {
  if (!ctx.access.authorize(AclOperation.DESCRIBE, ResourceType.GROUP, g.groupId)) {
    return createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED });
  }
  const byId = ctx.apiVersion >= 10;
  const topics = ctx.services.topics;
  // The topics answered by id; those without one (deleted) are left out: a v10 response cannot name them.
  const toIds = (ts: OffsetFetchResponseTopics[]): OffsetFetchResponseTopics[] => {
    const out: OffsetFetchResponseTopics[] = [];
    for (const t of ts) {
      const id = topics.get(t.name)?.topicId;
      if (id !== undefined) out.push({ ...t, name: '', topicId: id });
    }
    return out;
  };
  if (g.topics === null) {
    // Kafka's fetchAllOffsetsForGroup: the topics that may not be described are left out, silently.
    const res = await fetchGroup(groups, g, requireStable);
    if (res.errorCode === ErrorCode.NONE) {
      const allowed = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, res.topics.map((t) => t.name));
      res.topics = res.topics.filter((t) => allowed.has(t.name));
    }
    if (byId) res.topics = toIds(res.topics);
    return res;
  }
  // Kafka's fetchOffsetsForGroup: v10 ids named first (an unknown id keeps the request's name, ""), then each
  // name authorized; the refused topics follow the coordinator's answer unless the group failed.
  const names = g.topics.map((t) => (byId ? (topics.getById(t.topicId)?.name ?? null) : t.name));
  const allowed = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, names.map((n, i) => n ?? g.topics![i]!.name));
  const asked: OffsetFetchRequestTopics[] = [];
  const refused: OffsetFetchResponseTopics[] = [];
  g.topics.forEach((t, i) => {
    const name = names[i];
    if (name === null) refused.push(errorTopic(t, ErrorCode.UNKNOWN_TOPIC_ID, byId));
    else if (!allowed.has(name)) refused.push(errorTopic(t, ErrorCode.TOPIC_AUTHORIZATION_FAILED, byId));
    else asked.push({ ...t, name });
  });
  const res = await fetchGroup(groups, { ...g, topics: asked }, requireStable);
  const answered = byId ? toIds(res.topics) : res.topics;
  res.topics = res.errorCode === ErrorCode.NONE ? [...answered, ...refused] : answered;
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
    // A few groups at a time (bounded-map.ts), each answered as Kafka's fetchOffsetsForGroup would.
    if (v >= 8) return createOffsetFetchResponse({ groups: await mapBounded(req.groups, (g) => fetchAuthorized(ctx, groups, g, stable)) });

    const result = await fetchAuthorized(
      ctx,
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
