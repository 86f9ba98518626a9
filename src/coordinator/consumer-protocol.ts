/**
 * The KIP-848 consumer protocol: ConsumerGroupHeartbeat against consumer groups, computed as Kafka's
 * GroupMetadataManager.consumerGroupHeartbeat does it, in three steps per heartbeat:
 *
 * ```
 *   1. member    create or update the member; a changed subscription (names or regex), a joining or leaving
 *                member, or a change of the subscribed topics' partitions bumps the group epoch
 *   2. target    when the group epoch is ahead of the assignment epoch, the group's assignor computes a new
 *                target assignment for every member (only changed members are written)
 *   3. reconcile the member's current assignment moves towards its target (reconciliation.ts): revoke first,
 *                then assign what other members have released
 * ```
 *
 * Timers: `session:<g>:<member>` (group.consumer.session.timeout.ms, restarted by every heartbeat) fences a
 * silent member; `rebalance:<g>:<member>` (the member's rebalance timeout) fences a member that does not revoke
 * partitions in time. Fencing removes the member and bumps the group epoch, so the others get its partitions.
 *
 * Static members (instance id): leaving with epoch -2 keeps the member and its partitions until its session
 * expires; a new member id with the same instance id takes them over (UNRELEASED_INSTANCE_ID while the old one
 * has not left). Every change is made by records (group-records.ts) replayed into memory by the shard.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  createConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponseAssignment,
  createConsumerGroupHeartbeatResponseTopicPartitions,
  type ConsumerGroupHeartbeatResponse,
} from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { createHeartbeatResponse, type HeartbeatRequest, type HeartbeatResponse } from '../../protocol/messages/012-heartbeat.gen.js';
import { createJoinGroupResponse, type JoinGroupRequest, type JoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import {
  createLeaveGroupResponse,
  createLeaveGroupResponseMemberResponse,
  type LeaveGroupRequestMemberIdentity,
  type LeaveGroupResponse,
} from '../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupResponse, type SyncGroupRequest, type SyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import type { AssignmentMemberSpec, ServerAssignor } from './assignors.js';
import { ClassicGroup, CONSUMER_PROTOCOL_TYPE } from './classic-group.js';
import {
  ConsumerGroup,
  LEAVE_GROUP_MEMBER_EPOCH,
  LEAVE_GROUP_STATIC_MEMBER_EPOCH,
  MemberState,
  assignmentEquals,
  isReconciledTo,
  memberAssignmentEquals,
  memberSubscriptionEquals,
  newMember,
  usesClassicProtocol,
  type Assignment,
  type ConsumerGroupMember,
  type SubscriptionChange,
  type TopicMetadata,
} from './consumer-group.js';
import type { CoordinatorContext, RequestInfo } from './context.js';
import { GroupApiError } from './errors.js';
import {
  consumerGroupCurrentAssignmentRecord,
  consumerGroupEpochRecord,
  consumerGroupMemberSubscriptionRecord,
  consumerGroupMemberTombstones,
  consumerGroupSubscriptionMetadataRecord,
  consumerGroupTargetAssignmentEpochRecord,
  consumerGroupTargetAssignmentRecord,
  groupMetadataTombstone,
} from './group-records.js';
import { EmbeddedProtocolError, parseSubscription, serializeAssignment, type EmbeddedSubscription } from './embedded-protocol.js';
import { downgradeRecords, toTopicPartitions, upgradeRecords } from './group-conversion.js';
import type { CoordinatorRecord } from './records.js';
import { reconcile, type OwnedPartitions } from './reconciliation.js';
import type { OpResult, Shard } from './shard.js';
import { exceedsInt16String, MAX_STRING_BYTES } from './string-bounds.js';

/** A ConsumerGroupHeartbeat request, version-independent (v1 adds the regex). */
export interface ConsumerHeartbeatInput {
  readonly groupId: string;
  readonly memberId: string;
  readonly memberEpoch: number;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly subscribedTopicNames: readonly string[] | null;
  readonly subscribedTopicRegex: string | null;
  readonly serverAssignor: string | null;
  readonly topicPartitions: OwnedPartitions;
  /** The request's version (default 0): from v1 the consumer generates its member id (KIP-1082). */
  readonly apiVersion?: number;
}


/** Kafka's throwIfEmptyString test: set, and empty once trimmed. */
function isBlank(s: string | null): boolean {
  return s !== null && s.trim() === '';
}

function invalid(message: string): GroupApiError {
  return new GroupApiError(ErrorCode.INVALID_REQUEST, message);
}

/**
 * Compiles a subscription regex. Kafka uses RE2/J with full matching; JavaScript regular expressions accept the
 * same syntax for the constructs consumers use (character classes, alternation, quantifiers, anchors).
 */
export function compileTopicRegex(regex: string): RegExp {
  try {
    return new RegExp(`^(?:${regex})$`, 'u');
  } catch (e) {
    throw new GroupApiError(ErrorCode.INVALID_REGULAR_EXPRESSION, `SubscribedTopicRegex ${regex} is not a valid regular expression: ${(e as Error).message}.`);
  }
}

/** Timers of a consumer group's members: the session, a revocation in progress, and a classic member's join and sync. */
export const MEMBER_TIMERS = ['session', 'rebalance', 'classic-join', 'classic-sync'] as const;

export interface ConsumerGroupProtocolHooks {
  /** A consumer group became a classic group (its records are durable); `rebalance`: its members must rejoin. */
  onDowngraded?(shard: Shard, groupId: string, rebalance: boolean): void;
}

export class ConsumerGroupProtocol {
  private readonly regexCache = new Map<string, RegExp>();

  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly assignors: ReadonlyMap<string, ServerAssignor>,
    private readonly hooks: ConsumerGroupProtocolHooks = {},
  ) {}

  get defaultAssignor(): string {
    return this.ctx.config.consumerGroupAssignors[0]!;
  }

  /**
   * Topic names that a regex subscription matches now. Internal topics included: Kafka's TopicRegexResolver
   * matches every topic of the metadata image (the Java consumer's exclude.internal.topics is client-side).
   */
  resolveRegex(regex: string): string[] {
    let re = this.regexCache.get(regex);
    if (!re) {
      re = compileTopicRegex(regex);
      if (this.regexCache.size > 1000) this.regexCache.clear();
      this.regexCache.set(regex, re);
    }
    const out: string[] = [];
    for (const t of this.ctx.topics.list()) if (re.test(t.name)) out.push(t.name);
    return out;
  }

  /**
   * Kafka 4's throwIfConsumerGroupHeartbeatRequestIsInvalid, in its order. From v1 the member id is generated by
   * the consumer and required in every request (KIP-1082); joining with an empty list of names or an empty regex
   * is allowed (the member is in the group, subscribed to nothing).
   */
  private validate(req: ConsumerHeartbeatInput): void {
    if ((req.apiVersion ?? 0) >= 1 || req.memberEpoch > 0 || req.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) {
      if (isBlank(req.memberId)) throw invalid('MemberId can\'t be empty.');
    }
    if (isBlank(req.groupId)) throw invalid('GroupId can\'t be empty.');
    if (isBlank(req.instanceId)) throw invalid('InstanceId can\'t be empty.');
    if (isBlank(req.rackId)) throw invalid('RackId can\'t be empty.');
    // Kept in records whose keys and GroupMetadataValue are non-flexible (string-bounds.ts).
    if (exceedsInt16String(req.groupId)) throw new GroupApiError(ErrorCode.INVALID_GROUP_ID, `GroupId can't be longer than ${MAX_STRING_BYTES} bytes.`);
    if (exceedsInt16String(req.memberId)) throw invalid(`MemberId can't be longer than ${MAX_STRING_BYTES} bytes.`);
    if (exceedsInt16String(req.instanceId)) throw invalid(`InstanceId can't be longer than ${MAX_STRING_BYTES} bytes.`);
    if (exceedsInt16String(req.rackId)) throw invalid(`RackId can't be longer than ${MAX_STRING_BYTES} bytes.`);
    if (req.memberEpoch === 0) {
      if (req.rebalanceTimeoutMs === -1) throw invalid('RebalanceTimeoutMs must be provided in first request.');
      if (req.topicPartitions === null || req.topicPartitions.length > 0) throw invalid('TopicPartitions must be empty when (re-)joining.');
      if (req.subscribedTopicNames === null && req.subscribedTopicRegex === null) {
        throw invalid('Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.');
      }
    } else if (req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      if (req.instanceId === null) throw invalid('InstanceId can\'t be null.');
    } else if (req.memberEpoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      throw invalid('MemberEpoch is invalid.');
    }
    if (req.subscribedTopicRegex !== null && req.subscribedTopicRegex !== '') compileTopicRegex(req.subscribedTopicRegex);
    if (req.serverAssignor !== null && !this.assignors.has(req.serverAssignor)) {
      throw new GroupApiError(
        ErrorCode.UNSUPPORTED_ASSIGNOR,
        `ServerAssignor ${req.serverAssignor} is not supported. Supported assignors: ${[...this.assignors.keys()].join(', ')}.`,
      );
    }
  }

  heartbeat(shard: Shard, req: ConsumerHeartbeatInput, info: RequestInfo): OpResult<ConsumerGroupHeartbeatResponse> {
    this.validate(req);
    if (req.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return this.leave(shard, req);
    return this.join(shard, req, info);
  }

  // -------------------------------------------------------------------------------------- heartbeat

  private group(shard: Shard, groupId: string, create: boolean, records: CoordinatorRecord[]): ConsumerGroup {
    const g = shard.groups.get(groupId);
    if (g instanceof ConsumerGroup) return g;
    if (g instanceof ClassicGroup) {
      if (create && g.isEmpty) {
        // Kafka: an empty classic group (or one holding only offsets) is replaced; its offsets stay.
        records.push(groupMetadataTombstone(groupId));
        return new ConsumerGroup(groupId);
      }
      if (create && this.canUpgrade(g)) return this.upgrade(shard, g, records);
      throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`, { groupId });
    }
    if (!create) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`, { groupId });
    return new ConsumerGroup(groupId);
  }

  /** Kafka's validateOnlineUpgrade: the policy allows it, the members use the consumer protocol, and they fit. */
  private canUpgrade(g: ClassicGroup): boolean {
    const policy = this.ctx.config.consumerGroupMigrationPolicy;
    const why =
      policy !== 'upgrade' && policy !== 'bidirectional'
        ? 'the online upgrade is disabled'
        : !g.usesConsumerProtocol()
          ? 'the group does not use the consumer embedded protocol'
          : g.numMembers > this.ctx.config.consumerGroupMaxSize
            ? 'the group size exceeds the consumer group maximum size'
            : null;
    if (why !== null) this.ctx.log.info({ groupId: g.groupId, policy }, `cannot upgrade the classic group to a consumer group: ${why}`);
    return why === null;
  }

  /**
   * Kafka's convertToConsumerGroup: the classic members become members of a consumer group that keep speaking
   * the classic protocol, each keeping its last assignment; the joining member then triggers a new assignment.
   * Parked JoinGroup/SyncGroup requests are answered REBALANCE_IN_PROGRESS when the classic group is replaced.
   */
  private upgrade(shard: Shard, classic: ClassicGroup, records: CoordinatorRecord[]): ConsumerGroup {
    let converted: { records: CoordinatorRecord[]; group: ConsumerGroup };
    try {
      converted = upgradeRecords(classic, this.ctx.topics, this.ctx.clock.now());
    } catch (e) {
      if (!(e instanceof EmbeddedProtocolError)) throw e;
      this.ctx.log.warn({ groupId: classic.groupId, err: e }, 'cannot upgrade the classic group: its embedded consumer protocol is malformed');
      throw new GroupApiError(
        ErrorCode.GROUP_ID_NOT_FOUND,
        `Cannot upgrade the classic group ${classic.groupId} to consumer group because the embedded consumer protocol is malformed.`,
        { groupId: classic.groupId },
      );
    }
    records.push(...converted.records);
    for (const m of converted.group.members.values()) this.scheduleSessionTimeout(shard, classic.groupId, m.memberId, m.classicMemberMetadata!.sessionTimeoutMs);
    this.ctx.log.info({ groupId: classic.groupId, members: converted.group.members.size, generationId: classic.generationId }, 'upgrading the classic group to a consumer group');
    return converted.group;
  }

  private throwIfEpochInvalid(member: ConsumerGroupMember, received: number, owned: OwnedPartitions): void {
    // KIP-848: epoch 0 always means "(re)joining", also for a member the coordinator still knows (KAFKA-19233).
    if (received === 0) return;
    if (received > member.memberEpoch) {
      throw new GroupApiError(
        ErrorCode.FENCED_MEMBER_EPOCH,
        `The consumer group member has a greater member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
      );
    }
    if (received < member.memberEpoch) {
      // The previous epoch with a subset of the current partitions: the response with the new epoch was lost.
      if (received !== member.previousMemberEpoch || !isSubset(owned, member.assignedPartitions)) {
        throw new GroupApiError(
          ErrorCode.FENCED_MEMBER_EPOCH,
          `The consumer group member has a smaller member epoch (${received}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.`,
        );
      }
    }
  }

  private join(shard: Shard, req: ConsumerHeartbeatInput, info: RequestInfo): OpResult<ConsumerGroupHeartbeatResponse> {
    const records: CoordinatorRecord[] = [];
    const create = req.memberEpoch === 0;
    const group = this.group(shard, req.groupId, create, records);
    const groupId = req.groupId;
    const memberId = req.memberId === '' ? randomUuid() : req.memberId;

    const max = this.ctx.config.consumerGroupMaxSize;
    if (group.members.size >= max && (req.memberId === '' || !group.members.has(memberId))) {
      const staticRejoin = req.instanceId !== null && group.staticMember(req.instanceId) !== undefined;
      if (!staticRejoin) throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${max} members.`, { groupId });
    }

    let member: ConsumerGroupMember;
    let replacedMemberId: string | null = null;
    if (req.instanceId === null) {
      const existing = group.members.get(memberId);
      if (!existing && !create) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${groupId}.`, { groupId, memberId });
      member = existing ?? newMember(memberId);
      if (existing) this.throwIfEpochInvalid(member, req.memberEpoch, req.topicPartitions);
    } else {
      const existingStatic = group.staticMember(req.instanceId);
      if (create) {
        if (!existingStatic) {
          member = group.members.get(memberId) ?? newMember(memberId);
        } else if (existingStatic.memberId === memberId) {
          // The same instance rejoining under its own id (e.g. after being fenced).
          member = existingStatic;
        } else {
          // Between two consumer-protocol members, only once the previous one left temporarily (epoch -2).
          if (existingStatic.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH && !usesClassicProtocol(existingStatic)) {
            throw new GroupApiError(
              ErrorCode.UNRELEASED_INSTANCE_ID,
              `Static member ${memberId} with instance id ${req.instanceId} cannot join the group because the instance id is owned by ${existingStatic.memberId} member.`,
              { groupId, memberId },
            );
          }
          member = this.replaceStaticMember(shard, group, existingStatic, memberId, records);
          replacedMemberId = existingStatic.memberId;
        }
      } else {
        if (!existingStatic) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.instanceId} is unknown.`, { groupId, memberId });
        if (existingStatic.memberId !== memberId) {
          throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${req.instanceId} was fenced by member ${existingStatic.memberId}.`, {
            groupId,
            memberId,
          });
        }
        member = existingStatic;
        this.throwIfEpochInvalid(member, req.memberEpoch, req.topicPartitions);
      }
    }

    // 1. The member.
    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: req.instanceId ?? member.instanceId,
      rackId: req.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      serverAssignor: req.serverAssignor ?? member.serverAssignor,
      subscribedTopicNames: req.subscribedTopicNames !== null ? [...new Set(req.subscribedTopicNames)].sort() : member.subscribedTopicNames,
      // An empty regex clears the regex subscription.
      subscribedTopicRegex: req.subscribedTopicRegex === null ? member.subscribedTopicRegex : req.subscribedTopicRegex === '' ? null : req.subscribedTopicRegex,
      clientId: info.clientId,
      clientHost: info.clientHost,
      classicMemberMetadata: null,
    };
    const reconciled = this.updateAndReconcile(group, member, updated, replacedMemberId, req.topicPartitions, records);
    if (reconciled.state === MemberState.UNREVOKED_PARTITIONS) {
      if (!memberAssignmentEquals(reconciled, updated) || !shard.timer.isScheduled('rebalance', groupId, reconciled.memberId)) {
        this.scheduleRebalanceTimeout(shard, groupId, reconciled.memberId, reconciled.memberEpoch, reconciled.rebalanceTimeoutMs);
      }
    } else {
      shard.timer.cancel('rebalance', groupId, reconciled.memberId);
    }

    this.scheduleSessionTimeout(shard, groupId, reconciled.memberId);

    const response = createConsumerGroupHeartbeatResponse({
      memberId: reconciled.memberId,
      memberEpoch: reconciled.memberEpoch,
      heartbeatIntervalMs: this.ctx.config.consumerGroupHeartbeatIntervalMs,
    });
    // Kafka sends the assignment on a full request (joining, or after an error) or when it changed.
    const isFullRequest = req.memberEpoch === 0 || (req.rebalanceTimeoutMs !== -1 && req.subscribedTopicNames !== null && req.topicPartitions !== null);
    if (isFullRequest || !assignmentEquals(member.assignedPartitions, reconciled.assignedPartitions)) {
      response.assignment = createConsumerGroupHeartbeatResponseAssignment({
        topicPartitions: [...reconciled.assignedPartitions]
          .map(([topicId, ps]) => createConsumerGroupHeartbeatResponseTopicPartitions({ topicId, partitions: [...ps].sort((a, b) => a - b) }))
          .sort((a, b) => (a.topicId < b.topicId ? -1 : a.topicId > b.topicId ? 1 : 0)),
      });
    }
    return { records, response };
  }

  /**
   * KIP-848 static membership: a new member id takes over the previous member's state and partitions (Kafka's
   * replaceMember). The new member starts at epoch 0.
   */
  private replaceStaticMember(shard: Shard, group: ConsumerGroup, existing: ConsumerGroupMember, memberId: string, records: CoordinatorRecord[]): ConsumerGroupMember {
    const groupId = group.groupId;
    const member: ConsumerGroupMember = { ...existing, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
    records.push(...consumerGroupMemberTombstones(groupId, existing.memberId));
    records.push(consumerGroupMemberSubscriptionRecord(groupId, member));
    records.push(consumerGroupTargetAssignmentRecord(groupId, memberId, group.targetAssignmentOf(existing.memberId)));
    records.push(consumerGroupCurrentAssignmentRecord(groupId, member));
    this.cancelMemberTimers(shard, groupId, existing.memberId);
    this.ctx.log.info({ groupId, instanceId: existing.instanceId, memberId, replaced: existing.memberId }, 'static member rejoined under a new member id');
    return member;
  }

  /**
   * Steps 1-3 of a heartbeat (or of a classic member's JoinGroup): record the member's change, bump the group epoch
   * when the subscriptions or their topics changed, compute a new target assignment when the epoch moved, and
   * reconcile the member towards its target. Returns the member as reconciled.
   */
  private updateAndReconcile(
    group: ConsumerGroup,
    member: ConsumerGroupMember,
    updated: ConsumerGroupMember,
    replacedMemberId: string | null,
    owned: OwnedPartitions,
    records: CoordinatorRecord[],
  ): ConsumerGroupMember {
    const groupId = group.groupId;
    // 1. The member's change.
    let bumpGroupEpoch = false;
    if (!memberSubscriptionEquals(member, updated)) {
      records.push(consumerGroupMemberSubscriptionRecord(groupId, updated));
      const namesChanged = member.subscribedTopicNames.length !== updated.subscribedTopicNames.length || member.subscribedTopicNames.some((t, i) => t !== updated.subscribedTopicNames[i]);
      if (namesChanged || member.subscribedTopicRegex !== updated.subscribedTopicRegex) bumpGroupEpoch = true;
    }

    let groupEpoch = group.groupEpoch;
    let subscriptionMetadata = group.subscriptionMetadata;
    if (bumpGroupEpoch || group.metadataRefreshNeeded) {
      subscriptionMetadata = this.subscriptionMetadata(group, { overriding: updated, removing: replacedMemberId ?? undefined });
      if (!metadataEquals(subscriptionMetadata, group.subscriptionMetadata)) {
        bumpGroupEpoch = true;
        records.push(consumerGroupSubscriptionMetadataRecord(groupId, subscriptionMetadata));
      }
      if (bumpGroupEpoch) {
        groupEpoch += 1;
        records.push(consumerGroupEpochRecord(groupId, groupEpoch));
        this.ctx.log.info({ groupId, groupEpoch }, 'bumped group epoch');
        this.ctx.events.rebalance(groupId, 'consumer');
      }
      group.metadataRefreshNeeded = false;
    }

    // 2. The target assignment.
    let targetEpoch: number;
    let target: Assignment;
    if (groupEpoch > group.assignmentEpoch) {
      target = this.updateTargetAssignment(group, groupEpoch, updated, replacedMemberId, subscriptionMetadata, records);
      targetEpoch = groupEpoch;
    } else {
      targetEpoch = group.assignmentEpoch;
      target = replacedMemberId !== null ? group.targetAssignmentOf(replacedMemberId) : group.targetAssignmentOf(updated.memberId);
    }

    // 3. Reconciliation.
    let reconciled = updated;
    if (!isReconciledTo(updated, targetEpoch)) {
      reconciled = reconcile(updated, {
        targetEpoch,
        target,
        currentPartitionEpoch: (topicId, p) => group.currentPartitionEpoch(topicId, p),
        owned,
      });
      if (!memberAssignmentEquals(reconciled, updated)) records.push(consumerGroupCurrentAssignmentRecord(groupId, reconciled));
    }
    return reconciled;
  }

  /** Subscribed topics (names and regex matches of all members) that exist, with their partition counts. */
  subscriptionMetadata(group: ConsumerGroup, change?: SubscriptionChange): Map<string, TopicMetadata> {
    const names = group.subscribedTopicNames((r) => this.resolveRegex(r), change);
    const out = new Map<string, TopicMetadata>();
    for (const name of [...names].sort()) {
      const t = this.ctx.topics.get(name);
      if (t) out.set(name, { topicId: t.topicId, name, numPartitions: t.partitions });
    }
    return out;
  }

  private updateTargetAssignment(
    group: ConsumerGroup,
    groupEpoch: number,
    updated: ConsumerGroupMember,
    replacedMemberId: string | null,
    metadata: ReadonlyMap<string, TopicMetadata>,
    records: CoordinatorRecord[],
  ): Assignment {
    const assignorName = group.preferredServerAssignor(this.defaultAssignor, updated);
    const assignor = this.assignors.get(assignorName) ?? this.assignors.get(this.defaultAssignor)!;
    const topics = new Map<string, number>();
    for (const t of metadata.values()) topics.set(t.topicId, t.numPartitions);

    const specs = new Map<string, AssignmentMemberSpec>();
    const members = new Map(group.members);
    if (replacedMemberId !== null) members.delete(replacedMemberId);
    members.set(updated.memberId, updated);
    for (const m of members.values()) {
      const ids = new Set<string>();
      const names = new Set(m.subscribedTopicNames);
      if (m.subscribedTopicRegex !== null) for (const n of this.resolveRegex(m.subscribedTopicRegex)) names.add(n);
      for (const n of names) {
        const t = metadata.get(n);
        if (t) ids.add(t.topicId);
      }
      const previous = m.memberId === updated.memberId && replacedMemberId !== null ? group.targetAssignmentOf(replacedMemberId) : group.targetAssignmentOf(m.memberId);
      specs.set(m.memberId, { memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, subscribedTopicIds: ids, currentTarget: previous });
    }
    const started = this.ctx.clock.now();
    const result = assignor.assign({ members: specs, topics });
    for (const [memberId, a] of result) {
      const previous = memberId === updated.memberId && replacedMemberId !== null ? null : group.targetAssignment.get(memberId);
      if (!previous || !assignmentEquals(previous, a)) records.push(consumerGroupTargetAssignmentRecord(group.groupId, memberId, a));
    }
    records.push(consumerGroupTargetAssignmentEpochRecord(group.groupId, groupEpoch));
    this.ctx.log.info({ groupId: group.groupId, groupEpoch, assignor: assignor.name, ms: this.ctx.clock.now() - started }, 'computed a new target assignment');
    return result.get(updated.memberId) ?? new Map();
  }

  // ----------------------------------------------------------------------------- classic members
  //
  // During an online migration a consumer group has members that speak the classic protocol. They JoinGroup,
  // SyncGroup, Heartbeat and LeaveGroup as before, but the broker assigns their partitions: a JoinGroup is one
  // heartbeat of the consumer protocol (answered at once, with no leader and no member list), the SyncGroup
  // returns the member's current assignment, and a Heartbeat answers REBALANCE_IN_PROGRESS whenever the member
  // must rejoin to move on (a newer group epoch, partitions to revoke, or released partitions to collect).
  // The generation is the member epoch. Kafka's classicGroup*ToConsumerGroup methods.

  /** Kafka's classicGroupJoinToConsumerGroup. The session timeout and group id were validated by the caller. */
  classicJoin(shard: Shard, req: JoinGroupRequest, info: RequestInfo): OpResult<JoinGroupResponse> {
    const group = this.withClassicMembers(shard, req.groupId);
    const groupId = group.groupId;
    const isUnknownMember = req.memberId === '';
    const memberId = isUnknownMember ? randomUuid() : req.memberId;
    const records: CoordinatorRecord[] = [];

    const max = this.ctx.config.consumerGroupMaxSize;
    if (group.members.size >= max && !group.members.has(memberId)) {
      throw new GroupApiError(ErrorCode.GROUP_MAX_SIZE_REACHED, `The consumer group has reached its maximum capacity of ${max} members.`, { groupId });
    }
    if (!group.supportsClassicProtocols(req.protocolType, req.protocols.map((p) => p.name))) {
      throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Member ${memberId}'s protocols are not supported.`, { groupId, memberId });
    }
    // KIP-394: a dynamic member without an id is given one and asked to rejoin with it.
    if (isUnknownMember && info.apiVersion >= 4 && req.groupInstanceId === null) {
      this.ctx.log.info({ groupId, memberId }, 'dynamic member with unknown member id joins the consumer group: asking it to rejoin with its new id');
      return { records: [], response: createJoinGroupResponse({ memberId, errorCode: ErrorCode.MEMBER_ID_REQUIRED, protocolName: null }) };
    }

    let member: ConsumerGroupMember;
    let replacedMemberId: string | null = null;
    if (req.groupInstanceId === null) {
      member = group.members.get(memberId) ?? newMember(memberId);
    } else {
      const existing = group.staticMember(req.groupInstanceId);
      if (isUnknownMember) {
        if (!existing) {
          member = group.members.get(memberId) ?? newMember(memberId);
        } else {
          member = this.replaceStaticMember(shard, group, existing, memberId, records);
          replacedMemberId = existing.memberId;
        }
      } else {
        if (!existing) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.groupInstanceId} is unknown.`, { groupId, memberId });
        if (existing.memberId !== memberId) {
          throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${req.groupInstanceId} was fenced by member ${existing.memberId}.`, { groupId, memberId });
        }
        member = existing;
      }
    }
    if (!group.members.has(member.memberId) && replacedMemberId === null) {
      this.ctx.log.info({ groupId, memberId, instanceId: req.groupInstanceId }, 'member joins the consumer group using the classic protocol');
    }

    let subscription: EmbeddedSubscription;
    try {
      // Every protocol of a consumer carries the same subscription.
      subscription = parseSubscription(req.protocols[0]!.metadata);
    } catch (e) {
      if (!(e instanceof EmbeddedProtocolError)) throw e;
      throw new GroupApiError(ErrorCode.INCONSISTENT_GROUP_PROTOCOL, `Member ${memberId}'s subscription does not parse: ${e.message}.`, { groupId, memberId });
    }
    const updated: ConsumerGroupMember = {
      ...member,
      instanceId: req.groupInstanceId ?? member.instanceId,
      rackId: subscription.rackId ?? member.rackId,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs !== -1 ? req.rebalanceTimeoutMs : member.rebalanceTimeoutMs,
      subscribedTopicNames: [...new Set(subscription.topics)].sort(),
      clientId: info.clientId,
      clientHost: info.clientHost,
      classicMemberMetadata: { sessionTimeoutMs: req.sessionTimeoutMs, supportedProtocols: req.protocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
    };
    const owned = subscription.ownedPartitions.map((tp) => ({ topicId: this.ctx.topics.get(tp.topic)?.topicId ?? '', partitions: [...tp.partitions] })).filter((tp) => tp.topicId !== '');
    const reconciled = this.updateAndReconcile(group, member, updated, replacedMemberId, owned, records);
    const response = createJoinGroupResponse({
      memberId: reconciled.memberId,
      generationId: reconciled.memberEpoch,
      protocolType: CONSUMER_PROTOCOL_TYPE,
      protocolName: req.protocols[0]!.name,
    });

    // Kafka's validateOnlineDowngradeWithReplacedMemberId: the static member replaced was the last one speaking
    // the consumer protocol, so the group becomes a classic group, the joining member in the replaced one's place.
    if (replacedMemberId !== null && this.canDowngrade(group, replacedMemberId, group.members.size)) {
      this.ctx.log.info({ groupId, memberId: reconciled.memberId, replaced: replacedMemberId }, 'downgrading the consumer group to a classic group');
      records.push(...downgradeRecords(group, replacedMemberId, this.ctx.topics, this.ctx.clock.now(), reconciled));
      return { records, response, onAppend: (err) => (err === null ? this.hooks.onDowngraded?.(shard, groupId, false) : undefined) };
    }

    shard.timer.cancel('classic-join', groupId, reconciled.memberId);
    this.scheduleSessionTimeout(shard, groupId, reconciled.memberId, req.sessionTimeoutMs);
    const rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    shard.timer.schedule('classic-sync', groupId, reconciled.memberId, Math.max(0, rebalanceTimeoutMs), () =>
      shard.runScheduled(() => this.fenceById(shard, groupId, reconciled.memberId, 'the classic member failed to sync within the rebalance timeout')),
    );
    return { records, response };
  }

  /** Kafka's classicGroupSyncToConsumerGroup: the member's current assignment, in its subscription's version. */
  classicSync(shard: Shard, req: SyncGroupRequest): OpResult<SyncGroupResponse> {
    const group = this.withClassicMembers(shard, req.groupId);
    const member = this.classicMember(group, req.memberId, req.groupInstanceId);
    this.throwIfGenerationUnmatched(member, req.generationId);
    const protocolName = member.classicMemberMetadata!.supportedProtocols[0]!.name;
    if (req.protocolType !== null && req.protocolType !== CONSUMER_PROTOCOL_TYPE) {
      throw new GroupApiError(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        `The protocol type ${req.protocolType} from member ${member.memberId} request is not equal to the group protocol type ${CONSUMER_PROTOCOL_TYPE}.`,
      );
    }
    if (req.protocolName !== null && req.protocolName !== protocolName) {
      throw new GroupApiError(
        ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
        `The protocol name ${req.protocolName} from member ${member.memberId} request is not equal to the protocol name ${protocolName} returned in the join response.`,
      );
    }
    // A newer group epoch: the member rejoins first, unless it is still revoking (it rejoins once done).
    if (group.groupEpoch > member.memberEpoch && member.state !== MemberState.UNREVOKED_PARTITIONS) {
      this.scheduleClassicJoinTimeoutIfAbsent(shard, group.groupId, member);
      throw new GroupApiError(ErrorCode.REBALANCE_IN_PROGRESS, `A new rebalance is triggered in group ${group.groupId} and member ${member.memberId} should rejoin to catch up.`);
    }
    shard.timer.cancel('classic-sync', group.groupId, member.memberId);
    this.scheduleSessionTimeout(shard, group.groupId, member.memberId, member.classicMemberMetadata!.sessionTimeoutMs);
    const version = parseSubscription(member.classicMemberMetadata!.supportedProtocols[0]!.metadata).version;
    return {
      records: [],
      response: createSyncGroupResponse({
        protocolType: req.protocolType,
        protocolName: req.protocolName,
        assignment: serializeAssignment(toTopicPartitions(member.assignedPartitions, this.ctx.topics), version),
      }),
    };
  }

  /** Kafka's classicGroupHeartbeatToConsumerGroup. */
  classicHeartbeat(shard: Shard, req: HeartbeatRequest): OpResult<HeartbeatResponse> {
    const group = this.withClassicMembers(shard, req.groupId);
    const member = this.classicMember(group, req.memberId, req.groupInstanceId);
    this.throwIfGenerationUnmatched(member, req.generationId);
    this.scheduleSessionTimeout(shard, group.groupId, member.memberId, member.classicMemberMetadata!.sessionTimeoutMs);
    // The member rejoins to catch up with a newer group epoch, to revoke partitions, or to collect partitions
    // that other members have released since.
    const rejoin =
      member.memberEpoch < group.groupEpoch ||
      member.state === MemberState.UNREVOKED_PARTITIONS ||
      (member.state === MemberState.UNRELEASED_PARTITIONS && !group.waitingOnUnreleasedPartition(member));
    if (rejoin) this.scheduleClassicJoinTimeoutIfAbsent(shard, group.groupId, member);
    return { records: [], response: createHeartbeatResponse({ errorCode: rejoin ? ErrorCode.REBALANCE_IN_PROGRESS : ErrorCode.NONE }) };
  }

  /** Kafka's classicGroupLeaveToConsumerGroup: removes the classic members named, then bumps the group epoch. */
  classicLeave(shard: Shard, groupId: string, identities: readonly LeaveGroupRequestMemberIdentity[]): OpResult<LeaveGroupResponse> {
    const group = this.withClassicMembers(shard, groupId);
    const records: CoordinatorRecord[] = [];
    const removed = new Set<string>();
    const responses = identities.map((identity) => {
      const response = createLeaveGroupResponseMemberResponse({ memberId: identity.memberId, groupInstanceId: identity.groupInstanceId });
      try {
        let member: ConsumerGroupMember;
        if (identity.groupInstanceId === null) {
          member = this.classicMember(group, identity.memberId, null);
        } else {
          const existing = group.staticMember(identity.groupInstanceId);
          if (!existing) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${identity.groupInstanceId} is unknown.`);
          // LeaveGroup may remove a static member by instance id alone (an administrative removal).
          if (identity.memberId !== '' && existing.memberId !== identity.memberId) {
            throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${identity.memberId} with instance id ${identity.groupInstanceId} was fenced by member ${existing.memberId}.`);
          }
          if (!usesClassicProtocol(existing)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${existing.memberId} does not use the classic protocol.`);
          member = existing;
          response.memberId = member.memberId;
        }
        if (!removed.has(member.memberId)) {
          this.ctx.log.info({ groupId, memberId: member.memberId, instanceId: member.instanceId, reason: identity.reason ?? 'not provided' }, 'classic member left the consumer group');
          records.push(...consumerGroupMemberTombstones(groupId, member.memberId));
          this.cancelMemberTimers(shard, groupId, member.memberId);
          removed.add(member.memberId);
        }
      } catch (e) {
        if (!(e instanceof GroupApiError)) throw e;
        response.errorCode = e.errorCode;
      }
      return response;
    });
    if (removed.size > 0) {
      const metadata = this.subscriptionMetadata(group, { removing: removed });
      if (!metadataEquals(metadata, group.subscriptionMetadata)) records.push(consumerGroupSubscriptionMetadataRecord(groupId, metadata));
      records.push(consumerGroupEpochRecord(groupId, group.groupEpoch + 1));
      this.ctx.events.rebalance(groupId, 'consumer');
    }
    return { records, response: createLeaveGroupResponse({ members: responses }) };
  }

  /** The consumer group the coordinator routed a classic request to (it checked the group's type). */
  private withClassicMembers(shard: Shard, groupId: string): ConsumerGroup {
    const group = shard.groups.get(groupId);
    if (!(group instanceof ConsumerGroup)) throw new Error(`group ${groupId} is not a consumer group`);
    return group;
  }

  /** Kafka's validateConsumerGroupMember and throwIfMemberDoesNotUseClassicProtocol. */
  private classicMember(group: ConsumerGroup, memberId: string, instanceId: string | null): ConsumerGroupMember {
    let member: ConsumerGroupMember | undefined;
    if (instanceId === null) {
      member = group.members.get(memberId);
      if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${memberId} is not a member of group ${group.groupId}.`, { groupId: group.groupId, memberId });
    } else {
      member = group.staticMember(instanceId);
      if (!member) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member with instance id ${instanceId} is not a member of group ${group.groupId}.`, { groupId: group.groupId, memberId });
      if (member.memberId !== memberId) {
        throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${memberId} with instance id ${instanceId} was fenced by member ${member.memberId}.`, { groupId: group.groupId, memberId });
      }
    }
    if (!usesClassicProtocol(member)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${member.memberId} does not use the classic protocol.`, { groupId: group.groupId, memberId });
    return member;
  }

  private throwIfGenerationUnmatched(member: ConsumerGroupMember, generationId: number): void {
    if (member.memberEpoch !== generationId) {
      throw new GroupApiError(
        ErrorCode.ILLEGAL_GENERATION,
        `The request generation id ${generationId} is not equal to the member epoch ${member.memberEpoch} of member ${member.memberId}.`,
      );
    }
  }

  private scheduleClassicJoinTimeoutIfAbsent(shard: Shard, groupId: string, member: ConsumerGroupMember): void {
    if (shard.timer.isScheduled('classic-join', groupId, member.memberId)) return;
    const memberId = member.memberId;
    shard.timer.schedule('classic-join', groupId, memberId, Math.max(0, member.rebalanceTimeoutMs), () =>
      shard.runScheduled(() => this.fenceById(shard, groupId, memberId, 'the classic member failed to join within the rebalance timeout')),
    );
  }

  // -------------------------------------------------------------------------------------- leaving

  private leave(shard: Shard, req: ConsumerHeartbeatInput): OpResult<ConsumerGroupHeartbeatResponse> {
    const g = shard.groups.get(req.groupId);
    if (!(g instanceof ConsumerGroup)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${req.groupId} not found.`, { groupId: req.groupId });
    const response = createConsumerGroupHeartbeatResponse({ memberId: req.memberId, memberEpoch: req.memberEpoch });
    if (req.instanceId === null) {
      const m = g.members.get(req.memberId);
      if (!m) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${req.groupId}.`, { groupId: req.groupId, memberId: req.memberId });
      this.ctx.log.info({ groupId: req.groupId, memberId: m.memberId }, 'member left the consumer group');
      return { ...this.fence(shard, g, m), response };
    }
    const m = g.staticMember(req.instanceId);
    if (!m) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Instance id ${req.instanceId} is unknown.`, { groupId: req.groupId, memberId: req.memberId });
    if (m.memberId !== req.memberId) {
      throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, `Static member ${req.memberId} with instance id ${req.instanceId} was fenced by member ${m.memberId}.`, {
        groupId: req.groupId,
        memberId: req.memberId,
      });
    }
    if (req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
      // Temporary leave: keep the partitions for the instance until its session expires.
      this.ctx.log.info({ groupId: req.groupId, memberId: m.memberId, instanceId: req.instanceId }, 'static member temporarily left the consumer group');
      const leaving: ConsumerGroupMember = { ...m, memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitionsPendingRevocation: new Map() };
      shard.timer.cancel('rebalance', req.groupId, m.memberId);
      return { records: [consumerGroupCurrentAssignmentRecord(req.groupId, leaving)], response: createConsumerGroupHeartbeatResponse({ memberId: m.memberId, memberEpoch: LEAVE_GROUP_STATIC_MEMBER_EPOCH }) };
    }
    this.ctx.log.info({ groupId: req.groupId, memberId: m.memberId, instanceId: req.instanceId }, 'static member left the consumer group');
    return { ...this.fence(shard, g, m), response };
  }

  /**
   * Kafka's consumerGroupFenceMember: remove the member, refresh the subscription metadata, bump the epoch. When
   * the member is the last one speaking the consumer protocol and classic members remain, the group goes back to
   * being a classic group instead, which then rebalances (Kafka's online downgrade).
   */
  private fence(shard: Shard, group: ConsumerGroup, member: ConsumerGroupMember): { records: CoordinatorRecord[]; onAppend?: (err: Error | null) => void } {
    if (this.canDowngrade(group, member.memberId)) {
      this.ctx.log.info({ groupId: group.groupId, memberId: member.memberId, members: group.members.size - 1 }, 'downgrading the consumer group to a classic group');
      // Replaying these records replaces the group, which cancels its timers.
      const records = downgradeRecords(group, member.memberId, this.ctx.topics, this.ctx.clock.now());
      return { records, onAppend: (err) => (err === null ? this.hooks.onDowngraded?.(shard, group.groupId, true) : undefined) };
    }
    const records = consumerGroupMemberTombstones(group.groupId, member.memberId);
    const metadata = this.subscriptionMetadata(group, { removing: member.memberId });
    if (!metadataEquals(metadata, group.subscriptionMetadata)) records.push(consumerGroupSubscriptionMetadataRecord(group.groupId, metadata));
    records.push(consumerGroupEpochRecord(group.groupId, group.groupEpoch + 1));
    this.ctx.events.rebalance(group.groupId, 'consumer');
    this.cancelMemberTimers(shard, group.groupId, member.memberId);
    return { records };
  }

  /**
   * Kafka's validateOnlineDowngradeWithFencedMember (the group keeps `size` - 1 members) and
   * validateOnlineDowngradeWithReplacedMemberId (a classic member replaces the leaving one: `size` members).
   */
  private canDowngrade(group: ConsumerGroup, leavingMemberId: string, size = group.members.size - 1): boolean {
    if (!group.allMembersUseClassicProtocolExcept(leavingMemberId) || size < 1) return false;
    const policy = this.ctx.config.consumerGroupMigrationPolicy;
    const why =
      policy !== 'downgrade' && policy !== 'bidirectional'
        ? 'the online downgrade is disabled'
        : size > this.ctx.config.classicGroupMaxSize
          ? 'its group size is greater than the classic group max size'
          : null;
    if (why !== null) this.ctx.log.info({ groupId: group.groupId, policy }, `cannot downgrade the consumer group to a classic group: ${why}`);
    return why === null;
  }

  private cancelMemberTimers(shard: Shard, groupId: string, memberId: string): void {
    for (const kind of MEMBER_TIMERS) shard.timer.cancel(kind, groupId, memberId);
  }

  private fenceById(shard: Shard, groupId: string, memberId: string, reason: string, onlyAtEpoch?: number): OpResult<void> {
    const g = shard.groups.get(groupId);
    const m = g instanceof ConsumerGroup ? g.members.get(memberId) : undefined;
    if (!(g instanceof ConsumerGroup) || !m) return { records: [], response: undefined };
    if (onlyAtEpoch !== undefined && m.memberEpoch !== onlyAtEpoch) return { records: [], response: undefined };
    this.ctx.log.info({ groupId, memberId, reason }, 'member fenced from the consumer group');
    return { ...this.fence(shard, g, m), response: undefined };
  }

  private scheduleSessionTimeout(shard: Shard, groupId: string, memberId: string, timeoutMs = this.ctx.config.consumerGroupSessionTimeoutMs): void {
    shard.timer.schedule('session', groupId, memberId, timeoutMs, () =>
      shard.runScheduled(() => this.fenceById(shard, groupId, memberId, 'the member session expired')),
    );
  }

  private scheduleRebalanceTimeout(shard: Shard, groupId: string, memberId: string, memberEpoch: number, timeoutMs: number): void {
    shard.timer.schedule('rebalance', groupId, memberId, Math.max(0, timeoutMs), () =>
      shard.runScheduled(() => this.fenceById(shard, groupId, memberId, `it failed to revoke its partitions within ${timeoutMs} ms (epoch ${memberEpoch})`, memberEpoch)),
    );
  }

  /** Kafka's onLoaded for consumer groups: restart session timers, and rebalance timers of members revoking. */
  onLoaded(shard: Shard, group: ConsumerGroup): void {
    for (const m of group.members.values()) {
      this.scheduleSessionTimeout(shard, group.groupId, m.memberId, m.classicMemberMetadata?.sessionTimeoutMs);
      if (m.state === MemberState.UNREVOKED_PARTITIONS) this.scheduleRebalanceTimeout(shard, group.groupId, m.memberId, m.memberEpoch, m.rebalanceTimeoutMs);
    }
  }

  /** Whether a topic (by name) is among the group's subscriptions, regexes included. */
  isSubscribedToTopic(group: ConsumerGroup, topic: string): boolean {
    return group.subscribedTopicNames((r) => this.resolveRegex(r)).has(topic);
  }

  /** A topic changed: groups that subscribe to it (or may, by regex) recompute their metadata on the next heartbeat. */
  topicChanged(group: ConsumerGroup, topic: string): void {
    if (group.subscriptionMetadata.has(topic) || this.isSubscribedToTopic(group, topic)) group.metadataRefreshNeeded = true;
  }
}

function isSubset(owned: OwnedPartitions, assigned: Assignment): boolean {
  if (owned === null) return false;
  for (const tp of owned) {
    const ps = assigned.get(tp.topicId);
    if (!ps) {
      if (tp.partitions.length > 0) return false;
      continue;
    }
    for (const p of tp.partitions) if (!ps.has(p)) return false;
  }
  return true;
}

function metadataEquals(a: ReadonlyMap<string, TopicMetadata>, b: ReadonlyMap<string, TopicMetadata>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const o = b.get(name);
    if (!o || o.topicId !== t.topicId || o.numPartitions !== t.numPartitions) return false;
  }
  return true;
}
