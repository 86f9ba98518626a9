/** The committed test vectors (test/vectors/e2e/), which every implementation of the envelope reproduces. */
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeEnvelope, ENVELOPE_HEADER, type WrappedKey } from '../../../src/crypto/envelope.js';
import { RecordDecryptor } from '../../../src/crypto/decryptor.js';
import type { KeyReader } from '../../../src/crypto/keys.js';
import { E2eError, envelopeOf, openRecord, sealRecord, type E2eRecord } from '../../../src/crypto/record.js';
import { unwrapDataKey, wrapDataKey } from '../../../src/crypto/wrap.js';

const DIR = join(import.meta.dirname, '../../vectors/e2e');
const load = (kind: string): any[] =>
  readdirSync(DIR)
    .filter((f) => f.startsWith(`${kind}-`) && f.endsWith('.json'))
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')));
const buf = (h: string | null): Buffer | null => (h === null ? null : Buffer.from(h, 'hex'));
const record = (j: any): E2eRecord => ({ key: buf(j.key), value: buf(j.value), headers: j.headers.map((h: any) => ({ key: h.key, value: buf(h.value) })) });

function readerOf(recipients: any[]): KeyReader {
  const keys = new Map(recipients.map((r) => [r.keyId, createPrivateKey(r.privateKeyPem)]));
  return {
    publicKey: async () => null,
    secret: async () => null,
    unwrap: async (w: WrappedKey, dataKeyId: Buffer) => {
      const k = keys.get(w.keyId);
      return k === undefined ? null : unwrapDataKey(k, w.keyId, w.algorithm, dataKeyId, w.wrapped);
    },
  };
}

describe('seal vectors', () => {
  const vectors = load('seal');
  it('exist', () => expect(vectors.length).toBeGreaterThanOrEqual(8));
  for (const v of vectors) {
    it(`${v.name}: sealing reproduces the record, each recipient unwraps the data key, opening gives the input back`, async () => {
      const dataKeyId = buf(v.dataKeyId)!;
      const dataKey = buf(v.dataKey)!;
      const wrappedKeys: WrappedKey[] = v.recipients.map((r: any) => {
        if (r.type === 'x25519') {
          const w = wrapDataKey(createPublicKey(r.publicKeyPem), r.keyId, dataKeyId, dataKey, { ephemeral: createPrivateKey(r.ephemeralPrivateKeyPem), nonce: buf(r.wrapNonce)! });
          expect(w.wrapped.toString('hex')).toBe(r.wrapped);
        }
        expect(unwrapDataKey(createPrivateKey(r.privateKeyPem), r.keyId, r.type === 'rsa' ? 1 : 2, dataKeyId, buf(r.wrapped)!).toString('hex')).toBe(v.dataKey);
        return { keyId: r.keyId, algorithm: r.type === 'rsa' ? 1 : 2, wrapped: buf(r.wrapped)! };
      });
      const out = sealRecord(record(v.input), {
        topic: v.topic,
        dataKeyId,
        dataKey,
        nonceBase: buf(v.nonceBase)!,
        wrappedKeys: v.reference ? [] : wrappedKeys,
        pseudonym: v.pseudonym === null ? null : { keyId: v.pseudonym.keyId, secret: buf(v.pseudonym.secret)! },
        sealHeaders: v.sealHeaders,
      });
      expect(JSON.parse(JSON.stringify({ key: out.key?.toString('hex') ?? null, value: out.value?.toString('hex') ?? null, headers: out.headers.map((h) => ({ key: h.key, value: h.value?.toString('hex') ?? null })) }))).toEqual(v.output);
      const stored = record(v.output);
      const env = envelopeOf(stored)!;
      expect(openRecord(stored, v.topic, env, dataKey)).toEqual(record(v.input));
      if (!v.reference) {
        const opened = await new RecordDecryptor({ keys: readerOf(v.recipients) }).decrypt(v.topic, stored);
        expect(opened).toEqual({ status: 'decrypted', record: record(v.input) });
      }
    });
  }
});

describe('open vectors', () => {
  for (const v of load('open')) {
    it(`${v.name}: ${v.error === null ? 'opens' : `fails with ${v.error}`}`, async () => {
      const stored = record(v.record);
      const known = new Map<string, Buffer>(v.knownDataKeys.map((k: any) => [k.dataKeyId, buf(k.dataKey)!]));
      const attempt = async (): Promise<E2eRecord> => {
        const env = envelopeOf(stored);
        if (env === null) throw new Error('no envelope');
        const held = known.get(env.dataKeyId.toString('hex'));
        if (held !== undefined) return openRecord(stored, v.topic, env, held);
        const r = await new RecordDecryptor({ keys: readerOf(v.recipients) }).decrypt(v.topic, stored);
        return r.record!;
      };
      if (v.error === null) {
        expect(await attempt()).toEqual(record(v.expect));
        return;
      }
      const err = await attempt().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(E2eError);
      expect((err as E2eError).reason).toBe(v.error);
    });
  }
});

describe('the envelope of a vector', () => {
  it('parses to the fields it was made of', () => {
    const v = load('seal').find((x) => x.name === 'two-recipients-sealed-headers');
    const env = decodeEnvelope(buf(v.output.headers.find((h: any) => h.key === ENVELOPE_HEADER).value)!);
    expect(env.dataKeyId.toString('hex')).toBe(v.dataKeyId);
    expect(env.nonceBase.toString('hex')).toBe(v.nonceBase);
    expect(env.wrappedKeys.map((w) => w.keyId)).toEqual(['analytics.v1', 'billing.v3']);
    expect(env.sealedHeaders).not.toBeNull();
    expect(env.sealedKey).toBeNull();
  });
});
