/**
 * A windowed rate and the throttle time of a rate over its quota, as Kafka's client quotas measure them:
 *
 *   - `WindowedRate` is Kafka's `Rate` over a `WindowedSum` (SampledStat): `samples` samples of `windowMs` each,
 *     plus the one extra "overlapping" sample Kafka keeps. A value is added to the current sample, which is
 *     complete once `windowMs` has passed since it started; a sample with no event for samples × windowMs is
 *     reset (purgeObsoleteSamples). The rate is the sum of the samples over `windowSize`: the time since the
 *     oldest sample started, but never less than samples − 1 full windows (plus the elapsed part of the
 *     current one) and at least 1 ms (Rate.windowSize).
 *   - `throttleTimeMs` is QuotaUtils.throttleTime: to bring an observed rate O down to the bound T over a window
 *     W, the client waits X with O·W / (W + X) = T, so X = (O − T) / T · W, rounded as Java's Math.round.
 *     `boundedThrottleTimeMs` caps it (QuotaUtils.boundedThrottleTime): ClientRequestQuotaManager caps the
 *     request quota's throttle at one window (quota.window.size.seconds); produce and fetch are not capped.
 *
 * Times are milliseconds on the caller's clock; the caller passes `nowMs` to every call, as Kafka's sensors
 * take `timeMs`.
 */

/** Kafka's MetricConfig of a quota sensor: `samples` windows of `windowMs`. */
export interface RateWindow {
  readonly samples: number;
  readonly windowMs: number;
}

interface Sample {
  value: number;
  eventCount: number;
  startTimeMs: number;
  lastEventMs: number;
}

export class WindowedRate {
  private readonly samples: Sample[] = [];
  private current = 0;

  constructor(readonly window: RateWindow) {
    if (!(Number.isInteger(window.samples) && window.samples >= 1 && Number.isInteger(window.windowMs) && window.windowMs >= 1)) {
      throw new RangeError(`a rate needs samples >= 1 and windowMs >= 1 (got ${window.samples}, ${window.windowMs})`);
    }
  }

  /** SampledStat.record: adds `value` to the current sample, advancing to the next when it is complete. */
  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs);
    if (nowMs - sample.startTimeMs >= this.window.windowMs) sample = this.advance(nowMs);
    sample.value += value;
    sample.eventCount += 1;
    sample.lastEventMs = nowMs;
  }

  /** Rate.measure: the windowed sum per second. */
  measure(nowMs: number): number {
    this.purgeObsoleteSamples(nowMs);
    let total = 0;
    for (const s of this.samples) total += s.value;
    return total / (this.windowSize(nowMs) / 1000);
  }

  /** Rate.windowSize: the elapsed time the rate is computed over, in ms. */
  windowSize(nowMs: number): number {
    this.purgeObsoleteSamples(nowMs);
    let elapsed = nowMs - this.oldest(nowMs).startTimeMs;
    const fullWindows = Math.trunc(elapsed / this.window.windowMs);
    const minFullWindows = this.window.samples - 1;
    if (fullWindows < minFullWindows) elapsed += (minFullWindows - fullWindows) * this.window.windowMs;
    return Math.max(elapsed, 1);
  }

  private currentSample(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push(newSample(nowMs));
    return this.samples[this.current]!;
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % (this.window.samples + 1);
    if (this.current >= this.samples.length) {
      const s = newSample(nowMs);
      this.samples.push(s);
      return s;
    }
    const s = this.samples[this.current]!;
    reset(s, nowMs);
    return s;
  }

  private oldest(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push(newSample(nowMs));
    let oldest = this.samples[0]!;
    for (const s of this.samples) if (s.startTimeMs < oldest.startTimeMs) oldest = s;
    return oldest;
  }

  private purgeObsoleteSamples(nowMs: number): void {
    const expireAge = this.window.samples * this.window.windowMs;
    for (const s of this.samples) if (nowMs - s.lastEventMs >= expireAge) reset(s, nowMs);
  }
}

function newSample(nowMs: number): Sample {
  return { value: 0, eventCount: 0, startTimeMs: nowMs, lastEventMs: nowMs };
}

function reset(s: Sample, nowMs: number): void {
  s.value = 0;
  s.eventCount = 0;
  s.startTimeMs = nowMs;
  s.lastEventMs = nowMs;
}

/** Java's Math.round(double) → long: the closest integer, halves rounded up; NaN gives 0. */
function javaRound(x: number): number {
  return Number.isNaN(x) ? 0 : Math.floor(x + 0.5);
}

/** QuotaUtils.throttleTime: the delay (ms) that brings `observed` back to `bound` over `windowSizeMs`. */
export function throttleTimeMs(observed: number, bound: number, windowSizeMs: number): number {
  return javaRound(((observed - bound) / bound) * windowSizeMs);
}

/** QuotaUtils.boundedThrottleTime: throttleTimeMs, at most `maxThrottleTimeMs`. */
export function boundedThrottleTimeMs(observed: number, bound: number, windowSizeMs: number, maxThrottleTimeMs: number): number {
  return Math.min(throttleTimeMs(observed, bound, windowSizeMs), maxThrottleTimeMs);
}
