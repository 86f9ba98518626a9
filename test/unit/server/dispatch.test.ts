/** The dispatch seam in-process: served versions, the ApiVersions fallback, closes, context and metrics. */
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { encodeRequestFrame, decodeResponseFrame } from '../../../protocol/headers.js';
import { ErrorCode, errorByCode } from '../../../protocol/error-codes.js';
import { ApiVersionsApi, createApiVersionsRequest, type ApiVersionsResponse } from '../../../protocol/messages/018-api-versions.gen.js';
import { DescribeClusterApi, createDescribeClusterRequest, type DescribeClusterResponse } from '../../../protocol/messages/060-describe-cluster.gen.js';
import { apiVersions, apiCatalog, supportedApiVersions } from '../../../src/api/018-api-versions.js';
import { describeCluster } from '../../../src/api/060-describe-cluster.js';
import { metadata as metadataHandler } from '../../../src/api/003-metadata.js';
import { MetadataApi, createMetadataRequest } from '../../../protocol/messages/003-metadata.gen.js';
import type { Handler } from '../../../src/api/handler.js';
import { ANONYMOUS, type Services } from '../../../src/api/services.js';
import { RequestMetrics } from '../../../src/observability/request-metrics.js';
import { Dispatcher, type Outcome, type Session } from '../../../src/server/dispatch.js';
import { LedgerStorageError } from '../../../src/ledger/errors.js';
import { defineHandler } from '../../../src/api/handler.js';
import { DeleteGroupsApi, createDeleteGroupsRequest, type DeleteGroupsResponse } from '../../../protocol/messages/042-delete-groups.gen.js';
import { RefusalLog } from '../../../src/server/refusals.js';
import { fakeCluster, fakeNode } from '../api/fakes.js';

const silent = pino({ level: 'silent' });

/** A DeleteGroups handler that fails as it is told to: throws, rejects, or answers what does not encode. */
function failingDeleteGroups(fail: () => unknown): Handler {
  return defineHandler({ api: DeleteGroupsApi, versions: { min: 0, max: 2 }, uses: [], handle: () => fail() as DeleteGroupsResponse }) as Handler;
}

function setup(extra: Handler[] = [], o: { controllerListeners?: string[]; listenerName?: string } = {}) {
  const handlers = new Map<number, Handler>([[18, apiVersions as Handler], [60, describeCluster as Handler], ...extra.map((h) => [h.api.apiKey, h] as const)]);
  const registry = new Registry();
  const controllerListeners = new Set(o.controllerListeners ?? []);
  // The services these handlers use; the others are never reached.
  const services = { node: fakeNode({ nodeId: 5, clusterId: 'c-9', controllerListeners: [...controllerListeners] }), cluster: fakeCluster({ nodeId: 5 }), apis: apiCatalog(handlers, controllerListeners) } as Pick<Services, 'node' | 'cluster' | 'apis'> as Services;
  const dispatcher = new Dispatcher({ handlers, controllerListeners, services, refusals: new RefusalLog(silent), metrics: new RequestMetrics(registry, (c) => errorByCode(c).name) });
  const session: Session = {
    info: { id: 1, remoteAddress: '127.0.0.1:5000', listenerName: o.listenerName ?? 'PLAINTEXT', clientSoftwareName: null, clientSoftwareVersion: null },
    principal: ANONYMOUS,
    signal: new AbortController().signal,
    log: silent,
  };
  return { dispatcher, session, registry };
}

/** A frame as the connection hands it over: without its size prefix. */
function frame(chunks: Buffer[]): Buffer {
  return Buffer.concat(chunks).subarray(4);
}

async function responseOf<Res>(api: { apiKey: number } & Parameters<typeof decodeResponseFrame<Res>>[0], version: number, outcome: Outcome | Promise<Outcome>): Promise<Res> {
  const o = await outcome;
  if (o.kind !== 'respond' || typeof o.chunks === 'symbol') throw new Error(`expected a response, got ${o.kind}`);
  o.onSent?.(performance.now(), performance.now());
  return decodeResponseFrame(api, version, Buffer.concat(o.chunks).subarray(4)).response;
}

describe('Dispatcher', () => {
  it('runs the handler with its services and answers in the request version', async () => {
    const { dispatcher, session } = setup();
    const req = frame(encodeRequestFrame(DescribeClusterApi, 0, 7, 'cli', createDescribeClusterRequest()));
    const res = await responseOf<DescribeClusterResponse>(DescribeClusterApi, 0, dispatcher.dispatch(req, session, performance.now()));
    expect(res).toMatchObject({ errorCode: ErrorCode.NONE, clusterId: 'c-9', controllerId: 5 });
  });

  it('answers ApiVersions of an unknown version in v0 with UNSUPPORTED_VERSION and its own range (KIP-511)', async () => {
    const { dispatcher, session } = setup();
    const chunks = encodeRequestFrame(ApiVersionsApi, 3, 8, 'cli', createApiVersionsRequest({ clientSoftwareName: 'x', clientSoftwareVersion: '1' }));
    const req = frame(chunks);
    req.writeInt16BE(99, 2); // the request header's api version
    const res = await responseOf<ApiVersionsResponse>(ApiVersionsApi, 0, dispatcher.dispatch(req, session, performance.now()));
    expect(res.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(res.apiKeys.map((k) => k.apiKey)).toEqual([18]);
  });

  it('serves on a controller listener only the APIs Kafka serves there, and lists only those in ApiVersions', async () => {
    const { dispatcher, session } = setup([metadataHandler as Handler], { controllerListeners: ['CONTROLLER'], listenerName: 'CONTROLLER' });
    const metadata = frame(encodeRequestFrame(MetadataApi, 12, 3, 'cli', createMetadataRequest({ topics: null })));
    expect(dispatcher.dispatch(metadata, session, 0)).toEqual({ kind: 'close' });
    const versions = await responseOf<ApiVersionsResponse>(ApiVersionsApi, 3, dispatcher.dispatch(frame(encodeRequestFrame(ApiVersionsApi, 3, 4, 'cli', createApiVersionsRequest({ clientSoftwareName: 'x', clientSoftwareVersion: '1' }))), session, 0));
    expect(versions.apiKeys.map((k) => k.apiKey)).toEqual([18, 60]);
    const controllers = await responseOf<DescribeClusterResponse>(DescribeClusterApi, 1, dispatcher.dispatch(frame(encodeRequestFrame(DescribeClusterApi, 1, 5, 'cli', createDescribeClusterRequest({ endpointType: 2 }))), session, 0));
    expect(controllers).toMatchObject({ errorCode: ErrorCode.NONE, endpointType: 2, controllerId: 5, brokers: [{ brokerId: 5 }] });
    const brokers = await responseOf<DescribeClusterResponse>(DescribeClusterApi, 1, dispatcher.dispatch(frame(encodeRequestFrame(DescribeClusterApi, 1, 6, 'cli', createDescribeClusterRequest({ endpointType: 1 }))), session, 0));
    expect(brokers).toMatchObject({ errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE, errorMessage: 'The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER', brokers: [] });
    // The same dispatcher serves Metadata on a broker listener.
    const onBroker = await responseOf<ApiVersionsResponse>(ApiVersionsApi, 3, dispatcher.dispatch(frame(encodeRequestFrame(ApiVersionsApi, 3, 7, 'cli', createApiVersionsRequest({ clientSoftwareName: 'x', clientSoftwareVersion: '1' }))), { ...session, info: { ...session.info, listenerName: 'PLAINTEXT' } }, 0));
    expect(onBroker.apiKeys.map((k) => k.apiKey)).toEqual([3, 18, 60]);
  });

  it('closes the connection for an API it does not serve, a version outside the range, or a body that does not parse', () => {
    const { dispatcher, session } = setup();
    const unserved = frame(encodeRequestFrame(DescribeClusterApi, 0, 1, 'cli', createDescribeClusterRequest()));
    unserved.writeInt16BE(61, 0);
    expect(dispatcher.dispatch(unserved, session, 0)).toEqual({ kind: 'close' });
    const tooNew = frame(encodeRequestFrame(DescribeClusterApi, 0, 1, 'cli', createDescribeClusterRequest()));
    tooNew.writeInt16BE(99, 2);
    expect(dispatcher.dispatch(tooNew, session, 0)).toEqual({ kind: 'close' });
    const truncated = frame(encodeRequestFrame(DescribeClusterApi, 1, 1, 'cli', createDescribeClusterRequest())).subarray(0, 12);
    expect(dispatcher.dispatch(truncated, session, 0)).toEqual({ kind: 'close' });
  });

  it('records Kafka request metrics for what it served: requests by version, error codes, the time split', async () => {
    const { dispatcher, session, registry } = setup();
    const req = frame(encodeRequestFrame(DescribeClusterApi, 1, 7, 'cli', createDescribeClusterRequest({ endpointType: 3 })));
    await responseOf<DescribeClusterResponse>(DescribeClusterApi, 1, dispatcher.dispatch(req, session, performance.now()));
    const text = await registry.metrics();
    expect(text).toMatch(/^kafka_network_requestmetrics_requests_total\{request="DescribeCluster",version="1"\} 1$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_errors_total\{request="DescribeCluster",error="UNSUPPORTED_ENDPOINT_TYPE"\} 1$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_total_time_seconds_count\{request="DescribeCluster"\} 1$/m);
  });

  it('answers a request whose handler throws with its error response, the mapped code at every level, and keeps the connection', async () => {
    const storage = new LedgerStorageError('append failed', { ledgerId: 3 }, Object.assign(new Error('EIO'), { code: 'EIO' }));
    const cases: [string, () => unknown, number][] = [
      ['throws a storage error', () => { throw storage; }, ErrorCode.KAFKA_STORAGE_ERROR],
      ['rejects with a bug', () => Promise.reject(new TypeError('x is undefined')), ErrorCode.UNKNOWN_SERVER_ERROR],
      ['answers what does not encode', () => ({ throttleTimeMs: 0, results: [{ groupId: null, errorCode: 0 }] }), ErrorCode.UNKNOWN_SERVER_ERROR],
    ];
    for (const [what, fail, code] of cases) {
      const { dispatcher, session, registry } = setup([failingDeleteGroups(fail)]);
      const req = frame(encodeRequestFrame(DeleteGroupsApi, 2, 11, 'cli', createDeleteGroupsRequest({ groupsNames: ['g1', 'g2'] })));
      const res = await responseOf<DeleteGroupsResponse>(DeleteGroupsApi, 2, dispatcher.dispatch(req, session, performance.now()));
      expect(res.results.map((r) => [r.groupId, r.errorCode]), what).toEqual([['g1', code], ['g2', code]]);
      const text = await registry.metrics();
      expect(text, what).toContain(`kafka_network_requestmetrics_errors_total{request="DeleteGroups",error="${errorByCode(code).name}"} 2`);
    }
  });

  it('logs a failed request once, with the API, version, client and correlation id', async () => {
    const lines: Record<string, unknown>[] = [];
    const log = pino({ level: 'error' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
    const { dispatcher, session } = setup([failingDeleteGroups(() => { throw new Error('boom'); })]);
    const req = frame(encodeRequestFrame(DeleteGroupsApi, 1, 42, 'my-client', createDeleteGroupsRequest({ groupsNames: ['g'] })));
    await responseOf<DeleteGroupsResponse>(DeleteGroupsApi, 1, dispatcher.dispatch(req, { ...session, log }, performance.now()));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ api: 'DeleteGroups', apiKey: 42, apiVersion: 1, clientId: 'my-client', correlationId: 42, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
  });
});
