/**
 * Turning a program's output into a comparable outcome, and comparing the outcome against Ledgerline with
 * the one against Kafka. Names carry a per-run prefix, which normalisation replaces with "T"; programs
 * already leave out what legitimately differs between brokers (cluster and node ids, producer ids,
 * wall-clock timestamps), so what remains must be equal.
 */
import type { RunResult } from './proc.js';
import { lastLine } from './proc.js';

export interface Outcome {
  /** The program ran to the end and printed its JSON. */
  ran: boolean;
  result: unknown;
  violations: string[];
  /** One line: why it did not run to the end. */
  reason?: string;
  ms: number;
  stderrTail?: string;
}

export type CellStatus = 'same' | 'differs' | 'fails' | 'ref-fails' | 'pass' | 'n/a' | 'not-run';

/** Replaces the run prefix everywhere (keys and strings) and sorts object keys. */
export function normalise(value: unknown, prefix: string): unknown {
  if (typeof value === 'string') return value.split(prefix).join('T');
  if (Array.isArray(value)) return value.map((v) => normalise(v, prefix));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      out[normalise(key, prefix) as string] = normalise((value as Record<string, unknown>)[key], prefix);
    }
    return out;
  }
  return value;
}

/** The line of a failed program's stderr that says what went wrong (not a stack frame or a banner). */
export function errorLine(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l.length > 0 && !/^at |^Node\.js v|^\^+$|^File "|^Traceback|^goroutine |^\.\.\./.test(l));
  const telling = [...lines].reverse().find((l) => /error|exception|panic|fatal|refused|timed? ?out/i.test(l));
  const line = telling ?? lines[lines.length - 1] ?? '';
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

export function parseOutcome(r: RunResult, prefix: string, timeoutMs: number): Outcome {
  const stderrTail = r.stderr.split('\n').slice(-40).join('\n');
  if (r.spawnError) return { ran: false, result: null, violations: [], reason: `could not start: ${r.spawnError}`, ms: r.ms, stderrTail };
  if (r.timedOut) return { ran: false, result: null, violations: [], reason: `timed out after ${Math.round(timeoutMs / 1000)} s`, ms: r.ms, stderrTail };
  const line = r.stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .pop();
  if (line === undefined) {
    const why = errorLine(r.stderr) || lastLine(r.stdout) || 'no output';
    return { ran: false, result: null, violations: [], reason: `exit ${r.code ?? r.signal}, no result: ${why}`, ms: r.ms, stderrTail };
  }
  try {
    const parsed = JSON.parse(line) as { result?: unknown; violations?: unknown; na?: string };
    const violations = Array.isArray(parsed.violations) ? parsed.violations.map((v) => String(normalise(String(v), prefix))) : [];
    const clean = r.code === 0 && violations.length === 0;
    // stderr is kept only where it helps explain a failure.
    return { ran: r.code === 0, result: normalise(parsed.result ?? null, prefix), violations, reason: r.code === 0 ? undefined : `exit ${r.code ?? r.signal}`, ms: r.ms, stderrTail: clean ? undefined : stderrTail };
  } catch (e) {
    return { ran: false, result: null, violations: [], reason: `unparsable result: ${e instanceof Error ? e.message : String(e)}`, ms: r.ms, stderrTail };
  }
}

function short(v: unknown): string {
  const s = JSON.stringify(v) ?? 'undefined';
  return s.length > 60 ? `${s.slice(0, 59)}…` : s;
}

/** The first difference between two normalised values, as "path: kafka=X candidate=Y", or null. */
export function firstDifference(ref: unknown, cand: unknown, path = '', names: [string, string] = ['kafka', 'ledgerline']): string | null {
  const at = path === '' ? '(root)' : path;
  if (ref === cand) return null;
  if (Array.isArray(ref) && Array.isArray(cand)) {
    const n = Math.max(ref.length, cand.length);
    for (let i = 0; i < n; i++) {
      if (i >= ref.length) return `${at}: ${names[1]} has extra [${i}]=${short(cand[i])}`;
      if (i >= cand.length) return `${at}: ${names[1]} lacks [${i}]=${short(ref[i])}`;
      const d = firstDifference(ref[i], cand[i], `${path}[${i}]`, names);
      if (d !== null) return d;
    }
    return null;
  }
  if (ref !== null && cand !== null && typeof ref === 'object' && typeof cand === 'object' && !Array.isArray(ref) && !Array.isArray(cand)) {
    const keys = [...new Set([...Object.keys(ref), ...Object.keys(cand)])].sort();
    for (const k of keys) {
      const p = path === '' ? k : `${path}.${k}`;
      if (!(k in cand)) return `${p}: ${names[1]} lacks it (${names[0]}=${short((ref as Record<string, unknown>)[k])})`;
      if (!(k in ref)) return `${p}: ${names[0]} lacks it (${names[1]}=${short((cand as Record<string, unknown>)[k])})`;
      const d = firstDifference((ref as Record<string, unknown>)[k], (cand as Record<string, unknown>)[k], p, names);
      if (d !== null) return d;
    }
    return null;
  }
  return `${at}: ${names[0]}=${short(ref)} ${names[1]}=${short(cand)}`;
}

/** A single broker's verdict on its own: the program ran and saw no violation of Kafka's semantics. */
export function soloVerdict(o: Outcome): { status: CellStatus; reason?: string } {
  if (!o.ran) return { status: 'fails', reason: o.reason };
  if (o.violations.length > 0) return { status: 'fails', reason: o.violations[0] };
  return { status: 'pass' };
}

export function compareOutcomes(ref: Outcome, cand: Outcome, names: [string, string]): { status: CellStatus; reason?: string } {
  const r = soloVerdict(ref);
  if (r.status !== 'pass') return { status: 'ref-fails', reason: `against ${names[0]}: ${r.reason}` };
  const c = soloVerdict(cand);
  if (c.status !== 'pass') return { status: 'fails', reason: c.reason };
  const d = firstDifference(ref.result, cand.result, '', names);
  return d === null ? { status: 'same' } : { status: 'differs', reason: d };
}
