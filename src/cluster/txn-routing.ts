/**
 * Transactions across the brokers of a cluster (ledgerline.cluster.membership=shared): what a transaction
 * coordinator and a partition leader on different brokers send each other, as Kafka's do.
 *
 * ```
 *   transaction coordinator (owner of __transaction_state-N)          partition leaders
 *     markers of a Prepare* transaction ─► RoutingTxnMarkerWriter ─┬─► this broker's: LocalTxnMarkerWriter
 *                                                                  └─► another's: WriteTxnMarkers (API 27)
 *                                                                       to it (its handler writes locally)
 *   partition leader (Produce, TxnOffsetCommit; KIP-890)               transaction coordinator
 *     verify(id, producer, partition) ─► RoutingTxnVerifier ─┬─► on this broker: TransactionCoordinator.verify
 *                                                           └─► elsewhere: AddPartitionsToTxn v4+ (verifyOnly,
 *                                                                or not for transaction version 2) to its owner
 * ```
 *
 * Kafka's TransactionMarkerChannelManager sends one WriteTxnMarkers per leader and retries what fails; here a
 * partition whose owner is unknown, or whose request failed (connection, timeout), answers
 * NOT_LEADER_OR_FOLLOWER and the coordinator retries it (coordinator/txn/markers.ts), after a metadata change
 * the next attempt goes to the new owner. Kafka's AddPartitionsToTxnManager answers a verification that could
 * not reach the coordinator with NETWORK_EXCEPTION (Produce then answers NOT_ENOUGH_REPLICAS, which clients
 * retry), and maps the coordinator's TRANSACTION_ABORTABLE and PRODUCER_FENCED as the local verification does.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { AddPartitionsToTxnApi } from '../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { WriteTxnMarkersApi } from '../../protocol/messages/027-write-txn-markers.gen.js';
import type { Logger } from '../observability/logger.js';
import type { BrokerChannels } from './broker-channels.js';
import type { ClusterView } from './cluster-view.js';
import type { TxnMarkerEntry, TxnMarkerResult } from './txn-markers.js';

/** WriteTxnMarkers v1-2 (Kafka 4 removed v0). */
const WRITE_TXN_MARKERS_VERSIONS = { min: 1, max: 2 };
/** AddPartitionsToTxn v4+: the broker-to-broker form, several transactions, verifyOnly entries (KIP-890). */
const ADD_PARTITIONS_VERSIONS = { min: 4, max: 5 };

export interface TxnMarkerWrites {
  write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]>;
}

export interface RoutingTxnMarkerWriterOptions {
  /** Writes the markers of the partitions this broker owns. */
  readonly local: TxnMarkerWrites;
  readonly cluster: Pick<ClusterView, 'owner' | 'localNodeId'>;
  readonly channels: Pick<BrokerChannels, 'request'>;
  readonly log?: Logger;
}

export class RoutingTxnMarkerWriter implements TxnMarkerWrites {
  constructor(private readonly o: RoutingTxnMarkerWriterOptions) {}

  /** Every marker to each of its partitions, each to the partition's owner; one result per marker, in order. */
  async write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> {
    const results: TxnMarkerResult[] = markers.map((m) => ({
      producerId: m.producerId,
      partitions: m.partitions.map(({ topic, partition }) => ({ topic, partition, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER })),
    }));
    // Per owner: for each marker, the indexes of its partitions that owner leads.
    const byOwner = new Map<number, number[][]>();
    markers.forEach((m, mi) => {
      m.partitions.forEach(({ topic, partition }, pi) => {
        const owner = this.o.cluster.owner(topic, partition);
        if (owner < 0) return; // no owner now: NOT_LEADER_OR_FOLLOWER, retried
        let perMarker = byOwner.get(owner);
        if (!perMarker) byOwner.set(owner, (perMarker = markers.map(() => [])));
        perMarker[mi]!.push(pi);
      });
    });
    await Promise.all(
      [...byOwner].map(async ([owner, perMarker]) => {
        const sub = markers.map((m, mi) => ({ ...m, partitions: perMarker[mi]!.map((pi) => m.partitions[pi]!) })).filter((m) => m.partitions.length > 0);
        const subIndex = markers.map((_, mi) => mi).filter((mi) => perMarker[mi]!.length > 0);
        let answers: TxnMarkerResult[];
        try {
          answers = owner === this.o.cluster.localNodeId ? await this.o.local.write(sub) : await this.remote(owner, sub);
        } catch (err) {
          this.o.log?.warn({ err, broker: owner }, 'sending transaction markers to a partition leader failed; they are retried');
          return;
        }
        answers.forEach((answer, si) => {
          const mi = subIndex[si];
          if (mi === undefined) return;
          const codes = new Map(answer.partitions.map((p) => [`${p.topic}\0${p.partition}`, p.errorCode]));
          for (const r of results[mi]!.partitions) {
            const code = codes.get(`${r.topic}\0${r.partition}`);
            if (code !== undefined) r.errorCode = code;
          }
        });
      }),
    );
    return results;
  }

  /** One WriteTxnMarkers to broker `nodeId`: its markers in order, each with its per-partition errors. */
  private async remote(nodeId: number, markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> {
    const res = await this.o.channels.request(
      nodeId,
      WriteTxnMarkersApi,
      {
        markers: markers.map((m) => {
          const topics = new Map<string, number[]>();
          for (const { topic, partition } of m.partitions) {
            const list = topics.get(topic);
            if (list) list.push(partition);
            else topics.set(topic, [partition]);
          }
          return {
            producerId: m.producerId,
            producerEpoch: m.producerEpoch,
            transactionResult: m.commit,
            topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes, unknownTaggedFields: [] })),
            coordinatorEpoch: m.coordinatorEpoch,
            transactionVersion: 0,
            unknownTaggedFields: [],
          };
        }),
        unknownTaggedFields: [],
      },
      WRITE_TXN_MARKERS_VERSIONS,
    );
    return res.markers.map((r) => ({
      producerId: r.producerId,
      partitions: r.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.name, partition: p.partitionIndex, errorCode: p.errorCode }))),
    }));
  }
}

export interface TxnVerification {
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition?: boolean): Promise<number>;
}

export interface RoutingTxnVerifierOptions {
  /** The transaction coordinator of this broker. */
  readonly local: TxnVerification;
  readonly cluster: Pick<ClusterView, 'coordinator' | 'localNodeId'>;
  readonly channels: Pick<BrokerChannels, 'request'>;
}

export class RoutingTxnVerifier implements TxnVerification {
  constructor(private readonly o: RoutingTxnVerifierOptions) {}

  async verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition = false): Promise<number> {
    const { nodeId } = this.o.cluster.coordinator('transaction', transactionalId);
    // Ours, or no owner (the local coordinator answers NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE).
    if (nodeId === this.o.cluster.localNodeId || nodeId < 0) return this.o.local.verify(transactionalId, producerId, producerEpoch, topic, partition, addPartition);
    let res;
    try {
      res = await this.o.channels.request(
        nodeId,
        AddPartitionsToTxnApi,
        {
          transactions: [
            {
              transactionalId,
              producerId,
              producerEpoch,
              // Transaction version 2 (Produce v12+): the partition is added here, as AddPartitionsToTxnManager does.
              verifyOnly: !addPartition,
              topics: [{ name: topic, partitions: [partition], unknownTaggedFields: [] }],
              unknownTaggedFields: [],
            },
          ],
          v3AndBelowTransactionalId: '',
          v3AndBelowProducerId: 0n,
          v3AndBelowProducerEpoch: 0,
          v3AndBelowTopics: [],
          unknownTaggedFields: [],
        },
        ADD_PARTITIONS_VERSIONS,
      );
    } catch {
      return ErrorCode.NETWORK_EXCEPTION;
    }
    if (res.errorCode !== ErrorCode.NONE) return res.errorCode;
    const found = res.resultsByTransaction
      .find((t) => t.transactionalId === transactionalId)
      ?.topicResults.find((t) => t.name === topic)
      ?.resultsByPartition.find((p) => p.partitionIndex === partition);
    if (!found) return ErrorCode.UNKNOWN_SERVER_ERROR;
    const code = found.partitionErrorCode;
    if (code === ErrorCode.TRANSACTION_ABORTABLE) return ErrorCode.INVALID_TXN_STATE;
    if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
    return code;
  }
}
