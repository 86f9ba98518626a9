/**
 * Random sequences of joins, graceful leaves, kills, pauses (a broker's store calls, watch events and timers held
 * back) and time on several MemberViews of one in-memory store: at no instant do two brokers own one partition,
 * a partition is never acquired while a broker with a valid lease still has it open, and once the cluster is
 * quiet every partition is owned by exactly the broker the rendezvous rule names.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { rendezvousOwner } from '../../../src/cluster/rendezvous.js';
import { SimCluster, TTL_SECONDS } from '../../support/member-cluster.js';

type Step =
  | { readonly kind: 'join' | 'leave' | 'kill' | 'pause' | 'resume'; readonly id: number }
  | { readonly kind: 'advance'; readonly ms: number }
  | { readonly kind: 'grow'; readonly by: number };

const id = fc.integer({ min: 1, max: 5 });
const step: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('join' as const), id }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('leave' as const), id }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('kill' as const), id }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('pause' as const), id }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('resume' as const), id }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 100, max: 2 * TTL_SECONDS * 1000 }) }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('grow' as const), by: fc.integer({ min: 1, max: 4 }) }), weight: 1 },
);

let cluster: SimCluster | null = null;
afterEach(async () => {
  await cluster?.close();
  cluster = null;
});

/** Starts broker `id`, letting time pass while it waits out an earlier run's lease. */
async function join(c: SimCluster, id: number): Promise<void> {
  const b = c.newBroker(id);
  let done = false;
  let failed: unknown = null;
  void b.view.start().then(
    () => (done = true),
    (err: unknown) => (failed = err),
  );
  for (let waited = 0; !done && failed === null; waited += 100) {
    if (waited > 4 * TTL_SECONDS * 1000) throw new Error(`broker ${id} did not register within ${waited} ms`);
    await c.advance(100);
  }
  if (failed !== null) throw failed;
  c.brokers.set(id, b);
  c.all.push(b);
  await c.settle();
}

async function run(c: SimCluster, s: Step): Promise<void> {
  switch (s.kind) {
    case 'join':
      if (!c.brokers.has(s.id)) await join(c, s.id);
      return;
    case 'leave':
      if (c.brokers.get(s.id)?.state === 'up') await c.leave(s.id);
      return;
    case 'kill':
      if (c.brokers.has(s.id)) c.kill(s.id);
      return;
    case 'pause':
      if (c.brokers.get(s.id)?.state === 'up') c.pause(s.id);
      return;
    case 'resume':
      if (c.brokers.get(s.id)?.state === 'paused') c.resume(s.id);
      await c.settle();
      return;
    case 'advance':
      await c.advance(s.ms);
      return;
    case 'grow': {
      const t = c.topics.get('b')!;
      c.topics.addPartitions('b', t.partitions + s.by);
      await c.settle();
      return;
    }
  }
}

describe('MemberView under random joins, leaves, deaths and pauses', () => {
  it('never has two owners of a partition, closes before handing over, and converges on the rule', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 8, maxLength: 30 }), async (steps) => {
        await cluster?.close();
        const c = (cluster = await SimCluster.create());
        c.topics.create('a', 12, 3);
        c.topics.create('b', 3, 1);
        for (const first of [1, 2, 3]) await join(c, first);
        for (const s of steps) await run(c, s);

        // Quiet: everyone resumes, time passes for leases to expire and brokers to re-register.
        for (const b of c.brokers.values()) if (b.state === 'paused') c.resume(b.id);
        await c.advance(3 * TTL_SECONDS * 1000);
        await c.settle();
        expect(c.violations).toEqual([]);
        const up = c.upIds;
        for (const b of c.brokers.values()) expect(b.view.registry.leaseValid(), `broker ${b.id} registered`).toBe(true);
        for (const t of c.topics.list()) {
          for (let p = 0; p < t.partitions; p++) {
            expect(c.ownersOf(t.name, p), `${t.name}-${p} over ${up.join(',')}`).toEqual(up.length === 0 ? [] : [rendezvousOwner(t.name, p, up)]);
            // Every live view names the same leader.
            for (const b of c.brokers.values()) expect(b.view.owner(t.name, p)).toBe(up.length === 0 ? -1 : rendezvousOwner(t.name, p, up));
          }
        }
      }),
      { numRuns: 50 },
    );
  }, 120_000);
});
