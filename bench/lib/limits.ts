/**
 * The machine's limits, measured in the same run as the brokers so the figures can be read against them:
 *
 *   loopback TCP   this process writes request-sized chunks over N connections to a trivial sink in a
 *                  child process that only counts bytes: the most a client here can push to any broker;
 *   loopback TLS   the same over TLS with the brokers' certificate (`compare --security`): both ends encrypt
 *                  in Node, so it bounds what a SASL_SSL listener can take from this load generator;
 *   disk           the workload's own batch bytes, written sequentially to a file in the directory the
 *                  brokers keep their data in (same disk), once with an fsync after every request-sized
 *                  chunk (durable-per-request, one writer) and once with a single fsync at the end
 *                  (page-cache speed, what an unsynced log sees), and where the file system allows it once
 *                  with O_DIRECT writes (the chunk rounded up to 4 KiB) and an fdatasync after each, as the
 *                  local ledger store appends by default (src/ledger/direct-file.ts); with `coldRead` (`compare --disk-read-limit`)
 *                  the second file is read back sequentially in 1 MiB reads after the page cache is dropped:
 *                  the most a catch-up read of a backlog larger than the page cache can get from this disk.
 *
 * Each measurement is bounded by a duration and a byte count.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import type { TLSSocket } from 'node:tls';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIRECT_IO_ALIGN, alignedBuffer, directIoAvailable } from '../../src/ledger/direct-file.js';
import { dropPageCache } from './page-cache.js';
import { latencyHistogram, recordMs, summarize } from './stats.js';

export interface LoopbackResult {
  connections: number;
  chunkBytes: number;
  seconds: number;
  bytes: number;
  mibPerSec: number;
}

export interface DiskResult {
  dir: string;
  chunkBytes: number;
  /** Write + fsync after each chunk. */
  syncEachChunk: { bytes: number; seconds: number; mibPerSec: number; fsyncP50Ms: number; fsyncP99Ms: number };
  /** Writes, then one fsync. */
  syncAtEnd: { bytes: number; seconds: number; mibPerSec: number };
  /** O_DIRECT writes with an fdatasync after each chunk; absent where the file system refuses O_DIRECT. */
  directSyncEachChunk?: { bytes: number; seconds: number; mibPerSec: number; fsyncP50Ms: number; fsyncP99Ms: number };
  /** The file of `syncAtEnd` read back with the page cache dropped first (`coldRead`). */
  coldRead?: { bytes: number; seconds: number; mibPerSec: number; readBytes: number };
}

export interface MachineLimits {
  loopback: LoopbackResult;
  /** `compare --security`: the loopback over TLS, and the version and cipher suite negotiated. */
  loopbackTls?: LoopbackResult & { tls: { protocol: string | null; cipher: string } };
  disk: DiskResult;
}

/** A TLS sink: its key and certificate chain files (PEM), and the CA a client trusts it by. */
export interface SinkTls {
  keyPath: string;
  certPath: string;
  ca: string;
}

// A sink that counts what it receives and reports it when asked on stdin; over TLS when SINK_KEY and SINK_CERT
// name PEM files. Plain JS: runs with `node -e`.
const SINK = `
const net = require('node:net');
const fs = require('node:fs');
let bytes = 0, first = 0n, last = 0n;
const tls = process.env.SINK_KEY ? { key: fs.readFileSync(process.env.SINK_KEY), cert: fs.readFileSync(process.env.SINK_CERT) } : null;
const srv = (tls ? require('node:tls').createServer.bind(null, tls) : net.createServer)((s) => {
  s.on('data', (c) => { const t = process.hrtime.bigint(); if (first === 0n) first = t; last = t; bytes += c.length; });
  s.on('error', () => {});
});
srv.listen(0, '127.0.0.1', () => process.stdout.write('PORT ' + srv.address().port + '\\n'));
process.stdin.on('data', () => process.stdout.write('BYTES ' + bytes + ' NS ' + (last - first) + '\\n'));
process.stdin.on('end', () => process.exit(0));
`;

export async function measureLoopback(options: { connections: number; chunkBytes: number; durationMs: number }): Promise<LoopbackResult>;
export async function measureLoopback(options: { connections: number; chunkBytes: number; durationMs: number; tls: SinkTls }): Promise<NonNullable<MachineLimits['loopbackTls']>>;
export async function measureLoopback(options: { connections: number; chunkBytes: number; durationMs: number; tls?: SinkTls }): Promise<LoopbackResult> {
  const env = options.tls ? { ...process.env, SINK_KEY: options.tls.keyPath, SINK_CERT: options.tls.certPath } : process.env;
  const child = spawn(process.execPath, ['-e', SINK], { stdio: ['pipe', 'pipe', 'inherit'], env });
  try {
    const lines = lineReader(child.stdout!);
    const portLine = await lines.next('PORT', 10_000);
    const port = Number(portLine.split(' ')[1]);
    const chunk = Buffer.alloc(options.chunkBytes, 0x61);
    const sockets: Socket[] = await Promise.all(
      Array.from({ length: options.connections }, () => new Promise<Socket>((resolve, reject) => {
        const s = options.tls
          ? tlsConnect({ host: '127.0.0.1', port, ca: options.tls.ca }, () => resolve(s))
          : connect({ host: '127.0.0.1', port }, () => resolve(s));
        s.once('error', reject);
      })),
    );
    const first = sockets[0] as TLSSocket;
    const negotiated = options.tls ? { protocol: first.getProtocol(), cipher: first.getCipher().standardName } : undefined;
    const end = performance.now() + options.durationMs;
    await Promise.all(
      sockets.map(async (s) => {
        s.setNoDelay(true);
        while (performance.now() < end) {
          if (!s.write(chunk)) await new Promise((r) => s.once('drain', r));
        }
        await new Promise<void>((r) => s.end(r));
      }),
    );
    // Let the sink read what is still in flight, then ask for its count.
    await new Promise((r) => setTimeout(r, 200));
    child.stdin!.write('report\n');
    const report = await lines.next('BYTES', 10_000);
    const [, bytes, , ns] = report.split(' ');
    const seconds = Number(ns) / 1e9;
    return {
      connections: options.connections,
      chunkBytes: options.chunkBytes,
      seconds,
      bytes: Number(bytes),
      mibPerSec: Number(bytes) / seconds / 2 ** 20,
      ...(negotiated ? { tls: negotiated } : {}),
    };
  } finally {
    child.stdin!.end();
    child.kill();
  }
}

function lineReader(stream: NodeJS.ReadableStream): { next(prefix: string, timeoutMs: number): Promise<string> } {
  let buffered = '';
  const waiters: Array<() => void> = [];
  stream.setEncoding?.('utf8');
  stream.on('data', (d: string) => {
    buffered += d;
    for (const w of waiters.splice(0)) w();
  });
  return {
    async next(prefix, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const lines = buffered.split('\n');
        const i = lines.findIndex((l) => l.startsWith(prefix));
        if (i >= 0) {
          buffered = lines.slice(i + 1).join('\n');
          return lines[i]!;
        }
        if (Date.now() > deadline) throw new Error(`sink did not print ${prefix} within ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          waiters.push(r);
          setTimeout(r, 100);
        });
      }
    },
  };
}

/**
 * Sequential write of `sample` repeated into request-sized chunks, in `dir`. Each mode stops at
 * `maxBytes` or `durationMs`, whichever comes first.
 */
export async function measureDisk(options: {
  dir: string;
  sample: Buffer;
  chunkBytes: number;
  maxBytes: number;
  durationMs: number;
  coldRead?: boolean;
}): Promise<DiskResult> {
  const copies = Math.max(1, Math.round(options.chunkBytes / options.sample.length));
  const chunk = Buffer.concat(Array.from({ length: copies }, () => options.sample));
  const path = join(options.dir, `ledgerline-bench-disk-${process.pid}.dat`);
  try {
    const syncEach = await writeChunks(await open(path, 'w'), chunk, options.maxBytes, options.durationMs, true);
    const direct = await writeFileDirect(path, chunk, options.maxBytes, options.durationMs);
    const syncEnd = await writeChunks(await open(path, 'w'), chunk, options.maxBytes, options.durationMs, false);
    let coldRead: DiskResult['coldRead'];
    if (options.coldRead) {
      await dropPageCache();
      coldRead = await readFileCold(path, COLD_READ_BYTES);
    }
    return {
      dir: options.dir,
      chunkBytes: chunk.length,
      syncEachChunk: {
        bytes: syncEach.bytes,
        seconds: syncEach.seconds,
        mibPerSec: syncEach.bytes / syncEach.seconds / 2 ** 20,
        fsyncP50Ms: syncEach.fsync.p50,
        fsyncP99Ms: syncEach.fsync.p99,
      },
      syncAtEnd: { bytes: syncEnd.bytes, seconds: syncEnd.seconds, mibPerSec: syncEnd.bytes / syncEnd.seconds / 2 ** 20 },
      ...(direct
        ? {
            directSyncEachChunk: {
              bytes: direct.bytes,
              seconds: direct.seconds,
              mibPerSec: direct.bytes / direct.seconds / 2 ** 20,
              fsyncP50Ms: direct.fsync.p50,
              fsyncP99Ms: direct.fsync.p99,
            },
          }
        : {}),
      ...(coldRead ? { coldRead } : {}),
    };
  } finally {
    await rm(path, { force: true });
  }
}

const COLD_READ_BYTES = 1024 * 1024;

/** Reads the whole file sequentially, `readBytes` at a time, one read in flight (the kernel's readahead applies). */
async function readFileCold(path: string, readBytes: number): Promise<NonNullable<DiskResult['coldRead']>> {
  const fh = await open(path, 'r');
  const buf = Buffer.allocUnsafe(readBytes);
  let bytes = 0;
  const t0 = performance.now();
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, readBytes, bytes);
      if (bytesRead === 0) break;
      bytes += bytesRead;
    }
  } finally {
    await fh.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  return { bytes, seconds, mibPerSec: bytes / seconds / 2 ** 20, readBytes };
}

/**
 * Writes `chunk` again and again at the end of `fh` (closed afterwards), with an fsync after each write or one at
 * the end. With `aligned` (page-aligned memory, a multiple of 4 KiB, for an O_DIRECT handle) each chunk is first
 * copied into it, as the store copies a group into its staging buffer, and written padded to its length.
 */
async function writeChunks(fh: FileHandle, chunk: Buffer, maxBytes: number, durationMs: number, syncEach: boolean, aligned?: Buffer) {
  const fsyncs = latencyHistogram();
  const data = aligned ?? chunk;
  let bytes = 0;
  const t0 = performance.now();
  try {
    while (bytes < maxBytes && performance.now() - t0 < durationMs) {
      if (aligned) chunk.copy(aligned);
      await fh.write(data, 0, data.length, bytes);
      bytes += data.length;
      if (syncEach) {
        const s0 = performance.now();
        await fh.sync();
        recordMs(fsyncs, performance.now() - s0);
      }
    }
    if (!syncEach) await fh.sync();
  } finally {
    await fh.close();
  }
  const seconds = (performance.now() - t0) / 1000;
  return { bytes, seconds, fsync: summarize(fsyncs) };
}

/** writeChunks with an fsync per chunk through an O_DIRECT handle; null where the file system or platform refuses it. */
async function writeFileDirect(path: string, chunk: Buffer, maxBytes: number, durationMs: number) {
  if (!directIoAvailable) return null;
  await rm(path, { force: true });
  let fh: FileHandle;
  try {
    fh = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_DIRECT, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EINVAL') return null;
    throw err;
  }
  return writeChunks(fh, chunk, maxBytes, durationMs, true, alignedBuffer(Math.ceil(chunk.length / DIRECT_IO_ALIGN) * DIRECT_IO_ALIGN));
}
