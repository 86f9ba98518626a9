/**
 * A classic-protocol group (Kafka's ClassicGroup and ClassicGroupMember): members, the protocol they agree on,
 * the generation, the leader and the state machine
 *
 * ```
 *                     ┌──────────────────── member leaves / session expires / leader or new member joins
 *                     ▼                                                                    │
 *   Empty ──join──► PreparingRebalance ──all joined / timeout──► CompletingRebalance ──leader's SyncGroup──► Stable
 *     ▲                  │     ▲                                        │                                   │
 *     └─ no member left ─┘     └────────── member joins or leaves ──────┘◄──────────────────────────────────┘
 *   any state ──► Dead (group deleted or its partition unloaded)
 * ```
 *
 * Pure bookkeeping: the protocol (timers, responses, records) lives in classic-protocol.ts.
 */
import type { JoinGroupResponse, JoinGroupResponseMember } from '../../protocol/messages/011-join-group.gen.js';
import type { SyncGroupResponse } from '../../protocol/messages/014-sync-group.gen.js';
import { createJoinGroupResponseMember } from '../../protocol/messages/011-join-group.gen.js';
import { decodeConsumerProtocolSubscription } from '../../protocol/messages/data/consumer-protocol-subscription.gen.js';
import { Reader } from '../../protocol/wire/reader.js';

export const ClassicGroupState = {
  EMPTY: 'Empty',
  PREPARING_REBALANCE: 'PreparingRebalance',
  COMPLETING_REBALANCE: 'CompletingRebalance',
  STABLE: 'Stable',
  DEAD: 'Dead',
} as const;
export type ClassicGroupStateName = (typeof ClassicGroupState)[keyof typeof ClassicGroupState];

/** Kafka's ClassicGroupState.validPreviousStates. */
const VALID_PREVIOUS: Record<ClassicGroupStateName, readonly ClassicGroupStateName[]> = {
  Empty: ['PreparingRebalance'],
  PreparingRebalance: ['Stable', 'CompletingRebalance', 'Empty'],
  CompletingRebalance: ['PreparingRebalance'],
  Stable: ['CompletingRebalance'],
  Dead: ['Stable', 'PreparingRebalance', 'CompletingRebalance', 'Empty', 'Dead'],
};

/** The embedded protocol type of Kafka consumers (ConsumerProtocol.PROTOCOL_TYPE). */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';

export interface ClassicProtocol {
  readonly name: string;
  readonly metadata: Buffer;
}

/** A one-shot response slot: a parked JoinGroup or SyncGroup request. */
export type Responder<T> = (response: T) => void;

export class ClassicGroupMember {
  awaitingJoin: Responder<JoinGroupResponse> | null = null;
  awaitingSync: Responder<SyncGroupResponse> | null = null;
  /** Joined but not yet through a completed join phase: may be expired while awaiting join. */
  isNew = false;
  assignment: Buffer = Buffer.alloc(0);

  constructor(
    readonly memberId: string,
    readonly groupInstanceId: string | null,
    readonly clientId: string,
    readonly clientHost: string,
    public rebalanceTimeoutMs: number,
    public sessionTimeoutMs: number,
    readonly protocolType: string,
    public supportedProtocols: readonly ClassicProtocol[],
  ) {}

  get isStatic(): boolean {
    return this.groupInstanceId !== null;
  }

  get isAwaitingJoin(): boolean {
    return this.awaitingJoin !== null;
  }

  get isAwaitingSync(): boolean {
    return this.awaitingSync !== null;
  }

  /** Kafka: members awaiting a rebalance response satisfy heartbeats, except new members. */
  get hasSatisfiedHeartbeat(): boolean {
    if (this.isNew) return false;
    return this.isAwaitingJoin || this.isAwaitingSync;
  }

  /** The metadata the member sent for a protocol. */
  metadata(protocolName: string): Buffer {
    const p = this.supportedProtocols.find((x) => x.name === protocolName);
    if (!p) throw new Error(`member ${this.memberId} does not support protocol ${protocolName}`);
    return p.metadata;
  }

  /** Same protocols, in the same order, with the same metadata (Kafka's ClassicGroupMember.matches). */
  matches(protocols: readonly ClassicProtocol[]): boolean {
    if (protocols.length !== this.supportedProtocols.length) return false;
    return protocols.every((p, i) => p.name === this.supportedProtocols[i]!.name && p.metadata.equals(this.supportedProtocols[i]!.metadata));
  }

  /** The first of the member's protocols (in its order of preference) that is a candidate. */
  vote(candidates: ReadonlySet<string>): string {
    for (const p of this.supportedProtocols) if (candidates.has(p.name)) return p.name;
    throw new Error(`member ${this.memberId} supports none of the candidate protocols`);
  }
}

export class ClassicGroup {
  readonly type = 'classic';
  state: ClassicGroupStateName;
  previousState: ClassicGroupStateName;
  /** When the group entered its state (ms); used for offset expiration of empty groups. */
  currentStateTimestampMs: number | null;
  protocolType: string | null;
  protocolName: string | null;
  generationId: number;
  leaderId: string | null;
  readonly members = new Map<string, ClassicGroupMember>();
  /** groupInstanceId → memberId (KIP-345). */
  readonly staticMembers = new Map<string, string>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet (KIP-394). */
  readonly pendingJoinMembers = new Set<string>();
  /** Members of the current generation that have not sent SyncGroup yet. */
  readonly pendingSyncMembers = new Set<string>();
  /** protocol name → number of members supporting it. */
  private readonly supportedProtocols = new Map<string, number>();
  numMembersAwaitingJoin = 0;
  /** A member joined during the initial rebalance delay: extend it (group.initial.rebalance.delay.ms). */
  newMemberAdded = false;
  /** Topics the members subscribe to (consumer protocol), or null when unknown. */
  subscribedTopics: Set<string> | null = null;

  constructor(
    readonly groupId: string,
    init: {
      state?: ClassicGroupStateName;
      generationId?: number;
      protocolType?: string | null;
      protocolName?: string | null;
      leaderId?: string | null;
      currentStateTimestampMs?: number | null;
      nowMs: number;
    },
  ) {
    this.state = init.state ?? ClassicGroupState.EMPTY;
    this.previousState = this.state;
    this.generationId = init.generationId ?? 0;
    this.protocolType = init.protocolType ?? null;
    this.protocolName = init.protocolName ?? null;
    this.leaderId = init.leaderId ?? null;
    this.currentStateTimestampMs = init.currentStateTimestampMs === undefined ? init.nowMs : init.currentStateTimestampMs;
  }

  is(state: ClassicGroupStateName): boolean {
    return this.state === state;
  }

  get isEmpty(): boolean {
    return this.state === ClassicGroupState.EMPTY;
  }

  /** A group created only to hold offsets committed outside group management (no protocol type). */
  get isSimpleGroup(): boolean {
    return this.protocolType === null || this.protocolType === '';
  }

  get numMembers(): number {
    return this.members.size;
  }

  hasMember(memberId: string): boolean {
    return this.members.has(memberId);
  }

  member(memberId: string): ClassicGroupMember {
    const m = this.members.get(memberId);
    if (!m) throw new Error(`member ${memberId} is not in group ${this.groupId}`);
    return m;
  }

  isLeader(memberId: string): boolean {
    return this.leaderId === memberId;
  }

  usesConsumerProtocol(): boolean {
    return this.protocolType === CONSUMER_PROTOCOL_TYPE;
  }

  transitionTo(target: ClassicGroupStateName, nowMs: number): void {
    if (!VALID_PREVIOUS[target].includes(this.state)) {
      throw new Error(`group ${this.groupId} should be in one of ${VALID_PREVIOUS[target].join(', ')} before moving to ${target}; it is ${this.state}`);
    }
    this.previousState = this.state;
    this.state = target;
    this.currentStateTimestampMs = nowMs;
  }

  /** Kafka's canRebalance: PreparingRebalance may be entered from here. */
  canRebalance(): boolean {
    return VALID_PREVIOUS.PreparingRebalance.includes(this.state);
  }

  add(member: ClassicGroupMember, awaitingJoin: Responder<JoinGroupResponse> | null): void {
    if (member.groupInstanceId !== null) {
      if (this.staticMembers.has(member.groupInstanceId)) throw new Error(`static member ${member.groupInstanceId} is already in group ${this.groupId}`);
      this.staticMembers.set(member.groupInstanceId, member.memberId);
    }
    if (this.members.size === 0) this.protocolType = member.protocolType;
    if (this.protocolType !== member.protocolType) throw new Error('the group and member protocol types differ');
    if (this.leaderId === null) this.leaderId = member.memberId;
    this.members.set(member.memberId, member);
    this.incrementProtocols(member);
    member.awaitingJoin = awaitingJoin;
    if (member.isAwaitingJoin) this.numMembersAwaitingJoin++;
    this.pendingJoinMembers.delete(member.memberId);
  }

  remove(memberId: string): void {
    const m = this.members.get(memberId);
    if (m) {
      this.members.delete(memberId);
      this.decrementProtocols(m);
      if (m.isAwaitingJoin) this.numMembersAwaitingJoin--;
      if (m.groupInstanceId !== null) this.staticMembers.delete(m.groupInstanceId);
    }
    if (this.isLeader(memberId)) {
      const next = this.members.keys().next();
      this.leaderId = next.done ? null : next.value;
    }
    this.pendingJoinMembers.delete(memberId);
    this.pendingSyncMembers.delete(memberId);
  }

  /** Updates a rejoining member's protocols and timeouts and parks (or clears) its JoinGroup. */
  updateMember(member: ClassicGroupMember, protocols: readonly ClassicProtocol[], rebalanceTimeoutMs: number, sessionTimeoutMs: number, awaitingJoin: Responder<JoinGroupResponse> | null): void {
    this.decrementProtocols(member);
    member.supportedProtocols = protocols;
    this.incrementProtocols(member);
    member.rebalanceTimeoutMs = rebalanceTimeoutMs;
    member.sessionTimeoutMs = sessionTimeoutMs;
    if (awaitingJoin !== null && !member.isAwaitingJoin) this.numMembersAwaitingJoin++;
    else if (awaitingJoin === null && member.isAwaitingJoin) this.numMembersAwaitingJoin--;
    member.awaitingJoin = awaitingJoin;
  }

  /**
   * KIP-345: gives a static member a new member id, keeping everything else. A request parked under the old id
   * is answered with FENCED_INSTANCE_ID by the caller-supplied fence function before the swap.
   */
  replaceStaticMember(groupInstanceId: string, oldMemberId: string, newMemberId: string, fence: (old: ClassicGroupMember) => void): ClassicGroupMember {
    const old = this.members.get(oldMemberId);
    if (!old) throw new Error(`cannot replace unknown member ${oldMemberId}`);
    fence(old);
    if (old.isAwaitingJoin) this.numMembersAwaitingJoin--;
    old.awaitingJoin = null;
    old.awaitingSync = null;
    this.members.delete(oldMemberId);
    const m = new ClassicGroupMember(newMemberId, old.groupInstanceId, old.clientId, old.clientHost, old.rebalanceTimeoutMs, old.sessionTimeoutMs, old.protocolType, old.supportedProtocols);
    m.assignment = old.assignment;
    this.members.set(newMemberId, m);
    if (this.isLeader(oldMemberId)) this.leaderId = newMemberId;
    if (this.pendingSyncMembers.delete(oldMemberId)) this.pendingSyncMembers.add(newMemberId);
    this.staticMembers.set(groupInstanceId, newMemberId);
    return m;
  }

  /** Kafka's maybeElectNewJoinedLeader: keep a leader that rejoined, else pick a member that did. */
  maybeElectNewJoinedLeader(): boolean {
    if (this.leaderId === null) return false;
    const leader = this.members.get(this.leaderId);
    if (leader && leader.isAwaitingJoin) return true;
    for (const m of this.members.values()) {
      if (m.isAwaitingJoin) {
        this.leaderId = m.memberId;
        return true;
      }
    }
    return false;
  }

  staticMemberId(groupInstanceId: string): string | undefined {
    return this.staticMembers.get(groupInstanceId);
  }

  hasAllMembersJoined(): boolean {
    return this.members.size === this.numMembersAwaitingJoin && this.pendingJoinMembers.size === 0;
  }

  notYetRejoinedMembers(): ClassicGroupMember[] {
    return [...this.members.values()].filter((m) => !m.isAwaitingJoin);
  }

  /** The largest rebalance timeout of the members (Kafka's group rebalance timeout). */
  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  private incrementProtocols(m: ClassicGroupMember): void {
    for (const p of m.supportedProtocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) + 1);
  }

  private decrementProtocols(m: ClassicGroupMember): void {
    for (const p of m.supportedProtocols) this.supportedProtocols.set(p.name, (this.supportedProtocols.get(p.name) ?? 0) - 1);
  }

  /** Protocols every member supports. */
  private candidateProtocols(): Set<string> {
    const out = new Set<string>();
    for (const [name, count] of this.supportedProtocols) if (count === this.members.size) out.add(name);
    return out;
  }

  /**
   * Kafka's supportsProtocols: an empty group takes any non-empty protocol type and list; otherwise the type must
   * match and one of the protocols must be supported by every member.
   */
  supportsProtocols(protocolType: string, protocols: readonly ClassicProtocol[]): boolean {
    if (this.isEmpty) return protocolType !== '' && protocols.length > 0;
    return this.protocolType === protocolType && protocols.some((p) => (this.supportedProtocols.get(p.name) ?? 0) === this.members.size);
  }

  /** Kafka's selectProtocol: every member votes for its preferred candidate; most votes wins (first seen on ties). */
  selectProtocol(): string {
    if (this.members.size === 0) throw new Error(`cannot select a protocol for empty group ${this.groupId}`);
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const v = m.vote(candidates);
      votes.set(v, (votes.get(v) ?? 0) + 1);
    }
    let best: string | null = null;
    let bestVotes = -1;
    for (const [name, n] of votes) {
      if (n > bestVotes) {
        best = name;
        bestVotes = n;
      }
    }
    return best!;
  }

  /** Kafka's initNextGeneration. */
  initNextGeneration(nowMs: number): void {
    this.generationId++;
    if (this.members.size > 0) {
      this.protocolName = this.selectProtocol();
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo(ClassicGroupState.COMPLETING_REBALANCE, nowMs);
    } else {
      this.protocolName = null;
      this.subscribedTopics = this.computeSubscribedTopics();
      this.transitionTo(ClassicGroupState.EMPTY, nowMs);
    }
    this.pendingSyncMembers.clear();
  }

  /**
   * The topics the members subscribe to, parsed from their consumer-protocol metadata (the v0 prefix, which every
   * version starts with); null when the group does not use the consumer protocol or the metadata is malformed.
   */
  computeSubscribedTopics(): Set<string> | null {
    if (this.protocolType !== CONSUMER_PROTOCOL_TYPE) return null;
    if (this.members.size === 0) return new Set();
    if (this.protocolName === null) return null;
    const out = new Set<string>();
    for (const m of this.members.values()) {
      const topics = parseSubscribedTopics(m.metadata(this.protocolName));
      if (topics === null) return null;
      for (const t of topics) out.add(t);
    }
    return out;
  }

  /** Kafka's isSubscribedToTopic: unknown subscriptions count as subscribed for consumer-protocol groups. */
  isSubscribedToTopic(topic: string): boolean {
    if (this.subscribedTopics !== null) return this.subscribedTopics.has(topic);
    return this.usesConsumerProtocol();
  }

  /** Members as the leader's JoinGroup response lists them. */
  currentMembersForLeader(): JoinGroupResponseMember[] {
    const protocol = this.protocolName;
    if (protocol === null) return [];
    return [...this.members.values()].map((m) => createJoinGroupResponseMember({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: m.metadata(protocol) }));
  }
}

/** Topics of a ConsumerProtocolSubscription (int16 version, then the v0 fields), or null if it does not parse. */
export function parseSubscribedTopics(metadata: Buffer): string[] | null {
  if (metadata.length < 2) return null;
  const r = new Reader(metadata, 2);
  const s = decodeConsumerProtocolSubscription(r, 0);
  return r.ok ? s.topics : null;
}
