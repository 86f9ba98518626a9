/**
 * One fuzz case from a seeded PRNG, by kind (weights below):
 *   valid      a request of a served API and version as the generated encoder writes it (must be answered)
 *   field      field-level mutations: extremes, nulls, huge strings and arrays, unknown tagged fields
 *   structure  a length, count or integer of the encoding lies (TracingWriter sites)
 *   bytes      bit flips, truncation, insertion, deletion, repetition
 *   records    Produce of record batches of every codec, valid or with valid CRC and broken records
 *   frame      frame-size lies (frames.ts)
 */
import type { ApiDescriptor } from '../../../protocol/api.js';
import { CompressionType } from '../../../protocol/compression/index.js';
import { ProduceApi } from '../../../protocol/messages/000-produce.gen.js';
import type { Handler } from '../../../src/api/handler.js';
import { frameLie } from './frames.js';
import { generateRequest, type World } from './generators.js';
import { encodeTracedFrame, mutateBytes, mutateStructure, type EncodedFrame } from './mutators.js';
import type { Prng } from './prng.js';
import { fuzzBatch, type FuzzBatch } from './records.js';
import type { RequestSchema } from './schemas.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';

export type CaseKind = 'valid' | 'field' | 'structure' | 'bytes' | 'records' | 'frame';

const KIND_WEIGHTS: readonly (readonly [number, CaseKind])[] = [
  [15, 'valid'],
  [28, 'field'],
  [20, 'structure'],
  [15, 'bytes'],
  [14, 'records'],
  [8, 'frame'],
];

/** What cases are made from. */
export interface CaseContext {
  handlers: ReadonlyMap<number, Handler>;
  messages: ReadonlyMap<number, RequestSchema>;
  world: World;
  maxRequestBytes: number;
  deadlineMs: number;
}

export interface Case {
  kind: CaseKind;
  what: string;
  apiKey: number;
  version: number;
  /** The frame (consistent size prefix) for exchange cases; frame cases write their own. */
  frame?: Buffer;
  /** Batches per produced partition, for records cases: topic/partition → batches. */
  produced?: { topic: string; partition: number; batches: FuzzBatch[] }[];
  /** Frame cases run themselves. */
  run?: (port: number) => Promise<{ finding: string | null; detail: string }>;
}


const pairsCache = new WeakMap<ReadonlyMap<number, Handler>, [number, number][]>();

/** Every (API key, version) the broker serves: cases pick uniformly among them. */
function servedPairs(handlers: ReadonlyMap<number, Handler>): [number, number][] {
  let out = pairsCache.get(handlers);
  if (!out) {
    out = [];
    for (const h of handlers.values()) for (let v = h.versions.min; v <= h.versions.max; v++) out.push([h.api.apiKey, v]);
    pairsCache.set(handlers, out);
  }
  return out;
}

export async function makeCase(rng: Prng, ctx: CaseContext): Promise<Case> {
  const { handlers, messages } = ctx;
  const kind = rng.weighted(KIND_WEIGHTS);
  if (kind === 'records') return recordsCase(rng, ctx);
  const [apiKey, version] = rng.pick(servedPairs(handlers));
  const api = handlers.get(apiKey)!.api;
  if (kind === 'frame') {
    const valid = encodeCase(rng, api, version, messages.get(apiKey)!, ctx.world, 0, []).bytes;
    return { kind, apiKey, version, ...frameLie(rng, valid, `${api.name} v${version}`, handlers, ctx.maxRequestBytes, ctx.deadlineMs) };
  }
  const log: string[] = [];
  const encoded = encodeCase(rng, api, version, messages.get(apiKey)!, ctx.world, kind === 'field' ? rng.pick([0.05, 0.1, 0.25]) : kind === 'valid' ? 0 : rng.chance(0.3) ? 0.05 : 0, log);
  let frame = encoded.bytes;
  if (kind === 'structure') {
    const n = rng.chance(0.8) ? 1 : 2;
    for (let i = 0; i < n; i++) {
      const m = mutateStructure(rng, { ...encoded, bytes: frame });
      frame = m.bytes;
      log.push(m.what);
    }
  } else if (kind === 'bytes') {
    const m = mutateBytes(rng, encoded);
    frame = m.bytes;
    log.push(m.what);
  }
  return { kind, what: `${api.name} v${version}${log.length ? `: ${log.join('; ')}` : ''}`, apiKey, version, frame };
}

/**
 * Generates and encodes a request; values the encoder refuses for this version (a huge string in a
 * non-flexible version, say) are regenerated with fewer mutations, down to none.
 */
function encodeCase(rng: Prng, api: ApiDescriptor, version: number, msg: RequestSchema, world: World, rate: number, log: string[]): EncodedFrame {
  for (let r = rate; ; r = r > 0.01 ? r / 3 : 0) {
    const attempt: string[] = [];
    const body = generateRequest(rng, msg, version, world, { mutationRate: r, log: attempt });
    const clientId = rng.weighted<string | null>([[8, 'fuzz'], [1, null], [1, ''], [r > 0 ? 1 : 0, 'c'.repeat(rng.pick([300, 32_767]))]]);
    try {
      const enc = encodeTracedFrame(api, version, rng.int(0x40000000), clientId, body);
      log.push(...attempt);
      if (clientId && clientId.length > 100) log.push(`clientId: ${clientId.length} bytes`);
      return enc;
    } catch (e) {
      if (r === 0) throw e;
    }
  }
}

async function recordsCase(rng: Prng, ctx: CaseContext): Promise<Case> {
  const h = ctx.handlers.get(ProduceApi.apiKey)!;
  const version = rng.range(h.versions.min, h.versions.max);
  const produced: NonNullable<Case['produced']> = [];
  const nPartitions = rng.chance(0.8) ? 1 : 2;
  for (let i = 0; i < nPartitions; i++) {
    const t = rng.pick(ctx.world.topics);
    const partition = rng.int(Math.max(1, t.partitions));
    if (produced.some((p) => p.topic === t.name && p.partition === partition)) continue;
    const batches: FuzzBatch[] = [];
    const n = rng.chance(0.85) ? 1 : rng.range(2, 3);
    for (let j = 0; j < n; j++) {
      const b = rng.chance(0.03) ? { bytes: rng.pick(ctx.world.bombs), codec: -1, variant: 'decompression-bomb', mustReject: false } : await fuzzBatch(rng);
      // zstd needs Produce v7+ (KIP-110): Kafka answers UNSUPPORTED_COMPRESSION_TYPE below it.
      if (b.codec === CompressionType.ZSTD && version < 7) b.mustReject = true;
      batches.push(b);
    }
    produced.push({ topic: t.name, partition, batches });
  }
  const acks = rng.weighted([[6, -1], [3, 1], [1, 0]]);
  const byTopic = new Map<string, { index: number; records: Buffer }[]>();
  for (const p of produced) {
    if (!byTopic.has(p.topic)) byTopic.set(p.topic, []);
    byTopic.get(p.topic)!.push({ index: p.partition, records: Buffer.concat(p.batches.map((b) => b.bytes)) });
  }
  const body = ProduceApi.request.create({ transactionalId: null, acks, timeoutMs: 5000, topicData: [...byTopic].map(([name, partitionData]) => ({ name, topicId: ZERO_UUID, partitionData })) });
  const frame = encodeTracedFrame(ProduceApi, version, rng.int(0x40000000), 'fuzz', body).bytes;
  const what = `Produce v${version} acks=${acks}: ${produced.map((p) => `${p.topic}-${p.partition} [${p.batches.map((b) => `${b.codec}:${b.variant}`).join(', ')}]`).join('; ')}`;
  return { kind: 'records', what, apiKey: ProduceApi.apiKey, version, frame, produced };
}

