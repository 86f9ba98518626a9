/**
 * Record batches for the fuzzer: valid batches v2 of every codec (none, gzip, snappy, lz4, zstd), and
 * batches whose CRC-32C is right but whose records are broken, so the broker must look inside a batch to
 * refuse it. Records are written here byte by byte (not with protocol/records/builder.ts) because the point
 * is to write what the builder refuses to: counts, lengths and deltas that lie.
 *
 *   batch: baseOffset int64 | batchLength int32 | leaderEpoch int32 | magic int8 | crc uint32 |
 *          attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 |
 *          producerId int64 | producerEpoch int16 | baseSequence int32 | recordCount int32 | records
 *   record: length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
 *           keyLength varint | key | valueLength varint | value | headerCount varint | headers
 */
import { compress, CompressionType } from '../../../protocol/compression/index.js';
import { crc32c } from '../../../protocol/crc32c.js';
import { BatchField, RECORD_BATCH_OVERHEAD } from '../../../protocol/records/batch.js';
import { splitRecordBatches } from '../../../protocol/records/split.js';
import { Writer } from '../../../protocol/wire/writer.js';
import type { Prng } from './prng.js';

export const CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD] as const;

/** What a batch was made to be: valid, or broken in one named way. */
export interface FuzzBatch {
  bytes: Buffer;
  codec: number;
  /** `valid` or the name of the lie. */
  variant: string;
  /** True when Kafka's LogValidator refuses such a batch: the broker must answer it with a partition error. */
  mustReject: boolean;
}

interface RecordSpec {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: Buffer; value: Buffer | null }[];
  /** Lies, applied when writing. */
  lengthDelta?: number;
  keyLength?: number;
  valueLength?: number;
  headerCount?: number;
}

function writeRecord(w: Writer, r: RecordSpec): void {
  const body = new Writer(64);
  body.int8(r.attributes);
  body.varlong(r.timestampDelta);
  body.varint(r.offsetDelta);
  body.varint(r.keyLength ?? (r.key === null ? -1 : r.key.length));
  if (r.key) body.raw(r.key);
  body.varint(r.valueLength ?? (r.value === null ? -1 : r.value.length));
  if (r.value) body.raw(r.value);
  body.varint(r.headerCount ?? r.headers.length);
  for (const h of r.headers) {
    body.varint(h.key.length);
    body.raw(h.key);
    body.varint(h.value === null ? -1 : h.value.length);
    if (h.value) body.raw(h.value);
  }
  const bytes = body.toBuffer();
  w.varint(bytes.length + (r.lengthDelta ?? 0));
  w.raw(bytes);
}

export interface BatchHeader {
  baseOffset: bigint;
  partitionLeaderEpoch: number;
  magic: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
  /** Added to the true batch length. */
  batchLengthDelta: number;
}

/** Joins a header and a (compressed) record payload and writes the CRC-32C over attributes..end. */
export function assembleBatch(h: BatchHeader, payload: Buffer): Buffer {
  const b = Buffer.alloc(RECORD_BATCH_OVERHEAD + payload.length);
  b.writeBigInt64BE(h.baseOffset, BatchField.BASE_OFFSET);
  b.writeInt32BE(b.length - 12 + h.batchLengthDelta, BatchField.BATCH_LENGTH);
  b.writeInt32BE(h.partitionLeaderEpoch, BatchField.PARTITION_LEADER_EPOCH);
  b.writeInt8(h.magic, BatchField.MAGIC);
  b.writeInt16BE(h.attributes, BatchField.ATTRIBUTES);
  b.writeInt32BE(h.lastOffsetDelta, BatchField.LAST_OFFSET_DELTA);
  b.writeBigInt64BE(h.baseTimestamp, BatchField.BASE_TIMESTAMP);
  b.writeBigInt64BE(h.maxTimestamp, BatchField.MAX_TIMESTAMP);
  b.writeBigInt64BE(h.producerId, BatchField.PRODUCER_ID);
  b.writeInt16BE(h.producerEpoch, BatchField.PRODUCER_EPOCH);
  b.writeInt32BE(h.baseSequence, BatchField.BASE_SEQUENCE);
  b.writeInt32BE(h.recordCount, BatchField.RECORD_COUNT);
  payload.copy(b, BatchField.RECORDS);
  b.writeUInt32BE(crc32c(b.subarray(BatchField.ATTRIBUTES)) >>> 0, BatchField.CRC);
  return b;
}

function randomRecords(rng: Prng, n: number): RecordSpec[] {
  const out: RecordSpec[] = [];
  for (let i = 0; i < n; i++) {
    const headers = rng.chance(0.3) ? [{ key: Buffer.from(`h${rng.int(9)}`), value: rng.chance(0.2) ? null : rng.bytes(rng.int(8)) }] : [];
    out.push({
      attributes: 0,
      timestampDelta: rng.int(50),
      offsetDelta: i,
      key: rng.chance(0.3) ? null : Buffer.from(`k${rng.int(1000)}`),
      value: rng.chance(0.05) ? null : rng.bytes(rng.int(rng.chance(0.1) ? 4000 : 60)),
      headers,
    });
  }
  return out;
}

type Lie = (rng: Prng, records: RecordSpec[], h: BatchHeader) => void;

/** The ways a batch with a valid CRC can still be wrong; `true` where Kafka refuses it for certain. */
const LIES: Record<string, { mustReject: boolean; apply: Lie }> = {
  'record-count-high': { mustReject: true, apply: (rng, _r, h) => (h.recordCount += rng.pick([1, 2, 1000, 0x7fffffff - h.recordCount])) },
  'record-count-low': { mustReject: true, apply: (rng, r, h) => (h.recordCount = rng.int(r.length)) },
  'record-count-negative': { mustReject: true, apply: (rng, _r, h) => (h.recordCount = rng.pick([-1, -2, -0x80000000])) },
  'last-offset-delta': { mustReject: true, apply: (rng, _r, h) => (h.lastOffsetDelta = rng.pick([h.lastOffsetDelta + 1, -1, 0x7fffffff, h.lastOffsetDelta + 7])) },
  'record-length-long': { mustReject: true, apply: (rng, r) => (rng.pick(r).lengthDelta = rng.pick([1, 5, 1 << 20, 0x3fffffff])) },
  'record-length-short': { mustReject: true, apply: (rng, r) => (rng.pick(r).lengthDelta = -rng.range(1, 3)) },
  // Kafka reads any negative key or value length as null (DefaultRecord.readFrom), so only lengths past the
  // end of the record are certain to be refused; negative ones are a separate, answer-only lie.
  'key-length': { mustReject: true, apply: (rng, r) => (rng.pick(r).keyLength = rng.pick([1 << 20, 0x7fffffff])) },
  'value-length': { mustReject: true, apply: (rng, r) => (rng.pick(r).valueLength = rng.pick([1 << 24, 0x7fffffff])) },
  'negative-lengths': { mustReject: false, apply: (rng, r) => (rng.pick(r).valueLength = rng.pick([-2, -1000, -0x80000000])) },
  'header-count': { mustReject: true, apply: (rng, r) => (rng.pick(r).headerCount = rng.pick([1000, 0x7fffffff, -2, -0x80000000])) },
  'unknown-codec': { mustReject: true, apply: (rng, _r, h) => (h.attributes = (h.attributes & ~7) | rng.pick([5, 6, 7])) },
  'magic': { mustReject: true, apply: (rng, _r, h) => (h.magic = rng.pick([0, 1, 3, -1])) },
  'control-batch': { mustReject: true, apply: (_rng, _r, h) => (h.attributes |= 0x20) },
  'batch-length-long': { mustReject: true, apply: (rng, _r, h) => (h.batchLengthDelta = rng.pick([1, 4, 1 << 20, 0x7fff0000])) },
  'batch-length-short': { mustReject: true, apply: (rng, _r, h) => (h.batchLengthDelta = -rng.range(1, 40)) },
  'sequence-without-producer': { mustReject: true, apply: (rng, _r, h) => ((h.producerId = BigInt(rng.range(1, 1000))), (h.baseSequence = -1)) },
  'record-attributes': { mustReject: false, apply: (rng, r) => (rng.pick(r).attributes = rng.pick([1, 0x7f, -1])) },
  'offset-deltas': { mustReject: false, apply: (rng, r) => r.forEach((x) => (x.offsetDelta = rng.pick([0, -1, 0x7fffffff, rng.int(10)]))) },
  'timestamps': {
    mustReject: false,
    apply: (rng, r, h) => {
      rng.pick(r).timestampDelta = rng.pick([-(2 ** 51), 2 ** 51, -1]);
      h.maxTimestamp = rng.pick([-1n, 0n, 2n ** 62n, -(2n ** 63n)]);
    },
  },
  'base-offset': { mustReject: false, apply: (rng, _r, h) => (h.baseOffset = rng.int64()) },
  'leader-epoch': { mustReject: false, apply: (rng, _r, h) => (h.partitionLeaderEpoch = rng.pick([0x7fffffff, 5, -2])) },
  'transactional-no-producer': { mustReject: false, apply: (_rng, _r, h) => (h.attributes |= 0x10) },
};
export const LIE_NAMES = Object.keys(LIES);

/** The ways the payload itself can be wrong once it has been compressed (the CRC still matches). */
const PAYLOAD_LIES = ['truncated-payload', 'garbage-payload', 'flipped-compressed'] as const;

/** A valid batch of `codec` with a few random records. */
export async function validBatch(rng: Prng, codec: number, count = rng.range(1, 5)): Promise<Buffer> {
  return (await makeBatch(rng, codec, 'valid', count)).bytes;
}

/** A batch of a random codec: valid, or broken by one randomly chosen lie. */
export async function fuzzBatch(rng: Prng, validShare = 0.2): Promise<FuzzBatch> {
  const codec = rng.pick(CODECS);
  const variant = rng.chance(validShare) ? 'valid' : rng.pick([...LIE_NAMES, ...PAYLOAD_LIES]);
  return makeBatch(rng, codec, variant, rng.range(1, 6));
}

async function makeBatch(rng: Prng, codec: number, variant: string, count: number): Promise<FuzzBatch> {
  const records = randomRecords(rng, count);
  const now = BigInt(Date.now());
  const h: BatchHeader = {
    baseOffset: 0n,
    partitionLeaderEpoch: -1,
    magic: 2,
    attributes: codec,
    lastOffsetDelta: count - 1,
    baseTimestamp: now,
    maxTimestamp: now + BigInt(Math.max(...records.map((r) => r.timestampDelta))),
    producerId: -1n,
    producerEpoch: -1,
    baseSequence: -1,
    recordCount: count,
    batchLengthDelta: 0,
  };
  let mustReject = false;
  const lie = LIES[variant];
  if (lie) {
    lie.apply(rng, records, h);
    mustReject = lie.mustReject;
  }
  const w = new Writer(256);
  for (const r of records) writeRecord(w, r);
  let raw = w.toBuffer();
  if (variant === 'truncated-payload') {
    raw = raw.subarray(0, rng.int(raw.length));
    mustReject = true;
  }
  if (variant === 'garbage-payload') raw = rng.bytes(rng.range(1, 200));
  let payload = codec === CompressionType.NONE ? raw : await compress(codec, raw);
  if (variant === 'flipped-compressed' && payload.length > 0) {
    payload = Buffer.from(payload);
    for (let i = rng.range(1, 4); i > 0; i--) payload[rng.int(payload.length)] ^= 1 << rng.int(8);
  }
  const bytes = assembleBatch(h, payload);
  // Payload lies that happen to decode (random bytes can, rarely) are judged by the codec itself.
  if (variant === 'garbage-payload' || variant === 'flipped-compressed') mustReject = !(await decodesCleanly(bytes));
  return { bytes, codec, variant, mustReject };
}

/** True when the project's own record decoder reads every record of the batch without complaint. */
export async function decodesCleanly(bytes: Buffer): Promise<boolean> {
  try {
    const batches = splitRecordBatches(bytes);
    for (const b of batches) {
      b.validate();
      const records = await b.readRecords({ maxOutputBytes: 16 * 1024 * 1024 });
      if (records.length !== b.recordCount) return false;
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * A decompression bomb: one record whose value is `size` zero bytes, compressed. Small on the wire, large
 * once inflated; the broker must bound what it inflates (or refuse it) rather than grow without limit.
 */
export async function bombBatch(codec: number, size: number): Promise<Buffer> {
  const w = new Writer(64);
  const zeros = Buffer.alloc(size);
  writeRecord(w, { attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: zeros, headers: [] });
  const payload = await compress(codec, w.toBuffer());
  const now = BigInt(Date.now());
  return assembleBatch(
    { baseOffset: 0n, partitionLeaderEpoch: -1, magic: 2, attributes: codec, lastOffsetDelta: 0, baseTimestamp: now, maxTimestamp: now, producerId: -1n, producerEpoch: -1, baseSequence: -1, recordCount: 1, batchLengthDelta: 0 },
    payload,
  );
}
