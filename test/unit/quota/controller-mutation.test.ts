import { describe, expect, it } from 'vitest';
import { ControllerMutationQuotas, NO_MUTATION_QUOTAS } from '../../../src/quota/controller-mutation.js';

const lookup = (rate: number | undefined) => ({
  quota: (_user: string | null | undefined, clientId: string | null | undefined, key: string) => (clientId === 'app' && key === 'controller_mutation_rate' ? rate : undefined),
  levels: () => (rate === undefined ? 0 : 1),
});

describe('ControllerMutationQuotas (KIP-599)', () => {
  it('strict: accepts topics while the bucket is not below zero, refuses the next, and tells the time to refill', () => {
    let now = 1_000_000;
    // 2 partitions/s: a burst of 2 × 11 samples × 1 s = 22 partitions.
    const quotas = new ControllerMutationQuotas(lookup(2), { numSamples: 11, windowSizeSeconds: 1 }, () => now);
    const q = quotas.quotaFor('alice', 'app', true);
    expect([q.record(10), q.record(10), q.record(10)]).toEqual([true, true, true]);
    expect(q.throttleTimeMs()).toBe(0);
    expect(q.record(1)).toBe(false);
    // 22 - 30 = -8 tokens: 4 s at 2/s.
    expect(q.throttleTimeMs()).toBe(4000);
    now += 1000;
    expect(q.throttleTimeMs()).toBe(3000);
    // A later request of the same client sees the same bucket, refilled meanwhile.
    now += 3000;
    expect(quotas.quotaFor('alice', 'app', true).record(5)).toBe(true);
  });

  it('permissive: accepts every topic and throttles once the bucket is below zero', () => {
    const now = 1_000_000;
    const q = new ControllerMutationQuotas(lookup(2), { numSamples: 11, windowSizeSeconds: 1 }, () => now).quotaFor('alice', 'app', false);
    expect([q.record(20), q.record(20)]).toEqual([true, true]);
    expect(q.throttleTimeMs()).toBe(9000);
  });

  it('does nothing without a quota', () => {
    const q = new ControllerMutationQuotas(lookup(undefined), { numSamples: 11, windowSizeSeconds: 1 }).quotaFor('alice', 'app', true);
    expect([q.bounded, q.record(1_000_000), q.throttleTimeMs()]).toEqual([false, true, 0]);
    expect(NO_MUTATION_QUOTAS.quotaFor('a', 'b', true).bounded).toBe(false);
  });
});
