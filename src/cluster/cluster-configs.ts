/**
 * Dynamic broker configs at the cluster level: Kafka's default broker resource (`kafka-configs --alter
 * --entity-type brokers --entity-default`, a KRaft ConfigRecord for BROKER ""), shared by every broker on the
 * metadata store and followed with a watch, so a change made through any broker applies on all of them.
 *
 *   /configs/brokers   {"formatVersion": 1, "configs": {"min.insync.replicas": "1", "log.retention.ms": "…"}}
 *
 * And per broker (`--entity-type brokers --entity-name <id>`, DYNAMIC_BROKER_CONFIG), each broker following its own:
 *
 *   /configs/broker/<nodeId>   {"formatVersion": 1, "configs": {"log.retention.ms": "…"}}
 *
 * A topic config resolves as Kafka resolves it (ConfigHelper, DynamicBrokerConfig): the topic's override,
 * else, for each of its broker synonyms in order, that synonym's per-broker dynamic value, its cluster-level
 * dynamic value, then its static value, else the default.
 *
 * What may be set here: the broker configs that supply a topic config's default, the first synonym of each
 * (Kafka's DynamicLogConfig.ReconfigurableConfigs: log.retention.ms but not log.retention.hours,
 * min.insync.replicas, compression.type, …), and the connection limits (max.connections,
 * max.connections.per.ip and its overrides, KIP-308/402). Every other broker config is static in Ledgerline.
 *
 * KIP-966: with eligible.leader.replicas.version 1 finalized (as Ledgerline finalizes it), the cluster-level
 * min.insync.replicas must exist. The first start writes the static value when there is none, as Kafka's
 * controller does before it enables ELR (ConfigurationControlManager.maybeGenerateElrSafetyRecords), so every
 * topic reports it as a dynamic cluster default; removing it, or setting it per broker, is INVALID_CONFIG.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { BROKER_CONFIGS_PREFIX, CLUSTER_CONFIGS_KEY } from '../metadata/layout.js';
import { follow, type Following } from '../metadata/follow.js';
import type { MetadataStore } from '../metadata/types.js';
import { BROKER_CONFIG_BY_NAME, invalidOverrides, TOPIC_CONFIGS, validateConfigValue, type ConfigDef } from './config-defs.js';
import { ClusterApiError } from './errors.js';
import { quoted } from './topic-names.js';

export const MIN_INSYNC_REPLICAS = 'min.insync.replicas';

/** The broker-level configs Kafka lets operators change at runtime that Ledgerline serves (DynamicBrokerConfig). */
export const RECONFIGURABLE_BROKER_CONFIGS = ['max.connections', 'max.connections.per.ip', 'max.connections.per.ip.overrides'];

/** The broker configs that may be set at the cluster level or per broker: the topic defaults, and the reconfigurable ones. */
export const CLUSTER_DYNAMIC_CONFIGS: ReadonlyMap<string, ConfigDef> = new Map([
  ...TOPIC_CONFIGS.flatMap((t) => {
    const first = t.brokerSynonyms?.[0];
    const def = first && BROKER_CONFIG_BY_NAME.get(first.name);
    return def ? [[def.name, def] as const] : [];
  }),
  ...RECONFIGURABLE_BROKER_CONFIGS.map((name) => [name, BROKER_CONFIG_BY_NAME.get(name)!] as const),
]);

export const ELR_MIN_ISR_REMOVAL = 'Cluster-level min.insync.replicas cannot be removed while ELR is enabled.';
export const ELR_BROKER_MIN_ISR = 'Broker-level min.insync.replicas cannot be altered while ELR is enabled.';

interface Stored {
  readonly formatVersion: 1;
  readonly configs: Record<string, string>;
}

/** The dynamic values, as topic config resolution reads them. */
export interface DynamicDefaults {
  /** The cluster-level value of a broker config, undefined when none is set. */
  get(name: string): string | undefined;
  /** This broker's own value, undefined when none is set. */
  broker(name: string): string | undefined;
}

/** One stored set of dynamic values (a key of the metadata store), followed with a watch and changed by compare-and-set. */
class ConfigRecord {
  configs: Record<string, string> = {};
  private revision = 0;
  private following: Following | null = null;

  constructor(
    private readonly store: MetadataStore,
    readonly key: string,
    private readonly changed: () => void,
    private readonly onWatchError: (err: Error) => void,
  ) {}

  /** Reads the record, then follows its changes (follow.ts); a record that does not decode fails the load. */
  async load(): Promise<void> {
    let loaded = false;
    this.following = await follow(
      this.store,
      { key: this.key },
      {
        reset: (kvs, revision) => {
          const kv = kvs[0];
          try {
            // Absent at the read's revision: deleted (or never set), unless this broker's own write is newer.
            this.apply(kv ? decode(kv.value, this.key) : {}, kv ? kv.modRevision : revision);
          } catch (err) {
            if (!loaded) throw err;
            this.onWatchError(err as Error);
          }
          loaded = true;
        },
        changes: (events) => {
          for (const e of events) {
            try {
              this.apply(e.type === 'delete' ? {} : decode(e.kv.value, this.key), e.kv.modRevision);
            } catch (err) {
              this.onWatchError(err as Error);
            }
          }
        },
        error: (err) => this.onWatchError(err),
      },
    );
  }

  async close(): Promise<void> {
    await this.following?.cancel();
    this.following = null;
  }

  /** Compare-and-set of the stored record, retried on a concurrent change. */
  async update(fn: (current: Record<string, string>) => Record<string, string>): Promise<void> {
    for (;;) {
      const kv = await this.store.get(this.key);
      const current = kv ? decode(kv.value, this.key) : {};
      const next = fn(current);
      const value = Buffer.from(JSON.stringify({ formatVersion: 1, configs: next } satisfies Stored));
      const res = await this.store.compareAndSet(this.key, kv ? { modRevision: kv.modRevision } : { version: 0 }, value);
      if (res.succeeded) {
        this.apply(next, res.revision);
        return;
      }
    }
  }

  private apply(configs: Record<string, string>, revision: number): void {
    if (revision <= this.revision) return;
    this.revision = revision;
    const changed = JSON.stringify(configs) !== JSON.stringify(this.configs);
    this.configs = configs;
    if (changed) this.changed();
  }
}

export class ClusterConfigs implements DynamicDefaults {
  private readonly cluster: ConfigRecord;
  private readonly own: ConfigRecord;
  private readonly listeners: (() => void)[] = [];

  constructor(
    store: MetadataStore,
    /** This broker: its own values are `/configs/broker/<nodeId>`. */
    nodeId: number,
    /** Where a failure to follow the store is reported. */
    onWatchError: (err: Error) => void = () => undefined,
  ) {
    const changed = () => {
      for (const l of this.listeners) l();
    };
    this.cluster = new ConfigRecord(store, CLUSTER_CONFIGS_KEY, changed, onWatchError);
    this.own = new ConfigRecord(store, brokerConfigsKey(nodeId), changed, onWatchError);
  }

  /** The cluster-level value of a broker config (`--entity-default`), undefined when none is set. */
  get(name: string): string | undefined {
    return this.cluster.configs[name];
  }

  /** This broker's own dynamic value (`--entity-name <id>`, DYNAMIC_BROKER_CONFIG), undefined when none is set. */
  broker(name: string): string | undefined {
    return this.own.configs[name];
  }

  /** A broker config's effective dynamic value: this broker's own, else the cluster-level one, else undefined. */
  effective(name: string): string | undefined {
    return this.own.configs[name] ?? this.cluster.configs[name];
  }

  /** Every cluster-level value, by name. */
  entries(): readonly (readonly [string, string])[] {
    return Object.entries(this.cluster.configs);
  }

  /** Called after the values changed, here or through another broker sharing the store. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Follows the store, loads the values, and writes KIP-966's cluster-level min.insync.replicas if missing. */
  async load(staticMinInsyncReplicas: string): Promise<void> {
    await this.cluster.load();
    await this.own.load();
    if (this.get(MIN_INSYNC_REPLICAS) === undefined) {
      // A concurrent first start writes the same value; whichever wins, the value exists afterwards.
      await this.cluster.update((c) => (c[MIN_INSYNC_REPLICAS] === undefined ? { ...c, [MIN_INSYNC_REPLICAS]: staticMinInsyncReplicas } : c));
    }
  }

  async close(): Promise<void> {
    await this.cluster.close();
    await this.own.close();
  }

  /**
   * Checks a change of the cluster-level values and, unless validateOnly, stores it. `changes` maps a name to
   * its new value or null to remove it; `replaceAll` (legacy AlterConfigs) removes every value not named.
   * Throws ClusterApiError with Kafka's codes and messages.
   */
  async alter(changes: ReadonlyMap<string, string | null>, opts: { validateOnly: boolean; replaceAll?: boolean }): Promise<void> {
    const next = checked(this.cluster.configs, changes, opts);
    if (next[MIN_INSYNC_REPLICAS] === undefined) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, ELR_MIN_ISR_REMOVAL);
    if (opts.validateOnly) return;
    await this.cluster.update((current) => checked(current, changes, opts));
  }

  /**
   * The same for this broker's own values (Kafka's per-broker dynamic configs): the same reconfigurable configs,
   * but min.insync.replicas, which KIP-966 keeps at the cluster level (ELR_BROKER_MIN_ISR).
   */
  async alterBroker(changes: ReadonlyMap<string, string | null>, opts: { validateOnly: boolean; replaceAll?: boolean }): Promise<void> {
    if (changes.has(MIN_INSYNC_REPLICAS) && changes.get(MIN_INSYNC_REPLICAS) !== null) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, ELR_BROKER_MIN_ISR);
    checked(this.own.configs, changes, opts);
    if (opts.validateOnly) return;
    await this.own.update((current) => checked(current, changes, opts));
  }
}

/** `current` with `changes` applied, each value checked: Kafka's DynamicBrokerConfig validation and messages. */
function checked(current: Record<string, string>, changes: ReadonlyMap<string, string | null>, opts: { replaceAll?: boolean }): Record<string, string> {
  for (const [name, value] of changes) {
    // Removing a value that is not set writes nothing (Kafka's incrementalAlterConfigResource), known or not.
    if (value === null) continue;
    const def = CLUSTER_DYNAMIC_CONFIGS.get(name);
    if (!def) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, `Cannot update these configs dynamically: ${quoted(name)}`);
    const err = validateConfigValue(def, value) ?? (name === 'max.connections.per.ip.overrides' ? invalidOverrides(value) : null);
    if (err) throw new ClusterApiError(ErrorCode.INVALID_CONFIG, err);
  }
  const next: Record<string, string> = opts.replaceAll ? {} : { ...current };
  for (const [name, value] of changes) {
    if (value === null) delete next[name];
    else next[name] = value.trim();
  }
  return next;
}

/** Where a broker's own dynamic values are stored. */
export function brokerConfigsKey(nodeId: number): string {
  return `${BROKER_CONFIGS_PREFIX}${nodeId}`;
}

function decode(value: Uint8Array, key: string): Record<string, string> {
  const stored = JSON.parse(Buffer.from(value).toString('utf8')) as Partial<Stored>;
  if (stored.formatVersion !== 1 || typeof stored.configs !== 'object' || stored.configs === null) {
    throw new Error(`the metadata store's ${key} record is not one this version reads`);
  }
  return stored.configs;
}
