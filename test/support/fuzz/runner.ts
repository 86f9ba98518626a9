/**
 * The fuzz loop: for a time budget (or a case count), make a case from (seed, case index) (cases.ts), send
 * it to the broker, judge what came back (oracles.ts), and keep the first, smallest example of every
 * distinct finding. Between cases the broker process must be alive; every so often (and after anything
 * suspicious) a fresh connection must be served ApiVersions, and the broker's RSS is sampled.
 */
import type { ProduceResponse } from '../../../protocol/messages/000-produce.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { Handler } from '../../../src/api/handler.js';
import type { BrokerProcess } from '../broker-process.js';
import { RawConnection } from '../raw-connection.js';
import { makeCase, type Case, type CaseKind } from './cases.js';
import type { World } from './generators.js';
import { brokerAnswers, deadlineFor, exchange, expectationOf, judge } from './oracles.js';
import { Prng } from './prng.js';
import { loadRequestSchemas } from './schemas.js';

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

const HEX_LIMIT = 4096;

export async function runFuzz(opts: FuzzOptions): Promise<FuzzReport> {
  const log = opts.log ?? (() => undefined);
  const handlerMap = new Map(opts.handlers.map((h) => [h.api.apiKey, h]));
  const messages = await loadRequestSchemas(handlerMap.keys());
  const ctx = { handlers: handlerMap, messages, world: opts.world, maxRequestBytes: opts.maxRequestBytes, deadlineMs: opts.deadlineMs };
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
      c = await makeCase(rng, ctx);
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
