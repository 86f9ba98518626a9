/**
 * Classic consumer groups against a real broker process, with kafkajs consumers: partitions are shared out,
 * move when a member dies or leaves, and committed offsets survive a broker restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor as waitUntil } from '../support/raw-connection.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const SESSION_TIMEOUT_MS = 3000;

let broker: BrokerProcess;

function kafka(clientId = 'groups-test'): Kafka {
  return new Kafka({ brokers: [broker.bootstrap], clientId, logLevel: logLevel.NOTHING, retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 } });
}

/** Group changes wait on session and rebalance timeouts: a longer deadline than the shared default. */
const waitFor = (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<unknown> =>
  waitUntil(what, check, timeoutMs, 50);

async function createTopic(name: string, numPartitions: number): Promise<void> {
  const admin = kafka().admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: name, numPartitions }], waitForLeaders: true });
  await admin.disconnect();
}

async function produce(topic: string, partitions: number, perPartition: number, tag: string): Promise<void> {
  const producer = kafka().producer();
  await producer.connect();
  const messages = [];
  for (let p = 0; p < partitions; p++) for (let i = 0; i < perPartition; i++) messages.push({ partition: p, key: `${p}`, value: `${tag}-${p}-${i}` });
  await producer.send({ topic, messages });
  await producer.disconnect();
}

/** A kafkajs consumer that records its latest assignment and what it consumed. */
interface Member {
  consumer: Consumer;
  assignment: number[];
  joins: number;
  consumed: Array<{ partition: number; offset: string; value: string }>;
}

async function startMember(groupId: string, topic: string, sessionTimeout = SESSION_TIMEOUT_MS): Promise<Member> {
  const consumer = kafka().consumer({ groupId, sessionTimeout, rebalanceTimeout: 10_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
  const m: Member = { consumer, assignment: [], joins: 0, consumed: [] };
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    m.joins++;
    m.assignment = [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b);
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      m.consumed.push({ partition, offset: message.offset, value: message.value!.toString() });
    },
  });
  return m;
}

/** The members' latest assignments cover every partition exactly once, `counts` members each holding a share. */
function exactCover(members: Member[], partitions: number): boolean {
  const all = members.flatMap((m) => m.assignment);
  if (all.length !== partitions || new Set(all).size !== partitions) return false;
  const min = Math.floor(partitions / members.length);
  return members.every((m) => m.assignment.length >= min && m.assignment.length <= min + 1);
}

/** A kafkajs consumer in its own process, so that it can die without leaving the group. */
function spawnMember(groupId: string, topic: string): { child: ChildProcess; assigned: Promise<number[]> } {
  const script = `
    const { Kafka, logLevel } = require('kafkajs');
    const kafka = new Kafka({ brokers: [${JSON.stringify(broker.bootstrap)}], clientId: 'doomed', logLevel: logLevel.NOTHING });
    const c = kafka.consumer({ groupId: ${JSON.stringify(groupId)}, sessionTimeout: ${SESSION_TIMEOUT_MS}, rebalanceTimeout: 10000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
    c.on(c.events.GROUP_JOIN, (e) => console.log(JSON.stringify(e.payload.memberAssignment[${JSON.stringify(topic)}] || [])));
    (async () => { await c.connect(); await c.subscribe({ topics: [${JSON.stringify(topic)}], fromBeginning: true }); await c.run({ eachMessage: async () => {} }); })();
  `;
  // The test setup's filter for kafkajs's known timer warning (test/support/quiet-kafkajs-timers.ts), loaded here too.
  const quiet = ['--import', 'tsx', '--import', `${REPO}test/support/quiet-kafkajs-timers.ts`];
  const child = spawn(process.execPath, [...quiet, '-e', script], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
  const assigned = new Promise<number[]>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const parts = JSON.parse(line) as number[];
      if (parts.length > 0) resolve(parts);
    });
  });
  return { child, assigned };
}

beforeAll(async () => {
  broker = await BrokerProcess.start({
    configs: { 'group.initial.rebalance.delay.ms': '0', 'group.min.session.timeout.ms': '1000', 'offsets.topic.num.partitions': '10' },
  });
});

afterAll(async () => {
  await broker?.stop();
});

describe('classic consumer groups (kafkajs)', () => {
  it('gives each of 12 partitions to exactly one of 3 members, which alone consumes it', async () => {
    await createTopic('share-out', 12);
    const members = [await startMember('share', 'share-out'), await startMember('share', 'share-out'), await startMember('share', 'share-out')];
    try {
      await waitFor('three members sharing 12 partitions', () => exactCover(members, 12));
      await produce('share-out', 12, 5, 'a');
      await waitFor('60 messages consumed', () => members.reduce((n, m) => n + m.consumed.length, 0) >= 60);
      const byPartition = new Map<number, Set<number>>();
      members.forEach((m, i) => m.consumed.forEach((c) => byPartition.set(c.partition, (byPartition.get(c.partition) ?? new Set()).add(i))));
      expect(byPartition.size).toBe(12);
      for (const [p, consumers] of byPartition) {
        expect(consumers.size).toBe(1);
        expect(members[[...consumers][0]!]!.assignment).toContain(p);
      }
      expect(members.reduce((n, m) => n + m.consumed.length, 0)).toBe(60);
    } finally {
      await Promise.all(members.map((m) => m.consumer.disconnect()));
    }
  });

  it('moves the partitions of a member that dies once its session times out', async () => {
    await createTopic('crash', 12);
    const survivors = [await startMember('crash-group', 'crash'), await startMember('crash-group', 'crash')];
    const doomed = spawnMember('crash-group', 'crash');
    try {
      const doomedPartitions = await doomed.assigned;
      await waitFor('three members sharing 12 partitions', () => survivors.flatMap((m) => m.assignment).length + doomedPartitions.length === 12 && survivors.every((m) => m.assignment.length === 4));
      const killedAt = Date.now();
      doomed.child.kill('SIGKILL');
      await waitFor('the two survivors to share all 12 partitions', () => exactCover(survivors, 12));
      const tookMs = Date.now() - killedAt;
      // Not before the session timeout (the broker cannot tell a dead member from a slow one), soon after it.
      expect(tookMs).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS - 500);
      expect(tookMs).toBeLessThan(SESSION_TIMEOUT_MS + 8000);
      expect(survivors.flatMap((m) => m.assignment)).toEqual(expect.arrayContaining(doomedPartitions));
    } finally {
      doomed.child.kill('SIGKILL');
      await Promise.all(survivors.map((m) => m.consumer.disconnect()));
    }
  });

  it('rebalances at once when a member leaves the group', async () => {
    await createTopic('leave', 12);
    const members = [await startMember('leave-group', 'leave', 30_000), await startMember('leave-group', 'leave', 30_000), await startMember('leave-group', 'leave', 30_000)];
    try {
      await waitFor('three members sharing 12 partitions', () => exactCover(members, 12));
      const leaving = members.pop()!;
      const started = Date.now();
      await leaving.consumer.disconnect();
      await waitFor('two members sharing 12 partitions', () => exactCover(members, 12));
      // Far sooner than the 30 s session timeout: the LeaveGroup made the group rebalance.
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      await Promise.all(members.map((m) => m.consumer.disconnect()));
    }
  });

  it('keeps committed offsets across a broker restart, and a new consumer resumes from them', async () => {
    await createTopic('durable', 2);
    await produce('durable', 2, 10, 'before');
    const first = await startMember('durable-group', 'durable');
    const admin = kafka().admin();
    await admin.connect();
    try {
      await waitFor('20 messages consumed', () => first.consumed.length >= 20);
      await waitFor('offsets 10/10 committed', async () => {
        const [t] = await admin.fetchOffsets({ groupId: 'durable-group', topics: ['durable'] });
        return t!.partitions.every((p) => p.offset === '10');
      });
    } finally {
      await first.consumer.disconnect();
      await admin.disconnect();
    }

    await broker.restart();
    await produce('durable', 2, 5, 'after');
    const second = await startMember('durable-group', 'durable');
    try {
      await waitFor('the 10 new messages consumed', () => second.consumed.length >= 10);
      // It starts where the group committed: nothing produced before the restart comes again.
      expect(second.consumed.every((c) => c.value.startsWith('after-'))).toBe(true);
      for (const p of [0, 1]) expect(second.consumed.find((c) => c.partition === p)!.offset).toBe('10');
    } finally {
      await second.consumer.disconnect();
    }
  });
});
