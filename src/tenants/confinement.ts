/**
 * A tenant's principals are confined to its names (model.ts): whatever the ACLs (or their absence) allow, a
 * principal of tenant `acme` may act on topics, groups and transactional ids named `acme.…` only, and on the
 * cluster only to write idempotently (InitProducerId): it cannot create topics elsewhere (CreateTopics then
 * checks CREATE per topic), see other tenants' topics in Metadata, list their groups, or change configs,
 * ACLs, quotas or users. Every other decision stays the authorizer's. Principals in no tenant are unaffected.
 *
 * Applied at the dispatch seam over the request's Access (src/api/access.ts), so every handler's checks and
 * filters (Metadata, ListGroups, ListTransactions, OffsetFetch) follow it without knowing tenants exist.
 */
import { accessOf, type Access, type AuthorizeOptions } from '../api/access.js';
import { AclOperation, operationBits, operationName, ResourceType, resourceTypeLabel, SUPPORTED_OPERATIONS } from '../security/acl/model.js';
import { TENANT_SEPARATOR } from './model.js';

export interface ConfinementLog {
  info(obj: object, msg: string): void;
}

/** `inner` narrowed to tenant `tenant`'s names, for `principal`; denials logged as the authorizer logs them. */
export function confine(inner: Access, tenant: string, principal: string, apiName: string, log: ConfinementLog): Access {
  const prefix = tenant + TENANT_SEPARATOR;
  const within = (operation: number, resourceType: number, name: string): boolean => {
    switch (resourceType) {
      case ResourceType.TOPIC:
      case ResourceType.GROUP:
      case ResourceType.TRANSACTIONAL_ID:
        return name.startsWith(prefix);
      case ResourceType.CLUSTER:
        return operation === AclOperation.IDEMPOTENT_WRITE;
      default:
        return false;
    }
  };
  const authorize = (operation: number, resourceType: number, name: string, opts?: AuthorizeOptions): boolean => {
    if (!within(operation, resourceType, name)) {
      if (opts?.logIfDenied ?? true) {
        log.info(
          { principal, tenant, operation: operationName(operation), resource: `${resourceTypeLabel(resourceType)}:LITERAL:${name}`, api: apiName },
          `Principal = ${principal} of tenant ${tenant} is Denied operation = ${operationName(operation)} on resource = ${resourceTypeLabel(resourceType)}:LITERAL:${name} for request = ${apiName}: outside the tenant`,
        );
      }
      return false;
    }
    return inner.authorize(operation, resourceType, name, opts);
  };
  return accessOf(authorize, {
    // KIP-679's "WRITE on some topic" can only mean one of the tenant's.
    authorizeByResourceType: (operation, resourceType) => resourceType !== ResourceType.CLUSTER && inner.authorizeByResourceType(operation, resourceType),
    authorizedOperations: (resourceType, name) => {
      const ops = (SUPPORTED_OPERATIONS.get(resourceType) ?? []).filter((op) => within(op, resourceType, name));
      return inner.authorizedOperations(resourceType, name) & operationBits(ops);
    },
  });
}
