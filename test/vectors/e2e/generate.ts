/**
 * Writes the end-to-end test vectors (test/vectors/e2e/*.json) that every implementation of the envelope
 * (src/crypto/README.md) reproduces. Fresh keys and randomness on every run, so run it only to change the
 * set; the committed files are the reference:
 *
 *   node --import tsx test/vectors/e2e/generate.ts [out-dir]
 *
 * A "seal" vector gives everything a producer chooses (data key, its id, the nonce base, the recipients'
 * wrapped keys — RSA-OAEP is randomized, so its wrapped bytes are given; X25519's are reproduced from the
 * given ephemeral key and nonce) and the exact record that results. An "open" vector gives a record and the
 * keys a consumer has, and the error reason opening must end with.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeEnvelope, ENVELOPE_HEADER, type WrappedKey } from '../../../src/crypto/envelope.js';
import { sealRecord, type E2eHeader, type E2eRecord } from '../../../src/crypto/record.js';
import { wrapDataKey } from '../../../src/crypto/wrap.js';

type Hex = string | null;
const hex = (b: Buffer | null): Hex => (b === null ? null : b.toString('hex'));
const pem = (k: KeyObject, type: 'pkcs8' | 'spki'): string => k.export({ format: 'pem', type }).toString();

interface Recipient {
  keyId: string;
  type: 'rsa' | 'x25519';
  privateKey: KeyObject;
  publicKey: KeyObject;
}

function recipient(keyId: string, type: 'rsa' | 'x25519'): Recipient {
  const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: 2048 }) : generateKeyPairSync('x25519');
  return { keyId, type, privateKey: pair.privateKey, publicKey: pair.publicKey };
}

function jsonRecord(r: E2eRecord): unknown {
  return { key: hex(r.key), value: hex(r.value), headers: r.headers.map((h) => ({ key: h.key, value: hex(h.value) })) };
}

function jsonRecipient(r: Recipient, extra: Record<string, unknown> = {}): unknown {
  return { keyId: r.keyId, type: r.type, privateKeyPem: pem(r.privateKey, 'pkcs8'), publicKeyPem: pem(r.publicKey, 'spki'), ...extra };
}

interface SealCase {
  name: string;
  description: string;
  topic: string;
  record: E2eRecord;
  recipients: Recipient[];
  sealHeaders?: string[];
  pseudonym?: boolean;
  /** The envelope references the data key rather than carrying it. */
  reference?: boolean;
}

const h = (key: string, value: string | null): E2eHeader => ({ key, value: value === null ? null : Buffer.from(value, 'utf8') });
const b = (s: string): Buffer => Buffer.from(s, 'utf8');

function sealVector(c: SealCase): { json: unknown; output: E2eRecord; dataKey: Buffer } {
  const dataKey = randomBytes(32);
  const dataKeyId = randomBytes(16);
  const nonceBase = randomBytes(12);
  const wrappedKeys: WrappedKey[] = [];
  const recipients: unknown[] = [];
  for (const r of c.recipients) {
    if (r.type === 'rsa') {
      const w = wrapDataKey(r.publicKey, r.keyId, dataKeyId, dataKey);
      wrappedKeys.push({ keyId: r.keyId, ...w });
      recipients.push(jsonRecipient(r, { wrapped: hex(w.wrapped) }));
    } else {
      const ephemeral = generateKeyPairSync('x25519').privateKey;
      const nonce = randomBytes(12);
      const w = wrapDataKey(r.publicKey, r.keyId, dataKeyId, dataKey, { ephemeral, nonce });
      wrappedKeys.push({ keyId: r.keyId, ...w });
      recipients.push(jsonRecipient(r, { wrapped: hex(w.wrapped), ephemeralPrivateKeyPem: pem(ephemeral, 'pkcs8'), wrapNonce: hex(nonce) }));
    }
  }
  const pseudonym = c.pseudonym ? { keyId: 'orders-keys', secret: randomBytes(32) } : null;
  const output = sealRecord(c.record, { topic: c.topic, dataKeyId, dataKey, nonceBase, wrappedKeys: c.reference ? [] : wrappedKeys, pseudonym, sealHeaders: c.sealHeaders });
  return {
    dataKey,
    output,
    json: {
      format: 'ledgerline-e2e/1',
      kind: 'seal',
      name: c.name,
      description: c.description,
      topic: c.topic,
      input: jsonRecord(c.record),
      sealHeaders: c.sealHeaders ?? [],
      pseudonym: pseudonym === null ? null : { keyId: pseudonym.keyId, secret: hex(pseudonym.secret) },
      dataKey: hex(dataKey),
      dataKeyId: hex(dataKeyId),
      nonceBase: hex(nonceBase),
      reference: c.reference === true,
      recipients,
      output: jsonRecord(output),
    },
  };
}

function openVector(name: string, description: string, topic: string, record: E2eRecord, keys: { recipients?: Recipient[]; dataKey?: Buffer }, error: string): unknown {
  return {
    format: 'ledgerline-e2e/1',
    kind: 'open',
    name,
    description,
    topic,
    record: jsonRecord(record),
    recipients: (keys.recipients ?? []).map((r) => jsonRecipient(r)),
    // A data key the consumer already holds (cached from an earlier record), by its id.
    knownDataKeys: keys.dataKey ? [{ dataKeyId: hex(decodeEnvelope(record.headers.find((x) => x.key === ENVELOPE_HEADER)!.value!).dataKeyId), dataKey: hex(keys.dataKey) }] : [],
    error,
  };
}

function withHeader(r: E2eRecord, f: (env: Buffer) => Buffer): E2eRecord {
  return { ...r, headers: r.headers.map((x) => (x.key === ENVELOPE_HEADER ? { key: x.key, value: f(Buffer.from(x.value!)) } : x)) };
}

function flip(buf: Buffer, at: number): Buffer {
  const c = Buffer.from(buf);
  c[at] ^= 0x01;
  return c;
}

export function generate(outDir: string): string[] {
  mkdirSync(outDir, { recursive: true });
  const rsa = recipient('analytics.v1', 'rsa');
  const x = recipient('billing.v3', 'x25519');
  const outsider = recipient('outsider', 'x25519');
  const files: string[] = [];
  const write = (name: string, json: unknown): void => {
    const file = join(outDir, `${name}.json`);
    writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`);
    files.push(file);
  };
  const seals: SealCase[] = [
    { name: 'rsa-basic', description: 'One RSA-OAEP-256 recipient; key, value and a clear header.', topic: 'orders', record: { key: b('order-17'), value: b('{"amount":42}'), headers: [h('trace-id', 'abc')] }, recipients: [rsa] },
    { name: 'x25519-basic', description: 'One X25519 recipient; no headers.', topic: 'orders', record: { key: b('order-18'), value: b('hello, world'), headers: [] }, recipients: [x] },
    {
      name: 'two-recipients-sealed-headers',
      description: 'RSA and X25519 recipients; two of three headers sealed, one of them with a null value, one name repeated.',
      topic: 'payments',
      record: { key: b('acct-1'), value: randomBytes(300), headers: [h('content-type', 'application/json'), h('customer', 'Ada Lovelace'), h('trace-id', 't-1'), h('customer', null)] },
      recipients: [rsa, x],
      sealHeaders: ['customer', 'trace-id'],
    },
    { name: 'pseudonym', description: 'The key replaced by its HMAC-SHA256 pseudonym, the original sealed in the envelope.', topic: 'users', record: { key: b('user@example.com'), value: b('profile v2'), headers: [] }, recipients: [x], pseudonym: true },
    { name: 'pseudonym-tombstone', description: 'A tombstone (null value) with a pseudonym key stays a tombstone; its original key is sealed.', topic: 'users', record: { key: b('user@example.com'), value: null, headers: [] }, recipients: [x], pseudonym: true },
    { name: 'null-key-empty-value', description: 'A null key stays null (never a pseudonym); an empty value is sealed to its tag alone.', topic: 'events', record: { key: null, value: Buffer.alloc(0), headers: [] }, recipients: [rsa], pseudonym: true },
    { name: 'reference', description: 'The envelope references its data key (no wrapped keys): the consumer holds the key from an earlier record.', topic: 'events', record: { key: b('k'), value: b('second record under the key'), headers: [] }, recipients: [x], reference: true },
    { name: 'utf8-and-large', description: 'UTF-8 topic and key id, a 4 KiB value.', topic: 'zählung-π', record: { key: b('schlüssel'), value: randomBytes(4096), headers: [h('ключ', 'значение')] }, recipients: [recipient('empfänger-ü', 'x25519')], sealHeaders: ['ключ'] },
  ];
  const sealed = new Map<string, { output: E2eRecord; dataKey: Buffer }>();
  for (const c of seals) {
    const v = sealVector(c);
    sealed.set(c.name, v);
    write(`seal-${c.name}`, v.json);
  }
  const basic = sealed.get('x25519-basic')!.output;
  const headerAt = (r: E2eRecord): Buffer => r.headers.find((y) => y.key === ENVELOPE_HEADER)!.value!;
  write('open-wrong-topic', openVector('wrong-topic', 'The record of x25519-basic read as if it were in another topic.', 'orders-copy', basic, { recipients: [x] }, 'not-authentic'));
  write('open-changed-key', openVector('changed-key', 'The record of x25519-basic with another key.', 'orders', { ...basic, key: b('order-19') }, { recipients: [x] }, 'not-authentic'));
  write('open-flipped-value', openVector('flipped-value', 'One bit of the sealed value flipped.', 'orders', { ...basic, value: flip(basic.value!, 3) }, { recipients: [x] }, 'not-authentic'));
  write('open-flipped-nonce', openVector('flipped-nonce', 'One bit of the nonce base flipped (the wrapped key still opens; the value does not).', 'orders', withHeader(basic, (e) => flip(e, 19 + 11)), { recipients: [x] }, 'not-authentic'));
  write('open-flipped-data-key-id', openVector('flipped-data-key-id', 'One bit of the data key id flipped: the wrap binds the id, so unwrapping fails.', 'orders', withHeader(basic, (e) => flip(e, 3)), { recipients: [x] }, 'unwrap-failed'));
  write('open-no-key', openVector('no-key', 'The consumer holds a private key of no recipient.', 'orders', basic, { recipients: [outsider] }, 'no-key'));
  write('open-unknown-reference', openVector('unknown-reference', 'A reference to a data key the consumer does not hold.', 'events', sealed.get('reference')!.output, { recipients: [x] }, 'unknown-data-key'));
  write('open-reference-known', { ...(openVector('reference-known', 'A reference to a data key the consumer holds opens.', 'events', sealed.get('reference')!.output, { dataKey: sealed.get('reference')!.dataKey }, '') as object), error: null, expect: jsonRecord(seals.find((c) => c.name === 'reference')!.record) });
  write('open-truncated', openVector('truncated', 'The envelope cut in the middle of the wrapped key.', 'orders', withHeader(basic, (e) => e.subarray(0, 40)), { recipients: [x] }, 'malformed'));
  write('open-trailing-bytes', openVector('trailing-bytes', 'A byte after the envelope.', 'orders', withHeader(basic, (e) => Buffer.concat([e, Buffer.of(0)])), { recipients: [x] }, 'malformed'));
  write('open-unknown-version', openVector('unknown-version', 'Envelope version 2.', 'orders', withHeader(basic, (e) => Buffer.concat([Buffer.of(2), e.subarray(1)])), { recipients: [x] }, 'malformed'));
  write('open-unknown-flag', openVector('unknown-flag', 'A flag bit no version 1 reader knows.', 'orders', withHeader(basic, (e) => Buffer.concat([e.subarray(0, 2), Buffer.of(e[2] | 0x80), e.subarray(3)])), { recipients: [x] }, 'malformed'));
  write('open-two-envelopes', openVector('two-envelopes', 'Two envelope headers.', 'orders', { ...basic, headers: [...basic.headers, { key: ENVELOPE_HEADER, value: headerAt(basic) }] }, { recipients: [x] }, 'malformed'));
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ?? dirname(fileURLToPath(import.meta.url));
  for (const f of generate(out)) console.log(f);
}
