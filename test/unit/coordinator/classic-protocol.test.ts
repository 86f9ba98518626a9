import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createHeartbeatRequest } from '../../../protocol/messages/012-heartbeat.gen.js';
import { createJoinGroupRequestProtocol, type JoinGroupResponse } from '../../../protocol/messages/011-join-group.gen.js';
import { createLeaveGroupRequestMemberIdentity } from '../../../protocol/messages/013-leave-group.gen.js';
import { createSyncGroupRequest } from '../../../protocol/messages/014-sync-group.gen.js';
import { ClassicGroup } from '../../../src/coordinator/classic-group.js';
import { assignmentBytes, harness, info, isSettled, joinRequest, startJoin, subscription, sync, type Harness } from './harness.js';

const G = 'group-a';

function heartbeat(h: Harness, join: JoinGroupResponse, generationId = join.generationId, groupInstanceId: string | null = null) {
  return h.coordinator.heartbeat(createHeartbeatRequest({ groupId: G, generationId, memberId: join.memberId, groupInstanceId }));
}

function group(h: Harness, groupId = G): ClassicGroup {
  const g = h.coordinator.shard(h.coordinator.partitionFor(groupId)).groups.get(groupId);
  if (!(g instanceof ClassicGroup)) throw new Error(`no classic group ${groupId}`);
  return g;
}

/**
 * Two members through a full rebalance: the first is the leader and assigns. The second member arriving during
 * the initial delay extends it once (group.initial.rebalance.delay.ms), hence two delays.
 */
async function stableGroupOfTwo(h: Harness): Promise<[JoinGroupResponse, JoinGroupResponse]> {
  const j1 = await startJoin(h, G);
  const j2 = await startJoin(h, G);
  await h.advance(2 * h.config.classicGroupInitialRebalanceDelayMs);
  const [r1, r2] = await Promise.all([j1.result, j2.result]);
  const leader = r1.leader === r1.memberId ? r1 : r2;
  const follower = leader === r1 ? r2 : r1;
  const s2 = await sync(h, G, follower);
  const s1 = await sync(h, G, leader, { [leader.memberId]: assignmentBytes({ t: [0] }), [follower.memberId]: assignmentBytes({ t: [1] }) });
  expect((await s1.result).errorCode).toBe(ErrorCode.NONE);
  expect((await s2.result).errorCode).toBe(ErrorCode.NONE);
  return [leader, follower];
}

describe('classic group membership', () => {
  it('rejects a session timeout outside group.min/max.session.timeout.ms', async () => {
    const h = await harness();
    const low = await h.coordinator.joinGroup(joinRequest(G, { sessionTimeoutMs: 5999 }), info(9));
    const high = await h.coordinator.joinGroup(joinRequest(G, { sessionTimeoutMs: 1_800_001 }), info(9));
    expect(low.errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
    expect(high.errorCode).toBe(ErrorCode.INVALID_SESSION_TIMEOUT);
  });

  it('rejects an empty group id with INVALID_GROUP_ID', async () => {
    const h = await harness();
    expect((await h.coordinator.joinGroup(joinRequest(''), info(9))).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });

  it('asks a new dynamic member to rejoin with a member id from JoinGroup v4 (KIP-394)', async () => {
    const h = await harness();
    const r = await h.coordinator.joinGroup(joinRequest(G), info(4, 'my-client'));
    expect(r.errorCode).toBe(ErrorCode.MEMBER_ID_REQUIRED);
    expect(r.memberId).toMatch(/^my-client-[0-9a-f-]{36}$/);
    expect(group(h).pendingJoinMembers.has(r.memberId)).toBe(true);
  });

  it('lets a v3 member join without a member id round trip', async () => {
    const h = await harness();
    const p = h.coordinator.joinGroup(joinRequest(G), info(3));
    await h.advance(3000);
    const r = await p;
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.generationId).toBe(1);
    expect(r.leader).toBe(r.memberId);
  });

  it('drops a pending member id that never joins after its session timeout', async () => {
    const h = await harness();
    const r = await h.coordinator.joinGroup(joinRequest(G), info(9));
    await h.advance(10_000);
    expect(group(h).pendingJoinMembers.has(r.memberId)).toBe(false);
  });

  it('answers UNKNOWN_MEMBER_ID to a known member id for a group that does not exist', async () => {
    const h = await harness();
    const r = await h.coordinator.joinGroup(joinRequest(G, { memberId: 'nobody' }), info(9));
    expect(r.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('waits group.initial.rebalance.delay.ms before the first generation, then elects the first member leader', async () => {
    const h = await harness();
    const j1 = await startJoin(h, G);
    expect(group(h).state).toBe('PreparingRebalance');
    await h.advance(2999);
    expect(await isSettled(j1)).toBe(false);
    // A member arriving during the delay extends it by another delay (while the rebalance timeout allows).
    const j2 = await startJoin(h, G);
    await h.advance(3000);
    expect(await isSettled(j1)).toBe(false);
    await h.advance(1);
    const [r1, r2] = await Promise.all([j1.result, j2.result]);
    expect(group(h).state).toBe('CompletingRebalance');
    expect(r1.generationId).toBe(1);
    expect(r2.generationId).toBe(1);
    expect(r1.leader).toBe(r1.memberId);
    expect(r1.members.map((m) => m.memberId).sort()).toEqual([r1.memberId, r2.memberId].sort());
    expect(r2.members).toEqual([]);
    expect(r1.protocolName).toBe('range');
    expect(r1.protocolType).toBe('consumer');
  });

  it('extends the initial delay while new members keep arriving, up to the rebalance timeout', async () => {
    const h = await harness();
    const j1 = await startJoin(h, G, { rebalanceTimeoutMs: 7000 });
    await h.advance(2000);
    await startJoin(h, G, { rebalanceTimeoutMs: 7000 });
    await h.advance(1000); // first delay over, a member arrived: extended by 3000 (remaining 4000)
    expect(await isSettled(j1)).toBe(false);
    await h.advance(3000);
    expect((await j1.result).generationId).toBe(1);
  });

  it('selects the protocol most members prefer among those all support', async () => {
    const h = await harness();
    const protos = (...names: string[]) => names.map((name) => createJoinGroupRequestProtocol({ name, metadata: subscription(['t']) }));
    const j1 = await startJoin(h, G, { protocols: protos('cooperative-sticky', 'range') });
    const j2 = await startJoin(h, G, { protocols: protos('range', 'cooperative-sticky') });
    const j3 = await startJoin(h, G, { protocols: protos('range', 'roundrobin') });
    await h.advance(6000);
    const rs = await Promise.all([j1.result, j2.result, j3.result]);
    expect(rs.map((r) => r.protocolName)).toEqual(['range', 'range', 'range']);
  });

  it('rejects a member with another protocol type or no common protocol (INCONSISTENT_GROUP_PROTOCOL)', async () => {
    const h = await harness();
    await startJoin(h, G);
    const otherType = await h.coordinator.joinGroup(joinRequest(G, { protocolType: 'connect' }), info(9));
    const noCommon = await h.coordinator.joinGroup(
      joinRequest(G, { protocols: [createJoinGroupRequestProtocol({ name: 'roundrobin', metadata: subscription(['t']) })] }),
      info(9),
    );
    expect(otherType.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect(noCommon.errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  });

  it('refuses members beyond group.max.size (GROUP_MAX_SIZE_REACHED)', async () => {
    const h = await harness({ classicGroupMaxSize: 2 });
    await startJoin(h, G);
    await startJoin(h, G);
    const first = await h.coordinator.joinGroup(joinRequest(G), info(9));
    const third = await h.coordinator.joinGroup(joinRequest(G, { memberId: first.memberId }), info(9));
    expect(third.errorCode).toBe(ErrorCode.GROUP_MAX_SIZE_REACHED);
  });

  it('completes the assignment with SyncGroup and keeps it Stable', async () => {
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    expect(group(h).state).toBe('Stable');
    expect((await heartbeat(h, leader)).errorCode).toBe(ErrorCode.NONE);
    // A follower syncing again in Stable gets its assignment back.
    const again = await (await sync(h, G, follower)).result;
    expect(again.assignment).toEqual(assignmentBytes({ t: [1] }));
    expect(again.protocolName).toBe('range');
  });

  it('parks followers until the leader sends the assignment', async () => {
    const h = await harness();
    const j1 = await startJoin(h, G);
    const j2 = await startJoin(h, G);
    await h.advance(6000);
    const [r1, r2] = await Promise.all([j1.result, j2.result]);
    const s2 = await sync(h, G, r2);
    expect(await isSettled(s2)).toBe(false);
    const s1 = await sync(h, G, r1, { [r1.memberId]: assignmentBytes({ t: [0, 1] }) });
    expect((await s1.result).assignment).toEqual(assignmentBytes({ t: [0, 1] }));
    // A member the leader left out gets an empty assignment.
    expect((await s2.result).assignment.length).toBe(0);
    expect((await s2.result).errorCode).toBe(ErrorCode.NONE);
  });

  it('answers SyncGroup errors as Kafka does', async () => {
    const h = await harness();
    const [leader] = await stableGroupOfTwo(h);
    const base = { groupId: G, generationId: leader.generationId, memberId: leader.memberId, protocolType: 'consumer', protocolName: 'range' };
    expect((await h.coordinator.syncGroup(createSyncGroupRequest({ ...base, generationId: 99 }))).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect((await h.coordinator.syncGroup(createSyncGroupRequest({ ...base, memberId: 'x' }))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await h.coordinator.syncGroup(createSyncGroupRequest({ ...base, protocolName: 'roundrobin' }))).errorCode).toBe(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    expect((await h.coordinator.syncGroup(createSyncGroupRequest({ ...base, groupId: 'other' }))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await h.coordinator.syncGroup(createSyncGroupRequest({ ...base, groupId: '' }))).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });

  it('answers heartbeats with REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION and UNKNOWN_MEMBER_ID where Kafka does', async () => {
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    expect((await heartbeat(h, follower, 7)).errorCode).toBe(ErrorCode.ILLEGAL_GENERATION);
    expect((await h.coordinator.heartbeat(createHeartbeatRequest({ groupId: G, generationId: 1, memberId: 'ghost' }))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    expect((await h.coordinator.heartbeat(createHeartbeatRequest({ groupId: 'nope', generationId: 1, memberId: 'ghost' }))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
    // The leader rejoining starts a rebalance: the follower learns it from its heartbeat.
    const rejoin = h.coordinator.joinGroup(joinRequest(G, { memberId: leader.memberId }), info(9));
    await h.advance(0);
    expect(group(h).state).toBe('PreparingRebalance');
    expect((await heartbeat(h, follower)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(await isSettled(rejoin)).toBe(false);
  });

  it('runs a leader-initiated rebalance of a Stable group to a new generation that both members get', async () => {
    // The sequence of a consumer-group leader that assigned before it knew the topic's partitions: it rejoins
    // a Stable group on its own (same protocols), the follower hears of it from its heartbeat and rejoins, and
    // the leader's new assignment reaches both members, as in Kafka's classicGroupJoin/classicGroupSync.
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    const rejoin = h.coordinator.joinGroup(joinRequest(G, { memberId: leader.memberId }), info(7));
    await h.advance(0);
    expect(group(h).state).toBe('PreparingRebalance');
    // The join phase waits for the follower (within the rebalance timeout), which keeps its session alive.
    await h.advance(500);
    expect(await isSettled(rejoin)).toBe(false);
    expect((await heartbeat(h, follower)).errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    const followerJoin = h.coordinator.joinGroup(joinRequest(G, { memberId: follower.memberId }), info(7));
    const [l2, f2] = await Promise.all([rejoin, followerJoin]);
    expect([l2.errorCode, f2.errorCode]).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(l2.generationId).toBe(leader.generationId + 1);
    expect(f2.generationId).toBe(l2.generationId);
    // The member that was leader and rejoined stays leader (Kafka's maybeElectNewJoinedLeader).
    expect(l2.leader).toBe(leader.memberId);
    expect(f2.leader).toBe(leader.memberId);
    expect(l2.members.map((m) => m.memberId).sort()).toEqual([leader.memberId, follower.memberId].sort());
    expect(f2.members).toEqual([]);
    expect(group(h).state).toBe('CompletingRebalance');
    const fs = await sync(h, G, f2);
    expect(await isSettled(fs)).toBe(false);
    const ls = await sync(h, G, l2, { [leader.memberId]: assignmentBytes({ t: [2, 3] }), [follower.memberId]: assignmentBytes({ t: [0, 1] }) });
    expect((await ls.result).assignment).toEqual(assignmentBytes({ t: [2, 3] }));
    expect((await fs.result).assignment).toEqual(assignmentBytes({ t: [0, 1] }));
    expect(group(h).state).toBe('Stable');
    expect((await heartbeat(h, l2)).errorCode).toBe(ErrorCode.NONE);
    expect((await heartbeat(h, f2)).errorCode).toBe(ErrorCode.NONE);
  });

  it('gives a Stable follower rejoining with the same metadata its current generation without a rebalance', async () => {
    const h = await harness();
    const [, follower] = await stableGroupOfTwo(h);
    const r = await h.coordinator.joinGroup(joinRequest(G, { memberId: follower.memberId }), info(9));
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.generationId).toBe(follower.generationId);
    expect(group(h).state).toBe('Stable');
  });

  it('removes a member whose session expires and rebalances the others', async () => {
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    // The leader keeps heartbeating; the follower goes silent.
    for (let t = 0; t < 12_000; t += 3000) {
      await h.advance(3000);
      const hb = await heartbeat(h, leader);
      if (hb.errorCode !== ErrorCode.NONE) {
        expect(hb.errorCode).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
        break;
      }
    }
    expect(group(h).hasMember(follower.memberId)).toBe(false);
    expect(group(h).state).toBe('PreparingRebalance');
    const rejoin = h.coordinator.joinGroup(joinRequest(G, { memberId: leader.memberId }), info(9));
    const r = await rejoin;
    expect(r.generationId).toBe(2);
    expect(r.members.map((m) => m.memberId)).toEqual([leader.memberId]);
  });

  it('removes members that do not rejoin within the rebalance timeout', async () => {
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    const rejoin = h.coordinator.joinGroup(joinRequest(G, { memberId: leader.memberId, rebalanceTimeoutMs: 20_000 }), info(9));
    await h.advance(0);
    // The follower keeps heartbeating (REBALANCE_IN_PROGRESS) but never rejoins.
    for (let t = 0; t < 30_000; t += 5000) {
      await heartbeat(h, follower);
      await h.advance(5000);
    }
    const r = await rejoin;
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.members.map((m) => m.memberId)).toEqual([leader.memberId]);
  });

  it('removes members that do not send SyncGroup in time and rebalances', async () => {
    const h = await harness();
    const j1 = await startJoin(h, G);
    const j2 = await startJoin(h, G);
    await h.advance(6000);
    const [r1, r2] = await Promise.all([j1.result, j2.result]);
    const leader = r1.leader === r1.memberId ? r1 : r2;
    const lazy = leader === r1 ? r2 : r1;
    const s1 = await sync(h, G, leader, { [leader.memberId]: assignmentBytes({ t: [0] }), [lazy.memberId]: assignmentBytes({ t: [1] }) });
    expect((await s1.result).errorCode).toBe(ErrorCode.NONE);
    // The leader heartbeats; the other member never syncs and is dropped after the rebalance timeout.
    let hb: number = ErrorCode.NONE;
    for (let t = 0; t < 30_000 && hb === ErrorCode.NONE; t += 5000) {
      await h.advance(5000);
      hb = (await heartbeat(h, leader)).errorCode;
    }
    expect(hb).toBe(ErrorCode.REBALANCE_IN_PROGRESS);
    expect(group(h).hasMember(lazy.memberId)).toBe(false);
    expect(group(h).state).toBe('PreparingRebalance');
  });

  it('rebalances at once when a member leaves, and becomes Empty when the last one leaves', async () => {
    const h = await harness();
    const [leader, follower] = await stableGroupOfTwo(h);
    const left = await h.coordinator.leaveGroup(G, [createLeaveGroupRequestMemberIdentity({ memberId: follower.memberId })]);
    expect(left.members[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(group(h).state).toBe('PreparingRebalance');
    const r = await h.coordinator.joinGroup(joinRequest(G, { memberId: leader.memberId }), info(9));
    expect(r.generationId).toBe(2);
    await h.coordinator.leaveGroup(G, [createLeaveGroupRequestMemberIdentity({ memberId: leader.memberId })]);
    expect(group(h).state).toBe('Empty');
    expect(group(h).generationId).toBe(3);
  });

  it('answers each member of a batch LeaveGroup (v3+) on its own', async () => {
    const h = await harness();
    const [leader] = await stableGroupOfTwo(h);
    const r = await h.coordinator.leaveGroup(G, [
      createLeaveGroupRequestMemberIdentity({ memberId: leader.memberId }),
      createLeaveGroupRequestMemberIdentity({ memberId: 'ghost' }),
      createLeaveGroupRequestMemberIdentity({ memberId: '', groupInstanceId: 'nobody' }),
    ]);
    expect(r.members.map((m) => m.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.UNKNOWN_MEMBER_ID]);
    const unknownGroup = await h.coordinator.leaveGroup('nope', [createLeaveGroupRequestMemberIdentity({ memberId: 'x' })]);
    expect(unknownGroup.members[0]!.errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  });

  it('removes a new member whose connection closes while its JoinGroup is parked', async () => {
    const h = await harness();
    const [leader] = await stableGroupOfTwo(h);
    const first = await h.coordinator.joinGroup(joinRequest(G), info(9));
    const abort = new AbortController();
    void h.coordinator.joinGroup(joinRequest(G, { memberId: first.memberId }), info(9), abort.signal);
    await h.advance(0);
    expect(group(h).hasMember(first.memberId)).toBe(true);
    abort.abort();
    await h.advance(0);
    expect(group(h).hasMember(first.memberId)).toBe(false);
    expect(group(h).hasMember(leader.memberId)).toBe(true);
  });
});

describe('classic static membership (KIP-345)', () => {
  async function stableStatic(h: Harness): Promise<[JoinGroupResponse, JoinGroupResponse]> {
    const j1 = await startJoin(h, G, { groupInstanceId: 'i-1' });
    const j2 = await startJoin(h, G, { groupInstanceId: 'i-2' });
    await h.advance(6000);
    const [r1, r2] = await Promise.all([j1.result, j2.result]);
    const s2 = await sync(h, G, r2, {}, 'i-2');
    const s1 = await sync(h, G, r1, { [r1.memberId]: assignmentBytes({ t: [0] }), [r2.memberId]: assignmentBytes({ t: [1] }) }, 'i-1');
    await Promise.all([s1.result, s2.result]);
    return [r1, r2];
  }

  it('gives static members ids derived from their instance id, without MEMBER_ID_REQUIRED', async () => {
    const h = await harness();
    const [r1] = await stableStatic(h);
    expect(r1.memberId).toMatch(/^i-1-/);
  });

  it('lets a restarted static member rejoin a Stable group without a rebalance and fences its old id', async () => {
    const h = await harness();
    const [, old] = await stableStatic(h);
    const generation = group(h).generationId;
    const r = await h.coordinator.joinGroup(joinRequest(G, { groupInstanceId: 'i-2' }), info(8));
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.memberId).not.toBe(old.memberId);
    expect(r.generationId).toBe(generation);
    expect(group(h).state).toBe('Stable');
    // Its assignment is kept.
    const s = await (await sync(h, G, r, {}, 'i-2')).result;
    expect(s.assignment).toEqual(assignmentBytes({ t: [1] }));
    // The old instance is fenced.
    expect((await heartbeat(h, old, old.generationId, 'i-2')).errorCode).toBe(ErrorCode.FENCED_INSTANCE_ID);
  });

  it('tells a static leader rejoining with JoinGroup v9 to skip the assignment', async () => {
    const h = await harness();
    const [leader] = await stableStatic(h);
    const r = await h.coordinator.joinGroup(joinRequest(G, { groupInstanceId: 'i-1' }), info(9));
    expect(r.skipAssignment).toBe(true);
    expect(r.leader).toBe(r.memberId);
    expect(r.members.length).toBe(2);
    expect(r.memberId).not.toBe(leader.memberId);
  });

  it('removes a static member by instance id through LeaveGroup', async () => {
    const h = await harness();
    await stableStatic(h);
    const r = await h.coordinator.leaveGroup(G, [createLeaveGroupRequestMemberIdentity({ memberId: '', groupInstanceId: 'i-2' })]);
    expect(r.members[0]!.errorCode).toBe(ErrorCode.NONE);
    expect(group(h).staticMemberId('i-2')).toBeUndefined();
    expect(group(h).state).toBe('PreparingRebalance');
  });

  it('keeps static members that have not rejoined through a rebalance', async () => {
    const h = await harness();
    const [r1, r2] = await stableStatic(h);
    const rejoin = h.coordinator.joinGroup(joinRequest(G, { memberId: r1.memberId, groupInstanceId: 'i-1' }), info(9));
    // The second instance stays alive (heartbeats) but does not rejoin before the rebalance timeout.
    for (let t = 0; t < 30_000; t += 5000) {
      await heartbeat(h, r2, r2.generationId, 'i-2');
      await h.advance(5000);
    }
    const r = await rejoin;
    expect(r.errorCode).toBe(ErrorCode.NONE);
    expect(r.members.map((m) => m.memberId).sort()).toEqual([r1.memberId, r2.memberId].sort());
  });
});
