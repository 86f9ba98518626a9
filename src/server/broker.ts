/**
 * The broker process: opens the stores in the data directory, loads the topic registry, registers the
 * API handlers and listens. One Broker per process; tests start it as a child process (src/cli.ts).
 *
 *   data dir/
 *     metadata/   the embedded metadata store (SQLite): topics, ledger chains, ids
 *     ledgers/    the embedded ledger store: partition data
 *
 * Shutdown (SIGTERM/SIGINT): stop accepting, close connections once their in-flight requests are
 * answered (bounded wait), seal open ledgers' pending appends (fsync), close the stores.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import type { RequestHeader } from '../../protocol/headers.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import { handlers as allHandlers } from '../api/index.js';
import type { Handler } from '../api/handler.js';
import { apiVersionsFallback } from '../api/018-api-versions.js';
import type { BrokerConfig, Listener } from '../config.js';
import { KafkaError, TopicManager, type TopicRecord } from '../cluster/topics.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CLUSTER_KEY } from '../metadata/layout.js';
import { openSqliteMetadataStore } from '../metadata/index.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import { Connection } from './connection.js';
import { RefusalLog } from './refusals.js';
import { MemoryPool } from './memory-pool.js';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names.js';
import { GroupCoordinator, groupCoordinatorConfig, registerGroupCoordinatorMetrics } from '../coordinator/index.js';
import type { Counter } from 'prom-client';
import { createBrokerMetrics, type BrokerMetrics } from '../observability/metrics.js';
import { parseAdminListener, startAdminHttp, type AdminHttpServer } from '../observability/admin-http.js';
import { PartitionManager } from '../cluster/partitions.js';
import { ProducerIdAllocator } from '../cluster/producer-state.js';
import { FetchSessionCache } from '../cluster/fetch-sessions.js';

/** How long shutdown waits for in-flight requests before closing connections anyway. */
const SHUTDOWN_DRAIN_MS = 10_000;

export interface BoundListener extends Listener {
  /** The port actually bound (differs from `port` when it was 0). */
  boundPort: number;
}

export class Broker {
  readonly handlers = new Map<number, Handler>();
  readonly connections = new Set<Connection>();
  clusterId = '';
  metadata!: MetadataStore;
  topics!: TopicManager;
  partitions!: PartitionManager;
  producerIds!: ProducerIdAllocator;
  fetchSessions!: FetchSessionCache;
  readonly bound: BoundListener[] = [];
  metrics!: BrokerMetrics;
  groups!: GroupCoordinator;
  admin: AdminHttpServer | null = null;
  /** Refused requests, logged once per client, API and reason (src/server/refusals.ts). */
  readonly refusals: RefusalLog;
  /** The memory of request buffers, queued.max.request.bytes (src/server/memory-pool.ts). */
  readonly requestMemory: MemoryPool;
  private requestMemoryWarnedAt = -Infinity;
  private readonly requestCounters = new Map<number, Counter.Internal>();
  private readonly topicCounters = new Map<string, { bytesIn: Counter.Internal; messagesIn: Counter.Internal; bytesOut: Counter.Internal }>();
  private readonly servers: Server[] = [];
  private stopping = false;

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
  ) {
    for (const h of allHandlers) this.handlers.set(h.api.apiKey, h);
    this.refusals = new RefusalLog(log.child({ component: 'refusals' }));
    // The top eighth of the pool (at most what leaves room for one largest request) stays for small
    // requests, so half-sent large frames cannot stop other clients' metadata, heartbeats and commits.
    const capacity = config.queuedMaxRequestBytes;
    this.requestMemory = new MemoryPool(capacity, { reserve: Math.min(Math.floor(capacity / 8), capacity - config.socketRequestMaxBytes), smallRequestBytes: 1024 * 1024 });
  }

  /** A connection stopped reading for want of request memory: said at warn, at most once a minute. */
  requestMemoryExhausted(size: number): void {
    const now = Date.now();
    if (now - this.requestMemoryWarnedAt < 60_000) return;
    this.requestMemoryWarnedAt = now;
    const pool = this.requestMemory;
    this.log.warn(
      { size, used: pool.used, capacity: pool.capacity, waiting: pool.waiting + 1 },
      'request memory exhausted (queued.max.request.bytes): connections wait, unread, until requests in progress finish',
    );
  }

  get nodeId(): number {
    return this.config.nodeId;
  }

  /** Kafka's producer.id.expiration.ms: idempotent-producer state unused this long is dropped. */
  get producerExpirationMs(): number {
    return Number(this.config.values.get('producer.id.expiration.ms') ?? '86400000');
  }

  /**
   * Creates a topic named by Metadata with the broker defaults (auto.create.topics.enable). Returns
   * undefined when it cannot be created; a concurrent creation of the same name returns that topic.
   */
  async autoCreateTopic(name: string): Promise<TopicRecord | undefined> {
    try {
      return await this.topics.create(name, { partitions: -1, replicationFactor: -1, configs: {} });
    } catch (err) {
      if (err instanceof KafkaError && err.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) return this.topics.get(name);
      this.log.warn({ err, topic: name }, 'auto-creating a topic failed');
      return undefined;
    }
  }

  /** The listener addresses clients are told to use, with bound ports filled in for port 0. */
  get advertised(): Listener[] {
    return this.config.advertisedListeners.map((a, i) => {
      const bound = this.bound.find((b) => b.name === a.name) ?? this.bound[i];
      const port = a.port === 0 && bound ? bound.boundPort : a.port;
      return { ...a, host: a.host === '' || a.host === '0.0.0.0' ? '127.0.0.1' : a.host, port };
    });
  }

  async start(): Promise<void> {
    const dataDir = this.config.dataDir;
    mkdirSync(dataDir, { recursive: true });
    this.metadata = await openSqliteMetadataStore(join(dataDir, 'metadata'));
    this.clusterId = await this.loadClusterId();
    this.topics = new TopicManager(this.metadata, this.config);
    await this.topics.load();
    this.partitions = await PartitionManager.open(this, join(dataDir, 'ledgers'));
    this.producerIds = new ProducerIdAllocator(this.metadata);
    this.fetchSessions = new FetchSessionCache(this.config.maxFetchSessions);
    await this.partitions.loadAll();
    this.groups = new GroupCoordinator({
      config: groupCoordinatorConfig(this.config.values),
      topics: this.topics,
      openLog: async (p) => {
        const part = this.partitions.get(GROUP_METADATA_TOPIC_NAME, p);
        if (!part) throw new Error(`${GROUP_METADATA_TOPIC_NAME}-${p} is not open`);
        return part.log;
      },
      logger: this.log.child({ component: 'group-coordinator' }),
    });
    await this.groups.start();
    this.metrics = createBrokerMetrics(this);
    registerGroupCoordinatorMetrics(this.metrics.registry, this.groups, { logEndOffset: (t, p) => this.partitions.get(t, p)?.log.highWatermark ?? null });
    if (!Number.isFinite(this.requestMemory.capacity)) this.log.warn('queued.max.request.bytes is -1: request memory is unbounded, as Kafka\'s default leaves it');
    for (const l of this.config.listeners) await this.listen(l);
    const admin = parseAdminListener(this.config.values.get('ledgerline.admin.listener') ?? '');
    if (admin) {
      this.admin = await startAdminHttp(admin.host, admin.port, {
        registry: this.metrics.registry,
        health: () => ({ clusterId: this.clusterId, nodeId: this.nodeId, topics: this.topics.list().length, connections: this.connections.size }),
      });
      this.log.info({ url: this.admin.url }, 'admin HTTP endpoint listening');
    }
    this.log.info(
      { listeners: this.bound.map((b) => `${b.name}://${b.host}:${b.boundPort}`), dataDir, clusterId: this.clusterId, nodeId: this.nodeId },
      'Ledgerline started',
    );
  }

  private async loadClusterId(): Promise<string> {
    const kv = await this.metadata.get(CLUSTER_KEY);
    if (kv) return (JSON.parse(Buffer.from(kv.value).toString('utf8')) as { clusterId: string }).clusterId;
    const clusterId = randomUuid();
    const res = await this.metadata.compareAndSet(CLUSTER_KEY, { version: 0 }, Buffer.from(JSON.stringify({ clusterId, formatVersion: 1 })));
    if (!res.succeeded) return this.loadClusterId();
    return clusterId;
  }

  private listen(l: Listener): Promise<void> {
    return new Promise((resolve, reject) => {
      const server = createServer({ noDelay: true }, (socket: Socket) => this.accept(socket, l.name));
      server.once('error', reject);
      server.listen({ host: l.host === '' ? undefined : l.host, port: l.port }, () => {
        server.off('error', reject);
        const addr = server.address();
        const boundPort = typeof addr === 'object' && addr ? addr.port : l.port;
        this.bound.push({ ...l, boundPort });
        this.servers.push(server);
        resolve();
      });
    });
  }

  private accept(socket: Socket, listenerName: string): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    this.connections.add(new Connection(socket, this, listenerName));
  }

  connectionClosed(c: Connection): void {
    this.connections.delete(c);
  }

  /** Counts a request of an API (kafka_server_requests_total). */
  countRequest(apiKey: number, name: string): void {
    let c = this.requestCounters.get(apiKey);
    if (!c) this.requestCounters.set(apiKey, (c = this.metrics.requests.labels(name)));
    c.inc();
  }

  private topicMetrics(topic: string): { bytesIn: Counter.Internal; messagesIn: Counter.Internal; bytesOut: Counter.Internal } {
    let t = this.topicCounters.get(topic);
    if (!t) {
      t = { bytesIn: this.metrics.bytesIn.labels(topic), messagesIn: this.metrics.messagesIn.labels(topic), bytesOut: this.metrics.bytesOut.labels(topic) };
      this.topicCounters.set(topic, t);
    }
    return t;
  }

  /** Counts an appended batch (BrokerTopicMetrics BytesIn/MessagesIn). */
  countAppend(topic: string, bytes: number, records: number): void {
    const t = this.topicMetrics(topic);
    t.bytesIn.inc(bytes);
    t.messagesIn.inc(records);
  }

  /** Counts fetched batch bytes (BrokerTopicMetrics BytesOut). */
  countFetch(topic: string, bytes: number): void {
    this.topicMetrics(topic).bytesOut.inc(bytes);
  }

  apiVersionsFallback(header: RequestHeader): Buffer[] {
    return apiVersionsFallback(this.handlers.values(), header);
  }

  /** Graceful shutdown; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const closed = Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    // Waiting JoinGroup/SyncGroup requests are answered NOT_COORDINATOR.
    await this.groups?.stop();
    // Stop reading, let requests already read finish (their appends become durable and are answered).
    await Promise.all([...this.connections].map((c) => c.drain(SHUTDOWN_DRAIN_MS)));
    for (const c of this.connections) c.close();
    await closed;
    await this.admin?.close();
    await this.partitions?.close();
    await this.metadata?.close();
    this.log.info('Ledgerline stopped');
  }
}
