import { describe, expect, it } from 'vitest';
import { ManualClock, systemClock } from '../../../src/metadata/index.js';
import { until } from './support.js';

describe('ManualClock', () => {
  it('runs due timers in deadline order with now() at each deadline, and none early', () => {
    const clock = new ManualClock(1_000);
    const fired: string[] = [];
    clock.setTimer(300, () => fired.push(`b@${clock.now()}`));
    clock.setTimer(100, () => fired.push(`a@${clock.now()}`));
    clock.setTimer(300, () => fired.push(`c@${clock.now()}`));
    clock.advance(299);
    expect(fired).toEqual(['a@1100']);
    clock.advance(1);
    expect(fired).toEqual(['a@1100', 'b@1300', 'c@1300']);
    expect(clock.now()).toBe(1_300);
  });

  it('does not run a cancelled timer and runs timers set by a timer that fall due in the same advance', () => {
    const clock = new ManualClock(0);
    const fired: number[] = [];
    clock.setTimer(10, () => fired.push(1)).cancel();
    clock.setTimer(20, () => clock.setTimer(5, () => fired.push(clock.now())));
    clock.advance(100);
    expect(fired).toEqual([25]);
    expect(clock.pendingTimers).toBe(0);
  });

  it('refuses to go backwards', () => {
    expect(() => new ManualClock().advance(-1)).toThrow(RangeError);
  });
});

describe('systemClock', () => {
  it('runs a timer, and not one that was cancelled', async () => {
    let firedAt = 0;
    let cancelledFired = false;
    systemClock.setTimer(1, () => (firedAt = systemClock.now()));
    const cancelled = systemClock.setTimer(1, () => (cancelledFired = true));
    cancelled.cancel();
    await until(() => firedAt !== 0, 'the timer');
    expect(cancelledFired).toBe(false);
  });

  it('accepts a delay beyond what a Node timer holds without firing at once', async () => {
    let fired = false;
    const timer = systemClock.setTimer(9_000_000_000 * 1000, () => (fired = true));
    const probe = new Promise<void>((resolve) => setTimeout(resolve, 5));
    await probe;
    timer.cancel();
    expect(fired).toBe(false);
  });
});
