/**
 * Kafka's ACL model (org.apache.kafka.common.acl, org.apache.kafka.common.resource): the codes the ACL APIs
 * carry on the wire, an ACL binding (a resource pattern and an access control entry), binding filters as
 * DescribeAcls and DeleteAcls match them, and the checks Kafka applies to a new binding.
 *
 *   binding = (resourceType, resourceName, patternType) + (principal, host, operation, permissionType)
 *              TOPIC         "orders-"     PREFIXED        "User:alice" "*"  WRITE      ALLOW
 *
 * A LITERAL pattern names one resource, or every resource of its type when the name is "*"; a PREFIXED
 * pattern every resource whose name starts with it. The principal "User:*" matches every principal, the host
 * "*" every host.
 */

/** ResourceType codes. */
export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceTypeCode = (typeof ResourceType)[keyof typeof ResourceType];

/** PatternType codes: MATCH and ANY only in filters. */
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export type PatternTypeCode = (typeof PatternType)[keyof typeof PatternType];

/** AclOperation codes (TWO_PHASE_COMMIT: KIP-939). */
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const;
export type AclOperationCode = (typeof AclOperation)[keyof typeof AclOperation];

/** AclPermissionType codes. */
export const AclPermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export type AclPermissionTypeCode = (typeof AclPermissionType)[keyof typeof AclPermissionType];

/** The only name of the CLUSTER resource. */
export const CLUSTER_NAME = 'kafka-cluster';
/** The LITERAL resource name, principal and host that match every one. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

const nameOf = (codes: Record<string, number>): ((code: number) => string) => {
  const names = new Map(Object.entries(codes).map(([k, v]) => [v, k]));
  return (code) => names.get(code) ?? 'UNKNOWN';
};
export const resourceTypeName = nameOf(ResourceType);
export const patternTypeName = nameOf(PatternType);
export const operationName = nameOf(AclOperation);
export const permissionTypeName = nameOf(AclPermissionType);

/** A resource type as Kafka's SecurityUtils.resourceTypeName spells it in messages: Topic, Group, Cluster, TransactionalId. */
export function resourceTypeLabel(type: number): string {
  return resourceTypeName(type)
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase());
}

/**
 * The operations a resource type supports (Kafka 4.4's AclEntry.supportedOperations): what KIP-430's
 * authorized-operations fields are computed over.
 */
export const SUPPORTED_OPERATIONS: ReadonlyMap<number, readonly AclOperationCode[]> = new Map<number, readonly AclOperationCode[]>([
  [ResourceType.TOPIC, [AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]],
  [ResourceType.GROUP, [AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]],
  [
    ResourceType.CLUSTER,
    [AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE],
  ],
  [ResourceType.TRANSACTIONAL_ID, [AclOperation.DESCRIBE, AclOperation.WRITE, AclOperation.TWO_PHASE_COMMIT]],
  [ResourceType.DELEGATION_TOKEN, [AclOperation.DESCRIBE]],
  [ResourceType.USER, [AclOperation.CREATE_TOKENS, AclOperation.DESCRIBE_TOKENS]],
]);

/** A KIP-430 bit field: bit `op` set for each operation. */
export function operationBits(ops: Iterable<number>): number {
  let bits = 0;
  for (const op of ops) bits |= 1 << op;
  return bits;
}

export interface ResourcePattern {
  readonly resourceType: number;
  readonly name: string;
  readonly patternType: number;
}

export interface AccessControlEntry {
  /** `<type>:<name>`, as KafkaPrincipal.toString() prints it. */
  readonly principal: string;
  readonly host: string;
  readonly operation: number;
  readonly permissionType: number;
}

export interface AclBinding {
  readonly pattern: ResourcePattern;
  readonly entry: AccessControlEntry;
}

/** A filter's fields: null matches any name, principal or host. */
export interface AclBindingFilter {
  readonly pattern: { readonly resourceType: number; readonly name: string | null; readonly patternType: number };
  readonly entry: { readonly principal: string | null; readonly host: string | null; readonly operation: number; readonly permissionType: number };
}

const KNOWN_RESOURCE_TYPES = new Set<number>(Object.values(ResourceType));
const KNOWN_PATTERN_TYPES = new Set<number>(Object.values(PatternType));
const KNOWN_OPERATIONS = new Set<number>(Object.values(AclOperation));
const KNOWN_PERMISSIONS = new Set<number>(Object.values(AclPermissionType));

/** A code Kafka's fromCode does not know reads as UNKNOWN. */
export const knownResourceType = (c: number): number => (KNOWN_RESOURCE_TYPES.has(c) ? c : ResourceType.UNKNOWN);
export const knownPatternType = (c: number): number => (KNOWN_PATTERN_TYPES.has(c) ? c : PatternType.UNKNOWN);
export const knownOperation = (c: number): number => (KNOWN_OPERATIONS.has(c) ? c : AclOperation.UNKNOWN);
export const knownPermissionType = (c: number): number => (KNOWN_PERMISSIONS.has(c) ? c : AclPermissionType.UNKNOWN);

/**
 * Why Kafka refuses to create `binding` (INVALID_REQUEST), or null: AclApis' cluster-name and empty-name checks,
 * AclControlManager.validateNewAcl's type checks, and SecurityUtils.parseKafkaPrincipal's principal format.
 */
export function invalidBinding(binding: AclBinding): string | null {
  const { pattern, entry } = binding;
  if (pattern.resourceType === ResourceType.CLUSTER && pattern.name !== CLUSTER_NAME) return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
  if (pattern.name.length === 0) return 'Invalid empty resource name';
  if (pattern.resourceType === ResourceType.UNKNOWN || pattern.resourceType === ResourceType.ANY) return `Invalid resourceType ${resourceTypeName(pattern.resourceType)}`;
  if (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) return `Invalid patternType ${patternTypeName(pattern.patternType)}`;
  if (entry.operation === AclOperation.UNKNOWN || entry.operation === AclOperation.ANY) return `Invalid operation ${operationName(entry.operation)}`;
  if (entry.permissionType !== AclPermissionType.ALLOW && entry.permissionType !== AclPermissionType.DENY) return `Invalid permissionType ${permissionTypeName(entry.permissionType)}`;
  const principalError = invalidPrincipal(entry.principal);
  if (principalError) return principalError;
  return null;
}

/** SecurityUtils.parseKafkaPrincipal's refusal of a principal string, or null. */
export function invalidPrincipal(principal: string): string | null {
  if (principal.length === 0) return 'Invalid principal: an empty string';
  const colon = principal.indexOf(':');
  if (colon < 0) return `Could not parse principal from \`${principal}\` (no colon is present separating the principal type from the principal name)`;
  return null;
}

/** Why a DescribeAcls or DeleteAcls filter is refused (INVALID_REQUEST), or null: an UNKNOWN element (AclBindingFilter.isUnknown). */
export function invalidFilter(filter: AclBindingFilter): string | null {
  const { pattern, entry } = filter;
  if (pattern.resourceType === ResourceType.UNKNOWN || pattern.patternType === PatternType.UNKNOWN) return 'Unknown patternFilter.';
  if (entry.operation === AclOperation.UNKNOWN || entry.permissionType === AclPermissionType.UNKNOWN) return 'Unknown entryFilter.';
  return null;
}

/** ResourcePatternFilter.matches. */
export function patternMatches(filter: AclBindingFilter['pattern'], pattern: ResourcePattern): boolean {
  if (filter.resourceType !== ResourceType.ANY && filter.resourceType !== pattern.resourceType) return false;
  if (filter.patternType !== PatternType.ANY && filter.patternType !== PatternType.MATCH && filter.patternType !== pattern.patternType) return false;
  if (filter.name === null) return true;
  if (filter.patternType === PatternType.ANY || filter.patternType === pattern.patternType) return filter.name === pattern.name;
  // MATCH: the patterns that would apply to a resource of that name.
  if (pattern.patternType === PatternType.LITERAL) return filter.name === pattern.name || pattern.name === WILDCARD;
  return filter.name.startsWith(pattern.name);
}

/** AccessControlEntryFilter.matches. */
export function entryMatches(filter: AclBindingFilter['entry'], entry: AccessControlEntry): boolean {
  if (filter.principal !== null && filter.principal !== entry.principal) return false;
  if (filter.host !== null && filter.host !== entry.host) return false;
  if (filter.operation !== AclOperation.ANY && filter.operation !== entry.operation) return false;
  return filter.permissionType === AclPermissionType.ANY || filter.permissionType === entry.permissionType;
}

export function filterMatches(filter: AclBindingFilter, binding: AclBinding): boolean {
  return patternMatches(filter.pattern, binding.pattern) && entryMatches(filter.entry, binding.entry);
}

/** `(pattern=ResourcePattern(...), entry=(...))` as Kafka's AclBinding.toString, for logs. */
export function bindingText(b: AclBinding): string {
  const p = b.pattern;
  const e = b.entry;
  return `(pattern=ResourcePattern(resourceType=${resourceTypeName(p.resourceType)}, name=${p.name}, patternType=${patternTypeName(p.patternType)}), entry=(principal=${e.principal}, host=${e.host}, operation=${operationName(e.operation)}, permissionType=${permissionTypeName(e.permissionType)}))`;
}

/** A binding's identity: two bindings with the same key are the same ACL (Kafka's StandardAcl equality). */
export function bindingKey(b: AclBinding): string {
  const p = b.pattern;
  const e = b.entry;
  return JSON.stringify([p.resourceType, p.name, p.patternType, e.principal, e.host, e.operation, e.permissionType]);
}
