/**
 * Workloads: small JSON files under bench/workloads/, in the spirit of the OpenMessaging Benchmark's
 * workload files. Every field but `name` has a default; unknown fields are rejected so a typo does not
 * silently run a different benchmark.
 *
 *   {
 *     "name": "1-topic-16-partitions-1kb",
 *     "topics": 1, "partitionsPerTopic": 16, "recordSize": 1024,
 *     "producers": 4, "consumers": 4,
 *     "rate": "max",                 // "max" | messages per second | "50%" of `rateReference`'s max rate
 *     "rateReference": "1-topic-16-partitions-1kb",
 *     "durationSeconds": 60, "warmupSeconds": 5,
 *     "acks": -1, "compression": "none",
 *     "batchBytes": 65536,           // pre-built batch size: records per batch = batchBytes / recordSize
 *     "partitionsPerRequest": 16, "maxInFlight": 5,
 *     "backlogBytes": 0,             // > 0: produce this backlog first, then time consumers reading it
 *     "transactionRecords": 0        // > 0: transactional producers, this many records per transaction
 *   }
 */
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compressionTypeByName } from '../../protocol/compression/index.js';

export const BENCH_DIR = dirname(dirname(fileURLToPath(import.meta.url)));
export const WORKLOADS_DIR = join(BENCH_DIR, 'workloads');
export const RESULTS_DIR = join(BENCH_DIR, 'results');

export type Rate = { kind: 'max' } | { kind: 'fixed'; messagesPerSecond: number } | { kind: 'percent'; percent: number; reference: string };

export interface Workload {
  name: string;
  description: string;
  topics: number;
  partitionsPerTopic: number;
  recordSize: number;
  producers: number;
  consumers: number;
  rate: Rate;
  durationSeconds: number;
  warmupSeconds: number;
  acks: 0 | 1 | -1;
  compression: 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
  batchBytes: number;
  partitionsPerRequest: number;
  maxInFlight: number;
  backlogBytes: number;
  /** Records per transaction; 0 = not transactional (see transactions.ts). */
  transactionRecords: number;
}

const FIELDS = new Set([
  'name',
  'description',
  'topics',
  'partitionsPerTopic',
  'recordSize',
  'producers',
  'consumers',
  'rate',
  'rateReference',
  'durationSeconds',
  'warmupSeconds',
  'acks',
  'compression',
  'batchBytes',
  'partitionsPerRequest',
  'maxInFlight',
  'backlogBytes',
  'transactionRecords',
]);

export class WorkloadError extends Error {
  readonly code = 'LL_ERR_BENCH_WORKLOAD';
}

function int(raw: Record<string, unknown>, field: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = raw[field] ?? dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw new WorkloadError(`${String(raw.name ?? '?')}: ${field} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  }
  return v;
}

/** Parses sizes such as 5368709120, "5GiB", "512MiB", "64KiB". */
export function parseBytes(v: unknown): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0) return v;
  if (typeof v === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?\s*$/i.exec(v);
    if (m) {
      const unit = (m[2] ?? 'B').toLowerCase();
      const mult: Record<string, number> = { b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12 };
      return Math.round(Number(m[1]) * mult[unit]!);
    }
  }
  throw new WorkloadError(`not a size: ${JSON.stringify(v)} (use bytes or e.g. "5GiB")`);
}

export function parseRate(v: unknown, reference: unknown): Rate {
  if (v === undefined || v === 'max') return { kind: 'max' };
  if (typeof v === 'number' && v > 0) return { kind: 'fixed', messagesPerSecond: v };
  if (typeof v === 'string') {
    const pct = /^(\d+(?:\.\d+)?)%$/.exec(v.trim());
    if (pct) {
      if (typeof reference !== 'string' || reference === '') throw new WorkloadError(`rate ${v} needs "rateReference": the workload whose max rate it is a percentage of`);
      return { kind: 'percent', percent: Number(pct[1]), reference };
    }
    const n = Number(v);
    if (Number.isFinite(n) && n > 0) return { kind: 'fixed', messagesPerSecond: n };
  }
  throw new WorkloadError(`rate must be "max", a number of messages per second or a percentage, got ${JSON.stringify(v)}`);
}

export function parseWorkload(raw: unknown, origin = 'workload'): Workload {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new WorkloadError(`${origin}: not a JSON object`);
  const r = raw as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!FIELDS.has(k)) throw new WorkloadError(`${origin}: unknown field ${JSON.stringify(k)}`);
  if (typeof r.name !== 'string' || !/^[A-Za-z0-9._-]+$/.test(r.name)) throw new WorkloadError(`${origin}: name must be a simple identifier`);
  const compression = (r.compression ?? 'none') as Workload['compression'];
  try {
    compressionTypeByName(compression);
  } catch {
    throw new WorkloadError(`${origin}: unknown compression ${JSON.stringify(r.compression)}`);
  }
  const acks = r.acks ?? -1;
  if (acks !== 0 && acks !== 1 && acks !== -1) throw new WorkloadError(`${origin}: acks must be 0, 1 or -1`);
  const recordSize = int(r, 'recordSize', 1024, 8, 16 * 1024 * 1024);
  const w: Workload = {
    name: r.name,
    description: typeof r.description === 'string' ? r.description : '',
    topics: int(r, 'topics', 1, 1, 100_000),
    partitionsPerTopic: int(r, 'partitionsPerTopic', 1, 1, 100_000),
    recordSize,
    producers: int(r, 'producers', 1, 0, 1024),
    consumers: int(r, 'consumers', 1, 0, 1024),
    rate: parseRate(r.rate, r.rateReference),
    durationSeconds: int(r, 'durationSeconds', 60, 1, 24 * 3600),
    warmupSeconds: int(r, 'warmupSeconds', 0, 0, 3600),
    acks,
    compression,
    batchBytes: int(r, 'batchBytes', 16384, 8, 64 * 1024 * 1024),
    partitionsPerRequest: int(r, 'partitionsPerRequest', 16, 1, 100_000),
    maxInFlight: int(r, 'maxInFlight', 5, 1, 1024),
    backlogBytes: r.backlogBytes === undefined ? 0 : parseBytes(r.backlogBytes),
    transactionRecords: int(r, 'transactionRecords', 0, 0, 1_000_000),
  };
  if (w.producers === 0 && w.backlogBytes === 0) throw new WorkloadError(`${origin}: a workload without producers reads nothing`);
  if (w.batchBytes < w.recordSize) w.batchBytes = w.recordSize;
  checkTransactional(w, origin);
  return w;
}

/**
 * A transactional workload writes whole batches (transactionRecords a multiple of the records per batch),
 * with acks=all and at most 5 requests in flight, as Kafka's producer requires of a transactional (hence
 * idempotent) producer; it is not a catch-up workload.
 */
function checkTransactional(w: Workload, origin: string): void {
  if (w.transactionRecords === 0) return;
  const perBatch = recordsPerBatch(w);
  if (w.transactionRecords % perBatch !== 0) {
    throw new WorkloadError(`${origin}: transactionRecords (${w.transactionRecords}) must be a multiple of the records per batch (batchBytes / recordSize = ${perBatch})`);
  }
  if (w.acks !== -1) throw new WorkloadError(`${origin}: a transactional workload needs acks=-1 (all)`);
  if (w.maxInFlight > 5) throw new WorkloadError(`${origin}: a transactional workload allows at most 5 requests in flight (Kafka's bound for idempotence)`);
  if (w.backlogBytes > 0) throw new WorkloadError(`${origin}: a catch-up workload cannot be transactional`);
}

export function workloadNames(): string[] {
  return readdirSync(WORKLOADS_DIR)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -5))
    .sort();
}

/** Loads bench/workloads/<name>.json, or a path to a JSON file. */
export function loadWorkload(nameOrPath: string): Workload {
  const path = nameOrPath.endsWith('.json') ? nameOrPath : join(WORKLOADS_DIR, `${nameOrPath}.json`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    throw new WorkloadError(`no workload ${JSON.stringify(nameOrPath)}; available: ${workloadNames().join(', ')}`);
  }
  return parseWorkload(JSON.parse(text), path);
}

/** Command-line overrides shared by run, compare and smoke. */
export interface WorkloadOverrides {
  durationSeconds?: number;
  warmupSeconds?: number;
  rate?: Rate;
  backlogBytes?: number;
  producers?: number;
  consumers?: number;
}

export function applyOverrides(w: Workload, o: WorkloadOverrides): Workload {
  const out = { ...w };
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

export function recordsPerBatch(w: Workload): number {
  return Math.max(1, Math.floor(w.batchBytes / w.recordSize));
}

export function totalPartitions(w: Workload): number {
  return w.topics * w.partitionsPerTopic;
}

export function topicNames(w: Workload, prefix: string): string[] {
  const width = String(w.topics - 1).length;
  return Array.from({ length: w.topics }, (_, i) => `${prefix}-${String(i).padStart(width, '0')}`);
}

export function describeRate(rate: Rate): string {
  switch (rate.kind) {
    case 'max':
      return 'max';
    case 'fixed':
      return `${Math.round(rate.messagesPerSecond)} msg/s`;
    case 'percent':
      return `${rate.percent}% of ${rate.reference} max`;
  }
}
