/**
 * Which quota applies to a client, and which shared sensor it is measured on: Kafka's DefaultQuotaCallback
 * (ClientQuotaManager.scala), `quotaMetricTags` then `quotaLimit`.
 *
 * The most specific quota configured for (user principal name, client-id) applies, in this order:
 *
 *   1. user + client-id            4. <default user> + client-id         7. client-id
 *   2. user + <default client-id>  5. <default user> + <default client>  8. <default client-id>
 *   3. user                        6. <default user>
 *
 * The metric tags name the entity whose usage is measured against it, so every client the quota covers shares
 * one rate: (user, client-id) for levels 1, 2, 4, 5; (user, "") for 3 and 6; ("", client-id) for 7, 8 and when
 * no quota applies. When only one level of entities has values of the key (QuotaTypes: only client-id, only
 * user, only user+client-id entities), the tags are that level's without looking further, as Kafka
 * optimises; since KAFKA-19282 (Kafka 4.1) these levels follow the quotas configured now. The bound is then
 * looked up from the tags: (user, client-id) tags try 1, 2, 4, 5; (user, "") tags 3, 6; ("", client-id) tags
 * 7, 8; none configured (or an empty user and client-id) means unlimited.
 *
 * Kafka's tags carry the user sanitized (Sanitizer.sanitize, URL-encoding); here they carry the names as they are.
 */
import { QuotaLevel } from './quota-store.js';

/** What resolution reads (src/quota/quota-store.ts): one value of one entity, and the levels with values of a key. */
export interface QuotaLookup {
  /** The value of `key` of the entity with this user and client-id (undefined: no such type; null: its default). */
  quota(user: string | null | undefined, clientId: string | null | undefined, key: string): number | undefined;
  /** QuotaLevel bits: the levels of user/client-id entities with a value of `key`. */
  levels(key: string): number;
}

export interface ResolvedQuota {
  /** The quota bound (bytes/s, or a percentage of one thread for request_percentage), or null: unlimited. */
  readonly bound: number | null;
  /** The sensor's metric tags: the user ("" when the quota is not per user) and client-id ("" when not per client). */
  readonly user: string;
  readonly clientId: string;
}

/** The quota of `key` that applies to `user` (principal name) and `clientId`, and the sensor it is measured on. */
export function resolveQuota(lookup: QuotaLookup, key: string, user: string, clientId: string): ResolvedQuota {
  const [tagUser, tagClient] = metricTags(lookup, key, user, clientId);
  return { bound: quotaLimit(lookup, key, tagUser, tagClient), user: tagUser, clientId: tagClient };
}

/** DefaultQuotaCallback.quotaMetricTags. */
function metricTags(lookup: QuotaLookup, key: string, user: string, clientId: string): [string, string] {
  const levels = lookup.levels(key);
  switch (levels) {
    case QuotaLevel.NONE:
    case QuotaLevel.CLIENT_ID:
      return ['', clientId];
    case QuotaLevel.USER:
      return [user, ''];
    case QuotaLevel.USER_CLIENT_ID:
      return [user, clientId];
  }
  const has = (u: string | null | undefined, c: string | null | undefined): boolean => lookup.quota(u, c, key) !== undefined;
  if (has(user, clientId) || has(user, null)) return [user, clientId];
  if (has(user, undefined)) return [user, ''];
  if (has(null, clientId) || has(null, null)) return [user, clientId];
  if (has(null, undefined)) return [user, ''];
  return ['', clientId];
}

/** DefaultQuotaCallback.quotaLimit: the bound of the most specific entity the tags cover, or null. */
function quotaLimit(lookup: QuotaLookup, key: string, user: string, clientId: string): number | null {
  const q = (u: string | null | undefined, c: string | null | undefined): number | undefined => lookup.quota(u, c, key);
  let bound: number | undefined;
  if (user.length > 0 && clientId.length > 0) bound = q(user, clientId) ?? q(user, null) ?? q(null, clientId) ?? q(null, null);
  else if (user.length > 0) bound = q(user, undefined) ?? q(null, undefined);
  else if (clientId.length > 0) bound = q(undefined, clientId) ?? q(undefined, null);
  return bound ?? null;
}
