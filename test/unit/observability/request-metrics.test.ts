import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { errorCounts, RequestMetrics } from '../../../src/observability/request-metrics.js';

describe('errorCounts', () => {
  it('counts every errorCode of a response by code, top level and per resource, as Kafka errorCounts does', () => {
    const res = {
      errorCode: 0,
      responses: [
        { name: 'a', partitionResponses: [{ errorCode: 0, records: Buffer.alloc(3) }, { errorCode: 6 }] },
        { name: 'b', partitionResponses: [{ errorCode: 6 }, { errorCode: 3 }] },
      ],
    };
    expect([...errorCounts(res)].sort()).toEqual([[0, 2], [3, 1], [6, 2]]);
  });

  it('does not enter record sets or go deeper than four levels of arrays', () => {
    const deep = { a: [{ b: [{ c: [{ d: [{ e: [{ errorCode: 9 }] }] }] }] }] };
    expect(errorCounts(deep).get(9)).toBeUndefined();
    expect(errorCounts({ records: [Buffer.from([1])] }).size).toBe(0);
  });
});

describe('RequestMetrics', () => {
  it('records requests by version, errors by name and the time split per API', async () => {
    const registry = new Registry();
    const m = new RequestMetrics(registry, (code) => (code === 0 ? 'NONE' : `E${code}`)).of(0, 'Produce');
    m.request(9);
    m.request(9);
    m.error(0, 3);
    m.error(6);
    m.times({ received: 0, started: 1, ready: 11, written: 12, sent: 13 });
    const text = await registry.metrics();
    expect(text).toMatch(/^kafka_network_requestmetrics_requests_total\{request="Produce",version="9"\} 2$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_errors_total\{request="Produce",error="NONE"\} 3$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_errors_total\{request="Produce",error="E6"\} 1$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_total_time_seconds_sum\{request="Produce"\} 0\.013$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_local_time_seconds_sum\{request="Produce"\} 0\.01$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_request_queue_time_seconds_count\{request="Produce"\} 1$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_response_queue_time_seconds_sum\{request="Produce"\} 0\.001$/m);
    expect(text).toMatch(/^kafka_network_requestmetrics_response_send_time_seconds_sum\{request="Produce"\} 0\.001$/m);
  });
});
