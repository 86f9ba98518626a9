import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { decodeResponseFrame } from '../../../protocol/headers.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { apiVersionsFallback, supportedApiVersions } from '../../../src/api/018-api-versions.js';
import { handlers } from '../../../src/api/index.js';

describe('ApiVersions', () => {
  it('advertises each handler once, by key, within the schema\'s versions', () => {
    const keys = supportedApiVersions(handlers);
    expect(keys.map((k) => k.apiKey)).toEqual([...new Set(handlers.map((h) => h.api.apiKey))].sort((a, b) => a - b));
    for (const h of handlers) {
      const k = keys.find((x) => x.apiKey === h.api.apiKey)!;
      expect(k.maxVersion).toBe(h.versions.max);
      expect(k.minVersion).toBe(h.advertisedMin ?? h.versions.min);
      expect(k.minVersion).toBeGreaterThanOrEqual(h.api.validVersions.min);
      expect(k.maxVersion).toBeLessThanOrEqual(h.api.validVersions.max);
      expect(h.versions.min).toBeLessThanOrEqual(h.versions.max);
    }
  });

  it('advertises Produce from v0 for old librdkafka while serving v3 and up', () => {
    const produce = supportedApiVersions(handlers).find((k) => k.apiKey === 0)!;
    expect(produce.minVersion).toBe(0);
    expect(handlers.find((h) => h.api.apiKey === 0)!.versions.min).toBe(3);
  });

  it('advertises ConsumerGroupHeartbeat v1: librdkafka 2.10+ sends no other version, and without it never joins a KIP-848 group', () => {
    const heartbeat = supportedApiVersions(handlers).find((k) => k.apiKey === 68)!;
    expect(heartbeat.maxVersion).toBeGreaterThanOrEqual(1);
  });

  it('answers an unknown version in v0 with UNSUPPORTED_VERSION and its own range only (KIP-511)', () => {
    const chunks = apiVersionsFallback(handlers, { requestApiKey: 18, requestApiVersion: 99, correlationId: 1234, clientId: 'x' });
    const frame = Buffer.concat(chunks);
    expect(frame.readInt32BE(0)).toBe(frame.length - 4);
    const { correlationId, response } = decodeResponseFrame(ApiVersionsApi, 0, frame.subarray(4));
    expect(correlationId).toBe(1234);
    expect(response.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(response.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, minVersion: 0, maxVersion: 4 })]);
  });
});
