import { describe, expect, it } from 'vitest';
import { LagTracker, laneIntervalMs } from '../../../../bench/lib/mirror-lag.js';

describe('mirror lag tracker', () => {
  it('charges each batch from its acknowledgement to the first high watermark seen at or past its end', () => {
    const t = new LagTracker(2);
    t.acked(0, 64, 1000);
    t.acked(0, 128, 1010);
    t.acked(1, 64, 1005);
    t.observed(0, 64, 1020); // covers the first batch of partition 0 only
    expect(t.pendingCount()).toBe(2);
    t.observed(0, 63, 1030); // a lower high watermark is ignored
    t.observed(1, 200, 1040);
    t.observed(0, 128, 1060);
    const s = t.summary();
    expect(s.count).toBe(3);
    expect(s.uncovered).toBe(0);
    expect(s.coveredBeforeAck).toBe(0);
    // lags: 20, 35, 50 ms
    expect(s.p50).toBeCloseTo(35, 1);
    expect(s.max).toBeCloseTo(50, 1);
  });

  it('counts a batch the destination served before its acknowledgement arrived as 0 ms, and apart', () => {
    const t = new LagTracker(1);
    t.observed(0, 100, 500);
    t.acked(0, 64, 510);
    const s = t.summary();
    expect(s.count).toBe(1);
    expect(s.coveredBeforeAck).toBe(1);
    expect(s.max).toBeLessThan(0.01);
  });

  it('keeps acknowledgements in offset order and reports those never seen', () => {
    const t = new LagTracker(1);
    t.acked(0, 128, 1000);
    t.acked(0, 64, 1001); // out of order
    expect(t.highWatermark(0)).toBe(-1);
    t.observed(0, 64, 1011);
    expect(t.pendingCount()).toBe(1);
    const s = t.summary();
    expect(s.count).toBe(1);
    expect(s.p50).toBeCloseTo(10, 1);
    expect(s.uncovered).toBe(1);
  });
});

describe('paced lanes', () => {
  it('gives each lane its share of the rate', () => {
    // 1,000 records/s over 16 partitions; a lane of 4 partitions gets 250/s; 256 records per request → 1,024 ms apart.
    expect(laneIntervalMs(1000, 256, 4, 16)).toBeCloseTo(1024, 6);
    expect(() => laneIntervalMs(0, 256, 4, 16)).toThrow(/positive/);
  });
});
