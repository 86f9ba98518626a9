/**
 * Writing transaction markers to the partitions this broker leads (KIP-98; Kafka's
 * KafkaApis.handleWriteTxnMarkersRequest): the WriteTxnMarkers handler (API 27) and the transaction
 * coordinator both call `LocalTxnMarkerWriter.write`.
 *
 * ```
 *   marker {producerId, epoch, coordinatorEpoch, commit, partitions}
 *     ├─ orders-0, orders-1 ...        ─► PartitionLog.writeTxnMarker (a COMMIT/ABORT control batch)
 *     └─ __consumer_offsets-N          ─► GroupTxnCompletion.completeTransaction(N, ...): the group
 *                                         coordinator writes the marker through its shard and makes the
 *                                         producer's pending offsets visible (commit) or drops them (abort)
 * ```
 *
 * Per-partition errors as Kafka gives them: UNKNOWN_TOPIC_OR_PARTITION for a partition that does not exist,
 * NOT_LEADER_OR_FOLLOWER for one another broker leads (or that closed meanwhile), INVALID_PRODUCER_EPOCH and
 * TRANSACTION_COORDINATOR_FENCED from the log's epoch checks, KAFKA_STORAGE_ERROR when the storage fails.
 * A producer with no state in a partition still gets its marker written, as Kafka does. From the group
 * coordinator, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS and NOT_COORDINATOR become
 * NOT_LEADER_OR_FOLLOWER (Kafka translates them: the transaction coordinator does not expect them).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { kafkaErrorOf } from '../../protocol/errors.js';
import type { ClusterView } from './cluster-view.js';
import type { Partition, PartitionManager } from './partitions.js';
import { GROUP_METADATA_TOPIC_NAME } from './topic-names.js';
import type { TopicManager } from './topics.js';

export interface TxnMarkerEntry {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
  partitions: ReadonlyArray<{ topic: string; partition: number }>;
}

export interface TxnMarkerResult {
  producerId: bigint;
  partitions: Array<{ topic: string; partition: number; errorCode: number }>;
}

/**
 * The group coordinator's side of a marker for a `__consumer_offsets` partition (Kafka's
 * GroupCoordinator.completeTransaction): writes the marker into that partition through the shard's storage
 * and commits or drops the producer's pending transactional offsets. Resolves with an error code.
 */
export interface GroupTxnCompletion {
  completeTransaction(
    offsetsPartition: number,
    producerId: bigint,
    producerEpoch: number,
    coordinatorEpoch: number,
    commit: boolean,
  ): Promise<number>;
}

export interface LocalTxnMarkerWriterOptions {
  readonly topics: Pick<TopicManager, 'get'>;
  readonly cluster: Pick<ClusterView, 'owns'>;
  readonly partitions: Pick<PartitionManager, 'get' | 'open'>;
  readonly groups: GroupTxnCompletion;
}

export class LocalTxnMarkerWriter {
  constructor(private readonly options: LocalTxnMarkerWriterOptions) {}

  /** Writes every marker to each of its partitions, all at once; one result per marker, in order. */
  write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> {
    return Promise.all(
      markers.map(async (m) => ({
        producerId: m.producerId,
        partitions: await Promise.all(
          m.partitions.map(async ({ topic, partition }) => ({ topic, partition, errorCode: await this.writeOne(m, topic, partition) })),
        ),
      })),
    );
  }

  private async writeOne(m: TxnMarkerEntry, topic: string, partition: number): Promise<number> {
    const { topics, cluster, groups } = this.options;
    const t = topics.get(topic);
    if (!t || !Number.isInteger(partition) || partition < 0 || partition >= t.partitions) return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    if (topic === GROUP_METADATA_TOPIC_NAME) {
      let code: number;
      try {
        code = await groups.completeTransaction(partition, m.producerId, m.producerEpoch, m.coordinatorEpoch, m.commit);
      } catch (err) {
        code = kafkaErrorOf(err);
      }
      return code === ErrorCode.COORDINATOR_NOT_AVAILABLE || code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || code === ErrorCode.NOT_COORDINATOR
        ? ErrorCode.NOT_LEADER_OR_FOLLOWER
        : code;
    }
    if (!cluster.owns(topic, partition)) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    let part: Partition | undefined;
    try {
      part = this.options.partitions.get(topic, partition) ?? (await this.options.partitions.open(topic, partition));
    } catch (err) {
      return kafkaErrorOf(err, ErrorCode.KAFKA_STORAGE_ERROR);
    }
    if (!part) return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    try {
      await part.log.writeTxnMarker({ producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.commit });
      return ErrorCode.NONE;
    } catch (err) {
      const code = kafkaErrorOf(err, ErrorCode.KAFKA_STORAGE_ERROR);
      return code === ErrorCode.NONE ? ErrorCode.KAFKA_STORAGE_ERROR : code;
    }
  }
}
