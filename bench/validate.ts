/**
 * The produce path's record validation, per codec: what a produced batch costs before it is appended,
 * with the header checks alone (framing, CRC-32C, offsets: what the broker did before records were
 * validated) and with every record validated too (protocol/records/validate.ts: one bounded decompression,
 * one scan without an object per record). Two shapes of batch: 1000 records of ~1 KiB (realistic events)
 * and 10,000 records of ~40 bytes (where the per-record cost shows).
 *
 * MB/s are of uncompressed batch bytes (10^6), ns/record is per record of the batch, one batch at a time,
 * the best of several short windows (bench/lib/rate.ts). "scan only" is the record scan over an already
 * decompressed payload: the cost validation adds beyond the decompression itself.
 *
 *   npm run bench -- validate
 */
import { CompressionType, decompress } from '../protocol/compression/index.js';
import type { CompressionTypeId } from '../protocol/compression/index.js';
import {
  RecordBatch,
  buildRecordBatch,
  validateProducePartitionRecords,
  validateProducedRecords,
  validateRecordsPayload,
} from '../protocol/records/index.js';
import type { RecordInput, RecordValidationOptions } from '../protocol/records/index.js';
import { realisticRecords } from './codec-records.js';
import { rate } from './lib/rate.js';

/** Shorter windows than codec-records': ten shapes × five codecs × three measures. */
const RATE = { windows: 4, windowMs: 100, warmup: 3 };

const CODECS: Array<[string, CompressionTypeId]> = [
  ['none', CompressionType.NONE],
  ['gzip', CompressionType.GZIP],
  ['snappy', CompressionType.SNAPPY],
  ['lz4', CompressionType.LZ4],
  ['zstd', CompressionType.ZSTD],
];

const OPTIONS: RecordValidationOptions = { nowMs: Date.now(), createTime: true, timestampBeforeMaxMs: null, timestampAfterMaxMs: null };

function tinyRecords(count: number): RecordInput[] {
  return Array.from({ length: count }, (_, i) => ({ key: `k${i % 100}`, value: `v-${i}-${'x'.repeat(i % 16)}`, timestamp: 1_700_000_000_000 + i }));
}

function col(s: string | number, width: number): string {
  return String(s).padStart(width);
}

async function benchShape(label: string, records: RecordInput[]): Promise<void> {
  const uncompressed = (await buildRecordBatch(records)).length;
  const mb = uncompressed / 1e6;
  const n = records.length;
  console.log(`${label}: ${n} records, ${(uncompressed / 1024).toFixed(0)} KiB uncompressed`);
  console.log('  codec    stored KiB   header only           header + records      added    scan only');
  console.log('                        MB/s     ns/rec       MB/s     ns/rec       ns/rec   ns/rec');
  for (const [name, id] of CODECS) {
    const batch = await buildRecordBatch(records, { compression: id });
    const header = await rate(() => validateProducePartitionRecords(batch, 11), RATE);
    const full = await rate(() => {
      const view = validateProducePartitionRecords(batch, 11);
      return validateProducedRecords(view, OPTIONS);
    }, RATE);
    const view = RecordBatch.wrap(batch);
    const payload = id === CompressionType.NONE ? view.recordsBytes : await decompress(id, view.recordsBytes);
    const scan = await rate(() => validateRecordsPayload(view, payload, OPTIONS), RATE);
    const nsHeader = 1e9 / header / n;
    const nsFull = 1e9 / full / n;
    console.log(
      `  ${name.padEnd(7)}${col((batch.length / 1024).toFixed(0), 8)}   ${col((header * mb).toFixed(0), 7)}  ${col(nsHeader.toFixed(1), 8)}     ${col((full * mb).toFixed(0), 7)}  ${col(nsFull.toFixed(1), 8)}     ${col((nsFull - nsHeader).toFixed(1), 7)}  ${col((1e9 / scan / n).toFixed(1), 7)}`,
    );
  }
}

/** A plain byte loop, printed so figures from a loaded machine can be told from slow code. */
function calibrate(): number {
  const buf = Buffer.alloc(256 * 1024, 7);
  let best = Infinity;
  let sum = 0;
  for (let r = 0; r < 20; r++) {
    const t = process.hrtime.bigint();
    for (let i = 0; i < buf.length; i++) sum += buf[i]!;
    best = Math.min(best, Number(process.hrtime.bigint() - t) / buf.length);
  }
  return sum > 0 ? best : NaN;
}

export default async function main(_args: string[]): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}; a plain byte loop runs at ${calibrate().toFixed(2)} ns/byte here`);
  await benchShape('realistic events', realisticRecords());
  await benchShape('tiny records', tinyRecords(10_000));
}
