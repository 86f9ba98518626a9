/**
 * What a measured window cost, beside what it achieved: the CPU and the garbage-collection pauses of the
 * broker's processes and of this process (the load generator), sampled at the window's start and end.
 *
 * - Broker CPU: user + system time from /proc (StartedBroker.cpuSeconds), every process of the broker.
 * - Broker GC: the time its collector held the program. Apache Kafka (a JVM): `jstat -gc <pid>`'s GCT column,
 *   the young, full and concurrent-cycle pause times G1 counts (read from the JVM's hsperfdata, no attach).
 *   Ledgerline (Node.js): the sum of `ledgerline_process_nodejs_gc_duration_seconds` on its admin endpoint,
 *   prom-client's record of every GC event V8 reports (scavenges, mark-compacts, incremental marking steps).
 * - Load generator: process.cpuUsage() and the same V8 GC events through a PerformanceObserver, and how late its
 *   own event loop ran (`monitorEventLoopDelay`): a latency the load generator measures includes its own delays,
 *   so this is the floor under every tail it reports on a machine the broker shares with it.
 */
import { execFile } from 'node:child_process';
import { PerformanceObserver, monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * The load generator's event loop is sampled every LOOP_SAMPLE_MS. Node records each sample's whole interval,
 * not its lateness, so the lateness is a percentile less this.
 */
const LOOP_SAMPLE_MS = 10;

/** A broker's counters a window reads at its start and end; either may be missing. */
export interface BrokerProbes {
  /** CPU seconds its processes have used so far, or null. */
  cpuSeconds?: () => number | null;
  /** Seconds its processes have spent in GC pauses so far, or null. */
  gcSeconds?: () => Promise<number | null>;
}

export interface WindowUsage {
  /** The load generator's CPU over the window, in % of one core. */
  clientCpuPercent: number;
  /** The load generator's GC pauses over the window, in seconds. */
  clientGcSeconds: number;
  /** How late the load generator's event loop ran at the 99th percentile of the window's samples, ms (null: none). */
  clientLoopDelayP99Ms: number | null;
  /** The broker's CPU seconds over the window, or null when not measured. */
  brokerCpuSeconds: number | null;
  /** The broker's GC pause seconds over the window, or null when not measured. */
  brokerGcSeconds: number | null;
}

let harnessGc = 0;
let observer: PerformanceObserver | null = null;

/** Seconds of GC pauses in this process since the first call (which starts counting). */
export function harnessGcSeconds(): number {
  if (observer === null) {
    observer = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) harnessGc += e.duration / 1000;
    });
    observer.observe({ entryTypes: ['gc'] });
  }
  return harnessGc;
}

/** Starts a window; `end()` closes it and tells what it cost. */
export async function startWindow(probes: BrokerProbes): Promise<{ end(): Promise<WindowUsage> }> {
  const gc0 = await probes.gcSeconds?.();
  const client0 = harnessGcSeconds();
  const broker0 = probes.cpuSeconds?.() ?? null;
  const cpu0 = process.cpuUsage();
  const loop = monitorEventLoopDelay({ resolution: LOOP_SAMPLE_MS });
  loop.enable();
  const t0 = performance.now();
  return {
    async end() {
      const ms = performance.now() - t0;
      loop.disable();
      const clientLoopDelayP99Ms = loop.count > 0 ? Math.max(0, loop.percentile(99) / 1e6 - LOOP_SAMPLE_MS) : null;
      const cpu = process.cpuUsage(cpu0);
      const broker1 = probes.cpuSeconds?.() ?? null;
      const clientGcSeconds = harnessGcSeconds() - client0;
      const gc1 = await probes.gcSeconds?.();
      return {
        clientCpuPercent: ms > 0 ? ((cpu.user + cpu.system) / 1000 / ms) * 100 : 0,
        clientGcSeconds,
        clientLoopDelayP99Ms,
        brokerCpuSeconds: between(broker0, broker1),
        brokerGcSeconds: between(gc0 ?? null, gc1 ?? null),
      };
    },
  };
}

function between(a: number | null, b: number | null): number | null {
  return a === null || b === null ? null : b - a;
}

/** The GCT column of `jstat -gc` output (seconds), or null when it has none. */
export function parseJstatGcTime(output: string): number | null {
  const lines = output.trim().split('\n');
  if (lines.length < 2) return null;
  const names = lines[0]!.trim().split(/\s+/);
  const values = lines[lines.length - 1]!.trim().split(/\s+/);
  const i = names.indexOf('GCT');
  if (i < 0 || values.length !== names.length) return null;
  const v = Number(values[i]);
  return Number.isFinite(v) ? v : null;
}

/** Seconds a live JVM has spent in GC pauses (`jstat -gc`), or null when jstat cannot read it. */
export function jvmGcSeconds(pid: number): Promise<number | null> {
  return new Promise((resolve) => {
    execFile('jstat', ['-gc', String(pid)], { timeout: 10_000 }, (err, stdout) => resolve(err ? null : parseJstatGcTime(stdout)));
  });
}

/** The sum of a Prometheus histogram's `_sum` series over all its labels, or null when it has none. */
export function parsePrometheusSum(text: string, histogram: string): number | null {
  let sum: number | null = null;
  const prefix = `${histogram}_sum`;
  for (const line of text.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const rest = line.slice(prefix.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const v = Number(rest.slice(rest.lastIndexOf(' ') + 1));
    if (Number.isFinite(v)) sum = (sum ?? 0) + v;
  }
  return sum;
}

/** Seconds a Ledgerline broker has spent in GC, from its admin endpoint's /metrics, or null. */
export async function ledgerlineGcSeconds(adminUrl: string): Promise<number | null> {
  try {
    const res = await fetch(`${adminUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return null;
    return parsePrometheusSum(await res.text(), 'ledgerline_process_nodejs_gc_duration_seconds');
  } catch {
    return null;
  }
}

/** The sum of `read` over `pids`, or null when any is null (a partial sum would mislead). */
export async function sumOver(pids: readonly number[], read: (pid: number) => Promise<number | null>): Promise<number | null> {
  if (pids.length === 0) return null;
  const all = await Promise.all(pids.map(read));
  return all.some((x) => x === null) ? null : all.reduce<number>((a, b) => a + b!, 0);
}
