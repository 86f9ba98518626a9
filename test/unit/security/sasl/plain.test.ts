import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { parseJaasConfig, parseSaslJaasConfig } from '../../../../src/security/jaas.js';
import { IllegalSaslStateError, SaslAuthenticationError } from '../../../../src/security/sasl/errors.js';
import { MAX_SASL_TOKEN_BYTES } from '../../../../src/security/sasl/mechanism.js';
import { jaasPlainVerifier, PLAIN_LOGIN_MODULE, PlainSaslServer, type PlainVerifier } from '../../../../src/security/sasl/plain.js';

const USERS = parseSaslJaasConfig(`${PLAIN_LOGIN_MODULE} required username="admin" password="admin-secret" user_userA="passwordA" user_userB="passwordB" user_jürgen="pässwörd";`);

function token(authzid: string, username: string, password: string): Buffer {
  return Buffer.from(`${authzid}\0${username}\0${password}`, 'utf8');
}

function server(verify: PlainVerifier = jaasPlainVerifier([USERS])): PlainSaslServer {
  return new PlainSaslServer(verify);
}

/** The error `evaluate` rejects with. */
async function refusal(s: PlainSaslServer, t: Buffer): Promise<SaslAuthenticationError | IllegalSaslStateError> {
  const err: unknown = await s.evaluate(t).then(
    () => {
      throw new Error('accepted');
    },
    (e: unknown) => e,
  );
  expect(err instanceof SaslAuthenticationError || err instanceof IllegalSaslStateError).toBe(true);
  return err as SaslAuthenticationError | IllegalSaslStateError;
}

async function refusalMessage(t: Buffer, verify?: PlainVerifier): Promise<string> {
  const err = await refusal(server(verify), t);
  expect(err).toBeInstanceOf(SaslAuthenticationError);
  return err.message;
}

describe('PlainSaslServer', () => {
  it('authenticates a user without an authorization id, answering an empty token', async () => {
    const s = server();
    expect(s.complete).toBe(false);
    expect(await s.evaluate(token('', 'userA', 'passwordA'))).toEqual(Buffer.alloc(0));
    expect(s.complete).toBe(true);
    expect(s.authorizationId).toBe('userA');
    expect(s.mechanism).toBe('PLAIN');
    expect(s.extensions.size).toBe(0);
  });

  it('authenticates a user whose authorization id is the user name', async () => {
    const s = server();
    await s.evaluate(token('userB', 'userB', 'passwordB'));
    expect(s.authorizationId).toBe('userB');
  });

  it('reads names and passwords as UTF-8', async () => {
    const s = server();
    await s.evaluate(token('', 'jürgen', 'pässwörd'));
    expect(s.authorizationId).toBe('jürgen');
  });

  it('gives the verifier the user name and the password bytes exactly as sent', async () => {
    const verify = vi.fn<PlainVerifier>(() => true);
    const password = Buffer.from([0x70, 0xff, 0xfe, 0x71]); // not UTF-8
    await server(verify).evaluate(Buffer.concat([Buffer.from('\0alice\0'), password]));
    expect(verify).toHaveBeenCalledOnce();
    expect(verify.mock.calls[0][0]).toBe('alice');
    expect(Buffer.from(verify.mock.calls[0][1])).toEqual(password);
  });

  it('waits for an asynchronous verifier', async () => {
    const s = server(async (u, p) => u === 'bob' && p.equals(Buffer.from('hunter2')));
    await s.evaluate(token('', 'bob', 'hunter2'));
    expect(s.complete).toBe(true);
  });

  it('refuses an authorization id other than the user name', async () => {
    expect(await refusalMessage(token('userB', 'userA', 'passwordA'))).toBe('Authentication failed: Client requested an authorization id that is different from username');
  });

  it('refuses a wrong password and an unknown user with the same message', async () => {
    expect(await refusalMessage(token('', 'userA', 'passwordB'))).toBe('Authentication failed: Invalid username or password');
    expect(await refusalMessage(token('', 'userA', 'passwordA '))).toBe('Authentication failed: Invalid username or password');
    expect(await refusalMessage(token('', 'nobody', 'passwordA'))).toBe('Authentication failed: Invalid username or password');
    // A user of the JAAS config's own login (username/password options) is not a PLAIN user.
    expect(await refusalMessage(token('', 'admin', 'admin-secret'))).toBe('Authentication failed: Invalid username or password');
  });

  it("refuses empty fields with Kafka's messages (PlainSaslServerTest.emptyTokens)", async () => {
    const cases: [Buffer, string][] = [
      [token('', '', ''), 'Authentication failed: username not specified'],
      [token('', '', 'p'), 'Authentication failed: username not specified'],
      [token('', 'u', ''), 'Authentication failed: password not specified'],
      [token('a', '', ''), 'Authentication failed: username not specified'],
      [token('a', '', 'p'), 'Authentication failed: username not specified'],
      [token('a', 'u', ''), 'Authentication failed: password not specified'],
      [Buffer.from('a\0u\0p\0'), 'Invalid SASL/PLAIN response: expected 3 tokens, got 4'],
      [Buffer.from('a\0u\0p\0x\0y'), 'Invalid SASL/PLAIN response: expected 3 tokens, got 4'],
      [Buffer.from('\0u'), 'Invalid SASL/PLAIN response: expected 3 tokens, got 2'],
      [Buffer.from('userA'), 'Invalid SASL/PLAIN response: expected 3 tokens, got 1'],
      [Buffer.alloc(0), 'Invalid SASL/PLAIN response: expected 3 tokens, got 1'],
    ];
    for (const [t, message] of cases) expect(await refusalMessage(t)).toBe(message);
  });

  it('refuses with "could not be verified" when the verifier throws, keeping the cause', async () => {
    const cause = new Error('user store unavailable');
    const err = await refusal(
      server(() => {
        throw cause;
      }),
      token('', 'userA', 'passwordA'),
    );
    expect(err.message).toBe('Authentication failed: credentials for user could not be verified');
    expect(err.cause).toBe(cause);
  });

  it('refuses a token over the size limit without verifying it', async () => {
    const verify = vi.fn<PlainVerifier>(() => true);
    const big = token('', 'userA', 'x'.repeat(MAX_SASL_TOKEN_BYTES));
    expect(await refusalMessage(big, verify)).toBe(`Invalid SASL/PLAIN response: ${big.length} bytes, more than the ${MAX_SASL_TOKEN_BYTES} accepted`);
    expect(verify).not.toHaveBeenCalled();
    // RFC 4616's 255 octets per field are well within it.
    await server(() => true).evaluate(token('a'.repeat(255), 'a'.repeat(255), 'p'.repeat(255)));
  });

  it('refuses a token after completion', async () => {
    const s = server();
    await s.evaluate(token('', 'userA', 'passwordA'));
    const err = await refusal(s, token('', 'userA', 'passwordA'));
    expect(err).toBeInstanceOf(IllegalSaslStateError);
    expect(err.message).toBe('Unexpected challenge in Sasl server state COMPLETE');
    expect(err.kafkaErrorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    expect(s.complete).toBe(false);
  });

  it('refuses a token after a failure, even a valid one', async () => {
    const s = server();
    await refusal(s, token('', 'userA', 'wrong'));
    const err = await refusal(s, token('', 'userA', 'passwordA'));
    expect(err).toBeInstanceOf(IllegalSaslStateError);
    expect(err.message).toBe('Unexpected challenge in Sasl server state FAILED');
  });

  it('refuses a token sent while the previous one is being verified, and fails both', async () => {
    let release!: (ok: boolean) => void;
    const s = server(() => new Promise<boolean>((r) => (release = r)));
    const first = s.evaluate(token('', 'userA', 'passwordA'));
    const second = await refusal(s, token('', 'userA', 'passwordA'));
    expect(second.message).toBe('Unexpected challenge in Sasl server state VERIFYING');
    release(true);
    await expect(first).rejects.toBeInstanceOf(IllegalSaslStateError);
    expect(s.complete).toBe(false);
  });

  it('has no authorization id or extensions before completion', () => {
    const s = server();
    expect(() => s.authorizationId).toThrow(IllegalSaslStateError);
    expect(() => s.extensions).toThrow(IllegalSaslStateError);
  });

  it('refuses with SASL_AUTHENTICATION_FAILED, naming the mechanism and never the password', async () => {
    const err = await refusal(server(), token('', 'userA', 'hunter2-secret'));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.code).toBe('LL_ERR_SASL_AUTHENTICATION');
    expect(err.kafkaErrorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect((err as SaslAuthenticationError).mechanism).toBe('PLAIN');
    expect(JSON.stringify({ message: err.message, reason: (err as SaslAuthenticationError).reason })).not.toContain('hunter2');
  });
});

describe('jaasPlainVerifier', () => {
  it("takes users only from PlainLoginModule entries, the first entry naming a user winning (JaasContext.configEntryOption)", async () => {
    const entries = parseJaasConfig(
      [
        'org.example.OtherModule required user_carol="other";',
        `${PLAIN_LOGIN_MODULE} required user_alice="first";`,
        `${PLAIN_LOGIN_MODULE} optional user_alice="second" user_carol="plain";`,
      ].join('\n'),
    );
    const verify = jaasPlainVerifier(entries);
    expect(await verify('alice', Buffer.from('first'))).toBe(true);
    expect(await verify('alice', Buffer.from('second'))).toBe(false);
    expect(await verify('carol', Buffer.from('plain'))).toBe(true);
    expect(await verify('carol', Buffer.from('other'))).toBe(false);
  });

  it('knows no user without a PlainLoginModule entry', async () => {
    const verify = jaasPlainVerifier(parseJaasConfig('org.example.OtherModule required user_alice="pw";'));
    expect(await verify('alice', Buffer.from('pw'))).toBe(false);
  });

  it('never accepts a wrong password, and always the right one', async () => {
    const name = fc.string({ unit: 'binary', minLength: 1, maxLength: 16 }).filter((s) => !s.includes('\0'));
    const password = fc.string({ unit: 'binary', minLength: 1, maxLength: 24 }).filter((s) => !s.includes('\0'));
    const quote = (v: string): string => `"${v.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, '\\n').replace(/\r/g, '\\r')}"`;
    await fc.assert(
      fc.asyncProperty(name, password, fc.option(password), async (user, right, other) => {
        const attempt = other ?? right;
        const entry = parseSaslJaasConfig(`${PLAIN_LOGIN_MODULE} required ${quote(`user_${user}`)}=${quote(right)};`);
        const s = new PlainSaslServer(jaasPlainVerifier([entry]));
        const outcome = await s.evaluate(token('', user, attempt)).then(
          () => 'accepted',
          (e: unknown) => (e as Error).message,
        );
        expect(outcome).toBe(attempt === right ? 'accepted' : 'Authentication failed: Invalid username or password');
      }),
      { numRuns: 500 },
    );
  });
});
