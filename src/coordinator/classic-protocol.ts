/**
 * The classic rebalance protocol: JoinGroup, SyncGroup, Heartbeat and LeaveGroup against classic groups, with
 * Kafka's timers (GroupMetadataManager's classicGroup* methods, Kafka 3.9/4.0 behaviour).
 *
 * The group state machine and its timers (rebalance, join and sync phases, session expiry) are in
 * classic-rebalance.ts, which this class extends.
 *
 * Kafka behaviours kept: KIP-394 member ids (MEMBER_ID_REQUIRED from JoinGroup v4), KIP-345 static members
 * (FENCED_INSTANCE_ID, a known instance rejoining a Stable group takes over its assignment without a rebalance,
 * v9 skipAssignment for a static leader), group.initial.rebalance.delay.ms extended while members keep
 * arriving, group.max.size (GROUP_MAX_SIZE_REACHED), protocol selection by vote (INCONSISTENT_GROUP_PROTOCOL),
 * and the error Kafka returns for each request in each state. Cooperative rebalancing (KIP-429) is driven by
 * the clients; the coordinator treats its extra rebalances like any other.
 *
 * Operations return OpResult (shard.ts): records to persist (GroupMetadata, not replayed: the operation has
 * already changed the group) and the response, which for JoinGroup and SyncGroup is a promise completed when
 * the phase ends.
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../protocol/error-codes.js';
import { createHeartbeatResponse, type HeartbeatRequest, type HeartbeatResponse } from '../../protocol/messages/012-heartbeat.gen.js';
import { createJoinGroupResponse, type JoinGroupRequest, type JoinGroupResponse } from '../../protocol/messages/011-join-group.gen.js';
import {
  createLeaveGroupResponse,
  createLeaveGroupResponseMemberResponse,
  type LeaveGroupRequestMemberIdentity,
  type LeaveGroupResponse,
  type LeaveGroupResponseMemberResponse,
} from '../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupResponse, type SyncGroupRequest, type SyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { ClassicGroup, ClassicGroupMember, ClassicGroupState, type ClassicProtocol, type Responder } from './classic-group.js';
import { deferred, Op } from './classic-op.js';
import { ClassicRebalance } from './classic-rebalance.js';
import { ConsumerGroup } from './consumer-group.js';
import type { RequestInfo } from './context.js';
import { GroupApiError } from './errors.js';
import { consumerGroupTombstones, emptyGroupMetadataRecord, groupMetadataRecord, replayRecord } from './group-records.js';
import type { OpResult, Shard } from './shard.js';
import { classicMemberId } from './string-bounds.js';

const EMPTY = Buffer.alloc(0);

export interface JoinHandle {
  readonly response: Promise<JoinGroupResponse>;
  /** The member whose JoinGroup is parked (null when answered at once). */
  readonly parkedMemberId: string | null;
}

function isProtocolInconsistent(requested: string | null, actual: string | null): boolean {
  return requested !== null && actual !== null && requested !== actual;
}

export class ClassicGroupProtocol extends ClassicRebalance {
  // ------------------------------------------------------------------------------------------- JoinGroup

  /** Kafka's classicGroupJoin. The session timeout and group id were validated by the caller. */
  join(shard: Shard, req: JoinGroupRequest, info: RequestInfo): OpResult<JoinHandle> {
    const op = new Op();
    const d = deferred<JoinGroupResponse>();
    let parked: string | null = null;
    const respond = (r: Partial<JoinGroupResponse>): void => d.resolve(createJoinGroupResponse(r));
    const groupId = req.groupId;
    const memberId = req.memberId;
    const isUnknownMember = memberId === '';

    const existing = shard.groups.get(groupId);
    if (existing instanceof ConsumerGroup) {
      // A KIP-848 group with members takes classic members itself (ConsumerGroupProtocol.classicJoin).
      if (!existing.isEmpty) throw new Error(`group ${groupId} is a consumer group with members`);
      // Kafka's maybeDeleteEmptyConsumerGroup: an empty KIP-848 group becomes a classic group.
      for (const r of consumerGroupTombstones(existing)) {
        replayRecord(shard, r);
        op.add(r);
      }
    }

    const isNewGroup = !shard.groups.has(groupId);
    let group = this.classicGroup(shard, groupId);
    if (group === null) {
      if (!isUnknownMember) {
        respond({ memberId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
        return op.result({ response: d.promise, parkedMemberId: null });
      }
      group = new ClassicGroup(groupId, { nowMs: this.now() });
      shard.groups.set(groupId, group);
    }

    const recordsBefore = op.records.length;
    if (!this.acceptJoiningMember(group, memberId)) {
      group.remove(memberId);
      respond({ memberId: '', errorCode: ErrorCode.GROUP_MAX_SIZE_REACHED });
    } else if (isUnknownMember) {
      parked = this.joinNewMember(op, shard, group, req, info, d.resolve, respond);
    } else {
      parked = this.joinExistingMember(op, shard, group, req, info, d.resolve, respond);
    }

    if (isNewGroup && op.records.length === recordsBefore) {
      // Kafka writes an empty GroupMetadata record so that a new group exists durably.
      const g = group;
      op.add(emptyGroupMetadataRecord(g), (err) => {
        if (err) respond({ memberId: '', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
      });
    }
    return op.result({ response: d.promise, parkedMemberId: parked });
  }

  /** Kafka's acceptJoiningMember (group.max.size). */
  private acceptJoiningMember(group: ClassicGroup, memberId: string): boolean {
    const max = this.ctx.config.classicGroupMaxSize;
    switch (group.state) {
      case ClassicGroupState.EMPTY:
      case ClassicGroupState.DEAD:
        return true;
      case ClassicGroupState.PREPARING_REBALANCE:
        // Counting awaiting members lets the last rejoining members be kicked out when the size shrank.
        return (group.hasMember(memberId) && group.member(memberId).isAwaitingJoin) || group.numMembersAwaitingJoin < max;
      default:
        return group.hasMember(memberId) || group.numMembers < max;
    }
  }

  private joinNewMember(
    op: Op,
    shard: Shard,
    group: ClassicGroup,
    req: JoinGroupRequest,
    info: RequestInfo,
    responder: Responder<JoinGroupResponse>,
    respond: (r: Partial<JoinGroupResponse>) => void,
  ): string | null {
    if (group.is(ClassicGroupState.DEAD)) {
      respond({ memberId: '', errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
      return null;
    }
    if (!group.supportsProtocols(req.protocolType, req.protocols)) {
      respond({ memberId: '', errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });
      return null;
    }
    const newMemberId = classicMemberId(req.groupInstanceId ?? info.clientId, randomUUID());
    if (req.groupInstanceId !== null) {
      const existingMemberId = group.staticMemberId(req.groupInstanceId);
      if (existingMemberId !== undefined) {
        this.ctx.log.info({ groupId: group.groupId, groupInstanceId: req.groupInstanceId, state: group.state, existingMemberId }, 'static member with unknown member id rejoins; replacing its member id');
        this.updateStaticMemberThenRebalanceOrCompleteJoin(op, shard, group, req, info, existingMemberId, newMemberId, responder);
        return newMemberId;
      }
      this.addMemberThenRebalanceOrCompleteJoin(op, shard, group, req, info, newMemberId, responder);
      return newMemberId;
    }
    if (info.apiVersion >= 4) {
      // KIP-394: hand out the member id and let the client join again with it.
      group.pendingJoinMembers.add(newMemberId);
      const groupId = group.groupId;
      shard.timer.schedule('heartbeat', groupId, newMemberId, req.sessionTimeoutMs, () => shard.runScheduled(() => this.expireHeartbeat(shard, groupId, newMemberId)));
      respond({ memberId: newMemberId, errorCode: ErrorCode.MEMBER_ID_REQUIRED });
      return null;
    }
    this.addMemberThenRebalanceOrCompleteJoin(op, shard, group, req, info, newMemberId, responder);
    return newMemberId;
  }

  private joinExistingMember(
    op: Op,
    shard: Shard,
    group: ClassicGroup,
    req: JoinGroupRequest,
    info: RequestInfo,
    responder: Responder<JoinGroupResponse>,
    respond: (r: Partial<JoinGroupResponse>) => void,
  ): string | null {
    const memberId = req.memberId;
    if (group.is(ClassicGroupState.DEAD)) {
      respond({ memberId, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE });
      return null;
    }
    if (!group.supportsProtocols(req.protocolType, req.protocols)) {
      respond({ memberId, errorCode: ErrorCode.INCONSISTENT_GROUP_PROTOCOL });
      return null;
    }
    if (group.pendingJoinMembers.has(memberId)) {
      if (req.groupInstanceId !== null) {
        // A pending member is always dynamic (static members never get MEMBER_ID_REQUIRED).
        respond({ memberId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
        return null;
      }
      this.addMemberThenRebalanceOrCompleteJoin(op, shard, group, req, info, memberId, responder);
      return memberId;
    }
    try {
      this.validateMember(group, memberId, req.groupInstanceId, 'join-group');
    } catch (e) {
      if (!(e instanceof GroupApiError)) throw e;
      respond({ memberId, errorCode: e.errorCode, protocolType: null, protocolName: null });
      return null;
    }
    const member = group.member(memberId);
    const current = (): Partial<JoinGroupResponse> => ({
      memberId,
      generationId: group.generationId,
      protocolName: group.protocolName,
      protocolType: group.protocolType,
      leader: group.leaderId ?? '',
      skipAssignment: false,
    });
    switch (group.state) {
      case ClassicGroupState.PREPARING_REBALANCE:
        this.updateMemberThenRebalanceOrCompleteJoin(op, shard, group, member, req, responder, `member ${memberId} is joining group during ${group.state}`);
        return memberId;
      case ClassicGroupState.COMPLETING_REBALANCE:
        if (member.matches(req.protocols)) {
          // It may have missed the JoinGroup response: give it the current generation again.
          respond({ ...current(), members: group.isLeader(memberId) ? group.currentMembersForLeader() : [] });
          return null;
        }
        this.updateMemberThenRebalanceOrCompleteJoin(op, shard, group, member, req, responder, `updating metadata for member ${memberId} during ${group.state}`);
        return memberId;
      case ClassicGroupState.STABLE:
        if (group.isLeader(memberId) || !member.matches(req.protocols)) {
          // The leader rejoins to make the group rebalance (e.g. after a topic metadata change).
          this.updateMemberThenRebalanceOrCompleteJoin(op, shard, group, member, req, responder, `member ${memberId} rejoins a Stable group`);
          return memberId;
        }
        respond({ ...current(), members: [] });
        return null;
      default:
        this.ctx.log.warn({ groupId: group.groupId, memberId, state: group.state }, 'rejoining member in unexpected group state');
        respond({ memberId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
        return null;
    }
  }

  private addMemberThenRebalanceOrCompleteJoin(
    op: Op,
    shard: Shard,
    group: ClassicGroup,
    req: JoinGroupRequest,
    info: RequestInfo,
    memberId: string,
    responder: Responder<JoinGroupResponse>,
  ): void {
    const member = new ClassicGroupMember(
      memberId,
      req.groupInstanceId,
      info.clientId,
      info.clientHost,
      req.rebalanceTimeoutMs,
      req.sessionTimeoutMs,
      req.protocolType,
      copyProtocols(req.protocols),
    );
    member.isNew = true;
    if (group.is(ClassicGroupState.PREPARING_REBALANCE) && group.previousState === ClassicGroupState.EMPTY) group.newMemberAdded = true;
    group.add(member, responder);
    // New members cannot heartbeat yet and parked requests hide disconnects: bound the wait.
    this.rescheduleHeartbeat(shard, group, member, this.ctx.config.classicGroupNewMemberJoinTimeoutMs);
    this.maybePrepareRebalanceOrCompleteJoin(op, shard, group, `adding new member ${memberId} with group instance id ${req.groupInstanceId}; client reason: ${req.reason ?? 'not provided'}`);
  }

  private updateMemberThenRebalanceOrCompleteJoin(
    op: Op,
    shard: Shard,
    group: ClassicGroup,
    member: ClassicGroupMember,
    req: JoinGroupRequest,
    responder: Responder<JoinGroupResponse>,
    reason: string,
  ): void {
    group.updateMember(member, copyProtocols(req.protocols), req.rebalanceTimeoutMs, req.sessionTimeoutMs, responder);
    this.maybePrepareRebalanceOrCompleteJoin(op, shard, group, `${reason}; client reason: ${req.reason ?? 'not provided'}`);
  }

  private updateStaticMemberThenRebalanceOrCompleteJoin(
    op: Op,
    shard: Shard,
    group: ClassicGroup,
    req: JoinGroupRequest,
    info: RequestInfo,
    oldMemberId: string,
    newMemberId: string,
    responder: Responder<JoinGroupResponse>,
  ): void {
    const instanceId = req.groupInstanceId!;
    const currentLeader = group.leaderId;
    const member = group.replaceStaticMember(instanceId, oldMemberId, newMemberId, (old) => {
      // Fence a duplicate instance still waiting under the old id.
      this.completeJoin(group, old, createJoinGroupResponse({ memberId: oldMemberId, protocolName: null, protocolType: null, leader: '', errorCode: ErrorCode.FENCED_INSTANCE_ID }));
      this.completeSync(old, createSyncGroupResponse({ errorCode: ErrorCode.FENCED_INSTANCE_ID, assignment: EMPTY }));
    });
    shard.timer.cancel('heartbeat', group.groupId, oldMemberId);
    this.rescheduleHeartbeat(shard, group, member);
    const oldProtocols = member.supportedProtocols;
    const oldRebalance = member.rebalanceTimeoutMs;
    const oldSession = member.sessionTimeoutMs;
    group.updateMember(member, copyProtocols(req.protocols), req.rebalanceTimeoutMs, req.sessionTimeoutMs, responder);

    switch (group.state) {
      case ClassicGroupState.STABLE: {
        // KIP-345: if the selected protocol stays, persist the new member id and skip the rebalance.
        if ((group.protocolName ?? '') === group.selectProtocol()) {
          const assignments = new Map([...group.members.values()].map((m) => [m.memberId, m.assignment]));
          op.add(groupMetadataRecord(group, assignments), (err) => {
            if (err) {
              this.ctx.log.warn({ groupId: group.groupId, groupInstanceId: instanceId, err: err.message }, 'cannot persist the new member id of a static member; reverting');
              group.updateMember(member, oldProtocols, oldRebalance, oldSession, null);
              const reverted = group.replaceStaticMember(instanceId, newMemberId, oldMemberId, () => undefined);
              this.rescheduleHeartbeat(shard, group, reverted);
              responder(
                createJoinGroupResponse({
                  memberId: '',
                  generationId: group.generationId,
                  protocolName: group.protocolName,
                  protocolType: group.protocolType,
                  leader: currentLeader ?? '',
                  errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE,
                }),
              );
              return;
            }
            const isLeader = group.isLeader(newMemberId);
            const skip = info.apiVersion >= 9;
            this.completeJoin(
              group,
              member,
              createJoinGroupResponse({
                // v9+: a static leader gets the members but must not compute a new assignment (KIP-814).
                members: skip && isLeader ? group.currentMembersForLeader() : [],
                memberId: newMemberId,
                generationId: group.generationId,
                protocolName: group.protocolName,
                protocolType: group.protocolType,
                leader: (skip ? group.leaderId : currentLeader) ?? '',
                skipAssignment: skip && isLeader,
              }),
            );
          });
          return;
        }
        this.maybePrepareRebalanceOrCompleteJoin(op, shard, group, `static member ${newMemberId} with instance id ${instanceId} joined with a change of protocol`);
        return;
      }
      case ClassicGroupState.COMPLETING_REBALANCE:
        // The old id may already be in the leader's assignment: rebalance so the new id gets one.
        this.prepareRebalance(op, shard, group, `updating metadata for static member ${newMemberId} with instance id ${instanceId}`);
        return;
      case ClassicGroupState.EMPTY:
      case ClassicGroupState.DEAD:
        throw new Error(`group ${group.groupId} in state ${group.state} cannot have static member ${instanceId}`);
      default:
        this.maybeCompleteJoinPhase(op, shard, group);
    }
  }

  // ------------------------------------------------------------------------------------------- SyncGroup

  sync(shard: Shard, req: SyncGroupRequest): OpResult<Promise<SyncGroupResponse>> {
    const op = new Op();
    const d = deferred<SyncGroupResponse>();
    const respond = (r: Partial<SyncGroupResponse>): void => d.resolve(createSyncGroupResponse(r));
    const g = shard.groups.get(req.groupId);
    // Kafka: an unknown or empty group, or a KIP-848 group (whose members do not sync), means an unknown member.
    if (!(g instanceof ClassicGroup) || g.isEmpty) {
      respond({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
      return op.result(d.promise);
    }
    const group = g;
    const memberId = req.memberId;
    const error = this.validateSync(group, req);
    if (error !== null) {
      respond({ errorCode: error });
    } else if (group.is(ClassicGroupState.PREPARING_REBALANCE)) {
      respond({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS });
    } else if (group.is(ClassicGroupState.COMPLETING_REBALANCE)) {
      group.member(memberId).awaitingSync = d.resolve;
      this.removePendingSyncMember(shard, group, memberId);
      if (group.isLeader(memberId)) {
        this.ctx.log.info({ groupId: group.groupId, memberId, generationId: group.generationId, members: group.numMembers }, 'assignment received from the leader');
        const assignment = new Map<string, Buffer>();
        for (const a of req.assignments) assignment.set(a.memberId, a.assignment);
        for (const id of group.members.keys()) if (!assignment.has(id)) assignment.set(id, EMPTY);
        const generation = req.generationId;
        op.add(groupMetadataRecord(group, assignment), (err) => {
          // Another member may have joined meanwhile: only act on the same generation, still completing.
          if (shard.groups.get(group.groupId) !== group || !group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.generationId !== generation) return;
          if (err) {
            this.resetAndPropagateAssignmentWithError(shard, group, ErrorCode.COORDINATOR_NOT_AVAILABLE);
            return;
          }
          for (const m of group.members.values()) m.assignment = assignment.get(m.memberId) ?? EMPTY;
          this.propagateAssignment(shard, group, ErrorCode.NONE);
          group.transitionTo(ClassicGroupState.STABLE, this.now());
        });
      }
    } else if (group.is(ClassicGroupState.STABLE)) {
      this.removePendingSyncMember(shard, group, memberId);
      respond({ protocolType: group.protocolType, protocolName: group.protocolName, assignment: group.member(memberId).assignment });
    }
    return op.result(d.promise);
  }

  private validateSync(group: ClassicGroup, req: SyncGroupRequest): number | null {
    if (group.is(ClassicGroupState.DEAD)) return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    try {
      this.validateMember(group, req.memberId, req.groupInstanceId, 'sync-group');
    } catch (e) {
      if (e instanceof GroupApiError) return e.errorCode;
      throw e;
    }
    if (req.generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    if (isProtocolInconsistent(req.protocolType, group.protocolType) || isProtocolInconsistent(req.protocolName, group.protocolName)) return ErrorCode.INCONSISTENT_GROUP_PROTOCOL;
    return null;
  }

  private removePendingSyncMember(shard: Shard, group: ClassicGroup, memberId: string): void {
    group.pendingSyncMembers.delete(memberId);
    if (group.pendingSyncMembers.size === 0 || !(group.is(ClassicGroupState.COMPLETING_REBALANCE) || group.is(ClassicGroupState.STABLE))) {
      shard.timer.cancel('sync', group.groupId);
    }
  }

  // ------------------------------------------------------------------------------------------- Heartbeat

  heartbeat(shard: Shard, req: HeartbeatRequest): OpResult<HeartbeatResponse> {
    const op = new Op();
    const g = shard.groups.get(req.groupId);
    if (!(g instanceof ClassicGroup)) throw new GroupApiError(ErrorCode.UNKNOWN_MEMBER_ID, `Group ${req.groupId} not found.`, { groupId: req.groupId });
    if (g.is(ClassicGroupState.DEAD)) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE, undefined, { groupId: req.groupId });
    this.validateMember(g, req.memberId, req.groupInstanceId, 'heartbeat');
    if (req.generationId !== g.generationId) throw new GroupApiError(ErrorCode.ILLEGAL_GENERATION, undefined, { groupId: req.groupId, memberId: req.memberId });
    switch (g.state) {
      case ClassicGroupState.EMPTY:
        return op.result(createHeartbeatResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
      case ClassicGroupState.PREPARING_REBALANCE:
        this.rescheduleHeartbeat(shard, g, g.member(req.memberId));
        return op.result(createHeartbeatResponse({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS }));
      default:
        // Members may heartbeat between their JoinGroup and SyncGroup responses.
        this.rescheduleHeartbeat(shard, g, g.member(req.memberId));
        return op.result(createHeartbeatResponse({ errorCode: ErrorCode.NONE }));
    }
  }

  /** An OffsetCommit from a member of a Stable or rebalancing group keeps its session alive (Kafka). */
  commitKeepsAlive(shard: Shard, group: ClassicGroup, memberId: string): void {
    const m = group.members.get(memberId);
    if (m && (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.PREPARING_REBALANCE))) this.rescheduleHeartbeat(shard, group, m);
  }

  // ------------------------------------------------------------------------------------------- LeaveGroup

  /** Kafka's classicGroupLeave (v3+ batch form; the caller maps v0-2). */
  leave(shard: Shard, groupId: string, members: readonly LeaveGroupRequestMemberIdentity[]): OpResult<LeaveGroupResponse> {
    const op = new Op();
    const g = shard.groups.get(groupId);
    if (!(g instanceof ClassicGroup)) {
      // Kafka answers an unknown group (or a KIP-848 group: no classic members there) per member.
      return op.result(
        createLeaveGroupResponse({
          members: members.map((m) => createLeaveGroupResponseMemberResponse({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: ErrorCode.UNKNOWN_MEMBER_ID })),
        }),
      );
    }
    const group = g;
    if (group.is(ClassicGroupState.DEAD)) return op.result(createLeaveGroupResponse({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE }));

    const responses: LeaveGroupResponseMemberResponse[] = [];
    const left: string[] = [];
    for (const m of members) {
      const reason = m.reason ?? 'not provided';
      const response = createLeaveGroupResponseMemberResponse({ memberId: m.memberId, groupInstanceId: m.groupInstanceId });
      responses.push(response);
      if (m.memberId === '') {
        // Administrative removal of a static member by instance id.
        const id = m.groupInstanceId !== null ? group.staticMemberId(m.groupInstanceId) : undefined;
        if (id === undefined) {
          response.errorCode = ErrorCode.UNKNOWN_MEMBER_ID;
          continue;
        }
        this.removeCurrentMember(shard, group, id, reason);
        left.push(id);
      } else if (group.pendingJoinMembers.has(m.memberId)) {
        group.remove(m.memberId);
        shard.timer.cancel('heartbeat', groupId, m.memberId);
        this.ctx.log.info({ groupId, memberId: m.memberId, reason }, 'pending member left the group');
        left.push(m.memberId);
      } else {
        try {
          this.validateMember(group, m.memberId, m.groupInstanceId, 'leave-group');
        } catch (e) {
          if (!(e instanceof GroupApiError)) throw e;
          response.errorCode = e.errorCode;
          continue;
        }
        this.removeCurrentMember(shard, group, m.memberId, reason);
        left.push(m.memberId);
      }
    }
    if (left.length > 0) {
      const reason = `explicit LeaveGroup request for (${left.join(', ')}) members`;
      if (group.is(ClassicGroupState.STABLE) || group.is(ClassicGroupState.COMPLETING_REBALANCE)) this.maybePrepareRebalanceOrCompleteJoin(op, shard, group, reason);
      else if (group.is(ClassicGroupState.PREPARING_REBALANCE)) this.maybeCompleteJoinPhase(op, shard, group);
    }
    return op.result(createLeaveGroupResponse({ members: responses }));
  }

  private removeCurrentMember(shard: Shard, group: ClassicGroup, memberId: string, reason: string): void {
    const member = group.member(memberId);
    shard.timer.cancel('heartbeat', group.groupId, memberId);
    this.ctx.log.info({ groupId: group.groupId, memberId, reason }, 'member left the group');
    this.completeJoin(group, member, createJoinGroupResponse({ memberId: '', errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
    this.completeSync(member, createSyncGroupResponse({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID }));
    group.remove(memberId);
  }

}

function copyProtocols(ps: readonly ClassicProtocol[]): ClassicProtocol[] {
  return ps.map((p) => ({ name: p.name, metadata: p.metadata }));
}
