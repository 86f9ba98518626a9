/**
 * The transaction coordinator's state machine (Kafka's TransactionCoordinator / TransactionMetadata): each
 * transition InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn and EndTxn make, and the error each answers
 * in each state.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { END_TXN_COMPLETION_WAIT_MS } from '../../../../src/coordinator/txn/coordinator.js';
import { TxnState } from '../../../../src/coordinator/txn/state.js';
import { TxnHarness } from './harness.js';

const P = (topic: string, partition: number) => ({ topic, partition });

describe('transaction coordinator state machine', () => {
  let h: TxnHarness;
  beforeEach(async () => {
    h = new TxnHarness();
    await h.start();
  });
  afterEach(async () => h.coordinator.stop());

  describe('InitProducerId', () => {
    it('gives a new transactional id a new producer id at epoch 0, durable as Empty', async () => {
      const r = await h.coordinator.initProducerId('tx-a', 60_000, null);
      expect(r).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 0 });
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.Empty, producerId: 1000n, producerEpoch: 0, timeoutMs: 60_000, pending: null });
      expect(h.log(h.coordinator.partitionFor('tx-a')).highWatermark).toBe(1);
    });

    it('answers one of two concurrent first InitProducerIds and CONCURRENT_TRANSACTIONS to the other', async () => {
      const [x, y] = await Promise.all([h.coordinator.initProducerId('tx-a', 60_000, null), h.coordinator.initProducerId('tx-a', 60_000, null)]);
      expect([x.errorCode, y.errorCode].sort((a, b) => a - b)).toEqual([ErrorCode.NONE, ErrorCode.CONCURRENT_TRANSACTIONS]);
      expect(h.coordinator.peek('tx-a')).toMatchObject({ producerEpoch: 0, pending: null });
    });

    it('bumps the epoch of a known id, keeping its producer id', async () => {
      await h.init('tx-a');
      const r = await h.coordinator.initProducerId('tx-a', 30_000, null);
      expect(r).toEqual({ errorCode: ErrorCode.NONE, producerId: 1000n, producerEpoch: 1 });
      expect(h.coordinator.peek('tx-a')!.timeoutMs).toBe(30_000);
    });

    it('refuses a timeout above transaction.max.timeout.ms or not positive with INVALID_TRANSACTION_TIMEOUT', async () => {
      expect((await h.coordinator.initProducerId('tx-a', 900_001, null)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      expect((await h.coordinator.initProducerId('tx-a', 0, null)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      expect((await h.coordinator.initProducerId('tx-a', -5, null)).errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
      expect((await h.coordinator.initProducerId('tx-a', 900_000, null)).errorCode).toBe(ErrorCode.NONE);
    });

    it('refuses an empty transactional id, or one longer than a record key holds (32,767 bytes), with INVALID_REQUEST', async () => {
      expect((await h.coordinator.initProducerId('', 60_000, null)).errorCode).toBe(ErrorCode.INVALID_REQUEST);
      const long = 'x'.repeat(32_768);
      expect((await h.coordinator.initProducerId(long, 60_000, null)).errorCode).toBe(ErrorCode.INVALID_REQUEST);
      expect(h.coordinator.peek(long)).toBeUndefined();
      expect((await h.coordinator.initProducerId('x'.repeat(32_767), 60_000, null)).errorCode).toBe(ErrorCode.NONE);
    });

    it('KIP-360: bumps the epoch when the expected producer id and epoch are current', async () => {
      const a = await h.init('tx-a');
      const r = await h.coordinator.initProducerId('tx-a', 60_000, a);
      expect(r).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
      // A retry of that bump (its answer was lost) gets the same epoch again.
      const again = await h.coordinator.initProducerId('tx-a', 60_000, a);
      expect(again).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 1 });
    });

    it('KIP-360: fences a producer naming another producer id, or an old epoch, with PRODUCER_FENCED', async () => {
      const a = await h.init('tx-a');
      await h.init('tx-a'); // epoch 1
      await h.init('tx-a'); // epoch 2
      expect((await h.coordinator.initProducerId('tx-a', 60_000, { producerId: 4242n, producerEpoch: 0 })).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
      expect((await h.coordinator.initProducerId('tx-a', 60_000, { producerId: a.producerId, producerEpoch: 0 })).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    });

    it('gives a new producer id at epoch 0 once the epoch is exhausted', async () => {
      const a = await h.init('tx-a');
      const txn = (h.coordinator as unknown as { shards: Array<{ txns: Map<string, { value: object }> } | undefined> }).shards[h.coordinator.partitionFor('tx-a')]!.txns.get('tx-a')!;
      txn.value = { ...txn.value, producerEpoch: 32766 };
      const r = await h.coordinator.initProducerId('tx-a', 60_000, { producerId: a.producerId, producerEpoch: 32766 });
      expect(r.errorCode).toBe(ErrorCode.NONE);
      expect(r.producerId).not.toBe(a.producerId);
      expect(r.producerEpoch).toBe(0);
      expect(h.coordinator.peek('tx-a')!.previousProducerId).toBe(a.producerId);
      // The old producer retrying with its exhausted epoch (the answer was lost) gets the same answer (KIP-360).
      expect(await h.coordinator.initProducerId('tx-a', 60_000, { producerId: a.producerId, producerEpoch: 32766 })).toEqual(r);
      // Without an expected epoch, a rotation also happens from an exhausted epoch.
      const txn2 = (h.coordinator as unknown as { shards: Array<{ txns: Map<string, { value: object }> } | undefined> }).shards[h.coordinator.partitionFor('tx-a')]!.txns.get('tx-a')!;
      txn2.value = { ...txn2.value, producerEpoch: 32767 };
      const s = await h.coordinator.initProducerId('tx-a', 60_000, null);
      expect(s.errorCode).toBe(ErrorCode.NONE);
      expect(s.producerId).not.toBe(r.producerId);
      expect(s.producerEpoch).toBe(0);
    });

    it('aborts an ongoing transaction with a fenced epoch first, answering CONCURRENT_TRANSACTIONS until it completed', async () => {
      const a = await h.init('tx-a');
      expect(await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)])).toEqual([{ ...P('orders', 0), errorCode: ErrorCode.NONE }]);
      h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
      const r = await h.coordinator.initProducerId('tx-a', 60_000, null);
      expect(r.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.PrepareAbort, producerEpoch: 1 });
      // The old producer is fenced.
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.PRODUCER_FENCED);
      expect((await h.coordinator.initProducerId('tx-a', 60_000, null)).errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      h.sink.answer = () => ErrorCode.NONE;
      await h.advance(100);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteAbort);
      expect(h.sink.written).toEqual(['orders-0:ABORT']);
      expect(await h.coordinator.initProducerId('tx-a', 60_000, null)).toEqual({ errorCode: ErrorCode.NONE, producerId: a.producerId, producerEpoch: 2 });
    });
  });

  describe('AddPartitionsToTxn and AddOffsetsToTxn', () => {
    it('starts a transaction: Empty → Ongoing with the partitions and a start time', async () => {
      const a = await h.init('tx-a');
      const before = h.clock.now();
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('orders', 2)]);
      h.clock.advance(10);
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('payments', 0)]);
      const s = h.coordinator.peek('tx-a')!;
      expect(s.state).toBe(TxnState.Ongoing);
      expect(s.startTimestamp).toBe(before);
      expect([...s.partitions].map(([t, ps]) => [t, [...ps]])).toEqual([['orders', [0, 2]], ['payments', [0]]]);
    });

    it('writes nothing for partitions already in the ongoing transaction', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      const log = h.log(h.coordinator.partitionFor('tx-a'));
      const hw = log.highWatermark;
      expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.NONE);
      expect(log.highWatermark).toBe(hw);
    });

    it('answers UNKNOWN_TOPIC_OR_PARTITION for partitions that do not exist and OPERATION_NOT_ATTEMPTED for the others', async () => {
      const a = await h.init('tx-a');
      const r = await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('orders', 3), P('nope', 0)]);
      expect(r.map((x) => x.errorCode)).toEqual([ErrorCode.OPERATION_NOT_ATTEMPTED, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.Empty);
    });

    it('answers INVALID_PRODUCER_ID_MAPPING for an unknown id or producer id, PRODUCER_FENCED for another epoch', async () => {
      const a = await h.init('tx-a');
      expect((await h.coordinator.addPartitionsToTxn('tx-b', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect((await h.coordinator.addPartitionsToTxn('tx-a', 77n, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 3, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.PRODUCER_FENCED);
      expect(await h.coordinator.addOffsetsToTxn('tx-a', a.producerId, 3, 'g')).toBe(ErrorCode.PRODUCER_FENCED);
    });

    it('answers CONCURRENT_TRANSACTIONS while the previous transaction is completing, and while a change is being written', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 1)]))[0]!.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      h.sink.answer = () => ErrorCode.NONE;
      await h.advance(100);
      const [first, second] = await Promise.all([
        h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 1)]),
        h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 2)]),
      ]);
      expect([first[0]!.errorCode, second[0]!.errorCode]).toEqual([ErrorCode.NONE, ErrorCode.CONCURRENT_TRANSACTIONS]);
    });

    it('AddOffsetsToTxn adds the group\'s __consumer_offsets partition', async () => {
      const a = await h.init('tx-a');
      expect(await h.coordinator.addOffsetsToTxn('tx-a', a.producerId, 0, 'group-1')).toBe(ErrorCode.NONE);
      expect([...h.coordinator.peek('tx-a')!.partitions.keys()]).toEqual(['__consumer_offsets']);
      expect([...h.coordinator.peek('tx-a')!.partitions.get('__consumer_offsets')!]).toEqual(['group-1'.length % 50]);
    });
  });

  describe('EndTxn', () => {
    it('commits in two phases: PrepareCommit answered, markers to every partition, then CompleteCommit', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 1), P('payments', 0)]);
      await h.coordinator.addOffsetsToTxn('tx-a', a.producerId, 0, 'group-1');
      h.sink.answer = (t) => (t === 'payments' ? ErrorCode.NOT_ENOUGH_REPLICAS : ErrorCode.NONE);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      await h.settle();
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.PrepareCommit);
      expect(h.sink.calls[0]![0]).toMatchObject({ producerId: a.producerId, producerEpoch: 0, coordinatorEpoch: 0, commit: true });
      // Only the partition that failed is retried.
      h.sink.answer = () => ErrorCode.NONE;
      await h.advance(100);
      expect(h.sink.calls[1]![0]!.partitions).toEqual([P('payments', 0)]);
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, pending: null });
      expect(h.coordinator.peek('tx-a')!.partitions.size).toBe(0);
      expect(h.sink.written.sort()).toEqual(['__consumer_offsets-7:COMMIT', 'orders-1:COMMIT', 'payments-0:COMMIT']);
    });

    it('answers once the transaction completed when its markers are written at once, so the next one starts without CONCURRENT_TRANSACTIONS', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('orders', 1)]);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      // No settling and no clock advance: the answer itself came after the markers and CompleteCommit.
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, pending: null });
      expect(h.sink.written.sort()).toEqual(['orders-0:COMMIT', 'orders-1:COMMIT']);
      expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.NONE);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.Ongoing);
    });

    it(`answers after ${END_TXN_COMPLETION_WAIT_MS} ms when the markers are not written by then, the transaction still completing`, async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      let release!: () => void;
      h.sink.held = new Promise<void>((r) => (release = r));
      const started = performance.now();
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      expect(performance.now() - started).toBeGreaterThanOrEqual(END_TXN_COMPLETION_WAIT_MS - 1);
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.PrepareCommit, pending: TxnState.CompleteCommit });
      expect((await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      h.sink.held = null;
      release();
      await h.settle();
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.CompleteCommit, pending: null });
    });

    it('retries markers with backoff until they are all written', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
      await h.coordinator.endTxn('tx-a', a.producerId, 0, false);
      await h.settle();
      for (const ms of [100, 200, 500, 1000, 2000, 5000, 5000]) await h.advance(ms);
      expect(h.sink.calls).toHaveLength(8);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.PrepareAbort);
      h.sink.answer = () => ErrorCode.NONE;
      await h.advance(5000);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteAbort);
    });

    it('drops the partitions of a topic deleted meanwhile from the markers', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('payments', 0)]);
      h.topics.remove('payments');
      await h.coordinator.endTxn('tx-a', a.producerId, 0, true);
      await h.settle();
      expect(h.sink.written).toEqual(['orders-0:COMMIT']);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteCommit);
    });

    it('drops a partition answering UNSUPPORTED_FOR_MESSAGE_FORMAT from the markers, as Kafka does', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0), P('orders', 1)]);
      h.sink.answer = (_t, p) => (p === 1 ? ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT : ErrorCode.NONE);
      await h.coordinator.endTxn('tx-a', a.producerId, 0, false);
      await h.settle();
      expect(h.sink.calls).toHaveLength(1);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.CompleteAbort);
    });

    it('answers NONE to a repeated end, CONCURRENT_TRANSACTIONS to any end while completing, INVALID_TXN_STATE to the opposite end', async () => {
      const a = await h.init('tx-a');
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.INVALID_TXN_STATE); // Empty
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      expect(h.coordinator.peek('tx-a')).toMatchObject({ state: TxnState.PrepareCommit, pending: TxnState.CompleteCommit });
      // Complete* is pending while the markers are written (Kafka's prepareComplete): the state is not looked at.
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, false)).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
      h.sink.answer = () => ErrorCode.NONE;
      await h.advance(100);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.NONE);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, false)).toBe(ErrorCode.INVALID_TXN_STATE);
    });

    it('aborts: the abort of an aborted transaction is NONE, a commit of it INVALID_TXN_STATE', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 2)]);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, false)).toBe(ErrorCode.NONE);
      await h.settle();
      expect(h.sink.written).toEqual(['orders-2:ABORT']);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, false)).toBe(ErrorCode.NONE);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 0, true)).toBe(ErrorCode.INVALID_TXN_STATE);
    });

    it('answers INVALID_PRODUCER_ID_MAPPING and PRODUCER_FENCED as AddPartitionsToTxn does', async () => {
      const a = await h.init('tx-a');
      expect(await h.coordinator.endTxn('nope', a.producerId, 0, true)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect(await h.coordinator.endTxn('tx-a', a.producerId + 1n, 0, true)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect(await h.coordinator.endTxn('tx-a', a.producerId, 1, true)).toBe(ErrorCode.PRODUCER_FENCED);
    });

    it('stops sending markers a partition refuses as stale (TRANSACTION_COORDINATOR_FENCED), as Kafka does', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      h.sink.answer = () => ErrorCode.TRANSACTION_COORDINATOR_FENCED;
      await h.coordinator.endTxn('tx-a', a.producerId, 0, true);
      await h.advance(10_000);
      expect(h.sink.calls).toHaveLength(1);
      expect(h.coordinator.peek('tx-a')!.state).toBe(TxnState.PrepareCommit);
    });
  });

  describe('verify (the Produce seam, KIP-890 part 1)', () => {
    it('is NONE for a partition of the ongoing transaction, INVALID_TXN_STATE for another, and maps fencing to INVALID_PRODUCER_EPOCH', async () => {
      const a = await h.init('tx-a');
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 0)).toBe(ErrorCode.NONE);
      expect(await h.coordinator.verify('tx-a', a.producerId, 0, 'orders', 1)).toBe(ErrorCode.INVALID_TXN_STATE);
      expect(await h.coordinator.verify('tx-a', a.producerId, 1, 'orders', 0)).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
      expect(await h.coordinator.verify('tx-a', 5n, 0, 'orders', 0)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
      expect(await h.coordinator.verify('nope', a.producerId, 0, 'orders', 0)).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    });

    it('verify-only entries answer TRANSACTION_ABORTABLE for partitions not in the transaction, CONCURRENT_TRANSACTIONS while it completes', async () => {
      const a = await h.init('tx-a');
      expect(await h.coordinator.verifyPartitions('tx-a', a.producerId, 0, [P('orders', 0)])).toEqual([{ ...P('orders', 0), errorCode: ErrorCode.TRANSACTION_ABORTABLE }]);
      await h.coordinator.addPartitionsToTxn('tx-a', a.producerId, 0, [P('orders', 0)]);
      h.sink.answer = () => ErrorCode.NOT_LEADER_OR_FOLLOWER;
      await h.coordinator.endTxn('tx-a', a.producerId, 0, true);
      expect((await h.coordinator.verifyPartitions('tx-a', a.producerId, 0, [P('orders', 0)]))[0]!.errorCode).toBe(ErrorCode.CONCURRENT_TRANSACTIONS);
    });
  });
});
