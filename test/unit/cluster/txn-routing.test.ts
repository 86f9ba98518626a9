/**
 * The routing of transaction markers and KIP-890 verifications between brokers (src/cluster/txn-routing.ts):
 * partitions split by owner, one WriteTxnMarkers per remote owner with the marker's fields, the answers put back
 * in request order, failures left NOT_LEADER_OR_FOLLOWER for the coordinator to retry; a verification sent as
 * AddPartitionsToTxn v4+ to the coordinator's owner, verify-only unless the partition is to be added, with
 * Kafka's error mapping. The channel is a recording stand-in; the integration test
 * test/integration/cluster-transactions.test.ts runs the real one between three brokers.
 */
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor } from '../../../protocol/api.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { AddPartitionsToTxnRequest, AddPartitionsToTxnResponse } from '../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import type { WriteTxnMarkersRequest, WriteTxnMarkersResponse } from '../../../protocol/messages/027-write-txn-markers.gen.js';
import type { CoordinatorKeyType, CoordinatorLocation } from '../../../src/cluster/cluster-view.js';
import type { TxnMarkerEntry } from '../../../src/cluster/txn-markers.js';
import { RoutingTxnMarkerWriter, RoutingTxnVerifier } from '../../../src/cluster/txn-routing.js';

interface Sent {
  nodeId: number;
  api: string;
  body: unknown;
  versions: { min: number; max: number };
}

interface RecordingChannels {
  sent: Sent[];
  request<Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, body: Req, versions: { min: number; max: number }): Promise<Res>;
}

function channels(answer: (nodeId: number, api: string, body: unknown) => unknown): RecordingChannels {
  const sent: Sent[] = [];
  return {
    sent,
    request: async <Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, body: Req, versions: { min: number; max: number }): Promise<Res> => {
      sent.push({ nodeId, api: api.name, body, versions });
      const a = answer(nodeId, api.name, body);
      if (a instanceof Error) throw a;
      return a as Res;
    },
  };
}

const owners: Record<string, number> = { 'orders-0': 1, 'orders-1': 2, 'orders-2': 3, '__consumer_offsets-7': 2, 'orders-3': -1 };
const cluster = { localNodeId: 1, owner: (t: string, p: number) => owners[`${t}-${p}`] ?? -1 };

const marker = (partitions: Array<[string, number]>): TxnMarkerEntry => ({
  producerId: 42n,
  producerEpoch: 3,
  coordinatorEpoch: 9,
  commit: true,
  partitions: partitions.map(([topic, partition]) => ({ topic, partition })),
});

/** A WriteTxnMarkers answer: every partition of every marker with `code(topic, partition)`. */
function markersAnswer(body: WriteTxnMarkersRequest, code: (t: string, p: number) => number): WriteTxnMarkersResponse {
  return {
    markers: body.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, errorCode: code(t.name, p), unknownTaggedFields: [] })), unknownTaggedFields: [] })),
      unknownTaggedFields: [],
    })),
    unknownTaggedFields: [],
  };
}

describe('RoutingTxnMarkerWriter', () => {
  it('writes local partitions locally and sends each other owner one WriteTxnMarkers, answers in the request order', async () => {
    const localCalls: TxnMarkerEntry[][] = [];
    const local = {
      write: async (ms: readonly TxnMarkerEntry[]) => {
        localCalls.push([...ms]);
        return ms.map((m) => ({ producerId: m.producerId, partitions: m.partitions.map((p) => ({ ...p, errorCode: ErrorCode.NONE })) }));
      },
    };
    const ch = channels((nodeId, _api, body) => markersAnswer(body as WriteTxnMarkersRequest, (t, p) => (nodeId === 3 && p === 2 ? ErrorCode.INVALID_PRODUCER_EPOCH : ErrorCode.NONE)));
    const writer = new RoutingTxnMarkerWriter({ local, cluster, channels: ch });
    const [result] = await writer.write([marker([['orders', 0], ['orders', 1], ['orders', 2], ['__consumer_offsets', 7], ['orders', 3]])]);
    expect(result!.partitions).toEqual([
      { topic: 'orders', partition: 0, errorCode: ErrorCode.NONE },
      { topic: 'orders', partition: 1, errorCode: ErrorCode.NONE },
      { topic: 'orders', partition: 2, errorCode: ErrorCode.INVALID_PRODUCER_EPOCH },
      { topic: '__consumer_offsets', partition: 7, errorCode: ErrorCode.NONE },
      // No owner: left for the coordinator to retry.
      { topic: 'orders', partition: 3, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER },
    ]);
    expect(localCalls).toEqual([[{ ...marker([['orders', 0]]) }]]);
    const byNode = new Map(ch.sent.map((s) => [s.nodeId, s]));
    expect([...byNode.keys()].sort()).toEqual([2, 3]);
    expect(byNode.get(2)!.api).toBe('WriteTxnMarkers');
    expect(byNode.get(2)!.versions).toEqual({ min: 1, max: 2 });
    expect((byNode.get(2)!.body as WriteTxnMarkersRequest).markers).toEqual([
      expect.objectContaining({
        producerId: 42n,
        producerEpoch: 3,
        coordinatorEpoch: 9,
        transactionResult: true,
        topics: [expect.objectContaining({ name: 'orders', partitionIndexes: [1] }), expect.objectContaining({ name: '__consumer_offsets', partitionIndexes: [7] })],
      }),
    ]);
  });

  it('leaves the partitions of an owner it cannot reach NOT_LEADER_OR_FOLLOWER, and the others written', async () => {
    const local = { write: async (ms: readonly TxnMarkerEntry[]) => ms.map((m) => ({ producerId: m.producerId, partitions: m.partitions.map((p) => ({ ...p, errorCode: ErrorCode.NONE })) })) };
    const ch = channels((nodeId, _api, body) => (nodeId === 2 ? new Error('connection refused') : markersAnswer(body as WriteTxnMarkersRequest, () => ErrorCode.NONE)));
    const writer = new RoutingTxnMarkerWriter({ local, cluster, channels: ch });
    const results = await writer.write([marker([['orders', 1], ['orders', 2]]), marker([['orders', 0]])]);
    expect(results.map((r) => r.partitions.map((p) => p.errorCode))).toEqual([[ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NONE], [ErrorCode.NONE]]);
  });
});

describe('RoutingTxnVerifier', () => {
  const at = (nodeId: number) => ({ localNodeId: 1, coordinator: (_t: CoordinatorKeyType, _k: string): CoordinatorLocation => ({ topic: '__transaction_state', partition: 4, nodeId }) });
  const answer = (partitionErrorCode: number, errorCode: number = ErrorCode.NONE): AddPartitionsToTxnResponse => ({
    throttleTimeMs: 0,
    errorCode,
    resultsByTransaction: [{ transactionalId: 'tx', topicResults: [{ name: 'orders', resultsByPartition: [{ partitionIndex: 5, partitionErrorCode, unknownTaggedFields: [] }], unknownTaggedFields: [] }], unknownTaggedFields: [] }],
    resultsByTopicV3AndBelow: [],
    unknownTaggedFields: [],
  });

  it('asks the local coordinator when it owns the transactional id, or when no broker does', async () => {
    const calls: unknown[][] = [];
    const local = { verify: async (...args: unknown[]) => (calls.push(args), ErrorCode.NONE) };
    const ch = channels(() => new Error('not expected'));
    expect(await new RoutingTxnVerifier({ local, cluster: at(1), channels: ch }).verify('tx', 7n, 1, 'orders', 5, true)).toBe(ErrorCode.NONE);
    expect(await new RoutingTxnVerifier({ local, cluster: at(-1), channels: ch }).verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.NONE);
    expect(calls).toEqual([['tx', 7n, 1, 'orders', 5, true], ['tx', 7n, 1, 'orders', 5, false]]);
    expect(ch.sent).toEqual([]);
  });

  it('sends AddPartitionsToTxn v4+ to the owner, verify-only unless adding, and maps its answer as Kafka does', async () => {
    const local = { verify: async () => ErrorCode.UNKNOWN_SERVER_ERROR };
    let next = answer(ErrorCode.NONE);
    const ch = channels(() => next);
    const v = new RoutingTxnVerifier({ local, cluster: at(3), channels: ch });
    expect(await v.verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.NONE);
    expect(ch.sent[0]!.nodeId).toBe(3);
    expect(ch.sent[0]!.versions).toEqual({ min: 4, max: 5 });
    expect((ch.sent[0]!.body as AddPartitionsToTxnRequest).transactions).toEqual([
      expect.objectContaining({ transactionalId: 'tx', producerId: 7n, producerEpoch: 1, verifyOnly: true, topics: [expect.objectContaining({ name: 'orders', partitions: [5] })] }),
    ]);
    await v.verify('tx', 7n, 1, 'orders', 5, true);
    expect((ch.sent[1]!.body as AddPartitionsToTxnRequest).transactions[0]!.verifyOnly).toBe(false);
    next = answer(ErrorCode.TRANSACTION_ABORTABLE);
    expect(await v.verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.INVALID_TXN_STATE);
    next = answer(ErrorCode.PRODUCER_FENCED);
    expect(await v.verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    next = answer(ErrorCode.NONE, ErrorCode.NOT_COORDINATOR);
    expect(await v.verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.NOT_COORDINATOR);
  });

  it('answers NETWORK_EXCEPTION when the coordinator cannot be reached', async () => {
    const v = new RoutingTxnVerifier({ local: { verify: async () => ErrorCode.NONE }, cluster: at(2), channels: channels(() => new Error('timeout')) });
    expect(await v.verify('tx', 7n, 1, 'orders', 5)).toBe(ErrorCode.NETWORK_EXCEPTION);
  });
});
