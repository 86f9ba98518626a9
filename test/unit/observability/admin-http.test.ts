import { Counter, Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAdminListener, startAdminHttp, type AdminHttpServer } from '../../../src/observability/admin-http.js';

describe('admin HTTP endpoint', () => {
  let server: AdminHttpServer | null = null;
  afterAll(async () => server?.close());

  it('serves Prometheus metrics and health on GET, refuses other methods and paths', async () => {
    const registry = new Registry();
    new Counter({ name: 'test_requests_total', help: 'x', registers: [registry] }).inc(3);
    server = await startAdminHttp('127.0.0.1', 0, { registry, health: () => ({ nodeId: 7 }) });
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^test_requests_total 3$/m);
    const health = await fetch(`${server.url}/health`);
    expect(await health.json()).toEqual({ status: 'ok', nodeId: 7 });
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('parses the listener setting, empty meaning disabled', () => {
    expect(parseAdminListener('')).toBeNull();
    expect(parseAdminListener('http://127.0.0.1:9644')).toEqual({ host: '127.0.0.1', port: 9644 });
    expect(parseAdminListener('http://[::1]:9644/')).toEqual({ host: '::1', port: 9644 });
    expect(() => parseAdminListener('127.0.0.1:9644')).toThrow(/http:\/\/host:port/);
  });
});
