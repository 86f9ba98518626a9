/**
 * Support for golden-bytes tests: annotated hex fixtures under test/golden/, byte helpers around the
 * generated codecs, an independent record batch v2 builder, and access to kafkajs 2.2.4's own protocol
 * encoders and decoders (its `src/protocol/requests/<api>/index.js` modules), which the tests use as a
 * second implementation of the wire format.
 *
 * Annotated hex: `#` starts a comment that runs to the end of the line; everything else is hex digits and
 * whitespace. Comments name the Kafka field each group of bytes encodes, e.g.
 *
 *   00 12            # request_api_key = 18 (ApiVersions)
 *   00 03            # request_api_version = 3
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { crc32, crc32c } from '@node-rs/crc32';
import type { MessageCodec } from '../../protocol/api.js';
import { Reader } from '../../protocol/wire/reader.js';
import { Writer } from '../../protocol/wire/writer.js';

export const GOLDEN_ROOT = fileURLToPath(new URL('../golden/', import.meta.url));

/** Parses annotated hex: strips `#` comments and whitespace, then requires an even run of hex digits. */
export function parseAnnotatedHex(text: string): Buffer {
  const digits = text
    .split('\n')
    .map((line) => {
      const hash = line.indexOf('#');
      return hash < 0 ? line : line.slice(0, hash);
    })
    .join('')
    .replace(/\s+/g, '');
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(digits)) {
    throw new Error(`annotated hex has a non-hex character or an odd digit count: ${digits.slice(0, 40)}…`);
  }
  return Buffer.from(digits, 'hex');
}

/** The bytes of `test/golden/<path>`. */
export function loadGolden(path: string): Buffer {
  return parseAnnotatedHex(readFileSync(join(GOLDEN_ROOT, path), 'utf8'));
}

/** Every fixture file under test/golden/, as paths relative to it with `/` separators. */
export function listGoldenFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.hex')) out.push(relative(GOLDEN_ROOT, p).split(sep).join('/'));
    }
  };
  walk(GOLDEN_ROOT);
  return out;
}

/** Hex with a space every byte, for readable assertion diffs. */
export function hex(b: Buffer): string {
  return b.toString('hex').replace(/(..)(?!$)/g, '$1 ');
}

export function encodeWith<T>(codec: MessageCodec<T>, message: T, version: number): Buffer {
  const w = new Writer(64);
  codec.encode(w, message, version);
  return w.toBuffer();
}

/** Decodes exactly `bytes` (a DecodeError if anything is left over). */
export function decodeWith<T>(codec: MessageCodec<T>, bytes: Buffer, version: number): T {
  const r = new Reader(bytes);
  const m = codec.decode(r, version);
  r.complete();
  return m;
}

/** `int16 version` + the message in that version: how Kafka frames consumer protocol data and coordinator records. */
export function versionPrefixed(write: (w: Writer) => void, version: number): Buffer {
  const w = new Writer(64);
  w.int16(version);
  write(w);
  return w.toBuffer();
}

// ---------------------------------------------------------------------------------------------------------
// Record batch v2 (KIP-98), built from Kafka's DefaultRecordBatch layout without any client's code:
//
//   baseOffset int64 | batchLength int32 | partitionLeaderEpoch int32 | magic int8 (2) | crc uint32 |
//   attributes int16 | lastOffsetDelta int32 | baseTimestamp int64 | maxTimestamp int64 | producerId int64 |
//   producerEpoch int16 | baseSequence int32 | records count int32 | records…
//
//   record: length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
//           keyLength varint | key | valueLength varint | value | headers count varint | headers…
//   header: keyLength varint | key | valueLength varint | value
//
// batchLength counts from partitionLeaderEpoch to the end; the CRC-32C covers attributes…end.

export interface GoldenRecord {
  timestampDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers?: { key: string; value: Buffer }[];
}

export interface GoldenBatch {
  baseOffset?: bigint;
  partitionLeaderEpoch?: number;
  attributes?: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
  records: GoldenRecord[];
}

export function recordBatchV2(b: GoldenBatch): Buffer {
  const body = new Writer(128);
  body.int16(b.attributes ?? 0);
  body.int32(b.records.length - 1);
  body.int64(b.baseTimestamp);
  body.int64(b.maxTimestamp);
  body.int64(b.producerId ?? -1n);
  body.int16(b.producerEpoch ?? 0);
  body.int32(b.baseSequence ?? 0);
  body.int32(b.records.length);
  b.records.forEach((rec, i) => {
    const r = new Writer(64);
    r.int8(0);
    r.varlong(rec.timestampDelta);
    r.varint(i);
    varintBytes(r, rec.key);
    varintBytes(r, rec.value);
    const headers = rec.headers ?? [];
    r.varint(headers.length);
    for (const h of headers) {
      varintBytes(r, Buffer.from(h.key, 'utf8'));
      varintBytes(r, h.value);
    }
    body.varint(r.length);
    body.raw(r.toBuffer());
  });
  const bodyBytes = body.toBuffer();
  const out = new Writer(bodyBytes.length + 32);
  out.int64(b.baseOffset ?? 0n);
  out.int32(4 + 1 + 4 + bodyBytes.length);
  out.int32(b.partitionLeaderEpoch ?? 0);
  out.int8(2);
  out.uint32(crc32c(bodyBytes) >>> 0);
  out.raw(bodyBytes);
  return out.toBuffer();
}

/**
 * A legacy message set (message format v0 or v1, before KIP-98), as Produce v0-2 and Fetch v0-3 carry it:
 *
 *   offset int64 | messageSize int32 | crc int32 | magic int8 | attributes int8 | [timestamp int64, v1] |
 *   key bytes (int32 length, -1 = null) | value bytes
 *
 * The CRC-32 (IEEE) covers magic…end.
 */
export function legacyMessageSet(magic: 0 | 1, messages: { offset: bigint; timestamp: bigint; key: Buffer | null; value: Buffer | null }[]): Buffer {
  const out = new Writer(128);
  for (const m of messages) {
    const body = new Writer(64);
    body.int8(magic);
    body.int8(0);
    if (magic === 1) body.int64(m.timestamp);
    body.nullableBytes(m.key);
    body.nullableBytes(m.value);
    const bodyBytes = body.toBuffer();
    out.int64(m.offset);
    out.int32(4 + bodyBytes.length);
    out.int32(crc32(bodyBytes) | 0);
    out.raw(bodyBytes);
  }
  return out.toBuffer();
}

function varintBytes(w: Writer, b: Buffer | null): void {
  if (b === null) {
    w.varint(-1);
    return;
  }
  w.varint(b.length);
  w.raw(b);
}

// ---------------------------------------------------------------------------------------------------------
// kafkajs 2.2.4, loaded from its sources (CommonJS).

const require = createRequire(import.meta.url);

/** A kafkajs request: what `requests/<api>/index.js` `protocol({ version })(args).request` returns. */
export interface KafkajsRequest {
  apiKey: number;
  apiVersion: number;
  encode(): Promise<{ buffer: Buffer }>;
}

/** A kafkajs response codec; decoded values are plain objects whose shape each test spells out. */
export interface KafkajsResponse {
  decode(payload: Buffer): Promise<any>;
  parse(decoded: any): Promise<any>;
}

interface KafkajsApiModule {
  protocol(o: { version: number }): ((args: unknown) => { request: KafkajsRequest; response: KafkajsResponse }) | undefined;
}

/** kafkajs's request and response codecs for `api` (its folder name, e.g. `joinGroup`) at `version`. */
export function kafkajsProtocol(api: string, version: number, args: unknown): { request: KafkajsRequest; response: KafkajsResponse } {
  const mod = require(`kafkajs/src/protocol/requests/${api}/index.js`) as KafkajsApiModule;
  const make = mod.protocol({ version });
  if (!make) throw new Error(`kafkajs has no ${api} v${version}`);
  return make(args);
}

/** The versions kafkajs implements for `api` (its `index.js` `versions`). */
export function kafkajsVersions(api: string): number[] {
  const mod = require(`kafkajs/src/protocol/requests/${api}/index.js`) as { versions: string[] };
  return mod.versions.map(Number).sort((a, b) => a - b);
}

/** The request body kafkajs writes (no size prefix, no header). */
export async function kafkajsRequestBody(request: KafkajsRequest): Promise<Buffer> {
  return Buffer.from((await request.encode()).buffer);
}

/** The whole request frame kafkajs writes (size prefix and header v1), from its `protocol/request.js`. */
export async function kafkajsRequestFrame(request: KafkajsRequest, correlationId: number, clientId: string): Promise<Buffer> {
  const frame = require('kafkajs/src/protocol/request.js') as (o: {
    correlationId: number;
    clientId: string;
    request: KafkajsRequest;
  }) => Promise<{ buffer: Buffer }>;
  return Buffer.from((await frame({ correlationId, clientId, request })).buffer);
}

// kafkajs decoders never check for unread bytes. To make "kafkajs reads our response" a strong check, the
// Decoder's `offset` becomes an accessor that registers each decoder as it is constructed; after a decode
// the test knows how far the top-level decoder got.
const KafkajsDecoder = require('kafkajs/src/protocol/decoder.js') as { prototype: object };
const OFFSET = Symbol('offset');
let tracked: { buffer: Buffer; [OFFSET]: number }[] | null = null;
Object.defineProperty(KafkajsDecoder.prototype, 'offset', {
  configurable: true,
  get(this: { [OFFSET]: number }) {
    return this[OFFSET];
  },
  set(this: { buffer: Buffer; [OFFSET]: number | undefined }, v: number) {
    if (this[OFFSET] === undefined && tracked) tracked.push(this as { buffer: Buffer; [OFFSET]: number });
    this[OFFSET] = v;
  },
});

/**
 * Decodes a response payload (the frame after size and correlation id) with kafkajs and reports how many
 * bytes its top-level decoder left unread.
 */
export async function kafkajsDecode(response: KafkajsResponse, payload: Buffer): Promise<{ decoded: any; unread: number }> {
  tracked = [];
  try {
    const decoded = await response.decode(payload);
    const top = tracked.find((d) => d.buffer === payload);
    if (!top) throw new Error('kafkajs did not decode the payload it was given');
    return { decoded, unread: payload.length - top[OFFSET] };
  } finally {
    tracked = null;
  }
}

/** kafkajs's consumer protocol encoders (`src/consumer/assignerProtocol.js`). */
export const kafkajsAssignerProtocol = require('kafkajs/src/consumer/assignerProtocol.js') as {
  MemberMetadata: {
    encode(o: { version: number; topics: string[]; userData?: Buffer }): Buffer;
    decode(b: Buffer): { version: number; topics: string[]; userData: Buffer | null };
  };
  MemberAssignment: {
    encode(o: { version: number; assignment: Record<string, number[]>; userData?: Buffer }): Buffer;
    decode(b: Buffer): { version: number; assignment: Record<string, number[]>; userData: Buffer | null } | null;
  };
};
