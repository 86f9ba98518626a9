// OffsetFetch v1-9 (v0 removed by Kafka 4: offsets in ZooKeeper) · v2: top-level error code, null topics =
// every committed offset · v3: throttle time · v5: committed leader epoch · v6+: flexible · v7: require_stable
// (KIP-447) · v8: several groups per request (KIP-709) · v9: member id and epoch of KIP-848 members.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetFetchApi,
  createOffsetFetchRequestGroup,
  createOffsetFetchRequestTopics,
  createOffsetFetchResponse,
  createOffsetFetchResponseGroup,
  createOffsetFetchResponsePartition,
  createOffsetFetchResponseTopic,
  type OffsetFetchRequestGroup,
  type OffsetFetchResponseGroup,
} from '../../protocol/messages/009-offset-fetch.gen.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

function fetchGroup(groups: GroupCoordinator | null, g: OffsetFetchRequestGroup): Promise<OffsetFetchResponseGroup> {
  if (!groups) return Promise.resolve(createOffsetFetchResponseGroup({ groupId: g.groupId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));
  return groups.fetchOffsets(g);
}

export const offsetFetch = defineHandler({
  api: OffsetFetchApi,
  uses: ['groups'],
  versions: { min: 1, max: 9 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    const v = ctx.apiVersion;
    if (v >= 8) return createOffsetFetchResponse({ groups: await Promise.all(req.groups.map((g) => fetchGroup(groups, g))) });

    const result = await fetchGroup(
      groups,
      createOffsetFetchRequestGroup({
        groupId: req.groupId,
        memberId: null,
        memberEpoch: -1,
        topics: req.topics === null ? null : req.topics.map((t) => createOffsetFetchRequestTopics({ name: t.name, partitionIndexes: t.partitionIndexes })),
      }),
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
