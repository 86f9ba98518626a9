/**
 * The Java end-to-end encryption library (compat/java-e2e) through a real broker, driven by its e2e tool
 * (/work contract: `vectors`, `produce`, `consume`), whose KafkaProducer and KafkaConsumer are turned encrypting
 * by configuration alone (E2eSerializer / E2eDeserializer around ByteArraySerializer / ByteArrayDeserializer):
 * the test vectors; a round trip with data key rotation every 3 records, two recipients (X25519, RSA) and
 * consumers holding only one of them; pseudonymous keys and sealed headers; records sealed by the TypeScript
 * library (tombstones under pseudonyms, null keys, a record with neither key nor value) opened by the Java
 * consumer and Java's records opened by the TypeScript decryptor; and the FAIL, DISCARD and CONSUME failure
 * actions of a consumer that holds no key. What the broker stores is read back raw with the project's client.
 *
 * Skipped when java or the compat/java-e2e build is missing
 * (`mvn -B -q -f compat/pom.xml -pl java-e2e -am package`); LEDGERLINE_REQUIRE_E2E=1 makes that a failure.
 */
import { spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, copyFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin, Kafka as KafkaType } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPAT_DIR } from '../../compat/lib/paths.js';
import { RecordDecryptor } from '../../src/crypto/decryptor.js';
import { RecordEncryptor } from '../../src/crypto/encryptor.js';
import { decodeEnvelope, ENVELOPE_HEADER } from '../../src/crypto/envelope.js';
import { generateKey, PemDirectoryKeyReader, rotateKey } from '../../src/crypto/keys.js';
import type { E2eRecord } from '../../src/crypto/record.js';
import { KafkaClient } from '../../src/client/index.js';
import { splitRecordBatches } from '../../protocol/records/index.js';
import { BrokerProcess } from '../support/broker-process.js';
import { runJsonLinesProgram, type ProgramRun } from '../support/json-lines-program.js';

const { Kafka, logLevel } = kafkajs;

const MODULE = join(COMPAT_DIR, 'java-e2e', 'target');
const CLASSPATH_FILE = join(MODULE, 'classpath.txt');
const VECTORS = join(COMPAT_DIR, '..', 'test', 'vectors', 'e2e');

function whyNoJavaE2e(): string | null {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'java is not installed';
  if (!existsSync(CLASSPATH_FILE) || !existsSync(join(MODULE, 'classes', 'dev', 'ledgerline', 'e2e', 'Tool.class'))) {
    return 'compat/java-e2e is not built (mvn -B -q -f compat/pom.xml -pl java-e2e -am package)';
  }
  return null;
}

const missing = whyNoJavaE2e();
const required = process.env.LEDGERLINE_REQUIRE_E2E === '1';
if (missing !== null && !required) console.warn(`Java end-to-end encryption tests skipped: ${missing}`);

/** Runs the Java e2e tool; resolves with its exit code and its stdout's JSON lines (a deadline kills it). */
function tool(args: string[], deadlineMs = 90_000): Promise<ProgramRun> {
  const cp = `${join(MODULE, 'classes')}:${readFileSync(CLASSPATH_FILE, 'utf8').trim()}`;
  return runJsonLinesProgram('java', ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-cp', cp, 'dev.ledgerline.e2e.Tool', ...args], { timeoutMs: deadlineMs });
}

interface Delivered {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
  status: string;
  reason: string | null;
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** Record i as the tool's contract produces it. */
const expected = (tag: string, i: number): { key: string; value: string; headers: [string, string][] } => ({
  key: hex(`k${i % 7}`),
  value: hex(`${tag}:${i}:${'x'.repeat(i % 13)}`),
  headers: [
    ['n', hex(String(i))],
    ['h-secret', hex(`s${i}`)],
  ],
});

interface RawRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
}

describe.skipIf(missing !== null && !required).sequential('Java end-to-end encryption (compat/java-e2e) through a real broker', () => {
  let broker: BrokerProcess;
  let kafka: KafkaType;
  let admin: Admin;
  let client: KafkaClient;
  let keys: string;
  /** Private key of billing.v1 (X25519) only. */
  let billingOnly: string;
  /** Private key of analytics (RSA) only. */
  let analyticsOnly: string;
  /** No private key of any recipient. */
  let noKeys: string;

  const onlyKey = (id: string): string => {
    const dir = mkdtempSync(join(tmpdir(), `e2e-java-${id}-`));
    copyFileSync(join(keys, `${id}.pem`), join(dir, `${id}.pem`));
    return dir;
  };

  beforeAll(async () => {
    if (missing !== null) throw new Error(`LEDGERLINE_REQUIRE_E2E=1, but: ${missing}`);
    keys = mkdtempSync(join(tmpdir(), 'e2e-java-keys-'));
    await generateKey(keys, 'billing', 'x25519');
    await rotateKey(keys, 'billing'); // billing.v1: producers naming "billing" must use it
    await generateKey(keys, 'analytics', 'rsa', 2048);
    await generateKey(keys, 'orders-keys', 'secret');
    billingOnly = onlyKey('billing.v1');
    analyticsOnly = onlyKey('analytics');
    noKeys = mkdtempSync(join(tmpdir(), 'e2e-java-none-'));
    broker = await BrokerProcess.start();
    kafka = new Kafka({ clientId: 'e2e-java-it', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
    admin = kafka.admin();
    await admin.connect();
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, clientId: 'e2e-java-readback' });
  }, 120_000);

  afterAll(async () => {
    await admin?.disconnect();
    await client?.close();
    await broker?.stop();
    for (const d of [keys, billingOnly, analyticsOnly, noKeys]) if (d) rmSync(d, { recursive: true, force: true });
  });

  async function topic(name: string): Promise<string> {
    await admin.createTopics({ topics: [{ topic: name, numPartitions: 1 }] });
    return name;
  }

  /** Every record of partition 0 as stored, bytes untouched. */
  async function raw(t: string): Promise<RawRecord[]> {
    const out: RawRecord[] = [];
    let offset = 0n;
    for (;;) {
      const [r] = await client.fetch([{ topic: t, partition: 0, offset, maxBytes: 8 * 1024 * 1024 }], { maxWaitMs: 0, minBytes: 0 });
      expect(r!.errorCode).toBe(0);
      if (offset >= r!.highWatermark) return out;
      const batches = splitRecordBatches(r!.records!, { allowPartialTail: true });
      for (const b of batches) {
        for (const rec of await b.readRecords()) {
          out.push({ offset: rec.offset, key: rec.key && Buffer.from(rec.key), value: rec.value && Buffer.from(rec.value), headers: rec.headers.map((h) => ({ key: h.key, value: h.value && Buffer.from(h.value) })) });
        }
      }
      offset = batches[batches.length - 1]!.lastOffset + 1n;
    }
  }

  const produce = (t: string, extra: string[], count = 10, tag = 'J'): Promise<ProgramRun> =>
    tool(['produce', '--bootstrap', broker.bootstrap, '--topic', t, '--keys', keys, '--count', String(count), '--tag', tag, ...extra]);
  const consume = (t: string, dir: string, count: number, extra: string[] = []): Promise<ProgramRun> =>
    tool(['consume', '--bootstrap', broker.bootstrap, '--topic', t, '--keys', dir, '--count', String(count), '--timeout-ms', '60000', ...extra]);

  it('passes every test vector', async () => {
    const run = await tool(['vectors', VECTORS]);
    const files = readdirSync(VECTORS).filter((f) => f.endsWith('.json')).sort();
    expect(run.stdout.trim().split('\n')).toEqual(files.map((f) => `ok ${f}`));
    expect(run.code).toBe(0);
  });

  it('round-trips with a new data key every 3 records, wrapped for two recipients, to consumers holding one of them', async () => {
    const t = await topic('e2e-java-rotation');
    const p = await produce(t, ['--recipients', 'billing,analytics', '--rotate-records', '3']);
    expect(p.lines).toEqual([{ produced: 10 }]);
    expect(p.code).toBe(0);

    const stored = await raw(t);
    expect(stored).toHaveLength(10);
    const envelopes = stored.map((r) => decodeEnvelope(r.headers.find((h) => h.key === ENVELOPE_HEADER)!.value!));
    const ids = envelopes.map((e) => e.dataKeyId.toString('hex'));
    expect(new Set(ids).size).toBe(4); // 3 + 3 + 3 + 1
    for (let i = 0; i < 10; i++) expect(ids[i]).toBe(ids[i - (i % 3)]);
    for (const e of envelopes) expect(e.wrappedKeys.map((w) => [w.keyId, w.algorithm])).toEqual([['billing.v1', 2], ['analytics', 1]]);
    stored.forEach((r, i) => {
      const plain = Buffer.from(expected('J', i).value, 'hex');
      expect(r.value!.length).toBe(plain.length + 16);
      expect(r.value!.includes(plain)).toBe(false);
      expect(r.headers.map((h) => h.key)).toEqual(['n', 'h-secret', ENVELOPE_HEADER]);
    });

    for (const dir of [billingOnly, analyticsOnly]) {
      const c = await consume(t, dir, 10);
      expect(c.code).toBe(0);
      expect(c.lines).toEqual(Array.from({ length: 10 }, (_, i) => ({ partition: 0, offset: i, ...expected('J', i), status: 'decrypted', reason: null })));
    }

    // What Java sealed, the TypeScript library opens.
    const ts = new RecordDecryptor({ keys: new PemDirectoryKeyReader(billingOnly) });
    for (const [i, r] of stored.entries()) {
      const d = await ts.decrypt(t, r);
      expect(d.status).toBe('decrypted');
      expect(d.record!.value!.toString('hex')).toBe(expected('J', i).value);
    }
  }, 180_000);

  it('stores HMAC pseudonyms for keys and seals the chosen headers, and gives the application the originals', async () => {
    const t = await topic('e2e-java-pseudonym');
    const p = await produce(t, ['--recipients', 'billing', '--pseudonym', 'orders-keys', '--seal-headers', 'h-secret'], 8, 'P');
    expect(p.code).toBe(0);
    const secret = Buffer.from(readFileSync(join(keys, 'orders-keys.secret'), 'utf8').trim(), 'base64');
    const stored = await raw(t);
    stored.forEach((r, i) => {
      expect(r.key!.equals(createHmac('sha256', secret).update(`k${i % 7}`).digest())).toBe(true);
      expect(r.headers.map((h) => h.key)).toEqual(['n', ENVELOPE_HEADER]);
      const env = decodeEnvelope(r.headers[1]!.value!);
      expect(env.pseudonymKeyId).toBe('orders-keys');
      expect(env.sealedHeaders).not.toBeNull();
    });
    const c = await consume(t, billingOnly, 8);
    expect(c.code).toBe(0);
    expect(c.lines).toEqual(Array.from({ length: 8 }, (_, i) => ({ partition: 0, offset: i, ...expected('P', i), status: 'decrypted', reason: null })));
  }, 120_000);

  it('opens records the TypeScript library sealed: a tombstone under a pseudonym, a null key, neither key nor value', async () => {
    const t = await topic('e2e-java-from-ts');
    const enc = new RecordEncryptor({ keys: new PemDirectoryKeyReader(keys), recipients: ['billing', 'analytics'], pseudonymKeyId: 'orders-keys', sealHeaders: ['h-secret'] });
    const h = (k: string, v: string): { key: string; value: Buffer } => ({ key: k, value: Buffer.from(v) });
    const inputs: E2eRecord[] = [
      { key: Buffer.from('user-1'), value: null, headers: [h('n', '0'), h('h-secret', 'gone')] },
      { key: null, value: Buffer.from('no key'), headers: [h('h-secret', 's1'), h('n', '1')] },
      { key: null, value: null, headers: [h('n', '2'), h('h-secret', 's2')] },
      { key: Buffer.from('user-1'), value: Buffer.from(''), headers: [] },
    ];
    const producer = kafka.producer({ allowAutoTopicCreation: false, createPartitioner: kafkajs.Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      for (const r of inputs) {
        const s = await enc.encrypt(t, r);
        await producer.send({ topic: t, acks: -1, messages: [{ partition: 0, key: s.key, value: s.value, headers: Object.fromEntries(s.headers.map((x) => [x.key, x.value!])) }] });
      }
    } finally {
      await producer.disconnect();
    }
    const c = await consume(t, analyticsOnly, 4);
    expect(c.code).toBe(0);
    const hx = (b: Buffer | null): string | null => (b === null ? null : b.toString('hex'));
    const clearFirst = (r: E2eRecord): [string, string | null][] => [...r.headers.filter((x) => x.key !== 'h-secret'), ...r.headers.filter((x) => x.key === 'h-secret')].map((x) => [x.key, hx(x.value)]);
    expect(c.lines).toEqual(inputs.map((r, i) => ({ partition: 0, offset: i, key: hx(r.key), value: hx(r.value), headers: clearFirst(r), status: 'decrypted', reason: null })));
  }, 120_000);

  it('applies FAIL, DISCARD and CONSUME when the consumer holds no recipient key', async () => {
    const t = await topic('e2e-java-failures');
    expect((await produce(t, ['--recipients', 'billing,analytics'], 4, 'E')).code).toBe(0);
    expect((await produce(t, ['--plaintext'], 2, 'C')).code).toBe(0);
    const stored = await raw(t);

    const fail = await consume(t, noKeys, 6);
    expect(fail.lines).toEqual([{ failed: 'no-key', partition: 0, offset: 0 }]);
    expect(fail.code).toBe(3);

    const plaintext = (i: number): Delivered => ({ partition: 0, offset: 4 + i, ...expected('C', i), status: 'plaintext', reason: null });
    const discard = await consume(t, noKeys, 2, ['--on-failure', 'DISCARD']);
    expect(discard.lines).toEqual([plaintext(0), plaintext(1)]);
    expect(discard.code).toBe(0);

    const kept = await consume(t, noKeys, 6, ['--on-failure', 'CONSUME']);
    expect(kept.code).toBe(0);
    expect(kept.lines).toEqual([
      ...stored.slice(0, 4).map((r) => ({
        partition: 0,
        offset: r.offset,
        key: r.key!.toString('hex'),
        value: r.value!.toString('hex'),
        headers: r.headers.map((x) => [x.key, x.value!.toString('hex')]),
        status: 'failed',
        reason: 'no-key',
      })),
      plaintext(0),
      plaintext(1),
    ]);
  }, 180_000);
});
