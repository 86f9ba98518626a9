import { describe, expect, it } from 'vitest';
import { MemberState, newMember, type Assignment, type ConsumerGroupMember } from '../../../src/coordinator/consumer-group.js';
import { reconcile } from '../../../src/coordinator/reconciliation.js';

const T = 'topic-id-aaaaaaaaaaaaaa';
const a = (...ps: number[]): Assignment => new Map(ps.length ? [[T, new Set(ps)]] : []);
const owned = (...ps: number[]) => [{ topicId: T, partitions: ps }];
const free = () => -1;

function member(epoch: number, assigned: Assignment, state: number = MemberState.STABLE, pending: Assignment = new Map()): ConsumerGroupMember {
  return { ...newMember('m'), memberEpoch: epoch, previousMemberEpoch: epoch - 1, state: state as ConsumerGroupMember['state'], assignedPartitions: assigned, partitionsPendingRevocation: pending };
}

describe('KIP-848 reconciliation', () => {
  it('leaves a member reconciled to the target epoch unchanged', () => {
    const m = member(3, a(0, 1));
    expect(reconcile(m, { targetEpoch: 3, target: a(0), currentPartitionEpoch: free, owned: owned(0, 1) })).toBe(m);
  });

  it('asks for revocation first and stays in its epoch while the member still owns revoked partitions', () => {
    const next = reconcile(member(3, a(0, 1, 2)), { targetEpoch: 4, target: a(0, 5), currentPartitionEpoch: free, owned: owned(0, 1, 2) });
    expect(next.state).toBe(MemberState.UNREVOKED_PARTITIONS);
    expect(next.memberEpoch).toBe(3);
    expect(next.assignedPartitions).toEqual(a(0));
    expect(next.partitionsPendingRevocation).toEqual(a(1, 2));
    // Still owning partition 2: no progress.
    expect(reconcile(next, { targetEpoch: 4, target: a(0, 5), currentPartitionEpoch: free, owned: owned(0, 2) })).toBe(next);
    // Revoked: moves to the next epoch and gets the new partition.
    const done = reconcile(next, { targetEpoch: 4, target: a(0, 5), currentPartitionEpoch: free, owned: owned(0) });
    expect(done).toMatchObject({ state: MemberState.STABLE, memberEpoch: 4, previousMemberEpoch: 3 });
    expect(done.assignedPartitions).toEqual(a(0, 5));
  });

  it('waits for partitions other members still hold (UNRELEASED_PARTITIONS) and takes them once free', () => {
    const held = (_: string, p: number) => (p === 7 ? 2 : -1);
    const next = reconcile(member(2, a(0)), { targetEpoch: 3, target: a(0, 6, 7), currentPartitionEpoch: held, owned: owned(0) });
    expect(next).toMatchObject({ state: MemberState.UNRELEASED_PARTITIONS, memberEpoch: 3 });
    expect(next.assignedPartitions).toEqual(a(0, 6));
    const done = reconcile(next, { targetEpoch: 3, target: a(0, 6, 7), currentPartitionEpoch: free, owned: owned(0, 6) });
    expect(done.state).toBe(MemberState.STABLE);
    expect(done.assignedPartitions).toEqual(a(0, 6, 7));
  });

  it('treats a missing owned-partitions list as still owning everything', () => {
    const next = reconcile(member(1, a(0, 1)), { targetEpoch: 2, target: a(0), currentPartitionEpoch: free, owned: null });
    expect(next.state).toBe(MemberState.UNREVOKED_PARTITIONS);
    expect(reconcile(next, { targetEpoch: 2, target: a(0), currentPartitionEpoch: free, owned: null })).toBe(next);
  });

  it('fences a member in a state it does not know unless it owns nothing', () => {
    const m = member(1, a(0), MemberState.UNKNOWN);
    expect(() => reconcile(m, { targetEpoch: 2, target: a(0), currentPartitionEpoch: free, owned: owned(0) })).toThrow(/unknown state/);
    expect(reconcile(m, { targetEpoch: 2, target: a(0), currentPartitionEpoch: free, owned: [] }).memberEpoch).toBe(2);
  });
});
