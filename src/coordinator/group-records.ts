/**
 * Building coordinator records from groups and offsets, and replaying records into them (Kafka's
 * GroupCoordinatorRecordHelpers and the replay methods of GroupMetadataManager / OffsetMetadataManager).
 * Loading a partition replays its log through `replayRecord`; KIP-848 and offset writes replay their own
 * records the same way, so both paths build the same state.
 */
import {
  createConsumerGroupCurrentMemberAssignmentValue,
  createConsumerGroupCurrentMemberAssignmentValueTopicPartitions,
} from '../../protocol/messages/data/group-coordinator/consumer-group-current-member-assignment-value.gen.js';
import {
  createConsumerGroupMemberMetadataValue,
  createConsumerGroupMemberMetadataValueClassicMemberMetadata,
  createConsumerGroupMemberMetadataValueClassicProtocol,
} from '../../protocol/messages/data/group-coordinator/consumer-group-member-metadata-value.gen.js';
import {
  createConsumerGroupPartitionMetadataValue,
  createConsumerGroupPartitionMetadataValueTopicMetadata,
} from '../../protocol/messages/data/group-coordinator/consumer-group-partition-metadata-value.gen.js';
import {
  createConsumerGroupTargetAssignmentMemberValue,
  createConsumerGroupTargetAssignmentMemberValueTopicPartition,
} from '../../protocol/messages/data/group-coordinator/consumer-group-target-assignment-member-value.gen.js';
import { createGroupMetadataValue, createGroupMetadataValueMemberMetadata } from '../../protocol/messages/data/group-coordinator/group-metadata-value.gen.js';
import { ClassicGroup, ClassicGroupMember, ClassicGroupState } from './classic-group.js';
import {
  ConsumerGroup,
  EMPTY_ASSIGNMENT,
  LEAVE_GROUP_MEMBER_EPOCH,
  MemberState,
  newMember,
  type Assignment,
  type ConsumerGroupMember,
  type MemberStateValue,
  type TopicMetadata,
} from './consumer-group.js';
import { offsetFromRecord, offsetToRecord, type OffsetAndMetadata, type OffsetStore } from './offsets.js';
import type { CoordinatorRecord } from './records.js';
import type { TxnOffsets } from './txn-offsets.js';

export type Group = ClassicGroup | ConsumerGroup;

/** What replay changes: one __consumer_offsets partition's groups and offsets. */
export interface ReplayTarget {
  readonly groups: Map<string, Group>;
  readonly offsets: OffsetStore;
  /** Pending transactional offsets (TxnOffsetCommit), committed or dropped by transaction markers. */
  readonly txnOffsets?: TxnOffsets;
  now(): number;
  /** Told when a group object is replaced or removed, so its timers and parked requests can be dropped. */
  onGroupRemoved?(group: Group): void;
}

// ------------------------------------------------------------------------------------------------ builders

export function offsetCommitRecord(groupId: string, topic: string, partition: number, offset: OffsetAndMetadata): CoordinatorRecord {
  return { type: 'OffsetCommit', key: { group: groupId, topic, partition }, value: offsetToRecord(offset) };
}

export function offsetCommitTombstone(groupId: string, topic: string, partition: number): CoordinatorRecord {
  return { type: 'OffsetCommit', key: { group: groupId, topic, partition }, value: null };
}

/** Kafka's newGroupMetadataRecord: the group with every member's subscription (for the selected protocol) and assignment. */
export function groupMetadataRecord(group: ClassicGroup, assignments: ReadonlyMap<string, Buffer>): CoordinatorRecord {
  const protocol = group.protocolName;
  const members = [...group.members.values()].map((m) => {
    if (protocol === null) throw new Error(`group ${group.groupId} has members but no protocol`);
    const assignment = assignments.get(m.memberId);
    if (assignment === undefined) throw new Error(`member ${m.memberId} of group ${group.groupId} has no assignment`);
    return createGroupMetadataValueMemberMetadata({
      memberId: m.memberId,
      groupInstanceId: m.groupInstanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeout: m.rebalanceTimeoutMs,
      sessionTimeout: m.sessionTimeoutMs,
      subscription: m.metadata(protocol),
      assignment,
    });
  });
  return {
    type: 'GroupMetadata',
    key: { group: group.groupId },
    value: createGroupMetadataValue({
      protocolType: group.protocolType ?? '',
      generation: group.generationId,
      protocol,
      leader: group.leaderId,
      currentStateTimestamp: BigInt(group.currentStateTimestampMs ?? -1),
      members,
    }),
  };
}

/** Kafka's newEmptyGroupMetadataRecord: the record that makes a new classic group durable. */
export function emptyGroupMetadataRecord(group: ClassicGroup): CoordinatorRecord {
  return {
    type: 'GroupMetadata',
    key: { group: group.groupId },
    value: createGroupMetadataValue({
      protocolType: '',
      generation: 0,
      protocol: null,
      leader: null,
      currentStateTimestamp: BigInt(group.currentStateTimestampMs ?? -1),
      members: [],
    }),
  };
}

export function groupMetadataTombstone(groupId: string): CoordinatorRecord {
  return { type: 'GroupMetadata', key: { group: groupId }, value: null };
}

export function consumerGroupEpochRecord(groupId: string, epoch: number): CoordinatorRecord {
  return { type: 'ConsumerGroupMetadata', key: { groupId }, value: { epoch, metadataHash: 0n } };
}

export function consumerGroupSubscriptionMetadataRecord(groupId: string, metadata: ReadonlyMap<string, TopicMetadata>): CoordinatorRecord {
  const topics = [...metadata.values()]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) => createConsumerGroupPartitionMetadataValueTopicMetadata({ topicId: t.topicId, topicName: t.name, numPartitions: t.numPartitions, partitionMetadata: [] }));
  return { type: 'ConsumerGroupPartitionMetadata', key: { groupId }, value: createConsumerGroupPartitionMetadataValue({ topics }) };
}

export function consumerGroupMemberSubscriptionRecord(groupId: string, m: ConsumerGroupMember): CoordinatorRecord {
  return {
    type: 'ConsumerGroupMemberMetadata',
    key: { groupId, memberId: m.memberId },
    value: createConsumerGroupMemberMetadataValue({
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...m.subscribedTopicNames],
      subscribedTopicRegex: m.subscribedTopicRegex,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      serverAssignor: m.serverAssignor,
      // Null (the tagged field's default, not written) for members of the consumer protocol.
      classicMemberMetadata:
        m.classicMemberMetadata === null
          ? null
          : createConsumerGroupMemberMetadataValueClassicMemberMetadata({
              sessionTimeoutMs: m.classicMemberMetadata.sessionTimeoutMs,
              supportedProtocols: m.classicMemberMetadata.supportedProtocols.map((p) => createConsumerGroupMemberMetadataValueClassicProtocol({ name: p.name, metadata: p.metadata })),
            }),
    }),
  };
}

function topicPartitionsOf(a: Assignment): Array<{ topicId: string; partitions: number[] }> {
  return [...a]
    .map(([topicId, ps]) => ({ topicId, partitions: [...ps].sort((x, y) => x - y) }))
    .sort((x, y) => (x.topicId < y.topicId ? -1 : x.topicId > y.topicId ? 1 : 0));
}

export function consumerGroupTargetAssignmentRecord(groupId: string, memberId: string, a: Assignment): CoordinatorRecord {
  return {
    type: 'ConsumerGroupTargetAssignmentMember',
    key: { groupId, memberId },
    value: createConsumerGroupTargetAssignmentMemberValue({
      topicPartitions: topicPartitionsOf(a).map((tp) => createConsumerGroupTargetAssignmentMemberValueTopicPartition(tp)),
    }),
  };
}

export function consumerGroupTargetAssignmentEpochRecord(groupId: string, assignmentEpoch: number): CoordinatorRecord {
  return { type: 'ConsumerGroupTargetAssignmentMetadata', key: { groupId }, value: { assignmentEpoch, assignmentTimestamp: 0n } };
}

export function consumerGroupCurrentAssignmentRecord(groupId: string, m: ConsumerGroupMember): CoordinatorRecord {
  return {
    type: 'ConsumerGroupCurrentMemberAssignment',
    key: { groupId, memberId: m.memberId },
    value: createConsumerGroupCurrentMemberAssignmentValue({
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      state: m.state,
      assignedPartitions: topicPartitionsOf(m.assignedPartitions).map((tp) => createConsumerGroupCurrentMemberAssignmentValueTopicPartitions(tp)),
      partitionsPendingRevocation: topicPartitionsOf(m.partitionsPendingRevocation).map((tp) => createConsumerGroupCurrentMemberAssignmentValueTopicPartitions(tp)),
    }),
  };
}

/** Kafka's removeMember records: current assignment, target assignment, then subscription tombstones. */
export function consumerGroupMemberTombstones(groupId: string, memberId: string): CoordinatorRecord[] {
  return [
    { type: 'ConsumerGroupCurrentMemberAssignment', key: { groupId, memberId }, value: null },
    { type: 'ConsumerGroupTargetAssignmentMember', key: { groupId, memberId }, value: null },
    { type: 'ConsumerGroupMemberMetadata', key: { groupId, memberId }, value: null },
  ];
}

/** Kafka's ConsumerGroup.createGroupTombstoneRecords; `alsoMemberIds`: members the same operation adds (createGroupTombstoneRecordsWithReplacedMember). */
export function consumerGroupTombstones(group: ConsumerGroup, alsoMemberIds: readonly string[] = []): CoordinatorRecord[] {
  const out: CoordinatorRecord[] = [];
  const ids = [...new Set([...group.members.keys(), ...alsoMemberIds])];
  for (const id of ids) out.push({ type: 'ConsumerGroupCurrentMemberAssignment', key: { groupId: group.groupId, memberId: id }, value: null });
  for (const id of ids) out.push({ type: 'ConsumerGroupTargetAssignmentMember', key: { groupId: group.groupId, memberId: id }, value: null });
  out.push({ type: 'ConsumerGroupTargetAssignmentMetadata', key: { groupId: group.groupId }, value: null });
  for (const id of ids) out.push({ type: 'ConsumerGroupMemberMetadata', key: { groupId: group.groupId, memberId: id }, value: null });
  out.push({ type: 'ConsumerGroupPartitionMetadata', key: { groupId: group.groupId }, value: null });
  out.push({ type: 'ConsumerGroupMetadata', key: { groupId: group.groupId }, value: null });
  return out;
}

// ------------------------------------------------------------------------------------------------ replay

function assignmentFrom(tps: ReadonlyArray<{ topicId: string; partitions: readonly number[] }>): Assignment {
  const out = new Map<string, Set<number>>();
  for (const tp of tps) {
    if (tp.partitions.length === 0) continue;
    let s = out.get(tp.topicId);
    if (!s) out.set(tp.topicId, (s = new Set()));
    for (const p of tp.partitions) s.add(p);
  }
  return out;
}

/** A simple classic group: created to hold offsets committed without group management (no protocol type). */
export function newSimpleGroup(groupId: string, nowMs: number): ClassicGroup {
  return new ClassicGroup(groupId, { nowMs });
}

function removeGroup(t: ReplayTarget, groupId: string): void {
  const g = t.groups.get(groupId);
  if (!g) return;
  t.groups.delete(groupId);
  t.onGroupRemoved?.(g);
}

/** Kafka's getOrMaybeCreatePersistedConsumerGroup: a simple classic group (offsets only) becomes a consumer group. */
function persistedConsumerGroup(t: ReplayTarget, groupId: string): ConsumerGroup {
  const g = t.groups.get(groupId);
  if (g instanceof ConsumerGroup) return g;
  if (g instanceof ClassicGroup && !(g.isSimpleGroup && g.isEmpty)) {
    throw new Error(`group ${groupId} is a classic group with state ${g.state}; a consumer group record cannot apply to it`);
  }
  if (g) removeGroup(t, groupId);
  const created = new ConsumerGroup(groupId);
  t.groups.set(groupId, created);
  return created;
}

function existingConsumerGroup(t: ReplayTarget, groupId: string): ConsumerGroup | undefined {
  const g = t.groups.get(groupId);
  return g instanceof ConsumerGroup ? g : undefined;
}

/**
 * Replays one record. `producerId` is the producer of a transactional batch (-1 otherwise): its offsets are
 * pending until the transaction's marker (Kafka's OffsetMetadataManager.replay); `recordOffset` orders them
 * against plain commits (txn-offsets.ts).
 */
export function replayRecord(t: ReplayTarget, record: CoordinatorRecord, producerId = -1n, recordOffset?: number): void {
  switch (record.type) {
    case 'OffsetCommit': {
      const { group: groupId, topic, partition } = record.key;
      if (record.value === null) {
        t.offsets.remove(groupId, topic, partition);
        t.txnOffsets?.remove(groupId, topic, partition);
        return;
      }
      if (!t.groups.has(groupId)) t.groups.set(groupId, newSimpleGroup(groupId, t.now()));
      const offset = recordOffset === undefined ? offsetFromRecord(record.value) : { ...offsetFromRecord(record.value), recordOffset };
      if (producerId >= 0n && t.txnOffsets) t.txnOffsets.put(producerId, groupId, topic, partition, offset);
      else t.offsets.put(groupId, topic, partition, offset);
      return;
    }
    case 'GroupMetadata': {
      const groupId = record.key.group;
      if (record.value === null) {
        if (t.groups.get(groupId) instanceof ClassicGroup) removeGroup(t, groupId);
        return;
      }
      const v = record.value;
      const group = new ClassicGroup(groupId, {
        state: v.members.length > 0 ? ClassicGroupState.STABLE : ClassicGroupState.EMPTY,
        generationId: v.generation,
        protocolType: v.protocolType === '' ? null : v.protocolType,
        protocolName: v.protocol,
        leaderId: v.leader,
        currentStateTimestampMs: v.currentStateTimestamp === -1n ? null : Number(v.currentStateTimestamp),
        nowMs: t.now(),
      });
      for (const mm of v.members) {
        const member = new ClassicGroupMember(
          mm.memberId,
          mm.groupInstanceId,
          mm.clientId,
          mm.clientHost,
          mm.rebalanceTimeout === -1 ? mm.sessionTimeout : mm.rebalanceTimeout,
          mm.sessionTimeout,
          v.protocolType,
          [{ name: v.protocol ?? '', metadata: mm.subscription }],
        );
        member.assignment = mm.assignment;
        group.add(member, null);
      }
      group.subscribedTopics = group.computeSubscribedTopics();
      const previous = t.groups.get(groupId);
      if (previous) {
        t.groups.delete(groupId);
        if (previous !== group) t.onGroupRemoved?.(previous);
      }
      t.groups.set(groupId, group);
      return;
    }
    case 'ConsumerGroupMetadata': {
      if (record.value === null) {
        if (existingConsumerGroup(t, record.key.groupId)) removeGroup(t, record.key.groupId);
        return;
      }
      persistedConsumerGroup(t, record.key.groupId).groupEpoch = record.value.epoch;
      return;
    }
    case 'ConsumerGroupPartitionMetadata': {
      const g = record.value === null ? existingConsumerGroup(t, record.key.groupId) : persistedConsumerGroup(t, record.key.groupId);
      if (!g) return;
      const m = new Map<string, TopicMetadata>();
      for (const topic of record.value?.topics ?? []) m.set(topic.topicName, { topicId: topic.topicId, name: topic.topicName, numPartitions: topic.numPartitions });
      g.subscriptionMetadata = m;
      return;
    }
    case 'ConsumerGroupMemberMetadata': {
      const { groupId, memberId } = record.key;
      if (record.value === null) {
        existingConsumerGroup(t, groupId)?.removeMember(memberId);
        return;
      }
      const g = persistedConsumerGroup(t, groupId);
      const v = record.value;
      const old = g.members.get(memberId) ?? newMember(memberId);
      g.updateMember({
        ...old,
        instanceId: v.instanceId,
        rackId: v.rackId,
        clientId: v.clientId,
        clientHost: v.clientHost,
        subscribedTopicNames: [...v.subscribedTopicNames].sort(),
        subscribedTopicRegex: v.subscribedTopicRegex === '' ? null : v.subscribedTopicRegex,
        rebalanceTimeoutMs: v.rebalanceTimeoutMs,
        serverAssignor: v.serverAssignor === '' ? null : v.serverAssignor,
        classicMemberMetadata:
          v.classicMemberMetadata === null
            ? null
            : {
                sessionTimeoutMs: v.classicMemberMetadata.sessionTimeoutMs,
                supportedProtocols: v.classicMemberMetadata.supportedProtocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
              },
      });
      return;
    }
    case 'ConsumerGroupTargetAssignmentMetadata': {
      const g = record.value === null ? existingConsumerGroup(t, record.key.groupId) : persistedConsumerGroup(t, record.key.groupId);
      if (g) g.assignmentEpoch = record.value?.assignmentEpoch ?? 0;
      return;
    }
    case 'ConsumerGroupTargetAssignmentMember': {
      const { groupId, memberId } = record.key;
      if (record.value === null) {
        existingConsumerGroup(t, groupId)?.targetAssignment.delete(memberId);
        return;
      }
      persistedConsumerGroup(t, groupId).targetAssignment.set(memberId, assignmentFrom(record.value.topicPartitions));
      return;
    }
    case 'ConsumerGroupCurrentMemberAssignment': {
      const { groupId, memberId } = record.key;
      if (record.value === null) {
        const g = existingConsumerGroup(t, groupId);
        const m = g?.members.get(memberId);
        if (g && m) {
          g.updateMember({
            ...m,
            memberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
            previousMemberEpoch: LEAVE_GROUP_MEMBER_EPOCH,
            assignedPartitions: EMPTY_ASSIGNMENT,
            partitionsPendingRevocation: EMPTY_ASSIGNMENT,
          });
        }
        return;
      }
      const g = persistedConsumerGroup(t, groupId);
      const v = record.value;
      const known: readonly number[] = [MemberState.STABLE, MemberState.UNREVOKED_PARTITIONS, MemberState.UNRELEASED_PARTITIONS];
      const old = g.members.get(memberId) ?? newMember(memberId);
      g.updateMember({
        ...old,
        memberEpoch: v.memberEpoch,
        previousMemberEpoch: v.previousMemberEpoch,
        state: (known.includes(v.state) ? v.state : MemberState.UNKNOWN) as MemberStateValue,
        assignedPartitions: assignmentFrom(v.assignedPartitions),
        partitionsPendingRevocation: assignmentFrom(v.partitionsPendingRevocation),
      });
      return;
    }
    case 'Unknown':
      return;
  }
}
