import { describe, expect, it } from 'vitest';
import { ConnectionRateLimiter } from '../../../src/quota/connection-rate.js';

describe('ConnectionRateLimiter (KIP-612)', () => {
  it('admits connections within the address\'s rate, holds the others for the throttle time, and counts only those admitted', () => {
    const quotas = new Map([['10.0.0.5', 2]]);
    const limiter = new ConnectionRateLimiter({ ipConnectionRate: (ip) => quotas.get(ip) }, { samples: 11, windowMs: 1000 });
    const t0 = 1_000_000;
    // A new rate spans (samples - 1) windows: 10 s at 2/s is 20 connections at once.
    const first = Array.from({ length: 25 }, () => limiter.admit('10.0.0.5', t0));
    expect(first.filter((d) => d === 0)).toHaveLength(20);
    expect(first.slice(20).every((d) => d > 0)).toBe(true);
    // A second later the rate is still 20 over 10 s: refused (the refused ones were taken back off it, or this
    // would be longer); once the first burst's sample has left the window, connections are served again.
    expect(limiter.admit('10.0.0.5', t0 + 1000)).toBe(500);
    expect(limiter.admit('10.0.0.5', t0 + 11_000)).toBe(0);
    // Another address, and one without a quota, are not limited.
    expect(limiter.admit('10.0.0.6', t0)).toBe(0);
    expect(limiter.size).toBe(1);
  });

  it('forgets an address idle for an hour', () => {
    const limiter = new ConnectionRateLimiter({ ipConnectionRate: () => 1 }, { samples: 11, windowMs: 1000 });
    limiter.admit('10.0.0.5', 1_000_000);
    limiter.admit('10.0.0.6', 1_000_000 + 3_600_001 + 30_000);
    expect(limiter.size).toBe(1);
  });
});
