/**
 * A KIP-848 consumer group (Kafka's ConsumerGroup and ConsumerGroupMember). Its state is exactly what its
 * records say (records.ts, key versions 3-8): the coordinator changes it only by replaying the records it
 * writes, so a group rebuilt from the log equals the live one.
 *
 * ```
 *   group epoch        bumped when a subscription, the members, or the subscribed topics' partitions change
 *   assignment epoch   the group epoch the target assignment was computed for
 *   member epoch       the epoch a member's current assignment belongs to; moves to the assignment epoch as the
 *                      member reconciles:  STABLE ─► UNREVOKED_PARTITIONS (revoke first) ─► STABLE / UNRELEASED_
 *                      PARTITIONS (wait until other members release what it is given)
 *
 *   group state   Empty (no member) · Assigning (group epoch > assignment epoch) · Reconciling (some member
 *                 not at the assignment epoch) · Stable
 * ```
 *
 * Every partition is owned by at most one member at a time: `partitionEpochs` records the epoch of the member
 * holding each assigned or pending-revocation partition, and a partition is only given to a member once no
 * one holds it (reconciliation.ts).
 *
 * Members speak the consumer protocol (ConsumerGroupHeartbeat) or, during an online migration between the
 * protocols, the classic one (JoinGroup/SyncGroup/Heartbeat; `classicMemberMetadata` set): see classic-members.ts.
 */

export const MemberState = {
  STABLE: 0,
  UNREVOKED_PARTITIONS: 1,
  UNRELEASED_PARTITIONS: 2,
  UNKNOWN: 127,
} as const;
export type MemberStateValue = (typeof MemberState)[keyof typeof MemberState];

export const MEMBER_STATE_NAMES: Readonly<Record<number, string>> = { 0: 'stable', 1: 'unrevoked_partitions', 2: 'unreleased_partitions', 127: 'unknown' };

/** KIP-848 sentinel epochs. */
export const LEAVE_GROUP_MEMBER_EPOCH = -1;
export const LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2;

export const ConsumerGroupState = {
  EMPTY: 'Empty',
  ASSIGNING: 'Assigning',
  RECONCILING: 'Reconciling',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ConsumerGroupStateName = (typeof ConsumerGroupState)[keyof typeof ConsumerGroupState];

/** topic id → partitions. */
export type Assignment = ReadonlyMap<string, ReadonlySet<number>>;

export const EMPTY_ASSIGNMENT: Assignment = new Map();

/** What a member speaking the classic protocol joined with (ConsumerGroupMemberMetadataValue.ClassicMemberMetadata). */
export interface ClassicMemberMetadata {
  readonly sessionTimeoutMs: number;
  /** The JoinGroup protocols (assignor names with their ConsumerProtocolSubscription), in the member's order. */
  readonly supportedProtocols: readonly { readonly name: string; readonly metadata: Buffer }[];
}

export interface ConsumerGroupMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  readonly clientId: string;
  readonly clientHost: string;
  /** Sorted. */
  readonly subscribedTopicNames: readonly string[];
  readonly subscribedTopicRegex: string | null;
  readonly rebalanceTimeoutMs: number;
  readonly serverAssignor: string | null;
  readonly memberEpoch: number;
  readonly previousMemberEpoch: number;
  readonly state: MemberStateValue;
  readonly assignedPartitions: Assignment;
  readonly partitionsPendingRevocation: Assignment;
  /** Set for a member that speaks the classic protocol (online migration); null for a consumer-protocol member. */
  readonly classicMemberMetadata: ClassicMemberMetadata | null;
}

export function newMember(memberId: string): ConsumerGroupMember {
  return {
    memberId,
    instanceId: null,
    rackId: null,
    clientId: '',
    clientHost: '',
    subscribedTopicNames: [],
    subscribedTopicRegex: null,
    rebalanceTimeoutMs: -1,
    serverAssignor: null,
    memberEpoch: 0,
    previousMemberEpoch: 0,
    state: MemberState.STABLE,
    assignedPartitions: EMPTY_ASSIGNMENT,
    partitionsPendingRevocation: EMPTY_ASSIGNMENT,
    classicMemberMetadata: null,
  };
}

export function usesClassicProtocol(m: ConsumerGroupMember): boolean {
  return m.classicMemberMetadata !== null;
}

function classicMetadataEquals(a: ClassicMemberMetadata | null, b: ClassicMemberMetadata | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.sessionTimeoutMs === b.sessionTimeoutMs &&
    a.supportedProtocols.length === b.supportedProtocols.length &&
    a.supportedProtocols.every((p, i) => p.name === b.supportedProtocols[i]!.name && p.metadata.equals(b.supportedProtocols[i]!.metadata))
  );
}

export function isReconciledTo(m: ConsumerGroupMember, epoch: number): boolean {
  return m.state === MemberState.STABLE && m.memberEpoch === epoch;
}

export function assignmentEquals(a: Assignment, b: Assignment): boolean {
  if (a.size !== b.size) return false;
  for (const [t, ps] of a) {
    const other = b.get(t);
    if (!other || other.size !== ps.size) return false;
    for (const p of ps) if (!other.has(p)) return false;
  }
  return true;
}

export function assignmentSize(a: Assignment): number {
  let n = 0;
  for (const ps of a.values()) n += ps.size;
  return n;
}

/** Subscription fields equal (what decides whether a ConsumerGroupMemberMetadata record is written). */
export function memberSubscriptionEquals(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.instanceId === b.instanceId &&
    a.rackId === b.rackId &&
    a.clientId === b.clientId &&
    a.clientHost === b.clientHost &&
    a.rebalanceTimeoutMs === b.rebalanceTimeoutMs &&
    a.serverAssignor === b.serverAssignor &&
    a.subscribedTopicRegex === b.subscribedTopicRegex &&
    a.subscribedTopicNames.length === b.subscribedTopicNames.length &&
    a.subscribedTopicNames.every((t, i) => t === b.subscribedTopicNames[i]) &&
    classicMetadataEquals(a.classicMemberMetadata, b.classicMemberMetadata)
  );
}

export function memberAssignmentEquals(a: ConsumerGroupMember, b: ConsumerGroupMember): boolean {
  return (
    a.memberEpoch === b.memberEpoch &&
    a.previousMemberEpoch === b.previousMemberEpoch &&
    a.state === b.state &&
    assignmentEquals(a.assignedPartitions, b.assignedPartitions) &&
    assignmentEquals(a.partitionsPendingRevocation, b.partitionsPendingRevocation)
  );
}

/** A change of members to compute subscriptions for: one member added or updated, and members removed. */
export interface SubscriptionChange {
  readonly overriding?: ConsumerGroupMember;
  readonly removing?: string | ReadonlySet<string>;
}

export interface TopicMetadata {
  readonly topicId: string;
  readonly name: string;
  readonly numPartitions: number;
}

export class ConsumerGroup {
  readonly type = 'consumer';
  groupEpoch = 0;
  assignmentEpoch = 0;
  readonly members = new Map<string, ConsumerGroupMember>();
  /** instanceId → memberId. */
  readonly staticMembers = new Map<string, string>();
  /** The subscribed topics as last recorded: name → metadata. */
  subscriptionMetadata = new Map<string, TopicMetadata>();
  /** memberId → target partitions. */
  readonly targetAssignment = new Map<string, Assignment>();
  /** topic id → partition → epoch of the member holding it. */
  private readonly partitionEpochs = new Map<string, Map<number, number>>();
  /** Set when a topic event may change the subscription metadata; the next heartbeat recomputes it. */
  metadataRefreshNeeded = false;

  constructor(readonly groupId: string) {}

  get state(): ConsumerGroupStateName {
    if (this.members.size === 0) return ConsumerGroupState.EMPTY;
    if (this.groupEpoch > this.assignmentEpoch) return ConsumerGroupState.ASSIGNING;
    for (const m of this.members.values()) if (!isReconciledTo(m, this.assignmentEpoch)) return ConsumerGroupState.RECONCILING;
    return ConsumerGroupState.STABLE;
  }

  get isEmpty(): boolean {
    return this.members.size === 0;
  }

  staticMember(instanceId: string): ConsumerGroupMember | undefined {
    const id = this.staticMembers.get(instanceId);
    return id === undefined ? undefined : this.members.get(id);
  }

  targetAssignmentOf(memberId: string): Assignment {
    return this.targetAssignment.get(memberId) ?? EMPTY_ASSIGNMENT;
  }

  /** Epoch of the member holding a partition, or -1 when it is free. */
  currentPartitionEpoch(topicId: string, partition: number): number {
    return this.partitionEpochs.get(topicId)?.get(partition) ?? -1;
  }

  updateMember(m: ConsumerGroupMember): void {
    const old = this.members.get(m.memberId);
    if (old) this.removePartitionEpochs(old);
    this.members.set(m.memberId, m);
    if (old?.instanceId && old.instanceId !== m.instanceId && this.staticMembers.get(old.instanceId) === m.memberId) this.staticMembers.delete(old.instanceId);
    if (m.instanceId !== null) this.staticMembers.set(m.instanceId, m.memberId);
    this.addPartitionEpochs(m);
  }

  removeMember(memberId: string): void {
    const old = this.members.get(memberId);
    if (!old) return;
    this.removePartitionEpochs(old);
    this.members.delete(memberId);
    if (old.instanceId !== null && this.staticMembers.get(old.instanceId) === memberId) this.staticMembers.delete(old.instanceId);
  }

  private addPartitionEpochs(m: ConsumerGroupMember): void {
    const add = (a: Assignment): void => {
      for (const [topicId, ps] of a) {
        let byPartition = this.partitionEpochs.get(topicId);
        if (!byPartition) this.partitionEpochs.set(topicId, (byPartition = new Map()));
        for (const p of ps) {
          const held = byPartition.get(p);
          if (held !== undefined) {
            // Kafka's ConsumerGroup.addPartitionEpochs: two owners at once is a bug, never a state to record.
            throw new Error(`partition ${topicId}-${p} of group ${this.groupId} is still owned at epoch ${held}; cannot give it to ${m.memberId}`);
          }
          byPartition.set(p, m.memberEpoch);
        }
      }
    };
    add(m.assignedPartitions);
    add(m.partitionsPendingRevocation);
  }

  private removePartitionEpochs(m: ConsumerGroupMember): void {
    const remove = (a: Assignment): void => {
      for (const [topicId, ps] of a) {
        const byPartition = this.partitionEpochs.get(topicId);
        if (!byPartition) continue;
        for (const p of ps) byPartition.delete(p);
        if (byPartition.size === 0) this.partitionEpochs.delete(topicId);
      }
    };
    remove(m.assignedPartitions);
    remove(m.partitionsPendingRevocation);
  }

  /** Which assignor the group uses: the one most members ask for, else the default (Kafka's computePreferredServerAssignor). */
  preferredServerAssignor(defaultAssignor: string, overriding?: ConsumerGroupMember): string {
    const counts = new Map<string, number>();
    for (const m of this.members.values()) {
      const a = overriding && m.memberId === overriding.memberId ? overriding.serverAssignor : m.serverAssignor;
      if (a !== null) counts.set(a, (counts.get(a) ?? 0) + 1);
    }
    if (overriding && !this.members.has(overriding.memberId) && overriding.serverAssignor !== null) {
      counts.set(overriding.serverAssignor, (counts.get(overriding.serverAssignor) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestCount = 0;
    for (const [name, n] of counts) {
      if (n > bestCount) {
        best = name;
        bestCount = n;
      }
    }
    return best ?? defaultAssignor;
  }

  /** Members speaking the classic protocol. */
  get numClassicProtocolMembers(): number {
    let n = 0;
    for (const m of this.members.values()) if (usesClassicProtocol(m)) n++;
    return n;
  }

  /**
   * Kafka's supportsClassicProtocols: a classic member may join when its protocol type is "consumer" and, unless
   * the group is empty, one of its protocols is supported by every classic member already in the group.
   */
  supportsClassicProtocols(protocolType: string, protocolNames: readonly string[]): boolean {
    if (protocolType !== 'consumer') return false;
    if (this.isEmpty) return protocolNames.length > 0;
    const classic = [...this.members.values()].filter(usesClassicProtocol);
    return protocolNames.some((name) => classic.every((m) => m.classicMemberMetadata!.supportedProtocols.some((p) => p.name === name)));
  }

  /** Whether every member but `memberId` speaks the classic protocol, and `memberId` does not (Kafka's check before a downgrade). */
  allMembersUseClassicProtocolExcept(memberId: string): boolean {
    const m = this.members.get(memberId);
    return m !== undefined && !usesClassicProtocol(m) && this.numClassicProtocolMembers === this.members.size - 1;
  }

  /** Whether a member waits for partitions of its target that another member still holds. */
  waitingOnUnreleasedPartition(member: ConsumerGroupMember): boolean {
    if (member.state !== MemberState.UNRELEASED_PARTITIONS) return false;
    for (const [topicId, ps] of this.targetAssignmentOf(member.memberId)) {
      const assigned = member.assignedPartitions.get(topicId);
      for (const p of ps) if (!assigned?.has(p) && this.currentPartitionEpoch(topicId, p) !== -1) return true;
    }
    return false;
  }

  /** Topic names to subscribe to: every member's names and regex matches (`overriding` replaces or adds one member; `removing` drops some). */
  subscribedTopicNames(resolveRegex: (regex: string) => Iterable<string>, change?: SubscriptionChange): Set<string> {
    const removing = change?.removing;
    const removed = (id: string): boolean => (typeof removing === 'string' ? removing === id : removing?.has(id) === true);
    const out = new Set<string>();
    const add = (m: ConsumerGroupMember): void => {
      for (const t of m.subscribedTopicNames) out.add(t);
      if (m.subscribedTopicRegex !== null) for (const t of resolveRegex(m.subscribedTopicRegex)) out.add(t);
    };
    for (const m of this.members.values()) {
      if (removed(m.memberId)) continue;
      if (change?.overriding && change.overriding.memberId === m.memberId) continue;
      add(m);
    }
    if (change?.overriding) add(change.overriding);
    return out;
  }
}
