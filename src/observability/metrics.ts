/**
 * The broker's Prometheus metrics. Names follow what Kafka dashboards read where a counterpart exists
 * (kafka_exporter's `kafka_topic_partition_*`, Kafka's BrokerTopicMetrics as `kafka_server_*`), plus
 * Ledgerline's own under `ledgerline_`. Gauges are computed at scrape time from the broker's state; counters
 * are bumped on the request path with no allocation.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Broker } from '../server/broker.js';

export interface BrokerMetrics {
  readonly registry: Registry;
  readonly requests: Counter<'api'>;
  readonly bytesIn: Counter<'topic'>;
  readonly bytesOut: Counter<'topic'>;
  readonly messagesIn: Counter<'topic'>;
}

export function createBrokerMetrics(broker: Broker): BrokerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'ledgerline_process_' });
  const registers = [registry];
  const requests = new Counter({ name: 'kafka_server_requests_total', help: 'Requests handled, by API.', labelNames: ['api'], registers });
  const bytesIn = new Counter({ name: 'kafka_server_brokertopicmetrics_bytesin_total', help: 'Record batch bytes appended, by topic.', labelNames: ['topic'], registers });
  const bytesOut = new Counter({ name: 'kafka_server_brokertopicmetrics_bytesout_total', help: 'Record batch bytes fetched, by topic.', labelNames: ['topic'], registers });
  const messagesIn = new Counter({ name: 'kafka_server_brokertopicmetrics_messagesin_total', help: 'Records appended, by topic.', labelNames: ['topic'], registers });
  new Gauge({
    name: 'kafka_server_connections',
    help: 'Open client connections.',
    registers,
    collect() {
      this.set(broker.connections.size);
    },
  });
  // Kafka's kafka.network:type=SocketServer,name=MemoryPoolAvailable / MemoryPoolUsed (KIP-72).
  new Gauge({
    name: 'kafka_network_socketserver_memorypoolavailable',
    help: 'Request memory the pool can still grant (queued.max.request.bytes minus what requests hold); +Inf when unbounded.',
    registers,
    collect() {
      this.set(broker.requestMemory.available);
    },
  });
  new Gauge({
    name: 'kafka_network_socketserver_memorypoolused',
    help: 'Request memory held by requests being read or handled.',
    registers,
    collect() {
      this.set(broker.requestMemory.used);
    },
  });
  new Gauge({
    name: 'ledgerline_request_memory_waiting_connections',
    help: 'Connections not read from because the request memory pool cannot grant their next request yet.',
    registers,
    collect() {
      this.set(broker.requestMemory.waiting);
    },
  });
  new Gauge({
    name: 'kafka_topic_partition_current_offset',
    help: 'High watermark of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of broker.partitions.all()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.highWatermark);
    },
  });
  new Gauge({
    name: 'kafka_topic_partition_oldest_offset',
    help: 'Log start offset of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of broker.partitions.all()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.logStartOffset);
    },
  });
  new Gauge({
    name: 'ledgerline_partition_ledgers',
    help: 'Ledgers in each partition\'s chain.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of broker.partitions.all()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.stats.ledgers);
    },
  });
  new Gauge({
    name: 'ledgerline_partition_size_bytes',
    help: 'Stored bytes of each partition.',
    labelNames: ['topic', 'partition'],
    registers,
    collect() {
      this.reset();
      for (const p of broker.partitions.all()) this.set({ topic: p.topic.name, partition: String(p.index) }, p.log.stats.sizeInBytes);
    },
  });
  new Gauge({
    name: 'ledgerline_storage_reclaimable_bytes',
    help: 'Bytes in the ledger store\'s segment files that hold no live entry (deleted or expired data, superseded copies): what its garbage collector can give back.',
    registers,
    collect() {
      this.set(broker.partitions.ledgers.reclaimableBytes);
    },
  });
  let reclaimedSeen = 0;
  new Counter({
    name: 'ledgerline_storage_reclaimed_bytes_total',
    help: 'Bytes of segment files the ledger store has deleted since the broker started.',
    registers,
    collect() {
      const now = broker.partitions.ledgers.stats.bytesReclaimed;
      if (now > reclaimedSeen) this.inc(now - reclaimedSeen);
      reclaimedSeen = now;
    },
  });
  return { registry, requests, bytesIn, bytesOut, messagesIn };
}
