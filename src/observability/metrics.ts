/**
 * The broker's Prometheus metrics. Names follow what Kafka dashboards read where a counterpart exists
 * (kafka_exporter's `kafka_topic_partition_*`, Kafka's BrokerTopicMetrics as `kafka_server_*`), plus
 * Ledgerline's own under `ledgerline_`. Gauges are computed at scrape time from the broker's state; counters
 * are bumped on the request path with no allocation.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { HostedPartitionStats, Partition } from '../cluster/partitions.js';

/** What the broker's gauges read at scrape time. */
export interface MetricSources {
  /** Open client connections. */
  connections(): number;
  /** The request memory pool (queued.max.request.bytes). */
  readonly requestMemory: { readonly available: number; readonly used: number; readonly waiting: number };
  /** The partitions this broker has open. */
  partitions(): Iterable<Partition>;
  /**
   * What the partitions this broker hosts but has not opened hold, read from the stores without opening
   * them (PartitionManager.hostedStats), their high watermark included; entries for open ones are ignored.
   */
  unopenedPartitions(): Promise<readonly HostedPartitionStats[]>;
  /** Whether a partition those stats name is still hosted (its topic not deleted, or deleted and created again, since). */
  hosts(stats: HostedPartitionStats): boolean;
  /** The ledger store's space accounting, when the store keeps one (the embedded store does). */
  readonly storage: { readonly reclaimableBytes: number; readonly bytesReclaimed: number } | null;
}

export interface BrokerMetrics {
  readonly registry: Registry;
  readonly bytesIn: Counter<'topic'>;
  readonly bytesOut: Counter<'topic'>;
  readonly messagesIn: Counter<'topic'>;
}

/**
 * How long the stats of partitions not open are kept between scrapes, at least. They change only when such a
 * partition opens (its live figures take over at once) or its topic is created, grown or deleted; reading
 * them costs a scan of their chains, so every gauge of one scrape, and the scrapes of a few seconds, share one.
 */
export const UNOPENED_STATS_MAX_AGE_MS = 10_000;
/**
 * And at least this many times as long as reading them took, so that the scan takes at most a twentieth of
 * the broker's time however many partitions it hosts (100,000 unopened partitions: a scan of seconds).
 */
const UNOPENED_STATS_AGE_PER_READ = 20;

/** One gauge per partition, each open partition's figure read live and the others' from the stored stats. */
type PartitionFigure = (stats: HostedPartitionStats) => number | null;

export function createBrokerMetrics(sources: MetricSources, options: { readonly unopenedMaxAgeMs?: number } = {}): BrokerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ledgerline_process_' });
  const registers = [registry];
  const bytesIn = new Counter({ name: 'kafka_server_brokertopicmetrics_bytesin_total', help: 'Record batch bytes appended, by topic.', labelNames: ['topic'], registers });
  const bytesOut = new Counter({ name: 'kafka_server_brokertopicmetrics_bytesout_total', help: 'Record batch bytes fetched, by topic.', labelNames: ['topic'], registers });
  const messagesIn = new Counter({ name: 'kafka_server_brokertopicmetrics_messagesin_total', help: 'Records appended, by topic.', labelNames: ['topic'], registers });
  new Gauge({
    name: 'kafka_server_connections',
    help: 'Open client connections.',
    registers,
    collect() {
      this.set(sources.connections());
    },
  });
  // Kafka's kafka.network:type=SocketServer,name=MemoryPoolAvailable / MemoryPoolUsed (KIP-72).
  new Gauge({
    name: 'kafka_network_socketserver_memorypoolavailable',
    help: 'Request memory the pool can still grant (queued.max.request.bytes minus what requests hold); +Inf when unbounded.',
    registers,
    collect() {
      this.set(sources.requestMemory.available);
    },
  });
  new Gauge({
    name: 'kafka_network_socketserver_memorypoolused',
    help: 'Request memory held by requests being read or handled.',
    registers,
    collect() {
      this.set(sources.requestMemory.used);
    },
  });
  new Gauge({
    name: 'ledgerline_request_memory_waiting_connections',
    help: 'Connections not read from because the request memory pool cannot grant their next request yet.',
    registers,
    collect() {
      this.set(sources.requestMemory.waiting);
    },
  });
  // Kafka reports every log of the broker (kafka.log:type=Log: LogEndOffset, LogStartOffset, Size,
  // NumLogSegments), opened since the start or not; so do these.
  const maxAge = options.unopenedMaxAgeMs ?? UNOPENED_STATS_MAX_AGE_MS;
  let unopened: { expiresAt: number; readonly stats: Promise<readonly HostedPartitionStats[]> } | null = null;
  const unopenedStats = (): Promise<readonly HostedPartitionStats[]> => {
    const now = Date.now();
    if (!unopened || now >= unopened.expiresAt) {
      const stats = sources.unopenedPartitions();
      const entry = { expiresAt: now + maxAge, stats };
      unopened = entry;
      stats.then(
        () => {
          entry.expiresAt = Math.max(entry.expiresAt, now + UNOPENED_STATS_AGE_PER_READ * (Date.now() - now));
        },
        // A failed read is not kept: the next scrape tries again.
        () => {
          if (unopened === entry) unopened = null;
        },
      );
    }
    return unopened.stats;
  };
  const perPartition = (name: string, help: string, live: (p: Partition) => number, stored: PartitionFigure): void => {
    new Gauge({
      name,
      help,
      labelNames: ['topic', 'partition'],
      registers,
      async collect() {
        const rest = await unopenedStats().catch(() => []);
        this.reset();
        const open = new Set<string>();
        for (const p of sources.partitions()) {
          const partition = String(p.index);
          open.add(`${p.topic.name}\0${partition}`);
          this.set({ topic: p.topic.name, partition }, live(p));
        }
        for (const s of rest) {
          const partition = String(s.partition);
          const value = stored(s);
          if (value !== null && !open.has(`${s.topic}\0${partition}`) && sources.hosts(s)) this.set({ topic: s.topic, partition }, value);
        }
      },
    });
  };
  perPartition('kafka_topic_partition_current_offset', 'High watermark of each partition.', (p) => p.log.highWatermark, (s) => s.highWatermark);
  perPartition('kafka_topic_partition_oldest_offset', 'Log start offset of each partition.', (p) => p.log.logStartOffset, (s) => s.logStartOffset);
  perPartition('ledgerline_partition_ledgers', "Ledgers in each partition's chain.", (p) => p.log.stats.ledgers, (s) => s.ledgers);
  perPartition('ledgerline_partition_size_bytes', 'Stored bytes of each partition.', (p) => p.log.stats.sizeInBytes, (s) => s.sizeInBytes);
  new Gauge({
    name: 'ledgerline_partitions_open',
    help: 'Partitions this broker has open, by topic (partitions open on first use; a topic with none has no series).',
    labelNames: ['topic'],
    registers,
    collect() {
      this.reset();
      const byTopic = new Map<string, number>();
      for (const p of sources.partitions()) byTopic.set(p.topic.name, (byTopic.get(p.topic.name) ?? 0) + 1);
      for (const [topic, n] of byTopic) this.set({ topic }, n);
    },
  });
  new Gauge({
    name: 'ledgerline_storage_reclaimable_bytes',
    help: 'Bytes in the ledger store\'s segment files that hold no live entry (deleted or expired data, superseded copies): what its garbage collector can give back.',
    registers,
    collect() {
      if (sources.storage) this.set(sources.storage.reclaimableBytes);
    },
  });
  let reclaimedSeen = 0;
  new Counter({
    name: 'ledgerline_storage_reclaimed_bytes_total',
    help: 'Bytes of segment files the ledger store has deleted since the broker started.',
    registers,
    collect() {
      const now = sources.storage?.bytesReclaimed ?? 0;
      if (now > reclaimedSeen) this.inc(now - reclaimedSeen);
      reclaimedSeen = now;
    },
  });
  return { registry, bytesIn, bytesOut, messagesIn };
}

/**
 * Kafka's BrokerTopicMetrics (BytesInPerSec, MessagesInPerSec, BytesOutPerSec) per topic, with each topic's
 * series looked up once.
 */
export class TopicMetrics {
  private readonly byTopic = new Map<string, { bytesIn: Counter.Internal; messagesIn: Counter.Internal; bytesOut: Counter.Internal }>();

  constructor(private readonly m: BrokerMetrics) {}

  private of(topic: string): { bytesIn: Counter.Internal; messagesIn: Counter.Internal; bytesOut: Counter.Internal } {
    let t = this.byTopic.get(topic);
    if (!t) this.byTopic.set(topic, (t = { bytesIn: this.m.bytesIn.labels(topic), messagesIn: this.m.messagesIn.labels(topic), bytesOut: this.m.bytesOut.labels(topic) }));
    return t;
  }

  /** An appended batch. */
  countAppend(topic: string, bytes: number, records: number): void {
    const t = this.of(topic);
    t.bytesIn.inc(bytes);
    t.messagesIn.inc(records);
  }

  /** Fetched batch bytes. */
  countFetch(topic: string, bytes: number): void {
    this.of(topic).bytesOut.inc(bytes);
  }

  /** A deleted topic's series go with it. */
  forget(topic: string): void {
    if (!this.byTopic.delete(topic)) return;
    this.m.bytesIn.remove(topic);
    this.m.messagesIn.remove(topic);
    this.m.bytesOut.remove(topic);
  }
}
