/**
 * The figures of the mirror benchmark (bench/mirror.ts), per pair of fresh brokers, and their report: each
 * figure's median with its spread (min–max over the pairs) against its goal, every pair's own figures, and the
 * machine's limits measured in the same run.
 */
import type { MachineLimits } from './limits.js';
import type { LagSummary, PollResult } from './mirror-lag.js';
import type { HostInfo } from './report.js';
import { formatBytes, fmt, median } from './stats.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;

/** A volume moved in a time: payload bytes (records × record size). */
export interface Rate {
  bytes: number;
  seconds: number;
  mibPerSec: number;
}

export function rateOf(bytes: number, seconds: number): Rate {
  return { bytes, seconds, mibPerSec: seconds > 0 ? bytes / MiB / seconds : 0 };
}

export interface PairFigures {
  pair: number;
  /** Max-rate produce of the backlog into the source (acks=all). */
  local?: Rate & { sourceCpuSeconds: number | null; produceP99Ms: number; loadGenCpuPercent: number };
  /** The backlog read back from the source with the replicator's request shape, nothing appended. */
  sourceRead?: Rate & { fetches: number };
  /** The mirror of the full backlog: from POST /v1/mirrors until every partition's position is the source's end. */
  mirror?: Rate & {
    /** From the POST until the first record was copied. */
    firstCopyMs: number;
    destinationCpuSeconds: number | null;
    sourceCpuSeconds: number | null;
    /**
     * How many times each partition's position was seen to move (median over the partitions; the admin endpoint
     * polled every pollMs), and the median step in MiB of payload: with rounds longer than pollMs, the replicator's
     * rounds and what each copies of a partition.
     */
    steps: number;
    medianStepMiB: number;
    pollMs: number;
  };
  /** Produce at max rate into a topic mirrored from the start. */
  concurrent?: {
    produce: Rate;
    /** Copied while the producers ran (the same window). */
    mirrorInWindow: Rate;
    /** Behind the source when the producers stopped, payload bytes. */
    behindAtEndBytes: number;
    /** From the last acknowledgement until the mirror had everything. */
    catchUpMs: number;
    /** Everything, from the first produce to the mirror complete. */
    mirrorOverall: Rate;
    destinationCpuSeconds: number | null;
  };
  /** Paced produce at a fraction of `local`'s rate (or at --lag-rate) into a topic mirrored from the start. */
  lag?: {
    /** The paced rate in % of `local`'s. */
    percent: number;
    targetMiBps: number;
    produce: Rate;
    produceP99Ms: number;
    lag: LagSummary;
    poll: PollResult;
    errors: Record<string, number>;
  };
  peakRssMiB?: { source: number | null; destination: number | null };
  /** Why the pair stopped early. */
  failed?: string;
}

export interface MirrorFile {
  kind: 'ledgerline-bench-mirror';
  version: 1;
  id: string;
  date: string;
  command: string;
  host: HostInfo;
  /** The tree measured: commit and files changed from it. */
  tree?: { commit: string; changed: string[] };
  shape: {
    partitions: number;
    recordSize: number;
    batchBytes: number;
    producers: number;
    partitionsPerRequest: number;
    maxInFlight: number;
    backlogBytes: number;
    concurrentBytes: number | null;
    lagSeconds: number | null;
    lagPercent: number;
    /** `--lag-rate`: the paced rate of every pair in MiB/s, instead of lagPercent of its local max. */
    lagMiBps?: number;
  };
  limits: (MachineLimits & { loopbackOneConnection: MachineLimits['loopback'] }) | null;
  pairs: PairFigures[];
}

export interface Spread {
  n: number;
  min: number;
  median: number;
  max: number;
}

export function spreadOf(xs: ReadonlyArray<number | null | undefined>): Spread | null {
  const v = xs.filter((x): x is number => x !== null && x !== undefined && Number.isFinite(x));
  if (v.length === 0) return null;
  return { n: v.length, min: Math.min(...v), median: median(v), max: Math.max(...v) };
}

/** "1.23 (1.10–1.40, n=3)"; one sample: "1.23"; none: "–". */
export function formatSpread(s: Spread | null, format: (x: number) => string = (x) => fmt(x)): string {
  if (s === null) return '–';
  return s.n === 1 ? format(s.median) : `${format(s.median)} (${format(s.min)}–${format(s.max)}, n=${s.n})`;
}

/** Mirror ÷ local produce throughput of a pair: the goal is ≥ 0.80. */
export function mirrorRatio(p: PairFigures): number | null {
  if (!p.mirror || !p.local || p.local.mibPerSec <= 0) return null;
  return p.mirror.mibPerSec / p.local.mibPerSec;
}

/** The mirror's rate once copying began: its bytes over the time from the first record copied to the last. */
export function copyRate(m: NonNullable<PairFigures['mirror']>): number | null {
  const ms = m.seconds * 1000 - m.firstCopyMs;
  return Number.isFinite(ms) && ms > 0 ? m.bytes / MiB / (ms / 1000) : null;
}

/** CPU seconds per GiB of payload, or null. */
export function cpuPerGiB(cpuSeconds: number | null | undefined, bytes: number | undefined): number | null {
  if (cpuSeconds === null || cpuSeconds === undefined || !bytes) return null;
  return cpuSeconds / (bytes / GiB);
}

export interface Goal {
  text: string;
  met(median: number): boolean;
}

export const GOALS = {
  ratio: { text: '≥ 0.80', met: (x: number) => x >= 0.8 } satisfies Goal,
  lagP99: { text: '< 100 ms', met: (x: number) => x < 100 } satisfies Goal,
};

interface Row {
  label: string;
  values: Array<number | null | undefined>;
  unit?: string;
  goal?: Goal;
  digits?: number;
}

function rows(ok: readonly PairFigures[]): Row[] {
  return [
    { label: 'local produce (max rate, acks=all), MiB/s', values: ok.map((p) => p.local?.mibPerSec) },
    { label: "source fetch alone, the replicator's request shape (nothing appended), MiB/s", values: ok.map((p) => p.sourceRead?.mibPerSec) },
    { label: 'mirror copy of the full backlog, MiB/s', values: ok.map((p) => p.mirror?.mibPerSec) },
    { label: '**mirror ÷ local produce**', values: ok.map(mirrorRatio), goal: GOALS.ratio },
    { label: 'mirror: from POST /v1/mirrors to the first record copied, ms', values: ok.map((p) => p.mirror?.firstCopyMs) },
    { label: 'mirror: copy rate from the first record copied, MiB/s', values: ok.map((p) => (p.mirror ? copyRate(p.mirror) : null)) },
    { label: 'while producing at max rate: produce, MiB/s', values: ok.map((p) => p.concurrent?.produce.mibPerSec) },
    { label: 'while producing at max rate: mirror in the same window, MiB/s', values: ok.map((p) => p.concurrent?.mirrorInWindow.mibPerSec) },
    { label: 'while producing at max rate: mirror ÷ produce', values: ok.map((p) => (p.concurrent && p.concurrent.produce.mibPerSec > 0 ? p.concurrent.mirrorInWindow.mibPerSec / p.concurrent.produce.mibPerSec : null)) },
    { label: 'while producing at max rate: mirror ÷ local produce alone', values: ok.map((p) => (p.concurrent && p.local ? p.concurrent.mirrorInWindow.mibPerSec / p.local.mibPerSec : null)) },
    { label: 'while producing at max rate: behind when the producers stopped, MiB', values: ok.map((p) => (p.concurrent ? p.concurrent.behindAtEndBytes / MiB : null)) },
    { label: 'while producing at max rate: catch-up after the last ack, s', values: ok.map((p) => (p.concurrent ? p.concurrent.catchUpMs / 1000 : null)) },
    { label: 'lag at the paced rate: produce achieved, MiB/s', values: ok.map((p) => p.lag?.produce.mibPerSec) },
    { label: 'lag p50, ms', values: ok.map((p) => p.lag?.lag.p50) },
    { label: '**lag p99, ms**', values: ok.map((p) => p.lag?.lag.p99), goal: GOALS.lagP99 },
    { label: 'lag p99.9, ms', values: ok.map((p) => p.lag?.lag.p999) },
    { label: 'lag max, ms', values: ok.map((p) => p.lag?.lag.max) },
    { label: 'destination CPU during the mirror, s/GiB copied', values: ok.map((p) => cpuPerGiB(p.mirror?.destinationCpuSeconds, p.mirror?.bytes)) },
    { label: 'source CPU serving the mirror, s/GiB', values: ok.map((p) => cpuPerGiB(p.mirror?.sourceCpuSeconds, p.mirror?.bytes)) },
    { label: 'source CPU during the local produce, s/GiB written', values: ok.map((p) => cpuPerGiB(p.local?.sourceCpuSeconds, p.local?.bytes)) },
    { label: 'destination CPU while producing at max rate, s/GiB copied', values: ok.map((p) => cpuPerGiB(p.concurrent?.destinationCpuSeconds, p.concurrent?.mirrorOverall.bytes)) },
    { label: 'peak RSS, source, MiB', values: ok.map((p) => p.peakRssMiB?.source) },
    { label: 'peak RSS, destination, MiB', values: ok.map((p) => p.peakRssMiB?.destination) },
  ];
}

/** The figures table: median (min–max, n) over the pairs, the goal and whether the median meets it. */
export function figuresTable(pairs: readonly PairFigures[]): string[] {
  const out = ['| figure | median (min–max, n) | goal |', '|---|---:|---|'];
  for (const r of rows(pairs)) {
    const s = spreadOf(r.values);
    if (s === null) continue;
    const verdict = r.goal ? `${r.goal.text} ${r.goal.met(s.median) ? '✓' : '✗ missed'}` : '';
    out.push(`| ${r.label} | ${formatSpread(s)} | ${verdict} |`);
  }
  return out;
}

/** Every pair's own figures, in order. */
export function pairsTable(pairs: readonly PairFigures[]): string[] {
  const out = [
    '| pair | local MiB/s | mirror MiB/s | mirror ÷ local | concurrent produce / mirror MiB/s | lag p50 / p99 / p99.9 / max ms | dest CPU s/GiB | peak RSS src / dest MiB |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const p of pairs) {
    if (p.failed && !p.local) {
      out.push(`| ${p.pair} | failed: ${p.failed.replace(/\|/g, '\\|')} | | | | | | |`);
      continue;
    }
    const c = p.concurrent ? `${fmt(p.concurrent.produce.mibPerSec)} / ${fmt(p.concurrent.mirrorInWindow.mibPerSec)}` : '–';
    const l = p.lag ? `${fmt(p.lag.lag.p50)} / ${fmt(p.lag.lag.p99)} / ${fmt(p.lag.lag.p999)} / ${fmt(p.lag.lag.max)}` : '–';
    out.push(
      `| ${p.pair} | ${fmt(p.local?.mibPerSec)} | ${fmt(p.mirror?.mibPerSec)} | ${fmt(mirrorRatio(p))} | ${c} | ${l} | ` +
        `${fmt(cpuPerGiB(p.mirror?.destinationCpuSeconds, p.mirror?.bytes))} | ${fmt(p.peakRssMiB?.source)} / ${fmt(p.peakRssMiB?.destination)} |`,
    );
  }
  return out;
}

function limitLines(l: MirrorFile['limits']): string[] {
  if (!l) return [];
  return [
    '',
    'Machine limits, measured in the same run:',
    '',
    '| limit | MiB/s | how |',
    '|---|---:|---|',
    `| loopback TCP, ${l.loopback.connections} connections | ${fmt(l.loopback.mibPerSec)} | ${formatBytes(l.loopback.chunkBytes)} writes to a sink process |`,
    `| loopback TCP, 1 connection (a link's) | ${fmt(l.loopbackOneConnection.mibPerSec)} | ${formatBytes(l.loopbackOneConnection.chunkBytes)} writes to a sink process |`,
    `| disk: write + fsync per chunk | ${fmt(l.disk.syncEachChunk.mibPerSec)} | ${formatBytes(l.disk.chunkBytes)} chunks, fsync p50 ${fmt(l.disk.syncEachChunk.fsyncP50Ms)} ms, p99 ${fmt(l.disk.syncEachChunk.fsyncP99Ms)} ms |`,
    `| disk: write, one fsync at the end | ${fmt(l.disk.syncAtEnd.mibPerSec)} | ${formatBytes(l.disk.syncAtEnd.bytes)} in ${l.disk.dir} |`,
  ];
}

/** Lines on how the lag was observed, per pair. */
function pollLines(pairs: readonly PairFigures[]): string[] {
  const out: string[] = [];
  for (const p of pairs) {
    if (!p.lag) continue;
    const poll = p.lag.poll;
    const how =
      poll.mode === 'fetch'
        ? `long-poll Fetch on the destination (maxBytes 1, woken by its high watermark moving), ${poll.rounds} answers, round p50 ${fmt(poll.roundMs.p50)} ms, p99 ${fmt(poll.roundMs.p99)} ms`
        : `ListOffsets LATEST on the destination every ${poll.intervalMs} ms, ${poll.rounds} polls, round trip p50 ${fmt(poll.roundMs.p50)} ms, p99 ${fmt(poll.roundMs.p99)} ms`;
    const extra = [
      `${p.lag.lag.count} batches`,
      p.lag.lag.coveredBeforeAck > 0 ? `${p.lag.lag.coveredBeforeAck} on the destination before their ack (0 ms)` : '',
      p.lag.lag.uncovered > 0 ? `**${p.lag.lag.uncovered} never seen on the destination**` : '',
      poll.errors > 0 ? `${poll.errors} poll errors` : '',
      Object.keys(p.lag.errors).length > 0 ? `produce errors ${Object.entries(p.lag.errors).map(([k, v]) => `${k} ×${v}`).join(', ')}` : '',
      p.lag.produce.mibPerSec < 0.95 * p.lag.targetMiBps ? `**the paced rate was not sustained: ${fmt(p.lag.produce.mibPerSec)} of ${fmt(p.lag.targetMiBps)} MiB/s**` : '',
    ].filter((x) => x !== '');
    out.push(`- pair ${p.pair}: ${fmt(p.lag.targetMiBps)} MiB/s = ${fmt(p.lag.percent)}% of the local max, for ${fmt(p.lag.produce.seconds)} s (produce p99 ${fmt(p.lag.produceP99Ms)} ms); ${how}; ${extra.join('; ')}`);
  }
  return out;
}

function mirrorStepLines(pairs: readonly PairFigures[]): string[] {
  const out: string[] = [];
  for (const p of pairs) {
    if (!p.mirror) continue;
    out.push(
      `- pair ${p.pair}: ${formatBytes(p.mirror.bytes)} in ${fmt(p.mirror.seconds)} s, the first record copied ${fmt(p.mirror.firstCopyMs)} ms after the POST; ` +
        `each partition's position moved ${fmt(p.mirror.steps)} times (median over the partitions; admin endpoint polled every ${p.mirror.pollMs} ms), ` +
        `by a median ${fmt(p.mirror.medianStepMiB)} MiB of payload a step` +
        (p.sourceRead ? `; the same bytes fetched alone in ${fmt(p.sourceRead.seconds)} s (${p.sourceRead.fetches} fetches)` : ''),
    );
  }
  return out;
}

export function mirrorMarkdown(f: MirrorFile): string {
  const s = f.shape;
  const lines = [
    `### mirror: geo-replication between two Ledgerline brokers on one machine`,
    '',
    `${f.date} · \`${f.command}\` · ${f.host.cpus} CPUs (${f.host.cpuModel}), ${f.host.memoryGiB} GiB, Node ${f.host.node} · load average before ${f.host.loadAverageBefore.join(' / ')}`,
    '',
    `1 topic × ${s.partitions} partitions, ${s.recordSize} B records in ${formatBytes(s.batchBytes)} batches, ${s.producers} producers × ${s.maxInFlight} in flight, ` +
      `${s.partitionsPerRequest} partitions per request, acks=all · backlog ${formatBytes(s.backlogBytes)}` +
      (s.concurrentBytes !== null ? ` · produced while mirroring ${formatBytes(s.concurrentBytes)}` : '') +
      (s.lagSeconds !== null ? ` · lag at ${s.lagMiBps !== undefined ? `${s.lagMiBps} MiB/s` : `${s.lagPercent}% of the local max`} for ${s.lagSeconds} s` : ''),
    '',
    `Pairs: ${f.pairs.length}, each on a fresh source and destination. Medians over the pairs:`,
    '',
    ...figuresTable(f.pairs),
    '',
    'Pair by pair:',
    '',
    ...pairsTable(f.pairs),
  ];
  const steps = mirrorStepLines(f.pairs);
  if (steps.length > 0) lines.push('', 'Mirror phase:', '', ...steps);
  const polls = pollLines(f.pairs);
  if (polls.length > 0) lines.push('', 'Lag measurement:', '', ...polls);
  lines.push(...limitLines(f.limits));
  for (const p of f.pairs) if (p.failed) lines.push('', `**Pair ${p.pair} stopped early: ${p.failed}**`);
  if (f.tree) lines.push('', `Tree: ${f.tree.commit}${f.tree.changed.length > 0 ? ` with uncommitted changes to ${f.tree.changed.join(', ')}` : ''}.`);
  return lines.join('\n') + '\n';
}
