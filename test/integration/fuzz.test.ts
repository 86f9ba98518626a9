/**
 * Structure-aware fuzzing of the whole broker over raw sockets: requests of every served API and version
 * built by the generated encoders, mutated at the field level and the byte level, record batches of every
 * codec with valid CRCs and broken records, and frame-size lies (test/support/fuzz/). During the run the
 * broker must stay up and answer every request that parses (or close the connection on one that does not),
 * within a deadline. After it: a fresh client is served, the broker's RSS is within a stated bound, the
 * records produced before the run fetch back byte for byte, and after SIGTERM the broker restarts on the
 * same data directory with those records still there.
 *
 *   LEDGERLINE_FUZZ_SEED      replay a run (the seed is printed with every failure)
 *   LEDGERLINE_FUZZ_SECONDS   length of the fuzz phase (default 90: about two minutes for the whole file)
 *   LEDGERLINE_FUZZ_CASES     stop after this many cases instead
 *   LEDGERLINE_FUZZ_OLD_SPACE_MIB
 *                             the broker's old generation cap (default 192; --max-old-space-size): the broker keeps
 *                             45-110 MiB alive, and a case needing more than the cap kills it, a finding
 *   LEDGERLINE_FUZZ_RSS_MIB   the RSS bound (default 640: 90 s runs with two busy loops beside them end at 390-455 MiB:
 *                             the old generation, up to 2 x 64 MiB of young generation, about 150 MiB of code and
 *                             native memory at start, request buffers; the request memory pool could hold 256 MiB)
 *                             Both defaults grow by 0.5 MiB per second of fuzzing beyond 90 (GROWTH_MIB_PER_SECOND).
 *   LEDGERLINE_FUZZ_REPORT    where the JSON report with every reproducer goes (default: the temp directory)
 *
 * `npm run bench -- fuzz <seconds>` runs this file for longer.
 */
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { CompressionType } from '../../protocol/compression/index.js';
import { handlers } from '../../src/api/index.js';
import { KafkaClient } from '../../src/client/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection } from '../support/raw-connection.js';
import { readPartition } from '../support/records.js';
import type { World } from '../support/fuzz/generators.js';
import { Prng, seedFromEnv } from '../support/fuzz/prng.js';
import { encodeTracedFrame } from '../support/fuzz/mutators.js';
import { expectationOf } from '../support/fuzz/oracles.js';
import { bombBatch, CODECS, decodesCleanly, fuzzBatch, validBatch } from '../support/fuzz/records.js';
import { formatReport, runFuzz, type FuzzReport } from '../support/fuzz/runner.js';
import { produceSeedData, seedDifferences, storedBytes, type SeedData } from '../support/fuzz/seed-data.js';

const SEED = seedFromEnv(process.env.LEDGERLINE_FUZZ_SEED);
const SECONDS = Number(process.env.LEDGERLINE_FUZZ_SECONDS ?? 90);
const CASES = process.env.LEDGERLINE_FUZZ_CASES ? Number(process.env.LEDGERLINE_FUZZ_CASES) : undefined;
const DEADLINE_MS = 10_000;
const MAX_REQUEST = 4 * 1024 * 1024;
const SEED_TOPIC = 'ledgerline-fuzz-seed-data';
const FUZZ_TOPICS = ['fuzz-0', 'fuzz-1', 'fuzz-2'];
// No initial rebalance delay: a JoinGroup to a new group answers at once instead of after Kafka's 3 s.
const BROKER_CONFIGS = { 'socket.request.max.bytes': String(MAX_REQUEST), 'num.partitions': '2', 'group.initial.rebalance.delay.ms': '0' };
/**
 * The broker's state grows with the topics and groups the fuzzer creates: about 0.25 MiB of live heap per second
 * of fuzzing on 2 cores. Runs longer than CI's 90 s (`npm run bench -- fuzz`) get twice that added to both bounds.
 */
const GROWTH_MIB_PER_SECOND = 0.5;
const LONGER_RUN_MIB = Math.ceil(Math.max(0, SECONDS - 90) * GROWTH_MIB_PER_SECOND);
/**
 * The broker's old generation is capped (Kafka's brokers run with a fixed -Xmx too): a request whose handling
 * keeps more alive than this kills the broker, a finding, where without a cap it would only raise the RSS. The
 * fuzzer's broker keeps 45-110 MiB alive over 90 s.
 */
const OLD_SPACE_MIB = Number(process.env.LEDGERLINE_FUZZ_OLD_SPACE_MIB ?? 192 + LONGER_RUN_MIB);
const NODE_OPTIONS = [`--max-old-space-size=${OLD_SPACE_MIB}`];
const RSS_BOUND_MIB = Number(process.env.LEDGERLINE_FUZZ_RSS_MIB ?? 640 + LONGER_RUN_MIB);
const REPLAY = `seed ${SEED} (replay with LEDGERLINE_FUZZ_SEED=${SEED})`;

/** SIGTERM, then SIGKILL if the broker has not exited within `graceMs`; the SIGTERM's exit code or null. */
async function terminate(broker: BrokerProcess, graceMs: number): Promise<number | null> {
  const pid = broker.pid;
  const timer = setTimeout(() => pid !== undefined && process.kill(pid, 'SIGKILL'), graceMs);
  try {
    return await broker.kill('SIGTERM');
  } finally {
    clearTimeout(timer);
  }
}

describe.sequential(`fuzzing every served API (${REPLAY})`, () => {
  let broker: BrokerProcess;
  let restarted: BrokerProcess | undefined;
  let admin: KafkaClient;
  let seedData: SeedData;
  let before: Buffer[];
  let report: FuzzReport;

  beforeAll(async () => {
    broker = await BrokerProcess.start({ configs: BROKER_CONFIGS, nodeOptions: NODE_OPTIONS });
    admin = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'fuzz-admin' });
    const created = await admin.createTopics([{ name: SEED_TOPIC, numPartitions: 2 }, ...FUZZ_TOPICS.map((name) => ({ name, numPartitions: 3 }))]);
    expect(created.map((c) => c.errorCode)).toEqual(created.map(() => 0));
    await admin.waitForTopics([SEED_TOPIC, ...FUZZ_TOPICS]);
    seedData = await produceSeedData(admin, SEED_TOPIC, 2, SEED);
    before = await storedBytes(admin, seedData);
    expect(await seedDifferences(seedData, before)).toEqual([]);
  });

  afterAll(async () => {
    await admin?.close().catch(() => undefined);
    await restarted?.stop();
    await broker?.stop();
  });

  it('judges frames as the broker parses them (the harness checks itself first)', async () => {
    const served = new Map(handlers.map((h) => [h.api.apiKey, h]));
    const valid = encodeTracedFrame(ApiVersionsApi, 3, 7, 'fuzz', ApiVersionsApi.request.create({ clientSoftwareName: 'a', clientSoftwareVersion: '1' }));
    expect(expectationOf(valid.bytes, served, MAX_REQUEST)).toMatchObject({ kind: 'answer', correlationId: 7 });
    // The length prefixes the TracingWriter recorded are where the encoder put them: the header's client id
    // (int16 4), then the two compact strings of the body (uvarint 1 + 1).
    const lengths = valid.sites.filter((s) => s.role === 'length');
    expect(lengths.map((s) => (s.width === 'uvarint' ? valid.bytes[s.at] : valid.bytes.readInt16BE(s.at)))).toEqual([4, 2, 2]);
    const truncated = Buffer.from(valid.bytes.subarray(0, valid.bytes.length - 3));
    truncated.writeInt32BE(truncated.length - 4, 0);
    expect(expectationOf(truncated, served, MAX_REQUEST).kind).toBe('close');
    const unknownVersion = Buffer.from(valid.bytes);
    unknownVersion.writeInt16BE(99, 6);
    expect(expectationOf(unknownVersion, served, MAX_REQUEST).kind).toBe('fallback');
    // Batches made to be refused are refused by the project's own record decoder too (no false alarms from
    // the generator), apart from the lies that only Kafka's LogValidator checks.
    const rng = new Prng(SEED, 0xc0de);
    const validatorOnly = new Set(['last-offset-delta', 'record-count-low', 'control-batch', 'sequence-without-producer', 'magic', 'unknown-codec']);
    for (let i = 0; i < 200; i++) {
      const b = await fuzzBatch(rng, 0.2);
      if (b.variant === 'valid') expect(await decodesCleanly(b.bytes), `valid batch, codec ${b.codec}`).toBe(true);
      else if (b.mustReject && !validatorOnly.has(b.variant)) expect(await decodesCleanly(b.bytes), `${b.variant}, codec ${b.codec}`).toBe(false);
    }
  });

  it('answers every request that parses, closes on every one that does not, and never dies', async () => {
    const meta = await admin.metadata(FUZZ_TOPICS);
    const rng = new Prng(SEED, 0xb0b);
    const world: World = {
      topics: meta.topics.map((t) => ({ name: t.name!, id: t.topicId, partitions: t.partitions.length })),
      groups: ['fuzz-group-0', 'fuzz-group-1', 'fuzz-group-2'],
      validBatches: await Promise.all(CODECS.flatMap((codec) => [1, 2, 3].map(() => validBatch(rng, codec)))),
      brokenBatches: await Promise.all(Array.from({ length: 120 }, () => fuzzBatch(rng, 0))),
      bombs: await Promise.all([CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD].map((c) => bombBatch(c, 8 * 1024 * 1024))),
    };
    report = await runFuzz({
      seed: SEED,
      seconds: SECONDS,
      maxCases: CASES,
      deadlineMs: DEADLINE_MS,
      broker,
      handlers,
      world,
      maxRequestBytes: MAX_REQUEST,
      log: (line) => console.log(`[fuzz ${SEED}] ${line}`),
    });
    const text = formatReport(report);
    console.log(text);
    const path = process.env.LEDGERLINE_FUZZ_REPORT ?? join(tmpdir(), `ledgerline-fuzz-${SEED}.json`);
    writeFileSync(path, JSON.stringify(report, null, 2));
    console.log(`[fuzz ${SEED}] report with reproducers: ${path}`);
    expect(report.cases, REPLAY).toBeGreaterThan(0);
    expect(report.fatal, `${REPLAY}\n${text}`).toBeNull();
    expect(report.findings.map((f) => f.key), `${REPLAY}\n${text}`).toEqual([]);
  }, (SECONDS + 120) * 1000);

  it('serves a fresh client afterwards: ApiVersions, Metadata, Produce, Fetch', async () => {
    expect(broker.running, REPLAY).toBe(true);
    const raw = await RawConnection.connect(broker.port);
    try {
      const versions = await raw.request(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'fuzz-after', clientSoftwareVersion: '1.0' }), DEADLINE_MS);
      expect(versions.errorCode).toBe(0);
    } finally {
      raw.destroy();
    }
    const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'fuzz-after' });
    try {
      const created = await client.createTopics([{ name: 'fuzz-after', numPartitions: 1 }]);
      expect(created[0]!.errorCode, REPLAY).toBe(0);
      await client.waitForTopics(['fuzz-after']);
      const meta = await client.metadata(['fuzz-after', SEED_TOPIC]);
      expect(meta.topics.map((t) => [t.name, t.errorCode, t.partitions.length])).toEqual([
        ['fuzz-after', 0, 1],
        [SEED_TOPIC, 0, 2],
      ]);
      const [produced] = await client.produce([{ topic: 'fuzz-after', partition: 0, records: await buildRecordBatch([{ key: 'k', value: 'after the fuzz' }]) }]);
      expect(produced!.errorCode, REPLAY).toBe(0);
      const records = await readPartition(client, 'fuzz-after', 0);
      expect(records.map((r) => [r.key, r.value?.toString()])).toEqual([['k', 'after the fuzz']]);
    } finally {
      await client.close();
    }
  }, 90_000);

  it(`keeps its resident memory under ${RSS_BOUND_MIB} MiB`, () => {
    const rssMiB = broker.rssKiB() / 1024;
    console.log(`[fuzz ${SEED}] broker RSS after the run ${rssMiB.toFixed(0)} MiB, peak sampled ${((report?.peakRssKiB ?? 0) / 1024).toFixed(0)} MiB`);
    expect(rssMiB, REPLAY).toBeLessThan(RSS_BOUND_MIB);
    expect((report?.peakRssKiB ?? 0) / 1024, REPLAY).toBeLessThan(RSS_BOUND_MIB);
  });

  it('still has the records produced before the run, byte for byte', async () => {
    const after = await storedBytes(admin, seedData);
    expect(after.map((b) => b.length), REPLAY).toEqual(before.map((b) => b.length));
    for (let p = 0; p < before.length; p++) expect(after[p]!.equals(before[p]!), `${REPLAY}: partition ${p}`).toBe(true);
  });

  it('restarts on the same data directory after SIGTERM, with those records intact', async () => {
    await admin.close();
    const code = await terminate(broker, 30_000);
    expect(code, `${REPLAY}: SIGTERM exit code`).toBe(0);
    restarted = await BrokerProcess.start({ dataDir: broker.dataDir, configs: BROKER_CONFIGS, nodeOptions: NODE_OPTIONS }).catch((e: unknown) => {
      throw new Error(`${REPLAY}: the broker does not restart on the fuzzed data directory: ${String(e)}`);
    });
    admin = await KafkaClient.connect({ bootstrap: restarted.bootstrap, clientId: 'fuzz-restarted' });
    const after = await storedBytes(admin, seedData);
    expect(await seedDifferences(seedData, after), REPLAY).toEqual([]);
    for (let p = 0; p < before.length; p++) expect(after[p]!.equals(before[p]!), `${REPLAY}: partition ${p} after restart`).toBe(true);
  }, 90_000);
});
