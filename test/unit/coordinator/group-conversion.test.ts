/**
 * Online migration between the classic and the consumer (KIP-848) protocols in one group: a classic group
 * upgraded when a consumer-protocol member joins, classic members served inside a consumer group, and the
 * downgrade back to a classic group when the last consumer-protocol member leaves.
 */
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createHeartbeatRequest } from '../../../protocol/messages/012-heartbeat.gen.js';
import { createJoinGroupRequestProtocol, type JoinGroupResponse } from '../../../protocol/messages/011-join-group.gen.js';
import { createLeaveGroupRequestMemberIdentity } from '../../../protocol/messages/013-leave-group.gen.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createConsumerProtocolSubscription, createConsumerProtocolSubscriptionTopicPartition, encodeConsumerProtocolSubscription } from '../../../protocol/messages/data/consumer-protocol-subscription.gen.js';
import type { ConsumerGroupHeartbeatResponse } from '../../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { ClassicGroup } from '../../../src/coordinator/classic-group.js';
import { ConsumerGroup } from '../../../src/coordinator/consumer-group.js';
import type { ConsumerHeartbeatInput } from '../../../src/coordinator/consumer-protocol.js';
import { parseAssignment } from '../../../src/coordinator/embedded-protocol.js';
import { assignmentBytes, consumerGroupHeartbeat, harness, info, isSettled, joinRequest, startJoin, sync, type Harness } from './harness.js';

const G = 'migrating-group';
const SESSION_MS = 10_000;

/** ConsumerProtocolSubscription v3 with what the member owns (a cooperative consumer reports it). */
function subscriptionV3(topics: string[], owned: Record<string, number[]> = {}): Buffer {
  const w = new Writer();
  w.int16(3);
  encodeConsumerProtocolSubscription(
    w,
    createConsumerProtocolSubscription({
      topics,
      ownedPartitions: Object.entries(owned).map(([topic, partitions]) => createConsumerProtocolSubscriptionTopicPartition({ topic, partitions })),
      generationId: -1,
    }),
    3,
  );
  return w.toBuffer();
}

function protocols(owned: Record<string, number[]> = {}) {
  return [createJoinGroupRequestProtocol({ name: 'cooperative-sticky', metadata: subscriptionV3(['t'], owned) }), createJoinGroupRequestProtocol({ name: 'range', metadata: subscriptionV3(['t'], owned) })];
}

function consumerHeartbeat(h: Harness, init: Partial<ConsumerHeartbeatInput>): Promise<ConsumerGroupHeartbeatResponse> {
  return consumerGroupHeartbeat(h, G, init);
}

/** A classic consumer: joins, syncs, heartbeats, and owns what its last SyncGroup gave it. */
class ClassicMember {
  id = '';
  generation = -1;
  protocolName: string | null = null;
  owns: number[] = [];
  constructor(private readonly h: Harness) {}

  async join(): Promise<JoinGroupResponse> {
    const owned: Record<string, number[]> = this.owns.length > 0 ? { t: this.owns } : {};
    const j = await startJoin(this.h, G, { memberId: this.id, sessionTimeoutMs: SESSION_MS, protocols: protocols(owned) });
    const r = await j.result;
    if (r.errorCode !== 0) throw new Error(`JoinGroup failed: ${r.errorCode}`);
    this.id = r.memberId;
    this.generation = r.generationId;
    this.protocolName = r.protocolName;
    return r;
  }

  async sync(assignments: Record<string, Buffer> = {}): Promise<number> {
    const r = await (await sync(this.h, G, { memberId: this.id, generationId: this.generation, protocolType: 'consumer', protocolName: this.protocolName } as JoinGroupResponse, assignments)).result;
    if (r.errorCode === 0) this.owns = parseAssignment(r.assignment).flatMap((tp) => [...tp.partitions]).sort((a, b) => a - b);
    return r.errorCode;
  }

  async heartbeat(): Promise<number> {
    return (await this.h.coordinator.heartbeat(createHeartbeatRequest({ groupId: G, memberId: this.id, generationId: this.generation }))).errorCode;
  }

  /** Rejoins and syncs until the coordinator has nothing more to change for this member. */
  async catchUp(): Promise<void> {
    for (let i = 0; i < 5; i++) {
      const hb = await this.heartbeat();
      if (hb === ErrorCode.NONE) return;
      expect([ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION]).toContain(hb);
      await this.join();
      expect(await this.sync()).toBe(ErrorCode.NONE);
    }
    throw new Error('the classic member never settled');
  }
}

/** A KIP-848 consumer (topic "t" only). */
class ConsumerMember {
  id = '';
  epoch = 0;
  owns: number[] = [];
  constructor(
    private readonly h: Harness,
    private readonly topicId: string,
  ) {}

  async beat(): Promise<ConsumerGroupHeartbeatResponse> {
    const joining = this.epoch === 0;
    const r = await consumerHeartbeat(this.h, {
      memberId: this.id,
      memberEpoch: this.epoch,
      rebalanceTimeoutMs: joining ? 30_000 : -1,
      subscribedTopicNames: joining ? ['t'] : null,
      topicPartitions: joining ? [] : [{ topicId: this.topicId, partitions: this.owns }],
    });
    if (r.errorCode !== 0) throw new Error(`ConsumerGroupHeartbeat failed: ${r.errorCode} ${r.errorMessage}`);
    this.id = r.memberId!;
    this.epoch = r.memberEpoch;
    if (r.assignment) this.owns = r.assignment.topicPartitions.flatMap((tp) => [...tp.partitions]).sort((a, b) => a - b);
    return r;
  }

  async leave(): Promise<void> {
    const r = await consumerHeartbeat(this.h, { memberId: this.id, memberEpoch: -1 });
    expect(r.errorCode).toBe(ErrorCode.NONE);
  }
}

function groupOf(h: Harness): ClassicGroup | ConsumerGroup | undefined {
  return h.coordinator.shard(h.coordinator.partitionFor(G)).groups.get(G);
}

function expectNoPartitionTwice(owners: Array<{ owns: number[] }>, partitions: number): void {
  const all = owners.flatMap((o) => o.owns);
  expect(new Set(all).size).toBe(all.length);
  expect(all.every((p) => p >= 0 && p < partitions)).toBe(true);
}

/** A Stable classic group of two members splitting t-0..3 (the first member leads and assigns). */
async function stableClassicGroup(h: Harness): Promise<[ClassicMember, ClassicMember]> {
  const a = new ClassicMember(h);
  const b = new ClassicMember(h);
  const ja = startJoin(h, G, { sessionTimeoutMs: SESSION_MS, protocols: protocols() });
  const jb = startJoin(h, G, { sessionTimeoutMs: SESSION_MS, protocols: protocols() });
  const [pa, pb] = await Promise.all([ja, jb]);
  // group.initial.rebalance.delay.ms, extended while members arrive.
  for (let i = 0; i < 10 && !(await isSettled(pb)); i++) await h.advance(3000);
  const [ra, rb] = await Promise.all([pa.result, pb.result]);
  for (const [m, r] of [[a, ra], [b, rb]] as const) {
    m.id = r.memberId;
    m.generation = r.generationId;
    m.protocolName = r.protocolName;
  }
  const [leader, follower] = ra.leader === ra.memberId ? [a, b] : [b, a];
  const leaderSync = leader.sync({ [leader.id]: assignmentBytes({ t: [0, 1] }), [follower.id]: assignmentBytes({ t: [2, 3] }) });
  expect(await follower.sync()).toBe(ErrorCode.NONE);
  expect(await leaderSync).toBe(ErrorCode.NONE);
  expect(groupOf(h)).toBeInstanceOf(ClassicGroup);
  return [leader, follower];
}

describe('online upgrade of a classic group (group.consumer.migration.policy)', () => {
  it('turns a Stable classic group into a consumer group when a KIP-848 member joins, and moves partitions without double ownership', async () => {
    const h = await harness();
    const t = h.topics.add('t', 4);
    const [a, b] = await stableClassicGroup(h);
    const generation = a.generation;

    const c = new ConsumerMember(h, t.topicId);
    const joined = await c.beat();
    expect(joined.errorCode).toBe(ErrorCode.NONE);
    const g = groupOf(h);
    expect(g).toBeInstanceOf(ConsumerGroup);
    const group = g as ConsumerGroup;
    expect(group.members.get(a.id)).toMatchObject({ memberEpoch: generation, classicMemberMetadata: { sessionTimeoutMs: SESSION_MS } });
    expect(group.groupEpoch).toBe(generation + 1);
    // Everything is still owned by the classic members: the new member waits for their revocations.
    expect(c.owns).toEqual([]);
    expectNoPartitionTwice([a, b, c], 4);

    const [described] = await h.coordinator.consumerGroupDescribe([G]);
    expect(described!.members.map((m) => [m.memberId, m.memberType]).sort()).toEqual([[a.id, 0], [b.id, 0], [c.id, 1]].sort());
    expect((await h.coordinator.listGroups([], [])).groups).toEqual([expect.objectContaining({ groupId: G, groupType: 'consumer' })]);

    // The classic members learn of the new epoch through their heartbeats, rejoin, revoke and sync.
    for (const m of [a, b]) {
      expect(await m.heartbeat()).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
      const r = await m.join();
      // No leader and no member list: the broker assigns. The generation is the member epoch, which moves on
      // once the member has given up what it loses (it reports what it owns in its subscription).
      expect(r).toMatchObject({ leader: '', members: [], protocolName: 'cooperative-sticky' });
      expect(await m.sync()).toBe(ErrorCode.NONE);
      expectNoPartitionTwice([a, b, c], 4);
    }
    for (let round = 0; round < 3; round++) {
      for (const m of [a, b]) await m.catchUp();
      await c.beat();
      expectNoPartitionTwice([a, b, c], 4);
    }
    expect([a.generation, b.generation, c.epoch]).toEqual([generation + 1, generation + 1, generation + 1]);
    expectNoPartitionTwice([a, b, c], 4);
    expect([a, b, c].map((m) => m.owns.length).sort()).toEqual([1, 1, 2]);
    expect([...a.owns, ...b.owns, ...c.owns].sort()).toEqual([0, 1, 2, 3]);

    // A classic member commits with its generation, the member epoch.
    const commit = (generationIdOrMemberEpoch: number) =>
      h.coordinator.commitOffsets(
        createOffsetCommitRequest({
          groupId: G,
          memberId: a.id,
          generationIdOrMemberEpoch,
          topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: a.owns[0]!, committedOffset: 5n })] })],
        }),
        8,
      );
    expect((await commit(a.generation)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await commit(a.generation - 1)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);

    // The converted group, classic members included, is what a restart loads.
    await h.restart();
    const loaded = groupOf(h) as ConsumerGroup;
    expect(loaded).toBeInstanceOf(ConsumerGroup);
    expect(loaded.members.get(b.id)?.classicMemberMetadata?.supportedProtocols.map((p) => p.name)).toEqual(['cooperative-sticky', 'range']);
    expect(loaded.members.get(c.id)?.classicMemberMetadata).toBeNull();
  });

  it('answers parked classic requests with REBALANCE_IN_PROGRESS when the group is upgraded', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const [a] = await stableClassicGroup(h);
    // a rejoins: the group prepares a rebalance and a's JoinGroup waits for b.
    const parked = startJoin(h, G, { memberId: a.id, sessionTimeoutMs: SESSION_MS, protocols: protocols() });
    const j = await parked;
    expect(await (await consumerHeartbeat(h, { memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'], topicPartitions: [] })).errorCode).toBe(ErrorCode.NONE);
    expect((await j.result).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
  });

  it('keeps the classic group when the policy does not allow the upgrade', async () => {
    const h = await harness({}, { 'group.consumer.migration.policy': 'downgrade' });
    h.topics.add('t', 2);
    await stableClassicGroup(h);
    const r = await consumerHeartbeat(h, { memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'], topicPartitions: [] });
    expect(r).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${G} is not a consumer group.` });
    expect(groupOf(h)).toBeInstanceOf(ClassicGroup);
  });
});

describe('classic members in a consumer group', () => {
  it('serves a classic member joining a consumer group: its partitions come once the KIP-848 member released them', async () => {
    const h = await harness();
    const t = h.topics.add('t', 4);
    const c = new ConsumerMember(h, t.topicId);
    await c.beat();
    expect(c.owns).toEqual([0, 1, 2, 3]);

    const a = new ClassicMember(h);
    const joined = await a.join();
    expect(joined).toMatchObject({ errorCode: 0, leader: '', members: [], protocolType: 'consumer', protocolName: 'cooperative-sticky' });
    expect(await a.sync()).toBe(ErrorCode.NONE);
    expect(a.owns).toEqual([]);
    // The KIP-848 member revokes two partitions; the classic member is then told to rejoin to collect them.
    await c.beat();
    expect(c.owns.length).toBe(2);
    await c.beat();
    expect(await a.heartbeat()).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    await a.catchUp();
    expect(a.owns.length).toBe(2);
    expectNoPartitionTwice([a, c], 4);

    // SyncGroup and Heartbeat check the generation and the protocol, as for a classic group.
    expect(await h.coordinator.heartbeat(createHeartbeatRequest({ groupId: G, memberId: a.id, generationId: a.generation + 1 }))).toMatchObject({ errorCode: ErrorCode.ILLEGAL_GENERATION });
    expect(await h.coordinator.heartbeat(createHeartbeatRequest({ groupId: G, memberId: c.id, generationId: c.epoch }))).toMatchObject({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID });
    a.protocolName = 'range';
    expect(await a.sync()).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('refuses a classic member whose protocols the other classic members do not share', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    await new ConsumerMember(h, t.topicId).beat();
    await new ClassicMember(h).join();
    // Checked before a member id is handed out (MEMBER_ID_REQUIRED), as Kafka does.
    const r = await h.coordinator.joinGroup(joinRequest(G, { protocols: [createJoinGroupRequestProtocol({ name: 'roundrobin', metadata: subscriptionV3(['t']) })] }), info(9));
    expect(r.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('fences a classic member whose session expires, and lets another leave through LeaveGroup', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    const c = new ConsumerMember(h, t.topicId);
    await c.beat();
    const a = new ClassicMember(h);
    await a.join();
    await a.sync();
    const b = new ClassicMember(h);
    await b.join();
    await b.sync();
    const epoch = (groupOf(h) as ConsumerGroup).groupEpoch;

    const left = await h.coordinator.leaveGroup(G, [createLeaveGroupRequestMemberIdentity({ memberId: b.id }), createLeaveGroupRequestMemberIdentity({ memberId: c.id })]);
    expect(left.members.map((m) => [m.memberId, m.errorCode])).toEqual([
      [b.id, ErrorCode.NONE],
      [c.id, ErrorCode.UNKNOWN_MEMBER_ID],
    ]);
    const group = groupOf(h) as ConsumerGroup;
    expect(group.members.has(b.id)).toBe(false);
    expect(group.groupEpoch).toBe(epoch + 1);

    // c keeps heartbeating; a does not and is fenced after its own session timeout (the classic one).
    for (let waited = 0; waited < SESSION_MS; waited += 4000) {
      await c.beat();
      await h.advance(4000);
    }
    expect((groupOf(h) as ConsumerGroup).members.has(a.id)).toBe(false);
    expect((groupOf(h) as ConsumerGroup).members.has(c.id)).toBe(true);
  });
});

describe('online downgrade to a classic group', () => {
  it('turns the group back into a classic group when the last KIP-848 member leaves, and its members rebalance', async () => {
    const h = await harness();
    const t = h.topics.add('t', 4);
    const c = new ConsumerMember(h, t.topicId);
    await c.beat();
    const a = new ClassicMember(h);
    await a.join();
    await a.sync();
    await c.beat();
    await c.beat();
    await a.catchUp();
    expect(a.owns.length).toBe(2);

    await c.leave();
    await h.advance(0);
    const g = groupOf(h);
    expect(g).toBeInstanceOf(ClassicGroup);
    expect((await h.coordinator.describeGroups([G], 5))[0]).toMatchObject({ groupState: 'PreparingRebalance', protocolType: 'consumer' });
    // The member rejoins the classic group, leads it and assigns itself everything.
    expect(await a.heartbeat()).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const r = await a.join();
    expect(r.leader).toBe(a.id);
    expect(await a.sync({ [a.id]: assignmentBytes({ t: [0, 1, 2, 3] }) })).toBe(ErrorCode.NONE);
    expect(a.owns).toEqual([0, 1, 2, 3]);
    expect((await h.coordinator.describeGroups([G], 5))[0]!.groupState).toBe('Stable');
    await h.restart();
    expect(groupOf(h)).toBeInstanceOf(ClassicGroup);
  });

  it('downgrades without a rebalance when the last KIP-848 member is a static one that restarts as a classic member', async () => {
    const h = await harness();
    const t = h.topics.add('t', 4);
    const c = new ConsumerMember(h, t.topicId);
    // A static KIP-848 member (instance "host-c").
    const joined = await consumerHeartbeat(h, { memberEpoch: 0, instanceId: 'host-c', rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['t'], topicPartitions: [] });
    c.id = joined.memberId!;
    c.epoch = joined.memberEpoch;
    const a = new ClassicMember(h);
    await a.join();
    await a.sync();
    const before = groupOf(h) as ConsumerGroup;
    const targetOfC = [...(before.targetAssignmentOf(c.id).get(t.topicId) ?? [])].sort();
    expect(targetOfC.length).toBeGreaterThan(0);

    // The same instance comes back speaking the classic protocol, under a new member id.
    const r = await h.coordinator.joinGroup(joinRequest(G, { groupInstanceId: 'host-c', sessionTimeoutMs: SESSION_MS, protocols: protocols() }), info(9));
    expect(r.errorCode).toBe(ErrorCode.NONE);
    const g = groupOf(h);
    expect(g).toBeInstanceOf(ClassicGroup);
    const classic = g as ClassicGroup;
    expect([...classic.members.keys()].sort()).toEqual([a.id, r.memberId].sort());
    expect(classic.staticMemberId('host-c')).toBe(r.memberId);
    // The new member holds what the replaced one was to have, and the group did not start a rebalance.
    expect(parseAssignment(classic.member(r.memberId).assignment).flatMap((tp) => [...tp.partitions]).sort()).toEqual(targetOfC);
    await h.advance(0);
    expect(classic.state).toBe('Stable');
    await h.restart();
    expect((groupOf(h) as ClassicGroup).staticMemberId('host-c')).toBe(r.memberId);
  });

  it('keeps a consumer group of classic members when the policy does not allow the downgrade', async () => {
    const h = await harness({}, { 'group.consumer.migration.policy': 'upgrade' });
    const t = h.topics.add('t', 2);
    const c = new ConsumerMember(h, t.topicId);
    await c.beat();
    const a = new ClassicMember(h);
    await a.join();
    await a.sync();
    await c.leave();
    const g = groupOf(h) as ConsumerGroup;
    expect(g).toBeInstanceOf(ConsumerGroup);
    expect([...g.members.keys()]).toEqual([a.id]);
    await a.catchUp();
    expect(a.owns).toEqual([0, 1]);
  });
});
