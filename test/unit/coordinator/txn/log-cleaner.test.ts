/**
 * __transaction_state compacted by the log cleaner (src/log/compaction.ts), as Kafka's LogCleaner compacts it:
 * over a real partition log on the memory stores with ledgers of four batches. After passes and a restart every
 * transactional id loads in the state it had (producer id, epoch, state, partitions); the log keeps about one
 * record per id; the tombstone of an expired id goes delete.retention.ms after the pass that kept it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { RecordBatch } from '../../../../protocol/records/batch.js';
import { transactionCoordinatorConfig, type TransactionCoordinatorConfig } from '../../../../src/coordinator/txn/config.js';
import { TransactionCoordinator } from '../../../../src/coordinator/txn/coordinator.js';
import { decodeTxnRecord } from '../../../../src/coordinator/txn/records.js';
import { KeyOffsetMap } from '../../../../src/log/offset-map.js';
import { PartitionLog } from '../../../../src/log/partition-log.js';
import { ManualClock } from '../../../../src/metadata/clock.js';
import { MemoryStores, type Stores } from '../../log/support.js';
import { FakeTopics } from '../harness.js';
import { RecordingSink } from './harness.js';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;
const DELETE_RETENTION_MS = 60_000;
const LOG_CONFIG = { cleanupPolicy: ['compact'] as const, segmentEntries: 4, minCleanableDirtyRatio: 0, deleteRetentionMs: DELETE_RETENTION_MS };
const CONFIG: Partial<TransactionCoordinatorConfig> = { numPartitions: 1, transactionalIdExpirationMs: 2 * HOUR, removeExpiredIntervalMs: HOUR };

let stores: Stores;
let clock: ManualClock;
let topics: FakeTopics;
let log: PartitionLog;
let c: TransactionCoordinator;
let nextProducerId = 1000n;
const sink = new RecordingSink();

async function start(): Promise<void> {
  log = await PartitionLog.open({ topic: '__transaction_state', partition: 0, ledgers: stores.ledgers, metadata: stores.metadata, retentionCheckIntervalMs: 0, clock, config: LOG_CONFIG });
  c = new TransactionCoordinator({
    config: transactionCoordinatorConfig(new Map(), CONFIG),
    topics,
    openLog: async () => log,
    producerIds: { allocate: async () => nextProducerId++ },
    markers: sink,
    groupPartitionFor: () => 0,
    clock,
  });
  await c.start();
  await c.loadOwned();
}

async function restart(): Promise<void> {
  await c.stop();
  await log.close();
  await start();
}

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

async function clean(force = false): Promise<number> {
  let passes = 0;
  for (let i = 0; i < 10; i++) {
    if ((await log.compact({ now: clock.now(), map: new KeyOffsetMap(1 << 20), force: force && i === 0 })) === null) break;
    passes++;
  }
  return passes;
}

/** The transactional ids of the records left in the log, in offset order, null values marked. */
async function stored(): Promise<Array<{ id: string; tombstone: boolean }>> {
  const out: Array<{ id: string; tombstone: boolean }> = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const res = await log.read(offset, { maxBytes: 1 << 20 });
    if (res.records.length === 0) break;
    for (const buf of res.records) {
      for (const r of RecordBatch.wrap(buf).records()) out.push({ id: decodeTxnRecord(r.key!, r.value)!.transactionalId, tombstone: r.value === null });
    }
    offset = res.nextOffset;
  }
  return out;
}

beforeEach(async () => {
  stores = await new MemoryStores().open();
  clock = new ManualClock(T0);
  topics = new FakeTopics();
  topics.add('orders', 3);
  topics.add('__consumer_offsets', 1, true);
});

afterEach(async () => {
  await c?.stop().catch(() => undefined);
  await log?.close().catch(() => undefined);
  await stores.close();
});

describe('__transaction_state compacted by the log cleaner', () => {
  it('loads every transactional id as it was after compaction and a restart, from a log of about one record per id', async () => {
    await start();
    const ids = ['tx-a', 'tx-b', 'tx-c'];
    for (let round = 0; round < 6; round++) {
      for (const id of ids) {
        const r = await c.initProducerId(id, 60_000, null);
        expect(r.errorCode).toBe(ErrorCode.NONE);
        expect((await c.addPartitionsToTxn(id, r.producerId, r.producerEpoch, [{ topic: 'orders', partition: round % 3 }]))[0]!.errorCode).toBe(ErrorCode.NONE);
        // The last round leaves tx-c's transaction open.
        if (round < 5 || id !== 'tx-c') expect(await c.endTxn(id, r.producerId, r.producerEpoch, round % 2 === 0)).toBe(ErrorCode.NONE);
        await settle();
      }
    }
    const before = await c.describeTransactions(ids);
    expect(before.map((t) => t.state)).toEqual(['CompleteAbort', 'CompleteAbort', 'Ongoing']);
    const written = log.highWatermark;
    expect(await clean()).toBeGreaterThan(0);
    const left = await stored();
    // Three ids; the open ledger (up to 4 batches) is not cleaned.
    expect(left.length).toBeLessThanOrEqual(3 + 4);
    expect(left.length).toBeLessThan(written / 4);
    await restart();
    expect(await c.describeTransactions(ids)).toEqual(before);
    // The open transaction goes on after the reload.
    const open = before[2]!;
    expect(await c.endTxn('tx-c', open.producerId, open.producerEpoch, true)).toBe(ErrorCode.NONE);
  });

  it('keeps the tombstone of an expired transactional id for delete.retention.ms after the pass that kept it, then drops it', async () => {
    await start();
    await c.initProducerId('tx-old', 60_000, null);
    // Idle past transactional.id.expiration.ms: removed with a tombstone at the next removal run.
    clock.advance(3 * HOUR);
    await settle();
    for (let i = 0; i < 6; i++) {
      const r = await c.initProducerId('tx-new', 60_000, null);
      expect(r.errorCode).toBe(ErrorCode.NONE);
    }
    expect((await stored()).filter((r) => r.id === 'tx-old').map((r) => r.tombstone)).toEqual([false, true]);
    await clean();
    expect((await stored()).filter((r) => r.id === 'tx-old').map((r) => r.tombstone)).toEqual([true]);
    await restart();
    expect((await c.describeTransactions(['tx-old']))[0]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    clock.advance(DELETE_RETENTION_MS + 1);
    expect(await clean(true)).toBeGreaterThan(0);
    expect((await stored()).some((r) => r.id === 'tx-old')).toBe(false);
    await restart();
    expect((await c.describeTransactions(['tx-old']))[0]!.errorCode).toBe(ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
    expect((await c.describeTransactions(['tx-new']))[0]).toMatchObject({ errorCode: ErrorCode.NONE, producerEpoch: 5, state: 'Empty' });
  });
});
