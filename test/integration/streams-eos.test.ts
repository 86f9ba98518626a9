/**
 * Kafka Streams exactly-once (processing.guarantee=exactly_once_v2, KIP-447) end to end, against Ledgerline
 * and against Apache Kafka 4.4: a word count (compat/streams/StreamsWordCount.java: input → words →
 * repartition topic → count store and its changelog → output topic, each commit one transaction) over a
 * known input of 20,000 lines must end with exactly the right count for every word when
 *   A. the Streams application is killed with SIGKILL three times mid-run and started again, and
 *   B. the broker is killed with SIGKILL twice mid-run and started again on the same data, the
 *      application running throughout.
 * The last count of each word is read back from the output topic with read_committed (the Java consumer):
 * a transaction replayed after a crash would count lines twice, a lost one would count too few.
 *
 * The input is produced by an idempotent producer while the application runs, a chunk at a time, so the
 * application always has work when it is killed. Skipped when java or the compat/streams build is
 * missing (`npm run compat -- --only kafka` builds it); LEDGERLINE_REQUIRE_STREAMS=1 makes that a failure.
 * The run against Kafka, which checks the test itself, takes minutes: LEDGERLINE_STREAMS_REFERENCE=1 asks for it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { appBrokerKinds, startReferenceKafka, type AppBroker, type AppBrokerKind } from '../support/app-brokers.js';
import { IsolationLevel, KafkaClient, OffsetSpec } from '../../src/client/client.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readCounts, StreamsApp, whyNoStreamsApp } from '../support/streams-app.js';

const { Kafka, logLevel } = kafkajs;

const LINES = 20_000;
const CHUNK = 1000;
const PARTITIONS = 3;
const APP_KILLS = 3;
const BROKER_KILLS = 2;
const VARIANT_TIMEOUT_MS = 240_000;

/** A broker under test that can crash: SIGKILL and a start again on the same data directory and port. */
interface CrashableBroker extends AppBroker {
  /** The requests the broker logged as refused (Ledgerline's refusal log), for failure messages. */
  refusals(): string[];
  crash(): Promise<void>;
  stop(): Promise<void>;
}

async function startLedgerline(): Promise<CrashableBroker> {
  const b = await BrokerProcess.start({ configs: { 'group.initial.rebalance.delay.ms': '0' } });
  return {
    bootstrap: b.bootstrap,
    refusals: () => b.logs.filter((l) => l.includes('"msg":"refused ')).map((l) => (JSON.parse(l) as { msg: string }).msg),
    crash: () => b.restart(60_000),
    stop: async () => {
      await b.stop();
    },
  };
}

async function startKafka(): Promise<CrashableBroker> {
  const k = await startReferenceKafka('streams-eos-kafka-logs-');
  return { bootstrap: k.bootstrap, refusals: () => [], crash: () => k.restart(), stop: () => k.stop() };
}

// The reference run checks the test itself and takes minutes: it runs when asked for.
const brokers = appBrokerKinds({
  what: 'Kafka Streams exactly-once',
  appMissing: whyNoStreamsApp(),
  requireVar: 'LEDGERLINE_REQUIRE_STREAMS',
  referenceVar: 'LEDGERLINE_STREAMS_REFERENCE',
  ledgerline: startLedgerline,
  kafka: startKafka,
});

/** mulberry32: a small seeded generator, so the input (and the expected counts) are the same every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 20,000 lines of 1 to 12 words from a vocabulary of 300, some words far more frequent than others. */
function knownInput(): { lines: string[]; expected: Map<string, number>; words: number } {
  const syllables = ['ka', 'lo', 'mi', 'ne', 'pu', 'ri', 'so', 'ta', 'vu', 'ze'];
  const vocabulary: string[] = [];
  for (let i = 0; vocabulary.length < 300; i++) {
    const w = `${syllables[i % 10]}${syllables[Math.floor(i / 10) % 10]}${i >= 100 ? syllables[Math.floor(i / 100) % 10] : ''}`;
    vocabulary.push(w);
  }
  const rnd = seeded(20261201);
  const expected = new Map<string, number>();
  const lines: string[] = [];
  for (let i = 0; i < LINES; i++) {
    const words: string[] = [];
    for (let n = 1 + Math.floor(rnd() * 12); n > 0; n--) {
      const w = vocabulary[Math.floor(vocabulary.length * rnd() * rnd())]!;
      words.push(w);
      expected.set(w, (expected.get(w) ?? 0) + 1);
    }
    // Mixed case and punctuation: the word count lower-cases and splits on non-word characters.
    lines.push(i % 7 === 0 ? `${words.join(', ').toUpperCase()}.` : words.join(' '));
  }
  return { lines, expected, words: [...expected.values()].reduce((a, b) => a + b, 0) };
}

const INPUT = knownInput();

/** An error a condition throws to end the wait at once (others, a broker restarting say, only mean "not yet"). */
class Fatal extends Error {}

/** Polls a condition until it holds; throws with `what` past the deadline, or at once when the app died. */
async function waitFor(what: string, deadlineMs: number, app: StreamsApp, cond: () => Promise<boolean>): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    app.check();
    const holds = await cond().catch((e: unknown) => {
      if (e instanceof Fatal) throw e;
      return false;
    });
    if (holds) return;
    if (Date.now() > until) throw new Error(`${what}: not within ${deadlineMs / 1000} s; the Streams word count's last output:\n${app.tail()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** One run of the word count over the known input, with crashes of the application or of the broker. */
async function wordCountWithCrashes(kind: AppBrokerKind<CrashableBroker>, crash: 'app' | 'broker', seed: number): Promise<void> {
  const t0 = Date.now();
  const rnd = seeded(seed);
  const broker = await kind.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'streams-eos-state-'));
  const id = `wc-${crash}-${process.pid}-${Date.now()}`;
  const input = `${id}-lines`;
  const output = `${id}-counts`;
  const app = new StreamsApp({ bootstrap: broker.bootstrap, applicationId: id, input, output, stateDir });
  const kafka: KafkaType = new Kafka({ clientId: 'streams-eos', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
  const admin: Admin = kafka.admin();
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'streams-eos-check' });
  const timeline: string[] = [];
  const mark = (what: string): void => void timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
  try {
    await admin.connect();
    await admin.createTopics({ topics: [input, output].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })), waitForLeaders: true });
    await producer.connect();
    mark('broker up, topics created');

    /** The offsets the application has committed on a topic, summed over its partitions (part of each transaction). */
    const committedOn = async (topic: string): Promise<number> => {
      const [t] = await admin.fetchOffsets({ groupId: id, topics: [topic] });
      return (t?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    /** The input lines the application has committed. */
    const committed = (): Promise<number> => committedOn(input);

    // The producer sends chunk after chunk as long as the application keeps up (at most two chunks
    // ahead of what it committed), so that it is mid-run at every crash; a broker crash waits for the
    // chunk being sent, so no send is ever retried by hand (which could duplicate lines).
    let produced = 0;
    let sending: Promise<void> = Promise.resolve();
    let brokerDown: Promise<void> | null = null;
    let crashesDone = false;
    const sendChunk = async (): Promise<void> => {
      const lines = INPUT.lines.slice(produced, produced + CHUNK);
      await producer.send({ topic: input, acks: -1, messages: lines.map((value, i) => ({ key: `line-${produced + i}`, value })) });
      produced += lines.length;
    };
    let feedError: unknown = null;
    const feeding = (async () => {
      while (produced < LINES) {
        if (brokerDown) {
          await brokerDown;
          continue;
        }
        if (!crashesDone && produced - (await committed().catch(() => 0)) >= 2 * CHUNK) {
          await new Promise((r) => setTimeout(r, 100));
          continue;
        }
        // Checked again in the same turn as the send starts: a crash waits for `sending`.
        if (brokerDown) continue;
        sending = sendChunk();
        await sending;
      }
    })();
    feeding.catch((e: unknown) => (feedError = e));
    const progress = async (): Promise<number> => {
      if (feedError) throw new Fatal(`producing the input failed: ${String(feedError)}`);
      return committed();
    };

    app.start();
    mark('word count started');
    const kills = crash === 'app' ? APP_KILLS : BROKER_KILLS;
    for (let k = 1; k <= kills; k++) {
      // A random moment: once this run has committed a random number of lines more, a random delay later.
      const from = await committed().catch(() => 0);
      const more = 500 + Math.floor(rnd() * 2500);
      await waitFor(`the word count committing ${more} lines past ${from} before crash ${k}`, 90_000, app, async () => (await progress()) >= Math.min(from + more, LINES - CHUNK));
      await new Promise((r) => setTimeout(r, Math.floor(rnd() * 700)));
      if (crash === 'app') {
        await app.kill();
        mark(`word count killed (SIGKILL) at ${await committed()} lines committed, ${produced} produced`);
        app.start();
      } else {
        let up!: () => void;
        brokerDown = new Promise((r) => (up = r));
        await sending;
        const at = await committed();
        const down = Date.now();
        await broker.crash();
        brokerDown = null;
        up();
        mark(`broker killed (SIGKILL) at ${at} lines committed, ${produced} produced; serving again ${((Date.now() - down) / 1000).toFixed(1)} s later`);
      }
    }
    crashesDone = true;
    await feeding;
    mark(`all ${LINES} lines produced`);

    // The count runs in a second sub-topology, reading the words back from the repartition topic: done
    // once the group's offsets there reach that topic's end too.
    const repartition = `${id}-words-repartition`;
    const partitions = Array.from({ length: PARTITIONS }, (_, partition) => partition);
    let words = 0;
    await waitFor(`the word count committing all ${LINES} lines and every word it wrote to ${repartition}`, 120_000, app, async () => {
      if ((await committed()) !== LINES) return false;
      const end = await client.listOffsets(partitions.map((partition) => ({ topic: repartition, partition, timestamp: OffsetSpec.LATEST })));
      words = end.reduce((sum, e) => sum + Number(e.offset), 0);
      return end.every((e) => e.errorCode === 0) && (await committedOn(repartition)) === words;
    });
    mark(`all lines committed, and the ${words} offsets of the repartition topic`);
    await app.stop();
    // The commit markers reach the output partitions after the offsets' own: read once no transaction is open.
    await waitFor('the output topic having no open transaction (last stable offset = high watermark)', 30_000, app, async () => {
      const q = partitions.map((partition) => ({ topic: output, partition, timestamp: OffsetSpec.LATEST }));
      const [stable, high] = await Promise.all([client.listOffsets(q, { isolationLevel: IsolationLevel.READ_COMMITTED }), client.listOffsets(q)]);
      return stable.every((s, i) => s.errorCode === 0 && s.offset === high[i]!.offset);
    });

    const got = await readCounts(broker.bootstrap, output, 'read_committed');
    const uncommitted = await readCounts(broker.bootstrap, output, 'read_uncommitted');
    mark(
      `output read: ${got.records} committed records; read_uncommitted, ${uncommitted.records - got.records} more of aborted transactions ` +
        `and ${uncommitted.outOfSequence} updates out of sequence${uncommitted.firstOutOfSequence ? ` (first ${uncommitted.firstOutOfSequence})` : ''}`,
    );
    console.log(`Kafka Streams exactly-once against ${kind.name}, ${crash} crashes:\n  ${timeline.join('\n  ')}`);

    const wrong: string[] = [];
    for (const [word, count] of INPUT.expected) if (got.counts[word] !== count) wrong.push(`${word}: expected ${count}, read ${got.counts[word] ?? 'nothing'}`);
    for (const word of Object.keys(got.counts)) if (!INPUT.expected.has(word)) wrong.push(`${word}: not in the input, read ${got.counts[word]}`);
    expect(wrong, `${wrong.length} of ${INPUT.expected.size} words counted wrong`).toEqual([]);
    expect(Object.keys(got.counts)).toHaveLength(INPUT.expected.size);
    // With no record cache each word's counts are written one update at a time: read_committed sees each
    // word's updates 1, 2, …, n, each once, and nothing of the aborted transactions.
    expect(got.firstOutOfSequence, 'the first committed count update out of sequence').toBe('');
    expect(got.records).toBe(INPUT.words);
  } catch (e) {
    const refused = broker.refusals();
    if (refused.length > 0 && e instanceof Error) e.message = `the broker refused:\n  ${refused.join('\n  ')}\n${e.message}`;
    throw e;
  } finally {
    await app.kill();
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
    await client.close().catch(() => undefined);
    await broker.stop();
    rmSync(stateDir, { recursive: true, force: true });
  }
}

for (const kind of brokers) {
  describe.skipIf(kind.skip).sequential(`Kafka Streams exactly_once_v2 word count against ${kind.name}`, () => {
    const needs = (): void => kind.needs();

    it('counts every word exactly once when the application is killed with SIGKILL mid-run and restarted', async () => {
      needs();
      await wordCountWithCrashes(kind, 'app', 7);
    }, VARIANT_TIMEOUT_MS);

    it('counts every word exactly once when the broker is killed with SIGKILL mid-run and restarted', async () => {
      needs();
      await wordCountWithCrashes(kind, 'broker', 11);
    }, VARIANT_TIMEOUT_MS);
  });
}
