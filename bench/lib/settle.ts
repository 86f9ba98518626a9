/**
 * Idle memory and the spread of repeated timings, for the restart benchmarks (partitions.ts, restart.ts).
 *
 * Idle RSS: a broker that has just started is still opening partitions, loading indexes, compiling code;
 * its resident memory climbs, then stops. It counts as settled when every sample over the last `windowMs`
 * lies within `toleranceMiB` of the window's first (or the whole series is that long and flat); a broker
 * that never settles within the deadline is reported with its last sample and `settled: false`.
 */
import { performance } from 'node:perf_hooks';
import { median } from './stats.js';

export interface SettleOptions {
  /** How long RSS must stay within the tolerance; default 5 s. */
  windowMs?: number;
  /** How far it may move in that window; default 8 MiB or 2% of the level, whichever is larger. */
  toleranceMiB?: number;
  /** Give up after this long; default 60 s. */
  deadlineMs?: number;
  /** Sample period; default 500 ms. */
  intervalMs?: number;
}

export interface SettleResult {
  /** The level: the median of the settled window (or of the last window at the deadline), MiB. */
  rssMiB: number;
  settled: boolean;
  /** From the first sample until the window that settled ended (or the deadline), ms. */
  ms: number;
  samples: number;
}

export interface Sample {
  t: number;
  mib: number;
}

/**
 * The last `windowMs` of samples: from the latest sample taken at or before the window's start, so the
 * window always spans the whole period even when sampling stalled (a loaded machine delays timers); null
 * while the series is shorter than that.
 */
export function lastWindow(samples: readonly Sample[], windowMs: number): Sample[] | null {
  if (samples.length < 2) return null;
  const start = samples[samples.length - 1]!.t - windowMs;
  let from = -1;
  for (let i = samples.length - 2; i >= 0; i--) {
    if (samples[i]!.t <= start) {
      from = i;
      break;
    }
  }
  return from < 0 ? null : samples.slice(from);
}

/** The last window (see lastWindow) when all its samples lie within the tolerance, else null. */
export function flatWindow(samples: readonly Sample[], windowMs: number, toleranceMiB?: number): Sample[] | null {
  const window = lastWindow(samples, windowMs);
  if (window === null) return null;
  const lo = Math.min(...window.map((s) => s.mib));
  const hi = Math.max(...window.map((s) => s.mib));
  const tol = toleranceMiB ?? Math.max(8, 0.02 * hi);
  return hi - lo <= tol ? window : null;
}

/** Samples `read` until its value is flat (see the top of this file) or the deadline passes. */
export async function settleRss(read: () => number | null, o: SettleOptions = {}): Promise<SettleResult> {
  const windowMs = o.windowMs ?? 5000;
  const deadlineMs = o.deadlineMs ?? 60_000;
  const intervalMs = o.intervalMs ?? 500;
  const samples: Sample[] = [];
  const t0 = performance.now();
  for (;;) {
    const mib = read();
    if (mib === null) throw new Error('the broker is not running: no RSS to read');
    const t = performance.now() - t0;
    samples.push({ t, mib });
    const flat = flatWindow(samples, windowMs, o.toleranceMiB);
    if (flat) return { rssMiB: median(flat.map((s) => s.mib)), settled: true, ms: t, samples: samples.length };
    if (t >= deadlineMs) {
      const last = lastWindow(samples, windowMs) ?? samples;
      return { rssMiB: median(last.map((s) => s.mib)), settled: false, ms: t, samples: samples.length };
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface Spread {
  n: number;
  min: number;
  median: number;
  max: number;
}

export function spread(xs: readonly number[]): Spread | null {
  if (xs.length === 0) return null;
  return { n: xs.length, min: Math.min(...xs), median: median(xs), max: Math.max(...xs) };
}

/** Figures are kept in ms (shown in s), MiB, or MiB/s. */
export type Unit = 's' | 'MiB' | 'MiB/s';

/** "1.23 s (1.10–1.40, n=3)", or "1.23 s" for one sample, or "–". */
export function formatSpread(s: Spread | null, unit: Unit, digits = 2): string {
  if (s === null) return '–';
  const f = (x: number): string => (unit === 's' ? (x / 1000).toFixed(digits) : x.toFixed(0));
  const v = `${f(s.median)} ${unit}`;
  return s.n === 1 ? v : `${v} (${f(s.min)}–${f(s.max)}, n=${s.n})`;
}

/** Ledgerline ÷ Kafka of the medians, "–" when either is missing. */
export function ratio(a: Spread | null, b: Spread | null): string {
  if (a === null || b === null || b.median === 0) return '–';
  return `${(a.median / b.median).toFixed(2)}×`;
}
