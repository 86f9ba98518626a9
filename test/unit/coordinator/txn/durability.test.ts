/**
 * __transaction_state: the records written (Kafka's TransactionLogKey v0 / TransactionLogValue v1), a reload
 * that replays them, markers of a Prepare* transaction resumed by the load, lazy loading only where owned, and
 * a failed append.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { RecordBatch } from '../../../../protocol/records/batch.js';
import { decodeTransactionLogValue } from '../../../../protocol/messages/data/transaction-coordinator/transaction-log-value.gen.js';
import { Reader } from '../../../../protocol/wire/reader.js';
import { LAZY_LOAD_WAIT_MS } from '../../../../src/coordinator/shard-set.js';
import { decodeTxnRecord, encodeTxnRecord } from '../../../../src/coordinator/txn/records.js';
import { TxnState } from '../../../../src/coordinator/txn/state.js';
import { TxnHarness } from './harness.js';

const P = (topic: string, partition: number) => ({ topic, partition });

function storedValues(h: TxnHarness, partition: number): Array<{ key: Buffer; value: Buffer | null }> {
  const out: Array<{ key: Buffer; value: Buffer | null }> = [];
  for (const b of h.log(partition).storedBatches) for (const r of RecordBatch.wrap(b).records()) out.push({ key: Buffer.from(r.key!), value: r.value === null ? null : Buffer.from(r.value) });
  return out;
}

describe('transaction state durability', () => {
  let h: TxnHarness;
  beforeEach(async () => {
    h = new TxnHarness();
    await h.start();
  });
  afterEach(async () => h.coordinator.stop());

  it('writes TransactionLogKey v0 and TransactionLogValue v1 with the state, partitions and timestamps', async () => {
    const a = await h.init('tx-a', 45_000);
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 2), P('orders', 0)]);
    const [, ongoing] = storedValues(h, h.coordinator.partitionFor('tx-a'));
    expect(ongoing!.key.readInt16BE(0)).toBe(0);
    expect(ongoing!.value!.readInt16BE(0)).toBe(1);
    const v = decodeTransactionLogValue(new Reader(ongoing!.value!, 2), 1);
    expect(v).toMatchObject({ producerId: a.producerId, producerEpoch: 0, transactionTimeoutMs: 45_000, transactionStatus: TxnState.Ongoing, transactionPartitions: [{ topic: 'orders', partitionIds: [0, 2] }], transactionStartTimestampMs: BigInt(h.clock.now()) });
    expect(decodeTxnRecord(ongoing!.key, null)).toEqual({ transactionalId: 'tx-a', value: null });
    // As Kafka's valueToBytes: no partitions (null) for Empty, no previous/next producer id, no tagged fields.
    const [empty] = storedValues(h, h.coordinator.partitionFor('tx-a'));
    const e = decodeTransactionLogValue(new Reader(empty!.value!, 2), 1);
    expect(e).toMatchObject({ transactionStatus: TxnState.Empty, transactionPartitions: null, previousProducerId: -1n, nextProducerId: -1n, transactionStartTimestampMs: -1n });
    expect(empty!.value!.at(-1)).toBe(0);
  });

  it('reads back what it encodes, tombstones included', () => {
    const value = { producerId: 5n, previousProducerId: -1n, nextProducerId: -1n, producerEpoch: 3, lastProducerEpoch: -1, clientTransactionVersion: 0, timeoutMs: 1000, state: TxnState.PrepareAbort, partitions: new Map([['t', new Set([1, 2])]]), startTimestamp: 10, lastUpdateTimestamp: 20 };
    const rec = encodeTxnRecord('id', value);
    expect(decodeTxnRecord(rec.key, rec.value)).toEqual({ transactionalId: 'id', value });
    const tomb = encodeTxnRecord('id', null);
    expect(decodeTxnRecord(tomb.key, tomb.value)).toEqual({ transactionalId: 'id', value: null });
  });

  it('a new coordinator replays the ids, their epochs and ongoing transactions from the log', async () => {
    const a = await h.init('tx-a');
    await h.init('tx-a'); // epoch 1
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 1, [P('orders', 1)]);
    await h.init('tx-b');
    await h.start();
    expect(h.coordinator.peek('tx-a')).toBeUndefined(); // loads on first use
    expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 1)).toBe(ErrorCode.NONE);
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Ongoing, producerId: a.producerId, producerEpoch: 1 });
    // The ongoing transaction commits after the reload.
    expect(await h.coordinator.endTxn('tx-a', a.producerId, 1, true)).toBe(ErrorCode.NONE);
    await h.settle();
    expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteCommit);
    expect((await h.coordinator.initProducerId('tx-b', 60_000, null)).producerEpoch).toBe(1);
  });

  it('a load resumes the markers of a transaction left in PrepareCommit, then completes it', async () => {
    const a = await h.init('tx-a');
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('payments', 0)]);
    h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
    expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
    await h.settle();
    await h.start();
    h.sink.answer = () => ErrorCode.NONE;
    h.sink.written.length = 0;
    // Any request for an id of the partition loads it.
    expect((await h.coordinator.describeTransactions(['tx-a']))[0]!.state).toMatch(/PrepareCommit|CompleteCommit/);
    await h.settle();
    expect(h.sink.written.sort()).toEqual(['orders-0:COMMIT', 'payments-0:COMMIT']);
    expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteCommit);
    // And that is durable: another reload finds it complete, with no more markers.
    await h.start();
    h.sink.written.length = 0;
    expect((await h.coordinator.describeTransactions(['tx-a']))[0]!.state).toBe('CompleteCommit');
    await h.settle();
    expect(h.sink.written).toEqual([]);
  });

  it('answers NOT_COORDINATOR for an id of a partition this broker does not own', async () => {
    const other = new TxnHarness({ owns: () => false });
    await other.start();
    expect((await other.coordinator.initProducerId('tx-a', 60_000, null)).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await other.coordinator.endTxn('tx-a', 1n, 0, true)).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await other.coordinator.verify('tx-a', 1n, 0, 'orders', 0)).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await other.coordinator.listTransactions({ states: [], producerIds: [], durationMs: -1, transactionalIdPattern: null })).transactions).toEqual([]);
    expect(other.logs.size).toBe(0);
    await other.coordinator.stop();
  });

  it('answers COORDINATOR_LOAD_IN_PROGRESS when the load outlasts the wait, and serves once loaded', async () => {
    h.holdOpens = true;
    await h.start();
    const pending = h.coordinator.initProducerId('tx-a', 60_000, null);
    await h.settle();
    h.clock.advance(LAZY_LOAD_WAIT_MS);
    expect((await pending).errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    h.holdOpens = false;
    h.heldOpen.get(h.coordinator.partitionFor('tx-a'))!();
    await h.settle();
    expect((await h.coordinator.initProducerId('tx-a', 60_000, null)).errorCode).toBe(ErrorCode.NONE);
  });

  it('a released partition unloads: its ids answer NOT_COORDINATOR until it loads again', async () => {
    await h.init('tx-a');
    const p = h.coordinator.partitionFor('tx-a');
    let owned = true;
    const o = new TxnHarness({ owns: () => owned });
    for (const [k, v] of h.logs) o.logs.set(k, v);
    await o.start();
    expect((await o.coordinator.describeTransactions(['tx-a']))[0]!.errorCode).toBe(ErrorCode.NONE);
    owned = false;
    await o.coordinator.released(p);
    expect(o.coordinator.peek('tx-a')).toBeUndefined();
    expect((await o.coordinator.describeTransactions(['tx-a']))[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    await o.coordinator.stop();
  });

  it('a failed append answers COORDINATOR_NOT_AVAILABLE, and the partition reloads what is durable', async () => {
    const a = await h.init('tx-a');
    h.log(h.coordinator.partitionFor('tx-a')).failNextAppends(1);
    const r = await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
    expect(r[0]!.errorCode).toBe(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    await h.settle();
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Empty, pending: null });
    expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.NONE);
  });
});
