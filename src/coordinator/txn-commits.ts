/**
 * Transactional offset commits (KIP-98, KIP-447) as Kafka's GroupCoordinatorService runs them:
 * `commitTransactionalOffsets` (TxnOffsetCommit) and `completeTransaction` (the COMMIT/ABORT marker the
 * transaction coordinator sends to a __consumer_offsets partition).
 *
 * ```
 *   TxnOffsetCommit ─► unknown topics answered ─► shard(partitionFor(group)) ─► verify (KIP-890, first write of
 *                                                  the producer's transaction here) ─► one transactional batch,
 *                                                  offsets pending for the producer (txn-offsets.ts)
 *   marker ─────────► shard(partition) ─► pending offsets committed or dropped ─► control batch appended
 * ```
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  createTxnOffsetCommitResponse,
  createTxnOffsetCommitResponsePartition,
  createTxnOffsetCommitResponseTopic,
  type TxnOffsetCommitRequest,
  type TxnOffsetCommitRequestTopic,
  type TxnOffsetCommitResponse,
  type TxnOffsetCommitResponseTopic,
} from '../../protocol/messages/028-txn-offset-commit.gen.js';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names.js';
import type { CoordinatorLogger, TopicView } from './context.js';
import { GroupApiError, errorCodeOf } from './errors.js';
import type { OffsetManager } from './offset-manager.js';
import type { ShardSet } from './shard-set.js';
import { exceedsInt16String } from './string-bounds.js';

/**
 * Verifies that the producer's transaction includes a partition (KIP-890 part 1: the transaction coordinator
 * knows the partition was added), before the first write of that transaction in it, or adds it (`addPartition`,
 * part 2). An error code; NONE when verified. The broker's TxnVerificationService.
 */
export interface TxnOffsetVerifier {
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition?: boolean): Promise<number>;
}

/** TxnOffsetCommit v5 is the transaction version 2 producer's: its partition is added implicitly (KIP-890 part 2). */
const FIRST_ADD_PARTITION_VERSION = 5;

export interface TxnCommitsOptions {
  readonly shards: ShardSet;
  readonly offsets: OffsetManager;
  readonly topics: TopicView;
  readonly log: CoordinatorLogger;
  readonly verifier?: TxnOffsetVerifier;
}

/**
 * Kafka's CoordinatorOperationExceptionHelper.handleOperationException: the codes a coordinator operation's
 * lower layers fail with, as its clients know them.
 */
function operationErrorCode(code: number): number {
  switch (code) {
    case ErrorCode.NETWORK_EXCEPTION:
      // Verification with the transaction coordinator failed: older clients retry this one without a lookup.
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return ErrorCode.UNKNOWN_SERVER_ERROR;
    default:
      return code;
  }
}

/** Every partition of the topics with one error (TxnOffsetCommitRequest.getErrorResponse). */
export function txnOffsetCommitErrorTopics(topics: readonly TxnOffsetCommitRequestTopic[], errorCode: number): TxnOffsetCommitResponseTopic[] {
  return topics.map((t) =>
    createTxnOffsetCommitResponseTopic({
      name: t.name,
      topicId: t.topicId,
      partitions: t.partitions.map((p) => createTxnOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode })),
    }),
  );
}

export class TxnCommits {
  constructor(private readonly options: TxnCommitsOptions) {}

  /**
   * TxnOffsetCommit, its topics named (the handler maps v6's topic ids): partitions of unknown topics are
   * answered UNKNOWN_TOPIC_OR_PARTITION (KafkaApis), the others committed as pending offsets of the producer.
   */
  async commit(req: TxnOffsetCommitRequest, apiVersion: number): Promise<TxnOffsetCommitResponse> {
    const unknown: TxnOffsetCommitResponseTopic[] = [];
    const known: TxnOffsetCommitRequestTopic[] = [];
    for (const t of req.topics) {
      const topic = this.options.topics.get(t.name);
      const bad = t.partitions.filter((p) => !topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions);
      const good = t.partitions.filter((p) => !bad.includes(p));
      if (bad.length > 0) unknown.push(...txnOffsetCommitErrorTopics([{ ...t, partitions: bad }], ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
      if (good.length > 0) known.push({ ...t, partitions: good });
    }
    if (known.length === 0) return createTxnOffsetCommitResponse({ topics: unknown });
    // Kafka's service refuses an empty group id; a longer one than OffsetCommitKey holds could not be stored.
    if (req.groupId === '' || exceedsInt16String(req.groupId)) {
      return createTxnOffsetCommitResponse({ topics: mergeTopics([...txnOffsetCommitErrorTopics(known, ErrorCode.INVALID_GROUP_ID), ...unknown]) });
    }
    try {
      const { shards, verifier } = this.options;
      const s = shards.for(req.groupId);
      if (s.status === 'loading') await shards.untilLoaded(s);
      s.checkActive();
      if (verifier && !s.txnOffsets.isOpen(req.producerId)) {
        // TxnOffsetCommit v5+ (KIP-890 part 2): the producer sent no AddOffsetsToTxn; the partition is added here.
        const code = await verifier.verify(req.transactionalId, req.producerId, req.producerEpoch, GROUP_METADATA_TOPIC_NAME, s.partition, apiVersion >= FIRST_ADD_PARTITION_VERSION);
        if (code !== ErrorCode.NONE) throw new GroupApiError(code, undefined, { groupId: req.groupId, partition: s.partition });
      }
      const topics = await s.write(() => this.options.offsets.txnCommit(s, { ...req, topics: known }, apiVersion));
      return createTxnOffsetCommitResponse({ topics: mergeTopics([...topics, ...unknown]) });
    } catch (e) {
      const code = operationErrorCode(this.logged(e, 'TxnOffsetCommit'));
      return createTxnOffsetCommitResponse({ topics: mergeTopics([...txnOffsetCommitErrorTopics(known, code), ...unknown]) });
    }
  }

  /**
   * Kafka's completeTransaction: the marker of the producer's transaction goes into __consumer_offsets-<p> after
   * the writes queued before it, and its pending offsets there are committed or dropped. An error code: NONE
   * once the marker is durable; NOT_COORDINATOR for a partition this broker does not own,
   * COORDINATOR_LOAD_IN_PROGRESS while it loads.
   */
  async complete(offsetsPartition: number, producerId: bigint, producerEpoch: number, coordinatorEpoch: number, commit: boolean): Promise<number> {
    try {
      const { shards } = this.options;
      if (!shards.isOpen) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, undefined, { partition: offsetsPartition });
      if (!Number.isInteger(offsetsPartition) || offsetsPartition < 0 || offsetsPartition >= shards.partitionCount) {
        throw new GroupApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, undefined, { partition: offsetsPartition });
      }
      const s = shards.of(offsetsPartition);
      if (s.status === 'loading') await shards.untilLoaded(s);
      await s.writeMarker({ producerId, producerEpoch, coordinatorEpoch, commit });
      return ErrorCode.NONE;
    } catch (e) {
      return this.logged(e, 'WriteTxnMarkers');
    }
  }

  private logged(err: unknown, api: string): number {
    if (!(err instanceof GroupApiError)) this.options.log.error({ err, api }, 'group coordinator operation failed');
    return errorCodeOf(err);
  }
}

function mergeTopics(topics: TxnOffsetCommitResponseTopic[]): TxnOffsetCommitResponseTopic[] {
  const byName = new Map<string, TxnOffsetCommitResponseTopic>();
  for (const t of topics) {
    const existing = byName.get(t.name);
    if (existing) existing.partitions.push(...t.partitions);
    else byName.set(t.name, t);
  }
  return [...byName.values()];
}
