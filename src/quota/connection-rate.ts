/**
 * KIP-612's per-IP connection creation rate (`kafka-configs --entity-type ips --entity-name 10.0.0.5
 * --add-config connection_creation_rate=10`, or `--entity-default` for every address), as Kafka's
 * ConnectionQuotas applies it: each accepted connection is recorded on its address's windowed rate; one that
 * takes the rate over the quota is taken back off it and closed after the throttle time (Kafka's Acceptor
 * delays the close, so a client reconnecting at once is slowed down), without being served. Addresses idle for
 * an hour are forgotten, so the rates kept are those of recent clients only.
 */
import { throttleTimeMs, WindowedRate, type RateWindow } from './rate.js';

/** Kafka's inactive-sensor expiration (1 h), checked at most every 30 s. */
const IDLE_MS = 3_600_000;
const EXPIRY_CHECK_MS = 30_000;

export interface ConnectionRateQuotas {
  /** The connection creation rate (connections/s) an address may open, or undefined for none. */
  ipConnectionRate(ip: string): number | undefined;
}

export class ConnectionRateLimiter {
  private readonly rates = new Map<string, { rate: WindowedRate; lastMs: number }>();
  private lastExpiryMs = 0;

  constructor(
    private readonly quotas: ConnectionRateQuotas,
    private readonly window: RateWindow,
  ) {}

  /** Records a new connection from `ip`: 0 when it may be served, else how long (ms) to hold it before it is closed. */
  admit(ip: string, nowMs = Date.now()): number {
    const bound = this.quotas.ipConnectionRate(ip);
    if (bound === undefined) return 0;
    if (nowMs - this.lastExpiryMs >= EXPIRY_CHECK_MS) {
      this.lastExpiryMs = nowMs;
      for (const [k, r] of this.rates) if (nowMs - r.lastMs > IDLE_MS) this.rates.delete(k);
    }
    let entry = this.rates.get(ip);
    if (!entry) this.rates.set(ip, (entry = { rate: new WindowedRate(this.window), lastMs: nowMs }));
    entry.lastMs = nowMs;
    entry.rate.record(1, nowMs);
    const observed = entry.rate.measure(nowMs);
    if (observed <= bound) return 0;
    // ConnectionQuotas.recordIpConnectionMaybeThrottle: a refused connection does not count.
    entry.rate.record(-1, nowMs);
    return Math.max(1, throttleTimeMs(observed, bound, entry.rate.windowSize(nowMs)));
  }

  /** Addresses with a rate kept. */
  get size(): number {
    return this.rates.size;
  }
}
