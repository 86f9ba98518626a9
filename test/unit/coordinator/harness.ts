/**
 * A coordinator on a manual clock over in-memory partition logs, with a topic registry of its own, and helpers
 * that drive the classic protocol the way a consumer does.
 */
import { randomUuid } from '../../../protocol/wire/uuid.js';
import { createJoinGroupRequest, createJoinGroupRequestProtocol, type JoinGroupRequest, type JoinGroupResponse } from '../../../protocol/messages/011-join-group.gen.js';
import { createSyncGroupRequest, createSyncGroupRequestAssignment, type SyncGroupResponse } from '../../../protocol/messages/014-sync-group.gen.js';
import { createConsumerProtocolSubscription, encodeConsumerProtocolSubscription } from '../../../protocol/messages/data/consumer-protocol-subscription.gen.js';
import { createConsumerProtocolAssignment, createConsumerProtocolAssignmentTopicPartition, encodeConsumerProtocolAssignment } from '../../../protocol/messages/data/consumer-protocol-assignment.gen.js';
import { Writer } from '../../../protocol/wire/writer.js';
import { ManualClock } from '../../../src/metadata/clock.js';
import { groupCoordinatorConfig, type GroupCoordinatorConfig } from '../../../src/coordinator/config.js';
import { GroupCoordinator } from '../../../src/coordinator/coordinator.js';
import type { RequestInfo, TopicInfo, TopicView } from '../../../src/coordinator/context.js';
import { MemoryPartitionLog } from '../../../src/coordinator/memory-log.js';
import type { ConsumerHeartbeatInput } from '../../../src/coordinator/consumer-protocol.js';
import type { ConsumerGroupHeartbeatResponse } from '../../../protocol/messages/068-consumer-group-heartbeat.gen.js';

type Listener = {
  topicCreated?(t: TopicInfo): void | Promise<void>;
  partitionsAdded?(t: TopicInfo, from: number): void | Promise<void>;
  topicDeleted?(t: TopicInfo): void | Promise<void>;
};

export class FakeTopics implements TopicView {
  private readonly byName = new Map<string, TopicInfo>();
  private readonly listeners: Listener[] = [];

  get(name: string): TopicInfo | undefined {
    return this.byName.get(name);
  }
  getById(id: string): TopicInfo | undefined {
    return [...this.byName.values()].find((t) => t.topicId === id);
  }
  list(): TopicInfo[] {
    return [...this.byName.values()];
  }
  addListener(l: Listener): void {
    this.listeners.push(l);
  }
  async create(name: string, opts: { partitions: number; allowInternal?: boolean }): Promise<TopicInfo> {
    return this.add(name, opts.partitions, name.startsWith('__'));
  }
  add(name: string, partitions: number, internal = false): TopicInfo {
    const t = { name, topicId: randomUuid(), partitions, internal };
    this.byName.set(name, t);
    for (const l of this.listeners) void l.topicCreated?.(t);
    return t;
  }
  grow(name: string, partitions: number): void {
    const t = this.byName.get(name)!;
    const next = { ...t, partitions };
    this.byName.set(name, next);
    for (const l of this.listeners) void l.partitionsAdded?.(next, t.partitions);
  }
  remove(name: string): void {
    const t = this.byName.get(name)!;
    this.byName.delete(name);
    for (const l of this.listeners) void l.topicDeleted?.(t);
  }
}

/** Lets pending promise callbacks (appends, responses) run. */
export async function settle(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((r) => setImmediate(r));
}

export interface Harness {
  readonly clock: ManualClock;
  readonly topics: FakeTopics;
  readonly logs: MemoryPartitionLog[];
  coordinator: GroupCoordinator;
  readonly config: GroupCoordinatorConfig;
  /** Stops the coordinator and starts a new one on the same logs (a broker restart). */
  restart(): Promise<GroupCoordinator>;
  /** Advances the clock and lets the operations it triggers finish. */
  advance(ms: number): Promise<void>;
}

export async function harness(overrides: Partial<GroupCoordinatorConfig> = {}, values: Record<string, string> = {}): Promise<Harness> {
  const clock = new ManualClock();
  const topics = new FakeTopics();
  const config = groupCoordinatorConfig(new Map(Object.entries({ 'offsets.topic.num.partitions': '3', ...values })), overrides);
  const logs = Array.from({ length: config.offsetsTopicNumPartitions }, () => new MemoryPartitionLog());
  const make = async (): Promise<GroupCoordinator> => {
    const c = new GroupCoordinator({ config, topics, clock, openLog: async (p) => logs[p]! });
    await c.start();
    // Partitions load on first use; these tests start from loaded ones, as a broker that served a while has.
    await c.loadOwned();
    return c;
  };
  const h: Harness = {
    clock,
    topics,
    logs,
    config,
    coordinator: await make(),
    async restart() {
      await h.coordinator.stop();
      h.coordinator = await make();
      return h.coordinator;
    },
    async advance(ms: number) {
      clock.advance(ms);
      await settle();
    },
  };
  return h;
}

export const CLIENT: RequestInfo = { clientId: 'consumer-1', clientHost: '/127.0.0.1', apiVersion: 9 };

export function info(apiVersion: number, clientId = 'consumer-1'): RequestInfo {
  return { clientId, clientHost: '/127.0.0.1', apiVersion };
}

/** A consumer-protocol subscription (ConsumerProtocolSubscription v1 with its version prefix). */
export function subscription(topics: string[], userData?: string): Buffer {
  const w = new Writer();
  w.int16(1);
  encodeConsumerProtocolSubscription(w, createConsumerProtocolSubscription({ topics, userData: userData ? Buffer.from(userData) : null, ownedPartitions: [] }), 1);
  return w.toBuffer();
}

export function assignmentBytes(parts: Record<string, number[]>): Buffer {
  const w = new Writer();
  w.int16(0);
  encodeConsumerProtocolAssignment(
    w,
    createConsumerProtocolAssignment({
      assignedPartitions: Object.entries(parts).map(([topic, partitions]) => createConsumerProtocolAssignmentTopicPartition({ topic, partitions })),
      userData: null,
    }),
    0,
  );
  return w.toBuffer();
}

export function joinRequest(groupId: string, init: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return createJoinGroupRequest({
    groupId,
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 30_000,
    memberId: '',
    protocolType: 'consumer',
    protocols: [createJoinGroupRequestProtocol({ name: 'range', metadata: subscription(['t']) })],
    ...init,
  });
}

/** A request the coordinator may hold (JoinGroup, SyncGroup); wrapped so that awaiting the helper does not wait for it. */
export interface Parked<T> {
  readonly result: Promise<T>;
}

/** JoinGroup v4+ as a client does it: the first attempt gets MEMBER_ID_REQUIRED, the second parks. */
export async function startJoin(h: Harness, groupId: string, init: Partial<JoinGroupRequest> = {}, apiVersion = 9): Promise<Parked<JoinGroupResponse>> {
  let req = joinRequest(groupId, init);
  if (req.memberId === '' && req.groupInstanceId === null && apiVersion >= 4) {
    const first = await h.coordinator.joinGroup(req, info(apiVersion));
    if (first.errorCode !== 79) throw new Error(`expected MEMBER_ID_REQUIRED, got ${first.errorCode}`);
    req = { ...req, memberId: first.memberId };
  }
  const result = h.coordinator.joinGroup(req, info(apiVersion));
  await settle();
  return { result };
}

export async function sync(
  h: Harness,
  groupId: string,
  join: JoinGroupResponse,
  assignments: Record<string, Buffer> = {},
  instanceId: string | null = null,
): Promise<Parked<SyncGroupResponse>> {
  const result = h.coordinator.syncGroup(
    createSyncGroupRequest({
      groupId,
      generationId: join.generationId,
      memberId: join.memberId,
      groupInstanceId: instanceId,
      protocolType: join.protocolType,
      protocolName: join.protocolName,
      assignments: Object.entries(assignments).map(([memberId, assignment]) => createSyncGroupRequestAssignment({ memberId, assignment })),
    }),
  );
  await settle();
  return { result };
}

/** Whether a promise has settled (after letting callbacks run). */
export async function isSettled(p: Parked<unknown> | Promise<unknown>): Promise<boolean> {
  let done = false;
  const promise = 'result' in p ? p.result : p;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await settle();
  return done;
}

/** ConsumerGroupHeartbeat (KIP-848) with every field at its "unchanged" value unless `init` sets it. */
export function consumerGroupHeartbeat(h: Harness, groupId: string, init: Partial<ConsumerHeartbeatInput>): Promise<ConsumerGroupHeartbeatResponse> {
  return h.coordinator.consumerGroupHeartbeat(
    {
      groupId,
      memberId: '',
      memberEpoch: 0,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: -1,
      subscribedTopicNames: null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: null,
      ...init,
    },
    info(0),
  );
}
