/**
 * A Kafka Connect distributed worker (connect-runtime 4.3.1 with connect-file 4.3.1, ConnectDistributed) on Ledgerline, with the
 * FileStream connectors: a FileStreamSource reads an input file into a topic, a FileStreamSink writes the
 * topic to an output file. The worker creates its own config, offset and status topics (compacted, one
 * replica: KIP-154 / Connect's TopicAdmin), keeps the connectors' configs in the first, the source's file
 * positions in the second and the sink's consumer group offsets in the broker's group coordinator.
 *
 * Lines are appended to the input file all along; the worker is stopped mid-way and started again with the
 * same properties, and more lines follow. What Kafka guarantees, and so what is asserted:
 *  - A graceful stop (SIGTERM: the shutdown hook stops the herder; the source task flushes its producer and
 *    commits its last file position to the offsets topic, the sink task commits its consumer offsets on
 *    close) loses nothing and repeats nothing: the output file holds every line exactly once, in order.
 *  - A crash (SIGKILL) gives at-least-once, in Kafka too: FileStreamSource is not exactly-once (no
 *    exactly.once.source.support here, KIP-618), so lines read since the last offset flush are read again
 *    (offset.flush.interval.ms), and the sink's records written to the file since its last offset commit are
 *    delivered again. The output file then holds every line, in order, where a repeat is only ever a replay
 *    of lines just before it: no line is lost, none appears before a line that precedes it.
 *    (Measured, the same on Ledgerline and on Kafka 4.4: 2 s into the run the source had committed a position
 *    only once, a few lines in, so after the SIGKILL it read nearly all of it again; the sink's group offset
 *    was anywhere from a third to all of what it had written.)
 * The internal topics must exist with cleanup.policy=compact (DescribeConfigs) and, read back at the end
 * after the log cleaner's passes (ledgers roll every 3 s here), still hold both connectors' configs and the
 * source's position at the end of the input file.
 *
 * Skipped when java or the compat/connect build is missing (`npm run compat -- --only kafka` builds it);
 * LEDGERLINE_REQUIRE_CONNECT=1 makes that a failure. The same test against Apache Kafka 4.4, which checks
 * the test itself: LEDGERLINE_CONNECT_REFERENCE=1.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { appBrokerKinds, startReferenceKafka, type AppBroker, type AppBrokerKind } from '../support/app-brokers.js';
import { freePort } from '../../compat/lib/ports.js';
import { BrokerProcess } from '../support/broker-process.js';
import { cleanerSummary, ConnectProgram, ConnectRest, latestByKey, waitFor, whyNoConnect, writeProperties } from '../support/connect-app.js';

const { Kafka, logLevel, ConfigResourceTypes } = kafkajs;

const LINES = 900;
const CHUNK = 10;
const TEST_TIMEOUT_MS = 170_000;

interface TestBroker extends AppBroker {
  readonly bootstrap: string;
  /** Ledgerline's admin endpoint's /metrics (the log cleaner's figures); none for Kafka. */
  readonly metricsUrl?: string;
  stop(): Promise<void>;
}

async function startLedgerline(): Promise<TestBroker> {
  const adminPort = await freePort();
  const b = await BrokerProcess.start({
    configs: {
      'ledgerline.admin.listener': `http://127.0.0.1:${adminPort}`,
      'group.initial.rebalance.delay.ms': '0',
      // With the log cleaner, its work on the worker's compacted topics runs under the test: ledgers roll
      // every few seconds and the cleaner looks for work every 200 ms. Without one, both are ignored.
      'log.roll.ms': '3000',
      'log.cleaner.backoff.ms': '200',
    },
  });
  return { bootstrap: b.bootstrap, metricsUrl: `http://127.0.0.1:${adminPort}/metrics`, stop: async () => void (await b.stop()) };
}

const kinds = appBrokerKinds({
  what: 'Kafka Connect',
  appMissing: whyNoConnect(),
  requireVar: 'LEDGERLINE_REQUIRE_CONNECT',
  referenceVar: 'LEDGERLINE_CONNECT_REFERENCE',
  ledgerline: startLedgerline,
  kafka: (): Promise<TestBroker> => startReferenceKafka('connect-kafka-logs-'),
});

const lineText = (i: number): string => `line ${String(i).padStart(5, '0')} of the input`;
const lineIndex = (text: string): number => {
  const m = /^line (\d{5}) of the input$/.exec(text);
  if (!m) throw new Error(`the output file holds a line that was never written: ${JSON.stringify(text)}`);
  return Number(m[1]);
};

function readLines(path: string): string[] {
  if (!existsSync(path)) return [];
  const text = readFileSync(path, 'utf8');
  // A line is complete once its newline is there.
  return text.split('\n').slice(0, -1);
}

/**
 * Checks the output file of an at-least-once run: every line, in order, each repeat a replay of a run of
 * lines ending just before it (index at most one past the highest seen so far, never a gap).
 */
function atLeastOnceInOrder(out: string[]): { duplicates: number; problems: string[] } {
  const problems: string[] = [];
  let highest = -1;
  let duplicates = 0;
  for (let n = 0; n < out.length; n++) {
    const i = lineIndex(out[n]!);
    if (i > highest + 1) problems.push(`output line ${n + 1} is input line ${i}, but input line ${highest + 1} was not written before it`);
    if (i <= highest) duplicates++;
    if (n > 0 && i !== lineIndex(out[n - 1]!) + 1 && i > highest) problems.push(`output line ${n + 1} (input ${i}) does not follow ${out[n - 1]}`);
    highest = Math.max(highest, i);
  }
  if (highest !== LINES - 1) problems.push(`the last input line in the output is ${highest}, not ${LINES - 1}`);
  return { duplicates, problems };
}

async function connectRoundTrip(kind: AppBrokerKind<TestBroker>, restart: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  const t0 = Date.now();
  const timeline: string[] = [];
  const mark = (what: string): void => void timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
  const broker = await kind.start();
  const dir = mkdtempSync(join(tmpdir(), 'connect-test-'));
  const id = `connect-${restart.toLowerCase()}-${process.pid}-${Date.now()}`;
  const topic = `${id}-lines`;
  const internal = { config: `${id}-configs`, offset: `${id}-offsets`, status: `${id}-status` };
  const input = join(dir, 'input.txt');
  const output = join(dir, 'output.txt');
  writeFileSync(input, '');
  const port = await freePort();
  const props = join(dir, 'worker.properties');
  writeProperties(props, {
    'bootstrap.servers': broker.bootstrap,
    'group.id': id,
    'key.converter': 'org.apache.kafka.connect.storage.StringConverter',
    'value.converter': 'org.apache.kafka.connect.storage.StringConverter',
    // Not pre-created: the worker creates them, compacted, with these replication factors and partitions.
    'config.storage.topic': internal.config,
    'offset.storage.topic': internal.offset,
    'status.storage.topic': internal.status,
    'config.storage.replication.factor': 1,
    'offset.storage.replication.factor': 1,
    'status.storage.replication.factor': 1,
    'offset.storage.partitions': 3,
    'status.storage.partitions': 1,
    // Source offsets and sink group offsets committed every half second (default 60 s).
    'offset.flush.interval.ms': 500,
    listeners: `http://127.0.0.1:${port}`,
    'rest.advertised.host.name': '127.0.0.1',
    'rest.advertised.port': port,
    // The worker started again after a SIGKILL is a new member: give the dead one's tasks to it at once
    // rather than after Connect's default 5 minutes (KIP-415), and let the dead one's sessions end soon.
    'scheduled.rebalance.max.delay.ms': 0,
    'session.timeout.ms': 6000,
    'heartbeat.interval.ms': 1500,
    'consumer.session.timeout.ms': 6000,
    'consumer.heartbeat.interval.ms': 1500,
  });
  const worker = new ConnectProgram({ label: 'the Connect worker', mainClass: 'org.apache.kafka.connect.cli.ConnectDistributed', propertiesFile: props, workDir: dir });
  const rest = new ConnectRest(`http://127.0.0.1:${port}`);
  const kafka = new Kafka({ clientId: 'connect-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  const admin: Admin = kafka.admin();
  let writing: Promise<void> = Promise.resolve();
  let stopWriting = false;
  let resumed = (): void => undefined;
  try {
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const before = await admin.listTopics();
    expect(before.filter((t) => t.startsWith(id) && t !== topic), 'internal topics before the worker starts').toEqual([]);

    worker.start();
    await waitFor('the Connect worker answering on its REST port', 90_000, worker, () => rest.up());
    mark('worker 1 up');
    await waitFor('creating the connectors', 60_000, worker, async () => {
      await rest.putConnector(`${id}-source`, { 'connector.class': 'org.apache.kafka.connect.file.FileStreamSourceConnector', 'tasks.max': '1', file: input, topic });
      await rest.putConnector(`${id}-sink`, { 'connector.class': 'org.apache.kafka.connect.file.FileStreamSinkConnector', 'tasks.max': '1', file: output, topics: topic });
      return true;
    });
    await waitFor('the source and sink connectors running', 60_000, worker, async () => (await rest.running(`${id}-source`)) && (await rest.running(`${id}-sink`)));
    mark('connectors running');

    // The writer appends lines all along, in chunks; it pauses at two thirds until the worker is back.
    let written = 0;
    const back = new Promise<void>((r) => (resumed = r));
    writing = (async () => {
      while (written < LINES && !stopWriting) {
        if (written === (2 * LINES) / 3) await back;
        const n = Math.min(CHUNK, LINES - written);
        appendFileSync(input, Array.from({ length: n }, (_, k) => lineText(written + k) + '\n').join(''));
        written += n;
        await new Promise((r) => setTimeout(r, 40));
      }
    })();

    await waitFor(`the sink writing ${LINES / 3} lines`, 60_000, worker, () => readLines(output).length >= LINES / 3);
    if (restart === 'SIGTERM') await worker.stop();
    else await worker.kill();
    mark(`worker stopped (${restart}) with ${written} lines written, ${readLines(output).length} in the output`);
    // Where the restart resumes: the source's last committed file position (the latest record of the offsets
    // topic) and the sink group's committed offset.
    const sourceKey = (): string => JSON.stringify([`${id}-source`, { filename: input }]);
    const committedPosition = async (): Promise<number | null> => {
      const value = (await latestByKey(kafka, internal.offset, worker)).get(sourceKey());
      return value ? (JSON.parse(value) as { position: number }).position : null;
    };
    const position = (await committedPosition()) ?? 0;
    const [sinkCommitted] = await admin.fetchOffsets({ groupId: `connect-${id}-sink`, topics: [topic] });
    const [topicEnd] = await admin.fetchTopicOffsets(topic);
    mark(
      `source position committed: byte ${position} (${position / (lineText(0).length + 1)} lines); ` +
        `sink group committed ${sinkCommitted?.partitions[0]?.offset} of ${topicEnd?.high}`,
    );

    worker.start();
    await waitFor('the Connect worker answering again', 90_000, worker, () => rest.up());
    await waitFor('the connectors running again (their configs read back from the config topic)', 90_000, worker, async () => (await rest.running(`${id}-source`)) && (await rest.running(`${id}-sink`)));
    mark(`worker 2 up, connectors running, ${written} lines written`);
    resumed();
    await writing;
    mark(`all ${LINES} lines written`);
    await waitFor(`the sink writing the last line`, 90_000, worker, () => readLines(output).includes(lineText(LINES - 1)));
    mark(`last line in the output: ${readLines(output).length} lines`);
    // A clean stop at the end: nothing more can reach the file after this.
    await worker.stop();

    const out = readLines(output);
    const { duplicates, problems } = atLeastOnceInOrder(out);
    // Repeats in the topic are the source's (lines read again from its last committed file position); the
    // rest are the sink's (records delivered again from its group's last committed offset).
    const [end] = await admin.fetchTopicOffsets(topic);
    mark(`output: ${out.length} lines, ${duplicates} repeated; the topic holds ${end?.high} records`);

    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: Object.values(internal).map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['cleanup.policy'] })),
    });
    const policies = Object.fromEntries(described.resources.map((r) => [r.resourceName, r.errorCode === 0 ? r.configEntries.find((e) => e.configName === 'cleanup.policy')?.configValue : `error ${r.errorCode}`]));
    // What the worker keeps in its compacted topics, read back after the cleaner's passes: both connectors'
    // configs, and the source's position at the end of the file (the graceful stop committed it).
    // (The cleaner's figures first: what they show cleaned was cleaned before these reads.)
    if (broker.metricsUrl) mark(`log cleaner: ${await cleanerSummary(broker.metricsUrl, Object.values(internal))}`);
    const configs = await latestByKey(kafka, internal.config, worker);
    const finalPosition = await committedPosition();
    console.log(`Kafka Connect against ${kind.name}, restart by ${restart}:\n  ${timeline.join('\n  ')}`);

    expect(policies, "the worker's internal topics").toEqual(Object.fromEntries(Object.values(internal).map((n) => [n, 'compact'])));
    const meta = await admin.fetchTopicMetadata({ topics: [internal.offset, internal.status] });
    const partitionsOf = Object.fromEntries(meta.topics.map((t) => [t.name, t.partitions.length]));
    expect(partitionsOf, 'partitions of the offset and status topics').toEqual({ [internal.offset]: 3, [internal.status]: 1 });
    expect(problems, 'lost or out-of-order lines').toEqual([]);
    const connectorConfigs = [`${id}-source`, `${id}-sink`].map((n) => [n, configs.get(`connector-${n}`) ? 'kept' : 'missing']);
    expect(connectorConfigs, `connector configs in ${internal.config}`).toEqual([`${id}-source`, `${id}-sink`].map((n) => [n, 'kept']));
    expect(finalPosition, "the source's committed position after the last (graceful) stop: the input file's size").toBe(LINES * (lineText(0).length + 1));
    if (restart === 'SIGTERM') {
      // A graceful stop commits the source's position and the sink's offsets: every line exactly once.
      expect(out).toEqual(Array.from({ length: LINES }, (_, i) => lineText(i)));
    } else {
      // At-least-once: every line, in order (repeats only as replays, which Kafka allows after a crash).
      expect(new Set(out).size).toBe(LINES);
    }
  } catch (e) {
    if (e instanceof Error) e.message += `\ntimeline:\n  ${timeline.join('\n  ')}\nthe worker's last output:\n${worker.tail(40)}`;
    throw e;
  } finally {
    stopWriting = true;
    resumed();
    await writing.catch(() => undefined);
    await worker.kill();
    await admin.disconnect().catch(() => undefined);
    await broker.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const kind of kinds) {
  describe.skipIf(kind.skip).sequential(`Kafka Connect distributed worker against ${kind.name}`, () => {
    const needs = (): void => kind.needs();

    it('FileStreamSource → topic → FileStreamSink delivers every line exactly once, in order, across a graceful restart (SIGTERM)', async () => {
      needs();
      await connectRoundTrip(kind, 'SIGTERM');
    }, TEST_TIMEOUT_MS);

    it('FileStreamSource → topic → FileStreamSink loses no line and keeps order across a crash (SIGKILL): at-least-once', async () => {
      needs();
      await connectRoundTrip(kind, 'SIGKILL');
    }, TEST_TIMEOUT_MS);
  });
}
