import { request } from 'node:http';
import { Counter, Registry } from 'prom-client';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN_MAX_BODY_BYTES, parseAdminListener, startAdminHttp, type AdminHttpServer, type AdminRoute } from '../../../src/observability/admin-http.js';

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

  it('answers 500 for a document that fails to build, and goes on serving', async () => {
    const failing = await startAdminHttp('127.0.0.1', 0, {
      registry: new Registry(),
      health: () => ({}),
      documents: new Map([['/v1/broken', () => { throw new Error('no topics yet'); }]]),
    });
    try {
      const res = await fetch(`${failing.url}/v1/broken`);
      expect([res.status, await res.text()]).toEqual([500, '/v1/broken failed: no topics yet\n']);
      expect((await fetch(`${failing.url}/health`)).status).toBe(200);
    } finally {
      await failing.close();
    }
  });

  it('parses the listener setting, empty meaning disabled', () => {
    expect(parseAdminListener('')).toBeNull();
    expect(parseAdminListener('http://127.0.0.1:9644')).toEqual({ host: '127.0.0.1', port: 9644 });
    expect(parseAdminListener('http://[::1]:9644/')).toEqual({ host: '::1', port: 9644 });
    expect(() => parseAdminListener('127.0.0.1:9644')).toThrow(/http:\/\/host:port/);
  });
});

describe('admin HTTP routes', () => {
  let server: AdminHttpServer | null = null;
  afterAll(async () => server?.close());
  const calls: { method: string; path: string; body: unknown }[] = [];
  /** A fake route: GET anywhere under /v1/things, PUT and DELETE on /v1/things/<x> only. */
  const things: AdminRoute = {
    methods: (path) => (path === '/v1/things' ? ['GET'] : ['GET', 'PUT', 'DELETE']),
    handle: async (method, path, body) => {
      calls.push({ method, path, body });
      if (path === '/v1/things/boom') throw new Error('boom');
      if (method === 'DELETE') return { status: 204 };
      if (method === 'PUT') return { status: 200, json: { stored: body } };
      return { status: 200, json: { path } };
    },
  };
  const start = async (): Promise<string> => {
    server ??= await startAdminHttp('127.0.0.1', 0, {
      registry: new Registry(),
      health: () => ({}),
      documents: new Map([['/v1/doc', () => ({ doc: true })]]),
      routes: new Map([['/v1/things', things]]),
    });
    return server.url;
  };
  /** A raw request (fetch hides a closed connection behind its pool). */
  const raw = (url: string, method: string, headers: Record<string, string | number>, body: Buffer | null): Promise<{ status: number; headers: Record<string, unknown>; text: string }> =>
    new Promise((resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, text }));
      });
      req.on('error', reject);
      req.end(body ?? undefined);
    });

  it('gives the route its method, path and parsed body, and sends its answer', async () => {
    const url = await start();
    const get = await fetch(`${url}/v1/things/a?x=1`);
    expect(get.status).toBe(200);
    expect(await get.json()).toEqual({ path: '/v1/things/a' });
    const put = await fetch(`${url}/v1/things/a`, { method: 'PUT', body: JSON.stringify({ n: 1 }) });
    expect(put.status).toBe(200);
    expect(await put.json()).toEqual({ stored: { n: 1 } });
    const del = await fetch(`${url}/v1/things/a`, { method: 'DELETE' });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect(calls.at(-1)).toEqual({ method: 'DELETE', path: '/v1/things/a', body: undefined });
    expect((await fetch(`${url}/v1/things`)).status).toBe(200);
    // A prefix matches whole segments only.
    expect((await fetch(`${url}/v1/thingsx`)).status).toBe(404);
    const thrown = await fetch(`${url}/v1/things/boom`);
    expect(thrown.status).toBe(500);
    expect(await thrown.json()).toEqual({ error: 'boom' });
  });

  it('answers 405 with Allow for a method the route does not serve, at that path', async () => {
    const url = await start();
    const before = calls.length;
    const post = await fetch(`${url}/v1/things/a`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, PUT, DELETE');
    expect((await post.json()) as unknown).toEqual({ error: expect.stringMatching(/POST/) as unknown });
    const put = await fetch(`${url}/v1/things`, { method: 'PUT', body: '{}' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET');
    expect(calls.length).toBe(before);
  });

  it('answers 400 with a message for a body that is not JSON', async () => {
    const url = await start();
    const before = calls.length;
    const res = await fetch(`${url}/v1/things/a`, { method: 'PUT', body: '{"n": ' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^request body is not JSON: /);
    expect(calls.length).toBe(before);
  });

  it('takes a body of 64 KiB, refuses a larger one with 413 and closes the connection', async () => {
    const url = await start();
    const fits = JSON.stringify({ s: 'x'.repeat(ADMIN_MAX_BODY_BYTES - 8) });
    expect(Buffer.byteLength(fits)).toBe(ADMIN_MAX_BODY_BYTES);
    expect((await fetch(`${url}/v1/things/a`, { method: 'PUT', body: fits })).status).toBe(200);
    const before = calls.length;
    const big = Buffer.from(JSON.stringify({ s: 'x'.repeat(ADMIN_MAX_BODY_BYTES - 7) }));
    // Declared in Content-Length: refused before reading.
    const declared = await raw(`${url}/v1/things/a`, 'PUT', { 'content-length': big.length }, big);
    expect(declared.status).toBe(413);
    expect(declared.headers.connection).toBe('close');
    expect(JSON.parse(declared.text)).toEqual({ error: `request body larger than ${ADMIN_MAX_BODY_BYTES} bytes` });
    // Chunked, with no length: refused once it passes the bound.
    const chunked = await raw(`${url}/v1/things/a`, 'PUT', { 'transfer-encoding': 'chunked' }, big);
    expect(chunked.status).toBe(413);
    expect(chunked.headers.connection).toBe('close');
    expect(calls.length).toBe(before);
  });

  it('keeps /metrics, /health and the documents GET only, ahead of the routes', async () => {
    const url = await start();
    expect(await (await fetch(`${url}/v1/doc`)).json()).toEqual({ doc: true });
    expect((await fetch(`${url}/health`)).status).toBe(200);
    const post = await fetch(`${url}/v1/doc`, { method: 'PUT', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET');
    const missing = await fetch(`${url}/nope`);
    expect(await missing.text()).toBe('not found: try /metrics, /health, /v1/doc, /v1/things\n');
  });
});
