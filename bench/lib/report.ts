/**
 * Results: one JSON file per run or comparison under bench/results/ (git-ignored), with a Markdown
 * summary and an SVG chart next to it, named by the run id (`<date>-<command>-<workload>`).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { LoadResult } from './load.js';
import type { MachineLimits } from './limits.js';
import type { BenchProtocol } from './security.js';
import type { LatencySummary } from './stats.js';
import { fmt, median } from './stats.js';
import type { Bar, Curve } from './svg.js';
import { COLORS, renderChart } from './svg.js';
import type { Workload } from './workload.js';
import { RESULTS_DIR, describeRate } from './workload.js';

export interface HostInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  kernel: string;
  /** 1, 5 and 15 minute load averages when the command started: other work on the machine skews figures. */
  loadAverageBefore: number[];
}

const LOAD_AT_START = loadavg().map((x) => Math.round(x * 100) / 100);

export function hostInfo(): HostInfo {
  const c = cpus();
  return {
    cpus: c.length,
    cpuModel: c[0]?.model ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: process.platform,
    kernel: release(),
    loadAverageBefore: LOAD_AT_START,
  };
}

export interface TargetInfo {
  /** `ledgerline`, `kafka`, or `external` for a bootstrap the harness did not start. */
  kind: 'ledgerline' | 'kafka' | 'external';
  label: string;
  bootstrap: string;
  /** Peak resident memory of the broker process (VmHWM), when the harness could read it. */
  peakRssMiB: number | null;
  startupMs: number | null;
}

/** One workload against one broker. */
export interface RunRecord {
  target: TargetInfo;
  /** The rate used, in messages per second (null = max). */
  rate: number | null;
  topicSetupSeconds: number;
  result: LoadResult;
  backlogWrite?: LoadResult;
  /** The listener the load generator used (`compare --security`); absent = PLAINTEXT. */
  protocol?: BenchProtocol;
}

export interface RunFile {
  kind: 'ledgerline-bench-run';
  version: 1;
  id: string;
  date: string;
  command: string;
  host: HostInfo;
  workload: Workload;
  calibration?: { workload: string; maxRecordsPerSec: number; source: string };
  run: RunRecord;
}

export interface BrokerMedians {
  runs: number;
  produceMiBps: number;
  consumeMiBps: number;
  produceRecordsPerSec: number;
  /** Latency samples (batches) in the median; 0 = no such latency in this workload. */
  produceSamples: number;
  e2eSamples: number;
  produceP50: number;
  produceP99: number;
  produceP999: number;
  produceMax: number;
  e2eP50: number;
  e2eP99: number;
  e2eP999: number;
  e2eMax: number;
  peakRssMiB: number | null;
  clientCpuPercent: number;
  /**
   * The broker's CPU seconds in the produce phase's window per GiB produced in it (consumers, when the
   * workload has them, read meanwhile and their cost is in it); null when the harness did not start the broker.
   */
  brokerCpuSecondsPerGiB: number | null;
  /**
   * Catch-up workloads: the broker's CPU seconds in the read phase's window per GiB read in it (no producer
   * then: what serving consumers from storage costs). Absent for live workloads and older results.
   */
  readCpuSecondsPerGiB?: number | null;
  /**
   * The broker's GC pauses in the produce phase's window, in % of the window (usage.ts); null when not measured.
   * Optional: results written before it was measured lack it.
   */
  brokerGcPercent?: number | null;
  /** The load generator's GC pauses in the same window, in % of it. */
  clientGcPercent?: number | null;
  /** How late the load generator's event loop ran in the produce phase's window, 99th percentile, ms (usage.ts). */
  clientLoopDelayP99Ms?: number | null;
  /** Transactional workloads: transactions committed per second (median, min, max over the runs) and commit latency medians. */
  transactions?: {
    perSec: number;
    perSecMin: number;
    perSecMax: number;
    commitSamples: number;
    commitP50: number;
    commitP99: number;
    commitP999: number;
    commitMax: number;
    /** The commit latency curve of the middle run by produce p99, as the other curves. */
    commitCurve: Array<[number, number]>;
  };
  /** Latency curves of the middle run by produce p99 (the lower middle one for an even count). */
  produceCurve: Array<[number, number]>;
  e2eCurve: Array<[number, number]>;
}

export interface PairRatio {
  pair: number;
  /** Ledgerline ÷ Kafka: above 1 = Ledgerline faster for throughput, slower for latency. */
  produceThroughput: number;
  consumeThroughput: number;
  produceP99: number;
  e2eP99: number;
  /** Broker CPU seconds per GiB produced (below 1 is better), when both were measured. */
  brokerCpuPerGiB?: number;
  /** Catch-up workloads: broker CPU seconds per GiB read back (below 1 is better), when both were measured. */
  readCpuPerGiB?: number;
  /** Transactional workloads: transactions/s (above 1 is better) and commit p99 (below 1 is better). */
  transactionsPerSec?: number;
  commitP99?: number;
}

export interface CompareFile {
  kind: 'ledgerline-bench-compare';
  version: 1;
  id: string;
  date: string;
  command: string;
  host: HostInfo;
  /** `--cluster`: three Ledgerline brokers on three bookies against three Kafka nodes (RF 3, min.insync.replicas 2). */
  cluster?: boolean;
  workload: Workload;
  calibration?: { workload: string; maxRecordsPerSec: Record<string, number>; rate: number };
  /** Runs in the order they ran (A B A B ...). */
  runs: Array<RunRecord & { order: number; pair: number }>;
  /** Brokers that could not run, with the reason. */
  unavailable: Record<string, string>;
  /** Runs that started but failed, with the reason; they are not in `runs`. */
  failures: Array<{ order: number; pair: number; kind: string; error: string }>;
  /** Per broker; with `security`, per broker and protocol (`ledgerline PLAINTEXT`, `kafka SASL_SSL`, ...). */
  medians: Record<string, BrokerMedians>;
  /** Ledgerline ÷ Kafka pair by pair; empty with `security`, whose `brokerRatios` has them per protocol. */
  ratios: PairRatio[];
  limits: MachineLimits | null;
  /** `--security`: every pair ran each broker on PLAINTEXT and on `protocol`. */
  security?: SecurityComparison;
}

export interface SecurityComparison {
  protocol: 'SASL_SSL';
  mechanism: 'SCRAM-SHA-512';
  /** The TLS version and cipher suite the load generator's user signed in with, per broker. */
  tls: Record<string, { protocol: string | null; cipher: string }>;
  /** Ledgerline ÷ Kafka pair by pair, per protocol. */
  brokerRatios: Partial<Record<BenchProtocol, PairRatio[]>>;
  /** SASL_SSL ÷ PLAINTEXT pair by pair, per broker (PairRatio's fields, the protocols in place of the brokers). */
  protocolRatios: Record<string, PairRatio[]>;
}

export function runId(command: string, workload: string, date = new Date()): string {
  const stamp = date.toISOString().replace(/[:.]/g, '-').replace('T', '_').slice(0, 19);
  return `${stamp}-${command}-${workload}`;
}

/** Where produce figures come from: the backlog write of a catch-up run, else the live run. */
function producePhase(r: RunRecord): LoadResult {
  return r.backlogWrite ?? r.result;
}

/** GC pauses of the broker (or of the load generator) in the produce phase's window, in % of it, or null. */
function gcPercent(r: RunRecord, of: 'broker' | 'client'): number | null {
  const phase = producePhase(r);
  const gc = of === 'broker' ? phase.brokerGcSeconds : phase.clientGcSeconds;
  return gc === null || gc === undefined || phase.seconds <= 0 ? null : (gc / phase.seconds) * 100;
}

function medianOrNull(xs: readonly (number | null)[]): number | null {
  const known = xs.filter((x): x is number => x !== null);
  return known.length > 0 ? median(known) : null;
}

/** The broker's CPU seconds in a phase's window per GiB of `bytes`, or null when not measured. */
function brokerCpuPer(phase: LoadResult, bytes: number): number | null {
  return phase.brokerCpuSeconds === null || phase.brokerCpuSeconds === undefined || bytes === 0 ? null : phase.brokerCpuSeconds / (bytes / 2 ** 30);
}

/** Broker CPU seconds per GiB produced in the produce phase's window, or null. */
function cpuPerGiB(r: RunRecord): number | null {
  const phase = producePhase(r);
  return brokerCpuPer(phase, phase.produced.bytes);
}

/** Catch-up runs: broker CPU seconds in the read phase's window per GiB read in it, or null. */
function readCpuPerGiB(r: RunRecord): number | null {
  return r.backlogWrite === undefined ? null : brokerCpuPer(r.result, r.result.consumed.bytes);
}

export function mediansOf(runs: readonly RunRecord[]): BrokerMedians {
  const m = (f: (r: RunRecord) => number): number => median(runs.map(f));
  const p = (r: RunRecord): LatencySummary => producePhase(r).produceLatency;
  const e = (r: RunRecord): LatencySummary => r.result.endToEndLatency;
  const rss = runs.map((r) => r.target.peakRssMiB).filter((x): x is number => x !== null);
  const cpu = runs.map(cpuPerGiB).filter((x): x is number => x !== null);
  const byP99 = [...runs].sort((a, b) => p(a).p99 - p(b).p99);
  const mid = byP99[(byP99.length - 1) >> 1];
  const txns = runs.map((r) => r.result.transactions).filter((t) => t !== undefined);
  const t = (f: (x: NonNullable<LoadResult['transactions']>) => number): number => median(txns.map(f));
  return {
    runs: runs.length,
    produceMiBps: m((r) => producePhase(r).produceRate.mibPerSec),
    consumeMiBps: m((r) => r.result.consumeRate.mibPerSec),
    produceRecordsPerSec: m((r) => producePhase(r).produceRate.recordsPerSec),
    produceSamples: m((r) => p(r).count),
    e2eSamples: m((r) => e(r).count),
    produceP50: m((r) => p(r).p50),
    produceP99: m((r) => p(r).p99),
    produceP999: m((r) => p(r).p999),
    produceMax: m((r) => p(r).max),
    e2eP50: m((r) => e(r).p50),
    e2eP99: m((r) => e(r).p99),
    e2eP999: m((r) => e(r).p999),
    e2eMax: m((r) => e(r).max),
    peakRssMiB: rss.length > 0 ? median(rss) : null,
    clientCpuPercent: m((r) => r.result.clientCpuPercent),
    brokerCpuSecondsPerGiB: cpu.length > 0 ? median(cpu) : null,
    ...(runs.some((r) => r.backlogWrite !== undefined) ? { readCpuSecondsPerGiB: medianOrNull(runs.map(readCpuPerGiB)) } : {}),
    brokerGcPercent: medianOrNull(runs.map((r) => gcPercent(r, 'broker'))),
    clientGcPercent: medianOrNull(runs.map((r) => gcPercent(r, 'client'))),
    clientLoopDelayP99Ms: medianOrNull(runs.map((r) => producePhase(r).clientLoopDelayP99Ms ?? null)),
    transactions:
      txns.length === 0
        ? undefined
        : {
            perSec: t((x) => x.perSec),
            perSecMin: Math.min(...txns.map((x) => x.perSec)),
            perSecMax: Math.max(...txns.map((x) => x.perSec)),
            commitSamples: t((x) => x.commitLatency.count),
            commitP50: t((x) => x.commitLatency.p50),
            commitP99: t((x) => x.commitLatency.p99),
            commitP999: t((x) => x.commitLatency.p999),
            commitMax: t((x) => x.commitLatency.max),
            commitCurve: mid?.result.transactions?.commitLatency.curve ?? [],
          },
    produceCurve: mid ? p(mid).curve : [],
    e2eCurve: mid ? e(mid).curve : [],
  };
}

/** Run `a` ÷ run `b`, figure by figure. */
function ratioOf(pair: number, a: RunRecord, b: RunRecord): PairRatio {
  return {
    pair,
    produceThroughput: producePhase(a).produceRate.mibPerSec / producePhase(b).produceRate.mibPerSec,
    consumeThroughput: a.result.consumeRate.mibPerSec / b.result.consumeRate.mibPerSec,
    produceP99: producePhase(a).produceLatency.p99 / producePhase(b).produceLatency.p99,
    e2eP99: a.result.endToEndLatency.p99 / b.result.endToEndLatency.p99,
    ...(cpuPerGiB(a) !== null && cpuPerGiB(b) !== null ? { brokerCpuPerGiB: cpuPerGiB(a)! / cpuPerGiB(b)! } : {}),
    ...(readCpuPerGiB(a) !== null && readCpuPerGiB(b) !== null ? { readCpuPerGiB: readCpuPerGiB(a)! / readCpuPerGiB(b)! } : {}),
    ...(a.result.transactions && b.result.transactions
      ? { transactionsPerSec: a.result.transactions.perSec / b.result.transactions.perSec, commitP99: a.result.transactions.commitLatency.p99 / b.result.transactions.commitLatency.p99 }
      : {}),
  };
}

/** `a` ÷ `b` for each pair that has a run of both. */
function ratiosBy(runs: ReadonlyArray<RunRecord & { pair: number }>, a: (r: RunRecord) => boolean, b: (r: RunRecord) => boolean): PairRatio[] {
  const out: PairRatio[] = [];
  const pairs = [...new Set(runs.map((r) => r.pair))].sort((x, y) => x - y);
  for (const pair of pairs) {
    const x = runs.find((r) => r.pair === pair && a(r));
    const y = runs.find((r) => r.pair === pair && b(r));
    if (x && y) out.push(ratioOf(pair, x, y));
  }
  return out;
}

/** Ledgerline ÷ Kafka, pair by pair. */
export function pairRatios(runs: ReadonlyArray<RunRecord & { pair: number }>): PairRatio[] {
  return ratiosBy(runs, (r) => r.target.kind === 'ledgerline', (r) => r.target.kind === 'kafka');
}

/** The listener a run's load generator used. */
export function protocolOf(r: RunRecord): BenchProtocol {
  return r.protocol ?? 'PLAINTEXT';
}

/** `compare --security`: Ledgerline ÷ Kafka per protocol, and `protocol` ÷ PLAINTEXT per broker, pair by pair. */
export function securityRatios(runs: ReadonlyArray<RunRecord & { pair: number }>, protocol: BenchProtocol): Pick<SecurityComparison, 'brokerRatios' | 'protocolRatios'> {
  const brokerRatios: SecurityComparison['brokerRatios'] = {};
  for (const p of ['PLAINTEXT', protocol] as const) brokerRatios[p] = pairRatios(runs.filter((r) => protocolOf(r) === p));
  const protocolRatios: Record<string, PairRatio[]> = {};
  for (const kind of ['ledgerline', 'kafka'] as const) {
    const mine = runs.filter((r) => r.target.kind === kind);
    if (mine.length > 0) protocolRatios[kind] = ratiosBy(mine, (r) => protocolOf(r) === protocol, (r) => protocolOf(r) === 'PLAINTEXT');
  }
  return { brokerRatios, protocolRatios };
}

// ---------------------------------------------------------------------------------------------------
// Markdown

function workloadLine(w: Workload): string {
  const parts = [
    `${w.topics} topic(s) × ${w.partitionsPerTopic} partition(s)`,
    `${w.recordSize} B records`,
    `${w.producers} producer(s), ${w.consumers} consumer(s)`,
    `rate ${describeRate(w.rate)}`,
    `acks=${w.acks}`,
    `compression ${w.compression}`,
    `${w.batchBytes} B batches, ${w.partitionsPerRequest} per request, ${w.maxInFlight} in flight`,
    ...(w.transactionRecords > 0 ? [`${w.transactionRecords} records per transaction`] : []),
    w.backlogBytes > 0 ? `backlog ${(w.backlogBytes / 2 ** 30).toFixed(2)} GiB` : `${w.durationSeconds} s (+${w.warmupSeconds} s warm-up)`,
  ];
  return parts.join(' · ');
}

const HEADER =
  '| broker | runs | produce MiB/s | consume MiB/s | produce p50 / p99 / p99.9 / max (ms) | e2e p50 / p99 / p99.9 / max (ms) | peak RSS MiB | broker CPU s/GiB | broker GC | load-gen CPU / GC / loop delay p99 |\n' +
  '|---|---:|---:|---:|---|---|---:|---:|---:|---:|';

function row(label: string, m: BrokerMedians): string {
  const produce = m.produceSamples > 0 ? `${fmt(m.produceP50)} / ${fmt(m.produceP99)} / ${fmt(m.produceP999)} / ${fmt(m.produceMax)}` : '–';
  const e2e = m.e2eSamples > 0 ? `${fmt(m.e2eP50)} / ${fmt(m.e2eP99)} / ${fmt(m.e2eP999)} / ${fmt(m.e2eMax)}` : '–';
  return `| ${label} | ${m.runs} | ${fmt(m.produceMiBps)} | ${fmt(m.consumeMiBps)} | ${produce} | ${e2e} | ${m.peakRssMiB === null ? '–' : fmt(m.peakRssMiB)} | ${m.brokerCpuSecondsPerGiB === null ? '–' : fmt(m.brokerCpuSecondsPerGiB)} | ${percent(m.brokerGcPercent)} | ${loadGen(m.clientCpuPercent, m.clientGcPercent, m.clientLoopDelayP99Ms)} |`;
}

/**
 * The load generator's own cost: its CPU, its GC pauses and how late its event loop ran (the floor under the
 * latencies it measures); – for what was not measured.
 */
function loadGen(cpuPercent: number, gcPercent: number | null | undefined, loopDelayP99Ms: number | null | undefined): string {
  const loop = loopDelayP99Ms === null || loopDelayP99Ms === undefined ? '–' : `${fmt(loopDelayP99Ms)} ms`;
  return `${fmt(cpuPercent)}% / ${percent(gcPercent)} / ${loop}`;
}

/** A share of time, or – when it was not measured. */
function percent(x: number | null | undefined): string {
  return x === null || x === undefined ? '–' : `${fmt(x)}%`;
}

const TXN_HEADER = '| broker | runs | transactions/s (min–max) | commit p50 / p99 / p99.9 / max (ms) |\n|---|---:|---:|---|';

function txnRow(label: string, m: BrokerMedians): string | null {
  const t = m.transactions;
  if (!t) return null;
  const commit = t.commitSamples > 0 ? `${fmt(t.commitP50)} / ${fmt(t.commitP99)} / ${fmt(t.commitP999)} / ${fmt(t.commitMax)}` : '–';
  const spread = m.runs > 1 ? ` (${fmt(t.perSecMin)}–${fmt(t.perSecMax)})` : '';
  return `| ${label} | ${m.runs} | ${fmt(t.perSec)}${spread} | ${commit} |`;
}

/** The transactions table, when any broker ran a transactional workload. */
function txnMarkdown(rows: Array<[string, BrokerMedians]>): string[] {
  const lines = rows.map(([label, m]) => txnRow(label, m)).filter((x): x is string => x !== null);
  if (lines.length === 0) return [];
  return ['', 'Transactions (commit latency: from a transaction\'s begin to its EndTxn acknowledged; records count as produced when committed):', '', TXN_HEADER, ...lines];
}

function limitsMarkdown(l: MachineLimits | null): string[] {
  if (!l) return [];
  return [
    '',
    '**Machine limits, same run:**',
    '',
    '| limit | MiB/s | detail |',
    '|---|---:|---|',
    `| loopback TCP to a trivial sink | ${fmt(l.loopback.mibPerSec)} | ${l.loopback.connections} connections, ${l.loopback.chunkBytes} B writes |`,
    ...(l.loopbackTls
      ? [`| loopback TLS to a trivial sink | ${fmt(l.loopbackTls.mibPerSec)} | the same over TLS with the brokers' certificate (${l.loopbackTls.tls.protocol ?? '?'} ${l.loopbackTls.tls.cipher}), both ends Node |`]
      : []),
    `| disk: write + fsync per request | ${fmt(l.disk.syncEachChunk.mibPerSec)} | ${l.disk.chunkBytes} B chunks, fsync p50 ${fmt(l.disk.syncEachChunk.fsyncP50Ms)} ms, p99 ${fmt(l.disk.syncEachChunk.fsyncP99Ms)} ms |`,
    ...(l.disk.directSyncEachChunk
      ? [`| disk: O_DIRECT write + fsync per request | ${fmt(l.disk.directSyncEachChunk.mibPerSec)} | as above, bypassing the page cache (the local store's default), fsync p50 ${fmt(l.disk.directSyncEachChunk.fsyncP50Ms)} ms, p99 ${fmt(l.disk.directSyncEachChunk.fsyncP99Ms)} ms |`]
      : []),
    `| disk: write, one fsync at the end | ${fmt(l.disk.syncAtEnd.mibPerSec)} | ${(l.disk.syncAtEnd.bytes / 2 ** 20).toFixed(0)} MiB in ${l.disk.dir} |`,
    ...(l.disk.coldRead
      ? [`| disk: sequential read, page cache dropped | ${fmt(l.disk.coldRead.mibPerSec)} | the same ${(l.disk.coldRead.bytes / 2 ** 20).toFixed(0)} MiB, ${l.disk.coldRead.readBytes / 2 ** 20} MiB reads, one in flight |`]
      : []),
  ];
}

export function runMarkdown(f: RunFile): string {
  const r = f.run;
  const lines = [
    `### ${f.workload.name} · ${r.target.label} (${r.target.bootstrap})`,
    '',
    `${f.date} · \`${f.command}\` · ${f.host.cpus} CPUs (${f.host.cpuModel}), Node ${f.host.node} · load average before ${f.host.loadAverageBefore.join(' / ')}`,
    '',
    workloadLine(f.workload) + (r.rate !== null ? ` · ran at ${Math.round(r.rate)} msg/s` : ''),
    '',
    HEADER,
    row(r.target.label, mediansOf([r])),
    ...txnMarkdown([[r.target.label, mediansOf([r])]]),
  ];
  if (r.backlogWrite) lines.push('', `Catch-up run: "produce" is writing the backlog (${(r.backlogWrite.produced.bytes / 2 ** 30).toFixed(2)} GiB), "consume" is reading it back from the earliest offset in ${fmt(r.result.seconds)} s.`);
  lines.push(...notes(r));
  return lines.join('\n') + '\n';
}

function notes(r: RunRecord): string[] {
  const out: string[] = [];
  const target = r.result.targetRecordsPerSec;
  if (target !== null && r.result.produceRate.recordsPerSec < 0.95 * target) {
    out.push('', `**The target rate was not sustained: ${Math.round(r.result.produceRate.recordsPerSec)} of ${Math.round(target)} msg/s; latencies include the queueing this caused.**`);
  }
  const errors = Object.entries(r.result.errors);
  if (errors.length > 0) out.push('', `Errors: ${errors.map(([k, v]) => `${k} ×${v}`).join(', ')}`);
  if (r.result.transactions && r.result.transactions.concurrentRetries > 0) {
    out.push('', `AddPartitionsToTxn answered CONCURRENT_TRANSACTIONS ${r.result.transactions.concurrentRetries} times (the previous commit still completing), retried after 20 ms as Kafka's producer does.`);
  }
  if (r.result.unconsumedRecords > 0) out.push('', `**${r.result.unconsumedRecords} records produced were not consumed by the end of the drain.**`);
  return out;
}

const CLUSTER_TITLE = '3 Ledgerline brokers on 3 BookKeeper bookies vs 3 Apache Kafka nodes (replication factor 3, min.insync.replicas 2)';

function compareTitle(f: CompareFile): string {
  if (f.cluster) return CLUSTER_TITLE;
  return f.security ? `Ledgerline vs Apache Kafka, PLAINTEXT and ${f.security.protocol} (${f.security.mechanism})` : 'Ledgerline vs Apache Kafka';
}

export function compareMarkdown(f: CompareFile): string {
  const lines = [
    `### ${f.workload.name}: ${compareTitle(f)}`,
    '',
    `${f.date} · \`${f.command}\` · ${f.host.cpus} CPUs (${f.host.cpuModel}), ${f.host.memoryGiB} GiB, Node ${f.host.node} · load average before ${f.host.loadAverageBefore.join(' / ')}`,
    '',
    workloadLine(f.workload) + (f.calibration ? ` · ran at ${Math.round(f.calibration.rate)} msg/s` : ''),
    '',
    'Medians over the runs (runs alternate A B A B on the same machine and disk):',
    '',
    HEADER,
  ];
  for (const [label, m] of Object.entries(f.medians)) lines.push(row(label, m));
  if (f.workload.backlogBytes > 0) {
    lines.push('', 'Catch-up runs: "produce" is writing the backlog, "consume" is reading it back from the earliest offset; "broker CPU s/GiB" is the write\'s.');
    const read = Object.entries(f.medians).filter(([, m]) => m.readCpuSecondsPerGiB != null);
    if (read.length > 0) lines.push(`Broker CPU while reading, s per GiB read: ${read.map(([label, m]) => `${label} ${fmt(m.readCpuSecondsPerGiB!)}`).join(', ')}.`);
  }
  for (const [label, why] of Object.entries(f.unavailable)) lines.push(`| ${label} | 0 | not run: ${why.replace(/\|/g, '\\|')} | | | | | | |`);
  lines.push(...txnMarkdown(Object.entries(f.medians)));
  for (const x of f.failures) lines.push('', `**Run ${x.order} (pair ${x.pair}, ${x.kind}) failed: ${x.error}**`);
  if (f.ratios.length > 0) {
    const txn = f.ratios.some((r) => r.transactionsPerSec !== undefined);
    const read = f.ratios.some((r) => r.readCpuPerGiB !== undefined);
    lines.push(
      '',
      'Ledgerline ÷ Kafka, pair by pair (throughput: above 1 is better; latency: below 1 is better):',
      '',
      `| pair | produce MiB/s | consume MiB/s | produce p99 | e2e p99 | broker CPU s/GiB |${read ? ' read CPU s/GiB |' : ''}${txn ? ' transactions/s | commit p99 |' : ''}`,
      `|---:|---:|---:|---:|---:|---:|${read ? '---:|' : ''}${txn ? '---:|---:|' : ''}`,
    );
    for (const r of f.ratios) {
      const cpu = r.brokerCpuPerGiB === undefined ? '–' : fmt(r.brokerCpuPerGiB);
      const readCpu = read ? ` ${r.readCpuPerGiB === undefined ? '–' : fmt(r.readCpuPerGiB)} |` : '';
      lines.push(`| ${r.pair} | ${fmt(r.produceThroughput)} | ${fmt(r.consumeThroughput)} | ${fmt(r.produceP99)} | ${fmt(r.e2eP99)} | ${cpu} |${readCpu}${txn ? ` ${fmt(r.transactionsPerSec)} | ${fmt(r.commitP99)} |` : ''}`);
    }
  }
  if (f.security) lines.push(...securityMarkdown(f, f.security));
  if (f.calibration) {
    lines.push('', `Rate: ${describeRate(f.workload.rate)} = ${Math.round(f.calibration.rate)} msg/s (max measured: ${Object.entries(f.calibration.maxRecordsPerSec).map(([k, v]) => `${k} ${Math.round(v)}`).join(', ')}; the lower one is the reference so both brokers see the same load).`);
  }
  lines.push(...limitsMarkdown(f.limits));
  for (const r of f.runs) {
    const n = notes(r);
    if (n.length > 0) lines.push('', `Run ${r.order} (${r.target.label}):`, ...n.filter((x) => x !== ''));
  }
  return lines.join('\n') + '\n';
}

const RATIO_COLUMNS = '| produce MiB/s | consume MiB/s | produce p99 | e2e p99 | broker CPU s/GiB |';

function ratioCells(r: Pick<PairRatio, 'produceThroughput' | 'consumeThroughput' | 'produceP99' | 'e2eP99' | 'brokerCpuPerGiB'>): string {
  return `${fmt(r.produceThroughput)} | ${fmt(r.consumeThroughput)} | ${fmt(r.produceP99)} | ${fmt(r.e2eP99)} | ${r.brokerCpuPerGiB === undefined ? '–' : fmt(r.brokerCpuPerGiB)} |`;
}

/** Rows of pair ratios under `label`, then their median when there are several. */
function ratioRows(label: string, ratios: readonly PairRatio[]): string[] {
  const rows = ratios.map((r) => `| ${label} | ${r.pair} | ${ratioCells(r)}`);
  if (ratios.length > 1) {
    const m = (g: (r: PairRatio) => number | undefined): number | undefined => {
      const xs = ratios.map(g).filter((x): x is number => x !== undefined);
      return xs.length > 0 ? median(xs) : undefined;
    };
    rows.push(`| ${label} | **median** | ${ratioCells({ produceThroughput: m((r) => r.produceThroughput)!, consumeThroughput: m((r) => r.consumeThroughput)!, produceP99: m((r) => r.produceP99)!, e2eP99: m((r) => r.e2eP99)!, brokerCpuPerGiB: m((r) => r.brokerCpuPerGiB) })}`);
  }
  return rows;
}

/** `compare --security`: both sets of ratios and every run in order, which shows the spread behind the medians. */
function securityMarkdown(f: CompareFile, s: SecurityComparison): string[] {
  const tls = Object.entries(s.tls).map(([kind, t]) => `${kind} ${t.protocol ?? '?'} ${t.cipher}`).join('; ');
  const lines = [
    '',
    `${s.protocol}: TLS (${tls || 'not negotiated'}), server certificate only, then ${s.mechanism} sign-in on every connection, before the measured window. ` +
      'Each pair runs every broker on both listeners of the same broker configuration, a fresh broker per run; odd pairs run PLAINTEXT first, even pairs ' +
      `${s.protocol} first.`,
    '',
    `${s.protocol} ÷ PLAINTEXT, pair by pair: what security costs each broker (throughput below 1 = slower with it; latency and CPU above 1 = more with it):`,
    '',
    `| broker | pair ${RATIO_COLUMNS}`,
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const [kind, ratios] of Object.entries(s.protocolRatios)) lines.push(...ratioRows(kind, ratios));
  lines.push('', 'Ledgerline ÷ Kafka, pair by pair, per protocol (throughput: above 1 is better; latency and CPU: below 1 is better):', '', `| protocol | pair ${RATIO_COLUMNS}`, '|---|---:|---:|---:|---:|---:|---:|');
  for (const [protocol, ratios] of Object.entries(s.brokerRatios)) lines.push(...ratioRows(protocol, ratios ?? []));
  lines.push(
    '',
    'Every run, in order:',
    '',
    '| run | pair | broker | protocol | produce MiB/s | consume MiB/s | produce p99 (ms) | e2e p99 (ms) | broker CPU s/GiB | broker GC | peak RSS MiB | load-gen CPU / GC / loop delay p99 |',
    '|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of f.runs) {
    const p = producePhase(r);
    lines.push(
      `| ${r.order} | ${r.pair} | ${r.target.label} | ${protocolOf(r)} | ${fmt(p.produceRate.mibPerSec)} | ${fmt(r.result.consumeRate.mibPerSec)} | ${fmt(p.produceLatency.p99)} | ` +
        `${r.result.endToEndLatency.count > 0 ? fmt(r.result.endToEndLatency.p99) : '–'} | ${fmt(cpuPerGiB(r))} | ${percent(gcPercent(r, 'broker'))} | ${fmt(r.target.peakRssMiB)} | ${loadGen(r.result.clientCpuPercent, gcPercent(r, 'client'), p.clientLoopDelayP99Ms)} |`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------------
// Chart

/** A broker's colour; a lighter one for its runs on a secure listener (`ledgerline SASL_SSL`). */
function brokerColor(label: string): string {
  const secure = label.endsWith(' SASL_SSL');
  if (label.startsWith('ledgerline')) return secure ? COLORS.ledgerlineSecure : COLORS.ledgerline;
  return secure ? COLORS.kafkaSecure : COLORS.kafka;
}

export function chartFor(f: CompareFile | RunFile): string {
  const bars: Bar[] = [];
  const curves: Curve[] = [];
  const entries: Array<[string, BrokerMedians, string]> =
    f.kind === 'ledgerline-bench-compare'
      ? Object.entries(f.medians).map(([label, m]) => [label, m, brokerColor(label)])
      : [[f.run.target.label, mediansOf([f.run]), f.run.target.kind === 'ledgerline' ? COLORS.ledgerline : COLORS.kafka]];
  for (const [label, m, color] of entries) {
    bars.push({ label: `${label} produce`, value: m.produceMiBps, color });
    bars.push({ label: `${label} consume`, value: m.consumeMiBps, color });
    if (m.produceCurve.length > 0) curves.push({ label: `${label} produce→ack`, points: m.produceCurve, color });
    if (m.e2eCurve.length > 0) curves.push({ label: `${label} end-to-end`, points: m.e2eCurve, color, dashed: true });
    if (m.transactions && m.transactions.commitCurve.length > 0) curves.push({ label: `${label} begin→commit`, points: m.transactions.commitCurve, color, dotted: true });
  }
  const limits = f.kind === 'ledgerline-bench-compare' ? f.limits : null;
  if (limits) {
    bars.push({ label: 'loopback TCP', value: limits.loopback.mibPerSec, color: COLORS.limit, limit: true });
    if (limits.loopbackTls) bars.push({ label: 'loopback TLS', value: limits.loopbackTls.mibPerSec, color: COLORS.limit, limit: true });
    bars.push({ label: 'disk, fsync each', value: limits.disk.syncEachChunk.mibPerSec, color: COLORS.limit, limit: true });
    if (limits.disk.directSyncEachChunk) bars.push({ label: 'disk, O_DIRECT, fsync each', value: limits.disk.directSyncEachChunk.mibPerSec, color: COLORS.limit, limit: true });
    bars.push({ label: 'disk, fsync at end', value: limits.disk.syncAtEnd.mibPerSec, color: COLORS.limit, limit: true });
  }
  return renderChart({
    title: `${f.workload.name}${f.kind === 'ledgerline-bench-compare' ? `: ${f.cluster ? 'Ledgerline cluster vs Apache Kafka cluster (3 × 3, RF 3)' : f.security ? `Ledgerline vs Apache Kafka, PLAINTEXT and ${f.security.protocol}` : 'Ledgerline vs Apache Kafka'}` : ''}`,
    subtitle: `${workloadLine(f.workload)} · ${f.date.slice(0, 16).replace('T', ' ')} UTC · ${f.host.cpus} CPUs`,
    bars,
    barUnit: 'MiB/s of record payload',
    curves,
  });
}

/** Writes <id>.json, <id>.md and <id>.svg under bench/results/; returns their paths. */
export function writeResults(f: RunFile | CompareFile, dir = RESULTS_DIR): { json: string; md: string; svg: string } {
  mkdirSync(dir, { recursive: true });
  const json = join(dir, `${f.id}.json`);
  const md = join(dir, `${f.id}.md`);
  const svg = join(dir, `${f.id}.svg`);
  writeFileSync(json, JSON.stringify(f, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), 2) + '\n');
  writeFileSync(md, (f.kind === 'ledgerline-bench-run' ? runMarkdown(f) : compareMarkdown(f)) + `\n![chart](${f.id}.svg)\n`);
  writeFileSync(svg, chartFor(f));
  return { json, md, svg };
}
