/**
 * The broker process: opens the stores in the data directory, builds the layers on them, hands the API
 * handlers their services and listens. It only wires: requests go connection.ts → dispatch.ts → the
 * handlers (src/api/), which see the narrow services of src/api/services.ts and never the Broker. One
 * Broker per process; tests start it as a child process (src/cli.ts).
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
import { performance } from 'node:perf_hooks';
import { createServer as createTlsServer } from 'node:tls';
import { join } from 'node:path';
import { ErrorCode, errorByCode } from '../../protocol/error-codes.js';
import { handlers as allHandlers } from '../api/index.js';
import { NO_RESPONSE, type Handler } from '../api/handler.js';
import { apiCatalog } from '../api/018-api-versions.js';
import type { Services, TopicService, TxnVerificationService } from '../api/services.js';
import type { BrokerConfig, Listener } from '../config.js';
import { ClusterApiError } from '../cluster/errors.js';
import { TopicManager } from '../cluster/topics.js';
import { SingleNodeView, type ClusterView } from '../cluster/cluster-view.js';
import { MemberView } from '../cluster/member-view.js';
import { PartitionManager } from '../cluster/partitions.js';
import { ProducerIdAllocator } from '../cluster/producer-state.js';
import { FetchSessionCache } from '../cluster/fetch-sessions.js';
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from '../cluster/topic-names.js';
import { BrokerChannels, interBrokerClientId } from '../cluster/broker-channels.js';
import { NO_REPLICA_READS, OwnerReplicaReads } from '../cluster/replica-reads.js';
import { LocalTxnMarkerWriter } from '../cluster/txn-markers.js';
import { RoutingTxnMarkerWriter, RoutingTxnVerifier } from '../cluster/txn-routing.js';
import { GroupCoordinator, groupCoordinatorConfig, registerGroupCoordinatorMetrics } from '../coordinator/index.js';
import { TransactionCoordinator, transactionCoordinatorConfig } from '../coordinator/txn/index.js';
import type { LedgerFs } from '../ledger/fs.js';
import { LEDGER_STORE_CONFIG, ledgerStoreDirectIo, ledgerStoreGroupCommits, ledgerStoreKind, ledgerStoreReads, ledgerStoreSpace, openLedgerStore, type OpenLedgerStoreOptions } from '../ledger/open-store.js';
import type { LedgerStore } from '../ledger/types.js';
import { ClusterConfigs, MIN_INSYNC_REPLICAS } from '../cluster/cluster-configs.js';
import { loadClusterId, loadDirectoryId } from '../cluster/identity.js';
import { METADATA_STORE_CONFIG, METADATA_ZOOKEEPER_CONNECT_CONFIG, METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG, openMetadataStore } from '../metadata/open-store.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import { createBrokerMetrics, TopicMetrics, type BrokerMetrics } from '../observability/metrics.js';
import { registerLogCleanerMetrics } from '../observability/log-cleaner-metrics.js';
import { registerEventLoopMetrics, registerGroupCommitMetrics, registerStoreReadMetrics } from '../observability/runtime-metrics.js';
import { LogCleaner, type LogCleanerOptions } from '../log/log-cleaner.js';
import { RequestMetrics } from '../observability/request-metrics.js';
import { registerAuthenticationMetrics } from '../observability/auth-metrics.js';
import { ListenerSecurity, type AuthenticationMetrics } from '../security/listener-setup.js';
import { ScramCredentialStore } from '../security/scram-credentials.js';
import { TlsContextReloader } from '../security/tls-reloader.js';
import { parseAdminListener, startAdminHttp, type AdminHttpServer } from '../observability/admin-http.js';
import { tenantAdminRoutes } from '../tenants/admin-routes.js';
import { Replication } from '../replication/replication.js';
import { replicationAdminRoutes } from '../replication/admin-routes.js';
import { encryptionReport } from '../cluster/encryption-report.js';
import { Connection, type ConnectionHost } from './connection.js';
import { Dispatcher } from './dispatch.js';
import { AclStore } from '../security/acl/acl-store.js';
import { TenantStore } from '../tenants/tenant-store.js';
import { QuotaStore } from '../quota/quota-store.js';
import { createClientQuotaManagers, quotaWindowConfig } from '../quota/client-quota-manager.js';
import { QuotaEnforcer } from './quota-enforcer.js';
import { ConnectionRateLimiter } from '../quota/connection-rate.js';
import { ConnectionLimits } from './connection-limits.js';
import { ControllerMutationQuotas } from '../quota/controller-mutation.js';
import { hostOf } from '../api/access.js';
import { Counter } from 'prom-client';
import { aclAuthorizerFor } from '../security/acl/authorizer.js';
import { RefusalLog } from './refusals.js';
import { MemoryPool } from './memory-pool.js';

/** Which cluster view the broker runs with: single (the default) or shared (src/cluster/member-view.ts). */
const MEMBERSHIP_CONFIG = 'ledgerline.cluster.membership';

/** How long shutdown waits for in-flight requests before closing connections anyway. */
const SHUTDOWN_DRAIN_MS = 10_000;

export interface BoundListener extends Listener {
  /** The port actually bound (differs from `port` when it was 0). */
  boundPort: number;
}

/** The layers of a started broker, built in order by start(). */
interface Parts {
  metadata: MetadataStore;
  ledgers: LedgerStore;
  clusterConfigs: ClusterConfigs;
  acls: AclStore;
  tenants: TenantStore;
  quotas: QuotaStore;
  replication: Replication;
  topics: TopicManager;
  view: ClusterView;
  partitions: PartitionManager;
  cleaner: LogCleaner;
  groups: GroupCoordinator;
  transactions: TransactionCoordinator;
  metrics: BrokerMetrics;
  dispatcher: Dispatcher;
  channels: BrokerChannels;
}

export class Broker implements ConnectionHost {
  readonly bound: BoundListener[] = [];
  /** Refused requests, logged once per client, API and reason (src/server/refusals.ts). */
  readonly refusals: RefusalLog;
  /** The memory of request buffers, queued.max.request.bytes (src/server/memory-pool.ts). */
  readonly requestMemory: MemoryPool;
  private readonly handlers = new Map<number, Handler>();
  private readonly connections = new Set<Connection>();
  private readonly servers: Server[] = [];
  /** Each listener's security (src/security/listener-setup.ts), built at start. */
  private readonly security = new Map<string, ListenerSecurity>();
  /** Certificate reloads of the TLS listeners (ssl.keystore.* / ssl.truststore.* files watched). */
  private readonly tlsReloaders: TlsContextReloader[] = [];
  private authMetrics: AuthenticationMetrics | null = null;
  /** KIP-308/402 connection limits, and the address each counted connection came from. */
  private connectionLimits: ConnectionLimits | null = null;
  private readonly connectionIps = new Map<Connection, string>();
  /** KIP-612 per-IP connection creation rates, and the connections refused for them. */
  private connectionRates: ConnectionRateLimiter | null = null;
  private connectionsThrottled: Counter<'listener'> | null = null;
  /** Every store and layer, set once start() has opened them (stop() closes what was opened). */
  private parts: Partial<Parts> = {};
  private admin: AdminHttpServer | null = null;
  /** The membership of a shared cluster, when ledgerline.cluster.membership=shared. */
  private member: MemberView | null = null;
  private requestMemoryWarnedAt = -Infinity;
  private stopping = false;
  /** Stops the event-loop delay sampler (runtime-metrics.ts). */
  private stopEventLoopSampler: (() => void) | null = null;

  constructor(
    readonly config: BrokerConfig,
    readonly log: Logger,
    /** The ledger store's file system: the real one, or a fault-injecting one in tests (src/ledger/fault-fs.ts). */
    private readonly ledgerFs?: LedgerFs,
  ) {
    for (const h of allHandlers) this.handlers.set(h.api.apiKey, h);
    this.refusals = new RefusalLog(log.child({ component: 'refusals' }));
    // The top eighth of the pool (at most what leaves room for one largest request) stays for small
    // requests, so half-sent large frames cannot stop other clients' metadata, heartbeats and commits.
    const capacity = config.queuedMaxRequestBytes;
    this.requestMemory = new MemoryPool(capacity, { reserve: Math.min(Math.floor(capacity / 8), capacity - config.socketRequestMaxBytes), smallRequestBytes: 1024 * 1024 });
  }

  get nodeId(): number {
    return this.config.nodeId;
  }

  get socketRequestMaxBytes(): number {
    return this.config.socketRequestMaxBytes;
  }

  get connectionsMaxIdleMs(): number {
    return this.config.connectionsMaxIdleMs;
  }

  get dispatcher(): Dispatcher {
    const d = this.parts.dispatcher;
    if (!d) throw new Error('the broker is not started');
    return d;
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

  connectionClosed(c: Connection): void {
    this.connections.delete(c);
    const ip = this.connectionIps.get(c);
    if (ip !== undefined) {
      this.connectionIps.delete(c);
      this.connectionLimits?.release(ip);
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
    const { config, log } = this;
    const dataDir = config.dataDir;
    mkdirSync(dataDir, { recursive: true });
    const p = this.parts;
    // The stores are chosen by configuration (ledgerline.metadata.store, ledgerline.ledger.store) and used
    // through their interfaces from here on.
    const metadata = (p.metadata = await openMetadataStore({
      store: config.values.get(METADATA_STORE_CONFIG),
      dir: join(dataDir, 'metadata'),
      zookeeper: {
        connect: config.values.get(METADATA_ZOOKEEPER_CONNECT_CONFIG),
        sessionTimeoutMs: Number(config.values.get(METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG) ?? 18_000),
      },
    }));
    const clusterId = await loadClusterId(metadata);
    const controllerListeners = new Set(config.controllerListenerNames);
    const directoryId = await loadDirectoryId(metadata, this.nodeId);
    const topics = (p.topics = new TopicManager(metadata, config, (err) => log.error({ err }, 'the topic registry could not follow a change in the metadata store')));
    // The cluster-level dynamic broker configs, under the topics' own overrides (KIP-966 writes min.insync.replicas).
    const clusterConfigs = (p.clusterConfigs = new ClusterConfigs(metadata, this.nodeId, (err) => log.error({ err }, 'the cluster-level broker configs could not follow a change in the metadata store')));
    await clusterConfigs.load(config.values.get(MIN_INSYNC_REPLICAS) ?? '1');
    topics.useDynamicDefaults(clusterConfigs);
    clusterConfigs.onChange(() => void topics.dynamicDefaultsChanged().catch((err: unknown) => log.error({ err }, 'applying the cluster-level broker configs failed')));
    await topics.load();
    // Alone in its cluster (ledgerline.cluster.membership=single, the default), this broker owns every partition
    // and coordinator key; a member of a shared cluster owns what the rendezvous rule gives it (member-view.ts).
    const viewOptions = {
      nodeId: this.nodeId,
      topics,
      // Clients are told of the broker listeners only; the controller listeners are the voter's (DescribeQuorum).
      endpoints: () => this.advertised.filter((a) => !controllerListeners.has(a.name)).map((a) => ({ listenerName: a.name, host: a.host, port: a.port })),
      offsetsTopicPartitions: Number(config.values.get('offsets.topic.num.partitions') ?? '50'),
      transactionTopicPartitions: Number(config.values.get('transaction.state.log.num.partitions') ?? '50'),
    };
    const member = config.values.get(MEMBERSHIP_CONFIG) === 'shared'
      ? (this.member = new MemberView({ ...viewOptions, store: metadata, rack: config.values.get('broker.rack') ?? null, leaseTtlSeconds: Math.ceil(Number(config.values.get('broker.session.timeout.ms') ?? '9000') / 1000), log: log.child({ component: 'membership' }) }))
      : null;
    const view = (p.view = member ?? new SingleNodeView(viewOptions));
    // A member serving requests is live itself, registered or not yet.
    topics.liveBrokerCount = member ? () => Math.max(1, view.liveBrokers().length) : () => view.liveBrokers().length;
    const directIo = config.values.get('ledgerline.storage.direct.io')?.trim().toLowerCase() !== 'false';
    const ledgers = (p.ledgers = await openLedgerStore({
      store: config.values.get(LEDGER_STORE_CONFIG),
      dir: join(dataDir, 'ledgers'),
      // A batch is one entry; the request size limit bounds it before any topic config does.
      maxEntryBytes: config.socketRequestMaxBytes,
      ...(this.ledgerFs ? { fs: this.ledgerFs } : {}),
      gc: ledgerGcOptions(config.values),
      directIo,
      onBackgroundError: (err) => log.error({ err }, 'ledger store background error'),
      config: (name) => config.values.get(name),
      log: (msg, fields) => log.info({ component: 'bookkeeper', ...fields }, msg),
    }));
    // Only the local store on the real disk can write directly (not `memory`, not a test's file system).
    const writesDirect = ledgerStoreKind(config.values.get(LEDGER_STORE_CONFIG)) === 'local' && !this.ledgerFs ? ledgerStoreDirectIo(ledgers) : null;
    if (writesDirect === false && directIo) {
      log.warn({ dir: join(dataDir, 'ledgers') }, 'the file system of the ledger store refuses O_DIRECT: appends go through the page cache (ledgerline.storage.direct.io)');
    } else if (writesDirect !== null) {
      log.info({ directIo: writesDirect }, writesDirect ? 'ledger store appends bypass the page cache (O_DIRECT)' : 'ledger store appends go through the page cache');
    }
    // Partitions open on first use, coordinator shards on the first request for one of their groups.
    const partitions = (p.partitions = new PartitionManager({ topics, view, ledgers, metadata, config, log }));
    // The log cleaner compacts the open partitions whose cleanup.policy includes compact (__consumer_offsets too).
    const cleaner = (p.cleaner = new LogCleaner({ logs: () => partitions.openLogs(), ...logCleanerOptions(config.values), logger: log.child({ component: 'log-cleaner' }) }));
    cleaner.start();
    topics.addListener({ topicDeleted: (t) => { for (let i = 0; i < t.partitions; i++) cleaner.forget(`${t.name}-${i}`); } });
    // KIP-890 part 1: Produce and TxnOffsetCommit ask the transaction coordinator whether a partition is in the
    // producer's ongoing transaction. It is built after the group coordinator, which its markers reach.
    const localVerification: TxnVerificationService = {
      verify: (transactionalId, producerId, producerEpoch, topic, partition, addPartition) => transactions.verify(transactionalId, producerId, producerEpoch, topic, partition, addPartition),
    };
    // A member's partitions and transaction coordinators are spread over brokers: verifications and markers go
    // to whichever broker owns the other side (src/cluster/txn-routing.ts), as Kafka's brokers send them.
    const channels = member ? (p.channels = new BrokerChannels({ cluster: view, clientId: interBrokerClientId(this.nodeId) })) : null;
    const txnVerification: TxnVerificationService = channels ? new RoutingTxnVerifier({ local: localVerification, cluster: view, channels }) : localVerification;
    const groups = (p.groups = new GroupCoordinator({
      config: groupCoordinatorConfig(config.values),
      topics,
      openLog: async (index) => {
        const part = partitions.get(GROUP_METADATA_TOPIC_NAME, index) ?? (await partitions.open(GROUP_METADATA_TOPIC_NAME, index));
        if (!part) throw new Error(`${GROUP_METADATA_TOPIC_NAME}-${index} cannot be opened here`);
        return part.log;
      },
      ownership: { owns: (index) => view.owns(GROUP_METADATA_TOPIC_NAME, index) },
      liveBrokers: () => view.liveBrokers().length,
      awaitReplicas: member !== null,
      txnVerification,
      logger: log.child({ component: 'group-coordinator' }),
    }));
    // A member hands a partition over once these resolve (the shard closed before its log closes).
    view.subscribe({ released: (t, index) => (t === GROUP_METADATA_TOPIC_NAME ? groups.released(index) : undefined) });
    await groups.start();
    const producerIds = new ProducerIdAllocator(metadata);
    // Transaction markers go to the partitions this broker leads, __consumer_offsets ones to the group coordinator.
    const txnMarkers = new LocalTxnMarkerWriter({ topics, cluster: view, partitions, groups });
    const coordinatorMarkers = channels ? new RoutingTxnMarkerWriter({ local: txnMarkers, cluster: view, channels, log: log.child({ component: 'transaction-markers' }) }) : txnMarkers;
    const transactions = (p.transactions = new TransactionCoordinator({
      config: transactionCoordinatorConfig(config.values),
      topics,
      openLog: async (index) => {
        const part = partitions.get(TRANSACTION_STATE_TOPIC_NAME, index) ?? (await partitions.open(TRANSACTION_STATE_TOPIC_NAME, index));
        if (!part) throw new Error(`${TRANSACTION_STATE_TOPIC_NAME}-${index} cannot be opened here`);
        return part.log;
      },
      producerIds,
      markers: coordinatorMarkers,
      groupPartitionFor: (groupId) => groups.partitionFor(groupId),
      ownership: { owns: (index) => view.owns(TRANSACTION_STATE_TOPIC_NAME, index) },
      coordinatorEpoch: (index) => partitions.leaderEpoch(TRANSACTION_STATE_TOPIC_NAME, index),
      liveBrokers: () => view.liveBrokers().length,
      awaitReplicas: member !== null,
      logger: log.child({ component: 'transaction-coordinator' }),
    }));
    view.subscribe({ released: (t, index) => (t === TRANSACTION_STATE_TOPIC_NAME ? transactions.released(index) : undefined) });
    // A member loads a __transaction_state partition as it takes it, as Kafka's does as it becomes its leader, so
    // transactions its previous owner left in PrepareCommit/PrepareAbort finish.
    if (member) view.subscribe({ acquired: (t, index) => void (t === TRANSACTION_STATE_TOPIC_NAME && transactions.load([index]).catch((err: unknown) => log.warn({ err, partition: index }, 'loading a taken __transaction_state partition failed; it loads on first use'))) });
    await transactions.start();
    // The __transaction_state partitions holding records load now, in the background: a transaction a crash
    // left in PrepareCommit/PrepareAbort finishes its markers and a hung one times out without waiting for a
    // request of its id. The others load on first use.
    void partitions
      .hostedStats(new Map([[TRANSACTION_STATE_TOPIC_NAME, new Set(Array.from({ length: topics.get(TRANSACTION_STATE_TOPIC_NAME)?.partitions ?? 0 }, (_, i) => i))]]))
      .then((stats) => transactions.load(stats.filter((s) => s.sizeInBytes > 0).map((s) => s.partition)))
      .catch((err: unknown) => log.warn({ err }, 'loading the transaction coordinator partitions that hold records failed; they load on first use'));
    const metrics = (p.metrics = createBrokerMetrics({
      connections: () => this.connections.size,
      requestMemory: this.requestMemory,
      partitions: () => partitions.all(),
      unopenedPartitions: () =>
        partitions.hostedStats(null, { highWatermarks: true }).then(
          (all) => all.filter((s) => !s.open),
          (err: unknown) => {
            log.warn({ err }, 'reading the stats of partitions not open for the metrics failed');
            throw err;
          },
        ),
      hosts: (s) => partitions.hosts(s.topicId, s.topic, s.partition),
      storage: ledgerStoreSpace(ledgers),
    }));
    registerLogCleanerMetrics(metrics.registry, cleaner);
    registerGroupCommitMetrics(metrics.registry, ledgerStoreGroupCommits(ledgers));
    registerStoreReadMetrics(metrics.registry, ledgerStoreReads(ledgers));
    this.stopEventLoopSampler = registerEventLoopMetrics(metrics.registry);
    registerGroupCoordinatorMetrics(metrics.registry, groups, { logEndOffset: (t, i) => partitions.get(t, i)?.log.highWatermark ?? null });
    const topicMetrics = new TopicMetrics(metrics);
    topics.addListener({ topicDeleted: (t) => topicMetrics.forget(t.name) });
    const scramCredentials = new ScramCredentialStore(metadata);
    // authorizer.class.name: the ACLs are loaded before any listener accepts a connection, as Kafka's brokers
    // wait for the authorizer to load its ACLs before they serve requests (StandardAuthorizer.completeInitialLoad).
    const authorizer = aclAuthorizerFor(config.values);
    if (authorizer) {
      const acls = (p.acls = new AclStore(metadata, authorizer, (err) => log.error({ err }, 'the ACLs could not follow a change in the metadata store')));
      await acls.load();
      log.info({ acls: authorizer.size, superUsers: [...authorizer.superUsers] }, 'authorizer loaded its ACLs');
    }
    // Tenants (src/tenants/): their principals confined to their names, their policies as topic config defaults
    // and shared quotas; loaded before any listener accepts a connection, followed by every broker.
    const tenants = (p.tenants = new TenantStore(metadata, (err) => log.error({ err }, 'the tenants could not follow a change in the metadata store')));
    await tenants.load();
    topics.useTopicPolicies(tenants);
    tenants.onChange(() => void topics.dynamicDefaultsChanged().catch((err: unknown) => log.error({ err }, 'applying the tenant policies failed')));
    // Client quotas (KIP-546), with or without an authorizer: loaded before any listener accepts a connection.
    const quotas = (p.quotas = new QuotaStore(metadata, { onWatchError: (err) => log.error({ err }, 'the client quotas could not follow a change in the metadata store') }));
    await quotas.load();
    const quotaWindow = quotaWindowConfig(config.values);
    this.connectionLimits = new ConnectionLimits(
      (name) => clusterConfigs.effective(name) ?? config.values.get(name) ?? null,
      (listenerName) => listenerName === (config.values.get('inter.broker.listener.name') ?? '').toUpperCase(),
    );
    this.connectionRates = new ConnectionRateLimiter(quotas, { samples: quotaWindow.numSamples, windowMs: quotaWindow.windowSizeSeconds * 1000 });
    this.connectionsThrottled = new Counter({
      name: 'kafka_server_socket_server_metrics_connections_throttled_total',
      help: 'Connections closed unserved for their address\'s connection_creation_rate (KIP-612), by listener.',
      labelNames: ['listener'],
      registers: [metrics.registry],
    });
    // Geo-replication (src/replication/): cluster links and mirror topics, the mirror partitions this broker leads
    // copied from their source clusters, group offsets of the groups it coordinates.
    const replication = (p.replication = new Replication({
      nodeId: this.nodeId,
      clusterId,
      store: metadata,
      owns: (t, i) => view.owns(t, i),
      coordinatesGroup: (g) => view.coordinator('group', g).nodeId === this.nodeId,
      isController: () => view.controllerId === this.nodeId,
      liveBrokers: () => view.liveBrokers().map((b) => b.nodeId),
      openLog: async (t, i) => (partitions.get(t, i) ?? (await partitions.open(t, i)))?.log,
      highWatermark: async (t, i) => {
        const open = partitions.get(t, i);
        if (open) return open.log.highWatermark;
        const [s] = await partitions.hostedStats(new Map([[t, new Set([i])]]), { highWatermarks: true });
        return s?.highWatermark ?? null;
      },
      getTopic: (name) => topics.get(name),
      listTopics: () => topics.list(),
      createTopic: (name, count, configs) => topics.create(name, { partitions: count, replicationFactor: -1, configs }),
      addPartitions: (name, count) => topics.addPartitions(name, count, false),
      setConfigs: (name, configs) => topics.setConfigs(name, configs, false),
      groups,
      reserveProducerId: (id) => producerIds.reserveThrough(id),
      replicationAllowed: (topic, link) => tenants.replicationAllowed(topic, link),
      log: log.child({ component: 'replication' }),
    }));
    await replication.start();
    replication.registerMetrics(metrics.registry);
    view.subscribe({ acquired: () => replication.poke() });
    topics.addListener({ topicDeleted: (t) => replication.topicDeleted(t.name).catch((err: unknown) => log.warn({ err, topic: t.name }, 'deleting the mirror record of a deleted topic failed')), partitionsAdded: () => replication.poke(), topicCreated: () => replication.poke() });
    const services: Services = {
      node: { nodeId: this.nodeId, clusterId, directoryId, controllerListeners: config.controllerListenerNames, advertisedFor: (listenerName) => this.advertisedFor(listenerName) },
      config,
      clusterConfigs,
      topics: topicService(topics, log, member !== null),
      cluster: view,
      partitions,
      groups,
      transactions,
      producerIds,
      fetchSessions: new FetchSessionCache(config.maxFetchSessions),
      metrics: topicMetrics,
      txnMarkers,
      txnVerification,
      replicaReads: channels ? new OwnerReplicaReads({ cluster: view, channels }) : NO_REPLICA_READS,
      apis: apiCatalog(this.handlers, controllerListeners),
      scramCredentials,
      mutationQuotas: new ControllerMutationQuotas(quotas, quotaWindow),
      acls: p.acls ?? null,
      quotas,
      mirrors: replication.mirrors,
      log,
    };
    p.dispatcher = new Dispatcher({
      handlers: this.handlers,
      controllerListeners,
      services,
      refusals: this.refusals,
      metrics: new RequestMetrics(metrics.registry, (code) => errorByCode(code).name),
      ...(authorizer ? { authorizer: { acls: authorizer, audit: log.child({ logger: 'authorizer' }) } } : {}),
      quotas: new QuotaEnforcer(createClientQuotaManagers(quotas, quotaWindow, tenants)),
      tenants,
    });
    const authMetrics = (this.authMetrics = registerAuthenticationMetrics(metrics.registry));
    for (const l of config.listeners) {
      const dispatcher = p.dispatcher;
      const security = new ListenerSecurity(l.name, config.securityProtocols.get(l.name)!, {
        values: config.values,
        scram: scramCredentials,
        dispatch: {
          apiVersions: async (frame, session) => {
            const o = await dispatcher.dispatch(frame, session, performance.now());
            return o.kind === 'respond' && o.chunks !== NO_RESPONSE ? o.chunks : null;
          },
          errorResponse: (frame, listenerName, code, message) => dispatcher.errorResponseFrame(frame, listenerName, code, message),
        },
        metrics: authMetrics,
        log: log.child({ component: 'security', listener: l.name }),
      });
      this.security.set(l.name, security);
      await security.start();
    }
    if (!Number.isFinite(this.requestMemory.capacity)) log.warn('queued.max.request.bytes is -1: request memory is unbounded, as Kafka\'s default leaves it');
    for (const l of config.listeners) await this.listen(l);
    // Registered once its endpoints are known (ports bound to 0); a live broker with the same id refuses the start.
    await member?.start();
    // Registered, it counts among the live brokers the internal topics wait for (src/coordinator/internal-topic.ts).
    if (member) {
      groups.checkInternalTopic();
      transactions.checkInternalTopic();
    }
    const admin = parseAdminListener(config.values.get('ledgerline.admin.listener') ?? '');
    if (admin) {
      this.admin = await startAdminHttp(admin.host, admin.port, {
        registry: metrics.registry,
        health: () => ({ clusterId, nodeId: this.nodeId, topics: topics.list().length, connections: this.connections.size }),
        documents: new Map([['/v1/encryption', () => encryptionReport(topics)]]),
        // GET, PUT and DELETE /v1/tenants[/<name>] (src/tenants/admin-routes.ts), for `ledgerline tenants`.
        // /v1/links and /v1/mirrors (src/replication/admin-routes.ts), for `ledgerline links|mirrors|migrate`.
        routes: new Map([...tenantAdminRoutes(tenants), ...replicationAdminRoutes(replication)]),
      });
      log.info({ url: this.admin.url }, 'admin HTTP endpoint listening');
    }
    log.info({ listeners: this.bound.map((b) => `${b.name}://${b.host}:${b.boundPort}`), dataDir, clusterId, nodeId: this.nodeId }, 'Ledgerline started');
  }

  /** The advertised address of a listener, or of the first one for a name that has none. */
  private advertisedFor(listenerName: string): Listener {
    const adv = this.advertised;
    return adv.find((a) => a.name === listenerName) ?? adv[0]!;
  }

  private listen(l: Listener): Promise<void> {
    const security = this.security.get(l.name)!;
    const accept = (socket: Socket): void => this.accept(socket, l.name, security);
    let server: Server;
    if (security.tls) {
      // SSL and SASL_SSL: the connection starts once the TLS handshake completed ('secureConnection').
      const { secureContext, requestCert, rejectUnauthorized } = security.tls;
      const tlsServer = createTlsServer({ ...secureContext, requestCert, rejectUnauthorized, noDelay: true }, accept);
      tlsServer.on('tlsClientError', (err, socket) => {
        // A client hello of garbage, a protocol or cipher mismatch, an untrusted or missing client certificate.
        this.authMetrics?.failed(l.name);
        this.log.info({ listener: l.name, remote: `${socket.remoteAddress}:${socket.remotePort}`, err: err.message }, 'TLS handshake failed: closing the connection');
      });
      tlsServer.on('connection', (raw: Socket) => {
        if (!this.stopping) this.admitted(raw, l.name);
      });
      this.tlsReloaders.push(new TlsContextReloader(tlsServer, security.tls, security.loadTls, this.log.child({ component: 'tls', listener: l.name })));
      server = tlsServer;
    } else server = createServer({ noDelay: true }, accept);
    return new Promise((resolve, reject) => {
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

  /**
   * KIP-612: a connection over its address's connection_creation_rate is not served, and closed once its
   * throttle time has passed (src/quota/connection-rate.ts). Checked as the TCP connection is accepted, before
   * a TLS handshake.
   */
  private admitted(socket: Socket, listenerName: string): boolean {
    const ip = hostOf(`${socket.remoteAddress ?? ''}:0`);
    const delayMs = this.connectionRates?.admit(ip) ?? 0;
    if (delayMs === 0) return true;
    this.connectionsThrottled?.inc({ listener: listenerName });
    this.log.debug({ listener: listenerName, remote: ip, delayMs }, 'connection over its address\'s connection_creation_rate: closing it after the throttle time');
    socket.pause();
    setTimeout(() => socket.destroy(), delayMs).unref();
    return false;
  }

  private accept(socket: Socket, listenerName: string, security: ListenerSecurity): void {
    if (this.stopping) {
      socket.destroy();
      return;
    }
    if (!security.tls && !this.admitted(socket, listenerName)) return;
    const ip = hostOf(`${socket.remoteAddress ?? ''}:0`);
    const refused = this.connectionLimits?.admit(ip, listenerName) ?? null;
    if (refused !== null) {
      this.log.info({ listener: listenerName, remote: ip }, `closing connection: ${refused}`);
      socket.destroy();
      return;
    }
    const connectionSecurity = security.forSocket(socket);
    if (socket.destroyed) {
      this.connectionLimits?.release(ip);
      return;
    }
    const connection = new Connection(socket, this, listenerName, connectionSecurity);
    this.connections.add(connection);
    if (this.connectionLimits) this.connectionIps.set(connection, ip);
  }

  /** Graceful shutdown; safe to call twice, and during or after a failed start. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const p = this.parts;
    const closed = Promise.all(this.servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    for (const r of this.tlsReloaders) r.close();
    for (const s of this.security.values()) s.close();
    // A member leaves first, as Kafka's controlled shutdown moves leadership away: each partition closed and
    // handed over while connections are still served (their clients are told NOT_LEADER_OR_FOLLOWER and move).
    await this.member?.stop().catch((err: unknown) => this.log.warn({ err }, 'leaving the cluster failed; the lease ends with this process'));
    // Compaction passes in progress end (nothing they wrote is swapped in afterwards).
    await p.cleaner?.close();
    // Mirror replicators (appending to partition logs, committing group offsets) stop before what they use.
    await p.replication?.close();
    // Waiting JoinGroup/SyncGroup requests are answered NOT_COORDINATOR.
    // The transaction coordinator first: its markers reach the group coordinator's partitions.
    await p.transactions?.stop();
    await p.groups?.stop();
    await p.channels?.close();
    // Stop reading, let requests already read finish (their appends become durable and are answered).
    await Promise.all([...this.connections].map((c) => c.drain(SHUTDOWN_DRAIN_MS)));
    for (const c of this.connections) c.close();
    await closed;
    await this.admin?.close();
    await p.partitions?.close();
    await p.topics?.close();
    await p.clusterConfigs?.close();
    await p.acls?.close();
    await p.tenants?.close();
    await p.quotas?.close();
    await p.ledgers?.close();
    await p.metadata?.close();
    this.stopEventLoopSampler?.();
    this.log.info('Ledgerline stopped');
  }
}

/** The topic registry as handlers use it, with Metadata's auto-creation (auto.create.topics.enable). */
function topicService(topics: TopicManager, log: Logger, sharedStore: boolean): TopicService {
  return {
    ...(sharedStore ? { refresh: (name: string, partition: number) => topics.refresh(name, partition) } : {}),
    get: (name) => topics.get(name),
    getById: (id) => topics.getById(id),
    list: () => topics.list(),
    create: (name, opts) => topics.create(name, opts),
    delete: (name) => topics.delete(name),
    addPartitions: (name, count, validateOnly) => topics.addPartitions(name, count, validateOnly),
    setConfigs: (name, configs, validateOnly) => topics.setConfigs(name, configs, validateOnly),
    validateConfigs: (configs) => topics.validateConfigs(configs),
    resolveAll: (t) => topics.resolveAll(t),
    configValue: (t, name) => topics.configValue(t, name),
    async autoCreate(name) {
      try {
        return await topics.create(name, { partitions: -1, replicationFactor: -1, configs: {} });
      } catch (err) {
        if (err instanceof ClusterApiError && err.errorCode === ErrorCode.TOPIC_ALREADY_EXISTS) return topics.get(name);
        log.warn({ err, topic: name }, 'auto-creating a topic failed');
        return undefined;
      }
    },
  };
}

/** The log cleaner's settings, from Kafka's log.cleaner.* broker configs. */
function logCleanerOptions(values: ReadonlyMap<string, string | null>): Omit<LogCleanerOptions, 'logs'> {
  const num = (name: string): number | undefined => {
    const v = values.get(name);
    return v === null || v === undefined || v.trim() === '' ? undefined : Number(v);
  };
  return {
    enabled: values.get('log.cleaner.enable') !== 'false',
    threads: num('log.cleaner.threads'),
    backoffMs: num('log.cleaner.backoff.ms'),
    dedupeBufferBytes: num('log.cleaner.dedupe.buffer.size'),
    loadFactor: num('log.cleaner.io.buffer.load.factor'),
    maxBytesPerSecond: num('log.cleaner.io.max.bytes.per.second'),
  };
}

/** The ledger store's garbage collector settings, from the ledgerline.storage.* broker configs. */
function ledgerGcOptions(values: ReadonlyMap<string, string | null>): OpenLedgerStoreOptions['gc'] {
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
