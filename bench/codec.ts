/**
 * `npm run bench -- codec`: throughput of the protocol codec on the hot path.
 *
 *  - decode + encode of a 1 MiB ProduceRequest (16 partitions × 64 KiB batches) and of a FetchResponse of
 *    the same size: the framing touches headers only, and batch bytes are sliced (decode) or referenced
 *    (encode), never copied;
 *  - then the record-batch, CRC32C and compression figures (bench/codec-records.ts).
 */
import { randomBytes } from 'node:crypto';
import { ProduceApi, createProduceRequest, createProduceRequestPartitionProduceData, createProduceRequestTopicProduceData } from '../protocol/messages/000-produce.gen.js';
import { FetchApi, createFetchResponse, createFetchResponseFetchableTopicResponse, createFetchResponsePartitionData } from '../protocol/messages/001-fetch.gen.js';
import { Reader } from '../protocol/wire/reader.js';
import { Writer } from '../protocol/wire/writer.js';

const PARTITIONS = 16;
const BATCH = 64 * 1024;

function measure(label: string, bytes: number, fn: () => void): void {
  for (let i = 0; i < 200; i++) fn(); // warm up
  const minMs = 1000;
  let iterations = 0;
  const start = process.hrtime.bigint();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 100; i++) fn();
    iterations += 100;
    elapsed = Number(process.hrtime.bigint() - start) / 1e6;
  }
  const gbps = (bytes * iterations) / (elapsed / 1000) / 1e9;
  const usPer = (elapsed * 1000) / iterations;
  console.log(`${label.padEnd(44)} ${gbps.toFixed(2).padStart(8)} GB/s   ${usPer.toFixed(2).padStart(8)} µs/op`);
}

function frameworkBenchmarks(): void {
  const batches = Array.from({ length: PARTITIONS }, () => randomBytes(BATCH));
  const total = PARTITIONS * BATCH;

  for (const version of [7, 11]) {
    const req = createProduceRequest({
      acks: -1,
      timeoutMs: 30_000,
      topicData: [createProduceRequestTopicProduceData({ name: 'bench', partitionData: batches.map((records, index) => createProduceRequestPartitionProduceData({ index, records })) })],
    });
    const w0 = new Writer();
    ProduceApi.request.encode(w0, req, version);
    const wire = w0.toBuffer();
    measure(`ProduceRequest v${version} decode (1 MiB)`, total, () => {
      const r = new Reader(wire);
      ProduceApi.request.decode(r, version);
      r.complete();
    });
    measure(`ProduceRequest v${version} encode (1 MiB)`, total, () => {
      const w = new Writer();
      ProduceApi.request.encode(w, req, version);
      w.chunks();
    });
    const decoded = ProduceApi.request.decode(new Reader(wire), version);
    const first = decoded.topicData[0]!.partitionData[0]!.records as Buffer;
    console.log(`  decoded batch is a slice of the request buffer: ${first.buffer === wire.buffer}`);
  }

  for (const version of [11, 16]) {
    const res = createFetchResponse({
      responses: [
        createFetchResponseFetchableTopicResponse({
          topic: 'bench',
          partitions: batches.map((b, partitionIndex) =>
            createFetchResponsePartitionData({ partitionIndex, highWatermark: 1000n, lastStableOffset: 1000n, logStartOffset: 0n, records: [b] }),
          ),
        }),
      ],
    });
    measure(`FetchResponse v${version} encode (1 MiB)`, total, () => {
      const w = new Writer();
      FetchApi.response.encode(w, res, version);
      w.chunks();
    });
    const w0 = new Writer();
    FetchApi.response.encode(w0, res, version);
    const wire = w0.toBuffer();
    measure(`FetchResponse v${version} decode (1 MiB)`, total, () => {
      const r = new Reader(wire);
      FetchApi.response.decode(r, version);
      r.complete();
    });
    const w1 = new Writer();
    FetchApi.response.encode(w1, res, version);
    const referenced = w1.chunks().filter((c) => batches.some((b) => b === c)).length;
    console.log(`  encoded response references ${referenced}/${PARTITIONS} stored batches without copying`);
  }
}

export default async function codec(args: string[]): Promise<void> {
  console.log(`node ${process.version}, ${process.arch}`);
  frameworkBenchmarks();
  if (args.includes('--framing-only')) return;
  const { benchRecords } = (await import('./codec-records.js')) as { benchRecords: () => Promise<void> };
  await benchRecords();
}
