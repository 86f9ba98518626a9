/**
 * The TypeScript e2e tool: end-to-end encryption through kafkajs and `ledgerline/crypto`, with the same
 * commands and output as the Java, Python and Go tools (test/integration/e2e-interop.test.ts runs them all):
 *
 *   e2e-tool vectors <dir>
 *   e2e-tool produce --bootstrap H:P --topic T --keys DIR --recipients ID[,ID] --count N --tag TAG
 *                    [--pseudonym ID] [--seal-headers H[,H]] [--rotate-records M] [--plaintext]
 *   e2e-tool consume --bootstrap H:P --topic T --keys DIR --count N [--on-failure FAIL|DISCARD|CONSUME] [--timeout-ms 60000]
 *
 * Record i: key "k<i mod 7>", value "<TAG>:<i>:" + "x" x (i mod 13), headers n=<i>, h-secret=s<i>.
 * consume prints one JSON line per delivered record (hex key/value/headers, status, reason); exit 3 on a
 * FAIL failure, 4 on timeout.
 */
import { createPrivateKey, createPublicKey, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import {
  decryptingEachMessage,
  E2eError,
  encryptingKafkajsProducer,
  envelopeOf,
  headersFromKafkajs,
  openRecord,
  PemDirectoryKeyReader,
  RecordDecryptor,
  RecordEncryptor,
  sealRecord,
  unwrapDataKey,
  wrapDataKey,
  type E2eRecord,
  type FailureAction,
  type KeyReader,
  type WrappedKey,
} from '../../src/crypto/index.js';
import { registerCodecs } from './kafkajs-codecs.js';

// Other languages' producers may compress (franz-go: snappy by default): kafkajs reads every codec.
registerCodecs();

function flags(args: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    if (a === '--plaintext') m.set('plaintext', 'true');
    else m.set(a.slice(2), args[++i] ?? '');
  }
  return m;
}

const hex = (b: Buffer | null | undefined): string | null => (b === null || b === undefined ? null : b.toString('hex'));
const buf = (h: string | null): Buffer | null => (h === null ? null : Buffer.from(h, 'hex'));
const recordOf = (j: any): E2eRecord => ({ key: buf(j.key), value: buf(j.value), headers: j.headers.map((h: any) => ({ key: h.key, value: buf(h.value) })) });
const same = (a: E2eRecord, b: E2eRecord): boolean => JSON.stringify(jsonOf(a)) === JSON.stringify(jsonOf(b));
const jsonOf = (r: E2eRecord): unknown => ({ key: hex(r.key), value: hex(r.value), headers: r.headers.map((h) => ({ key: h.key, value: hex(h.value) })) });

function privateReader(recipients: any[]): KeyReader {
  const keys = new Map(recipients.map((r) => [r.keyId as string, createPrivateKey(r.privateKeyPem)]));
  return {
    publicKey: async () => null,
    secret: async () => null,
    unwrap: async (w: WrappedKey, id: Buffer) => (keys.has(w.keyId) ? unwrapDataKey(keys.get(w.keyId)!, w.keyId, w.algorithm, id, w.wrapped) : null),
  };
}

async function checkVector(v: any): Promise<string | null> {
  if (v.kind === 'seal') {
    const dataKeyId = buf(v.dataKeyId)!;
    const dataKey = buf(v.dataKey)!;
    const wrappedKeys: WrappedKey[] = [];
    for (const r of v.recipients) {
      const algorithm = r.type === 'rsa' ? 1 : 2;
      if (r.type === 'x25519') {
        const w = wrapDataKey(createPublicKey(r.publicKeyPem), r.keyId, dataKeyId, dataKey, { ephemeral: createPrivateKey(r.ephemeralPrivateKeyPem), nonce: buf(r.wrapNonce)! });
        if (w.wrapped.toString('hex') !== r.wrapped) return `X25519 wrap for ${r.keyId} differs`;
      }
      if (unwrapDataKey(createPrivateKey(r.privateKeyPem), r.keyId, algorithm, dataKeyId, buf(r.wrapped)!).toString('hex') !== v.dataKey) return `unwrap for ${r.keyId} differs`;
      wrappedKeys.push({ keyId: r.keyId, algorithm, wrapped: buf(r.wrapped)! });
    }
    const out = sealRecord(recordOf(v.input), {
      topic: v.topic,
      dataKeyId,
      dataKey,
      nonceBase: buf(v.nonceBase)!,
      wrappedKeys: v.reference ? [] : wrappedKeys,
      pseudonym: v.pseudonym && { keyId: v.pseudonym.keyId, secret: buf(v.pseudonym.secret)! },
      sealHeaders: v.sealHeaders,
    });
    if (!same(out, recordOf(v.output))) return 'sealed record differs from output';
    const stored = recordOf(v.output);
    if (!same(openRecord(stored, v.topic, envelopeOf(stored)!, dataKey), recordOf(v.input))) return 'opened record differs from input';
    return null;
  }
  const stored = recordOf(v.record);
  const known = new Map<string, Buffer>(v.knownDataKeys.map((k: any) => [k.dataKeyId, buf(k.dataKey)!]));
  try {
    const env = envelopeOf(stored);
    if (env === null) return 'no envelope';
    const held = known.get(env.dataKeyId.toString('hex'));
    const opened = held !== undefined ? openRecord(stored, v.topic, env, held) : (await new RecordDecryptor({ keys: privateReader(v.recipients) }).decrypt(v.topic, stored)).record!;
    if (v.error !== null) return `opened, expected ${v.error}`;
    return same(opened, recordOf(v.expect)) ? null : 'opened record differs from expect';
  } catch (e) {
    if (!(e instanceof E2eError)) return `unexpected error ${(e as Error).message}`;
    return e.reason === v.error ? null : `failed with ${e.reason}, expected ${v.error}`;
  }
}

async function vectors(dir: string): Promise<number> {
  let failed = 0;
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    const why = await checkVector(JSON.parse(readFileSync(join(dir, f), 'utf8')));
    console.log(why === null ? `ok ${f}` : `FAIL ${f}: ${why}`);
    if (why !== null) failed++;
  }
  return failed === 0 ? 0 : 1;
}

function client(bootstrap: string): kafkajs.Kafka {
  return new kafkajs.Kafka({ clientId: 'e2e-tool-ts', brokers: bootstrap.split(','), logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
}

async function produce(f: Map<string, string>): Promise<number> {
  const count = Number(f.get('count'));
  const tag = f.get('tag') ?? 'ts';
  const topic = f.get('topic')!;
  const kafka = client(f.get('bootstrap')!);
  const plain = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await plain.connect();
  const encryptor = new RecordEncryptor({
    keys: new PemDirectoryKeyReader(f.get('keys')!),
    recipients: (f.get('recipients') ?? '').split(',').filter(Boolean),
    pseudonymKeyId: f.get('pseudonym'),
    sealHeaders: f.get('seal-headers')?.split(',').filter(Boolean),
    rotateAfterRecords: f.has('rotate-records') ? Number(f.get('rotate-records')) : undefined,
  });
  const producer = f.has('plaintext') ? plain : encryptingKafkajsProducer(plain, encryptor);
  try {
    for (let i = 0; i < count; i++) {
      await producer.send({
        topic,
        acks: -1,
        messages: [{ key: `k${i % 7}`, value: `${tag}:${i}:${'x'.repeat(i % 13)}`, headers: { n: `${i}`, 'h-secret': `s${i}` } }],
      });
    }
    console.log(JSON.stringify({ produced: count }));
    return 0;
  } catch (e) {
    console.log(JSON.stringify({ error: String((e as Error).message) }));
    return 2;
  } finally {
    await plain.disconnect();
  }
}

async function consume(f: Map<string, string>): Promise<number> {
  const count = Number(f.get('count'));
  const topic = f.get('topic')!;
  const timeoutMs = Number(f.get('timeout-ms') ?? 60_000);
  const decryptor = new RecordDecryptor({ keys: new PemDirectoryKeyReader(f.get('keys')!), onFailure: (f.get('on-failure') ?? 'FAIL') as FailureAction });
  const consumer = client(f.get('bootstrap')!).consumer({ groupId: `e2e-tool-${randomUUID()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let delivered = 0;
  const done = new Promise<number>((resolve) => {
    const timer = setTimeout(() => {
      console.log(JSON.stringify({ timeout: true, delivered }));
      resolve(4);
    }, timeoutMs);
    const handler = decryptingEachMessage<kafkajs.EachMessagePayload>(decryptor, async ({ partition, message, e2e }) => {
      if (delivered >= count) return;
      delivered++;
      const headers = headersFromKafkajs(message.headers).map((h) => [h.key, hex(h.value)]);
      console.log(JSON.stringify({ partition, offset: Number(message.offset), key: hex(message.key), value: hex(message.value), headers, status: e2e.status, reason: e2e.reason }));
      if (delivered === count) {
        clearTimeout(timer);
        resolve(0);
      }
    });
    void consumer.run({
      eachMessage: async (payload) => {
        try {
          await handler(payload);
        } catch (e) {
          clearTimeout(timer);
          console.log(JSON.stringify({ failed: e instanceof E2eError ? e.reason : String(e), partition: payload.partition, offset: Number(payload.message.offset) }));
          resolve(3);
          // Hold the handler: the consumer must not move past the record while the tool exits.
          await new Promise(() => undefined);
        }
      },
    });
  });
  const code = await done;
  await Promise.race([consumer.disconnect(), new Promise((r) => setTimeout(r, 5000))]);
  return code;
}

const [command, ...rest] = process.argv.slice(2);
const run = command === 'vectors' ? vectors(rest[0]!) : command === 'produce' ? produce(flags(rest)) : command === 'consume' ? consume(flags(rest)) : Promise.resolve(-1);
run.then(
  (code) => {
    if (code < 0) console.error('usage: e2e-tool vectors <dir> | produce ... | consume ...');
    process.exit(code < 0 ? 2 : code);
  },
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
