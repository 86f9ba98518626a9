/**
 * Tenants in the metadata store, followed with a watch so that a tenant created, changed or deleted through any
 * broker applies on all of them:
 *
 *   /tenants/<name>   {"formatVersion":1,"name":"acme","principals":["User:alice"],
 *                      "policies":{"retention.ms":"604800000"},"namespaces":{"orders":{"policies":{...}}}}
 *
 * What the rest of the broker asks (model.ts has the model):
 *   tenantOf(principal)        the tenant a principal is confined to, or undefined
 *   policy(topic, config)      a topic config's tenant or namespace default for a topic name, or undefined
 *   quota(principal, key)      the tenant quota its principals share, or undefined
 *   replicationAllowed(topic, link)  whether the topic may replicate with a cluster link (replication.clusters)
 */
import type { MetadataStore } from '../metadata/types.js';
import { follow, OwnWrites, type Following } from '../metadata/follow.js';
import { invalidTenant, namespaceOf, REPLICATION_CLUSTERS_POLICY, replicationClusters, TENANT_QUOTA_KEYS, tenantPrefixOf, type Tenant } from './model.js';

export const TENANTS_PREFIX = '/tenants/';

/** Thrown for a tenant the admin API refuses (answered 400 with the message). */
export class TenantError extends Error {}

interface Stored extends Tenant {
  readonly formatVersion: 1;
}

export class TenantStore {
  private readonly tenants = new Map<string, Tenant>();
  private readonly byPrincipal = new Map<string, string>();
  /** The quota keys some tenant sets: asked on every request by the quota managers, so kept, not scanned. */
  private quotaKeys = new Set<string>();
  private readonly listeners: (() => void)[] = [];
  private following: Following | null = null;
  /** This broker's own tenant writes, by name, until the store is past them (follow.ts). */
  private readonly ownWrites = new OwnWrites();

  constructor(
    private readonly store: MetadataStore,
    private readonly onWatchError: (err: Error) => void,
  ) {}

  /** Loads every tenant, then follows the store's changes (follow.ts). */
  async load(): Promise<void> {
    this.following = await follow(
      this.store,
      { prefix: TENANTS_PREFIX },
      {
        reset: (kvs, revision) => {
          const names = new Set(kvs.map((kv) => kv.key.slice(TENANTS_PREFIX.length)));
          for (const name of [...this.tenants.keys()]) if (!names.has(name) && !this.ownWrites.after(name, revision)) this.forget(name);
          for (const kv of kvs) {
            const name = kv.key.slice(TENANTS_PREFIX.length);
            if (!this.ownWrites.after(name, kv.modRevision)) this.apply(name, kv.value);
          }
          this.ownWrites.settled(revision);
          this.changed();
        },
        changes: (events, revision) => {
          for (const e of events) {
            const name = e.kv.key.slice(TENANTS_PREFIX.length);
            if (this.ownWrites.after(name, e.kv.modRevision)) continue;
            if (e.type === 'delete') this.forget(name);
            else this.apply(name, e.kv.value);
          }
          this.ownWrites.settled(revision);
          this.changed();
        },
        error: (err) => this.onWatchError(err),
      },
    );
  }

  async close(): Promise<void> {
    await this.following?.cancel();
    this.following = null;
  }

  /** Called after the tenants changed, here or through another broker. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  get size(): number {
    return this.tenants.size;
  }

  list(): Tenant[] {
    return [...this.tenants.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  get(name: string): Tenant | undefined {
    return this.tenants.get(name);
  }

  /** Creates or replaces a tenant. A principal may belong to one tenant only. Throws TenantError. */
  async put(t: Tenant): Promise<void> {
    const tenant: Tenant = { name: t.name, principals: t.principals ?? [], policies: t.policies ?? {}, namespaces: t.namespaces ?? {} };
    const invalid = invalidTenant(tenant);
    if (invalid) throw new TenantError(invalid);
    for (const p of tenant.principals) {
      const other = this.byPrincipal.get(p);
      if (other !== undefined && other !== tenant.name) throw new TenantError(`principal ${p} already belongs to tenant ${other}`);
    }
    const value: Stored = { formatVersion: 1, ...tenant };
    const { revision } = await this.store.put(TENANTS_PREFIX + tenant.name, Buffer.from(JSON.stringify(value)));
    this.apply(tenant.name, Buffer.from(JSON.stringify(value)));
    this.ownWrites.wrote(tenant.name, revision);
    this.changed();
  }

  /** Deletes a tenant (its topics stay, no longer confined or defaulted); false when there was none. */
  async delete(name: string): Promise<boolean> {
    const res = await this.store.delete(TENANTS_PREFIX + name);
    this.forget(name);
    this.ownWrites.wrote(name, res.revision);
    this.changed();
    return res.deleted > 0;
  }

  /** The tenant `principal` (`User:alice`) is confined to, or undefined. */
  tenantOf(principal: string): string | undefined {
    return this.byPrincipal.get(principal);
  }

  /** The value of topic config `config` that the topic's namespace, else its tenant, gives it, and which. */
  policy(topic: string, config: string): { value: string; level: 'namespace' | 'tenant' } | undefined {
    const tenant = this.ownerOf(topic);
    if (!tenant) return undefined;
    const ns = namespaceOf(topic);
    const fromNamespace = ns === null ? undefined : tenant.namespaces[ns]?.policies[config];
    if (fromNamespace !== undefined) return { value: fromNamespace, level: 'namespace' };
    const fromTenant = TENANT_QUOTA_KEYS.has(config) ? undefined : tenant.policies[config];
    return fromTenant === undefined ? undefined : { value: fromTenant, level: 'tenant' };
  }

  /** Whether the topic's namespace, else tenant, lets it replicate with cluster link `link` (unset: any link). */
  replicationAllowed(topic: string, link: string): boolean {
    const p = this.policy(topic, REPLICATION_CLUSTERS_POLICY);
    return p === undefined || replicationClusters(p.value).includes(link);
  }

  /** The tenant quota `key` the principal's tenant sets, shared by its principals, or undefined. */
  quota(principal: string, key: string): { tenant: string; bound: number } | undefined {
    const name = this.byPrincipal.get(principal);
    const value = name === undefined ? undefined : this.tenants.get(name)?.policies[key];
    return value === undefined ? undefined : { tenant: name!, bound: Number(value) };
  }

  /** Whether any tenant sets quota `key`. */
  hasQuota(key: string): boolean {
    return this.quotaKeys.has(key);
  }

  /** The tenant owning a resource name (its first segment names one), or undefined. */
  ownerOf(name: string): Tenant | undefined {
    const prefix = tenantPrefixOf(name);
    return prefix === null ? undefined : this.tenants.get(prefix);
  }

  private apply(name: string, value: Uint8Array): void {
    try {
      const s = JSON.parse(Buffer.from(value).toString('utf8')) as Stored;
      if (s.formatVersion !== 1) throw new Error(`unknown formatVersion ${String(s.formatVersion)}`);
      const tenant: Tenant = { name: s.name, principals: s.principals, policies: s.policies, namespaces: s.namespaces };
      const invalid = invalidTenant(tenant);
      if (invalid || tenant.name !== name) throw new Error(invalid ?? `stored under ${name} but named ${tenant.name}`);
      this.forget(name);
      this.tenants.set(name, tenant);
      for (const p of tenant.principals) this.byPrincipal.set(p, name);
    } catch (err) {
      this.onWatchError(new Error(`tenant record ${TENANTS_PREFIX}${name} does not decode: ${(err as Error).message}`));
    }
  }

  private forget(name: string): void {
    const old = this.tenants.get(name);
    if (!old) return;
    this.tenants.delete(name);
    for (const p of old.principals) if (this.byPrincipal.get(p) === name) this.byPrincipal.delete(p);
  }

  private changed(): void {
    this.quotaKeys = new Set([...this.tenants.values()].flatMap((t) => Object.keys(t.policies).filter((k) => TENANT_QUOTA_KEYS.has(k))));
    for (const l of this.listeners) l();
  }
}
