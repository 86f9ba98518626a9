/**
 * Client quotas in the metadata store (KIP-546), as Kafka keeps them in its metadata log (KRaft's
 * ClientQuotaRecord, ClientQuotaControlManager), followed with a watch so that a quota altered through any
 * broker applies on every broker sharing the store (Kafka's brokers replay the records into their
 * ClientQuotasImage and quota managers).
 *
 *   /quotas/user=alice&client-id=<default>   {"formatVersion":1,"entity":{"user":"alice","client-id":null},
 *                                             "quotas":{"producer_byte_rate":1048576}}
 *
 * One key per entity: its types (user, client-id: alone or together; or ip) and names, `null` naming the
 * default entity (`<default>` in the key; a name is percent-encoded, so a user named "<default>" is another
 * key). A value is a number; NaN and ±Infinity, which Kafka accepts for some keys, are stored as strings.
 * An entity left without values is deleted.
 *
 * `alter` is ClientQuotaControlManager.alterClientQuotas: the same checks in the same order, with its
 * messages (entity types and names, combinations, unknown keys per entity type, values > 0, whole numbers for
 * LONG and INT keys; a remove is not checked). An entity naming a type twice keeps the last name (Kafka builds
 * it as a map, so its "duplicate entity entry" check never fires); an op naming a key twice, or an entity
 * named twice, is answered "Ignoring duplicate entity …" (Kafka's result map is keyed by entity: the later
 * result replaces the earlier, while an earlier valid alteration of that entity is still applied). Removing a
 * value that is not there succeeds and changes nothing; more than 10,000 changed values
 * (MAX_RECORDS_PER_USER_OP) fail the request whole. Kafka builds the entity and the ops as java.util.HashMaps,
 * so which check fails first, and how an entity prints, follow a HashMap's iteration order
 * (`javaHashMapOrder`). Each entity is changed by compare-and-set; a request changing up to 128 entities (the
 * store's bound on one transaction) applies atomically, a larger one in steps of 128.
 *
 * `describe` is ClientQuotasImage.describe: the filter checked as Kafka checks it (an unknown entity type is
 * UNSUPPORTED_VERSION), then every entity with each EXACT component's name (null: the default), each
 * DEFAULT component's default, and each SPECIFIED component's type (a default included, as the image's
 * containsKey); `strict` excludes entities with further types. It answers from this broker's copy, as a Kafka
 * broker answers from its metadata image; an alteration through this broker is in it once `alter` returns.
 *
 * `quota`/`levels` are what the quota managers read (src/quota/client-quota-manager.ts): one value of one
 * user/client-id entity, and which of the user, client-id and user+client-id levels have a value of a key.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ClusterApiError } from '../cluster/errors.js';
import { QUOTAS_PREFIX } from '../metadata/layout.js';
import type { Compare, MetadataStore, TxnOp } from '../metadata/types.js';
import { follow, type Following } from '../metadata/follow.js';

export { QUOTAS_PREFIX };

/** Kafka's ClientQuotaEntity types. */
export const USER = 'user';
export const CLIENT_ID = 'client-id';
export const IP = 'ip';

/** Kafka's QuotaConfig keys. */
export const QuotaKey = {
  PRODUCER_BYTE_RATE: 'producer_byte_rate',
  CONSUMER_BYTE_RATE: 'consumer_byte_rate',
  REQUEST_PERCENTAGE: 'request_percentage',
  CONTROLLER_MUTATION_RATE: 'controller_mutation_rate',
  CONNECTION_CREATION_RATE: 'connection_creation_rate',
} as const;

type KeyType = 'LONG' | 'INT' | 'DOUBLE';

/** QuotaConfig.userAndClientQuotaConfigs and ipConfigs: the keys of each kind of entity and their types. */
const USER_CLIENT_KEYS: ReadonlyMap<string, KeyType> = new Map<string, KeyType>([
  [QuotaKey.PRODUCER_BYTE_RATE, 'LONG'],
  [QuotaKey.CONSUMER_BYTE_RATE, 'LONG'],
  [QuotaKey.REQUEST_PERCENTAGE, 'DOUBLE'],
  [QuotaKey.CONTROLLER_MUTATION_RATE, 'DOUBLE'],
]);
const IP_KEYS: ReadonlyMap<string, KeyType> = new Map<string, KeyType>([[QuotaKey.CONNECTION_CREATION_RATE, 'INT']]);

/** DescribeClientQuotas match types (ClientQuotaFilterComponent). */
export const MatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

/** Bits of the levels with a value of a key: Kafka's QuotaTypes (ClientQuotaManager). */
export const QuotaLevel = { NONE: 0, CLIENT_ID: 1, USER: 2, USER_CLIENT_ID: 4 } as const;

/** Kafka's MAX_RECORDS_PER_USER_OP: the most quota values one AlterClientQuotas request may change. */
export const MAX_QUOTA_CHANGES_PER_REQUEST = 10_000;

/** The longest user, client id or host a quota entity may name, in UTF-8 bytes. */
export const MAX_ENTITY_NAME_BYTES = 1024;

/** The operations of one store transaction (the local and ZooKeeper stores' default maxTxnOps). */
const TXN_OPS = 128;

/** One component of an entity as the APIs carry it; a null name is the default entity. */
export interface EntityComponent {
  readonly entityType: string;
  readonly entityName: string | null;
}

export interface QuotaOp {
  readonly key: string;
  readonly value: number;
  readonly remove: boolean;
}

export interface QuotaAlteration {
  readonly entity: readonly EntityComponent[];
  readonly ops: readonly QuotaOp[];
}

export interface AlterResult {
  readonly entity: EntityComponent[];
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

export interface FilterComponent {
  readonly entityType: string;
  readonly matchType: number;
  readonly match: string | null;
}

export interface DescribedEntry {
  readonly entity: EntityComponent[];
  readonly values: { key: string; value: number }[];
}

export interface DescribeResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
  /** Null with an error, as Kafka's error response. */
  readonly entries: DescribedEntry[] | null;
}

/** A stored entity: each type it has, with its name or null for the default. */
type Entity = Partial<Record<typeof USER | typeof CLIENT_ID | typeof IP, string | null>>;

interface Stored {
  readonly formatVersion: 1;
  readonly entity: Entity;
  readonly quotas: Record<string, number | string>;
}

interface Cached {
  readonly entity: Entity;
  readonly quotas: ReadonlyMap<string, number>;
}

interface ApiResult {
  readonly errorCode: number;
  readonly errorMessage: string | null;
}

const OK: ApiResult = { errorCode: ErrorCode.NONE, errorMessage: null };
const invalid = (errorMessage: string): ApiResult => ({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage });

/** The order of entity types in a key. */
const KEY_TYPES = [USER, CLIENT_ID, IP] as const;
const DEFAULT_NAME = '<default>';

export interface QuotaStoreOptions {
  /** Where a failure to follow the store, or a record that does not decode, is reported. */
  readonly onWatchError: (err: Error) => void;
  /** Whether an ip entity's name is an address or a resolvable host (Kafka's InetAddress.getByName). */
  readonly resolvesHost?: (host: string) => Promise<boolean>;
}

export class QuotaStore {
  private readonly entities = new Map<string, Cached>();
  /** Per quota key: how many entities of each level (client-id, user, user+client-id) have a value of it. */
  private readonly levelCounts = new Map<string, [number, number, number]>();
  private following: Following | null = null;
  /** Whether changes arrive through the store's watch now (not closed, not between a failure and a read). */
  private delivering = false;
  /** The highest revision the store's watch (or a read) has delivered, and alterations waiting for theirs. */
  private seen = 0;
  private waiters: { revision: number; resolve: () => void }[] = [];
  private readonly resolvesHost: (host: string) => Promise<boolean>;

  constructor(
    private readonly store: MetadataStore,
    private readonly options: QuotaStoreOptions,
  ) {
    this.resolvesHost = options.resolvesHost ?? resolvesHost;
  }

  /** Loads every quota, then follows the store's changes (follow.ts). */
  async load(): Promise<void> {
    this.following = await follow(
      this.store,
      { prefix: QUOTAS_PREFIX },
      {
        reset: (kvs, revision) => {
          const keys = new Set(kvs.map((kv) => kv.key));
          for (const key of [...this.entities.keys()]) if (!keys.has(key)) this.set(key, null);
          for (const kv of kvs) this.apply(kv.key, kv.value);
          this.delivering = true;
          this.seen = Math.max(this.seen, revision);
          this.wake();
        },
        changes: (events, revision) => {
          for (const e of events) {
            if (e.type === 'delete') this.set(e.kv.key, null);
            else this.apply(e.kv.key, e.kv.value);
          }
          this.seen = Math.max(this.seen, revision);
          this.wake();
        },
        error: (err) => {
          // Until the next read, alterations read back the keys they changed instead of waiting for the watch.
          this.delivering = false;
          this.wake(true);
          this.options.onWatchError(err);
        },
      },
    );
  }

  async close(): Promise<void> {
    this.delivering = false;
    await this.following?.cancel();
    this.following = null;
    this.wake(true);
  }

  /** The number of entities with quotas. */
  get size(): number {
    return this.entities.size;
  }

  /**
   * The value of `key` for the user/client-id entity given (undefined: the type is absent; null: its
   * default), or undefined when it has none.
   */
  quota(user: string | null | undefined, clientId: string | null | undefined, key: string): number | undefined {
    const entity: Entity = {};
    if (user !== undefined) entity.user = user;
    if (clientId !== undefined) entity['client-id'] = clientId;
    return this.entities.get(entityKey(entity))?.quotas.get(key);
  }

  /**
   * The connection creation rate an address may open connections at (KIP-612): its own ip entity's, else the
   * default ip entity's; undefined when neither sets one.
   */
  ipConnectionRate(ip: string): number | undefined {
    return this.entities.get(entityKey({ ip }))?.quotas.get(QuotaKey.CONNECTION_CREATION_RATE) ?? this.entities.get(entityKey({ ip: null }))?.quotas.get(QuotaKey.CONNECTION_CREATION_RATE);
  }

  /** The levels (QuotaLevel bits) of the user/client-id entities that have a value of `key`. */
  levels(key: string): number {
    const c = this.levelCounts.get(key);
    if (!c) return QuotaLevel.NONE;
    return (c[0] > 0 ? QuotaLevel.CLIENT_ID : 0) | (c[1] > 0 ? QuotaLevel.USER : 0) | (c[2] > 0 ? QuotaLevel.USER_CLIENT_ID : 0);
  }

  /** DescribeClientQuotas (ClientQuotasImage.describe). */
  describe(components: readonly FilterComponent[], strict: boolean): DescribeResult {
    const exact = new Map<string, string | null>();
    const typed = new Set<string>();
    const fail = (errorCode: number, errorMessage: string): DescribeResult => ({ errorCode, errorMessage, entries: null });
    for (const c of components) {
      if (c.entityType.length === 0) return fail(ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.');
      if (exact.has(c.entityType) || typed.has(c.entityType)) return fail(ErrorCode.INVALID_REQUEST, `Entity type ${c.entityType} cannot appear more than once in the filter.`);
      if (c.entityType !== IP && c.entityType !== USER && c.entityType !== CLIENT_ID) return fail(ErrorCode.UNSUPPORTED_VERSION, `Unsupported entity type ${c.entityType}`);
      if (c.matchType === MatchType.EXACT) {
        if (c.match === null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.');
        exact.set(c.entityType, c.match);
      } else if (c.matchType === MatchType.DEFAULT) {
        if (c.match !== null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
        exact.set(c.entityType, null);
      } else if (c.matchType === MatchType.SPECIFIED) {
        if (c.match !== null) return fail(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
        typed.add(c.entityType);
      } else {
        return fail(ErrorCode.INVALID_REQUEST, `Unknown match type ${c.matchType}`);
      }
    }
    const filters = (t: string): boolean => exact.has(t) || typed.has(t);
    if (filters(IP) && (filters(USER) || filters(CLIENT_ID))) {
      return fail(ErrorCode.INVALID_REQUEST, 'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
    }
    const entries: DescribedEntry[] = [];
    for (const { entity, quotas } of this.entities.values()) {
      const types = Object.keys(entity) as (keyof Entity)[];
      if (strict && types.length !== exact.size + typed.size) continue;
      if (![...exact].every(([t, name]) => t in entity && entity[t as keyof Entity] === name)) continue;
      if (![...typed].every((t) => t in entity)) continue;
      entries.push({
        entity: types.map((t) => ({ entityType: t, entityName: entity[t] ?? null })),
        values: [...quotas].map(([key, value]) => ({ key, value })),
      });
    }
    return { errorCode: ErrorCode.NONE, errorMessage: null, entries };
  }

  /** AlterClientQuotas (ClientQuotaControlManager.alterClientQuotas); `validateOnly` changes nothing. */
  async alter(alterations: readonly QuotaAlteration[], validateOnly: boolean): Promise<AlterResult[]> {
    const results = new Map<string, { entity: JavaEntity; result: ApiResult }>();
    /** Per store key: the entity and its changed values (null: removed), in the order Kafka writes them. */
    const changes = new Map<string, { entity: Entity; values: Map<string, number | null> }>();
    let records = 0;
    for (const a of alterations) {
      const entity = javaEntity(a.entity);
      const values = new Map<string, number | null>();
      for (const op of a.ops) {
        if (values.has(op.key)) results.set(entity.id, { entity, result: invalid(`Duplicate quota key ${op.key} not updating quota for this entity ${entity.text}`) });
        else values.set(op.key, op.remove ? null : op.value);
      }
      if (results.has(entity.id)) {
        results.set(entity.id, { entity, result: invalid(`Ignoring duplicate entity ${entity.text}`) });
        continue;
      }
      const checked = await this.alterEntity(entity, values, a.ops.length);
      results.set(entity.id, { entity, result: checked.result });
      if (checked.change) {
        changes.set(entityKey(checked.change.entity), checked.change);
        records += checked.change.values.size;
      }
    }
    if (records > MAX_QUOTA_CHANGES_PER_REQUEST) {
      // QuorumController: a BoundedListTooLongException fails the whole request with POLICY_VIOLATION.
      throw new ClusterApiError(ErrorCode.POLICY_VIOLATION, 'Unable to perform excessively large batch operation.');
    }
    if (!validateOnly && changes.size > 0) await this.write(changes);
    return [...results.values()].map(({ entity, result }) => ({
      entity: entity.entries.map(([entityType, entityName]) => ({ entityType, entityName })),
      errorCode: result.errorCode,
      errorMessage: result.errorMessage,
    }));
  }

  /**
   * ClientQuotaControlManager.alterClientQuotaEntity: the entity's checks, then each value's in the order of
   * Kafka's HashMap of the ops; the values that change what this broker holds, or the first failure.
   */
  private async alterEntity(
    entity: JavaEntity,
    values: ReadonlyMap<string, number | null>,
    opCount: number,
  ): Promise<{ result: ApiResult; change?: { entity: Entity; values: Map<string, number | null> } }> {
    // validateEntity
    if (entity.entries.length === 0) return { result: invalid('Invalid empty client quota entity') };
    const names = new Map<string, string | null>();
    for (const [type, name] of entity.entries) {
      if (type !== USER && type !== CLIENT_ID && type !== IP) return { result: invalid(`Unhandled client quota entity type: ${type}`) };
      names.set(type, name);
      if (name !== null && name.length === 0) return { result: invalid(`Empty ${type} not supported`) };
      // Not Kafka's: a bound on what a client may make the brokers keep. A user or client id this long names no
      // client that exists (Kafka's own client.id is a short identifier), and every entity stays in memory.
      if (name !== null && Buffer.byteLength(name) > MAX_ENTITY_NAME_BYTES) return { result: invalid(`${type} names longer than ${MAX_ENTITY_NAME_BYTES} bytes are not supported`) };
    }
    // Stored (and described) in the key's order of types.
    const stored: Entity = {};
    for (const t of KEY_TYPES) if (names.has(t)) stored[t] = names.get(t) ?? null;
    // configKeysForEntityType
    let keys: ReadonlyMap<string, KeyType>;
    if (IP in stored) {
      if (USER in stored || CLIENT_ID in stored) return { result: invalid('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId') };
      const ip = stored.ip!;
      if (ip !== null && !(await this.resolvesHost(ip))) return { result: invalid(`${ip} is not a valid IP or resolvable host.`) };
      keys = IP_KEYS;
    } else {
      keys = USER_CLIENT_KEYS;
    }
    const current = this.entities.get(entityKey(stored))?.quotas ?? new Map<string, number>();
    const changed = new Map<string, number | null>();
    for (const key of javaHashMapOrder([...values.keys()], opCount)) {
      const value = values.get(key)!;
      if (value === null) {
        if (current.has(key)) changed.set(key, null);
        continue;
      }
      const refused = checkValue(keys, key, value);
      if (refused) return { result: refused };
      if (!Object.is(current.get(key), value)) changed.set(key, value);
    }
    return changed.size > 0 ? { result: OK, change: { entity: stored, values: changed } } : { result: OK };
  }

  /**
   * Applies the changes in transactions of at most TXN_OPS entities, each compared on its modRevision and
   * retried on a concurrent change; returns once this broker's copy holds them.
   */
  private async write(changes: ReadonlyMap<string, { entity: Entity; values: ReadonlyMap<string, number | null> }>): Promise<void> {
    const all = [...changes];
    let revision = 0;
    for (let i = 0; i < all.length; i += TXN_OPS) {
      const chunk = all.slice(i, i + TXN_OPS);
      for (;;) {
        const read = await this.store.txn({ success: chunk.map(([key]): TxnOp => ({ type: 'get', key })) });
        const compare: Compare[] = [];
        const ops: TxnOp[] = [];
        chunk.forEach(([key, change], j) => {
          const r = read.results[j]!;
          const kv = r.type === 'get' ? r.kv : null;
          compare.push({ key, target: 'modRevision', op: '==', value: kv?.modRevision ?? 0 });
          const quotas = new Map(kv ? decode(kv.value).quotas : []);
          for (const [k, v] of change.values) {
            if (v === null) quotas.delete(k);
            else quotas.set(k, v);
          }
          if (quotas.size === 0) {
            if (kv) ops.push({ type: 'delete', key });
          } else {
            ops.push({ type: 'put', key, value: encode(change.entity, quotas) });
          }
        });
        const res = await this.store.txn({ compare, success: ops });
        if (res.succeeded) {
          // Only a write has a revision of its own, which the watch delivers.
          if (ops.length > 0) revision = Math.max(revision, res.revision);
          break;
        }
      }
    }
    await this.caughtUp(revision, changes.keys());
  }

  /**
   * Resolves once the watch has delivered `revision`, so that this broker answers with what was just altered.
   * Without a watch (it ended), the changed keys are read from the store instead.
   */
  private async caughtUp(revision: number, keys: Iterable<string>): Promise<void> {
    if (this.seen >= revision) return;
    if (this.delivering) {
      await new Promise<void>((resolve) => this.waiters.push({ revision, resolve }));
      if (this.seen >= revision) return;
    }
    for (const key of keys) {
      const kv = await this.store.get(key);
      if (kv) this.apply(key, kv.value);
      else this.set(key, null);
    }
  }

  private wake(all = false): void {
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => all || w.revision <= this.seen);
    this.waiters = all ? [] : this.waiters.filter((w) => w.revision > this.seen);
    for (const w of ready) w.resolve();
  }

  private apply(key: string, value: Uint8Array): void {
    try {
      const s = decode(value);
      this.set(key, { entity: s.entity, quotas: s.quotas });
    } catch (err) {
      this.options.onWatchError(new Error(`client quota record ${key} does not decode: ${(err as Error).message}`));
    }
  }

  private set(key: string, next: Cached | null): void {
    const prev = this.entities.get(key);
    if (prev) this.count(prev, -1);
    if (next) {
      this.entities.set(key, next);
      this.count(next, 1);
    } else {
      this.entities.delete(key);
    }
  }

  private count(c: Cached, delta: number): void {
    const hasUser = USER in c.entity;
    const hasClient = CLIENT_ID in c.entity;
    const level = hasUser && hasClient ? 2 : hasUser ? 1 : hasClient ? 0 : null;
    if (level === null) return;
    for (const key of c.quotas.keys()) {
      let counts = this.levelCounts.get(key);
      if (!counts) this.levelCounts.set(key, (counts = [0, 0, 0]));
      counts[level] += delta;
    }
  }
}

/** ClientQuotaControlManager.validateQuotaKeyValue. */
function checkValue(keys: ReadonlyMap<string, KeyType>, key: string, value: number): ApiResult | null {
  const type = keys.get(key);
  if (type === undefined) return invalid(`Invalid configuration key ${key}`);
  if (value <= 0) return invalid(`Quota ${key} must be greater than 0`);
  if (type === 'DOUBLE') return null;
  // Java compares the double with the long or int bound converted to double (Long.MAX_VALUE: 2^63).
  if (type === 'INT' && value > 2147483647) return invalid(`Proposed value for ${key} is too large for an INT.`);
  if (type === 'LONG' && value > 2 ** 63) return invalid(`Proposed value for ${key} is too large for a LONG.`);
  // getErrorForIntegralQuotaValue (NaN passes, as in Java).
  if (Math.abs(value % 1) > 1e-6) return invalid(`${key} cannot be a fractional value.`);
  return null;
}

/** A request's entity as Kafka's AlterClientQuotasRequest.entries builds it: a HashMap of type → name. */
interface JavaEntity {
  /** Types in the HashMap's iteration order, each with its last name in the request. */
  readonly entries: readonly [string, string | null][];
  /** Equal for equal maps (ClientQuotaEntity.equals). */
  readonly id: string;
  /** ClientQuotaEntity.toString. */
  readonly text: string;
}

function javaEntity(components: readonly EntityComponent[]): JavaEntity {
  const names = new Map<string, string | null>();
  for (const c of components) names.set(c.entityType, c.entityName);
  const entries = javaHashMapOrder([...names.keys()], components.length).map((t): [string, string | null] => [t, names.get(t) ?? null]);
  const id = JSON.stringify([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const text = `ClientQuotaEntity(entries={${entries.map(([t, n]) => `${t}=${n ?? 'null'}`).join(', ')}})`;
  return { entries, id, text };
}

/** Java's String.hashCode. */
function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * The iteration order of a java.util.HashMap built with `new HashMap<>(initialCapacity)` (16 when omitted) into
 * which `keys` (distinct) were put in this order: by bucket, (h ^ h >>> 16) & (capacity − 1), then by insertion.
 */
export function javaHashMapOrder(keys: readonly string[], initialCapacity?: number): string[] {
  let capacity = initialCapacity === undefined ? 16 : tableSizeFor(initialCapacity);
  for (let size = 1; size <= keys.length; size++) if (size > Math.floor(capacity * 0.75)) capacity *= 2;
  const bucket = (k: string): number => {
    const h = javaStringHash(k);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  return keys.map((k, i) => ({ k, i, b: bucket(k) })).sort((x, y) => x.b - y.b || x.i - y.i).map((x) => x.k);
}

/** HashMap.tableSizeFor: the power of two at least `n` (1 for 0). */
function tableSizeFor(n: number): number {
  let c = 1;
  while (c < n) c *= 2;
  return c;
}

/** The store key of an entity: its types in KEY_TYPES order, `<default>` for a default, names percent-encoded. */
function entityKey(entity: Entity): string {
  const parts: string[] = [];
  for (const t of KEY_TYPES) {
    if (!(t in entity)) continue;
    const name = entity[t];
    parts.push(`${t}=${name === null || name === undefined ? DEFAULT_NAME : encodeURIComponent(name)}`);
  }
  return QUOTAS_PREFIX + parts.join('&');
}

function encode(entity: Entity, quotas: ReadonlyMap<string, number>): Uint8Array {
  const stored: Stored = { formatVersion: 1, entity, quotas: Object.fromEntries([...quotas].map(([k, v]) => [k, Number.isFinite(v) ? v : String(v)])) };
  return Buffer.from(JSON.stringify(stored));
}

function decode(value: Uint8Array): Cached {
  const s = JSON.parse(Buffer.from(value).toString('utf8')) as Partial<Stored>;
  if (s.formatVersion !== 1) throw new Error(`unknown formatVersion ${String(s.formatVersion)}`);
  if (typeof s.entity !== 'object' || s.entity === null || typeof s.quotas !== 'object' || s.quotas === null) throw new Error('entity or quotas missing');
  const entity: Entity = {};
  for (const [t, name] of Object.entries(s.entity)) {
    if (t !== USER && t !== CLIENT_ID && t !== IP) throw new Error(`unknown entity type ${t}`);
    if (name !== null && typeof name !== 'string') throw new Error(`the ${t} name is not a string`);
    entity[t] = name;
  }
  const quotas = new Map<string, number>();
  for (const [k, v] of Object.entries(s.quotas)) {
    const n = typeof v === 'string' ? Number(v) : v;
    if (typeof n !== 'number' || (typeof v === 'string' && !['NaN', 'Infinity', '-Infinity'].includes(v))) throw new Error(`${k} is not a number`);
    quotas.set(k, n);
  }
  return { entity, quotas };
}

/** Kafka's InetAddress.getByName: an address, or a host name that resolves. */
async function resolvesHost(host: string): Promise<boolean> {
  if (isIP(host) !== 0) return true;
  try {
    await lookup(host);
    return true;
  } catch {
    return false;
  }
}
