/**
 * When a coordinator creates its internal topic (src/coordinator/internal-topic.ts): a member of a shared
 * cluster waits for the configured replication factor of live brokers, as Kafka does; a broker alone caps it.
 * The starter retries every second on the clock until the attempt reports done, logs a failure and retries
 * it, looks again at once when poked, and stops when cancelled.
 */
import { describe, expect, it } from 'vitest';
import { INTERNAL_TOPIC_RETRY_MS, InternalTopicStarter, internalTopicReplicas } from '../../../src/coordinator/internal-topic.js';
import { ManualClock } from '../../../src/metadata/clock.js';

const logged: string[] = [];
const log = { debug: () => undefined, info: (_: object, m: string) => void logged.push(`info ${m}`), warn: (_: object, m: string) => void logged.push(`warn ${m}`), error: () => undefined };

describe('internalTopicReplicas', () => {
  it('waits for the configured replicas in a shared cluster and caps them to the live brokers otherwise', () => {
    expect(internalTopicReplicas(3, 1, true)).toBeNull();
    expect(internalTopicReplicas(3, 2, true)).toBeNull();
    expect(internalTopicReplicas(3, 3, true)).toBe(3);
    expect(internalTopicReplicas(3, 5, true)).toBe(3);
    expect(internalTopicReplicas(3, 1, false)).toBe(1);
    expect(internalTopicReplicas(3, 0, false)).toBe(1);
    expect(internalTopicReplicas(3, 4, false)).toBe(3);
  });
});

describe('InternalTopicStarter', () => {
  const flush = () => new Promise((r) => setImmediate(r));

  it('tries again every second until done, retries a failure, and looks at once when poked', async () => {
    const clock = new ManualClock(0);
    let live = 1;
    let attempts = 0;
    const starter = new InternalTopicStarter('__consumer_offsets', clock, log, async () => {
      attempts++;
      if (attempts === 2) throw new Error('the store refused');
      if (live < 3) {
        starter.waiting('waiting for brokers', { live });
        return false;
      }
      return true;
    });
    expect(await starter.start()).toBe(false);
    expect(attempts).toBe(1);
    clock.advance(INTERNAL_TOPIC_RETRY_MS);
    await flush();
    expect(attempts).toBe(2);
    expect(logged).toContain('warn creating an internal topic failed; it is tried again');
    clock.advance(INTERNAL_TOPIC_RETRY_MS);
    await flush();
    expect(attempts).toBe(3);
    expect(logged.filter((l) => l === 'info waiting for brokers')).toHaveLength(1); // once per wait
    live = 3;
    starter.poke();
    await flush();
    expect(attempts).toBe(4);
    clock.advance(10 * INTERNAL_TOPIC_RETRY_MS);
    await flush();
    expect(attempts).toBe(4); // done: no more attempts
  });

  it('stops trying when cancelled', async () => {
    const clock = new ManualClock(0);
    let attempts = 0;
    const starter = new InternalTopicStarter('__transaction_state', clock, log, async () => (attempts++, false));
    await starter.start();
    starter.cancel();
    clock.advance(10 * INTERNAL_TOPIC_RETRY_MS);
    starter.poke();
    await flush();
    expect(attempts).toBe(1);
  });
});
