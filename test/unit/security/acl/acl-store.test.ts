import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { openMetadataStore } from '../../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../../src/metadata/types.js';
import { AclStore, ACLS_PREFIX } from '../../../../src/security/acl/acl-store.js';
import { AclAuthorizer } from '../../../../src/security/acl/authorizer.js';
import { MetadataCompactedError } from '../../../../src/metadata/errors.js';
import { FaultyStore, laggingPair, until, zooKeeperAvailable } from '../../metadata/support.js';
import { AclOperation as Op, AclPermissionType as Perm, PatternType, ResourceType, type AclBinding, type AclBindingFilter } from '../../../../src/security/acl/model.js';

let store: MetadataStore | undefined;
const opened: AclStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await store?.close();
  store = undefined;
});

async function open(shared?: MetadataStore): Promise<{ acls: AclStore; authorizer: AclAuthorizer }> {
  store ??= shared ?? (await openMetadataStore({ store: 'memory', dir: '/unused' }));
  const authorizer = new AclAuthorizer({ superUsers: new Set(), allowEveryoneIfNoAclFound: false });
  const acls = new AclStore(store, authorizer, (err) => {
    throw err;
  });
  opened.push(acls);
  await acls.load();
  return { acls, authorizer };
}

const binding = (name: string, principal = 'User:alice', op: number = Op.READ, patternType: number = PatternType.LITERAL): AclBinding => ({
  pattern: { resourceType: ResourceType.TOPIC, name, patternType },
  entry: { principal, host: '*', operation: op, permissionType: Perm.ALLOW },
});
const anyTopic: AclBindingFilter = { pattern: { resourceType: ResourceType.TOPIC, name: null, patternType: PatternType.ANY }, entry: { principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY } };

describe('AclStore', () => {
  it('creates ACLs once however often they are created, and refuses invalid ones with Kafka\'s messages', async () => {
    const { acls } = await open();
    const results = await acls.create([
      binding('orders'),
      binding('orders'),
      { pattern: { resourceType: ResourceType.CLUSTER, name: 'mine', patternType: PatternType.LITERAL }, entry: binding('x').entry },
      { ...binding(''), pattern: { ...binding('').pattern } },
      { pattern: { resourceType: ResourceType.TOPIC, name: 't', patternType: PatternType.MATCH }, entry: binding('t').entry },
      { pattern: binding('t').pattern, entry: { ...binding('t').entry, operation: Op.ANY } },
      { pattern: binding('t').pattern, entry: { ...binding('t').entry, principal: 'alice' } },
    ]);
    expect(results.map((r) => r.errorCode)).toEqual([0, 0, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST, ErrorCode.INVALID_REQUEST]);
    expect(results.map((r) => r.errorMessage).slice(2)).toEqual([
      'The only valid name for the CLUSTER resource is kafka-cluster',
      'Invalid empty resource name',
      'Invalid patternType MATCH',
      'Invalid operation ANY',
      'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)',
    ]);
    expect(acls.describe(anyTopic).acls).toEqual([binding('orders')]);
    expect((await store!.list(ACLS_PREFIX)).kvs).toHaveLength(1);
  });

  it('describes and deletes by filter, MATCH finding the patterns that apply to a name', async () => {
    const { acls, authorizer } = await open();
    await acls.create([binding('orders-eu'), binding('orders-', 'User:alice', Op.WRITE, PatternType.PREFIXED), binding('*', 'User:bob'), binding('payments', 'User:bob')]);
    const match: AclBindingFilter = { ...anyTopic, pattern: { resourceType: ResourceType.TOPIC, name: 'orders-eu', patternType: PatternType.MATCH } };
    expect(new Set(acls.describe(match).acls.map((b) => b.pattern.name))).toEqual(new Set(['orders-eu', 'orders-', '*']));
    const bobs: AclBindingFilter = { ...anyTopic, entry: { ...anyTopic.entry, principal: 'User:bob' } };
    const [deleted, unknown] = await acls.delete([bobs, { ...anyTopic, entry: { ...anyTopic.entry, operation: Op.UNKNOWN } }]);
    expect(new Set(deleted!.deleted.map((b) => b.pattern.name))).toEqual(new Set(['*', 'payments']));
    expect(unknown).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown entryFilter.' });
    expect(authorizer.size).toBe(2);
    expect(acls.describe({ ...anyTopic, pattern: { ...anyTopic.pattern, resourceType: ResourceType.UNKNOWN } }).result.errorCode).toBe(ErrorCode.INVALID_REQUEST);
  });

  it('brings a change made through one broker to another sharing the store, and loads what is stored at start', async () => {
    const first = await open();
    const second = await open(store);
    await first.acls.create([binding('orders')]);
    const deadline = Date.now() + 5000;
    while (second.authorizer.size === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(second.authorizer.authorize({ principal: 'User:alice', host: '1.1.1.1' }, Op.READ, ResourceType.TOPIC, 'orders').allowed).toBe(true);
    const third = await open(store);
    expect(third.authorizer.size).toBe(1);
    await first.acls.delete([anyTopic]);
    while (second.authorizer.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(second.authorizer.size).toBe(0);
  });
});

describe('AclStore reading the store again', () => {
  it('keeps what this broker wrote after the read: an ACL it created stays, one it deleted does not come back', async () => {
    const inner = await openMetadataStore({ store: 'memory', dir: '/unused' });
    store = inner;
    const faulty = new FaultyStore(inner);
    const here = new AclAuthorizer({ superUsers: new Set(), allowEveryoneIfNoAclFound: false });
    const errors: Error[] = [];
    const acls = new AclStore(faulty.asStore(), here, (err) => errors.push(err));
    const { acls: other } = await open(inner);
    opened.push(acls);
    await acls.load();
    await other.create([binding('x'), binding('z', 'User:mallory', Op.READ, PatternType.LITERAL)]);
    const names = (): string[] => here.acls(anyTopic).map(([, b]) => b.pattern.name).sort();
    await until(() => names().join() === 'x,z', 'both ACLs here');

    // The watch ends; the read again is held after its page until this broker has created y and deleted z.
    const read = faulty.holdNextRead();
    // What the cache holds when the read again is handed over, before the new watch brings anything.
    let afterReset: string[] | null = null;
    const watch = faulty.watch.bind(faulty);
    faulty.watch = (...args) => {
      afterReset ??= names();
      return watch(...args);
    };
    faulty.endWatch(new MetadataCompactedError(3, 4));
    await other.delete([{ pattern: { ...binding('x').pattern }, entry: { ...binding('x').entry } }]); // seen by the read
    await read.started;
    await acls.create([binding('y')]);
    await acls.delete([{ pattern: { ...binding('z').pattern }, entry: { ...binding('z', 'User:mallory').entry } }]);
    read.release();
    await until(() => afterReset !== null, 'the read again handed over');
    expect(afterReset).toEqual(['y']);
    await other.create([binding('later')]);
    await until(() => names().includes('later'), 'a later ACL');
    expect(names()).toEqual(['later', 'y']);
    expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
  });
});

describe.skipIf(!zooKeeperAvailable)('AclStore on ZooKeeper stores shared by brokers', () => {
  it('still applies what another broker changed after this broker\'s store fell behind the kept history', async () => {
    const pair = await laggingPair('acls');
    const acls: AclStore[] = [];
    try {
      const errors: Error[] = [];
      const writer = new AclStore(pair.writer, new AclAuthorizer({ superUsers: new Set(), allowEveryoneIfNoAclFound: false }), (err) => errors.push(err));
      const followerAuthorizer = new AclAuthorizer({ superUsers: new Set(), allowEveryoneIfNoAclFound: false });
      const follower = new AclStore(pair.lagging, followerAuthorizer, (err) => errors.push(err));
      acls.push(writer, follower);
      await writer.load();
      await follower.load();
      await writer.create([binding('before')]);
      await until(() => followerAuthorizer.size === 1, 'the first ACL on the other broker', 10_000);
      // 20 revisions while the other broker's store cannot read history; the stores keep 5.
      pair.cutHistoryReads();
      await writer.delete([{ pattern: { ...binding('before').pattern }, entry: { ...binding('before').entry } }]);
      for (let i = 0; i < 19; i++) await writer.create([binding(`during-${i}`)]);
      pair.readHistoryAgain();
      await writer.create([binding('after')]);
      const names = (): string[] => follower.describe(anyTopic).acls.map((b) => b.pattern.name).sort();
      const expected = ['after', ...Array.from({ length: 19 }, (_, i) => `during-${i}`)].sort();
      await until(() => JSON.stringify(names()) === JSON.stringify(expected), 'the ACLs of the other broker', 20_000);
      expect(errors.map((e) => (e as { code?: string }).code)).toEqual(['LL_ERR_METADATA_COMPACTED']);
    } finally {
      for (const a of acls) await a.close();
      await pair.close();
    }
  }, 60_000);
});
