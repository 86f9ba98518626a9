/**
 * Client quotas at the dispatch seam, as Kafka's KafkaApis and RequestChannel apply them (KIP-13, KIP-124,
 * KIP-219): after a request is handled, its cost is recorded against the client's quotas (src/quota/), and a
 * client over one is throttled:
 *
 *   Produce   the request's size in bytes          producer_byte_rate    (ClientQuotaManager "produce")
 *   Fetch     the record bytes of the response      consumer_byte_rate    (ClientQuotaManager "fetch")
 *   any       the time the broker spent on it       request_percentage    (ClientRequestQuotaManager)
 *
 * The throttle is the larger of the two that apply; it goes in the response's throttleTimeMs (the answer is
 * sent at once) and the connection then reads no further request for that long (KIP-219 channel muting), so a
 * client that ignores throttleTimeMs is slowed all the same. Produce with acks=0 has no answer: it is muted only.
 * A throttled Fetch is answered without its data (KafkaApis.handleFetchRequest: getThrottledResponse, and the
 * fetch quota's record taken back): the consumer fetches the same offsets again once the throttle has passed,
 * so what it reads stays within its quota.
 *
 * The request time is the event loop's own work for the request: the handler's synchronous part and the
 * response's encoding, not the time it waits for storage or a long poll (Kafka's request quota measures its
 * request handler and network threads' time, not a request's time in purgatory). ApiVersions and the SASL
 * requests are exempt, as Kafka exempts them (ClientRequestQuotaManager.exemptRequest).
 */
import type { Records } from '../../protocol/wire/writer.js';
import type { ClientQuotaManagers } from '../quota/client-quota-manager.js';

const PRODUCE = 0;
const FETCH = 1;
/** SaslHandshake, ApiVersions, SaslAuthenticate: never throttled for request time. */
const REQUEST_QUOTA_EXEMPT: ReadonlySet<number> = new Set([17, 18, 36]);

interface FetchLike {
  responses?: readonly { partitions?: readonly { records?: Records | null }[] }[];
}

/** The record bytes a Fetch response returns (Kafka's FetchContext.getResponseSize counts the whole response; the records are nearly all of it). */
function fetchedBytes(res: FetchLike): number {
  let n = 0;
  for (const t of res.responses ?? []) {
    for (const p of t.partitions ?? []) {
      const r = p.records;
      if (!r) continue;
      if (Buffer.isBuffer(r)) n += r.length;
      else for (const b of r) n += b.length;
    }
  }
  return n;
}

export class QuotaEnforcer {
  constructor(private readonly managers: ClientQuotaManagers) {}

  /**
   * Records the request against the client's quotas and returns the throttle (ms, 0 when within them), written
   * into `res.throttleTimeMs` (the larger of it and what the handler set) when the response has one.
   */
  throttle(apiKey: number, user: string, clientId: string, requestBytes: number, res: unknown, handlingMs: number, nowMs = Date.now()): number {
    const response = res !== null && typeof res === 'object' ? (res as { throttleTimeMs?: unknown; responses?: unknown }) : null;
    let bandwidth = 0;
    let fetched = 0;
    if (apiKey === PRODUCE) bandwidth = this.managers.produce.recordAndGetThrottleTimeMs(user, clientId, requestBytes, nowMs);
    else if (apiKey === FETCH && response) bandwidth = this.managers.fetch.recordAndGetThrottleTimeMs(user, clientId, (fetched = fetchedBytes(response as FetchLike)), nowMs);
    const request = REQUEST_QUOTA_EXEMPT.has(apiKey) ? 0 : this.managers.request.recordAndGetThrottleTimeMs(user, clientId, handlingMs, nowMs);
    // A throttle the handler set (KIP-599's controller mutation quota) mutes the connection too.
    const handlerThrottle = response && typeof response.throttleTimeMs === 'number' ? response.throttleTimeMs : 0;
    const throttleMs = Math.max(bandwidth, request, handlerThrottle);
    if (throttleMs === 0 || !response) return throttleMs;
    if (apiKey === FETCH) {
      this.managers.fetch.unrecord(user, clientId, fetched, nowMs);
      response.responses = [];
    }
    if (typeof response.throttleTimeMs === 'number') response.throttleTimeMs = Math.max(response.throttleTimeMs, throttleMs);
    return throttleMs;
  }
}
