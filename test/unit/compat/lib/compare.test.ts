import { describe, expect, it } from 'vitest';
import { compareOutcomes, errorLine, firstDifference, normalise, otherDifferences, parseOutcome } from '../../../../compat/lib/compare.js';
import type { Outcome } from '../../../../compat/lib/compare.js';
import type { RunResult } from '../../../../compat/lib/proc.js';

const ok = (result: unknown, violations: string[] = []): Outcome => ({ ran: true, result, violations, ms: 1 });
const run = (over: Partial<RunResult>): RunResult => ({ code: 0, signal: null, stdout: '', stderr: '', timedOut: false, ms: 5, ...over });

describe('normalise', () => {
  it('replaces the run prefix in strings and keys and sorts object keys', () => {
    const out = normalise({ b: ['p-1-x', { 'p-1-x-g': 'p-1-x-missing' }], a: 1 }, 'p-1-x');
    expect(JSON.stringify(out)).toBe('{"a":1,"b":["T",{"T-g":"T-missing"}]}');
  });

  it('leaves numbers, booleans and null alone', () => {
    expect(normalise([0, true, null, 'x'], 'p')).toEqual([0, true, null, 'x']);
  });
});

describe('firstDifference', () => {
  it('is null for equal values', () => {
    expect(firstDifference({ a: [1, { b: 'x' }] }, { a: [1, { b: 'x' }] })).toBeNull();
  });

  it('names the path and both values of the first scalar difference', () => {
    expect(firstDifference({ lo: { latest: 10 } }, { lo: { latest: 9 } })).toBe('lo.latest: kafka=10 ledgerline=9');
  });

  it('reports a shorter or longer array on the candidate side', () => {
    expect(firstDifference({ o: [0, 1, 2] }, { o: [0, 1] })).toBe('o: ledgerline lacks [2]=2');
    expect(firstDifference({ o: [0] }, { o: [0, 5] })).toBe('o: ledgerline has extra [1]=5');
  });

  it('reports a key present on one side only', () => {
    expect(firstDifference({ a: 1, b: 2 }, { a: 1 })).toBe('b: ledgerline lacks it (kafka=2)');
  });

  it('shows two long strings from where they start to differ', () => {
    const pad = 'Feature: share.version'.padEnd(51);
    const d = firstDifference({ out: [`${pad}SupportedMaxVersion: 2`] }, { out: [`${pad}SupportedMaxVersion: 0`] });
    // 20 characters of context before the first that differs
    expect(d).toBe('out[0]: kafka=…"upportedMaxVersion: 2" ledgerline=…"upportedMaxVersion: 0"');
  });

  it('uses the broker labels it is given', () => {
    expect(firstDifference(1, 2, '', ['kafka', 'kafka#2'])).toBe('(root): kafka=1 kafka#2=2');
  });
});

describe('otherDifferences', () => {
  it('lists the paths of the differences after the first, in order', () => {
    expect(otherDifferences({ a: 1, b: [1, 2], c: 'x', d: 1 }, { a: 2, b: [1, 3], c: 'x' })).toEqual(['b[1]', 'd']);
  });

  it('is empty for equal values or a single difference', () => {
    expect(otherDifferences({ a: [1] }, { a: [1] })).toEqual([]);
    expect(otherDifferences({ a: 1 }, { a: 2 })).toEqual([]);
  });
});

describe('parseOutcome', () => {
  it('takes the last JSON line of stdout and normalises its result and violations', () => {
    const o = parseOutcome(run({ stdout: 'noise\n{"result":{"t":"pre-x"},"violations":["pre-x broke"]}\n' }), 'pre-x', 1000);
    expect(o.ran).toBe(true);
    expect(o.result).toEqual({ t: 'T' });
    expect(o.violations).toEqual(['T broke']);
  });

  it('reports a timeout with the limit', () => {
    const o = parseOutcome(run({ timedOut: true, code: null, signal: 'SIGKILL' }), 'p', 60_000);
    expect(o.ran).toBe(false);
    expect(o.reason).toBe('timed out after 60 s');
  });

  it('reports a program that printed no result with the telling line of its stderr', () => {
    const stderr = 'Traceback (most recent call last):\n  File "x.py", line 1\nValueError: bad thing\n';
    const o = parseOutcome(run({ code: 1, stderr }), 'p', 1000);
    expect(o.ran).toBe(false);
    expect(o.reason).toBe('exit 1, no result: ValueError: bad thing');
  });

  it('reports a program that could not be started', () => {
    expect(parseOutcome(run({ code: null, spawnError: 'spawn kcat ENOENT' }), 'p', 1000).reason).toBe('could not start: spawn kcat ENOENT');
  });
});

describe('errorLine', () => {
  it('skips stack frames and the Node.js banner', () => {
    const stderr = "SyntaxError: The requested module 'x' does not provide an export\n    at ModuleJob._instantiate (node:internal)\n\nNode.js v20.20.2\n";
    expect(errorLine(stderr)).toBe("SyntaxError: The requested module 'x' does not provide an export");
  });
});

describe('compareOutcomes', () => {
  const names: [string, string] = ['kafka', 'ledgerline'];

  it('is same when both ran clean with equal results', () => {
    expect(compareOutcomes(ok({ a: 1 }), ok({ a: 1 }), names)).toEqual({ status: 'same' });
  });

  it('is differs with the first difference as the reason', () => {
    expect(compareOutcomes(ok({ a: 1 }), ok({ a: 2 }), names)).toEqual({ status: 'differs', reason: 'a: kafka=1 ledgerline=2' });
  });

  it('names where the other differences are after the first, so a known one hides none', () => {
    const reason = compareOutcomes(ok({ a: 1, b: 1, c: 1, d: 1, e: 1, f: 1 }), ok({ a: 2, b: 2, c: 2, d: 2, e: 2, f: 2 }), names).reason;
    expect(reason).toBe('a: kafka=1 ledgerline=2 (5 more: b, c, d, e, …)');
  });

  it('is fails when the candidate saw a violation, even with an equal result', () => {
    expect(compareOutcomes(ok({ a: 1 }), ok({ a: 1 }, ['read back 3 of 5']), names)).toEqual({ status: 'fails', reason: 'read back 3 of 5' });
  });

  it('is fails when the candidate did not run to the end', () => {
    const cand: Outcome = { ran: false, result: null, violations: [], reason: 'timed out after 60 s', ms: 60_000 };
    expect(compareOutcomes(ok({}), cand, names)).toEqual({ status: 'fails', reason: 'timed out after 60 s' });
  });

  it('blames the scenario program when the reference failed', () => {
    expect(compareOutcomes(ok({}, ['bad']), ok({}), names)).toEqual({ status: 'ref-fails', reason: 'against kafka: bad' });
  });
});
