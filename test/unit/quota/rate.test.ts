import { describe, expect, it } from 'vitest';
import { boundedThrottleTimeMs, throttleTimeMs, WindowedRate } from '../../../src/quota/rate.js';

// Kafka's defaults: quota.window.num = 11 samples of quota.window.size.seconds = 1.
const window = { samples: 11, windowMs: 1000 };

describe('WindowedRate (Kafka Rate over a WindowedSum)', () => {
  it('measures over at least samples − 1 full windows plus the elapsed part of the current one', () => {
    const r = new WindowedRate(window);
    r.record(1000, 0);
    // 0 ms elapsed: the window counts 10 full windows.
    expect(r.windowSize(0)).toBe(10_000);
    expect(r.measure(0)).toBe(100);
    r.record(500, 2500);
    // The first sample started at 0: 2500 ms elapsed, 2 full windows, 8 more assumed.
    expect(r.windowSize(2500)).toBe(10_500);
    expect(r.measure(2500)).toBeCloseTo(1500 / 10.5, 12);
  });

  it('counts the time since the oldest sample once more than samples − 1 windows have passed', () => {
    const r = new WindowedRate(window);
    r.record(100, 0);
    r.record(100, 10_500);
    expect(r.windowSize(10_500)).toBe(10_500);
    expect(r.measure(10_500)).toBeCloseTo(200 / 10.5, 12);
  });

  it('drops a sample without an event for samples × window (purgeObsoleteSamples)', () => {
    const r = new WindowedRate(window);
    r.record(5000, 0);
    r.record(10, 5000);
    // At 11 000 the first sample's last event is 11 windows old: reset; the second still counts.
    expect(r.measure(11_000)).toBeCloseTo(10 / 10, 12);
    // Long idle: everything is purged, the window is back to its minimum.
    expect(r.measure(100_000)).toBe(0);
    expect(r.windowSize(100_000)).toBe(10_000);
  });

  it('reuses its samples + 1 slots in a ring', () => {
    const r = new WindowedRate({ samples: 2, windowMs: 1000 });
    for (let t = 0; t < 10_000; t += 1000) r.record(1, t);
    // Samples started at 7000 (expired at 9000: its last event is 2 windows old), 8000 and 9000.
    expect(r.measure(9000)).toBeCloseTo(2 / 1, 12);
  });
});

describe('QuotaUtils.throttleTime', () => {
  it('is (O − T) / T × W, rounded as Java\'s Math.round', () => {
    expect(throttleTimeMs(200, 100, 10_000)).toBe(10_000);
    // 3500 bytes over 10.5 s against 300 B/s: (333.33 − 300) / 300 × 10 500 = 1166.67.
    expect(throttleTimeMs(3500 / 10.5, 300, 10_500)).toBe(1167);
    expect(throttleTimeMs(100.5, 100, 100)).toBe(1); // 0.5 rounds up
  });

  it('boundedThrottleTime caps it', () => {
    expect(boundedThrottleTimeMs(200, 100, 10_000, 1000)).toBe(1000);
    expect(boundedThrottleTimeMs(101, 100, 10_000, 1000)).toBe(100);
  });
});
