import { pbkdf2Sync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { saslHandshake } from '../../../src/api/017-sasl-handshake.js';
import { saslAuthenticate } from '../../../src/api/036-sasl-authenticate.js';
import { describeUserScramCredentials } from '../../../src/api/050-describe-user-scram-credentials.js';
import { alterUserScramCredentials } from '../../../src/api/051-alter-user-scram-credentials.js';
import { openMetadataStore } from '../../../src/metadata/open-store.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { ScramCredentialStore } from '../../../src/security/scram-credentials.js';
import { requestContext } from './fakes.js';

let store: MetadataStore | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

describe('SaslHandshake and SaslAuthenticate outside the SASL exchange', () => {
  it('answer ILLEGAL_SASL_STATE, as Kafka does on an authenticated connection or a listener without SASL', () => {
    expect(saslHandshake.handle({ mechanism: 'PLAIN' }, requestContext({}, { apiVersion: 1 }))).toMatchObject({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] });
    expect(saslAuthenticate.handle({ authBytes: Buffer.alloc(0) }, requestContext({}, { apiVersion: 2 }))).toMatchObject({
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: 'SaslAuthenticate request received after successful authentication',
    });
  });
});

describe('AlterUserScramCredentials and DescribeUserScramCredentials', () => {
  it('store a credential and describe it from any broker on the store', async () => {
    store = await openMetadataStore({ store: 'memory', dir: '/unused' });
    const one = { scramCredentials: new ScramCredentialStore(store) };
    const other = { scramCredentials: new ScramCredentialStore(store) };
    const salt = Buffer.from('0123456789abcdef');
    const altered = await alterUserScramCredentials.handle(
      { deletions: [], upsertions: [{ name: 'alice', mechanism: 2, iterations: 8192, salt, saltedPassword: pbkdf2Sync('pw', salt, 8192, 64, 'sha512') }] },
      requestContext(one, { apiVersion: 0 }),
    );
    expect(altered).toMatchObject({ results: [{ user: 'alice', errorCode: 0, errorMessage: null }] });
    const all = await describeUserScramCredentials.handle({ users: null }, requestContext(other, { apiVersion: 0 }));
    expect(all).toMatchObject({ errorCode: 0, results: [{ user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 8192 }] }] });
  });
});
