/**
 * Idempotent producers for the restart benchmark: each gets its own producer id from InitProducerId (no
 * transactional id, as an idempotent Kafka producer does) and owns the partitions i ≡ its index (mod
 * producers). A Produce request carries one batch per owned partition; at most 5 requests are in flight
 * per connection, Kafka's bound for an idempotent producer (max.in.flight.requests.per.connection ≤ 5),
 * and each batch carries the producer id, epoch and the partition's next base sequence, so the broker
 * checks every batch's sequence as it would a real producer's (KIP-98).
 *
 * The batch is built once with the codec (uncompressed, random base64 values); each send copies it,
 * stamps producer id, epoch and base sequence and recomputes the CRC (CRC-32C over attributes..end). Any
 * partition error stops the write: a sequence error here would be a broker bug, not load.
 */
import { performance } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { crc32c } from '../../protocol/crc32c.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import type { ProduceRequest } from '../../protocol/messages/000-produce.gen.js';
import { BatchField, buildRecordBatch, writeInt64 } from '../../protocol/records/index.js';
import type { Connection, KafkaClient } from '../../src/client/index.js';

/** Kafka's upper bound on in-flight requests per connection for an idempotent producer. */
export const MAX_IDEMPOTENT_IN_FLIGHT = 5;

export interface WriteOptions {
  client: KafkaClient;
  topic: string;
  partitions: number;
  producers: number;
  /** Requests in flight per producer connection; at most 5. */
  inFlight: number;
  recordSize: number;
  recordsPerBatch: number;
  /** Record payload to write (records × recordSize), rounded up to whole requests. */
  bytes: number;
  /** Node id of the (single) broker: both brokers run as node 1. */
  leader: number;
  /** Connection lanes start here, so each write phase's producers have their own connections. */
  laneBase: number;
  log: (l: string) => void;
}

export interface WriteResult {
  /** Record payload acknowledged. */
  bytes: number;
  records: number;
  /** Records acknowledged per partition, to check against the log end offsets after a restart. */
  recordsPerPartition: number[];
  ms: number;
}

/** The producer's batch template: `recordsPerBatch` records of `recordSize` random base64 bytes. */
export async function idempotentTemplate(recordSize: number, recordsPerBatch: number): Promise<Buffer> {
  const value = (): Buffer => Buffer.from(randomBytes(Math.ceil((recordSize * 3) / 4) + 3).toString('base64').slice(0, recordSize), 'latin1');
  return buildRecordBatch(
    Array.from({ length: recordsPerBatch }, () => ({ value: value() })),
    { producerId: 0, producerEpoch: 0, baseSequence: 0 },
  );
}

/** A copy of `template` as batch `sequence` of producer (`producerId`, `epoch`), with its CRC recomputed. */
export function stampIdempotent(template: Buffer, producerId: bigint, epoch: number, sequence: number): Buffer {
  const b = Buffer.from(template);
  writeInt64(b, BatchField.PRODUCER_ID, producerId);
  b.writeInt16BE(epoch, BatchField.PRODUCER_EPOCH);
  b.writeInt32BE(sequence, BatchField.BASE_SEQUENCE);
  b.writeUInt32BE(crc32c(b.subarray(BatchField.ATTRIBUTES)) >>> 0, BatchField.CRC);
  return b;
}

/** Errors Kafka's producer retries InitProducerId on: the transaction coordinator is still loading (a fresh Kafka creates __transaction_state on the first one). */
const RETRIABLE_INIT = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR]);

/** An idempotent producer id and epoch (InitProducerId without a transactional id), retrying for up to 60 s while the coordinator loads. */
export async function initProducerId(conn: Connection): Promise<{ producerId: bigint; producerEpoch: number }> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const init = await conn.request(InitProducerIdApi, InitProducerIdApi.request.create({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }));
    if (init.errorCode === 0) return { producerId: init.producerId, producerEpoch: init.producerEpoch };
    if (!RETRIABLE_INIT.has(init.errorCode) || performance.now() > deadline) throw new Error(`InitProducerId: ${errorByCode(init.errorCode).name}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Writes `o.bytes` of records with `o.producers` idempotent producers; throws on the first error. */
export async function writeIdempotent(o: WriteOptions): Promise<WriteResult> {
  if (o.inFlight < 1 || o.inFlight > MAX_IDEMPOTENT_IN_FLIGHT) throw new Error(`in-flight must be 1..${MAX_IDEMPOTENT_IN_FLIGHT} for an idempotent producer`);
  const producers = Math.min(o.producers, o.partitions);
  const template = await idempotentTemplate(o.recordSize, o.recordsPerBatch);
  const batchPayload = o.recordSize * o.recordsPerBatch;
  const recordsPerPartition = new Array<number>(o.partitions).fill(0);
  const budget = { left: Math.ceil(o.bytes / batchPayload) };
  let acked = 0;
  const t0 = performance.now();
  let lastLog = t0;

  await Promise.all(
    Array.from({ length: producers }, async (_, index) => {
      const owned = Array.from({ length: o.partitions }, (_, p) => p).filter((p) => p % producers === index);
      const conn = await o.client.cluster.connectionTo(o.leader, o.laneBase + index);
      const { producerId, producerEpoch } = await initProducerId(conn);
      const sequence = new Map(owned.map((p) => [p, 0]));
      const version = conn.versionFor(ProduceApi);
      const slot = async (): Promise<void> => {
        while (budget.left > 0) {
          const n = Math.min(owned.length, budget.left);
          budget.left -= n;
          const parts = owned.slice(0, n);
          // Sequences are taken in send order; one connection answers in order, so they reach the log in order.
          const partitionData = parts.map((p) => {
            const seq = sequence.get(p)!;
            sequence.set(p, seq + o.recordsPerBatch);
            return { index: p, records: stampIdempotent(template, producerId, producerEpoch, seq) };
          });
          const request: ProduceRequest = { transactionalId: null, acks: -1, timeoutMs: 30_000, topicData: [{ name: o.topic, partitionData }] };
          const res = await conn.request(ProduceApi, request, { version, timeoutMs: 120_000 });
          for (const t of res.responses) {
            for (const p of t.partitionResponses) {
              if (p.errorCode !== 0) throw new Error(`Produce ${o.topic}-${p.index}: ${errorByCode(p.errorCode).name}${p.errorMessage ? ` (${p.errorMessage})` : ''}`);
              recordsPerPartition[p.index]! += o.recordsPerBatch;
              acked += o.recordsPerBatch;
            }
          }
          if (performance.now() - lastLog > 5000) {
            lastLog = performance.now();
            o.log(`  ${((acked * o.recordSize) / 2 ** 30).toFixed(2)} GiB acknowledged (${((acked * o.recordSize) / 2 ** 20 / ((lastLog - t0) / 1000)).toFixed(0)} MiB/s)`);
          }
        }
      };
      try {
        await Promise.all(Array.from({ length: o.inFlight }, slot));
      } catch (e) {
        budget.left = 0; // the other producers stop too
        throw e;
      }
    }),
  );
  return { bytes: acked * o.recordSize, records: acked, recordsPerPartition, ms: performance.now() - t0 };
}
