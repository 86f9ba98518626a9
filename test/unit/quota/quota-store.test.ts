import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ClusterApiError } from '../../../src/cluster/errors.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { javaHashMapOrder, MatchType, QuotaLevel, QuotaStore, QUOTAS_PREFIX, type EntityComponent, type QuotaAlteration } from '../../../src/quota/quota-store.js';

let store: MetadataStore | undefined;
const opened: QuotaStore[] = [];
afterEach(async () => {
  for (const s of opened.splice(0)) await s.close();
  await store?.close();
  store = undefined;
});

async function open(): Promise<QuotaStore> {
  store ??= await openMetadataStore({ store: 'memory', dir: '/unused' });
  const quotas = new QuotaStore(store, {
    onWatchError: (err) => {
      throw err;
    },
    resolvesHost: async (host) => host === 'broker.example' || /^[0-9.]+$/.test(host),
  });
  opened.push(quotas);
  await quotas.load();
  return quotas;
}

const entity = (...pairs: [string, string | null][]): EntityComponent[] => pairs.map(([entityType, entityName]) => ({ entityType, entityName }));
const set = (e: EntityComponent[], values: Record<string, number>): QuotaAlteration => ({ entity: e, ops: Object.entries(values).map(([key, value]) => ({ key, value, remove: false })) });
const remove = (e: EntityComponent[], ...keys: string[]): QuotaAlteration => ({ entity: e, ops: keys.map((key) => ({ key, value: 0, remove: true })) });

async function waitFor(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  expect(cond()).toBe(true);
}

describe('QuotaStore.alter (ClientQuotaControlManager)', () => {
  it('refuses what Kafka refuses, with its messages', async () => {
    const quotas = await open();
    const cases: [QuotaAlteration, string][] = [
      [set([], { producer_byte_rate: 1 }), 'Invalid empty client quota entity'],
      [set(entity(['group', 'g']), { producer_byte_rate: 1 }), 'Unhandled client quota entity type: group'],
      [set(entity(['user', '']), { producer_byte_rate: 1 }), 'Empty user not supported'],
      [set(entity(['ip', '10.0.0.1'], ['user', 'a']), { connection_creation_rate: 1 }), 'Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId'],
      [set(entity(['ip', 'no such host']), { connection_creation_rate: 1 }), 'no such host is not a valid IP or resolvable host.'],
      [set(entity(['user', 'a']), { connection_creation_rate: 1 }), 'Invalid configuration key connection_creation_rate'],
      [set(entity(['ip', '10.0.0.1']), { producer_byte_rate: 1 }), 'Invalid configuration key producer_byte_rate'],
      [set(entity(['client-id', 'c1']), { consumer_byte_rate: 0 }), 'Quota consumer_byte_rate must be greater than 0'],
      [set(entity(['client-id', 'c2']), { request_percentage: -1 }), 'Quota request_percentage must be greater than 0'],
      [set(entity(['client-id', 'c3']), { producer_byte_rate: 1024.5 }), 'producer_byte_rate cannot be a fractional value.'],
      [set(entity(['client-id', 'c4']), { producer_byte_rate: 1e19 }), 'Proposed value for producer_byte_rate is too large for a LONG.'],
      [set(entity(['ip', null]), { connection_creation_rate: 3e9 }), 'Proposed value for connection_creation_rate is too large for an INT.'],
      [set(entity(['ip', '10.0.0.2']), { connection_creation_rate: 2.5 }), 'connection_creation_rate cannot be a fractional value.'],
    ];
    const results = await quotas.alter(cases.map(([a]) => a), false);
    expect(results.map((r) => [r.errorCode, r.errorMessage])).toEqual(cases.map(([, m]) => [ErrorCode.INVALID_REQUEST, m]));
    expect((await store!.list(QUOTAS_PREFIX)).kvs).toEqual([]);
  });

  it('stores one key per entity, accepts doubles where Kafka does, and deletes an entity left without values', async () => {
    const quotas = await open();
    const alice = entity(['user', 'alice'], ['client-id', null]);
    const results = await quotas.alter(
      [
        set(alice, { producer_byte_rate: 1024, request_percentage: 12.5, controller_mutation_rate: 0.5 }),
        set(entity(['ip', null]), { connection_creation_rate: 10 }),
        set(entity(['ip', 'broker.example']), { connection_creation_rate: 5 }),
        remove(entity(['user', 'bob']), 'producer_byte_rate', 'no_such_key'),
      ],
      false,
    );
    expect(results).toEqual([
      // Kafka's HashMap of the entity lists client-id before user.
      { entity: entity(['client-id', null], ['user', 'alice']), errorCode: 0, errorMessage: null },
      { entity: entity(['ip', null]), errorCode: 0, errorMessage: null },
      { entity: entity(['ip', 'broker.example']), errorCode: 0, errorMessage: null },
      { entity: entity(['user', 'bob']), errorCode: 0, errorMessage: null },
    ]);
    const keys = (await store!.list(QUOTAS_PREFIX)).kvs.map((kv) => kv.key);
    expect(keys).toEqual(['/quotas/ip=<default>', '/quotas/ip=broker.example', '/quotas/user=alice&client-id=<default>']);
    expect(JSON.parse((await store!.get('/quotas/user=alice&client-id=<default>'))!.value.toString())).toEqual({
      formatVersion: 1,
      entity: { user: 'alice', 'client-id': null },
      quotas: { producer_byte_rate: 1024, request_percentage: 12.5, controller_mutation_rate: 0.5 },
    });
    expect(quotas.quota('alice', null, 'producer_byte_rate')).toBe(1024);
    expect(quotas.levels('producer_byte_rate')).toBe(QuotaLevel.USER_CLIENT_ID);
    await quotas.alter([remove(alice, 'producer_byte_rate', 'request_percentage')], false);
    expect(quotas.levels('producer_byte_rate')).toBe(QuotaLevel.NONE);
    await quotas.alter([remove(alice, 'controller_mutation_rate')], false);
    expect(await store!.get('/quotas/user=alice&client-id=<default>')).toBeNull();
    expect(quotas.size).toBe(2);
  });

  it('names a user "<default>" apart from the default user', async () => {
    const quotas = await open();
    await quotas.alter([set(entity(['user', '<default>']), { producer_byte_rate: 1 }), set(entity(['user', null]), { producer_byte_rate: 2 })], false);
    expect((await store!.list(QUOTAS_PREFIX)).kvs.map((kv) => kv.key)).toEqual(['/quotas/user=%3Cdefault%3E', '/quotas/user=<default>']);
    expect([quotas.quota('<default>', undefined, 'producer_byte_rate'), quotas.quota(null, undefined, 'producer_byte_rate')]).toEqual([1, 2]);
  });

  it('answers a repeated key or entity "Ignoring duplicate entity", keeping an earlier valid alteration, as Kafka', async () => {
    const quotas = await open();
    const pair = entity(['user', 'alice'], ['client-id', 'c1']);
    const results = await quotas.alter(
      [
        { entity: entity(['user', 'bob']), ops: [{ key: 'producer_byte_rate', value: 1, remove: false }, { key: 'producer_byte_rate', value: 2, remove: false }] },
        set(pair, { producer_byte_rate: 100 }),
        set([...pair].reverse(), { producer_byte_rate: 200 }),
        // The same type twice: Kafka's map keeps the last name.
        set(entity(['user', 'x'], ['user', 'carol']), { consumer_byte_rate: 300 }),
      ],
      false,
    );
    expect(results).toEqual([
      { entity: entity(['user', 'bob']), errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Ignoring duplicate entity ClientQuotaEntity(entries={user=bob})' },
      { entity: entity(['client-id', 'c1'], ['user', 'alice']), errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c1, user=alice})' },
      { entity: entity(['user', 'carol']), errorCode: 0, errorMessage: null },
    ]);
    expect(quotas.quota('bob', undefined, 'producer_byte_rate')).toBeUndefined();
    expect(quotas.quota('alice', 'c1', 'producer_byte_rate')).toBe(100);
    expect(quotas.quota('carol', undefined, 'consumer_byte_rate')).toBe(300);
  });

  it('checks the values in the order of Kafka\'s HashMap of the ops', async () => {
    expect(javaHashMapOrder(['user', 'client-id'], 2)).toEqual(['client-id', 'user']);
    const quotas = await open();
    const keys = ['request_percentage', 'producer_byte_rate', 'consumer_byte_rate'];
    const first = javaHashMapOrder(keys, 3)[0]!;
    const [r] = await quotas.alter([set(entity(['user', 'a']), { request_percentage: -1, producer_byte_rate: -1, consumer_byte_rate: -1 })], false);
    expect(r!.errorMessage).toBe(`Quota ${first} must be greater than 0`);
  });

  it('changes nothing with validateOnly, and refuses more than 10 000 changed values whole', async () => {
    const quotas = await open();
    const [r] = await quotas.alter([set(entity(['client-id', 'c']), { producer_byte_rate: 5 })], true);
    expect(r).toMatchObject({ errorCode: 0 });
    expect(quotas.size).toBe(0);
    const many = Array.from({ length: 10_001 }, (_, i) => set(entity(['client-id', `c${i}`]), { producer_byte_rate: 5 }));
    const err = await quotas.alter(many, true).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ClusterApiError);
    expect(err).toMatchObject({ errorCode: ErrorCode.POLICY_VIOLATION });
  });

  it('applies a request of up to 128 entities in one transaction, a larger one in several', async () => {
    const quotas = await open();
    const before = await store!.revision();
    await quotas.alter(Array.from({ length: 300 }, (_, i) => set(entity(['client-id', `c${i}`]), { producer_byte_rate: i + 1 })), false);
    expect((await store!.revision()) - before).toBe(3);
    expect(quotas.size).toBe(300);
    expect(quotas.quota(undefined, 'c299', 'producer_byte_rate')).toBe(300);
  });
});

describe('QuotaStore.describe (ClientQuotasImage.describe)', () => {
  async function filled(): Promise<QuotaStore> {
    const quotas = await open();
    await quotas.alter(
      [
        set(entity(['user', 'alice']), { producer_byte_rate: 1 }),
        set(entity(['user', null]), { producer_byte_rate: 2 }),
        set(entity(['client-id', 'c1']), { producer_byte_rate: 3 }),
        set(entity(['user', 'alice'], ['client-id', 'c1']), { producer_byte_rate: 4 }),
        set(entity(['user', 'alice'], ['client-id', null]), { producer_byte_rate: 5 }),
        set(entity(['ip', '10.0.0.1']), { connection_creation_rate: 6 }),
        set(entity(['ip', null]), { connection_creation_rate: 7 }),
      ],
      false,
    );
    return quotas;
  }
  const values = (quotas: QuotaStore, components: { entityType: string; matchType: number; match: string | null }[], strict: boolean): number[] =>
    quotas.describe(components, strict).entries!.map((e) => e.values[0]!.value).sort();

  it('matches EXACT, DEFAULT and SPECIFIED components, strict excluding entities with other types', async () => {
    const quotas = await filled();
    const exactAlice = [{ entityType: 'user', matchType: MatchType.EXACT, match: 'alice' }];
    expect(values(quotas, exactAlice, false)).toEqual([1, 4, 5]);
    expect(values(quotas, exactAlice, true)).toEqual([1]);
    expect(values(quotas, [{ entityType: 'user', matchType: MatchType.DEFAULT, match: null }], false)).toEqual([2]);
    // SPECIFIED matches every entity with the type, the default one included.
    expect(values(quotas, [{ entityType: 'user', matchType: MatchType.SPECIFIED, match: null }], true)).toEqual([1, 2]);
    expect(values(quotas, [{ entityType: 'user', matchType: MatchType.SPECIFIED, match: null }], false)).toEqual([1, 2, 4, 5]);
    expect(values(quotas, [{ entityType: 'client-id', matchType: MatchType.EXACT, match: 'c1' }, { entityType: 'user', matchType: MatchType.SPECIFIED, match: null }], true)).toEqual([4]);
    expect(values(quotas, [{ entityType: 'client-id', matchType: MatchType.DEFAULT, match: null }], false)).toEqual([5]);
    expect(values(quotas, [{ entityType: 'ip', matchType: MatchType.SPECIFIED, match: null }], false)).toEqual([6, 7]);
    expect(values(quotas, [], false)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(values(quotas, [], true)).toEqual([]);
    const [entry] = quotas.describe([{ entityType: 'client-id', matchType: MatchType.DEFAULT, match: null }], false).entries!;
    expect(entry).toEqual({ entity: entity(['user', 'alice'], ['client-id', null]), values: [{ key: 'producer_byte_rate', value: 5 }] });
  });

  it('refuses the filters Kafka refuses, with its codes and messages', async () => {
    const quotas = await open();
    const c = (entityType: string, matchType: number, match: string | null) => ({ entityType, matchType, match });
    const cases: [ReturnType<typeof c>[], number, string][] = [
      [[c('', 0, 'a')], ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.'],
      [[c('user', 0, 'a'), c('user', 2, null)], ErrorCode.INVALID_REQUEST, 'Entity type user cannot appear more than once in the filter.'],
      [[c('group', 0, 'a')], ErrorCode.UNSUPPORTED_VERSION, 'Unsupported entity type group'],
      [[c('user', 0, null)], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.'],
      [[c('user', 1, 'a')], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.'],
      [[c('user', 2, 'a')], ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.'],
      [[c('user', 3, null)], ErrorCode.INVALID_REQUEST, 'Unknown match type 3'],
      [[c('ip', 2, null), c('client-id', 1, null)], ErrorCode.INVALID_REQUEST, 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.'],
    ];
    for (const [components, code, message] of cases) expect(quotas.describe(components, false)).toEqual({ errorCode: code, errorMessage: message, entries: null });
  });
});

describe('QuotaStore across brokers', () => {
  it('brings a change made through one broker to another sharing the store, and loads what is stored at start', async () => {
    const first = await open();
    const second = await open();
    await first.alter([set(entity(['user', null]), { producer_byte_rate: 1000 })], false);
    await waitFor(() => second.quota(null, undefined, 'producer_byte_rate') === 1000);
    expect(second.levels('producer_byte_rate')).toBe(QuotaLevel.USER);
    const third = await open();
    expect(third.describe([], false).entries).toEqual([{ entity: entity(['user', null]), values: [{ key: 'producer_byte_rate', value: 1000 }] }]);
    await second.alter([remove(entity(['user', null]), 'producer_byte_rate')], false);
    await waitFor(() => first.size === 0 && third.size === 0);
    expect(first.levels('producer_byte_rate')).toBe(QuotaLevel.NONE);
  });
});
