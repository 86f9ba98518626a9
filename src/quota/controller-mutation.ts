/**
 * KIP-599's controller mutation quota (`controller_mutation_rate`, partitions created or deleted per second, per
 * user and client-id with the other quotas' resolution order), as Kafka's ControllerMutationQuotaManager applies
 * it to CreateTopics, CreatePartitions and DeleteTopics: a token bucket per metric entity refilled at the quota,
 * holding at most quota × quota.window.num × quota.window.size.seconds (its burst), each topic taking its
 * partitions from it.
 *
 *   strict (CreateTopics v6+, DeleteTopics v5+, CreatePartitions v3+): a topic is refused
 *     THROTTLING_QUOTA_EXCEEDED while the bucket is below zero; one taking it below zero is accepted
 *   permissive (older versions): every topic is accepted, and the response is throttled
 *
 * Either way the response's throttle_time_ms is the time the bucket needs to get back to zero (-tokens / quota).
 */
import { createHash } from 'node:crypto';
import { resolveQuota, type QuotaLookup } from './quota-resolver.js';
import type { QuotaWindowConfig } from './client-quota-manager.js';

export const CONTROLLER_MUTATION_RATE = 'controller_mutation_rate';

/** Kafka's inactive-sensor expiration (1 h), checked at most every 30 s. */
const IDLE_MS = 3_600_000;
const EXPIRY_CHECK_MS = 30_000;

/** One request's view of its client's quota (Kafka's ControllerMutationQuota). */
export interface MutationQuota {
  /** False when no quota applies to the client (nothing is recorded). */
  readonly bounded: boolean;
  /** Takes `partitions` from the bucket; false when the strict quota refuses the topic (THROTTLING_QUOTA_EXCEEDED). */
  record(partitions: number): boolean;
  /** How long the client is throttled for now (0 within its quota). */
  throttleTimeMs(): number;
}

const UNBOUNDED: MutationQuota = { bounded: false, record: () => true, throttleTimeMs: () => 0 };

interface Bucket {
  tokens: number;
  lastUpdateMs: number;
}

export class ControllerMutationQuotas {
  private readonly buckets = new Map<string, Bucket>();
  private lastExpiryMs = 0;

  constructor(
    private readonly quotas: QuotaLookup,
    private readonly window: QuotaWindowConfig,
    private readonly now: () => number = Date.now,
  ) {}

  /** The quota of a request from `user` (principal name) and `clientId`; strict from the versions KIP-599 names. */
  quotaFor(user: string, clientId: string, strict: boolean): MutationQuota {
    if (this.quotas.levels(CONTROLLER_MUTATION_RATE) === 0) return UNBOUNDED;
    const q = resolveQuota(this.quotas, CONTROLLER_MUTATION_RATE, user, clientId);
    if (q.bound === null) return UNBOUNDED;
    const rate = q.bound;
    const burst = this.window.numSamples * this.window.windowSizeSeconds * rate;
    const key = bucketKeyOf(q.user, q.clientId);
    const bucket = (nowMs: number): Bucket => {
      this.expire(nowMs);
      let b = this.buckets.get(key);
      // TokenBucket starts empty at time 0: its first refill fills it.
      if (!b) {
        this.buckets.set(key, (b = { tokens: burst, lastUpdateMs: nowMs }));
        if (this.buckets.size > MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
      }
      b.tokens = Math.min(burst, b.tokens + (rate * (nowMs - b.lastUpdateMs)) / 1000);
      b.lastUpdateMs = nowMs;
      return b;
    };
    let throttledAt = 0;
    let throttleMs = 0;
    return {
      bounded: true,
      record: (partitions) => {
        const nowMs = this.now();
        const b = bucket(nowMs);
        if (strict && b.tokens < 0) {
          // StrictControllerMutationQuota: checkQuotas before the record; the topic is not counted.
          throttledAt = nowMs;
          throttleMs = Math.round((-b.tokens / rate) * 1000);
          return false;
        }
        b.tokens = Math.min(burst, b.tokens - partitions);
        if (!strict && b.tokens < 0) {
          throttledAt = nowMs;
          throttleMs = Math.round((-b.tokens / rate) * 1000);
        }
        return true;
      },
      // AbstractControllerMutationQuota.throttleTime: less the time since it was recorded.
      throttleTimeMs: () => Math.max(0, throttleMs - (this.now() - throttledAt)),
    };
  }

  private expire(nowMs: number): void {
    if (nowMs - this.lastExpiryMs < EXPIRY_CHECK_MS) return;
    this.lastExpiryMs = nowMs;
    for (const [k, b] of this.buckets) if (nowMs - b.lastUpdateMs > IDLE_MS) this.buckets.delete(k);
  }
}

/** The most buckets kept (a default quota gives every client id its own); past it the oldest goes. */
const MAX_BUCKETS = 100_000;

/** A bucket's key: the metric entity's user and client id, hashed when long so a key's size is bounded. */
function bucketKeyOf(user: string, clientId: string): string {
  const key = `${user}\u0000${clientId}`;
  return key.length <= 256 ? key : `#${createHash('sha256').update(key).digest('base64')}`;
}

/** No quota: what handler tests and a broker without quotas use. */
export const NO_MUTATION_QUOTAS: Pick<ControllerMutationQuotas, 'quotaFor'> = { quotaFor: () => UNBOUNDED };
