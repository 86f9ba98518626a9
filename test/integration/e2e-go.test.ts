/**
 * The Go end-to-end encryption library (compat/go/e2e, a franz-go wrapper) through a real broker, driven by
 * its e2e tool (compat/go/e2etool, the contract every language's tool follows; src/crypto/README.md is the
 * format): the test vectors; a round trip with data key rotation every 3 records to two recipients, one of
 * them rotated; consumers holding only one recipient's key; pseudonymous keys and sealed headers; and the
 * FAIL, DISCARD and CONSUME actions of a consumer that lacks the key; and records crossing between it and
 * the TypeScript library (src/crypto) both ways. Keys come from `generateKey` /
 * `rotateKey` (src/crypto/keys.ts), so the Go reader is checked against the files `ledgerline keys` writes.
 *
 * Skipped when compat/.work/bin/e2etool is missing (the compat suite's Go install step builds it, e.g.
 * `npm run compat -- --clients franz`, or `go build -o ../.work/bin/ ./e2etool` in compat/go);
 * LEDGERLINE_REQUIRE_E2E=1 makes that a failure.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN_DIR, REPO_DIR } from '../../compat/lib/paths.js';
import { RecordDecryptor } from '../../src/crypto/decryptor.js';
import { RecordEncryptor } from '../../src/crypto/encryptor.js';
import { generateKey, PemDirectoryKeyReader, rotateKey } from '../../src/crypto/keys.js';
import { BrokerProcess } from '../support/broker-process.js';
import { runJsonLinesProgram, type ProgramRun } from '../support/json-lines-program.js';

const { Kafka, logLevel } = kafkajs;

const TOOL = join(BIN_DIR, 'e2etool');
const toolMissing = existsSync(TOOL) ? null : `${TOOL} is not built (npm run compat -- --clients franz builds it, or go build -o ${BIN_DIR}/ ./e2etool in compat/go)`;
const requireE2e = process.env.LEDGERLINE_REQUIRE_E2E === '1';
if (toolMissing && !requireE2e) console.warn(`Go end-to-end encryption tests skipped: ${toolMissing}`);

interface Line {
  partition: number;
  offset: number;
  key: string | null;
  value: string | null;
  headers: [string, string | null][];
  status: 'decrypted' | 'plaintext' | 'failed';
  reason: string | null;
}

function tool(args: string[], timeoutMs = 90_000): Promise<ProgramRun> {
  return runJsonLinesProgram(TOOL, args, { timeoutMs });
}

const hex = (s: string): string => Buffer.from(s, 'utf8').toString('hex');
const text = (h: string | null): string | null => (h === null ? null : Buffer.from(h, 'hex').toString('utf8'));
/** The index of a record the tool produced, from its clear or decrypted header "n". */
const indexOf = (l: Line): number => Number(text(l.headers.find(([k]) => k === 'n')![1]));
const envelopeOf = (l: Line): Buffer => Buffer.from(l.headers.find(([k]) => k === 'ledgerline.e2e')![1]!, 'hex');
const expectedValue = (tag: string, i: number): string => hex(`${tag}:${i}:${'x'.repeat(i % 13)}`);

/** The recipient key ids an envelope's KEYS section names (README, "The envelope header"). */
function recipientsOf(env: Buffer): string[] {
  if ((env[2] & 0x01) === 0) return [];
  const ids: string[] = [];
  let pos = 32;
  for (let n = env[31]; n > 0; n--) {
    const len = env[pos];
    ids.push(env.toString('utf8', pos + 1, pos + 1 + len));
    pos += 1 + len + 1;
    pos += 2 + env.readUInt16BE(pos);
  }
  return ids;
}

describe.skipIf(toolMissing !== null && !requireE2e).sequential('the Go end-to-end encryption library (franz-go) through a broker', () => {
  let broker: BrokerProcess;
  let dir: string;
  const keys = (): string => join(dir, 'all');
  const only = (name: string): string => join(dir, `only-${name}`);
  const none = (): string => join(dir, 'none');

  beforeAll(async () => {
    if (toolMissing !== null) throw new Error(`LEDGERLINE_REQUIRE_E2E=1, but ${toolMissing}`);
    dir = mkdtempSync(join(tmpdir(), 'ledgerline-e2e-go-'));
    for (const d of [keys(), only('analytics'), only('billing-old'), none()]) mkdirSync(d);
    await generateKey(keys(), 'billing', 'x25519');
    await rotateKey(keys(), 'billing'); // billing.v1: producers resolve "billing" to it
    await generateKey(keys(), 'analytics', 'rsa', 2048);
    await generateKey(keys(), 'names', 'secret');
    copyFileSync(join(keys(), 'analytics.pem'), join(only('analytics'), 'analytics.pem'));
    copyFileSync(join(keys(), 'billing.pem'), join(only('billing-old'), 'billing.pem'));
    broker = await BrokerProcess.start();
    const admin = new Kafka({ clientId: 'e2e-go', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: 'go-rotation', numPartitions: 3 },
        { topic: 'go-pseudonym', numPartitions: 2 },
        { topic: 'go-mixed', numPartitions: 1 },
        { topic: 'ts-to-go', numPartitions: 1 },
      ],
    });
    await admin.disconnect();
  }, 120_000);

  afterAll(async () => {
    await broker?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const produce = (topic: string, count: number, tag: string, extra: string[] = []): Promise<ProgramRun> =>
    tool(['produce', '--bootstrap', broker.bootstrap, '--topic', topic, '--keys', keys(), '--recipients', 'billing,analytics', '--count', String(count), '--tag', tag, ...extra]);
  const consume = (topic: string, keyDir: string, count: number, extra: string[] = []): Promise<ProgramRun> =>
    tool(['consume', '--bootstrap', broker.bootstrap, '--topic', topic, '--keys', keyDir, '--count', String(count), '--timeout-ms', '20000', ...extra]);
  const records = (r: ProgramRun): Line[] => (r.lines as unknown as Line[]).filter((l) => 'status' in l).sort((a, b) => indexOf(a) - indexOf(b));

  it('passes every test vector', async () => {
    const r = await tool(['vectors', join(REPO_DIR, 'test', 'vectors', 'e2e')]);
    const out = r.stdout.trim().split('\n');
    expect(out.filter((l) => !l.startsWith('ok ')), r.stderr).toEqual([]);
    expect(out.length).toBeGreaterThanOrEqual(21);
    expect(r.code).toBe(0);
  });

  it('round-trips records with the data key rotated every 3 records, wrapped for the newest version of each recipient', async () => {
    expect((await produce('go-rotation', 10, 'RT', ['--rotate-records', '3'])).lines).toEqual([{ produced: 10 }]);
    const read = await consume('go-rotation', keys(), 10);
    expect(read.code, read.stderr).toBe(0);
    const got = records(read);
    expect(got.map(indexOf)).toEqual([...Array(10).keys()]);
    for (const [i, l] of got.entries()) {
      expect(l).toMatchObject({ status: 'decrypted', reason: null, key: hex(`k${i % 7}`), value: expectedValue('RT', i) });
      expect(l.headers).toEqual([
        ['n', hex(String(i))],
        ['h-secret', hex(`s${i}`)],
      ]);
    }
    expect(new Set(got.map((l) => l.partition)).size).toBeGreaterThan(1);

    // As stored (CONSUME, no key): a new data key id every 3 records, each wrapped for billing.v1 and analytics.
    const stored = records(await consume('go-rotation', none(), 10, ['--on-failure', 'CONSUME']));
    expect(stored.map((l) => [l.status, l.reason])).toEqual(Array(10).fill(['failed', 'no-key']));
    const ids = stored.map((l) => envelopeOf(l).subarray(3, 19).toString('hex'));
    expect(ids.map((id) => ids.indexOf(id))).toEqual([0, 0, 0, 3, 3, 3, 6, 6, 6, 9]);
    for (const l of stored) {
      expect(recipientsOf(envelopeOf(l))).toEqual(['billing.v1', 'analytics']);
      expect(l.value).not.toBe(expectedValue('RT', indexOf(l)));
    }
  }, 120_000);

  it('decrypts with any one recipient key, and reports no-key for a key of no recipient (an older version)', async () => {
    const one = await consume('go-rotation', only('analytics'), 10);
    expect(one.code, one.stderr).toBe(0);
    expect(records(one).map((l) => [l.status, l.value])).toEqual([...Array(10).keys()].map((i) => ['decrypted', expectedValue('RT', i)]));
    const old = await consume('go-rotation', only('billing-old'), 10);
    expect(old.code).toBe(3);
    expect(old.lines).toHaveLength(1);
    expect(old.lines[0]).toMatchObject({ failed: 'no-key', offset: 0 });
  }, 120_000);

  it('replaces keys by pseudonyms and seals the chosen headers; the consumer restores both', async () => {
    expect((await produce('go-pseudonym', 14, 'PS', ['--pseudonym', 'names', '--seal-headers', 'h-secret'])).lines).toEqual([{ produced: 14 }]);
    const stored = records(await consume('go-pseudonym', none(), 14, ['--on-failure', 'CONSUME']));
    expect(stored).toHaveLength(14);
    for (const l of stored) {
      const i = indexOf(l);
      expect(l.key).toHaveLength(64); // HMAC-SHA256
      expect(l.key).toBe(stored[i % 7].key); // equal keys, equal pseudonyms: same partition, compaction as usual
      expect(l.partition).toBe(stored[i % 7].partition);
      expect(l.headers.map(([k]) => k)).toEqual(['n', 'ledgerline.e2e']);
      expect(envelopeOf(l)[2]).toBe(0x01 | 0x02 | 0x04);
    }
    expect(new Set(stored.map((l) => l.key)).size).toBe(7);
    const read = await consume('go-pseudonym', only('analytics'), 14);
    expect(read.code, read.stderr).toBe(0);
    for (const [i, l] of records(read).entries()) {
      expect(l).toMatchObject({ status: 'decrypted', key: hex(`k${i % 7}`), value: expectedValue('PS', i) });
      expect(l.headers).toEqual([
        ['n', hex(String(i))],
        ['h-secret', hex(`s${i}`)],
      ]);
    }
  }, 120_000);

  it('reads what the TypeScript library writes, and writes what it reads', async () => {
    // Go -> TypeScript: the pseudonymous records above, opened by RecordDecryptor with the RSA key alone.
    const kafka = new Kafka({ clientId: 'e2e-go-ts', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const dec = new RecordDecryptor({ keys: new PemDirectoryKeyReader(only('analytics')) });
    const consumer = kafka.consumer({ groupId: `e2e-go-ts-${Date.now()}` });
    await consumer.connect();
    await consumer.subscribe({ topic: 'go-pseudonym', fromBeginning: true });
    const opened: string[] = [];
    await new Promise<void>((resolve, reject) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          const headers = Object.entries(message.headers ?? {}).map(([key, value]) => ({ key, value: value as Buffer }));
          const r = await dec.decrypt('go-pseudonym', { key: message.key, value: message.value, headers }).catch(reject);
          if (!r || r.record === null) return;
          opened.push(`${r.status} ${r.record.key} ${r.record.value} ${r.record.headers.map((h) => `${h.key}=${h.value}`).join(',')}`);
          if (opened.length === 14) resolve();
        },
      });
    });
    await consumer.disconnect();
    expect(opened.sort()).toEqual([...Array(14).keys()].map((i) => `decrypted k${i % 7} PS:${i}:${'x'.repeat(i % 13)} n=${i},h-secret=s${i}`).sort());

    // TypeScript -> Go: RecordEncryptor (pseudonyms, a sealed header, a tombstone), read by the tool.
    const enc = new RecordEncryptor({ keys: new PemDirectoryKeyReader(keys()), recipients: ['billing', 'analytics'], pseudonymKeyId: 'names', sealHeaders: ['h-secret'], rotateAfterRecords: 2 });
    const messages = [];
    for (let i = 0; i < 5; i++) {
      const r = await enc.encrypt('ts-to-go', { key: Buffer.from(`k${i}`), value: i === 4 ? null : Buffer.from(`TS:${i}`), headers: [{ key: 'n', value: Buffer.from(String(i)) }, { key: 'h-secret', value: Buffer.from(`s${i}`) }] });
      messages.push({ key: r.key, value: r.value, headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value!])) });
    }
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'ts-to-go', acks: -1, messages });
    await producer.disconnect();
    const read = await consume('ts-to-go', only('analytics'), 5);
    expect(read.code, read.stderr).toBe(0);
    expect((read.lines as unknown as Line[]).map((l) => [l.status, text(l.key), text(l.value), l.headers.map(([k, v]) => `${k}=${text(v)}`).join(',')])).toEqual(
      [...Array(5).keys()].map((i) => ['decrypted', `k${i}`, i === 4 ? null : `TS:${i}`, `n=${i},h-secret=s${i}`]),
    );
  }, 120_000);

  describe('a consumer without the key', () => {
    beforeAll(async () => {
      // Offsets 0-2 plaintext, 3-5 encrypted, 6-7 plaintext, all in one partition.
      expect((await produce('go-mixed', 3, 'PL', ['--plaintext'])).lines).toEqual([{ produced: 3 }]);
      expect((await produce('go-mixed', 3, 'EN')).lines).toEqual([{ produced: 3 }]);
      expect((await produce('go-mixed', 2, 'PL2', ['--plaintext'])).lines).toEqual([{ produced: 2 }]);
    }, 120_000);

    it('FAIL: delivers what precedes the record, then stops on it with the reason (exit 3)', async () => {
      const r = await consume('go-mixed', none(), 8);
      expect(r.code).toBe(3);
      expect(r.lines.slice(0, 3).map((l) => [l.offset, l.status])).toEqual([
        [0, 'plaintext'],
        [1, 'plaintext'],
        [2, 'plaintext'],
      ]);
      expect(r.lines.slice(3)).toEqual([{ failed: 'no-key', partition: 0, offset: 3 }]);
    }, 60_000);

    it('DISCARD: skips the records it cannot decrypt', async () => {
      const r = await consume('go-mixed', none(), 5, ['--on-failure', 'DISCARD']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.lines.map((l) => [l.offset, l.status])).toEqual([0, 1, 2, 6, 7].map((o) => [o, 'plaintext']));
      const more = await tool(['consume', '--bootstrap', broker.bootstrap, '--topic', 'go-mixed', '--keys', none(), '--count', '6', '--on-failure', 'DISCARD', '--timeout-ms', '3000']);
      expect(more.code).toBe(4);
      expect(more.lines.at(-1)).toEqual({ timeout: true, delivered: 5 });
    }, 60_000);

    it('CONSUME: delivers them as stored, flagged failed with the reason', async () => {
      const r = await consume('go-mixed', none(), 8, ['--on-failure', 'CONSUME']);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.lines as unknown as Line[];
      expect(lines.map((l) => [l.offset, l.status, l.reason])).toEqual([
        [0, 'plaintext', null],
        [1, 'plaintext', null],
        [2, 'plaintext', null],
        [3, 'failed', 'no-key'],
        [4, 'failed', 'no-key'],
        [5, 'failed', 'no-key'],
        [6, 'plaintext', null],
        [7, 'plaintext', null],
      ]);
      for (const l of lines.slice(3, 6)) {
        expect(l.headers.map(([k]) => k)).toEqual(['n', 'h-secret', 'ledgerline.e2e']);
        expect(l.value).not.toBe(expectedValue('EN', l.offset - 3));
        expect(Buffer.from(l.value!, 'hex').length).toBe(Buffer.from(expectedValue('EN', l.offset - 3), 'hex').length + 16);
      }
      const withKey = await consume('go-mixed', keys(), 8);
      expect(withKey.code, withKey.stderr).toBe(0);
      expect((withKey.lines as unknown as Line[]).slice(3, 6).map((l) => [l.status, text(l.value)])).toEqual([
        ['decrypted', 'EN:0:'],
        ['decrypted', 'EN:1:x'],
        ['decrypted', 'EN:2:xx'],
      ]);
    }, 60_000);
  });
});
