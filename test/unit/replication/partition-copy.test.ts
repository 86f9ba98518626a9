/** Copying a source log's batches into a mirror log at their offsets (src/replication/partition-copy.ts), and the mirror states (model.ts, mirrors.ts). */
import { afterEach, describe, expect, it } from 'vitest';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { buildEndTxnMarkerBatch } from '../../../protocol/records/control.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { nameSelected, nextState, invalidLink, LINK_DEFAULTS, type ClusterLink, type MirrorTopic } from '../../../src/replication/model.js';
import { settle } from '../../../src/replication/mirrors.js';
import { abortOpenTransactions, copyBatches, followLogStart, MirrorDivergedError } from '../../../src/replication/partition-copy.js';
import { buildBatch, MemoryStores, producerBatch, type Stores } from '../log/support.js';

const T0 = 1_700_000_000_000;
let stores: Stores | null = null;
const opened: PartitionLog[] = [];

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close().catch(() => undefined);
  await stores?.close();
  stores = null;
});

async function open(topic: string, config: Record<string, unknown> = {}): Promise<PartitionLog> {
  stores ??= await new MemoryStores().open();
  const log = await PartitionLog.open({ topic, partition: 0, ledgers: stores.ledgers, metadata: stores.metadata, retentionCheckIntervalMs: 0, clock: new ManualClock(T0), config });
  opened.push(log);
  return log;
}

/** A batch as a source log stores it: at `base`, with the source's leader epoch. */
function at(batch: Buffer, base: number): Buffer {
  const b = RecordBatch.wrap(batch);
  b.setBaseOffset(base);
  b.setPartitionLeaderEpoch(7);
  return batch;
}

describe('copyBatches', () => {
  it('appends each batch at its own offset, gaps kept, bytes kept but the leader epoch, LogAppendTime not restamped', async () => {
    const log = await open('m', { messageTimestampType: 'LogAppendTime' });
    const a = at(buildBatch(3, { baseTimestamp: T0 - 5000 }), 0);
    const b = at(buildBatch(2, { baseTimestamp: T0 - 4000 }), 10);
    const r = copyBatches(log, Buffer.concat([a, b, b.subarray(0, 20)]));
    expect(r).toMatchObject({ batches: 2, records: 5, next: 12 });
    await r.durable;
    expect(log.logEndOffset).toBe(12);
    const read = await log.read(0, { maxBytes: 1 << 20 });
    const stored = Buffer.concat(read.records);
    const first = RecordBatch.wrap(stored.subarray(0, a.length));
    expect(first.baseOffsetNumber).toBe(0);
    expect(first.maxTimestamp).toBe(RecordBatch.wrap(a).maxTimestamp);
    expect(first.isValid()).toBe(true);
    // Again from the same fetch position: nothing is appended twice.
    expect(copyBatches(log, Buffer.concat([a, b])).batches).toBe(0);
    expect(log.logEndOffset).toBe(12);
  });

  it("copies a round from where the previous round's appends end, before they are durable, and the log keeps them in order", async () => {
    // What the link replicator relies on to keep two rounds in flight (link-replicator.ts, Inflight).
    const log = await open('m');
    const first = copyBatches(log, Buffer.concat([at(buildBatch(3), 0), at(buildBatch(2), 3)]));
    expect(first.next).toBe(5);
    // The next fetch answered from 5, with a batch the first round already issued in front (an overlap the
    // source's answer may carry): it is skipped, not appended twice.
    const second = copyBatches(log, Buffer.concat([at(buildBatch(2), 3), at(buildBatch(4), 8)]), first.next);
    expect(second).toMatchObject({ batches: 1, records: 4, next: 12 });
    let firstDone = false;
    await Promise.all([first.durable.then(() => (firstDone = true)), second.durable.then(() => expect(firstDone).toBe(true))]);
    expect(log.logEndOffset).toBe(12);
    const read = await log.read(0, { maxBytes: 1 << 20 });
    const bases: number[] = [];
    for (const chunk of read.records) for (let p = 0; p < chunk.length; p += RecordBatch.wrap(chunk.subarray(p)).sizeInBytes) bases.push(RecordBatch.wrap(chunk.subarray(p)).baseOffsetNumber);
    expect(bases).toEqual([0, 3, 8]);
  });

  it('fails a copy that follows batches the log did not store, rather than leave their offsets a gap', async () => {
    const log = await open('m');
    await copyBatches(log, at(buildBatch(3), 0)).durable;
    // The round before ended at 7 as far as the replicator knows, but the log ends at 3 (those appends failed).
    const copy = copyBatches(log, Buffer.concat([at(buildBatch(2), 7), at(buildBatch(2), 9)]), 7);
    await expect(copy.durable).rejects.toMatchObject({ code: 'LL_ERR_LOG_INVALID_OFFSET' });
    expect(log.logEndOffset).toBe(3);
    expect(log.highWatermark).toBe(3);
  });

  it('refuses a batch that straddles the log end and a batch whose CRC does not match', async () => {
    const log = await open('m');
    await copyBatches(log, at(buildBatch(4), 0)).durable;
    expect(() => copyBatches(log, at(buildBatch(4), 2))).toThrow(MirrorDivergedError);
    const bad = at(buildBatch(2), 4);
    bad[bad.length - 1] ^= 0xff;
    expect(() => copyBatches(log, bad)).toThrow(/corrupt/i);
    // From where appends in flight end, not from the log end: a batch issued already is not issued again.
    const first = copyBatches(log, at(buildBatch(2), 4));
    expect(copyBatches(log, at(buildBatch(2), 4), first.next).batches).toBe(0);
    await first.durable;
    expect(log.logEndOffset).toBe(6);
    // Issued from a stale position, the same batch is refused by the log (an append below its end).
    await expect(copyBatches(log, at(buildBatch(2), 4), 4).durable).rejects.toThrow();
    expect(log.logEndOffset).toBe(6);
  });

  it('carries the source transactions: an aborted one enters the index, an open one holds the LSO until aborted', async () => {
    const log = await open('m');
    const marker = (pid: bigint, commit: boolean) => buildEndTxnMarkerBatch({ producerId: pid, producerEpoch: 0, coordinatorEpoch: 3, commit, timestamp: T0 });
    const r = copyBatches(log, Buffer.concat([at(producerBatch(5, 0, 0), 0), at(marker(5n, false), 2), at(producerBatch(9, 0, 0), 3)]));
    await r.durable;
    expect(r.maxProducerId).toBe(9n);
    expect(log.highWatermark).toBe(5);
    expect(log.lastStableOffset).toBe(3);
    expect(await abortOpenTransactions(log)).toBe(1);
    expect(log.lastStableOffset).toBe(log.highWatermark);
    expect(await abortOpenTransactions(log)).toBe(0);
  });

  it('follows the source log start offset as far as this log has records', async () => {
    const log = await open('m');
    await copyBatches(log, Buffer.concat([at(buildBatch(5), 0), at(buildBatch(5), 5)])).durable;
    expect(await followLogStart(log, 5)).toBe(5);
    expect(await followLogStart(log, 100)).toBe(10);
  });
});

describe('mirror states', () => {
  const mirror = (o: Partial<MirrorTopic> = {}): MirrorTopic => ({ topic: 't', link: 'l', sourceTopic: 't', state: 'promoting', stoppedPartitions: [], groupsSyncedBy: [], createdAtMs: 0, stateChangedAtMs: 0, ...o });
  const cluster = { partitions: () => 2, liveBrokers: () => [1, 2] };

  it('promotes once every partition stopped and every live broker synced its groups; fails over once every partition stopped', () => {
    expect(settle(mirror({ stoppedPartitions: [0] , groupsSyncedBy: [1, 2] }), cluster, 5).state).toBe('promoting');
    expect(settle(mirror({ stoppedPartitions: [0, 1], groupsSyncedBy: [1] }), cluster, 5).state).toBe('promoting');
    expect(settle(mirror({ stoppedPartitions: [0, 1], groupsSyncedBy: [1, 2] }), cluster, 5)).toMatchObject({ state: 'promoted', stateChangedAtMs: 5 });
    expect(settle(mirror({ state: 'failing-over', stoppedPartitions: [0, 1] }), cluster, 5).state).toBe('failed-over');
  });

  it('takes the operator transitions Cluster Linking takes and refuses the others', () => {
    expect(nextState('mirroring', 'promote')).toBe('promoting');
    expect(nextState('promoting', 'failover')).toBe('failing-over');
    expect(nextState('failing-over', 'promote')).toMatch(/cannot be promoted/);
    expect(nextState('promoted', 'failover')).toMatch(/cannot fail over/);
  });

  it('checks links', () => {
    const link: ClusterLink = { ...LINK_DEFAULTS, name: 'east', bootstrapServers: 'a:9092,[::1]:9093', securityProtocol: 'PLAINTEXT', createdAtMs: 0 };
    expect(invalidLink(link)).toBeNull();
    expect(invalidLink({ ...link, bootstrapServers: 'nope' })).toMatch(/host:port/);
    expect(invalidLink({ ...link, securityProtocol: 'SASL_SSL' })).toMatch(/needs sasl/);
    expect(invalidLink({ ...link, offsetSyncIntervalMs: 5 })).toMatch(/offsetSyncIntervalMs/);
    expect(nameSelected(['orders*', 'pay'], 'orders.eu')).toBe(true);
    expect(nameSelected(['orders*', 'pay'], 'payments')).toBe(false);
  });
});
