/**
 * Group protocols beyond kafkajs against a real broker process: KIP-345 static membership with
 * @platformatic/kafka consumers, KIP-848 (ConsumerGroupHeartbeat) with a small client on the project's
 * codec that checks, at every response, that no partition is owned by two members, and the online migration
 * of a kafkajs (classic) group to KIP-848 and back.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Consumer, Producer, stringSerializers } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { ListGroupsApi, createListGroupsRequest } from '../../protocol/messages/016-list-groups.gen.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { ConsumerGroupDescribeApi, createConsumerGroupDescribeRequest } from '../../protocol/messages/069-consumer-group-describe.gen.js';
import {
  ConsumerGroupHeartbeatApi,
  createConsumerGroupHeartbeatRequest,
  type ConsumerGroupHeartbeatResponse,
} from '../../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { randomUuid } from '../../protocol/wire/uuid.js';
import { Connection } from '../../src/client/connection.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor as waitUntil } from '../support/raw-connection.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const KIP848_SESSION_TIMEOUT_MS = 3000;
const KIP848_HEARTBEAT_MS = 200;

let broker: BrokerProcess;
let admin: KafkaClient;

/** Group changes wait on session and rebalance timeouts: a longer deadline than the shared default. */
const waitFor = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<unknown> =>
  waitUntil(what, check, timeoutMs, 50);

beforeAll(async () => {
  broker = await BrokerProcess.start({
    configs: {
      'group.initial.rebalance.delay.ms': '0',
      'group.min.session.timeout.ms': '1000',
      'offsets.topic.num.partitions': '10',
      'group.consumer.session.timeout.ms': String(KIP848_SESSION_TIMEOUT_MS),
      'group.consumer.min.session.timeout.ms': '1000',
      'group.consumer.heartbeat.interval.ms': String(KIP848_HEARTBEAT_MS),
      'group.consumer.min.heartbeat.interval.ms': '100',
    },
  });
  admin = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'groups-admin' });
});

afterAll(async () => {
  await admin?.close();
  await broker?.stop();
});

// --------------------------------------------------------------------------------------------- KIP-345

interface StaticState {
  memberId: string | null;
  generationId: number;
  assignments: Array<{ topic: string; partitions: number[] }> | null;
}

/** A static @platformatic/kafka consumer in its own process, so that it can die without leaving the group. */
function spawnStatic(groupId: string, instanceId: string, topic: string): { child: ChildProcess; states: StaticState[] } {
  const script = `
    import { Consumer } from '@platformatic/kafka';
    const c = new Consumer({ clientId: 'static-${instanceId}', bootstrapBrokers: [${JSON.stringify(broker.bootstrap)}], groupId: ${JSON.stringify(groupId)},
      groupInstanceId: ${JSON.stringify(instanceId)}, sessionTimeout: 10000, heartbeatInterval: 300, rebalanceTimeout: 10000 });
    const stream = await c.consume({ topics: [${JSON.stringify(topic)}] });
    stream.on('data', () => {});
    let last = '';
    setInterval(() => {
      const s = JSON.stringify({ memberId: c.memberId, generationId: c.generationId, assignments: c.assignments });
      if (s !== last) { last = s; console.log(s); }
    }, 20);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  const states: StaticState[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => states.push(JSON.parse(line) as StaticState));
  return { child, states };
}

function partitionsOf(s: { assignments: Array<{ partitions: number[] }> | null } | undefined): number[] {
  return (s?.assignments ?? []).flatMap((a) => a.partitions).sort((x, y) => x - y);
}

describe('static membership (KIP-345, @platformatic/kafka)', () => {
  it('lets a static member restart under the same instance id without a rebalance', async () => {
    const topic = 'static-topic';
    await admin.createTopics([{ name: topic, numPartitions: 4 }]);
    await admin.waitForTopics([topic]);
    const stay = new Consumer({
      clientId: 'static-b',
      bootstrapBrokers: [broker.bootstrap],
      groupId: 'static-group',
      groupInstanceId: 'instance-b',
      sessionTimeout: 10_000,
      heartbeatInterval: 300,
      rebalanceTimeout: 10_000,
    });
    const first = spawnStatic('static-group', 'instance-a', topic);
    let second: ReturnType<typeof spawnStatic> | null = null;
    try {
      const stream = await stay.consume({ topics: [topic] });
      stream.on('data', () => undefined);
      const last = (s: StaticState[]): StaticState | undefined => s[s.length - 1];
      await waitFor('both static members to share the 4 partitions in one generation', () => {
        const a = last(first.states);
        return partitionsOf(a).length + partitionsOf(stay).length === 4 && partitionsOf(a).length > 0 && partitionsOf(stay).length > 0 && a!.generationId === stay.generationId;
      });
      const before = last(first.states)!;
      const generation = stay.generationId;

      first.child.kill('SIGKILL');
      second = spawnStatic('static-group', 'instance-a', topic);
      await waitFor('the restarted instance to get its partitions', () => partitionsOf(last(second!.states)).length > 0);
      const after = last(second.states)!;
      expect(after.memberId).not.toBe(before.memberId);
      expect(after.generationId).toBe(generation);
      expect(partitionsOf(after)).toEqual(partitionsOf(before));
      expect(stay.generationId).toBe(generation);
    } finally {
      first.child.kill('SIGKILL');
      second?.child.kill('SIGKILL');
      await stay.close(true);
    }
  });
});

// --------------------------------------------------------------------------------------------- KIP-848

type Owned = Array<{ topicId: string; partitions: number[] }>;

/** What a member subscribes to: topic names, or a regular expression (ConsumerGroupHeartbeat v1). */
type Subscription = string[] | { regex: string };

/**
 * A KIP-848 consumer on the project's codec: heartbeats (v1, with the member id it generated itself, as Kafka 4
 * consumers do: KIP-1082), revokes at once what it loses, reports what it owns.
 */
class Kip848Member {
  id = randomUuid();
  epoch = 0;
  owned: Owned = [];
  private running = true;
  private loop: Promise<void> | null = null;
  readonly responses: ConsumerGroupHeartbeatResponse[] = [];

  private constructor(
    private readonly conn: Connection,
    private readonly groupId: string,
    private readonly subscription: Subscription,
    private readonly onResponse: () => void,
  ) {}

  static async start(groupId: string, topics: Subscription, onResponse: () => void): Promise<Kip848Member> {
    const [host, port] = broker.bootstrap.split(':');
    const conn = await Connection.connect({ host: host!, port: Number(port), clientId: 'kip848-test' });
    const m = new Kip848Member(conn, groupId, topics, onResponse);
    await m.beat();
    m.loop = m.run();
    return m;
  }

  partitions(): string[] {
    return this.owned.flatMap((tp) => tp.partitions.map((p) => `${tp.topicId}:${p}`));
  }

  private async run(): Promise<void> {
    while (this.running) {
      await new Promise((r) => setTimeout(r, KIP848_HEARTBEAT_MS));
      if (this.running) await this.beat();
    }
  }

  async beat(): Promise<void> {
    const joining = this.epoch === 0;
    const r = await this.conn.request(
      ConsumerGroupHeartbeatApi,
      createConsumerGroupHeartbeatRequest({
        groupId: this.groupId,
        memberId: this.id,
        memberEpoch: this.epoch,
        rebalanceTimeoutMs: joining ? 10_000 : -1,
        subscribedTopicNames: joining && Array.isArray(this.subscription) ? this.subscription : null,
        subscribedTopicRegex: joining && !Array.isArray(this.subscription) ? this.subscription.regex : null,
        topicPartitions: this.owned,
      }),
    );
    expect(this.conn.versionFor(ConsumerGroupHeartbeatApi)).toBe(1);
    this.responses.push(r);
    if (r.errorCode !== ErrorCode.NONE) throw new Error(`ConsumerGroupHeartbeat failed: ${r.errorCode} ${r.errorMessage}`);
    this.id = r.memberId ?? this.id;
    this.epoch = r.memberEpoch;
    // Revocation is immediate in this client: it owns exactly what it was last given.
    if (r.assignment) this.owned = r.assignment.topicPartitions.map((tp) => ({ topicId: tp.topicId, partitions: [...tp.partitions] }));
    this.onResponse();
  }

  /** Stops heartbeating without leaving (a crash). */
  async crash(): Promise<void> {
    this.running = false;
    await this.loop;
    this.conn.destroy();
  }

  async leave(): Promise<void> {
    this.running = false;
    await this.loop;
    const r = await this.conn.request(ConsumerGroupHeartbeatApi, createConsumerGroupHeartbeatRequest({ groupId: this.groupId, memberId: this.id, memberEpoch: -1 }));
    expect(r).toMatchObject({ errorCode: 0, memberEpoch: -1 });
    this.owned = [];
    await this.conn.close();
  }
}

describe('KIP-848 consumer groups', () => {
  it('balances 12 partitions over 3 members, never giving a partition to two members at once', async () => {
    const topic = 'kip848-topic';
    await admin.createTopics([{ name: topic, numPartitions: 12 }]);
    await admin.waitForTopics([topic]);
    const members: Kip848Member[] = [];
    const violations: string[] = [];
    let checks = 0;
    const check = (): void => {
      checks++;
      const seen = new Map<string, string>();
      for (const m of members) {
        for (const p of m.partitions()) {
          const other = seen.get(p);
          if (other !== undefined) violations.push(`${p} owned by ${other} and ${m.id}`);
          seen.set(p, m.id);
        }
      }
    };
    const counts = (): number[] => members.map((m) => m.partitions().length).sort((a, b) => a - b);
    const describe = async () => {
      const [host, port] = broker.bootstrap.split(':');
      const conn = await Connection.connect({ host: host!, port: Number(port) });
      try {
        const r = await conn.request(ConsumerGroupDescribeApi, createConsumerGroupDescribeRequest({ groupIds: ['kip848'] }));
        return r.groups[0]!;
      } finally {
        await conn.close();
      }
    };
    try {
      for (let i = 0; i < 3; i++) members.push(await Kip848Member.start('kip848', [topic], check));
      await waitFor('3 members with 4 partitions each', () => counts().join() === '4,4,4');
      const stable = await describe();
      expect(stable).toMatchObject({ errorCode: 0, groupState: 'Stable', assignorName: 'uniform' });
      expect(stable.members.map((m) => m.memberEpoch)).toEqual([stable.assignmentEpoch, stable.assignmentEpoch, stable.assignmentEpoch]);

      // A member that stops heartbeating loses its partitions once its session expires.
      const crashed = members.pop()!;
      const crashedAt = Date.now();
      await crashed.crash();
      await waitFor('2 members with 6 partitions each', () => counts().join() === '6,6');
      expect(Date.now() - crashedAt).toBeGreaterThanOrEqual(KIP848_SESSION_TIMEOUT_MS - 500);

      // A member that leaves (epoch -1) hands its partitions over at once.
      const leaving = members.pop()!;
      const leftAt = Date.now();
      await leaving.leave();
      await waitFor('the last member with all 12 partitions', () => counts().join() === '12');
      expect(Date.now() - leftAt).toBeLessThan(KIP848_SESSION_TIMEOUT_MS);

      expect(violations).toEqual([]);
      expect(checks).toBeGreaterThan(20);
      const final = await describe();
      expect(final.members.length).toBe(1);
      expect(final.members[0]!.assignment.topicPartitions[0]!.partitions.length).toBe(12);
    } finally {
      for (const m of members) await m.crash();
    }
  });

  it('assigns the topics a regex subscription matches, including topics created later (v1)', async () => {
    await admin.createTopics([
      { name: 'rx-orders', numPartitions: 2 },
      { name: 'rx-audit', numPartitions: 1 },
      { name: 'unrelated-rx', numPartitions: 1 },
    ]);
    await admin.waitForTopics(['rx-orders', 'rx-audit', 'unrelated-rx']);
    const ids = async (names: string[]) => new Set((await admin.metadata(names)).topics.map((t) => t.topicId));
    const member = await Kip848Member.start('kip848-regex', { regex: 'rx-.*' }, () => {});
    try {
      const first = await ids(['rx-orders', 'rx-audit']);
      await waitFor('the two matching topics, 3 partitions', () => member.partitions().length === 3);
      expect(new Set(member.owned.map((tp) => tp.topicId))).toEqual(first);

      await admin.createTopics([{ name: 'rx-late', numPartitions: 2 }]);
      await admin.waitForTopics(['rx-late']);
      const all = await ids(['rx-orders', 'rx-audit', 'rx-late']);
      await waitFor('the topic created later to be assigned too', () => member.partitions().length === 5);
      expect(new Set(member.owned.map((tp) => tp.topicId))).toEqual(all);
    } finally {
      await member.leave();
    }
  });

  it('serves @platformatic/kafka consumers using the consumer group protocol', async () => {
    const topic = 'kip848-platformatic';
    await admin.createTopics([{ name: topic, numPartitions: 4 }]);
    await admin.waitForTopics([topic]);
    const producer = new Producer({ clientId: 'kip848-producer', bootstrapBrokers: [broker.bootstrap], serializers: stringSerializers });
    const consumers = [0, 1].map(
      (i) => new Consumer({ clientId: `kip848-${i}`, bootstrapBrokers: [broker.bootstrap], groupId: 'kip848-platformatic', groupProtocol: 'consumer' }),
    );
    // partition → values received by the consumer that owns it now.
    const byOwner = new Map<number, Set<string>>();
    const owner = (p: number): number => consumers.findIndex((c) => (c.assignments ?? []).some((a) => a.partitions.includes(p)));
    try {
      for (const [i, c] of consumers.entries()) {
        const stream = await c.consume({ topics: [topic], mode: 'earliest' });
        stream.on('data', (m) => {
          if (owner(m.partition) !== i) return;
          const s = byOwner.get(m.partition) ?? new Set<string>();
          byOwner.set(m.partition, s.add(String(m.value)));
        });
      }
      await waitFor('the two consumers to split the 4 partitions', () => {
        const owned = consumers.flatMap((c) => (c.assignments ?? []).flatMap((a) => a.partitions));
        return owned.length === 4 && new Set(owned).size === 4 && consumers.every((c) => (c.assignments ?? []).some((a) => a.partitions.length > 0));
      });
      await producer.send({ messages: Array.from({ length: 40 }, (_, i) => ({ topic, key: `k${i}`, value: `v${i}`, partition: i % 4 })) });
      // Every partition's records reach the member that owns it. (@platformatic/kafka 1.35 may also hand over
      // records from a fetch issued before it gave a partition up; those are not counted.)
      await waitFor('each owner to receive its partition\'s 10 records', () => [0, 1, 2, 3].every((p) => (byOwner.get(p)?.size ?? 0) === 10));
    } finally {
      await Promise.all(consumers.map((c) => c.close(true)));
      await producer.close();
    }
  });
});

// --------------------------------------------------------------------------------- online migration

describe('online migration between the protocols (group.consumer.migration.policy)', () => {
  it('upgrades a kafkajs (classic) group when a KIP-848 member joins, splits the partitions, and downgrades when it leaves', async () => {
    const topic = 'migrate-topic';
    const groupId = 'migrate-group';
    await admin.createTopics([{ name: topic, numPartitions: 4 }]);
    await admin.waitForTopics([topic]);
    const topicId = (await admin.metadata([topic])).topics[0]!.topicId;
    const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'migrating-classic', logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
    const classic = kafka.consumer({ groupId, sessionTimeout: 6000, rebalanceTimeout: 10_000, heartbeatInterval: 200, maxWaitTimeInMs: 100 });
    let classicAssignment: number[] = [];
    classic.on(classic.events.GROUP_JOIN, (e) => {
      classicAssignment = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
    });
    const listedType = async (): Promise<string | undefined> => (await admin.cluster.anyConnection().then((c) => c.request(ListGroupsApi, createListGroupsRequest({})))).groups.find((g) => g.groupId === groupId)?.groupType;
    let member: Kip848Member | null = null;
    try {
      await classic.connect();
      await classic.subscribe({ topics: [topic], fromBeginning: true });
      await classic.run({ eachMessage: async () => undefined });
      await waitFor('the classic consumer to own all 4 partitions', () => classicAssignment.length === 4);
      expect(await listedType()).toBe('classic');

      // A KIP-848 member joins: the group becomes a consumer group and the two split the partitions.
      const violations: string[] = [];
      member = await Kip848Member.start(groupId, [topic], () => {
        const mine = new Set(member?.owned.flatMap((tp) => (tp.topicId === topicId ? tp.partitions : [])) ?? []);
        for (const p of classicAssignment) if (mine.has(p)) violations.push(`partition ${p} owned by both`);
      });
      await waitFor('the classic and the KIP-848 member to hold 2 partitions each', () => classicAssignment.length === 2 && member!.partitions().length === 2);
      expect(await listedType()).toBe('consumer');
      const both = [...classicAssignment, ...member.owned.flatMap((tp) => tp.partitions)].sort();
      expect(both).toEqual([0, 1, 2, 3]);
      expect(violations).toEqual([]);

      // The KIP-848 member leaves: the group goes back to the classic protocol and its consumer takes everything.
      await member.leave();
      member = null;
      await waitFor('the classic consumer to own all 4 partitions again', () => classicAssignment.length === 4);
      expect(await listedType()).toBe('classic');
    } finally {
      if (member) await member.crash();
      await classic.disconnect();
    }
  });
});
