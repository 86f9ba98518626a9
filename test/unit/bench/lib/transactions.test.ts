import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { FindCoordinatorApi } from '../../../../protocol/messages/010-find-coordinator.gen.js';
import type { FindCoordinatorRequest } from '../../../../protocol/messages/010-find-coordinator.gen.js';
import { InitProducerIdApi } from '../../../../protocol/messages/022-init-producer-id.gen.js';
import type { InitProducerIdRequest } from '../../../../protocol/messages/022-init-producer-id.gen.js';
import { AddPartitionsToTxnApi } from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import type { AddPartitionsToTxnRequest } from '../../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { EndTxnApi } from '../../../../protocol/messages/026-end-txn.gen.js';
import type { EndTxnRequest } from '../../../../protocol/messages/026-end-txn.gen.js';
import { apis } from '../../../../protocol/messages/index.gen.js';
import { RecordBatch } from '../../../../protocol/records/index.js';
import { Connection } from '../../../../src/client/index.js';
import { buildTemplate, copyTemplate, stampBatch } from '../../../../bench/lib/batches.js';
import {
  AbortedTransactions,
  TransactionError,
  addPartitionsToTxn,
  endTxn,
  findTransactionCoordinator,
  initTransactions,
} from '../../../../bench/lib/transactions.js';
import { parseWorkload } from '../../../../bench/lib/workload.js';
import { FakeBroker } from '../../client/fake-broker.js';
import type { ReceivedRequest } from '../../client/fake-broker.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

async function setup(handlers: FakeBroker['handlers'], ranges?: Map<number, { min: number; max: number }>): Promise<{ broker: FakeBroker; conn: Connection }> {
  const broker = await FakeBroker.start({ handlers, apiVersions: ranges });
  open.push(broker);
  const conn = await Connection.connect({ host: '127.0.0.1', port: broker.port });
  open.push(conn);
  return { broker, conn };
}

const producer = { transactionalId: 'tx-1', producerId: 7000n, producerEpoch: 3 };

describe('transactional producer requests', () => {
  it('finds the coordinator by transactional id with key type 1, batched from v4, retrying while it loads', async () => {
    let calls = 0;
    const { broker, conn } = await setup({
      [FindCoordinatorApi.apiKey]: (req: ReceivedRequest) => {
        const body = req.body as FindCoordinatorRequest;
        calls++;
        const errorCode = calls === 1 ? ErrorCode.COORDINATOR_NOT_AVAILABLE : 0;
        return FindCoordinatorApi.response.create({
          coordinators: body.coordinatorKeys.map((key) => ({ key, nodeId: 5, host: 'h', port: 1, errorCode, errorMessage: null })),
        });
      },
    });
    expect(await findTransactionCoordinator(conn, 'tx-1', { backoffMs: 1 })).toBe(5);
    const sent = broker.requests(FindCoordinatorApi);
    expect(sent).toHaveLength(2);
    expect(sent[0]!.version).toBeGreaterThanOrEqual(4);
    expect(sent[0]!.body).toMatchObject({ keyType: 1, coordinatorKeys: ['tx-1'] });
  });

  it('names one key in FindCoordinator v1-3', async () => {
    const ranges = new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
    ranges.set(FindCoordinatorApi.apiKey, { min: 0, max: 3 });
    const { broker, conn } = await setup({ [FindCoordinatorApi.apiKey]: () => FindCoordinatorApi.response.create({ nodeId: 2, host: 'h', port: 1, errorMessage: null }) }, ranges);
    expect(await findTransactionCoordinator(conn, 'tx-1')).toBe(2);
    expect(broker.requests(FindCoordinatorApi)[0]!.body).toMatchObject({ keyType: 1, key: 'tx-1' });
  });

  it('initializes with the transactional id and fails in one line naming the broker error', async () => {
    let answer: number = ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    const { broker, conn } = await setup({
      [InitProducerIdApi.apiKey]: () => {
        const errorCode = answer;
        answer = 0;
        return InitProducerIdApi.response.create({ errorCode, producerId: errorCode === 0 ? 7000n : -1n, producerEpoch: errorCode === 0 ? 3 : -1 });
      },
    });
    expect(await initTransactions(conn, 'tx-1', { backoffMs: 1 })).toEqual(producer);
    expect(broker.requests(InitProducerIdApi)[0]!.version).toBe(5);
    const body = broker.requests(InitProducerIdApi)[0]!.body as InitProducerIdRequest;
    expect(body).toMatchObject({ transactionalId: 'tx-1', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });

    broker.handlers[InitProducerIdApi.apiKey] = () => InitProducerIdApi.response.create({ errorCode: ErrorCode.INVALID_REQUEST, producerId: -1n, producerEpoch: -1 });
    const e = await initTransactions(conn, 'tx-1').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TransactionError);
    expect((e as TransactionError).message).toBe('InitProducerId for transactional id "tx-1" answered INVALID_REQUEST');
    expect((e as TransactionError).errorName).toBe('INVALID_REQUEST');
  });

  it('adds partitions with the v3 client form and retries CONCURRENT_TRANSACTIONS', async () => {
    let calls = 0;
    const { broker, conn } = await setup({
      [AddPartitionsToTxnApi.apiKey]: (req: ReceivedRequest) => {
        const body = req.body as AddPartitionsToTxnRequest;
        const errorCode = ++calls === 1 ? ErrorCode.CONCURRENT_TRANSACTIONS : 0;
        return AddPartitionsToTxnApi.response.create({
          resultsByTopicV3AndBelow: body.v3AndBelowTopics.map((t) => ({ name: t.name, resultsByPartition: t.partitions.map((partitionIndex) => ({ partitionIndex, partitionErrorCode: errorCode })) })),
        });
      },
    });
    expect(await addPartitionsToTxn(conn, producer, [{ topic: 't', partitions: [0, 4] }])).toBe(1);
    const [first] = broker.requests(AddPartitionsToTxnApi);
    expect(first!.version).toBe(3);
    expect(first!.body).toMatchObject({ v3AndBelowTransactionalId: 'tx-1', v3AndBelowProducerId: 7000n, v3AndBelowProducerEpoch: 3, v3AndBelowTopics: [{ name: 't', partitions: [0, 4] }] });
  });

  it('reports the partition error rather than OPERATION_NOT_ATTEMPTED', async () => {
    const { conn } = await setup({
      [AddPartitionsToTxnApi.apiKey]: () =>
        AddPartitionsToTxnApi.response.create({
          resultsByTopicV3AndBelow: [
            {
              name: 't',
              resultsByPartition: [
                { partitionIndex: 0, partitionErrorCode: ErrorCode.OPERATION_NOT_ATTEMPTED },
                { partitionIndex: 1, partitionErrorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION },
              ],
            },
          ],
        }),
    });
    await expect(addPartitionsToTxn(conn, producer, [{ topic: 't', partitions: [0, 1] }])).rejects.toThrow(/AddPartitionsToTxn .* answered UNKNOWN_TOPIC_OR_PARTITION/);
  });

  it('commits with EndTxn at most v4', async () => {
    const { broker, conn } = await setup({ [EndTxnApi.apiKey]: () => EndTxnApi.response.create({ errorCode: 0 }) });
    await endTxn(conn, producer, true);
    const [sent] = broker.requests(EndTxnApi);
    expect(sent!.version).toBe(4);
    expect(sent!.body as EndTxnRequest).toMatchObject({ transactionalId: 'tx-1', producerId: 7000n, producerEpoch: 3, committed: true });
  });
});

describe('transactional batches', () => {
  it('carry the transactional attribute and the stamped producer fields with a valid CRC', async () => {
    const t = await buildTemplate(parseWorkload({ name: 'w', recordSize: 100, batchBytes: 1000, transactionRecords: 20 }));
    const b = copyTemplate(t);
    stampBatch(b, t, 1_790_000_000_000.5, { producerId: 7000n, producerEpoch: 3, baseSequence: 40 });
    const batch = RecordBatch.wrap(b);
    expect(batch.isValid()).toBe(true);
    expect(batch.isTransactional).toBe(true);
    expect(batch.producerId).toBe(7000n);
    expect(batch.producerEpoch).toBe(3);
    expect(batch.baseSequence).toBe(40);
  });

  it('are whole batches, acks=all and at most 5 in flight', () => {
    expect(() => parseWorkload({ name: 'w', recordSize: 100, batchBytes: 1000, transactionRecords: 25 })).toThrow(/multiple of the records per batch \(batchBytes \/ recordSize = 10\)/);
    expect(() => parseWorkload({ name: 'w', transactionRecords: 32, acks: 1 })).toThrow(/acks=-1/);
    expect(() => parseWorkload({ name: 'w', transactionRecords: 32, maxInFlight: 6 })).toThrow(/at most 5/);
    expect(parseWorkload({ name: 'w' }).transactionRecords).toBe(0);
  });
});

describe('read_committed filtering', () => {
  const batch = (baseOffset: bigint, producerId: bigint, o: { control?: boolean; transactional?: boolean } = {}) => ({
    baseOffset,
    lastOffset: baseOffset + 9n,
    producerId,
    isTransactional: o.transactional ?? true,
    isControl: o.control ?? false,
  });

  it('drops an aborted transaction up to its ABORT marker, and nothing else', () => {
    const f = new AbortedTransactions([{ producerId: 2n, firstOffset: 10n }]);
    expect(f.skip(batch(0n, 2n))).toBe(false); // before the aborted transaction began
    expect(f.skip(batch(10n, 2n))).toBe(true);
    expect(f.skip(batch(20n, 1n))).toBe(false); // another producer's transaction
    expect(f.skip(batch(30n, 2n, { transactional: false }))).toBe(false);
    expect(f.skip(batch(40n, 2n, { control: true }), true)).toBe(true); // the marker itself
    expect(f.skip(batch(50n, 2n))).toBe(false); // the producer's next transaction
  });
});
