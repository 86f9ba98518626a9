/**
 * The topic registry: names, ids, partition counts and per-topic config overrides, kept in the metadata
 * store under `/topics/<name>` and `/topic-ids/<id>` (see src/metadata/layout.ts), and cached in memory
 * for the request path. Changes are serialized through one queue per broker and written with
 * compare-and-set so that a concurrent writer (another broker, later) cannot be silently overwritten.
 *
 * Kafka's rules followed: name validation and '.'/'_' collisions (INVALID_TOPIC_EXCEPTION),
 * TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS (≤ 0 or decreasing), INVALID_REPLICATION_FACTOR,
 * INVALID_CONFIG for unknown names or bad values, and the config resolution order
 * topic override → broker config → Kafka default.
 *
 * The cache follows a watch on `/topics/` from the revision it was loaded at, so a topic created, grown,
 * reconfigured or deleted by another writer of the same store appears, changes or disappears here too, with
 * the same listener events as a change made here (as Kafka's brokers follow the controller's metadata log).
 * Each cached topic remembers the revision of its stored record; an event no newer than that is this
 * manager's own write, already applied. Events are applied on the change queue, after any change in progress.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import type { BrokerConfig } from '../config.js';
import { parseSegment, topicIdKey, topicKey, TOPICS_PREFIX } from '../metadata/layout.js';
import { follow, type Following } from '../metadata/follow.js';
import type { KeyValue, MetadataStore, WatchEvent } from '../metadata/types.js';
import { ClusterApiError } from './errors.js';
import type { DynamicDefaults } from './cluster-configs.js';

/** Topic config defaults by topic name (tenant and namespace policies, src/tenants/tenant-store.ts). */
export interface TopicPolicies {
  policy(topic: string, config: string): { readonly value: string } | undefined;
}
import { BROKER_CONFIG_BY_NAME, ConfigSource, TOPIC_CONFIG_BY_NAME, TOPIC_CONFIGS, validateConfigValue, type TopicConfigDef } from './config-defs.js';
import { hasCollisionChars, isInternalTopic, quoted, topicNameError, unifyCollisionChars } from './topic-names.js';

export interface TopicRecord {
  readonly name: string;
  /** KIP-516 topic id, Kafka's base64url form. */
  readonly topicId: string;
  readonly partitions: number;
  /** Topic-level overrides only (DYNAMIC_TOPIC_CONFIG). */
  readonly configs: Readonly<Record<string, string>>;
  readonly internal: boolean;
  readonly createdAtMs: number;
  /**
   * The replication factor asked for and accepted at creation (CreateTopics, or default.replication.factor).
   * Absent in records written before it was stored: 1.
   */
  readonly replicationFactor?: number;
}

/** A topic's replication factor as stored (1 for records from before it was stored). */
export function replicationFactorOf(t: TopicRecord): number {
  return t.replicationFactor ?? 1;
}

export interface ResolvedConfig {
  readonly def: TopicConfigDef;
  readonly value: string | null;
  readonly source: number;
  /** Kafka's synonyms, most specific first: topic override, static broker config, default. */
  readonly synonyms: { name: string; value: string | null; source: number }[];
}

/** Told about topic changes so the partition layer can open, grow or delete partition logs. */
export interface TopicListener {
  topicCreated?(topic: TopicRecord): Promise<void> | void;
  partitionsAdded?(topic: TopicRecord, from: number): Promise<void> | void;
  topicDeleted?(topic: TopicRecord): Promise<void> | void;
  configsChanged?(topic: TopicRecord): Promise<void> | void;
}

export interface CreateTopicOptions {
  partitions: number;
  replicationFactor: number;
  configs: Record<string, string | null>;
  validateOnly?: boolean;
  /** Internal topics may be created only by the broker itself. */
  allowInternal?: boolean;
}

const enc = (o: unknown): Buffer => Buffer.from(JSON.stringify(o));

/**
 * Kafka's bound on the partitions one CreateTopics request may create (ReplicationControlManager.
 * MAX_PARTITIONS_PER_BATCH, checked by validateTotalNumberOfPartitions before anything else), which is also
 * QuorumController.MAX_RECORDS_PER_USER_OP, the records one CreatePartitions request may write.
 */
export const MAX_PARTITIONS_PER_REQUEST = 10_000;
/** Kafka's PolicyViolationException message for a request over MAX_PARTITIONS_PER_REQUEST. */
export const EXCESSIVE_PARTITIONS_MESSAGE = 'Excessively large number of partitions per request.';
/**
 * QuorumController.MAX_RECORDS_PER_USER_OP: the records one request may write (CreateTopics: a TopicRecord, a
 * PartitionRecord per partition and a ConfigRecord per config of each topic it creates).
 */
export const MAX_RECORDS_PER_REQUEST = 10_000;
/** The PolicyViolationException Kafka's controller makes of a request past MAX_RECORDS_PER_REQUEST. */
export const EXCESSIVE_BATCH_MESSAGE = 'Unable to perform excessively large batch operation.';

/**
 * The partitions a CreateTopics topic asks for, as Kafka's validateTotalNumberOfPartitions counts them: its
 * assignments, else num.partitions for -1, else the count when positive (an invalid count adds nothing and
 * fails on its own with INVALID_PARTITIONS).
 */
export function requestedPartitions(numPartitions: number, assignments: number, defaultPartitions: number): number {
  if (assignments > 0) return assignments;
  if (numPartitions === -1) return defaultPartitions;
  return numPartitions > 0 ? numPartitions : 0;
}

export class TopicManager {
  private readonly byName = new Map<string, TopicRecord>();
  private readonly byId = new Map<string, TopicRecord>();
  /** unified name ('.' → '_') → existing topic name, for Kafka's collision check. */
  private readonly unified = new Map<string, string>();
  private queue: Promise<unknown> = Promise.resolve();
  private readonly listeners: TopicListener[] = [];
  /** topic name → modRevision of the stored record the cache holds. */
  private readonly revisions = new Map<string, number>();
  private following: Following | null = null;
  /** Store reads of topics not known here (`refresh`), by name. */
  private readonly refreshing = new Map<string, Promise<void>>();
  /** Registered brokers, which bound the replication factor (the cluster view sets it; alone: 1). */
  liveBrokerCount: () => number = () => 1;
  /** The cluster-level dynamic broker configs (src/cluster/cluster-configs.ts); none unless the broker sets them. */
  private dynamicDefaults: DynamicDefaults = { get: () => undefined, broker: () => undefined };
  /** Tenant and namespace policies (src/tenants/): topic config defaults by name prefix; none unless set. */
  private policies: TopicPolicies = { policy: () => undefined };

  constructor(
    private readonly store: MetadataStore,
    private readonly config: BrokerConfig,
    /** Where a failure to follow the store is reported (it is read again and followed from there). */
    private readonly onWatchError: (err: Error) => void = () => undefined,
  ) {}

  /**
   * Resolves topic configs over these cluster-level dynamic values from now on. Call `dynamicDefaultsChanged`
   * when they change, so the open partitions take the new effective values.
   */
  useDynamicDefaults(d: DynamicDefaults): void {
    this.dynamicDefaults = d;
  }

  /** Resolves topic configs over these tenant and namespace policies from now on (call dynamicDefaultsChanged when they change). */
  useTopicPolicies(p: TopicPolicies): void {
    this.policies = p;
  }

  /** The cluster-level values changed: every topic's effective configs may have, as Kafka reconfigures its logs. */
  dynamicDefaultsChanged(): Promise<void> {
    return this.serialize(async () => {
      for (const t of this.byName.values()) await this.tell((l) => l.configsChanged?.(t));
    });
  }

  addListener(l: TopicListener): void {
    this.listeners.push(l);
  }

  /**
   * Loads the registry, then follows the store's changes to it (follow.ts: read again whenever the watch ends,
   * etcd's ErrCompacted among them, with what changed meanwhile told to the listeners).
   */
  async load(): Promise<void> {
    let first = true;
    this.following = await follow(
      this.store,
      { prefix: TOPICS_PREFIX },
      {
        reset: (kvs, revision) => {
          if (!first) {
            void this.serialize(() => this.resync(kvs, revision)).catch((err: unknown) => this.onWatchError(err as Error));
            return;
          }
          first = false;
          for (const kv of kvs) {
            const t = JSON.parse(Buffer.from(kv.value).toString('utf8')) as TopicRecord;
            this.remember(t);
            this.revisions.set(t.name, kv.modRevision);
          }
        },
        changes: (events) => {
          void this.serialize(() => this.applyEvents(events)).catch((err: unknown) => this.onWatchError(err as Error));
        },
        error: (err) => this.onWatchError(err),
      },
    );
  }

  /** Stops following the store. */
  async close(): Promise<void> {
    await this.following?.cancel();
    this.following = null;
  }

  /** Applies changes another writer made to /topics/ (this manager's own are already applied). */
  private async applyEvents(events: readonly WatchEvent[]): Promise<void> {
    for (const e of events) {
      const name = parseSegment(e.kv.key.slice(TOPICS_PREFIX.length));
      const known = this.revisions.get(name) ?? 0;
      if (e.kv.modRevision <= known) continue;
      const prev = this.byName.get(name);
      if (e.type === 'delete') {
        this.revisions.set(name, e.kv.modRevision);
        if (prev) await this.externalDelete(prev);
        continue;
      }
      const next = JSON.parse(Buffer.from(e.kv.value).toString('utf8')) as TopicRecord;
      this.revisions.set(name, e.kv.modRevision);
      await this.externalPut(prev, next);
    }
  }

  private async externalDelete(t: TopicRecord): Promise<void> {
    this.forget(t);
    await this.tell((l) => l.topicDeleted?.(t));
  }

  /** Tells every listener of a change another writer made; one that fails is reported, the others still told. */
  private async tell(fn: (l: TopicListener) => Promise<void> | void): Promise<void> {
    for (const l of this.listeners) {
      try {
        await fn(l);
      } catch (err) {
        this.onWatchError(err as Error);
      }
    }
  }

  private async externalPut(prev: TopicRecord | undefined, next: TopicRecord): Promise<void> {
    if (prev && prev.topicId !== next.topicId) {
      await this.externalDelete(prev);
      prev = undefined;
    }
    if (!prev) {
      this.remember(next);
      await this.tell((l) => l.topicCreated?.(next));
      return;
    }
    const before = prev;
    this.byName.set(next.name, next);
    this.byId.set(next.topicId, next);
    if (next.partitions > before.partitions) await this.tell((l) => l.partitionsAdded?.(next, before.partitions));
    if (JSON.stringify(next.configs) !== JSON.stringify(before.configs)) await this.tell((l) => l.configsChanged?.(next));
  }

  /** Takes the registry as read again after the watch ended, telling listeners what changed meanwhile. */
  private async resync(kvs: readonly KeyValue[], revision: number): Promise<void> {
    const seen = new Set<string>();
    for (const kv of kvs) {
      const t = JSON.parse(Buffer.from(kv.value).toString('utf8')) as TopicRecord;
      seen.add(t.name);
      if ((this.revisions.get(t.name) ?? 0) >= kv.modRevision) continue;
      this.revisions.set(t.name, kv.modRevision);
      await this.externalPut(this.byName.get(t.name), t);
    }
    for (const t of [...this.byName.values()]) {
      if (seen.has(t.name) || (this.revisions.get(t.name) ?? 0) > revision) continue;
      this.revisions.set(t.name, revision);
      await this.externalDelete(t);
    }
  }

  get(name: string): TopicRecord | undefined {
    return this.byName.get(name);
  }

  /**
   * For a broker that shares its store with others: a topic (or a partition of it) not known here may have been
   * created a moment ago through another broker, whose Metadata already names this one its leader, while this
   * registry's watch has not delivered it yet. Reads the topic's record from the store and applies it as the
   * watch would (the watch's own event is then skipped by its revision). True when the partition is known
   * afterwards. Concurrent refreshes of one name share one read.
   */
  refresh(name: string, partition: number): Promise<boolean> {
    const known = (): boolean => {
      const t = this.byName.get(name);
      return t !== undefined && partition < t.partitions;
    };
    if (known()) return Promise.resolve(true);
    let pending = this.refreshing.get(name);
    if (pending === undefined) {
      const read = this.store
        .get(topicKey(name))
        .then((kv) => (kv === null ? undefined : this.serialize(() => this.applyEvents([{ type: 'put', kv }]))))
        .then(
          () => undefined,
          (err: unknown) => this.onWatchError(err as Error),
        );
      pending = read;
      this.refreshing.set(name, read);
      void read.then(() => {
        if (this.refreshing.get(name) === read) this.refreshing.delete(name);
      });
    }
    return pending.then(known);
  }

  getById(topicId: string): TopicRecord | undefined {
    return this.byId.get(topicId);
  }

  list(): TopicRecord[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  /** Runs `fn` after every earlier change has finished. */
  private serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private remember(t: TopicRecord): void {
    this.byName.set(t.name, t);
    this.byId.set(t.topicId, t);
    if (hasCollisionChars(t.name)) this.unified.set(unifyCollisionChars(t.name), t.name);
  }

  private forget(t: TopicRecord): void {
    this.byName.delete(t.name);
    this.byId.delete(t.topicId);
    if (this.unified.get(unifyCollisionChars(t.name)) === t.name) this.unified.delete(unifyCollisionChars(t.name));
  }

  /** Validates a set of topic config overrides; throws ClusterApiError(INVALID_CONFIG). */
  validateConfigs(configs: Record<string, string | null>): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of Object.entries(configs)) {
      const def = TOPIC_CONFIG_BY_NAME.get(name);
      if (!def) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Unknown topic config name: ${quoted(name)}`);
      if (value === null) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Null value not supported for topic configs: ${name}`);
      const err = validateConfigValue(def, value);
      if (err) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, err);
      out[name] = value.trim();
    }
    return out;
  }

  /** Checks a CreateTopics request without changing anything; returns the record it would create. */
  private checkCreate(name: string, opts: CreateTopicOptions): TopicRecord {
    const nameErr = topicNameError(name);
    if (nameErr) throw new ClusterApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameErr);
    if (isInternalTopic(name) && !opts.allowInternal) {
      throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Creation of internal topic ${name} is prohibited.`);
    }
    if (this.byName.has(name)) throw new ClusterApiError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
    if (hasCollisionChars(name)) {
      const other = this.unified.get(unifyCollisionChars(name));
      if (other !== undefined) throw new ClusterApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${other}`);
    }
    const partitions = opts.partitions === -1 ? this.config.numPartitions : opts.partitions;
    if (!Number.isInteger(partitions) || partitions <= 0) {
      throw new ClusterApiError(ErrorCode.INVALID_PARTITIONS, `Number of partitions was set to an invalid non-positive value.`);
    }
    // The handler bounds the whole request; this keeps every other caller (auto-creation) bounded too.
    if (partitions > MAX_PARTITIONS_PER_REQUEST) throw new ClusterApiError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE);
    const rf = opts.replicationFactor === -1 ? this.config.defaultReplicationFactor : opts.replicationFactor;
    if (rf <= 0) throw new ClusterApiError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0, or -1 to use the default value.');
    // Kafka's ReplicationControlManager refuses a factor the registered brokers cannot reach.
    const brokers = this.liveBrokerCount();
    if (rf > brokers) {
      throw new ClusterApiError(ErrorCode.INVALID_REPLICATION_FACTOR, `Unable to replicate the partition ${rf} time(s): The target replication factor of ${rf} cannot be reached because only ${brokers} broker(s) are registered.`);
    }
    const configs = this.validateConfigs(opts.configs);
    return { name, topicId: randomUuid(), partitions, configs, internal: isInternalTopic(name), createdAtMs: Date.now(), replicationFactor: rf };
  }

  /** Creates a topic (durably) or, with validateOnly, only checks that it could be. Throws ClusterApiError. */
  create(name: string, opts: CreateTopicOptions): Promise<TopicRecord> {
    return this.serialize(async () => {
      const t = this.checkCreate(name, opts);
      if (opts.validateOnly) return t;
      const res = await this.store.txn({
        compare: [
          { key: topicKey(name), target: 'version', op: '==', value: 0 },
          { key: topicIdKey(t.topicId), target: 'version', op: '==', value: 0 },
        ],
        success: [
          { type: 'put', key: topicKey(name), value: enc(t) },
          { type: 'put', key: topicIdKey(t.topicId), value: Buffer.from(name) },
        ],
        failure: [],
      });
      if (!res.succeeded) throw new ClusterApiError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
      this.remember(t);
      this.revisions.set(name, res.revision);
      for (const l of this.listeners) await l.topicCreated?.(t);
      return t;
    });
  }

  /** Deletes a topic and tells listeners (which delete its partitions' ledgers). Throws ClusterApiError. */
  delete(name: string): Promise<TopicRecord> {
    return this.serialize(async () => {
      const t = this.byName.get(name);
      if (!t) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      if (t.internal) throw new ClusterApiError(ErrorCode.INVALID_REQUEST, `Topic ${name} is an internal topic and cannot be deleted.`);
      const res = await this.store.txn({
        compare: [],
        success: [
          { type: 'delete', key: topicKey(name) },
          { type: 'delete', key: topicIdKey(t.topicId) },
        ],
        failure: [],
      });
      this.forget(t);
      // Kept as a tombstone: events of the record's earlier revisions may still be on their way.
      this.revisions.set(name, res.revision);
      for (const l of this.listeners) await l.topicDeleted?.(t);
      return t;
    });
  }

  /** Raises a topic's partition count (CreatePartitions). Throws ClusterApiError. */
  addPartitions(name: string, count: number, validateOnly: boolean): Promise<TopicRecord> {
    return this.serialize(async () => {
      const t = this.byName.get(name);
      if (!t) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      if (count < t.partitions) {
        throw new ClusterApiError(ErrorCode.INVALID_PARTITIONS, `The topic ${name} currently has ${t.partitions} partition(s); ${count} would not be an increase.`);
      }
      if (count === t.partitions) throw new ClusterApiError(ErrorCode.INVALID_PARTITIONS, `Topic already has ${t.partitions} partition(s).`);
      if (count - t.partitions > MAX_PARTITIONS_PER_REQUEST) throw new ClusterApiError(ErrorCode.POLICY_VIOLATION, EXCESSIVE_PARTITIONS_MESSAGE);
      const next: TopicRecord = { ...t, partitions: count };
      if (validateOnly) return next;
      await this.put(t, next);
      for (const l of this.listeners) await l.partitionsAdded?.(next, t.partitions);
      return next;
    });
  }

  /** Replaces a topic's config overrides (AlterConfigs) or applies incremental changes. Throws ClusterApiError. */
  setConfigs(name: string, configs: Record<string, string>, validateOnly: boolean): Promise<TopicRecord> {
    return this.serialize(async () => {
      const t = this.byName.get(name);
      if (!t) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
      const next: TopicRecord = { ...t, configs: this.validateConfigs(configs) };
      if (validateOnly) return next;
      await this.put(t, next);
      for (const l of this.listeners) await l.configsChanged?.(next);
      return next;
    });
  }

  private async put(prev: TopicRecord, next: TopicRecord): Promise<void> {
    const kv = await this.store.get(topicKey(prev.name));
    if (!kv) throw new ClusterApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.');
    const res = await this.store.compareAndSet(topicKey(prev.name), { modRevision: kv.modRevision }, enc(next));
    if (!res.succeeded) throw new ClusterApiError(ErrorCode.CONCURRENT_TRANSACTIONS, `Topic ${prev.name} changed concurrently; retry.`);
    this.revisions.set(next.name, res.revision);
    this.byName.set(next.name, next);
    this.byId.set(next.topicId, next);
  }

  /**
   * One config of a topic, resolved as Kafka resolves it: the topic's override, else the first broker
   * synonym set for this broker (dynamic), at the cluster level (a dynamic default) or by the operator (static), unit-converted, else the default. Synonyms are listed most specific first
   * and end with the default entry, as DescribeConfigs reports them.
   */
  resolve(t: TopicRecord, def: TopicConfigDef): ResolvedConfig {
    const synonyms: ResolvedConfig['synonyms'] = [];
    const override = t.configs[def.name];
    if (override !== undefined) synonyms.push({ name: def.name, value: override, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
    let value: string | null = override ?? null;
    let source: number = override !== undefined ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG;
    // A tenant or namespace policy (src/tenants/) is the topic's own value unless the topic overrides it: Kafka has
    // no such level, so it is described as a topic config (what `kafka-configs --describe` lists for the topic).
    const policy = this.policies.policy(t.name, def.name);
    if (policy !== undefined) {
      synonyms.push({ name: def.name, value: policy.value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG });
      if (override === undefined) {
        value = policy.value;
        source = ConfigSource.DYNAMIC_TOPIC_CONFIG;
      }
    }
    const convert = (v: string | null, factor = 1): string | null => (v === null || factor === 1 ? v : String(BigInt(v) * BigInt(factor)));
    const brokerSynonyms = def.brokerSynonyms ?? [];
    for (const syn of brokerSynonyms) {
      const own = this.dynamicDefaults.broker(syn.name);
      if (own !== undefined) {
        synonyms.push({ name: syn.name, value: own, source: ConfigSource.DYNAMIC_BROKER_CONFIG });
        if (value === null) {
          value = convert(own, syn.factor);
          source = ConfigSource.DYNAMIC_BROKER_CONFIG;
        }
      }
      const dynamic = this.dynamicDefaults.get(syn.name);
      if (dynamic !== undefined) {
        synonyms.push({ name: syn.name, value: dynamic, source: ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG });
        if (value === null) {
          value = convert(dynamic, syn.factor);
          source = ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG;
        }
      }
      if (!this.config.explicit.has(syn.name)) continue;
      const v = this.config.values.get(syn.name) ?? null;
      synonyms.push({ name: syn.name, value: v, source: ConfigSource.STATIC_BROKER_CONFIG });
      if (value === null) {
        value = convert(v, syn.factor);
        source = ConfigSource.STATIC_BROKER_CONFIG;
      }
    }
    const withDefault = [...brokerSynonyms].reverse().find((s) => BROKER_CONFIG_BY_NAME.get(s.name)?.default != null);
    if (withDefault) {
      const d = BROKER_CONFIG_BY_NAME.get(withDefault.name)!.default;
      synonyms.push({ name: withDefault.name, value: d, source: ConfigSource.DEFAULT_CONFIG });
      if (value === null && override === undefined) value = convert(d, withDefault.factor);
    }
    if (value === null && override === undefined) value = def.default;
    return { def, value, source, synonyms };
  }

  /** Every topic config of a topic, resolved, in Kafka's order. */
  resolveAll(t: TopicRecord): ResolvedConfig[] {
    return TOPIC_CONFIGS.map((d) => this.resolve(t, d));
  }

  /** The value a topic without its own setting of `name` gets (from the broker's synonyms or the default). */
  defaultConfigValue(name: string): string | null {
    const def = TOPIC_CONFIG_BY_NAME.get(name);
    if (!def) throw new Error(`unknown topic config ${name}`);
    // resolve() reads only the topic's name (for tenant policies: "" is under none) and its own configs.
    return this.resolve({ name: '', configs: {} } as unknown as TopicRecord, def).value;
  }

  /** The effective value of one topic config. */
  configValue(t: TopicRecord, name: string): string | null {
    const def = TOPIC_CONFIG_BY_NAME.get(name);
    if (!def) throw new Error(`unknown topic config ${name}`);
    return this.resolve(t, def).value;
  }
}
