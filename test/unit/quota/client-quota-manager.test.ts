import { describe, expect, it } from 'vitest';
import { ClientQuotaManager, createClientQuotaManagers, INACTIVE_SENSOR_EXPIRATION_MS, quotaWindowConfig } from '../../../src/quota/client-quota-manager.js';
import type { QuotaLookup } from '../../../src/quota/quota-resolver.js';
import { QuotaLevel } from '../../../src/quota/quota-store.js';

/** Quotas of client-id entities only: `clients` by name, `null` for <default>. */
function clientQuotas(key: string, clients: Map<string | null, number>): QuotaLookup {
  return {
    quota: (u, c, k) => (k === key && u === undefined && c !== undefined ? clients.get(c) : undefined),
    levels: (k) => (k === key && clients.size > 0 ? QuotaLevel.CLIENT_ID : QuotaLevel.NONE),
  };
}

describe('ClientQuotaManager', () => {
  it('throttles a producer over its rate for the time Kafka computes: (O − T) / T × W', () => {
    const m = new ClientQuotaManager('produce', clientQuotas('producer_byte_rate', new Map([['app', 100]])));
    // 1000 bytes at t=0: 1000 B over a 10 s window = 100 B/s, within the quota.
    expect(m.recordAndGetThrottleTimeMs('alice', 'app', 1000, 0)).toBe(0);
    // 1000 more at t=500: 2000 B over 10.5 s = 190.48 B/s; (190.48 − 100) / 100 × 10 500 = 9500 ms.
    expect(m.recordAndGetThrottleTimeMs('alice', 'app', 1000, 500)).toBe(9500);
    // Another client-id has no quota: never throttled, and not measured (no sensor for it).
    expect(m.recordAndGetThrottleTimeMs('alice', 'other', 1e9, 500)).toBe(0);
    expect(m.sensorCount).toBe(1);
    // Rounded as Java's Math.round: 3500 B over 10.5 s against 300 B/s.
    const n = new ClientQuotaManager('fetch', clientQuotas('consumer_byte_rate', new Map([[null, 300]])));
    n.recordAndGetThrottleTimeMs('bob', 'c', 1000, 0);
    expect(n.recordAndGetThrottleTimeMs('bob', 'c', 2500, 500)).toBe(1167);
  });

  it('records nothing while no entity has a value of its key (quotasEnabled)', () => {
    const m = new ClientQuotaManager('produce', clientQuotas('consumer_byte_rate', new Map([['app', 1]])));
    expect(m.quotasEnabled).toBe(false);
    expect(m.recordAndGetThrottleTimeMs('alice', 'app', 1e12, 0)).toBe(0);
    expect(m.sensorCount).toBe(0);
    expect(m.maxValueInQuotaWindow('alice', 'app')).toBe(Number.MAX_VALUE);
  });

  it('measures request time as a percentage of one thread and caps its throttle at one window', () => {
    const m = createClientQuotaManagers(clientQuotas('request_percentage', new Map([['app', 50]]))).request;
    // 2000 ms of handling = 200 %·s over 10 s = 20 %.
    expect(m.recordAndGetThrottleTimeMs('alice', 'app', 2000, 0)).toBe(0);
    // 4000 ms more at t=100: 600 %·s over 10.1 s = 59.4 %; Kafka's 1900 ms, bounded to 1000.
    expect(m.recordAndGetThrottleTimeMs('alice', 'app', 4000, 100)).toBe(1000);
    // A smaller excess is not capped.
    const small = createClientQuotaManagers(clientQuotas('request_percentage', new Map([['app', 50]]))).request;
    small.recordAndGetThrottleTimeMs('a', 'app', 5000, 0);
    // 500 %·s over 10 s = 50 %: not over. 1 ms more at t=0: 500.1 / 10 = 50.01 %: (0.01 / 50) × 10 000 = 2 ms.
    expect(small.recordAndGetThrottleTimeMs('a', 'app', 1, 0)).toBe(2);
  });

  it('bounds a fetch by quota × (samples − 1) × window (getMaxValueInQuotaWindow)', () => {
    const m = new ClientQuotaManager('fetch', clientQuotas('consumer_byte_rate', new Map([['app', 1000]])));
    expect(m.maxValueInQuotaWindow('alice', 'app')).toBe(10_000);
    expect(m.maxValueInQuotaWindow('alice', 'other')).toBe(Number.MAX_VALUE);
  });

  it('shares one sensor between the clients of one quota entity, and follows the quota window configs', () => {
    const quotas: QuotaLookup = {
      quota: (u, c, k) => (k === 'producer_byte_rate' && u === 'alice' && c === undefined ? 100 : undefined),
      levels: () => QuotaLevel.USER,
    };
    const m = new ClientQuotaManager('produce', quotas, quotaWindowConfig(new Map([['quota.window.num', '2'], ['quota.window.size.seconds', '2']])));
    // 2 samples of 2 s: the window is at least one full window, 2 s. 100 B = 50 B/s.
    expect(m.recordAndGetThrottleTimeMs('alice', 'a', 100, 0)).toBe(0);
    // Another client-id of alice adds to the same rate: 400 B over 2 s = 200 B/s → (200 − 100) / 100 × 2000.
    expect(m.recordAndGetThrottleTimeMs('alice', 'b', 300, 0)).toBe(2000);
    expect(m.sensorCount).toBe(1);
    expect(quotaWindowConfig(new Map())).toEqual({ numSamples: 11, windowSizeSeconds: 1 });
  });

  it('drops the sensors of clients idle for more than an hour, so many client-ids do not accumulate', () => {
    const m = new ClientQuotaManager('produce', clientQuotas('producer_byte_rate', new Map([[null, 1e6]])));
    for (let i = 0; i < 5000; i++) m.recordAndGetThrottleTimeMs('u', `client-${i}`, 10, i);
    expect(m.sensorCount).toBe(5000);
    m.recordAndGetThrottleTimeMs('u', 'client-4999', 10, INACTIVE_SENSOR_EXPIRATION_MS + 10);
    // Sensors last recorded at 0..10 are more than an hour old (Sensor.hasExpired: strictly more).
    expect(m.sensorCount).toBe(5000 - 10);
    m.recordAndGetThrottleTimeMs('u', 'late', 10, 2 * INACTIVE_SENSOR_EXPIRATION_MS + 100);
    expect(m.sensorCount).toBe(1);
  });
});
