import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { decodeResponseFrame } from '../../../protocol/headers.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { apiVersionsFallback, apiCatalog, supportedApiVersions } from '../../../src/api/018-api-versions.js';
import { handlers } from '../../../src/api/index.js';
import { apiVersions } from '../../../src/api/018-api-versions.js';
import { createApiVersionsRequest, type ApiVersionsResponse } from '../../../protocol/messages/018-api-versions.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { fakeNode, requestContext } from './fakes.js';

async function ask(version: number, init: Parameters<typeof createApiVersionsRequest>[0] = {}): Promise<ApiVersionsResponse> {
  const ctx = requestContext({ apis: apiCatalog(new Map([...handlers].map((h) => [h.api.apiKey, h])), new Set()), node: fakeNode({ nodeId: 7, clusterId: 'cluster-0' }) }, { apiVersion: version });
  const res = (await apiVersions.handle(createApiVersionsRequest({ clientSoftwareName: 'apache-kafka-java', clientSoftwareVersion: '4.4.0', ...init }), ctx)) as ApiVersionsResponse;
  expect(() => ApiVersionsApi.response.encode(new Writer(), res, version)).not.toThrow();
  return res;
}

describe('ApiVersions v3+ features (KIP-584) and v5 cluster and node checks (KIP-1242)', () => {
  it('reports metadata.version 7-33 finalized at 33 (Kafka 4.4-IV2) with the levels this node implements', async () => {
    const res = await ask(4);
    const supported = Object.fromEntries(res.supportedFeatures.map((f) => [f.name, [f.minVersion, f.maxVersion]]));
    expect(supported).toEqual({
      'metadata.version': [7, 33],
      'kraft.version': [0, 1],
      'transaction.version': [0, 2],
      'group.version': [0, 1],
      'eligible.leader.replicas.version': [0, 1],
      'share.version': [0, 0],
      'streams.version': [0, 0],
    });
    const finalized = Object.fromEntries(res.finalizedFeatures.map((f) => [f.name, [f.minVersionLevel, f.maxVersionLevel]]));
    // Level 0 is disabled and, as in Kafka, not listed as finalized.
    expect(finalized).toEqual({ 'metadata.version': [33, 33], 'kraft.version': [1, 1], 'transaction.version': [2, 2], 'group.version': [1, 1], 'eligible.leader.replicas.version': [1, 1] });
    expect(res.finalizedFeaturesEpoch).toBe(0n);
  });

  it('leaves out features with a minimum of 0 in v3, whose clients cannot read one (KAFKA-17011)', async () => {
    expect((await ask(3)).supportedFeatures.map((f) => f.name)).toEqual(['metadata.version']);
    expect((await ask(2)).supportedFeatures).toEqual([]);
  });

  it('v5: answers the cluster and node the client means to reach, and REBOOTSTRAP_REQUIRED for others', async () => {
    expect((await ask(5, { clusterId: 'cluster-0', nodeId: 7 })).errorCode).toBe(ErrorCode.NONE);
    expect((await ask(5)).errorCode).toBe(ErrorCode.NONE);
    for (const wrong of [{ clusterId: 'other', nodeId: 7 }, { clusterId: 'cluster-0', nodeId: 8 }]) {
      const res = await ask(5, wrong);
      expect(res).toMatchObject({ errorCode: ErrorCode.REBOOTSTRAP_REQUIRED, apiKeys: [] });
    }
  });

  it('v5: refuses a cluster id without a node id, or a node id without a cluster id, with INVALID_REQUEST', async () => {
    expect((await ask(5, { clusterId: 'cluster-0' })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await ask(5, { nodeId: 7 })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('refuses an invalid client software name with INVALID_REQUEST and no API list, as Kafka’s getErrorResponse', async () => {
    expect(await ask(3, { clientSoftwareName: '-bad' })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, apiKeys: [] });
  });
});

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
    expect(response.apiKeys).toEqual([expect.objectContaining({ apiKey: 18, minVersion: 0, maxVersion: 5 })]);
  });
});
