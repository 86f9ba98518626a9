/**
 * Committed offsets: OffsetCommit, OffsetFetch, OffsetDelete, DeleteGroups' offset removal and the retention of
 * offsets (Kafka's OffsetMetadataManager). Offsets live per __consumer_offsets partition (offsets.ts) and change
 * only through OffsetCommit records and their tombstones.
 *
 * Retention (offsets.retention.minutes, checked every offsets.retention.check.interval.ms), as Kafka's
 * OffsetExpirationCondition: offsets of topics the group no longer subscribes to expire `retention` after
 * - the time the group became Empty, for an empty classic group;
 * - their commit, for a simple group (offsets committed without membership), a Stable consumer-protocol classic
 *   group, or a KIP-848 group;
 * and never otherwise (a rebalancing group keeps them). An explicit retention time given with OffsetCommit v2-4
 * overrides this. A group that is empty and whose offsets all expired is deleted.
 */
import type { StaleOffset } from './topic-deletions.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  createOffsetCommitResponsePartition,
  createOffsetCommitResponseTopic,
  type OffsetCommitRequest,
  type OffsetCommitResponseTopic,
} from '../../protocol/messages/008-offset-commit.gen.js';
import {
  createOffsetFetchResponseGroup,
  createOffsetFetchResponsePartitions,
  createOffsetFetchResponseTopics,
  type OffsetFetchRequestGroup,
  type OffsetFetchResponseGroup,
  type OffsetFetchResponseTopics,
} from '../../protocol/messages/009-offset-fetch.gen.js';
import {
  createTxnOffsetCommitResponsePartition,
  createTxnOffsetCommitResponseTopic,
  type TxnOffsetCommitRequest,
  type TxnOffsetCommitResponseTopic,
} from '../../protocol/messages/028-txn-offset-commit.gen.js';
import {
  createOffsetDeleteResponse,
  createOffsetDeleteResponsePartition,
  createOffsetDeleteResponseTopic,
  type OffsetDeleteRequestTopic,
  type OffsetDeleteResponse,
} from '../../protocol/messages/047-offset-delete.gen.js';
import { ClassicGroup, ClassicGroupState } from './classic-group.js';
import type { ClassicGroupProtocol } from './classic-protocol.js';
import { ConsumerGroup, usesClassicProtocol } from './consumer-group.js';
import type { ConsumerGroupProtocol } from './consumer-protocol.js';
import type { CoordinatorContext } from './context.js';
import { GroupApiError } from './errors.js';
import { consumerGroupTombstones, groupMetadataTombstone, newSimpleGroup, offsetCommitRecord, offsetCommitTombstone, type Group } from './group-records.js';
import { expireTimestampMs as expireTimestampMsOf, isOffsetExpired, type OffsetAndMetadata } from './offsets.js';
import type { CoordinatorRecord } from './records.js';
import type { OpResult, Shard } from './shard.js';

/** OffsetFetch's "no offset" values (Kafka's OffsetFetchResponse.INVALID_OFFSET, NO_METADATA). */
export const INVALID_OFFSET = -1n;

/** What OffsetCommit and TxnOffsetCommit carry for one partition. */
interface CommittedPartition {
  readonly partitionIndex: number;
  readonly committedOffset: bigint;
  readonly committedLeaderEpoch: number;
  readonly committedMetadata: string | null;
}

export class OffsetManager {
  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly classic: ClassicGroupProtocol,
    private readonly consumer: ConsumerGroupProtocol,
  ) {}

  // ------------------------------------------------------------------------------------------ commit

  /** Kafka's validateOffsetCommit for both group types; returns the group (created as a simple group when allowed). */
  private validateCommit(shard: Shard, req: OffsetCommitRequest, apiVersion: number): Group {
    const groupId = req.groupId;
    let group = shard.groups.get(groupId);
    const generation = req.generationIdOrMemberEpoch;
    if (!group) {
      if (generation < 0) {
        // A commit without group management creates a "simple" group (no protocol, no members).
        this.ctx.log.info({ groupId }, 'creating a simple consumer group via manual offset commit');
        group = newSimpleGroup(groupId, this.ctx.clock.now());
        shard.groups.set(groupId, group);
        return group;
      }
      // OffsetCommit v9+ says so; older versions get ILLEGAL_GENERATION, as Kafka answers them.
      throw new GroupApiError(apiVersion >= 9 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION, undefined, { groupId });
    }
    if (group instanceof ClassicGroup) {
      if (group.is(ClassicGroupState.DEAD)) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, undefined, { groupId });
      if (generation < 0 && group.isEmpty) return group;
      if (generation >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
        if (req.groupInstanceId !== null) {
          const existing = group.staticMemberId(req.groupInstanceId);
          if (existing === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId });
          if (existing !== req.memberId) throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, undefined, { groupId, memberId: req.memberId });
        }
        if (!group.hasMember(req.memberId)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId, memberId: req.memberId });
        if (generation !== group.generationId) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, undefined, { groupId, memberId: req.memberId });
      } else if (!group.isEmpty) {
        // No member id nor generation: only an empty group takes the commit.
        throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId });
      }
      // The member has the new generation from its JoinGroup response but the group awaits the assignment.
      if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) throw new GroupApiError(ErrorCode.REBALANCE_IN_PROGRESS, undefined, { groupId });
      return group;
    }
    // KIP-848 group.
    if (generation < 0 && group.isEmpty) return group;
    const member = group.members.get(req.memberId);
    if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${groupId}.`, { groupId, memberId: req.memberId });
    if (usesClassicProtocol(member)) {
      // A classic member of a KIP-848 group (online migration) commits with its generation, the member epoch.
      if (generation !== member.memberEpoch) {
        throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, `The received generation id ${generation} does not match the expected member epoch ${member.memberEpoch}.`, {
          groupId,
          memberId: req.memberId,
        });
      }
      return group;
    }
    if (apiVersion < 9) throw new GroupApiError(ErrorCode.UNSUPPORTED_VERSION, 'OffsetCommit version 9 or above must be used by members using the modern group protocol');
    if (generation !== member.memberEpoch) {
      throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${generation} does not match the expected member epoch ${member.memberEpoch}.`, {
        groupId,
        memberId: req.memberId,
      });
    }
    return group;
  }

  /**
   * Kafka's commitOffset, over topics already checked to exist (the caller answers the others with
   * UNKNOWN_TOPIC_OR_PARTITION).
   */
  commit(shard: Shard, req: OffsetCommitRequest, apiVersion: number): OpResult<OffsetCommitResponseTopic[]> {
    const group = this.validateCommit(shard, req, apiVersion);
    if (group instanceof ClassicGroup) this.classic.commitKeepsAlive(shard, group, req.memberId);
    const now = this.ctx.clock.now();
    // OffsetCommit v2-4 may override the retention; -1 (v5+: always) means the broker's. Saturated at
    // Long.MAX_VALUE (offsets.ts).
    const expireTimestampMs = req.retentionTimeMs === -1n ? null : expireTimestampMsOf(now, req.retentionTimeMs);
    const { records, errors } = this.offsetRecords(req.groupId, req.topics, (p) => (p.commitTimestamp === -1n ? now : Number(p.commitTimestamp)), expireTimestampMs);
    const topics = req.topics.map((t, i) =>
      createOffsetCommitResponseTopic({
        name: t.name,
        partitions: t.partitions.map((p, j) => createOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: errors[i]![j]! })),
      }),
    );
    return { records, response: topics };
  }

  /**
   * The OffsetCommit records of committing `topics` for `groupId` (Kafka's commitOffset and
   * commitTransactionalOffset alike): one per partition whose metadata fits offset.metadata.max.bytes, and each
   * partition's error code in request order (OFFSET_METADATA_TOO_LARGE for the others).
   */
  private offsetRecords<P extends CommittedPartition>(
    groupId: string,
    topics: ReadonlyArray<{ readonly name: string; readonly partitions: readonly P[] }>,
    commitTimestampMs: (p: P) => number,
    expireTimestampMs: number | null,
  ): { records: CoordinatorRecord[]; errors: number[][] } {
    const maxMetadata = this.ctx.config.offsetMetadataMaxBytes;
    const records: CoordinatorRecord[] = [];
    const errors = topics.map((t) => {
      const topicId = this.ctx.topics.get(t.name)?.topicId;
      return t.partitions.map((p) => {
        if (p.committedMetadata !== null && p.committedMetadata.length > maxMetadata) return ErrorCode.OFFSET_METADATA_TOO_LARGE;
        const offset: OffsetAndMetadata = {
          committedOffset: p.committedOffset,
          leaderEpoch: p.committedLeaderEpoch,
          metadata: p.committedMetadata ?? '',
          commitTimestampMs: commitTimestampMs(p),
          expireTimestampMs,
          // Kafka 4.x records the topic id with the offset, so a topic deleted and created again under the same
          // name never inherits it (topic-deletions.ts).
          ...(topicId === undefined ? {} : { topicId }),
        };
        records.push(offsetCommitRecord(groupId, t.name, p.partitionIndex, offset));
        return ErrorCode.NONE;
      });
    });
    return { records, errors };
  }

  // ------------------------------------------------------------------------------------------ transactional commit

  /**
   * Kafka's validateTransactionalOffsetCommit: a group that does not exist is created as a simple group when the
   * request carries no generation (TxnOffsetCommit v0-2, or a producer outside group management), else
   * ILLEGAL_GENERATION (v6+: GROUP_ID_NOT_FOUND, KIP-1319); then the group's validateOffsetCommit with
   * isTransactional set: no REBALANCE_IN_PROGRESS, and no UNKNOWN_MEMBER_ID for a request without member and
   * generation to a non-empty classic group. A stale member epoch is ILLEGAL_GENERATION (STALE_MEMBER_EPOCH
   * from v6).
   */
  private validateTxnCommit(shard: Shard, req: TxnOffsetCommitRequest, apiVersion: number): Group {
    const groupId = req.groupId;
    const generation = req.generationIdOrMemberEpoch;
    const group = shard.groups.get(groupId);
    if (!group) {
      if (generation >= 0) throw new GroupApiError(apiVersion >= 6 ? ErrorCode.GROUP_ID_NOT_FOUND : ErrorCode.ILLEGAL_GENERATION, undefined, { groupId });
      // The simple group comes into being when the offsets' records are replayed, so a write refused before
      // that (a fenced producer, a batch too large) leaves no group behind.
      this.ctx.log.info({ groupId }, 'creating a simple consumer group via transactional offset commit');
      return newSimpleGroup(groupId, this.ctx.clock.now());
    }
    if (group instanceof ClassicGroup) {
      if (group.is(ClassicGroupState.DEAD)) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, undefined, { groupId });
      if (generation < 0 && group.isEmpty) return group;
      if (generation >= 0 || req.memberId !== '' || req.groupInstanceId !== null) {
        if (req.groupInstanceId !== null) {
          const existing = group.staticMemberId(req.groupInstanceId);
          if (existing === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId });
          if (existing !== req.memberId) throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, undefined, { groupId, memberId: req.memberId });
        }
        if (!group.hasMember(req.memberId)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId, memberId: req.memberId });
        if (generation !== group.generationId) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, undefined, { groupId, memberId: req.memberId });
      }
      return group;
    }
    if (generation < 0 && group.isEmpty) return group;
    const member = group.members.get(req.memberId);
    if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${groupId}.`, { groupId, memberId: req.memberId });
    if (generation !== member.memberEpoch) {
      const stale = apiVersion >= 6 && !usesClassicProtocol(member);
      throw new GroupApiError(stale ? ErrorCode.STALE_MEMBER_EPOCH : ErrorCode.ILLEGAL_GENERATION, `The received member epoch ${generation} does not match the expected member epoch ${member.memberEpoch}.`, {
        groupId,
        memberId: req.memberId,
      });
    }
    return group;
  }

  /**
   * Kafka's commitTransactionalOffset, over topics already checked to exist: the records form one transactional
   * batch of the producer, and stay pending until its transaction's marker (txn-offsets.ts).
   */
  txnCommit(shard: Shard, req: TxnOffsetCommitRequest, apiVersion: number): OpResult<TxnOffsetCommitResponseTopic[]> {
    shard.checkProducerEpoch(req.producerId, req.producerEpoch);
    this.validateTxnCommit(shard, req, apiVersion);
    const now = this.ctx.clock.now();
    const { records, errors } = this.offsetRecords(req.groupId, req.topics, () => now, null);
    const topics = req.topics.map((t, i) =>
      createTxnOffsetCommitResponseTopic({
        name: t.name,
        topicId: t.topicId,
        partitions: t.partitions.map((p, j) => createTxnOffsetCommitResponsePartition({ partitionIndex: p.partitionIndex, errorCode: errors[i]![j]! })),
      }),
    );
    return { records, response: topics, transactional: { producerId: req.producerId, producerEpoch: req.producerEpoch } };
  }

  // ------------------------------------------------------------------------------------------ fetch

  /** Kafka's validateOffsetFetch: false when the group does not exist (every partition then has no offset). */
  private validateFetch(shard: Shard, req: OffsetFetchRequestGroup): boolean {
    const group = shard.groups.get(req.groupId);
    if (!group) return false;
    if (group instanceof ClassicGroup) return !group.is(ClassicGroupState.DEAD);
    if (req.memberId === null && req.memberEpoch < 0) return true;
    const member = req.memberId === null ? undefined : group.members.get(req.memberId);
    if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${req.groupId}.`);
    if (req.memberEpoch !== member.memberEpoch) {
      throw new GroupApiError(ErrorCode.STALE_MEMBER_EPOCH, `The received member epoch ${req.memberEpoch} does not match the expected member epoch ${member.memberEpoch}.`);
    }
    return true;
  }

  /**
   * Kafka's fetchOffsets / fetchAllOffsets (topics null: every committed offset of the group). With
   * `requireStable` (OffsetFetch v7+, KIP-447), a partition with a pending transactional offset answers
   * UNSTABLE_OFFSET_COMMIT and no offset; the consumer retries until the transaction completes.
   */
  fetch(shard: Shard, req: OffsetFetchRequestGroup, requireStable = false): OffsetFetchResponseGroup {
    let exists: boolean;
    try {
      exists = this.validateFetch(shard, req);
    } catch (e) {
      if (!(e instanceof GroupApiError)) throw e;
      return createOffsetFetchResponseGroup({ groupId: req.groupId, errorCode: e.errorCode });
    }
    const offsets = exists ? shard.offsets.forGroup(req.groupId) : undefined;
    const topics: OffsetFetchResponseTopics[] = [];
    const unstable = (topic: string, index: number): boolean => requireStable && exists && shard.txnOffsets.hasPending(req.groupId, topic, index);
    const partition = (topic: string, index: number, found: OffsetAndMetadata | undefined) => {
      const pending = unstable(topic, index);
      const o = pending ? undefined : found;
      return createOffsetFetchResponsePartitions({
        partitionIndex: index,
        committedOffset: o ? o.committedOffset : INVALID_OFFSET,
        committedLeaderEpoch: o ? o.leaderEpoch : -1,
        metadata: o ? o.metadata : '',
        errorCode: pending ? ErrorCode.UNSTABLE_OFFSET_COMMIT : ErrorCode.NONE,
      });
    };
    if (req.topics === null) {
      if (offsets) {
        for (const [topic, byPartition] of offsets) {
          topics.push(createOffsetFetchResponseTopics({ name: topic, partitions: [...byPartition].sort((a, b) => a[0] - b[0]).map(([p, o]) => partition(topic, p, o)) }));
        }
      }
    } else {
      for (const t of req.topics) {
        const byPartition = offsets?.get(t.name);
        topics.push(createOffsetFetchResponseTopics({ name: t.name, partitions: t.partitionIndexes.map((p) => partition(t.name, p, byPartition?.get(p))) }));
      }
    }
    return createOffsetFetchResponseGroup({ groupId: req.groupId, topics });
  }

  // ------------------------------------------------------------------------------------------ delete

  /** Kafka's deleteOffsets (OffsetDelete), over topics already checked to exist. */
  deleteOffsets(shard: Shard, groupId: string, topics: readonly OffsetDeleteRequestTopic[]): OpResult<OffsetDeleteResponse> {
    const group = shard.groups.get(groupId);
    if (!group) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} not found.`, { groupId });
    if (group instanceof ClassicGroup) {
      if (group.is(ClassicGroupState.DEAD)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is in dead state.`, { groupId });
      if (!group.isEmpty && !group.usesConsumerProtocol()) throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP, undefined, { groupId });
    }
    const records: CoordinatorRecord[] = [];
    const response = createOffsetDeleteResponse();
    for (const t of topics) {
      const subscribed = this.isSubscribedToTopic(group, t.name);
      const rt = createOffsetDeleteResponseTopic({ name: t.name });
      response.topics.push(rt);
      for (const p of t.partitions) {
        rt.partitions.push(createOffsetDeleteResponsePartition({ partitionIndex: p.partitionIndex, errorCode: subscribed ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE }));
        // A pending transactional offset is tombstoned too (Kafka's deleteOffsets).
        if (!subscribed && (shard.offsets.has(groupId, t.name, p.partitionIndex) || shard.txnOffsets.hasPending(groupId, t.name, p.partitionIndex))) {
          records.push(offsetCommitTombstone(groupId, t.name, p.partitionIndex));
        }
      }
    }
    return { records, response };
  }

  isSubscribedToTopic(group: Group, topic: string): boolean {
    return group instanceof ClassicGroup ? group.isSubscribedToTopic(topic) : this.consumer.isSubscribedToTopic(group, topic);
  }

  /** DeleteGroups for one group: the error code, or the tombstones of its offsets and its metadata. */
  deleteGroupRecords(shard: Shard, groupId: string): CoordinatorRecord[] {
    const group = shard.groups.get(groupId);
    if (!group) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, undefined, { groupId });
    if (group instanceof ClassicGroup) {
      if (group.is(ClassicGroupState.DEAD)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, undefined, { groupId });
      if (!group.isEmpty) throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP, undefined, { groupId });
    } else if (!group.isEmpty) {
      throw new GroupApiError(ErrorCode.NON_EMPTY_GROUP, undefined, { groupId });
    }
    const records: CoordinatorRecord[] = [];
    const offsets = shard.offsets.forGroup(groupId);
    if (offsets) for (const [topic, byPartition] of offsets) for (const p of byPartition.keys()) records.push(offsetCommitTombstone(groupId, topic, p));
    // Kafka's deleteAllOffsets: pending transactional offsets too, one tombstone per partition.
    for (const { topic, partition } of shard.txnOffsets.pendingPartitions(groupId)) {
      if (!shard.offsets.has(groupId, topic, partition)) records.push(offsetCommitTombstone(groupId, topic, partition));
    }
    if (group instanceof ClassicGroup) records.push(groupMetadataTombstone(groupId));
    else records.push(...consumerGroupTombstones(group));
    return records;
  }

  // ------------------------------------------------------------------------------------------ retention

  /** The time an offset's retention counts from, or null when the group's offsets do not expire now. */
  private expirationBase(group: Group): ((o: OffsetAndMetadata) => number) | null {
    if (group instanceof ConsumerGroup) return (o) => o.commitTimestampMs;
    if (group.isSimpleGroup) return (o) => o.commitTimestampMs;
    if (group.isEmpty) {
      const since = group.currentStateTimestampMs;
      return (o) => since ?? o.commitTimestampMs;
    }
    if (group.usesConsumerProtocol() && group.subscribedTopics !== null && group.is(ClassicGroupState.STABLE)) return (o) => o.commitTimestampMs;
    return null;
  }

  /** Kafka's cleanupGroupMetadata for one partition: tombstones for expired offsets and for groups left with nothing. */
  expire(shard: Shard): OpResult<number> {
    const now = this.ctx.clock.now();
    const retention = this.ctx.config.offsetsRetentionMs;
    const records: CoordinatorRecord[] = [];
    let expired = 0;
    for (const [groupId, group] of shard.groups) {
      let allExpired = true;
      const offsets = shard.offsets.forGroup(groupId);
      if (offsets) {
        const base = this.expirationBase(group);
        if (base === null) continue;
        for (const [topic, byPartition] of offsets) {
          if (this.isSubscribedToTopic(group, topic)) {
            allExpired = false;
            continue;
          }
          for (const [p, o] of byPartition) {
            // Kafka keeps an offset a pending transactional offset of its partition may replace.
            if (isOffsetExpired(o, base(o), now, retention) && !shard.txnOffsets.hasPending(groupId, topic, p)) {
              records.push(offsetCommitTombstone(groupId, topic, p));
              expired++;
            } else {
              allExpired = false;
            }
          }
        }
      }
      // A group with an open transaction is never removed (Kafka's cleanupExpiredOffsets).
      if (allExpired && group.isEmpty && !shard.txnOffsets.hasOpenTransactions(groupId)) {
        if (group instanceof ClassicGroup) records.push(groupMetadataTombstone(groupId));
        else records.push(...consumerGroupTombstones(group));
      }
    }
    if (expired > 0) this.ctx.log.info({ partition: shard.partition, expired }, 'removed expired offsets');
    return { records, response: expired };
  }

  /** Offsets of deleted topics are removed from every group (Kafka's onPartitionsDeleted). */
  /** Tombstones for these offsets (topic-deletions.ts: offsets of deleted topics found at load). */
  offsetsRemoved(entries: readonly StaleOffset[]): OpResult<void> {
    return { records: entries.map(({ groupId, topic, partition }) => offsetCommitTombstone(groupId, topic, partition)), response: undefined };
  }

  topicsDeleted(shard: Shard, topics: ReadonlySet<string>): OpResult<void> {
    const records: CoordinatorRecord[] = [];
    const seen = new Set<string>();
    for (const { groupId, topic, partition } of shard.offsets.forTopics(topics)) {
      seen.add(JSON.stringify([groupId, topic, partition]));
      records.push(offsetCommitTombstone(groupId, topic, partition));
    }
    // Kafka's onPartitionsDeleted tombstones pending transactional offsets too: they are dropped, never committed.
    for (const { groupId, topic, partition } of shard.txnOffsets.forTopics(topics)) {
      if (!seen.has(JSON.stringify([groupId, topic, partition]))) records.push(offsetCommitTombstone(groupId, topic, partition));
    }
    return { records, response: undefined };
  }
}
