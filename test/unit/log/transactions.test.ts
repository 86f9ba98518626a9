/**
 * Transactions in the partition log (KIP-98): the producer state's ongoing transactions, the last stable
 * offset they give, the aborted-transaction index and its persistence, and transaction markers.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { PartitionLog, type PartitionLogOptions } from '../../../src/log/partition-log.js';
import { decodeProducerSnapshot, encodeProducerSnapshot } from '../../../src/log/producer-snapshot.js';
import { PartitionProducerState, applyStoredBatch } from '../../../src/log/producer-state.js';
import { TxnIndex, decodeTxnIndex, encodeTxnIndex } from '../../../src/log/txn-index.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { buildEndTxnMarkerBatch } from '../../../protocol/records/control.js';
import { MemoryStores, baseOffsetOf, buildBatch, producerBatch, type Stores } from './support.js';

const T0 = 1_700_000_000_000;

let stores: Stores | null = null;
const opened: PartitionLog[] = [];

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close().catch(() => undefined);
  await stores?.close();
  stores = null;
});

async function open(on: Stores, options: Partial<PartitionLogOptions> = {}): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic: 'txn',
    partition: 0,
    ledgers: on.ledgers,
    metadata: on.metadata,
    retentionCheckIntervalMs: 0,
    clock: new ManualClock(T0 + 60_000),
    ...options,
  });
  opened.push(log);
  return log;
}

const abort = (producerId: bigint, producerEpoch = 0, coordinatorEpoch = 0) => ({ producerId, producerEpoch, coordinatorEpoch, commit: false });
const commit = (producerId: bigint, producerEpoch = 0, coordinatorEpoch = 0) => ({ producerId, producerEpoch, coordinatorEpoch, commit: true });

describe('producer state: ongoing transactions', () => {
  function apply(state: PartitionProducerState, buf: Buffer, base: number): void {
    const b = RecordBatch.wrap(buf);
    b.setBaseOffset(base);
    applyStoredBatch(state, b, base, base + b.lastOffsetDelta);
  }

  it('starts a transaction at the first transactional batch, ends it with a marker and records its coordinator epoch', () => {
    const state = new PartitionProducerState();
    apply(state, producerBatch(1, 0, 0), 10);
    apply(state, producerBatch(1, 0, 2), 12);
    expect(state.ongoingTxnFirstOffset(1n)).toBe(10);
    expect(state.firstUnstableOffset()).toBe(10);
    apply(state, producerBatch(2, 0, 0), 14);
    expect(state.firstUnstableOffset()).toBe(10);
    apply(state, buildEndTxnMarkerBatch(commit(1n, 0, 5)), 16);
    expect(state.ongoingTxnFirstOffset(1n)).toBe(-1);
    expect(state.firstUnstableOffset()).toBe(14);
    expect(state.entries().find((e) => e.producerId === 1n)).toMatchObject({ coordinatorEpoch: 5, currentTxnFirstOffset: -1 });
    expect([...state.activeProducers()].find((p) => p.producerId === 2n)).toMatchObject({ currentTxnStartOffset: 14, coordinatorEpoch: -1 });
  });

  it('refuses a marker of an older producer epoch with INVALID_PRODUCER_EPOCH and of an older coordinator epoch with TRANSACTION_COORDINATOR_FENCED', () => {
    const state = new PartitionProducerState();
    apply(state, producerBatch(1, 3, 0), 0);
    apply(state, buildEndTxnMarkerBatch(abort(1n, 3, 7)), 2);
    expect(state.checkMarker(1n, 2, 7, 3)?.errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect(state.checkMarker(1n, 3, 6, 3)?.errorCode).toBe(ErrorCode.TRANSACTION_COORDINATOR_FENCED);
    expect(state.checkMarker(1n, 4, 7, 3)).toBeNull();
    // A producer with no state here: its marker is written (Kafka writes it too).
    expect(state.checkMarker(99n, 0, 0, 3)).toBeNull();
  });

  it('transaction version 2: a marker with the bumped epoch starts the next transaction at it from sequence 0, and fences the old epoch', () => {
    const state = new PartitionProducerState();
    apply(state, producerBatch(1, 3, 0), 0);
    apply(state, producerBatch(1, 3, 2), 2);
    expect(state.checkMarker(1n, 4, 0, 4)).toBeNull();
    apply(state, buildEndTxnMarkerBatch(commit(1n, 4, 0)), 4);
    expect(state.ongoingTxnFirstOffset(1n)).toBe(-1);
    const txn = (epoch: number, baseSequence: number) => state.check({ producerId: 1n, producerEpoch: epoch, baseSequence, lastOffsetDelta: 1, isTransactional: true }, T0);
    // A late batch of the old epoch is fenced; the new epoch continues from no sequence.
    expect(txn(3, 4)).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
    expect(txn(4, 4)).toMatchObject({ kind: 'error', errorCode: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER });
    expect(txn(4, 0).kind).toBe('append');
    expect(state.checkMarker(1n, 3, 0, 6)?.errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
  });

  it('refuses a non-transactional batch of a producer whose transaction is ongoing with INVALID_TXN_STATE', () => {
    const state = new PartitionProducerState();
    apply(state, producerBatch(1, 0, 0), 0);
    const check = state.check({ producerId: 1n, producerEpoch: 0, baseSequence: 2, lastOffsetDelta: 1, isTransactional: false }, T0);
    expect(check).toMatchObject({ kind: 'error', errorCode: ErrorCode.INVALID_TXN_STATE });
    expect(state.check({ producerId: 1n, producerEpoch: 0, baseSequence: 2, lastOffsetDelta: 1, isTransactional: true }, T0).kind).toBe('append');
  });

  it('keeps ongoing transactions and coordinator epochs in its snapshot', () => {
    const state = new PartitionProducerState();
    apply(state, producerBatch(1, 0, 0), 0);
    apply(state, producerBatch(2, 0, 0), 2);
    apply(state, buildEndTxnMarkerBatch(commit(2n, 0, 4)), 4);
    const decoded = decodeProducerSnapshot(encodeProducerSnapshot(5, T0, state.entries()), 5);
    if (typeof decoded === 'string') throw new Error(decoded);
    const loaded = new PartitionProducerState();
    loaded.load(decoded.producers);
    expect(loaded.entries()).toEqual(state.entries());
    expect(loaded.firstUnstableOffset()).toBe(0);
    expect(loaded.entries().find((e) => e.producerId === 2n)?.coordinatorEpoch).toBe(4);
  });
});

describe('aborted-transaction index', () => {
  it('collects the entries whose marker is at or after the fetch offset and whose first offset is below the upper bound', () => {
    const index = new TxnIndex();
    index.add({ producerId: 1n, firstOffset: 0, lastOffset: 5, lastStableOffset: 6 });
    index.add({ producerId: 2n, firstOffset: 3, lastOffset: 20, lastStableOffset: 21 });
    index.add({ producerId: 3n, firstOffset: 15, lastOffset: 18, lastStableOffset: 3 });
    expect(index.collect(6, 10)).toEqual([{ producerId: 2n, firstOffset: 3 }]);
    expect(index.collect(0, 16).map((a) => a.producerId)).toEqual([1n, 3n, 2n]);
    index.dropBefore(6);
    expect(index.collect(0, 100).map((a) => a.producerId)).toEqual([3n, 2n]);
  });

  it('round-trips a ledger entries through its checksummed chunks and refuses a damaged one', () => {
    const entries = [
      { producerId: 7n, firstOffset: 100, lastOffset: 104, lastStableOffset: 105 },
      { producerId: 8n, firstOffset: 101, lastOffset: 110, lastStableOffset: 111 },
    ];
    const chunks = encodeTxnIndex(3, 100, entries);
    expect(decodeTxnIndex(chunks, { ledgerId: 3, startOffset: 100, endOffset: 120 })).toEqual(entries);
    expect(decodeTxnIndex(chunks, { ledgerId: 4, startOffset: 100, endOffset: 120 })).toMatch(/ledger/);
    chunks[0]![40] ^= 1;
    expect(decodeTxnIndex(chunks, { ledgerId: 3, startOffset: 100, endOffset: 120 })).toBe('txn index checksum mismatch');
  });
});

describe('PartitionLog transactions', () => {
  it('moves the last stable offset with transactions and their markers; read_committed stops there and returns the aborted ones', async () => {
    const mem = new MemoryStores();
    const log = await open((stores = await mem.open()));
    await log.append(producerBatch(1, 0, 0)); // 0-1: txn of 1
    await log.append(buildBatch(2)); // 2-3
    await log.append(producerBatch(2, 0, 0)); // 4-5: txn of 2
    expect(log.lastStableOffset).toBe(0);
    expect((await log.read(0, { isolation: 'read_committed' })).records).toEqual([]);
    await log.writeTxnMarker(abort(1n)); // 6
    expect(log.lastStableOffset).toBe(4);
    const committed = await log.read(0, { isolation: 'read_committed' });
    expect(committed.records.map(baseOffsetOf)).toEqual([0, 2]);
    expect(committed.abortedTransactions).toEqual([{ producerId: 1n, firstOffset: 0 }]);
    expect((await log.read(0)).abortedTransactions).toEqual([]);
    await log.writeTxnMarker(commit(2n)); // 7
    expect(log.lastStableOffset).toBe(8);
    const all = await log.read(0, { isolation: 'read_committed' });
    expect(all.records.map(baseOffsetOf)).toEqual([0, 2, 4, 6, 7]);
    expect(all.abortedTransactions).toEqual([{ producerId: 1n, firstOffset: 0 }]);
    // A read past the aborted transaction's marker does not get it.
    expect((await log.read(7, { isolation: 'read_committed' })).abortedTransactions).toEqual([]);
    expect(log.producers.ongoingTxnFirstOffset(2n)).toBe(-1);
  });

  it('writes a marker for a producer with no state, and refuses a fenced coordinator epoch', async () => {
    const mem = new MemoryStores();
    const log = await open((stores = await mem.open()));
    expect((await log.writeTxnMarker(commit(5n, 1, 3))).baseOffset).toBe(0);
    await expect(log.writeTxnMarker(commit(5n, 1, 2))).rejects.toMatchObject({ kafkaErrorCode: ErrorCode.TRANSACTION_COORDINATOR_FENCED });
    await expect(log.writeTxnMarker(commit(5n, 0, 3))).rejects.toMatchObject({ kafkaErrorCode: ErrorCode.INVALID_PRODUCER_EPOCH });
    expect(log.highWatermark).toBe(1);
  });

  it('wakes a read_committed wait when a marker moves the last stable offset, not when only the high watermark moves', async () => {
    const mem = new MemoryStores();
    const log = await open((stores = await mem.open()));
    await log.append(producerBatch(1, 0, 0)); // 0-1
    let woke = false;
    const cancel = log.onData(0, () => (woke = true), 'read_committed');
    await log.append(buildBatch(1)); // 2: HW moves, LSO stays at 0
    await new Promise((r) => setImmediate(r));
    expect(woke).toBe(false);
    await log.writeTxnMarker(commit(1n));
    await expect.poll(() => woke, { timeout: 5000 }).toBe(true);
    cancel();
  });

  it.each(['a close', 'a power loss'])('keeps aborted transactions and ongoing ones across %s', async (end) => {
    const mem = new MemoryStores();
    let on = (stores = await mem.open());
    const log = await open(on, { config: { segmentEntries: 3 } });
    await log.append(producerBatch(1, 0, 0)); // 0-1
    await log.append(producerBatch(1, 0, 2)); // 2-3
    await log.writeTxnMarker(abort(1n)); // 4: ledger 1 ends
    await log.append(producerBatch(2, 0, 0)); // 5-6
    await log.append(producerBatch(3, 0, 0)); // 7-8
    await log.writeTxnMarker(abort(2n)); // 9: ledger 2 ends
    await log.append(buildBatch(1)); // 10: producer 3 still ongoing
    const before = await log.read(0, { isolation: 'read_uncommitted' });
    expect(log.lastStableOffset).toBe(7);
    opened.splice(0);
    if (end === 'a close') {
      await log.close();
      await on.close();
    } else {
      await mem.crash();
    }
    on = stores = await mem.open();
    const again = await open(on, { config: { segmentEntries: 3 } });
    expect(again.highWatermark).toBe(before.highWatermark);
    // After a close every ledger comes from its index snapshot, its aborted transactions with it.
    if (end === 'a close') expect(again.stats.ledgersFromSnapshots).toBe(3);
    expect(again.lastStableOffset).toBe(7);
    const r = await again.read(0, { isolation: 'read_committed' });
    expect(r.abortedTransactions).toEqual([
      { producerId: 1n, firstOffset: 0 },
      { producerId: 2n, firstOffset: 5 },
    ]);
    await again.writeTxnMarker(commit(3n));
    expect(again.lastStableOffset).toBe(12);
  });

  it('finds the aborted transactions of a ledger whose index snapshot is gone from its batches, and drops them with the ledger', async () => {
    const mem = new MemoryStores();
    let on = (stores = await mem.open());
    const log = await open(on, { config: { segmentEntries: 3 }, indexSnapshots: false });
    await log.append(producerBatch(1, 0, 0)); // 0-1
    await log.append(producerBatch(2, 0, 0)); // 2-3
    await log.writeTxnMarker(abort(2n)); // 4
    await log.writeTxnMarker(abort(1n)); // 5: ledger 2
    await log.append(buildBatch(1)); // 6
    await log.append(buildBatch(1)); // 7
    await log.append(buildBatch(1)); // 8: ledger 3
    await log.close();
    opened.splice(0);
    await on.close();
    on = stores = await mem.open();
    const again = await open(on, { config: { segmentEntries: 3 }, indexSnapshots: false });
    // The producer state comes from the snapshot at the log end: no replay; the ledgers' batches alone give
    // the aborted transactions, the one that began a ledger before its marker with its first offset.
    expect(again.stats.producerState).toMatchObject({ snapshotOffset: 9, replayedBatches: 0 });
    expect(again.stats.ledgersFromData).toBe(3);
    expect((await again.read(0, { isolation: 'read_committed' })).abortedTransactions).toEqual([
      { producerId: 2n, firstOffset: 2 },
      { producerId: 1n, firstOffset: 0 },
    ]);
    await again.deleteRecords(6);
    expect((await again.read(6, { isolation: 'read_committed' })).abortedTransactions).toEqual([]);
  });
});
