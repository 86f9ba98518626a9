/**
 * bench/lib/usage.ts: the GC figures read from `jstat -gc` and from a Ledgerline broker's /metrics, and a window
 * that counts this process's own GC pauses and event-loop delay.
 */
import { describe, expect, it } from 'vitest';
import { harnessGcSeconds, parseJstatGcTime, parsePrometheusSum, startWindow, sumOver } from '../../../../bench/lib/usage.js';

describe('benchmark usage figures', () => {
  it("reads the GCT column of jstat -gc (JDK 17's layout)", () => {
    const out =
      '    S0C         S1C         S0U         S1U          EC           EU           OC           OU          MC         MU       CCSC      CCSU     YGC     YGCT     FGC    FGCT     CGC    CGCT       GCT   \n' +
      '        0.0      8192.0         0.0      8192.0     741376.0      90112.0     442368.0      31722.0     9344.0     9122.4    1216.0    1093.2      6     0.058     0     0.000     2     0.011     0.069\n';
    expect(parseJstatGcTime(out)).toBe(0.069);
    expect(parseJstatGcTime('1234 not found\n')).toBeNull();
    expect(parseJstatGcTime('YGC YGCT\n1 0.5\n')).toBeNull();
  });

  it("sums a Prometheus histogram's _sum series over its labels", () => {
    const text = [
      '# HELP ledgerline_process_nodejs_gc_duration_seconds Garbage collection duration by kind.',
      '# TYPE ledgerline_process_nodejs_gc_duration_seconds histogram',
      'ledgerline_process_nodejs_gc_duration_seconds_bucket{le="0.001",kind="minor"} 10',
      'ledgerline_process_nodejs_gc_duration_seconds_sum{kind="minor"} 0.25',
      'ledgerline_process_nodejs_gc_duration_seconds_count{kind="minor"} 12',
      'ledgerline_process_nodejs_gc_duration_seconds_sum{kind="major"} 0.5',
      'ledgerline_process_nodejs_gc_duration_seconds_summary 9',
    ].join('\n');
    expect(parsePrometheusSum(text, 'ledgerline_process_nodejs_gc_duration_seconds')).toBeCloseTo(0.75);
    expect(parsePrometheusSum(text, 'nothing_here')).toBeNull();
  });

  it('sums over processes, and says nothing when one cannot be read', async () => {
    expect(await sumOver([1, 2], async (pid) => pid * 0.5)).toBe(1.5);
    expect(await sumOver([1, 2], async (pid) => (pid === 2 ? null : 1))).toBeNull();
    expect(await sumOver([], async () => 1)).toBeNull();
  });

  it("counts the broker's CPU and GC over a window, and this process's own GC pauses", async () => {
    let cpu = 10;
    let gc = 1;
    harnessGcSeconds();
    const w = await startWindow({ cpuSeconds: () => cpu, gcSeconds: async () => gc });
    cpu = 12.5;
    gc = 1.25;
    // Garbage enough for a few collections here.
    let keep: unknown[] = [];
    for (let i = 0; i < 200; i++) keep = [new Array(100_000).fill(i), ...keep.slice(0, 2)];
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((r) => setImmediate(r));
    const u = await w.end();
    expect(u.brokerCpuSeconds).toBeCloseTo(2.5);
    expect(u.brokerGcSeconds).toBeCloseTo(0.25);
    expect(u.clientCpuPercent).toBeGreaterThan(0);
    expect(u.clientGcSeconds).toBeGreaterThanOrEqual(0);
    expect((await (await startWindow({})).end()).brokerGcSeconds).toBeNull();
    expect(keep.length).toBe(3);
  });

  it("measures how late the load generator's own event loop ran", async () => {
    const w = await startWindow({});
    // Node records a sample as the time since the one before, so the first (due 10 ms after the start) only
    // starts the count: a 15 ms timer runs after it. Then the loop is held for 120 ms, and the next sample, due
    // meanwhile, runs that late; the timer after the hold lets the loop turn once, which records it.
    await new Promise((r) => setTimeout(r, 15));
    const until = performance.now() + 120;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 15));
    const u = await w.end();
    expect(u.clientLoopDelayP99Ms).toBeGreaterThanOrEqual(80);
  });
});
