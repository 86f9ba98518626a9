import { describe, expect, it } from 'vitest';
import type { MirrorFile, PairFigures } from '../../../../bench/lib/mirror-report.js';
import { cpuPerGiB, figuresTable, formatSpread, mirrorMarkdown, mirrorRatio, pairsTable, rateOf, spreadOf } from '../../../../bench/lib/mirror-report.js';
import { hostInfo } from '../../../../bench/lib/report.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

function pair(n: number, localMiBps: number, mirrorMiBps: number, lagP99: number): PairFigures {
  const lagSummary = { count: 100, p50: lagP99 / 2, p99: lagP99, p999: lagP99 * 1.5, max: lagP99 * 2, mean: lagP99 / 2, curve: [], coveredBeforeAck: 0, uncovered: 0 };
  return {
    pair: n,
    local: { ...rateOf(GiB, GiB / MiB / localMiBps), sourceCpuSeconds: 10, produceP99Ms: 40, loadGenCpuPercent: 50 },
    mirror: { ...rateOf(GiB, GiB / MiB / mirrorMiBps), firstCopyMs: 30, destinationCpuSeconds: 6, sourceCpuSeconds: 2, steps: 10, medianStepMiB: 1, pollMs: 25 },
    lag: {
      percent: 50,
      targetMiBps: localMiBps / 2,
      produce: rateOf(30 * MiB * (localMiBps / 2), 30),
      produceP99Ms: 5,
      lag: lagSummary,
      poll: { mode: 'fetch', intervalMs: null, rounds: 1000, roundMs: { ...lagSummary, p50: 1, p99: 3 }, errors: 0 },
      errors: {},
    },
    peakRssMiB: { source: 300, destination: 250 },
  };
}

describe('mirror benchmark report', () => {
  it('takes rates, ratios and CPU per GiB from payload bytes', () => {
    expect(rateOf(100 * MiB, 2).mibPerSec).toBe(50);
    expect(rateOf(1, 0).mibPerSec).toBe(0);
    expect(mirrorRatio(pair(1, 100, 85, 10))).toBeCloseTo(0.85, 9);
    expect(mirrorRatio({ pair: 1 })).toBeNull();
    expect(cpuPerGiB(6, 2 * GiB)).toBe(3);
    expect(cpuPerGiB(null, GiB)).toBeNull();
  });

  it('gives the median with its min–max and count, and a dash without samples', () => {
    expect(spreadOf([3, null, 1, 2, undefined])).toEqual({ n: 3, min: 1, median: 2, max: 3 });
    expect(formatSpread(spreadOf([0.9, 0.7, 0.8]))).toBe('0.800 (0.700–0.900, n=3)');
    expect(formatSpread(spreadOf([42]))).toBe('42.0');
    expect(formatSpread(spreadOf([]))).toBe('–');
  });

  it('marks the goals met or missed on the medians, and skips figures no pair has', () => {
    const table = figuresTable([pair(1, 100, 70, 150), pair(2, 100, 75, 90), pair(3, 100, 90, 80)]);
    expect(table.find((l) => l.includes('mirror ÷ local produce**'))).toBe('| **mirror ÷ local produce** | 0.750 (0.700–0.900, n=3) | ≥ 0.80 ✗ missed |');
    expect(table.find((l) => l.includes('lag p99, ms'))).toBe('| **lag p99, ms** | 90.0 (80.0–150, n=3) | < 100 ms ✓ |');
    expect(table.some((l) => l.includes('while producing'))).toBe(false);
    expect(table.find((l) => l.includes('destination CPU during the mirror'))).toBe('| destination CPU during the mirror, s/GiB copied | 6.00 (6.00–6.00, n=3) |  |');
  });

  it('lists every pair, and a failed one with its reason', () => {
    const rows = pairsTable([pair(1, 100, 80, 50), { pair: 2, failed: 'the source broker exited (1)' }]);
    expect(rows[2]).toBe('| 1 | 100 | 80.0 | 0.800 | – | 25.0 / 50.0 / 75.0 / 100 | 6.00 | 300 / 250 |');
    expect(rows[3]).toBe('| 2 | failed: the source broker exited (1) | | | | | | |');
  });

  it('names the paced rate of the lag figures: a % of each local max, or one rate for every pair (--lag-rate)', () => {
    const shape = { partitions: 16, recordSize: 1024, batchBytes: 65536, producers: 4, partitionsPerRequest: 4, maxInFlight: 5, backlogBytes: GiB, concurrentBytes: null, lagSeconds: 20, lagPercent: 50 };
    const file = (s: MirrorFile['shape'], pairs: PairFigures[]): MirrorFile => ({
      kind: 'ledgerline-bench-mirror',
      version: 1,
      id: 'x',
      date: new Date(0).toISOString(),
      command: 'npm run bench -- mirror',
      host: hostInfo(),
      tree: { commit: 'abc', changed: [] },
      shape: s,
      limits: null,
      pairs,
    });
    const byPercent = mirrorMarkdown(file(shape, [pair(1, 200, 180, 50)]));
    expect(byPercent).toContain(' · lag at 50% of the local max for 20 s');
    expect(byPercent).toContain('- pair 1: 100 MiB/s = 50.0% of the local max, for 30.0 s');
    const fixed = pair(1, 200, 180, 50);
    fixed.lag = { ...fixed.lag!, percent: 60, targetMiBps: 120 };
    const byRate = mirrorMarkdown(file({ ...shape, lagMiBps: 120 }, [fixed]));
    expect(byRate).toContain(' · lag at 120 MiB/s for 20 s');
    expect(byRate).toContain('- pair 1: 120 MiB/s = 60.0% of the local max, for');
  });
});
