import { describe, expect, it } from 'vitest';
import { dependence, diskNeeded, diskRefusal, figuresFor, parseGibList } from '../../../bench/restart.js';

const GiB = 2 ** 30;

describe('restart benchmark options', () => {
  it('reads --gib as sorted distinct positive sizes', () => {
    expect(parseGibList('5,1')).toEqual([1, 5]);
    expect(parseGibList('0.1, 0.1,0.5')).toEqual([0.1, 0.5]);
    expect(() => parseGibList('1,-2')).toThrow(/positive/);
    expect(() => parseGibList('x')).toThrow(/positive/);
    expect(() => parseGibList('')).toThrow(/positive/);
  });

  it('needs the largest volume plus a quarter and 2 GiB of free disk', () => {
    expect(diskNeeded([1, 5])).toBe(Math.ceil(5 * GiB * 1.25 + 2 * GiB));
  });

  it('refuses clearly when the disk cannot hold the largest volume, and not otherwise', () => {
    const why = diskRefusal([1, 5], 4 * GiB, '/tmp/x');
    expect(why).toMatch(/not enough free disk in \/tmp\/x: 4\.00 GiB free/);
    expect(why).toMatch(/up to 5 GiB needs 8\.25 GiB/);
    expect(diskRefusal([1, 5], 100 * GiB, '/tmp/x')).toBeNull();
  });

  it('has one group of figures per volume, listen times with the 5 s goal', () => {
    const f = figuresFor([0.1, 1]);
    expect(f[0]!.key).toBe('listenFresh');
    expect(f.filter((x) => x.key.endsWith('@0.1'))).toHaveLength((f.length - 1) / 2);
    expect(f.find((x) => x.key === 'listenKill@1')?.goal?.max).toBe(5000);
  });

  it('shows how time to listen grows from the smallest to the largest volume', () => {
    const lines = dependence(
      [{ kind: 'ledgerline', samples: { 'listenKill@1': [1000], 'listenKill@5': [3000], 'listenGraceful@1': [500], 'listenGraceful@5': [500] }, error: null, notes: [] }],
      [1, 5],
    );
    expect(lines).toEqual(['- ledgerline: time to listen at 5 GiB ÷ at 1 GiB: 3.00× after SIGKILL, 1.00× after a graceful stop']);
    expect(dependence([], [1])).toEqual([]);
  });
});
