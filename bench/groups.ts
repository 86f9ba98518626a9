/**
 * `npm run bench -- groups [options]`: the group coordinator's throughput and rebalance speed, against
 * Ledgerline and (with `--brokers ledgerline,kafka`) Apache Kafka 4.4.0, each started here.
 *
 *   commit     OffsetCommit of every partition of a topic, for one group per connection (no group membership,
 *              as the admin client and manual consumers commit), N connections each pipelining K requests.
 *              Figures: requests/s, offsets/s, latency p50/p99. Each request is made durable before its answer
 *              (Ledgerline group-commits the appends of concurrent requests into one fsync).
 *   rebalance  KIP-848: M members on the project's codec join one group over a topic of P partitions, one after
 *              the other, heartbeating every 20 ms (far below the interval the broker asks for, so the figure is
 *              the coordinator's, not the clients' pacing). Time from the last join until every member holds
 *              its share and no partition has two owners; then the same after one member leaves.
 *   limit      the disk's fsyncs per second with request-sized writes, measured in the same run: what one
 *              durable write per request could reach without group commit.
 *
 * Options: --brokers ledgerline[,kafka] (ledgerline), --seconds S (commit duration, 8), --connections N (4),
 * --in-flight K (8), --partitions P (32), --members M (8).
 */
import { tmpdir } from 'node:os';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { ErrorCode } from '../protocol/error-codes.js';
import { OffsetCommitApi, type OffsetCommitRequest } from '../protocol/messages/008-offset-commit.gen.js';
import { FindCoordinatorApi, createFindCoordinatorRequest } from '../protocol/messages/010-find-coordinator.gen.js';
import { ConsumerGroupHeartbeatApi, createConsumerGroupHeartbeatRequest } from '../protocol/messages/068-consumer-group-heartbeat.gen.js';
import { randomUuid, ZERO_UUID } from '../protocol/wire/uuid.js';
import { Connection, KafkaClient, encodeRequestBody, parseHostPort } from '../src/client/index.js';
import { startBroker, type BrokerKind, type StartedBroker } from './lib/brokers.js';
import { positiveOption } from './lib/cli.js';
import { measureDisk } from './lib/limits.js';
import { latencyHistogram, recordMs, summarize } from './lib/stats.js';

interface Options {
  brokers: BrokerKind[];
  seconds: number;
  connections: number;
  inFlight: number;
  partitions: number;
  members: number;
}

function options(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      brokers: { type: 'string' },
      seconds: { type: 'string' },
      connections: { type: 'string' },
      'in-flight': { type: 'string' },
      partitions: { type: 'string' },
      members: { type: 'string' },
    },
    strict: true,
  });
  const num = (name: string, fallback: number): number => positiveOption(values, name, fallback);
  const brokers = (values.brokers ?? 'ledgerline').split(',').map((b) => b.trim());
  for (const b of brokers) if (b !== 'ledgerline' && b !== 'kafka') throw new Error(`--brokers: unknown broker ${b}`);
  return {
    brokers: brokers as BrokerKind[],
    seconds: num('seconds', 8),
    connections: Math.floor(num('connections', 4)),
    inFlight: Math.floor(num('in-flight', 8)),
    partitions: Math.floor(num('partitions', 32)),
    members: Math.floor(num('members', 8)),
  };
}

interface CommitResult {
  requestsPerSec: number;
  offsetsPerSec: number;
  p50: number;
  p99: number;
  requestBytes: number;
}

async function commitBench(client: KafkaClient, topic: string, o: Options): Promise<CommitResult> {
  const h = latencyHistogram();
  let requests = 0;
  let requestBytes = 0;
  const t0 = performance.now();
  const end = t0 + o.seconds * 1000;
  await Promise.all(
    Array.from({ length: o.connections }, async (_, lane) => {
      const conn = await client.cluster.connectionTo(1, lane);
      const version = conn.versionFor(OffsetCommitApi, { max: 9 }); // v10 names topics by id only (KIP-848)
      let offset = 0n;
      const request = (): OffsetCommitRequest =>
        OffsetCommitApi.request.create({
          groupId: `bench-commit-${lane}`,
          generationIdOrMemberEpoch: -1,
          memberId: '',
          topics: [{ name: topic, topicId: ZERO_UUID, partitions: Array.from({ length: o.partitions }, (_, p) => ({ partitionIndex: p, committedOffset: ++offset, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' })) }],
        });
      requestBytes = Buffer.concat(encodeRequestBody(OffsetCommitApi, version, request())).length;
      const pipeline = async (): Promise<void> => {
        while (performance.now() < end) {
          const s = performance.now();
          const res = await conn.request(OffsetCommitApi, request());
          recordMs(h, performance.now() - s);
          for (const t of res.topics) for (const p of t.partitions) if (p.errorCode !== ErrorCode.NONE) throw new Error(`commit of partition ${p.partitionIndex}: error ${p.errorCode}`);
          requests++;
        }
      };
      await Promise.all(Array.from({ length: o.inFlight }, pipeline));
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const lat = summarize(h);
  return { requestsPerSec: requests / seconds, offsetsPerSec: (requests * o.partitions) / seconds, p50: lat.p50, p99: lat.p99, requestBytes };
}

/**
 * Waits until every lane's group can take commits: Kafka creates __consumer_offsets on the first
 * FindCoordinator and answers COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR until its partitions are loaded.
 */
async function warmUp(client: KafkaClient, topic: string, o: Options): Promise<void> {
  const retriable = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);
  const deadline = performance.now() + 60_000;
  for (let lane = 0; lane < o.connections; lane++) {
    const conn = await client.cluster.connectionTo(1, lane);
    for (;;) {
      await conn.request(FindCoordinatorApi, createFindCoordinatorRequest({ keyType: 0, coordinatorKeys: [`bench-commit-${lane}`] }));
      const res = await conn.request(
        OffsetCommitApi,
        OffsetCommitApi.request.create({ groupId: `bench-commit-${lane}`, generationIdOrMemberEpoch: -1, memberId: '', topics: [{ name: topic, topicId: ZERO_UUID, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] }] }),
      );
      const code = res.topics[0]!.partitions[0]!.errorCode;
      if (code === ErrorCode.NONE) break;
      if (!retriable.has(code) || performance.now() > deadline) throw new Error(`group bench-commit-${lane} takes no commits: error ${code}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** A KIP-848 member: heartbeats every 20 ms, gives up at once what it loses, owns what it was last given. */
class Member {
  readonly id = randomUuid();
  epoch = 0;
  owned: Array<{ topicId: string; partitions: number[] }> = [];
  private running = true;
  private loop: Promise<void> | null = null;
  failure: Error | null = null;

  constructor(
    private readonly conn: Connection,
    private readonly groupId: string,
    private readonly topic: string,
  ) {}

  start(): void {
    this.loop = (async () => {
      while (this.running) {
        try {
          await this.beat();
        } catch (e) {
          this.failure = e as Error;
          return;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
  }

  async beat(): Promise<void> {
    const joining = this.epoch === 0;
    const r = await this.conn.request(
      ConsumerGroupHeartbeatApi,
      createConsumerGroupHeartbeatRequest({
        groupId: this.groupId,
        memberId: this.id,
        memberEpoch: this.epoch,
        rebalanceTimeoutMs: joining ? 60_000 : -1,
        subscribedTopicNames: joining ? [this.topic] : null,
        topicPartitions: this.owned,
      }),
    );
    if (r.errorCode !== ErrorCode.NONE) throw new Error(`ConsumerGroupHeartbeat: error ${r.errorCode} ${r.errorMessage ?? ''}`);
    this.epoch = r.memberEpoch;
    if (r.assignment) this.owned = r.assignment.topicPartitions.map((tp) => ({ topicId: tp.topicId, partitions: [...tp.partitions] }));
  }

  count(): number {
    return this.owned.reduce((n, tp) => n + tp.partitions.length, 0);
  }

  async stop(leave: boolean): Promise<void> {
    this.running = false;
    await this.loop;
    if (leave) await this.conn.request(ConsumerGroupHeartbeatApi, createConsumerGroupHeartbeatRequest({ groupId: this.groupId, memberId: this.id, memberEpoch: -1 }));
    await this.conn.close();
  }
}

/** Milliseconds until `members` split `partitions` evenly with no partition owned twice. */
async function converge(members: Member[], partitions: number, timeoutMs: number): Promise<number> {
  const t0 = performance.now();
  const min = Math.floor(partitions / members.length);
  for (;;) {
    const failed = members.find((m) => m.failure);
    if (failed) throw failed.failure!;
    const all = members.flatMap((m) => m.owned.flatMap((tp) => tp.partitions.map((p) => `${tp.topicId}:${p}`)));
    if (new Set(all).size !== all.length) throw new Error('a partition is owned by two members');
    if (all.length === partitions && members.every((m) => m.count() >= min && m.count() <= min + 1)) return performance.now() - t0;
    if (performance.now() - t0 > timeoutMs) throw new Error(`no balanced assignment after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function rebalanceBench(broker: StartedBroker, topic: string, o: Options): Promise<{ joinMs: number; leaveMs: number }> {
  const { host, port } = parseHostPort(broker.bootstrap);
  const groupId = `bench-rebalance-${randomUuid()}`;
  const members: Member[] = [];
  try {
    for (let i = 0; i < o.members; i++) {
      const m = new Member(await Connection.connect({ host, port, clientId: `bench-member-${i}` }), groupId, topic);
      await m.beat();
      members.push(m);
      m.start();
    }
    const joinMs = await converge(members, o.partitions, 120_000);
    const leaving = members.pop()!;
    await leaving.stop(true);
    const leaveMs = await converge(members, o.partitions, 120_000);
    return { joinMs, leaveMs };
  } finally {
    await Promise.all(members.map((m) => m.stop(true).catch(() => undefined)));
  }
}

export default async function groups(args: string[]): Promise<void> {
  const o = options(args);
  const log = (line: string): void => console.log(`  ${line}`);
  const rows: string[] = [];
  let requestBytes = 0;
  for (const kind of o.brokers) {
    const broker = await startBroker(kind, { log });
    if ('error' in broker) throw new Error(`${kind}: ${broker.error}`);
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-groups', connectionsPerBroker: o.connections, requestTimeoutMs: 60_000 });
    try {
      const topic = 'bench-groups';
      const [created] = await client.createTopics([{ name: topic, numPartitions: o.partitions }]);
      if (created!.errorCode !== 0) throw new Error(`cannot create ${topic}: ${created!.errorMessage}`);
      await client.waitForTopics([topic]);
      await warmUp(client, topic, o);
      await commitBench(client, topic, { ...o, seconds: 1 });
      const c = await commitBench(client, topic, o);
      requestBytes = c.requestBytes;
      const r = await rebalanceBench(broker, topic, o);
      rows.push(
        `| ${kind} | ${c.requestsPerSec.toFixed(0)} | ${c.offsetsPerSec.toFixed(0)} | ${c.p50.toFixed(2)} / ${c.p99.toFixed(2)} | ${r.joinMs.toFixed(0)} | ${r.leaveMs.toFixed(0)} |`,
      );
    } finally {
      await client.close();
      const { peakRssMiB } = await broker.stop();
      log(`${kind} stopped (peak RSS ${peakRssMiB ?? '?'} MiB)`);
    }
  }
  const disk = await measureDisk({ dir: tmpdir(), sample: Buffer.alloc(1024, 7), chunkBytes: Math.max(requestBytes, 1024), maxBytes: 256 * 2 ** 20, durationMs: 3000 });
  const fsyncsPerSec = disk.syncEachChunk.bytes / disk.chunkBytes / disk.syncEachChunk.seconds;
  console.log('');
  console.log(
    `OffsetCommit: ${o.connections} connections × ${o.inFlight} in flight, ${o.partitions} offsets per request (${requestBytes} B), ${o.seconds} s. ` +
      `Rebalance: ${o.members} KIP-848 members over ${o.partitions} partitions, heartbeats every 20 ms.`,
  );
  console.log('');
  console.log('| broker | commits/s | offsets/s | commit p50 / p99 (ms) | join of the last member: balanced after (ms) | a member leaves: balanced after (ms) |');
  console.log('|---|---:|---:|---|---:|---:|');
  for (const r of rows) console.log(r);
  console.log('');
  console.log(`disk: ${fsyncsPerSec.toFixed(0)} fsyncs/s with one ${disk.chunkBytes} B write each (p50 ${disk.syncEachChunk.fsyncP50Ms.toFixed(2)} ms, p99 ${disk.syncEachChunk.fsyncP99Ms.toFixed(2)} ms)`);
  console.log('ratio: commits/s ÷ fsyncs/s above 1 means concurrent commits share fsyncs (group commit).');
}
