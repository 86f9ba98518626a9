/**
 * `ledgerline tenants`: list, show, create or replace, and delete tenants through a broker's admin HTTP endpoint
 * (admin-routes.ts), as `pulsar-admin tenants` does over Pulsar's admin REST API (README.md here).
 *
 *   ledgerline tenants list
 *   ledgerline tenants get acme
 *   ledgerline tenants put acme --principal User:alice --policy retention.ms=604800000 \
 *       --namespace orders --policy ledgerline.encryption.required=true
 *   ledgerline tenants put acme --file acme.json
 *   ledgerline tenants delete acme
 *
 * A `--policy` before any `--namespace` is the tenant's; after one, that namespace's, until the next. `put`
 * replaces the whole tenant. Results are printed as JSON. Exit status: 0 done, 1 refused or not found (the
 * broker's message on stderr) or the endpoint unreachable, 2 a usage error.
 */
import { readFile } from 'node:fs/promises';
import type { Tenant } from './model.js';
import { TENANTS_USAGE } from './tenants-usage.js';

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9644';

/** How long a request to the admin endpoint may take. */
const REQUEST_TIMEOUT_MS = 30_000;

class UsageError extends Error {}

/** A request the broker answered with an error, or could not be made. */
class RequestError extends Error {}

interface Parsed {
  positional: string[];
  admin: string;
  file?: string;
  principals: string[];
  policies: Record<string, string>;
  namespaces: Record<string, { policies: Record<string, string> }>;
  /** Whether any of --principal, --policy, --namespace was given. */
  described: boolean;
}

function parse(args: string[]): Parsed {
  const p: Parsed = { positional: [], admin: DEFAULT_ADMIN_URL, principals: [], policies: {}, namespaces: {}, described: false };
  let namespace: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      p.positional.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const flag = a.slice(2, eq < 0 ? undefined : eq);
    // `--namespace --policy ...` lacks the namespace: a value that is the next option is none.
    const value = eq >= 0 ? a.slice(eq + 1) : args[i + 1]?.startsWith('--') ? undefined : args[++i];
    if (value === undefined) throw new UsageError(`--${flag} needs a value`);
    switch (flag) {
      case 'admin':
        p.admin = value;
        break;
      case 'file':
        p.file = value;
        break;
      case 'principal':
        p.principals.push(value);
        p.described = true;
        break;
      case 'namespace':
        if (value === '') throw new UsageError('--namespace needs a name');
        if (p.namespaces[value]) throw new UsageError(`--namespace ${value} is given twice`);
        p.namespaces[value] = { policies: {} };
        namespace = value;
        p.described = true;
        break;
      case 'policy': {
        const at = value.indexOf('=');
        if (at <= 0) throw new UsageError(`--policy needs key=value, got ${JSON.stringify(value)}`);
        const key = value.slice(0, at);
        const policies = namespace === undefined ? p.policies : p.namespaces[namespace]!.policies;
        if (key in policies) throw new UsageError(`--policy ${key} is given twice for ${namespace === undefined ? 'the tenant' : `namespace ${namespace}`}`);
        policies[key] = value.slice(at + 1);
        p.described = true;
        break;
      }
      default:
        throw new UsageError(`unknown option --${flag}`);
    }
  }
  return p;
}

function adminBase(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--admin must be a URL such as ${DEFAULT_ADMIN_URL}, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--admin must be an http:// URL, got ${JSON.stringify(value)}`);
  return url.href.replace(/\/+$/, '');
}

/** Sends a request to the admin endpoint; the parsed JSON answer (undefined for none), or RequestError. */
async function request(base: string, method: string, path: string, body?: unknown): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch (err) {
    const cause = (err as { cause?: { message?: string } }).cause?.message;
    throw new RequestError(`cannot reach the admin endpoint ${base}: ${cause ?? (err as Error).message}`);
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    const message = (json as { error?: unknown } | undefined)?.error;
    throw new RequestError(typeof message === 'string' ? message : `${method} ${path}: HTTP ${res.status}${text ? `: ${text.trim()}` : ''}`);
  }
  return json;
}

function tenantPath(name: string): string {
  return `/v1/tenants/${encodeURIComponent(name)}`;
}

function needName(positional: string[], sub: string): string {
  const [name, ...extra] = positional;
  if (name === undefined) throw new UsageError(`${sub} needs a tenant name`);
  if (extra.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(extra[0])}`);
  return name;
}

async function readTenantFile(file: string): Promise<Partial<Tenant>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read --file ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as Partial<Tenant>;
  } catch (err) {
    throw new UsageError(`--file ${file} is not JSON: ${(err as Error).message}`);
  }
}

/** Runs `ledgerline tenants ...`; returns the exit status. */
export async function tenantsCommand(
  args: string[],
  out: (line: string) => void = console.log,
  err: (line: string) => void = console.error,
): Promise<number> {
  try {
    // Options may come before the subcommand too (`ledgerline tenants --admin URL list`).
    const p = parse(args);
    const sub = p.positional.shift();
    const base = adminBase(p.admin);
    if (sub !== 'put' && (p.described || p.file !== undefined)) throw new UsageError(`--principal, --policy, --namespace and --file are for put`);
    const show = (json: unknown): void => out(JSON.stringify(json, null, 2));
    switch (sub) {
      case 'list':
        if (p.positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(p.positional[0])}`);
        show(await request(base, 'GET', '/v1/tenants'));
        return 0;
      case 'get':
        show(await request(base, 'GET', tenantPath(needName(p.positional, 'get'))));
        return 0;
      case 'put': {
        const name = needName(p.positional, 'put');
        if (p.file !== undefined && p.described) throw new UsageError('--file describes the whole tenant: no --principal, --policy or --namespace with it');
        const body = p.file !== undefined ? await readTenantFile(p.file) : { principals: p.principals, policies: p.policies, namespaces: p.namespaces };
        show(await request(base, 'PUT', tenantPath(name), body));
        return 0;
      }
      case 'delete':
        await request(base, 'DELETE', tenantPath(needName(p.positional, 'delete')));
        return 0;
      default:
        throw new UsageError(sub === undefined ? 'a subcommand is needed' : `unknown subcommand ${JSON.stringify(sub)}`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`ledgerline tenants: ${e.message}\n${TENANTS_USAGE}`);
      return 2;
    }
    err(`ledgerline tenants: ${(e as Error).message}`);
    return 1;
  }
}
