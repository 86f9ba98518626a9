import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { expectedFailure, loadExpected, matches, regressions, withNewSame, writeExpected } from '../../../../compat/lib/expected.js';
import type { CellStatus } from '../../../../compat/lib/compare.js';

const cell = (key: string, status: CellStatus, reason?: string) => {
  const [client, scenario] = key.split('/');
  return { client, scenario, status, reason };
};

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('regressions', () => {
  const expected = { same: ['java/metadata', 'kcat/produce-consume'], expectedFailures: {} };

  it('flags a cell known same that is anything else now, with its reason', () => {
    expect(regressions(expected, [cell('java/metadata', 'differs', 'brokers: kafka=1 ledgerline=0'), cell('kcat/produce-consume', 'same')])).toEqual([
      'java/metadata is differs, expected same: brokers: kafka=1 ledgerline=0',
    ]);
  });

  it('does not judge cells that were not run or are not listed', () => {
    expect(regressions(expected, [cell('sarama/metadata', 'fails')])).toEqual([]);
  });
});

describe('expected failures', () => {
  it('match with a wildcard on either side', () => {
    expect(matches('*/transactions', 'java/transactions')).toBe(true);
    expect(matches('kcat/*', 'kcat/metadata')).toBe(true);
    expect(matches('*/transactions', 'java/metadata')).toBe(false);
    expect(expectedFailure({ same: [], expectedFailures: { '*/transactions': 'not yet' } }, 'franz-go/transactions')).toBe('not yet');
  });
});

describe('withNewSame and writeExpected', () => {
  it('add newly same cells, keep regressed ones, and keep the file comment', async () => {
    dir = mkdtempSync(join(tmpdir(), 'expected-test-'));
    const file = join(dir, 'expected.json');
    writeFileSync(file, JSON.stringify({ $comment: 'keep me', same: ['b/x'], expectedFailures: { '*/t': 'why' } }));
    const before = loadExpected(file);
    const { next, added } = withNewSame(before, [cell('a/x', 'same'), cell('b/x', 'fails')]);
    expect(added).toEqual(['a/x']);
    await writeExpected(file, next, (k) => (k.startsWith('a/') ? 0 : 1));
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    expect(written).toEqual({ $comment: 'keep me', same: ['a/x', 'b/x'], expectedFailures: { '*/t': 'why' } });
  });

  it('reads a missing file as nothing expected', () => {
    expect(loadExpected('/nonexistent/expected.json')).toEqual({ same: [], expectedFailures: {} });
  });
});
