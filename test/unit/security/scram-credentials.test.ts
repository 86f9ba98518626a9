import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import { ScramCredentialStore } from '../../../src/security/scram-credentials.js';
import { scramCredential } from '../../../src/security/sasl/scram.js';

let store: MetadataStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

async function open(): Promise<ScramCredentialStore> {
  store = await openMetadataStore({ store: 'memory', dir: '/unused' });
  return new ScramCredentialStore(store);
}

const upsertion = (name: string, password: string, mechanism: number, iterations = 4096) => {
  const salt = randomBytes(16);
  const hash = mechanism === 1 ? 'sha256' : 'sha512';
  return { name, mechanism, iterations, salt, saltedPassword: pbkdf2Sync(password, salt, iterations, mechanism === 1 ? 32 : 64, hash) };
};

describe('ScramCredentialStore', () => {
  it('stores what SCRAM derives from the salted password, never the password or the salted password', async () => {
    const creds = await open();
    const u = upsertion('alice', 'pencil', 2, 8192);
    expect(await creds.alter([], [u])).toEqual([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    const c = await creds.credential('alice', 'SCRAM-SHA-512');
    expect(c).toEqual(scramCredential('SCRAM-SHA-512', 'pencil', Buffer.from(u.salt), 8192));
    expect(await creds.credential('alice', 'SCRAM-SHA-256')).toBeUndefined();
    const raw = (await store!.get('/users/alice'))!.value;
    expect(Buffer.from(raw).includes(Buffer.from(u.saltedPassword).toString('base64'))).toBe(false);
    expect(Buffer.from(raw).includes('pencil')).toBe(false);
  });

  it('describes every user, or the ones named, as Kafka\'s ScramImage does', async () => {
    const creds = await open();
    await creds.alter([], [upsertion('alice', 'a', 1), upsertion('bob', 'b', 2, 5000)]);
    await creds.alter([], [upsertion('alice', 'a', 2)]);
    const all = await creds.describe(null);
    expect(all.map((d) => d.user).sort()).toEqual(['alice', 'bob']);
    expect(all.find((d) => d.user === 'alice')!.credentials).toEqual([{ mechanism: 1, iterations: 4096 }, { mechanism: 2, iterations: 4096 }]);
    const some = await creds.describe(['bob', 'bob', 'carol']);
    expect(some).toEqual([
      { user: 'bob', errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'Cannot describe SCRAM credentials for the same user twice in a single request: bob', credentials: [] },
      { user: 'carol', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: carol', credentials: [] },
    ]);
  });

  it('validates an alteration as ScramControlManager does, per user', async () => {
    const creds = await open();
    await creds.alter([], [upsertion('alice', 'a', 2)]);
    const results = await creds.alter(
      [{ name: 'alice', mechanism: 1 }, { name: 'twice', mechanism: 2 }, { name: '', mechanism: 2 }],
      [upsertion('twice', 'x', 2), upsertion('weird', 'x', 3), upsertion('few', 'x', 2, 100), upsertion('many', 'x', 2, 20000)],
    );
    const byUser = new Map(results.map((r) => [r.user, r]));
    expect(byUser.get('alice')).toEqual({ user: 'alice', errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' });
    expect(byUser.get('twice')).toMatchObject({ errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' });
    expect(byUser.get('')).toMatchObject({ errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' });
    expect(byUser.get('weird')).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' });
    expect(byUser.get('few')).toMatchObject({ errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' });
    expect(byUser.get('many')).toMatchObject({ errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' });
    expect((await creds.describe(null)).map((d) => d.user)).toEqual(['alice']);
  });

  it('deletes one mechanism, and the user record with the last one', async () => {
    const creds = await open();
    await creds.alter([], [upsertion('alice', 'a', 1)]);
    await creds.alter([], [upsertion('alice', 'a', 2)]);
    expect(await creds.alter([{ name: 'alice', mechanism: 1 }], [])).toEqual([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    expect((await creds.describe(['alice']))[0]!.credentials).toEqual([{ mechanism: 2, iterations: 4096 }]);
    await creds.alter([{ name: 'alice', mechanism: 2 }], []);
    expect(await store!.get('/users/alice')).toBeNull();
    expect(await creds.describe(null)).toEqual([]);
  });

  it('keeps user names that are not path-safe in one key', async () => {
    const creds = await open();
    await creds.alter([], [upsertion('CN=a/b,O=x', 'p', 2)]);
    expect((await creds.describe(null)).map((d) => d.user)).toEqual(['CN=a/b,O=x']);
    expect(await creds.credential('CN=a/b,O=x', 'SCRAM-SHA-512')).toBeDefined();
  });
});
