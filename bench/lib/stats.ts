/** Latency histograms (HdrHistogram, µs) and the small statistics the reports need. */
import * as hdr from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';

/** Percentiles reported in tables and drawn as latency curves. */
export const PERCENTILES = [50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99] as const;

export interface LatencySummary {
  /** Number of samples (batches). */
  count: number;
  /** Values in milliseconds. */
  p50: number;
  p99: number;
  p999: number;
  max: number;
  mean: number;
  /** [percentile, ms] pairs for PERCENTILES plus [100, max]: the curve in charts. */
  curve: Array<[number, number]>;
}

/** A histogram of microseconds from 1 µs to 10 minutes with 3 significant digits. */
export function latencyHistogram(): Histogram {
  return hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3, useWebAssembly: false });
}

export function recordMs(h: Histogram, ms: number, count = 1): void {
  const us = Math.max(1, Math.min(600_000_000, Math.round(ms * 1000)));
  if (count === 1) h.recordValue(us);
  else h.recordValueWithCount(us, count);
}

export function summarize(h: Histogram): LatencySummary {
  if (h.totalCount === 0) return { count: 0, p50: 0, p99: 0, p999: 0, max: 0, mean: 0, curve: [] };
  // A percentile reads as its bucket's highest equivalent value, which can exceed the exact maximum.
  const at = (p: number): number => Math.min(h.getValueAtPercentile(p), h.maxValue) / 1000;
  return {
    count: h.totalCount,
    p50: at(50),
    p99: at(99),
    p999: at(99.9),
    max: h.maxValue / 1000,
    mean: h.mean / 1000,
    curve: [...PERCENTILES.map((p): [number, number] => [p, at(p)]), [100, h.maxValue / 1000]],
  };
}

export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export const MiB = 1024 * 1024;

export function formatBytes(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= MiB) return `${(n / MiB).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${n} B`;
}

/** Rounds for display: 3 significant digits, no exponent. */
export function fmt(x: number | null | undefined, digits = 3): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return '–';
  if (x === 0) return '0';
  const mag = Math.floor(Math.log10(Math.abs(x)));
  const decimals = Math.max(0, digits - 1 - mag);
  return x.toFixed(Math.min(decimals, 3));
}

/** A histogram as a string another thread can decode (HdrHistogram's compressed form). */
export function encodeHistogram(h: Histogram): string {
  return hdr.encodeIntoCompressedBase64(h);
}

/** Adds what `encodeHistogram` made into `into`. */
export function addEncodedHistogram(into: Histogram, encoded: string): void {
  into.add(hdr.decodeFromCompressedBase64(encoded, 32, false));
}
