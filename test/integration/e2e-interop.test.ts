/**
 * End-to-end encryption across languages through one real broker: the e2e tools of TypeScript (kafkajs),
 * Java (KafkaProducer/KafkaConsumer with E2eSerializer/E2eDeserializer), Python (confluent-kafka) and Go
 * (franz-go) — same commands, same output (src/crypto/README.md "Libraries") — each pass the test vectors,
 * each produce into a topic that requires encryption, and each consumes every other one's records. The
 * records rotate data keys every 5, are wrapped for two recipients (X25519 and RSA) of which each consumer
 * holds one, have pseudonymous keys and a sealed header. Each consumer applies each failure action without
 * a key, and each producer's plaintext is refused by the broker.
 *
 * The tools come from the compat suite's install step (Maven, the Python venv, go build). A language whose
 * tool is not built is skipped with the reason, unless LEDGERLINE_REQUIRE_E2E=1, which makes it a failure.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/crypto/keys.js';
import { BrokerProcess } from '../support/broker-process.js';
import { runJsonLinesProgram, type ProgramRun } from '../support/json-lines-program.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const WORK = join(REPO, 'compat', '.work');
const VECTORS = join(REPO, 'test', 'vectors', 'e2e');
const REQUIRE = process.env.LEDGERLINE_REQUIRE_E2E === '1';
const COUNT = 24;

interface Tool {
  readonly lang: string;
  readonly command: string;
  readonly args: readonly string[];
  /** Why the tool cannot run here, or null. */
  readonly missing: string | null;
}

function javaTool(): Tool {
  const cp = join(REPO, 'compat', 'java-e2e', 'target', 'classpath.txt');
  const classes = join(REPO, 'compat', 'java-e2e', 'target', 'classes');
  const missing = existsSync(cp) && existsSync(classes) ? null : `${cp} is not built (npm run compat builds it)`;
  const classpath = missing === null ? `${readFileSync(cp, 'utf8').trim()}:${classes}` : '';
  return { lang: 'java', command: 'java', args: ['-cp', classpath, 'dev.ledgerline.e2e.Tool'], missing };
}

const python = process.env.LEDGERLINE_E2E_PYTHON ?? join(WORK, 'venv', 'bin', 'python');
const goTool = join(WORK, 'bin', 'e2etool');
const TOOLS: Tool[] = [
  {
    lang: 'ts',
    command: process.execPath,
    // The tool drives kafkajs, whose known timer warning the test setup drops (test/support/quiet-kafkajs-timers.ts).
    args: ['--import', 'tsx', '--import', join(REPO, 'test', 'support', 'quiet-kafkajs-timers.ts'), join(REPO, 'compat', 'js', 'e2e-tool.ts')],
    missing: null,
  },
  javaTool(),
  { lang: 'python', command: python, args: [join(REPO, 'compat', 'python', 'e2e_tool.py')], missing: existsSync(python) ? null : `no Python venv at ${python} (npm run compat makes it)` },
  { lang: 'go', command: goTool, args: [], missing: existsSync(goTool) ? null : `${goTool} is not built (npm run compat builds it)` },
];
const READY = TOOLS.filter((t) => t.missing === null);
for (const t of TOOLS) if (t.missing !== null) console.warn(`e2e interop: ${t.lang} ${REQUIRE ? 'REQUIRED but' : 'skipped:'} ${t.missing}`);

function run(tool: Tool, args: string[], timeoutMs = 120_000): Promise<ProgramRun> {
  return runJsonLinesProgram(tool.command, [...tool.args, ...args], { cwd: REPO, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeoutMs });
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** Record i of the contract, as a consumer prints it after decryption. */
const expected = (tag: string, i: number) => ({
  key: hex(`k${i % 7}`),
  value: hex(`${tag}:${i}:${'x'.repeat(i % 13)}`),
  headers: [
    ['n', hex(String(i))],
    ['h-secret', hex(`s${i}`)],
  ],
  status: 'decrypted',
});

let broker: BrokerProcess;
let admin: kafkajs.Admin;
/** Producers' keys: both public keys and the pseudonym secret. */
let producerKeys: string;
/** Consumers holding only the X25519 recipient's key pair, only the RSA one's, and none. */
let x25519Only: string;
let rsaOnly: string;
let noKeys: string;

beforeAll(async () => {
  if (REQUIRE) expect(TOOLS.filter((t) => t.missing !== null).map((t) => `${t.lang}: ${t.missing}`)).toEqual([]);
  producerKeys = mkdtempSync(join(tmpdir(), 'e2e-mx-keys-'));
  await generateKey(producerKeys, 'billing', 'x25519');
  await generateKey(producerKeys, 'audit', 'rsa', 2048);
  await generateKey(producerKeys, 'users', 'secret');
  x25519Only = mkdtempSync(join(tmpdir(), 'e2e-mx-x-'));
  rsaOnly = mkdtempSync(join(tmpdir(), 'e2e-mx-rsa-'));
  noKeys = mkdtempSync(join(tmpdir(), 'e2e-mx-none-'));
  for (const f of ['billing.pem', 'billing.pub.pem']) copyFileSync(join(producerKeys, f), join(x25519Only, f));
  for (const f of ['audit.pem', 'audit.pub.pem']) copyFileSync(join(producerKeys, f), join(rsaOnly, f));
  broker = await BrokerProcess.start();
  const kafka = new kafkajs.Kafka({ clientId: 'e2e-interop', brokers: [broker.bootstrap], logLevel: kafkajs.logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    waitForLeaders: true,
    topics: TOOLS.flatMap((t) => [
      { topic: `mx-${t.lang}`, numPartitions: 2, configEntries: [{ name: 'ledgerline.encryption.required', value: 'true' }] },
      { topic: `mx-plain-${t.lang}`, numPartitions: 1, configEntries: [{ name: 'ledgerline.encryption.required', value: 'true' }] },
    ]),
  });
}, 120_000);

afterAll(async () => {
  await admin?.disconnect();
  await broker?.stop();
});

describe.skipIf(READY.length === 0)('end-to-end encryption between languages', () => {
  const vectors = readdirSync(VECTORS).filter((f) => f.endsWith('.json'));

  for (const t of READY) {
    it(`${t.lang} passes every test vector`, async () => {
      const r = await run(t, ['vectors', VECTORS]);
      expect(r.stdout.trim().split('\n').sort()).toEqual(vectors.map((f) => `ok ${f}`).sort());
      expect(r.code).toBe(0);
    });
  }

  for (const t of READY) {
    it(`${t.lang} produces encrypted records, and its plaintext is refused`, async () => {
      const r = await run(t, ['produce', '--bootstrap', broker.bootstrap, '--topic', `mx-${t.lang}`, '--keys', producerKeys, '--recipients', 'billing,audit', '--count', String(COUNT), '--tag', t.lang, '--pseudonym', 'users', '--seal-headers', 'h-secret', '--rotate-records', '5']);
      expect(r.lines, r.stderr.slice(-2000)).toEqual([{ produced: COUNT }]);
      expect(r.code).toBe(0);
      const plain = await run(t, ['produce', '--bootstrap', broker.bootstrap, '--topic', `mx-plain-${t.lang}`, '--keys', producerKeys, '--recipients', 'billing', '--count', '1', '--tag', t.lang, '--plaintext']);
      expect(plain.code, JSON.stringify(plain.lines)).toBe(2);
      expect(plain.lines[0]).toHaveProperty('error');
      const offsets = await admin.fetchTopicOffsets(`mx-plain-${t.lang}`);
      expect(offsets.map((o) => o.high)).toEqual(['0']);
    });
  }

  for (const c of READY) {
    it(`${c.lang} decrypts what every language produced, with either recipient's key`, async () => {
      for (const [pi, p] of READY.entries()) {
        const keys = (pi + READY.indexOf(c)) % 2 === 0 ? x25519Only : rsaOnly;
        const r = await run(c, ['consume', '--bootstrap', broker.bootstrap, '--topic', `mx-${p.lang}`, '--keys', keys, '--count', String(COUNT), '--timeout-ms', '60000']);
        expect(r.code, `${p.lang} -> ${c.lang}: ${JSON.stringify(r.lines.slice(-2))} ${r.stderr.slice(-1500)}`).toBe(0);
        expect(r.lines).toHaveLength(COUNT);
        const byIndex = new Map<number, any>();
        for (const l of r.lines) {
          const i = Number(Buffer.from(l.headers[0][1], 'hex').toString());
          byIndex.set(i, { key: l.key, value: l.value, headers: l.headers, status: l.status });
        }
        for (let i = 0; i < COUNT; i++) expect(byIndex.get(i), `${p.lang} -> ${c.lang} record ${i}`).toEqual(expected(p.lang, i));
        // Within a partition, offsets rise.
        for (const part of [0, 1]) {
          const offs = r.lines.filter((l) => l.partition === part).map((l) => l.offset);
          expect(offs).toEqual([...offs].sort((a, b) => a - b));
        }
      }
    });
  }

  for (const c of READY) {
    it(`${c.lang} applies FAIL, DISCARD and CONSUME without a key`, async () => {
      const topic = `mx-${READY[0]!.lang}`;
      const base = ['consume', '--bootstrap', broker.bootstrap, '--topic', topic, '--keys', noKeys];
      const fail = await run(c, [...base, '--count', '1', '--on-failure', 'FAIL', '--timeout-ms', '30000']);
      expect(fail.code, fail.stderr.slice(-1500)).toBe(3);
      expect(fail.lines).toEqual([expect.objectContaining({ failed: 'no-key' })]);
      const discard = await run(c, [...base, '--count', '1', '--on-failure', 'DISCARD', '--timeout-ms', '6000']);
      expect(discard.code).toBe(4);
      expect(discard.lines).toEqual([{ timeout: true, delivered: 0 }]);
      const consume = await run(c, [...base, '--count', String(COUNT), '--on-failure', 'CONSUME', '--timeout-ms', '30000']);
      expect(consume.code).toBe(0);
      expect(consume.lines).toHaveLength(COUNT);
      for (const l of consume.lines) {
        expect(l).toMatchObject({ status: 'failed', reason: 'no-key' });
        // Delivered as stored: the envelope is still on it, the sealed header is not in the clear.
        expect(l.headers.map((h: [string, string]) => h[0])).toContain('ledgerline.e2e');
        expect(l.headers.map((h: [string, string]) => h[0])).not.toContain('h-secret');
      }
    });
  }
});
