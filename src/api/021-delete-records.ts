// DeleteRecords v0-2 · v1: same as v0 · v2+: flexible. Moves a partition's log start offset; offset -1
// means the high watermark. Ledgers wholly below the new start are deleted.
//
// Authorization (KafkaApis.handleDeleteRecordsRequest): DELETE on each topic; every partition of a topic denied
// is TOPIC_AUTHORIZATION_FAILED (low watermark -1), before its existence is looked at.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  DeleteRecordsApi,
  createDeleteRecordsResponse,
  createDeleteRecordsResponseDeleteRecordsPartitionResult,
  createDeleteRecordsResponseDeleteRecordsTopicResult,
} from '../../protocol/messages/021-delete-records.gen.js';
import { LogError } from '../log/errors.js';
import { logErrorCode } from './partition-errors.js';
import { servedPartition } from './served-partition.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

const HIGH_WATERMARK = -1n;

export const deleteRecords = defineHandler({
  api: DeleteRecordsApi,
  uses: ['topics', 'cluster', 'partitions'],
  versions: { min: 0, max: 2 },
  async handle(req, ctx) {
    const allowed = ctx.access.allowedNames(AclOperation.DELETE, ResourceType.TOPIC, req.topics.map((t) => t.name));
    const topics = await Promise.all(
      req.topics.map(async (t) =>
        createDeleteRecordsResponseDeleteRecordsTopicResult({
          name: t.name,
          partitions: await Promise.all(
            t.partitions.map(async (p) => {
              const out = createDeleteRecordsResponseDeleteRecordsPartitionResult({ partitionIndex: p.partitionIndex, lowWatermark: -1n });
              if (!allowed.has(t.name)) {
                out.errorCode = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
                return out;
              }
              const part = await servedPartition(ctx.services, t.name, p.partitionIndex);
              if (typeof part === 'number') {
                out.errorCode = part;
                return out;
              }
              if (p.offset < 0n && p.offset !== HIGH_WATERMARK) {
                out.errorCode = ErrorCode.OFFSET_OUT_OF_RANGE;
                return out;
              }
              const offset = p.offset === HIGH_WATERMARK ? part.log.highWatermark : Number(p.offset);
              try {
                out.lowWatermark = BigInt((await part.log.deleteRecords(offset)).lowWatermark);
              } catch (e) {
                if (!(e instanceof LogError)) throw e;
                out.errorCode = logErrorCode(e);
              }
              return out;
            }),
          ),
        }),
      ),
    );
    return createDeleteRecordsResponse({ topics });
  },
});
