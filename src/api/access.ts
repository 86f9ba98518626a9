/**
 * What a handler asks about the requester's rights: Kafka's AuthHelper, bound to one request (its principal,
 * client address and API). Every handler authorizes as KafkaApis does for its API, through `ctx.access`:
 *
 *   ctx.access.authorize(AclOperation.READ, ResourceType.GROUP, groupId)         one resource
 *   ctx.access.allowedNames(AclOperation.WRITE, ResourceType.TOPIC, names)       filterByAuthorized
 *   ctx.access.authorizedOperations(ResourceType.TOPIC, name)                    KIP-430 bit field
 *
 * With no authorizer configured (authorizer.class.name empty) everything is allowed, and the authorized
 * operations are every operation the resource type supports, as Kafka answers then.
 */
import type { AclAuthorizer } from '../security/acl/authorizer.js';
import { CLUSTER_NAME, operationBits, operationName, resourceTypeLabel, ResourceType, SUPPORTED_OPERATIONS } from '../security/acl/model.js';
import type { Principal } from './services.js';

export { AclOperation, ResourceType, CLUSTER_NAME } from '../security/acl/model.js';

export interface AuthorizeOptions {
  /** Log a denial in the audit log at info (false when the answer only filters or reports: logIfDenied). */
  readonly logIfDenied?: boolean;
}

export interface Access {
  /** True when an authorizer is configured. */
  readonly enabled: boolean;
  /** May the requester do `operation` on the LITERAL resource? */
  authorize(operation: number, resourceType: number, name: string, opts?: AuthorizeOptions): boolean;
  /** authorize on the CLUSTER resource. */
  authorizeCluster(operation: number, opts?: AuthorizeOptions): boolean;
  /** The names among `names` the requester may do `operation` on (Kafka's filterByAuthorized). */
  allowedNames(operation: number, resourceType: number, names: Iterable<string>, opts?: AuthorizeOptions): Set<string>;
  /** Authorizer.authorizeByResourceType: may the requester do `operation` on some resource of the type? */
  authorizeByResourceType(operation: number, resourceType: number): boolean;
  /** KIP-430: the operations of the resource the requester may do, as a bit field. */
  authorizedOperations(resourceType: number, name: string): number;
}

/** Where denials and (at debug) grants are written: Kafka's kafka.authorizer.logger. */
export interface AuditLog {
  info(obj: object, msg: string): void;
  debug(obj: object, msg: string): void;
  isLevelEnabled(level: string): boolean;
}

/** Everything allowed: no authorizer is configured. */
export const ALLOW_ALL: Access = {
  enabled: false,
  authorize: () => true,
  authorizeCluster: () => true,
  allowedNames: (_op, _type, names) => new Set(names),
  authorizeByResourceType: () => true,
  authorizedOperations: (resourceType) => operationBits(SUPPORTED_OPERATIONS.get(resourceType) ?? []),
};

/** The client's IP address as Kafka prints it (InetAddress.getHostAddress): no port, IPv4-mapped IPv6 as IPv4. */
export function hostOf(remoteAddress: string): string {
  const host = remoteAddress.replace(/:\d+$/, '');
  return host.startsWith('::ffff:') && host.includes('.') ? host.slice('::ffff:'.length) : host;
}

/**
 * An Access from its single-resource decision (AuthHelper's shape): the cluster check and filterByAuthorized
 * are that decision applied to the cluster and to each distinct name.
 */
export function accessOf(
  authorize: Access['authorize'],
  rest: Pick<Access, 'authorizeByResourceType' | 'authorizedOperations'>,
): Access {
  return {
    enabled: true,
    authorize,
    authorizeCluster: (operation, opts) => authorize(operation, ResourceType.CLUSTER, CLUSTER_NAME, opts),
    allowedNames: (operation, resourceType, names, opts) => {
      const out = new Set<string>();
      for (const name of new Set(names)) if (authorize(operation, resourceType, name, opts)) out.add(name);
      return out;
    },
    ...rest,
  };
}

/** The rights of one request's requester under `authorizer`. */
export function requestAccess(authorizer: AclAuthorizer, principal: Principal, remoteAddress: string, apiName: string, audit: AuditLog): Access {
  const who = { principal: `${principal.type}:${principal.name}`, host: hostOf(remoteAddress) };
  const authorize = (operation: number, resourceType: number, name: string, opts?: AuthorizeOptions): boolean => {
    const d = authorizer.authorize(who, operation, resourceType, name);
    if (!d.allowed && (opts?.logIfDenied ?? true)) {
      audit.info(
        { principal: who.principal, operation: operationName(operation), host: who.host, resource: `${resourceTypeLabel(resourceType)}:LITERAL:${name}`, api: apiName, rule: d.rule },
        `Principal = ${who.principal} is Denied operation = ${operationName(operation)} from host = ${who.host} on resource = ${resourceTypeLabel(resourceType)}:LITERAL:${name} for request = ${apiName}`,
      );
    } else if (d.allowed && audit.isLevelEnabled('debug')) {
      audit.debug({ principal: who.principal, operation: operationName(operation), resource: `${resourceTypeLabel(resourceType)}:LITERAL:${name}`, api: apiName, rule: d.rule }, 'authorized');
    }
    return d.allowed;
  };
  return accessOf(authorize, {
    authorizeByResourceType: (operation, resourceType) => authorizer.authorizeByResourceType(who, operation, resourceType),
    authorizedOperations: (resourceType, name) => authorizer.authorizedOperations(who, resourceType, name),
  });
}
