import { describe, expect, it } from 'vitest';
import { FIGURES, limitWarnings } from '../../../bench/partitions.js';

describe('partitions benchmark', () => {
  it('holds every figure to the goals: listen and stop under 5 s, idle RSS under 1 GiB', () => {
    const goals = Object.fromEntries(FIGURES.filter((f) => f.goal).map((f) => [f.key, f.goal!.max]));
    expect(goals).toEqual({ listenGraceful: 5000, listenKill: 5000, stop: 5000, idleRss: 1024 });
  });

  it('warns about Kafka index maps and open files only when Kafka runs and the count is near the limits', () => {
    expect(limitWarnings(1_000_000, ['ledgerline'])).toEqual([]);
    expect(limitWarnings(10, ['kafka'])).toEqual([]);
    const w = limitWarnings(10_000_000, ['kafka']);
    expect(w.some((l) => /vm\.max_map_count/.test(l))).toBe(true);
  });
});
