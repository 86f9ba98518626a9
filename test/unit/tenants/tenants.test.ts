import { afterEach, describe, expect, it } from 'vitest';
import { ALLOW_ALL } from '../../../src/api/access.js';
import { ConfigSource, TOPIC_CONFIG_BY_NAME } from '../../../src/cluster/config-defs.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig } from '../../../src/config.js';
import { MetadataCompactedError } from '../../../src/metadata/errors.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { createClientQuotaManagers } from '../../../src/quota/client-quota-manager.js';
import { AclOperation, ResourceType } from '../../../src/security/acl/model.js';
import { confine } from '../../../src/tenants/confinement.js';
import { namespaceOf, tenantPrefixOf } from '../../../src/tenants/model.js';
import { TenantError, TenantStore } from '../../../src/tenants/tenant-store.js';
import { FaultyStore, until } from '../metadata/support.js';

let store: MetadataStore | undefined;
const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) await o.close();
  await store?.close();
  store = undefined;
});

async function tenants(): Promise<TenantStore> {
  store ??= await openMetadataStore({ store: 'memory', dir: '/unused' });
  const t = new TenantStore(store, (err) => {
    throw err;
  });
  opened.push(t);
  await t.load();
  return t;
}

const acme = { name: 'acme', principals: ['User:alice'], policies: { 'retention.ms': '3600000', producer_byte_rate: '1024' }, namespaces: { orders: { policies: { 'retention.ms': '60000', 'ledgerline.encryption.required': 'true' } } } };

describe('tenant names', () => {
  it('reads the tenant and namespace of a name', () => {
    expect([tenantPrefixOf('acme.orders.eu'), namespaceOf('acme.orders.eu')]).toEqual(['acme', 'orders']);
    expect([tenantPrefixOf('plain'), namespaceOf('acme.x'), namespaceOf('.x.y')]).toEqual([null, null, null]);
  });
});

describe('TenantStore', () => {
  it('stores tenants, refuses bad ones and a principal in two tenants, and follows another broker', async () => {
    const a = await tenants();
    const b = await tenants();
    await a.put(acme);
    await expect(a.put({ ...acme, name: 'a.b' })).rejects.toThrow(TenantError);
    await expect(a.put({ ...acme, name: 'globex', namespaces: {} })).rejects.toThrow('principal User:alice already belongs to tenant acme');
    await expect(a.put({ name: 'globex', principals: ['bob'], policies: {}, namespaces: {} })).rejects.toThrow('must be <type>:<name>');
    await expect(a.put({ name: 'globex', principals: [], policies: { 'retention.ms': 'soon' }, namespaces: {} })).rejects.toThrow('retention.ms');
    await expect(a.put({ name: 'globex', principals: [], policies: { 'no.such': '1' }, namespaces: {} })).rejects.toThrow('unknown policy no.such');
    await expect(a.put({ name: 'globex', principals: [], policies: {}, namespaces: { x: { policies: { producer_byte_rate: '5' } } } })).rejects.toThrow('applies to a tenant, not a namespace');
    const deadline = Date.now() + 5000;
    while (b.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(b.tenantOf('User:alice')).toBe('acme');
    expect(b.policy('acme.orders.eu', 'retention.ms')).toEqual({ value: '60000', level: 'namespace' });
    expect(b.policy('acme.billing.x', 'retention.ms')).toEqual({ value: '3600000', level: 'tenant' });
    expect(b.policy('acme.billing.x', 'producer_byte_rate')).toBeUndefined();
    expect(b.policy('other.orders.x', 'retention.ms')).toBeUndefined();
    expect(b.quota('User:alice', 'producer_byte_rate')).toEqual({ tenant: 'acme', bound: 1024 });
    expect(await a.delete('acme')).toBe(true);
    expect(a.tenantOf('User:alice')).toBeUndefined();
    expect(await a.delete('acme')).toBe(false);
  });

  it('gives topics under a tenant its policies as their configs, under their own overrides', async () => {
    const t = await tenants();
    await t.put(acme);
    const topics = new TopicManager(store!, loadConfig({ overrides: [['log.dirs', '/unused']] }));
    opened.push(topics);
    topics.useTopicPolicies(t);
    await topics.load();
    const eu = await topics.create('acme.orders.eu', { partitions: 1, replicationFactor: -1, configs: {} });
    const own = await topics.create('acme.orders.us', { partitions: 1, replicationFactor: -1, configs: { 'retention.ms': '5000' } });
    const plain = await topics.create('plain', { partitions: 1, replicationFactor: -1, configs: {} });
    expect(topics.resolve(eu, TOPIC_CONFIG_BY_NAME.get('retention.ms')!)).toMatchObject({ value: '60000', source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    expect(topics.configValue(eu, 'ledgerline.encryption.required')).toBe('true');
    expect(topics.configValue(own, 'retention.ms')).toBe('5000');
    expect(topics.resolve(plain, TOPIC_CONFIG_BY_NAME.get('retention.ms')!)).toMatchObject({ value: '604800000', source: ConfigSource.DEFAULT_CONFIG });
    // The broker's default of a topic config (the admin endpoint's /v1/encryption reads it) is no tenant's.
    expect(topics.defaultConfigValue('ledgerline.encryption.required')).toBe('false');
  });
});

describe('confinement', () => {
  it('confines a tenant\'s principal to its names and to idempotent writes on the cluster', () => {
    const logged: string[] = [];
    const access = confine(ALLOW_ALL, 'acme', 'User:alice', 'Produce', { info: (_o, msg) => void logged.push(msg) });
    expect(access.authorize(AclOperation.WRITE, ResourceType.TOPIC, 'acme.orders.eu')).toBe(true);
    expect(access.authorize(AclOperation.WRITE, ResourceType.TOPIC, 'globex.orders.eu')).toBe(false);
    expect(access.authorize(AclOperation.READ, ResourceType.GROUP, 'acmeX.g')).toBe(false);
    expect(access.authorize(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, 'acme.tx')).toBe(true);
    expect(access.authorizeCluster(AclOperation.IDEMPOTENT_WRITE)).toBe(true);
    expect(access.authorizeCluster(AclOperation.CREATE, { logIfDenied: false })).toBe(false);
    expect(access.authorizeCluster(AclOperation.ALTER_CONFIGS)).toBe(false);
    expect([...access.allowedNames(AclOperation.DESCRIBE, ResourceType.TOPIC, ['acme.a', 'plain', 'globex.b'], { logIfDenied: false })]).toEqual(['acme.a']);
    expect(access.authorizedOperations(ResourceType.TOPIC, 'globex.b')).toBe(0);
    expect(access.authorizedOperations(ResourceType.CLUSTER, 'kafka-cluster')).toBe(1 << AclOperation.IDEMPOTENT_WRITE);
    expect(logged).toHaveLength(3);
    expect(logged[0]).toContain('Principal = User:alice of tenant acme is Denied operation = WRITE on resource = Topic:LITERAL:globex.orders.eu');
  });
});

describe('tenant quotas', () => {
  it('share a tenant\'s quota among its principals when no user or client-id quota applies', async () => {
    const t = await tenants();
    await t.put({ ...acme, principals: ['User:alice', 'User:svc'] });
    const managers = createClientQuotaManagers({ quota: () => undefined, levels: () => 0 }, { numSamples: 11, windowSizeSeconds: 1 }, t);
    expect(managers.produce.quotasEnabled).toBe(true);
    expect(managers.produce.quota('alice', 'c1')).toMatchObject({ bound: 1024 });
    expect(managers.produce.quota('bob', 'c1')).toMatchObject({ bound: null });
    // 10 s of quota at once is within it (a new sensor's rate spans 10 s), then both principals are throttled.
    expect(managers.produce.recordAndGetThrottleTimeMs('alice', 'c1', 10_240, 1000)).toBe(0);
    expect(managers.produce.recordAndGetThrottleTimeMs('svc', 'c2', 10_240, 1000)).toBeGreaterThan(9000);
  });
});

describe('TenantStore reading the store again', () => {
  it('keeps what this broker wrote after the read: a tenant it created stays, one it deleted does not come back', async () => {
    const inner = await openMetadataStore({ store: 'memory', dir: '/unused' });
    store = inner;
    const faulty = new FaultyStore(inner);
    const errors: Error[] = [];
    const here = new TenantStore(faulty.asStore(), (err) => errors.push(err));
    opened.push(here);
    await here.load();
    const other = await tenants();
    await other.put({ name: 'gone', principals: [], policies: {}, namespaces: {} });
    await other.put({ name: 'deleted', principals: [], policies: {}, namespaces: {} });
    const names = (): string => here.list().map((t) => t.name).join();
    await until(() => names() === 'deleted,gone', 'both tenants here');

    const read = faulty.holdNextRead();
    let afterReset: string | null = null;
    const watch = faulty.watch.bind(faulty);
    faulty.watch = (...args) => {
      afterReset ??= names();
      return watch(...args);
    };
    faulty.endWatch(new MetadataCompactedError(3, 4));
    await other.delete('gone'); // seen by the read again
    await read.started;
    await here.put({ name: 'mine', principals: ['User:bob'], policies: {}, namespaces: {} });
    await here.delete('deleted');
    read.release();
    await until(() => afterReset !== null, 'the read again handed over');
    expect(afterReset).toBe('mine');
    expect(here.ownerOf('mine.orders')?.name).toBe('mine');
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
  });
});
