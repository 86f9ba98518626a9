/**
 * Codec benchmark for record batches: CRC-32C (native and software), each compression codec on a realistic
 * ~1 MiB batch of 1 KiB records, and the batch operations of the produce and fetch paths.
 *
 * Throughput is of uncompressed bytes (1 MB = 10^6 bytes, 1 GB = 10^9 bytes), one operation at a time: the
 * best of several timed windows after a warm-up (see bench/lib/rate.ts). Async codecs are awaited one at a time, so
 * their figure includes the hop to the libuv thread pool.
 *
 *   npx tsx -e "import('./bench/codec-records.ts').then(m => m.benchRecords())"
 */
import { CompressionType, compress, compressSync, decompress, decompressSync, hasSyncCodec } from '../protocol/compression/index.js';
import type { CompressionTypeId } from '../protocol/compression/index.js';
import { crc32cNative, crc32cSoftware, crcImplementation } from '../protocol/crc32c.js';
import {
  RecordBatch,
  buildRecordBatch,
  buildRecordBatchSync,
  encodeRecordsPayload,
  validateProducePartitionRecords,
} from '../protocol/records/index.js';
import type { RecordInput } from '../protocol/records/index.js';
import { rate } from './lib/rate.js';

/** Deterministic pseudo-random numbers (mulberry32), so every run encodes the same batch. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS =
  'order payment shipped cart checkout user session login logout search product page view click add remove update cancel refund warehouse region eu-west us-east ap-south status ok error timeout retry'.split(
    ' ',
  );

/**
 * ~1000 records of ~1 KiB: JSON events with repeated field names, ids, timestamps, free text and a random
 * token, compressing about as well as typical application events do.
 */
export function realisticRecords(count = 1000, seed = 42): RecordInput[] {
  const rnd = prng(seed);
  const pick = () => WORDS[Math.floor(rnd() * WORDS.length)]!;
  const t0 = 1_700_000_000_000;
  const records: RecordInput[] = [];
  for (let i = 0; i < count; i++) {
    const userId = `user-${Math.floor(rnd() * 5000)}`;
    const token = Array.from({ length: 32 }, () => Math.floor(rnd() * 16).toString(16)).join('');
    const event: Record<string, unknown> = {
      eventId: `${t0 + i}-${Math.floor(rnd() * 1e9)}`,
      type: pick(),
      userId,
      sessionToken: token,
      timestamp: t0 + i * 3,
      amount: Math.round(rnd() * 100000) / 100,
      currency: rnd() < 0.7 ? 'EUR' : 'USD',
      items: Array.from({ length: 3 + Math.floor(rnd() * 4) }, () => ({
        sku: `SKU-${Math.floor(rnd() * 100000)}`,
        qty: 1 + Math.floor(rnd() * 5),
        price: Math.round(rnd() * 10000) / 100,
      })),
      note: Array.from({ length: 12 + Math.floor(rnd() * 12) }, pick).join(' '),
    };
    let value = JSON.stringify(event);
    while (value.length < 1000) value += ' ' + pick();
    records.push({
      key: userId,
      value: value.slice(0, 1024),
      headers: [{ key: 'content-type', value: 'application/json' }],
      timestamp: t0 + i * 3,
    });
  }
  return records;
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits).padStart(9);
}

async function benchCrc(): Promise<void> {
  console.log(`CRC-32C (implementation in use: ${crcImplementation.kind})`);
  const rnd = prng(7);
  for (const size of [16 * 1024, 1024 * 1024]) {
    const buf = Buffer.alloc(size);
    for (let i = 0; i < size; i++) buf[i] = Math.floor(rnd() * 256);
    const native = crc32cNative ? ((await rate(() => crc32cNative!(buf))) * size) / 1e9 : NaN;
    const software = ((await rate(() => crc32cSoftware(buf))) * size) / 1e9;
    console.log(`  ${(size / 1024).toString().padStart(5)} KiB buffers   native ${fmt(native, 2)} GB/s   software ${fmt(software, 2)} GB/s`);
  }
}

const CODECS: Array<[string, CompressionTypeId]> = [
  ['gzip', CompressionType.GZIP],
  ['snappy', CompressionType.SNAPPY],
  ['lz4', CompressionType.LZ4],
  ['zstd', CompressionType.ZSTD],
];

async function benchCodecs(payload: Buffer): Promise<void> {
  const mb = payload.length / 1e6;
  console.log(`Codecs on a ${(payload.length / 1024).toFixed(0)} KiB records payload (1000 records of ~1 KiB)`);
  console.log('  codec     ratio   compress MB/s   decompress MB/s   mode');
  for (const [name, id] of CODECS) {
    const compressed = await compress(id, payload);
    const check = await decompress(id, compressed, { maxOutputBytes: payload.length });
    if (!check.equals(payload)) throw new Error(`${name} did not round-trip`);
    const ratio = payload.length / compressed.length;
    if (hasSyncCodec(id)) {
      const c = (await rate(() => compressSync(id, payload))) * mb;
      const d = (await rate(() => decompressSync(id, compressed, { maxOutputBytes: payload.length }))) * mb;
      console.log(`  ${name.padEnd(8)}${fmt(ratio, 2)}  ${fmt(c)}        ${fmt(d)}          sync`);
    }
    if (id === CompressionType.GZIP || id === CompressionType.ZSTD) {
      const c = (await rate(() => compress(id, payload))) * mb;
      const d = (await rate(() => decompress(id, compressed, { maxOutputBytes: payload.length }))) * mb;
      console.log(`  ${name.padEnd(8)}${fmt(ratio, 2)}  ${fmt(c)}        ${fmt(d)}          async (thread pool)`);
    }
  }
}

async function benchBatches(records: RecordInput[]): Promise<void> {
  console.log('Batch operations (1000 records of ~1 KiB)');
  const plain = buildRecordBatchSync(records);
  const mb = plain.length / 1e6;
  const build = await rate(() => buildRecordBatchSync(records));
  console.log(`  build uncompressed batch            ${fmt(build, 0)} batches/s  ${fmt(build * mb)} MB/s`);
  const buildLz4 = await rate(() => buildRecordBatchSync(records, { compression: CompressionType.LZ4 }));
  console.log(`  build lz4 batch                     ${fmt(buildLz4, 0)} batches/s  ${fmt(buildLz4 * mb)} MB/s`);
  const buildZstd = await rate(() => buildRecordBatch(records, { compression: CompressionType.ZSTD }));
  console.log(`  build zstd batch (async)            ${fmt(buildZstd, 0)} batches/s  ${fmt(buildZstd * mb)} MB/s`);
  const produced = Buffer.from(plain);
  const validate = await rate(() => validateProducePartitionRecords(produced, 9).setPartitionLeaderEpoch(7));
  console.log(`  produce path: frame + checks + CRC  ${fmt(validate, 0)} batches/s  ${fmt((validate * mb) / 1000, 2)} GB/s`);
  const lz4Batch = buildRecordBatchSync(records, { compression: CompressionType.LZ4 });
  const lz4Validate = await rate(() => validateProducePartitionRecords(lz4Batch, 9));
  console.log(
    `  produce path, lz4 batch (${(lz4Batch.length / 1024).toFixed(0)} KiB)     ${fmt(lz4Validate, 0)} batches/s  ${fmt(lz4Validate * mb)} MB/s of records`,
  );
  const view = RecordBatch.wrap(plain);
  const iterate = await rate(() => view.records().toArray());
  console.log(`  decode records, uncompressed        ${fmt(iterate, 0)} batches/s  ${fmt(iterate * records.length / 1e6, 2)} M records/s`);
  const iterateLz4 = await rate(() => RecordBatch.wrap(lz4Batch).records().toArray());
  console.log(`  decode records, lz4                 ${fmt(iterateLz4, 0)} batches/s  ${fmt(iterateLz4 * records.length / 1e6, 2)} M records/s`);
}

export async function benchRecords(): Promise<void> {
  await benchCrc();
  const records = realisticRecords();
  await benchCodecs(encodeRecordsPayload(records));
  await benchBatches(records);
}

export default async function main(_args: string[]): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}`);
  await benchRecords();
}
