// OffsetForLeaderEpoch v2-4 (v0-1 removed by Kafka 4) · v2: currentLeaderEpoch (KIP-320) · v3: replicaId
// · v4+: flexible. Consumers use it to detect log truncation after a leader change.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetForLeaderEpochApi,
  createOffsetForLeaderEpochResponse,
  createOffsetForLeaderEpochResponseEpochEndOffset,
  createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult,
} from '../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { leaderEpochError } from './partition-errors.js';
import { defineHandler } from './handler.js';

export const offsetForLeaderEpoch = defineHandler({
  api: OffsetForLeaderEpochApi,
  uses: ['partitions'],
  versions: { min: 2, max: 4 },
  handle(req, ctx) {
    const { partitions } = ctx.services;
    const topics = req.topics.map((t) =>
      createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult({
        topic: t.topic,
        partitions: t.partitions.map((p) => {
          const out = createOffsetForLeaderEpochResponseEpochEndOffset({ partition: p.partition, leaderEpoch: -1, endOffset: -1n });
          const part = partitions.get(t.topic, p.partition);
          if (!part) {
            out.errorCode = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
            return out;
          }
          out.errorCode = leaderEpochError(p.currentLeaderEpoch, part.log.leaderEpoch);
          if (out.errorCode !== ErrorCode.NONE) return out;
          const r = part.log.endOffsetForEpoch(p.leaderEpoch);
          out.leaderEpoch = r.leaderEpoch;
          out.endOffset = BigInt(r.endOffset);
          return out;
        }),
      }),
    );
    return createOffsetForLeaderEpochResponse({ topics });
  },
});
