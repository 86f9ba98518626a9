import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { JwksError, JwtValidationError, type ValidatedToken } from '../../../../src/security/jwks.js';
import { JwtValidator } from '../../../../src/security/jwt-validator.js';
import { IllegalSaslStateError, SaslAuthenticationError } from '../../../../src/security/sasl/errors.js';
import {
  MAX_OAUTHBEARER_RESPONSE_BYTES,
  OAUTHBEARER_MECHANISM,
  OAuthBearerSaslServer,
  oauthBearerErrorChallenge,
  parseClientInitialResponse,
  type OAuthBearerTokenValidator,
} from '../../../../src/security/sasl/oauthbearer.js';

const GENERIC = 'Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER';
const NOW_MS = 1_700_000_000_000;
const NOW = NOW_MS / 1000;

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An unsecured token as Kafka's OAuthBearerUnsecuredLoginCallbackHandler writes one. */
function unsecuredToken(claims: Record<string, unknown>): string {
  return `${b64({ alg: 'none' })}.${b64({ iat: NOW - 10, exp: NOW + 3600, ...claims })}.`;
}

/** The client's first message, as OAuthBearerClientInitialResponse.toBytes writes it. */
function clientFirst(token: string, options: { authzid?: string; extensions?: Record<string, string>; scheme?: string } = {}): Buffer {
  const gs2 = options.authzid === undefined ? 'n,,' : `n,a=${options.authzid},`;
  const extensions = Object.entries(options.extensions ?? {}).map(([k, v]) => `\x01${k}=${v}`).join('');
  return Buffer.from(`${gs2}\x01auth=${options.scheme ?? 'Bearer'} ${token}${extensions}\x01\x01`, 'latin1');
}

const ACK = Buffer.from([0x01]);

const unsecured = JwtValidator.unsecured({ requiredScope: ['kafka'] }, { now: () => NOW_MS });
const validate: OAuthBearerTokenValidator = (token) => unsecured.validate(token);
const alice = unsecuredToken({ sub: 'alice', scope: 'kafka' });

async function failure(server: OAuthBearerSaslServer, response: Buffer): Promise<SaslAuthenticationError | IllegalSaslStateError> {
  const err: unknown = await server.evaluate(response).then(
    () => {
      throw new Error('the response was accepted');
    },
    (e: unknown) => e,
  );
  expect(err instanceof SaslAuthenticationError || err instanceof IllegalSaslStateError).toBe(true);
  return err as SaslAuthenticationError | IllegalSaslStateError;
}

/** The SaslException-like refusal: generic text for the client, Kafka's message as the reason. */
async function malformed(response: Buffer): Promise<string | undefined> {
  const err = await failure(new OAuthBearerSaslServer(validate), response);
  expect(err).toBeInstanceOf(SaslAuthenticationError);
  expect(err.message).toBe(GENERIC);
  return (err as SaslAuthenticationError).reason;
}

describe('OAuthBearerSaslServer', () => {
  it('authenticates a valid token in one step: empty answer, the principal, the token lifetime', async () => {
    const server = new OAuthBearerSaslServer(validate);
    expect(server.mechanism).toBe(OAUTHBEARER_MECHANISM);
    expect(server.complete).toBe(false);
    expect(() => server.authorizationId).toThrow(IllegalSaslStateError);
    expect(() => server.extensions).toThrow(IllegalSaslStateError);
    expect(() => server.credentialLifetimeMs).toThrow(IllegalSaslStateError);
    expect(await server.evaluate(clientFirst(alice))).toEqual(Buffer.alloc(0));
    expect(server.complete).toBe(true);
    expect(server.authorizationId).toBe('alice');
    expect(server.extensions).toEqual(new Map());
    expect(server.token).toEqual({ principalName: 'alice', scope: ['kafka'], lifetimeMs: (NOW + 3600) * 1000, startTimeMs: (NOW - 10) * 1000 });
    expect(server.credentialLifetimeMs).toBe((NOW + 3600) * 1000);
  });

  it('exposes SASL extensions, all accepted as Kafka accepts them, auth excluded, the last of a repeated key', async () => {
    const server = new OAuthBearerSaslServer(validate);
    await server.evaluate(clientFirst(alice, { extensions: { traceId: 'abc 123', logicalCluster: 'lkc-1=x', Zone: 'a\tb' } }));
    expect(server.extensions).toEqual(new Map([['traceId', 'abc 123'], ['logicalCluster', 'lkc-1=x'], ['Zone', 'a\tb']]));
    const parsed = parseClientInitialResponse(Buffer.from(`n,,\x01k=1\x01auth=bearer ${alice}\x01k=2\x01\x01`, 'latin1'));
    expect(parsed).toEqual({ tokenValue: alice, authorizationId: '', extensions: new Map([['k', '2']]) });
  });

  it('accepts an authzid naming the principal (decoded), and refuses another with Kafka message', async () => {
    const server = new OAuthBearerSaslServer(validate);
    await server.evaluate(clientFirst(alice, { authzid: 'alice' }));
    expect(server.authorizationId).toBe('alice');
    const odd = new OAuthBearerSaslServer(validate);
    await odd.evaluate(clientFirst(unsecuredToken({ sub: 'a,b=c', scope: 'kafka' }), { authzid: 'a=2Cb=3Dc' }));
    expect(odd.authorizationId).toBe('a,b=c');
    const err = await failure(new OAuthBearerSaslServer(validate), clientFirst(alice, { authzid: 'admin' }));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe("Authentication failed: Client requested an authorization id (admin) that is different from the token's principal name (alice)");
  });

  it('answers a refused token with the invalid_token challenge, then fails on %x01 with the challenge as message', async () => {
    const server = new OAuthBearerSaslServer(validate);
    const expired = unsecuredToken({ sub: 'alice', scope: 'kafka', exp: NOW - 1 });
    const challenge = await server.evaluate(clientFirst(expired));
    expect(challenge.toString('utf8')).toBe('{"status":"invalid_token"}');
    expect(server.complete).toBe(false);
    const err = await failure(server, ACK);
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe('{"status":"invalid_token"}');
    expect(err.kafkaErrorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    // Why, for the log, and kept on re-authentication (Kafka sends the challenge there too).
    expect((err as SaslAuthenticationError).reason).toMatch(/^The indicated time .* was on or after the Expiration Time value/);
    expect((err as SaslAuthenticationError).duringReauthentication().message).toBe('{"status":"invalid_token"}');
    expect(err.message + String((err as SaslAuthenticationError).reason)).not.toContain(expired);
    expect(await failure(server, ACK)).toBeInstanceOf(IllegalSaslStateError);
  });

  it('answers insufficient_scope with the required scope, as the unsecured validator reports it', async () => {
    const server = new OAuthBearerSaslServer(validate);
    const challenge = await server.evaluate(clientFirst(unsecuredToken({ sub: 'alice', scope: 'other' })));
    expect(challenge.toString('utf8')).toBe('{"status":"insufficient_scope", "scope":"[kafka]"}');
    expect(oauthBearerErrorChallenge('invalid_token', null, 'https://idp.example/.well-known/openid-configuration')).toBe(
      '{"status":"invalid_token", "openid-configuration":"https://idp.example/.well-known/openid-configuration"}',
    );
  });

  it('fails when the client answers the error challenge with anything but %x01', async () => {
    const server = new OAuthBearerSaslServer(validate);
    await server.evaluate(clientFirst('a.b.c'));
    const err = await failure(server, clientFirst(alice));
    expect(err).toBeInstanceOf(SaslAuthenticationError);
    expect(err.message).toBe('{"status":"invalid_token"}');
    expect((err as SaslAuthenticationError).reason).toContain('not %x01');
    expect(server.complete).toBe(false);
  });

  it('treats a validator failure other than a refused token as an internal error, told generically', async () => {
    const server = new OAuthBearerSaslServer(() => Promise.reject(new JwksError('Could not fetch the JWKS from https://idp.example/jwks: HTTP status 503')));
    const err = await failure(server, clientFirst(alice));
    expect(err.message).toBe(GENERIC);
    expect((err as SaslAuthenticationError).reason).toBe(
      'Authentication could not be performed due to an internal error on the server: Could not fetch the JWKS from https://idp.example/jwks: HTTP status 503',
    );
  });

  it('refuses malformed first messages with Kafka reasons behind the generic text', async () => {
    expect(await malformed(Buffer.from(`n,,auth=Bearer ${alice}\x01\x01`))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from(`y,,\x01auth=Bearer ${alice}\x01\x01`))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from(`n,,\x01auth=Bearer ${alice}\x01`))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from(`n,,\x01auth1=Bearer ${alice}\x01\x01`))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from(`n,,\x01auth=Bearer ${alice}\x01k=\x00\x01\x01`, 'latin1'))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from(`n,,\x01auth=Bearer ${alice}\x01k=caf\u00e9\x01\x01`, 'utf8'))).toBe('Invalid OAUTHBEARER client first message');
    expect(await malformed(Buffer.from('n,,\x01token=x\x01\x01'))).toBe("Invalid OAUTHBEARER client first message: 'auth' not specified");
    expect(await malformed(Buffer.from('n,,\x01auth=Bearer\x01\x01'))).toBe("Invalid OAUTHBEARER client first message: invalid 'auth' format");
    expect(await malformed(Buffer.from('n,,\x01auth=Bearer a=b\x01\x01'))).toBe("Invalid OAUTHBEARER client first message: invalid 'auth' format");
    expect(await malformed(clientFirst(alice, { scheme: 'Basic' }))).toBe('Invalid scheme in OAUTHBEARER client first message: Basic');
    expect(await malformed(Buffer.from([0x01]))).toBe('Invalid OAUTHBEARER client first message');
  });

  it('refuses a first message over MAX_OAUTHBEARER_RESPONSE_BYTES before reading it', async () => {
    const big = clientFirst('x'.repeat(MAX_OAUTHBEARER_RESPONSE_BYTES));
    const err = await failure(new OAuthBearerSaslServer(() => Promise.reject(new Error('not called'))), big);
    expect(err.message).toBe(`Invalid OAUTHBEARER client first message: ${big.length} bytes, more than the ${MAX_OAUTHBEARER_RESPONSE_BYTES} accepted`);
  });

  it('refuses any token after completion or failure, and one sent while a token is validated', async () => {
    const done = new OAuthBearerSaslServer(validate);
    await done.evaluate(clientFirst(alice));
    const late = await failure(done, clientFirst(alice));
    expect(late).toBeInstanceOf(IllegalSaslStateError);
    expect(late.message).toBe('Unexpected challenge in Sasl server state COMPLETE');
    expect(done.complete).toBe(false);

    const failed = new OAuthBearerSaslServer(validate);
    await failure(failed, Buffer.from('garbage'));
    expect((await failure(failed, clientFirst(alice))).message).toBe('Unexpected challenge in Sasl server state FAILED');

    let release!: (t: ValidatedToken) => void;
    const slow = new OAuthBearerSaslServer(() => new Promise<ValidatedToken>((resolve) => (release = resolve)));
    const first = slow.evaluate(clientFirst(alice));
    const second = await failure(slow, clientFirst(alice));
    expect(second.message).toBe('Unexpected challenge in Sasl server state VALIDATING');
    release({ principalName: 'alice', scope: [], lifetimeMs: NOW_MS + 1000, startTimeMs: null });
    await expect(first).rejects.toBeInstanceOf(IllegalSaslStateError);
    expect(slow.complete).toBe(false);
  });

  it('never puts the token in a message or reason', async () => {
    const secret = `${b64({ alg: 'none' })}.${b64({ sub: 'alice', exp: 'tomorrow' })}.`;
    const server = new OAuthBearerSaslServer(validate);
    await server.evaluate(clientFirst(secret));
    const err = (await failure(server, ACK)) as SaslAuthenticationError;
    expect(`${err.message} ${err.reason} ${(err.cause as JwtValidationError).message}`).not.toContain(secret);
    const scheme = (await failure(new OAuthBearerSaslServer(validate), clientFirst(secret, { scheme: 'Token' }))) as SaslAuthenticationError;
    expect(`${scheme.message} ${scheme.reason}`).not.toContain(secret);
  });

  it('evaluates any bytes without crashing: only SaslAuthenticationError or IllegalSaslStateError', async () => {
    const fragment = fc.constantFrom('n', ',', 'a=', '=2C', '=3D', 'y', '\x01', 'auth', '=', 'Bearer ', 'bearer', ' ', alice, 'k', 'v', '\x00', '\t', '\u00ff', '.');
    const structured = fc.array(fragment, { maxLength: 20 }).map((parts) => Buffer.from(parts.join(''), 'latin1'));
    const response = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), structured);
    await fc.assert(
      fc.asyncProperty(fc.array(response, { minLength: 1, maxLength: 3 }), async (responses) => {
        const server = new OAuthBearerSaslServer(validate);
        for (const r of responses) {
          try {
            const answer = await server.evaluate(r);
            expect(Buffer.isBuffer(answer)).toBe(true);
          } catch (err) {
            expect(err instanceof SaslAuthenticationError || err instanceof IllegalSaslStateError).toBe(true);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('parses every well-formed first message it is given back', () => {
    const key = fc.stringMatching(/^[A-Za-z]{1,8}$/).filter((k) => k !== 'auth');
    const value = fc.stringMatching(/^[\x21-\x7E \t\r\n]{1,20}$/);
    const token = fc.stringMatching(/^[-_~+/.a-zA-Z0-9]{1,40}={0,2}$/);
    const authzid = fc.option(fc.stringMatching(/^(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D){1,10}$/), { nil: undefined });
    fc.assert(
      fc.property(token, authzid, fc.dictionary(key, value, { maxKeys: 4 }), (t, a, extensions) => {
        const parsed = parseClientInitialResponse(clientFirst(t, { authzid: a, extensions }));
        expect(parsed.tokenValue).toBe(t);
        expect(parsed.authorizationId).toBe(a === undefined ? '' : a.replace(/=2C|=3D/g, (e) => (e === '=2C' ? ',' : '=')));
        expect(parsed.extensions).toEqual(new Map(Object.entries(extensions)));
      }),
      { numRuns: 300 },
    );
  });
});
