// WriteTxnMarkers v1-2 (v0 removed by Kafka 4) · v1+: flexible · v2: transactionVersion per marker
// (KIP-1228), read as Kafka reads it for TV0/TV1: the marker written is the same EndTxnMarker v0 either way.
// The transaction coordinator's request to a partition leader (KafkaApis.handleWriteTxnMarkersRequest):
// each marker's COMMIT/ABORT control batch is appended to every partition it names; __consumer_offsets
// partitions go to the group coordinator, which completes the producer's transactional offsets too. Errors
// are per partition (src/cluster/txn-markers.ts): UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER,
// INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED, KAFKA_STORAGE_ERROR.
// Authorization as KafkaApis.handleWriteTxnMarkersRequest: ALTER on the cluster (a denial not logged), or else
// CLUSTER_ACTION: without either, CLUSTER_AUTHORIZATION_FAILED for every partition (Kafka's error response).
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  WriteTxnMarkersApi,
  createWriteTxnMarkersResponse,
  createWriteTxnMarkersResponseWritableTxnMarkerPartitionResult,
  createWriteTxnMarkersResponseWritableTxnMarkerResult,
  createWriteTxnMarkersResponseWritableTxnMarkerTopicResult,
  type WriteTxnMarkersResponse,
  type WriteTxnMarkersResponseWritableTxnMarkerTopicResult,
} from '../../protocol/messages/027-write-txn-markers.gen.js';
import type { TxnMarkerEntry } from '../cluster/txn-markers.js';
import { AclOperation } from './access.js';
import { errorResponse } from './error-response.js';
import { defineHandler } from './handler.js';

export const writeTxnMarkers = defineHandler({
  api: WriteTxnMarkersApi,
  uses: ['txnMarkers'],
  versions: { min: 1, max: 2 },
  async handle(req, ctx) {
    if (!ctx.access.authorizeCluster(AclOperation.ALTER, { logIfDenied: false }) && !ctx.access.authorizeCluster(AclOperation.CLUSTER_ACTION)) {
      return errorResponse(WriteTxnMarkersApi.apiKey, ctx.apiVersion, req, { code: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, message: null }) as WriteTxnMarkersResponse;
    }
    const entries: TxnMarkerEntry[] = req.markers.map((m) => ({
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      coordinatorEpoch: m.coordinatorEpoch,
      commit: m.transactionResult,
      partitions: m.topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ topic: t.name, partition }))),
    }));
    const results = await ctx.services.txnMarkers.write(entries);
    return createWriteTxnMarkersResponse({
      markers: results.map((r) => {
        // By topic, in the order the request named them.
        const topics = new Map<string, WriteTxnMarkersResponseWritableTxnMarkerTopicResult>();
        for (const p of r.partitions) {
          let t = topics.get(p.topic);
          if (!t) topics.set(p.topic, (t = createWriteTxnMarkersResponseWritableTxnMarkerTopicResult({ name: p.topic })));
          t.partitions.push(createWriteTxnMarkersResponseWritableTxnMarkerPartitionResult({ partitionIndex: p.partition, errorCode: p.errorCode }));
        }
        return createWriteTxnMarkersResponseWritableTxnMarkerResult({ producerId: r.producerId, topics: [...topics.values()] });
      }),
    });
  },
});
