/**
 * The admin HTTP endpoint: Prometheus metrics and a health check, for operators and scrapers.
 *
 *   GET /metrics   Prometheus text format (prom-client registry of the broker)
 *   GET /health    200 {"status":"ok", ...} while the broker serves
 *   GET /v1/...    200 JSON documents the broker adds (`documents`), e.g. /v1/encryption: the topics that
 *                  require end-to-end encryption (src/crypto/README.md)
 *
 * Listens where `ledgerline.admin.listener` says (`http://127.0.0.1:9644`; empty disables it). It binds the
 * given host only; put it on loopback or a management network.
 */
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface AdminHttpOptions {
  registry: Registry;
  health: () => Record<string, unknown>;
  /** JSON documents by path (`/v1/...`), computed on each request. */
  documents?: ReadonlyMap<string, () => unknown>;
}

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
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      options.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': options.registry.contentType }).end(text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(String(err)),
      );
    } else if (path === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 'ok', ...options.health() }));
    } else if (options.documents?.has(path)) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(options.documents.get(path)!()));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: try /metrics, /health${[...(options.documents?.keys() ?? [])].map((d) => `, ${d}`).join('')}\n`);
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
