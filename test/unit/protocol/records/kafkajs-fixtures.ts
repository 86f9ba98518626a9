/**
 * Record batches and legacy message sets written by kafkajs 2.2.4's own encoders, the way its producer
 * writes them (Produce v3 partition encoding: offsetDelta = index, baseTimestamp = the smallest timestamp).
 *
 * kafkajs ships gzip only; snappy, lz4 and zstd come from plugins that register a codec in
 * `CompressionCodecs`. The plugins are emulated with the framing each writes: kafkajs-snappy raw Snappy
 * (or, for a Java-like stream, xerial), kafkajs-lz4 an npm `lz4` frame (4 MiB blocks, content checksum),
 * a zstd codec a standard frame.
 */
import { createRequire } from 'node:module';
import * as zstd from '@mongodb-js/zstd';
import snappyjs from 'snappyjs';
import { javaXerial, lz4Frame } from '../compression/fixtures.js';

const require = createRequire(import.meta.url);

interface KafkajsEncoder {
  buffer: Buffer;
}
interface KafkajsCodec {
  compress(encoder: KafkajsEncoder): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as {
  RecordBatch: (args: object) => Promise<KafkajsEncoder & { size(): number }>;
};
const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: object) => unknown;
const { Codecs, Types } = require('kafkajs/src/protocol/message/compression/index.js') as {
  Codecs: Record<number, (() => KafkajsCodec) | undefined>;
  Types: Record<string, number>;
};
const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: number | string): unknown };
const MessageSet = require('kafkajs/src/protocol/messageSet/index.js') as (args: object) => KafkajsEncoder;
const MessageV0 = require('kafkajs/src/protocol/message/v0/index.js') as (args: object) => KafkajsEncoder & { size(): number };
const MessageV1 = require('kafkajs/src/protocol/message/v1/index.js') as (args: object) => KafkajsEncoder & { size(): number };
const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buf: Buffer) => unknown;
const decodeKafkajsBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (d: unknown) => Promise<{
  firstOffset: string;
  records: Array<{ key: Buffer | null; value: Buffer | null; headers: Record<string, Buffer>; timestamp: string; offset: string }>;
  producerId: string;
  inTransaction: boolean;
  isControlBatch: boolean;
}>;

export { Types as KafkajsCompression };

export type SnappyFramingFixture = 'raw' | 'xerial';

const pluginCodecs: Record<number, (snappy: SnappyFramingFixture) => KafkajsCodec> = {
  [Types.Snappy!]: (snappy) => ({
    compress: async (e) => (snappy === 'xerial' ? javaXerial(e.buffer) : snappyjs.compress(e.buffer)),
    decompress: () => Promise.reject(new Error('not used')),
  }),
  [Types.LZ4!]: () => ({
    compress: async (e) =>
      lz4Frame(e.buffer, { flg: 0x64, bd: 0x70, blockSize: 4 * 1024 * 1024, contentChecksum: true }),
    decompress: () => Promise.reject(new Error('not used')),
  }),
  [Types.ZSTD!]: () => ({
    compress: (e) => zstd.compress(e.buffer, 3),
    decompress: () => Promise.reject(new Error('not used')),
  }),
};

export interface KafkajsMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  headers?: Record<string, string | Buffer | Array<string | Buffer>>;
  timestamp?: number;
}

export interface KafkajsBatchOptions {
  compression?: number;
  snappy?: SnappyFramingFixture;
  producerId?: number;
  producerEpoch?: number;
  firstSequence?: number;
  transactional?: boolean;
}

/** One batch v2 as kafkajs's producer encodes a partition's messages. */
export async function kafkajsBatch(messages: KafkajsMessage[], options: KafkajsBatchOptions = {}): Promise<Buffer> {
  const compression = options.compression ?? Types.None!;
  const now = Date.now();
  const timestamps = messages.map((m) => m.timestamp).filter((t): t is number => t != null).sort((a, b) => a - b);
  const firstTimestamp = timestamps.length ? timestamps[0]! : now;
  const maxTimestamp = timestamps.length ? timestamps[timestamps.length - 1]! : now;
  const records = messages.map((m, i) =>
    Record({ ...m, offsetDelta: i, timestampDelta: (m.timestamp ?? now) - firstTimestamp }),
  );
  const previous = Codecs[compression];
  const plugin = pluginCodecs[compression];
  if (plugin) Codecs[compression] = () => plugin(options.snappy ?? 'raw');
  try {
    const batch = await RecordBatch({
      compression,
      records,
      firstTimestamp,
      maxTimestamp,
      producerId: Long.fromValue(options.producerId ?? -1),
      producerEpoch: options.producerEpoch ?? 0,
      firstSequence: options.firstSequence ?? 0,
      transactional: options.transactional ?? false,
      lastOffsetDelta: records.length - 1,
    });
    return Buffer.from(batch.buffer);
  } finally {
    Codecs[compression] = previous;
  }
}

/** kafkajs's record batch decoder (uncompressed or gzip), to check what the builder writes. */
export async function decodeWithKafkajs(batch: Buffer) {
  return decodeKafkajsBatch(new Decoder(batch));
}

/** An uncompressed legacy message set (magic 0 or 1) from kafkajs's encoders. */
export function kafkajsMessageSet(
  magic: 0 | 1,
  entries: Array<{ key: Buffer | string | null; value: Buffer | string | null; timestamp?: number }>,
): Buffer {
  return Buffer.from(MessageSet({ messageVersion: magic, compression: Types.None, entries }).buffer);
}

/**
 * A compressed legacy wrapper the way producers wrote them: inner messages with offsets 0..n-1 (relative in
 * v1), the wrapper's value the compressed inner set and its offset that of the last inner message.
 */
export function legacyWrapper(
  magic: 0 | 1,
  compression: number,
  compressedInner: Buffer,
  wrapperOffset: number,
  timestamp = 0,
): Buffer {
  const Message = magic === 0 ? MessageV0 : MessageV1;
  const message = Message({ compression, key: null, value: compressedInner, timestamp });
  const head = Buffer.alloc(12);
  head.writeBigInt64BE(BigInt(wrapperOffset), 0);
  head.writeInt32BE(message.size(), 8);
  return Buffer.concat([head, message.buffer]);
}

/** Inner message set of a compressed wrapper: kafkajs writes offsets 0..n-1 for compressed sets. */
export function kafkajsInnerSet(
  magic: 0 | 1,
  entries: Array<{ key: Buffer | string | null; value: Buffer | string | null; timestamp?: number }>,
): Buffer {
  return Buffer.from(MessageSet({ messageVersion: magic, compression: Types.GZIP, entries }).buffer);
}
