/**
 * What DescribeGroups, ListGroups and ConsumerGroupDescribe answer for one group, built from its state in
 * memory: classic groups for DescribeGroups (others are Dead, from v6 with GROUP_ID_NOT_FOUND, KIP-1043), every
 * group for ListGroups, KIP-848 groups with their members' assignments and types (KIP-1099) for
 * ConsumerGroupDescribe.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import {
  createConsumerGroupDescribeResponseAssignment,
  createConsumerGroupDescribeResponseDescribedGroup,
  createConsumerGroupDescribeResponseMember,
  createConsumerGroupDescribeResponseTopicPartitions,
  type ConsumerGroupDescribeResponseDescribedGroup,
} from '../../protocol/messages/069-consumer-group-describe.gen.js';
import {
  createDescribeGroupsResponseDescribedGroup,
  createDescribeGroupsResponseDescribedGroupMember,
  type DescribeGroupsResponseDescribedGroup,
} from '../../protocol/messages/015-describe-groups.gen.js';
import { createListGroupsResponseListedGroup, type ListGroupsResponseListedGroup } from '../../protocol/messages/016-list-groups.gen.js';
import { CONSUMER_PROTOCOL_TYPE, ClassicGroup, ClassicGroupState } from './classic-group.js';
import { ConsumerGroup, usesClassicProtocol, type Assignment } from './consumer-group.js';
import type { TopicView } from './context.js';
import type { Group } from './group-records.js';

/** ConsumerGroupDescribe's MemberType (KIP-1099): -1 unknown, 0 classic, 1 consumer. */
const CLASSIC_MEMBER_TYPE = 0;
const CONSUMER_MEMBER_TYPE = 1;

/** Kafka's DescribeGroups for one group: classic groups only. */
export function describeClassicGroup(groupId: string, g: Group | undefined, version: number): DescribeGroupsResponseDescribedGroup {
  if (!(g instanceof ClassicGroup) || g.is(ClassicGroupState.DEAD)) {
    if (version < 6) return createDescribeGroupsResponseDescribedGroup({ groupId, groupState: ClassicGroupState.DEAD });
    const errorMessage = g instanceof ConsumerGroup ? `Group ${groupId} is not a classic group.` : `Group ${groupId} not found.`;
    return createDescribeGroupsResponseDescribedGroup({ groupId, groupState: ClassicGroupState.DEAD, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage });
  }
  const stable = g.is(ClassicGroupState.STABLE) && g.protocolName !== null;
  return createDescribeGroupsResponseDescribedGroup({
    groupId,
    groupState: g.state,
    protocolType: g.protocolType ?? '',
    protocolData: stable ? g.protocolName! : '',
    members: [...g.members.values()].map((m) =>
      createDescribeGroupsResponseDescribedGroupMember({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        memberMetadata: stable ? m.metadata(g.protocolName!) : Buffer.alloc(0),
        memberAssignment: m.assignment,
      }),
    ),
  });
}

/** A group as ListGroups lists it (v5+: its type). */
export function listedGroup(g: Group): ListGroupsResponseListedGroup {
  if (g instanceof ClassicGroup) return createListGroupsResponseListedGroup({ groupId: g.groupId, protocolType: g.protocolType ?? '', groupState: g.state, groupType: 'classic' });
  return createListGroupsResponseListedGroup({ groupId: g.groupId, protocolType: CONSUMER_PROTOCOL_TYPE, groupState: g.state, groupType: 'consumer' });
}

/** Kafka's ConsumerGroupDescribe for one KIP-848 group; assigned topics no longer known are left out. */
export function describeConsumerGroup(g: ConsumerGroup, topics: TopicView, defaultAssignor: string): ConsumerGroupDescribeResponseDescribedGroup {
  const assignment = (a: Assignment) =>
    createConsumerGroupDescribeResponseAssignment({
      topicPartitions: [...a]
        .map(([topicId, ps]) => ({ topicId, topic: topics.getById(topicId), ps }))
        .filter((x) => x.topic !== undefined)
        .map((x) => createConsumerGroupDescribeResponseTopicPartitions({ topicId: x.topicId, topicName: x.topic!.name, partitions: [...x.ps].sort((a, b) => a - b) })),
    });
  return createConsumerGroupDescribeResponseDescribedGroup({
    groupId: g.groupId,
    groupState: g.state,
    groupEpoch: g.groupEpoch,
    assignmentEpoch: g.assignmentEpoch,
    assignorName: g.preferredServerAssignor(defaultAssignor),
    members: [...g.members.values()].map((m) =>
      createConsumerGroupDescribeResponseMember({
        memberId: m.memberId,
        instanceId: m.instanceId,
        rackId: m.rackId,
        memberEpoch: m.memberEpoch,
        clientId: m.clientId,
        clientHost: m.clientHost,
        subscribedTopicNames: [...m.subscribedTopicNames],
        subscribedTopicRegex: m.subscribedTopicRegex,
        assignment: assignment(m.assignedPartitions),
        targetAssignment: assignment(g.targetAssignmentOf(m.memberId)),
        // KIP-1099 (v1): classic members are there during an online migration between the protocols.
        memberType: usesClassicProtocol(m) ? CLASSIC_MEMBER_TYPE : CONSUMER_MEMBER_TYPE,
      }),
    ),
  });
}
