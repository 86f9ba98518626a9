/**
 * Reading back what a broker stores, with the project's own client and codec: every record of a
 * partition range, decoded (decompressed) into plain values that tests compare with what they produced.
 */
import type { KafkaClient } from '../../src/client/index.js';
import { splitRecordBatches, type RecordBatch } from '../../protocol/records/index.js';

export interface ReadRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string | null>;
  /** The batch's compression type id. */
  compression: number;
  producerId: bigint;
  baseSequence: number;
}

/** Decodes every record of a fetched record set (whole batches; a partial tail is ignored, as clients do). */
export async function decodeRecordSet(records: Buffer | null): Promise<{ batches: RecordBatch[]; records: ReadRecord[] }> {
  if (!records || records.length === 0) return { batches: [], records: [] };
  const batches = splitRecordBatches(records, { allowPartialTail: true });
  const out: ReadRecord[] = [];
  for (const b of batches) {
    b.validate();
    for (const r of await b.readRecords()) {
      const headers: Record<string, string | null> = {};
      for (const h of r.headers) headers[h.key] = h.value === null ? null : h.value.toString('utf8');
      out.push({
        offset: r.offset,
        timestamp: r.timestamp,
        key: r.key === null ? null : r.key.toString('utf8'),
        value: r.value === null ? null : Buffer.from(r.value),
        headers,
        compression: b.compressionType,
        producerId: b.producerId,
        baseSequence: b.baseSequence,
      });
    }
  }
  return { batches, records: out };
}

/**
 * Every record of `topic`-`partition` from `from` up to the high watermark at the time of the first
 * fetch (or `until`), in offset order. Fails when a fetch reports an error.
 */
export async function readPartition(client: KafkaClient, topic: string, partition: number, from = 0n, until?: bigint): Promise<ReadRecord[]> {
  const out: ReadRecord[] = [];
  let offset = from;
  let end = until;
  for (;;) {
    const [r] = await client.fetch([{ topic, partition, offset, maxBytes: 8 * 1024 * 1024 }], { maxWaitMs: 0, minBytes: 0 });
    if (r!.errorCode !== 0) throw new Error(`fetch ${topic}-${partition}@${offset} failed with error ${r!.errorCode}`);
    end ??= r!.highWatermark;
    if (offset >= end) return out;
    const { batches, records } = await decodeRecordSet(r!.records);
    if (batches.length === 0) throw new Error(`fetch ${topic}-${partition}@${offset} returned nothing below the high watermark ${end}`);
    for (const rec of records) if (rec.offset >= offset && rec.offset < end) out.push(rec);
    offset = batches[batches.length - 1]!.lastOffset + 1n;
  }
}
