/**
 * Time as the metadata store sees it: lease deadlines are computed from `now()` and enforced with timers.
 * Tests inject a ManualClock to expire leases deterministically instead of sleeping.
 */

export interface ClockTimer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds; only differences matter. */
  now(): number;
  /** Run `callback` once, `delayMs` from now. The timer must not keep the process alive. */
  setTimer(delayMs: number, callback: () => void): ClockTimer;
}

/** Node runs a timer longer than 2^31 - 1 ms after 1 ms instead; a longer wait fires early and re-arms. */
const MAX_TIMER_MS = 0x7fffffff;

/** Wall-clock time and Node timers (unref'd: an idle store does not hold the process open). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, callback) {
    const handle = setTimeout(callback, Math.min(MAX_TIMER_MS, Math.max(0, delayMs)));
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

interface ManualTimer {
  readonly at: number;
  readonly seq: number;
  readonly callback: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told. `advance(ms)` runs every timer that falls due, in deadline order (ties in
 * the order they were set), each with `now()` equal to its own deadline, then leaves `now()` at the target.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: ManualTimer[] = [];

  constructor(startMs = 1_700_000_000_000) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    const timer: ManualTimer = { at: this.#now + Math.max(0, delayMs), seq: this.#seq++, callback, cancelled: false };
    this.#timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  /** Timers set and not yet run or cancelled. */
  get pendingTimers(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`cannot move a clock backwards (${ms} ms)`);
    const target = this.#now + ms;
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      let next: ManualTimer | undefined;
      for (const t of this.#timers) {
        if (t.at <= target && (next === undefined || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
      }
      if (next === undefined) break;
      next.cancelled = true;
      this.#now = Math.max(this.#now, next.at);
      next.callback();
    }
    this.#now = target;
  }
}
