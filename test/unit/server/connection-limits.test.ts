import { describe, expect, it } from 'vitest';
import { invalidOverrides } from '../../../src/cluster/config-defs.js';
import { ConnectionLimits } from '../../../src/server/connection-limits.js';

describe('ConnectionLimits (KIP-308, KIP-402)', () => {
  it('refuses a connection past its address\'s limit or the broker\'s, reading the configs at each accept', () => {
    const values = new Map<string, string>([['max.connections.per.ip', '2'], ['max.connections.per.ip.overrides', '10.0.0.9:3'], ['max.connections', '5']]);
    const limits = new ConnectionLimits((n) => values.get(n) ?? null, (l) => l === 'BROKERS');
    expect([limits.admit('10.0.0.1', 'CLIENTS'), limits.admit('10.0.0.1', 'CLIENTS')]).toEqual([null, null]);
    expect(limits.admit('10.0.0.1', 'CLIENTS')).toBe('Too many connections from 10.0.0.1 (maximum = 2)');
    expect([limits.admit('10.0.0.9', 'CLIENTS'), limits.admit('10.0.0.9', 'CLIENTS'), limits.admit('10.0.0.9', 'CLIENTS')]).toEqual([null, null, null]);
    expect(limits.admit('10.0.0.2', 'CLIENTS')).toBe('max.connections (5) reached');
    // The inter-broker listener is exempt from max.connections (its connections still count, as in Kafka).
    expect(limits.admit('10.0.0.3', 'BROKERS')).toBeNull();
    limits.release('10.0.0.1');
    expect(limits.admit('10.0.0.1', 'CLIENTS')).toBe('max.connections (5) reached');
    limits.release('10.0.0.3');
    expect(limits.admit('10.0.0.1', 'CLIENTS')).toBeNull();
    values.set('max.connections.per.ip', '5');
    values.set('max.connections', '100');
    expect(limits.admit('10.0.0.1', 'CLIENTS')).toBeNull();
  });

  it('checks max.connections.per.ip.overrides as ip:limit pairs', () => {
    expect(invalidOverrides('10.0.0.1:5, ::1:2')).toBeNull();
    expect(invalidOverrides('10.0.0.1')).toMatch(/an ip:limit pair is expected/);
    expect(invalidOverrides('10.0.0.1:-1')).toMatch(/an ip:limit pair is expected/);
  });
});
