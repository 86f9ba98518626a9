/**
 * The classic group state machine and its timers (Kafka's GroupMetadataManager: prepareRebalance,
 * completeClassicGroupJoin, the pending-sync and heartbeat expirations), shared by the requests of
 * classic-protocol.ts: a rebalance starts (with group.initial.rebalance.delay.ms for a new group), the join phase
 * completes with whoever rejoined, the sync phase propagates the leader's assignment, and members that miss a
 * deadline are removed.
 *
 * ```
 *   timer key                 set when                                 fires
 *   heartbeat:<g>:<member>    join (new-member join timeout), join      expireHeartbeat: removes the member unless
 *                             completes, heartbeat, commit, sync         it is awaiting a rebalance response
 *   join:<g>                  rebalance starts (initial delay, or the   completes the join phase with whoever
 *                             group's rebalance timeout)                 rejoined (dynamic laggards removed)
 *   sync:<g>                  join phase completed                       removes members that did not SyncGroup
 *                                                                        and rebalances
 * ```
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { createJoinGroupResponse, type JoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import { createSyncGroupResponse, type SyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { ClassicGroup, ClassicGroupState, type ClassicGroupMember } from './classic-group.js';
import { Op } from './classic-op.js';
import type { CoordinatorContext } from './context.js';
import { GroupApiError } from './errors.js';
import { groupMetadataRecord } from './group-records.js';
import type { OpResult, Shard } from './shard.js';

const EMPTY = Buffer.alloc(0);

export class ClassicRebalance {
  constructor(protected readonly ctx: CoordinatorContext) {}

  protected now(): number {
    return this.ctx.clock.now();
  }

  // ------------------------------------------------------------------------------------------- helpers

  protected completeJoin(group: ClassicGroup, member: ClassicGroupMember, response: JoinGroupResponse): boolean {
    const r = member.awaitingJoin;
    if (!r) return false;
    member.awaitingJoin = null;
    group.numMembersAwaitingJoin--;
    r(response);
    return true;
  }

  protected completeSync(member: ClassicGroupMember, response: SyncGroupResponse): boolean {
    const r = member.awaitingSync;
    if (!r) return false;
    member.awaitingSync = null;
    r(response);
    return true;
  }

  /** Answers every parked request of the group with an error (Kafka's completeAllJoinFutures/completeAllSyncFutures). */
  failParked(group: ClassicGroup, errorCode: number): void {
    for (const m of group.members.values()) {
      this.completeJoin(group, m, createJoinGroupResponse({ memberId: m.memberId, errorCode }));
      this.completeSync(m, createSyncGroupResponse({ errorCode }));
    }
  }

  /** Kafka's validateMember: the instance id must map to the member id, and the member must exist. */
  protected validateMember(group: ClassicGroup, memberId: string, groupInstanceId: string | null, operation: string): void {
    if (groupInstanceId !== null) {
      const existing = group.staticMemberId(groupInstanceId);
      if (existing === undefined) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId: group.groupId, memberId });
      if (existing !== memberId) {
        this.ctx.log.info({ groupId: group.groupId, memberId, groupInstanceId, existing, operation }, 'static member fenced by a newer member id');
        throw new GroupApiError(ErrorCode.FENCED_INSTANCE_ID, undefined, { groupId: group.groupId, memberId });
      }
    }
    if (!group.hasMember(memberId)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, undefined, { groupId: group.groupId, memberId });
  }

  protected rescheduleHeartbeat(shard: Shard, group: ClassicGroup, member: ClassicGroupMember, timeoutMs = member.sessionTimeoutMs): void {
    const groupId = group.groupId;
    const memberId = member.memberId;
    shard.timer.schedule('heartbeat', groupId, memberId, timeoutMs, () => shard.runScheduled(() => this.expireHeartbeat(shard, groupId, memberId)));
  }

  protected classicGroup(shard: Shard, groupId: string): ClassicGroup | null {
    const g = shard.groups.get(groupId);
    return g instanceof ClassicGroup ? g : null;
  }

  // ------------------------------------------------------------------------------------------- rebalance

  protected maybePrepareRebalanceOrCompleteJoin(op: Op, shard: Shard, group: ClassicGroup, reason: string): void {
    if (group.canRebalance()) this.prepareRebalance(op, shard, group, reason);
    else this.maybeCompleteJoinPhase(op, shard, group);
  }

  /** Kafka's maybeCompleteJoinPhase: not during the initial rebalance, and only once everyone rejoined. */
  protected maybeCompleteJoinPhase(op: Op, shard: Shard, group: ClassicGroup): void {
    if (!group.is(ClassicGroupState.PREPARING_REBALANCE)) return;
    if (group.previousState === ClassicGroupState.EMPTY) return;
    if (!group.hasAllMembersJoined()) return;
    this.completeJoinPhase(op, shard, group);
  }

  prepareRebalance(op: Op, shard: Shard, group: ClassicGroup, reason: string): void {
    if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) this.resetAndPropagateAssignmentWithError(shard, group, ErrorCode.REBALANCE_IN_PROGRESS);
    group.pendingSyncMembers.clear();
    shard.timer.cancel('sync', group.groupId);
    const isInitial = group.is(ClassicGroupState.EMPTY);
    const groupId = group.groupId;
    if (isInitial) {
      // A new group: give more members time to arrive (group.initial.rebalance.delay.ms).
      const delay = this.ctx.config.classicGroupInitialRebalanceDelayMs;
      const remaining = Math.max(group.rebalanceTimeoutMs() - delay, 0);
      shard.timer.schedule('join', groupId, null, delay, () => shard.runScheduled(() => this.tryCompleteInitialRebalance(shard, groupId, delay, remaining)));
    }
    group.transitionTo(ClassicGroupState.PREPARING_REBALANCE, this.now());
    this.ctx.log.info({ groupId, generationId: group.generationId, reason }, 'preparing to rebalance group');
    if (!isInitial) this.maybeCompleteJoinElseSchedule(op, shard, group);
  }

  protected maybeCompleteJoinElseSchedule(op: Op, shard: Shard, group: ClassicGroup): void {
    if (group.hasAllMembersJoined()) {
      this.completeJoinPhase(op, shard, group);
      return;
    }
    const groupId = group.groupId;
    shard.timer.schedule('join', groupId, null, group.rebalanceTimeoutMs(), () => shard.runScheduled(() => this.completeJoinPhaseById(shard, groupId)));
  }

  protected tryCompleteInitialRebalance(shard: Shard, groupId: string, delayMs: number, remainingMs: number): OpResult<void> {
    const op = new Op();
    const group = this.classicGroup(shard, groupId);
    if (!group) return op.result(undefined);
    if (group.newMemberAdded && remainingMs !== 0) {
      group.newMemberAdded = false;
      const nextDelay = Math.min(this.ctx.config.classicGroupInitialRebalanceDelayMs, remainingMs);
      const nextRemaining = Math.max(remainingMs - delayMs, 0);
      shard.timer.schedule('join', groupId, null, nextDelay, () => shard.runScheduled(() => this.tryCompleteInitialRebalance(shard, groupId, nextDelay, nextRemaining)));
    } else {
      this.completeJoinPhase(op, shard, group);
    }
    return op.result(undefined);
  }

  protected completeJoinPhaseById(shard: Shard, groupId: string): OpResult<void> {
    const op = new Op();
    const group = this.classicGroup(shard, groupId);
    if (group) this.completeJoinPhase(op, shard, group);
    return op.result(undefined);
  }

  /** Kafka's completeClassicGroupJoin. */
  protected completeJoinPhase(op: Op, shard: Shard, group: ClassicGroup): void {
    const groupId = group.groupId;
    shard.timer.cancel('join', groupId);
    const laggards = group.notYetRejoinedMembers().filter((m) => !m.isStatic);
    for (const m of laggards) {
      this.completeSync(m, createSyncGroupResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
      group.remove(m.memberId);
      shard.timer.cancel('heartbeat', groupId, m.memberId);
    }
    if (laggards.length > 0) this.ctx.log.info({ groupId, members: laggards.map((m) => m.memberId) }, 'removed dynamic members that did not rejoin');

    if (group.is(ClassicGroupState.DEAD)) return;
    if (!group.maybeElectNewJoinedLeader() && group.numMembers > 0) {
      // Nobody rejoined: wait until session timeouts remove the members.
      this.ctx.log.error({ groupId }, 'group could not complete its rebalance because no member rejoined');
      shard.timer.schedule('join', groupId, null, group.rebalanceTimeoutMs(), () => shard.runScheduled(() => this.completeJoinPhaseById(shard, groupId)));
      return;
    }
    group.initNextGeneration(this.now());
    this.ctx.events.rebalance(groupId, 'classic');
    if (group.is(ClassicGroupState.EMPTY)) {
      this.ctx.log.info({ groupId, generationId: group.generationId }, 'group is now empty');
      op.add(groupMetadataRecord(group, new Map()), (err) => {
        if (err) this.ctx.log.warn({ groupId, err: err.message }, 'cannot write the empty metadata of a group');
      });
      return;
    }
    this.ctx.log.info({ groupId, generationId: group.generationId, members: group.numMembers, protocol: group.protocolName }, 'stabilized group');
    for (const m of group.members.values()) {
      const response = createJoinGroupResponse({
        members: group.isLeader(m.memberId) ? group.currentMembersForLeader() : [],
        memberId: m.memberId,
        generationId: group.generationId,
        protocolName: group.protocolName,
        protocolType: group.protocolType,
        leader: group.leaderId ?? '',
        skipAssignment: false,
        errorCode: ErrorCode.NONE,
      });
      this.completeJoin(group, m, response);
      this.rescheduleHeartbeat(shard, group, m);
      m.isNew = false;
      group.pendingSyncMembers.add(m.memberId);
    }
    const generation = group.generationId;
    shard.timer.schedule('sync', groupId, null, group.rebalanceTimeoutMs(), () => shard.runScheduled(() => this.expirePendingSync(shard, groupId, generation)));
  }

  protected expirePendingSync(shard: Shard, groupId: string, generationId: number): OpResult<void> {
    const op = new Op();
    const group = this.classicGroup(shard, groupId);
    if (!group || group.generationId !== generationId) return op.result(undefined);
    if ((group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.is(ClassicGroupState.STABLE)) && group.pendingSyncMembers.size > 0) {
      const pending = [...group.pendingSyncMembers];
      for (const memberId of pending) {
        const m = group.members.get(memberId);
        if (m) this.completeSync(m, createSyncGroupResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
        group.remove(memberId);
        shard.timer.cancel('heartbeat', groupId, memberId);
      }
      this.ctx.log.info({ groupId, members: pending }, 'removed members that did not send SyncGroup in time');
      this.prepareRebalance(op, shard, group, `removing ${pending.join(', ')} on pending sync request expiration`);
    }
    return op.result(undefined);
  }

  /** Kafka's expireClassicGroupMemberHeartbeat. */
  protected expireHeartbeat(shard: Shard, groupId: string, memberId: string): OpResult<void> {
    const op = new Op();
    const group = this.classicGroup(shard, groupId);
    if (!group || group.is(ClassicGroupState.DEAD)) return op.result(undefined);
    if (group.pendingJoinMembers.has(memberId)) {
      this.ctx.log.info({ groupId, memberId }, 'pending member removed after its session timeout');
      group.remove(memberId);
      if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) this.completeJoinPhase(op, shard, group);
      return op.result(undefined);
    }
    const member = group.members.get(memberId);
    if (!member || member.hasSatisfiedHeartbeat) return op.result(undefined);
    this.ctx.log.info({ groupId, memberId }, 'member failed its session timeout; removing it from the group');
    this.removeMemberAndUpdateGroup(op, shard, group, member, `removing member ${memberId} on heartbeat expiration`);
    return op.result(undefined);
  }

  protected removeMemberAndUpdateGroup(op: Op, shard: Shard, group: ClassicGroup, member: ClassicGroupMember, reason: string): void {
    // A new member may time out with a parked JoinGroup: answer it so the client can retry.
    this.completeJoin(group, member, createJoinGroupResponse({ memberId: '', errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
    this.completeSync(member, createSyncGroupResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
    group.remove(member.memberId);
    shard.timer.cancel('heartbeat', group.groupId, member.memberId);
    if (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.COMPLETING_REBALANCE)) this.maybePrepareRebalanceOrCompleteJoin(op, shard, group, reason);
    else if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.hasAllMembersJoined()) this.completeJoinPhase(op, shard, group);
  }

  /**
   * The connection of a parked JoinGroup closed. A new member (one that never completed a join phase) cannot
   * come back under its id, so it is removed now instead of after the new-member join timeout.
   */
  joinAbandoned(shard: Shard, groupId: string, memberId: string): OpResult<void> {
    const op = new Op();
    const group = this.classicGroup(shard, groupId);
    const member = group?.members.get(memberId);
    if (group && member && member.isNew && member.isAwaitingJoin) {
      this.ctx.log.info({ groupId, memberId }, 'new member disconnected while awaiting join; removing it');
      this.removeMemberAndUpdateGroup(op, shard, group, member, `new member ${memberId} disconnected`);
    }
    return op.result(undefined);
  }

  protected resetAndPropagateAssignmentWithError(shard: Shard, group: ClassicGroup, errorCode: number): void {
    for (const m of group.members.values()) m.assignment = EMPTY;
    this.propagateAssignment(shard, group, errorCode);
  }

  protected propagateAssignment(shard: Shard, group: ClassicGroup, errorCode: number): void {
    const ok = errorCode === ErrorCode.NONE;
    for (const m of group.members.values()) {
      const sent = this.completeSync(
        m,
        createSyncGroupResponse({
          protocolName: ok ? group.protocolName : null,
          protocolType: ok ? group.protocolType : null,
          assignment: m.assignment,
          errorCode,
        }),
      );
      // Expirations ignored while the member waited: restart its session now.
      if (sent) this.rescheduleHeartbeat(shard, group, m);
    }
  }

  // ------------------------------------------------------------------------------------------- loading

  /** Kafka's onLoaded: every loaded member gets a session timer; an oversized group rebalances. */
  onLoaded(shard: Shard, group: ClassicGroup): void {
    for (const m of group.members.values()) this.rescheduleHeartbeat(shard, group, m);
    if (group.numMembers > this.ctx.config.classicGroupMaxSize) {
      shard.runScheduled(() => {
        const op = new Op();
        if (group.canRebalance()) this.prepareRebalance(op, shard, group, `freshly-loaded group is over capacity ${this.ctx.config.classicGroupMaxSize}`);
        return op.result(undefined);
      });
    }
  }

  /**
   * A consumer group just became this classic group (online downgrade, durable): its members get session timers
   * and, unless a static member took the leaving one's place, must rejoin (Kafka's convertToClassicGroup).
   */
  adoptDowngraded(shard: Shard, groupId: string, rebalance: boolean): void {
    const group = this.classicGroup(shard, groupId);
    if (!group) return;
    for (const m of group.members.values()) this.rescheduleHeartbeat(shard, group, m);
    if (!rebalance) return;
    shard.runScheduled(() => {
      const op = new Op();
      if (shard.groups.get(groupId) === group && group.canRebalance()) this.prepareRebalance(op, shard, group, `downgrade of group ${groupId} from consumer to classic`);
      return op.result(undefined);
    });
  }

  /** The group leaves memory (deleted, converted, or its partition unloaded): answer what is parked. */
  onRemoved(group: ClassicGroup, errorCode: number): void {
    this.failParked(group, errorCode);
  }

  /** DeleteGroups: the group becomes Dead (its parked requests are answered by onRemoved). */
  markDead(group: ClassicGroup): void {
    group.transitionTo(ClassicGroupState.DEAD, this.now());
  }
}
