/**
 * Small fakes of the services API handlers use (src/api/services.ts), and a request context over them, so
 * a handler is tested in-process against exactly the services it names in `uses`.
 */
import { NO_RESPONSE, type HandlerResult, type RequestContext } from '../../../src/api/handler.js';
import { ALLOW_ALL, type Access } from '../../../src/api/access.js';
import { CLUSTER_NAME, operationBits, operationName, ResourceType, resourceTypeName, SUPPORTED_OPERATIONS } from '../../../src/security/acl/model.js';
import {
  ANONYMOUS,
  type MetricsSink,
  type Principal,
  type NodeService,
  type PartitionService,
  type ServiceName,
  type Services,
  type TopicService,
  type TransactionService,
  type TxnMarkerService,
  type TxnVerificationService,
} from '../../../src/api/services.js';
import type { TxnMarkerEntry, TxnMarkerResult } from '../../../src/cluster/txn-markers.js';
import type { DescribedTransaction, ListTransactionsFilters, ListTransactionsResult, PartitionError, TopicPartitionRef } from '../../../src/coordinator/txn/coordinator.js';
import { coordinatorPartition, type ClusterView, type LiveBroker } from '../../../src/cluster/cluster-view.js';
import { Partition, type ProduceConfig } from '../../../src/cluster/partitions.js';
import type { TopicRecord } from '../../../src/cluster/topics.js';
import { PartitionLog } from '../../../src/log/partition-log.js';
import { MemoryStores, type Stores } from '../log/support.js';

export interface ContextOptions {
  readonly apiVersion: number;
  readonly apiKey?: number;
  readonly clientId?: string;
  readonly listenerName?: string;
  readonly signal?: AbortSignal;
  /** Collects what the handler refused (ctx.refuse). */
  readonly refusals?: string[];
  /** The requester's rights; everything allowed unless given. */
  readonly access?: Access;
  readonly principal?: Principal;
}

export function requestContext<S extends ServiceName>(services: Pick<Services, S>, o: ContextOptions): RequestContext<S> {
  return {
    services,
    principal: o.principal ?? ANONYMOUS,
    access: o.access ?? ALLOW_ALL,
    header: { requestApiKey: o.apiKey ?? 0, requestApiVersion: o.apiVersion, correlationId: 1, clientId: o.clientId ?? 'cli' },
    apiVersion: o.apiVersion,
    connection: { id: 1, remoteAddress: '10.0.0.5:53122', listenerName: o.listenerName ?? 'PLAINTEXT', clientSoftwareName: null, clientSoftwareVersion: null },
    signal: o.signal ?? new AbortController().signal,
    refuse: (reason) => void o.refusals?.push(reason),
  };
}

/** This node: id 7 at broker.example:9092 on every listener. */
export function fakeNode(o: { nodeId?: number; clusterId?: string; host?: string; port?: number; controllerListeners?: string[] } = {}): NodeService {
  return {
    nodeId: o.nodeId ?? 7,
    clusterId: o.clusterId ?? 'cluster-0',
    directoryId: 'ZGlyZWN0b3J5LWlkLTAwMA',
    controllerListeners: o.controllerListeners ?? [],
    advertisedFor: () => ({ host: o.host ?? 'broker.example', port: o.port ?? 9092 }),
  };
}

/**
 * A cluster view over a fixed set of brokers (this node, 7 unless told otherwise, at broker.example:9092): `owned`
 * says which partitions this node owns (all by default); `ownerOf` which broker owns the others (-1: none).
 */
export function fakeCluster(o: { nodeId?: number; brokers?: LiveBroker[]; owned?: (topic: string, partition: number) => boolean; ownerOf?: (topic: string, partition: number) => number; coordinatorNode?: number; controllerId?: number } = {}): ClusterView {
  const self = o.nodeId ?? 7;
  const brokers = o.brokers ?? [{ nodeId: self, rack: null, endpoints: [{ listenerName: 'PLAINTEXT', host: 'broker.example', port: 9092 }] }];
  const owned = o.owned ?? (() => true);
  const owner = (t: string, p: number): number => (owned(t, p) ? self : (o.ownerOf?.(t, p) ?? -1));
  return {
    localNodeId: self,
    controllerId: o.controllerId ?? self,
    liveBrokers: () => brokers,
    broker: (id) => brokers.find((b) => b.nodeId === id),
    owner,
    owns: (t, p) => owned(t, p),
    replicas: (t, p) => (owner(t, p) >= 0 ? [owner(t, p)] : []),
    isr: (t, p) => (owner(t, p) >= 0 ? [owner(t, p)] : []),
    coordinator: (type, key) => {
      const topic = type === 'group' ? '__consumer_offsets' : '__transaction_state';
      const partition = coordinatorPartition(key, 50);
      return { topic, partition, nodeId: o.coordinatorNode ?? owner(topic, partition) };
    },
    subscribe: () => () => undefined,
  };
}

/** A topic record as the registry holds it. */
export function topicRecord(name: string, partitions: number, o: { topicId?: string; internal?: boolean; configs?: Record<string, string> } = {}): TopicRecord {
  return { name, topicId: o.topicId ?? `id-${name}`.padEnd(22, 'A').slice(0, 22), partitions, configs: o.configs ?? {}, internal: o.internal ?? false, createdAtMs: 0 };
}

/** The produce checks of a topic with Kafka's defaults. */
export const DEFAULT_PRODUCE_CONFIG: ProduceConfig = {
  minInsyncReplicas: 1,
  maxMessageBytes: 1048588,
  createTime: true,
  timestampBeforeMaxMs: null,
  timestampAfterMaxMs: null,
  compacted: false,
  encryptionRequired: false,
};

/**
 * A topic registry of fixed topics and partitions over real in-memory logs (the embedded ledger store on an
 * in-memory fs, the in-memory metadata store): the services a partition handler uses, without a broker.
 */
export class FakeTopicsAndPartitions {
  readonly created: string[] = [];
  private readonly topics = new Map<string, TopicRecord>();
  private readonly parts = new Map<string, Partition>();
  private stores: Stores | null = null;
  private readonly memory = new MemoryStores();

  /** Adds a topic; `open` lists the partitions that are open (the others still opening). */
  async addTopic(t: TopicRecord, open: readonly number[] = Array.from({ length: t.partitions }, (_, i) => i), config: ProduceConfig = DEFAULT_PRODUCE_CONFIG): Promise<void> {
    this.topics.set(t.name, t);
    this.stores ??= await this.memory.open();
    for (const p of open) {
      const log = await PartitionLog.open({ topic: t.name, partition: p, ledgers: this.stores.ledgers, metadata: this.stores.metadata, retentionCheckIntervalMs: 0 });
      this.parts.set(`${t.name}-${p}`, new Partition(t, p, log, config));
    }
  }

  readonly topicService: TopicService = {
    get: (name) => this.topics.get(name),
    getById: (id) => [...this.topics.values()].find((t) => t.topicId === id),
    list: () => [...this.topics.values()],
    create: () => Promise.reject(new Error('not used')),
    delete: () => Promise.reject(new Error('not used')),
    addPartitions: () => Promise.reject(new Error('not used')),
    setConfigs: () => Promise.reject(new Error('not used')),
    validateConfigs: (c) => c as Record<string, string>,
    resolveAll: () => [],
    configValue: () => null,
    autoCreate: async (name) => {
      this.created.push(name);
      const t = topicRecord(name, 1);
      await this.addTopic(t);
      return t;
    },
  };

  readonly partitionService: PartitionService = {
    get: (topic, p) => this.parts.get(`${topic}-${p}`),
    // The partitions not listed as open in addTopic stay unopened, as if they were still opening.
    open: async (topic, p) => this.parts.get(`${topic}-${p}`),
    all: () => this.parts.values(),
    leaderEpoch: (topic, p) => this.parts.get(`${topic}-${p}`)?.log.leaderEpoch ?? -1,
    hostedStats: () => Promise.reject(new Error('not used')),
  };

  async close(): Promise<void> {
    for (const p of this.parts.values()) await p.log.close();
    await this.stores?.close();
  }
}

/** Counts what a handler reports to the metrics sink. */
export class RecordingMetrics implements MetricsSink {
  readonly appends: { topic: string; bytes: number; records: number }[] = [];
  readonly fetches: { topic: string; bytes: number }[] = [];
  countAppend(topic: string, bytes: number, records: number): void {
    this.appends.push({ topic, bytes, records });
  }
  countFetch(topic: string, bytes: number): void {
    this.fetches.push({ topic, bytes });
  }
}

/** KIP-890 verification that answers `answer` (NONE by default) and records what it was asked. */
export class FakeTxnVerification implements TxnVerificationService {
  readonly calls: Array<{ transactionalId: string; producerId: bigint; producerEpoch: number; topic: string; partition: number; addPartition: boolean }> = [];
  constructor(public answer: number = 0) {}
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition = false): Promise<number> {
    this.calls.push({ transactionalId, producerId, producerEpoch, topic, partition, addPartition });
    return Promise.resolve(this.answer);
  }
}

/** A marker writer that records the markers and answers NONE for every partition (or `errorCode`). */
export class RecordingTxnMarkers implements TxnMarkerService {
  readonly written: TxnMarkerEntry[] = [];
  constructor(public errorCode: number = 0) {}
  write(markers: readonly TxnMarkerEntry[]): Promise<TxnMarkerResult[]> {
    this.written.push(...markers);
    return Promise.resolve(
      markers.map((m) => ({ producerId: m.producerId, partitions: m.partitions.map((p) => ({ ...p, errorCode: this.errorCode })) })),
    );
  }
}

/** The response a handler gave, for handlers that always answer. */
export async function answer<Res>(r: HandlerResult<Res> | Promise<HandlerResult<Res>>): Promise<Res> {
  const v = await r;
  if (v === NO_RESPONSE) throw new Error('the handler did not answer');
  return v;
}

/**
 * A transaction service that records each call and answers with `code` (NONE unless set) for every partition
 * or request: for the handlers' own work (request shapes, version mappings); the coordinator has its own tests.
 */
export class FakeTransactions implements TransactionService {
  readonly calls: Array<{ op: string; args: unknown[] }> = [];
  code = 0;
  init = { producerId: 42n, producerEpoch: 3 };
  described: DescribedTransaction[] = [];
  listed: ListTransactionsResult = { errorCode: 0, unknownStateFilters: [], transactions: [] };
  isActive = true;

  async initProducerId(transactionalId: string, timeoutMs: number, expected: { producerId: bigint; producerEpoch: number } | null) {
    this.calls.push({ op: 'initProducerId', args: [transactionalId, timeoutMs, expected] });
    return this.code === 0 ? { errorCode: 0, ...this.init } : { errorCode: this.code, producerId: -1n, producerEpoch: -1 };
  }
  async addPartitionsToTxn(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartitionRef[]): Promise<PartitionError[]> {
    this.calls.push({ op: 'addPartitionsToTxn', args: [transactionalId, producerId, producerEpoch, partitions] });
    return partitions.map((p) => ({ ...p, errorCode: this.code }));
  }
  /** Partitions that exist: every one unless `existing` says otherwise. */
  existing: (topic: string, partition: number) => boolean = () => true;
  partitionExists(topic: string, partition: number): boolean {
    return this.existing(topic, partition);
  }
  async verifyPartitions(transactionalId: string, producerId: bigint, producerEpoch: number, partitions: readonly TopicPartitionRef[]): Promise<PartitionError[]> {
    this.calls.push({ op: 'verifyPartitions', args: [transactionalId, producerId, producerEpoch, partitions] });
    return partitions.map((p) => ({ ...p, errorCode: this.code }));
  }
  async addOffsetsToTxn(transactionalId: string, producerId: bigint, producerEpoch: number, groupId: string): Promise<number> {
    this.calls.push({ op: 'addOffsetsToTxn', args: [transactionalId, producerId, producerEpoch, groupId] });
    return this.code;
  }
  async endTxn(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean): Promise<number> {
    this.calls.push({ op: 'endTxn', args: [transactionalId, producerId, producerEpoch, commit] });
    return this.code;
  }
  async endTxnV2(transactionalId: string, producerId: bigint, producerEpoch: number, commit: boolean) {
    this.calls.push({ op: 'endTxnV2', args: [transactionalId, producerId, producerEpoch, commit] });
    return this.code === 0 ? { errorCode: 0, producerId, producerEpoch: producerEpoch + 1 } : { errorCode: this.code, producerId: -1n, producerEpoch: -1 };
  }
  async describeTransactions(ids: readonly string[]): Promise<DescribedTransaction[]> {
    this.calls.push({ op: 'describeTransactions', args: [ids] });
    return this.described;
  }
  async listTransactions(filters: ListTransactionsFilters): Promise<ListTransactionsResult> {
    this.calls.push({ op: 'listTransactions', args: [filters] });
    return this.listed;
  }
}

/**
 * An authorizer's answers for a handler test: `allows(operation, resourceType, name)` decides each check;
 * `checks` records every check made as `OPERATION TYPE name` (AclOperation/ResourceType names).
 */
export function fakeAccess(allows: (operation: number, resourceType: number, name: string) => boolean, checks: string[] = []): Access {
  const authorize = (op: number, type: number, name: string): boolean => {
    checks.push(`${operationName(op)} ${resourceTypeName(type)} ${name}`);
    return allows(op, type, name);
  };
  return {
    enabled: true,
    authorize,
    authorizeCluster: (op) => authorize(op, ResourceType.CLUSTER, CLUSTER_NAME),
    allowedNames: (op, type, names) => new Set([...new Set(names)].filter((n) => authorize(op, type, n))),
    authorizeByResourceType: (op, type) => {
      checks.push(`${operationName(op)} ${resourceTypeName(type)} <any>`);
      return allows(op, type, '');
    },
    authorizedOperations: (type, name) => operationBits((SUPPORTED_OPERATIONS.get(type) ?? []).filter((op) => allows(op, type, name))),
  };
}
