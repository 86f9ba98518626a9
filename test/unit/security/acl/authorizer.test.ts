import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AclAuthorizer, aclAuthorizerFor } from '../../../../src/security/acl/authorizer.js';
import { AclOperation as Op, AclPermissionType as Perm, PatternType, ResourceType, type AclBinding } from '../../../../src/security/acl/model.js';

const alice = { principal: 'User:alice', host: '10.0.0.1' };
const bob = { principal: 'User:bob', host: '10.0.0.2' };

function acl(type: number, name: string, patternType: number, principal: string, operation: number, permissionType: number, host = '*'): AclBinding {
  return { pattern: { resourceType: type, name, patternType }, entry: { principal, host, operation, permissionType } };
}

function authorizer(acls: AclBinding[], o: { superUsers?: string[]; allowEveryone?: boolean } = {}): AclAuthorizer {
  const a = new AclAuthorizer({ superUsers: new Set(o.superUsers ?? []), allowEveryoneIfNoAclFound: o.allowEveryone ?? false });
  acls.forEach((b, i) => a.put(String(i), b));
  return a;
}

describe('AclAuthorizer.authorize (StandardAuthorizer semantics)', () => {
  it('allows what an ALLOW names and denies the rest, including other principals', () => {
    const a = authorizer([acl(ResourceType.TOPIC, 'orders', PatternType.LITERAL, 'User:alice', Op.WRITE, Perm.ALLOW)]);
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'orders').allowed).toBe(true);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'orders').allowed).toBe(false);
    expect(a.authorize(bob, Op.WRITE, ResourceType.TOPIC, 'orders').allowed).toBe(false);
    // A resource no ACL names: the default (allow.everyone.if.no.acl.found=false).
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'payments')).toEqual({ allowed: false, rule: 'DefaultDeny' });
  });

  it('lets READ, WRITE, DELETE and ALTER imply DESCRIBE, and ALTER_CONFIGS imply DESCRIBE_CONFIGS, for ALLOW only', () => {
    for (const op of [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER]) {
      expect(authorizer([acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', op, Perm.ALLOW)]).authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't').allowed).toBe(true);
    }
    expect(authorizer([acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', Op.CREATE, Perm.ALLOW)]).authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't').allowed).toBe(false);
    expect(authorizer([acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', Op.ALTER_CONFIGS, Perm.ALLOW)]).authorize(alice, Op.DESCRIBE_CONFIGS, ResourceType.TOPIC, 't').allowed).toBe(true);
    // A DENY of READ does not deny DESCRIBE.
    const a = authorizer([acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', Op.DESCRIBE, Perm.ALLOW), acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', Op.READ, Perm.DENY)]);
    expect(a.authorize(alice, Op.DESCRIBE, ResourceType.TOPIC, 't').allowed).toBe(true);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 't').allowed).toBe(false);
  });

  it('lets a DENY win over any ALLOW, ALL match every operation, and User:* and host * match everyone', () => {
    const a = authorizer([
      acl(ResourceType.TOPIC, '*', PatternType.LITERAL, 'User:*', Op.ALL, Perm.ALLOW),
      acl(ResourceType.TOPIC, 'secret-', PatternType.PREFIXED, 'User:bob', Op.READ, Perm.DENY),
      acl(ResourceType.TOPIC, 'pinned', PatternType.LITERAL, 'User:alice', Op.WRITE, Perm.DENY, '10.0.0.9'),
    ]);
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 'anything').allowed).toBe(true);
    expect(a.authorize(bob, Op.READ, ResourceType.TOPIC, 'secret-plans').allowed).toBe(false);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 'secret-plans').allowed).toBe(true);
    // The DENY names another host.
    expect(a.authorize(alice, Op.WRITE, ResourceType.TOPIC, 'pinned').allowed).toBe(true);
    expect(a.authorize({ ...alice, host: '10.0.0.9' }, Op.WRITE, ResourceType.TOPIC, 'pinned').allowed).toBe(false);
    // Another resource type is untouched by TOPIC ACLs.
    expect(a.authorize(bob, Op.READ, ResourceType.GROUP, 'g').allowed).toBe(false);
  });

  it('denies a principal the ACLs of a resource leave out even when allow.everyone.if.no.acl.found is true', () => {
    const a = authorizer([acl(ResourceType.GROUP, 'g', PatternType.LITERAL, 'User:alice', Op.READ, Perm.ALLOW)], { allowEveryone: true });
    expect(a.authorize(bob, Op.READ, ResourceType.GROUP, 'g')).toEqual({ allowed: false, rule: 'DefaultDeny' });
    expect(a.authorize(bob, Op.READ, ResourceType.GROUP, 'other')).toEqual({ allowed: true, rule: 'DefaultAllow' });
  });

  it('allows super users everything, DENY ACLs notwithstanding', () => {
    const a = authorizer([acl(ResourceType.CLUSTER, 'kafka-cluster', PatternType.LITERAL, 'User:admin', Op.ALL, Perm.DENY)], { superUsers: ['User:admin'] });
    expect(a.authorize({ principal: 'User:admin', host: '1.2.3.4' }, Op.ALTER, ResourceType.CLUSTER, 'kafka-cluster')).toEqual({ allowed: true, rule: 'SuperUser' });
  });

  it('forgets a removed ACL', () => {
    const a = authorizer([acl(ResourceType.TOPIC, 't', PatternType.LITERAL, 'User:alice', Op.READ, Perm.ALLOW)]);
    a.remove('0');
    expect(a.size).toBe(0);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 't').rule).toBe('DefaultDeny');
  });

  it('agrees with a direct reading of the rules on random ACL sets', () => {
    const names = ['a', 'ab', 'abc', 'b', '*'];
    const arbAcl = fc.record({
      type: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP),
      name: fc.constantFrom(...names),
      patternType: fc.constantFrom(PatternType.LITERAL, PatternType.PREFIXED),
      principal: fc.constantFrom('User:alice', 'User:bob', 'User:*'),
      host: fc.constantFrom('*', '10.0.0.1'),
      operation: fc.constantFrom(Op.ALL, Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS),
      permission: fc.constantFrom(Perm.ALLOW, Perm.DENY),
    });
    fc.assert(
      fc.property(fc.array(arbAcl, { maxLength: 12 }), fc.boolean(), fc.constantFrom('a', 'ab', 'abc', 'b', 'c'), fc.constantFrom(Op.READ, Op.WRITE, Op.DESCRIBE, Op.DESCRIBE_CONFIGS), (raw, allowEveryone, resource, op) => {
        const acls = raw.map((r) => acl(r.type, r.name, r.patternType, r.principal, r.operation, r.permission, r.host));
        const a = authorizer(acls, { allowEveryone });
        const onResource = acls.filter(
          (b) => b.pattern.resourceType === ResourceType.TOPIC && (b.pattern.patternType === PatternType.PREFIXED ? resource.startsWith(b.pattern.name) : b.pattern.name === resource || b.pattern.name === '*'),
        );
        const applies = (b: AclBinding, allow: boolean): boolean =>
          (b.entry.principal === alice.principal || b.entry.principal === 'User:*') &&
          (b.entry.host === '*' || b.entry.host === alice.host) &&
          (b.entry.operation === Op.ALL ||
            b.entry.operation === op ||
            (allow && op === Op.DESCRIBE && [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER].includes(b.entry.operation as 3)) ||
            (allow && op === Op.DESCRIBE_CONFIGS && b.entry.operation === Op.ALTER_CONFIGS));
        const denied = onResource.some((b) => b.entry.permissionType === Perm.DENY && applies(b, false));
        const allowed = onResource.some((b) => b.entry.permissionType === Perm.ALLOW && applies(b, true));
        const expected = denied ? false : allowed ? true : onResource.length > 0 ? false : allowEveryone;
        expect(a.authorize(alice, op, ResourceType.TOPIC, resource).allowed).toBe(expected);
      }),
      { numRuns: 500 },
    );
  });
});

describe('AclAuthorizer.authorizeByResourceType (KIP-679)', () => {
  it('allows when some ALLOW for the principal is not dominated by a DENY', () => {
    expect(authorizer([]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    expect(authorizer([], { allowEveryone: true }).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(authorizer([acl(ResourceType.TOPIC, 'orders', PatternType.LITERAL, 'User:alice', Op.WRITE, Perm.ALLOW)]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(true);
    expect(authorizer([acl(ResourceType.TOPIC, 'orders', PatternType.LITERAL, 'User:alice', Op.READ, Perm.ALLOW)]).authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    const dominated = authorizer([acl(ResourceType.TOPIC, 'orders-eu', PatternType.LITERAL, 'User:alice', Op.WRITE, Perm.ALLOW), acl(ResourceType.TOPIC, 'orders', PatternType.PREFIXED, 'User:alice', Op.WRITE, Perm.DENY)]);
    expect(dominated.authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
    const wildcardDeny = authorizer([acl(ResourceType.TOPIC, 'x', PatternType.LITERAL, 'User:alice', Op.WRITE, Perm.ALLOW), acl(ResourceType.TOPIC, '*', PatternType.LITERAL, 'User:*', Op.ALL, Perm.DENY)]);
    expect(wildcardDeny.authorizeByResourceType(alice, Op.WRITE, ResourceType.TOPIC)).toBe(false);
  });
});

describe('aclAuthorizerFor', () => {
  it('builds none without authorizer.class.name, and reads super.users and allow.everyone.if.no.acl.found', () => {
    expect(aclAuthorizerFor(new Map([['authorizer.class.name', '']]))).toBeNull();
    const a = aclAuthorizerFor(new Map([['authorizer.class.name', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer'], ['super.users', 'User:admin; User:broker'], ['allow.everyone.if.no.acl.found', 'TRUE']]))!;
    expect([...a.superUsers]).toEqual(['User:admin', 'User:broker']);
    expect(a.authorize(alice, Op.READ, ResourceType.TOPIC, 't').rule).toBe('DefaultAllow');
  });
});

describe('authorizedOperations (KIP-430)', () => {
  it('sets the bits of the supported operations the principal may do', () => {
    const a = authorizer([acl(ResourceType.GROUP, 'g', PatternType.LITERAL, 'User:alice', Op.READ, Perm.ALLOW)]);
    expect(a.authorizedOperations(alice, ResourceType.GROUP, 'g')).toBe((1 << Op.READ) | (1 << Op.DESCRIBE));
    expect(a.authorizedOperations(bob, ResourceType.GROUP, 'g')).toBe(0);
  });
});
