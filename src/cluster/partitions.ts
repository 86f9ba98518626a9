/**
 * The partitions this broker serves: one PartitionLog (src/log/) per topic partition over the shared
 * ledger store; the log keeps the partition's idempotent-producer state. Partitions open on first use (see
 * PartitionManager). Follows the topic registry: a deleted topic deletes its logs, a config change reaches
 * the open logs (retention, segment sizes, timestamp type), and the cluster view: a released partition closes.
 *
 * Opening a partition log takes it over from its previous owner or run (its open ledger is fenced and sealed,
 * a new one opened); the log loads its producer state itself, from its newest producer snapshot and the
 * batches after it (src/log/producer-recovery.ts).
 */
import type { BrokerConfig } from '../config.js';
import type { LedgerStore } from '../ledger/types.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import type { ClusterView } from './cluster-view.js';
import { LOG_CONFIG_NAMES, logConfigFromKafkaConfigs, type PartitionLogConfig } from '../log/config.js';
import { PartitionLog } from '../log/partition-log.js';
import { retentionDue } from '../log/retention-due.js';
import { readStoredPartitionStats } from '../log/stored-stats.js';
import type { PartitionProducerState } from '../log/producer-state.js';
import { LONG_MAX } from './config-defs.js';
import { replicationFactorOf, type TopicManager, type TopicRecord } from './topics.js';

/**
 * The topic configs the produce path checks on every batch, resolved once per topic change rather than
 * per request. Bounds are null when unlimited (Kafka's Long.MAX_VALUE).
 */
export interface ProduceConfig {
  readonly minInsyncReplicas: number;
  readonly maxMessageBytes: number;
  /** message.timestamp.type is CreateTime: the before/after bounds apply. */
  readonly createTime: boolean;
  readonly timestampBeforeMaxMs: number | null;
  readonly timestampAfterMaxMs: number | null;
  /** cleanup.policy includes compact: every record needs a key (LogValidator.validateKey). */
  readonly compacted: boolean;
  /** ledgerline.encryption.required: every record carries a well-formed end-to-end envelope (src/crypto/check.ts). */
  readonly encryptionRequired: boolean;
}

export function produceConfigOf(topics: TopicManager, t: TopicRecord): ProduceConfig {
  const bound = (name: string): number | null => {
    const v = topics.configValue(t, name);
    return v === null || v === LONG_MAX ? null : Number(v);
  };
  return {
    minInsyncReplicas: Number(topics.configValue(t, 'min.insync.replicas')),
    maxMessageBytes: Number(topics.configValue(t, 'max.message.bytes')),
    createTime: topics.configValue(t, 'message.timestamp.type') === 'CreateTime',
    timestampBeforeMaxMs: bound('message.timestamp.before.max.ms'),
    timestampAfterMaxMs: bound('message.timestamp.after.max.ms'),
    compacted: String(topics.configValue(t, 'cleanup.policy') ?? '').split(',').some((p) => p.trim() === 'compact'),
    encryptionRequired: topics.configValue(t, 'ledgerline.encryption.required') === 'true',
  };
}

export class Partition {
  constructor(
    public topic: TopicRecord,
    readonly index: number,
    readonly log: PartitionLog,
    public produceConfig: ProduceConfig,
  ) {}

  /** The idempotent-producer state, kept by the log it describes. */
  get producers(): PartitionProducerState {
    return this.log.producers;
  }
}

/** What a hosted partition's log holds, whether it is open or not (DescribeLogDirs, the partition metrics). */
export interface HostedPartitionStats {
  readonly topic: string;
  /** The topic's id (KIP-516): a topic deleted and created again under its name is another topic. */
  readonly topicId: string;
  readonly partition: number;
  /** Kafka's `UnifiedLog.size`: the bytes of every batch of the chain. */
  readonly sizeInBytes: number;
  readonly ledgers: number;
  readonly logStartOffset: number;
  /**
   * The high watermark of an open log; of one not open, its end offset, which its takeover makes its high
   * watermark (null when not asked for, or when the end of a ledger left open could not be read).
   */
  readonly highWatermark: number | null;
  /** Whether the log is open (its figures are the log's own rather than read from the stores). */
  readonly open: boolean;
}

/**
 * Up to this many topics with unopened partitions are read with one range scan each; beyond, one scan of
 * every partition key (cheaper than many small scans when topics are many and small).
 */
const TOPIC_SCANS_MAX = 64;

/** Partitions of a deleted topic deleted at once (those never opened are deleted without opening them). */
const DELETE_CONCURRENCY = 8;

/** What the partition layer is built on: the stores (as their interfaces), the topic registry, the cluster view, the configs. */
export interface PartitionManagerOptions {
  readonly topics: TopicManager;
  /** Who owns each partition: only partitions this broker owns open, and a released one closes. */
  readonly view: ClusterView;
  readonly ledgers: LedgerStore;
  readonly metadata: MetadataStore;
  readonly config: BrokerConfig;
  readonly log: Logger;
}

/**
 * Partitions open lazily, as Pulsar loads a topic on its first lookup: a partition this broker owns (its
 * ClusterView says so) is opened by its first use (`open`), which takes it over (fences and seals the previous
 * owner's open ledger, opens a new one, raises the leader epoch) and rebuilds its producer state. Concurrent
 * first uses share one open. Once open, `get` finds it synchronously, without allocating: the hot path of
 * Produce and Fetch. A partition closes (its open ledger sealed) when the view releases it and at shutdown; a
 * deleted topic's partitions are deleted, opened or not. Only opened partitions cost memory and stop time.
 *
 * ```
 *   owned, closed ──open()──► opening ──► open ──released / shutdown──► closed (sealed)
 *                                           └────topic deleted──────► deleted (ledgers and chain)
 * ```
 */
export class PartitionManager {
  /** Open partitions by topic name, indexed by partition. */
  private readonly byTopic = new Map<string, Partition[]>();
  /** Opens in flight by topic name, indexed by partition. */
  private readonly opening = new Map<string, Promise<Partition | undefined>[]>();
  /** Closes in flight (released partitions, stopped logs let go), awaited at shutdown. */
  private readonly closingParts = new Set<Promise<void>>();
  /** Closes in flight of stopped logs let go (`evict`), by partitionKey: the partition's next open waits for it. */
  private readonly evicting = new Map<string, Promise<void>>();
  private closing = false;
  /** The retention sweep of partitions not open (log.retention.check.interval.ms), and the pass in progress. */
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<number> | null = null;
  private readonly ledgers: LedgerStore;
  private readonly topics: TopicManager;
  private readonly view: ClusterView;
  private readonly log: Logger;

  constructor(private readonly options: PartitionManagerOptions) {
    this.ledgers = options.ledgers;
    this.topics = options.topics;
    this.view = options.view;
    this.log = options.log;
    options.topics.addListener({
      partitionsAdded: (t) => this.retopic(t),
      topicDeleted: (t) => this.deleteTopic(t),
      configsChanged: (t) => this.reconfigure(t),
    });
    options.view.subscribe({ released: (topic, p) => this.release(topic, p) });
    const interval = options.config.logRetentionCheckIntervalMs;
    if (interval > 0) {
      this.sweepTimer = setInterval(() => {
        this.sweeping ??= this.sweepUnopened().finally(() => (this.sweeping = null));
      }, interval);
      this.sweepTimer.unref();
    }
  }

  /**
   * Retention of the partitions not open. An open log enforces retention itself every
   * log.retention.check.interval.ms; one nobody has used since the start is not open, so this pass reads the
   * chain of each such partition this broker owns (src/log/retention-due.ts) and opens those with ledgers
   * past retention, whose log then deletes them as Kafka's deleteOldSegments would. Partitions are visited
   * one at a time, so a pass costs metadata reads, not memory.
   */
  async sweepUnopened(nowMs = Date.now()): Promise<number> {
    let opened = 0;
    for (const t of this.topics.list()) {
      const config = this.logConfig(t);
      for (let p = 0; p < t.partitions; p++) {
        if (this.closing) return opened;
        if (this.get(t.name, p) || this.opening.get(t.name)?.[p] || !this.view.owns(t.name, p)) continue;
        let due: boolean;
        try {
          due = await retentionDue(this.options.metadata, t.name, p, config, nowMs);
        } catch (err) {
          this.log.warn({ err, topic: t.name, partition: p }, 'reading a partition chain for retention failed');
          continue;
        }
        if (!due) continue;
        const part = await this.open(t.name, p).catch(() => undefined);
        if (!part) continue;
        opened++;
        await part.log.enforceRetention().catch((err: unknown) => this.log.warn({ err, topic: t.name, partition: p }, 'retention of a partition failed'));
      }
    }
    if (opened > 0) this.log.info({ opened }, 'opened partitions with data past retention');
    return opened;
  }

  /** The logs of the open partitions (what the log cleaner looks at). */
  *openLogs(): IterableIterator<PartitionLog> {
    for (const list of this.byTopic.values()) for (const part of list) if (part) yield part.log;
  }

  /**
   * An open partition, or undefined when it is not open (yet): synchronous, for the request path. A log that
   * stopped by itself (fenced, or failed on the metadata store) is let go here, and the caller opens the
   * partition again if this broker owns it (see `evict`).
   */
  get(topic: string, partition: number): Partition | undefined {
    const part = this.byTopic.get(topic)?.[partition];
    if (part !== undefined && (part.log.state === 'fenced' || part.log.state === 'failed')) return this.evict(topic, part);
    return part;
  }

  /**
   * Lets go of a log that stopped by itself while this broker kept it: fenced (another owner's chain change
   * seen: its lease expired and came back while the partition moved away and back, say) or failed (the
   * metadata store refused a chain change). If this broker owns the partition now, its next use opens it
   * again, and that takeover fences and recovers whatever ledger is open, as after any owner's death; kept,
   * the stopped log would answer NOT_LEADER_OR_FOLLOWER or KAFKA_STORAGE_ERROR for as long as this broker
   * holds the partition. Its close is waited for by that open.
   */
  private evict(topic: string, part: Partition): undefined {
    const list = this.byTopic.get(topic)!;
    delete list[part.index];
    if (!list.some((x) => x !== undefined)) this.byTopic.delete(topic);
    this.log.warn({ topic, partition: part.index, state: part.log.state }, 'partition log stopped by itself: closing it; its next use opens it again if this broker owns it');
    const key = partitionKey(topic, part.index);
    const run = part.log.close().catch((err: unknown) => this.log.warn({ err, topic, partition: part.index }, 'closing a stopped partition log failed'));
    this.evicting.set(key, run);
    this.closingParts.add(run);
    void run.finally(() => {
      this.closingParts.delete(run);
      if (this.evicting.get(key) === run) this.evicting.delete(key);
    });
    return undefined;
  }

  /**
   * The partition, opened if this broker owns it and it is not open yet. Undefined when the topic or
   * partition does not exist, another broker owns it or the broker is stopping; rejects when opening failed
   * (logged once here; the next use tries again). Callers try `get` first: `pm.get(t, p) ?? (await pm.open(t, p))`.
   */
  open(topic: string, partition: number): Promise<Partition | undefined> {
    const open = this.get(topic, partition);
    if (open) return Promise.resolve(open);
    const pending = this.opening.get(topic)?.[partition];
    if (pending) return pending;
    const t = this.topics.get(topic);
    if (this.closing || !t || !Number.isInteger(partition) || partition < 0 || partition >= t.partitions || !this.view.owns(topic, partition)) {
      return Promise.resolve(undefined);
    }
    let inFlight = this.opening.get(topic);
    if (!inFlight) this.opening.set(topic, (inFlight = []));
    const list = inFlight;
    const evicted = this.evicting.get(partitionKey(topic, partition));
    const run = (evicted ? evicted.then(() => this.openPartition(t, partition)) : this.openPartition(t, partition)).catch((err: unknown) => {
      this.log.error({ err, topic, partition }, 'opening a partition failed; its next use tries again');
      throw err;
    });
    list[partition] = run;
    const settled = (): void => {
      if (list[partition] === run) delete list[partition];
      if (this.opening.get(topic) === list && !list.some((x) => x !== undefined)) this.opening.delete(topic);
    };
    // Both paths handled: a failed open is the callers' to see, not an unhandled rejection here.
    run.then(settled, settled);
    return run;
  }

  /** The partition leader epoch clients see in Metadata (raised each time a log is taken over); -1 when not open. */
  leaderEpoch(topic: string, partition: number): number {
    return this.get(topic, partition)?.log.leaderEpoch ?? -1;
  }

  logConfig(t: TopicRecord): Partial<PartitionLogConfig> {
    const topics = this.topics;
    const values: Record<string, string | null> = {};
    for (const name of Object.keys(LOG_CONFIG_NAMES)) {
      values[name] = topics.configValue(t, name);
    }
    // The ledgers of the topic's partitions are replicated as its replication factor and min.insync.replicas
    // say (on BookKeeper: E = Qw = RF, Qa = min.insync.replicas; the local store has one copy whatever they say).
    const minInsync = Number(topics.configValue(t, 'min.insync.replicas'));
    return {
      ...logConfigFromKafkaConfigs(values),
      ledgerReplication: { replicationFactor: replicationFactorOf(t), minInsyncReplicas: Number.isInteger(minInsync) && minInsync > 0 ? minInsync : 1 },
    };
  }

  /** Open partitions of a grown topic see its new record. */
  private retopic(t: TopicRecord): void {
    for (const part of this.byTopic.get(t.name) ?? []) if (part) part.topic = t;
  }

  private async openPartition(t: TopicRecord, p: number): Promise<Partition | undefined> {
    const log = await PartitionLog.open({
      topic: t.name,
      partition: p,
      ledgers: this.ledgers,
      metadata: this.options.metadata,
      config: this.logConfig(t),
      owner: `node-${this.options.config.nodeId}`,
      retentionCheckIntervalMs: this.options.config.logRetentionCheckIntervalMs,
      producerIdExpirationMs: producerExpirationMs(this.options.config),
      logger: this.log,
      onBackgroundError: (err) => this.log.error({ err, topic: t.name, partition: p }, 'partition log background error'),
    });
    const part = new Partition(t, p, log, produceConfigOf(this.topics, t));
    let list = this.byTopic.get(t.name);
    if (!list) this.byTopic.set(t.name, (list = []));
    list[p] = part;
    const current = this.topics.get(t.name);
    // Deleted while opening: deleteTopic waits for this open, then deletes the log.
    if (!current || current.topicId !== t.topicId) return part;
    if (current !== t) {
      // Reconfigured while opening.
      part.topic = current;
      part.produceConfig = produceConfigOf(this.topics, current);
      log.updateConfig(this.logConfig(current));
    }
    if (!this.view.owns(t.name, p) && !this.closing) {
      // Released while opening: close it again.
      void this.release(t.name, p);
      return undefined;
    }
    this.view.announceLeaderEpoch?.(t.name, p, log.leaderEpoch);
    return part;
  }

  /** Deletes every partition of a deleted topic: open ones through their log, the others without opening them. */
  private async deleteTopic(t: TopicRecord): Promise<void> {
    await Promise.all((this.opening.get(t.name) ?? []).filter((x) => x !== undefined).map(failedAsUndefined));
    const parts = this.byTopic.get(t.name) ?? [];
    this.byTopic.delete(t.name);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < t.partitions) {
        const p = next++;
        const part = parts[p];
        try {
          if (part) await part.log.delete();
          else await PartitionLog.deletePartition({ topic: t.name, partition: p, ledgers: this.ledgers, metadata: this.options.metadata });
        } catch (err) {
          // E.g. another writer of the store deleted it first (its chain is gone): the other partitions go on.
          this.log.warn({ err, topic: t.name, partition: p }, 'deleting a partition of a deleted topic failed');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, t.partitions) }, worker));
  }

  /**
   * The view released a partition: close it (sealing its open ledger); the data stays for its next owner.
   * Resolves once it is closed (a view moving the partition to another broker waits for that).
   */
  private release(topic: string, partition: number): Promise<void> {
    // A deleted topic's partitions are deleted by deleteTopic, not closed.
    if (!this.topics.get(topic) && !this.closing) return Promise.resolve();
    const pending = this.opening.get(topic)?.[partition];
    const run = (async () => {
      if (pending) await failedAsUndefined(pending);
      const list = this.byTopic.get(topic);
      const part = list?.[partition];
      if (!list || !part || (this.view.owns(topic, partition) && !this.closing)) return;
      delete list[partition];
      if (!list.some((x) => x !== undefined)) this.byTopic.delete(topic);
      await part.log.close().catch((err: unknown) => this.log.warn({ err, topic, partition }, 'closing a partition log failed'));
    })();
    this.closingParts.add(run);
    void run.finally(() => this.closingParts.delete(run));
    return run;
  }

  private reconfigure(t: TopicRecord): void {
    const cfg = this.logConfig(t);
    const produceConfig = produceConfigOf(this.topics, t);
    for (const part of this.byTopic.get(t.name) ?? []) {
      if (!part) continue; // not opened yet: it opens with the topic's current configs
      part.topic = t;
      part.produceConfig = produceConfig;
      part.log.updateConfig(cfg);
    }
  }

  /**
   * Every partition this broker hosts (owns) of the topics `wanted` names (null: all; a topic's set: those
   * partitions; unknown topics and partitions are left out, as Kafka's describeLogDirs does), open or not.
   * Open ones report their log's figures; the others are read from the stores without opening them
   * (src/log/stored-stats.ts: one paged scan of their chains), as Kafka reports every log of its log dirs.
   */
  async hostedStats(wanted: ReadonlyMap<string, ReadonlySet<number>> | null, options: { readonly highWatermarks?: boolean } = {}): Promise<HostedPartitionStats[]> {
    const out: HostedPartitionStats[] = [];
    const hosted = (t: TopicRecord | undefined, p: number): boolean =>
      t !== undefined && Number.isInteger(p) && p >= 0 && p < t.partitions && this.view.owns(t.name, p) && (wanted === null || wanted.get(t.name)?.has(p) === true);
    const records = wanted === null ? this.topics.list() : [...wanted.keys()].map((n) => this.topics.get(n)).filter((t) => t !== undefined);
    // Those not open now are read from the stores (one opening meanwhile is read there too: its takeover keeps its data).
    const unopened = new Map<string, number[]>();
    const ids = new Map<string, string>();
    for (const t of records) {
      for (let p = 0; p < t.partitions; p++) {
        if (!hosted(t, p)) continue;
        const part = this.get(t.name, p);
        if (!part) {
          let list = unopened.get(t.name);
          if (!list) {
            unopened.set(t.name, (list = []));
            ids.set(t.name, t.topicId);
          }
          list.push(p);
          continue;
        }
        const { stats } = part.log;
        out.push({ topic: t.name, topicId: t.topicId, partition: p, sizeInBytes: stats.sizeInBytes, ledgers: stats.ledgers, logStartOffset: part.log.logStartOffset, highWatermark: part.log.highWatermark, open: true });
      }
    }
    if (unopened.size === 0) return out;
    const sets = new Map([...unopened].map(([name, ps]) => [name, new Set(ps)]));
    const stored = await readStoredPartitionStats(this.options.metadata, this.ledgers, {
      ...(wanted !== null || unopened.size <= TOPIC_SCANS_MAX ? { topics: [...unopened.keys()] } : {}),
      include: (topic, p) => sets.get(topic)?.has(p) === true,
      endOffsets: options.highWatermarks === true,
      onBadKey: (key, err) => this.log.warn({ err, key }, 'a partition chain key does not decode; the partition is reported without it'),
    });
    for (const [name, ps] of unopened) {
      const byPartition = stored.get(name);
      for (const p of ps) {
        const s = byPartition?.get(p);
        // No key at all: a partition created and never used, an empty log.
        out.push({
          topic: name,
          topicId: ids.get(name)!,
          partition: p,
          sizeInBytes: s?.sizeInBytes ?? 0,
          ledgers: s?.ledgers ?? 0,
          logStartOffset: s?.logStartOffset ?? 0,
          highWatermark: options.highWatermarks ? (s ? s.logEndOffset : 0) : null,
          open: false,
        });
      }
    }
    return out;
  }

  /** Whether this broker hosts that partition of that topic (by id) now: stats read a while ago may be stale. */
  hosts(topicId: string, topic: string, partition: number): boolean {
    const t = this.topics.get(topic);
    return t !== undefined && t.topicId === topicId && partition < t.partitions && this.view.owns(topic, partition);
  }

  /** Every open partition. */
  *all(): Iterable<Partition> {
    for (const parts of this.byTopic.values()) for (const p of parts) if (p) yield p;
  }

  /** How many partitions are open. */
  get openCount(): number {
    let n = 0;
    for (const parts of this.byTopic.values()) for (const p of parts) if (p) n++;
    return n;
  }

  /** Shutdown: waits for opens in flight, closes every open partition (sealing its ledger). The broker closes the stores. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    await this.sweeping;
    await Promise.all([...this.opening.values()].flatMap((list) => list.filter((x) => x !== undefined).map(failedAsUndefined)));
    await Promise.all([...this.closingParts]);
    const parts = [...this.all()];
    this.byTopic.clear();
    await Promise.all(parts.map((p) => p.log.close().catch((err: unknown) => this.log.warn({ err }, 'closing a partition log failed'))));
  }
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** An open in flight, waited for by someone other than its caller: a failure was logged and is its caller's. */
function failedAsUndefined(open: Promise<Partition | undefined>): Promise<Partition | undefined> {
  return open.catch(() => undefined);
}

/** Kafka's producer.id.expiration.ms: idempotent-producer state unused this long is dropped. */
function producerExpirationMs(config: BrokerConfig): number {
  return Number(config.values.get('producer.id.expiration.ms') ?? '86400000');
}
