import { createHash, createHmac, pbkdf2Sync } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { IllegalSaslStateError, SaslAuthenticationError } from '../../../../src/security/sasl/errors.js';
import { MAX_SASL_TOKEN_BYTES } from '../../../../src/security/sasl/mechanism.js';
import {
  isScramMechanism,
  MAX_SCRAM_ITERATIONS,
  MIN_SCRAM_ITERATIONS,
  SCRAM_HASH,
  scramCredential,
  scramCredentialOffLoop,
  scramCredentialFromSaltedPassword,
  type ScramCredential,
  type ScramCredentialLookup,
  type ScramMechanismName,
  ScramSaslServer,
  scramSaslName,
  scramUsername,
} from '../../../../src/security/sasl/scram.js';

const MECHANISMS: ScramMechanismName[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];
const SALT = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');

/**
 * A SCRAM client written from RFC 5802 alone (its own escaping, hashing and message building), so that the server
 * is checked against the RFC rather than against itself.
 */
function scramClient(
  mechanism: ScramMechanismName,
  username: string,
  password: string,
  options: { nonce?: string; authzid?: string; extensions?: string } = {},
) {
  const hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512';
  const escape = (name: string): string => name.replace(/=/g, '=3D').replace(/,/g, '=2C');
  const gs2Header = options.authzid === undefined ? 'n,,' : `n,a=${escape(options.authzid)},`;
  const bare = `n=${escape(username)},r=${options.nonce ?? 'fyko+d2lbbFgONRv9qkxdawL'}${options.extensions ?? ''}`;
  const hmac = (key: Buffer, text: string): Buffer => createHmac(hash, key).update(text, 'utf8').digest();
  return {
    first: Buffer.from(gs2Header + bare, 'utf8'),
    /** The client-final message for `serverFirst`, and the server-final message the server must answer. */
    final(serverFirst: Buffer, finalOptions: { channelBinding?: string; nonce?: string; proof?: (proof: Buffer) => Buffer } = {}) {
      const text = serverFirst.toString('utf8');
      const attrs = Object.fromEntries(text.split(',').map((a) => [a[0], a.slice(2)]));
      const saltedPassword = pbkdf2Sync(Buffer.from(password, 'utf8'), Buffer.from(attrs.s, 'base64'), Number(attrs.i), hash === 'sha256' ? 32 : 64, hash);
      const clientKey = hmac(saltedPassword, 'Client Key');
      const storedKey = createHash(hash).update(clientKey).digest();
      const withoutProof = `c=${finalOptions.channelBinding ?? Buffer.from(gs2Header).toString('base64')},r=${finalOptions.nonce ?? attrs.r}`;
      const authMessage = `${bare},${text},${withoutProof}`;
      const signature = hmac(storedKey, authMessage);
      let proof: Buffer = Buffer.from(clientKey.map((b, i) => b ^ signature[i]));
      if (finalOptions.proof) proof = finalOptions.proof(proof);
      return {
        message: Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8'),
        expectedServerFinal: `v=${hmac(hmac(saltedPassword, 'Server Key'), authMessage).toString('base64')}`,
      };
    },
  };
}

/** A lookup of `users` (name → password), with credentials made for `mechanism` at `iterations`. */
function lookupOf(mechanism: ScramMechanismName, users: Record<string, string>, iterations = MIN_SCRAM_ITERATIONS): ScramCredentialLookup {
  const credentials = new Map(Object.entries(users).map(([name, password]) => [name, scramCredential(mechanism, password, SALT, iterations)]));
  return async (username) => credentials.get(username);
}

/** The error `evaluate` rejects with. */
async function refusal(server: ScramSaslServer, token: Buffer | string): Promise<SaslAuthenticationError | IllegalSaslStateError> {
  const err: unknown = await server.evaluate(Buffer.from(token)).then(
    () => {
      throw new Error('accepted');
    },
    (e: unknown) => e,
  );
  expect(err instanceof SaslAuthenticationError || err instanceof IllegalSaslStateError).toBe(true);
  return err as SaslAuthenticationError | IllegalSaslStateError;
}

/** A refusal the client learns nothing from: Kafka's generic text, with Kafka's SaslException message as the reason. */
async function expectGenericRefusal(server: ScramSaslServer, token: Buffer | string, reason: string | RegExp): Promise<SaslAuthenticationError> {
  const err = await refusal(server, token);
  expect(err).toBeInstanceOf(SaslAuthenticationError);
  expect(err.message).toBe(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${server.mechanism}`);
  expect((err as SaslAuthenticationError).reason).toMatch(reason);
  expect(server.complete).toBe(false);
  return err as SaslAuthenticationError;
}

describe('SCRAM credentials', () => {
  it("has Kafka's mechanisms, hashes and iteration bounds", () => {
    expect(SCRAM_HASH).toEqual({ 'SCRAM-SHA-256': 'sha256', 'SCRAM-SHA-512': 'sha512' });
    expect([MIN_SCRAM_ITERATIONS, MAX_SCRAM_ITERATIONS]).toEqual([4096, 16384]);
    expect(isScramMechanism('SCRAM-SHA-512')).toBe(true);
    expect(isScramMechanism('SCRAM-SHA-1')).toBe(false);
    expect(isScramMechanism('constructor')).toBe(false);
  });

  it.each(MECHANISMS)('derives the same %s credential from the password or the salted password', (mechanism) => {
    const hash = SCRAM_HASH[mechanism];
    const saltedPassword = pbkdf2Sync('pencil', SALT, 4096, hash === 'sha256' ? 32 : 64, hash);
    const fromPassword = scramCredential(mechanism, 'pencil', SALT, 4096);
    expect(scramCredentialFromSaltedPassword(mechanism, saltedPassword, SALT, 4096)).toEqual(fromPassword);
    expect(scramCredential(mechanism, Buffer.from('pencil'), SALT, 4096)).toEqual(fromPassword);
    expect(fromPassword.salt).toEqual(SALT);
    expect(fromPassword.iterations).toBe(4096);
    expect(fromPassword.storedKey.length).toBe(hash === 'sha256' ? 32 : 64);
    expect(fromPassword.serverKey.length).toBe(hash === 'sha256' ? 32 : 64);
  });

  it('refuses an iteration count that is not a positive integer', () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) expect(() => scramCredential('SCRAM-SHA-256', 'p', SALT, bad)).toThrow(RangeError);
  });
});

describe('saslname escaping', () => {
  it('escapes = and , as RFC 5802 does', () => {
    expect(scramSaslName('a=b,c')).toBe('a=3Db=2Cc');
    expect(scramUsername('a=3Db=2Cc')).toBe('a=b,c');
    expect(scramUsername('=2C3D')).toBe(',3D');
  });

  it('refuses a saslname with a raw comma or a stray =', () => {
    for (const bad of ['a,b', 'a=b', '=2D', '=', '=3', 'x=2c']) expect(scramUsername(bad)).toBeUndefined();
  });

  it('round-trips any user name, leaving no comma and only =2C / =3D escapes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), (name) => {
        const saslName = scramSaslName(name);
        expect(saslName).toMatch(/^(?:[^=,]|=2C|=3D)*$/);
        expect(scramUsername(saslName)).toBe(name);
      }),
      { numRuns: 1_000 },
    );
  });
});

describe('ScramSaslServer', () => {
  it('answers the RFC 7677 SCRAM-SHA-256 test vector exactly', async () => {
    const credential = scramCredential('SCRAM-SHA-256', 'pencil', SALT, 4096);
    const server = new ScramSaslServer('SCRAM-SHA-256', async (u) => (u === 'user' ? credential : undefined), { nonce: () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0' });
    const serverFirst = await server.evaluate(Buffer.from('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'));
    expect(serverFirst.toString()).toBe('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096');
    expect(server.complete).toBe(false);
    const serverFinal = await server.evaluate(Buffer.from('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='));
    expect(serverFinal.toString()).toBe('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=');
    expect(server.complete).toBe(true);
    expect(server.authorizationId).toBe('user');
    expect(server.extensions.size).toBe(0);
  });

  it.each(MECHANISMS)('completes a %s exchange with an RFC 5802 client, which verifies the server signature', async (mechanism) => {
    const server = new ScramSaslServer(mechanism, lookupOf(mechanism, { alice: 'alice-secret' }));
    const client = scramClient(mechanism, 'alice', 'alice-secret');
    const serverFirst = await server.evaluate(client.first);
    expect(serverFirst.toString()).toMatch(/^r=fyko\+d2lbbFgONRv9qkxdawL[0-9a-z]{1,26},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096$/);
    const { message, expectedServerFinal } = client.final(serverFirst);
    expect((await server.evaluate(message)).toString()).toBe(expectedServerFinal);
    expect(server.complete).toBe(true);
    expect(server.authorizationId).toBe('alice');
    expect(server.mechanism).toBe(mechanism);
  });

  it('draws a fresh server nonce for every exchange, as Kafka: 130 random bits in base 36', async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
      const serverFirst = (await server.evaluate(Buffer.from('n,,n=alice,r=abc'))).toString();
      nonces.add(/^r=abc([0-9a-z]+),/.exec(serverFirst)![1]);
    }
    expect(nonces.size).toBe(20);
    for (const n of nonces) expect(n).toMatch(/^[0-9a-z]{1,26}$/);
  });

  it('looks up the user name the saslname encodes, and accepts an authzid naming the same user', async () => {
    const lookup = vi.fn(lookupOf('SCRAM-SHA-512', { 'a,b=c': 'pw' }));
    const server = new ScramSaslServer('SCRAM-SHA-512', lookup);
    const client = scramClient('SCRAM-SHA-512', 'a,b=c', 'pw', { authzid: 'a,b=c' });
    expect(client.first.toString()).toBe('n,a=a=2Cb=3Dc,n=a=2Cb=3Dc,r=fyko+d2lbbFgONRv9qkxdawL');
    await server.evaluate(client.final(await server.evaluate(client.first)).message);
    expect(lookup).toHaveBeenCalledWith('a,b=c');
    expect(server.authorizationId).toBe('a,b=c');
  });

  it('negotiates tokenauth=false, ignores other extensions and signs the extensions as the client sent them', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const client = scramClient('SCRAM-SHA-256', 'alice', 'pw', { extensions: ',zeta=1,tokenauth=false,alpha=x=y' });
    const { message, expectedServerFinal } = client.final(await server.evaluate(client.first));
    expect((await server.evaluate(message)).toString()).toBe(expectedServerFinal);
    expect(Object.fromEntries(server.extensions)).toEqual({ tokenauth: 'false' });
  });

  it('refuses tokenauth=true as an unknown delegation token, without looking the user up', async () => {
    const lookup = vi.fn(lookupOf('SCRAM-SHA-256', { tokenid: 'hmac' }));
    const server = new ScramSaslServer('SCRAM-SHA-256', lookup);
    await expectGenericRefusal(server, 'n,,n=tokenid,r=abc,tokenauth=TRUE', 'Token Authentication failed: Invalid tokenId : tokenid');
    expect(lookup).not.toHaveBeenCalled();
  });

  it('refuses gs2 headers other than n (channel binding, missing parts) and the reserved m= attribute', async () => {
    for (const first of [
      'y,,n=user,r=abc',
      'p=tls-server-end-point,,n=user,r=abc',
      'n,n=user,r=abc',
      ',,n=user,r=abc',
      'n,,m=ext,n=user,r=abc',
      'n,,n=user',
      'n,,n=,r=abc',
      'n,,n=user,r=',
      'n,,n=user,r=a b',
      'n,,n=us=2Der,r=abc',
      'n,,n=jürgen,r=abc',
      'n,,n=user,r=abc,1=x',
      'n,,n=user,r=abc,',
      'n,a=,n=user,r=abc',
      '',
    ]) {
      const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { user: 'pencil' }));
      await expectGenericRefusal(server, first, `Invalid SCRAM client first message format: ${first}`);
    }
  });

  it('refuses an unknown user at the first message, telling the client what it tells a wrong password', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const unknown = await expectGenericRefusal(server, scramClient('SCRAM-SHA-256', 'mallory', 'pw').first, 'Authentication failed: Invalid user credentials');

    const other = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const client = scramClient('SCRAM-SHA-256', 'alice', 'wrong');
    const wrong = await expectGenericRefusal(other, client.final(await other.evaluate(client.first)).message, 'Invalid client credentials');
    expect(unknown.message).toBe(wrong.message);
  });

  it.each(MECHANISMS)('refuses a wrong password (%s)', async (mechanism) => {
    const server = new ScramSaslServer(mechanism, lookupOf(mechanism, { alice: 'alice-secret' }));
    const client = scramClient(mechanism, 'alice', 'alice-secreT');
    await expectGenericRefusal(server, client.final(await server.evaluate(client.first)).message, 'Invalid client credentials');
  });

  it('refuses a proof of the wrong length, or with one bit changed', async () => {
    for (const tamper of [(p: Buffer) => p.subarray(1), (p: Buffer) => Buffer.concat([p, p]), (p: Buffer) => Buffer.alloc(0), (p: Buffer) => Buffer.from(p.map((b, i) => (i === 7 ? b ^ 0x10 : b)))]) {
      const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
      const client = scramClient('SCRAM-SHA-256', 'alice', 'pw');
      await expectGenericRefusal(server, client.final(await server.evaluate(client.first), { proof: tamper }).message, 'Invalid client credentials');
    }
  });

  it('refuses a final nonce other than the one it sent, including one that merely ends with it (CVE-2024-56128)', async () => {
    const changes = [(n: string) => n.slice(1), (n: string) => `x${n}`, (n: string) => `${n}x`, (n: string) => n.replace('fyko', 'FYKO')];
    for (const change of changes) {
      const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
      const client = scramClient('SCRAM-SHA-256', 'alice', 'pw');
      const serverFirst = await server.evaluate(client.first);
      const sent = /^r=([^,]+)/.exec(serverFirst.toString())![1];
      await expectGenericRefusal(server, client.final(serverFirst, { nonce: change(sent) }).message, 'Invalid client nonce in the final client message.');
    }
  });

  it('refuses a channel binding that is not the gs2 header of the first message', async () => {
    for (const [authzid, channelBinding] of [
      [undefined, Buffer.from('y,,').toString('base64')],
      [undefined, ''],
      ['alice', 'biws'],
    ] as const) {
      const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
      const client = scramClient('SCRAM-SHA-256', 'alice', 'pw', { authzid });
      await expectGenericRefusal(
        server,
        client.final(await server.evaluate(client.first), { channelBinding }).message,
        'Invalid channel binding in the final client message: it is not the gs2 header of the first.',
      );
    }
  });

  it('refuses a malformed client-final message without repeating it', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const client = scramClient('SCRAM-SHA-256', 'alice', 'pw');
    const good = client.final(await server.evaluate(client.first)).message.toString();
    const bad = good.replace(',p=', ',p=@');
    const err = await expectGenericRefusal(server, bad, `Invalid SCRAM client final message format (${bad.length} bytes)`);
    expect(err.reason).not.toContain(good.slice(good.indexOf(',p=') + 3));
  });

  it('refuses an authorization id other than the user, telling the client so', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { userA: 'pw', userB: 'pw' }));
    const err = await refusal(server, scramClient('SCRAM-SHA-256', 'userA', 'pw', { authzid: 'userB' }).first);
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe('Authentication failed: Client requested an authorization id that is different from username');
    expect((err as SaslAuthenticationError).reason).toBeUndefined();
  });

  it('refuses a credential with fewer iterations than Kafka allows', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-512', lookupOf('SCRAM-SHA-512', { alice: 'pw' }, 4095));
    await expectGenericRefusal(server, scramClient('SCRAM-SHA-512', 'alice', 'pw').first, 'Iterations 4095 is less than the minimum 4096 for SCRAM_SHA_512');
  });

  it('refuses when the credential cannot be looked up, keeping the cause', async () => {
    const cause = new Error('metadata store unavailable');
    const server = new ScramSaslServer('SCRAM-SHA-256', () => Promise.reject(cause));
    const err = await expectGenericRefusal(server, 'n,,n=alice,r=abc', 'Authentication failed: Credentials could not be obtained');
    expect(err.cause).toBe(cause);
  });

  it('refuses a token over the size limit at either step, without looking the user up', async () => {
    const lookup = vi.fn(lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const first = Buffer.from(`n,,n=alice,r=${'a'.repeat(MAX_SASL_TOKEN_BYTES)}`);
    const err = await refusal(new ScramSaslServer('SCRAM-SHA-256', lookup), first);
    expect(err.message).toBe(`Invalid SCRAM client first message: ${first.length} bytes, more than the ${MAX_SASL_TOKEN_BYTES} accepted`);
    expect(lookup).not.toHaveBeenCalled();

    const server = new ScramSaslServer('SCRAM-SHA-256', lookup);
    await server.evaluate(Buffer.from('n,,n=alice,r=abc'));
    const final = Buffer.alloc(MAX_SASL_TOKEN_BYTES + 1, 'c');
    expect((await refusal(server, final)).message).toBe(`Invalid SCRAM client final message: ${final.length} bytes, more than the ${MAX_SASL_TOKEN_BYTES} accepted`);
    expect(server.complete).toBe(false);
  });

  it('refuses any token after completion, and fails the exchange as Kafka does', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    const client = scramClient('SCRAM-SHA-256', 'alice', 'pw');
    const { message } = client.final(await server.evaluate(client.first));
    await server.evaluate(message);
    const err = await refusal(server, message);
    expect(err).toBeInstanceOf(IllegalSaslStateError);
    expect(err.message).toBe('Unexpected challenge in Sasl server state COMPLETE');
    expect(err.kafkaErrorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(server.complete).toBe(false);
  });

  it('refuses any token after a failure', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    await refusal(server, 'n,,n=nobody,r=abc');
    const err = await refusal(server, scramClient('SCRAM-SHA-256', 'alice', 'pw').first);
    expect(err).toBeInstanceOf(IllegalSaslStateError);
    expect(err.message).toBe('Unexpected challenge in Sasl server state FAILED');
  });

  it('refuses a token sent while the credential is being looked up, and fails both', async () => {
    let answer!: (c: ScramCredential | undefined) => void;
    const server = new ScramSaslServer('SCRAM-SHA-256', () => new Promise((r) => (answer = r)));
    const first = server.evaluate(Buffer.from('n,,n=alice,r=abc'));
    const err = await refusal(server, 'n,,n=alice,r=abc');
    expect(err.message).toBe('Unexpected challenge in Sasl server state LOOKING_UP_CREDENTIAL');
    answer(scramCredential('SCRAM-SHA-256', 'pw', SALT, 4096));
    await expect(first).rejects.toBeInstanceOf(IllegalSaslStateError);
    expect(server.complete).toBe(false);
  });

  it('has no authorization id or extensions before completion', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-256', lookupOf('SCRAM-SHA-256', { alice: 'pw' }));
    await server.evaluate(Buffer.from('n,,n=alice,r=abc'));
    expect(() => server.authorizationId).toThrow(new IllegalSaslStateError('Authentication exchange has not completed'));
    expect(() => server.extensions).toThrow(IllegalSaslStateError);
  });

  it('words a generic refusal for re-authentication when asked, keeping the reason', async () => {
    const server = new ScramSaslServer('SCRAM-SHA-512', lookupOf('SCRAM-SHA-512', {}));
    const err = await expectGenericRefusal(server, 'n,,n=alice,r=abc', 'Authentication failed: Invalid user credentials');
    const reauth = err.duringReauthentication();
    expect(reauth.message).toBe('Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512');
    expect(reauth.reason).toBe(err.reason);
    expect(reauth.kafkaErrorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(reauth.code).toBe('LL_ERR_SASL_AUTHENTICATION');
  });

  it.each(MECHANISMS)('accepts the right password and only it, for any user name and password (%s)', async (mechanism) => {
    const printableName = fc.string({ unit: fc.integer({ min: 0x01, max: 0x7f }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 12 });
    const password = fc.string({ unit: 'binary', minLength: 1, maxLength: 16 });
    await fc.assert(
      fc.asyncProperty(printableName, password, fc.option(password), async (user, right, other) => {
        const attempt = other ?? right;
        const server = new ScramSaslServer(mechanism, lookupOf(mechanism, { [user]: right }));
        const client = scramClient(mechanism, user, attempt);
        const { message, expectedServerFinal } = client.final(await server.evaluate(client.first));
        const outcome = await server.evaluate(message).then(
          (serverFinal) => serverFinal.toString(),
          (e: unknown) => (e as SaslAuthenticationError).reason,
        );
        expect(outcome).toBe(attempt === right ? expectedServerFinal : 'Invalid client credentials');
        if (attempt === right) expect(server.authorizationId).toBe(user);
      }),
      { numRuns: 15 },
    );
  });
});

describe('scramCredentialOffLoop', () => {
  it('derives what scramCredential derives, for both mechanisms', async () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      expect(await scramCredentialOffLoop(mechanism, Buffer.from('pencil'), salt, 4096)).toEqual(scramCredential(mechanism, 'pencil', salt, 4096));
    }
    await expect(scramCredentialOffLoop('SCRAM-SHA-256', Buffer.from('p'), salt, 0)).rejects.toThrow(RangeError);
  });
});
