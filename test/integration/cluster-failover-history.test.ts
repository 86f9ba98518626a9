/**
 * A history checker for a cluster under failures: three Ledgerline brokers on one ZooKeeper metadata store
 * and four BookKeeper bookies (the development cluster), a topic of 12 partitions with replication factor 3
 * and min.insync.replicas 2, three writers producing all along (acks=all, each request to the leader
 * Metadata names, a request unanswered in 7 s given up: what a client does with a broker that stopped
 * answering), and a kafkajs consumer group of two members reading all along, through 20 rounds of faults, one
 * at a time, each healed before the next:
 *
 *   broker SIGKILL   its lease expires (broker.session.timeout.ms 4 s), the others fence its open ledgers and
 *                    take its partitions; it is started again and takes back what the rule gives it
 *   bookie SIGKILL   writers see the bookie fail mid-ledger and change their ensembles; it starts again
 *   broker SIGSTOP   past its session: the others take its partitions while it still holds its connections;
 *                    resumed, it must not append anything (its ledgers are fenced) and rejoins
 *
 * The writers are idempotent producers (a producer id each, a sequence per partition, batches of 8 records,
 * one in flight, each retried as it was until acknowledged while the other partitions go on), and they go on past the last round until at
 * least 100,000 records are acknowledged. Checked at the end: every acknowledged record present exactly once,
 * at the offset its acknowledgement gave; no record twice (a retry of an appended batch must be answered as a
 * duplicate); no record nobody sent; no OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID (the producers'
 * state moves with the partitions); the group has read every acknowledged record (at least once: its commits
 * may lag a move), and each offset it read holds what the final read finds there (no offset with two values);
 * and after its members leave, a new member resumes each partition at the group's committed offset.
 *
 * It skips itself where the engines are missing (as cluster-membership.test.ts), failing instead with
 * LEDGERLINE_REQUIRE_BOOKKEEPER=1 when only the BookKeeper classpath is. About 5 minutes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { InitProducerIdApi } from '../../protocol/messages/022-init-producer-id.gen.js';
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
const PARTITIONS = 12;
/** Records per produce request. */
const BATCH = 8;
/** The acknowledged records the writers go on to after the last round, at least. */
const MIN_ACKED = 100_000;
const ROUNDS = 20;
const WRITERS = 3;
const GROUP = 'history-readers';

const started: BrokerProcess[] = [];
/** SIGCONT to a broker that may be paused, or gone. */
const resume = (b: BrokerProcess): void => {
  try {
    if (b.pid !== undefined) process.kill(b.pid, 'SIGCONT');
  } catch {
    // exited
  }
};
afterAll(async () => {
  for (const b of started) resume(b);
  await Promise.all(started.map((b) => b.stop()));
});

/**
 * Writes every line each broker logged (its last LOG_LINES_KEPT) and the timeline to a new directory that
 * outlives the test, for whoever reads a failure (or, with LEDGERLINE_TEST_KEEP_LOGS=1, a pass); returns it.
 */
function keepLogs(timeline: readonly string[]): string {
  const kept = mkdtempSync(join(tmpdir(), 'cluster-failover-history-'));
  for (const [i, b] of started.entries()) writeFileSync(join(kept, `broker-${i + 1}.log`), b.logs.join('\n'));
  writeFileSync(join(kept, 'timeline.txt'), timeline.join('\n'));
  return kept;
}

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
        // Sent and not (yet) acknowledged: when the writers stop, what was in flight.
        const indeterminate = new Set<string>();
        const producerErrors: string[] = [];
        let refusals = 0;
        let retries = 0;
        // The longest a batch waited from its first send to its acknowledgement.
        let longestWaitMs = 0;
        // That batch: its partition, when it was first sent, and what each of its failed sends met.
        let longest = '';
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
        // Each writer is an idempotent producer (its own producer id; per partition a sequence, one batch in
        // flight, retried as it was until it is acknowledged, as Kafka's producer retries with
        // max.in.flight.requests.per.connection 1): a retry of a batch that was appended must be answered as a
        // duplicate with the offset of the first append, never appended twice.
        const producerIds = await Promise.all(
          Array.from({ length: WRITERS }, async () => {
            for (;;) {
              const id = [1, 2, 3].find((i) => !down.has(i))!;
              const init = await (await connTo(id)).request(InitProducerIdApi, 4, InitProducerIdApi.request.create({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }), 5_000);
              if (init.errorCode === 0) return { producerId: init.producerId, producerEpoch: init.producerEpoch };
              await new Promise((r) => setTimeout(r, 100));
            }
          }),
        );
        const writers = Array.from({ length: WRITERS }, async (_, w) => {
          const own = new Map<number, RawConnection>();
          const { producerId, producerEpoch } = producerIds[w]!;
          const sequence = new Array<number>(PARTITIONS).fill(0);
          // Per partition the batch not yet acknowledged, sent again as it was the next time its partition's turn
          // comes (other partitions go on meanwhile, as Kafka's producer's per-partition queues do).
          const pending = new Array<{ values: string[]; records: Buffer; since: number; failures: string[] } | undefined>(PARTITIONS);
          for (let n = 0; !stopWriters; n++) {
            const partition = (n + w) % PARTITIONS;
            const baseSequence = sequence[partition]!;
            let batch = pending[partition];
            if (!batch) {
              const values = Array.from({ length: BATCH }, (_, i) => `w${w}-p${partition}-${baseSequence + i}`);
              batch = pending[partition] = { values, records: await buildRecordBatch(values.map((value) => ({ value })), { producerId, producerEpoch, baseSequence }), since: Date.now(), failures: [] };
            }
            const { values, records } = batch;
            const to = leaderOf[partition]!;
            const failed = async (why: string): Promise<void> => {
              lastErrors.set(w, `${values[0]} to broker ${to}: ${why}`);
              if (batch.failures.length < 40) batch.failures.push(`${((Date.now() - t0) / 1000).toFixed(1)} s broker ${to}: ${why}`);
              retries++;
              await new Promise((r) => setTimeout(r, 20));
            };
            if (to <= 0) {
              await failed('no leader');
              continue;
            }
            let conn = own.get(to);
            if (!conn || conn.isClosed) {
              try {
                own.set(to, (conn = await RawConnection.connect(brokers[to - 1]!.port)));
              } catch (e) {
                // Not sent at all (a killed broker refuses connections).
                refusals++;
                await failed(e instanceof Error ? e.message : String(e));
                continue;
              }
            }
            for (const v of values) indeterminate.add(v);
            try {
              const res = await conn.request(
                ProduceApi,
                9,
                ProduceApi.request.create({ transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: TOPIC, topicId: ZERO_UUID, partitionData: [{ index: partition, records }] }] }),
                7_000,
              );
              const r = res.responses[0]!.partitionResponses[0]!;
              if (r.errorCode === 0) {
                values.forEach((v, i) => {
                  indeterminate.delete(v);
                  acked.set(v, { partition, offset: Number(r.baseOffset) + i });
                });
                sequence[partition] = baseSequence + BATCH;
                pending[partition] = undefined;
                if (Date.now() - batch.since > longestWaitMs) {
                  longestWaitMs = Date.now() - batch.since;
                  longest = `partition ${partition}, first sent at ${((batch.since - t0) / 1000).toFixed(1)} s, acknowledged by broker ${to} after ${longestWaitMs} ms; its failed sends: ${batch.failures.join('; ') || 'none'}`;
                }
                continue;
              }
              // An idempotent producer never sees these under this test's faults: its state survives every
              // failover with the log (sequence gaps or a forgotten producer would be lost or repeated data).
              if (r.errorCode === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER || r.errorCode === ErrorCode.UNKNOWN_PRODUCER_ID || r.errorCode === ErrorCode.INVALID_PRODUCER_EPOCH) {
                producerErrors.push(`${values[0]} to broker ${to}: error ${r.errorCode}`);
              }
              if (REFUSED.has(r.errorCode)) refusals++;
              await failed(`error ${r.errorCode}`);
            } catch (e) {
              own.get(to)?.destroy();
              own.delete(to);
              await failed(e instanceof Error ? e.message : String(e));
            }
          }
          for (const c of own.values()) c.destroy();
        });

        // The group reads all along; duplicates are allowed (a commit may lag a move), gaps are not. Every read is
        // kept by offset: no offset may ever hold two values.
        const consumed = new Set<string>();
        const seenAt = new Map<string, string>();
        const divergent: string[] = [];
        const readers = Array.from({ length: 2 }, async () => {
          const c = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 2000 } });
          closers.push(c);
          await c.connect();
          await c.subscribe({ topic: TOPIC, fromBeginning: true });
          await c.run({
            eachMessage: async ({ partition, message }) => {
              const v = message.value!.toString();
              const at = `${partition}@${message.offset}`;
              const before = seenAt.get(at);
              if (before === undefined) seenAt.set(at, v);
              else if (before !== v) divergent.push(`${at}: ${before}, then ${v}`);
              consumed.add(v);
            },
          });
          return c;
        });
        const readerConsumers = await Promise.all(readers);

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
          mark(`round ${round + 1} (${fault} of ${fault.startsWith('bookie') ? `bookie ${target % dev.bookies.length}` : `broker ${nodeId}`}): ${acked.size} acknowledged, ${refusals} refusals, ${retries} retries, ${indeterminate.size} in flight, longest wait ${longestWaitMs} ms, ${consumed.size} consumed`);
        }

        await waitFor(`${MIN_ACKED} acknowledged records`, async () => acked.size >= MIN_ACKED, 300_000);
        stopWriters = true;
        await Promise.all([...writers, refresher]);
        mark(`writers stopped: ${acked.size} acknowledged, ${refusals} refusals, ${retries} retries, ${indeterminate.size} in flight`);

        // Every acknowledged record once, at its offset; nothing nobody sent; no record twice (every value is sent
        // in one batch only, retried as it was: the idempotent producer's duplicates are answered, not appended).
        const found = new Map<string, { partition: number; offset: number }[]>();
        const finalAt = new Map<string, string>();
        // Read from each partition's leader; a leader that moved since the client's last Metadata answers
        // NOT_LEADER_OR_FOLLOWER, and the read starts again after a refresh, as a consumer's would. After the last
        // bookie kill a partition can stay unavailable for up to about a minute (the longest wait the timeline
        // reports; see src/cluster/README.md), so the deadline is generous: this is a check of what is stored.
        let reader = admin;
        const readAll = async (p: number) => {
          for (const until = Date.now() + 180_000; ; ) {
            try {
              return await readPartition(reader, TOPIC, p);
            } catch (e) {
              if (Date.now() > until) throw e;
              // A new client: its Metadata comes from scratch, from a live broker.
              if (reader !== admin) await reader.close().catch(() => undefined);
              reader = await KafkaClient.connect({ bootstrap: brokers.map((b) => b.bootstrap) }).catch(() => reader);
              await new Promise((r) => setTimeout(r, 200));
            }
          }
        };
        for (let p = 0; p < PARTITIONS; p++) {
          for (const r of await readAll(p)) {
            const v = r.value!.toString();
            const list = found.get(v) ?? [];
            list.push({ partition: p, offset: Number(r.offset) });
            found.set(v, list);
            finalAt.set(`${p}@${r.offset}`, v);
          }
        }
        if (reader !== admin) await reader.close();
        const lost: string[] = [];
        const moved: string[] = [];
        for (const [v, at] of acked) {
          const there = found.get(v) ?? [];
          if (there.length === 0) lost.push(v);
          else if (there.length !== 1 || there[0]!.partition !== at.partition || there[0]!.offset !== at.offset) moved.push(`${v}: acknowledged ${at.partition}@${at.offset}, found ${there.map((t) => `${t.partition}@${t.offset}`).join(' ')}`);
        }
        const duplicated = [...found].filter(([, at]) => at.length > 1).map(([v, at]) => `${v} at ${at.map((t) => `${t.partition}@${t.offset}`).join(' ')}`);
        const phantom = [...found.keys()].filter((v) => !acked.has(v) && !indeterminate.has(v));
        // What the group read at each offset is what is there now.
        for (const [at, v] of seenAt) if (finalAt.get(at) !== v) divergent.push(`${at}: read ${v}, now ${finalAt.get(at) ?? 'nothing'}`);
        expect(acked.size).toBeGreaterThanOrEqual(MIN_ACKED);
        expect(lost, 'acknowledged records missing').toEqual([]);
        expect(moved, 'acknowledged records not exactly once at their offset').toEqual([]);
        expect(duplicated, 'records written twice').toEqual([]);
        expect(phantom, 'records nobody sent').toEqual([]);
        expect(producerErrors, 'idempotent producer state lost or out of order').toEqual([]);
        mark(`checked: ${acked.size} acknowledged records each once at its offset, none twice, ${[...indeterminate].filter((v) => found.has(v)).length} of ${indeterminate.size} in flight at the stop present; ${refusals} refusals, ${retries} retries; a batch waited ${longestWaitMs} ms at most`);
        mark(`the longest wait: ${longest}`);

        // The group read every acknowledged record, and nothing that is not there.
        await waitFor(`the group reading all ${acked.size} acknowledged records`, async () => [...acked.keys()].every((v) => consumed.has(v)), 120_000).catch((e: Error) => {
          e.message += `; unread: ${[...acked.keys()].filter((v) => !consumed.has(v)).slice(0, 20).join(', ')}`;
          throw e;
        });
        for (const [at, v] of seenAt) if (finalAt.get(at) !== v) divergent.push(`${at}: read ${v}, now ${finalAt.get(at) ?? 'nothing'}`);
        expect(divergent, 'offsets read with two values').toEqual([]);
        mark(`group ${GROUP} read every acknowledged record, ${seenAt.size} offsets, none with two values`);

        // The group resumes from its committed offsets: its members leave (committing), one record more goes to
        // each partition, and a new member's first record of each partition is at the committed offset.
        for (const c of readerConsumers) await c.disconnect();
        const groupAdmin = kafka.admin();
        closers.push(groupAdmin);
        await groupAdmin.connect();
        const [committed] = await groupAdmin.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
        const committedAt = new Map(committed!.partitions.map((p) => [p.partition, Number(p.offset)]));
        for (let p = 0; p < PARTITIONS; p++) expect(committedAt.get(p), `committed offset of partition ${p}`).toBeGreaterThanOrEqual(0);
        const last = kafka.producer();
        closers.push(last);
        await last.connect();
        // A partition whose ledger failed an append under the last bookie kill refuses writes until its owner has
        // moved it to a new ledger (KAFKA_STORAGE_ERROR, retriable; see src/ledger/bookkeeper/README.md): each
        // record is sent until it is acknowledged, within a deadline.
        for (let p = 0; p < PARTITIONS; p++) {
          await waitFor(`the record after the group left, partition ${p}`, async () => {
            try {
              await last.send({ topic: TOPIC, acks: -1, messages: [{ partition: p, value: `resume-p${p}` }] });
              return true;
            } catch {
              return false;
            }
          }, 180_000);
        }
        const firstAt = new Map<number, number>();
        const resumed = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000 });
        closers.push(resumed);
        await resumed.connect();
        await resumed.subscribe({ topic: TOPIC, fromBeginning: true });
        await resumed.run({ eachMessage: async ({ partition, message }) => void (firstAt.has(partition) || firstAt.set(partition, Number(message.offset))) });
        await waitFor('the resumed member reading every partition', async () => firstAt.size === PARTITIONS, 60_000);
        expect(new Map([...firstAt].sort((a, b) => a[0] - b[0])), 'first offsets read after resuming').toEqual(new Map([...committedAt].sort((a, b) => a[0] - b[0])));
        mark(`group ${GROUP} resumed at its committed offsets on all ${PARTITIONS} partitions`);
      } finally {
        stopWriters = true;
        for (const c of conns.values()) c.destroy();
        await admin.close();
      }
      if (process.env.LEDGERLINE_TEST_KEEP_LOGS === '1') mark(`the brokers' whole logs: ${keepLogs(timeline)}`);
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
        e.message += `\nthe brokers' whole logs: ${keepLogs(timeline)}`;
      }
      throw e;
    } finally {
      stopWriters = true;
      for (const c of closers.reverse()) await c.disconnect().catch(() => undefined);
      for (const b of started) resume(b);
      await Promise.all(started.splice(0).map((b) => b.stop()));
      await dev.stop();
    }
  }, 900_000);
});
