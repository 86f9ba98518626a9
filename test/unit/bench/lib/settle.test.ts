import { describe, expect, it } from 'vitest';
import { flatWindow, formatSpread, ratio, settleRss, spread } from '../../../../bench/lib/settle.js';

describe('idle RSS settling', () => {
  it('finds no flat window while the series is shorter than the window', () => {
    expect(flatWindow([{ t: 0, mib: 100 }], 1000)).toBeNull();
    expect(flatWindow([{ t: 0, mib: 100 }, { t: 500, mib: 100 }], 1000)).toBeNull();
  });

  it('calls a window flat only when every sample in it lies within the tolerance', () => {
    const climbing = [0, 250, 500, 750, 1000].map((t) => ({ t, mib: 100 + t / 10 }));
    expect(flatWindow(climbing, 1000, 8)).toBeNull();
    const flat = [{ t: 0, mib: 50 }, { t: 250, mib: 100 }, { t: 500, mib: 102 }, { t: 750, mib: 101 }, { t: 1250, mib: 103 }];
    // The window is the last 1000 ms: the early 50 MiB sample is out of it.
    expect(flatWindow(flat, 1000, 8)?.map((s) => s.mib)).toEqual([100, 102, 101, 103]);
  });

  it('never calls a window flat on one sample when sampling stalled past the window', () => {
    const stalled = [{ t: 0, mib: 100 }, { t: 10, mib: 200 }, { t: 500, mib: 300 }];
    // The window reaches back to the sample at t=10: 200 → 300 is not flat.
    expect(flatWindow(stalled, 30, 8)).toBeNull();
  });

  it('scales the default tolerance with the level: 2% of it, at least 8 MiB', () => {
    const big = [0, 500, 1000].map((t, i) => ({ t, mib: 1000 + i * 9 }));
    expect(flatWindow(big, 1000)).not.toBeNull(); // 18 MiB spread ≤ 2% of 1018
    const small = [0, 500, 1000].map((t, i) => ({ t, mib: 100 + i * 5 }));
    expect(flatWindow(small, 1000)).toBeNull(); // 10 MiB spread > 8 MiB
  });

  it('reports the settled level once the series stops moving', async () => {
    const series = [100, 200, 300, 400, 401, 402, 401, 400, 401];
    let i = 0;
    const r = await settleRss(() => series[Math.min(i++, series.length - 1)]!, { windowMs: 40, intervalMs: 10, deadlineMs: 5000, toleranceMiB: 4 });
    expect(r.settled).toBe(true);
    expect(r.rssMiB).toBeGreaterThanOrEqual(400);
    expect(r.rssMiB).toBeLessThanOrEqual(402);
  });

  it('gives up at the deadline with settled false and the last window', async () => {
    let mib = 0;
    const r = await settleRss(() => (mib += 50), { windowMs: 30, intervalMs: 10, deadlineMs: 100, toleranceMiB: 1 });
    expect(r.settled).toBe(false);
    expect(r.ms).toBeGreaterThanOrEqual(100);
    expect(r.rssMiB).toBeGreaterThan(0);
  });

  it('fails when the broker is gone', async () => {
    await expect(settleRss(() => null, { deadlineMs: 100 })).rejects.toThrow(/not running/);
  });
});

describe('spread of repeated figures', () => {
  it('keeps min, median and max and prints them in seconds or MiB', () => {
    const s = spread([3000, 1000, 2000]);
    expect(s).toEqual({ n: 3, min: 1000, median: 2000, max: 3000 });
    expect(formatSpread(s, 's')).toBe('2.00 s (1.00–3.00, n=3)');
    expect(formatSpread(spread([512.4]), 'MiB')).toBe('512 MiB');
    expect(formatSpread(spread([]), 's')).toBe('–');
  });

  it('divides the medians for the ratio, and shows a dash when a side is missing', () => {
    expect(ratio(spread([1000]), spread([4000]))).toBe('0.25×');
    expect(ratio(spread([1000]), null)).toBe('–');
  });
});
