/**
 * A partition log holding batches whose header and CRC are right but whose records are not, as a broker
 * that did not validate records could have stored them: ListOffsets by timestamp reports each such batch
 * once and skips it, in this run and after a reopen.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CompressionType } from '../../../protocol/compression/index.js';
import { ListOffsetsTimestamp, PartitionLog } from '../../../src/log/partition-log.js';
import { T0, batchAround, gzipZeros, poisonedBatches, rawRecord, zstdRleBomb } from '../../support/poisoned-batches.js';
import { buildBatch, openDiskStores, removeDir, tempDir, type Stores } from './support.js';

let dir: string;
let stores: Stores;
const opened: PartitionLog[] = [];
let warnings: { obj: Record<string, unknown>; msg: string }[];

beforeEach(async () => {
  dir = tempDir();
  stores = await openDiskStores(dir);
  warnings = [];
});

afterEach(async () => {
  for (const log of opened.splice(0)) await log.close();
  await stores.close();
  removeDir(dir);
});

async function open(): Promise<PartitionLog> {
  const log = await PartitionLog.open({
    topic: 'poisoned',
    partition: 0,
    ledgers: stores.ledgers,
    metadata: stores.metadata,
    retentionCheckIntervalMs: 0,
    config: { maxMessageBytes: 64 * 1024 * 1024 },
    logger: { warn: (obj, msg) => warnings.push({ obj, msg }) },
  });
  opened.push(log);
  return log;
}

const undecodable = (): number => warnings.filter((w) => w.msg.startsWith('stored record batch does not decode')).length;

describe('ListOffsets over stored batches whose records do not decode', () => {
  it('skips each bad batch, reporting it once, and finds the good records after it', async () => {
    const log = await open();
    await log.append(buildBatch([{ timestamp: T0 }])); // 0
    const bad = await poisonedBatches();
    // Every shape stored at a later timestamp than the good batch before it, and earlier than the one after.
    const stored = bad.filter((c) => !c.name.startsWith('compression id')).map((c) => c.batch);
    for (const b of stored) {
      b.writeBigInt64BE(BigInt(T0 + 10), 35); // maxTimestamp, so the time index points ListOffsets at it
      await log.append(b);
    }
    const afterBad = log.highWatermark;
    await log.append(buildBatch([{ timestamp: T0 + 20 }]));
    expect(await log.listOffsets(T0 + 5)).toEqual({ timestamp: T0 + 20, offset: afterBad, leaderEpoch: 0 });
    // Every shape but the one whose records decode (offset deltas out of order: valid records, none late enough).
    const reported = undecodable();
    expect(reported).toBe(stored.length - 1);
    // Asked again: found again, not reported again.
    expect(await log.listOffsets(T0 + 5)).toEqual({ timestamp: T0 + 20, offset: afterBad, leaderEpoch: 0 });
    expect(undecodable()).toBe(reported);
    expect(await log.listOffsets(T0)).toEqual({ timestamp: T0, offset: 0, leaderEpoch: 0 });
  });

  it('skips decompression bombs without inflating them past the read limit', async () => {
    const log = await open();
    await log.append(batchAround({ count: 1000, compression: CompressionType.ZSTD, stored: zstdRleBomb(8192), maxTimestamp: T0 + 10 }));
    await log.append(batchAround({ count: 1000, compression: CompressionType.GZIP, stored: await gzipZeros(256 * 1024 * 1024), maxTimestamp: T0 + 10 }));
    await log.append(buildBatch([{ timestamp: T0 + 20 }]));
    expect(await log.listOffsets(T0)).toEqual({ timestamp: T0 + 20, offset: 2000, leaderEpoch: 0 });
    expect(undecodable()).toBe(2);
    // Known bad: not inflated again (the gzip bomb costs the whole read limit each time it is decoded).
    const started = performance.now();
    for (let i = 0; i < 5; i++) expect(await log.listOffsets(T0)).toMatchObject({ offset: 2000 });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(undecodable()).toBe(2);
  }, 30_000);

  it('answers MAX_TIMESTAMP from the header when the batch with the largest timestamp does not decode', async () => {
    const log = await open();
    await log.append(buildBatch([{ timestamp: T0 }]));
    await log.append(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, headerCount: -1 }), maxTimestamp: T0 + 99 }));
    expect(await log.listOffsets(ListOffsetsTimestamp.MAX_TIMESTAMP)).toEqual({ timestamp: T0 + 99, offset: 1, leaderEpoch: 0 });
    expect(undecodable()).toBe(1);
  });

  it('still answers after the log is reopened over the bad batch', async () => {
    const log = await open();
    await log.append(batchAround({ count: 1, stored: rawRecord({ offsetDelta: 0, headerCount: -1 }), maxTimestamp: T0 + 10 }));
    await log.append(buildBatch([{ timestamp: T0 + 20 }]));
    await log.close();
    opened.splice(0);
    const again = await open();
    expect(await again.listOffsets(T0)).toMatchObject({ timestamp: T0 + 20, offset: 1 });
    expect(undecodable()).toBe(1);
  });
});
