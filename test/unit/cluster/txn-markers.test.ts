/** LocalTxnMarkerWriter over real in-memory partition logs, and the WriteTxnMarkers handler over it. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createWriteTxnMarkersRequest } from '../../../protocol/messages/027-write-txn-markers.gen.js';
import { writeTxnMarkers } from '../../../src/api/027-write-txn-markers.js';
import { LocalTxnMarkerWriter, type GroupTxnCompletion } from '../../../src/cluster/txn-markers.js';
import { answer, FakeTopicsAndPartitions, fakeCluster, requestContext, topicRecord } from '../api/fakes.js';
import { producerBatch } from '../log/support.js';

let world: FakeTopicsAndPartitions;
let completions: Array<[number, bigint, number, number, boolean]>;
let groupAnswer: number;

const groups: GroupTxnCompletion = {
  completeTransaction: (partition, producerId, producerEpoch, coordinatorEpoch, commit) => {
    completions.push([partition, producerId, producerEpoch, coordinatorEpoch, commit]);
    return Promise.resolve(groupAnswer);
  },
};

function writer(owned: (t: string, p: number) => boolean = () => true): LocalTxnMarkerWriter {
  return new LocalTxnMarkerWriter({ topics: world.topicService, cluster: fakeCluster({ owned }), partitions: world.partitionService, groups });
}

beforeEach(async () => {
  world = new FakeTopicsAndPartitions();
  completions = [];
  groupAnswer = ErrorCode.NONE;
  await world.addTopic(topicRecord('orders', 3));
  await world.addTopic(topicRecord('__consumer_offsets', 4, { internal: true }), []);
});

afterEach(() => world.close());

describe('LocalTxnMarkerWriter', () => {
  it('appends the marker to each partition, ending the producer\'s transaction there', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    await log.append(producerBatch(9, 0, 0));
    expect(log.lastStableOffset).toBe(0);
    const [result] = await writer().write([{ producerId: 9n, producerEpoch: 0, coordinatorEpoch: 1, commit: false, partitions: [{ topic: 'orders', partition: 0 }, { topic: 'orders', partition: 1 }] }]);
    expect(result).toEqual({ producerId: 9n, partitions: [{ topic: 'orders', partition: 0, errorCode: 0 }, { topic: 'orders', partition: 1, errorCode: 0 }] });
    expect(log.lastStableOffset).toBe(3);
    expect((await log.read(0, { isolation: 'read_committed' })).abortedTransactions).toEqual([{ producerId: 9n, firstOffset: 0 }]);
    // Partition 1 had no state for the producer: its marker is written all the same, as Kafka does.
    expect(world.partitionService.get('orders', 1)!.log.highWatermark).toBe(1);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER and the epoch errors per partition', async () => {
    const w = writer((t, p) => !(t === 'orders' && p === 2));
    await w.write([{ producerId: 4n, producerEpoch: 2, coordinatorEpoch: 5, commit: true, partitions: [{ topic: 'orders', partition: 0 }] }]);
    const [r] = await w.write([
      {
        producerId: 4n,
        producerEpoch: 1,
        coordinatorEpoch: 5,
        commit: true,
        partitions: [{ topic: 'nope', partition: 0 }, { topic: 'orders', partition: 7 }, { topic: 'orders', partition: 2 }, { topic: 'orders', partition: 0 }],
      },
    ]);
    expect(r!.partitions.map((p) => p.errorCode)).toEqual([
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      ErrorCode.INVALID_PRODUCER_EPOCH,
    ]);
    const [fenced] = await w.write([{ producerId: 4n, producerEpoch: 2, coordinatorEpoch: 4, commit: true, partitions: [{ topic: 'orders', partition: 0 }] }]);
    expect(fenced!.partitions[0]!.errorCode).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
  });

  it('hands __consumer_offsets partitions to the group coordinator, its coordinator errors as NOT_LEADER_OR_FOLLOWER', async () => {
    const [r] = await writer().write([{ producerId: 3n, producerEpoch: 1, coordinatorEpoch: 2, commit: true, partitions: [{ topic: '__consumer_offsets', partition: 3 }] }]);
    expect(r!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(completions).toEqual([[3, 3n, 1, 2, true]]);
    groupAnswer = ErrorCode.NOT_COORDINATOR;
    const [moved] = await writer().write([{ producerId: 3n, producerEpoch: 1, coordinatorEpoch: 2, commit: false, partitions: [{ topic: '__consumer_offsets', partition: 1 }] }]);
    expect(moved!.partitions[0]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
  });
});

describe('WriteTxnMarkers handler', () => {
  it('answers each marker by producer, topic and partition', async () => {
    const req = createWriteTxnMarkersRequest({
      markers: [
        { producerId: 1n, producerEpoch: 0, transactionResult: true, coordinatorEpoch: 0, transactionVersion: 0, topics: [{ name: 'orders', partitionIndexes: [0, 1] }, { name: 'gone', partitionIndexes: [0] }] },
        { producerId: 2n, producerEpoch: 0, transactionResult: false, coordinatorEpoch: 0, transactionVersion: 0, topics: [{ name: 'orders', partitionIndexes: [2] }] },
      ],
    });
    const res = await answer(writeTxnMarkers.handle(req, requestContext({ txnMarkers: writer() }, { apiVersion: 1, apiKey: 27 })));
    expect(res.markers.map((m) => [m.producerId, m.topics.map((t) => [t.name, t.partitions.map((p) => [p.partitionIndex, p.errorCode])])])).toEqual([
      [1n, [['orders', [[0, 0], [1, 0]]], ['gone', [[0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]]]],
      [2n, [['orders', [[2, 0]]]]],
    ]);
    expect(world.partitionService.get('orders', 2)!.log.highWatermark).toBe(1);
  });
});
