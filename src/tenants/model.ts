/**
 * Tenants, Pulsar's tenant → namespace → topic hierarchy mapped onto Kafka names: the tenant `acme` owns every
 * topic, group and transactional id named `acme.<namespace>.<rest>` (Pulsar's persistent://acme/<namespace>/<rest>,
 * as Kafka-on-Pulsar maps it, with `.` for `/`), and a set of principals confined to those names.
 *
 *   tenant acme   principals User:alice, User:svc-orders
 *     policies    retention.ms=604800000, producer_byte_rate=1048576          (the tenant's)
 *     namespace orders   policies ledgerline.encryption.required=true        (acme.orders.*)
 *
 * Policies: a topic config (retention.ms, ledgerline.encryption.required, max.message.bytes, ...) is a default
 * for the topics under the tenant or namespace, over the broker's and under the topic's own override; a quota
 * key (producer_byte_rate, consumer_byte_rate, request_percentage) at the tenant level is a quota the tenant's
 * principals share when no user or client-id quota applies to them.
 */
import { TOPIC_CONFIG_BY_NAME, validateConfigValue } from '../cluster/config-defs.js';

/** A tenant as stored and as the admin API shows it. */
export interface Tenant {
  readonly name: string;
  /** The principals (`User:alice`) confined to the tenant's names. */
  readonly principals: readonly string[];
  /** Policies of the tenant: topic config defaults and quotas. */
  readonly policies: Readonly<Record<string, string>>;
  /** Policies per namespace (topic config defaults only). */
  readonly namespaces: Readonly<Record<string, { readonly policies: Readonly<Record<string, string>> }>>;
}

/** The separator of tenant, namespace and the rest of a name. */
export const TENANT_SEPARATOR = '.';

/** The quota keys a tenant policy may set (Kafka's client quota keys): shared by the tenant's principals. */
export const TENANT_QUOTA_KEYS: ReadonlySet<string> = new Set(['producer_byte_rate', 'consumer_byte_rate', 'request_percentage']);

/**
 * The cluster links (src/replication/) a tenant's or namespace's topics may replicate with, mirrored from or
 * active-active with, as Pulsar's tenant allowed clusters and namespace replication clusters: link names separated by
 * commas, empty for none; unset, any. A namespace's must be among its tenant's.
 */
export const REPLICATION_CLUSTERS_POLICY = 'replication.clusters';

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const LINK_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** The link names of a replication.clusters value. */
export function replicationClusters(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** Why `t` cannot be stored, or null. */
export function invalidTenant(t: Tenant): string | null {
  if (!NAME.test(t.name)) return `tenant name ${JSON.stringify(t.name)} must be 1-64 of [a-zA-Z0-9_-]`;
  if (!Array.isArray(t.principals)) return 'principals must be a list';
  for (const p of t.principals) {
    if (typeof p !== 'string' || !/^[^:]+:.+$/.test(p)) return `principal ${JSON.stringify(p)} must be <type>:<name>, as User:alice`;
  }
  const policyError = (policies: Record<string, string>, where: string, quotas: boolean): string | null => {
    if (policies === null || typeof policies !== 'object') return `${where}: policies must be an object`;
    for (const [key, value] of Object.entries(policies)) {
      if (typeof value !== 'string') return `${where}: policy ${key} must be a string`;
      if (key === REPLICATION_CLUSTERS_POLICY) {
        const bad = replicationClusters(value).find((l) => !LINK_NAME.test(l));
        if (bad !== undefined) return `${where}: ${key} must list cluster link names separated by commas, got ${JSON.stringify(bad)}`;
        continue;
      }
      if (TENANT_QUOTA_KEYS.has(key)) {
        if (!quotas) return `${where}: quota ${key} applies to a tenant, not a namespace`;
        const n = Number(value);
        if (!Number.isFinite(n) || n <= 0) return `${where}: quota ${key} must be a positive number`;
        if (key !== 'request_percentage' && !Number.isInteger(n)) return `${where}: quota ${key} must be a whole number of bytes per second`;
        continue;
      }
      const def = TOPIC_CONFIG_BY_NAME.get(key);
      if (!def) return `${where}: unknown policy ${key}: a topic config, ${REPLICATION_CLUSTERS_POLICY} or one of ${[...TENANT_QUOTA_KEYS].join(', ')}`;
      const err = validateConfigValue(def, value);
      if (err) return `${where}: ${err}`;
    }
    return null;
  };
  const own = policyError(t.policies, `tenant ${t.name}`, true);
  if (own) return own;
  if (t.namespaces === null || typeof t.namespaces !== 'object') return 'namespaces must be an object';
  for (const [ns, n] of Object.entries(t.namespaces)) {
    if (!NAME.test(ns)) return `namespace name ${JSON.stringify(ns)} must be 1-64 of [a-zA-Z0-9_-]`;
    const err = policyError(n?.policies, `namespace ${t.name}${TENANT_SEPARATOR}${ns}`, false);
    if (err) return err;
    const own = n.policies[REPLICATION_CLUSTERS_POLICY];
    const allowed = t.policies[REPLICATION_CLUSTERS_POLICY];
    if (own !== undefined && allowed !== undefined) {
      const outside = replicationClusters(own).filter((l) => !replicationClusters(allowed).includes(l));
      if (outside.length > 0) return `namespace ${t.name}${TENANT_SEPARATOR}${ns}: ${REPLICATION_CLUSTERS_POLICY} ${outside.join(', ')} not among the tenant's (${allowed})`;
    }
  }
  return null;
}

/** The tenant name a resource name falls under (its first segment), or null when it has no separator. */
export function tenantPrefixOf(name: string): string | null {
  const i = name.indexOf(TENANT_SEPARATOR);
  return i > 0 ? name.slice(0, i) : null;
}

/** The namespace of a name under a tenant (its second segment), or null. */
export function namespaceOf(name: string): string | null {
  const first = name.indexOf(TENANT_SEPARATOR);
  if (first <= 0) return null;
  const second = name.indexOf(TENANT_SEPARATOR, first + 1);
  return second > first + 1 ? name.slice(first + 1, second) : null;
}
