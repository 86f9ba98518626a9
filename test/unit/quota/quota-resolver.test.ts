import { describe, expect, it } from 'vitest';
import { resolveQuota, type QuotaLookup } from '../../../src/quota/quota-resolver.js';
import { QuotaLevel } from '../../../src/quota/quota-store.js';

const KEY = 'producer_byte_rate';
type Name = string | null | undefined;

/** Quotas of one key by (user, client-id) entity: undefined = no such type, null = the default. */
function lookup(entries: [Name, Name, number][]): QuotaLookup & { remove(u: Name, c: Name): void } {
  const id = (u: Name, c: Name): string => JSON.stringify([u === undefined ? '-' : u, c === undefined ? '-' : c]);
  const map = new Map(entries.map(([u, c, v]) => [id(u, c), { u, c, v }]));
  return {
    quota: (u, c, key) => (key === KEY ? map.get(id(u, c))?.v : undefined),
    levels: (key) => {
      let bits = 0;
      if (key !== KEY) return bits;
      for (const { u, c } of map.values()) bits |= u !== undefined && c !== undefined ? QuotaLevel.USER_CLIENT_ID : u !== undefined ? QuotaLevel.USER : QuotaLevel.CLIENT_ID;
      return bits;
    },
    remove: (u, c) => void map.delete(id(u, c)),
  };
}

describe('resolveQuota (Kafka DefaultQuotaCallback)', () => {
  it('applies the most specific of the eight levels, and keys the sensor by the entity the quota covers', () => {
    const levels: [Name, Name][] = [
      ['alice', 'app'],
      ['alice', null],
      ['alice', undefined],
      [null, 'app'],
      [null, null],
      [null, undefined],
      [undefined, 'app'],
      [undefined, null],
    ];
    const q = lookup(levels.map(([u, c], i) => [u, c, i + 1]));
    const seen: [number | null, string, string][] = [];
    for (const [u, c] of levels) {
      const r = resolveQuota(q, KEY, 'alice', 'app');
      seen.push([r.bound, r.user, r.clientId]);
      q.remove(u, c);
    }
    seen.push(Object.values(resolveQuota(q, KEY, 'alice', 'app')) as [null, string, string]);
    expect(seen).toEqual([
      [1, 'alice', 'app'],
      [2, 'alice', 'app'],
      [3, 'alice', ''],
      [4, 'alice', 'app'],
      [5, 'alice', 'app'],
      [6, 'alice', ''],
      [7, '', 'app'],
      [8, '', 'app'],
      [null, '', 'app'],
    ]);
  });

  it('measures each user under a <default> user quota on a sensor of its own', () => {
    const q = lookup([[null, undefined, 1000]]);
    expect(resolveQuota(q, KEY, 'alice', 'a')).toEqual({ bound: 1000, user: 'alice', clientId: '' });
    expect(resolveQuota(q, KEY, 'bob', 'a')).toEqual({ bound: 1000, user: 'bob', clientId: '' });
  });

  it('takes the tags of the only level configured without looking further (QuotaTypes)', () => {
    // Only user quotas: a user without one is measured per user and unlimited.
    const users = lookup([['alice', undefined, 500]]);
    expect(resolveQuota(users, KEY, 'bob', 'x')).toEqual({ bound: null, user: 'bob', clientId: '' });
    // Only user+client-id quotas: tags are always (user, client-id).
    const pairs = lookup([['alice', 'x', 500]]);
    expect(resolveQuota(pairs, KEY, 'bob', 'y')).toEqual({ bound: null, user: 'bob', clientId: 'y' });
    expect(resolveQuota(pairs, KEY, 'alice', 'x')).toEqual({ bound: 500, user: 'alice', clientId: 'x' });
    // Several levels: a client no user quota covers falls to its client-id quota.
    const mixed = lookup([['alice', undefined, 500], [undefined, 'x', 700]]);
    expect(resolveQuota(mixed, KEY, 'bob', 'x')).toEqual({ bound: 700, user: '', clientId: 'x' });
    expect(resolveQuota(mixed, KEY, 'alice', 'x')).toEqual({ bound: 500, user: 'alice', clientId: '' });
  });

  it('is unlimited without any quota of the key, and for an empty client-id under client-id quotas only', () => {
    expect(resolveQuota(lookup([]), KEY, 'alice', 'a')).toEqual({ bound: null, user: '', clientId: 'a' });
    expect(resolveQuota(lookup([[undefined, null, 100]]), 'consumer_byte_rate', 'alice', 'a').bound).toBeNull();
    // Kafka's quotaLimit finds nothing for the tags ("", ""), even with a <default> client-id quota.
    expect(resolveQuota(lookup([[undefined, null, 100]]), KEY, 'alice', '').bound).toBeNull();
    expect(resolveQuota(lookup([[undefined, null, 100]]), KEY, 'alice', 'a').bound).toBe(100);
  });
});
