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
import { RECORD_BATCH_OVERHEAD, RecordBatch } from '../../protocol/records/batch.js';
import type { BrokerConfig } from '../config.js';
import type { LedgerStore } from '../ledger/types.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
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
  /** cleanup.policy includes compact: every record needs a key (LogValidator.validateKey). */
  readonly compacted: boolean;
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

/** One stored batch header into the producer state (control batches carry no sequence). */
function replayBatchHeader(part: Partition, b: RecordBatch, now: number): void {
  if (!b.hasProducerId || b.isControl) return;
  const base = b.baseOffsetNumber;
  part.producers.replay(
    { producerId: b.producerId, producerEpoch: b.producerEpoch, baseSequence: b.baseSequence, lastOffsetDelta: b.lastOffsetDelta },
    BigInt(base),
    BigInt(base + b.lastOffsetDelta),
    BigInt(b.maxTimestamp),
    now,
  );
}

/** Partition logs opened at once during start-up, and by the background opener. */
const OPEN_CONCURRENCY = 8;

/**
 * Partitions a topic change (CreateTopics, CreatePartitions) opens before it is answered. Opening a log costs an
 * fsync of the metadata store (its chain) and one of the ledger store (its first ledger), ~4-8 ms each here,
 * so the 10,000 partitions one request may create would take a minute. The rest open in the background, as
 * Kafka's brokers create the logs of partitions the controller has registered after CreateTopics is
 * answered; until then Metadata reports them LEADER_NOT_AVAILABLE, as Kafka does for a partition without a
 * leader, and the partition APIs answer UNKNOWN_TOPIC_OR_PARTITION: both retriable.
 */
const OPEN_INLINE = 100;
/** Partitions of non-internal topics opened before a starting broker listens; the rest open in the background. */
const STARTUP_INLINE = 256;

/** Partitions [next, end) of one topic (by id) still to open in the background. */
interface OpenBacklog {
  readonly topicId: string;
  readonly name: string;
  next: number;
  readonly end: number;
}

/** What the partition layer is built on: the stores (as their interfaces), the topic registry, the configs. */
export interface PartitionManagerOptions {
  readonly topics: TopicManager;
  readonly ledgers: LedgerStore;
  readonly metadata: MetadataStore;
  readonly config: BrokerConfig;
  readonly log: Logger;
}

export class PartitionManager {
  private readonly byTopic = new Map<string, Partition[]>();
  private readonly backlog: OpenBacklog[] = [];
  /** Background opens in flight, per topic name (a deletion waits for them). */
  private readonly opening = new Map<string, Set<Promise<void>>>();
  private openers = 0;
  private closing = false;

  private readonly topics: TopicManager;
  private readonly ledgers: LedgerStore;
  private readonly log: Logger;

  constructor(private readonly o: PartitionManagerOptions) {
    this.topics = o.topics;
    this.ledgers = o.ledgers;
    this.log = o.log;
    o.topics.addListener({
      topicCreated: (t) => this.openTopic(t, 0),
      partitionsAdded: (t, from) => this.openTopic(t, from),
      topicDeleted: (t) => this.deleteTopic(t),
      configsChanged: (t) => this.reconfigure(t),
    });
  }

  /**
   * Opens the partitions of every registered topic: those of internal topics and the first STARTUP_INLINE
   * others before the broker listens, the rest in the background (see OPEN_INLINE), so that a broker with many
   * partitions starts in bounded time.
   */
  async loadAll(): Promise<void> {
    const topics = this.topics.list();
    const work: [TopicRecord, number][] = [];
    let budget = STARTUP_INLINE;
    for (const t of [...topics.filter((t) => t.internal), ...topics.filter((t) => !t.internal)]) {
      const inline = t.internal ? t.partitions : Math.min(t.partitions, Math.max(0, budget));
      if (!t.internal) budget -= inline;
      for (let p = 0; p < inline; p++) work.push([t, p]);
      if (inline < t.partitions) this.backlog.push({ topicId: t.topicId, name: t.name, next: inline, end: t.partitions });
    }
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < work.length) {
        const [t, p] = work[next++]!;
        await this.openPartition(t, p);
      }
    };
    await Promise.all(Array.from({ length: Math.min(OPEN_CONCURRENCY, work.length) }, worker));
    if (this.backlog.length > 0) {
      this.log.info({ opened: work.length, background: this.backlog.reduce((n, b) => n + b.end - b.next, 0) }, 'opening the remaining partitions in the background');
      this.pumpBacklog();
    }
  }

  get(topic: string, partition: number): Partition | undefined {
    return this.byTopic.get(topic)?.[partition];
  }

  /** The partition leader epoch clients see in Metadata (raised each time a log is taken over). */
  leaderEpoch(topic: string, partition: number): number {
    return this.get(topic, partition)?.log.leaderEpoch ?? 0;
  }

  logConfig(t: TopicRecord): Partial<PartitionLogConfig> {
    const topics = this.topics;
    const values: Record<string, string | null> = {};
    for (const name of ['segment.bytes', 'segment.ms', 'ledgerline.segment.entries', 'retention.ms', 'retention.bytes', 'cleanup.policy', 'message.timestamp.type', 'max.message.bytes']) {
      values[name] = topics.configValue(t, name);
    }
    return logConfigFromKafkaConfigs(values);
  }

  private async openTopic(t: TopicRecord, from: number): Promise<void> {
    const inlineEnd = Math.min(t.partitions, from + OPEN_INLINE);
    for (let p = from; p < inlineEnd; p++) await this.openPartition(t, p);
    const produceConfig = produceConfigOf(this.topics, t);
    for (const part of this.byTopic.get(t.name) ?? []) {
      if (!part) continue;
      part.topic = t;
      part.produceConfig = produceConfig;
    }
    if (inlineEnd < t.partitions) {
      this.backlog.push({ topicId: t.topicId, name: t.name, next: inlineEnd, end: t.partitions });
      this.log.info({ topic: t.name, inline: inlineEnd - from, background: t.partitions - inlineEnd }, 'opening the remaining partitions in the background');
      this.pumpBacklog();
    }
  }

  /** Starts background openers up to OPEN_CONCURRENCY while partitions wait to be opened. */
  private pumpBacklog(): void {
    while (!this.closing && this.openers < OPEN_CONCURRENCY && this.backlog.length > 0) {
      this.openers++;
      void this.backlogWorker().finally(() => {
        this.openers--;
        this.pumpBacklog();
      });
    }
  }

  private async backlogWorker(): Promise<void> {
    for (;;) {
      const b = this.backlog[0];
      if (!b || this.closing) return;
      const p = b.next++;
      if (b.next >= b.end) this.backlog.shift();
      // The topic's current record: its configs may have changed since it was queued.
      const t = this.topics.get(b.name);
      if (!t || t.topicId !== b.topicId || p >= t.partitions) continue;
      const run = this.openPartition(t, p).then(
        () => undefined,
        (err: unknown) => this.log.error({ err, topic: t.name, partition: p }, 'opening a partition in the background failed'),
      );
      let set = this.opening.get(t.name);
      if (!set) this.opening.set(t.name, (set = new Set()));
      set.add(run);
      await run;
      set.delete(run);
      if (set.size === 0) this.opening.delete(t.name);
    }
  }

  /** Drops the background opens of a topic and waits for those in flight. */
  private async cancelOpening(name: string): Promise<void> {
    for (let i = this.backlog.length - 1; i >= 0; i--) if (this.backlog[i]!.name === name) this.backlog.splice(i, 1);
    await Promise.all([...(this.opening.get(name) ?? [])]);
  }

  private async openPartition(t: TopicRecord, p: number): Promise<Partition> {
    const log = await PartitionLog.open({
      topic: t.name,
      partition: p,
      ledgers: this.ledgers,
      metadata: this.o.metadata,
      config: this.logConfig(t),
      owner: `node-${this.o.config.nodeId}`,
      retentionCheckIntervalMs: this.o.config.logRetentionCheckIntervalMs,
      logger: this.log,
      onBackgroundError: (err) => this.log.error({ err, topic: t.name, partition: p }, 'partition log background error'),
    });
    const part = new Partition(t, p, log, produceConfigOf(this.topics, t));
    await this.rebuildProducerState(part);
    let list = this.byTopic.get(t.name);
    if (!list) this.byTopic.set(t.name, (list = []));
    list[p] = part;
    return part;
  }

  /**
   * Replays the batch headers written within producer.id.expiration.ms into the producer state. Only headers
   * are read (Kafka's ProducerStateManager loads from batch headers too), and stored data that cannot be
   * read is reported and skipped, never a failed start: the first batch to replay is found with ListOffsets
   * by timestamp, which skips batches whose records do not decode; should the search itself fail, the replay
   * starts from the log start offset; an entry too short for a batch header is skipped; a read that fails
   * ends the replay with the state gathered so far.
   */
  private async rebuildProducerState(part: Partition): Promise<void> {
    const { log } = part;
    if (log.highWatermark === log.logStartOffset) return;
    const where = { topic: part.topic.name, partition: part.index };
    const now = Date.now();
    let offset: number;
    try {
      const since = await log.listOffsets(now - producerExpirationMs(this.o.config));
      offset = since?.offset ?? log.highWatermark;
    } catch (err) {
      this.log.warn({ ...where, err }, 'producer state: cannot find the batches to replay by timestamp; replaying from the log start offset');
      offset = log.logStartOffset;
    }
    let skipped = 0;
    while (offset < log.highWatermark) {
      let res: Awaited<ReturnType<PartitionLog['read']>>;
      try {
        res = await log.read(offset, { maxBytes: 8 * 1024 * 1024 });
      } catch (err) {
        this.log.error({ ...where, offset, err }, 'producer state: cannot read the log; idempotent producers of this partition are known only up to here');
        return;
      }
      if (res.records.length === 0 || res.nextOffset <= offset) break;
      for (const buf of res.records) {
        if (buf.length < RECORD_BATCH_OVERHEAD) {
          skipped++;
          continue;
        }
        replayBatchHeader(part, RecordBatch.unchecked(buf), now);
      }
      offset = res.nextOffset;
    }
    if (skipped > 0) this.log.warn({ ...where, skipped }, 'producer state: skipped stored entries too short to be record batches');
  }

  private async deleteTopic(t: TopicRecord): Promise<void> {
    await this.cancelOpening(t.name);
    const parts = this.byTopic.get(t.name) ?? [];
    this.byTopic.delete(t.name);
    for (const part of parts) if (part) await part.log.delete();
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

  /** Every partition, for DescribeLogDirs and metrics. */
  *all(): Iterable<Partition> {
    for (const parts of this.byTopic.values()) for (const p of parts) if (p) yield p;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.backlog.length = 0;
    await Promise.all([...this.opening.values()].flatMap((set) => [...set]));
    const parts = [...this.all()];
    this.byTopic.clear();
    await Promise.all(parts.map((p) => p.log.close().catch((err: unknown) => this.log.warn({ err }, 'closing a partition log failed'))));
  }
}

/** Kafka's producer.id.expiration.ms: idempotent-producer state unused this long is dropped. */
function producerExpirationMs(config: BrokerConfig): number {
  return Number(config.values.get('producer.id.expiration.ms') ?? '86400000');
}
