/**
 * Client quota enforcement (KIP-13 bandwidth quotas, KIP-55 user quotas, KIP-124 request quotas): Kafka's
 * ClientQuotaManager (produce, fetch) and ClientRequestQuotaManager (request), without the channel muting,
 * which is the dispatch layer's: it calls `recordAndGetThrottleTimeMs` and throttles the connection for the
 * time returned (and reports it in the response's throttleTimeMs).
 *
 *   - `recordAndGetThrottleTimeMs(user, clientId, value, nowMs)` is maybeRecordAndGetThrottleTimeMs: nothing is
 *     recorded while no user/client-id entity has a value of this manager's key (quotasEnabled). Otherwise the
 *     value is recorded on the sensor of the client's metric entity (src/quota/quota-resolver.ts), shared by every
 *     client the same quota covers, then the windowed rate is checked against the bound (Sensor.record with
 *     checkQuotas, Quota.acceptable: rate <= bound); over it, the throttle time is QuotaUtils.throttleTime over
 *     the rate's window (src/quota/rate.ts). A client without a quota is measured and never throttled.
 *   - produce: bytes appended (producer_byte_rate); fetch: bytes returned (consumer_byte_rate); both unbounded.
 *   - request: `value` is the request's handling time in milliseconds, recorded as a percentage of one thread
 *     (ClientRequestQuotaManager: nanoseconds × 100 / 10^9) against request_percentage; the throttle time is
 *     at most one window (quota.window.size.seconds, boundedThrottleTime).
 *   - Sensors not recorded on for an hour are removed (InactiveSensorExpirationTimeSeconds = 3600; Kafka's
 *     Metrics checks every 30 s, here the first record 30 s after the last check does), so memory follows the
 *     clients of the last hour, not every client-id ever seen.
 *   - The rate's window is quota.window.num samples of quota.window.size.seconds (QuotaConfig: 11 × 1 s).
 *
 * A quota changed in the store applies from the next record: the bound is resolved at every record, as Kafka
 * updates the quota of an existing sensor's MetricConfig. Kafka's throttle time is converted with Scala's
 * `toInt`; here it is capped at 2^31 − 1 instead of wrapping.
 */
import { createHash } from 'node:crypto';
import { resolveQuota, type QuotaLookup, type ResolvedQuota } from './quota-resolver.js';
import { QuotaKey } from './quota-store.js';
import { throttleTimeMs, WindowedRate, type RateWindow } from './rate.js';

export type ClientQuotaType = 'produce' | 'fetch' | 'request';

/** The quota key each manager enforces (ClientQuotaMetadataManager.handleUserClientQuotaChange). */
export const QUOTA_KEY_OF: Readonly<Record<ClientQuotaType, string>> = {
  produce: QuotaKey.PRODUCER_BYTE_RATE,
  fetch: QuotaKey.CONSUMER_BYTE_RATE,
  request: QuotaKey.REQUEST_PERCENTAGE,
};

/** Kafka's QuotaConfig names and defaults. */
export const QUOTA_WINDOW_NUM_CONFIG = 'quota.window.num';
export const QUOTA_WINDOW_SIZE_SECONDS_CONFIG = 'quota.window.size.seconds';
export const DEFAULT_QUOTA_WINDOW_NUM = 11;
export const DEFAULT_QUOTA_WINDOW_SIZE_SECONDS = 1;

/** ClientQuotaManager.InactiveSensorExpirationTimeSeconds, in ms. */
export const INACTIVE_SENSOR_EXPIRATION_MS = 3_600_000;
/** How often expired sensors are looked for (Kafka's Metrics.ExpireSensorTask period). */
const SENSOR_EXPIRY_CHECK_MS = 30_000;
const INT_MAX = 2147483647;

export interface QuotaWindowConfig {
  /** quota.window.num: the number of samples. */
  readonly numSamples: number;
  /** quota.window.size.seconds: the span of each sample. */
  readonly windowSizeSeconds: number;
}

/** The quota window of a broker's configuration values (src/config.ts BrokerConfig.values). */
export function quotaWindowConfig(values: ReadonlyMap<string, string | null>): QuotaWindowConfig {
  const int = (name: string, fallback: number): number => {
    const raw = values.get(name);
    const n = raw === null || raw === undefined ? fallback : Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name} must be an integer of at least 1 (got ${String(raw)})`);
    return n;
  };
  return { numSamples: int(QUOTA_WINDOW_NUM_CONFIG, DEFAULT_QUOTA_WINDOW_NUM), windowSizeSeconds: int(QUOTA_WINDOW_SIZE_SECONDS_CONFIG, DEFAULT_QUOTA_WINDOW_SIZE_SECONDS) };
}

interface Sensor {
  readonly rate: WindowedRate;
  lastRecordMs: number;
}

/**
 * Tenant quotas (src/tenants/): a quota key a tenant's policies set, shared by its principals (`User:<user>`)
 * that no user or client-id quota covers; the tenant's principals are then measured on one sensor.
 */
export interface TenantQuotas {
  quota(principal: string, key: string): { readonly tenant: string; readonly bound: number } | undefined;
  hasQuota(key: string): boolean;
}

export class ClientQuotaManager {
  readonly key: string;
  private readonly window: RateWindow;
  private readonly sensors = new Map<string, Sensor>();
  private lastExpiryCheckMs = -Infinity;

  constructor(
    readonly type: ClientQuotaType,
    private readonly quotas: QuotaLookup,
    private readonly config: QuotaWindowConfig = { numSamples: DEFAULT_QUOTA_WINDOW_NUM, windowSizeSeconds: DEFAULT_QUOTA_WINDOW_SIZE_SECONDS },
    private readonly tenants?: TenantQuotas,
  ) {
    this.key = QUOTA_KEY_OF[type];
    this.window = { samples: config.numSamples, windowMs: config.windowSizeSeconds * 1000 };
  }

  /** quotasEnabled: whether any user/client-id entity has a value of this manager's key. */
  get quotasEnabled(): boolean {
    return this.quotas.levels(this.key) !== 0 || (this.tenants?.hasQuota(this.key) ?? false);
  }

  /** The number of live sensors (one per metric entity recorded on in the last hour). */
  get sensorCount(): number {
    return this.sensors.size;
  }

  /**
   * Records `value` for the client (user principal name, client-id) at `nowMs`, and returns how long (ms) it
   * must be throttled: 0 within its quota. produce/fetch: bytes; request: handling time in milliseconds.
   */
  recordAndGetThrottleTimeMs(user: string, clientId: string, value: number, nowMs: number): number {
    if (!this.quotasEnabled) return 0;
    this.maybeExpireSensors(nowMs);
    const q = this.quota(user, clientId);
    // A client no quota covers is not measured: Kafka keeps its sensor for metrics only, and Ledgerline exports
    // none, so clients with ever-new client ids cost nothing here.
    if (q.bound === null) return 0;
    const sensorKey = sensorKeyOf(q.user, q.clientId);
    let sensor = this.sensors.get(sensorKey);
    if (sensor) {
      // Least recently recorded first: the map's order is what MAX_SENSORS evicts by.
      this.sensors.delete(sensorKey);
      this.sensors.set(sensorKey, sensor);
    } else {
      this.sensors.set(sensorKey, (sensor = { rate: new WindowedRate(this.window), lastRecordMs: nowMs }));
      if (this.sensors.size > MAX_SENSORS) this.sensors.delete(this.sensors.keys().next().value!);
    }
    sensor.lastRecordMs = nowMs;
    sensor.rate.record(this.type === 'request' ? nanosToPercentage(Math.round(value * 1_000_000)) : value, nowMs);
    const observed = sensor.rate.measure(nowMs);
    if (observed <= q.bound) return 0;
    const throttle = throttleTimeMs(observed, q.bound, sensor.rate.windowSize(nowMs));
    // ClientRequestQuotaManager: boundedThrottleTime, at most one window.
    const max = this.type === 'request' ? this.config.windowSizeSeconds * 1000 : INT_MAX;
    return Math.min(throttle, max, INT_MAX);
  }

  /**
   * unrecordQuotaSensor: takes back a value recorded by recordAndGetThrottleTimeMs, for a response that was not
   * sent after all (a throttled Fetch is answered empty, as Kafka answers it).
   */
  unrecord(user: string, clientId: string, value: number, nowMs: number): void {
    if (!this.quotasEnabled) return;
    const q = this.quota(user, clientId);
    this.sensors.get(sensorKeyOf(q.user, q.clientId))?.rate.record(this.type === 'request' ? -nanosToPercentage(Math.round(value * 1_000_000)) : -value, nowMs);
  }

  /** The quota that applies to the client and the metric entity it is measured on (ClientQuotaManager.quota). */
  quota(user: string, clientId: string): ResolvedQuota {
    const resolved = resolveQuota(this.quotas, this.key, user, clientId);
    if (resolved.bound !== null || !this.tenants) return resolved;
    const shared = this.tenants.quota(`User:${user}`, this.key);
    // The tenant's sensor: keyed by a user name no principal has (a principal name has no NUL).
    return shared === undefined ? resolved : { bound: shared.bound, user: `\u0000tenant:${shared.tenant}`, clientId: '' };
  }

  /**
   * getMaxValueInQuotaWindow: the most that can be recorded at once without certain throttling, bound ×
   * (samples − 1) × window seconds (how Kafka bounds a fetch's size under a fetch quota); Number.MAX_VALUE
   * without a quota.
   */
  maxValueInQuotaWindow(user: string, clientId: string): number {
    if (!this.quotasEnabled) return Number.MAX_VALUE;
    const { bound } = this.quota(user, clientId);
    return bound === null ? Number.MAX_VALUE : bound * (this.config.numSamples - 1) * this.config.windowSizeSeconds;
  }

  /** Removes the sensors not recorded on for more than an hour (Sensor.hasExpired). */
  expireSensors(nowMs: number): void {
    this.lastExpiryCheckMs = nowMs;
    for (const [k, s] of this.sensors) if (nowMs - s.lastRecordMs > INACTIVE_SENSOR_EXPIRATION_MS) this.sensors.delete(k);
  }

  private maybeExpireSensors(nowMs: number): void {
    if (nowMs - this.lastExpiryCheckMs >= SENSOR_EXPIRY_CHECK_MS) this.expireSensors(nowMs);
  }
}

/**
 * The most sensors a manager keeps: a default quota gives every client id its own, and a client may choose a new
 * one per connection; past this many the least recently used goes (its client starts a fresh window).
 */
const MAX_SENSORS = 100_000;

/** A sensor's key: the metric entity's user and client id, hashed when long so a key's size is bounded. */
function sensorKeyOf(user: string, clientId: string): string {
  const key = `${user}\u0000${clientId}`;
  return key.length <= 256 ? key : `#${createHash('sha256').update(key).digest('base64')}`;
}

/** ClientRequestQuotaManager.nanosToPercentage: thread time as a percentage of one second. */
function nanosToPercentage(nanos: number): number {
  return nanos * (100.0 / 1_000_000_000);
}

/** The three client quota managers of a broker, over the quotas of the metadata store. */
export interface ClientQuotaManagers {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;
}

export function createClientQuotaManagers(quotas: QuotaLookup, config?: QuotaWindowConfig, tenants?: TenantQuotas): ClientQuotaManagers {
  return {
    produce: new ClientQuotaManager('produce', quotas, config, tenants),
    fetch: new ClientQuotaManager('fetch', quotas, config, tenants),
    request: new ClientQuotaManager('request', quotas, config, tenants),
  };
}
