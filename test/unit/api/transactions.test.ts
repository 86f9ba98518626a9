/**
 * The transaction handlers (InitProducerId with a transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
 * DescribeTransactions, ListTransactions): the request fields they pass on, by version, and the error codes they
 * map for old versions (PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before KIP-588's versions). One end-to-end pass
 * runs them against a real coordinator.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createAddOffsetsToTxnRequest } from '../../../protocol/messages/025-add-offsets-to-txn.gen.js';
import { createAddPartitionsToTxnRequest } from '../../../protocol/messages/024-add-partitions-to-txn.gen.js';
import { createDescribeTransactionsRequest } from '../../../protocol/messages/065-describe-transactions.gen.js';
import { createEndTxnRequest } from '../../../protocol/messages/026-end-txn.gen.js';
import { createInitProducerIdRequest } from '../../../protocol/messages/022-init-producer-id.gen.js';
import { createListTransactionsRequest } from '../../../protocol/messages/066-list-transactions.gen.js';
import { initProducerId } from '../../../src/api/022-init-producer-id.js';
import { addPartitionsToTxn } from '../../../src/api/024-add-partitions-to-txn.js';
import { addOffsetsToTxn } from '../../../src/api/025-add-offsets-to-txn.js';
import { endTxn } from '../../../src/api/026-end-txn.js';
import { describeTransactions } from '../../../src/api/065-describe-transactions.js';
import { listTransactions } from '../../../src/api/066-list-transactions.js';
import type { TransactionService } from '../../../src/api/services.js';
import { TxnHarness } from '../coordinator/txn/harness.js';
import { answer, FakeTransactions, requestContext } from './fakes.js';

const producerIds = { allocate: async () => 7n };
const ctx = (transactions: TransactionService, apiVersion: number, refusals?: string[]) => requestContext({ transactions, producerIds }, { apiVersion, ...(refusals ? { refusals } : {}) });

describe('InitProducerId with a transactional id', () => {
  it('keeps the idempotent path for a null transactional id', async () => {
    const t = new FakeTransactions();
    const r = await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: null, transactionTimeoutMs: 60_000 }), ctx(t, 4)));
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, producerId: 7n, producerEpoch: 0 });
    expect(t.calls).toEqual([]);
  });

  it('asks the coordinator, with the KIP-360 producer id and epoch from v3', async () => {
    const t = new FakeTransactions();
    const r = await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 30_000, producerId: 9n, producerEpoch: 2 }), ctx(t, 3)));
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, producerId: 42n, producerEpoch: 3 });
    expect(t.calls).toEqual([{ op: 'initProducerId', args: ['tx', 30_000, { producerId: 9n, producerEpoch: 2 }] }]);
    await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 30_000 }), ctx(t, 2)));
    expect(t.calls[1]!.args[2]).toBeNull();
  });

  it('answers INVALID_REQUEST for a producer id without an epoch, and for an empty transactional id (logged as refused)', async () => {
    const t = new FakeTransactions();
    expect((await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 1, producerId: 9n, producerEpoch: -1 }), ctx(t, 4)))).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    const refusals: string[] = [];
    expect((await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: '', transactionTimeoutMs: 1 }), ctx(t, 4, refusals)))).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect(refusals).toHaveLength(1);
    expect(t.calls).toEqual([]);
  });

  it('answers PRODUCER_FENCED from v4, INVALID_PRODUCER_EPOCH before', async () => {
    const t = new FakeTransactions();
    t.code = ErrorCode.PRODUCER_FENCED;
    const req = createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 1 });
    expect((await answer(initProducerId.handle(req, ctx(t, 3)))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await answer(initProducerId.handle(req, ctx(t, 4)))).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
  });
});

describe('AddPartitionsToTxn, AddOffsetsToTxn, EndTxn', () => {
  it('v0-3: one transaction, results grouped by topic; PRODUCER_FENCED from v2', async () => {
    const t = new FakeTransactions();
    t.code = ErrorCode.PRODUCER_FENCED;
    const req = createAddPartitionsToTxnRequest({ v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: 5n, v3AndBelowProducerEpoch: 1, v3AndBelowTopics: [{ name: 'a', partitions: [0, 1] }, { name: 'b', partitions: [2] }] });
    const r1 = await answer(addPartitionsToTxn.handle(req, ctx(t, 1)));
    expect(r1.resultsByTopicV3AndBelow).toEqual([
      { name: 'a', resultsByPartition: [{ partitionIndex: 0, partitionErrorCode: ErrorCode.INVALID_PRODUCER_EPOCH }, { partitionIndex: 1, partitionErrorCode: ErrorCode.INVALID_PRODUCER_EPOCH }] },
      { name: 'b', resultsByPartition: [{ partitionIndex: 2, partitionErrorCode: ErrorCode.INVALID_PRODUCER_EPOCH }] },
    ]);
    const r3 = await answer(addPartitionsToTxn.handle(req, ctx(t, 3)));
    expect(r3.resultsByTopicV3AndBelow[0]!.resultsByPartition[0]!.partitionErrorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect(t.calls[0]).toEqual({ op: 'addPartitionsToTxn', args: ['tx', 5n, 1, [{ topic: 'a', partition: 0 }, { topic: 'a', partition: 1 }, { topic: 'b', partition: 2 }]] });
  });

  it('v4+: each transaction answered on its own; verifyOnly entries only verify', async () => {
    const t = new FakeTransactions();
    const req = createAddPartitionsToTxnRequest({
      transactions: [
        { transactionalId: 'x', producerId: 1n, producerEpoch: 0, verifyOnly: true, topics: [{ name: 'a', partitions: [0] }] },
        { transactionalId: 'y', producerId: 2n, producerEpoch: 0, verifyOnly: false, topics: [{ name: 'b', partitions: [1] }] },
      ],
    });
    const r = await answer(addPartitionsToTxn.handle(req, ctx(t, 4)));
    expect(r.resultsByTransaction.map((x) => x.transactionalId)).toEqual(['x', 'y']);
    expect(t.calls.map((c) => c.op).sort()).toEqual(['addPartitionsToTxn', 'verifyPartitions']);
  });

  it('AddOffsetsToTxn and EndTxn pass the request on and map PRODUCER_FENCED before v2', async () => {
    const t = new FakeTransactions();
    t.code = ErrorCode.PRODUCER_FENCED;
    const add = createAddOffsetsToTxnRequest({ transactionalId: 'tx', producerId: 5n, producerEpoch: 1, groupId: 'g' });
    expect((await answer(addOffsetsToTxn.handle(add, ctx(t, 1)))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await answer(addOffsetsToTxn.handle(add, ctx(t, 2)))).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    const end = createEndTxnRequest({ transactionalId: 'tx', producerId: 5n, producerEpoch: 1, committed: true });
    expect((await answer(endTxn.handle(end, ctx(t, 0)))).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await answer(endTxn.handle(end, ctx(t, 4)))).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect(t.calls.map((c) => c.args)).toContainEqual(['tx', 5n, 1, 'g']);
    expect(t.calls.map((c) => c.args)).toContainEqual(['tx', 5n, 1, true]);
    expect(endTxn.versions).toEqual({ min: 0, max: 5 });
  });

  it('EndTxn v5 ends with transaction version 2 and answers the producer id and epoch to go on with (KIP-890 part 2)', async () => {
    const t = new FakeTransactions();
    const end = createEndTxnRequest({ transactionalId: 'tx', producerId: 5n, producerEpoch: 1, committed: true });
    expect(await answer(endTxn.handle(end, ctx(t, 5)))).toMatchObject({ errorCode: ErrorCode.NONE, producerId: 5n, producerEpoch: 2 });
    expect(await answer(endTxn.handle(end, ctx(t, 4)))).toMatchObject({ errorCode: ErrorCode.NONE, producerId: -1n, producerEpoch: -1 });
    expect(t.calls.map((c) => c.op)).toEqual(['endTxnV2', 'endTxn']);
    t.code = ErrorCode.PRODUCER_FENCED;
    expect(await answer(endTxn.handle(end, ctx(t, 5)))).toMatchObject({ errorCode: ErrorCode.PRODUCER_FENCED, producerId: -1n, producerEpoch: -1 });
  });
});

describe('DescribeTransactions and ListTransactions', () => {
  it('ListTransactions reads the duration filter from v1 and the pattern from v2', async () => {
    const t = new FakeTransactions();
    const req = createListTransactionsRequest({ stateFilters: ['Ongoing'], producerIdFilters: [3n], durationFilter: 500n, transactionalIdPattern: 'a.*' });
    await answer(listTransactions.handle(req, ctx(t, 0)));
    await answer(listTransactions.handle(req, ctx(t, 1)));
    await answer(listTransactions.handle(req, ctx(t, 2)));
    expect(t.calls.map((c) => c.args[0])).toEqual([
      { states: ['Ongoing'], producerIds: [3n], durationMs: -1, transactionalIdPattern: null },
      { states: ['Ongoing'], producerIds: [3n], durationMs: 500, transactionalIdPattern: null },
      { states: ['Ongoing'], producerIds: [3n], durationMs: 500, transactionalIdPattern: 'a.*' },
    ]);
  });
});

describe('the handlers against a real coordinator', () => {
  let h: TxnHarness;
  afterEach(async () => h.coordinator.stop());

  it('runs a transaction: init, add partitions and offsets, commit, describe, list', async () => {
    h = new TxnHarness();
    const c = await h.start();
    const init = await answer(initProducerId.handle(createInitProducerIdRequest({ transactionalId: 'tx', transactionTimeoutMs: 60_000 }), ctx(c, 5)));
    expect(init).toMatchObject({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 0 });
    const add = await answer(
      addPartitionsToTxn.handle(createAddPartitionsToTxnRequest({ v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: 1000n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: 'orders', partitions: [0, 9] }] }), ctx(c, 3)),
    );
    expect(add.resultsByTopicV3AndBelow[0]!.resultsByPartition.map((p) => p.partitionErrorCode)).toEqual([ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    await answer(addPartitionsToTxn.handle(createAddPartitionsToTxnRequest({ v3AndBelowTransactionalId: 'tx', v3AndBelowProducerId: 1000n, v3AndBelowProducerEpoch: 0, v3AndBelowTopics: [{ name: 'orders', partitions: [0] }] }), ctx(c, 3)));
    expect((await answer(addOffsetsToTxn.handle(createAddOffsetsToTxnRequest({ transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, groupId: 'g' }), ctx(c, 3)))).errorCode).toBe(ErrorCode.NONE);
    const described = await answer(describeTransactions.handle(createDescribeTransactionsRequest({ transactionalIds: ['tx'] }), ctx(c, 0)));
    expect(described.transactionStates[0]).toMatchObject({ errorCode: ErrorCode.NONE, transactionState: 'Ongoing', producerId: 1000n, transactionTimeoutMs: 60_000 });
    expect(described.transactionStates[0]!.topics.map((x) => x.topic).sort()).toEqual(['__consumer_offsets', 'orders']);
    expect((await answer(endTxn.handle(createEndTxnRequest({ transactionalId: 'tx', producerId: 1000n, producerEpoch: 0, committed: true }), ctx(c, 4)))).errorCode).toBe(ErrorCode.NONE);
    await h.settle();
    const listed = await answer(listTransactions.handle(createListTransactionsRequest({ stateFilters: [], producerIdFilters: [] }), ctx(c, 2)));
    expect(listed.transactionStates).toEqual([{ transactionalId: 'tx', producerId: 1000n, transactionState: 'CompleteCommit' }]);
    expect(h.sink.written.sort()).toEqual(['__consumer_offsets-1:COMMIT', 'orders-0:COMMIT']);
  });
});
