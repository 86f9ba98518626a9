/**
 * The admin HTTP endpoint: Prometheus metrics, a health check and the admin APIs, for operators and scrapers.
 *
 *   GET /metrics   Prometheus text format (prom-client registry of the broker)
 *   GET /health    200 {"status":"ok", ...} while the broker serves
 *   GET /v1/...    200 JSON documents the broker adds (`documents`), e.g. /v1/encryption: the topics that
 *                  require end-to-end encryption (src/crypto/README.md)
 *   /v1/<prefix>   routes the broker adds (`routes`), reading and writing, e.g. /v1/tenants
 *                  (src/tenants/README.md): a handler per path prefix answers JSON. Around it, here: a JSON body
 *                  of at most 64 KiB (larger: 413 and the connection closed), 400 for a body that is not JSON,
 *                  405 with Allow for a method the route does not serve, 500 for a handler that throws.
 *
 * Listens where `ledgerline.admin.listener` says (`http://127.0.0.1:9644`; empty disables it). It binds the
 * given host only and has no authentication, while routes can write (tenants): put it on loopback or a
 * management network.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';

export interface AdminHttpOptions {
  registry: Registry;
  health: () => Record<string, unknown>;
  /** JSON documents by path (`/v1/...`), computed on each request. */
  documents?: ReadonlyMap<string, () => unknown>;
  /** Routes by path prefix (`/v1/tenants` serves `/v1/tenants` and `/v1/tenants/...`; the longest prefix wins). */
  routes?: ReadonlyMap<string, AdminRoute>;
}

/** What a route answers: a status and a JSON body (none when `json` is undefined, or for 204). */
export interface AdminResponse {
  readonly status: number;
  readonly json?: unknown;
}

export interface AdminRoute {
  /** The methods the route serves at `path` (405 with them in Allow for any other). */
  methods(path: string): readonly string[];
  /** Answers a request; `body` is the parsed JSON body, undefined when there was none. */
  handle(method: string, path: string, body: unknown): Promise<AdminResponse>;
}

/** The largest request body a route is given. */
export const ADMIN_MAX_BODY_BYTES = 64 * 1024;

export interface AdminHttpServer {
  readonly url: string;
  close(): Promise<void>;
}

export function parseAdminListener(value: string): { host: string; port: number } | null {
  const v = value.trim();
  if (v === '') return null;
  const m = /^http:\/\/(\[[^\]]+\]|[^:/]+):(\d+)\/?$/.exec(v);
  if (!m) throw new Error(`ledgerline.admin.listener must be http://host:port or empty, got ${JSON.stringify(value)}`);
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

export async function startAdminHttp(host: string, port: number, options: AdminHttpOptions): Promise<AdminHttpServer> {
  const routes = [...(options.routes ?? new Map<string, AdminRoute>())]
    .map(([prefix, route]) => [prefix.replace(/\/+$/, ''), route] as const)
    .sort((a, b) => b[0].length - a[0].length);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const fixed = path === '/metrics' || path === '/health' || options.documents?.has(path) === true;
    const route = fixed ? undefined : routes.find(([prefix]) => path === prefix || path.startsWith(`${prefix}/`))?.[1];
    if (route) {
      serveRoute(route, path, req, res);
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else if (path === '/health') {
      let health: Record<string, unknown>;
      try {
        health = options.health();
      } catch (err) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`/health failed: ${err instanceof Error ? err.message : String(err)}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', ...health }));
    } else if (options.documents?.has(path)) {
      let body: string;
      try {
        body = JSON.stringify(options.documents.get(path)!());
      } catch (err) {
        // A document that fails to build is answered 500; it never takes the broker down.
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`${path} failed: ${err instanceof Error ? err.message : String(err)}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    } else {
      const known = ['/metrics', '/health', ...(options.documents?.keys() ?? []), ...routes.map(([prefix]) => prefix)];
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: try ${known.join(', ')}\n`);
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const bound = typeof addr === 'object' && addr ? addr.port : port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${bound}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

function sendJson(res: ServerResponse, status: number, json: unknown, headers: Record<string, string> = {}): void {
  if (json === undefined || status === 204 || status === 304) {
    res.writeHead(status, headers).end();
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(json));
}

function serveRoute(route: AdminRoute, path: string, req: IncomingMessage, res: ServerResponse): void {
  const method = req.method ?? 'GET';
  const allowed = route.methods(path);
  if (!allowed.includes(method)) {
    // The body, if any, is read and dropped by the server; the connection stays usable.
    sendJson(res, 405, { error: `${method} is not served at ${path}: ${allowed.join(', ')}` }, { allow: allowed.join(', ') });
    return;
  }
  const tooLarge = (): void => {
    // Not read further: the response says so and the connection closes behind it.
    req.pause();
    sendJson(res, 413, { error: `request body larger than ${ADMIN_MAX_BODY_BYTES} bytes` }, { connection: 'close' });
  };
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > ADMIN_MAX_BODY_BYTES) {
    tooLarge();
    return;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (chunk: Buffer) => {
    if (over) return;
    size += chunk.length;
    if (size > ADMIN_MAX_BODY_BYTES) {
      over = true;
      tooLarge();
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => undefined);
  req.on('end', () => {
    if (over) return;
    let body: unknown;
    if (size > 0) {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        body = JSON.parse(text);
      } catch (err) {
        sendJson(res, 400, { error: `request body is not JSON: ${(err as Error).message}` });
        return;
      }
    }
    Promise.resolve()
      .then(() => route.handle(method, path, body))
      .then(
        (r) => sendJson(res, r.status, r.json),
        (err: unknown) => sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) }),
      );
  });
}
