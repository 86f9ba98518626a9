/** The tenants' replication.clusters policy: which cluster links a tenant's or namespace's topics may replicate with. */
import { afterEach, describe, expect, it } from 'vitest';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { invalidTenant } from '../../../src/tenants/model.js';
import { TenantStore } from '../../../src/tenants/tenant-store.js';

let store: MetadataStore | null = null;
afterEach(async () => {
  await store?.close();
  store = null;
});

describe('replication.clusters', () => {
  it('is a comma list of link names, at tenant and namespace level; a namespace names only links its tenant allows', () => {
    const tenant = (policies: Record<string, string>, ns: Record<string, string> = {}) => ({ name: 'acme', principals: [], policies, namespaces: { orders: { policies: ns } } });
    expect(invalidTenant(tenant({ 'replication.clusters': 'east, west' }, { 'replication.clusters': 'east' }))).toBeNull();
    expect(invalidTenant(tenant({ 'replication.clusters': '' }))).toBeNull();
    expect(invalidTenant(tenant({ 'replication.clusters': 'east/1' }))).toMatch(/cluster link names/);
    expect(invalidTenant(tenant({ 'replication.clusters': 'east' }, { 'replication.clusters': 'east,west' }))).toMatch(/west not among the tenant's/);
  });

  it("allows any link when unset, the namespace's list over the tenant's, none when empty", async () => {
    store = await openMetadataStore({ store: 'memory', dir: '/unused' });
    const tenants = new TenantStore(store, (err) => {
      throw err;
    });
    await tenants.load();
    await tenants.put({ name: 'acme', principals: [], policies: { 'replication.clusters': 'east,west' }, namespaces: { orders: { policies: { 'replication.clusters': 'east' } }, closed: { policies: { 'replication.clusters': '' } } } });
    expect(tenants.replicationAllowed('other.topic', 'anywhere')).toBe(true);
    expect(tenants.replicationAllowed('acme.billing.x', 'west')).toBe(true);
    expect(tenants.replicationAllowed('acme.billing.x', 'south')).toBe(false);
    expect(tenants.replicationAllowed('acme.orders.x', 'east')).toBe(true);
    expect(tenants.replicationAllowed('acme.orders.x', 'west')).toBe(false);
    expect(tenants.replicationAllowed('acme.closed.x', 'east')).toBe(false);
    await tenants.close();
  });
});
