/**
 * The services API handlers are given: narrow views of the broker's parts, one per concern. A handler
 * names the ones it uses (`uses` in defineHandler), its context's type holds only those, and a unit test
 * hands it small fakes of exactly those (test/unit/api/fakes.ts). Nothing here is the broker: the broker
 * (src/server/broker.ts) builds one Services value when it starts and passes it to every request.
 *
 *   connection ─► dispatch ─► handler(request, { services: Pick<Services, uses>, principal, ... })
 *                                                  │
 *      topics · cluster · partitions · groups · transactions · node · config · clusterConfigs · producerIds · fetchSessions · metrics · log
 *      txnMarkers · txnVerification · scramCredentials · acls · quotas · mirrors
 */
import type { ApiVersionsResponse } from '../../protocol/messages/018-api-versions.gen.js';
import type { ClusterConfigs } from '../cluster/cluster-configs.js';
import type { ClusterView } from '../cluster/cluster-view.js';
import type { FetchSessionCache } from '../cluster/fetch-sessions.js';
import type { PartitionManager } from '../cluster/partitions.js';
import type { ProducerIdAllocator } from '../cluster/producer-state.js';
import type { ReplicaReads } from '../cluster/replica-reads.js';
import type { TopicManager, TopicRecord } from '../cluster/topics.js';
import type { LocalTxnMarkerWriter } from '../cluster/txn-markers.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import type { TransactionCoordinator } from '../coordinator/txn/coordinator.js';
import type { BrokerConfig } from '../config.js';
import type { Logger } from '../observability/logger.js';
import type { ScramCredentialStore } from '../security/scram-credentials.js';
import type { AclStore } from '../security/acl/acl-store.js';
import type { QuotaStore } from '../quota/quota-store.js';
import type { ControllerMutationQuotas } from '../quota/controller-mutation.js';
import type { MirrorStore } from '../replication/mirrors.js';

/** This broker as its clients see it. */
export interface NodeService {
  readonly nodeId: number;
  readonly clusterId: string;
  /** The id of this node's metadata directory (KIP-858), stable across restarts: its voter's directory id. */
  readonly directoryId: string;
  /** The listeners that serve the controller APIs (controller.listener.names); empty when none does. */
  readonly controllerListeners: readonly string[];
  /** The address clients of a listener are told to use (its advertised listener, bound port filled in). */
  advertisedFor(listenerName: string): { readonly host: string; readonly port: number };
}

/** The topic registry, as the admin and metadata APIs use it. */
export interface TopicService
  extends Pick<TopicManager, 'get' | 'getById' | 'list' | 'create' | 'delete' | 'addPartitions' | 'setConfigs' | 'validateConfigs' | 'resolveAll' | 'configValue'> {
  /**
   * Creates a topic a Metadata request names, with the broker defaults (auto.create.topics.enable).
   * Undefined when it cannot be created; a concurrent creation of the same name gives that topic.
   */
  autoCreate(name: string): Promise<TopicRecord | undefined>;
  /**
   * A broker sharing its metadata store with others: reads a topic not known here (or one of fewer partitions)
   * from the store, for a request that another broker's Metadata sent here before this registry caught up (see
   * TopicManager.refresh). Absent on a single node, whose registry is the store's only writer.
   */
  refresh?(name: string, partition: number): Promise<boolean>;
}

/**
 * The partitions this broker serves. They open on first use: `get` finds an open one synchronously (the hot
 * path), `open` opens one this broker owns: `partitions.get(t, p) ?? (await partitions.open(t, p))`.
 */
export type PartitionService = Pick<PartitionManager, 'get' | 'open' | 'all' | 'leaderEpoch' | 'hostedStats'>;

/** Who owns each partition and coordinator key, the live brokers and the controller (src/cluster/cluster-view.ts). */
export type ClusterService = ClusterView;

/** The group coordinator (src/coordinator/). */
export type GroupService = GroupCoordinator;

/** The transaction coordinator (src/coordinator/txn/): the handler-facing operations of InitProducerId, 024-026, 065, 066. */
export type TransactionService = Pick<
  TransactionCoordinator,
  'initProducerId' | 'addPartitionsToTxn' | 'partitionExists' | 'verifyPartitions' | 'addOffsetsToTxn' | 'endTxn' | 'endTxnV2' | 'describeTransactions' | 'listTransactions' | 'isActive'
>;

/** Producer ids for InitProducerId. */
export type ProducerIdService = Pick<ProducerIdAllocator, 'allocate'>;

/** KIP-227 incremental fetch sessions. */
export type FetchSessionService = Pick<FetchSessionCache, 'begin' | 'complete'>;

/** What handlers count: Kafka's BrokerTopicMetrics (BytesIn, MessagesIn, BytesOut). */
export interface MetricsSink {
  countAppend(topic: string, bytes: number, records: number): void;
  countFetch(topic: string, bytes: number): void;
}

/** Writes transaction markers to local partitions (src/cluster/txn-markers.ts): WriteTxnMarkers, the transaction coordinator. */
export type TxnMarkerService = Pick<LocalTxnMarkerWriter, 'write'>;

/**
 * KIP-890 part 1: before a producer's first transactional batch in a partition is appended, Produce asks the
 * transaction coordinator whether that partition is part of the producer's ongoing transaction (Kafka's
 * AddPartitionsToTxnManager, `transaction.partition.verification.enable`). Resolves with an error code:
 * NONE when verified. `addPartition` (KIP-890 part 2, Produce v12+ and TxnOffsetCommit v5+ of a transaction
 * version 2 producer): the partition is added to the transaction instead, starting one if none is ongoing.
 */
export interface TxnVerificationService {
  verify(transactionalId: string, producerId: bigint, producerEpoch: number, topic: string, partition: number, addPartition?: boolean): Promise<number>;
}

/** A replica's answers for partitions another broker leads: DescribeProducers, as Kafka's followers give it. */
export type ReplicaReadService = ReplicaReads;

/** The dynamic broker configs at the cluster level (Kafka's default broker resource) and this broker's own, read and altered. */
export type ClusterConfigService = Pick<ClusterConfigs, 'get' | 'entries' | 'alter' | 'broker' | 'alterBroker'>;

/** The APIs this node serves on a listener, as ApiVersions lists them (computed once from the handlers' ranges). */
export interface ApiCatalog {
  versionsFor(listenerName: string): ApiVersionsResponse['apiKeys'];
}

export interface Services {
  readonly node: NodeService;
  /** The broker's configuration (read-only; topic configs live with the topics). */
  readonly config: BrokerConfig;
  readonly clusterConfigs: ClusterConfigService;
  readonly topics: TopicService;
  readonly cluster: ClusterService;
  readonly partitions: PartitionService;
  readonly groups: GroupService;
  readonly transactions: TransactionService;
  readonly producerIds: ProducerIdService;
  readonly fetchSessions: FetchSessionService;
  readonly metrics: MetricsSink;
  readonly txnMarkers: TxnMarkerService;
  readonly txnVerification: TxnVerificationService;
  /** What a replica that is not the leader answers from its copy of a partition (src/cluster/replica-reads.ts). */
  readonly replicaReads: ReplicaReadService;
  readonly apis: ApiCatalog;
  /** Users' SCRAM credentials in the metadata store (src/security/scram-credentials.ts). */
  readonly scramCredentials: Pick<ScramCredentialStore, 'describe' | 'alter'>;
  /** The ACLs in the metadata store (src/security/acl/acl-store.ts); null when no authorizer is configured. */
  readonly acls: Pick<AclStore, 'describe' | 'create' | 'delete'> | null;
  /** Client quotas in the metadata store (src/quota/quota-store.ts): DescribeClientQuotas, AlterClientQuotas. */
  readonly quotas: Pick<QuotaStore, 'describe' | 'alter'>;
  /** KIP-599 controller mutation quotas of CreateTopics, CreatePartitions and DeleteTopics (src/quota/controller-mutation.ts). */
  readonly mutationQuotas: Pick<ControllerMutationQuotas, 'quotaFor'>;
  /** Mirror topics (src/replication/): read-only until promoted; Produce asks `refusal` for every partition's topic. */
  readonly mirrors: Pick<MirrorStore, 'refusal'>;
  /** The broker's logger; a handler's lines carry its API (the dispatch seam's child logger). */
  readonly log: Logger;
}

export type ServiceName = keyof Services;

/**
 * Who sent a request (Kafka's KafkaPrincipal): `User:ANONYMOUS` on a PLAINTEXT listener, the SASL user or the
 * mapped certificate subject on the others.
 */
export interface Principal {
  readonly type: string;
  readonly name: string;
}

export const ANONYMOUS: Principal = Object.freeze({ type: 'User', name: 'ANONYMOUS' });
