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
import { AdminClient, adminUrl, DEFAULT_ADMIN_URL, needName, noMoreArguments, pretty, run, scanArgs, unknownSubcommand, UsageError } from '../observability/admin-command.js';
import type { Tenant } from './model.js';
import { TENANTS_USAGE } from './tenants-usage.js';

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

/**
 * The tenants command's own options, scanned as every admin command's are: a `--policy` belongs to the
 * `--namespace` before it, an order the shared `parse` of admin-command.ts does not keep.
 */
function parse(args: string[]): Parsed {
  const p: Parsed = { positional: [], admin: DEFAULT_ADMIN_URL, principals: [], policies: {}, namespaces: {}, described: false };
  let namespace: string | undefined;
  scanArgs(args, {
    positional: (a) => p.positional.push(a),
    option(flag, _inline, next) {
      // `--namespace --policy ...` lacks the namespace: a value that is the next option is none.
      const value = next();
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
    },
  });
  return p;
}

function tenantPath(name: string): string {
  return `/v1/tenants/${encodeURIComponent(name)}`;
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
  return run('tenants', TENANTS_USAGE, err, async () => {
    // Options may come before the subcommand too (`ledgerline tenants --admin URL list`).
    const p = parse(args);
    const sub = p.positional.shift();
    const admin = new AdminClient(adminUrl(p.admin));
    if (sub !== 'put' && (p.described || p.file !== undefined)) throw new UsageError(`--principal, --policy, --namespace and --file are for put`);
    const show = pretty(out);
    switch (sub) {
      case 'list':
        noMoreArguments(p.positional);
        show(await admin.request('GET', '/v1/tenants'));
        return 0;
      case 'get':
        show(await admin.request('GET', tenantPath(needName(p.positional, 'get', 'a tenant name'))));
        return 0;
      case 'put': {
        const name = needName(p.positional, 'put', 'a tenant name');
        if (p.file !== undefined && p.described) throw new UsageError('--file describes the whole tenant: no --principal, --policy or --namespace with it');
        const body = p.file !== undefined ? await readTenantFile(p.file) : { principals: p.principals, policies: p.policies, namespaces: p.namespaces };
        show(await admin.request('PUT', tenantPath(name), body));
        return 0;
      }
      case 'delete':
        await admin.request('DELETE', tenantPath(needName(p.positional, 'delete', 'a tenant name')));
        return 0;
      default:
        throw unknownSubcommand(sub);
    }
  });
}
