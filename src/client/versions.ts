/**
 * API version negotiation.
 *
 * On connect the client sends ApiVersions at the newest version this codec knows. A broker answers with the
 * range it serves for every API key; for each API the client then uses the highest version inside both
 * ranges (what Kafka's `NodeApiVersions.latestUsableVersion` does).
 *
 * KIP-511: a broker that does not know the ApiVersions version it was sent answers UNSUPPORTED_VERSION
 * with a v0 response body, in which the ApiVersions entry (when present) gives the broker's own range. The
 * client parses the answer at the version it sent, falls back to v0 when that fails (Kafka's
 * `ApiVersionsResponse.parse`), then retries once at the broker's highest ApiVersions version, or at v0
 * when the answer did not say.
 */
import type { ApiDescriptor, VersionRange } from '../../protocol/api.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { ApiVersionsResponse } from '../../protocol/messages/018-api-versions.gen.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { Reader } from '../../protocol/wire/reader.js';
import { UnsupportedApiVersionError } from './errors.js';

/** The broker's version ranges, by API key, and the choice of version for each API. */
export class ApiVersionTable {
  private readonly ranges: Map<number, VersionRange>;

  constructor(ranges: Iterable<readonly [number, VersionRange]>) {
    this.ranges = new Map(ranges);
  }

  static fromResponse(response: ApiVersionsResponse): ApiVersionTable {
    return new ApiVersionTable(response.apiKeys.map((k) => [k.apiKey, { min: k.minVersion, max: k.maxVersion }] as const));
  }

  /** The range the broker advertised for an API key, or undefined when it did not list the key. */
  brokerRange(apiKey: number): VersionRange | undefined {
    return this.ranges.get(apiKey);
  }

  /** API keys the broker advertised. */
  get apiKeys(): number[] {
    return [...this.ranges.keys()].sort((a, b) => a - b);
  }

  /** Whether some version of `api` is usable by both sides (within `limit` when given). */
  supports(api: ApiDescriptor, limit?: Partial<VersionRange>): boolean {
    return this.usable(api, limit) !== undefined;
  }

  /**
   * The highest version of `api` both the broker and this codec support, optionally kept within `limit`
   * (e.g. `{ max: 12 }` to stay on name-addressed Fetch). Throws UnsupportedApiVersionError when there is none.
   */
  pick(api: ApiDescriptor, limit?: Partial<VersionRange>): number {
    const v = this.usable(api, limit);
    if (v === undefined) {
      const broker = this.ranges.get(api.apiKey);
      const ours = api.validVersions;
      throw new UnsupportedApiVersionError(
        broker === undefined
          ? `the broker does not serve ${api.name} (API key ${api.apiKey})`
          : `no common version of ${api.name}: broker ${broker.min}-${broker.max}, client ${Math.max(ours.min, limit?.min ?? ours.min)}-${Math.min(ours.max, limit?.max ?? ours.max)}`,
        { apiKey: api.apiKey, apiName: api.name },
      );
    }
    return v;
  }

  private usable(api: ApiDescriptor, limit?: Partial<VersionRange>): number | undefined {
    const broker = this.ranges.get(api.apiKey);
    if (broker === undefined) return undefined;
    const lo = Math.max(broker.min, api.validVersions.min, limit?.min ?? 0);
    const hi = Math.min(broker.max, api.validVersions.max, limit?.max ?? Number.MAX_SAFE_INTEGER);
    return lo <= hi ? hi : undefined;
  }
}

/**
 * Decodes an ApiVersions response body (after the v0 response header) sent for a request at `version`,
 * falling back to v0 the way Kafka's client does, because a broker that rejects the version answers in v0.
 */
export function decodeApiVersionsBody(body: Buffer, offset: number, version: number): ApiVersionsResponse {
  const attempt = (v: number): ApiVersionsResponse => {
    const r = new Reader(body, offset);
    const response = ApiVersionsApi.response.decode(r, v);
    r.complete();
    return response;
  };
  try {
    return attempt(version);
  } catch (e) {
    if (version === 0) throw e;
    return attempt(0);
  }
}

/**
 * The version to retry ApiVersions with after an UNSUPPORTED_VERSION answer (KIP-511): the broker's
 * highest ApiVersions version when its answer lists one we also know, else v0.
 */
export function apiVersionsRetryVersion(response: ApiVersionsResponse, sent: number): number | undefined {
  if (response.errorCode !== ErrorCode.UNSUPPORTED_VERSION) return undefined;
  const own = response.apiKeys.find((k) => k.apiKey === ApiVersionsApi.apiKey);
  const candidate = own === undefined ? 0 : Math.min(own.maxVersion, ApiVersionsApi.validVersions.max);
  // Retrying at the version that was just rejected would loop.
  return candidate < sent ? candidate : sent === 0 ? undefined : 0;
}
