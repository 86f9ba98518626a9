/**
 * The broker's Prometheus metrics. Names follow what Kafka dashboards read where a counterpart exists
 * (kafka_exporter's `kafka_topic_partition_*`, Kafka's BrokerTopicMetrics as `kafka_server_*`), plus
 * Ledgerline's own under `ledgerline_`. Gauges are computed at scrape time from the broker's state; counters
 * are bumped on the request path with no allocation.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Partition } from '../cluster/partitions.js';

/** What the broker's gauges read at scrape time. */
export interface MetricSources {
  /** Open client connections. */
  connections(): number;
  /** The request memory pool (queued.max.request.bytes). */
  readonly requestMemory: { readonly available: number; readonly used: number; readonly waiting: number };
  /** The partitions this broker has open. */
  partitions(): Iterable<Partition>;
  /** The ledger store's space accounting, when the store keeps one (the embedded store does). */
  readonly storage: { readonly reclaimableBytes: number; readonly bytesReclaimed: number } | null;
}

export interface BrokerMetrics {
  readonly registry: Registry;
  readonly bytesIn: Counter<'topic'>;
  readonly bytesOut: Counter<'topic'>;
  readonly messagesIn: Counter<'topic'>;
}

export function createBrokerMetrics(sources: MetricSources): BrokerMetrics {
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
  new Gauge({
    name: 'kafka_topic_partition_current_offset',
    help: 'High watermark of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of sources.partitions()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.highWatermark);
    },
  });
  new Gauge({
    name: 'kafka_topic_partition_oldest_offset',
    help: 'Log start offset of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of sources.partitions()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.logStartOffset);
    },
  });
  new Gauge({
    name: 'ledgerline_partition_ledgers',
    help: 'Ledgers in each partition\'s chain.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of sources.partitions()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.stats.ledgers);
    },
  });
  new Gauge({
    name: 'ledgerline_partition_size_bytes',
    help: 'Stored bytes of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of sources.partitions()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.stats.sizeInBytes);
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
