/**
 * A read_committed consumer built on the project's own client, doing what Kafka's consumer does with a
 * read_committed fetch (KIP-98; the Java client's CompletedFetch): it fetches up to the last stable offset,
 * takes the aborted transactions the broker returns for the range, and skips the batches of a producer from
 * the first offset of one of its aborted transactions up to that transaction's ABORT marker. Control batches
 * are never returned as records. Tests use it to check what the broker answers; real clients check the same in
 * the compatibility matrix.
 */
import type { KafkaClient } from '../../src/client/index.js';
import { parseEndTxnMarker } from '../../protocol/records/control.js';
import { decodeRecordSet, type ReadRecord } from './records.js';

export interface CommittedRead {
  readonly records: ReadRecord[];
  /** The last stable offset the read stopped at. */
  readonly lastStableOffset: bigint;
  /** Control batches seen (COMMIT and ABORT markers). */
  readonly markers: number;
}

/** Every committed record of `topic`-`partition` from `from` up to the last stable offset of the first fetch. */
export async function readCommitted(client: KafkaClient, topic: string, partition: number, from = 0n): Promise<CommittedRead> {
  const out: ReadRecord[] = [];
  let offset = from;
  let end: bigint | undefined;
  let markers = 0;
  // Aborted transactions not yet reached, by first offset; producers inside an aborted transaction.
  const pendingAborted: Array<{ producerId: bigint; firstOffset: bigint }> = [];
  const seenAborted = new Set<string>();
  const abortedProducers = new Set<bigint>();
  for (;;) {
    const [r] = await client.fetch([{ topic, partition, offset, maxBytes: 8 * 1024 * 1024 }], { maxWaitMs: 0, minBytes: 0, isolationLevel: 1 });
    if (r!.errorCode !== 0) throw new Error(`read_committed fetch ${topic}-${partition}@${offset} failed with error ${r!.errorCode}`);
    end ??= r!.lastStableOffset;
    if (offset >= end) return { records: out, lastStableOffset: end, markers };
    for (const a of r!.abortedTransactions ?? []) {
      const key = `${a.producerId}@${a.firstOffset}`;
      if (seenAborted.has(key)) continue;
      seenAborted.add(key);
      pendingAborted.push({ producerId: a.producerId, firstOffset: a.firstOffset });
    }
    pendingAborted.sort((x, y) => (x.firstOffset < y.firstOffset ? -1 : x.firstOffset > y.firstOffset ? 1 : 0));
    const { batches } = await decodeRecordSet(r!.records);
    if (batches.length === 0) throw new Error(`read_committed fetch ${topic}-${partition}@${offset} returned nothing below the last stable offset ${end}`);
    for (const b of batches) {
      if (b.lastOffset < offset) continue;
      if (b.baseOffset >= end) break;
      // Every aborted transaction starting at or before this batch has begun.
      while (pendingAborted.length > 0 && pendingAborted[0]!.firstOffset <= b.lastOffset) abortedProducers.add(pendingAborted.shift()!.producerId);
      if (b.isControl) {
        markers++;
        const [rec] = await b.readRecords();
        const marker = parseEndTxnMarker(rec!.key === null ? null : Buffer.from(rec!.key), rec!.value === null ? null : Buffer.from(rec!.value));
        if (!marker.commit) abortedProducers.delete(b.producerId);
      } else if (!(b.isTransactional && abortedProducers.has(b.producerId))) {
        const { records } = await decodeRecordSet(b.buffer);
        for (const rec of records) if (rec.offset >= offset && rec.offset < end) out.push(rec);
      }
      offset = b.lastOffset + 1n;
    }
  }
}
