/**
 * KIP-848 incremental reconciliation (Kafka's CurrentAssignmentBuilder): moves one member's current assignment
 * towards its target, one safe step per heartbeat.
 *
 * ```
 *   keep      = current ∩ target                      still owned, stays
 *   revoke    = current − target                      must be given up first
 *   add       = target − current − held by others     given only once free
 *
 *   revoke ≠ ∅ and still owned ─► UNREVOKED_PARTITIONS, same epoch, assigned = keep, pending = revoke
 *   otherwise                  ─► target epoch, assigned = keep ∪ add,
 *                                 UNRELEASED_PARTITIONS while part of the target is held by others, else STABLE
 * ```
 *
 * A member in UNREVOKED_PARTITIONS moves on once its heartbeat no longer lists the revoked partitions: the epoch
 * is bumped by one (so that a commit fenced by the revocation cannot succeed) and the member is reconciled again.
 * Because a partition is added only when no member holds it, no partition is owned by two members at any epoch.
 */
import { GroupApiError } from './errors.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { MemberState, type Assignment, type ConsumerGroupMember } from './consumer-group.js';

/** topicId → partitions as the member reports owning them (ConsumerGroupHeartbeat.TopicPartitions); null when not sent. */
export type OwnedPartitions = ReadonlyArray<{ readonly topicId: string; readonly partitions: readonly number[] }> | null;

export interface ReconcileInput {
  readonly targetEpoch: number;
  readonly target: Assignment;
  /** Epoch of the member holding a partition, -1 when free. */
  readonly currentPartitionEpoch: (topicId: string, partition: number) => number;
  readonly owned: OwnedPartitions;
}

function ownsAnyOf(owned: OwnedPartitions, partitions: Assignment): boolean {
  // Without the list the member may still own them: wait.
  if (owned === null) return true;
  for (const tp of owned) {
    const pending = partitions.get(tp.topicId);
    if (!pending) continue;
    for (const p of tp.partitions) if (pending.has(p)) return true;
  }
  return false;
}

export function reconcile(member: ConsumerGroupMember, input: ReconcileInput): ConsumerGroupMember {
  switch (member.state) {
    case MemberState.STABLE:
      if (member.memberEpoch === input.targetEpoch) return member;
      return nextAssignment(member, member.memberEpoch, member.assignedPartitions, input);
    case MemberState.UNREVOKED_PARTITIONS:
      if (ownsAnyOf(input.owned, member.partitionsPendingRevocation)) return member;
      return nextAssignment(member, member.memberEpoch + 1, member.assignedPartitions, input);
    case MemberState.UNRELEASED_PARTITIONS:
      return nextAssignment(member, member.memberEpoch, member.assignedPartitions, input);
    default:
      // A state written by a newer coordinator: restart the member from scratch if it owns nothing.
      if (input.owned === null || input.owned.length > 0) {
        throw new GroupApiError(ErrorCode.FENCED_MEMBER_EPOCH, 'The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.');
      }
      return nextAssignment(member, input.targetEpoch, member.assignedPartitions, input);
  }
}

function nextAssignment(member: ConsumerGroupMember, epoch: number, current: Assignment, input: ReconcileInput): ConsumerGroupMember {
  const keep = new Map<string, Set<number>>();
  const revoke = new Map<string, Set<number>>();
  const add = new Map<string, Set<number>>();
  let unreleased = false;
  const topicIds = new Set([...input.target.keys(), ...current.keys()]);
  for (const topicId of topicIds) {
    const target = input.target.get(topicId) ?? new Set<number>();
    const cur = current.get(topicId) ?? new Set<number>();
    const k = new Set<number>();
    const r = new Set<number>();
    const a = new Set<number>();
    for (const p of cur) (target.has(p) ? k : r).add(p);
    for (const p of target) {
      if (k.has(p)) continue;
      if (input.currentPartitionEpoch(topicId, p) !== -1) unreleased = true;
      else a.add(p);
    }
    if (k.size) keep.set(topicId, k);
    if (r.size) revoke.set(topicId, r);
    if (a.size) add.set(topicId, a);
  }

  if (revoke.size > 0 && ownsAnyOf(input.owned, revoke)) {
    return {
      ...member,
      state: MemberState.UNREVOKED_PARTITIONS,
      previousMemberEpoch: member.memberEpoch,
      memberEpoch: epoch,
      assignedPartitions: keep,
      partitionsPendingRevocation: revoke,
    };
  }
  for (const [t, ps] of add) {
    const k = keep.get(t);
    if (k) for (const p of ps) k.add(p);
    else keep.set(t, ps);
  }
  return {
    ...member,
    state: unreleased ? MemberState.UNRELEASED_PARTITIONS : MemberState.STABLE,
    previousMemberEpoch: member.memberEpoch,
    memberEpoch: input.targetEpoch,
    assignedPartitions: keep,
    partitionsPendingRevocation: new Map(),
  };
}
