import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AdminRoute } from '../../../src/observability/admin-http.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { tenantAdminRoutes, TENANTS_PATH } from '../../../src/tenants/admin-routes.js';
import { TenantStore } from '../../../src/tenants/tenant-store.js';

describe('tenant admin routes', () => {
  let metadata: MetadataStore;
  let tenants: TenantStore;
  let route: AdminRoute;
  const watchErrors: Error[] = [];

  beforeEach(async () => {
    metadata = await openMetadataStore({ store: 'memory', dir: '/unused' });
    tenants = new TenantStore(metadata, (err) => watchErrors.push(err));
    await tenants.load();
    route = tenantAdminRoutes(tenants).get(TENANTS_PATH)!;
  });
  afterEach(async () => {
    await tenants.close();
    await metadata.close();
    expect(watchErrors).toEqual([]);
  });

  const acme = {
    principals: ['User:alice', 'User:svc-orders'],
    policies: { 'retention.ms': '604800000', producer_byte_rate: '1048576' },
    namespaces: { orders: { policies: { 'ledgerline.encryption.required': 'true' } } },
  };

  it('serves GET on the list, GET, PUT and DELETE on a tenant', () => {
    expect(route.methods('/v1/tenants')).toEqual(['GET']);
    expect(route.methods('/v1/tenants/acme')).toEqual(['GET', 'PUT', 'DELETE']);
  });

  it('creates, shows, lists, replaces and deletes a tenant', async () => {
    expect(await route.handle('GET', '/v1/tenants', undefined)).toEqual({ status: 200, json: [] });
    const put = await route.handle('PUT', '/v1/tenants/acme', acme);
    expect(put).toEqual({ status: 200, json: { name: 'acme', ...acme } });
    expect(tenants.tenantOf('User:alice')).toBe('acme');
    expect(tenants.policy('acme.orders.payments', 'ledgerline.encryption.required')).toEqual({ value: 'true', level: 'namespace' });
    expect(await route.handle('GET', '/v1/tenants/acme', undefined)).toEqual({ status: 200, json: { name: 'acme', ...acme } });
    await route.handle('PUT', '/v1/tenants/beta', { principals: ['User:bob'] });
    const list = await route.handle('GET', '/v1/tenants', undefined);
    expect((list.json as { name: string }[]).map((t) => t.name)).toEqual(['acme', 'beta']);
    // A PUT replaces the whole tenant; missing fields are empty.
    expect(await route.handle('PUT', '/v1/tenants/acme', { principals: ['User:alice'] })).toEqual({
      status: 200,
      json: { name: 'acme', principals: ['User:alice'], policies: {}, namespaces: {} },
    });
    expect(tenants.tenantOf('User:svc-orders')).toBeUndefined();
    // What GET shows can be PUT back.
    const shown = (await route.handle('GET', '/v1/tenants/beta', undefined)).json;
    expect((await route.handle('PUT', '/v1/tenants/beta', shown)).status).toBe(200);
    expect(await route.handle('DELETE', '/v1/tenants/acme', undefined)).toEqual({ status: 204 });
    expect(tenants.get('acme')).toBeUndefined();
    expect(tenants.tenantOf('User:alice')).toBeUndefined();
    // It is in the metadata store, not only in this TenantStore.
    const other = new TenantStore(metadata, (err) => watchErrors.push(err));
    await other.load();
    expect(other.list().map((t) => t.name)).toEqual(['beta']);
    await other.close();
  });

  it('answers 404 for a tenant that does not exist', async () => {
    expect(await route.handle('GET', '/v1/tenants/nobody', undefined)).toEqual({ status: 404, json: { error: 'tenant nobody does not exist' } });
    expect(await route.handle('DELETE', '/v1/tenants/nobody', undefined)).toEqual({ status: 404, json: { error: 'tenant nobody does not exist' } });
    expect((await route.handle('GET', '/v1/tenants/a/b', undefined)).status).toBe(404);
    expect((await route.handle('PUT', '/v1/tenants/a/b', acme)).status).toBe(404);
  });

  it('answers 400 with the store\'s message for a tenant it refuses', async () => {
    const refused = async (name: string, body: unknown): Promise<string> => {
      const r = await route.handle('PUT', `/v1/tenants/${name}`, body);
      expect(r.status).toBe(400);
      return (r.json as { error: string }).error;
    };
    expect(await refused('bad%20name', {})).toMatch(/tenant name "bad name" must be 1-64 of/);
    expect(await refused('acme', { principals: ['alice'] })).toMatch(/principal "alice" must be <type>:<name>/);
    expect(await refused('acme', { policies: { 'no.such.config': '1' } })).toMatch(/unknown policy no.such.config/);
    expect(await refused('acme', { policies: { producer_byte_rate: '-1' } })).toMatch(/quota producer_byte_rate must be a positive number/);
    expect(await refused('acme', { namespaces: { orders: { policies: { producer_byte_rate: '1' } } } })).toMatch(/applies to a tenant, not a namespace/);
    await route.handle('PUT', '/v1/tenants/acme', acme);
    expect(await refused('beta', { principals: ['User:alice'] })).toBe('principal User:alice already belongs to tenant acme');
    // The body's shape, before the store.
    expect(await refused('beta', undefined)).toMatch(/a tenant needs a body/);
    expect(await refused('beta', [])).toBe('the body must be a JSON object');
    expect(await refused('beta', { principal: ['User:bob'] })).toMatch(/unknown field principal/);
    expect(await refused('beta', { name: 'gamma' })).toBe('the body names tenant "gamma", the path "beta"');
    expect(tenants.list().map((t) => t.name)).toEqual(['acme']);
  });
});
