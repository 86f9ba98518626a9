/**
 * Log compaction of one partition log (compaction.ts, Kafka's LogCleaner.Cleaner): the latest record per
 * key survives at its original offset, tombstones go after delete.retention.ms (KIP-534's delete horizon),
 * aborted transaction data goes, markers follow Kafka's rules, the open ledger is never cleaned, and the
 * cleaned chain is what a reopen sees.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildRecordBatchSync } from '../../../protocol/records/builder.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { CompressionType, type CompressionTypeId } from '../../../protocol/compression/index.js';
import { ManualClock } from '../../../src/metadata/index.js';
import { KeyOffsetMap } from '../../../src/log/offset-map.js';
import { PartitionLog, type PartitionLogOptions } from '../../../src/log/partition-log.js';
import { MemoryStores, type Stores } from './support.js';

const T0 = 1_700_000_000_000;

let mem: MemoryStores;
let stores: Stores;
let clock: ManualClock;
const opened: PartitionLog[] = [];

beforeEach(async () => {
  mem = new MemoryStores();
  stores = await mem.open();
  clock = new ManualClock(T0);
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close().catch(() => undefined);
  await stores.close();
});

const COMPACT = { cleanupPolicy: ['compact'] as const, segmentEntries: 4, minCleanableDirtyRatio: 0, deleteRetentionMs: 1000 };

async function open(options: Partial<PartitionLogOptions> = {}): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic: 't',
    partition: 0,
    ledgers: stores.ledgers,
    metadata: stores.metadata,
    retentionCheckIntervalMs: 0,
    clock,
    ...options,
    config: { ...COMPACT, ...options.config },
  });
  opened.push(log);
  return log;
}

function put(key: string, value: string | null, compression: CompressionTypeId = CompressionType.NONE): Buffer {
  return buildRecordBatchSync([{ key, value, timestamp: clock.now() }], { compression, now: clock.now() });
}

async function pass(log: PartitionLog, force = false) {
  return log.compact({ now: clock.now(), map: new KeyOffsetMap(1 << 20), force });
}

/** Every record of the log: [offset, key, value]. */
async function contents(log: PartitionLog): Promise<Array<[number, string | null, string | null]>> {
  const out: Array<[number, string | null, string | null]> = [];
  let offset = log.logStartOffset;
  while (offset < log.highWatermark) {
    const res = await log.read(offset, { maxBytes: 1 << 20 });
    if (res.records.length === 0) break;
    for (const buf of res.records) {
      const b = RecordBatch.wrap(buf);
      if (b.isControl) continue;
      for (const r of b.records()) out.push([r.offset, r.key?.toString() ?? null, r.value?.toString() ?? null]);
    }
    offset = res.nextOffset;
  }
  return out;
}

describe('compaction', () => {
  it('keeps the latest record of each key at its original offset and never touches the open ledger', async () => {
    const log = await open();
    for (let i = 0; i < 20; i++) await log.append(put(`k${i % 3}`, `v${i}`));
    // 20 batches, 4 per ledger: [0,4) … [12,16) sealed, [16,20) open.
    const before = log.cleanableState(clock.now());
    expect(before.due).toBe(true);
    const res = await pass(log);
    expect(res).not.toBeNull();
    expect(res!.groupsRewritten).toBeGreaterThan(0);
    const got = await contents(log);
    // Kafka maps the cleanable range only: the latest record of a key below the open ledger stays even
    // when the open ledger has a later one.
    const openStart = log.describeLedgers().at(-1)!.startOffset;
    const last = new Map<string, number>();
    for (let i = 0; i < openStart; i++) last.set(`k${i % 3}`, i);
    const expected = Array.from({ length: 20 }, (_, i) => i).filter((i) => i >= openStart || last.get(`k${i % 3}`) === i);
    expect(got.map(([o]) => o)).toEqual(expected);
    for (const [o, k, v] of got) expect([k, v]).toEqual([`k${o % 3}`, `v${o}`]);
    expect(log.highWatermark).toBe(20);
    expect(log.cleanableState(clock.now()).dirtyBytes).toBe(0);
  });

  it('survives a reopen: the chain, index and offsets are the compacted ones', async () => {
    let log = await open();
    for (let i = 0; i < 30; i++) await log.append(put(`k${i % 5}`, `v${i}`, CompressionType.LZ4));
    await pass(log);
    const got = await contents(log);
    await log.close();
    opened.length = 0;
    log = await open();
    expect(await contents(log)).toEqual(got);
    expect(log.highWatermark).toBe(30);
    // The checkpoint survived: only the ledger sealed by the close is dirty.
    const ledgers = log.describeLedgers();
    expect(log.cleanableState(clock.now()).firstDirtyOffset).toBe(ledgers.at(-2)!.startOffset);
    const next = await log.append(put('k0', 'after'));
    expect(next.baseOffset).toBe(30);
  });

  it('keeps a tombstone until delete.retention.ms after the pass that first kept it (KIP-534)', async () => {
    const log = await open();
    await log.append(put('a', '1'));
    await log.append(put('b', '1'));
    await log.append(put('a', null));
    await log.append(put('c', '1'));
    for (let i = 0; i < 4; i++) await log.append(put('filler', `${i}`));
    await pass(log);
    let got = await contents(log);
    expect(got.find(([, k]) => k === 'a')).toEqual([2, 'a', null]);
    clock.advance(500);
    await pass(log, true);
    expect((await contents(log)).find(([, k]) => k === 'a')).toEqual([2, 'a', null]);
    clock.advance(600);
    expect(log.cleanableState(clock.now()).deleteHorizonDue).toBe(true);
    await pass(log);
    got = await contents(log);
    expect(got.find(([, k]) => k === 'a')).toBeUndefined();
    expect(got.find(([, k]) => k === 'b')).toEqual([1, 'b', '1']);
  });

  it('removes aborted transaction data and keeps committed data', async () => {
    const log = await open({ config: { segmentEntries: 3 } });
    const txn = (pid: number, seq: number, key: string, value: string) =>
      buildRecordBatchSync([{ key, value, timestamp: clock.now() }], { producerId: pid, producerEpoch: 0, baseSequence: seq, isTransactional: true, now: clock.now() });
    await log.append(txn(1, 0, 'x', 'aborted'));
    await log.append(txn(2, 0, 'y', 'committed'));
    await log.writeTxnMarker({ producerId: 1n, producerEpoch: 0, coordinatorEpoch: 0, commit: false });
    await log.writeTxnMarker({ producerId: 2n, producerEpoch: 0, coordinatorEpoch: 0, commit: true });
    for (let i = 0; i < 6; i++) await log.append(put('filler', `${i}`));
    await pass(log);
    const got = await contents(log);
    expect(got.find(([, k]) => k === 'x')).toBeUndefined();
    expect(got.find(([, k]) => k === 'y')).toEqual([1, 'y', 'committed']);
    // read_committed still works over the cleaned log.
    const res = await log.read(0, { isolation: 'read_committed' });
    expect(res.records.length).toBeGreaterThan(0);
  });
});
