/**
 * What the geo-replication tests share: the admin endpoint's JSON, waiting with deadlines, and reading a
 * partition's whole log as batches from two clusters to compare them byte for byte.
 *
 * Batches are compared whole but for partitionLeaderEpoch (bytes 12..15): each cluster writes its own leader
 * epoch, which the CRC does not cover; every other byte (offsets, timestamps, producer id, epoch and sequence,
 * attributes, records, CRC) must be the source's.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import { splitRecordBatches } from '../../protocol/records/split.js';
import { OffsetSpec, type KafkaClient } from '../../src/client/client.js';

export async function admin<T = unknown>(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(`${url}${path}`, {
    method,
    ...(body !== undefined ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: (text === '' ? undefined : JSON.parse(text)) as T };
}

/** Polls `probe` until it returns a value other than undefined, or fails with `what` and the last value seen. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: lastError });
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface StoredBatch {
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The batch's bytes with partitionLeaderEpoch zeroed. */
  readonly bytes: Buffer;
}

/** Every batch of a partition from its log start offset to its end (READ_UNCOMMITTED), in offset order. */
export async function readAllBatches(client: KafkaClient, topic: string, partition: number): Promise<StoredBatch[]> {
  const [start, end] = await client.listOffsets([
    { topic, partition, timestamp: OffsetSpec.EARLIEST },
    { topic, partition, timestamp: OffsetSpec.LATEST },
  ]);
  if (!start || !end || start.errorCode !== 0 || end.errorCode !== 0) throw new Error(`offsets of ${topic}-${partition}: ${start?.errorCode} ${end?.errorCode}`);
  const out: StoredBatch[] = [];
  let offset = start.offset;
  while (offset < end.offset) {
    const [r] = await client.fetch([{ topic, partition, offset, maxBytes: 4 * 1024 * 1024 }], { maxWaitMs: 100, isolationLevel: 0 });
    if (!r || r.errorCode !== 0) throw new Error(`fetch ${topic}-${partition}@${offset}: error ${r?.errorCode}`);
    const batches = r.records ? splitRecordBatches(r.records, { allowPartialTail: true }) : [];
    let advanced = false;
    for (const b of batches) {
      if (b.lastOffsetNumber < Number(offset)) continue;
      const bytes = Buffer.from(b.buffer);
      bytes.writeInt32BE(0, 12);
      out.push({ baseOffset: b.baseOffsetNumber, lastOffset: b.lastOffsetNumber, bytes });
      offset = BigInt(b.lastOffsetNumber + 1);
      advanced = true;
    }
    if (!advanced) throw new Error(`fetch ${topic}-${partition}@${offset} returned no batch before the end ${end.offset}`);
  }
  return out;
}

/** The first difference between two partitions' batches, or null when they are the same. */
export function firstBatchDifference(source: readonly StoredBatch[], mirror: readonly StoredBatch[]): string | null {
  for (let i = 0; i < Math.max(source.length, mirror.length); i++) {
    const s = source[i];
    const m = mirror[i];
    if (!s) return `the mirror has an extra batch ${m!.baseOffset}..${m!.lastOffset}`;
    if (!m) return `the mirror lacks batch ${s.baseOffset}..${s.lastOffset}`;
    if (s.baseOffset !== m.baseOffset || s.lastOffset !== m.lastOffset) return `batch ${i}: source ${s.baseOffset}..${s.lastOffset}, mirror ${m.baseOffset}..${m.lastOffset}`;
    if (!s.bytes.equals(m.bytes)) return `batch ${s.baseOffset}..${s.lastOffset} differs in its bytes`;
  }
  return null;
}

/**
 * A compacted topic's records by offset, for topics both clusters compact on their own schedule: each record
 * (key, value, headers, timestamp) as text, control batches left out.
 */
export async function recordsByOffset(batches: readonly StoredBatch[]): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const s of batches) {
    const b = RecordBatch.wrap(s.bytes);
    if (b.isControl) continue;
    for (const r of await b.readRecords()) {
      out.set(r.offset, JSON.stringify([r.key?.toString('base64') ?? null, r.value?.toString('base64') ?? null, r.headers.map((h) => [h.key, h.value?.toString('base64') ?? null]), r.timestamp]));
    }
  }
  return out;
}

/** Latest value per key, as compaction keeps it. */
export function latestByKey(records: ReadonlyMap<number, string>): Map<string, string> {
  const out = new Map<string, string>();
  for (const [, r] of [...records].sort(([a], [b]) => a - b)) {
    const [key, value] = JSON.parse(r) as [string | null, string | null];
    out.set(String(key), String(value));
  }
  return out;
}
