/**
 * Kafka's coordinator timer (CoordinatorTimer): operations scheduled under a key, where scheduling a key again
 * replaces the pending operation and cancelling a key drops it. A key names what it times out: its kind
 * (heartbeat, join, sync, session, rebalance, ...), the group and, for member timers, the member. All timers of
 * a group can be dropped at once when the group goes away. Time comes from an injectable Clock so tests move it
 * by hand.
 */
import type { Clock, ClockTimer } from '../metadata/clock.js';

/**
 * heartbeat/join/sync: classic groups · session/rebalance: consumer group members · classic-join/classic-sync:
 * classic members of a consumer group (online migration) · expire: offset expiration of the partition.
 */
export type TimerKind = 'heartbeat' | 'join' | 'sync' | 'session' | 'rebalance' | 'classic-join' | 'classic-sync' | 'expire';

interface Entry {
  readonly timer: ClockTimer;
  /** Null for timers of the partition itself (offset expiration). */
  readonly groupId: string | null;
  readonly kind: TimerKind;
}

export class KeyedTimer {
  private readonly timers = new Map<string, Entry>();

  constructor(private readonly clock: Clock) {}

  private static key(kind: TimerKind, groupId: string | null, memberId: string | null): string {
    return JSON.stringify([kind, groupId, memberId]);
  }

  /** Runs `fn` after `delayMs` unless the key is scheduled again or cancelled first. */
  schedule(kind: TimerKind, groupId: string | null, memberId: string | null, delayMs: number, fn: () => void): void {
    const key = KeyedTimer.key(kind, groupId, memberId);
    this.timers.get(key)?.timer.cancel();
    const timer = this.clock.setTimer(delayMs, () => {
      if (this.timers.get(key)?.timer !== timer) return;
      this.timers.delete(key);
      fn();
    });
    this.timers.set(key, { timer, groupId, kind });
  }

  cancel(kind: TimerKind, groupId: string | null, memberId: string | null = null): void {
    const key = KeyedTimer.key(kind, groupId, memberId);
    const e = this.timers.get(key);
    if (e) {
      e.timer.cancel();
      this.timers.delete(key);
    }
  }

  isScheduled(kind: TimerKind, groupId: string | null, memberId: string | null = null): boolean {
    return this.timers.has(KeyedTimer.key(kind, groupId, memberId));
  }

  /** Drops the timers of a group (of the given kinds). */
  cancelGroup(groupId: string, kinds: readonly TimerKind[]): void {
    for (const [key, e] of this.timers) {
      if (e.groupId !== groupId || !kinds.includes(e.kind)) continue;
      e.timer.cancel();
      this.timers.delete(key);
    }
  }

  get size(): number {
    return this.timers.size;
  }

  cancelAll(): void {
    for (const e of this.timers.values()) e.timer.cancel();
    this.timers.clear();
  }
}
