/**
 * Timers of a loaded __transaction_state partition on a manual clock: transactions past transaction.timeout.ms
 * abort with an epoch bump (Kafka's abortTimedOutTransactions, every
 * transaction.abort.timed.out.transaction.cleanup.interval.ms), and ids idle past transactional.id.expiration.ms
 * are tombstoned (removeExpiredTransactionalIds).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { RecordBatch } from '../../../../protocol/records/batch.js';
import { TxnState } from '../../../../src/coordinator/txn/state.js';
import { TxnHarness } from './harness.js';

const P = (topic: string, partition: number) => ({ topic, partition });
const HOUR = 3_600_000;

describe('transaction timeouts and transactional id expiration', () => {
  let h: TxnHarness;
  beforeEach(async () => {
    h = new TxnHarness({ config: { transactionalIdExpirationMs: 2 * HOUR } });
    await h.start();
  });
  afterEach(async () => h.coordinator.stop());

  it('aborts a transaction past its timeout with a bumped epoch, fencing its producer', async () => {
    const a = await h.init('tx-a', 15_000);
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
    await h.advance(10_000); // first check: 10 s < 15 s
    expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.Ongoing);
    await h.advance(10_000); // second check: 20 s > 15 s
    expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteAbort, producerEpoch: 1 });
    expect(h.sink.written).toEqual(['orders-0:ABORT']);
    expect(h.sink.calls[0]![0]!.producerEpoch).toBe(1);
    expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.PRODUCER_FENCED);
    expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 1)]))[0]!.errorCode).toBe(ErrorCode.PRODUCER_FENCED);
  });

  it('leaves transactions within their timeout, and ids without one, alone', async () => {
    const a = await h.init('tx-a', 60_000);
    await h.init('tx-idle', 1_000);
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
    await h.advance(50_000);
    expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.Ongoing);
    expect(h.coordinator.peek('tx-idle')!.state).toBe(TxnState.Empty);
    expect(h.sink.calls).toHaveLength(0);
  });

  it('removes an id idle past transactional.id.expiration.ms with a tombstone, durable across a reload', async () => {
    await h.init('tx-old');
    await h.advance(HOUR); // first removal check: idle for 1 h
    expect(h.coordinator.peek('tx-old')).toBeDefined();
    const b = await h.init('tx-new');
    await h.advance(HOUR); // tx-old idle 2 h, tx-new 1 h
    expect(h.coordinator.peek('tx-old')).toBeUndefined();
    expect(h.coordinator.peek('tx-new')).toMatchObject({ producerId: b.producerId });
    const p = h.coordinator.partitionFor('tx-old');
    const last = h.log(p).storedBatches.at(-1)!;
    expect([...RecordBatch.wrap(last).records()].at(-1)!.value).toBeNull();
    await h.start();
    expect((await h.coordinator.describeTransactions(['tx-old']))[0]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    // The id starts over with a new producer id.
    expect((await h.coordinator.initProducerId('tx-old', 60_000, null)).producerEpoch).toBe(0);
  });

  it('never removes an id with an ongoing transaction', async () => {
    const a = await h.init('tx-a', 900_000);
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
    h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
    await h.advance(HOUR);
    await h.advance(HOUR);
    expect(h.coordinator.peek('tx-a')).toBeDefined();
  });
});

describe('DescribeTransactions and ListTransactions', () => {
  let h: TxnHarness;
  beforeEach(async () => {
    h = new TxnHarness();
    await h.start();
  });
  afterEach(async () => h.coordinator.stop());

  it('describes an id\'s state, producer, timeout, start time and partitions; TRANSACTIONAL_ID_NOT_FOUND for an unknown one', async () => {
    const a = await h.init('tx-a', 20_000);
    const start = h.clock.now();
    await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 1), P('orders', 0)]);
    const [d, unknown] = await h.coordinator.describeTransactions(['tx-a', 'nope']);
    expect(d).toEqual({ transactionalId: 'tx-a', errorCode: ErrorCode.NONE, state: 'Ongoing', timeoutMs: 20_000, startTimeMs: start, producerId: a.producerId, producerEpoch: 0, partitions: [{ topic: 'orders', partitions: [0, 1] }] });
    expect(unknown).toMatchObject({ transactionalId: 'nope', errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND });
  });

  it('lists by state, producer id, duration and transactional id pattern; reports unknown state filters', async () => {
    const a = await h.init('app-1');
    const b = await h.init('app-2');
    await h.init('other');
    await h.coordinator.addPartitionsToTxn('app-1', a.producerId, 0, [P('orders', 0)]);
    h.clock.advance(5_000);
    await h.coordinator.addPartitionsToTxn('app-2', b.producerId, 0, [P('orders', 1)]);
    const ids = async (f: Partial<Parameters<typeof h.coordinator.listTransactions>[0]>): Promise<string[]> => {
      const r = await h.coordinator.listTransactions({ states: [], producerIds: [], durationMs: -1, transactionalIdPattern: null, ...f });
      expect(r.errorCode).toBe(ErrorCode.NONE);
      return r.transactions.map((t) => t.transactionalId).sort();
    };
    expect(await ids({})).toEqual(['app-1', 'app-2', 'other']);
    expect(await ids({ states: ['Ongoing'] })).toEqual(['app-1', 'app-2']);
    expect(await ids({ states: ['Empty'] })).toEqual(['other']);
    expect(await ids({ producerIds: [b.producerId] })).toEqual(['app-2']);
    expect(await ids({ states: ['Ongoing'], durationMs: 1_000 })).toEqual(['app-1']);
    expect(await ids({ transactionalIdPattern: 'app-.*' })).toEqual(['app-1', 'app-2']);
    expect(await ids({ transactionalIdPattern: 'app' })).toEqual([]);
    const r = await h.coordinator.listTransactions({ states: ['Ongoing', 'Bogus'], producerIds: [], durationMs: -1, transactionalIdPattern: null });
    expect(r.unknownStateFilters).toEqual(['Bogus']);
    expect((await h.coordinator.listTransactions({ states: [], producerIds: [], durationMs: -1, transactionalIdPattern: '(' })).errorCode).toBe(ErrorCode.INVALID_REGULAR_EXPRESSION);
  });
});
