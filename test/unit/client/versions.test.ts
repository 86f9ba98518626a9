import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { encodeResponseFrame } from '../../../protocol/headers.js';
import { FetchApi } from '../../../protocol/messages/001-fetch.gen.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { ProduceApi } from '../../../protocol/messages/000-produce.gen.js';
import { UnsupportedApiVersionError } from '../../../src/client/errors.js';
import { ApiVersionTable, apiVersionsRetryVersion, decodeApiVersionsBody } from '../../../src/client/versions.js';

describe('ApiVersionTable', () => {
  const table = new ApiVersionTable([
    [MetadataApi.apiKey, { min: 0, max: 99 }],
    [FetchApi.apiKey, { min: 4, max: 9 }],
    [ProduceApi.apiKey, { min: 50, max: 60 }],
  ]);

  it('picks the highest version both sides support', () => {
    expect(table.pick(MetadataApi)).toBe(MetadataApi.validVersions.max); // broker above the codec
    expect(table.pick(FetchApi)).toBe(9); // codec above the broker
  });

  it('keeps the choice within a caller limit', () => {
    expect(table.pick(MetadataApi, { max: 4 })).toBe(4);
    expect(table.pick(FetchApi, { min: 9 })).toBe(9);
    expect(table.supports(FetchApi, { min: 10 })).toBe(false);
  });

  it('fails with LL_ERR_CLIENT_UNSUPPORTED_VERSION when the ranges do not overlap', () => {
    expect(() => table.pick(ProduceApi)).toThrow(UnsupportedApiVersionError);
    try {
      table.pick(ProduceApi);
    } catch (e) {
      expect((e as UnsupportedApiVersionError).code).toBe('LL_ERR_CLIENT_UNSUPPORTED_VERSION');
      expect((e as Error).message).toMatch(/broker 50-60/);
    }
  });

  it('fails when the broker does not list the API', () => {
    expect(() => table.pick(ApiVersionsApi)).toThrow(/does not serve ApiVersions/);
  });
});

describe('ApiVersions decoding (KIP-511)', () => {
  function body(version: number, errorCode: number): Buffer {
    const frame = Buffer.concat(
      encodeResponseFrame(ApiVersionsApi, version, 9, ApiVersionsApi.response.create({ errorCode, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] })),
    );
    return frame.subarray(4);
  }

  it('decodes an answer at the version sent', () => {
    const r = decodeApiVersionsBody(body(3, 0), 4, 3);
    expect(r.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, minVersion: 0, maxVersion: 2 })]);
  });

  it('falls back to v0 when a broker answers a newer request in the v0 layout', () => {
    const r = decodeApiVersionsBody(body(0, ErrorCode.UNSUPPORTED_VERSION), 4, 4);
    expect(r.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(r.apiKeys[0]).toMatchObject({ apiKey: 18, maxVersion: 2 });
  });

  it('retries at the broker highest ApiVersions version, or v0 when the answer does not say', () => {
    const withRange = ApiVersionsApi.response.create({ errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] });
    expect(apiVersionsRetryVersion(withRange, 4)).toBe(2);
    const bare = ApiVersionsApi.response.create({ errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: [] });
    expect(apiVersionsRetryVersion(bare, 4)).toBe(0);
    expect(apiVersionsRetryVersion(bare, 0)).toBeUndefined();
    expect(apiVersionsRetryVersion(ApiVersionsApi.response.create({ errorCode: 0 }), 4)).toBeUndefined();
  });
});
