/**
 * A replica's DescribeProducers for a partition another broker leads (src/cluster/replica-reads.ts): asked of
 * the owner as DescribeProducers v0 and answered with the owner's partition answer; NOT_LEADER_OR_FOLLOWER when
 * this broker is not a replica, the partition has no owner, or the owner cannot be asked. The channel is a
 * recording stand-in; compat's kafka-tools scenario (`kafka-transactions find-hanging --broker-id 1`) runs the
 * real one against a cluster (`npm run compat -- --only ledgerline-cluster`).
 */
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor } from '../../../protocol/api.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import {
  createDescribeProducersResponse,
  createDescribeProducersResponsePartitionResponse,
  createDescribeProducersResponseProducerState,
  type DescribeProducersRequest,
} from '../../../protocol/messages/061-describe-producers.gen.js';
import { NO_REPLICA_READS, OwnerReplicaReads } from '../../../src/cluster/replica-reads.js';

const owners: Record<string, number> = { 'orders-0': 2, 'orders-1': 1, 'orders-2': -1, 'orders-3': 3 };
const replicas: Record<string, number[]> = { 'orders-0': [2, 1, 3], 'orders-1': [1, 2], 'orders-2': [1], 'orders-3': [3, 2] };
const cluster = { localNodeId: 1, owner: (t: string, p: number) => owners[`${t}-${p}`] ?? -1, replicas: (t: string, p: number) => replicas[`${t}-${p}`] ?? [] };

function channels(fail = false) {
  const sent: Array<{ nodeId: number; api: string; body: DescribeProducersRequest; versions: { min: number; max: number } }> = [];
  return {
    sent,
    request: async <Req, Res>(nodeId: number, api: ApiDescriptor<Req, Res>, body: Req, versions: { min: number; max: number }): Promise<Res> => {
      sent.push({ nodeId, api: api.name, body: body as DescribeProducersRequest, versions });
      if (fail) throw new Error('connection refused');
      const req = body as DescribeProducersRequest;
      return createDescribeProducersResponse({
        topics: req.topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((p) =>
            createDescribeProducersResponsePartitionResponse({
              partitionIndex: p,
              activeProducers: [createDescribeProducersResponseProducerState({ producerId: 42n, producerEpoch: 3, lastSequence: 7, currentTxnStartOffset: 11n })],
            }),
          ),
          unknownTaggedFields: [],
        })),
      }) as Res;
    },
  };
}

describe('OwnerReplicaReads', () => {
  it("answers a replica's DescribeProducers with the owner's state, asked as DescribeProducers v0", async () => {
    const ch = channels();
    const reads = new OwnerReplicaReads({ cluster, channels: ch });
    const answer = await reads.describeProducers('orders', 0);
    expect(answer).toMatchObject({ partitionIndex: 0, errorCode: 0, activeProducers: [{ producerId: 42n, producerEpoch: 3, lastSequence: 7, currentTxnStartOffset: 11n }] });
    expect(ch.sent.map((s) => [s.nodeId, s.api, s.versions, s.body.topics.map((t) => [t.name, t.partitionIndexes])])).toEqual([[2, 'DescribeProducers', { min: 0, max: 0 }, [['orders', [0]]]]]);
  });

  it('answers NOT_LEADER_OR_FOLLOWER without asking anyone when this broker is not a replica, owns it, or nobody owns it', async () => {
    const ch = channels();
    const reads = new OwnerReplicaReads({ cluster, channels: ch });
    for (const p of [3, 1, 2]) expect((await reads.describeProducers('orders', p)).errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(ch.sent).toEqual([]);
  });

  it('answers NOT_LEADER_OR_FOLLOWER when the owner cannot be asked', async () => {
    const reads = new OwnerReplicaReads({ cluster, channels: channels(true) });
    expect(await reads.describeProducers('orders', 0)).toMatchObject({ partitionIndex: 0, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER, activeProducers: [] });
  });

  it('a broker alone has no replica to ask', async () => {
    expect(await NO_REPLICA_READS.describeProducers('orders', 5)).toMatchObject({ partitionIndex: 5, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
  });
});
