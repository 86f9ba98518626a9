// OffsetForLeaderEpoch v2-4 (v0-1 removed by Kafka 4) · v2: currentLeaderEpoch (KIP-320) · v3: replicaId
// · v4+: flexible. Consumers use it to detect log truncation after a leader change.
//
// Authorization (KafkaApis.handleOffsetForLeaderEpochRequest): CLUSTER_ACTION on the cluster (a follower's
// right; not logged when denied) allows every topic, else DESCRIBE on each topic (KIP-320's consumers). Every
// partition of a topic denied is TOPIC_AUTHORIZATION_FAILED, and those topics come after the allowed ones.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  OffsetForLeaderEpochApi,
  createOffsetForLeaderEpochResponse,
  createOffsetForLeaderEpochResponseEpochEndOffset,
  createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult,
  type OffsetForLeaderEpochResponseEpochEndOffset,
} from '../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { leaderEpochError } from './partition-errors.js';
import { servedPartition } from './served-partition.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';
import type { Services } from './services.js';

export const offsetForLeaderEpoch = defineHandler({
  api: OffsetForLeaderEpochApi,
  uses: ['topics', 'cluster', 'partitions'],
  versions: { min: 2, max: 4 },
  async handle(req, ctx) {
    const allowed = ctx.access.authorizeCluster(AclOperation.CLUSTER_ACTION, { logIfDenied: false })
      ? null
      : ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, req.topics.map((t) => t.topic));
    const topics = [];
    for (const t of req.topics) {
      if (allowed && !allowed.has(t.topic)) continue;
      const partitions = [];
      for (const p of t.partitions) partitions.push(await endOffset(ctx.services, t.topic, p));
      topics.push(createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult({ topic: t.topic, partitions }));
    }
    for (const t of req.topics) {
      if (!allowed || allowed.has(t.topic)) continue;
      const partitions = t.partitions.map((p) => createOffsetForLeaderEpochResponseEpochEndOffset({ partition: p.partition, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, leaderEpoch: -1, endOffset: -1n }));
      topics.push(createOffsetForLeaderEpochResponseOffsetForLeaderTopicResult({ topic: t.topic, partitions }));
    }
    return createOffsetForLeaderEpochResponse({ topics });
  },
});

/** One partition's answer: the end offset of the epoch asked for (KIP-279), after KIP-320's epoch check. */
async function endOffset(services: Pick<Services, 'topics' | 'cluster' | 'partitions'>, topic: string, p: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }): Promise<OffsetForLeaderEpochResponseEpochEndOffset> {
  const out = createOffsetForLeaderEpochResponseEpochEndOffset({ partition: p.partition, leaderEpoch: -1, endOffset: -1n });
  const part = await servedPartition(services, topic, p.partition);
  if (typeof part === 'number') {
    out.errorCode = part;
    return out;
  }
  out.errorCode = leaderEpochError(p.currentLeaderEpoch, part.log.leaderEpoch);
  if (out.errorCode !== ErrorCode.NONE) return out;
  const r = part.log.endOffsetForEpoch(p.leaderEpoch);
  out.leaderEpoch = r.leaderEpoch;
  out.endOffset = BigInt(r.endOffset);
  return out;
}
