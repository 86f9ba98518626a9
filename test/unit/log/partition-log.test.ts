import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CompressionType } from '../../../protocol/compression/index.js';
import { crc32c } from '../../../protocol/crc32c.js';
import { RecordBatch } from '../../../protocol/records/batch.js';
import { FaultInjectingLedgerFs } from '../../../src/ledger/fault-fs.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import { ManualClock, openMemoryMetadataStore } from '../../../src/metadata/index.js';
import { partitionPrefix } from '../../../src/metadata/layout.js';
import { ListOffsetsTimestamp, PartitionLog, type PartitionLogOptions } from '../../../src/log/partition-log.js';
import {
  MemoryStores,
  baseOffsetOf,
  buildBatch,
  lastOffsetOf,
  openDiskStores,
  producerBatch,
  removeDir,
  tempDir,
  until,
  type Stores,
} from './support.js';

const T0 = 1_700_000_000_000;

let dir: string;
let stores: Stores;
const opened: PartitionLog[] = [];

beforeEach(async () => {
  dir = tempDir();
  stores = await openDiskStores(dir);
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await stores.close();
  removeDir(dir);
});

async function open(options: Partial<PartitionLogOptions> = {}, on: Stores = stores): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic: 'orders',
    partition: 0,
    ledgers: on.ledgers,
    metadata: on.metadata,
    retentionCheckIntervalMs: 0,
    ...options,
  });
  opened.push(log);
  return log;
}

/** Every batch of the log from its start, read in one go. */
async function readAll(log: PartitionLog, from = log.logStartOffset): Promise<Buffer[]> {
  const out: Buffer[] = [];
  let offset = from;
  while (offset < log.highWatermark) {
    const r = await log.read(offset, { maxBytes: 1 << 20 });
    if (r.records.length === 0) break;
    out.push(...r.records);
    offset = r.nextOffset;
  }
  return out;
}

function ledgerExists(store: Stores, id: number): Promise<boolean> {
  return store.ledgers.getMetadata(id).then(
    () => true,
    () => false,
  );
}

describe('append', () => {
  it('assigns dense offsets in call order and acknowledges only durable batches', async () => {
    const log = await open();
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => log.append(buildBatch(1 + (i % 3)))));
    let expected = 0;
    for (const [i, r] of results.entries()) {
      expect(r.baseOffset).toBe(expected);
      expect(r.lastOffset).toBe(expected + (i % 3));
      expect(r.logAppendTime).toBe(-1);
      expect(r.logStartOffset).toBe(0);
      expected = r.lastOffset + 1;
    }
    expect(log.highWatermark).toBe(expected);
    expect(log.logEndOffset).toBe(expected);
    expect(log.lastStableOffset).toBe(expected);
    const stored = await readAll(log);
    expect(stored.map(baseOffsetOf)).toEqual(results.map((r) => r.baseOffset));
  });

  it('rewrites only baseOffset and partitionLeaderEpoch, so the CRC still holds and the rest is byte-identical', async () => {
    const log = await open();
    await log.append(buildBatch(3));
    const sent = buildBatch(5, { compression: CompressionType.GZIP });
    const original = Buffer.from(sent);
    await log.append(sent);
    const [, stored] = await readAll(log);
    const view = RecordBatch.wrap(stored!);
    expect(view.baseOffsetNumber).toBe(3);
    expect(view.partitionLeaderEpoch).toBe(log.leaderEpoch);
    expect(view.isValid()).toBe(true);
    expect(stored!.subarray(16)).toEqual(original.subarray(16));
    expect(stored!.subarray(8, 12)).toEqual(original.subarray(8, 12));
  });

  it('stamps LogAppendTime batches with the log clock and a new CRC', async () => {
    const clock = new ManualClock(T0 + 5000);
    const log = await open({ clock, config: { messageTimestampType: 'LogAppendTime' } });
    const r = await log.append(buildBatch([{ timestamp: T0 }, { timestamp: T0 + 1 }]));
    expect(r.logAppendTime).toBe(T0 + 5000);
    const [stored] = await readAll(log);
    const view = RecordBatch.wrap(stored!);
    expect(view.timestampType).toBe(1);
    expect(view.maxTimestamp).toBe(T0 + 5000);
    expect(view.isValid()).toBe(true);
    expect(await log.listOffsets(T0 + 4000)).toEqual({ timestamp: T0 + 5000, offset: 0, leaderEpoch: 0 });
  });

  it('hands the ledger store the CRC of a checked batch as stored (crcChecked): it reads back from the segments', async () => {
    // No tail cache: every read comes from the segments, where each record's checksum is checked.
    const ledgers = await LocalLedgerStore.open('/ledgers', { fs: new MemoryLedgerFs(), cacheBytes: 0 });
    // What each append hands the store: the bytes as they are then, and the CRC it says they have.
    const handed: { data: Buffer; crc: number | undefined }[] = [];
    const create = ledgers.create.bind(ledgers);
    ledgers.create = async (...args) => {
      const writer = await create(...args);
      const append = writer.append.bind(writer);
      writer.append = (data, options) => {
        handed.push({ data: Buffer.from(data), crc: options?.crc32c });
        return append(data, options);
      };
      return writer;
    };
    const metadata = await openMemoryMetadataStore();
    const s: Stores = { ledgers, metadata, close: async () => (await ledgers.close(), await metadata.close()) };
    try {
      const plain = await open({ topic: 'checked' }, s);
      const stamped = await open({ topic: 'stamped', clock: new ManualClock(T0 + 5000), config: { messageTimestampType: 'LogAppendTime' } }, s);
      for (const log of [plain, stamped]) {
        const sent = [buildBatch(1), buildBatch(3, { valueBytes: 6000 }), buildBatch(2, { compression: CompressionType.GZIP })];
        for (const b of sent) await log.append(b, { crcChecked: true });
        const stored = await readAll(log);
        expect(stored.map(baseOffsetOf)).toEqual([0, 1, 4]);
        for (const b of stored) expect(RecordBatch.wrap(b).isValid()).toBe(true);
      }
      // Every batch came with the CRC-32C of exactly the bytes stored, taken after the log's rewrites.
      expect(handed).toHaveLength(6);
      for (const h of handed) expect(h.crc).toBe(crc32c(h.data));
      // Without crcChecked the store computes its own.
      await plain.append(buildBatch(1));
      expect(handed.at(-1)!.crc).toBeUndefined();
    } finally {
      for (const log of opened.splice(0)) await log.close();
      await s.close();
    }
  });

  it('refuses a batch over max.message.bytes with MESSAGE_TOO_LARGE and keeps going', async () => {
    const log = await open({ config: { maxMessageBytes: 200 } });
    await expect(log.append(buildBatch(1, { valueBytes: 500 }))).rejects.toMatchObject({ kafkaErrorCode: 10 });
    expect((await log.append(buildBatch(1))).baseOffset).toBe(0);
  });

  it('refuses bytes that are not a record batch v2', async () => {
    const log = await open();
    const bad = buildBatch(1);
    bad.writeInt8(1, 16);
    await expect(log.append(bad)).rejects.toMatchObject({ code: 'LL_ERR_CORRUPT_RECORD' });
  });
});

describe('append at a given offset (gaps)', () => {
  it('keeps offsets increasing, leaves gaps empty, and serves a read in a gap from the next batch', async () => {
    const log = await open();
    await log.append(buildBatch(2)); // 0-1
    const r = await log.append(buildBatch(3), { baseOffset: 100 }); // 100-102
    expect(r).toMatchObject({ baseOffset: 100, lastOffset: 102 });
    expect((await log.append(buildBatch(1))).baseOffset).toBe(103);
    const inGap = await log.read(50);
    expect(inGap.records.map(baseOffsetOf)).toEqual([100, 103]);
    const mid = await log.read(101);
    expect(mid.records.map(baseOffsetOf)).toEqual([100, 103]);
    await expect(log.append(buildBatch(1), { baseOffset: 50 })).rejects.toMatchObject({ code: 'LL_ERR_LOG_INVALID_OFFSET' });
    expect(log.highWatermark).toBe(104);
  });

  it('appends only where the log ends as the appender expects (expectedLogEnd), checked when the batch is written', async () => {
    const log = await open();
    // Issued back to back, each expecting the end the one before leaves: all land, the gap kept.
    const a = log.append(buildBatch(2), { baseOffset: 0, expectedLogEnd: 0 });
    const b = log.append(buildBatch(3), { baseOffset: 10, expectedLogEnd: 2 });
    await expect(Promise.all([a, b])).resolves.toMatchObject([{ baseOffset: 0 }, { baseOffset: 10, lastOffset: 12 }]);
    // The batch it follows was not stored: the log ends at 13, not at 20, so no gap is left where it should be.
    const err = await log.append(buildBatch(1), { baseOffset: 25, expectedLogEnd: 20 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LL_ERR_LOG_INVALID_OFFSET', kafkaErrorCode: 87 }); // INVALID_RECORD
    expect((err as Error).message).toContain('the log ends at 13, not at 20');
    expect(log.logEndOffset).toBe(13);
    await expect(log.append(buildBatch(1), { baseOffset: 13, expectedLogEnd: 14 })).rejects.toMatchObject({ code: 'LL_ERR_LOG_INVALID_ARGUMENT' });
    await expect(log.append(buildBatch(1), { expectedLogEnd: -1 })).rejects.toMatchObject({ code: 'LL_ERR_LOG_INVALID_ARGUMENT' });
    expect((await log.append(buildBatch(1), { expectedLogEnd: 13 })).baseOffset).toBe(13);
  });

  it('keeps the gaps across a restart, whether the index comes from snapshots or from the batches', async () => {
    for (const indexSnapshots of [true, false]) {
      const log = await open({ config: { segmentEntries: 2 }, indexSnapshots, topic: `gaps-${indexSnapshots}` });
      await log.append(buildBatch(1));
      await log.append(buildBatch(1), { baseOffset: 10 });
      await log.append(buildBatch(1), { baseOffset: 20 });
      await log.append(buildBatch(1), { baseOffset: 30 });
      await log.close();
      const again = await open({ indexSnapshots, topic: `gaps-${indexSnapshots}` });
      expect(again.stats.ledgersFromSnapshots > 0).toBe(indexSnapshots);
      expect((await readAll(again)).map(baseOffsetOf)).toEqual([0, 10, 20, 30]);
      expect((await again.read(11)).records.map(baseOffsetOf)).toEqual([20, 30]);
      expect(again.highWatermark).toBe(31);
    }
  });
});

describe('read', () => {
  it('returns the whole batch holding the offset, from any offset inside it', async () => {
    const log = await open();
    await log.append(buildBatch(5)); // 0-4
    await log.append(buildBatch(5)); // 5-9
    for (const offset of [5, 7, 9]) {
      const r = await log.read(offset, { maxBytes: 1 });
      expect(r.records.map(baseOffsetOf)).toEqual([5]);
      expect(r.nextOffset).toBe(10);
    }
  });

  it('stops at maxBytes but always returns a first batch larger than it (KIP-74) unless told not to', async () => {
    const log = await open();
    for (let i = 0; i < 6; i++) await log.append(buildBatch(1, { valueBytes: 100 }));
    const one = (await readAll(log))[0]!.length;
    const r = await log.read(0, { maxBytes: one * 3 + one - 1 });
    expect(r.records.length).toBe(3);
    expect(r.sizeInBytes).toBe(one * 3);
    expect((await log.read(0, { maxBytes: 10 })).records.length).toBe(1);
    expect((await log.read(0, { maxBytes: 10, minOneBatch: false })).records.length).toBe(0);
  });

  it('crosses ledger boundaries within the byte budget', async () => {
    const log = await open({ config: { segmentEntries: 2 } });
    for (let i = 0; i < 7; i++) await log.append(buildBatch(1));
    expect(log.stats.ledgers).toBe(4);
    const r = await log.read(1, { maxBytes: 1 << 20 });
    expect(r.records.map(baseOffsetOf)).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('answers OFFSET_OUT_OF_RANGE below the log start and above the log end, and nothing at the end', async () => {
    const log = await open();
    await log.append(buildBatch(4));
    await expect(log.read(5)).rejects.toMatchObject({ code: 'LL_ERR_LOG_OFFSET_OUT_OF_RANGE', kafkaErrorCode: 1 });
    await expect(log.read(-1)).rejects.toMatchObject({ kafkaErrorCode: 1 });
    const end = await log.read(4);
    expect(end).toMatchObject({ records: [], highWatermark: 4, lastStableOffset: 4, logStartOffset: 0, nextOffset: 4 });
  });

  it('stops read_committed reads at the last stable offset', async () => {
    const log = await open();
    await log.append(buildBatch(2)); // 0-1
    await log.append(producerBatch(7, 0, 0)); // 2-3: a transaction begins
    await log.append(buildBatch(2)); // 4-5
    expect(log.lastStableOffset).toBe(2);
    expect((await log.read(0, { isolation: 'read_committed' })).records.map(baseOffsetOf)).toEqual([0]);
    expect((await log.read(0)).records.map(baseOffsetOf)).toEqual([0, 2, 4]);
    expect(await log.listOffsets(ListOffsetsTimestamp.LATEST, { isolation: 'read_committed' })).toMatchObject({ offset: 2 });
    await log.writeTxnMarker({ producerId: 7n, producerEpoch: 0, coordinatorEpoch: 0, commit: true }); // 6
    expect(log.lastStableOffset).toBe(7);
  });

  it('answers a read at the end without a promise exactly as read does, and leaves every other read to read', async () => {
    const log = await open();
    await log.append(buildBatch(2)); // 0-1
    await log.append(producerBatch(7, 0, 0)); // 2-3: a transaction begins
    await log.append(buildBatch(2)); // 4-5
    // At the high watermark (and past the last stable offset for read_committed): the same answer as read's.
    expect(log.readAtEnd(6)).toEqual(await log.read(6));
    expect(log.readAtEnd(2, 'read_committed')).toEqual(await log.read(2, { isolation: 'read_committed' }));
    expect(log.readAtEnd(4, 'read_committed')).toEqual(await log.read(4, { isolation: 'read_committed' }));
    // Data to read, an offset out of range, not an integer: read's business.
    expect(log.readAtEnd(5)).toBeUndefined();
    expect(log.readAtEnd(0, 'read_committed')).toBeUndefined();
    expect(log.readAtEnd(7)).toBeUndefined();
    expect(log.readAtEnd(-1)).toBeUndefined();
    expect(log.readAtEnd(6.5)).toBeUndefined();
    await log.close();
    expect(log.readAtEnd(6)).toBeUndefined();
    await expect(log.read(6)).rejects.toMatchObject({ code: 'LL_ERR_LOG_CLOSED' });
  });

  it('wakes a waiting fetch with the next append and lets an abort end the wait', async () => {
    const log = await open();
    expect(await log.waitForData(0, AbortSignal.timeout(1))).toBe(false);
    const waiting = log.waitForData(0);
    let woke = false;
    void waiting.then(() => (woke = true));
    await new Promise((r) => setImmediate(r));
    expect(woke).toBe(false);
    await log.append(buildBatch(1));
    expect(await waiting).toBe(true);
    expect(await log.waitForData(0)).toBe(true);
    const controller = new AbortController();
    const aborted = log.waitForData(1, controller.signal);
    controller.abort();
    expect(await aborted).toBe(false);
  });

  it('calls an onData callback once data is there (at once if it already is) and not after it is cancelled', async () => {
    const log = await open();
    const woke: string[] = [];
    const cancelA = log.onData(0, () => woke.push('a'));
    const cancelB = log.onData(0, () => woke.push('b'));
    cancelB();
    await log.append(buildBatch(1));
    expect(woke).toEqual(['a']);
    cancelA();
    log.onData(0, () => woke.push('now'));
    expect(woke).toEqual(['a', 'now']);
  });

  it('moves its state version and tells its state watchers on each append, raised log start offset and its end', async () => {
    const log = await open();
    const told: number[] = [];
    const watcher = { logStateChanged: () => told.push(log.stateVersion) };
    log.watchState(watcher);
    log.watchState(watcher); // idempotent
    const v0 = log.stateVersion;
    await log.append(buildBatch(2));
    await log.append(buildBatch(1));
    expect(told).toEqual([v0 + 1, v0 + 2]);
    await log.deleteRecords(1);
    expect(told).toEqual([v0 + 1, v0 + 2, v0 + 3]);
    await log.deleteRecords(1); // not raised: no change
    expect(log.stateVersion).toBe(v0 + 3);
    const other = { logStateChanged: () => told.push(-1) };
    log.watchState(other);
    log.unwatchState(other);
    await log.close();
    expect(told).toEqual([v0 + 1, v0 + 2, v0 + 3, v0 + 4]);
  });
});

describe('rollover', () => {
  it('rolls by segment.bytes before a batch that would not fit', async () => {
    const batchBytes = buildBatch(1, { valueBytes: 200 }).length;
    const log = await open({ config: { segmentBytes: batchBytes * 3 } });
    for (let i = 0; i < 7; i++) await log.append(buildBatch(1, { valueBytes: 200 }));
    expect(log.describeLedgers().map((l) => l.batches)).toEqual([3, 3, 1]);
    expect(log.stats.rolls['segment.bytes']).toBe(2);
    expect((await readAll(log)).map(baseOffsetOf)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('rolls by ledgerline.segment.entries', async () => {
    const log = await open({ config: { segmentEntries: 4 } });
    await Promise.all(Array.from({ length: 10 }, () => log.append(buildBatch(2))));
    expect(log.describeLedgers().map((l) => [l.startOffset, l.batches])).toEqual([
      [0, 4],
      [8, 4],
      [16, 2],
    ]);
    expect(log.stats.rolls['ledgerline.segment.entries']).toBe(2);
    const sealed = log.describeLedgers().slice(0, 2);
    for (const l of sealed) expect((await stores.ledgers.getMetadata(l.ledgerId)).state).toBe('sealed');
  });

  it('rolls by segment.ms, on the next append and on its own when the ledger sits idle', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentMs: 60_000 } });
    await log.append(buildBatch(1));
    clock.advance(30_000);
    await log.append(buildBatch(1));
    expect(log.stats.ledgers).toBe(1);
    clock.advance(30_000); // the idle timer fires
    await until(() => log.describeLedgers().length === 2 && log.describeLedgers()[0]!.sealed, 5000, 'idle roll');
    expect(log.stats.rolls['segment.ms']).toBe(1);
    await log.append(buildBatch(1));
    clock.advance(59_000);
    await log.append(buildBatch(1));
    clock.advance(2_000); // the second ledger's timer fires: it rolls before the next append lands
    await log.append(buildBatch(1));
    expect(log.describeLedgers().map((l) => l.batches)).toEqual([2, 2, 1]);
    expect((await readAll(log)).map(baseOffsetOf)).toEqual([0, 1, 2, 3, 4]);
  });

  it('never rolls an empty ledger', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentMs: 1000 } });
    clock.advance(10_000);
    await log.roll();
    expect(log.stats.ledgers).toBe(1);
  });

  it('keeps offsets dense and ordered while appends race a stream of rolls', async () => {
    const log = await open({ config: { segmentEntries: 7 } });
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => log.append(buildBatch(1 + (i % 4)))));
    let next = 0;
    for (const r of results) {
      expect(r.baseOffset).toBe(next);
      next = r.lastOffset + 1;
    }
    const ledgers = log.describeLedgers();
    expect(ledgers.length).toBe(15);
    for (let i = 1; i < ledgers.length; i++) expect(ledgers[i]!.startOffset).toBe(ledgers[i - 1]!.endOffset);
    expect((await readAll(log)).map(baseOffsetOf)).toEqual(results.map((r) => r.baseOffset));
  });
});

describe('ListOffsets', () => {
  it('finds the earliest record whose timestamp is at least the target, inside batches too', async () => {
    const log = await open();
    await log.append(buildBatch([{ timestamp: T0 }, { timestamp: T0 + 10 }, { timestamp: T0 + 20 }])); // 0-2
    await log.append(buildBatch([{ timestamp: T0 + 5 }, { timestamp: T0 + 15 }])); // 3-4, out of order
    await log.append(
      buildBatch([{ timestamp: T0 + 30 }, { timestamp: T0 + 40 }], { compression: CompressionType.GZIP }), // 5-6
    );
    expect(await log.listOffsets(T0)).toEqual({ timestamp: T0, offset: 0, leaderEpoch: 0 });
    expect(await log.listOffsets(T0 + 11)).toEqual({ timestamp: T0 + 20, offset: 2, leaderEpoch: 0 });
    expect(await log.listOffsets(T0 + 21)).toEqual({ timestamp: T0 + 30, offset: 5, leaderEpoch: 0 });
    expect(await log.listOffsets(T0 + 35)).toEqual({ timestamp: T0 + 40, offset: 6, leaderEpoch: 0 });
    expect(await log.listOffsets(T0 + 41)).toBeNull();
    expect(await log.listOffsets(ListOffsetsTimestamp.EARLIEST)).toEqual({ timestamp: -1, offset: 0, leaderEpoch: 0 });
    expect(await log.listOffsets(ListOffsetsTimestamp.LATEST)).toEqual({ timestamp: -1, offset: 7, leaderEpoch: 0 });
    expect(await log.listOffsets(ListOffsetsTimestamp.LATEST_TIERED)).toEqual({ timestamp: -1, offset: -1, leaderEpoch: -1 });
  });

  it('returns the offset of the record with the largest timestamp for MAX_TIMESTAMP (KIP-734)', async () => {
    const log = await open({ config: { segmentEntries: 2 } });
    await log.append(buildBatch([{ timestamp: T0 }, { timestamp: T0 + 1 }])); // 0-1
    await log.append(buildBatch([{ timestamp: T0 + 2 }, { timestamp: T0 + 90 }, { timestamp: T0 + 3 }])); // 2-4
    await log.append(buildBatch([{ timestamp: T0 + 50 }])); // 5
    await log.append(buildBatch([{ timestamp: T0 + 90 }])); // 6: a later tie does not win
    expect(await log.listOffsets(ListOffsetsTimestamp.MAX_TIMESTAMP)).toEqual({ timestamp: T0 + 90, offset: 3, leaderEpoch: 0 });
  });

  it('searches from the log start offset', async () => {
    const log = await open();
    await log.append(buildBatch([{ timestamp: T0 }, { timestamp: T0 + 10 }, { timestamp: T0 + 20 }])); // 0-2
    await log.append(buildBatch([{ timestamp: T0 + 30 }])); // 3
    await log.deleteRecords(2);
    expect(await log.listOffsets(T0)).toEqual({ timestamp: T0 + 20, offset: 2, leaderEpoch: 0 });
    await log.deleteRecords(3);
    expect(await log.listOffsets(T0 + 5)).toEqual({ timestamp: T0 + 30, offset: 3, leaderEpoch: 0 });
    expect(await log.listOffsets(ListOffsetsTimestamp.EARLIEST)).toMatchObject({ offset: 3 });
  });
});

describe('retention', () => {
  it('deletes sealed ledgers older than retention.ms, never the open one, and advances the log start', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentEntries: 2, retentionMs: 60_000 } });
    for (let i = 0; i < 7; i++) {
      await log.append(buildBatch([{ timestamp: clock.now() }]));
      clock.advance(20_000);
    }
    // ledgers: [0,1] newest t=20s, [2,3] 60s, [4,5] 100s, [6] open; now = 140s
    const before = log.describeLedgers();
    const result = await log.enforceRetention();
    expect(result).toMatchObject({ deletedLedgers: 2, logStartOffset: 4 });
    expect(log.logStartOffset).toBe(4);
    expect(await ledgerExists(stores, before[0]!.ledgerId)).toBe(false);
    expect(await ledgerExists(stores, before[2]!.ledgerId)).toBe(true);
    await expect(log.read(3)).rejects.toMatchObject({ kafkaErrorCode: 1 });
    expect((await readAll(log)).map(baseOffsetOf)).toEqual([4, 5, 6]);
    clock.advance(10 * 60_000);
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 1, logStartOffset: 6 });
    expect(log.stats.ledgers).toBe(1);
    expect((await readAll(log)).map(baseOffsetOf)).toEqual([6]);
  });

  it('keeps everything with retention.ms -1 and runs on its own every retention check interval', async () => {
    const clock = new ManualClock(T0);
    const log = await open({ clock, retentionCheckIntervalMs: 1000, config: { segmentEntries: 1, retentionMs: -1 } });
    for (let i = 0; i < 3; i++) await log.append(buildBatch([{ timestamp: T0 }]));
    clock.advance(365 * 24 * 3600_000);
    expect(log.logStartOffset).toBe(0);
    log.updateConfig({ retentionMs: 1000 });
    // The check re-arms itself once its previous run has finished: keep time moving until it has run.
    await until(
      () => {
        clock.advance(1000);
        return log.logStartOffset === 3;
      },
      5000,
      'retention tick',
    );
    expect(log.stats.ledgers).toBe(1);
  });

  it('deletes the oldest sealed ledgers while the partition exceeds retention.bytes', async () => {
    const log = await open({ config: { segmentEntries: 2, retentionMs: -1, retentionBytes: -1 } });
    for (let i = 0; i < 9; i++) await log.append(buildBatch(1, { valueBytes: 100 }));
    const batch = (await readAll(log))[0]!.length;
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 0 });
    log.updateConfig({ retentionBytes: batch * 5 });
    // 9 batches: drop whole ledgers of 2 while at least 5 batches remain → 2 ledgers go, 5 batches stay.
    expect(await log.enforceRetention()).toMatchObject({ deletedLedgers: 2, deletedBytes: batch * 4, logStartOffset: 4 });
    expect(log.stats.sizeInBytes).toBe(batch * 5);
  });
});

describe('DeleteRecords', () => {
  it('moves the log start offset, deletes ledgers wholly below it, and survives a restart', async () => {
    const log = await open({ config: { segmentEntries: 2 } });
    for (let i = 0; i < 6; i++) await log.append(buildBatch(3)); // batches at 0,3,…,15; ledgers of 2
    const first = log.describeLedgers()[0]!;
    expect(await log.deleteRecords(7)).toEqual({ lowWatermark: 7 });
    expect(log.logStartOffset).toBe(7);
    expect(log.describeLedgers()[0]!.startOffset).toBe(6);
    expect(await ledgerExists(stores, first.ledgerId)).toBe(false);
    // A read at the log start gets the whole batch holding it, which begins before it.
    expect((await log.read(7)).records.map(baseOffsetOf)[0]).toBe(6);
    await expect(log.read(6)).rejects.toMatchObject({ kafkaErrorCode: 1 });
    expect(await log.deleteRecords(2)).toEqual({ lowWatermark: 7 }); // never moves back
    await log.close();
    const again = await open();
    expect(again.logStartOffset).toBe(7);
    expect((await readAll(again)).map(baseOffsetOf)).toEqual([6, 9, 12, 15]);
  });

  it('refuses an offset beyond the high watermark and treats -1 as the high watermark', async () => {
    const log = await open();
    await log.append(buildBatch(5));
    await expect(log.deleteRecords(6)).rejects.toMatchObject({ code: 'LL_ERR_LOG_OFFSET_OUT_OF_RANGE', kafkaErrorCode: 1 });
    await expect(log.deleteRecords(-2)).rejects.toMatchObject({ kafkaErrorCode: 1 });
    expect(await log.deleteRecords(-1)).toEqual({ lowWatermark: 5 });
    expect((await log.read(5)).records).toEqual([]);
    expect((await log.append(buildBatch(1))).logStartOffset).toBe(5);
  });
});

describe('restart and recovery', () => {
  it('reopens a cleanly closed log with every batch at its offset, from index snapshots, under a new epoch', async () => {
    const log = await open({ config: { segmentEntries: 3 } });
    const results = await Promise.all(Array.from({ length: 20 }, () => log.append(buildBatch(2))));
    await log.close();
    await expect(log.append(buildBatch(1))).rejects.toMatchObject({ code: 'LL_ERR_LOG_CLOSED' });
    const again = await open();
    expect(again.leaderEpoch).toBe(1);
    expect(again.stats.ledgersFromData).toBe(0);
    expect(again.stats.ledgersFromSnapshots).toBe(7);
    expect(again.highWatermark).toBe(40);
    expect((await readAll(again)).map(baseOffsetOf)).toEqual(results.map((r) => r.baseOffset));
    const next = await again.append(buildBatch(1));
    expect(next.baseOffset).toBe(40);
    const [stored] = (await again.read(40)).records;
    expect(RecordBatch.wrap(stored!).partitionLeaderEpoch).toBe(1);
  });

  it('after a power loss, fences the open ledger at its last durable entry and keeps every acknowledged batch', async () => {
    const mem = new MemoryStores();
    let s = await mem.open();
    const log = await open({ config: { segmentEntries: 5 } }, s);
    const acked: number[] = [];
    for (let i = 0; i < 200; i++) {
      log.append(buildBatch(1)).then(
        (r) => acked.push(r.baseOffset),
        () => undefined,
      );
    }
    await until(() => acked.length >= 60, 10_000, 'some acknowledgements');
    opened.splice(opened.indexOf(log), 1);
    await mem.crash(); // no close: the process is gone, appends are still in flight
    const ackedBeforeCrash = [...acked].sort((a, b) => a - b);
    s = await mem.open();
    const again = await open({}, s);
    const served = (await readAll(again)).map(baseOffsetOf);
    // Every acknowledged batch is there, at its offset; offsets are dense; nothing else came back.
    for (const offset of ackedBeforeCrash) expect(served).toContain(offset);
    expect(served).toEqual(Array.from({ length: served.length }, (_, i) => i));
    expect(again.highWatermark).toBe(served.length);
    const ledgers = again.describeLedgers();
    expect(ledgers.at(-2)!.sealed).toBe(true);
    expect((await s.ledgers.getMetadata(ledgers.at(-2)!.ledgerId)).state).toBe('sealed');
    expect((await again.append(buildBatch(1))).baseOffset).toBe(served.length);
    await again.close();
    opened.splice(opened.indexOf(again), 1);
    await s.close();
  });

  it('indexes ledgers from their batches when snapshots are missing or damaged', async () => {
    const log = await open({ config: { segmentEntries: 2 }, indexSnapshots: false });
    for (let i = 0; i < 5; i++) await log.append(buildBatch(1));
    await log.close();
    const again = await open();
    expect(again.stats).toMatchObject({ ledgersFromSnapshots: 0, ledgersFromData: 3 });
    await again.close();
    // Snapshots were written in the background by the second owner; damage one.
    const withSnap = again.describeLedgers().find((l) => l.indexLedgerId !== null)!;
    expect(withSnap).toBeDefined();
    await stores.ledgers.delete(withSnap.indexLedgerId!);
    const third = await open();
    expect(third.stats.ledgersFromData).toBe(1);
    expect((await readAll(third)).map(baseOffsetOf)).toEqual([0, 1, 2, 3, 4]);
  });

  it('replaces an empty last ledger in place instead of chaining empty ledgers', async () => {
    for (let i = 0; i < 3; i++) await (await open()).close();
    const log = await open();
    expect(log.stats.ledgers).toBe(1);
    expect(log.leaderEpoch).toBe(3);
    await log.close();
    expect((await stores.ledgers.list()).length).toBe(1);
  });
});

describe('ownership', () => {
  it('a second owner fences the first: no data copied, the first fails with NOT_LEADER_OR_FOLLOWER', async () => {
    const a = await open();
    const fromA = await Promise.all(Array.from({ length: 5 }, () => a.append(buildBatch(2))));
    const [written] = a.describeLedgers();
    const b = await open({ owner: 'broker-2' });
    expect(b.leaderEpoch).toBe(a.leaderEpoch + 1);
    // The new owner serves the ledger the first one wrote, sealed where its durable entries end.
    expect(b.describeLedgers()[0]).toMatchObject({ ledgerId: written!.ledgerId, sealed: true, batches: 5 });
    expect((await stores.ledgers.getMetadata(written!.ledgerId)).state).toBe('sealed');
    await expect(a.append(buildBatch(1))).rejects.toMatchObject({ code: 'LL_ERR_LOG_FENCED', kafkaErrorCode: 6 });
    expect(a.state).toBe('fenced');
    await expect(a.read(0)).rejects.toMatchObject({ kafkaErrorCode: 6 });
    expect((await readAll(b)).map(baseOffsetOf)).toEqual(fromA.map((r) => r.baseOffset));
    expect((await b.append(buildBatch(1))).baseOffset).toBe(10);
  });

  it('an idle first owner learns of the takeover from the chain head, and its appends in flight settle', async () => {
    const a = await open();
    await a.append(buildBatch(1));
    const fetchWaiting = a.waitForData(a.highWatermark + 100);
    const inFlight = Array.from({ length: 10 }, () => a.append(buildBatch(1)).then((r) => r.baseOffset, () => -1));
    const b = await open();
    const outcomes = await Promise.all(inFlight);
    await until(() => a.state === 'fenced', 5000, 'first owner fenced');
    expect(await fetchWaiting).toBe(true); // woken, so that its next read reports NOT_LEADER_OR_FOLLOWER
    // Whatever the first owner acknowledged is in the log the second owner serves.
    const served = (await readAll(b)).map(baseOffsetOf);
    for (const offset of outcomes.filter((o) => o >= 0)) expect(served).toContain(offset);
    expect(served).toEqual(Array.from({ length: served.length }, (_, i) => i));
  });

  it('takes over with an epoch chosen by the cluster layer, refusing one that is not newer', async () => {
    const a = await open({ leaderEpoch: 5 });
    expect(a.leaderEpoch).toBe(5);
    await a.append(buildBatch(1));
    await expect(open({ leaderEpoch: 5 })).rejects.toMatchObject({ code: 'LL_ERR_LOG_FENCED' });
    // The refused opener touched nothing: the owner keeps appending.
    expect((await a.append(buildBatch(1))).baseOffset).toBe(1);
    const b = await open({ leaderEpoch: 9 });
    expect(b.leaderEpoch).toBe(9);
    expect((await b.append(buildBatch(1))).baseOffset).toBe(2);
  });

  it('reports the epoch history for OffsetsForLeaderEpoch', async () => {
    const a = await open();
    await a.append(buildBatch(3)); // epoch 0: 0-2
    const b = await open();
    await b.append(buildBatch(2)); // epoch 1: 3-4
    expect(b.endOffsetForEpoch(0)).toEqual({ leaderEpoch: 0, endOffset: 3 });
    expect(b.endOffsetForEpoch(1)).toEqual({ leaderEpoch: 1, endOffset: 5 });
    expect(b.endOffsetForEpoch(7)).toEqual({ leaderEpoch: -1, endOffset: -1 });
    expect(b.endOffsetForEpoch(-1)).toEqual({ leaderEpoch: -1, endOffset: -1 });
  });
});

describe('deletion', () => {
  it('deletes every ledger and the chain, and fails later calls with UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const log = await open({ config: { segmentEntries: 2 } });
    for (let i = 0; i < 5; i++) await log.append(buildBatch(1));
    await until(() => log.describeLedgers().slice(0, -1).every((l) => l.indexLedgerId !== null), 5000, 'snapshots');
    await log.delete();
    expect(await stores.ledgers.list()).toEqual([]);
    expect((await stores.metadata.list(partitionPrefix('orders', 0))).kvs).toEqual([]);
    await expect(log.append(buildBatch(1))).rejects.toMatchObject({ code: 'LL_ERR_LOG_DELETED', kafkaErrorCode: 3 });
  });

  it('deletes a partition owned elsewhere: the owner stops, and the partition starts afresh if recreated', async () => {
    const log = await open();
    await log.append(buildBatch(4));
    await PartitionLog.deletePartition({ topic: 'orders', partition: 0, ledgers: stores.ledgers, metadata: stores.metadata });
    await expect(log.append(buildBatch(1))).rejects.toMatchObject({ kafkaErrorCode: expect.any(Number) });
    await until(() => log.state === 'deleted' || log.state === 'fenced', 5000, 'owner stopped');
    expect(await stores.ledgers.list()).toEqual([]);
    const fresh = await open();
    expect(fresh.highWatermark).toBe(0);
    expect(fresh.leaderEpoch).toBe(0);
  });
});

describe('storage failures', () => {
  /** Stores whose ledger store writes through a file system that fails on demand. */
  async function faultyStores(): Promise<{ faults: FaultInjectingLedgerFs; s: Stores }> {
    const faults = new FaultInjectingLedgerFs(new MemoryLedgerFs());
    const ledgers = await LocalLedgerStore.open('/ledgers', { fs: faults });
    const metadata = await openMemoryMetadataStore();
    return { faults, s: { ledgers, metadata, close: async () => (await ledgers.close(), await metadata.close()) } };
  }

  it('fails the appends a failed fsync took, rolls to a new ledger, and continues with dense offsets', async () => {
    const { faults, s } = await faultyStores();
    try {
      const log = await open({}, s);
      const first = await Promise.all(Array.from({ length: 3 }, () => log.append(buildBatch(1))));
      faults.failSyncs(1);
      const failed = await Promise.allSettled([log.append(buildBatch(1)), log.append(buildBatch(1))]);
      expect(failed.every((r) => r.status === 'rejected')).toBe(true);
      expect((failed[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'LL_ERR_LOG_STORAGE', kafkaErrorCode: 56 });
      const after = await Promise.all(Array.from({ length: 3 }, () => log.append(buildBatch(1))));
      const all = [...first, ...after].map((r) => r.baseOffset);
      const served = (await readAll(log)).map(baseOffsetOf);
      for (const o of all) expect(served).toContain(o);
      expect(served).toEqual(Array.from({ length: served.length }, (_, i) => i));
      expect(log.stats.rolls.failure).toBe(1);
      await log.close();
      opened.splice(opened.indexOf(log), 1);
    } finally {
      await s.close();
    }
  });

  it('fails a copy issued behind an append a failed fsync took, instead of storing it after a gap (expectedLogEnd)', async () => {
    const { faults, s } = await faultyStores();
    try {
      const log = await open({}, s);
      await log.append(buildBatch(3), { baseOffset: 0, mirrored: true, expectedLogEnd: 0 }); // 0-2
      faults.failSyncs(1);
      // A mirror's round: 5-6 (a gap from 3, as the source has it), then 10-11 behind it.
      const a = log.append(buildBatch(2), { baseOffset: 5, mirrored: true, expectedLogEnd: 3 });
      await expect(a).rejects.toMatchObject({ code: 'LL_ERR_LOG_STORAGE' });
      const b = log.append(buildBatch(2), { baseOffset: 10, mirrored: true, expectedLogEnd: 7 });
      await expect(b).rejects.toMatchObject({ code: 'LL_ERR_LOG_INVALID_OFFSET', kafkaErrorCode: 87 });
      expect(log.logEndOffset).toBe(3);
      // Copied again from where the log ends: the same offsets, nothing lost between.
      await log.append(buildBatch(2), { baseOffset: 5, mirrored: true, expectedLogEnd: 3 });
      await log.append(buildBatch(2), { baseOffset: 10, mirrored: true, expectedLogEnd: 7 });
      expect((await readAll(log)).map(baseOffsetOf)).toEqual([0, 5, 10]);
      await log.close();
      opened.splice(opened.indexOf(log), 1);
    } finally {
      await s.close();
    }
  });
});

describe('scale', () => {
  it('serves a partition of more than 1,000 ledgers, reopens it from snapshots and retains it in chunks', async () => {
    const mem = new MemoryStores();
    let s = await mem.open();
    const clock = new ManualClock(T0);
    const log = await open({ clock, config: { segmentEntries: 1, retentionMs: -1 } }, s);
    const n = 1100;
    for (let i = 0; i < n; i++) {
      const r = await log.append(buildBatch([{ timestamp: T0 + i * 10 }, { timestamp: T0 + i * 10 + 5 }]));
      expect(r.baseOffset).toBe(i * 2);
    }
    expect(log.stats.ledgers).toBe(n);
    await log.close();
    opened.splice(opened.indexOf(log), 1);
    await s.close();
    s = await mem.open();
    const again = await open({ clock, config: { retentionMs: 60_000 } }, s);
    expect(again.stats.ledgers).toBe(n + 1);
    expect(again.stats.ledgersFromSnapshots).toBe(n);
    for (let offset = 0; offset < 2 * n; offset += 97) {
      const r = await again.read(offset, { maxBytes: 1 });
      expect(baseOffsetOf(r.records[0]!)).toBe(offset - (offset % 2));
    }
    expect(await again.listOffsets(T0 + 5001)).toMatchObject({ offset: 1001, timestamp: T0 + 5005 });
    expect(lastOffsetOf((await again.read(2 * n - 1)).records[0]!)).toBe(2 * n - 1);
    // Retention removes the ledgers older than a minute in several chain txns.
    clock.advance(10_000 + 60_000);
    const kept = await again.enforceRetention();
    expect(kept.deletedLedgers).toBe(n - 100);
    expect(again.logStartOffset).toBe((n - 100) * 2);
    expect((await readAll(again)).length).toBe(100);
    await again.close();
    opened.splice(opened.indexOf(again), 1);
    await s.close();
  }, 60_000);
});
