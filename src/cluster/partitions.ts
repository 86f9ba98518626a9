/**
 * The partitions this broker serves: one PartitionLog (src/log/) per topic partition over the shared
 * ledger store, plus the partition's idempotent-producer state. Follows the topic registry: a created
 * topic opens its partitions, CreatePartitions opens the new ones, a deleted topic deletes its logs, a
 * config change reaches the logs (retention, segment sizes, timestamp type).
 *
 * On start every partition log is opened (taking it over from the previous run: its open ledger is fenced
 * and sealed, a new one opened) and its producer state is rebuilt from the batches written within
 * `producer.id.expiration.ms`: older producers would have expired anyway.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { Broker } from '../server/broker.js';
import { LocalLedgerStore, type LocalLedgerStoreOptions } from '../ledger/local-store.js';
import { logConfigFromKafkaConfigs, type PartitionLogConfig } from '../log/config.js';
import { PartitionLog } from '../log/partition-log.js';
import { PartitionProducerState } from './producer-state.js';
import { LONG_MAX } from './config-defs.js';
import type { TopicManager, TopicRecord } from './topics.js';

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
  };
}

export class Partition {
  readonly producers = new PartitionProducerState();
  constructor(
    public topic: TopicRecord,
    readonly index: number,
    readonly log: PartitionLog,
    public produceConfig: ProduceConfig,
  ) {}
}

/** Partition logs opened at once during start-up. */
const OPEN_CONCURRENCY = 8;

export class PartitionManager {
  private readonly byTopic = new Map<string, Partition[]>();

  private constructor(
    private readonly broker: Broker,
    readonly ledgers: LocalLedgerStore,
  ) {
    broker.topics.addListener({
      topicCreated: (t) => this.openTopic(t, 0),
      partitionsAdded: (t, from) => this.openTopic(t, from),
      topicDeleted: (t) => this.deleteTopic(t),
      configsChanged: (t) => this.reconfigure(t),
    });
  }

  static async open(broker: Broker, dir: string): Promise<PartitionManager> {
    const ledgers = await LocalLedgerStore.open(dir, {
      // A batch is one entry; the request size limit bounds it before any topic config does.
      maxEntryBytes: broker.config.socketRequestMaxBytes,
      gc: ledgerGcOptions(broker.config.values),
      onBackgroundError: (err) => broker.log.error({ err }, 'ledger store background error'),
    });
    return new PartitionManager(broker, ledgers);
  }

  /** Opens every partition of every registered topic. */
  async loadAll(): Promise<void> {
    const work: [TopicRecord, number][] = [];
    for (const t of this.broker.topics.list()) for (let p = 0; p < t.partitions; p++) work.push([t, p]);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < work.length) {
        const [t, p] = work[next++]!;
        await this.openPartition(t, p);
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, work.length) }, worker));
  }

  get(topic: string, partition: number): Partition | undefined {
    return this.byTopic.get(topic)?.[partition];
  }

  /** The partition leader epoch clients see in Metadata (raised each time a log is taken over). */
  leaderEpoch(topic: string, partition: number): number {
    return this.get(topic, partition)?.log.leaderEpoch ?? 0;
  }

  logConfig(t: TopicRecord): Partial<PartitionLogConfig> {
    const topics = this.broker.topics;
    const values: Record<string, string | null> = {};
    for (const name of ['segment.bytes', 'segment.ms', 'ledgerline.segment.entries', 'retention.ms', 'retention.bytes', 'cleanup.policy', 'message.timestamp.type', 'max.message.bytes']) {
      values[name] = topics.configValue(t, name);
    }
    return logConfigFromKafkaConfigs(values);
  }

  private async openTopic(t: TopicRecord, from: number): Promise<void> {
    for (let p = from; p < t.partitions; p++) await this.openPartition(t, p);
    const produceConfig = produceConfigOf(this.broker.topics, t);
    for (const part of this.byTopic.get(t.name) ?? []) {
      part.topic = t;
      part.produceConfig = produceConfig;
    }
  }

  private async openPartition(t: TopicRecord, p: number): Promise<Partition> {
    const log = await PartitionLog.open({
      topic: t.name,
      partition: p,
      ledgers: this.ledgers,
      metadata: this.broker.metadata,
      config: this.logConfig(t),
      owner: `node-${this.broker.nodeId}`,
      retentionCheckIntervalMs: this.broker.config.logRetentionCheckIntervalMs,
      logger: this.broker.log,
      onBackgroundError: (err) => this.broker.log.error({ err, topic: t.name, partition: p }, 'partition log background error'),
    });
    const part = new Partition(t, p, log, produceConfigOf(this.broker.topics, t));
    await this.rebuildProducerState(part);
    let list = this.byTopic.get(t.name);
    if (!list) this.byTopic.set(t.name, (list = []));
    list[p] = part;
    return part;
  }

  /** Replays the batch headers written within producer.id.expiration.ms into the producer state. */
  private async rebuildProducerState(part: Partition): Promise<void> {
    const { log } = part;
    if (log.highWatermark === log.logStartOffset) return;
    const now = Date.now();
    const since = await log.listOffsets(now - this.broker.producerExpirationMs);
    let offset = since?.offset ?? log.highWatermark;
    while (offset < log.highWatermark) {
      const res = await log.read(offset, { maxBytes: 8 * 1024 * 1024 });
      if (res.records.length === 0) break;
      for (const buf of res.records) {
        const b = RecordBatch.unchecked(buf);
        if (b.producerId >= 0n && !b.isControl) {
          const base = b.baseOffsetNumber;
          part.producers.replay(
            { producerId: b.producerId, producerEpoch: b.producerEpoch, baseSequence: b.baseSequence, lastOffsetDelta: b.lastOffsetDelta },
            BigInt(base),
            BigInt(base + b.lastOffsetDelta),
            BigInt(b.maxTimestamp),
            now,
          );
        }
      }
      offset = res.nextOffset;
    }
  }

  private async deleteTopic(t: TopicRecord): Promise<void> {
    const parts = this.byTopic.get(t.name) ?? [];
    this.byTopic.delete(t.name);
    for (const part of parts) if (part) await part.log.delete();
  }

  private reconfigure(t: TopicRecord): void {
    const cfg = this.logConfig(t);
    const produceConfig = produceConfigOf(this.broker.topics, t);
    for (const part of this.byTopic.get(t.name) ?? []) {
      part.topic = t;
      part.produceConfig = produceConfig;
      part.log.updateConfig(cfg);
    }
  }

  /** Every partition, for DescribeLogDirs and metrics. */
  *all(): Iterable<Partition> {
    for (const parts of this.byTopic.values()) for (const p of parts) if (p) yield p;
  }

  async close(): Promise<void> {
    const parts = [...this.all()];
    this.byTopic.clear();
    await Promise.all(parts.map((p) => p.log.close().catch((err: unknown) => this.broker.log.warn({ err }, 'closing a partition log failed'))));
    await this.ledgers.close();
  }
}

/** The ledger store's garbage collector settings, from the ledgerline.storage.* broker configs. */
function ledgerGcOptions(values: ReadonlyMap<string, string | null>): LocalLedgerStoreOptions['gc'] {
  const num = (name: string): number | undefined => {
    const v = values.get(name);
    return v === null || v === undefined || v.trim() === '' ? undefined : Number(v);
  };
  return {
    gcIntervalMs: num('ledgerline.storage.gc.interval.ms'),
    minorCompactionThreshold: num('ledgerline.storage.compaction.minor.threshold'),
    minorCompactionIntervalMs: num('ledgerline.storage.compaction.minor.interval.ms'),
    majorCompactionThreshold: num('ledgerline.storage.compaction.major.threshold'),
    majorCompactionIntervalMs: num('ledgerline.storage.compaction.major.interval.ms'),
    compactionRateBytes: num('ledgerline.storage.compaction.rate.bytes'),
  };
}
