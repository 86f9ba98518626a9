import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { startAdminHttp, type AdminHttpServer } from '../../../src/observability/admin-http.js';
import { tenantAdminRoutes } from '../../../src/tenants/admin-routes.js';
import { tenantsCommand } from '../../../src/tenants/tenants-command.js';
import { TenantStore } from '../../../src/tenants/tenant-store.js';

describe('ledgerline tenants', () => {
  let metadata: MetadataStore;
  let tenants: TenantStore;
  let server: AdminHttpServer;
  let dir: string;

  beforeAll(async () => {
    metadata = await openMetadataStore({ store: 'memory', dir: '/unused' });
    tenants = new TenantStore(metadata, (err) => {
      throw err;
    });
    await tenants.load();
    server = await startAdminHttp('127.0.0.1', 0, { registry: new Registry(), health: () => ({}), routes: tenantAdminRoutes(tenants) });
    dir = await mkdtemp(join(tmpdir(), 'ledgerline-tenants-'));
  });
  afterAll(async () => {
    await server?.close();
    await tenants?.close();
    await metadata?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Runs the command against the test's endpoint: exit status, stdout and stderr. */
  const run = async (...args: string[]): Promise<{ code: number; out: string; err: string }> => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await tenantsCommand([...args, '--admin', server.url], (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('puts a tenant from options: principals, tenant policies, namespace policies', async () => {
    const r = await run(
      'put', 'acme',
      '--principal', 'User:alice', '--principal=User:svc-orders',
      '--policy', 'retention.ms=604800000', '--policy', 'producer_byte_rate=1048576',
      '--namespace', 'orders', '--policy', 'ledgerline.encryption.required=true', '--policy', 'max.message.bytes=2097152',
      '--namespace', 'audit', '--policy', 'retention.ms=-1',
      '--namespace', 'scratch',
    );
    expect(r).toMatchObject({ code: 0, err: '' });
    const expected = {
      name: 'acme',
      principals: ['User:alice', 'User:svc-orders'],
      policies: { 'retention.ms': '604800000', producer_byte_rate: '1048576' },
      namespaces: {
        orders: { policies: { 'ledgerline.encryption.required': 'true', 'max.message.bytes': '2097152' } },
        audit: { policies: { 'retention.ms': '-1' } },
        scratch: { policies: {} },
      },
    };
    expect(JSON.parse(r.out)).toEqual(expected);
    expect(tenants.get('acme')).toEqual(expected);
  });

  it('puts a tenant from a file, gets and lists them', async () => {
    const file = join(dir, 'beta.json');
    await writeFile(file, JSON.stringify({ principals: ['User:bob'], policies: { consumer_byte_rate: '2048' } }));
    const put = await run('put', 'beta', '--file', file);
    expect(put.code).toBe(0);
    expect(JSON.parse(put.out)).toEqual({ name: 'beta', principals: ['User:bob'], policies: { consumer_byte_rate: '2048' }, namespaces: {} });
    const get = await run('get', 'beta');
    expect(get.code).toBe(0);
    expect(JSON.parse(get.out)).toEqual(tenants.get('beta'));
    const list = await run('list');
    expect(list.code).toBe(0);
    expect((JSON.parse(list.out) as { name: string }[]).map((t) => t.name)).toEqual(['acme', 'beta']);
    // Options may come before the subcommand.
    const out: string[] = [];
    expect(await tenantsCommand(['--admin', server.url, 'list'], (l) => out.push(l), () => undefined)).toBe(0);
    expect(out.join('\n')).toBe(list.out);
  });

  it('exits 1 with the broker\'s message when it refuses or finds nothing', async () => {
    expect(await run('put', 'gamma', '--principal', 'User:alice')).toEqual({ code: 1, out: '', err: 'ledgerline tenants: principal User:alice already belongs to tenant acme' });
    const unknown = await run('put', 'gamma', '--policy', 'retention.ms=soon');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/^ledgerline tenants: tenant gamma: .*retention\.ms/);
    expect(await run('get', 'gamma')).toEqual({ code: 1, out: '', err: 'ledgerline tenants: tenant gamma does not exist' });
    expect(await run('delete', 'gamma')).toEqual({ code: 1, out: '', err: 'ledgerline tenants: tenant gamma does not exist' });
    expect(tenants.get('gamma')).toBeUndefined();
  });

  it('deletes a tenant', async () => {
    expect(await run('delete', 'beta')).toEqual({ code: 0, out: '', err: '' });
    expect(tenants.get('beta')).toBeUndefined();
  });

  it('exits 1 when the endpoint cannot be reached', async () => {
    const err: string[] = [];
    // A port nothing listens on: the server's, once closed.
    const gone = await startAdminHttp('127.0.0.1', 0, { registry: new Registry(), health: () => ({}) });
    await gone.close();
    expect(await tenantsCommand(['list', '--admin', gone.url], () => undefined, (l) => err.push(l))).toBe(1);
    expect(err[0]).toMatch(/^ledgerline tenants: cannot reach the admin endpoint http:\/\/127\.0\.0\.1:\d+: /);
  });

  it('exits 2 for usage errors, before any request', async () => {
    const usage = async (...args: string[]): Promise<string> => {
      const r = await run(...args);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/\nusage:\n  ledgerline tenants list/);
      return r.err.split('\n')[0]!;
    };
    expect(await usage()).toBe('ledgerline tenants: a subcommand is needed');
    expect(await usage('create', 'x')).toBe('ledgerline tenants: unknown subcommand "create"');
    expect(await usage('get')).toBe('ledgerline tenants: get needs a tenant name');
    expect(await usage('get', 'a', 'b')).toBe('ledgerline tenants: unexpected argument "b"');
    expect(await usage('put', 'x', '--policy', 'retention.ms')).toBe('ledgerline tenants: --policy needs key=value, got "retention.ms"');
    expect(await usage('put', 'x', '--policy', 'a=1', '--policy', 'a=2')).toBe('ledgerline tenants: --policy a is given twice for the tenant');
    expect(await usage('put', 'x', '--file', 'f.json', '--principal', 'User:x')).toMatch(/--file describes the whole tenant/);
    expect(await usage('put', 'x', '--file', join(dir, 'missing.json'))).toMatch(/cannot read --file/);
    expect(await usage('list', '--principal', 'User:x')).toMatch(/are for put/);
    expect(await usage('list', '--bogus', '1')).toBe('ledgerline tenants: unknown option --bogus');
    expect(await usage('list', '--namespace')).toBe('ledgerline tenants: --namespace needs a value');
    const r = await tenantsCommand(['list', '--admin', '127.0.0.1:9644'], () => undefined, () => undefined);
    expect(r).toBe(2);
    expect(tenants.list().map((t) => t.name)).toEqual(['acme']);
  });
});
