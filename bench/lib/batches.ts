/**
 * Pre-built record batches for the load generator, and the send timestamp they carry.
 *
 * One template batch is built per run with the codec (protocol/records) and copied into every in-flight
 * slot; at send time only the timestamps are stamped and the CRC recomputed, so producing costs a CRC per
 * batch and no encoding. The send time is carried two ways:
 *
 *   batch header   baseTimestamp = maxTimestamp = send time in whole ms (CreateTime; every record has
 *                  timestampDelta 0), so a broker's time index and retention see real times;
 *   first record   the first 8 bytes of its value = send time in ms as a float64 (µs resolution),
 *                  for uncompressed batches, where the value can be stamped without re-compressing.
 *
 * The consumer reads the float64 when the batch is uncompressed and the header time otherwise, so
 * end-to-end latency has µs resolution without compression and 1 ms resolution with it.
 *
 * A transactional workload's template has the isTransactional attribute (bit 4) and a producer id; each
 * send also stamps the producer id, epoch and the partition's base sequence (`stampBatch`'s `producer`).
 *
 * Times are `performance.timeOrigin + performance.now()`: the wall clock when the thread started plus a monotonic
 * clock since. Producers and consumers run in two threads of one process (consumer-thread.ts), whose clocks agree
 * to a few microseconds (each thread's origin pairs a wall-clock and a monotonic reading).
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { compressionTypeByName } from '../../protocol/compression/index.js';
import { crc32c } from '../../protocol/crc32c.js';
import { BatchField, RecordBatch, buildRecordBatch, writeInt64 } from '../../protocol/records/index.js';
import type { Workload } from './workload.js';
import { recordsPerBatch } from './workload.js';

export interface BatchTemplate {
  readonly bytes: Buffer;
  readonly recordCount: number;
  readonly compressed: boolean;
  /** Offset of the first record's value inside the batch, for uncompressed batches; -1 otherwise. */
  readonly valueOffset: number;
  /** Record payload bytes per batch (recordCount × recordSize): what throughput figures count. */
  readonly payloadBytes: number;
}

/** Wall-clock milliseconds with sub-ms resolution, monotonic within the process. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

/**
 * Values: random base64 text. It compresses about as well as typical text-like payloads (roughly 3/4 of its
 * size with every codec), so compressed workloads are neither free nor incompressible.
 */
function payload(size: number): Buffer {
  return Buffer.from(randomBytes(Math.ceil((size * 3) / 4) + 3).toString('base64').slice(0, size), 'latin1');
}

export async function buildTemplate(w: Workload): Promise<BatchTemplate> {
  const count = recordsPerBatch(w);
  const compression = compressionTypeByName(w.compression);
  const values = Array.from({ length: count }, () => payload(w.recordSize));
  const now = Math.floor(nowMs());
  // Transactional: producer id 0 and sequence 0 hold the places each send stamps.
  const producer = w.transactionRecords > 0 ? { producerId: 0, producerEpoch: 0, baseSequence: 0, isTransactional: true } : {};
  const bytes = await buildRecordBatch(
    values.map((value) => ({ value, timestamp: now })),
    { compression, now, ...producer },
  );
  let valueOffset = -1;
  if (compression === 0) {
    // Find the first value in the built bytes: the codec decides the layout, the template only locates it.
    const batch = RecordBatch.wrap(bytes);
    const first = batch.records().next();
    if (first.done || first.value.value === null) throw new Error('template batch has no first value');
    valueOffset = first.value.value.byteOffset - bytes.byteOffset;
  }
  return { bytes, recordCount: count, compressed: compression !== 0, valueOffset, payloadBytes: count * w.recordSize };
}

/** A private copy of the template for one in-flight slot (stamping writes into it). */
export function copyTemplate(t: BatchTemplate): Buffer {
  return Buffer.from(t.bytes);
}

/** The producer fields of an idempotent or transactional batch. */
export interface ProducerStamp {
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
}

/**
 * Stamps `sendTimeMs` (and the producer fields, when given) into a batch copied from `t` and recomputes its
 * CRC (CRC-32C over bytes 21..end).
 */
export function stampBatch(batch: Buffer, t: BatchTemplate, sendTimeMs: number, producer?: ProducerStamp): void {
  if (producer) {
    writeInt64(batch, BatchField.PRODUCER_ID, producer.producerId);
    batch.writeInt16BE(producer.producerEpoch, BatchField.PRODUCER_EPOCH);
    batch.writeInt32BE(producer.baseSequence, BatchField.BASE_SEQUENCE);
  }
  const ms = Math.floor(sendTimeMs);
  writeInt64(batch, BatchField.BASE_TIMESTAMP, ms);
  writeInt64(batch, BatchField.MAX_TIMESTAMP, ms);
  if (t.valueOffset >= 0) batch.writeDoubleBE(sendTimeMs, t.valueOffset);
  batch.writeUInt32BE(crc32c(batch.subarray(BatchField.ATTRIBUTES)) >>> 0, BatchField.CRC);
}

/**
 * The send time a consumed batch carries (see the top of this file), or null when it carries none
 * (a control batch, a batch from another producer).
 */
export function sendTimeOf(batch: RecordBatch): number | null {
  if (batch.isControl || batch.recordCount === 0) return null;
  if (!batch.isCompressed) {
    const first = batch.iterateRecords(batch.recordsBytes).next();
    const value = first.done ? null : first.value.value;
    if (value !== null && value.length >= 8) {
      const t = value.readDoubleBE(0);
      // Guard against payloads that are not ours: the stamp must agree with the header time.
      if (Math.abs(t - batch.baseTimestamp) < 1) return t;
    }
  }
  return batch.baseTimestamp;
}
