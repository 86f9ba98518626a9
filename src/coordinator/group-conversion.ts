/**
 * Online conversion of a group between the two protocols (KIP-848's migration path, Kafka's
 * ConsumerGroup.fromClassicGroup and ClassicGroup.fromConsumerGroup), as the records that make it durable:
 *
 * ```
 *   classic ──a ConsumerGroupHeartbeat joins──────────────────────────► consumer   (upgrade)
 *     GroupMetadata tombstone; per member: subscription (with its classic metadata), target = current =
 *     its last classic assignment, at member epoch = generation; group epoch = assignment epoch = generation
 *
 *   consumer ──the last consumer-protocol member leaves, classic ones remain──► classic   (downgrade)
 *     every ConsumerGroup* tombstone; a GroupMetadata record: generation = group epoch, the protocol the
 *     members vote for, each member's target assignment in its subscription's version; then a rebalance
 * ```
 *
 * `group.consumer.migration.policy` (bidirectional by default, as in Kafka 4) allows either direction.
 */
import { ClassicGroup, ClassicGroupMember, CONSUMER_PROTOCOL_TYPE } from './classic-group.js';
import { ConsumerGroup, MemberState, newMember, type Assignment, type ConsumerGroupMember } from './consumer-group.js';
import type { TopicView } from './context.js';
import { parseAssignment, parseSubscription, serializeAssignment, type TopicPartitions } from './embedded-protocol.js';
import {
  consumerGroupCurrentAssignmentRecord,
  consumerGroupEpochRecord,
  consumerGroupMemberSubscriptionRecord,
  consumerGroupTargetAssignmentEpochRecord,
  consumerGroupTargetAssignmentRecord,
  consumerGroupTombstones,
  groupMetadataRecord,
  groupMetadataTombstone,
  replayRecord,
} from './group-records.js';
import { OffsetStore } from './offsets.js';
import type { CoordinatorRecord } from './records.js';

/** Partitions by topic name → by topic id; topics that no longer exist are dropped. */
export function toAssignment(partitions: readonly TopicPartitions[], topics: TopicView): Assignment {
  const out = new Map<string, Set<number>>();
  for (const tp of partitions) {
    const t = topics.get(tp.topic);
    if (!t || tp.partitions.length === 0) continue;
    let ps = out.get(t.topicId);
    if (!ps) out.set(t.topicId, (ps = new Set()));
    for (const p of tp.partitions) ps.add(p);
  }
  return out;
}

/** Partitions by topic id → by topic name, sorted; topics that no longer exist are dropped. */
export function toTopicPartitions(a: Assignment, topics: TopicView): TopicPartitions[] {
  const out: TopicPartitions[] = [];
  for (const [topicId, ps] of a) {
    const t = topics.getById(topicId);
    if (t) out.push({ topic: t.name, partitions: [...ps].sort((x, y) => x - y) });
  }
  return out.sort((x, y) => (x.topic < y.topic ? -1 : x.topic > y.topic ? 1 : 0));
}

/**
 * The records turning a classic group that uses the consumer protocol into a consumer group, and that group as
 * they build it. Throws EmbeddedProtocolError when a member's subscription or assignment does not parse.
 */
export function upgradeRecords(classic: ClassicGroup, topics: TopicView, nowMs: number): { records: CoordinatorRecord[]; group: ConsumerGroup } {
  const protocol = classic.protocolName;
  const generation = classic.generationId;
  const members: ConsumerGroupMember[] = [];
  for (const m of classic.members.values()) {
    // A member that joined a rebalance not completed yet has no metadata for a protocol: read its first one.
    const metadata = protocol !== null && m.supportedProtocols.some((p) => p.name === protocol) ? m.metadata(protocol) : m.supportedProtocols[0]!.metadata;
    const subscription = parseSubscription(metadata);
    const assigned = toAssignment(parseAssignment(m.assignment), topics);
    members.push({
      ...newMember(m.memberId),
      memberEpoch: generation,
      previousMemberEpoch: generation,
      state: MemberState.STABLE,
      instanceId: m.groupInstanceId,
      rackId: subscription.rackId,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: [...new Set(subscription.topics)].sort(),
      assignedPartitions: assigned,
      classicMemberMetadata: { sessionTimeoutMs: m.sessionTimeoutMs, supportedProtocols: m.supportedProtocols.map((p) => ({ name: p.name, metadata: p.metadata })) },
    });
  }
  const groupId = classic.groupId;
  const records: CoordinatorRecord[] = [groupMetadataTombstone(groupId)];
  for (const m of members) records.push(consumerGroupMemberSubscriptionRecord(groupId, m));
  records.push(consumerGroupEpochRecord(groupId, generation));
  for (const m of members) records.push(consumerGroupTargetAssignmentRecord(groupId, m.memberId, m.assignedPartitions));
  records.push(consumerGroupTargetAssignmentEpochRecord(groupId, generation));
  for (const m of members) records.push(consumerGroupCurrentAssignmentRecord(groupId, m));
  return { records, group: replayed(records, groupId, nowMs) };
}

/**
 * The records turning a consumer group whose remaining members all speak the classic protocol into a classic
 * group, without `leavingMemberId`. The classic group has the group epoch as its generation and every member's
 * target assignment. When a static member speaking the classic protocol replaces the leaving one (`joining`),
 * it takes the leaving member's place and assignment and no rebalance is needed; otherwise the group must
 * rebalance.
 */
export function downgradeRecords(group: ConsumerGroup, leavingMemberId: string, topics: TopicView, nowMs: number, joining?: ConsumerGroupMember): CoordinatorRecord[] {
  const classic = new ClassicGroup(group.groupId, { generationId: group.groupEpoch, protocolType: CONSUMER_PROTOCOL_TYPE, nowMs });
  const members = [...group.members.values()].filter((m) => m.memberId !== leavingMemberId);
  if (joining) members.push(joining);
  const targetOf = (memberId: string): Assignment => group.targetAssignmentOf(joining && memberId === joining.memberId ? leavingMemberId : memberId);
  for (const m of members) {
    const meta = m.classicMemberMetadata!;
    classic.add(
      new ClassicGroupMember(m.memberId, m.instanceId, m.clientId, m.clientHost, m.rebalanceTimeoutMs, meta.sessionTimeoutMs, CONSUMER_PROTOCOL_TYPE, meta.supportedProtocols),
      null,
    );
  }
  classic.protocolName = classic.selectProtocol();
  const assignments = new Map<string, Buffer>();
  for (const m of classic.members.values()) {
    const version = parseSubscription(m.metadata(classic.protocolName)).version;
    assignments.set(m.memberId, serializeAssignment(toTopicPartitions(targetOf(m.memberId), topics), version));
  }
  return [...consumerGroupTombstones(group, joining ? [joining.memberId] : []), groupMetadataRecord(classic, assignments)];
}

/** A consumer group as `records` build it, in a scratch state. */
function replayed(records: readonly CoordinatorRecord[], groupId: string, nowMs: number): ConsumerGroup {
  const scratch = { groups: new Map(), offsets: new OffsetStore(), now: () => nowMs };
  for (const r of records) replayRecord(scratch, r);
  const g = scratch.groups.get(groupId);
  if (!(g instanceof ConsumerGroup)) throw new Error(`upgrade records of ${groupId} build no consumer group`);
  return g;
}
