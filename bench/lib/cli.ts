/** Command-line options shared by the benchmarks (run, compare and smoke; broker and groups). */
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import { executeWorkload } from './execute.js';
import type { ExecuteOptions } from './execute.js';
import type { Workload, WorkloadOverrides } from './workload.js';
import { applyOverrides, loadWorkload, parseBytes, parseRate } from './workload.js';

export const WORKLOAD_OPTIONS = {
  duration: { type: 'string' },
  warmup: { type: 'string' },
  rate: { type: 'string' },
  backlog: { type: 'string' },
  producers: { type: 'string' },
  consumers: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const WORKLOAD_HELP = `  --duration S        measured seconds (default: the workload's)
  --warmup S          warm-up seconds before measuring
  --rate R            max | messages per second | P% (of the workload's rateReference)
  --backlog SIZE      catch-up workloads: backlog to write first, e.g. 512MiB, 5GiB
  --producers N, --consumers N`;

export function parse<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  return parseArgs({ args, options: { ...WORKLOAD_OPTIONS, ...options }, allowPositionals: true, strict: true });
}

/** A `--name` option's positive number, or `fallback` when it was not given. */
export function positiveOption(values: Record<string, unknown>, name: string, fallback: number): number {
  const v = values[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0)) throw new Error(`--${name} must be a positive number, got ${String(v)}`);
  return n;
}

function positiveInt(v: string | undefined, what: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${what} must be a non-negative integer, got ${v}`);
  return n;
}

/** The workload named on the command line with the overrides applied. */
export function workloadFromArgs(name: string | undefined, values: Record<string, unknown>): Workload {
  if (!name) throw new Error('name a workload (see bench/workloads/)');
  const w = loadWorkload(name);
  const o: WorkloadOverrides = {
    durationSeconds: positiveInt(values.duration as string | undefined, '--duration'),
    warmupSeconds: positiveInt(values.warmup as string | undefined, '--warmup'),
    rate: values.rate === undefined ? undefined : parseRate(values.rate, w.rate.kind === 'percent' ? w.rate.reference : w.name),
    backlogBytes: values.backlog === undefined ? undefined : parseBytes(values.backlog),
    producers: positiveInt(values.producers as string | undefined, '--producers'),
    consumers: positiveInt(values.consumers as string | undefined, '--consumers'),
  };
  return applyOverrides(w, o);
}

/**
 * Measures the max rate of a percent-rate workload's reference workload against `bootstrap`: a short
 * run (at most the workload's duration, capped at 15 s) of the reference with this run's warm-up.
 */
export async function calibrate(w: Workload, bootstrap: string, log: (l: string) => void, security?: ExecuteOptions['security']): Promise<number> {
  if (w.rate.kind !== 'percent') throw new Error('calibrate: not a percent rate');
  const ref = applyOverrides(loadWorkload(w.rate.reference), {
    durationSeconds: Math.min(w.durationSeconds, 15),
    warmupSeconds: Math.min(w.warmupSeconds, 3),
    rate: { kind: 'max' },
  });
  log(`calibrating: ${ref.name} at max rate for ${ref.durationSeconds} s`);
  const r = await executeWorkload({ bootstrap, workload: ref, rate: null, log: (l) => log(`  ${l}`), security });
  const max = r.result.produceRate.recordsPerSec;
  log(`max rate ${Math.round(max)} msg/s (${r.result.produceRate.mibPerSec.toFixed(1)} MiB/s)`);
  return max;
}

export function logger(prefix = ''): (line: string) => void {
  const t0 = Date.now();
  return (line) => console.error(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(6)} s] ${prefix}${line}`);
}
