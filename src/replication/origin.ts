/**
 * Active-active topics carry the cluster a record was first written to with the record itself, as Pulsar's
 * replicated messages carry `replicated_from`: two record headers that a replicator adds when it copies a record
 * written on another cluster, and that no producer of Ledgerline's clusters writes.
 *
 *   ledgerline.origin          the origin cluster's id (Metadata's cluster_id), UTF-8
 *   ledgerline.origin.offset   the record's offset in the origin cluster's partition, int64 big-endian
 *
 * A record without `ledgerline.origin` was produced to the cluster holding it; only those are copied to the other
 * clusters (every cluster of an active-active topic copies from every other one: a full mesh), so no record goes
 * round a loop and each cluster's writes reach every other exactly once. The origin offset makes the copy's cursor
 * durable with the data (a replicator recovers it from the log after a crash) and maps offsets between clusters.
 *
 * Committed reads: the replicator reads with read_committed and drops the batches of aborted transactions as
 * Kafka's consumer does (its CompletedFetch): a producer is aborted from the first offset of an aborted
 * transaction the fetch answer lists to that transaction's ABORT marker.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import { buildRecordBatch, type RecordInput } from '../../protocol/records/builder.js';
import type { CompressionTypeId } from '../../protocol/compression/index.js';
import { ControlRecordType, parseControlRecordType } from '../../protocol/records/control.js';
import { splitRecordBatches } from '../../protocol/records/split.js';

export const ORIGIN_HEADER = 'ledgerline.origin';
export const ORIGIN_OFFSET_HEADER = 'ledgerline.origin.offset';

/** The origin of a copied record, or null for a record written here. */
export interface Origin {
  readonly cluster: string;
  readonly offset: number;
}

export function originOf(headers: readonly { key: string; value: Buffer | null }[]): Origin | null {
  let cluster: string | null = null;
  let offset = -1;
  for (const h of headers) {
    if (h.key === ORIGIN_HEADER && h.value) cluster = h.value.toString('utf8');
    else if (h.key === ORIGIN_OFFSET_HEADER && h.value?.length === 8) offset = Number(h.value.readBigInt64BE(0));
  }
  return cluster === null ? null : { cluster, offset };
}

/** The batches of a read_committed fetch answer that committed transactions or no transaction wrote, control batches left out. */
export function committedBatches(records: Buffer, aborted: readonly { producerId: bigint; firstOffset: bigint }[] | null): RecordBatch[] {
  const pending = [...(aborted ?? [])].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0));
  const abortedProducers = new Set<bigint>();
  const out: RecordBatch[] = [];
  for (const b of splitRecordBatches(records, { allowPartialTail: true })) {
    if (b.isTransactional) {
      while (pending.length > 0 && pending[0]!.firstOffset <= b.lastOffset) abortedProducers.add(pending.shift()!.producerId);
    }
    if (b.isControl) {
      if (isAbortMarker(b)) abortedProducers.delete(b.producerId);
      continue;
    }
    if (b.isTransactional && abortedProducers.has(b.producerId)) continue;
    out.push(b);
  }
  return out;
}

function isAbortMarker(b: RecordBatch): boolean {
  try {
    for (const r of b.records()) return parseControlRecordType(r.key) === ControlRecordType.ABORT;
  } catch {
    return false;
  }
  return false;
}

export interface TaggedBatch {
  /** The batch to append here, or null when every record of the batch was itself copied from elsewhere. */
  readonly batch: Buffer | null;
  readonly records: number;
  readonly firstOriginOffset: number;
  readonly lastOriginOffset: number;
  /** Of the records skipped as copies, the highest origin offset per origin cluster (offset-map.ts). */
  readonly copiedOrigins: ReadonlyMap<string, number>;
  /**
   * When every record read (from `fromOffset`) is a copy from one cluster, at consecutive offsets here and there
   * (as a replicator appends them): where the run starts, so the origin offset of any record in it is known.
   */
  readonly copyRun: CopyRun | null;
}

/** Records at consecutive offsets copied from `origin`: the one at `base + i` has origin offset `firstOrigin + i`. */
export interface CopyRun {
  readonly base: number;
  readonly origin: string;
  readonly firstOrigin: number;
}

/**
 * The records of `batch` written on the cluster it was read from (no origin header), as a new batch for this
 * cluster tagged with that cluster's id and each record's offset there (from `fromOffset` on: those before were
 * copied already). Keys, values, headers and CreateTime timestamps are kept; the batch keeps its compression codec.
 */
export async function tagLocalRecords(batch: RecordBatch, originCluster: string, fromOffset = 0): Promise<TaggedBatch> {
  const inputs: RecordInput[] = [];
  let first = -1;
  let last = -1;
  const copiedOrigins = new Map<string, number>();
  const cluster = Buffer.from(originCluster, 'utf8');
  let run: CopyRun | null = null;
  let runIntact = true;
  let expected = -1;
  for (const r of await batch.readRecords()) {
    if (r.offset < fromOffset) continue;
    const o = originOf(r.headers);
    if (o !== null) {
      if (o.offset > (copiedOrigins.get(o.cluster) ?? -1)) copiedOrigins.set(o.cluster, o.offset);
      if (run === null && expected < 0) run = { base: r.offset, origin: o.cluster, firstOrigin: o.offset };
      else if (run === null || o.cluster !== run.origin || r.offset !== expected || o.offset - run.firstOrigin !== r.offset - run.base) runIntact = false;
      expected = r.offset + 1;
      continue;
    }
    runIntact = false;
    const offset = Buffer.alloc(8);
    offset.writeBigInt64BE(BigInt(r.offset));
    inputs.push({
      key: r.key,
      value: r.value,
      timestamp: r.timestamp,
      headers: [...r.headers.map((h) => ({ key: h.key, value: h.value })), { key: ORIGIN_HEADER, value: cluster }, { key: ORIGIN_OFFSET_HEADER, value: offset }],
    });
    if (first < 0) first = r.offset;
    last = r.offset;
  }
  const built = inputs.length === 0 ? null : await buildRecordBatch(inputs, { compression: batch.compressionType as CompressionTypeId });
  return { batch: built, records: inputs.length, firstOriginOffset: first, lastOriginOffset: last, copiedOrigins, copyRun: runIntact ? run : null };
}

/** The highest origin offset of records from `originCluster` in a run of stored batches, or -1. */
export async function lastOriginOffsetIn(batches: readonly RecordBatch[], originCluster: string): Promise<number> {
  let max = -1;
  for (const b of batches) {
    if (b.isControl) continue;
    for (const r of await b.readRecords()) {
      const o = originOf(r.headers);
      if (o && o.cluster === originCluster && o.offset > max) max = o.offset;
    }
  }
  return max;
}
