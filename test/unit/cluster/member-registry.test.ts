/**
 * MemberRegistry's own lease deadline: a broker whose keep-alives go unanswered stops serving once its lease's
 * deadline passes on its own clock, whatever the store says later. On a real in-memory store whose keep-alives
 * this test can hold unanswered.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { MemberRegistry } from '../../../src/cluster/member-registry.js';
import { ManualClock, openMemoryMetadataStore, type Clock, type LeaseId, type MetadataStore } from '../../../src/metadata/index.js';

/** A clock on `manual` whose timers of 100 ms or more fire `earlyMs` before they are due, as Node's can by 1 ms. */
function earlyClock(manual: ManualClock, earlyMs: number): Clock {
  return { now: () => manual.now(), setTimer: (delayMs, callback) => manual.setTimer(delayMs >= 100 ? delayMs - earlyMs : delayMs, callback) };
}

describe('MemberRegistry', () => {
  const stores: MetadataStore[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('takes its lease as lost at the deadline when a keep-alive never answers, though the deadline timer fired early', async () => {
    const inner = await openMemoryMetadataStore();
    stores.push(inner);
    let holdKeepAlives = false;
    const store = new Proxy(inner, {
      get(target, prop, receiver) {
        if (prop === 'keepAliveLease') {
          return (id: LeaseId) => (holdKeepAlives ? new Promise(() => {}) : target.keepAliveLease(id));
        }
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
    const manual = new ManualClock();
    const registry = new MemberRegistry({ store, nodeId: 1, endpoints: () => [], leaseTtlSeconds: 3, clock: earlyClock(manual, 5) });
    const lost: number[] = [];
    await registry.start({ changed: () => {}, leaseLost: () => void lost.push(manual.now()), reregistered: () => {} });
    const registeredAt = manual.now();
    expect(registry.leaseId).not.toBeNull();
    holdKeepAlives = true;
    manual.advance(1_000); // the first keep-alive goes out and never answers
    manual.advance(1_995); // the deadline timer fires, 5 ms before the deadline
    expect(lost).toEqual([]);
    manual.advance(5);
    expect(lost).toEqual([registeredAt + 3_000]);
    registry.abandon();
  });
});
