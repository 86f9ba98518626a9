/**
 * The replicators' loop waits idle after a round that found nothing to do, unless something changed meanwhile: a
 * poke that arrives while a round runs (a topic created while the round listed the partitions) must not be lost to
 * the idle wait, or a new mirror waits a second before its first fetch.
 */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ClusterLink } from '../../../src/replication/model.js';
import { ReplicatorLoop } from '../../../src/replication/replicator-loop.js';

/** Rounds that find nothing to do; the first is poked while it runs. */
class Rounds extends ReplicatorLoop {
  readonly startedAt: number[] = [];
  private next: (() => void) | null = null;

  constructor(private readonly pokeDuringFirst: boolean) {
    super({ name: 'test' } as ClusterLink, () => Promise.reject(new Error('no cluster here')), pino({ level: 'silent' }), 'testing');
  }

  protected async round(): Promise<boolean> {
    this.startedAt.push(performance.now());
    if (this.startedAt.length === 1) {
      await Promise.resolve();
      if (this.pokeDuringFirst) this.poke();
    }
    if (this.startedAt.length === 2) this.next?.();
    return false;
  }

  secondRound(timeoutMs: number): Promise<boolean> {
    return new Promise((resolve) => {
      const t = setTimeout(() => resolve(false), timeoutMs);
      this.next = () => {
        clearTimeout(t);
        resolve(true);
      };
    });
  }
}

describe('ReplicatorLoop', () => {
  it('runs the next round at once when it was poked during a round that found nothing', async () => {
    const loop = new Rounds(true);
    const second = loop.secondRound(5_000);
    loop.start();
    try {
      expect(await second).toBe(true);
      expect(loop.startedAt[1]! - loop.startedAt[0]!).toBeLessThan(500);
    } finally {
      await loop.stop();
    }
  });

  it('waits idle after a round that found nothing when nothing changed, and a poke cuts the wait short', async () => {
    const loop = new Rounds(false);
    loop.start();
    try {
      // No second round within half the idle wait (1 s): the loop does not spin.
      expect(await loop.secondRound(500)).toBe(false);
      expect(loop.startedAt).toHaveLength(1);
      const second = loop.secondRound(5_000);
      const pokedAt = performance.now();
      loop.poke();
      expect(await second).toBe(true);
      expect(loop.startedAt[1]! - pokedAt).toBeLessThan(250);
    } finally {
      await loop.stop();
    }
  });
});
