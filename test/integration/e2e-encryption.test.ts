/**
 * End-to-end encryption through a real broker with the TypeScript library: kafkajs and @platformatic/kafka
 * wrappers, key rotation mid-stream, two recipients, pseudonymous keys and sealed headers, every failure
 * action, the broker refusing plaintext on a topic that requires encryption (and the setting changed at
 * runtime), the admin endpoint's list, `ledgerline keys needed`, and a scan of the data directory that finds
 * no plaintext of any encrypted record (and does find that of a plaintext topic, so the scan is real).
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Consumer as PConsumer, Producer as PProducer } from '@platformatic/kafka';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  decryptedPlatformaticMessages,
  decryptingEachBatch,
  decryptingEachMessage,
  encryptingKafkajsProducer,
  encryptingPlatformaticProducer,
  generateKey,
  PemDirectoryKeyReader,
  RecordDecryptor,
  RecordEncryptor,
  rotateKey,
  type E2eStatus,
  type FailureAction,
} from '../../src/crypto/index.js';
import { neededKeys } from '../../src/crypto/keys-command.js';
import { BrokerProcess } from '../support/broker-process.js';
import { waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

let broker: BrokerProcess;
let kafka: kafkajs.Kafka;
let admin: kafkajs.Admin;
let adminUrl: string;
/** Every key: the producers' view (public keys and the pseudonym secret). */
let keysDir: string;
/** A consumer holding only the audit key pair. */
let auditOnly: string;
/** A consumer holding no key. */
let noKeys: string;

const MARKER = 'PLAINTEXT-MARKER-7f3a';

interface Delivered {
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  status: E2eStatus['status'];
  reason: string | null;
}

async function produceKafkajs(topic: string, encryptor: RecordEncryptor | null, count: number, prefix = 'v'): Promise<void> {
  const plain = kafka.producer({ idempotent: true });
  await plain.connect();
  try {
    const p = encryptor === null ? plain : encryptingKafkajsProducer(plain, encryptor);
    for (let i = 0; i < count; i += 5) {
      const messages = Array.from({ length: Math.min(5, count - i) }, (_, j) => ({ key: `${prefix}-key-${(i + j) % 4}`, value: `${prefix}-${i + j} ${MARKER}`, headers: { n: String(i + j), secret: `${prefix}-${MARKER}-h${i + j}` } }));
      await p.send({ topic, acks: -1, messages });
    }
  } finally {
    await plain.disconnect();
  }
}

const text = (b: Buffer | null | undefined): string | null => (b === null || b === undefined ? null : b.toString('utf8'));

function headersText(h: kafkajs.IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k] = Array.isArray(v) ? v.map(String).join(',') : String(v);
  return out;
}

/** Consumes until `want` records were delivered, a FAIL failure, or `rawWant` records were handed over by kafkajs. */
async function consumeKafkajs(topic: string, keys: string, onFailure: FailureAction, want: number, mode: 'message' | 'batch' = 'message', rawWant = Infinity): Promise<{ got: Delivered[]; failure: string | null }> {
  const decryptor = new RecordDecryptor({ keys: new PemDirectoryKeyReader(keys), onFailure });
  const consumer = kafka.consumer({ groupId: `g-${topic}-${onFailure}-${mode}-${Math.random()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got: Delivered[] = [];
  let failure: string | null = null;
  /** Records kafkajs handed over, decryptable or not. */
  let raw = 0;
  const push = (m: kafkajs.KafkaMessage, e2e: E2eStatus): void => {
    got.push({ key: text(m.key), value: text(m.value), headers: headersText(m.headers), status: e2e.status, reason: e2e.reason });
  };
  const guard = async (f: () => Promise<void>): Promise<void> => {
    try {
      await f();
    } catch (e) {
      failure = (e as { reason?: string }).reason ?? String(e);
      throw e;
    }
  };
  if (mode === 'message') {
    const each = decryptingEachMessage<kafkajs.EachMessagePayload>(decryptor, async ({ message, e2e }) => push(message, e2e));
    await consumer.run({
      eachMessage: (p) => {
        raw++;
        return guard(() => each(p));
      },
    });
  } else {
    const each = decryptingEachBatch<kafkajs.EachBatchPayload>(decryptor, async ({ batch, e2e }) => batch.messages.forEach((m, i) => push(m, e2e[i]!)));
    await consumer.run({
      eachBatch: (p) => {
        raw += p.batch.messages.length;
        return guard(() => each(p));
      },
    });
  }
  try {
    await waitFor(`${want} records of ${topic}`, () => got.length >= want || failure !== null || raw >= rawWant, 20_000);
  } finally {
    await consumer.disconnect();
  }
  return { got, failure };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

beforeAll(async () => {
  keysDir = mkdtempSync(join(tmpdir(), 'e2e-keys-'));
  auditOnly = mkdtempSync(join(tmpdir(), 'e2e-audit-'));
  noKeys = mkdtempSync(join(tmpdir(), 'e2e-none-'));
  await generateKey(keysDir, 'billing', 'x25519');
  await generateKey(keysDir, 'audit', 'rsa', 2048);
  await generateKey(keysDir, 'users', 'secret');
  // The audit consumer has its private key (and none of billing's).
  for (const f of ['audit.pem', 'audit.pub.pem']) copyFileSync(join(keysDir, f), join(auditOnly, f));
  broker = await BrokerProcess.start({ dataDir: mkdtempSync(join(tmpdir(), 'e2e-data-')), configs: { 'ledgerline.admin.listener': 'http://127.0.0.1:0', 'log.flush.interval.messages': '1', 'log.cleaner.backoff.ms': '200' } });
  const line = broker.logs.find((l) => l.includes('"admin HTTP endpoint listening"'))!;
  adminUrl = /"url":"([^"]+)"/.exec(line)![1]!;
  kafka = new Kafka({ clientId: 'e2e-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: 'orders', numPartitions: 2, configEntries: [{ name: 'ledgerline.encryption.required', value: 'true' }] },
      { topic: 'plain', numPartitions: 1 },
      { topic: 'later', numPartitions: 1 },
      { topic: 'plat', numPartitions: 1, configEntries: [{ name: 'ledgerline.encryption.required', value: 'true' }] },
      {
        topic: 'profiles',
        numPartitions: 1,
        configEntries: [
          { name: 'ledgerline.encryption.required', value: 'true' },
          { name: 'cleanup.policy', value: 'compact' },
          { name: 'ledgerline.segment.entries', value: '2' },
          { name: 'min.cleanable.dirty.ratio', value: '0.01' },
        ],
      },
    ],
  });
}, 60_000);

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

describe('end-to-end encryption through a broker', () => {
  it('round-trips through kafkajs with rotation, two recipients, a pseudonym and a sealed header; the broker refuses plaintext', async () => {
    const encryptor = new RecordEncryptor({ keys: new PemDirectoryKeyReader(keysDir), recipients: ['billing', 'audit'], pseudonymKeyId: 'users', sealHeaders: ['secret'], rotateAfterRecords: 7 });
    await produceKafkajs('orders', encryptor, 40);

    // The plaintext produce fails with INVALID_RECORD, and the broker says why.
    const refused = await produceKafkajs('orders', null, 1).then(
      () => null,
      (e: unknown) => e as { type?: string; message: string; cause?: { type?: string } },
    );
    expect(refused).not.toBeNull();
    expect(refused!.type ?? refused!.cause?.type).toBe('INVALID_RECORD');

    const { got, failure } = await consumeKafkajs('orders', auditOnly, 'FAIL', 40);
    expect(failure).toBeNull();
    expect(got).toHaveLength(40);
    const byN = new Map(got.map((g) => [Number(g.headers.n), g]));
    for (let i = 0; i < 40; i++) {
      expect(byN.get(i)).toEqual({ key: `v-key-${i % 4}`, value: `v-${i} ${MARKER}`, headers: { n: String(i), secret: `v-${MARKER}-h${i}` }, status: 'decrypted', reason: null });
    }
    // 40 records under a rotation every 7: six data keys, every record wrapped for both recipients.
    const needed = await neededKeys(broker.bootstrap, 'orders', 1000);
    expect(needed).toMatchObject({ records: 40, plaintext: 0, references: 0, malformed: 0, dataKeys: 6 });
    expect(Object.fromEntries(needed.byKeyId)).toEqual({ billing: 40, audit: 40 });
  });

  it('applies each failure action to a consumer without the key', async () => {
    const fail = await consumeKafkajs('orders', noKeys, 'FAIL', 1);
    expect(fail.failure).toBe('no-key');
    expect(fail.got).toEqual([]);

    const discard = await consumeKafkajs('orders', noKeys, 'DISCARD', 1, 'message', 40);
    expect(discard.failure).toBeNull();
    expect(discard.got).toEqual([]);

    const consume = await consumeKafkajs('orders', noKeys, 'CONSUME', 40, 'batch');
    expect(consume.got).toHaveLength(40);
    for (const g of consume.got) {
      expect(g.status).toBe('failed');
      expect(g.reason).toBe('no-key');
      expect(g.value).not.toContain(MARKER);
      expect(g.headers).toHaveProperty('ledgerline.e2e');
      expect(g.headers).not.toHaveProperty('secret');
      expect(g.key).not.toMatch(/^v-key-/);
    }
  });

  it('compacts an encrypted topic keyed by pseudonym: the last value of each key survives and decrypts', async () => {
    const encryptor = new RecordEncryptor({ keys: new PemDirectoryKeyReader(keysDir), recipients: ['audit'], pseudonymKeyId: 'users', rotateAfterRecords: 7 });
    // 40 records over 4 keys, 5 a batch, 2 batches a ledger: [0, 30) sealed, [30, 40) open.
    await produceKafkajs('profiles', encryptor, 40, 'p');
    const settled = await waitFor('the cleaner to compact the encrypted topic', async () => {
      const n = (await neededKeys(broker.bootstrap, 'profiles', 1000)).records;
      return n <= 4 + 10 ? n : null;
    }, 30_000, 200);
    const { got, failure } = await consumeKafkajs('profiles', auditOnly, 'FAIL', settled);
    expect(failure).toBeNull();
    expect(got.every((g) => g.status === 'decrypted')).toBe(true);
    const last = new Map<string, Delivered>();
    for (const g of got) last.set(g.key!, g);
    expect([...last.keys()].sort()).toEqual(['p-key-0', 'p-key-1', 'p-key-2', 'p-key-3']);
    for (let k = 0; k < 4; k++) expect(last.get(`p-key-${k}`)!.value).toBe(`p-${36 + k} ${MARKER}`);
    // Below the open ledger each pseudonymous key kept one record: the broker compacted what it cannot read.
    expect(got.filter((g) => Number(g.headers.n) < 30)).toHaveLength(got.length - 10);
    expect(got.filter((g) => Number(g.headers.n) < 30).length).toBeLessThanOrEqual(4);
  });

  it('decrypts in eachBatch too', async () => {
    const { got } = await consumeKafkajs('orders', auditOnly, 'FAIL', 40, 'batch');
    expect(got.filter((g) => g.status === 'decrypted')).toHaveLength(40);
  });

  it('round-trips through @platformatic/kafka, across a recipient key rotation', async () => {
    const base = { clientId: 'e2e-plat', bootstrapBrokers: [broker.bootstrap], timeout: 10_000, retries: 3 };
    const rotating = mkdtempSync(join(tmpdir(), 'e2e-rot-'));
    await generateKey(rotating, 'ops', 'x25519');
    const keys = new PemDirectoryKeyReader(rotating, 0);
    const encryptor = new RecordEncryptor({ keys, recipients: ['ops'] });
    const producer = encryptingPlatformaticProducer(new PProducer<Buffer, Buffer, Buffer, Buffer>({ ...base, acks: -1, autocreateTopics: false }), encryptor);
    try {
      await producer.send({ messages: [0, 1, 2].map((i) => ({ topic: 'plat', key: Buffer.from(`p${i}`), value: Buffer.from(`plat-${i}`), headers: new Map([[Buffer.from('n'), Buffer.from(String(i))]]) })) });
      // The recipient's key rotates: the next data key is wrapped for ops.v1.
      await rotateKey(rotating, 'ops');
      encryptor.rotate();
      await producer.send({ messages: [3, 4].map((i) => ({ topic: 'plat', key: Buffer.from(`p${i}`), value: Buffer.from(`plat-${i}`) })) });
    } finally {
      await producer.close();
    }
    expect(Object.fromEntries((await neededKeys(broker.bootstrap, 'plat', 100)).byKeyId)).toEqual({ ops: 3, 'ops.v1': 2 });

    const consumer = new PConsumer<Buffer, Buffer, Buffer, Buffer>({ ...base, groupId: `platformatic-group-${Math.random()}`, autocreateTopics: false, maxWaitTime: 200 });
    const got: string[] = [];
    try {
      const stream = await consumer.consume({ topics: ['plat'], mode: 'earliest', autocommit: false });
      const decryptor = new RecordDecryptor({ keys: new PemDirectoryKeyReader(rotating) });
      for await (const { message, e2e } of decryptedPlatformaticMessages(stream, decryptor)) {
        expect(e2e.status).toBe('decrypted');
        got.push(`${message.key?.toString()}=${message.value?.toString()}`);
        if (got.length === 5) break;
      }
      await stream.close();
    } finally {
      await consumer.close(true);
    }
    expect(got).toEqual(['p0=plat-0', 'p1=plat-1', 'p2=plat-2', 'p3=plat-3', 'p4=plat-4']);
  });

  it('turns the requirement on at runtime and lists it at the admin endpoint and in DescribeConfigs', async () => {
    await produceKafkajs('later', null, 2, 'later');
    await admin.alterConfigs({ validateOnly: false, resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'later', configEntries: [{ name: 'ledgerline.encryption.required', value: 'true' }] }] });
    await waitFor('plaintext refused on later', () => produceKafkajs('later', null, 1, 'later').then(() => false, () => true), 10_000);
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: kafkajs.ConfigResourceTypes.TOPIC, name: 'later', configNames: ['ledgerline.encryption.required'] }] });
    expect(described.resources[0]!.configEntries).toMatchObject([{ configName: 'ledgerline.encryption.required', configValue: 'true' }]);
    const report = (await (await fetch(`${adminUrl}/v1/encryption`)).json()) as { brokerDefault: boolean; topics: { name: string; source: string }[] };
    expect(report).toEqual({ brokerDefault: false, topics: [{ name: 'later', source: 'topic' }, { name: 'orders', source: 'topic' }, { name: 'plat', source: 'topic' }, { name: 'profiles', source: 'topic' }] });
  });

  it('leaves no plaintext of an encrypted record in the data directory', async () => {
    await produceKafkajs('plain', null, 3, 'clear');
    await broker.stop();
    const files = filesUnder(broker.dataDir);
    expect(files.length).toBeGreaterThan(0);
    const marker = Buffer.from(MARKER);
    const holding = files.filter((f) => readFileSync(f).includes(marker));
    // The plaintext topic's records hold the marker: the scan sees stored records.
    expect(holding.length).toBeGreaterThan(0);
    const clearValue = Buffer.from(`clear-0 ${MARKER}`);
    expect(holding.some((f) => readFileSync(f).includes(clearValue))).toBe(true);
    // Each encrypted record's value, its sealed header and its key appear nowhere.
    for (const f of files) {
      const bytes = readFileSync(f);
      for (let i = 0; i < 40; i++) {
        expect(bytes.includes(Buffer.from(`v-${i} ${MARKER}`)), `${f} holds record ${i}'s value`).toBe(false);
        expect(bytes.includes(Buffer.from(`v-${MARKER}-h${i}`)), `${f} holds record ${i}'s sealed header`).toBe(false);
      }
      for (let k = 0; k < 4; k++) expect(bytes.includes(Buffer.from(`v-key-${k}`)), `${f} holds the clear key v-key-${k}`).toBe(false);
      for (let i = 0; i < 5; i++) expect(bytes.includes(Buffer.from(`plat-${i}`)), `${f} holds plat-${i}`).toBe(false);
    }
    await broker.restart();
  });
});
