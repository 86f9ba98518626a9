/**
 * KIP-848 server-side assignors: given the members (their subscribed topic ids and current target) and the
 * subscribed topics' partition counts, compute every member's target partitions. `group.consumer.assignors`
 * picks the available ones; a member may ask for one by name (ConsumerGroupHeartbeat.ServerAssignor).
 *
 * - `uniform` (the default, as in Kafka): spreads all partitions of all topics evenly, keeping each member's
 *   previous target partitions where the balance allows (sticky), so a rebalance moves as few partitions as
 *   possible. With identical subscriptions the counts differ by at most one.
 * - `range`: per topic, contiguous partition ranges in member order (instance id, else member id), the first
 *   members getting one more when the count does not divide; members subscribed to the same topics with the
 *   same partition counts get the same partition numbers of each (co-partitioning for joins).
 */
import type { Assignment } from './consumer-group.js';

export interface AssignmentMemberSpec {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  /** Topic ids the member subscribes to (only topics that exist). */
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The member's target assignment before this computation. */
  readonly currentTarget: Assignment;
}

export interface AssignmentSpec {
  readonly members: ReadonlyMap<string, AssignmentMemberSpec>;
  /** topic id → number of partitions. */
  readonly topics: ReadonlyMap<string, number>;
}

export interface ServerAssignor {
  readonly name: string;
  assign(spec: AssignmentSpec): Map<string, Assignment>;
}

type MutableAssignment = Map<string, Set<number>>;

function addTo(a: MutableAssignment, topicId: string, p: number): void {
  let s = a.get(topicId);
  if (!s) a.set(topicId, (s = new Set()));
  s.add(p);
}

function removeFrom(a: MutableAssignment, topicId: string, p: number): void {
  const s = a.get(topicId);
  if (!s) return;
  s.delete(p);
  if (s.size === 0) a.delete(topicId);
}

const byString = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function sortedMembers(spec: AssignmentSpec): AssignmentMemberSpec[] {
  return [...spec.members.values()].sort((a, b) => byString(a.memberId, b.memberId));
}

/** The partitions a member may hold: those of subscribed topics that still exist. */
function isValid(spec: AssignmentSpec, m: AssignmentMemberSpec, topicId: string, p: number): boolean {
  const n = spec.topics.get(topicId);
  return n !== undefined && p >= 0 && p < n && m.subscribedTopicIds.has(topicId);
}

export class UniformAssignor implements ServerAssignor {
  readonly name = 'uniform';

  assign(spec: AssignmentSpec): Map<string, Assignment> {
    const members = sortedMembers(spec);
    const out = new Map<string, MutableAssignment>(members.map((m) => [m.memberId, new Map()]));
    if (members.length === 0) return out;
    const count = new Map<string, number>(members.map((m) => [m.memberId, 0]));
    const owned = new Set<string>();
    const key = (t: string, p: number): string => `${t}:${p}`;

    // Topics someone subscribes to, and who may take each.
    const topicIds = [...spec.topics.keys()].filter((t) => members.some((m) => m.subscribedTopicIds.has(t))).sort(byString);
    const eligible = new Map<string, AssignmentMemberSpec[]>(topicIds.map((t) => [t, members.filter((m) => m.subscribedTopicIds.has(t))]));
    let total = 0;
    for (const t of topicIds) total += spec.topics.get(t)!;

    const homogeneous = members.every((m) => topicIds.every((t) => m.subscribedTopicIds.has(t)));
    // With identical subscriptions the final counts are known up front: minQuota, and one more for `extra` members.
    const minQuota = Math.floor(total / members.length);
    let extra = total % members.length;

    // 1. Keep previous targets that are still valid, up to the quota when subscriptions are identical.
    for (const m of members) {
      const previous: Array<[string, number]> = [];
      for (const [t, ps] of m.currentTarget) for (const p of ps) if (isValid(spec, m, t, p)) previous.push([t, p]);
      previous.sort((a, b) => byString(a[0], b[0]) || a[1] - b[1]);
      let quota = Infinity;
      if (homogeneous) {
        quota = minQuota;
        if (previous.length > minQuota && extra > 0) {
          quota++;
          extra--;
        }
      }
      for (const [t, p] of previous) {
        if (count.get(m.memberId)! >= quota) break;
        if (owned.has(key(t, p))) continue;
        owned.add(key(t, p));
        addTo(out.get(m.memberId)!, t, p);
        count.set(m.memberId, count.get(m.memberId)! + 1);
      }
    }

    // 2. Give every unassigned partition to the least loaded member that may take it; partitions with the
    //    fewest candidates first, so constrained subscriptions are served before flexible ones.
    const unassigned: Array<[string, number]> = [];
    for (const t of topicIds) for (let p = 0; p < spec.topics.get(t)!; p++) if (!owned.has(key(t, p))) unassigned.push([t, p]);
    unassigned.sort((a, b) => eligible.get(a[0])!.length - eligible.get(b[0])!.length || byString(a[0], b[0]) || a[1] - b[1]);
    for (const [t, p] of unassigned) {
      let best: AssignmentMemberSpec | null = null;
      for (const m of eligible.get(t)!) if (best === null || count.get(m.memberId)! < count.get(best.memberId)!) best = m;
      if (best === null) continue;
      owned.add(key(t, p));
      addTo(out.get(best.memberId)!, t, p);
      count.set(best.memberId, count.get(best.memberId)! + 1);
    }

    // 3. Balance: move a partition from a member to an eligible one holding at least two fewer, until none can move.
    //    Each move lowers the sum of squared counts, so this ends.
    for (;;) {
      let moved = false;
      const byLoad = [...members].sort((a, b) => count.get(b.memberId)! - count.get(a.memberId)! || byString(a.memberId, b.memberId));
      outer: for (const from of byLoad) {
        const fromCount = count.get(from.memberId)!;
        const parts: Array<[string, number]> = [];
        for (const [t, ps] of out.get(from.memberId)!) for (const p of ps) parts.push([t, p]);
        parts.sort((a, b) => byString(a[0], b[0]) || b[1] - a[1]);
        for (const [t, p] of parts) {
          let to: AssignmentMemberSpec | null = null;
          for (const m of eligible.get(t)!) {
            const c = count.get(m.memberId)!;
            if (c < fromCount - 1 && (to === null || c < count.get(to.memberId)!)) to = m;
          }
          if (to === null) continue;
          removeFrom(out.get(from.memberId)!, t, p);
          addTo(out.get(to.memberId)!, t, p);
          count.set(from.memberId, fromCount - 1);
          count.set(to.memberId, count.get(to.memberId)! + 1);
          moved = true;
          break outer;
        }
      }
      if (!moved) break;
    }
    return out;
  }
}

export class RangeAssignor implements ServerAssignor {
  readonly name = 'range';

  assign(spec: AssignmentSpec): Map<string, Assignment> {
    const out = new Map<string, MutableAssignment>([...spec.members.keys()].map((id) => [id, new Map()]));
    const order = (m: AssignmentMemberSpec): string => m.instanceId ?? m.memberId;
    for (const [topicId, numPartitions] of spec.topics) {
      const subscribers = [...spec.members.values()]
        .filter((m) => m.subscribedTopicIds.has(topicId))
        .sort((a, b) => byString(order(a), order(b)) || byString(a.memberId, b.memberId));
      if (subscribers.length === 0) continue;
      const quota = Math.floor(numPartitions / subscribers.length);
      const extra = numPartitions % subscribers.length;
      let next = 0;
      subscribers.forEach((m, i) => {
        const n = quota + (i < extra ? 1 : 0);
        for (let p = next; p < next + n; p++) addTo(out.get(m.memberId)!, topicId, p);
        next += n;
      });
    }
    return out;
  }
}

export function createAssignors(names: readonly string[]): Map<string, ServerAssignor> {
  const all: ServerAssignor[] = [new UniformAssignor(), new RangeAssignor()];
  const out = new Map<string, ServerAssignor>();
  for (const n of names) {
    const a = all.find((x) => x.name === n);
    if (!a) throw new Error(`unknown assignor ${n}`);
    out.set(n, a);
  }
  return out;
}
