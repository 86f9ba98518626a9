/** DescribeProducers in-process over real in-memory logs: the transaction fields of each producer. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import {
  createDescribeProducersRequest,
  createDescribeProducersResponsePartitionResponse,
  createDescribeProducersResponseProducerState,
} from '../../../protocol/messages/061-describe-producers.gen.js';
import { describeProducers } from '../../../src/api/061-describe-producers.js';
import { NO_REPLICA_READS } from '../../../src/cluster/replica-reads.js';
import { producerBatch } from '../log/support.js';
import { answer, FakeTopicsAndPartitions, fakeCluster, requestContext, topicRecord } from './fakes.js';

let world: FakeTopicsAndPartitions;

beforeEach(async () => {
  world = new FakeTopicsAndPartitions();
  await world.addTopic(topicRecord('orders', 1));
});

afterEach(() => world.close());

describe('DescribeProducers handler', () => {
  it('reports the first offset of each producer\'s ongoing transaction and the coordinator epoch of its last marker', async () => {
    const log = world.partitionService.get('orders', 0)!.log;
    await log.append(producerBatch(31, 0, 0)); // 0-1
    await log.writeTxnMarker({ producerId: 31n, producerEpoch: 0, coordinatorEpoch: 6, commit: true }); // 2
    await log.append(producerBatch(32, 2, 0)); // 3-4: ongoing
    const res = await answer(
      describeProducers.handle(
        createDescribeProducersRequest({ topics: [{ name: 'orders', partitionIndexes: [0] }] }),
        requestContext({ topics: world.topicService, cluster: fakeCluster(), partitions: world.partitionService, replicaReads: NO_REPLICA_READS }, { apiVersion: 0, apiKey: 61 }),
      ),
    );
    const states = res.topics[0]!.partitions[0]!.activeProducers.map((p) => [p.producerId, p.producerEpoch, p.lastSequence, p.coordinatorEpoch, p.currentTxnStartOffset]);
    expect(states).toEqual([
      [31n, 0, 1, 6, -1n],
      [32n, 2, 1, -1, 3n],
    ]);
  });

  it("answers for a partition another broker leads with the replica reads (the owner's state), unless another broker asks", async () => {
    await world.addTopic(topicRecord('payments', 2));
    const asked: string[] = [];
    const replicaReads = {
      describeProducers: async (topic: string, partition: number) => {
        asked.push(`${topic}-${partition}`);
        return createDescribeProducersResponsePartitionResponse({ partitionIndex: partition, activeProducers: [createDescribeProducersResponseProducerState({ producerId: 9n, producerEpoch: 1, lastSequence: 4 })] });
      },
    };
    const cluster = fakeCluster({ owned: (t, p) => !(t === 'payments' && p === 1), ownerOf: () => 8 });
    const request = createDescribeProducersRequest({ topics: [{ name: 'payments', partitionIndexes: [0, 1] }] });
    const services = { topics: world.topicService, cluster, partitions: world.partitionService, replicaReads };
    const fromClient = await answer(describeProducers.handle(request, requestContext(services, { apiVersion: 0, apiKey: 61 })));
    expect(fromClient.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode, p.activeProducers.map((a) => a.producerId)])).toEqual([
      [0, 0, []],
      [1, 0, [9n]],
    ]);
    expect(asked).toEqual(['payments-1']);
    const fromBroker = await answer(describeProducers.handle(request, requestContext(services, { apiVersion: 0, apiKey: 61, clientId: 'ledgerline-broker-8' })));
    expect(fromBroker.topics[0]!.partitions[1]!.errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
    expect(asked).toEqual(['payments-1']);
  });
});
