// OffsetCommit v2-9 (v0-1 removed by Kafka 4, KIP-896) · v2-4: retention time (OffsetCommitValue v1 with an
// expire timestamp) · v3: throttle time · v5: retention time removed · v6: committed leader epoch (KIP-320)
// · v7: group instance id (KIP-345) · v8+: flexible · v9: KIP-848 members commit with their member epoch;
// GROUP_ID_NOT_FOUND for an unknown group.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetCommitApi,
  createOffsetCommitResponse,
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
} from '../../protocol/messages/008-offset-commit.gen.js';
import { groupCoordinatorOf } from '../coordinator/request-context.js';
import { defineHandler } from './handler.js';

export const offsetCommit = defineHandler({
  api: OffsetCommitApi,
  uses: ['groups'],
  versions: { min: 2, max: 9 },
  async handle(req, ctx) {
    const groups = groupCoordinatorOf(ctx);
    if (!groups) {
      return createOffsetCommitResponse({
        topics: req.topics.map((t) =>
          createOffsetCommitResponseTopic({
            name: t.name,
            partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE })),
          }),
        ),
      });
    }
    // v5+ has no retention time: the broker's offsets.retention.minutes applies (-1).
    return groups.commitOffsets(ctx.apiVersion >= 5 ? { ...req, retentionTimeMs: -1n } : req, ctx.apiVersion);
  },
});
