/**
 * The ACL authorizer, with the semantics of Kafka's StandardAuthorizer (StandardAuthorizerData.authorize):
 *
 *   principal in super.users ───────────────────────────────► ALLOWED
 *   ACLs of the resource: LITERAL name, LITERAL "*", PREFIXED prefixes of the name
 *     any DENY for (principal | User:*, host | *, operation | ALL) ─► DENIED
 *     any ALLOW for the same, or for an operation implying it ─────► ALLOWED
 *         (READ, WRITE, DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS; ALLOW only)
 *     some ACL on the resource, none for this principal ───────────► DENIED
 *   no ACL on the resource at all ─► allow.everyone.if.no.acl.found ? ALLOWED : DENIED
 *
 * and Kafka's Authorizer.authorizeByResourceType (KIP-679's "may this principal write to some topic"). The ACLs
 * themselves live in the metadata store (acl-store.ts), which feeds this cache through `put` and `remove`.
 */
import {
  AclOperation,
  AclPermissionType,
  filterMatches,
  operationBits,
  operationName,
  patternTypeName,
  permissionTypeName,
  PatternType,
  SUPPORTED_OPERATIONS,
  WILDCARD,
  WILDCARD_PRINCIPAL,
  type AclBinding,
  type AclBindingFilter,
} from './model.js';

export interface AuthorizerOptions {
  /** super.users: principals (`User:admin`) allowed everything, whatever the ACLs say. */
  readonly superUsers: ReadonlySet<string>;
  /** allow.everyone.if.no.acl.found: the answer for a resource no ACL names. */
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** Who asks: the principal as `<type>:<name>` and the client's IP address as Kafka prints it. */
export interface Requester {
  readonly principal: string;
  readonly host: string;
}

/** A decision and the rule behind it, for the audit log (Kafka's MatchingRule). */
export interface Decision {
  readonly allowed: boolean;
  readonly rule: string;
}

const IMPLIES_DESCRIBE: ReadonlySet<number> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<number> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/** The ACLs of one resource type, indexed for the lookups authorize makes. */
interface TypeIndex {
  readonly literal: Map<string, Map<string, AclBinding>>;
  readonly prefixed: Map<string, Map<string, AclBinding>>;
}

const SUPER_USER: Decision = { allowed: true, rule: 'SuperUser' };
const DEFAULT_ALLOW: Decision = { allowed: true, rule: 'DefaultAllow' };
const DEFAULT_DENY: Decision = { allowed: false, rule: 'DefaultDeny' };

export class AclAuthorizer {
  private readonly byId = new Map<string, AclBinding>();
  private readonly byType = new Map<number, TypeIndex>();
  private readonly noAclRule: Decision;

  constructor(private readonly o: AuthorizerOptions) {
    this.noAclRule = o.allowEveryoneIfNoAclFound ? DEFAULT_ALLOW : DEFAULT_DENY;
  }

  get superUsers(): ReadonlySet<string> {
    return this.o.superUsers;
  }

  get size(): number {
    return this.byId.size;
  }

  isSuperUser(principal: string): boolean {
    return this.o.superUsers.has(principal);
  }

  /** The ids of every ACL held. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Adds (or replaces) the ACL stored under `id`. */
  put(id: string, binding: AclBinding): void {
    this.remove(id);
    this.byId.set(id, binding);
    const index = this.indexOf(binding.pattern.resourceType);
    const names = binding.pattern.patternType === PatternType.PREFIXED ? index.prefixed : index.literal;
    let bucket = names.get(binding.pattern.name);
    if (!bucket) names.set(binding.pattern.name, (bucket = new Map()));
    bucket.set(id, binding);
  }

  remove(id: string): void {
    const old = this.byId.get(id);
    if (!old) return;
    this.byId.delete(id);
    const index = this.indexOf(old.pattern.resourceType);
    const names = old.pattern.patternType === PatternType.PREFIXED ? index.prefixed : index.literal;
    const bucket = names.get(old.pattern.name);
    bucket?.delete(id);
    if (bucket?.size === 0) names.delete(old.pattern.name);
  }

  /** Every ACL the filter matches (Authorizer.acls), with the id each is stored under. */
  acls(filter: AclBindingFilter): [string, AclBinding][] {
    return [...this.byId].filter(([, b]) => filterMatches(filter, b));
  }

  /** StandardAuthorizerData.authorize for a LITERAL resource. */
  authorize(who: Requester, operation: number, resourceType: number, name: string): Decision {
    if (this.o.superUsers.has(who.principal)) return SUPER_USER;
    const index = this.byType.get(resourceType);
    if (!index) return this.noAclRule;
    let hasResourceAcls = false;
    let allow: AclBinding | null = null;
    for (const bucket of this.bucketsFor(index, name)) {
      for (const acl of bucket.values()) {
        hasResourceAcls = true;
        const result = resultOf(who, operation, acl);
        if (result === AclPermissionType.DENY) return { allowed: false, rule: `MatchingAcl(acl=${aclText(acl)})` };
        if (result === AclPermissionType.ALLOW) allow ??= acl;
      }
    }
    if (allow) return { allowed: true, rule: `MatchingAcl(acl=${aclText(allow)})` };
    return hasResourceAcls ? DEFAULT_DENY : this.noAclRule;
  }

  /**
   * Authorizer.authorizeByResourceType: may the principal do `operation` on some resource of the type? Allowed
   * when a resource no ACL names would be (checked on the name "hardcode", as Kafka does), or when an ALLOW
   * for the principal names a pattern no DENY for it dominates: a LITERAL one not denied by the same LITERAL,
   * and no PREFIXED deny that is a prefix of it.
   */
  authorizeByResourceType(who: Requester, operation: number, resourceType: number): boolean {
    if (this.authorize(who, operation, resourceType, 'hardcode').allowed) return true;
    const index = this.byType.get(resourceType);
    if (!index) return false;
    const deny = { literal: new Set<string>(), prefixed: new Set<string>() };
    const allow = { literal: new Set<string>(), prefixed: new Set<string>() };
    let wildcardAllow = false;
    for (const [kind, names] of [
      ['literal', index.literal],
      ['prefixed', index.prefixed],
    ] as const) {
      for (const [name, bucket] of names) {
        for (const acl of bucket.values()) {
          const e = acl.entry;
          if (e.host !== who.host && e.host !== WILDCARD) continue;
          if (e.principal !== who.principal && e.principal !== WILDCARD_PRINCIPAL) continue;
          if (e.operation !== operation && e.operation !== AclOperation.ALL) continue;
          if (e.permissionType === AclPermissionType.DENY) {
            if (kind === 'literal' && name === WILDCARD) return false;
            deny[kind].add(name);
          } else if (e.permissionType === AclPermissionType.ALLOW) {
            if (kind === 'literal' && name === WILDCARD) wildcardAllow = true;
            else allow[kind].add(name);
          }
        }
      }
    }
    if (wildcardAllow) return true;
    for (const kind of ['literal', 'prefixed'] as const) {
      for (const name of allow[kind]) {
        if (kind === 'literal' && deny.literal.has(name)) continue;
        let dominated = false;
        for (let i = 1; i <= name.length && !dominated; i++) dominated = deny.prefixed.has(name.slice(0, i));
        if (!dominated) return true;
      }
    }
    return false;
  }

  /** KIP-430: the bit field of the operations the resource type supports that the principal may do on it. */
  authorizedOperations(who: Requester, resourceType: number, name: string): number {
    const supported = SUPPORTED_OPERATIONS.get(resourceType) ?? [];
    return operationBits(supported.filter((op) => this.authorize(who, op, resourceType, name).allowed));
  }

  private indexOf(resourceType: number): TypeIndex {
    let index = this.byType.get(resourceType);
    if (!index) this.byType.set(resourceType, (index = { literal: new Map(), prefixed: new Map() }));
    return index;
  }

  /** The buckets whose pattern matches `name`: its LITERAL name, the LITERAL wildcard, and each PREFIXED prefix of it. */
  private *bucketsFor(index: TypeIndex, name: string): Generator<Map<string, AclBinding>> {
    const exact = index.literal.get(name);
    if (exact) yield exact;
    if (name !== WILDCARD) {
      const wildcard = index.literal.get(WILDCARD);
      if (wildcard) yield wildcard;
    }
    if (index.prefixed.size === 0) return;
    if (index.prefixed.size < name.length) {
      for (const [prefix, bucket] of index.prefixed) if (name.startsWith(prefix)) yield bucket;
    } else {
      for (let i = 1; i <= name.length; i++) {
        const bucket = index.prefixed.get(name.slice(0, i));
        if (bucket) yield bucket;
      }
    }
  }
}

/** StandardAuthorizerData.findResult: ALLOW, DENY, or UNKNOWN when the ACL does not apply to the request. */
function resultOf(who: Requester, operation: number, acl: AclBinding): number {
  const e = acl.entry;
  if (e.principal !== who.principal && e.principal !== WILDCARD_PRINCIPAL) return AclPermissionType.UNKNOWN;
  if (e.host !== WILDCARD && e.host !== who.host) return AclPermissionType.UNKNOWN;
  if (e.operation !== AclOperation.ALL) {
    if (e.permissionType === AclPermissionType.ALLOW) {
      if (operation === AclOperation.DESCRIBE) {
        if (!IMPLIES_DESCRIBE.has(e.operation)) return AclPermissionType.UNKNOWN;
      } else if (operation === AclOperation.DESCRIBE_CONFIGS) {
        if (!IMPLIES_DESCRIBE_CONFIGS.has(e.operation)) return AclPermissionType.UNKNOWN;
      } else if (operation !== e.operation) return AclPermissionType.UNKNOWN;
    } else if (operation !== e.operation) return AclPermissionType.UNKNOWN;
  }
  return e.permissionType;
}

function aclText(b: AclBinding): string {
  return `${b.entry.principal} ${permissionTypeName(b.entry.permissionType)} ${operationName(b.entry.operation)} on ${patternTypeName(b.pattern.patternType)}:${b.pattern.name} from ${b.entry.host}`;
}

/** Kafka's authorizer class, whose semantics this one follows (KRaft's StandardAuthorizer). */
export const STANDARD_AUTHORIZER = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

/**
 * The authorizer the configuration asks for (authorizer.class.name, super.users, allow.everyone.if.no.acl.found),
 * or null when none is configured.
 */
export function aclAuthorizerFor(values: ReadonlyMap<string, string | null>): AclAuthorizer | null {
  const className = (values.get('authorizer.class.name') ?? '').trim();
  if (className === '') return null;
  const superUsers = new Set(
    (values.get('super.users') ?? '')
      .split(';')
      .map((s) => s.trim())
      .filter((s) => s.length > 0),
  );
  return new AclAuthorizer({ superUsers, allowEveryoneIfNoAclFound: (values.get('allow.everyone.if.no.acl.found') ?? 'false').trim().toLowerCase() === 'true' });
}
