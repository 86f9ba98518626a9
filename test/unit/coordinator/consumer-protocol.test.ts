import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createOffsetCommitRequest, createOffsetCommitRequestPartition, createOffsetCommitRequestTopic } from '../../../protocol/messages/008-offset-commit.gen.js';
import { createOffsetFetchRequestGroup, createOffsetFetchRequestTopics } from '../../../protocol/messages/009-offset-fetch.gen.js';
import type { ConsumerGroupHeartbeatResponse } from '../../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { ConsumerGroup } from '../../../src/coordinator/consumer-group.js';
import type { ConsumerHeartbeatInput } from '../../../src/coordinator/consumer-protocol.js';
import { createJoinGroupRequestProtocol } from '../../../protocol/messages/011-join-group.gen.js';
import { consumerGroupHeartbeat, harness, info, joinRequest, startJoin, type Harness } from './harness.js';

const G = 'kip848-group';

type Owned = Array<{ topicId: string; partitions: number[] }>;

function hb(h: Harness, init: Partial<ConsumerHeartbeatInput>): Promise<ConsumerGroupHeartbeatResponse> {
  return consumerGroupHeartbeat(h, G, init);
}

function join(h: Harness, topics: string[], init: Partial<ConsumerHeartbeatInput> = {}) {
  return hb(h, { memberEpoch: 0, rebalanceTimeoutMs: 30_000, subscribedTopicNames: topics, topicPartitions: [], ...init });
}

function owned(r: ConsumerGroupHeartbeatResponse | null): Owned {
  return (r?.assignment?.topicPartitions ?? []).map((tp) => ({ topicId: tp.topicId, partitions: [...tp.partitions] }));
}

function count(o: Owned): number {
  return o.reduce((n, tp) => n + tp.partitions.length, 0);
}

function group(h: Harness): ConsumerGroup {
  const g = h.coordinator.shard(h.coordinator.partitionFor(G)).groups.get(G);
  if (!(g instanceof ConsumerGroup)) throw new Error('not a consumer group');
  return g;
}

/** A client that keeps what the coordinator assigned and reports it back, as KIP-848 consumers do. */
class Member {
  id = '';
  epoch = 0;
  owns: Owned = [];
  constructor(
    private readonly h: Harness,
    private readonly topics: string[],
    private readonly extra: Partial<ConsumerHeartbeatInput> = {},
  ) {}
  async join(): Promise<ConsumerGroupHeartbeatResponse> {
    const r = await join(this.h, this.topics, { memberId: this.id, ...this.extra });
    this.apply(r);
    return r;
  }
  async beat(): Promise<ConsumerGroupHeartbeatResponse> {
    const r = await hb(this.h, { memberId: this.id, memberEpoch: this.epoch, topicPartitions: this.owns, ...this.extra });
    this.apply(r);
    return r;
  }
  private apply(r: ConsumerGroupHeartbeatResponse): void {
    if (r.errorCode !== 0) throw new Error(`heartbeat failed: ${r.errorCode} ${r.errorMessage}`);
    this.id = r.memberId!;
    this.epoch = r.memberEpoch;
    if (r.assignment) this.owns = owned(r);
  }
  partitions(): string[] {
    return this.owns.flatMap((tp) => tp.partitions.map((p) => `${tp.topicId}-${p}`));
  }
}

/** Heartbeats every member in turn until nothing changes; checks that no partition is ever owned twice. */
async function converge(members: Member[], rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    for (const m of members) {
      await m.beat();
      const all = members.flatMap((x) => x.partitions());
      expect(new Set(all).size).toBe(all.length);
    }
  }
}

describe('KIP-848 ConsumerGroupHeartbeat', () => {
  it('gives a joining member an id, epoch 1 and every partition of its topic', async () => {
    const h = await harness();
    const t = h.topics.add('orders', 3);
    const r = await join(h, ['orders']);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.memberId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(r.memberEpoch).toBe(1);
    expect(r.heartbeatIntervalMs).toBe(5000);
    expect(owned(r)).toEqual([{ topicId: t.topicId, partitions: [0, 1, 2] }]);
    expect(group(h).state).toBe('Stable');
  });

  it('validates requests as Kafka does', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    expect((await hb(h, { memberEpoch: 0, subscribedTopicNames: ['t'], topicPartitions: [] })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await hb(h, { memberEpoch: 0, rebalanceTimeoutMs: 1000, topicPartitions: [] })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await hb(h, { memberEpoch: 0, rebalanceTimeoutMs: 1000, subscribedTopicNames: ['t'], topicPartitions: null })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await hb(h, { memberEpoch: 3, memberId: '' })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await hb(h, { memberEpoch: -3, memberId: 'm' })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    expect((await join(h, ['t'], { instanceId: '' })).errorCode).toBe(ErrorCode.INVALID_REQUEST);
    // Kafka 4 validates the group id with the other fields: INVALID_REQUEST, not INVALID_GROUP_ID.
    expect(await join(h, ['t'], { groupId: '' })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "GroupId can't be empty." });
    const unsupported = await join(h, ['t'], { serverAssignor: 'sticky' });
    expect(unsupported.errorCode).toBe(ErrorCode.UNSUPPORTED_ASSIGNOR);
    expect(unsupported.errorMessage).toContain('uniform, range');
    expect((await join(h, [], { subscribedTopicRegex: '(' })).errorCode).toBe(ErrorCode.INVALID_REGULAR_EXPRESSION);
    expect(await hb(h, { memberEpoch: 0, rebalanceTimeoutMs: 1000, topicPartitions: [], subscribedTopicNames: null, subscribedTopicRegex: null })).toMatchObject({
      errorCode: ErrorCode.INVALID_REQUEST,
      errorMessage: 'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.',
    });
  });

  it('requires a member id generated by the consumer from v1 on (KIP-1082), and joins under it', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    expect(await join(h, ['t'], { apiVersion: 1 })).toMatchObject({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: "MemberId can't be empty." });
    const r = await join(h, ['t'], { apiVersion: 1, memberId: 'client-made-id' });
    expect(r).toMatchObject({ errorCode: ErrorCode.NONE, memberId: 'client-made-id', memberEpoch: 1 });
    expect(group(h).members.has('client-made-id')).toBe(true);
  });

  it('accepts a join with an empty subscription (a member owning nothing), and gives it partitions once it subscribes', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    const r = await join(h, []);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(owned(r)).toEqual([]);
    expect(group(h).members.has(r.memberId!)).toBe(true);
    // As in Kafka, an empty subscription does not bump the group epoch: the member is still at epoch 0.
    expect(r.memberEpoch).toBe(0);
    const later = await join(h, ['t'], { memberId: r.memberId! });
    expect(later.errorCode).toBe(ErrorCode.NONE);
    expect(owned(later)).toEqual([{ topicId: t.topicId, partitions: [0, 1] }]);
  });

  it('answers GROUP_ID_NOT_FOUND, UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    expect((await hb(h, { memberId: 'x', memberEpoch: 1 })).errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const m = new Member(h, ['t']);
    await m.join();
    expect((await hb(h, { memberId: 'x', memberEpoch: 1 })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await hb(h, { memberId: m.id, memberEpoch: 5 })).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
    // A member may come back with the previous epoch if its partitions are a subset (lost response).
    const second = new Member(h, ['t']);
    await second.join();
    await converge([m, second]);
    expect(m.epoch).toBe(2);
    expect((await hb(h, { memberId: m.id, memberEpoch: 1, topicPartitions: m.owns })).errorCode).toBe(ErrorCode.NONE);
    expect((await hb(h, { memberId: m.id, memberEpoch: 1, topicPartitions: [{ topicId: m.owns[0]!.topicId, partitions: [0, 1] }] })).errorCode).toBe(ErrorCode.FENCED_MEMBER_EPOCH);
  });

  it('revokes partitions from one member before giving them to another (no partition has two owners)', async () => {
    const h = await harness();
    const t = h.topics.add('t', 6);
    const a = new Member(h, ['t']);
    await a.join();
    expect(count(a.owns)).toBe(6);
    const b = new Member(h, ['t']);
    const joined = await b.join();
    // b is given nothing a still owns.
    expect(joined.memberEpoch).toBe(2);
    expect(count(b.owns)).toBe(0);
    // a is asked to give three up and stays in epoch 1 until it has.
    const revoke = await a.beat();
    expect(revoke.memberEpoch).toBe(1);
    expect(count(a.owns)).toBe(3);
    expect(group(h).members.get(a.id)!.state).toBe(1 /* UNREVOKED_PARTITIONS */);
    // Reporting only the kept partitions completes the revocation.
    expect((await a.beat()).memberEpoch).toBe(2);
    await b.beat();
    expect(count(b.owns)).toBe(3);
    expect(new Set([...a.partitions(), ...b.partitions()]).size).toBe(6);
    expect(group(h).state).toBe('Stable');
    expect(group(h).groupEpoch).toBe(2);
    expect(a.owns.every((tp) => tp.topicId === t.topicId)).toBe(true);
  });

  it('balances many members with the uniform assignor', async () => {
    const h = await harness();
    h.topics.add('t', 12);
    h.topics.add('u', 5);
    const members = [new Member(h, ['t', 'u']), new Member(h, ['t', 'u']), new Member(h, ['t', 'u'])];
    for (const m of members) await m.join();
    await converge(members);
    const counts = members.map((m) => count(m.owns)).sort();
    expect(counts).toEqual([5, 6, 6]);
    expect(group(h).state).toBe('Stable');
  });

  it('uses the range assignor when members ask for it', async () => {
    const h = await harness();
    const t = h.topics.add('t', 4);
    const u = h.topics.add('u', 4);
    const members = [new Member(h, ['t', 'u'], { serverAssignor: 'range' }), new Member(h, ['t', 'u'], { serverAssignor: 'range' })];
    for (const m of members) await m.join();
    await converge(members);
    // Co-partitioned: each member has the same partition numbers of both topics.
    for (const m of members) {
      const byTopic = new Map(m.owns.map((tp) => [tp.topicId, [...tp.partitions].sort()]));
      expect(byTopic.get(t.topicId)).toEqual(byTopic.get(u.topicId));
      expect(byTopic.get(t.topicId)!.length).toBe(2);
    }
    const [d] = await h.coordinator.consumerGroupDescribe([G]);
    expect(d!.assignorName).toBe('range');
  });

  it('moves the partitions of a member that leaves (epoch -1) to the others at once', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const a = new Member(h, ['t']);
    const b = new Member(h, ['t']);
    await a.join();
    await b.join();
    await converge([a, b]);
    const epoch = group(h).groupEpoch;
    const left = await hb(h, { memberId: b.id, memberEpoch: -1 });
    expect(left).toMatchObject({ errorCode: 0, memberId: b.id, memberEpoch: -1 });
    expect(group(h).groupEpoch).toBe(epoch + 1);
    await a.beat();
    expect(count(a.owns)).toBe(4);
  });

  it('fences a member whose session expires (group.consumer.session.timeout.ms)', async () => {
    const h = await harness({}, { 'group.consumer.session.timeout.ms': '45000' });
    h.topics.add('t', 4);
    const a = new Member(h, ['t']);
    const b = new Member(h, ['t']);
    await a.join();
    await b.join();
    await converge([a, b]);
    for (let i = 0; i < 10; i++) {
      await h.advance(5000);
      await a.beat();
    }
    expect(group(h).members.has(b.id)).toBe(false);
    expect(count(a.owns)).toBe(4);
    expect((await hb(h, { memberId: b.id, memberEpoch: b.epoch })).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('fences a member that does not revoke its partitions within its rebalance timeout', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const a = new Member(h, ['t'], { rebalanceTimeoutMs: 10_000 });
    await a.join();
    const b = new Member(h, ['t']);
    await b.join();
    // a is asked to revoke but keeps reporting every partition.
    const stubborn = [...a.owns.map((tp) => ({ ...tp, partitions: [...tp.partitions] }))];
    await hb(h, { memberId: a.id, memberEpoch: 1, topicPartitions: stubborn });
    await h.advance(5000);
    await hb(h, { memberId: a.id, memberEpoch: 1, topicPartitions: stubborn });
    await b.beat();
    await h.advance(5001);
    expect(group(h).members.has(a.id)).toBe(false);
    await b.beat();
    await b.beat();
    expect(count(b.owns)).toBe(4);
  });

  it('lets a rejoining member (epoch 0) with a known id back in (KAFKA-19233)', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const a = new Member(h, ['t']);
    await a.join();
    const r = await join(h, ['t'], { memberId: a.id });
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(count(owned(r))).toBe(2);
  });

  it('rebalances when partitions are added to a subscribed topic', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    const a = new Member(h, ['t']);
    const b = new Member(h, ['t']);
    await a.join();
    await b.join();
    await converge([a, b]);
    const epoch = group(h).groupEpoch;
    h.topics.grow('t', 6);
    await converge([a, b]);
    expect(group(h).groupEpoch).toBe(epoch + 1);
    expect(count(a.owns) + count(b.owns)).toBe(6);
  });

  it('subscribes by regular expression, including topics created later', async () => {
    const h = await harness();
    h.topics.add('logs-a', 2);
    h.topics.add('metrics', 2);
    const m = new Member(h, [], { subscribedTopicRegex: 'logs-.*' });
    const r = await join(h, [], { subscribedTopicRegex: 'logs-.*' });
    expect(count(owned(r))).toBe(2);
    m.id = r.memberId!;
    m.epoch = r.memberEpoch;
    m.owns = owned(r);
    h.topics.add('logs-b', 3);
    await m.beat();
    await m.beat();
    expect(count(m.owns)).toBe(5);
    const [d] = await h.coordinator.consumerGroupDescribe([G]);
    expect(d!.members[0]!.subscribedTopicRegex).toBe('logs-.*');
  });

  it('matches internal topics too, as Kafka\'s broker-side regex resolution does', async () => {
    const h = await harness();
    const internal = h.topics.add('__audit_internal', 1, true);
    h.topics.add('audit', 1);
    const r = await join(h, [], { subscribedTopicRegex: '.*audit.*' });
    expect(owned(r).map((tp) => tp.topicId)).toContain(internal.topicId);
    expect(count(owned(r))).toBe(2);
  });

  it('keeps a static member\'s partitions while it restarts and gives them to its next member id', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const a = new Member(h, ['t'], { instanceId: 'host-a' });
    const b = new Member(h, ['t'], { instanceId: 'host-b' });
    await a.join();
    await b.join();
    await converge([a, b]);
    const epoch = group(h).groupEpoch;
    const aPartitions = a.partitions().sort();
    // A still-active instance cannot be taken over.
    expect((await join(h, ['t'], { instanceId: 'host-a' })).errorCode).toBe(ErrorCode.UNRELEASED_INSTANCE_ID);
    // Temporary leave: the partitions stay with the instance.
    expect((await hb(h, { memberId: a.id, memberEpoch: -2, instanceId: 'host-a' })).memberEpoch).toBe(-2);
    await b.beat();
    expect(count(b.owns)).toBe(2);
    const restarted = new Member(h, ['t'], { instanceId: 'host-a' });
    const r = await restarted.join();
    expect(r.memberId).not.toBe(a.id);
    expect(restarted.partitions().sort()).toEqual(aPartitions);
    expect(group(h).groupEpoch).toBe(epoch);
    // The old member id is fenced.
    expect((await hb(h, { memberId: a.id, memberEpoch: a.epoch, instanceId: 'host-a' })).errorCode).toBe(ErrorCode.FENCED_INSTANCE_ID);
  });

  it('releases a static member\'s partitions once its session expires after a temporary leave', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const a = new Member(h, ['t'], { instanceId: 'host-a' });
    const b = new Member(h, ['t'], { instanceId: 'host-b' });
    await a.join();
    await b.join();
    await converge([a, b]);
    await hb(h, { memberId: a.id, memberEpoch: -2, instanceId: 'host-a' });
    for (let i = 0; i < 10; i++) {
      await h.advance(5000);
      await b.beat();
    }
    await b.beat();
    expect(count(b.owns)).toBe(4);
  });

  it('refuses members beyond group.consumer.max.size', async () => {
    const h = await harness({ consumerGroupMaxSize: 1 });
    h.topics.add('t', 1);
    await join(h, ['t']);
    expect((await join(h, ['t'])).errorCode).toBe(ErrorCode.GROUP_MAX_SIZE_REACHED);
  });

  it('restores members, epochs and assignments after a restart', async () => {
    const h = await harness();
    h.topics.add('t', 4);
    const a = new Member(h, ['t']);
    const b = new Member(h, ['t']);
    await a.join();
    await b.join();
    await converge([a, b]);
    const before = { epoch: group(h).groupEpoch, a: a.partitions().sort(), b: b.partitions().sort() };
    await h.restart();
    expect(group(h).groupEpoch).toBe(before.epoch);
    expect(group(h).state).toBe('Stable');
    await converge([a, b], 2);
    expect(a.partitions().sort()).toEqual(before.a);
    expect(b.partitions().sort()).toEqual(before.b);
  });

  it('validates offset commits and fetches of members by member epoch (OffsetCommit v9)', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    const a = new Member(h, ['t']);
    await a.join();
    const c = (epoch: number, v: number) =>
      h.coordinator.commitOffsets(
        createOffsetCommitRequest({
          groupId: G,
          memberId: a.id,
          generationIdOrMemberEpoch: epoch,
          topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 3n })] })],
        }),
        v,
      );
    expect((await c(a.epoch, 9)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.NONE);
    expect((await c(a.epoch + 1, 9)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
    expect((await c(a.epoch, 8)).topics[0]!.partitions[0]!.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    const f = (memberEpoch: number) =>
      h.coordinator.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, memberId: a.id, memberEpoch, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] }));
    expect((await f(a.epoch)).topics[0]!.partitions[0]!.committedOffset).toBe(3n);
    expect((await f(a.epoch + 3)).errorCode).toBe(ErrorCode.STALE_MEMBER_EPOCH);
  });

  it('describes groups with members, epochs, assignment and target', async () => {
    const h = await harness();
    const t = h.topics.add('t', 2);
    const a = new Member(h, ['t']);
    await a.join();
    const [d, missing] = await h.coordinator.consumerGroupDescribe([G, 'nope']);
    expect(d).toMatchObject({ errorCode: 0, groupId: G, groupState: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'uniform' });
    expect(d!.members[0]).toMatchObject({ memberId: a.id, memberEpoch: 1, clientId: 'consumer-1', subscribedTopicNames: ['t'] });
    expect(d!.members[0]!.assignment.topicPartitions).toEqual([expect.objectContaining({ topicId: t.topicId, topicName: 't', partitions: [0, 1] })]);
    expect(d!.members[0]!.targetAssignment.topicPartitions[0]!.partitions).toEqual([0, 1]);
    expect(missing!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);
    const listed = await h.coordinator.listGroups([], ['consumer']);
    expect(listed.groups).toEqual([expect.objectContaining({ groupId: G, protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' })]);
  });

  it('describes a group named many times in one request once, so the answer does not multiply its members', async () => {
    const h = await harness();
    h.topics.add('t', 2);
    await new Member(h, ['t']).join();
    const copies = Array.from({ length: 10_000 }, () => G);
    expect((await h.coordinator.consumerGroupDescribe([...copies, 'nope', G])).map((d) => d.groupId)).toEqual([G, 'nope']);
    expect((await h.coordinator.describeGroups([...copies, 'nope'], 5)).map((d) => d.groupId)).toEqual([G, 'nope']);
  });
});

describe('classic and KIP-848 groups side by side', () => {
  it('turns an empty classic group (offsets only) into a consumer group, keeping its offsets', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    await h.coordinator.commitOffsets(
      createOffsetCommitRequest({ groupId: G, topics: [createOffsetCommitRequestTopic({ name: 't', partitions: [createOffsetCommitRequestPartition({ partitionIndex: 0, committedOffset: 8n })] })] }),
      8,
    );
    const r = await join(h, ['t']);
    expect(r.errorCode).toBe(ErrorCode.NONE);
    // The new member's session timer survives the removal of the classic group in the same operation.
    expect(h.coordinator.shard(h.coordinator.partitionFor(G)).timer.isScheduled('session', G, r.memberId)).toBe(true);
    const f = await h.coordinator.fetchOffsets(createOffsetFetchRequestGroup({ groupId: G, topics: [createOffsetFetchRequestTopics({ name: 't', partitionIndexes: [0] })] }));
    expect(f.topics[0]!.partitions[0]!.committedOffset).toBe(8n);
    await h.restart();
    expect(group(h).members.size).toBe(1);
    // The member's session timer runs (it was not dropped with the classic group).
    await h.advance(45_000);
    expect(group(h).members.size).toBe(0);
  });

  it('refuses a KIP-848 member in a non-empty classic group that does not use the consumer protocol (a Connect group)', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    const j = await startJoin(h, G, { protocolType: 'connect', protocols: [createJoinGroupRequestProtocol({ name: 'sessioned', metadata: Buffer.from('worker') })] });
    await h.advance(3000);
    expect((await j.result).errorCode).toBe(ErrorCode.NONE);
    expect(await join(h, ['t'])).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${G} is not a consumer group.` });
  });

  it('turns an empty KIP-848 group into a classic group when a classic member joins', async () => {
    const h = await harness();
    h.topics.add('t', 1);
    const r = await join(h, ['t']);
    await hb(h, { memberId: r.memberId!, memberEpoch: -1 });
    const j = await startJoin(h, G);
    await h.advance(3000);
    expect((await j.result).errorCode).toBe(ErrorCode.NONE);
    const [d] = await h.coordinator.describeGroups([G], 5);
    expect(d!.groupState).toBe('CompletingRebalance');
    await h.restart();
    expect((await h.coordinator.listGroups([], ['classic'])).groups.map((g) => g.groupId)).toContain(G);
  });
});
