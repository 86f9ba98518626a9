/**
 * Transaction version 2 (KIP-890 part 2) in the transaction coordinator: partitions added by the partition
 * leader (verify with addPartition), EndTxn v5's epoch bump at every end with its retries and the producer id
 * rotation of an exhausted epoch, and the TransactionLogValue fields Kafka writes for such a transaction.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { RecordBatch } from '../../../../protocol/records/batch.js';
import { decodeTransactionLogValue } from '../../../../protocol/messages/data/transaction-coordinator/transaction-log-value.gen.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { TxnState, type TxnValue } from '../../../../src/coordinator/txn/state.js';
import { TxnHarness } from './harness.js';

function lastStored(h: TxnHarness, id: string) {
  const batches = h.log(h.coordinator.partitionFor(id)).storedBatches;
  const records = [...RecordBatch.wrap(batches[batches.length - 1]!).records()];
  return decodeTransactionLogValue(new Reader(Buffer.from(records[records.length - 1]!.value!), 2), 1);
}

/** Sets the loaded state of an id (epochs near exhaustion cannot be reached by bumping in a test). */
function setValue(h: TxnHarness, id: string, changes: Partial<TxnValue>): void {
  const txn = (h.coordinator as unknown as { shards: Array<{ txns: Map<string, { value: TxnValue }> } | undefined> }).shards[h.coordinator.partitionFor(id)]!.txns.get(id)!;
  txn.value = { ...txn.value, ...changes };
}

describe('transaction version 2', () => {
  let h: TxnHarness;
  beforeEach(async () => {
    h = new TxnHarness();
    await h.start();
  });
  afterEach(async () => h.coordinator.stop());

  it('the partition leader adds the partition, starting the transaction from Empty, with client transaction version 2', async () => {
    const a = await h.init('tx-a');
    expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 1, true)).toBe(ErrorCode.NONE);
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Ongoing, clientTransactionVersion: 2 });
    const writes = h.log(h.coordinator.partitionFor('tx-a')).storedBatches.length;
    // Already in the transaction: nothing is written.
    expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 1, true)).toBe(ErrorCode.NONE);
    expect(h.log(h.coordinator.partitionFor('tx-a')).storedBatches.length).toBe(writes);
    expect(lastStored(h, 'tx-a')).toMatchObject({ transactionStatus: TxnState.Ongoing, clientTransactionVersion: 2 });
    // A batch of an older epoch is fenced; verify-only still answers INVALID_TXN_STATE for a partition not added.
    expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 2, true)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 2)).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(await h.coordinator.verify('tx-b', a.producerId, 0, 'orders', 2, true)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  });

  it('EndTxn v5 bumps the epoch: markers with the bumped epoch, answered the producer id and bumped epoch', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    const r = await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true);
    expect(r).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
    await h.settle();
    expect(h.sink.calls[0]![0]).toMatchObject({ producerId: a.producerId, producerEpoch: 1, commit: true });
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, producerEpoch: 1, lastProducerEpoch: 0, pending: null });
    // Written with the previous and next producer ids and the client version, as Kafka writes them for TV2.
    expect(lastStored(h, 'tx-a')).toMatchObject({ transactionStatus: TxnState.CompleteCommit, producerEpoch: 1, previousProducerId: a.producerId, nextProducerId: -1n, clientTransactionVersion: 2 });
    // A retry with the epoch before the bump gets the same answer, not PRODUCER_FENCED.
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true)).toEqual(r);
    // The opposite end of that retry is INVALID_TXN_STATE; an epoch further back is fenced.
    expect((await h.coordinator.endTxnV2('tx-a', a.producerId, 0, false)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
    expect((await h.coordinator.endTxnV2('tx-a', a.producerId, 5, true)).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    // With the current epoch a commit is the next transaction's, of which there is none.
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 1, true)).toEqual({ errorCode: ErrorCode.INVALID_TXN_STATE, producerId: -1n, producerEpoch: -1 });
    // The next transaction runs with the bumped epoch.
    expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 2, true)).toBe(ErrorCode.NONE);
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 1, false)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 2 });
    await h.settle();
    expect(h.sink.written).toEqual(['orders-0:COMMIT', 'orders-2:ABORT']);
  });

  it('EndTxn v5 answers once the transaction completed when its markers are written at once: the next produce adds its partition', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
    // No settling: the answer came after the markers and CompleteCommit.
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, pending: null });
    expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 0, true)).toBe(ErrorCode.NONE);
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Ongoing, producerEpoch: 1 });
  });

  it('an abort without a transaction still bumps the epoch, writing no marker', async () => {
    const a = await h.init('tx-a');
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 0, false)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
    await h.settle();
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteAbort, producerEpoch: 1 });
    expect(h.sink.written).toEqual([]);
    expect((await h.coordinator.endTxnV2('tx-a', a.producerId, 1, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('answers CONCURRENT_TRANSACTIONS while the markers are written, and the result once they are', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
    await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true);
    await h.settle();
    expect((await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true)).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    h.sink.answer = () => ErrorCode.NONE;
    await h.advance(100);
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 0, true)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
  });

  it('an exhausted epoch ends with the last epoch in the markers and hands over to a new producer id at epoch 0', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    setValue(h, 'tx-a', { producerEpoch: 32766 });
    const r = await h.coordinator.endTxnV2('tx-a', a.producerId, 32766, true);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.producerId).not.toBe(a.producerId);
    expect(r.producerEpoch).toBe(0);
    await h.settle();
    expect(h.sink.calls[0]![0]).toMatchObject({ producerId: a.producerId, producerEpoch: 32767, commit: true });
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, producerId: r.producerId, producerEpoch: 0, previousProducerId: a.producerId, nextProducerId: -1n });
    expect(lastStored(h, 'tx-a')).toMatchObject({ producerId: r.producerId, producerEpoch: 0, previousProducerId: a.producerId });
    // The old producer id retrying with its exhausted epoch gets the same answer.
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 32766, true)).toEqual(r);
    expect(await h.coordinator.verify('tx-a', r.producerId, 0, 'orders', 1, true)).toBe(ErrorCode.NONE);
  });

  it('a timed-out TV2 transaction aborts with one bump; the producer\'s abort with the epoch before it is answered as a retry', async () => {
    const a = await h.init('tx-a', 1000);
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    await h.advance(h.coordinator.config.abortTimedOutIntervalMs + 1000);
    await h.settle();
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteAbort, producerEpoch: 1, lastProducerEpoch: 0 });
    expect(h.sink.calls[0]![0]).toMatchObject({ producerEpoch: 1, commit: false });
    expect(await h.coordinator.endTxnV2('tx-a', a.producerId, 0, false)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
    // A late batch of the fenced epoch cannot start a transaction.
    expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 1, true)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('a reloaded coordinator keeps the client transaction version and the epochs', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0, true);
    await h.coordinator.endTxnV2('tx-a', a.producerId, 0, false);
    await h.settle();
    await h.start();
    expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 0, true)).toBe(ErrorCode.NONE);
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Ongoing, producerEpoch: 1, clientTransactionVersion: 2, previousProducerId: a.producerId });
  });
});
