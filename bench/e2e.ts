/**
 * `npm run bench -- e2e`: what end-to-end encryption costs, through one Ledgerline broker.
 *
 *   client   (the project's own client, and kafkajs) producer: 1 KiB records sealed with `ledgerline/crypto` (one X25519 recipient, default rotation),
 *            built into batches of 100 and produced with acks=all, 4 partitions, one request in flight each;
 *            against the same records in the clear. consumer: the same topics fetched, every record decoded,
 *            and opened (RecordDecryptor) on the encrypted one.
 *   broker   the same pre-built sealed batches produced, over and over until `--broker-mib` (default 1024) are
 *            acknowledged, to a topic with ledgerline.encryption.required=true and to an ordinary one, four
 *            requests in flight per partition: what the broker's envelope check costs, in throughput and in the
 *            broker's CPU seconds per GiB, with no client work in it.
 *
 * Every measure alternates the two sides in pairs (`--pairs`, default 3) and prints the median ratio with
 * the ratio of each pair, since the machine is shared and noisy.
 *
 *   npm run bench -- e2e [--records 200000] [--pairs 3] [--broker-mib 1024] [--broker-only]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildRecordBatch, splitRecordBatches, type RecordInput } from '../protocol/records/index.js';
import kafkajs from 'kafkajs';
import { KafkaClient } from '../src/client/index.js';
import { decryptingEachBatch, encryptingKafkajsProducer, generateKey, PemDirectoryKeyReader, RecordDecryptor, RecordEncryptor, type E2eRecord } from '../src/crypto/index.js';
import { startBroker, type StartedBroker } from './lib/brokers.js';
import { median } from './lib/stats.js';

const PARTITIONS = 4;
const BATCH = 100;
const RECORD_BYTES = 1024;

function plainRecords(n: number): E2eRecord[] {
  return Array.from({ length: n }, (_, i) => {
    const value = Buffer.alloc(RECORD_BYTES, 97 + (i % 26));
    value.write(`record ${i} `);
    return { key: Buffer.from(`key-${i % 1000}`), value, headers: [{ key: 'trace', value: Buffer.from(`t${i}`) }] };
  });
}

const input = (r: E2eRecord): RecordInput => ({ key: r.key ?? undefined, value: r.value ?? undefined, headers: r.headers.map((h) => ({ key: h.key, value: h.value })) });

/**
 * Produces `records` to `topic` in batches of BATCH, as a producer does: the next batch is sealed and built
 * while the previous one is in flight (one request in flight per partition). Returns records/s.
 */
async function produce(client: KafkaClient, topic: string, records: E2eRecord[], seal: ((r: E2eRecord) => Promise<E2eRecord>) | null): Promise<number> {
  const t0 = performance.now();
  const perPartition = Math.ceil(records.length / PARTITIONS);
  const build = async (slice: E2eRecord[]): Promise<Buffer> => buildRecordBatch((seal === null ? slice : await Promise.all(slice.map(seal))).map(input));
  await Promise.all(
    Array.from({ length: PARTITIONS }, async (_, p) => {
      const mine = records.slice(p * perPartition, (p + 1) * perPartition);
      let inFlight: Promise<unknown> = Promise.resolve();
      for (let i = 0; i < mine.length; i += BATCH) {
        const batch = await build(mine.slice(i, i + BATCH));
        await inFlight;
        inFlight = client.produce([{ topic, partition: p, records: batch }], { acks: -1 }).then(([r]) => {
          if (r!.errorCode !== 0) throw new Error(`produce to ${topic}-${p} failed with error ${r!.errorCode}`);
        });
      }
      await inFlight;
    }),
  );
  return records.length / ((performance.now() - t0) / 1000);
}

/** The same through kafkajs (what a TypeScript application runs): sends of BATCH messages, one in flight per partition. */
async function produceKafkajs(kafka: kafkajs.Kafka, topic: string, records: E2eRecord[], encryptor: RecordEncryptor | null): Promise<number> {
  const plain = kafka.producer();
  await plain.connect();
  const producer = encryptor === null ? plain : encryptingKafkajsProducer(plain, encryptor);
  const t0 = performance.now();
  const perPartition = Math.ceil(records.length / PARTITIONS);
  await Promise.all(
    Array.from({ length: PARTITIONS }, async (_, partition) => {
      const mine = records.slice(partition * perPartition, (partition + 1) * perPartition);
      for (let i = 0; i < mine.length; i += BATCH) {
        const messages = mine.slice(i, i + BATCH).map((r) => ({ key: r.key, value: r.value, partition, headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value ?? Buffer.alloc(0)])) }));
        await producer.send({ topic, acks: -1, messages });
      }
    }),
  );
  const rate = records.length / ((performance.now() - t0) / 1000);
  await plain.disconnect();
  return rate;
}

/** kafkajs consumption of every record of `topic` (eachBatch), from the first batch to the last; records/s. */
async function consumeKafkajs(kafka: kafkajs.Kafka, topic: string, expected: number, decryptor: RecordDecryptor | null): Promise<number> {
  const consumer = kafka.consumer({ groupId: `bench-e2e-${topic}-${Math.random()}`, maxBytes: 8 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let seen = 0;
  let first = 0;
  let done!: (ms: number) => void;
  const finished = new Promise<number>((r) => (done = r));
  const count = async (n: number): Promise<void> => {
    if (first === 0) first = performance.now();
    seen += n;
    if (seen >= expected) done(performance.now() - first);
  };
  const plainBatch = async ({ batch }: kafkajs.EachBatchPayload): Promise<void> => count(batch.messages.length);
  const eachBatch = decryptor === null ? plainBatch : decryptingEachBatch<kafkajs.EachBatchPayload>(decryptor, async ({ batch, e2e }) => {
    if (e2e.some((s) => s.status !== 'decrypted')) throw new Error('a record was not decrypted');
    await count(batch.messages.length);
  });
  await consumer.run({ eachBatch, eachBatchAutoResolve: true });
  const ms = await finished;
  await consumer.disconnect();
  return expected / (ms / 1000);
}

/** Requests in flight per partition when the broker's side alone is measured (Kafka's max.in.flight is 5). */
const BROKER_IN_FLIGHT = 4;

/**
 * Produces the pre-built batches again and again until `totalBytes` are acknowledged (the broker's side
 * alone: no client work but sending), BROKER_IN_FLIGHT requests in flight per partition. Returns MiB/s of
 * batch bytes and the broker's CPU seconds per GiB over the same window.
 */
async function produceBatches(client: KafkaClient, broker: StartedBroker, topic: string, batches: Buffer[][], totalBytes: number): Promise<{ mibPerSec: number; cpuPerGiB: number }> {
  const cpu0 = broker.cpuSeconds();
  const t0 = performance.now();
  let bytes = 0;
  const perPartition = totalBytes / batches.length;
  await Promise.all(
    batches.map(async (list, p) => {
      let sent = 0;
      let next = 0;
      const lane = async (): Promise<void> => {
        while (sent < perPartition) {
          const b = list[next++ % list.length]!;
          sent += b.length;
          const [r] = await client.produce([{ topic, partition: p, records: b }], { acks: -1 });
          if (r!.errorCode !== 0) throw new Error(`produce to ${topic}-${p} failed with error ${r!.errorCode}`);
          bytes += b.length;
        }
      };
      await Promise.all(Array.from({ length: BROKER_IN_FLIGHT }, lane));
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = broker.cpuSeconds();
  const gib = bytes / 2 ** 30;
  return { mibPerSec: bytes / 2 ** 20 / seconds, cpuPerGiB: cpu0 === null || cpu1 === null ? Number.NaN : (cpu1 - cpu0) / gib };
}

/** Fetches every record of `topic`, decoding each and opening it with `open`; returns records/s. */
async function consume(client: KafkaClient, topic: string, expected: number, open: ((r: E2eRecord) => Promise<unknown>) | null): Promise<number> {
  const t0 = performance.now();
  let seen = 0;
  await Promise.all(
    Array.from({ length: PARTITIONS }, async (_, p) => {
      let offset = 0n;
      for (;;) {
        const [f] = await client.fetch([{ topic, partition: p, offset }], { maxWaitMs: 0, maxBytes: 4 * 1024 * 1024 });
        const batches = f?.records ? splitRecordBatches(f.records) : [];
        if (batches.length === 0) break;
        for (const b of batches) {
          for (const r of await b.readRecords()) {
            if (open !== null) await open({ key: r.key, value: r.value, headers: r.headers });
            seen++;
          }
          offset = b.lastOffset + 1n;
        }
      }
    }),
  );
  if (seen !== expected) throw new Error(`consumed ${seen} records of ${topic}, expected ${expected}`);
  return seen / ((performance.now() - t0) / 1000);
}

function ratioLine(label: string, unit: string, enc: number[], plain: number[], digits = 0): string {
  const pairs = enc.map((e, i) => e / plain[i]!);
  return `${label.padEnd(44)} ${median(enc).toFixed(digits).padStart(9)} ${median(plain).toFixed(digits).padStart(9)} ${unit.padEnd(10)} ${median(pairs).toFixed(2).padStart(5)}  (pairs ${pairs.map((x) => x.toFixed(2)).join(', ')})`;
}

export default async function e2e(args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { records: { type: 'string' }, pairs: { type: 'string' }, 'broker-mib': { type: 'string' }, 'broker-only': { type: 'boolean' } } });
  const brokerOnly = values['broker-only'] === true;
  const count = Number(values.records ?? 200_000);
  const brokerMiB = Number(values['broker-mib'] ?? 1024);
  const pairs = Number(values.pairs ?? 3);
  const log = (line: string): void => console.error(line);
  const keysDir = mkdtempSync(join(tmpdir(), 'bench-e2e-keys-'));
  await generateKey(keysDir, 'bench', 'x25519');
  const keys = new PemDirectoryKeyReader(keysDir);
  const records = plainRecords(count);
  const started = await startBroker('ledgerline', { log });
  if ('error' in started) throw new Error(`Ledgerline did not start: ${started.error}`);
  const broker: StartedBroker = started;
  const client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'bench-e2e' });
  try {
    const topics: { name: string; required: boolean }[] = [];
    for (let i = 0; i < pairs; i++) {
      for (const [name, required] of [['enc', true], ['plain', false], ['kenc', true], ['kplain', false], ['chk-req', true], ['chk-ord', false]] as const) topics.push({ name: `${name}-${i}`, required });
    }
    topics.push({ name: 'chk-req-warm', required: true }, { name: 'chk-ord-warm', required: false });
    await client.createTopics(topics.map((t) => ({ name: t.name, numPartitions: PARTITIONS, configs: t.required ? { 'ledgerline.encryption.required': 'true' } : ({} as Record<string, string>) })));
    await client.waitForTopics(topics.map((t) => t.name));

    // The broker's side uses one set of sealed batches, built once.
    const encryptor = new RecordEncryptor({ keys, recipients: ['bench'] });
    const sealedBatches: Buffer[][] = [];
    for (let p = 0; p < PARTITIONS; p++) {
      const list: Buffer[] = [];
      const per = Math.ceil(count / PARTITIONS);
      for (let i = p * per; i < Math.min(count, (p + 1) * per); i += BATCH) {
        const slice = records.slice(i, Math.min(i + BATCH, (p + 1) * per));
        list.push(await buildRecordBatch((await Promise.all(slice.map((r) => encryptor.encrypt('chk', r)))).map(input)));
      }
      sealedBatches.push(list);
    }

    const encProduce: number[] = [];
    const plainProduce: number[] = [];
    const encConsume: number[] = [];
    const plainConsume: number[] = [];
    const reqBroker: number[] = [];
    const ordBroker: number[] = [];
    const reqBrokerCpu: number[] = [];
    const ordBrokerCpu: number[] = [];
    const kEncProduce: number[] = [];
    const kPlainProduce: number[] = [];
    const kEncConsume: number[] = [];
    const kPlainConsume: number[] = [];
    // An untimed round on each side first, so that no pair measures the broker's paths being compiled.
    for (const side of ['req', 'ord']) await produceBatches(client, broker, `chk-${side}-warm`, sealedBatches, (brokerMiB / 4) * 2 ** 20);
    const kafka = new kafkajs.Kafka({ clientId: 'bench-e2e', brokers: [broker.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
    for (let i = 0; i < pairs; i++) {
      log(`pair ${i + 1} of ${pairs}`);
      const enc = new RecordEncryptor({ keys, recipients: ['bench'] });
      const order = i % 2 === 0 ? ['enc', 'plain'] : ['plain', 'enc'];
      if (!brokerOnly) {
        for (const side of order) {
          if (side === 'enc') encProduce.push(await produce(client, `enc-${i}`, records, (r) => enc.encrypt(`enc-${i}`, r)));
          else plainProduce.push(await produce(client, `plain-${i}`, records, null));
        }
        for (const side of order) {
          if (side === 'enc') {
            const dec = new RecordDecryptor({ keys });
            encConsume.push(
              await consume(client, `enc-${i}`, count, async (r) => {
                const d = await dec.decrypt(`enc-${i}`, r);
                if (d.status !== 'decrypted') throw new Error(`record not decrypted: ${d.status}`);
              }),
            );
          } else plainConsume.push(await consume(client, `plain-${i}`, count, null));
        }
        for (const side of order) {
          if (side === 'enc') kEncProduce.push(await produceKafkajs(kafka, `kenc-${i}`, records, new RecordEncryptor({ keys, recipients: ['bench'] })));
          else kPlainProduce.push(await produceKafkajs(kafka, `kplain-${i}`, records, null));
        }
        for (const side of order) {
          if (side === 'enc') kEncConsume.push(await consumeKafkajs(kafka, `kenc-${i}`, count, new RecordDecryptor({ keys })));
          else kPlainConsume.push(await consumeKafkajs(kafka, `kplain-${i}`, count, null));
        }
      }
      for (const side of order) {
        // The sealed batches name topic "chk" in their AAD: the broker does not care (it checks the form only).
        const m = await produceBatches(client, broker, `chk-${side === 'enc' ? 'req' : 'ord'}-${i}`, sealedBatches, brokerMiB * 2 ** 20);
        (side === 'enc' ? reqBroker : ordBroker).push(m.mibPerSec);
        (side === 'enc' ? reqBrokerCpu : ordBrokerCpu).push(m.cpuPerGiB);
      }
    }
    console.log(`\nEnd-to-end encryption, ${count} records of ${RECORD_BYTES} B, ${PARTITIONS} partitions, batches of ${BATCH}, acks=all, ${pairs} alternating pairs`);
    console.log(`${''.padEnd(44)} ${'with'.padStart(9)} ${'without'.padStart(9)} ${''.padEnd(10)} ratio`);
    if (!brokerOnly) {
      console.log(ratioLine('own client: produce (seal + build + send)', 'records/s', encProduce, plainProduce));
      console.log(ratioLine('own client: consume (fetch + decode + open)', 'records/s', encConsume, plainConsume));
      console.log(ratioLine('kafkajs: produce', 'records/s', kEncProduce, kPlainProduce));
      console.log(ratioLine('kafkajs: consume (eachBatch)', 'records/s', kEncConsume, kPlainConsume));
    }
    console.log(ratioLine('broker: produce to required vs ordinary topic', 'MiB/s', reqBroker, ordBroker, 1));
    console.log(ratioLine('  broker CPU per GiB produced', 's/GiB', reqBrokerCpu, ordBrokerCpu, 2));
  } finally {
    await client.close();
    await broker.stop();
  }
}
