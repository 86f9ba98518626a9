/**
 * The producer state a PartitionLog keeps: applied as batches become durable, snapshotted with each sealed
 * ledger, loaded on open from the newest snapshot plus the batches after it, equal to a replay of the whole
 * log, and dropped with the ledgers it describes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { crc32c } from '../../../protocol/crc32c.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { ChainKeys, loadChain } from '../../../src/log/chain.js';
import { PartitionLog, type PartitionLogOptions } from '../../../src/log/partition-log.js';
import { PartitionProducerState, applyStoredBatch } from '../../../src/log/producer-state.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { MemoryStores, buildBatch, until, type Stores } from './support.js';

const T0 = 1_700_000_000_000;
const TOPIC = 'idem';

/** A batch of `records` records from producer `pid` (epoch `epoch`) starting at `sequence`. */
function idempotentBatch(pid: number, epoch: number, sequence: number, records = 2): Buffer {
  const b = buildBatch(records, { baseTimestamp: T0 + sequence });
  b.writeBigInt64BE(BigInt(pid), 43);
  b.writeInt16BE(epoch, 51);
  b.writeInt32BE(sequence, 53);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

let stores: Stores | null = null;
const opened: PartitionLog[] = [];

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close().catch(() => undefined);
  await stores?.close();
  stores = null;
});

async function open(on: Stores, options: Partial<PartitionLogOptions> = {}): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic: TOPIC,
    partition: 0,
    ledgers: on.ledgers,
    metadata: on.metadata,
    retentionCheckIntervalMs: 0,
    clock: new ManualClock(T0 + 60_000),
    config: { segmentEntries: 4 },
    ...options,
  });
  opened.push(log);
  return log;
}

/** The producer state a replay of every batch of the log gives. */
async function fullReplay(log: PartitionLog): Promise<PartitionProducerState> {
  const state = new PartitionProducerState();
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const r = await log.read(offset, { maxBytes: 1 << 20 });
    for (const buf of r.records) {
      const b = RecordBatch.unchecked(buf);
      applyStoredBatch(state, b, b.baseOffsetNumber, b.baseOffsetNumber + b.lastOffsetDelta);
    }
    offset = r.nextOffset;
  }
  return state;
}

async function producerSnapshotIds(on: Stores): Promise<Array<{ endOffset: number; id: number }>> {
  const chain = await loadChain(on.metadata, new ChainKeys(TOPIC, 0));
  return chain.ledgers.flatMap((l) => (l.state === 'sealed' && l.producerSnapshotLedgerId !== undefined ? [{ endOffset: l.endOffset, id: l.producerSnapshotLedgerId }] : []));
}

/** Appends `n` batches for three producers, round robin; returns the offsets each got. */
async function appendRoundRobin(log: PartitionLog, n: number, from = 0): Promise<Map<string, number>> {
  const offsets = new Map<string, number>();
  for (let i = from; i < from + n; i++) {
    const pid = 100 + (i % 3);
    const seq = Math.floor(i / 3) * 2;
    const r = await log.append(idempotentBatch(pid, 0, seq));
    offsets.set(`${pid}:${seq}`, r.baseOffset);
  }
  return offsets;
}

describe('producer state kept by the partition log', () => {
  it('after a power loss, loads the newest snapshot and replays only the batches after it: the state of a full replay', async () => {
    const mem = new MemoryStores();
    let on = await mem.open();
    const log = await open(on);
    const offsets = await appendRoundRobin(log, 30);
    // 30 batches of 4 per ledger: 7 sealed ledgers (snapshots at their ends, the newest two kept), 2 open.
    await until(() => log.stats.rolls['ledgerline.segment.entries'] === 7);
    const sealedEnd = 7 * 4 * 2;
    await expect.poll(async () => (await producerSnapshotIds(on)).map((s) => s.endOffset), { timeout: 5000 }).toEqual([sealedEnd - 8, sealedEnd]);
    const before = log.producers.entries();
    opened.splice(0);
    await mem.crash();

    on = stores = await mem.open();
    const again = await open(on);
    expect(again.highWatermark).toBe(60);
    expect(again.stats.producerState).toMatchObject({ snapshotOffset: sealedEnd, replayedBatches: 2, producers: 3 });
    expect(again.producers.entries()).toEqual(before);
    expect(again.producers.entries()).toEqual((await fullReplay(again)).entries());
    // A retry of a batch in the snapshot and of one in the replayed tail: duplicates with their offsets.
    for (const [pid, seq] of [[100, 16], [102, 18]] as const) {
      const check = again.producers.check({ producerId: BigInt(pid), producerEpoch: 0, baseSequence: seq, lastOffsetDelta: 1 }, T0);
      expect(check.kind).toBe('duplicate');
      if (check.kind === 'duplicate') expect((await check.original)?.baseOffset).toBe(BigInt(offsets.get(`${pid}:${seq}`)!));
    }
  });

  it.each(['a close', 'a power loss'])('falls back to a replay of the log when no snapshot can be read after %s, and says so', async (end) => {
    const mem = new MemoryStores();
    let on = await mem.open();
    const log = await open(on);
    await appendRoundRobin(log, 14);
    if (end === 'a close') await log.close();
    else await expect.poll(async () => (await producerSnapshotIds(on)).length, { timeout: 5000 }).toBe(2);
    opened.splice(0);
    for (const s of await producerSnapshotIds(on)) await on.ledgers.delete(s.id);
    if (end === 'a close') await on.close();
    else await mem.crash();

    on = stores = await mem.open();
    const warnings: string[] = [];
    const again = await open(on, { logger: { warn: (_obj, msg) => warnings.push(msg) } });
    expect(warnings).toContain('producer snapshot unusable; trying an older one');
    expect(warnings).toContain('no usable producer snapshot: replaying the producer state from the log');
    expect(again.stats.producerState).toMatchObject({ snapshotOffset: -1, replayedBatches: 14, producers: 3 });
    expect(again.producers.entries()).toEqual((await fullReplay(again)).entries());
  });

  it('drops producer snapshots with the ledgers they describe: retention, DeleteRecords and deletion', async () => {
    const mem = new MemoryStores();
    const on = (stores = await mem.open());
    const log = await open(on);
    await appendRoundRobin(log, 20);
    await log.roll();
    await expect.poll(async () => (await producerSnapshotIds(on)).length, { timeout: 5000 }).toBe(2);
    const ids = (await producerSnapshotIds(on)).map((s) => s.id);
    await log.deleteRecords(-1);
    const left = new Set((await on.ledgers.list()).map((l) => l.ledgerId));
    for (const id of ids) expect(left.has(id)).toBe(false);
    // The state outlives its data, as in Kafka: a retry of the last batch is still a duplicate.
    expect(log.producers.check({ producerId: 101n, producerEpoch: 0, baseSequence: 12, lastOffsetDelta: 1 }, T0).kind).toBe('duplicate');

    await appendRoundRobin(log, 8, 20);
    await expect.poll(async () => (await producerSnapshotIds(on)).length, { timeout: 5000 }).toBeGreaterThan(0);
    await log.delete();
    opened.splice(0);
    expect(await on.ledgers.list()).toEqual([]);
  });
});
