/**
 * The Python end-to-end encryption library (compat/python/ledgerline_e2e) through a real broker, driven by
 * its e2e tool (compat/python/e2e_tool.py, the command line of the interop contract) as the compat suite
 * runs Python programs: `<venv>/bin/python compat/python/e2e_tool.py ...`. The tool produces with
 * confluent-kafka's SerializingProducer (E2eSerializingProducer) and consumes with E2eDeserializingConsumer.
 *
 * The interpreter is $LEDGERLINE_E2E_PYTHON, else compat/.work/venv/bin/python (made by the compat
 * suite's install step); the test is skipped, with the reason, when it is missing or lacks
 * confluent_kafka or cryptography, unless LEDGERLINE_REQUIRE_E2E=1, which makes that a failure.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordDecryptor } from '../../src/crypto/decryptor.js';
import { decodeEnvelope, ENVELOPE_HEADER } from '../../src/crypto/envelope.js';
import { generateKey, PemDirectoryKeyReader } from '../../src/crypto/keys.js';
import { BrokerProcess } from '../support/broker-process.js';
import { runJsonLinesProgram, type ProgramRun } from '../support/json-lines-program.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TOOL = join(REPO, 'compat', 'python', 'e2e_tool.py');
const API_CHECK = join(REPO, 'compat', 'python', 'e2e_api_check.py');
const CORE_CHECK = join(REPO, 'compat', 'python', 'e2e_core_check.py');
const VECTORS = join(REPO, 'test', 'vectors', 'e2e');
const PYTHON = process.env.LEDGERLINE_E2E_PYTHON ?? join(REPO, 'compat', '.work', 'venv', 'bin', 'python');
const REQUIRE = process.env.LEDGERLINE_REQUIRE_E2E === '1';

function skipReason(): string | null {
  if (!existsSync(PYTHON)) return `no Python interpreter at ${PYTHON} (set LEDGERLINE_E2E_PYTHON, or run the compat suite's install step)`;
  const probe = spawnSync(PYTHON, ['-c', 'import confluent_kafka, cryptography'], { encoding: 'utf8' });
  if (probe.status !== 0) return `${PYTHON} lacks confluent_kafka or cryptography (pip install -r compat/python/requirements.txt): ${probe.stderr.trim().split('\n').pop()}`;
  return null;
}
const SKIP = skipReason();
if (SKIP !== null && !REQUIRE) console.warn(`Python end-to-end encryption test skipped: ${SKIP}`);

/** Runs the tool to its end (with a deadline), its stdout parsed as JSON lines. */
function tool(args: string[], timeoutMs = 90_000, program = TOOL): Promise<ProgramRun> {
  return runJsonLinesProgram(PYTHON, [program, ...args], { cwd: REPO, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, timeoutMs });
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
/** Record i of the contract's produce. */
const expected = (tag: string, i: number) => ({
  key: hex(`k${i % 7}`),
  value: hex(`${tag}:${i}:${'x'.repeat(i % 13)}`),
  headers: [
    ['n', hex(String(i))],
    ['h-secret', hex(`s${i}`)],
  ],
});
const indexOf = (tag: string, valueHex: string): number => Number(Buffer.from(valueHex, 'hex').toString('utf8').slice(tag.length + 1).split(':')[0]);

describe.skipIf(SKIP !== null && !REQUIRE).sequential('Python end-to-end encryption (confluent-kafka) through a real broker', () => {
  let broker: BrokerProcess;
  let admin: kafkajs.Admin;
  let root: string;
  /** Every key; one with only the X25519 recipient's private key; one with only the RSA one's; one with none. */
  const dirs = { all: '', x25519: '', rsa: '', none: '' };

  beforeAll(async () => {
    if (SKIP !== null) throw new Error(`LEDGERLINE_REQUIRE_E2E=1, but: ${SKIP}`);
    root = mkdtempSync(join(tmpdir(), 'ledgerline-e2e-python-'));
    for (const k of Object.keys(dirs) as (keyof typeof dirs)[]) {
      dirs[k] = join(root, k);
      mkdirSync(dirs[k]);
    }
    await generateKey(dirs.all, 'billing', 'x25519');
    await generateKey(dirs.all, 'analytics', 'rsa', 2048);
    await generateKey(dirs.all, 'analytics.v2', 'rsa', 2048);
    await generateKey(dirs.all, 'orders-keys', 'secret');
    for (const f of readdirSync(dirs.all)) {
      if (f.startsWith('billing.')) copyFileSync(join(dirs.all, f), join(dirs.x25519, f));
      if (f.startsWith('analytics.')) copyFileSync(join(dirs.all, f), join(dirs.rsa, f));
    }
    broker = await BrokerProcess.start();
    admin = new kafkajs.Kafka({ brokers: [broker.bootstrap], logLevel: kafkajs.logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: ['rt', 'failures', 'mixed'].map((topic) => ({ topic, numPartitions: topic === 'rt' ? 3 : 1 })), waitForLeaders: true });
  });

  afterAll(async () => {
    await admin?.disconnect();
    await broker?.stop();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('passes every test vector', async () => {
    const r = await tool(['vectors', VECTORS]);
    const files = readdirSync(VECTORS).filter((f) => /^(seal|open)-.*\.json$/.test(f));
    expect(r.stdout.trim().split('\n').sort()).toEqual(files.map((f) => `ok ${f}`).sort());
    expect(r.code).toBe(0);
  });

  it('refuses every malformed envelope, resolves key versions, rotates data keys by count and age, announces every n-th record and bounds its data key cache (compat/python/e2e_core_check.py)', async () => {
    const r = await tool([], 120_000, CORE_CHECK);
    expect(r.stdout.trim(), r.stderr).toBe('ok');
    expect(r.code).toBe(0);
  });

  it('round-trips with data key rotation, two recipients of which a consumer holds one, pseudonyms and sealed headers, and TypeScript opens what Python stored', async () => {
    const n = 30;
    const produced = await tool(['produce', '--bootstrap', broker.bootstrap, '--topic', 'rt', '--keys', dirs.all, '--recipients', 'analytics,billing', '--count', String(n), '--tag', 'rt', '--pseudonym', 'orders-keys', '--seal-headers', 'h-secret', '--rotate-records', '3']);
    expect(produced.lines, produced.stderr).toEqual([{ produced: n }]);
    expect(produced.code).toBe(0);

    for (const dir of [dirs.x25519, dirs.rsa]) {
      const consumed = await tool(['consume', '--bootstrap', broker.bootstrap, '--topic', 'rt', '--keys', dir, '--count', String(n), '--timeout-ms', '30000']);
      expect(consumed.code, consumed.stderr).toBe(0);
      expect(consumed.lines).toHaveLength(n);
      const byIndex = new Map(consumed.lines.map((l) => [indexOf('rt', l.value), l]));
      for (let i = 0; i < n; i++) {
        const l = byIndex.get(i);
        expect(l, `record ${i}`).toMatchObject({ ...expected('rt', i), status: 'decrypted', reason: null });
      }
      // Equal keys, equal pseudonyms: one partition per key.
      const partitionOf = new Map<string, Set<number>>();
      for (const l of consumed.lines) partitionOf.set(l.key, (partitionOf.get(l.key) ?? new Set()).add(l.partition));
      for (const [k, ps] of partitionOf) expect(ps.size, `key ${k}`).toBe(1);
    }

    // The records as stored, through a consumer holding no key (CONSUME delivers them as they are).
    const stored = await tool(['consume', '--bootstrap', broker.bootstrap, '--topic', 'rt', '--keys', dirs.none, '--count', String(n), '--on-failure', 'CONSUME', '--timeout-ms', '30000']);
    expect(stored.code, stored.stderr).toBe(0);
    const dataKeys = new Set<string>();
    const ts = new RecordDecryptor({ keys: new PemDirectoryKeyReader(dirs.x25519) });
    for (const l of stored.lines) {
      expect(l).toMatchObject({ status: 'failed', reason: 'no-key' });
      expect(Buffer.from(l.key, 'hex')).toHaveLength(32);
      expect(l.headers.map((h: [string, string]) => h[0])).toEqual(['n', ENVELOPE_HEADER]);
      const env = decodeEnvelope(Buffer.from(l.headers[1][1], 'hex'));
      expect(env.wrappedKeys.map((w) => w.keyId)).toEqual(['analytics.v2', 'billing']);
      expect(env.wrappedKeys.map((w) => w.algorithm)).toEqual([1, 2]);
      expect(env.pseudonymKeyId).toBe('orders-keys');
      expect(env.sealedHeaders).not.toBeNull();
      dataKeys.add(env.dataKeyId.toString('hex'));
      const opened = await ts.decrypt('rt', { key: Buffer.from(l.key, 'hex'), value: Buffer.from(l.value, 'hex'), headers: l.headers.map(([key, v]: [string, string]) => ({ key, value: Buffer.from(v, 'hex') })) });
      expect(opened.status).toBe('decrypted');
      const i = Number(opened.record!.headers[0].value!.toString());
      expect({ key: opened.record!.key!.toString('hex'), value: opened.record!.value!.toString('hex'), headers: opened.record!.headers.map((h) => [h.key, h.value!.toString('hex')]) }).toEqual(expected('rt', i));
    }
    // A data key seals at most 3 records.
    expect(dataKeys.size).toBe(n / 3);
  });

  it('applies each failure action to a consumer lacking the key: FAIL stops at the record, DISCARD skips it, CONSUME delivers it as stored', async () => {
    const produce = (topic: string, tag: string, count: number, extra: string[] = []) =>
      tool(['produce', '--bootstrap', broker.bootstrap, '--topic', topic, '--keys', dirs.all, '--recipients', 'billing', '--count', String(count), '--tag', tag, ...extra]);
    expect((await produce('failures', 'f', 4)).lines).toEqual([{ produced: 4 }]);
    expect((await produce('mixed', 'p', 2, ['--plaintext'])).lines).toEqual([{ produced: 2 }]);
    expect((await produce('mixed', 'e', 3)).lines).toEqual([{ produced: 3 }]);
    expect((await produce('mixed', 'q', 1, ['--plaintext'])).lines).toEqual([{ produced: 1 }]);
    const consume = (topic: string, count: number, action: string, dir = dirs.none, timeoutMs = 20_000) =>
      tool(['consume', '--bootstrap', broker.bootstrap, '--topic', topic, '--keys', dir, '--count', String(count), '--on-failure', action, '--timeout-ms', String(timeoutMs)]);

    const fail = await consume('failures', 4, 'FAIL');
    expect(fail.lines).toEqual([{ failed: 'no-key', partition: 0, offset: 0 }]);
    expect(fail.code).toBe(3);
    // FAIL after plaintext records delivers them, then stops at the first encrypted one.
    const failMixed = await consume('mixed', 6, 'FAIL');
    expect(failMixed.lines.map((l) => l.status ?? l.failed)).toEqual(['plaintext', 'plaintext', 'no-key']);
    expect(failMixed.lines[2]).toEqual({ failed: 'no-key', partition: 0, offset: 2 });
    expect(failMixed.code).toBe(3);

    const discard = await consume('mixed', 3, 'DISCARD');
    expect(discard.code, discard.stderr).toBe(0);
    expect(discard.lines.map((l) => [l.offset, l.status, Buffer.from(l.value, 'hex').toString()])).toEqual([
      [0, 'plaintext', 'p:0:'],
      [1, 'plaintext', 'p:1:x'],
      [5, 'plaintext', 'q:0:'],
    ]);
    expect(discard.lines[0].headers).toEqual(expected('p', 0).headers);
    const discardMore = await consume('mixed', 4, 'DISCARD', dirs.none, 3000);
    expect(discardMore.lines.at(-1)).toEqual({ timeout: true, delivered: 3 });
    expect(discardMore.code).toBe(4);

    const consumeAll = await consume('mixed', 6, 'CONSUME');
    expect(consumeAll.code, consumeAll.stderr).toBe(0);
    expect(consumeAll.lines.map((l) => [l.offset, l.status, l.reason])).toEqual([
      [0, 'plaintext', null],
      [1, 'plaintext', null],
      [2, 'failed', 'no-key'],
      [3, 'failed', 'no-key'],
      [4, 'failed', 'no-key'],
      [5, 'plaintext', null],
    ]);
    for (const l of consumeAll.lines.filter((x) => x.status === 'failed')) {
      expect(l.key).toBe(hex(`k${(l.offset - 2) % 7}`)); // no pseudonym: the key stays in the clear
      expect(l.headers.map((h: [string, string]) => h[0])).toEqual(['n', 'h-secret', ENVELOPE_HEADER]);
      expect(Buffer.from(l.value, 'hex').length).toBe(Buffer.from(`e:${l.offset - 2}:${'x'.repeat(l.offset - 2)}`).length + 16);
    }
    // The same records open for a consumer that holds the key.
    const withKey = await consume('mixed', 6, 'FAIL', dirs.x25519);
    expect(withKey.code, withKey.stderr).toBe(0);
    expect(withKey.lines.map((l) => [l.status, Buffer.from(l.value, 'hex').toString()])).toEqual([
      ['plaintext', 'p:0:'],
      ['plaintext', 'p:1:x'],
      ['decrypted', 'e:0:'],
      ['decrypted', 'e:1:x'],
      ['decrypted', 'e:2:xx'],
      ['plaintext', 'q:0:'],
    ]);
  });

  it('encrypts with every form of headers, tombstones and null keys under pseudonyms, and keeps a FAIL consumer at the failed record (compat/python/e2e_api_check.py)', async () => {
    const r = await tool([broker.bootstrap, dirs.all, dirs.x25519, dirs.none], 120_000, API_CHECK);
    expect(r.stdout.trim(), r.stderr).toBe('ok');
    expect(r.code).toBe(0);
  });
});
