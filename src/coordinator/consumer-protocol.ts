/**
 * The KIP-848 protocol as the coordinator calls it: ConsumerGroupHeartbeat (consumer-heartbeat.ts, extended
 * here) and, during an online migration between the protocols, the classic members of a consumer group:
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup served from the consumer group's state (Kafka's
 * classicGroup*ToConsumerGroup methods).
 */
import { ErrorCode } from '../../protocol/error-codes.js';
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
import { CONSUMER_PROTOCOL_TYPE } from './classic-group.js';
import { ConsumerGroup, MemberState, newMember, usesClassicProtocol, type ConsumerGroupMember } from './consumer-group.js';
import type { RequestInfo } from './context.js';
import { ConsumerHeartbeatProtocol, metadataEquals } from './consumer-heartbeat.js';
import { GroupApiError } from './errors.js';
import { consumerGroupEpochRecord, consumerGroupMemberTombstones, consumerGroupSubscriptionMetadataRecord } from './group-records.js';
import { EmbeddedProtocolError, parseSubscription, serializeAssignment, type EmbeddedSubscription } from './embedded-protocol.js';
import { downgradeRecords, toTopicPartitions } from './group-conversion.js';
import type { CoordinatorRecord } from './records.js';
import type { OpResult, Shard } from './shard.js';

export { MEMBER_TIMERS, type ConsumerGroupProtocolHooks } from './consumer-heartbeat.js';
export { compileTopicRegex, type ConsumerHeartbeatInput } from './consumer-heartbeat-request.js';

export class ConsumerGroupProtocol extends ConsumerHeartbeatProtocol {
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
}
