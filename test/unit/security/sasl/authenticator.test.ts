import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ApiDescriptor } from '../../../../protocol/api.js';
import { ErrorCode } from '../../../../protocol/error-codes.js';
import { decodeResponseFrame, encodeRequestFrame } from '../../../../protocol/headers.js';
import { ApiVersionsApi, createApiVersionsRequest } from '../../../../protocol/messages/018-api-versions.gen.js';
import { MetadataApi, createMetadataRequest } from '../../../../protocol/messages/003-metadata.gen.js';
import { SaslAuthenticateApi } from '../../../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi } from '../../../../protocol/messages/017-sasl-handshake.gen.js';
import { SaslAuthenticator, type AuthStep } from '../../../../src/security/sasl/authenticator.js';
import { PlainSaslServer } from '../../../../src/security/sasl/plain.js';

const log = pino({ level: 'silent' });

/** A request frame without its size prefix, as the connection hands frames over. */
function frame<Req>(api: ApiDescriptor<Req, unknown>, version: number, body: Req, correlationId = 7): Buffer {
  return Buffer.concat(encodeRequestFrame(api, version, correlationId, 'test', body)).subarray(4);
}

function response<Res>(api: ApiDescriptor<unknown, Res>, version: number, step: AuthStep): Res {
  if (step.kind !== 'respond') throw new Error(`expected an answer, got ${step.kind}`);
  return decodeResponseFrame(api, version, Buffer.concat(step.chunks).subarray(4)).response;
}

function authenticator(mechanisms = ['PLAIN', 'SCRAM-SHA-512']) {
  const events: string[] = [];
  const auth = new SaslAuthenticator({
    mechanisms,
    newServer: () => new PlainSaslServer((user, password) => user === 'alice' && password.toString() === 'secret'),
    apiVersions: async () => {
      events.push('apiVersions');
      return [Buffer.from([0, 0, 0, 0])];
    },
    errorResponse: (_frame, code, message) => {
      events.push(`errorResponse ${code} ${message}`);
      return [Buffer.from([0, 0, 0, 0])];
    },
    failedAuthenticationDelayMs: 0,
    log,
    maxReauthMs: () => 0,
    onComplete: (user, mechanism) => void events.push(`complete ${user} ${mechanism}`),
    onFailure: (reason) => void events.push(`failure ${reason}`),
  });
  return { auth, events };
}

const plainToken = (user: string, password: string) => Buffer.from(`\u0000${user}\u0000${password}`);

describe('SaslAuthenticator', () => {
  it('runs ApiVersions, SaslHandshake v1 and SaslAuthenticate, then hands every frame to the dispatcher', async () => {
    const { auth, events } = authenticator();
    expect(await auth.step(frame(ApiVersionsApi, 3, createApiVersionsRequest({ clientSoftwareName: 't', clientSoftwareVersion: '1' })))).toMatchObject({ kind: 'respond', close: false });
    const hs = response(SaslHandshakeApi, 1, await auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'PLAIN' })));
    expect(hs).toMatchObject({ errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    const step = await auth.step(frame(SaslAuthenticateApi, 2, { authBytes: plainToken('alice', 'secret') }));
    expect(response(SaslAuthenticateApi, 2, step)).toMatchObject({ errorCode: 0, errorMessage: null, sessionLifetimeMs: 0n });
    expect(auth.complete).toBe(true);
    expect(events).toEqual(['apiVersions', 'complete alice PLAIN']);
    expect(await auth.step(frame(MetadataApi, 12, createMetadataRequest({ topics: null })))).toEqual({ kind: 'dispatch' });
  });

  it('takes raw tokens after SaslHandshake v0 and answers them size-prefixed', async () => {
    const { auth, events } = authenticator();
    expect(response(SaslHandshakeApi, 0, await auth.step(frame(SaslHandshakeApi, 0, { mechanism: 'PLAIN' })))).toMatchObject({ errorCode: 0 });
    const step = await auth.step(plainToken('alice', 'secret'));
    expect(step).toEqual({ kind: 'respond', chunks: [Buffer.from([0, 0, 0, 0]), Buffer.alloc(0)], close: false });
    expect(events).toEqual(['complete alice PLAIN']);
    const { auth: other } = authenticator();
    await other.step(frame(SaslHandshakeApi, 0, { mechanism: 'PLAIN' }));
    expect(await other.step(plainToken('alice', 'wrong'))).toEqual({ kind: 'close' });
  });

  it('answers an unsupported mechanism with UNSUPPORTED_SASL_MECHANISM and the enabled ones, then closes', async () => {
    const { auth, events } = authenticator();
    const step = await auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'GSSAPI' }));
    expect(step).toMatchObject({ kind: 'respond', close: true });
    expect(response(SaslHandshakeApi, 1, step)).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    expect(events).toEqual(['failure Unsupported SASL mechanism "GSSAPI"']);
    expect(await auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }))).toEqual({ kind: 'close' });
  });

  it('closes on a request before the handshake, a second ApiVersions, or a first frame that is no request', async () => {
    const early = authenticator();
    expect(await early.auth.step(frame(MetadataApi, 12, createMetadataRequest({ topics: null })))).toEqual({ kind: 'close' });
    expect(early.events).toEqual(['failure Unexpected Kafka request of type Metadata during SASL handshake.']);
    const twice = authenticator();
    await twice.auth.step(frame(ApiVersionsApi, 3, createApiVersionsRequest({ clientSoftwareName: 't', clientSoftwareVersion: '1' })));
    expect(await twice.auth.step(frame(ApiVersionsApi, 3, createApiVersionsRequest({ clientSoftwareName: 't', clientSoftwareVersion: '1' })))).toEqual({ kind: 'close' });
    const gssapiToken = authenticator();
    expect(await gssapiToken.auth.step(Buffer.from([0x60, 0x82, 0x01]))).toEqual({ kind: 'close' });
  });

  it('answers a wrong password SASL_AUTHENTICATION_FAILED, and another request mid-exchange ILLEGAL_SASL_STATE, then closes', async () => {
    const wrong = authenticator();
    await wrong.auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }));
    const step = await wrong.auth.step(frame(SaslAuthenticateApi, 1, { authBytes: plainToken('alice', 'guess') }));
    expect(step).toMatchObject({ kind: 'respond', close: true });
    expect(response(SaslAuthenticateApi, 1, step)).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Authentication failed: Invalid username or password' });
    expect(wrong.auth.complete).toBe(false);
    const midway = authenticator();
    await midway.auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }));
    expect(await midway.auth.step(frame(MetadataApi, 12, createMetadataRequest({ topics: null })))).toMatchObject({ kind: 'respond', close: true });
    expect(midway.events).toContain(`errorResponse ${ErrorCode.ILLEGAL_SASL_STATE} Unexpected Kafka request of type Metadata during SASL authentication.`);
  });

  it('delays the answer to a failed authentication by connection.failed.authentication.delay.ms', async () => {
    const auth = new SaslAuthenticator({
      mechanisms: ['PLAIN'],
      newServer: () => new PlainSaslServer(() => false),
      apiVersions: async () => null,
      errorResponse: () => null,
      maxReauthMs: () => 0,
      failedAuthenticationDelayMs: 150,
      log,
      onComplete: () => undefined,
      onFailure: () => undefined,
    });
    await auth.step(frame(SaslHandshakeApi, 1, { mechanism: 'PLAIN' }));
    const started = performance.now();
    await auth.step(frame(SaslAuthenticateApi, 1, { authBytes: plainToken('a', 'b') }));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });
});

describe('SaslAuthenticator: KIP-368 session lifetime and re-authentication', () => {
  function reauthenticator(o: { maxReauthMs: number; mechanisms?: string[] }) {
    let now = 1_000_000;
    const events: string[] = [];
    const auth = new SaslAuthenticator({
      mechanisms: o.mechanisms ?? ['PLAIN'],
      newServer: () => new PlainSaslServer((user, password) => password.toString() === `${user}-secret`),
      apiVersions: async () => [Buffer.from([0, 0, 0, 0])],
      errorResponse: () => null,
      failedAuthenticationDelayMs: 0,
      log,
      maxReauthMs: () => o.maxReauthMs,
      onComplete: (user, _m, reauth, lifetime) => void events.push(`${reauth ? 'reauthenticated' : 'authenticated'} ${user} ${lifetime}`),
      onFailure: (reason, _err, reauth) => void events.push(`${reauth ? 'reauth failed' : 'failed'}: ${reason}`),
      now: () => now,
    });
    const signIn = async (user: string, mechanism = 'PLAIN') => {
      expect(response(SaslHandshakeApi, 1, await auth.step(frame(SaslHandshakeApi, 1, { mechanism })))).toMatchObject({ errorCode: 0 });
      return auth.step(frame(SaslAuthenticateApi, 2, { authBytes: plainToken(user, `${user}-secret`) }));
    };
    return { auth, events, signIn, advance: (ms: number) => void (now += ms) };
  }

  it('gives the session connections.max.reauth.ms, after which it has expired', async () => {
    const { auth, signIn, advance, events } = reauthenticator({ maxReauthMs: 5000 });
    expect(response(SaslAuthenticateApi, 2, await signIn('alice'))).toMatchObject({ errorCode: 0, sessionLifetimeMs: 5000n });
    advance(5000);
    expect(auth.sessionExpired()).toBe(false);
    advance(1);
    expect(auth.sessionExpired()).toBe(true);
    expect(events).toEqual(['authenticated alice 5000']);
  });

  it('re-authenticates the same user on a SaslHandshake, with a new lifetime, at most once a second', async () => {
    const { auth, signIn, advance, events } = reauthenticator({ maxReauthMs: 5000 });
    await signIn('alice');
    advance(4000);
    expect(auth.beginReauthentication()).toBe(true);
    expect(response(SaslAuthenticateApi, 2, await signIn('alice'))).toMatchObject({ errorCode: 0, sessionLifetimeMs: 5000n });
    expect(auth.complete).toBe(true);
    advance(4000);
    expect(auth.sessionExpired()).toBe(false);
    advance(500);
    expect(auth.beginReauthentication()).toBe(true);
    await signIn('alice');
    // A second begin within a second of the last: the handshake is an ordinary request.
    advance(999);
    expect(auth.beginReauthentication()).toBe(false);
    expect(events).toEqual(['authenticated alice 5000', 'reauthenticated alice 5000', 'reauthenticated alice 5000']);
  });

  it('refuses a re-authentication as another user, or with another mechanism, and closes', async () => {
    const other = reauthenticator({ maxReauthMs: 5000 });
    await other.signIn('alice');
    other.advance(2000);
    expect(other.auth.beginReauthentication()).toBe(true);
    const step = await other.signIn('bob');
    expect(step).toMatchObject({ kind: 'respond', close: true });
    expect(response(SaslAuthenticateApi, 2, step)).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Cannot change principals during re-authentication from User.alice: User.bob' });
    expect(other.events[1]).toBe('reauth failed: Cannot change principals during re-authentication from User.alice: User.bob');

    const mech = reauthenticator({ maxReauthMs: 5000, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    await mech.signIn('alice');
    mech.advance(2000);
    expect(mech.auth.beginReauthentication()).toBe(true);
    // SaslServerAuthenticator's REAUTH_BAD_MECHANISM: the handshake is answered, the token refused.
    const refused = await mech.signIn('alice', 'SCRAM-SHA-512');
    expect(response(SaslAuthenticateApi, 2, refused)).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: "SASL mechanism 'SCRAM-SHA-512' requested by client is not supported for re-authentication of mechanism 'PLAIN'" });
  });

  it('offers no re-authentication and no expiry without a lifetime (connections.max.reauth.ms=0)', async () => {
    const { auth, signIn, advance } = reauthenticator({ maxReauthMs: 0 });
    expect(response(SaslAuthenticateApi, 2, await signIn('alice'))).toMatchObject({ sessionLifetimeMs: 0n });
    advance(10 * 86_400_000);
    expect(auth.sessionExpired()).toBe(false);
    expect(auth.beginReauthentication()).toBe(false);
  });
});
