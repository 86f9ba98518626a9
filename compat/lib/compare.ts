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

/**
 * Two unequal strings, each cut to where they start to differ when they are long (a tool's printed
 * line, say): `"…share.version  SupportedMaxVersion: 2…"` rather than the same 60 leading characters.
 */
function shortPair(ref: string, cand: string): [string, string] {
  if (JSON.stringify(ref).length <= 60 && JSON.stringify(cand).length <= 60) return [short(ref), short(cand)];
  let i = 0;
  while (i < ref.length && i < cand.length && ref[i] === cand[i]) i++;
  const from = Math.max(0, i - 20);
  const cut = (s: string): string => `${from > 0 ? '…' : ''}${short(s.slice(from))}`;
  return [cut(ref), cut(cand)];
}

/** Every difference between two normalised values, in order, as "path: kafka=X candidate=Y". */
function* differences(ref: unknown, cand: unknown, path: string, names: [string, string]): Generator<{ path: string; text: string }> {
  const at = path === '' ? '(root)' : path;
  if (ref === cand) return;
  if (Array.isArray(ref) && Array.isArray(cand)) {
    const n = Math.min(ref.length, cand.length);
    for (let i = 0; i < n; i++) yield* differences(ref[i], cand[i], `${path}[${i}]`, names);
    if (cand.length > n) yield { path: at, text: `${at}: ${names[1]} has extra [${n}]=${short(cand[n])}` };
    if (ref.length > n) yield { path: at, text: `${at}: ${names[1]} lacks [${n}]=${short(ref[n])}` };
    return;
  }
  if (ref !== null && cand !== null && typeof ref === 'object' && typeof cand === 'object' && !Array.isArray(ref) && !Array.isArray(cand)) {
    const keys = [...new Set([...Object.keys(ref), ...Object.keys(cand)])].sort();
    for (const k of keys) {
      const p = path === '' ? k : `${path}.${k}`;
      if (!(k in cand)) yield { path: p, text: `${p}: ${names[1]} lacks it (${names[0]}=${short((ref as Record<string, unknown>)[k])})` };
      else if (!(k in ref)) yield { path: p, text: `${p}: ${names[0]} lacks it (${names[1]}=${short((cand as Record<string, unknown>)[k])})` };
      else yield* differences((ref as Record<string, unknown>)[k], (cand as Record<string, unknown>)[k], p, names);
    }
    return;
  }
  const [r, c] = typeof ref === 'string' && typeof cand === 'string' ? shortPair(ref, cand) : [short(ref), short(cand)];
  yield { path: at, text: `${at}: ${names[0]}=${r} ${names[1]}=${c}` };
}

/** The first difference between two normalised values, as "path: kafka=X candidate=Y", or null. */
export function firstDifference(ref: unknown, cand: unknown, path = '', names: [string, string] = ['kafka', 'ledgerline']): string | null {
  for (const d of differences(ref, cand, path, names)) return d.text;
  return null;
}

/** The paths of every difference after the first (a cell's reason names the first in full). */
export function otherDifferences(ref: unknown, cand: unknown, names: [string, string] = ['kafka', 'ledgerline']): string[] {
  return [...differences(ref, cand, '', names)].slice(1).map((d) => d.path);
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
  if (d === null) return { status: 'same' };
  // The first difference in full, then where the others are, so one known difference hides no other.
  const more = otherDifferences(ref.result, cand.result, names);
  const tail = more.length === 0 ? '' : ` (${more.length} more: ${more.slice(0, 4).join(', ')}${more.length > 4 ? ', …' : ''})`;
  return { status: 'differs', reason: d + tail };
}
