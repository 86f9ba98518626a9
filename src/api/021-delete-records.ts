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
  type DeleteRecordsRequestDeleteRecordsPartition,
  type DeleteRecordsRequestDeleteRecordsTopic,
  type DeleteRecordsResponseDeleteRecordsPartitionResult,
} from '../../protocol/messages/021-delete-records.gen.js';
import { LogError } from '../log/errors.js';
import { logErrorCode } from './partition-errors.js';
import { mapNestedBounded } from './bounded-map.js';
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
    const deleteOne = async (t: DeleteRecordsRequestDeleteRecordsTopic, p: DeleteRecordsRequestDeleteRecordsPartition): Promise<DeleteRecordsResponseDeleteRecordsPartitionResult> => {
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
    };
    // Every partition of every topic, a few at a time (bounded-map.ts), answered in the request's order.
    const results = await mapNestedBounded(req.topics, (t) => t.partitions, (p, t) => deleteOne(t, p));
    const topics = req.topics.map((t, i) => createDeleteRecordsResponseDeleteRecordsTopicResult({ name: t.name, partitions: results[i]! }));
    return createDeleteRecordsResponse({ topics });
  },
});
