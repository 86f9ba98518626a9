/**
 * A history checker for a cluster under failures: three Ledgerline brokers on one ZooKeeper metadata store
 * and four BookKeeper bookies (the development cluster), a topic of 6 partitions with replication factor 3
 * and min.insync.replicas 2, three writers producing all along (acks=all, one record per request, each to the
 * leader Metadata names, a request unanswered in 7 s given up: what a client does with a broker that stopped
 * answering), and a kafkajs consumer group of two members reading all along, through 20 rounds of faults, one
 * at a time, each healed before the next:
 *
 *   broker SIGKILL   its lease expires (broker.session.timeout.ms 4 s), the others fence its open ledgers and
 *                    take its partitions; it is started again and takes back what the rule gives it
 *   bookie SIGKILL   writers see the bookie fail mid-ledger and change their ensembles; it starts again
 *   broker SIGSTOP   past its session: the others take its partitions while it still holds its connections;
 *                    resumed, it must not append anything (its ledgers are fenced) and rejoins
 *
 * Every acknowledged record is checked at the end: present exactly once, at the offset its acknowledgement
 * gave; no record in a partition that no producer sent; and the group has read every acknowledged record
 * (at least once: its commits may lag a move). A produce refused before any append (NOT_LEADER_OR_FOLLOWER,
 * NOT_ENOUGH_REPLICAS, or a connection refused) must have left nothing; one that failed otherwise or got no answer is indeterminate: its
 * record may or may not be there, but at most once (no writer sends a record twice).
 *
 * It skips itself where the engines are missing (as cluster-membership.test.ts), failing instead with
 * LEDGERLINE_REQUIRE_BOOKKEEPER=1 when only the BookKeeper classpath is. About 5 minutes.
 */
import kafkajs from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { KafkaClient } from '../../src/client/index.js';
import { startDevCluster } from '../../compat/cluster/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { clusterEngineGate, startMembers } from '../support/cluster-members.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { readPartition } from '../support/records.js';

const { Kafka, logLevel } = kafkajs;

const { missing, required } = clusterEngineGate();

const TOPIC = 'history';
const PARTITIONS = 6;
const ROUNDS = 20;
const WRITERS = 3;
const GROUP = 'history-readers';

const started: BrokerProcess[] = [];
afterAll(async () => {
  for (const b of started) if (b.pid !== undefined) process.kill(b.pid, 'SIGCONT');
  await Promise.all(started.map((b) => b.stop()));
});

/** Produce errors Kafka answers before appending anything. */
const REFUSED: ReadonlySet<number> = new Set([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_ENOUGH_REPLICAS, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);

type Fault = 'broker SIGKILL' | 'bookie SIGKILL' | 'broker SIGSTOP';
const FAULTS: readonly Fault[] = ['broker SIGKILL', 'bookie SIGKILL', 'broker SIGSTOP'];

describe('cluster failover history', () => {
  it.skipIf(missing !== null && !required)(`keeps every acknowledged record through ${ROUNDS} rounds of broker kills, bookie kills and paused brokers${missing ? ` (not run: ${missing})` : ''}`, async () => {
    if (missing !== null) throw new Error(`LEDGERLINE_REQUIRE_BOOKKEEPER=1 but ${missing}`);
    const t0 = Date.now();
    const timeline: string[] = [];
    const mark = (what: string): void => void timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
    const dev = await startDevCluster({ bookies: 4 });
    const closers: { disconnect(): Promise<void> }[] = [];
    const diagnostics = { lastErrors: new Map<number, string>() };
    let stopWriters = false;
    try {
      const brokers = await startMembers(dev, 3, started, { 'group.initial.rebalance.delay.ms': '0', 'min.insync.replicas': '2' });
      const admin = await KafkaClient.connect({ bootstrap: brokers.map((b) => b.bootstrap) });
      // The brokers this test has killed or paused: Metadata is asked of the others (a client would time out on
      // a paused one and go on to the next; the answers are the same).
      const down = new Set<number>();
      const conns = new Map<number, RawConnection>();
      const connTo = async (id: number): Promise<RawConnection> => {
        const c = conns.get(id);
        if (c && !c.isClosed) return c;
        const fresh = await RawConnection.connect(brokers[id - 1]!.port);
        conns.set(id, fresh);
        return fresh;
      };
      const drop = (id: number): void => {
        conns.get(id)?.destroy();
        conns.delete(id);
      };
      const metadata = async () => {
        for (const id of [1, 2, 3].filter((i) => !down.has(i))) {
          try {
            return await (await connTo(id)).request(MetadataApi, 12, createMetadataRequest({ topics: [{ name: TOPIC, topicId: ZERO_UUID }], allowAutoTopicCreation: false }), 3_000);
          } catch {
            drop(id);
          }
        }
        throw new Error('no broker answered Metadata');
      };
      const leaders = async (): Promise<number[]> => {
        const md = await metadata();
        const out = new Array<number>(PARTITIONS).fill(-1);
        for (const p of md.topics[0]?.partitions ?? []) out[p.partitionIndex] = p.errorCode === 0 ? p.leaderId : -1;
        return out;
      };
      const liveBrokers = async (): Promise<number[]> => (await metadata()).brokers.map((b) => b.nodeId).sort();
      try {
        await waitFor('three live brokers', async () => (await liveBrokers()).length === 3, 30_000);
        const [created] = await admin.createTopics([{ name: TOPIC, numPartitions: PARTITIONS, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } }]);
        expect(created!.errorCode).toBe(0);
        await waitFor('a leader for every partition', async () => (await leaders()).every((l) => l > 0), 30_000);
        mark('cluster up, topic created');

        // Writers: each sends one record at a time, acks=all, to the leader Metadata names; every acknowledgement
        // recorded, every failure or silence indeterminate. Their connections are their own (a request that
        // timed out drops its connection, as Kafka's client does).
        const kafka = new Kafka({
          clientId: 'history',
          brokers: brokers.map((b) => b.bootstrap),
          logLevel: logLevel.NOTHING,
          connectionTimeout: 3000,
          requestTimeout: 10_000,
          retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 2000 },
        });
        const acked = new Map<string, { partition: number; offset: number }>();
        const indeterminate = new Set<string>();
        const refused = new Set<string>();
        const lastErrors = diagnostics.lastErrors;
        let leaderOf = await leaders();
        const refresher = (async () => {
          while (!stopWriters) {
            try {
              leaderOf = await leaders();
            } catch {
              // every broker asked was down: asked again
            }
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          const own = new Map<number, RawConnection>();
          for (let seq = 0; !stopWriters; seq++) {
            const value = `w${w}-${seq}`;
            const partition = (seq + w) % PARTITIONS;
            const to = leaderOf[partition]!;
            if (to <= 0) {
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            let conn = own.get(to);
            if (!conn || conn.isClosed) {
              try {
                own.set(to, (conn = await RawConnection.connect(brokers[to - 1]!.port)));
              } catch (e) {
                // Not sent at all (a killed broker refuses connections).
                refused.add(value);
                lastErrors.set(w, `${value} to broker ${to}: ${e instanceof Error ? e.message : String(e)}`);
                await new Promise((r) => setTimeout(r, 50));
                continue;
              }
            }
            try {
              const res = await conn.request(
                ProduceApi,
                9,
                ProduceApi.request.create({ transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, topicId: ZERO_UUID, partitionData: [{ index: partition, records: await buildRecordBatch([{ value }]) }] }] }),
                7_000,
              );
              const r = res.responses[0]!.partitionResponses[0]!;
              if (r.errorCode === 0) acked.set(value, { partition, offset: Number(r.baseOffset) });
              else {
                // NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, UNKNOWN_TOPIC_OR_PARTITION: refused before any
                // append; any other error may come after one (a timeout waiting for the quorum).
                (REFUSED.has(r.errorCode) ? refused : indeterminate).add(value);
                lastErrors.set(w, `${value} to broker ${to}: error ${r.errorCode}`);
                await new Promise((r) => setTimeout(r, 50));
              }
            } catch (e) {
              indeterminate.add(value);
              lastErrors.set(w, `${value} to broker ${to}: ${e instanceof Error ? e.message : String(e)}`);
              own.get(to)?.destroy();
              own.delete(to);
            }
          }
          for (const c of own.values()) c.destroy();
        });

        // The group reads all along; duplicates are allowed (a commit may lag a move), gaps are not.
        const consumed = new Set<string>();
        const readers = Array.from({ length: 2 }, async () => {
          const c = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } });
          closers.push(c);
          await c.connect();
          await c.subscribe({ topic: TOPIC, fromBeginning: true });
          await c.run({ eachMessage: async ({ message }) => void consumed.add(message.value!.toString()) });
        });
        await Promise.all(readers);

        const progress = async (what: string, more: number): Promise<void> => {
          const from = acked.size;
          await waitFor(`${more} more acknowledged records ${what}`, async () => acked.size >= from + more, 60_000);
        };
        await progress('before the first fault', 50);
        mark(`writing: ${acked.size} acknowledged`);

        for (let round = 0; round < ROUNDS; round++) {
          const fault = FAULTS[round % FAULTS.length]!;
          const target = Math.floor(round / FAULTS.length) % 3;
          const broker = brokers[target]!;
          const nodeId = target + 1;
          if (fault === 'broker SIGKILL') {
            down.add(nodeId);
            drop(nodeId);
            await broker.kill('SIGKILL');
            await waitFor(`broker ${nodeId} gone from Metadata`, async () => !(await liveBrokers()).includes(nodeId), 30_000);
            await waitFor(`broker ${nodeId}'s partitions led by the others`, async () => (await leaders()).every((l) => l > 0 && l !== nodeId), 30_000);
            await progress(`with broker ${nodeId} dead`, 20);
            await broker.restart(60_000);
            down.delete(nodeId);
            await waitFor(`broker ${nodeId} registered again`, async () => (await liveBrokers()).length === 3, 30_000);
          } else if (fault === 'bookie SIGKILL') {
            const bookie = dev.bookies[target % dev.bookies.length]!;
            await bookie.kill();
            await progress(`with bookie ${bookie.port} dead`, 30);
            await bookie.restart();
          } else {
            down.add(nodeId);
            drop(nodeId);
            process.kill(broker.pid!, 'SIGSTOP');
            try {
              await waitFor(`paused broker ${nodeId} gone from Metadata`, async () => !(await liveBrokers()).includes(nodeId), 30_000);
              await waitFor(`paused broker ${nodeId}'s partitions led by the others`, async () => (await leaders()).every((l) => l > 0 && l !== nodeId), 30_000);
              await progress(`with broker ${nodeId} paused`, 20);
            } finally {
              process.kill(broker.pid!, 'SIGCONT');
              down.delete(nodeId);
            }
            await waitFor(`broker ${nodeId} registered again after its pause`, async () => (await liveBrokers()).length === 3, 60_000);
          }
          await waitFor('a leader for every partition', async () => (await leaders()).every((l) => l > 0), 30_000);
          await progress(`after round ${round + 1}`, 20);
          mark(`round ${round + 1} (${fault} of ${fault.startsWith('bookie') ? `bookie ${target % dev.bookies.length}` : `broker ${nodeId}`}): ${acked.size} acknowledged, ${refused.size} refused, ${indeterminate.size} indeterminate, ${consumed.size} consumed`);
        }

        stopWriters = true;
        await Promise.all([...writers, refresher]);
        mark(`writers stopped: ${acked.size} acknowledged, ${refused.size} refused, ${indeterminate.size} indeterminate`);

        // Every acknowledged record once, at its offset; nothing nobody sent.
        const found = new Map<string, { partition: number; offset: number }[]>();
        for (let p = 0; p < PARTITIONS; p++) {
          for (const r of await readPartition(admin, TOPIC, p)) {
            const v = r.value!.toString();
            const list = found.get(v) ?? [];
            list.push({ partition: p, offset: Number(r.offset) });
            found.set(v, list);
          }
        }
        const lost: string[] = [];
        const moved: string[] = [];
        for (const [v, at] of acked) {
          const there = found.get(v) ?? [];
          if (there.length === 0) lost.push(v);
          else if (there.length !== 1 || there[0]!.partition !== at.partition || there[0]!.offset !== at.offset) moved.push(`${v}: acknowledged ${at.partition}@${at.offset}, found ${there.map((t) => `${t.partition}@${t.offset}`).join(' ')}`);
        }
        const duplicated = [...found].filter(([v, at]) => indeterminate.has(v) && at.length > 1).map(([v]) => v);
        const phantom = [...found.keys()].filter((v) => !acked.has(v) && !indeterminate.has(v) && !refused.has(v));
        const refusedButWritten = [...found.keys()].filter((v) => refused.has(v));
        expect(lost, 'acknowledged records missing').toEqual([]);
        expect(moved, 'acknowledged records not exactly once at their offset').toEqual([]);
        expect(duplicated, 'indeterminate records written twice').toEqual([]);
        expect(phantom, 'records nobody sent').toEqual([]);
        expect(refusedButWritten, 'records whose produce was refused, written anyway').toEqual([]);
        mark(`checked: ${acked.size} acknowledged records each once at its offset, none of ${refused.size} refused, ${[...indeterminate].filter((v) => found.has(v)).length} of ${indeterminate.size} indeterminate present`);

        // The group read every acknowledged record.
        await waitFor(`the group reading all ${acked.size} acknowledged records`, async () => [...acked.keys()].every((v) => consumed.has(v)), 120_000).catch((e: Error) => {
          e.message += `; unread: ${[...acked.keys()].filter((v) => !consumed.has(v)).slice(0, 20).join(', ')}`;
          throw e;
        });
        mark(`group ${GROUP} read every acknowledged record`);
      } finally {
        stopWriters = true;
        for (const c of conns.values()) c.destroy();
        await admin.close();
      }
      console.log(`cluster failover history:\n  ${timeline.join('\n  ')}`);
    } catch (e) {
      if (e instanceof Error) {
        e.message += `\ntimeline:\n  ${timeline.join('\n  ')}`;
        e.message += `\nwriters' last errors:\n  ${[...diagnostics.lastErrors.values()].join('\n  ') || 'none'}`;
        // What the brokers warned about last (their JSON log lines of level warn and above).
        for (const [i, b] of started.entries()) {
          const warned = b.logs.filter((l) => /"level":(40|50|60)/.test(l)).slice(-12);
          e.message += `\nbroker ${i + 1}:\n  ${warned.map((l) => l.slice(0, 400)).join('\n  ') || 'no warnings'}`;
        }
      }
      throw e;
    } finally {
      stopWriters = true;
      for (const c of closers.reverse()) await c.disconnect().catch(() => undefined);
      for (const b of started) if (b.pid !== undefined) process.kill(b.pid, 'SIGCONT');
      await Promise.all(started.splice(0).map((b) => b.stop()));
      await dev.stop();
    }
  }, 900_000);
});
