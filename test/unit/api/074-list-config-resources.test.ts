import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ListConfigResourcesApi, createListConfigResourcesRequest } from '../../../protocol/messages/074-list-config-resources.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { ConfigResourceType as T, listConfigResources } from '../../../src/api/074-list-config-resources.js';
import { fakeNodeView, topic } from './node-view-fake.js';

const node = fakeNodeView([topic('orders', 1), topic('audit', 1)], { nodeId: 3 });
const pairs = (r: ReturnType<typeof listConfigResources>): [string, number][] => r.configResources.map((c) => [c.resourceName, c.resourceType]);

describe('ListConfigResources', () => {
  it('v1 with no types lists every type it supports: this broker (logger and configs) and every topic', () => {
    const res = listConfigResources(node, createListConfigResourcesRequest({ resourceTypes: [] }), 1);
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(pairs(res)).toEqual([['3', T.BROKER_LOGGER], ['3', T.BROKER], ['orders', T.TOPIC], ['audit', T.TOPIC]]);
  });

  it('v1 lists the types asked for only', () => {
    expect(pairs(listConfigResources(node, createListConfigResourcesRequest({ resourceTypes: [T.TOPIC] }), 1))).toEqual([['orders', T.TOPIC], ['audit', T.TOPIC]]);
    expect(pairs(listConfigResources(node, createListConfigResourcesRequest({ resourceTypes: [T.GROUP, T.CLIENT_METRICS] }), 1))).toEqual([]);
  });

  it('answers a type it does not support with UNSUPPORTED_VERSION and no resources, as Kafka does', () => {
    const res = listConfigResources(node, createListConfigResourcesRequest({ resourceTypes: [T.TOPIC, 1] }), 1);
    expect(res).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_VERSION, configResources: [] });
  });

  it('v0 (ListClientMetricsResources) lists client-metrics resources only: none here', () => {
    const res = listConfigResources(node, createListConfigResourcesRequest(), 0);
    expect(res).toMatchObject({ errorCode: ErrorCode.NONE, configResources: [] });
    expect(() => ListConfigResourcesApi.response.encode(new Writer(), res, 0)).not.toThrow();
  });
});
