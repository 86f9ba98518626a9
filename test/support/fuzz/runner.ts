/**
 * The fuzz loop: for a time budget (or a case count), generate a case from (seed, case index), send it to
 * the broker, judge what came back, and keep the first, smallest example of every distinct finding.
 *
 * Case kinds, by weight:
 *   valid      a request of a served API and version as the generated encoder writes it (must be answered)
 *   field      field-level mutations: extremes, nulls, huge strings and arrays, unknown tagged fields
 *   structure  a length, count or integer of the encoding lies (TracingWriter sites)
 *   bytes      bit flips, truncation, insertion, deletion, repetition
 *   records    Produce of record batches of every codec, valid or with valid CRC and broken records
 *   frame      frame-size lies: larger or smaller than the body, negative, zero, over
 *              socket.request.max.bytes, partial frames then a disconnect, a valid frame dribbled in pieces
 * Between cases the broker process must be alive; every so often (and after anything suspicious) a fresh
 * connection must be served ApiVersions, and the broker's RSS is sampled.
 */
import type { ApiDescriptor } from '../../../protocol/api.js';
import { ProduceApi, type ProduceResponse } from '../../../protocol/messages/000-produce.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { Handler } from '../../../src/api/handler.js';
import type { BrokerProcess } from '../broker-process.js';
import { RawConnection } from '../raw-connection.js';
import { generateRequest, type World } from './generators.js';
import { encodeTracedFrame, mutateBytes, mutateStructure, type EncodedFrame } from './mutators.js';
import { brokerAnswers, deadlineFor, exchange, expectationOf, judge, probeFrame } from './oracles.js';
import { Prng } from './prng.js';
import { loadRequestSchemas, type RequestSchema } from './schemas.js';
import { CompressionType } from '../../../protocol/compression/index.js';
import { fuzzBatch, type FuzzBatch } from './records.js';

export type CaseKind = 'valid' | 'field' | 'structure' | 'bytes' | 'records' | 'frame';

const KIND_WEIGHTS: readonly (readonly [number, CaseKind])[] = [
  [15, 'valid'],
  [28, 'field'],
  [20, 'structure'],
  [15, 'bytes'],
  [14, 'records'],
  [8, 'frame'],
];

export interface FuzzOptions {
  seed: number;
  /** Stop after this long. */
  seconds: number;
  /** Stop after this many cases (whichever comes first). */
  maxCases?: number;
  /** Per-request deadline. */
  deadlineMs: number;
  broker: BrokerProcess;
  handlers: readonly Handler[];
  world: World;
  maxRequestBytes: number;
  /** Progress lines. */
  log?: (line: string) => void;
}

export interface Finding {
  kind: string;
  /** Dedup key: kind and API/version. */
  key: string;
  seed: number;
  caseIndex: number;
  caseKind: CaseKind;
  what: string;
  detail: string;
  /** The frame as sent (size prefix included), hex; long frames are cut. */
  frameHex: string;
  frameBytes: number;
  /** Broker log lines written while the case ran that say why it closed or failed. */
  brokerLog: string[];
  count: number;
}

export interface FuzzReport {
  seed: number;
  cases: number;
  byKind: Record<string, number>;
  /** Wall time spent per case kind, ms. */
  msByKind: Record<string, number>;
  outcomes: Record<string, number>;
  findings: Finding[];
  /** Set when the broker died or stopped answering: the run ended there. */
  fatal: Finding | null;
  peakRssKiB: number;
  seconds: number;
}

interface Case {
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

const HEX_LIMIT = 4096;

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const log = opts.log ?? (() => undefined);
  const handlerMap = new Map(opts.handlers.map((h) => [h.api.apiKey, h]));
  const messages = await loadRequestSchemas(handlerMap.keys());
  const report: FuzzReport = { seed: opts.seed, cases: 0, byKind: {}, msByKind: {}, outcomes: {}, findings: [], fatal: null, peakRssKiB: 0, seconds: 0 };
  const findings = new Map<string, Finding>();
  const t0 = Date.now();
  let conn: RawConnection | null = null;
  let probeId = 0x40000000;

  const record = (c: Case, index: number, kind: string, detail: string, frame: Buffer | undefined, logFrom: number): Finding => {
    // Invalid batches accepted are one finding per lie, whatever the Produce version; the rest per API version.
    const key = kind.startsWith('accepted-') ? kind : `${kind} ${c.apiKey}v${c.version}`;
    const lines = opts.broker.logs.slice(Math.min(logFrom, opts.broker.logs.length)).filter((l) => /closing connection|handler failed|"level":(50|60)|stderr/.test(l));
    const f: Finding = {
      kind,
      key,
      seed: opts.seed,
      caseIndex: index,
      caseKind: c.kind,
      what: c.what,
      detail,
      frameHex: frame ? frame.subarray(0, HEX_LIMIT).toString('hex') : '',
      frameBytes: frame?.length ?? 0,
      brokerLog: lines.slice(-5).map((l) => l.slice(0, 1500)),
      count: 1,
    };
    const old = findings.get(key);
    if (!old) {
      findings.set(key, f);
      log(`finding ${key} at case ${index} (${c.kind}: ${c.what}): ${detail}`);
    } else {
      old.count++;
      // Keep the smallest reproducer of each kind.
      if (f.frameBytes > 0 && f.frameBytes < old.frameBytes) findings.set(key, { ...f, count: old.count });
    }
    return f;
  };

  let index = 0;
  for (; ; index++) {
    const elapsed = (Date.now() - t0) / 1000;
    if (elapsed >= opts.seconds || (opts.maxCases !== undefined && index >= opts.maxCases)) break;
    const rng = new Prng(opts.seed, index);
    let c: Case;
    const genStart = Date.now();
    try {
      c = await makeCase(rng, opts, handlerMap, messages);
      report.msByKind.generate = (report.msByKind.generate ?? 0) + (Date.now() - genStart);
    } catch (e) {
      report.outcomes['generator-error'] = (report.outcomes['generator-error'] ?? 0) + 1;
      log(`case ${index}: generator failed: ${String(e)}`);
      continue;
    }
    report.byKind[c.kind] = (report.byKind[c.kind] ?? 0) + 1;
    const logFrom = opts.broker.logs.length;
    const caseStart = Date.now();
    let finding: string | null = null;
    let detail = '';
    if (c.run) {
      ({ finding, detail } = await c.run(opts.broker.port));
    } else {
      if (!conn || conn.isClosed) conn = await RawConnection.connect(opts.broker.port);
      const frame = c.frame!;
      const exp = expectationOf(frame, handlerMap, opts.maxRequestBytes);
      probeId = probeId >= 0x7ffffff0 ? 0x40000000 : probeId + 1;
      if (exp.kind !== 'close' && exp.correlationId === probeId) probeId++;
      const out = await exchange(conn, frame, probeId, deadlineFor(exp, opts.deadlineMs));
      const v = judge(exp, out);
      finding = v.finding;
      detail = v.detail;
      const outcome = v.finding ?? v.detail.split(' (')[0]!;
      report.outcomes[outcome] = (report.outcomes[outcome] ?? 0) + 1;
      if (!v.reusable) {
        conn.destroy();
        conn = null;
      }
      if (!finding && c.produced && v.response) finding = acceptedInvalid(c, v.response as ProduceResponse, (d) => (detail = d));
    }
    report.msByKind[c.kind] = (report.msByKind[c.kind] ?? 0) + (Date.now() - caseStart);
    if (finding) record(c, index, finding, detail, c.frame, logFrom);
    const suspicious = finding !== null || c.kind === 'frame' || index % 25 === 0;
    if (!opts.broker.running) {
      report.fatal = record(c, index, 'broker-died', `the broker process exited during or after this case`, c.frame, logFrom);
      break;
    }
    const healthStart = Date.now();
    const healthy = !suspicious || (await brokerAnswers(opts.broker.port, opts.deadlineMs));
    report.msByKind.health = (report.msByKind.health ?? 0) + (Date.now() - healthStart);
    if (!healthy) {
      report.fatal = record(c, index, opts.broker.running ? 'broker-unresponsive' : 'broker-died', `a fresh connection is not served ApiVersions within ${opts.deadlineMs} ms`, c.frame, logFrom);
      break;
    }
    if (index % 20 === 0) {
      try {
        report.peakRssKiB = Math.max(report.peakRssKiB, opts.broker.rssKiB());
      } catch {
        // The process is gone; the next iteration reports it.
      }
    }
    if (index > 0 && index % 500 === 0) {
      await refreshWorld(opts);
      log(`${index} cases in ${((Date.now() - t0) / 1000).toFixed(0)} s, ${findings.size} distinct findings, peak RSS ${(report.peakRssKiB / 1024).toFixed(0)} MiB`);
    }
  }
  conn?.destroy();
  report.cases = index;
  report.findings = [...findings.values()];
  report.seconds = (Date.now() - t0) / 1000;
  return report;
}

/** A produced partition answered without error although one of its batches must be refused. */
function acceptedInvalid(c: Case, res: ProduceResponse, setDetail: (d: string) => void): string | null {
  for (const p of c.produced!) {
    const mustReject = p.batches.length > 1 || p.batches.some((b) => b.mustReject);
    if (!mustReject) continue;
    const t = res.responses.find((r) => r.name === p.topic) ?? res.responses[0];
    const pr = t?.partitionResponses.find((x) => x.index === p.partition);
    if (pr && pr.errorCode === 0) {
      const why = p.batches.length > 1 ? `${p.batches.length} batches in one partition (Kafka allows exactly one for Produce v3+)` : p.batches.find((b) => b.mustReject)!.variant;
      setDetail(`${p.topic}-${p.partition} accepted at offset ${pr.baseOffset}: ${why} [codecs ${p.batches.map((b) => b.codec).join(',')}]`);
      return p.batches.length > 1 ? 'accepted-several-batches' : `accepted-invalid-batch:${p.batches.find((b) => b.mustReject)!.variant}`;
    }
  }
  return null;
}

/** Topic ids change when the fuzzer deletes and Metadata re-creates topics; keep the world's current. */
async function refreshWorld(opts: FuzzOptions): Promise<void> {
  let c: RawConnection | undefined;
  try {
    c = await RawConnection.connect(opts.broker.port);
    const res = await c.request(MetadataApi, 12, MetadataApi.request.create({ topics: opts.world.topics.map((t) => ({ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: t.name })), allowAutoTopicCreation: true }), opts.deadlineMs);
    for (const t of res.topics) {
      const w = opts.world.topics.find((x) => x.name === t.name);
      if (w && t.errorCode === 0) {
        w.id = t.topicId;
        w.partitions = t.partitions.length;
      }
    }
  } catch {
    // A refresh that fails leaves the old ids; the health check judges the broker.
  } finally {
    c?.destroy();
  }
}

function servedPairs(handlers: ReadonlyMap<number, Handler>): [number, number][] {
  const out: [number, number][] = [];
  for (const h of handlers.values()) for (let v = h.versions.min; v <= h.versions.max; v++) out.push([h.api.apiKey, v]);
  return out;
}

let pairsCache: [number, number][] | null = null;

async function makeCase(rng: Prng, opts: FuzzOptions, handlers: ReadonlyMap<number, Handler>, messages: Map<number, RequestSchema>): Promise<Case> {
  const kind = rng.weighted(KIND_WEIGHTS);
  if (kind === 'records') return recordsCase(rng, opts, handlers);
  if (kind === 'frame') return frameCase(rng, opts, handlers, messages);
  pairsCache ??= servedPairs(handlers);
  const [apiKey, version] = rng.pick(pairsCache);
  const api = handlers.get(apiKey)!.api;
  const log: string[] = [];
  const encoded = encodeCase(rng, api, version, messages.get(apiKey)!, opts.world, kind === 'field' ? rng.pick([0.05, 0.1, 0.25]) : kind === 'valid' ? 0 : rng.chance(0.3) ? 0.05 : 0, log);
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

async function recordsCase(rng: Prng, opts: FuzzOptions, handlers: ReadonlyMap<number, Handler>): Promise<Case> {
  const h = handlers.get(ProduceApi.apiKey)!;
  const version = rng.range(h.versions.min, h.versions.max);
  const produced: NonNullable<Case['produced']> = [];
  const nPartitions = rng.chance(0.8) ? 1 : 2;
  for (let i = 0; i < nPartitions; i++) {
    const t = rng.pick(opts.world.topics);
    const partition = rng.int(Math.max(1, t.partitions));
    if (produced.some((p) => p.topic === t.name && p.partition === partition)) continue;
    const batches: FuzzBatch[] = [];
    const n = rng.chance(0.85) ? 1 : rng.range(2, 3);
    for (let j = 0; j < n; j++) {
      const b = rng.chance(0.03) ? { bytes: rng.pick(opts.world.bombs), codec: -1, variant: 'decompression-bomb', mustReject: false } : await fuzzBatch(rng);
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
  const body = ProduceApi.request.create({ transactionalId: null, acks, timeoutMs: 5000, topicData: [...byTopic].map(([name, partitionData]) => ({ name, partitionData })) });
  const frame = encodeTracedFrame(ProduceApi, version, rng.int(0x40000000), 'fuzz', body).bytes;
  const what = `Produce v${version} acks=${acks}: ${produced.map((p) => `${p.topic}-${p.partition} [${p.batches.map((b) => `${b.codec}:${b.variant}`).join(', ')}]`).join('; ')}`;
  return { kind: 'records', what, apiKey: ProduceApi.apiKey, version, frame, produced };
}

function sizePrefix(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n | 0, 0);
  return b;
}

/** Frame-size lies, each on its own connection. The broker must close, wait, or answer; never die. */
async function frameCase(rng: Prng, opts: FuzzOptions, handlers: ReadonlyMap<number, Handler>, messages: Map<number, RequestSchema>): Promise<Case> {
  pairsCache ??= servedPairs(handlers);
  const [apiKey, version] = rng.pick(pairsCache);
  const api = handlers.get(apiKey)!.api;
  const valid = encodeCase(rng, api, version, messages.get(apiKey)!, opts.world, 0, []).bytes;
  const lie = rng.pick(['larger', 'smaller', 'negative', 'zero', 'over-max', 'partial-disconnect', 'partial-half-close', 'dribble', 'header-only'] as const);
  const dl = opts.deadlineMs;
  const base = { kind: 'frame' as const, apiKey, version };

  /** Sends bytes on a fresh connection and expects the broker to close it without answering. */
  const expectClose = (bytes: Buffer, what: string): Case => ({
    ...base,
    what,
    frame: bytes,
    run: async (port) => {
      const c = await RawConnection.connect(port);
      try {
        c.write(bytes);
        await c.waitClosed(dl);
        return c.buffered === 0 ? { finding: null, detail: 'closed' } : { finding: 'frame-lie-answered', detail: `${c.buffered} response(s) before the close` };
      } catch {
        return { finding: 'frame-lie-not-closed', detail: `connection still open after ${dl} ms` };
      } finally {
        c.destroy();
      }
    },
  });

  switch (lie) {
    case 'negative':
      return expectClose(sizePrefix(rng.pick([-1, -2, -0x80000000, -valid.length])), 'negative frame size');
    case 'zero':
      return expectClose(sizePrefix(0), 'zero frame size');
    case 'over-max': {
      const size = rng.pick([opts.maxRequestBytes + 1, opts.maxRequestBytes * 2, 0x7fffffff]);
      return expectClose(Buffer.concat([sizePrefix(size), valid.subarray(4)]), `frame size ${size} over socket.request.max.bytes ${opts.maxRequestBytes}`);
    }
    case 'smaller': {
      // The body is cut short by the prefix and the rest is read as the next frame: anything but a crash.
      const cut = rng.range(1, Math.max(1, valid.length - 5));
      const bytes = Buffer.from(valid);
      bytes.writeInt32BE(valid.length - 4 - cut, 0);
      return {
        ...base,
        what: `${api.name} v${version} with a size prefix ${cut} bytes short of its body`,
        frame: bytes,
        run: async (port) => {
          const c = await RawConnection.connect(port);
          c.write(bytes);
          c.write(probeFrame(0x7fffffff));
          await Promise.race([c.closed, c.nextFrame(Math.min(dl, 500)).catch(() => undefined)]);
          c.destroy();
          return { finding: null, detail: 'survived' };
        },
      };
    }
    case 'larger':
    case 'partial-disconnect':
    case 'partial-half-close':
    case 'header-only': {
      // The frame promises more than is sent: the broker must wait (no answer) and let go when the client does.
      const extra = lie === 'larger' ? rng.pick([1, 7, 1000, 1 << 20]) : 0;
      const bytes = Buffer.from(valid);
      if (extra) bytes.writeInt32BE(valid.length - 4 + extra, 0);
      const sent = lie === 'partial-disconnect' ? bytes.subarray(0, rng.range(1, valid.length - 1)) : lie === 'header-only' ? bytes.subarray(0, rng.range(1, 4)) : bytes;
      const halfClose = lie === 'partial-half-close' || (lie === 'larger' && rng.chance(0.5));
      const cutTo = lie === 'partial-half-close' ? bytes.subarray(0, rng.range(1, valid.length - 1)) : sent;
      return {
        ...base,
        what: `${api.name} v${version}: ${lie === 'larger' ? `size prefix ${extra} bytes over the body` : `${cutTo.length} of ${valid.length} bytes`}, then ${halfClose ? 'half-close' : 'disconnect'}`,
        frame: cutTo,
        run: async (port) => {
          const c = await RawConnection.connect(port);
          try {
            c.write(cutTo);
            const early = await c.nextFrame(100).then(
              () => true,
              () => false,
            );
            if (early && opts.maxRequestBytes >= valid.length - 4 + extra) return { finding: 'answered-incomplete-frame', detail: 'a response came before the frame was complete' };
            if (!halfClose) return { finding: null, detail: 'disconnected' };
            c.socket.end();
            await c.waitClosed(dl);
            return { finding: null, detail: 'closed after half-close' };
          } catch {
            return { finding: 'half-closed-connection-kept', detail: `the broker kept a half-closed connection with a partial frame open for ${dl} ms` };
          } finally {
            c.destroy();
          }
        },
      };
    }
    case 'dribble': {
      // A valid frame written a few bytes at a time is the same request: it must be answered normally.
      return {
        ...base,
        what: `${api.name} v${version} written in pieces of 1-7 bytes`,
        frame: valid,
        run: async (port) => {
          const exp = expectationOf(valid, handlers, opts.maxRequestBytes);
          const c = await RawConnection.connect(port);
          try {
            for (let at = 0; at < valid.length && !c.isClosed; ) {
              const n = rng.range(1, 7);
              c.write(valid.subarray(at, at + n));
              at += n;
              if (rng.chance(0.2)) await new Promise((r) => setImmediate(r));
            }
            const out = await exchange(c, Buffer.alloc(0), 0x7ffffffe, deadlineFor(exp, dl));
            const v = judge(exp, out);
            return { finding: v.finding, detail: v.detail };
          } finally {
            c.destroy();
          }
        },
      };
    }
  }
}

/** A human-readable summary: counts, then every finding with its reproducer. */
export function formatReport(r: FuzzReport): string {
  const lines = [
    `fuzz seed ${r.seed} (replay: LEDGERLINE_FUZZ_SEED=${r.seed}): ${r.cases} cases in ${r.seconds.toFixed(0)} s, peak broker RSS ${(r.peakRssKiB / 1024).toFixed(0)} MiB`,
    `  cases by kind: ${Object.entries(r.byKind).map(([k, n]) => `${k} ${n} (${((r.msByKind[k] ?? 0) / 1000).toFixed(1)} s)`).join(', ')}; generating ${((r.msByKind.generate ?? 0) / 1000).toFixed(1)} s, health checks ${((r.msByKind.health ?? 0) / 1000).toFixed(1)} s`,
    `  outcomes: ${Object.entries(r.outcomes).map(([k, n]) => `${k} ${n}`).join(', ')}`,
  ];
  if (r.fatal) lines.push(`  FATAL at case ${r.fatal.caseIndex}: ${r.fatal.kind}: ${r.fatal.detail}`);
  for (const f of r.findings) {
    lines.push(`  finding ${f.key} ×${f.count}, first at case ${f.caseIndex} (${f.caseKind}): ${f.detail}`);
    lines.push(`    case: ${f.what.length > 600 ? `${f.what.slice(0, 600)}…` : f.what}`);
    if (f.frameBytes > 0) lines.push(`    frame (${f.frameBytes} bytes): ${f.frameHex.length > 400 ? `${f.frameHex.slice(0, 400)}…` : f.frameHex}`);
    for (const l of f.brokerLog) lines.push(`    broker: ${l.slice(0, 400)}`);
  }
  return lines.join('\n');
}
