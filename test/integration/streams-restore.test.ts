/**
 * A Kafka Streams state store restored from its compacted changelog, against Ledgerline and against Apache
 * Kafka 4.4: a keyed aggregation (compat/streams/StreamsRestore.java: input (key, number) → sum per key in
 * the in-memory store `totals`, changelog `<app>-totals-changelog` → every updated total to the output
 * topic) takes 12,000 updates over 20 keys, with its changelog rolling a segment every 500 ms and
 * `min.cleanable.dirty.ratio=0.01` (both set through Streams' `topic.` prefix), so that the broker's log
 * cleaner compacts the changelog while the application runs (Kafka's LogCleaner: sealed segments only, the
 * latest record of each key survives with its offset). Then
 *   1. the application stops and its state directory is deleted; the changelog must have lost records
 *      to the cleaner, and its latest record of each key must still be that key's total;
 *   2. it starts again: its restore listener must report restoring the store from the changelog (fewer
 *      records than were written, since compacted), and the restored store, read by interactive query,
 *      must hold exactly the right total of every key;
 *   3. one more update per key: the store and the output topic must show each total plus that update.
 *
 * The broker's cleaner checks for work every `log.cleaner.backoff.ms` = 200 ms (Kafka's default, 15 s, would
 * leave the changelog uncleaned for most of the run). Skipped when java or the compat/streams build is
 * missing; LEDGERLINE_REQUIRE_STREAMS=1 makes that a failure. The run against Kafka, which checks the test
 * itself, is asked for with LEDGERLINE_STREAMS_REFERENCE=1.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType, Producer } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { SHARED_BROKER_SETTINGS } from '../../compat/lib/brokers.js';
import { appBrokerKinds, startReferenceKafka, type AppBroker, type AppBrokerKind } from '../support/app-brokers.js';
import { KafkaClient } from '../../src/client/client.js';
import { BrokerProcess } from '../support/broker-process.js';
import { readPartition } from '../support/records.js';
import { readCounts, StreamsApp, whyNoStreamsApp } from '../support/streams-app.js';

const { Kafka, logLevel } = kafkajs;

const KEYS = 20;
const UPDATES = 12_000;
const CHUNK = 500;
/** Time between input chunks: the 24 chunks span about 6 s of record timestamps, a dozen changelog segments. */
const CHUNK_EVERY_MS = 250;
const PARTITIONS = 2;
const SEGMENT_MS = 500;
const LAST_UPDATE = 1000;
const TEST_TIMEOUT_MS = 170_000;

type Broker = AppBroker;

async function startLedgerline(): Promise<Broker> {
  const b = await BrokerProcess.start({ configs: { 'group.initial.rebalance.delay.ms': '0', 'log.cleaner.backoff.ms': SHARED_BROKER_SETTINGS['log.cleaner.backoff.ms']! } });
  return { bootstrap: b.bootstrap, stop: async () => void (await b.stop()) };
}

// SHARED_BROKER_SETTINGS (log.cleaner.backoff.ms=200 among them) are part of every ReferenceKafka.
const brokers = appBrokerKinds({
  what: 'Kafka Streams state restore',
  appMissing: whyNoStreamsApp('StreamsRestore'),
  requireVar: 'LEDGERLINE_REQUIRE_STREAMS',
  referenceVar: 'LEDGERLINE_STREAMS_REFERENCE',
  ledgerline: startLedgerline,
  kafka: () => startReferenceKafka('streams-restore-kafka-logs-'),
});

const key = (i: number): string => `k${String(i % KEYS).padStart(2, '0')}`;
/** Update i adds 1 to 9, in a fixed pattern, to key i mod 20. */
const delta = (i: number): number => 1 + ((i * 7 + Math.floor(i / KEYS)) % 9);

function expectedTotals(): Record<string, number> {
  const totals: Record<string, number> = {};
  for (let i = 0; i < UPDATES; i++) totals[key(i)] = (totals[key(i)] ?? 0) + delta(i);
  return totals;
}

/** What the program printed as JSON lines in a given run (StreamsApp tags lines `[run N out]`). */
function printed(app: StreamsApp, run: number): Array<Record<string, unknown>> {
  const tag = `[run ${run} out] `;
  const out: Array<Record<string, unknown>> = [];
  for (const l of app.lines) if (l.startsWith(tag) && l.charAt(tag.length) === '{') out.push(JSON.parse(l.slice(tag.length)) as Record<string, unknown>);
  return out;
}

/** Two stores' contents as sorted entries, so that the order of keys does not matter. */
const sorted = (store: Record<string, number> | null): string => (store === null ? 'null' : JSON.stringify(Object.entries(store).sort(([a], [b]) => a.localeCompare(b))));

/** The last store contents the program printed in a run, or null. */
function lastStore(app: StreamsApp, run: number): Record<string, number> | null {
  const stores = printed(app, run).filter((l) => l.query !== undefined);
  return stores.length === 0 ? null : (stores[stores.length - 1]!.query as Record<string, number>);
}

async function waitFor(what: string, deadlineMs: number, app: StreamsApp, cond: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    app.check();
    if (await Promise.resolve(cond()).catch(() => false)) return;
    if (Date.now() > until) throw new Error(`${what}: not within ${deadlineMs / 1000} s; the Streams program's last output:\n${app.tail(30)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function restoreFromCompactedChangelog(kind: AppBrokerKind<Broker>): Promise<void> {
  const t0 = Date.now();
  const timeline: string[] = [];
  const mark = (what: string): void => void timeline.push(`${((Date.now() - t0) / 1000).toFixed(1)} s ${what}`);
  const broker = await kind.start();
  const stateDir = mkdtempSync(join(tmpdir(), 'streams-restore-state-'));
  const id = `restore-${process.pid}-${Date.now()}`;
  const input = `${id}-updates`;
  const output = `${id}-totals`;
  const changelog = `${id}-totals-changelog`;
  const app = new StreamsApp({ bootstrap: broker.bootstrap, applicationId: id, input, output, stateDir, program: 'StreamsRestore', extraArgs: [String(SEGMENT_MS)] });
  const kafka: KafkaType = new Kafka({ clientId: 'streams-restore', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
  const admin: Admin = kafka.admin();
  const producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
  const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'streams-restore-check' });
  const expected = expectedTotals();
  try {
    await admin.connect();
    await admin.createTopics({ topics: [input, output].map((topic) => ({ topic, numPartitions: PARTITIONS, replicationFactor: 1 })), waitForLeaders: true });
    await producer.connect();
    mark('broker up, topics created');

    app.start();
    for (let from = 0; from < UPDATES; from += CHUNK) {
      const messages = Array.from({ length: Math.min(CHUNK, UPDATES - from) }, (_, j) => ({ key: key(from + j), value: String(delta(from + j)) }));
      await producer.send({ topic: input, acks: -1, messages });
      await new Promise((r) => setTimeout(r, CHUNK_EVERY_MS));
      app.check();
    }
    mark(`${UPDATES} updates produced`);
    await waitFor('the store of the first run holding every total', 60_000, app, () => sorted(lastStore(app, 1)) === sorted(expected));
    const committedInput = async (): Promise<number> => {
      const [t] = await admin.fetchOffsets({ groupId: id, topics: [input] });
      return (t?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    };
    await waitFor('the application committing every update', 30_000, app, async () => (await committedInput()) === UPDATES);
    await app.stop();
    mark('first run: every total in the store, every update committed; stopped (SIGTERM)');
    // No local state at all: the store can come back only from the changelog.
    rmSync(stateDir, { recursive: true, force: true });
    mkdirSync(stateDir);

    // The cleaner's work: fewer records than were written, and the latest record of each key its total.
    let left = UPDATES;
    let written = 0;
    let latest: Record<string, number> = {};
    await waitFor(`the log cleaner compacting ${changelog}`, 60_000, app, async () => {
      let records = 0;
      let end = 0;
      const last: Record<string, number> = {};
      for (let p = 0; p < PARTITIONS; p++) {
        const read = await readPartition(client, changelog, p);
        records += read.length;
        end += read.length > 0 ? read[read.length - 1]!.offset + 1 : 0;
        for (const r of read) if (r.key !== null && r.value !== null) last[r.key] = Number(r.value.readBigInt64BE(0));
      }
      left = records;
      written = end;
      latest = last;
      return records < UPDATES;
    });
    mark(`changelog compacted: ${left} of ${written} records left`);
    expect(latest, "the changelog's latest record of each key after compaction").toEqual(expected);

    app.start();
    mark('second run started on an empty state directory');
    // Restoring tasks' stores are not queryable, but a running task's are while another task restores: wait
    // for every restore to end and for a query that sees every key, then compare the values.
    await waitFor('the restored store of the second run, every key in it', 60_000, app, () => {
      const ended = printed(app, 2).filter((l) => l.restore === 'end').length;
      return ended >= PARTITIONS && Object.keys(lastStore(app, 2) ?? {}).length === KEYS;
    });
    const restored = lastStore(app, 2);
    const restores = printed(app, 2).filter((l) => l.restore !== undefined);
    const starts = restores.filter((l) => l.restore === 'start');
    const ends = restores.filter((l) => l.restore === 'end');
    const restoredRecords = ends.reduce((sum, l) => sum + Number(l.restored), 0);
    mark(`restored: ${JSON.stringify(starts)} ${JSON.stringify(ends)}`);
    expect(restored, 'the store restored from the changelog').toEqual(expected);
    expect(
      starts.map((l) => `${String(l.store)} ${String(l.topic)}-${String(l.partition)}`).sort(),
      'the restore listener: one restore of each changelog partition',
    ).toEqual(Array.from({ length: PARTITIONS }, (_, p) => `totals ${changelog}-${p}`));
    expect(ends.map((l) => Number(l.partition)).sort(), 'the restore listener: each restore ended').toEqual(Array.from({ length: PARTITIONS }, (_, p) => p));
    // Restored from the compacted changelog: at least one record per key, no more than the cleaner left.
    expect(restoredRecords, 'records restored').toBeGreaterThanOrEqual(KEYS);
    expect(restoredRecords, 'records restored').toBeLessThanOrEqual(left);

    const after: Record<string, number> = {};
    for (const [k, v] of Object.entries(expected)) after[k] = v + LAST_UPDATE;
    await producer.send({ topic: input, acks: -1, messages: Object.keys(expected).map((k) => ({ key: k, value: String(LAST_UPDATE) })) });
    await waitFor('the store holding each total plus the last update', 60_000, app, () => sorted(lastStore(app, 2)) === sorted(after));
    await waitFor('the application committing the last updates', 30_000, app, async () => (await committedInput()) === UPDATES + KEYS);
    await app.stop();
    const out = await readCounts(broker.bootstrap, output, 'read_uncommitted');
    mark(`last updates applied; output read: ${out.records} records`);
    console.log(`Kafka Streams state restore against ${kind.name}:\n  ${timeline.join('\n  ')}`);
    expect(out.counts, 'the last total of each key on the output topic').toEqual(after);
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
  describe.skipIf(kind.skip).sequential(`Kafka Streams state store restore against ${kind.name}`, () => {
    it('restores an in-memory store from its compacted changelog with exactly the right value per key', async () => {
      kind.needs();
      await restoreFromCompactedChangelog(kind);
    }, TEST_TIMEOUT_MS);
  });
}
