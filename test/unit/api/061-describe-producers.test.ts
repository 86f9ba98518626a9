/** DescribeProducers in-process over real in-memory logs: the transaction fields of each producer. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDescribeProducersRequest } from '../../../protocol/messages/061-describe-producers.gen.js';
import { describeProducers } from '../../../src/api/061-describe-producers.js';
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
        requestContext({ topics: world.topicService, cluster: fakeCluster(), partitions: world.partitionService }, { apiVersion: 0, apiKey: 61 }),
      ),
    );
    const states = res.topics[0]!.partitions[0]!.activeProducers.map((p) => [p.producerId, p.producerEpoch, p.lastSequence, p.coordinatorEpoch, p.currentTxnStartOffset]);
    expect(states).toEqual([
      [31n, 0, 1, 6, -1n],
      [32n, 2, 1, -1, 3n],
    ]);
  });
});
