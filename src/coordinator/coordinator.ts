/**
 * The group coordinator of this broker (Kafka's GroupCoordinatorService): routes each group to its
 * __consumer_offsets partition (`partitionFor`), validates requests the way Kafka's service layer does, runs
 * the protocol operations on the partition's shard, and turns refusals into response error codes.
 *
 * ```
 *   handler ─► GroupCoordinator ─► shard(partitionFor(groupId)) ─► ClassicGroupProtocol / ConsumerGroupProtocol
 *                                        │                         / OffsetManager  (sync, in memory)
 *                                        └─► CoordinatorStorage ─► __consumer_offsets-<p> partition log
 * ```
 *
 * A shard exists only for a partition this broker owns (`ownership`, the cluster view), and is created and
 * loaded lazily, on the first request for a group it holds (that request waits for the load); a released
 * partition's shard closes, and its groups answer NOT_COORDINATOR. A partition whose load fails answers
 * COORDINATOR_NOT_AVAILABLE while it retries (clients retry too).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { createConsumerGroupDescribeResponseDescribedGroup, type ConsumerGroupDescribeResponseDescribedGroup } from '../../protocol/messages/069-consumer-group-describe.gen.js';
import { createConsumerGroupHeartbeatResponse, type ConsumerGroupHeartbeatResponse } from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { createDescribeGroupsResponseDescribedGroup, type DescribeGroupsResponseDescribedGroup } from '../../protocol/messages/015-describe-groups.gen.js';
import { createDeleteGroupsResponseDeletableGroupResult, type DeleteGroupsResponseDeletableGroupResult } from '../../protocol/messages/042-delete-groups.gen.js';
import { createHeartbeatResponse, type HeartbeatRequest, type HeartbeatResponse } from '../../protocol/messages/012-heartbeat.gen.js';
import { createJoinGroupResponse, type JoinGroupRequest, type JoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import { createLeaveGroupResponse, createLeaveGroupResponseMemberResponse, type LeaveGroupRequestMemberIdentity, type LeaveGroupResponse } from '../../protocol/messages/013-leave-group.gen.js';
import type { ListGroupsResponseListedGroup } from '../../protocol/messages/016-list-groups.gen.js';
import {
  createOffsetCommitResponse,
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
  type OffsetCommitRequest,
  type OffsetCommitRequestTopic,
  type OffsetCommitResponse,
  type OffsetCommitResponseTopic,
} from '../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetDeleteResponse, createOffsetDeleteResponsePartition, createOffsetDeleteResponseTopic, type OffsetDeleteRequestTopic, type OffsetDeleteResponse } from '../../protocol/messages/047-offset-delete.gen.js';
import { createOffsetFetchResponseGroup, type OffsetFetchRequestGroup, type OffsetFetchResponseGroup } from '../../protocol/messages/009-offset-fetch.gen.js';
import { createSyncGroupResponse, type SyncGroupRequest, type SyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import type { TxnOffsetCommitRequest, TxnOffsetCommitResponse } from '../../protocol/messages/028-txn-offset-commit.gen.js';
import { GROUP_METADATA_TOPIC_NAME } from '../cluster/topic-names.js';
import { systemClock, type Clock } from '../metadata/clock.js';
import { InternalTopicStarter, internalTopicReplicas } from './internal-topic.js';
import { createAssignors } from './assignors.js';
import { CONSUMER_PROTOCOL_TYPE, ClassicGroup, ClassicGroupState } from './classic-group.js';
import { ClassicGroupProtocol, type JoinHandle } from './classic-protocol.js';
import type { GroupCoordinatorConfig } from './config.js';
import { ConsumerGroup } from './consumer-group.js';
import { ConsumerGroupProtocol, MEMBER_TIMERS, type ConsumerHeartbeatInput } from './consumer-protocol.js';
import { SILENT_LOGGER, type CoordinatorContext, type CoordinatorLogger, type RequestInfo, type TopicInfo, type TopicView } from './context.js';
import { GroupApiError, errorCodeOf, errorMessageOf } from './errors.js';
import { describeClassicGroup, describeConsumerGroup, listedGroup } from './group-descriptions.js';
import type { Group } from './group-records.js';
import { OffsetManager } from './offset-manager.js';
import type { OpResult, Shard } from './shard.js';
import { ShardSet } from './shard-set.js';
import { TopicDeletions } from './topic-deletions.js';
import type { CoordinatorPartitionLog } from './storage.js';
import { exceedsInt16String } from './string-bounds.js';
import { TxnCommits, type TxnOffsetVerifier } from './txn-commits.js';

export { LAZY_LOAD_WAIT_MS } from './shard-set.js';

/** Topic registry events (src/cluster/topics.ts TopicListener). */
export interface TopicEventSource {
  addListener(l: {
    topicCreated?(t: TopicInfo): void | Promise<void>;
    partitionsAdded?(t: TopicInfo, from: number): void | Promise<void>;
    topicDeleted?(t: TopicInfo): void | Promise<void>;
  }): void;
}

/** Creating the internal topic (TopicManager.create). */
export interface TopicCreator {
  create(
    name: string,
    opts: { partitions: number; replicationFactor: number; configs: Record<string, string | null>; allowInternal?: boolean },
  ): Promise<TopicInfo>;
}

export interface GroupCoordinatorOptions {
  readonly config: GroupCoordinatorConfig;
  readonly topics: TopicView & Partial<TopicEventSource> & Partial<TopicCreator>;
  /** The partition log of __consumer_offsets-<partition> (opened by the partition layer). */
  readonly openLog: (partition: number) => Promise<CoordinatorPartitionLog>;
  readonly clock?: Clock;
  readonly logger?: CoordinatorLogger;
  /** Whether this broker owns a __consumer_offsets partition (the cluster view). Default: it owns them all. */
  readonly ownership?: { owns(partition: number): boolean };
  /** KIP-890 verification of a TxnOffsetCommit with the transaction coordinator; none: not verified. */
  readonly txnVerification?: TxnOffsetVerifier;
  /** How many brokers are live (the cluster view): __consumer_offsets' replication factor is capped to it. Default 1. */
  readonly liveBrokers?: () => number;
  /**
   * A member of a shared cluster: __consumer_offsets is created only once offsets.topic.replication.factor
   * brokers are live, as Kafka's is (internal-topic.ts); until then group requests answer COORDINATOR_NOT_AVAILABLE.
   */
  readonly awaitReplicas?: boolean;
}

/** A group as metrics and tools see it. */
export interface GroupSummary {
  readonly groupId: string;
  readonly type: 'classic' | 'consumer';
  readonly state: string;
  readonly protocolType: string;
  readonly members: number;
  /** topic → partition → committed offset. */
  readonly offsets: ReadonlyMap<string, ReadonlyMap<number, bigint>>;
}

/**
 * The configs __consumer_offsets is created with, Kafka's GroupCoordinatorService.groupMetadataTopicConfigs:
 * compacted by the log cleaner, the producer's compression kept, ledgers of offsets.topic.segment.bytes.
 */
export function groupMetadataTopicConfigs(config: Pick<GroupCoordinatorConfig, 'offsetsTopicSegmentBytes'>): Record<string, string> {
  return { 'cleanup.policy': 'compact', 'compression.type': 'producer', 'segment.bytes': String(config.offsetsTopicSegmentBytes) };
}

export class GroupCoordinator {
  readonly config: GroupCoordinatorConfig;
  private readonly clock: Clock;
  private readonly log: CoordinatorLogger;
  private readonly ctx: CoordinatorContext;
  readonly classic: ClassicGroupProtocol;
  readonly consumer: ConsumerGroupProtocol;
  readonly offsets: OffsetManager;
  private readonly shards: ShardSet;
  private readonly rebalanceCounts = new Map<string, number>();
  private readonly deletions = new TopicDeletions();
  private readonly txn: TxnCommits;
  /** Opens the shards once __consumer_offsets exists (created here when it may be). */
  private starter: InternalTopicStarter | null = null;

  constructor(private readonly options: GroupCoordinatorOptions) {
    this.config = options.config;
    this.clock = options.clock ?? systemClock;
    this.log = options.logger ?? SILENT_LOGGER;
    this.ctx = {
      config: this.config,
      clock: this.clock,
      log: this.log,
      topics: options.topics,
      events: { rebalance: (groupId) => this.rebalanceCounts.set(groupId, (this.rebalanceCounts.get(groupId) ?? 0) + 1) },
    };
    this.classic = new ClassicGroupProtocol(this.ctx);
    this.consumer = new ConsumerGroupProtocol(this.ctx, createAssignors(this.config.consumerGroupAssignors), {
      onDowngraded: (shard, groupId, rebalance) => this.classic.adoptDowngraded(shard, groupId, rebalance),
    });
    this.offsets = new OffsetManager(this.ctx, this.classic, this.consumer);
    this.shards = new ShardSet({
      clock: this.clock,
      openLog: options.openLog,
      defaultPartitions: this.config.offsetsTopicNumPartitions,
      ...(options.ownership ? { ownership: options.ownership } : {}),
      hooks: {
        onLoaded: (s) => this.onLoaded(s),
        onUnloaded: (s) => this.onUnloaded(s),
        onGroupRemoved: (s, g) => this.onGroupRemoved(s, g),
        onLoadFailed: (s, err) => this.log.error({ partition: s.partition, err }, 'cannot load __consumer_offsets partition; retrying'),
        onBackgroundError: (s, err) => this.log.warn({ partition: s.partition, err }, 'group coordinator background operation failed'),
        onUndecodable: (s, err) => this.log.error({ partition: s.partition, err }, 'skipped a stored __consumer_offsets record that does not decode'),
      },
    });
    this.txn = new TxnCommits({
      shards: this.shards,
      offsets: this.offsets,
      topics: options.topics,
      log: this.log,
      ...(options.txnVerification ? { verifier: options.txnVerification } : {}),
    });
  }

  // ------------------------------------------------------------------------------------------ lifecycle

  get isActive(): boolean {
    return this.shards.isOpen;
  }

  get numPartitions(): number {
    return this.shards.partitionCount;
  }

  /** Whether the KIP-848 protocol is enabled (group.coordinator.rebalance.protocols). */
  get consumerProtocolEnabled(): boolean {
    return this.config.rebalanceProtocols.has('consumer');
  }

  /**
   * Creates __consumer_offsets if it does not exist (a member of a shared cluster: once enough brokers are live,
   * looked at again every second and whenever the topic appears). Its partitions load on first use (see the top
   * of the file).
   */
  async start(): Promise<void> {
    if (this.starter) return;
    const starter = (this.starter = new InternalTopicStarter(GROUP_METADATA_TOPIC_NAME, this.clock, this.log, async () => {
      if (this.shards.isOpen) return true;
      const partitions = await this.ensureOffsetsTopic();
      if (partitions === null) return false;
      if (!this.shards.isOpen) this.shards.open(partitions);
      return true;
    }));
    this.options.topics.addListener?.({
      topicCreated: (t) => {
        if (t.name === GROUP_METADATA_TOPIC_NAME) starter.poke();
        this.onTopicChanged(t.name);
      },
      partitionsAdded: (t) => this.onTopicChanged(t.name),
      topicDeleted: (t) => this.onTopicDeleted(t.name),
    });
    await starter.start();
  }

  /** Looks again now whether __consumer_offsets can be created (the live brokers changed). */
  checkInternalTopic(): void {
    this.starter?.poke();
  }

  /** Resolves once every shard created so far finished its current load attempt. */
  loaded(): Promise<void> {
    return this.shards.loaded();
  }

  /** Creates and loads the shard of every partition this broker owns; resolves with them once their loads are over. */
  loadOwned(): Promise<Shard[]> {
    return this.shards.loadOwned();
  }

  /**
   * The ownership of a __consumer_offsets partition ended (the cluster view released it): its shard closes,
   * answering parked requests NOT_COORDINATOR (Kafka's onResignation unloads the partition).
   */
  released(partition: number): Promise<void> {
    return this.shards.release(partition);
  }

  /** The partitions of __consumer_offsets, created if missing; null while it waits for brokers (internal-topic.ts). */
  private async ensureOffsetsTopic(): Promise<number | null> {
    const existing = this.options.topics.get(GROUP_METADATA_TOPIC_NAME);
    if (existing) return existing.partitions;
    if (!this.options.topics.create) return this.config.offsetsTopicNumPartitions;
    // offsets.topic.replication.factor (on BookKeeper the ensemble of the topic's ledgers): a member waits for
    // that many live brokers, as Kafka does; a broker alone caps it to the live brokers.
    const live = this.options.liveBrokers?.() ?? 1;
    const replicationFactor = internalTopicReplicas(this.config.offsetsTopicReplicationFactor, live, this.options.awaitReplicas === true);
    if (replicationFactor === null) {
      this.starter?.waiting(`${GROUP_METADATA_TOPIC_NAME} is created once offsets.topic.replication.factor brokers are live; group requests answer COORDINATOR_NOT_AVAILABLE until then`, {
        replicationFactor: this.config.offsetsTopicReplicationFactor,
        liveBrokers: live,
      });
      return null;
    }
    try {
      const t = await this.options.topics.create(GROUP_METADATA_TOPIC_NAME, {
        partitions: this.config.offsetsTopicNumPartitions,
        replicationFactor,
        // Kafka's GroupCoordinatorService.groupMetadataTopicConfigs: the log cleaner compacts the topic
        // (storage.ts); time and size retention do not apply to a compact-only topic.
        configs: groupMetadataTopicConfigs(this.config),
        allowInternal: true,
      });
      this.log.info({ partitions: t.partitions }, `created ${GROUP_METADATA_TOPIC_NAME}`);
      return t.partitions;
    } catch (e) {
      const again = this.options.topics.get(GROUP_METADATA_TOPIC_NAME);
      if (again) return again.partitions;
      throw e;
    }
  }

  /** Answers parked requests with NOT_COORDINATOR, stops timers and waits for pending appends. */
  stop(): Promise<void> {
    this.starter?.cancel();
    return this.shards.close();
  }

  partitionFor(groupId: string): number {
    return this.shards.partitionFor(groupId);
  }

  private onLoaded(shard: Shard): void {
    for (const g of shard.groups.values()) {
      if (g instanceof ClassicGroup) this.classic.onLoaded(shard, g);
      else {
        // Topics may have changed while the partition was not loaded.
        g.metadataRefreshNeeded = true;
        this.consumer.onLoaded(shard, g);
      }
    }
    this.dropDeletedTopics(shard);
    this.scheduleExpiration(shard);
    this.log.debug({ partition: shard.partition, groups: shard.groups.size, offsets: shard.offsets.size, ...shard.lastLoad }, 'loaded __consumer_offsets partition');
  }

  private onUnloaded(shard: Shard): void {
    for (const g of shard.groups.values()) if (g instanceof ClassicGroup) this.classic.failParked(g, ErrorCode.NOT_COORDINATOR);
  }

  private onGroupRemoved(shard: Shard, g: Group): void {
    // Only the removed group's own timers: a group of the other type may replace it in the same operation.
    shard.timer.cancelGroup(g.groupId, g instanceof ClassicGroup ? ['heartbeat', 'join', 'sync'] : [...MEMBER_TIMERS]);
    if (!shard.groups.has(g.groupId)) this.rebalanceCounts.delete(g.groupId);
    if (g instanceof ClassicGroup) this.classic.onRemoved(g, ErrorCode.REBALANCE_IN_PROGRESS);
  }

  private scheduleExpiration(shard: Shard): void {
    shard.timer.schedule('expire', null, null, this.config.offsetsRetentionCheckIntervalMs, () => {
      shard.runScheduled(() => {
        const r = this.offsets.expire(shard);
        return { records: r.records, response: undefined };
      });
      this.scheduleExpiration(shard);
    });
  }

  private onTopicChanged(topic: string): void {
    if (!this.shards.isOpen) return;
    for (const s of this.shards.existing()) {
      if (s.status !== 'active') continue;
      for (const g of s.groups.values()) if (g instanceof ConsumerGroup) this.consumer.topicChanged(g, topic);
    }
  }

  /**
   * Kafka's onPartitionsDeleted: every group's offsets of the topic are tombstoned, now in the active shards,
   * and in the others when they load (topic-deletions.ts).
   */
  private onTopicDeleted(topic: string): void {
    if (!this.shards.isOpen) return;
    const topics = new Set([topic]);
    const active = this.shards.existing().filter((s) => s.status === 'active');
    this.deletions.record(topic, active.map((s) => s.partition));
    for (const s of active) {
      for (const g of s.groups.values()) if (g instanceof ConsumerGroup) this.consumer.topicChanged(g, topic);
      s.runScheduled(() => this.offsets.topicsDeleted(s, topics));
    }
  }

  /** At load, before the shard takes a request: offsets of topics deleted meanwhile go (topic-deletions.ts). */
  private dropDeletedTopics(shard: Shard): void {
    const { topics, entries } = this.deletions.staleAtLoad(shard.partition, shard.offsets, this.options.topics);
    // Pending transactional offsets of deleted topics are tombstoned too, so their transaction never commits them.
    const listed = new Set(entries.map((e) => JSON.stringify([e.groupId, e.topic, e.partition])));
    for (const { groupId, topic, partition, offset } of shard.txnOffsets.entries()) {
      const current = this.options.topics.get(topic);
      if (current && !topics.has(topic) && (offset.topicId === undefined || offset.topicId === current.topicId)) continue;
      const id = JSON.stringify([groupId, topic, partition]);
      if (listed.has(id)) continue;
      listed.add(id);
      entries.push({ groupId, topic, partition });
      if (!current) topics.add(topic);
    }
    const offsets = entries.length;
    if (offsets === 0) return;
    this.log.info({ partition: shard.partition, topics: [...new Set(entries.map((e) => e.topic))].slice(0, 10), topicCount: topics.size, offsets }, 'removing committed offsets of deleted topics');
    shard.runScheduled(() => this.offsets.offsetsRemoved(entries));
  }

  /** Runs a read on the group's shard, or throws the refusal. */
  private async readShard<T>(groupId: string, fn: (s: Shard) => T): Promise<T> {
    const s = this.shards.for(groupId);
    if (s.status === 'loading') await this.shards.untilLoaded(s);
    return s.read(() => fn(s));
  }

  // ------------------------------------------------------------------------------------------ classic

  /** JoinGroup (session timeouts checked against group.min/max.session.timeout.ms, as Kafka's service does). */
  async joinGroup(req: JoinGroupRequest, info: RequestInfo, signal?: AbortSignal): Promise<JoinGroupResponse> {
    const fail = (errorCode: number): JoinGroupResponse => createJoinGroupResponse({ memberId: req.memberId, errorCode, protocolName: null });
    if (req.groupId === '' || exceedsInt16String(req.groupId)) return fail(ErrorCode.INVALID_GROUP_ID);
    // Strings kept in the group and written in non-flexible records and responses (string-bounds.ts).
    if (exceedsInt16String(req.groupInstanceId) || exceedsInt16String(req.protocolType) || req.protocols.some((p) => exceedsInt16String(p.name))) {
      return fail(ErrorCode.INVALID_REQUEST);
    }
    if (req.sessionTimeoutMs < this.config.classicGroupMinSessionTimeoutMs || req.sessionTimeoutMs > this.config.classicGroupMaxSessionTimeoutMs) {
      return fail(ErrorCode.INVALID_SESSION_TIMEOUT);
    }
    let shard: Shard;
    let handle;
    try {
      shard = this.shards.for(req.groupId);
      if (shard.status === 'loading') await this.shards.untilLoaded(shard);
      const s = shard;
      handle = await s.write((): OpResult<JoinHandle> => {
        const g = s.groups.get(req.groupId);
        // A classic member joining a KIP-848 group that has members (online migration).
        if (g instanceof ConsumerGroup && !g.isEmpty) {
          const r = this.consumer.classicJoin(s, req, info);
          return { ...r, response: { response: Promise.resolve(r.response), parkedMemberId: null } };
        }
        return this.classic.join(s, req, info);
      });
    } catch (e) {
      return fail(this.logged(e, 'JoinGroup'));
    }
    const parked = handle.parkedMemberId;
    if (!signal || parked === null) return handle.response;
    if (signal.aborted) {
      shard.runScheduled(() => this.classic.joinAbandoned(shard, req.groupId, parked));
      return handle.response;
    }
    const onAbort = (): void => shard.runScheduled(() => this.classic.joinAbandoned(shard, req.groupId, parked));
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      return await handle.response;
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  async syncGroup(req: SyncGroupRequest): Promise<SyncGroupResponse> {
    if (req.groupId === '') return createSyncGroupResponse({ errorCode: ErrorCode.INVALID_GROUP_ID });
    try {
      const s = this.shards.for(req.groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      const response = await s.write((): OpResult<Promise<SyncGroupResponse>> => {
        if (!(s.groups.get(req.groupId) instanceof ConsumerGroup)) return this.classic.sync(s, req);
        const r = this.consumer.classicSync(s, req);
        return { ...r, response: Promise.resolve(r.response) };
      });
      return await response;
    } catch (e) {
      return createSyncGroupResponse({ errorCode: this.logged(e, 'SyncGroup') });
    }
  }

  async heartbeat(req: HeartbeatRequest): Promise<HeartbeatResponse> {
    if (req.groupId === '') return createHeartbeatResponse({ errorCode: ErrorCode.INVALID_GROUP_ID });
    try {
      const s = this.shards.for(req.groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      return await s.write(() => (s.groups.get(req.groupId) instanceof ConsumerGroup ? this.consumer.classicHeartbeat(s, req) : this.classic.heartbeat(s, req)));
    } catch (e) {
      const code = this.logged(e, 'Heartbeat');
      // Kafka: a heartbeat to a group still loading is answered as if it succeeded.
      return createHeartbeatResponse({ errorCode: code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS ? ErrorCode.NONE : code });
    }
  }

  /** LeaveGroup in its v3+ form: one response per member. */
  async leaveGroup(groupId: string, members: readonly LeaveGroupRequestMemberIdentity[]): Promise<LeaveGroupResponse> {
    if (groupId === '') return createLeaveGroupResponse({ errorCode: ErrorCode.INVALID_GROUP_ID });
    try {
      const s = this.shards.for(groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      return await s.write(() => (s.groups.get(groupId) instanceof ConsumerGroup ? this.consumer.classicLeave(s, groupId, members) : this.classic.leave(s, groupId, members)));
    } catch (e) {
      const code = this.logged(e, 'LeaveGroup');
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
        return createLeaveGroupResponse({
          members: members.map((m) => createLeaveGroupResponseMemberResponse({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: code })),
        });
      }
      return createLeaveGroupResponse({ errorCode: code });
    }
  }

  // ------------------------------------------------------------------------------------------ offsets

  /** OffsetCommit: unknown topics and partitions are answered UNKNOWN_TOPIC_OR_PARTITION, the rest committed. */
  async commitOffsets(req: OffsetCommitRequest, apiVersion: number): Promise<OffsetCommitResponse> {
    const unknown: OffsetCommitResponseTopic[] = [];
    const known: OffsetCommitRequestTopic[] = [];
    for (const t of req.topics) {
      const topic = this.options.topics.get(t.name);
      const bad = t.partitions.filter((p) => !topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions);
      const good = t.partitions.filter((p) => !bad.includes(p));
      if (bad.length > 0) {
        unknown.push(
          createOffsetCommitResponseTopic({
            name: t.name,
            partitions: bad.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })),
          }),
        );
      }
      if (good.length > 0) known.push({ ...t, partitions: good });
    }
    if (known.length === 0) return createOffsetCommitResponse({ topics: unknown });
    if (exceedsInt16String(req.groupId)) {
      // OffsetCommitKey is non-flexible: such a group could not be stored (string-bounds.ts).
      return createOffsetCommitResponse({
        topics: [
          ...unknown,
          ...known.map((t) =>
            createOffsetCommitResponseTopic({ name: t.name, partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.INVALID_GROUP_ID })) }),
          ),
        ],
      });
    }
    try {
      const s = this.shards.for(req.groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      const topics = await s.write(() => this.offsets.commit(s, { ...req, topics: known }, apiVersion));
      return createOffsetCommitResponse({ topics: mergeTopics([...topics, ...unknown]) });
    } catch (e) {
      const code = this.logged(e, 'OffsetCommit');
      const errored = known.map((t) =>
        createOffsetCommitResponseTopic({ name: t.name, partitions: t.partitions.map((p) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: code })) }),
      );
      return createOffsetCommitResponse({ topics: mergeTopics([...errored, ...unknown]) });
    }
  }

  /**
   * OffsetFetch for one group. Reads wait for the writes accepted before them; with `requireStable` (v7+), a
   * partition with a pending transactional offset answers UNSTABLE_OFFSET_COMMIT (offset-manager.ts).
   */
  async fetchOffsets(group: OffsetFetchRequestGroup, requireStable = false): Promise<OffsetFetchResponseGroup> {
    try {
      return await this.readShard(group.groupId, (s) => this.offsets.fetch(s, group, requireStable));
    } catch (e) {
      return createOffsetFetchResponseGroup({ groupId: group.groupId, errorCode: this.logged(e, 'OffsetFetch') });
    }
  }

  /** TxnOffsetCommit (KIP-98, KIP-447): the offsets stay pending until the transaction's marker (txn-commits.ts). */
  txnOffsetCommit(req: TxnOffsetCommitRequest, apiVersion: number): Promise<TxnOffsetCommitResponse> {
    return this.txn.commit(req, apiVersion);
  }

  /**
   * A transaction marker for __consumer_offsets-<offsetsPartition> (Kafka's completeTransaction, the
   * GroupTxnCompletion of src/cluster/txn-markers.ts): written after the partition's queued writes; the
   * producer's pending offsets there are committed or dropped. An error code.
   */
  completeTransaction(offsetsPartition: number, producerId: bigint, producerEpoch: number, coordinatorEpoch: number, commit: boolean): Promise<number> {
    return this.txn.complete(offsetsPartition, producerId, producerEpoch, coordinatorEpoch, commit);
  }

  /** OffsetDelete: unknown topics/partitions answered per partition; group errors at the top level. */
  async deleteOffsets(groupId: string, topics: readonly OffsetDeleteRequestTopic[]): Promise<OffsetDeleteResponse> {
    if (groupId === '') return createOffsetDeleteResponse({ errorCode: ErrorCode.INVALID_GROUP_ID });
    const unknown = createOffsetDeleteResponse();
    const known: OffsetDeleteRequestTopic[] = [];
    for (const t of topics) {
      const topic = this.options.topics.get(t.name);
      const bad = t.partitions.filter((p) => !topic || p.partitionIndex < 0 || p.partitionIndex >= topic.partitions);
      const good = t.partitions.filter((p) => !bad.includes(p));
      if (bad.length > 0) {
        unknown.topics.push(
          createOffsetDeleteResponseTopic({
            name: t.name,
            partitions: bad.map((p) => createOffsetDeleteResponsePartition({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION })),
          }),
        );
      }
      if (good.length > 0) known.push({ ...t, partitions: good });
    }
    try {
      const s = this.shards.for(groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      const response = await s.write(() => this.offsets.deleteOffsets(s, groupId, known));
      response.topics.push(...unknown.topics);
      return response;
    } catch (e) {
      return createOffsetDeleteResponse({ errorCode: this.logged(e, 'OffsetDelete') });
    }
  }

  // ------------------------------------------------------------------------------------------ admin

  /**
   * DescribeGroups. A group that does not exist, or is not a classic group, is reported Dead; from v6 on also
   * with GROUP_ID_NOT_FOUND and a message (KIP-1043), as Kafka does.
   */
  /**
   * DescribeGroups. A group named more than once is described once: Kafka answers it as often as it is named,
   * which lets a 130 KB request of 10,000 copies of one group id ask for 10,000 copies of every member's
   * metadata and assignment (gigabytes for a large group). Clients key the answer by group id.
   */
  async describeGroups(groupIds: readonly string[], version: number): Promise<DescribeGroupsResponseDescribedGroup[]> {
    return Promise.all(
      [...new Set(groupIds)].map(async (groupId) => {
        try {
          return await this.readShard(groupId, (s) => describeClassicGroup(groupId, s.groups.get(groupId), version));
        } catch (e) {
          return createDescribeGroupsResponseDescribedGroup({ groupId, errorCode: this.logged(e, 'DescribeGroups') });
        }
      }),
    );
  }

  /**
   * ListGroups over every partition. `statesFilter` (v4+) matches states case-insensitively, `typesFilter`
   * (v5+) group types ("classic", "consumer").
   */
  async listGroups(statesFilter: readonly string[], typesFilter: readonly string[]): Promise<{ errorCode: number; groups: ListGroupsResponseListedGroup[] }> {
    if (!this.shards.isOpen) return { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, groups: [] };
    const states = new Set(statesFilter.map((s) => s.trim().toLowerCase()));
    const types = new Set(typesFilter.map((t) => t.trim().toLowerCase()));
    const groups: ListGroupsResponseListedGroup[] = [];
    try {
      // Every partition this broker owns: the shards not used yet load now.
      for (const s of await this.loadOwned()) {
        const listed = await s.read(() =>
          [...s.groups.values()]
            .map((g) => listedGroup(g))
            .filter((g) => (states.size === 0 || states.has(g.groupState.toLowerCase())) && (types.size === 0 || types.has(g.groupType))),
        );
        groups.push(...listed);
      }
    } catch (e) {
      return { errorCode: this.logged(e, 'ListGroups'), groups: [] };
    }
    return { errorCode: ErrorCode.NONE, groups };
  }

  async deleteGroups(groupIds: readonly string[]): Promise<DeleteGroupsResponseDeletableGroupResult[]> {
    const unique = [...new Set(groupIds)];
    return Promise.all(
      unique.map(async (groupId) => {
        try {
          if (groupId === '') throw new GroupApiError(ErrorCode.INVALID_GROUP_ID);
          const s = this.shards.for(groupId);
          if (s.status === 'loading') await this.shards.untilLoaded(s);
          await s.write(() => {
            const records = this.offsets.deleteGroupRecords(s, groupId);
            const g = s.groups.get(groupId);
            if (g instanceof ClassicGroup && !g.is(ClassicGroupState.DEAD)) this.classic.markDead(g);
            return { records, response: undefined };
          });
          this.log.info({ groupId }, 'deleted group');
          return createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: ErrorCode.NONE });
        } catch (e) {
          return createDeleteGroupsResponseDeletableGroupResult({ groupId, errorCode: this.logged(e, 'DeleteGroups') });
        }
      }),
    );
  }

  // ------------------------------------------------------------------------------------------ KIP-848

  async consumerGroupHeartbeat(input: ConsumerHeartbeatInput, info: RequestInfo): Promise<ConsumerGroupHeartbeatResponse> {
    if (!this.consumerProtocolEnabled) {
      return createConsumerGroupHeartbeatResponse({ errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: 'The new consumer group protocol is not enabled.' });
    }
    try {
      const s = this.shards.for(input.groupId);
      if (s.status === 'loading') await this.shards.untilLoaded(s);
      return await s.write(() => this.consumer.heartbeat(s, input, info));
    } catch (e) {
      return createConsumerGroupHeartbeatResponse({ errorCode: this.logged(e, 'ConsumerGroupHeartbeat'), errorMessage: errorMessageOf(e) });
    }
  }

  /** ConsumerGroupDescribe; a group named more than once is described once, as in describeGroups. */
  async consumerGroupDescribe(groupIds: readonly string[]): Promise<ConsumerGroupDescribeResponseDescribedGroup[]> {
    return Promise.all(
      [...new Set(groupIds)].map(async (groupId) => {
        try {
          if (groupId === '') throw new GroupApiError(ErrorCode.INVALID_GROUP_ID);
          return await this.readShard(groupId, (s) => {
            const g = s.groups.get(groupId);
            if (!(g instanceof ConsumerGroup)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`);
            return describeConsumerGroup(g, this.options.topics, this.consumer.defaultAssignor);
          });
        } catch (e) {
          return createConsumerGroupDescribeResponseDescribedGroup({ groupId, errorCode: this.logged(e, 'ConsumerGroupDescribe'), errorMessage: errorMessageOf(e) });
        }
      }),
    );
  }

  // ------------------------------------------------------------------------------------------ views

  /** Every loaded group, for metrics and tools. */
  *groupSummaries(): Generator<GroupSummary> {
    for (const s of this.shards.existing()) {
      if (s.status !== 'active') continue;
      for (const g of s.groups.values()) {
        const offsets = new Map<string, Map<number, bigint>>();
        for (const [topic, byPartition] of s.offsets.forGroup(g.groupId) ?? []) offsets.set(topic, new Map([...byPartition].map(([p, o]) => [p, o.committedOffset])));
        yield g instanceof ClassicGroup
          ? { groupId: g.groupId, type: 'classic', state: g.state, protocolType: g.protocolType ?? '', members: g.numMembers, offsets }
          : { groupId: g.groupId, type: 'consumer', state: g.state, protocolType: CONSUMER_PROTOCOL_TYPE, members: g.members.size, offsets };
      }
    }
  }

  /** Rebalances since start: classic generations completed and KIP-848 group epoch bumps, per group. */
  rebalances(groupId: string): number {
    return this.rebalanceCounts.get(groupId) ?? 0;
  }

  /** The shards of the partitions, with their load status and the groups and offsets they hold. */
  partitionStatus(): Array<{ partition: number; status: string; groups: number; offsets: number }> {
    return this.shards.existing().map((s) => ({ partition: s.partition, status: s.status, groups: s.groups.size, offsets: s.offsets.size }));
  }

  /** The shard of a partition (created if need be), for tests and tools. */
  shard(partition: number): Shard {
    return this.shards.of(partition);
  }

  /** The error code for a failure; unexpected failures are logged. */
  private logged(err: unknown, api: string): number {
    const code = errorCodeOf(err);
    if (!(err instanceof GroupApiError)) this.log.error({ err, api }, 'group coordinator operation failed');
    return code;
  }
}

function mergeTopics(topics: OffsetCommitResponseTopic[]): OffsetCommitResponseTopic[] {
  const byName = new Map<string, OffsetCommitResponseTopic>();
  for (const t of topics) {
    const existing = byName.get(t.name);
    if (existing) existing.partitions.push(...t.partitions);
    else byName.set(t.name, t);
  }
  return [...byName.values()];
}


