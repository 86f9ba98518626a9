/**
 * Client quotas on a real broker: a producer over its producer_byte_rate is throttled to within 10% of it,
 * measured over a window after its first burst; a consumer over its consumer_byte_rate likewise; throttled
 * responses carry throttle_time_ms. Quotas are set with AlterClientQuotas, as AdminClient.alterClientQuotas does,
 * and with Kafka's own kafka-configs (--entity-type clients and users), which DescribeClientQuotas answers.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../compat/lib/proc.js';
import { probe } from '../support/probe.js';
import { COMPAT_DIR } from '../../compat/lib/paths.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { AlterClientQuotasApi } from '../../protocol/messages/049-alter-client-quotas.gen.js';
import { ApiVersionsApi } from '../../protocol/messages/018-api-versions.gen.js';
import { ProduceApi } from '../../protocol/messages/000-produce.gen.js';
import { CreateTopicsApi, createCreateTopicsRequestCreatableTopic } from '../../protocol/messages/019-create-topics.gen.js';
import { buildRecordBatch } from '../../protocol/records/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { produceRequest } from '../support/requests.js';

let broker: BrokerProcess;

beforeAll(async () => {
  broker = await BrokerProcess.start({ configs: { 'group.initial.rebalance.delay.ms': '0' } });
}, 60_000);

afterAll(async () => {
  await broker?.stop();
});

async function setQuota(entity: Record<string, string | null>, key: string, value: number | null, via?: RawConnection): Promise<void> {
  const c = via ?? (await RawConnection.connect(broker.port));
  try {
    const res = await c.request(AlterClientQuotasApi, 1, {
      entries: [{ entity: Object.entries(entity).map(([entityType, entityName]) => ({ entityType, entityName })), ops: [{ key, value: value ?? 0, remove: value === null }] }],
      validateOnly: false,
    });
    expect(res.entries.map((e) => e.errorCode)).toEqual([ErrorCode.NONE]);
  } finally {
    if (!via) c.destroy();
  }
}

const kafka = (clientId: string) => new Kafka({ clientId, brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });

describe('client quotas', () => {
  it('throttles a producer over producer_byte_rate to within 10% of it', async () => {
    const QUOTA = 256 * 1024;
    await setQuota({ 'client-id': 'quota-producer' }, 'producer_byte_rate', QUOTA);
    const admin = kafka('quota-admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'quota-produce', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka('quota-producer').producer();
    await producer.connect();
    const value = Buffer.alloc(8 * 1024, 7);
    // Past the first full quota window (quota.window.num × quota.window.size.seconds): the first burst (a new
    // sensor's rate spans 10 s, so 10 s of quota go through at once) has left it. Then three whole windows: as
    // in Kafka, a producer's appends come in a burst each time the burst before leaves the sliding window, and
    // its rate is the quota over whole windows. (Apache Kafka 4.4 with this producer: 1.16, 1.05, 1.02 and 1.02
    // of the quota in the first four 11 s windows; Ledgerline 1.23, 1.16, 1.00, 1.05.)
    const WARMUP_MS = 11_000;
    const MEASURE_MS = 33_000;
    const started = Date.now();
    let measuredBytes = 0;
    let measureStart = 0;
    let lastAck = 0;
    // Flat out, one send at a time: the broker's muting and throttle_time_ms set the pace. (With requests
    // pipelined on one connection, those already read when the throttle begins are appended too: Kafka reads
    // a connection's next request only once the last is answered, Ledgerline reads ahead; the throttle that
    // follows covers them, so the rate is the same over a longer window.)
    const sender = async () => {
      while (Date.now() - started < WARMUP_MS + MEASURE_MS) {
        await producer.send({ topic: 'quota-produce', acks: 1, messages: Array.from({ length: 8 }, () => ({ value })) });
        if (Date.now() - started >= WARMUP_MS) {
          if (measureStart === 0) measureStart = Date.now();
          else {
            measuredBytes += 8 * value.length;
            lastAck = Date.now();
          }
        }
      }
    };
    await sender();
    await producer.disconnect();
    const rate = measuredBytes / ((lastAck - measureStart) / 1000);
    console.log(`producer_byte_rate ${QUOTA} B/s: measured ${Math.round(rate)} B/s (${((rate / QUOTA) * 100).toFixed(1)}% of the quota)`);
    expect(rate).toBeGreaterThan(QUOTA * 0.9);
    expect(rate).toBeLessThan(QUOTA * 1.1);
    await setQuota({ 'client-id': 'quota-producer' }, 'producer_byte_rate', null);
  }, 120_000);

  it('answers a Produce over the quota with throttle_time_ms, and the connection reads nothing more until it passed', async () => {
    await setQuota({ 'client-id': 'raw-test' }, 'producer_byte_rate', 64 * 1024);
    const c = await RawConnection.connect(broker.port);
    try {
      const batch = await buildRecordBatch([{ value: Buffer.alloc(256 * 1024, 1) }]);
      // Kafka's rate spans at least (quota.window.num - 1) windows, 10 s: a few requests at once pass the quota.
      let first = await c.request(ProduceApi, 9, produceRequest([{ topic: 'quota-produce', partition: 0, records: batch }]), 30_000);
      for (let i = 0; i < 10 && first.throttleTimeMs === 0; i++) first = await c.request(ProduceApi, 9, produceRequest([{ topic: 'quota-produce', partition: 0, records: batch }]), 30_000);
      expect(first.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
      expect(first.throttleTimeMs).toBeGreaterThan(1000);
      const sentAt = Date.now();
      const second = await c.request(ProduceApi, 9, produceRequest([{ topic: 'quota-produce', partition: 0, records: await buildRecordBatch([{ value: 'x' }]) }]), 30_000);
      // Muted (KIP-219): the next request is read only once the first's throttle has passed.
      expect(Date.now() - sentAt).toBeGreaterThanOrEqual(first.throttleTimeMs - 100);
      expect(second.responses[0]!.partitionResponses[0]!.errorCode).toBe(ErrorCode.NONE);
    } finally {
      c.destroy();
      await setQuota({ 'client-id': 'raw-test' }, 'producer_byte_rate', null);
    }
  }, 60_000);

  it('throttles a consumer over consumer_byte_rate to within 10% of it', async () => {
    const QUOTA = 256 * 1024;
    const admin = kafka('quota-admin').admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'quota-fetch', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka('quota-filler').producer();
    await producer.connect();
    const value = Buffer.alloc(16 * 1024, 3);
    // 12 MiB of backlog: the first burst a fresh quota window lets through, then more than the 22 s measured at the quota.
    for (let i = 0; i < 48; i++) await producer.send({ topic: 'quota-fetch', acks: 1, messages: Array.from({ length: 16 }, () => ({ value })) });
    await producer.disconnect();
    await setQuota({ 'client-id': 'quota-consumer' }, 'consumer_byte_rate', QUOTA);
    const consumer = kafka('quota-consumer').consumer({ groupId: 'quota-readers', maxBytesPerPartition: 256 * 1024, maxBytes: 256 * 1024 });
    await consumer.connect();
    await consumer.subscribe({ topic: 'quota-fetch', fromBeginning: true });
    // Past the first full quota window (quota.window.num × quota.window.size.seconds): the first burst has left it.
    const WARMUP_MS = 11_000;
    const MEASURE_MS = 11_000;
    let started = 0;
    let measureStart = 0;
    let measuredBytes = 0;
    await consumer.run({
      eachMessage: async ({ message }) => {
        const now = Date.now();
        if (started === 0) started = now;
        if (now - started < WARMUP_MS) return;
        if (measureStart === 0) measureStart = now;
        else if (now - started < WARMUP_MS + MEASURE_MS) measuredBytes += message.value!.length;
      },
    });
    await waitFor('the measured window to pass', () => started > 0 && Date.now() - started > WARMUP_MS + MEASURE_MS, 60_000, 100);
    await consumer.disconnect();
    const rate = measuredBytes / ((WARMUP_MS + MEASURE_MS - (measureStart - started)) / 1000);
    console.log(`consumer_byte_rate ${QUOTA} B/s: measured ${Math.round(rate)} B/s (${((rate / QUOTA) * 100).toFixed(1)}% of the quota)`);
    expect(rate).toBeGreaterThan(QUOTA * 0.9);
    expect(rate).toBeLessThan(QUOTA * 1.1);
  }, 120_000);
});

describe('controller mutation rate (KIP-599)', () => {
  it('refuses topics over controller_mutation_rate with THROTTLING_QUOTA_EXCEEDED and the time to wait', async () => {
    await setQuota({ 'client-id': 'raw-test' }, 'controller_mutation_rate', 2);
    const c = await RawConnection.connect(broker.port);
    try {
      const create = (names: string[]) =>
        c.request(CreateTopicsApi, 7, CreateTopicsApi.request.create({ topics: names.map((name) => createCreateTopicsRequestCreatableTopic({ name, numPartitions: 10, replicationFactor: 1 })), timeoutMs: 30_000 }), 30_000);
      // A burst of 2/s × 11 samples × 1 s = 22 partitions: three topics of 10 go (the third takes the bucket to -8), the fourth waits.
      const res = await create(['kip599-a', 'kip599-b', 'kip599-c', 'kip599-d']);
      expect(res.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE, ErrorCode.THROTTLING_QUOTA_EXCEEDED]);
      expect(res.topics[3]!.errorMessage).toBe('The throttling quota has been exceeded.');
      expect(res.throttleTimeMs).toBeGreaterThan(3500);
      expect(res.throttleTimeMs).toBeLessThanOrEqual(4000);
    } finally {
      c.destroy();
      await setQuota({ 'client-id': 'raw-test' }, 'controller_mutation_rate', null);
    }
  }, 60_000);
});

describe('connection creation rate (KIP-612)', () => {
  it('closes connections over an address\'s connection_creation_rate unserved, and serves the rest', async () => {
    // Set and removed through a connection opened before the quota, which the burst does not affect.
    const admin = await RawConnection.connect(broker.port);
    await setQuota({ ip: '127.0.0.1' }, 'connection_creation_rate', 2, admin);
    const outcomes: ('served' | 'closed')[] = [];
    const conns: RawConnection[] = [];
    try {
      for (let i = 0; i < 30; i++) conns.push(await RawConnection.connect(broker.port));
      await Promise.all(
        conns.map(async (c) => {
          c.send(ApiVersionsApi, 3, ApiVersionsApi.request.create({ clientSoftwareName: 'rate', clientSoftwareVersion: '1' }));
          const answered = await Promise.race([c.nextFrame(15_000).then(() => true, () => false), c.closed.then(() => false)]);
          outcomes.push(answered ? 'served' : 'closed');
        }),
      );
    } finally {
      for (const c of conns) c.destroy();
      await setQuota({ ip: '127.0.0.1' }, 'connection_creation_rate', null, admin);
      admin.destroy();
    }
    // A new rate spans (quota.window.num - 1) windows: 10 s at 2/s is 20 connections at once.
    expect(outcomes.filter((o) => o === 'served').length).toBe(20);
    expect(outcomes.filter((o) => o === 'closed').length).toBe(10);
  }, 60_000);
});

/** Kafka's own kafka-configs (org.apache.kafka.tools.ConfigCommand, from the compat kafka-tools build). */
const KAFKA_TOOLS_CLASSPATH = join(COMPAT_DIR, 'kafka-tools', 'target', 'classpath.txt');
const kafkaConfigsMissing = probe('java', ['-version']) ?? (existsSync(KAFKA_TOOLS_CLASSPATH) ? null : `${KAFKA_TOOLS_CLASSPATH} is missing (npm run compat -- --clients java builds it)`);
const REQUIRE = process.env.LEDGERLINE_REQUIRE_SECURITY_CLIENTS === '1';
if (kafkaConfigsMissing !== null && !REQUIRE) console.warn(`kafka-configs quota cells skipped: ${kafkaConfigsMissing}`);

describe.skipIf(kafkaConfigsMissing !== null && !REQUIRE)('kafka-configs --entity-type clients and users', () => {
  it('sets, describes and deletes client and user quotas, defaults included', async () => {
    if (kafkaConfigsMissing !== null) throw new Error(`LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1, but kafka-configs cannot run: ${kafkaConfigsMissing}`);
    const cp = readFileSync(KAFKA_TOOLS_CLASSPATH, 'utf8').trim();
    const kafkaConfigs = async (...args: string[]) => {
      const r = await run('java', ['-cp', cp, 'org.apache.kafka.tools.ConfigCommand', '--bootstrap-server', broker.bootstrap, ...args], { timeoutMs: 60_000 });
      return r.stdout + r.stderr;
    };
    expect(await kafkaConfigs('--alter', '--entity-type', 'clients', '--entity-name', 'app-1', '--add-config', 'producer_byte_rate=1048576,consumer_byte_rate=2097152')).toContain("Completed updating config for client app-1.");
    expect(await kafkaConfigs('--alter', '--entity-type', 'users', '--entity-name', 'alice', '--entity-type', 'clients', '--entity-default', '--add-config', 'request_percentage=50')).toContain('Completed updating config for user alice.');
    expect(await kafkaConfigs('--alter', '--entity-type', 'users', '--entity-default', '--add-config', 'producer_byte_rate=4194304')).toContain('Completed updating default config for users in the cluster.');
    const clients = await kafkaConfigs('--describe', '--entity-type', 'clients', '--entity-name', 'app-1');
    expect(clients).toContain("Quota configs for client-id 'app-1' are consumer_byte_rate=2097152.0, producer_byte_rate=1048576.0");
    const users = await kafkaConfigs('--describe', '--entity-type', 'users');
    expect(users).toContain('Quota configs for the default user-principal are producer_byte_rate=4194304.0');
    const refused = await kafkaConfigs('--alter', '--entity-type', 'clients', '--entity-name', 'app-1', '--add-config', 'producer_byte_rate=1.5');
    expect(refused).toContain('producer_byte_rate');
    expect(await kafkaConfigs('--alter', '--entity-type', 'clients', '--entity-name', 'app-1', '--delete-config', 'producer_byte_rate,consumer_byte_rate')).toContain('Completed updating config for client app-1.');
    expect(await kafkaConfigs('--describe', '--entity-type', 'clients', '--entity-name', 'app-1')).not.toContain('producer_byte_rate');
  }, 120_000);
});
