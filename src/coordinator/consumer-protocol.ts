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
  type Assignment,
  type ConsumerGroupMember,
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
import type { CoordinatorRecord } from './records.js';
import { reconcile, type OwnedPartitions } from './reconciliation.js';
import type { OpResult, Shard } from './shard.js';

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

export class ConsumerGroupProtocol {
  private readonly regexCache = new Map<string, RegExp>();

  constructor(
    private readonly ctx: CoordinatorContext,
    private readonly assignors: ReadonlyMap<string, ServerAssignor>,
  ) {}

  get defaultAssignor(): string {
    return this.ctx.config.consumerGroupAssignors[0]!;
  }

  /** Topic names (not internal) that a regex subscription matches now. */
  resolveRegex(regex: string): string[] {
    let re = this.regexCache.get(regex);
    if (!re) {
      re = compileTopicRegex(regex);
      if (this.regexCache.size > 1000) this.regexCache.clear();
      this.regexCache.set(regex, re);
    }
    const out: string[] = [];
    for (const t of this.ctx.topics.list()) if (!t.internal && re.test(t.name)) out.push(t.name);
    return out;
  }

  /**
   * Kafka 4's throwIfConsumerGroupHeartbeatRequestIsInvalid, in its order. From v1 the member id is generated by
   * the consumer and required in every request (KIP-1082); joining with an empty list of names or an empty regex
   * is allowed (the member is in the group, subscribed to nothing).
   */
  private validate(req: ConsumerHeartbeatInput): void {
    if ((req.apiVersion ?? 0) >= 1 || req.memberEpoch > 0 || req.memberEpoch === LEAVE_GROUP_MEMBER_EPOCH) {
      if (req.memberId === '') throw invalid('MemberId can\'t be empty.');
    }
    if (req.groupId === '') throw invalid('GroupId can\'t be empty.');
    if (req.instanceId === '') throw invalid('InstanceId can\'t be empty.');
    if (req.rackId === '') throw invalid('RackId can\'t be empty.');
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
      throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Group ${groupId} is not a consumer group.`, { groupId });
    }
    if (!create) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${groupId} not found.`, { groupId });
    return new ConsumerGroup(groupId);
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
          if (existingStatic.memberEpoch !== LEAVE_GROUP_STATIC_MEMBER_EPOCH) {
            throw new GroupApiError(
              ErrorCode.UNRELEASED_INSTANCE_ID,
              `Static member ${memberId} with instance id ${req.instanceId} cannot join the group because the instance id is owned by ${existingStatic.memberId} member.`,
              { groupId, memberId },
            );
          }
          // KIP-848 static membership: the new member id takes over the previous one's state and partitions.
          member = { ...existingStatic, memberId, memberEpoch: 0, previousMemberEpoch: 0 };
          replacedMemberId = existingStatic.memberId;
          records.push(...consumerGroupMemberTombstones(groupId, existingStatic.memberId));
          records.push(consumerGroupMemberSubscriptionRecord(groupId, member));
          records.push(consumerGroupTargetAssignmentRecord(groupId, memberId, group.targetAssignmentOf(existingStatic.memberId)));
          records.push(consumerGroupCurrentAssignmentRecord(groupId, member));
          shard.timer.cancel('session', groupId, existingStatic.memberId);
          shard.timer.cancel('rebalance', groupId, existingStatic.memberId);
          this.ctx.log.info({ groupId, instanceId: req.instanceId, memberId, replaced: existingStatic.memberId }, 'static member rejoined under a new member id');
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
    };
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
        owned: req.topicPartitions,
      });
      if (!memberAssignmentEquals(reconciled, updated)) records.push(consumerGroupCurrentAssignmentRecord(groupId, reconciled));
    }
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

  /** Subscribed topics (names and regex matches of all members) that exist, with their partition counts. */
  subscriptionMetadata(group: ConsumerGroup, change?: { overriding?: ConsumerGroupMember; removing?: string }): Map<string, TopicMetadata> {
    const names = group.subscribedTopicNames((r) => this.resolveRegex(r), change);
    const out = new Map<string, TopicMetadata>();
    for (const name of [...names].sort()) {
      const t = this.ctx.topics.get(name);
      if (t && !t.internal) out.set(name, { topicId: t.topicId, name, numPartitions: t.partitions });
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

  // -------------------------------------------------------------------------------------- leaving

  private leave(shard: Shard, req: ConsumerHeartbeatInput): OpResult<ConsumerGroupHeartbeatResponse> {
    const g = shard.groups.get(req.groupId);
    if (!(g instanceof ConsumerGroup)) throw new GroupApiError(ErrorCode.GROUP_ID_NOT_FOUND, `Consumer group ${req.groupId} not found.`, { groupId: req.groupId });
    const response = createConsumerGroupHeartbeatResponse({ memberId: req.memberId, memberEpoch: req.memberEpoch });
    if (req.instanceId === null) {
      const m = g.members.get(req.memberId);
      if (!m) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Member ${req.memberId} is not a member of group ${req.groupId}.`, { groupId: req.groupId, memberId: req.memberId });
      this.ctx.log.info({ groupId: req.groupId, memberId: m.memberId }, 'member left the consumer group');
      return { records: this.fenceRecords(shard, g, m), response };
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
    return { records: this.fenceRecords(shard, g, m), response };
  }

  /** Kafka's consumerGroupFenceMember: remove the member, refresh the subscription metadata, bump the epoch. */
  private fenceRecords(shard: Shard, group: ConsumerGroup, member: ConsumerGroupMember): CoordinatorRecord[] {
    const records = consumerGroupMemberTombstones(group.groupId, member.memberId);
    const metadata = this.subscriptionMetadata(group, { removing: member.memberId });
    if (!metadataEquals(metadata, group.subscriptionMetadata)) records.push(consumerGroupSubscriptionMetadataRecord(group.groupId, metadata));
    records.push(consumerGroupEpochRecord(group.groupId, group.groupEpoch + 1));
    this.ctx.events.rebalance(group.groupId, 'consumer');
    shard.timer.cancel('session', group.groupId, member.memberId);
    shard.timer.cancel('rebalance', group.groupId, member.memberId);
    return records;
  }

  private fenceById(shard: Shard, groupId: string, memberId: string, reason: string, onlyAtEpoch?: number): OpResult<void> {
    const g = shard.groups.get(groupId);
    const m = g instanceof ConsumerGroup ? g.members.get(memberId) : undefined;
    if (!(g instanceof ConsumerGroup) || !m) return { records: [], response: undefined };
    if (onlyAtEpoch !== undefined && m.memberEpoch !== onlyAtEpoch) return { records: [], response: undefined };
    this.ctx.log.info({ groupId, memberId, reason }, 'member fenced from the consumer group');
    return { records: this.fenceRecords(shard, g, m), response: undefined };
  }

  private scheduleSessionTimeout(shard: Shard, groupId: string, memberId: string): void {
    shard.timer.schedule('session', groupId, memberId, this.ctx.config.consumerGroupSessionTimeoutMs, () =>
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
      this.scheduleSessionTimeout(shard, group.groupId, m.memberId);
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
