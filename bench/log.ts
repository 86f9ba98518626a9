/**
 * `npm run bench -- log [options]`: the partition log (src/log/).
 *
 * 1. lookup   offset → (ledger, entry) lookups in an index of `--batches` batches over `--ledgers` ledgers
 *             (default 10^7 over 10^4). The index is built directly in memory, not by appending 10^7 real
 *             batches (that would take minutes of disk time and measure the store, not the index). Reports
 *             build time, memory, and lookup latency percentiles (each lookup timed alone) and the mean over
 *             a tight loop; also the time-index lookup (first batch with maxTimestamp ≥ t).
 * 2. append   append throughput through the log against the raw ledger store, same batches, same number of
 *             appends in flight, same durable store on the same disk, alternating rounds.
 * 3. rebuild  opening a partition of `--rebuild-batches` batches: once indexing every ledger from its
 *             batches (no snapshots), once from the index snapshots; reports both and the per-batch cost.
 *
 *   --batches=N --ledgers=N --lookups=N          lookup scenario (defaults 10000000, 10000, 1000000)
 *   --batch-bytes=N --concurrency=N --append-mib=N --rounds=N
 *                                                append scenario (defaults 1024, 64, 128, 3)
 *   --rebuild-batches=N --rebuild-ledgers=N      rebuild scenario (defaults 200000, 200)
 * 4. opens    first opens of `--opens` new partitions at once, as a Produce naming them all opens them (each
 *             reads its chain, creates a ledger, writes its chain, watches its head), then the same after a
 *             crash (their ledgers left open, so each open also fences and seals one); reports ms per open.
 *             A watch that replayed every key's history made this quadratic (45 s for 2,000 opens).
 *
 *   --opens=N                                    opens scenario (default 10000)
 *   --dir=PATH                                   where to write (default: a temp dir, removed after)
 *   --only=lookup,append,rebuild,opens
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32c } from '../protocol/crc32c.js';
import { buildRecordBatchSync } from '../protocol/records/builder.js';
import { LocalLedgerStore } from '../src/ledger/local-store.js';
import { PartitionLog } from '../src/log/partition-log.js';
import { IndexedLedger, PartitionIndex } from '../src/log/offset-index.js';
import { openSqliteMetadataStore } from '../src/metadata/index.js';

const MiB = 1024 * 1024;

interface Args {
  batches: number;
  ledgers: number;
  lookups: number;
  batchBytes: number;
  concurrency: number;
  appendMiB: number;
  rounds: number;
  rebuildBatches: number;
  rebuildLedgers: number;
  opens: number;
  dir: string | null;
  only: Set<string>;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const num = (name: string, def: number): number => (get(name) === undefined ? def : Number(get(name)));
  return {
    batches: num('batches', 10_000_000),
    ledgers: num('ledgers', 10_000),
    lookups: num('lookups', 1_000_000),
    batchBytes: num('batch-bytes', 1024),
    concurrency: num('concurrency', 64),
    appendMiB: num('append-mib', 128),
    rounds: num('rounds', 3),
    rebuildBatches: num('rebuild-batches', 200_000),
    rebuildLedgers: num('rebuild-ledgers', 200),
    opens: num('opens', 10_000),
    dir: get('dir') ?? null,
    only: new Set((get('only') ?? 'lookup,append,rebuild,opens').split(',')),
  };
}

const fmt = (n: number, digits = 1): string => n.toFixed(digits);

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** A record batch v2 of `bytes` bytes holding `records` records (one value each), CRC set, baseOffset 0. */
function batchTemplate(bytes: number, records = 1): Buffer {
  const b = Buffer.alloc(Math.max(bytes, 61 + 8 * records));
  b.writeInt32BE(b.length - 12, 8);
  b.writeInt32BE(-1, 12);
  b.writeInt8(2, 16);
  b.writeInt32BE(records - 1, 23);
  b.writeBigInt64BE(BigInt(Date.now()), 27);
  b.writeBigInt64BE(BigInt(Date.now()), 35);
  b.writeBigInt64BE(-1n, 43);
  b.writeInt16BE(-1, 51);
  b.writeInt32BE(-1, 53);
  b.writeInt32BE(records, 57);
  // One record per `records`, the last one padded to fill the batch: length, attrs, ts delta, offset delta,
  // key -1, value, headers 0 (zigzag varints; sizes below 64 fit one byte).
  let pos = 61;
  const valueOf = (i: number): number => (i === records - 1 ? b.length - pos - 7 : 1);
  for (let i = 0; i < records; i++) {
    const valueLen = valueOf(i);
    const body = 1 + 1 + 1 + 1 + varintSize(valueLen) + valueLen + 1;
    pos = writeZigzag(b, pos, body);
    b[pos++] = 0;
    b[pos++] = 0;
    pos = writeZigzag(b, pos, i);
    b[pos++] = 1; // key length -1
    pos = writeZigzag(b, pos, valueLen);
    pos += valueLen;
    b[pos++] = 0;
  }
  const batch = b.subarray(0, pos);
  batch.writeInt32BE(batch.length - 12, 8);
  batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
  return Buffer.from(batch);
}

function varintSize(v: number): number {
  let u = (v << 1) ^ (v >> 31);
  let n = 1;
  while (u >= 0x80) {
    u >>>= 7;
    n++;
  }
  return n;
}

function writeZigzag(b: Buffer, pos: number, v: number): number {
  let u = ((v << 1) ^ (v >> 31)) >>> 0;
  while (u >= 0x80) {
    b[pos++] = (u & 0x7f) | 0x80;
    u >>>= 7;
  }
  b[pos++] = u;
  return pos;
}

// ---------------------------------------------------------------------------------------------- lookup

function lookupScenario(a: Args): void {
  const perLedger = Math.floor(a.batches / a.ledgers);
  const t0 = performance.now();
  const index = new PartitionIndex();
  let offset = 0;
  let ts = 1_700_000_000_000;
  for (let l = 0; l < a.ledgers; l++) {
    const ledger = new IndexedLedger(l + 1, offset, 0, 0, perLedger);
    for (let e = 0; e < perLedger; e++) {
      // Batches of 1-10 records, timestamps increasing with jitter, an occasional gap (compaction).
      offset += e % 1000 === 999 ? 50 : 0;
      const last = offset + (e % 10);
      ts += (e * 7) % 13;
      ledger.push(last, ts - ((e * 31) % 5), 1024);
      offset = last + 1;
    }
    index.add(ledger);
    index.sealLast(0);
  }
  const buildMs = performance.now() - t0;
  const end = offset;
  const total = perLedger * a.ledgers;
  console.log(
    `lookup: index of ${total.toLocaleString()} batches over ${a.ledgers.toLocaleString()} ledgers built in ${fmt(buildMs, 0)} ms; ` +
      `index memory ${fmt(index.memoryBytes / MiB)} MiB (${fmt(index.memoryBytes / total, 2)} B/batch); ` +
      `heap used ${fmt(process.memoryUsage().heapUsed / MiB)} MiB, rss ${fmt(process.memoryUsage().rss / MiB)} MiB`,
  );
  // Random offsets (xorshift), timed one by one.
  let x = 0x9e3779b9;
  const rand = (): number => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 0x1_0000_0000;
  };
  const samples = new Float64Array(a.lookups);
  let sink = 0;
  for (let i = 0; i < 10_000; i++) sink += index.lookup(Math.floor(rand() * end))!.entryId; // warm up
  for (let i = 0; i < a.lookups; i++) {
    const target = Math.floor(rand() * end);
    const s = process.hrtime.bigint();
    const pos = index.lookup(target);
    samples[i] = Number(process.hrtime.bigint() - s) / 1000;
    sink += pos!.entryId;
  }
  samples.sort();
  const loopStart = performance.now();
  for (let i = 0; i < a.lookups; i++) sink += index.lookup(Math.floor(rand() * end))!.entryId;
  const meanUs = ((performance.now() - loopStart) * 1000) / a.lookups;
  console.log(
    `  offset lookup, ${a.lookups.toLocaleString()} random offsets: p50 ${fmt(percentile(samples, 50), 2)} µs, ` +
      `p99 ${fmt(percentile(samples, 99), 2)} µs, p99.9 ${fmt(percentile(samples, 99.9), 2)} µs, ` +
      `max ${fmt(samples[samples.length - 1]!, 1)} µs (each timed alone, timer overhead included); ` +
      `mean in a tight loop ${fmt(meanUs, 3)} µs`,
  );
  const tsSamples = new Float64Array(Math.min(a.lookups, 100_000));
  for (let i = 0; i < tsSamples.length; i++) {
    const target = 1_700_000_000_000 + Math.floor(rand() * (ts - 1_700_000_000_000));
    const s = process.hrtime.bigint();
    const pos = index.findByTimestamp(target, 0);
    tsSamples[i] = Number(process.hrtime.bigint() - s) / 1000;
    sink += pos ? pos.entryId : 0;
  }
  tsSamples.sort();
  console.log(
    `  time lookup (first batch with maxTimestamp ≥ t), ${tsSamples.length.toLocaleString()} random t: ` +
      `p50 ${fmt(percentile(tsSamples, 50), 2)} µs, p99 ${fmt(percentile(tsSamples, 99), 2)} µs, max ${fmt(tsSamples[tsSamples.length - 1]!, 1)} µs`,
  );
  if (sink === -1) console.log('');
}

// ---------------------------------------------------------------------------------------------- append

interface AppendRound {
  rawMBps: number;
  logMBps: number;
  rawBatchesPerS: number;
  logBatchesPerS: number;
  logP50Ms: number;
  logP99Ms: number;
  rawP50Ms: number;
  rawP99Ms: number;
}

async function driveAppends(
  count: number,
  concurrency: number,
  append: () => Promise<unknown>,
): Promise<{ ms: number; latencies: Float64Array }> {
  const latencies = new Float64Array(count);
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (issued < count) {
        const i = issued++;
        const s = performance.now();
        await append();
        latencies[i] = performance.now() - s;
      }
    }),
  );
  const ms = performance.now() - started;
  latencies.sort();
  return { ms, latencies };
}

async function appendRound(base: string, a: Args, round: number): Promise<AppendRound> {
  const template = batchTemplate(a.batchBytes, 4);
  const count = Math.floor((a.appendMiB * MiB) / template.length);
  // Raw ledger store: one ledger, the same bytes (a fresh copy per append, as the log needs).
  const rawDir = path.join(base, `raw-${round}`);
  const store = await LocalLedgerStore.open(rawDir);
  const writer = await store.create();
  const raw = await driveAppends(count, a.concurrency, () => writer.append(Buffer.from(template)));
  await store.close();
  fs.rmSync(rawDir, { recursive: true, force: true });
  // Through the log (ledgers roll at the default 50 000 entries).
  const logDir = path.join(base, `log-${round}`);
  const ledgers = await LocalLedgerStore.open(path.join(logDir, 'ledgers'));
  const metadata = await openSqliteMetadataStore(path.join(logDir, 'metadata'));
  const log = await PartitionLog.open({ topic: 'bench', partition: 0, ledgers, metadata, retentionCheckIntervalMs: 0 });
  const viaLog = await driveAppends(count, a.concurrency, () => log.append(Buffer.from(template)));
  if (log.highWatermark !== count * 4) throw new Error(`log high watermark ${log.highWatermark}, expected ${count * 4}`);
  await log.close();
  await ledgers.close();
  await metadata.close();
  fs.rmSync(logDir, { recursive: true, force: true });
  const bytes = count * template.length;
  return {
    rawMBps: bytes / MiB / (raw.ms / 1000),
    logMBps: bytes / MiB / (viaLog.ms / 1000),
    rawBatchesPerS: count / (raw.ms / 1000),
    logBatchesPerS: count / (viaLog.ms / 1000),
    rawP50Ms: percentile(raw.latencies, 50),
    rawP99Ms: percentile(raw.latencies, 99),
    logP50Ms: percentile(viaLog.latencies, 50),
    logP99Ms: percentile(viaLog.latencies, 99),
  };
}

async function appendScenario(base: string, a: Args): Promise<void> {
  const rounds: AppendRound[] = [];
  for (let r = 0; r < a.rounds; r++) rounds.push(await appendRound(base, a, r));
  console.log(
    `append: ${a.appendMiB} MiB of ${a.batchBytes}-byte batches (4 records), ${a.concurrency} in flight, durable (fsync before ack), ${a.rounds} rounds`,
  );
  for (const r of rounds) {
    console.log(
      `  raw ledger store ${fmt(r.rawMBps)} MB/s ${fmt(r.rawBatchesPerS, 0)} batches/s (p50 ${fmt(r.rawP50Ms, 2)} ms, p99 ${fmt(r.rawP99Ms, 2)} ms)` +
        ` | partition log ${fmt(r.logMBps)} MB/s ${fmt(r.logBatchesPerS, 0)} batches/s (p50 ${fmt(r.logP50Ms, 2)} ms, p99 ${fmt(r.logP99Ms, 2)} ms)` +
        ` → log/raw ${fmt((100 * r.logMBps) / r.rawMBps)}%`,
    );
  }
  const ratios = rounds.map((r) => r.logMBps / r.rawMBps).sort((x, y) => x - y);
  console.log(`  → median log/raw ${fmt(100 * ratios[Math.floor(ratios.length / 2)]!)}%`);
}

// --------------------------------------------------------------------------------------------- rebuild

async function rebuildScenario(base: string, a: Args): Promise<void> {
  const dir = path.join(base, 'rebuild');
  const open = async (indexSnapshots: boolean) => {
    const ledgers = await LocalLedgerStore.open(path.join(dir, 'ledgers'));
    const metadata = await openSqliteMetadataStore(path.join(dir, 'metadata'));
    const started = performance.now();
    const log = await PartitionLog.open({
      topic: 'bench',
      partition: 0,
      ledgers,
      metadata,
      indexSnapshots,
      retentionCheckIntervalMs: 0,
      config: { segmentEntries: Math.ceil(a.rebuildBatches / a.rebuildLedgers) },
    });
    const ms = performance.now() - started;
    return {
      log,
      ms,
      async close() {
        await log.close();
        await ledgers.close();
        await metadata.close();
      },
    };
  };
  // Fill: real appends, no snapshots.
  const template = batchTemplate(256, 4);
  const fill = await open(false);
  const fillStart = performance.now();
  let issued = 0;
  await Promise.all(
    Array.from({ length: 128 }, async () => {
      while (issued < a.rebuildBatches) {
        issued++;
        await fill.log.append(Buffer.from(template));
      }
    }),
  );
  const fillMs = performance.now() - fillStart;
  await fill.close();
  // Open 1: every ledger indexed from its batches (and snapshots written in the background, before close).
  const fromData = await open(true);
  const s1 = fromData.log.stats;
  await fromData.close();
  // Open 2: from the snapshots.
  const fromSnap = await open(true);
  const s2 = fromSnap.log.stats;
  await fromSnap.close();
  const n = a.rebuildBatches;
  console.log(
    `rebuild: ${n.toLocaleString()} batches of ${template.length} bytes over ${s1.ledgers - 1} ledgers (filled in ${fmt(fillMs / 1000)} s)`,
  );
  console.log(
    `  open indexing from batch headers (reads every batch): ${fmt(fromData.ms, 0)} ms ` +
      `(${s1.ledgersFromData} ledgers, ${fmt((fromData.ms * 1000) / n, 2)} µs/batch → ${fmt((fromData.ms * 1e4) / n, 0)} s per 10^7 batches)`,
  );
  console.log(
    `  open from index snapshots (16 bytes/batch): ${fmt(fromSnap.ms, 0)} ms ` +
      `(${s2.ledgersFromSnapshots} ledgers, ${fmt((fromSnap.ms * 1000) / n, 2)} µs/batch → ${fmt((fromSnap.ms * 1e4) / n, 1)} s per 10^7 batches)`,
  );
  fs.rmSync(dir, { recursive: true, force: true });
}

// --------------------------------------------------------------------------------------------- opens

async function opensScenario(base: string, a: Args): Promise<void> {
  const dir = path.join(base, 'opens');
  const n = a.opens;
  // A record a producer sends: the reopen after the crash reads it back (producer state) and indexes it.
  const template = buildRecordBatchSync([{ value: Buffer.from('touch') }]);
  const openAll = async () => {
    const ledgers = await LocalLedgerStore.open(path.join(dir, 'ledgers'));
    const metadata = await openSqliteMetadataStore(path.join(dir, 'metadata'));
    const started = performance.now();
    // Partitions of 100-partition topics, all at once: the partitions one Produce request names open concurrently.
    const logs = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        PartitionLog.open({ topic: `t${Math.floor(i / 100)}`, partition: i % 100, ledgers, metadata, retentionCheckIntervalMs: 0 }),
      ),
    );
    return { ledgers, metadata, logs, ms: performance.now() - started };
  };
  const fresh = await openAll();
  await Promise.all(fresh.logs.map((log) => log.append(Buffer.from(template))));
  // A crash: the logs are never closed, so every ledger is left open for the next opener to fence and seal.
  await fresh.ledgers.close();
  await fresh.metadata.close();
  const again = await openAll();
  await Promise.all(again.logs.map((log) => log.close()));
  await again.ledgers.close();
  await again.metadata.close();
  console.log(`opens: ${n.toLocaleString()} partitions opened at once`);
  console.log(`  first open (new chains): ${fmt(fresh.ms, 0)} ms, ${fmt(fresh.ms / n, 2)} ms/open`);
  console.log(`  after a crash (fence and seal an open ledger each): ${fmt(again.ms, 0)} ms, ${fmt(again.ms / n, 2)} ms/open`);
  fs.rmSync(dir, { recursive: true, force: true });
}

export default async function (argv: string[]): Promise<void> {
  const a = parseArgs(argv);
  const base = a.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'll-bench-log-'));
  fs.mkdirSync(base, { recursive: true });
  console.log(`partition log bench on ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, node ${process.version}, dir ${base}`);
  try {
    if (a.only.has('lookup')) lookupScenario(a);
    if (a.only.has('append')) await appendScenario(base, a);
    if (a.only.has('rebuild')) await rebuildScenario(base, a);
    if (a.only.has('opens')) await opensScenario(base, a);
  } finally {
    if (!a.dir) fs.rmSync(base, { recursive: true, force: true });
  }
}
