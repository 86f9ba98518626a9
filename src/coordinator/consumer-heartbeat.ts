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
 *
 * The classic members of a consumer group (an online migration) are served by consumer-protocol.ts, which
 * extends this class.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  createConsumerGroupHeartbeatResponse,
  createConsumerGroupHeartbeatResponseAssignment,
  createConsumerGroupHeartbeatResponseTopicPartitions,
  type ConsumerGroupHeartbeatResponse,
} from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import type { AssignmentMemberSpec, ServerAssignor } from './assignors.js';
import { ClassicGroup } from './classic-group.js';
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
import { compileTopicRegex, validateConsumerHeartbeat, type ConsumerHeartbeatInput } from './consumer-heartbeat-request.js';
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
import { EmbeddedProtocolError } from './embedded-protocol.js';
import { downgradeRecords, upgradeRecords } from './group-conversion.js';
import type { CoordinatorRecord } from './records.js';
import { reconcile, type OwnedPartitions } from './reconciliation.js';
import type { OpResult, Shard } from './shard.js';

/** Timers of a consumer group's members: the session, a revocation in progress, and a classic member's join and sync. */
export const MEMBER_TIMERS = ['session', 'rebalance', 'classic-join', 'classic-sync'] as const;

export interface ConsumerGroupProtocolHooks {
  /** A consumer group became a classic group (its records are durable); `rebalance`: its members must rejoin. */
  onDowngraded?(shard: Shard, groupId: string, rebalance: boolean): void;
}

export class ConsumerHeartbeatProtocol {
  private readonly regexCache = new Map<string, RegExp>();

  constructor(
    protected readonly ctx: CoordinatorContext,
    protected readonly assignors: ReadonlyMap<string, ServerAssignor>,
    protected readonly hooks: ConsumerGroupProtocolHooks = {},
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

  heartbeat(shard: Shard, req: ConsumerHeartbeatInput, info: RequestInfo): OpResult<ConsumerGroupHeartbeatResponse> {
    validateConsumerHeartbeat(req, this.assignors);
    if (req.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH || req.memberEpoch === LEAVE_GROUP_STATIC_MEMBER_EPOCH) return this.leave(shard, req);
    return this.join(shard, req, info);
  }

  // -------------------------------------------------------------------------------------- heartbeat

  protected group(shard: Shard, groupId: string, create: boolean, records: CoordinatorRecord[]): ConsumerGroup {
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
  protected canUpgrade(g: ClassicGroup): boolean {
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
  protected upgrade(shard: Shard, classic: ClassicGroup, records: CoordinatorRecord[]): ConsumerGroup {
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

  protected throwIfEpochInvalid(member: ConsumerGroupMember, received: number, owned: OwnedPartitions): void {
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

  protected join(shard: Shard, req: ConsumerHeartbeatInput, info: RequestInfo): OpResult<ConsumerGroupHeartbeatResponse> {
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
  protected replaceStaticMember(shard: Shard, group: ConsumerGroup, existing: ConsumerGroupMember, memberId: string, records: CoordinatorRecord[]): ConsumerGroupMember {
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
  protected updateAndReconcile(
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

  protected updateTargetAssignment(
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
  // -------------------------------------------------------------------------------------- leaving

  protected leave(shard: Shard, req: ConsumerHeartbeatInput): OpResult<ConsumerGroupHeartbeatResponse> {
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
  protected fence(shard: Shard, group: ConsumerGroup, member: ConsumerGroupMember): { records: CoordinatorRecord[]; onAppend?: (err: Error | null) => void } {
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
  protected canDowngrade(group: ConsumerGroup, leavingMemberId: string, size = group.members.size - 1): boolean {
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

  protected cancelMemberTimers(shard: Shard, groupId: string, memberId: string): void {
    for (const kind of MEMBER_TIMERS) shard.timer.cancel(kind, groupId, memberId);
  }

  protected fenceById(shard: Shard, groupId: string, memberId: string, reason: string, onlyAtEpoch?: number): OpResult<void> {
    const g = shard.groups.get(groupId);
    const m = g instanceof ConsumerGroup ? g.members.get(memberId) : undefined;
    if (!(g instanceof ConsumerGroup) || !m) return { records: [], response: undefined };
    if (onlyAtEpoch !== undefined && m.memberEpoch !== onlyAtEpoch) return { records: [], response: undefined };
    this.ctx.log.info({ groupId, memberId, reason }, 'member fenced from the consumer group');
    return { ...this.fence(shard, g, m), response: undefined };
  }

  protected scheduleSessionTimeout(shard: Shard, groupId: string, memberId: string, timeoutMs = this.ctx.config.consumerGroupSessionTimeoutMs): void {
    shard.timer.schedule('session', groupId, memberId, timeoutMs, () =>
      shard.runScheduled(() => this.fenceById(shard, groupId, memberId, 'the member session expired')),
    );
  }

  protected scheduleRebalanceTimeout(shard: Shard, groupId: string, memberId: string, memberEpoch: number, timeoutMs: number): void {
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
  }}

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

export function metadataEquals(a: ReadonlyMap<string, TopicMetadata>, b: ReadonlyMap<string, TopicMetadata>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const o = b.get(name);
    if (!o || o.topicId !== t.topicId || o.numPartitions !== t.numPartitions) return false;
  }
  return true;
}
