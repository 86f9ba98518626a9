import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { partitionHash, rendezvousOrder, rendezvousOwner, rendezvousWeight } from '../../../src/cluster/rendezvous.js';

describe('rendezvous hashing', () => {
  it('is fixed arithmetic: these weights never change (a change moves every partition of every cluster)', () => {
    expect(partitionHash('orders', 0)).toBe(partitionHash('orders', 0));
    expect([partitionHash('orders', 0), partitionHash('orders', 1), partitionHash('__consumer_offsets', 7)]).toEqual(PINNED.hashes);
    expect([1, 2, 3].map((b) => rendezvousWeight(partitionHash('orders', 0), b))).toEqual(PINNED.weights);
  });

  it('tells apart names and partitions that concatenate alike', () => {
    expect(partitionHash('a', 12)).not.toBe(partitionHash('a1', 2));
    expect(partitionHash('ab', 0)).not.toBe(partitionHash('ba', 0));
  });

  it('orders every broker, the owner first, whatever order the live set is given in', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 20 }), fc.nat(10_000), fc.uniqueArray(fc.integer({ min: 0, max: 1000 }), { minLength: 1, maxLength: 8 }), (topic, p, ids) => {
        const order = rendezvousOrder(topic, p, ids);
        expect([...order].sort((a, b) => a - b)).toEqual([...ids].sort((a, b) => a - b));
        expect(order[0]).toBe(rendezvousOwner(topic, p, ids));
        expect(rendezvousOwner(topic, p, [...ids].reverse())).toBe(order[0]);
      }),
    );
  });

  it('moves to a joining broker only partitions it takes, and from a leaving one only its own, to the next in order', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 100 }), { minLength: 2, maxLength: 6 }), (ids) => {
        const [joiner, ...before] = ids as [number, ...number[]];
        for (let p = 0; p < 200; p++) {
          const was = rendezvousOwner('t', p, before);
          const now = rendezvousOwner('t', p, ids);
          if (now !== was) expect(now).toBe(joiner);
          // The leave of `was` hands p to the second of its order.
          const after = rendezvousOwner('t', p, before.filter((b) => b !== was));
          if (before.length > 1) expect(after).toBe(rendezvousOrder('t', p, before)[1]);
        }
      }),
    );
  });

  it('spreads partitions evenly: a joining fourth broker takes about a quarter', () => {
    const n = 4000;
    const counts = new Map<number, number>();
    let moved = 0;
    for (let p = 0; p < n; p++) {
      const owner = rendezvousOwner('events', p, [1, 2, 3, 4]);
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
      if (owner !== rendezvousOwner('events', p, [1, 2, 3])) moved++;
    }
    for (const id of [1, 2, 3, 4]) expect(Math.abs(counts.get(id)! - n / 4)).toBeLessThan(n * 0.05);
    expect(moved).toBe(counts.get(4));
  });
});

/** The values of today's functions, pinned. */
const PINNED = { hashes: [430944547, 1570740931, 842751837], weights: [1333019291, 2261189274, 662872241] };
