/** The producer and consumer sides: data key rotation, announcements, the key cache and the failure actions. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RecordDecryptor } from '../../../src/crypto/decryptor.js';
import { RecordEncryptor, MAX_RECORDS_PER_DATA_KEY } from '../../../src/crypto/encryptor.js';
import { ENVELOPE_HEADER, decodeEnvelope, type WrappedKey } from '../../../src/crypto/envelope.js';
import { generateKey, PemDirectoryKeyReader, type KeyReader } from '../../../src/crypto/keys.js';
import { E2eError, type E2eRecord } from '../../../src/crypto/record.js';

const dir = mkdtempSync(join(tmpdir(), 'e2e-unit-'));
await generateKey(dir, 'a', 'x25519');
await generateKey(dir, 'b', 'x25519');
await generateKey(dir, 'ps', 'secret');
const keys = new PemDirectoryKeyReader(dir);

const rec = (i: number): E2eRecord => ({ key: Buffer.from(`k${i % 3}`), value: Buffer.from(`value ${i}`), headers: [{ key: 'h', value: Buffer.from(`h${i}`) }] });
const envOf = (r: E2eRecord) => decodeEnvelope(r.headers.find((h) => h.key === ENVELOPE_HEADER)!.value!);

/** A key reader that counts unwraps and can forget keys. */
function counting(inner: KeyReader): KeyReader & { unwraps: number; only: Set<string> | null } {
  const r = {
    unwraps: 0,
    only: null as Set<string> | null,
    publicKey: (id: string) => inner.publicKey(id),
    secret: (id: string) => inner.secret(id),
    unwrap: async (w: WrappedKey, id: Buffer) => {
      if (r.only !== null && !r.only.has(w.keyId)) return null;
      r.unwraps++;
      return inner.unwrap(w, id);
    },
  };
  return r;
}

describe('RecordEncryptor', () => {
  it('rotates its data key after rotateAfterRecords records and after rotateAfterMs', async () => {
    let now = 1_000;
    const e = new RecordEncryptor({ keys, recipients: ['a'], rotateAfterRecords: 3, rotateAfterMs: 500, now: () => now });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push(envOf(await e.encrypt('t', rec(i))).dataKeyId.toString('hex'));
    expect(new Set(ids.slice(0, 3)).size).toBe(1);
    expect(ids[3]).not.toBe(ids[2]);
    expect(new Set(ids.slice(3, 6)).size).toBe(1);
    expect(ids[6]).not.toBe(ids[5]);
    now += 499;
    const before = envOf(await e.encrypt('t', rec(7))).dataKeyId.toString('hex');
    expect(before).toBe(ids[6]);
    now += 1;
    expect(envOf(await e.encrypt('t', rec(8))).dataKeyId.toString('hex')).not.toBe(before);
  });

  it('counts concurrent records against the bound and never seals more than it allows under one key', async () => {
    const e = new RecordEncryptor({ keys, recipients: ['a'], rotateAfterRecords: 4 });
    const out = await Promise.all(Array.from({ length: 20 }, (_, i) => e.encrypt('t', rec(i))));
    const perKey = new Map<string, number>();
    for (const r of out) {
      const id = envOf(r).dataKeyId.toString('hex');
      perKey.set(id, (perKey.get(id) ?? 0) + 1);
    }
    expect([...perKey.values()].every((n) => n <= 4)).toBe(true);
    expect(perKey.size).toBe(5);
  });

  it('caps rotateAfterRecords at 2^30 and refuses no recipients', () => {
    expect(MAX_RECORDS_PER_DATA_KEY).toBe(2 ** 30);
    expect(() => new RecordEncryptor({ keys, recipients: [] })).toThrow(/at least one recipient/);
  });

  it('wraps every data key for every recipient, once, and gives every record a fresh nonce', async () => {
    const e = new RecordEncryptor({ keys, recipients: ['a', 'b'] });
    const r1 = envOf(await e.encrypt('t', rec(1)));
    const r2 = envOf(await e.encrypt('t', rec(2)));
    expect(r1.wrappedKeys.map((w) => w.keyId)).toEqual(['a', 'b']);
    expect(r1.wrappedKeys[0]!.wrapped.equals(r2.wrappedKeys[0]!.wrapped)).toBe(true);
    expect(r1.nonceBase.equals(r2.nonceBase)).toBe(false);
  });

  it('announces every n-th record of a topic and references the data key in between', async () => {
    const e = new RecordEncryptor({ keys, recipients: ['a'], announceEvery: 3 });
    const inline: boolean[] = [];
    for (let i = 0; i < 7; i++) inline.push(envOf(await e.encrypt('t', rec(i))).wrappedKeys.length > 0);
    expect(inline).toEqual([true, false, false, true, false, false, true]);
    expect(envOf(await e.encrypt('other', rec(0))).wrappedKeys.length).toBe(1);
  });

  it('fails clearly for an unknown recipient or pseudonym secret', async () => {
    await expect(new RecordEncryptor({ keys, recipients: ['nobody'] }).encrypt('t', rec(0))).rejects.toThrow('no public key for recipient nobody');
    await expect(new RecordEncryptor({ keys, recipients: ['a'], pseudonymKeyId: 'nope' }).encrypt('t', rec(0))).rejects.toThrow('no pseudonym secret nope');
  });
});

describe('RecordDecryptor', () => {
  it('unwraps a data key once and serves later records from the cache until its lifetime ends', async () => {
    let now = 0;
    const reader = counting(keys);
    const d = new RecordDecryptor({ keys: reader, cacheTtlMs: 1000, now: () => now });
    const e = new RecordEncryptor({ keys, recipients: ['a'] });
    for (let i = 0; i < 5; i++) expect((await d.decrypt('t', await e.encrypt('t', rec(i)))).record).toEqual(rec(i));
    expect(reader.unwraps).toBe(1);
    now = 1001;
    await d.decrypt('t', await e.encrypt('t', rec(9)));
    expect(reader.unwraps).toBe(2);
  });

  it('keeps at most cacheMaxKeys data keys', async () => {
    const d = new RecordDecryptor({ keys, cacheMaxKeys: 2 });
    for (let i = 0; i < 5; i++) {
      const e = new RecordEncryptor({ keys, recipients: ['a'] });
      await d.decrypt('t', await e.encrypt('t', rec(i)));
    }
    expect(d.cachedKeys).toBe(2);
  });

  it('opens a referencing record once the announcing one was read, and not before', async () => {
    const e = new RecordEncryptor({ keys, recipients: ['a'], announceEvery: 10 });
    const first = await e.encrypt('t', rec(0));
    const second = await e.encrypt('t', rec(1));
    await expect(new RecordDecryptor({ keys }).decrypt('t', second)).rejects.toMatchObject({ reason: 'unknown-data-key' });
    const d = new RecordDecryptor({ keys });
    await d.decrypt('t', first);
    expect((await d.decrypt('t', second)).record).toEqual(rec(1));
  });

  it('uses whichever recipient it holds, and applies FAIL, DISCARD and CONSUME when it holds none', async () => {
    const reader = counting(keys);
    const sealed = await new RecordEncryptor({ keys, recipients: ['a', 'b'], pseudonymKeyId: 'ps', sealHeaders: ['h'] }).encrypt('t', rec(4));
    reader.only = new Set(['b']);
    expect(await new RecordDecryptor({ keys: reader }).decrypt('t', sealed)).toEqual({ status: 'decrypted', record: rec(4) });
    reader.only = new Set();
    const fail = await new RecordDecryptor({ keys: reader }).decrypt('t', sealed).catch((e: unknown) => e);
    expect(fail).toBeInstanceOf(E2eError);
    expect((fail as E2eError).reason).toBe('no-key');
    expect(await new RecordDecryptor({ keys: reader, onFailure: 'DISCARD' }).decrypt('t', sealed)).toMatchObject({ status: 'failed', record: null });
    expect(await new RecordDecryptor({ keys: reader, onFailure: 'CONSUME' }).decrypt('t', sealed)).toMatchObject({ status: 'failed', record: sealed, error: { reason: 'no-key' } });
  });

  it('delivers a record without an envelope as plaintext, and refuses one moved to another topic', async () => {
    const d = new RecordDecryptor({ keys, onFailure: 'CONSUME' });
    expect(await d.decrypt('t', rec(1))).toEqual({ status: 'plaintext', record: rec(1) });
    const sealed = await new RecordEncryptor({ keys, recipients: ['a'] }).encrypt('t', rec(1));
    expect(await d.decrypt('t2', sealed)).toMatchObject({ status: 'failed', error: { reason: 'not-authentic' } });
  });

  it('keeps tombstones tombstones, with the pseudonym key restored', async () => {
    const tomb: E2eRecord = { key: Buffer.from('gone'), value: null, headers: [] };
    const sealed = await new RecordEncryptor({ keys, recipients: ['a'], pseudonymKeyId: 'ps' }).encrypt('t', tomb);
    expect(sealed.value).toBeNull();
    expect(sealed.key!.length).toBe(32);
    expect((await new RecordDecryptor({ keys }).decrypt('t', sealed)).record).toEqual(tomb);
  });
});
