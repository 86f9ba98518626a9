import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { RangeAssignor, UniformAssignor, type AssignmentMemberSpec, type AssignmentSpec } from '../../../src/coordinator/assignors.js';
import type { Assignment } from '../../../src/coordinator/consumer-group.js';

function spec(members: Array<[string, string[], Assignment?, string?]>, topics: Record<string, number>): AssignmentSpec {
  return {
    members: new Map(
      members.map(([id, subs, current, instanceId]): [string, AssignmentMemberSpec] => [
        id,
        { memberId: id, instanceId: instanceId ?? null, rackId: null, subscribedTopicIds: new Set(subs), currentTarget: current ?? new Map() },
      ]),
    ),
    topics: new Map(Object.entries(topics)),
  };
}

function size(a: Assignment | undefined): number {
  let n = 0;
  for (const ps of a?.values() ?? []) n += ps.size;
  return n;
}

function flatten(result: Map<string, Assignment>): string[] {
  return [...result.values()].flatMap((a) => [...a].flatMap(([t, ps]) => [...ps].map((p) => `${t}-${p}`)));
}

describe('uniform assignor', () => {
  const uniform = new UniformAssignor();

  it('assigns every partition exactly once, with counts differing by at most one for identical subscriptions', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 4 }), (nMembers, partitions) => {
        const topics = Object.fromEntries(partitions.map((n, i) => [`t${i}`, n]));
        const members = Array.from({ length: nMembers }, (_, i): [string, string[]] => [`m${i}`, Object.keys(topics)]);
        const result = uniform.assign(spec(members, topics));
        const all = flatten(result);
        expect(all.length).toBe(partitions.reduce((a, b) => a + b, 0));
        expect(new Set(all).size).toBe(all.length);
        const counts = [...result.values()].map(size);
        expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 200 },
    );
  });

  it('moves as few partitions as possible when a member joins (sticky)', () => {
    const first = uniform.assign(spec([['a', ['t']], ['b', ['t']]], { t: 12 }));
    const second = uniform.assign(spec([['a', ['t'], first.get('a')], ['b', ['t'], first.get('b')], ['c', ['t']]], { t: 12 }));
    const kept = (m: string) => [...(second.get(m)!.get('t') ?? [])].filter((p) => first.get(m)!.get('t')!.has(p)).length;
    expect(kept('a')).toBe(4);
    expect(kept('b')).toBe(4);
    expect(size(second.get('c'))).toBe(4);
  });

  it('keeps the remaining members\' partitions when a member leaves', () => {
    const first = uniform.assign(spec([['a', ['t']], ['b', ['t']], ['c', ['t']]], { t: 9 }));
    const second = uniform.assign(spec([['a', ['t'], first.get('a')], ['b', ['t'], first.get('b')]], { t: 9 }));
    for (const m of ['a', 'b']) for (const p of first.get(m)!.get('t')!) expect(second.get(m)!.get('t')!.has(p)).toBe(true);
  });

  it('serves members with different subscriptions, giving each only what it subscribes to, balanced where possible', () => {
    const result = uniform.assign(spec([['a', ['t']], ['b', ['t', 'u']], ['c', ['u']]], { t: 6, u: 6 }));
    expect([...result.get('a')!.keys()]).toEqual(['t']);
    expect([...result.get('c')!.keys()]).toEqual(['u']);
    expect(flatten(result).length).toBe(12);
    expect([...result.values()].map(size)).toEqual([4, 4, 4]);
  });

  it('drops previous partitions of topics no longer subscribed or no longer existing', () => {
    const result = uniform.assign(spec([['a', ['t'], new Map([['gone', new Set([0])], ['t', new Set([5])]])]], { t: 2 }));
    expect(result.get('a')).toEqual(new Map([['t', new Set([0, 1])]]));
  });
});

describe('range assignor', () => {
  const range = new RangeAssignor();

  it('gives contiguous ranges, the first members one more when the count does not divide', () => {
    const result = range.assign(spec([['a', ['t']], ['b', ['t']], ['c', ['t']]], { t: 7 }));
    expect([...result.get('a')!.get('t')!]).toEqual([0, 1, 2]);
    expect([...result.get('b')!.get('t')!]).toEqual([3, 4]);
    expect([...result.get('c')!.get('t')!]).toEqual([5, 6]);
  });

  it('co-partitions topics with the same partition count', () => {
    const result = range.assign(spec([['a', ['t', 'u']], ['b', ['t', 'u']]], { t: 4, u: 4 }));
    for (const m of ['a', 'b']) expect([...result.get(m)!.get('t')!]).toEqual([...result.get(m)!.get('u')!]);
  });

  it('orders members by instance id so a restarted static member keeps its range', () => {
    const before = range.assign(spec([['m1', ['t'], undefined, 'i-b'], ['m2', ['t'], undefined, 'i-a']], { t: 4 }));
    const after = range.assign(spec([['m9', ['t'], undefined, 'i-b'], ['m2', ['t'], undefined, 'i-a']], { t: 4 }));
    expect(after.get('m9')).toEqual(before.get('m1'));
  });
});
