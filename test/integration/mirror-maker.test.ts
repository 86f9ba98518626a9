/**
 * MirrorMaker 2 (connect-mirror 4.3.1, the dedicated driver org.apache.kafka.connect.mirror.MirrorMaker,
 * KIP-382) replicating from Apache Kafka 4.4 into Ledgerline: two topics with keys, values and headers, and
 * a consumer group that has read part of them and committed there.
 *
 * Checked on Ledgerline:
 *  - every record of each topic arrives under `kafka.<topic>` (DefaultReplicationPolicy), partition by
 *    partition in order, with its key, value and headers;
 *  - the group's offsets appear translated (sync.group.offsets.enabled, KIP-545): a consumer of that group on
 *    Ledgerline resumes at the translated offset. MM2 translates conservatively (KAFKA-14666, Kafka 3.5 on):
 *    a committed upstream offset X becomes the downstream offset of an offset sync at or before it, plus one
 *    when the sync is strictly before X. So the consumer may read again records between that sync and X, and
 *    never skips one: the translated offset T is at most X and is derived from an offset sync MM2 emitted
 *    (read back from the offset-syncs topic), and where X is the end of the partition, T becomes X once MM2
 *    has synced the partition's last record. MM2's offset-sync store keeps only the newest sync of each
 *    partition it reads before it has caught up with the offset-syncs topic once (OffsetSyncStore): a commit
 *    older than that sync is never translated. So the records come in two phases: MM2 mirrors the first and
 *    translates the group's commit at its end (its store has caught up, and from then on keeps a sync at or
 *    before any offset), then the rest are produced and the group's offsets are set inside them and at the
 *    end of a partition;
 *  - MM2's internal topics (offset syncs, checkpoints, heartbeats, and the driver's Connect config, offset and
 *    status topics) exist on Ledgerline, compacted.
 *
 * Skipped when java, the compat/connect build or the Kafka jars are missing (`npm run compat -- --only kafka`
 * builds both); LEDGERLINE_REQUIRE_CONNECT=1 makes that a failure.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Consumer, IHeaders, Kafka as KafkaType, KafkaMessage, Producer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { ReferenceKafka } from '../../compat/lib/brokers.js';
import { COMPAT_DIR } from '../../compat/lib/paths.js';
import { freePort } from '../../compat/lib/ports.js';
import { BrokerProcess } from '../support/broker-process.js';
import { cleanerSummary, ConnectProgram, readToEnd, waitFor, whyNoConnect, writeProperties } from '../support/connect-app.js';

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;

const TEST_TIMEOUT_MS = 170_000;

const skipReason =
  whyNoConnect() ?? (existsSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt')) ? null : 'the Kafka jars are not resolved (run `npm run compat -- --only kafka` once)');
const required = process.env.LEDGERLINE_REQUIRE_CONNECT === '1';
if (skipReason && !required) console.warn(`MirrorMaker 2 from Kafka into Ledgerline skipped: ${skipReason}`);

interface Sent {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** The upstream topics: name suffix, records per partition, and how far the group commits on each partition. */
const TOPICS = [
  { suffix: 'orders', perPartition: [120, 80, 100], commitAt: [47, 80, 0] },
  { suffix: 'payments', perPartition: [150], commitAt: [91] },
];
/** Records of each partition produced before MirrorMaker 2 starts; the group first commits at their end. */
const FIRST_PHASE = 10;

function record(topic: string, partition: number, i: number): Sent {
  return {
    key: `${topic}/${partition}/${i}`,
    value: `value ${i} of partition ${partition} of ${topic} ` + 'x'.repeat(i % 37),
    headers: { source: 'kafka', seq: String(i), ...(i % 3 === 0 ? { 'trace-id': `t-${partition}-${i}` } : {}) },
  };
}

function headersOf(h: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  return out;
}

/** MM2's OffsetSync records (connect-mirror's OffsetSync): key {topic: STRING, partition: INT32}, value {upstream: INT64, downstream: INT64}. */
interface OffsetSync {
  topic: string;
  partition: number;
  upstream: bigint;
  downstream: bigint;
}

function decodeOffsetSync(key: Buffer, value: Buffer): OffsetSync {
  const len = key.readInt16BE(0);
  return {
    topic: key.toString('utf8', 2, 2 + len),
    partition: key.readInt32BE(2 + len),
    upstream: value.readBigInt64BE(0),
    downstream: value.readBigInt64BE(8),
  };
}

/** MM2's Checkpoint records (connect-mirror-client's Checkpoint): key {group: STRING, topic: STRING, partition: INT32}, value {version: INT16, upstreamOffset: INT64, offset: INT64, metadata: STRING}. */
interface Checkpoint {
  group: string;
  topic: string;
  partition: number;
  upstream: bigint;
  downstream: bigint;
}

function decodeCheckpoint(key: Buffer, value: Buffer): Checkpoint {
  const groupLen = key.readInt16BE(0);
  const topicLen = key.readInt16BE(2 + groupLen);
  const topicAt = 4 + groupLen;
  const version = value.readInt16BE(0);
  if (version !== 0) throw new Error(`checkpoint value version ${version}, expected 0`);
  return {
    group: key.toString('utf8', 2, 2 + groupLen),
    topic: key.toString('utf8', topicAt, topicAt + topicLen),
    partition: key.readInt32BE(topicAt + topicLen),
    upstream: value.readBigInt64BE(2),
    downstream: value.readBigInt64BE(10),
  };
}

/** Reads a topic from its beginning until `done` says so, without a group (kafkajs needs one: a throwaway group). */
async function readUntil(
  kafka: KafkaType,
  topics: string[],
  groupId: string,
  fromBeginning: boolean,
  done: (seen: Map<string, KafkaMessage[]>) => boolean,
  deadlineMs: number,
  program: ConnectProgram,
): Promise<Map<string, KafkaMessage[]>> {
  const consumer: Consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000, retry: { retries: 5 }, allowAutoTopicCreation: false });
  const seen = new Map<string, KafkaMessage[]>();
  try {
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, partition, message }) => {
        const k = `${topic}/${partition}`;
        if (!seen.has(k)) seen.set(k, []);
        seen.get(k)!.push(message);
      },
    });
    await waitFor(`reading ${topics.join(', ')} as ${groupId}`, deadlineMs, program, () => done(seen));
    return seen;
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

interface Target {
  readonly bootstrap: string;
  /** Ledgerline's admin endpoint's /metrics (the log cleaner's figures); none for Kafka. */
  readonly metricsUrl?: string;
  stop(): Promise<void>;
}

interface TargetKind {
  name: string;
  optIn?: string;
  start(dir: string): Promise<Target>;
}

const targets: TargetKind[] = [
  {
    name: 'Ledgerline',
    start: async () => {
      // With the log cleaner, its work on MM2's compacted topics runs under the test (ledgers roll every few
      // seconds, the cleaner looks for work every 200 ms); without one, both are ignored.
      const adminPort = await freePort();
      const b = await BrokerProcess.start({
        configs: { 'group.initial.rebalance.delay.ms': '0', 'log.roll.ms': '3000', 'log.cleaner.backoff.ms': '200', 'ledgerline.admin.listener': `http://127.0.0.1:${adminPort}` },
      });
      return { bootstrap: b.bootstrap, metricsUrl: `http://127.0.0.1:${adminPort}/metrics`, stop: async () => void (await b.stop()) };
    },
  },
  {
    // The same test with a second Kafka as the target checks the test itself (and shows MM2's own translation).
    name: 'Apache Kafka 4.4 (reference)',
    optIn: 'LEDGERLINE_MIRROR_REFERENCE',
    start: async (dir) => {
      const k = new ReferenceKafka({ label: 'kafka-target', logDir: join(dir, 'kafka-target-logs'), heapMiB: 384, keepData: false });
      const started = await k.start();
      if (!started.ok) throw new Error(`the target Kafka did not start: ${started.reason}`);
      return { bootstrap: k.bootstrap, stop: async () => void (await k.stop()) };
    },
  },
];
const optedOut = (t: TargetKind): boolean => t.optIn !== undefined && process.env[t.optIn] !== '1';
for (const t of targets) if (optedOut(t)) console.warn(`MirrorMaker 2 from Kafka into ${t.name} skipped: ${t.optIn}=1 runs it`);

for (const kind of targets) {
  describe.skipIf(optedOut(kind) || (skipReason !== null && !required)).sequential(`MirrorMaker 2 from Apache Kafka 4.4 into ${kind.name}`, () => {
    it('replicates every record with its key, value and headers, translates the group offsets and keeps its internal topics compacted', async () => {
      if (skipReason !== null) throw new Error(`LEDGERLINE_REQUIRE_CONNECT=1, but: ${skipReason}`);
      const t0 = Date.now();
      const timeline: string[] = [];
      const mark = (what: string): void => void timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
      const dir = mkdtempSync(join(tmpdir(), 'mirror-maker-'));
      const kafkaLogs = join(dir, 'kafka-logs');
      const upstream = new ReferenceKafka({ label: 'kafka', logDir: kafkaLogs, heapMiB: 384, keepData: false });
      let ledgerline: Target | null = null;
      const props = join(dir, 'mm2.properties');
      const mm2 = new ConnectProgram({ label: 'MirrorMaker 2', mainClass: 'org.apache.kafka.connect.mirror.MirrorMaker', propertiesFile: props, workDir: dir });
      const clients: { disconnect(): Promise<void> }[] = [];
      try {
        const [started, ll] = await Promise.all([
          upstream.start(),
          kind.start(dir),
        ]);
        ledgerline = ll;
        if (!started.ok) throw new Error(`Kafka did not start: ${started.reason}`);
        mark('Kafka and the target up');
        const stamp = `mirror-${process.pid}-${Date.now()}`;
        const group = `${stamp}-app`;
        const names = TOPICS.map((t) => `${stamp}-${t.suffix}`);

        const kafka = new Kafka({ clientId: 'mm2-test', brokers: [upstream.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
        const target = new Kafka({ clientId: 'mm2-test', brokers: [ledgerline.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
        const admin: Admin = kafka.admin();
        const targetAdmin: Admin = target.admin();
        const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
        clients.push(admin, targetAdmin, producer);
        await Promise.all([admin.connect(), targetAdmin.connect(), producer.connect()]);
        await admin.createTopics({ topics: TOPICS.map((t, i) => ({ topic: names[i]!, numPartitions: t.perPartition.length, replicationFactor: 1 })), waitForLeaders: true });

        // The records of each partition, sent in order: the first FIRST_PHASE now, the rest once MM2 has caught up.
        const expected = new Map<string, Sent[]>();
        for (const [ti, t] of TOPICS.entries()) for (const [p, n] of t.perPartition.entries()) expected.set(`${names[ti]}/${p}`, Array.from({ length: n }, (_, i) => record(names[ti]!, p, i)));
        const produce = async (from: number, to: number): Promise<void> => {
          for (const [k, recs] of expected) {
            const [topic, p] = [k.slice(0, k.lastIndexOf('/')), Number(k.slice(k.lastIndexOf('/') + 1))];
            const part = recs.slice(from, to);
            if (part.length > 0) await producer.send({ topic, acks: -1, messages: part.map((r) => ({ partition: p, key: r.key, value: r.value, headers: r.headers })) });
          }
        };
        await produce(0, FIRST_PHASE);
        mark(`the first ${FIRST_PHASE} records of each partition produced to Kafka`);

        // The group reads the first phase on Kafka, commits at its end and leaves; the second commits are
        // made for it (an empty group's offsets, as kafka-consumer-groups --reset-offsets makes them) once the
        // second phase is there.
        const commitAt = new Map<string, number>();
        for (const [ti, t] of TOPICS.entries()) for (const [p, x] of t.commitAt.entries()) commitAt.set(`${names[ti]}/${p}`, x);
        const withCommit = [...commitAt].filter(([, x]) => x > 0).map(([k]) => k);
        const app = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 1000 });
        clients.push(app);
        await app.connect();
        await app.subscribe({ topics: names, fromBeginning: true });
        const committedFirst = new Set<string>();
        await app.run({
          autoCommit: false,
          eachMessage: async ({ topic, partition, message }) => {
            const k = `${topic}/${partition}`;
            if (commitAt.get(k) === 0 || committedFirst.has(k) || Number(message.offset) + 1 !== FIRST_PHASE) return;
            await app.commitOffsets([{ topic, partition, offset: String(FIRST_PHASE) }]);
            committedFirst.add(k);
          },
        });
        await waitFor(`the group committing at ${FIRST_PHASE} on ${withCommit.join(', ')}`, 60_000, mm2, () => withCommit.every((k) => committedFirst.has(k)));
        await app.disconnect();
        mark(`group ${group} committed at ${FIRST_PHASE} on Kafka, and left`);

        writeProperties(props, {
          clusters: 'kafka, ledgerline',
          'kafka.bootstrap.servers': upstream.bootstrap,
          'ledgerline.bootstrap.servers': ledgerline.bootstrap,
          'kafka->ledgerline.enabled': true,
          'kafka->ledgerline.topics': `${stamp}-.*`,
          'kafka->ledgerline.groups': group,
          'ledgerline->kafka.enabled': false,
          'ledgerline->kafka.emit.heartbeats.enabled': false,
          'tasks.max': 1,
          // One broker per cluster: every topic MM2 creates has one replica.
          'replication.factor': 1,
          'checkpoints.topic.replication.factor': 1,
          'heartbeats.topic.replication.factor': 1,
          'offset-syncs.topic.replication.factor': 1,
          'config.storage.replication.factor': 1,
          'offset.storage.replication.factor': 1,
          'status.storage.replication.factor': 1,
          // The offset syncs on Ledgerline too (KIP-716), where the test reads them.
          'offset-syncs.topic.location': 'target',
          'sync.group.offsets.enabled': true,
          'sync.group.offsets.interval.seconds': 1,
          'emit.checkpoints.interval.seconds': 1,
          'emit.heartbeats.interval.seconds': 1,
          'refresh.topics.interval.seconds': 2,
          'refresh.groups.interval.seconds': 2,
          // A worker setting: MM2's dedicated driver takes it from the target cluster's properties only
          // (MirrorMakerConfig.workerConfig), not from the top level. Its source task emits the delayed offset
          // syncs (a partition's last record) when it commits, so this bounds how long a commit at the end of a
          // partition waits to translate exactly (the default is 60 s).
          'ledgerline.offset.flush.interval.ms': 1000,
          // An offset sync at least every 10 records (default 100): the translation re-reads fewer records.
          'offset.lag.max': 10,
          // No authorizer on either cluster.
          'sync.topic.acls.enabled': false,
        });
        mm2.start();
        mark('MirrorMaker 2 started');
        // The offset syncs are checked against the translation below, so none may be compacted away during
        // the test: as soon as MM2 has created the topic (before its first ledger can roll), its records get
        // a min.compaction.lag.ms longer than the test. Its other compacted topics are cleaned under it.
        let syncsTopic = '';
        await waitFor('MirrorMaker 2 creating its offset-syncs topic', 60_000, mm2, async () => {
          syncsTopic = (await targetAdmin.listTopics()).find((t) => /^mm2-offset-syncs\..+\.internal$/.test(t)) ?? '';
          return syncsTopic !== '';
        });
        await targetAdmin.alterConfigs({
          validateOnly: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: syncsTopic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'min.compaction.lag.ms', value: '600000' }] }],
        });
        mark(`${syncsTopic} created`);

        // Every record under kafka.<topic>, partition by partition in order, key, value and headers equal.
        const mirrored = names.map((n) => `kafka.${n}`);
        // MM2 creates them (with the upstream partition counts); a consumer must not create them first.
        let present: string[] = [];
        await waitFor(`MirrorMaker 2 creating ${mirrored.join(', ')} on ${kind.name}`, 90_000, mm2, async () => {
          present = await targetAdmin.listTopics();
          return mirrored.every((t) => present.includes(t));
        }).catch((e: Error) => {
          e.message += `\ntopics on ${kind.name}: ${present.join(', ')}`;
          throw e;
        });
        const meta = await targetAdmin.fetchTopicMetadata({ topics: mirrored });
        expect(Object.fromEntries(meta.topics.map((t) => [t.name, t.partitions.length])), 'partitions of the mirrored topics').toEqual(
          Object.fromEntries(TOPICS.map((t, i) => [mirrored[i], t.perPartition.length])),
        );
        mark('mirrored topics created on the target');

        // Fetched translated offsets of the group on the target (MM2 writes them while the group has no member there).
        const translated = new Map<string, number>();
        const fetchTranslated = async (): Promise<void> => {
          const fetched = await targetAdmin.fetchOffsets({ groupId: group, topics: mirrored });
          for (const t of fetched) for (const p of t.partitions) if (Number(p.offset) >= 0) translated.set(`${t.topic.slice('kafka.'.length)}/${p.partition}`, Number(p.offset));
        };
        const showTranslated = (): string => [...translated].map(([k, t]) => `${k.slice(stamp.length + 1)}@${t}`).join(' ') || 'none';
        // The commit at the end of the first phase translates exactly once MM2 has synced its last record, and
        // only after MM2's offset-sync store has read its topic to the end: from then on it keeps older syncs.
        await waitFor(`group ${group}'s first-phase offsets translated onto ${kind.name}`, 90_000, mm2, async () => {
          await fetchTranslated();
          return withCommit.every((k) => translated.get(k) === FIRST_PHASE);
        }).catch((e: Error) => {
          e.message += `\ntranslated: ${showTranslated()}`;
          throw e;
        });
        mark(`first phase translated: ${showTranslated()}`);

        await produce(FIRST_PHASE, Number.MAX_SAFE_INTEGER);
        mark('the rest of the records produced to Kafka');
        // The commits inside the partitions first, then those at the end of a partition: a checkpoint of the
        // last ones comes from a round of MM2's checkpoint task that read all of them.
        const atEnd = (k: string): boolean => commitAt.get(k) === expected.get(k)!.length;
        for (const last of [false, true]) {
          for (const [ti, name] of names.entries()) {
            const partitions = TOPICS[ti]!.commitAt.map((x, p) => ({ partition: p, offset: String(x) })).filter(({ partition }) => withCommit.includes(`${name}/${partition}`) && atEnd(`${name}/${partition}`) === last);
            if (partitions.length > 0) await admin.setOffsets({ groupId: group, topic: name, partitions });
          }
        }
        mark(`group ${group} committed ${[...commitAt].map(([k, x]) => `${k.slice(stamp.length + 1)}@${x}`).join(' ')} on Kafka`);
        const total = [...expected.values()].reduce((s, r) => s + r.length, 0);
        const all = await readUntil(target, mirrored, `${stamp}-reader`, true, (seen) => [...seen.values()].reduce((s, m) => s + m.length, 0) >= total, 120_000, mm2);
        mark(`all ${total} records read from the target`);
        for (const [k, recs] of expected) {
          const got = (all.get(`kafka.${k}`) ?? []).map((m) => ({ key: m.key?.toString(), value: m.value?.toString(), headers: headersOf(m.headers), offset: Number(m.offset) }));
          expect(got, `kafka.${k}`).toEqual(recs.map((r, i) => ({ ...r, offset: i })));
        }

        // The group's second commits, as MM2 checkpoints them (kafka.checkpoints.internal on the target) and
        // writes them into the group on the target. MM2 emits a checkpoint only when its translation moves on
        // (MirrorCheckpointTask.checkpointIsMoreRecent), and how close it translates a commit inside a partition
        // depends on which offset syncs its store still keeps, so the wait is for: the commits at the end of a
        // partition checkpointed exactly (MM2 emits an offset sync for a partition's last record at its next
        // commit, a delayed sync, Kafka 3.6 on), which a round that read every commit made; and the group's
        // offset on the target at the newest checkpoint's downstream offset on every partition.
        const newestCheckpoint = new Map<string, Checkpoint>();
        const checkpoints = target.consumer({ groupId: `${stamp}-checkpoints`, allowAutoTopicCreation: false });
        clients.push(checkpoints);
        await checkpoints.connect();
        await checkpoints.subscribe({ topic: 'kafka.checkpoints.internal', fromBeginning: true });
        await checkpoints.run({
          autoCommit: false,
          eachMessage: async ({ message }) => {
            const c = decodeCheckpoint(message.key!, message.value!);
            if (c.group === group) newestCheckpoint.set(`${c.topic.slice('kafka.'.length)}/${c.partition}`, c);
          },
        });
        const showCheckpoints = (): string => [...newestCheckpoint].map(([k, c]) => `${k.slice(stamp.length + 1)} ${c.upstream}→${c.downstream}`).join(', ') || 'none';
        await waitFor(`group ${group}'s offsets checkpointed and translated onto ${kind.name}`, 90_000, mm2, async () => {
          await fetchTranslated();
          return withCommit.every((k) => {
            const c = newestCheckpoint.get(k);
            const x = commitAt.get(k)!;
            return c !== undefined && translated.get(k) === Number(c.downstream) && (!atEnd(k) || (c.upstream === BigInt(x) && c.downstream === BigInt(x)));
          });
        }).catch((e: Error) => {
          e.message += `\ntranslated: ${showTranslated()}\nnewest checkpoints: ${showCheckpoints()}`;
          throw e;
        });
        mark(`checkpointed: ${showCheckpoints()}; translated: ${showTranslated()}`);
        await waitFor(`the heartbeats topic on ${kind.name}`, 30_000, mm2, async () => (await targetAdmin.listTopics()).includes('heartbeats'));

        // MM2 stops here, so that the group's offsets on the target hold still for the checks below.
        await mm2.kill();
        await checkpoints.disconnect();
        await fetchTranslated();
        mark(`MirrorMaker 2 killed; translated: ${showTranslated()}`);

        // The offset syncs MM2 wrote (on Ledgerline: offset-syncs.topic.location=target).
        const syncs = [...(await readToEnd(target, syncsTopic, mm2)).values()].flat().map((m) => decodeOffsetSync(m.key!, m.value!)).filter((s) => s.topic.startsWith(stamp));

        for (const k of withCommit) {
          const x = commitAt.get(k)!;
          const t = translated.get(k)!;
          const [topic, p] = [k.slice(0, k.lastIndexOf('/')), Number(k.slice(k.lastIndexOf('/') + 1))];
          const derivable = syncs.filter((s) => s.topic === topic && s.partition === p && s.upstream <= BigInt(x)).map((s) => Number(s.downstream) + (BigInt(x) > s.upstream ? 1 : 0));
          expect(t, `${k}: translated offset at most the committed ${x}`).toBeLessThanOrEqual(x);
          expect(derivable, `${k}: translated ${t} from an offset sync at or before ${x}`).toContain(t);
          if (atEnd(k)) expect(t, `${k}: committed at the end of the partition`).toBe(x);
        }

        // A consumer of the group on Ledgerline resumes at the translated offsets: the first record it reads on
        // each partition is the one there, and it reads every record after it.
        const remaining = (k: string): number => expected.get(k)!.length - (translated.get(k) ?? 0);
        const resumed = await readUntil(
          target,
          mirrored,
          group,
          true,
          (seen) => [...expected.keys()].every((k) => (seen.get(`kafka.${k}`)?.length ?? 0) >= remaining(k)),
          60_000,
          mm2,
        );
        for (const k of expected.keys()) {
          const offsets = (resumed.get(`kafka.${k}`) ?? []).map((m) => Number(m.offset));
          const from = translated.get(k) ?? 0;
          expect(offsets, `kafka.${k} read by ${group} on ${kind.name}`).toEqual(Array.from({ length: expected.get(k)!.length - from }, (_, i) => from + i));
        }
        mark(`the group resumed on ${kind.name} at the translated offsets`);

        // MM2's internal topics on Ledgerline, compacted.
        const internal = [syncsTopic, 'kafka.checkpoints.internal', 'heartbeats', 'mm2-configs.kafka.internal', 'mm2-offsets.kafka.internal', 'mm2-status.kafka.internal'];
        const described = await targetAdmin.describeConfigs({
          includeSynonyms: false,
          resources: internal.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['cleanup.policy'] })),
        });
        const policies = Object.fromEntries(described.resources.map((r) => [r.resourceName, r.errorCode === 0 ? r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue : `error ${r.errorCode}`]));
        if (ledgerline.metricsUrl) mark(`log cleaner: ${await cleanerSummary(ledgerline.metricsUrl, internal)}`);
        console.log(`MirrorMaker 2 from Kafka into ${kind.name}:\n  ${timeline.join('\n  ')}\n  offset syncs (upstream→downstream): ${syncs.map((s) => `${s.topic.slice(stamp.length + 1)}/${s.partition} ${s.upstream}→${s.downstream}`).join(', ')}`);
        expect(policies, `MM2's internal topics on ${kind.name}`).toEqual(Object.fromEntries(internal.map((n) => [n, 'compact'])));
      } catch (e) {
        if (e instanceof Error) e.message += `\ntimeline:\n  ${timeline.join('\n  ')}\nMirrorMaker 2's last output:\n${mm2.tail(40)}`;
        throw e;
      } finally {
        await mm2.kill();
        for (const c of clients.reverse()) await c.disconnect().catch(() => undefined);
        await ledgerline?.stop();
        await upstream.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, TEST_TIMEOUT_MS);
  });
}
