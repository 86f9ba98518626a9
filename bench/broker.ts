/**
 * `npm run bench -- broker [options]`: a quick throughput check of one Ledgerline broker, started here
 * from the sources on an ephemeral port with a fresh data directory.
 *
 *   produce   1 KiB records in pre-built batches (the codec's builder, uncompressed), 16 partitions,
 *             acks=all, N connections each pipelining K requests; a request carries one batch for each
 *             of the connection's partitions. Request bodies are encoded once and sent again and again,
 *             so the client spends nothing per request but the socket write.
 *   consume   sessionless fetches of everything produced, from offset 0, over the same connections.
 *   limit     the machine's fsync'd sequential write rate, measured in the same run on the same disk
 *             with request-sized chunks (write + fsync each): what a durable-per-request log can reach.
 *
 * Figures are record payload bytes (what producers asked to store), in MiB/s.
 *
 * Options: --seconds S (produce duration, default 8), --connections N (4), --in-flight K per connection
 * (8), --partitions P (16), --record-bytes B (1024), --batch-records R (64), --fsync-seconds S (4).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { ProduceApi, type ProduceResponse } from '../protocol/messages/000-produce.gen.js';
import { buildRecordBatch, splitRecordBatches } from '../protocol/records/index.js';
import { encodeRequestBody, KafkaClient } from '../src/client/index.js';
import { positiveOption } from './lib/cli.js';
import { measureDisk } from './lib/limits.js';
import { ZERO_UUID } from '../protocol/wire/uuid.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;

interface Options {
  seconds: number;
  connections: number;
  inFlight: number;
  partitions: number;
  recordBytes: number;
  batchRecords: number;
  fsyncSeconds: number;
}

function options(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      seconds: { type: 'string' },
      connections: { type: 'string' },
      'in-flight': { type: 'string' },
      partitions: { type: 'string' },
      'record-bytes': { type: 'string' },
      'batch-records': { type: 'string' },
      'fsync-seconds': { type: 'string' },
    },
    strict: true,
  });
  const num = (name: string, fallback: number): number => positiveOption(values, name, fallback);
  return {
    seconds: num('seconds', 8),
    connections: Math.floor(num('connections', 4)),
    inFlight: Math.floor(num('in-flight', 8)),
    partitions: Math.floor(num('partitions', 16)),
    recordBytes: Math.floor(num('record-bytes', 1024)),
    batchRecords: Math.floor(num('batch-records', 64)),
    fsyncSeconds: num('fsync-seconds', 4),
  };
}

/** Starts `ledgerline start` from the sources; resolves with the port once it logs that it listens. */
function startBroker(dataDir: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(REPO, 'src/cli.ts'), 'start', '--set', 'listeners=PLAINTEXT://127.0.0.1:0', '--set', `log.dirs=${dataDir}`],
    { cwd: REPO, env: { ...process.env, LEDGERLINE_LOG_FORMAT: 'json', LEDGERLINE_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('broker did not start within 60 s')), 60_000);
    child.once('exit', (code) => reject(new Error(`broker exited with ${code} during start`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (!line.includes('"Ledgerline started"')) return;
      clearTimeout(timer);
      const { listeners } = JSON.parse(line) as { listeners: string[] };
      resolve({ child, port: Number(/:(\d+)$/.exec(listeners[0]!)![1]) });
    });
  });
}

function payload(size: number): Buffer {
  // Base64 text: compressible like typical payloads (irrelevant here: batches are not compressed).
  return Buffer.from(randomBytes(size).toString('base64').slice(0, size), 'latin1');
}

function mibps(bytes: number, seconds: number): string {
  return (bytes / MiB / seconds).toFixed(1);
}

export default async function broker(args: string[]): Promise<void> {
  const o = options(args);
  const dataDir = mkdtempSync(join(tmpdir(), 'ledgerline-bench-broker-'));
  const { child, port } = await startBroker(dataDir);
  const bootstrap = `127.0.0.1:${port}`;
  const client = await KafkaClient.connect({ bootstrap, clientId: 'bench-broker', connectionsPerBroker: o.connections, requestTimeoutMs: 60_000 });
  try {
    const topic = 'bench-broker';
    const [created] = await client.createTopics([{ name: topic, numPartitions: o.partitions }]);
    if (created!.errorCode !== 0) throw new Error(`cannot create ${topic}: ${created!.errorMessage}`);
    await client.waitForTopics([topic]);

    // One pre-built batch; every request reuses its bytes (the broker copies what it receives).
    const batch = await buildRecordBatch(Array.from({ length: o.batchRecords }, () => ({ value: payload(o.recordBytes) })));
    const batchPayload = o.batchRecords * o.recordBytes;
    console.log(`broker ${bootstrap}, data in ${dataDir}`);
    console.log(`produce: ${o.partitions} partitions, ${o.connections} connections × ${o.inFlight} in flight, batches of ${o.batchRecords} × ${o.recordBytes} B (${(batch.length / 1024).toFixed(1)} KiB), acks=all, ${o.seconds} s`);

    // ---- produce
    let acknowledgedBatches = 0;
    const latencies: number[] = [];
    const t0 = performance.now();
    const end = t0 + o.seconds * 1000;
    await Promise.all(
      Array.from({ length: o.connections }, async (_, lane) => {
        const mine = Array.from({ length: o.partitions }, (_, p) => p).filter((p) => p % o.connections === lane);
        if (mine.length === 0) return;
        const conn = await client.cluster.connectionTo(1, lane);
        const version = conn.versionFor(ProduceApi, { max: 12 }); // v13 names topics by id only (KIP-516)
        const body = encodeRequestBody(ProduceApi, version, ProduceApi.request.create({ acks: -1, timeoutMs: 30_000, transactionalId: null, topicData: [{ name: topic, topicId: ZERO_UUID, partitionData: mine.map((index) => ({ index, records: batch })) }] }));
        const pipeline = async (): Promise<void> => {
          while (performance.now() < end) {
            const s = performance.now();
            const res: ProduceResponse = await conn.requestEncoded(ProduceApi, version, body);
            latencies.push(performance.now() - s);
            for (const p of res.responses[0]!.partitionResponses) if (p.errorCode !== 0) throw new Error(`partition ${p.index}: error ${p.errorCode} ${p.errorMessage ?? ''}`);
            acknowledgedBatches += mine.length;
          }
        };
        await Promise.all(Array.from({ length: o.inFlight }, pipeline));
      }),
    );
    const produceSeconds = (performance.now() - t0) / 1000;
    const producedBytes = acknowledgedBatches * batchPayload;
    latencies.sort((a, b) => a - b);
    const pct = (q: number): string => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(1);

    // ---- consume everything back
    const ends = await client.listOffsets(Array.from({ length: o.partitions }, (_, partition) => ({ topic, partition, timestamp: -1n })));
    const next = new Map<number, bigint>(ends.map((e) => [e.partition, 0n]));
    let fetchedBatchBytes = 0;
    let fetchedRecords = 0;
    const c0 = performance.now();
    await Promise.all(
      Array.from({ length: o.connections }, async (_, lane) => {
        const mine = ends.filter((e) => e.partition % o.connections === lane);
        for (;;) {
          const todo = mine.filter((e) => next.get(e.partition)! < e.offset);
          if (todo.length === 0) return;
          const results = await client.fetch(
            todo.map((e) => ({ topic, partition: e.partition, offset: next.get(e.partition)!, maxBytes: 4 * MiB })),
            { maxWaitMs: 0, minBytes: 0, maxBytes: 64 * MiB, lane },
          );
          for (const r of results) {
            if (r.errorCode !== 0) throw new Error(`fetch ${r.partition}: error ${r.errorCode}`);
            const batches = splitRecordBatches(r.records ?? Buffer.alloc(0), { allowPartialTail: true });
            for (const b of batches) {
              fetchedBatchBytes += b.sizeInBytes;
              fetchedRecords += b.recordCount;
            }
            const last = batches[batches.length - 1];
            if (last) next.set(r.partition, last.lastOffset + 1n);
          }
        }
      }),
    );
    const consumeSeconds = (performance.now() - c0) / 1000;
    const consumedBytes = fetchedRecords * o.recordBytes;

    // ---- the disk's durable sequential write rate, same disk, request-sized chunks
    const requestBytes = batch.length * Math.ceil(o.partitions / o.connections);
    const disk = await measureDisk({ dir: tmpdir(), sample: batch, chunkBytes: requestBytes, maxBytes: 2048 * MiB, durationMs: o.fsyncSeconds * 1000 });
    const limit = disk.syncEachChunk.mibPerSec;
    const produceRate = producedBytes / MiB / produceSeconds;

    console.log('');
    console.log(`produce   ${mibps(producedBytes, produceSeconds)} MiB/s  (${(acknowledgedBatches * o.batchRecords / produceSeconds).toFixed(0)} records/s, ${(producedBytes / MiB).toFixed(0)} MiB in ${produceSeconds.toFixed(1)} s; request latency p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms)`);
    console.log(`consume   ${mibps(consumedBytes, consumeSeconds)} MiB/s  (${(fetchedRecords / consumeSeconds).toFixed(0)} records/s, ${(fetchedBatchBytes / MiB).toFixed(0)} MiB of batches in ${consumeSeconds.toFixed(1)} s)`);
    console.log(`disk      ${limit.toFixed(1)} MiB/s written with an fsync per ${(disk.chunkBytes / 1024).toFixed(0)} KiB chunk (fsync p50 ${disk.syncEachChunk.fsyncP50Ms.toFixed(2)} ms, p99 ${disk.syncEachChunk.fsyncP99Ms.toFixed(2)} ms); ${disk.syncAtEnd.mibPerSec.toFixed(1)} MiB/s with one fsync at the end`);
    console.log(`ratio     produce / fsync'd sequential write = ${(produceRate / limit).toFixed(2)}`);
    if (fetchedRecords !== acknowledgedBatches * o.batchRecords) {
      throw new Error(`consumed ${fetchedRecords} records, but ${acknowledgedBatches * o.batchRecords} were acknowledged`);
    }
  } finally {
    await client.close();
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
