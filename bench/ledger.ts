/**
 * `npm run bench -- ledger [options]`: the local ledger store against the machine's limit, measured in the
 * same run on the same disk.
 *
 *   --dir=PATH            where to write (default: a fresh directory under the OS temp dir, removed after)
 *   --entry-bytes=N       entry size (default 16384)
 *   --appenders=N         concurrent appenders on the single ledger (default 64)
 *   --write-mib=N         bytes written by each round of a write scenario (default 128)
 *   --rounds=N            rounds per write scenario, each store run between two limit runs (default 5)
 *   --ledgers=N           ledgers in the many-ledger scenario (default 1000)
 *   --read-mib=N          size of the catch-up read (default 1024)
 *   --recovery-mib=N      size of the store restarted in the recovery scenario (default 2048)
 *   --only=a,b            run only some of: single, many, read, recovery
 *
 * Limit = a plain loop over node:fs (writeSync of one group-sized buffer, then fdatasyncSync) writing the
 * same number of bytes with the group size the store actually formed (bytes per fsync). For reads, the limit
 * is a plain sequential read of the same segment files in 1 MiB reads.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { LocalLedgerStore } from '../src/ledger/local-store.js';
import type { LedgerWriter } from '../src/ledger/types.js';

const MiB = 1024 * 1024;

interface Args {
  dir: string | null;
  entryBytes: number;
  appenders: number;
  writeMiB: number;
  ledgers: number;
  readMiB: number;
  recoveryMiB: number;
  only: Set<string>;
  rounds: number;
  fillChild: string | null;
}

function parseArgs(argv: string[]): Args {
  const get = (name: string): string | undefined => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const num = (name: string, def: number): number => {
    const v = get(name);
    return v === undefined ? def : Number(v);
  };
  return {
    dir: get('dir') ?? null,
    entryBytes: num('entry-bytes', 16384),
    appenders: num('appenders', 64),
    writeMiB: num('write-mib', 128),
    ledgers: num('ledgers', 1000),
    readMiB: num('read-mib', 1024),
    recoveryMiB: num('recovery-mib', 2048),
    rounds: num('rounds', 5),
    only: new Set((get('only') ?? 'single,many,read,recovery').split(',')),
    fillChild: get('fill-child') ?? null,
  };
}

function payload(bytes: number): Buffer {
  const b = Buffer.allocUnsafe(bytes);
  b.fill(0x5a);
  for (let i = 0; i + 4 <= bytes; i += 4) b.writeUInt32LE((i * 2654435761) >>> 0, i);
  return b;
}

function mbps(bytes: number, ms: number): number {
  return bytes / MiB / (ms / 1000);
}

function fmt(n: number, digits = 1): string {
  return n.toFixed(digits);
}

/** The machine's limit: write `total` bytes in `group`-byte writes, fdatasync after each. */
function writeLimit(dir: string, total: number, group: number): number {
  const file = path.join(dir, 'limit.bin');
  const fd = fs.openSync(file, 'w+');
  const buf = payload(Math.max(1, Math.round(group)));
  const started = performance.now();
  let pos = 0;
  while (pos < total) {
    const n = Math.min(buf.length, total - pos);
    fs.writeSync(fd, buf, 0, n, pos);
    fs.fdatasyncSync(fd);
    pos += n;
  }
  const ms = performance.now() - started;
  fs.closeSync(fd);
  fs.unlinkSync(file);
  return mbps(total, ms);
}

/**
 * The same loop over Node's asynchronous fs API (libuv thread pool), as the store uses: this separates the
 * cost of asynchronous I/O on this machine from the store's own overhead.
 */
async function writeLimitAsync(dir: string, total: number, group: number): Promise<number> {
  const file = path.join(dir, 'limit-async.bin');
  const fd = fs.openSync(file, 'w+');
  const buf = payload(Math.max(1, Math.round(group)));
  const write = (n: number, pos: number): Promise<void> =>
    new Promise((resolve, reject) => fs.write(fd, buf, 0, n, pos, (err) => (err ? reject(err) : resolve())));
  const sync = (): Promise<void> => new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
  const started = performance.now();
  let pos = 0;
  while (pos < total) {
    const n = Math.min(buf.length, total - pos);
    await write(n, pos);
    await sync();
    pos += n;
  }
  const ms = performance.now() - started;
  fs.closeSync(fd);
  fs.unlinkSync(file);
  return mbps(total, ms);
}

async function appendLoop(writer: LedgerWriter, data: Buffer, until: () => boolean): Promise<void> {
  while (!until()) await writer.append(data);
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

interface WriteRound {
  storeMBps: number;
  limitMBps: number;
  asyncLimitMBps: number;
  bytesPerFsync: number;
  entriesPerFsync: number;
}

/**
 * One round: `ledgers` ledgers with `perLedger` concurrent appenders each write `writeMiB` through a fresh
 * store, sandwiched between two runs of the plain-fs limit writing the same bytes with the same bytes per
 * fsync (the group size the store formed in the previous round, or this one's for the first). The disk
 * and cores are shared, so the ratio uses the mean of the two limit runs around the store run.
 */
async function writeRound(base: string, a: Args, ledgers: number, perLedger: number, groupHint: number | null): Promise<WriteRound> {
  const dir = path.join(base, 'write');
  const before = groupHint === null ? null : writeLimit(base, a.writeMiB * MiB, groupHint);
  const store = await LocalLedgerStore.open(dir);
  const writers = await Promise.all(Array.from({ length: ledgers }, () => store.create()));
  const data = payload(a.entryBytes);
  const total = a.writeMiB * MiB;
  let issued = 0;
  const s0 = { ...store.stats };
  const started = performance.now();
  await Promise.all(
    writers.flatMap((w) =>
      Array.from({ length: perLedger }, () =>
        appendLoop(w, data, () => {
          if (issued >= total) return true;
          issued += data.length;
          return false;
        }),
      ),
    ),
  );
  const ms = performance.now() - started;
  const written = store.stats.bytesAppended - s0.bytesAppended;
  const fsyncs = store.stats.fsyncs - s0.fsyncs;
  const entries = store.stats.entriesAppended - s0.entriesAppended;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const after = writeLimit(base, written, written / fsyncs);
  const limitMBps = before === null ? after : (before + after) / 2;
  const asyncLimitMBps = await writeLimitAsync(base, written, written / fsyncs);
  return { storeMBps: mbps(written, ms), limitMBps, asyncLimitMBps, bytesPerFsync: written / fsyncs, entriesPerFsync: entries / fsyncs };
}

/** Alternates store and limit rounds (the disk is shared and noisy) and reports each round and the median ratio. */
async function writeScenario(label: string, base: string, a: Args, ledgers: number, perLedger: number, target: number): Promise<void> {
  const rounds: WriteRound[] = [];
  for (let r = 0; r < a.rounds; r++) rounds.push(await writeRound(base, a, ledgers, perLedger, rounds.at(-1)?.bytesPerFsync ?? null));
  const ratios = rounds.map((r) => (100 * r.storeMBps) / r.limitMBps);
  const detail = rounds
    .map((r) => `${fmt(r.storeMBps, 0)}/${fmt(r.limitMBps, 0)}/${fmt(r.asyncLimitMBps, 0)} @ ${fmt(r.bytesPerFsync / 1024, 0)} KiB, ${fmt(r.entriesPerFsync, 0)} entries per fsync`)
    .join('; ');
  console.log(`${label}, ${a.writeMiB} MiB per round; MB/s store/limit/async-fs limit: ${detail}`);
  console.log(
    `  → median ${fmt(median(ratios))}% of the limit (target ≥ ${target}%), ` +
      `${fmt(median(rounds.map((r) => (100 * r.storeMBps) / r.asyncLimitMBps)))}% of the same loop on Node's async fs; ` +
      `store median ${fmt(median(rounds.map((r) => r.storeMBps)))} MB/s`,
  );
}

/** Fills a store with one ledger of `bytes` (fast: non-durable policy), returns its id. */
async function fill(dir: string, bytes: number, entryBytes: number): Promise<number> {
  const store = await LocalLedgerStore.open(dir, { flush: { messages: Infinity } });
  const writer = await store.create();
  const data = payload(entryBytes);
  let issued = 0;
  await Promise.all(
    Array.from({ length: 32 }, () =>
      appendLoop(writer, data, () => {
        if (issued >= bytes) return true;
        issued += data.length;
        return false;
      }),
    ),
  );
  await store.close();
  return writer.ledgerId;
}

async function catchUpRead(base: string, a: Args): Promise<void> {
  const dir = path.join(base, 'read');
  const total = a.readMiB * MiB;
  const ledgerId = await fill(dir, total, a.entryBytes);
  // Limit: plain sequential 1 MiB reads of the same segment files.
  const segs = fs.readdirSync(dir).filter((n) => n.endsWith('.seg'));
  const buf = Buffer.allocUnsafe(MiB);
  let limitBytes = 0;
  const l0 = performance.now();
  for (const s of segs) {
    const fd = fs.openSync(path.join(dir, s), 'r');
    let pos = 0;
    for (;;) {
      const n = fs.readSync(fd, buf, 0, MiB, pos);
      if (n === 0) break;
      pos += n;
      limitBytes += n;
    }
    fs.closeSync(fd);
  }
  const limit = mbps(limitBytes, performance.now() - l0);

  for (const perRead of [MiB, 8 * MiB]) {
    // A fresh store each pass: the tail cache is empty, every entry comes from the segment files.
    const store = await LocalLedgerStore.open(dir);
    const rssBefore = process.memoryUsage().rss;
    let peak = rssBefore;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 5);
    const meta = await store.getMetadata(ledgerId);
    let next = 0;
    let bytes = 0;
    const started = performance.now();
    while (next <= meta.lastAddConfirmed) {
      const entries = await store.read(ledgerId, next, meta.lastAddConfirmed, { maxBytes: perRead });
      for (const e of entries) bytes += e.data.length;
      next = entries[entries.length - 1]!.entryId + 1;
    }
    const ms = performance.now() - started;
    clearInterval(sampler);
    peak = Math.max(peak, process.memoryUsage().rss);
    await store.close();
    console.log(
      `catch-up read of ${fmt(bytes / MiB, 0)} MiB (${meta.lastAddConfirmed + 1} entries, ${perRead / MiB} MiB per read, page cache warm): ` +
        `store ${fmt(mbps(bytes, ms))} MB/s; plain sequential read ${fmt(limit)} MB/s → ${fmt((100 * mbps(bytes, ms)) / limit)}%; ` +
        `RSS ${fmt(rssBefore / MiB, 0)} MiB before, peak ${fmt(peak / MiB, 0)} MiB during (+${fmt((peak - rssBefore) / MiB, 0)} MiB)`,
    );
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

async function recovery(base: string, a: Args): Promise<void> {
  const dir = path.join(base, 'recovery');
  // A child process fills the store with 100 ledgers and is killed with SIGKILL (no clean close). It stops
  // 10% of a segment short of a multiple of the segment size, so the active segment recovery must scan is
  // nearly full (the worst case; rolled segments are loaded from their index files).
  const segmentMiB = 256;
  const fillMiB = Math.max(1, a.recoveryMiB - Math.round(segmentMiB / 10));
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(import.meta.dirname, 'main.ts'), 'ledger', `--fill-child=${dir}`, `--write-mib=${fillMiB}`, `--entry-bytes=${a.entryBytes}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('filled')) {
        child.kill('SIGKILL');
        resolve();
      }
    });
    child.on('exit', (code) => (out.includes('filled') ? resolve() : reject(new Error(`fill child exited with ${code}`))));
  });
  await new Promise((r) => child.once('exit', r));
  const onDisk = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
  const activeMiB = fs.statSync(path.join(dir, fs.readdirSync(dir).filter((n) => n.endsWith('.seg')).sort().at(-1)!)).size / MiB;
  let store = await LocalLedgerStore.open(dir);
  const crashMs = store.stats.recoveryMs;
  const ledgers = (await store.list()).length;
  await store.close();
  store = await LocalLedgerStore.open(dir);
  const cleanMs = store.stats.recoveryMs;
  await store.close();
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    `restart of a ${fmt(onDisk / MiB / 1024, 2)} GiB store (${ledgers} ledgers, ${a.entryBytes} B entries): ` +
      `after SIGKILL ${fmt(crashMs, 0)} ms (active segment of ${fmt(activeMiB, 0)} MiB scanned); after a clean close ${fmt(cleanMs, 0)} ms`,
  );
}

/** Child mode of the recovery scenario: fill, report, wait to be killed. */
async function fillChild(dir: string, a: Args): Promise<void> {
  const store = await LocalLedgerStore.open(dir, { flush: { messages: Infinity } });
  const writers = await Promise.all(Array.from({ length: 100 }, () => store.create()));
  const data = payload(a.entryBytes);
  const total = a.writeMiB * MiB;
  let issued = 0;
  await Promise.all(
    writers.map((w) =>
      appendLoop(w, data, () => {
        if (issued >= total) return true;
        issued += data.length;
        return false;
      }),
    ),
  );
  // Die without closing (the parent sends SIGKILL): the data is in the page cache, so a process crash
  // loses nothing, but no checkpoint or segment index was written for the last segments.
  process.stdout.write('filled\n');
  await new Promise(() => undefined);
}

export default async function main(argv: string[]): Promise<void> {
  const a = parseArgs(argv);
  if (a.fillChild) return fillChild(a.fillChild, a);
  const base = a.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'ledgerline-bench-'));
  fs.mkdirSync(base, { recursive: true });
  console.log(`ledger store bench in ${base} (node ${process.version}, ${os.cpus().length} cores)`);
  try {
    if (a.only.has('single')) await writeScenario(`one ledger, ${a.appenders} concurrent appenders, ${a.entryBytes} B entries`, base, a, 1, a.appenders, 70);
    if (a.only.has('many')) await writeScenario(`${a.ledgers} ledgers appended concurrently (one appender each), ${a.entryBytes} B entries`, base, a, a.ledgers, 1, 50);
    if (a.only.has('read')) await catchUpRead(base, a);
    if (a.only.has('recovery')) await recovery(base, a);
  } finally {
    if (!a.dir) fs.rmSync(base, { recursive: true, force: true });
  }
}
