// ListOffsets v1-11 (v0 removed by Kafka 4) · v2: isolation level · v4: leader epochs (KIP-320) · v6+:
// flexible · v7: max timestamp (-3, KIP-734) · v8: earliest local (-4, KIP-405) · v9: latest tiered (-5)
// · v10: a timeout for offsets read from remote storage (KIP-1075), which this node never waits on · v11:
// earliest pending upload (-6, KIP-1023): with no remote storage Kafka's UnifiedLog answers offset -1,
// timestamp -1 and leader epoch -1, and so does this node.
//
// Authorization (KafkaApis.handleListOffsetRequestV1AndAbove): DESCRIBE on each topic; every partition of a
// topic denied is TOPIC_AUTHORIZATION_FAILED (offset and timestamp -1), existing or not, and those topics come
// after the allowed ones.
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  ListOffsetsApi,
  createListOffsetsResponse,
  createListOffsetsResponseListOffsetsPartitionResponse,
  createListOffsetsResponseListOffsetsTopicResponse,
} from '../../protocol/messages/002-list-offsets.gen.js';
import { LogError } from '../log/errors.js';
import { ListOffsetsTimestamp } from '../log/partition-log.js';
import { leaderEpochError, logErrorCode } from './partition-errors.js';
import { openOwned, servedPartition } from './served-partition.js';
import { AclOperation, ResourceType } from './access.js';
import { defineHandler } from './handler.js';

const READ_COMMITTED = 1;

/** KIP-1023's ListOffsetsRequest.EARLIEST_PENDING_UPLOAD_TIMESTAMP. */
const EARLIEST_PENDING_UPLOAD = -6;

/** The lowest version that may ask for each special timestamp. */
const MIN_VERSION_FOR: Record<number, number> = {
  [ListOffsetsTimestamp.MAX_TIMESTAMP]: 7,
  [ListOffsetsTimestamp.EARLIEST_LOCAL]: 8,
  [ListOffsetsTimestamp.LATEST_TIERED]: 9,
  [EARLIEST_PENDING_UPLOAD]: 11,
};

export const listOffsets = defineHandler({
  api: ListOffsetsApi,
  uses: ['topics', 'cluster', 'partitions'],
  versions: { min: 1, max: 11 },
  async handle(req, ctx) {
    const v = ctx.apiVersion;
    const isolation = v >= 2 && req.isolationLevel === READ_COMMITTED ? 'read_committed' : 'read_uncommitted';
    const allowed = ctx.access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, req.topics.map((t) => t.name));
    const authorized = req.topics.filter((t) => allowed.has(t.name));
    const opening = openOwned(ctx.services, authorized.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex }))));
    if (opening) await opening;
    const topics = [];
    for (const t of authorized) {
      const seen = new Map<number, number>();
      for (const p of t.partitions) seen.set(p.partitionIndex, (seen.get(p.partitionIndex) ?? 0) + 1);
      const partitions = [];
      for (const p of t.partitions) {
        const out = createListOffsetsResponseListOffsetsPartitionResponse({ partitionIndex: p.partitionIndex, timestamp: -1n, offset: -1n, leaderEpoch: -1 });
        partitions.push(out);
        const duplicate = seen.get(p.partitionIndex)! > 1;
        let served = duplicate ? ErrorCode.INVALID_REQUEST : servedPartition(ctx.services, t.name, p.partitionIndex);
        if (served instanceof Promise) served = await served;
        const part = typeof served === 'number' ? undefined : served;
        const ts = Number(p.timestamp);
        const epochError = part && v >= 4 ? leaderEpochError(p.currentLeaderEpoch, part.log.leaderEpoch) : ErrorCode.NONE;
        if (duplicate) {
          out.errorCode = ErrorCode.INVALID_REQUEST; // Kafka: a partition listed twice
        } else if (!part) {
          out.errorCode = served as number;
        } else if (epochError !== ErrorCode.NONE) {
          out.errorCode = epochError;
        } else if (ts < 0 && (MIN_VERSION_FOR[ts] ?? 0) > v) {
          out.errorCode = ErrorCode.UNSUPPORTED_VERSION;
        } else if (ts < EARLIEST_PENDING_UPLOAD) {
          out.errorCode = ErrorCode.INVALID_REQUEST;
        } else if (ts === EARLIEST_PENDING_UPLOAD) {
          // Nothing is pending upload without remote storage: offset, timestamp and epoch stay -1.
        } else {
          try {
            const found = await part.log.listOffsets(ts, { isolation });
            if (found) {
              out.timestamp = BigInt(found.timestamp);
              out.offset = BigInt(found.offset);
              if (v >= 4) out.leaderEpoch = found.leaderEpoch;
            }
          } catch (e) {
            if (!(e instanceof LogError)) throw e;
            out.errorCode = logErrorCode(e);
          }
        }
      }
      topics.push(createListOffsetsResponseListOffsetsTopicResponse({ name: t.name, partitions }));
    }
    for (const t of req.topics) {
      if (allowed.has(t.name)) continue;
      const partitions = t.partitions.map((p) =>
        createListOffsetsResponseListOffsetsPartitionResponse({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, timestamp: -1n, offset: -1n, leaderEpoch: -1 }),
      );
      topics.push(createListOffsetsResponseListOffsetsTopicResponse({ name: t.name, partitions }));
    }
    return createListOffsetsResponse({ topics });
  },
});
