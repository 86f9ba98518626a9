import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { ProduceApi, createProduceResponsePartitionProduceResponse } from '../../../../protocol/messages/000-produce.gen.js';
import type { ProduceRequest } from '../../../../protocol/messages/000-produce.gen.js';
import { MetadataApi } from '../../../../protocol/messages/003-metadata.gen.js';
import { FindCoordinatorApi } from '../../../../protocol/messages/010-find-coordinator.gen.js';
import type { FindCoordinatorRequest } from '../../../../protocol/messages/010-find-coordinator.gen.js';
import { InitProducerIdApi } from '../../../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi } from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import type { AddPartitionsToTxnRequest } from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { EndTxnApi } from '../../../../protocol/messages/026-end-txn.gen.js';
import { RecordBatch } from '../../../../protocol/records/index.js';
import { KafkaClient } from '../../../../src/client/index.js';
import { buildTemplate } from '../../../../bench/lib/batches.js';
import { runLive } from '../../../../bench/lib/load.js';
import { parseWorkload } from '../../../../bench/lib/workload.js';
import { FakeBroker, oneNodeMetadata } from '../../client/fake-broker.js';
import type { ReceivedRequest } from '../../client/fake-broker.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/**
 * One fake node leading the 4 partitions of topic `t`, with a transaction coordinator that answers `init` to
 * InitProducerId and, with `concurrent`, CONCURRENT_TRANSACTIONS to the first AddPartitionsToTxn of every
 * transaction (counted in `concurrent.answered`).
 */
async function transactionalBroker(init: number = ErrorCode.NONE, concurrent?: { answered: number }): Promise<{ broker: FakeBroker; client: KafkaClient }> {
  const broker = await FakeBroker.start();
  open.push(broker);
  let epoch = 0;
  broker.handlers[MetadataApi.apiKey] = () => oneNodeMetadata(broker, 't', 'AAAAAAAAAAAAAAAAAAAAAQ', 4);
  broker.handlers[FindCoordinatorApi.apiKey] = (req: ReceivedRequest) =>
    FindCoordinatorApi.response.create({
      coordinators: (req.body as FindCoordinatorRequest).coordinatorKeys.map((key) => ({ key, nodeId: 1, host: '127.0.0.1', port: broker.port, errorCode: 0, errorMessage: null })),
    });
  broker.handlers[InitProducerIdApi.apiKey] = () => InitProducerIdApi.response.create({ errorCode: init, producerId: init === 0 ? 9000n : -1n, producerEpoch: init === 0 ? epoch++ : -1 });
  const refusedOnce = new Set<string>();
  broker.handlers[AddPartitionsToTxnApi.apiKey] = (req: ReceivedRequest) => {
    const body = req.body as AddPartitionsToTxnRequest;
    let partitionErrorCode: number = ErrorCode.NONE;
    if (concurrent && !refusedOnce.delete(body.v3AndBelowTransactionalId)) {
      refusedOnce.add(body.v3AndBelowTransactionalId);
      concurrent.answered++;
      partitionErrorCode = ErrorCode.CONCURRENT_TRANSACTIONS;
    }
    return AddPartitionsToTxnApi.response.create({
      resultsByTopicV3AndBelow: body.v3AndBelowTopics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode })) })),
    });
  };
  broker.handlers[ProduceApi.apiKey] = (req: ReceivedRequest) =>
    ProduceApi.response.create({
      responses: (req.body as ProduceRequest).topicData.map((t) => ({
        name: t.name,
        topicId: t.topicId,
        partitionResponses: t.partitionData.map((p) => createProduceResponsePartitionProduceResponse({ index: p.index, errorCode: 0 })),
      })),
    });
  broker.handlers[EndTxnApi.apiKey] = () => EndTxnApi.response.create({ errorCode: 0 });
  const client = await KafkaClient.connect({ bootstrap: broker.address, clientId: 'unit', connectionsPerBroker: 2 });
  open.push(client);
  await client.metadata(['t']);
  return { broker, client };
}

async function run(client: KafkaClient, durationMs: number) {
  // 2 producers × 2 partitions, 8-record batches, 32 records per transaction: 2 requests of 2 batches each.
  const workload = parseWorkload({ name: 'w', partitionsPerTopic: 4, producers: 2, consumers: 0, recordSize: 100, batchBytes: 800, partitionsPerRequest: 2, maxInFlight: 2, transactionRecords: 32 });
  const template = await buildTemplate(workload);
  const partitions = [0, 1, 2, 3].map((partition) => ({ topic: 't', partition }));
  return runLive({ client, workload, template, partitions, rate: null, durationMs, warmupMs: 0 });
}

describe('transactional load', () => {
  it('adds the partitions, sends transactional batches in sequence and commits, transaction after transaction', async () => {
    const { broker, client } = await transactionalBroker();
    const result = await run(client, 300);
    expect(broker.errors.map((e) => e.message)).toEqual([]);
    expect(result.errors).toEqual({});
    const t = result.transactions!;
    expect(t.committed).toBeGreaterThan(0);
    expect(t.commitLatency.count).toBe(t.committed);
    expect(result.produced.records).toBe(t.committed * 32);

    // Per transactional id: AddPartitionsToTxn, then its Produce requests, then EndTxn(commit).
    const ids = new Set(broker.requests(InitProducerIdApi).map((r) => (r.body as { transactionalId: string }).transactionalId));
    expect(ids.size).toBe(2);
    for (const id of ids) {
      const mine = broker.received.filter((r) => {
        const b = r.body as Record<string, unknown> | undefined;
        return b?.transactionalId === id || b?.v3AndBelowTransactionalId === id;
      });
      const kinds = mine.map((r) => r.api.name);
      expect(kinds[0]).toBe('InitProducerId');
      const cycle = ['AddPartitionsToTxn', 'Produce', 'Produce', 'EndTxn'];
      const rest = kinds.slice(1);
      expect(rest.length % 4).toBe(0);
      for (let i = 0; i < rest.length; i += 4) expect(rest.slice(i, i + 4)).toEqual(cycle);
      const sequences = new Map<number, number>();
      for (const r of mine.filter((x) => x.api.name === 'Produce')) {
        expect(r.version).toBeLessThanOrEqual(11);
        for (const p of (r.body as ProduceRequest).topicData[0]!.partitionData) {
          const b = RecordBatch.wrap(p.records as Buffer);
          expect(b.isTransactional).toBe(true);
          expect(b.producerId).toBe(9000n);
          expect(b.baseSequence).toBe(sequences.get(p.index) ?? 0);
          sequences.set(p.index, b.baseSequence + 8);
        }
      }
      const add = mine.find((r) => r.api.name === 'AddPartitionsToTxn')!.body as AddPartitionsToTxnRequest;
      expect(add.v3AndBelowTopics[0]!.partitions).toHaveLength(2);
    }
  });

  it('counts every CONCURRENT_TRANSACTIONS retry of producers waiting at the same time', async () => {
    const concurrent = { answered: 0 };
    const { broker, client } = await transactionalBroker(ErrorCode.NONE, concurrent);
    const result = await run(client, 300);
    expect(broker.errors.map((e) => e.message)).toEqual([]);
    expect(result.errors).toEqual({});
    // Both producers retry after 20 ms at once, in every transaction: each retry is counted, none lost.
    expect(result.transactions!.committed).toBeGreaterThan(2);
    expect(concurrent.answered).toBeGreaterThan(2);
    expect(result.transactions!.concurrentRetries).toBe(concurrent.answered);
  });

  it('aborts a transaction whose batch failed and starts again with a new epoch and sequences from 0', async () => {
    const { broker, client } = await transactionalBroker();
    const answer = broker.handlers[ProduceApi.apiKey]!;
    let produces = 0;
    broker.handlers[ProduceApi.apiKey] = (req, socket) => {
      const res = answer(req, socket) as ReturnType<typeof ProduceApi.response.create>;
      if (++produces === 3) res.responses[0]!.partitionResponses[0]!.errorCode = ErrorCode.NOT_ENOUGH_REPLICAS;
      return res;
    };
    const result = await run(client, 300);
    expect(result.errors).toEqual({ 'Produce NOT_ENOUGH_REPLICAS': 1 });
    const ends = broker.requests(EndTxnApi).map((r) => (r.body as { committed: boolean }).committed);
    expect(ends.filter((c) => !c)).toHaveLength(1);
    expect(broker.requests(InitProducerIdApi)).toHaveLength(3); // 2 producers, one of them twice
    // After the abort, the failed producer's batches carry its new epoch and start at sequence 0 again.
    const failed = (broker.requests(ProduceApi)[2]!.body as ProduceRequest).transactionalId;
    const batches = broker
      .requests(ProduceApi)
      .filter((r) => (r.body as ProduceRequest).transactionalId === failed)
      .flatMap((r) => (r.body as ProduceRequest).topicData[0]!.partitionData.map((p) => RecordBatch.wrap(p.records as Buffer)));
    const firstOfNewEpoch = batches.findIndex((b, i) => i > 0 && b.producerEpoch !== batches[0]!.producerEpoch);
    expect(firstOfNewEpoch).toBeGreaterThan(0);
    expect(batches[firstOfNewEpoch]!.baseSequence).toBe(0);
  });

  it('fails at once with the broker error when InitProducerId refuses the transactional id', async () => {
    const { broker, client } = await transactionalBroker(ErrorCode.INVALID_REQUEST);
    const t0 = Date.now();
    await expect(run(client, 10_000)).rejects.toThrow(/InitProducerId for transactional id ".*" answered INVALID_REQUEST/);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(broker.requests(ProduceApi)).toHaveLength(0);
  });
});
