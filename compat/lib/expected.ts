/**
 * compat/expected.json: the cells known `same` against Ledgerline (a regression when one is anything
 * else) and the cells known not to work yet (annotated, not counted). Patterns are `client/scenario`
 * with `*` for either part.
 */
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import type { CellStatus } from './compare.js';

export interface Expected {
  same: string[];
  expectedFailures: Record<string, string>;
}

export function loadExpected(file: string): Expected {
  if (!existsSync(file)) return { same: [], expectedFailures: {} };
  const raw = JSON.parse(readFileSync(file, 'utf8')) as Partial<Expected>;
  return { same: raw.same ?? [], expectedFailures: raw.expectedFailures ?? {} };
}

export function matches(pattern: string, key: string): boolean {
  const [pc, ps] = pattern.split('/');
  const [kc, ks] = key.split('/');
  return (pc === '*' || pc === kc) && (ps === '*' || ps === ks);
}

/** Why a cell is expected to fail, if it is. */
export function expectedFailure(expected: Expected, key: string): string | undefined {
  return Object.entries(expected.expectedFailures).find(([p]) => matches(p, key))?.[1];
}

/** One line per cell listed as same that is not same in this run (cells not run are not judged). */
export function regressions(expected: Expected, cells: ReadonlyArray<{ client: string; scenario: string; status: CellStatus; reason?: string }>): string[] {
  const out: string[] = [];
  for (const c of cells) {
    const key = `${c.client}/${c.scenario}`;
    if (expected.same.includes(key) && c.status !== 'same') out.push(`${key} is ${c.status}, expected same${c.reason ? `: ${c.reason}` : ''}`);
  }
  return out;
}

/** Adds the cells that are same now; never removes one. Returns the added keys. */
export function withNewSame(expected: Expected, cells: ReadonlyArray<{ client: string; scenario: string; status: CellStatus }>): { next: Expected; added: string[] } {
  const added = cells.filter((c) => c.status === 'same' && !expected.same.includes(`${c.client}/${c.scenario}`)).map((c) => `${c.client}/${c.scenario}`);
  return { next: { ...expected, same: [...expected.same, ...added] }, added };
}

/** Rewrites the file, keeping any other top-level field (the comment), `same` in the given order. */
export async function writeExpected(file: string, e: Expected, order: (key: string) => number): Promise<void> {
  const raw = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  const same = [...new Set(e.same)].sort((a, b) => order(a) - order(b));
  await writeFile(file, JSON.stringify({ ...raw, same, expectedFailures: e.expectedFailures }, null, 2) + '\n');
}
