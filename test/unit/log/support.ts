/**
 * Helpers for the partition log tests: record batches v2 built byte by byte (with a correct CRC, optionally
 * compressed), and the real stores the log runs on (local ledger store on a temp dir or the in-memory fs,
 * SQLite or in-memory metadata store).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { compressSync } from '../../../protocol/compression/index.js';
import { crc32c } from '../../../protocol/crc32c.js';
import { writeInt64 } from '../../../protocol/records/batch.js';
import { sizeOfBytes, sizeOfVarint, sizeOfVarlong, writeBytes, writeVarint, writeVarlong } from '../../../protocol/records/varint.js';
import { LocalLedgerStore } from '../../../src/ledger/local-store.js';
import { MemoryLedgerFs } from '../../../src/ledger/memory-fs.js';
import type { LedgerStore } from '../../../src/ledger/types.js';
import { MemoryMetadataVolume, openMemoryMetadataStore, openSqliteMetadataStore } from '../../../src/metadata/index.js';
import type { MetadataStore } from '../../../src/metadata/types.js';

export interface TestRecord {
  /** Absolute timestamp (ms). Default: the batch's baseTimestamp. */
  readonly timestamp?: number;
  readonly key?: Buffer | null;
  readonly value?: Buffer | null;
}

export interface BatchOptions {
  /** Compression type id (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd). */
  readonly compression?: number;
  readonly baseTimestamp?: number;
  /** Extra padding in each record value, to make batches of a given size. */
  readonly valueBytes?: number;
}

/** A valid record batch v2 (baseOffset 0, epoch -1, non-idempotent), as a producer would send it. */
export function buildBatch(records: readonly TestRecord[] | number, options: BatchOptions = {}): Buffer {
  const baseTimestamp = options.baseTimestamp ?? 1_700_000_000_000;
  const list: TestRecord[] =
    typeof records === 'number'
      ? Array.from({ length: records }, (_, i) => ({ value: Buffer.alloc(options.valueBytes ?? 8, i & 0xff) }))
      : [...records];
  const encoded: Buffer[] = [];
  let maxTimestamp = -1;
  const firstTs = list[0]?.timestamp ?? baseTimestamp;
  list.forEach((r, i) => {
    const ts = r.timestamp ?? firstTs;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const key = r.key ?? null;
    const value = r.value === undefined ? Buffer.from(`value-${i}`) : r.value;
    const body = 1 + sizeOfVarlong(ts - firstTs) + sizeOfVarint(i) + sizeOfBytes(key) + sizeOfBytes(value) + sizeOfVarint(0);
    const buf = Buffer.alloc(sizeOfVarint(body) + body);
    let pos = writeVarint(buf, 0, body);
    buf[pos++] = 0;
    pos = writeVarlong(buf, pos, ts - firstTs);
    pos = writeVarint(buf, pos, i);
    pos = writeBytes(buf, pos, key);
    pos = writeBytes(buf, pos, value);
    pos = writeVarint(buf, pos, 0);
    encoded.push(buf.subarray(0, pos));
  });
  let payload: Buffer = Buffer.concat(encoded);
  const compression = options.compression ?? 0;
  if (compression !== 0) payload = compressSync(compression, payload);
  const batch = Buffer.alloc(61 + payload.length);
  writeInt64(batch, 0, 0);
  batch.writeInt32BE(batch.length - 12, 8);
  batch.writeInt32BE(-1, 12);
  batch.writeInt8(2, 16);
  batch.writeInt16BE(compression, 21);
  batch.writeInt32BE(Math.max(0, list.length - 1), 23);
  writeInt64(batch, 27, firstTs);
  writeInt64(batch, 35, maxTimestamp);
  writeInt64(batch, 43, -1);
  batch.writeInt16BE(-1, 51);
  batch.writeInt32BE(-1, 53);
  batch.writeInt32BE(list.length, 57);
  payload.copy(batch, 61);
  batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
  return batch;
}

/**
 * A batch of `records` records from producer `pid` at `epoch` starting at `sequence`, transactional
 * (attribute bit 4, KIP-98) unless `transactional` is false.
 */
export function producerBatch(pid: number | bigint, epoch: number, sequence: number, records = 2, transactional = true): Buffer {
  const b = buildBatch(records);
  b.writeBigInt64BE(BigInt(pid), 43);
  b.writeInt16BE(epoch, 51);
  b.writeInt32BE(sequence, 53);
  if (transactional) b.writeInt16BE(b.readInt16BE(21) | 0x10, 21);
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

/** baseOffset of a stored batch. */
export function baseOffsetOf(batch: Buffer): number {
  return Number(batch.readBigInt64BE(0));
}

export function lastOffsetOf(batch: Buffer): number {
  return baseOffsetOf(batch) + batch.readInt32BE(23);
}

export function tempDir(prefix = 'll-log-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

export interface Stores {
  readonly ledgers: LedgerStore;
  readonly metadata: MetadataStore;
  close(): Promise<void>;
}

/** The real local ledger store on `dir/ledgers` and the SQLite metadata store on `dir/metadata`. */
export async function openDiskStores(dir: string): Promise<Stores> {
  const ledgers = await LocalLedgerStore.open(path.join(dir, 'ledgers'));
  const metadata = await openSqliteMetadataStore(path.join(dir, 'metadata'));
  return {
    ledgers,
    metadata,
    async close() {
      await ledgers.close();
      await metadata.close();
    },
  };
}

/** The local ledger store over an in-memory fs and the in-memory metadata store; reopenable after crash(). */
export class MemoryStores {
  fs = new MemoryLedgerFs();
  readonly volume = new MemoryMetadataVolume();

  #metadata: MetadataStore | null = null;

  /**
   * Power loss: what the ledger store did not fsync is gone and the stores opened before are dead (the
   * metadata store commits durably on every write, so closing it loses nothing). Reopen with `open()`.
   */
  async crash(): Promise<void> {
    this.fs = this.fs.crash();
    await this.#metadata?.close();
    this.#metadata = null;
  }

  async open(): Promise<Stores> {
    const ledgers = await LocalLedgerStore.open('/ledgers', { fs: this.fs });
    const metadata = await openMemoryMetadataStore(this.volume);
    this.#metadata = metadata;
    return {
      ledgers,
      metadata,
      async close() {
        await ledgers.close();
        await metadata.close();
      },
    };
  }
}

/** Waits until `predicate` holds, checking after each macrotask, failing after `timeoutMs`. */
export async function until(predicate: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}
