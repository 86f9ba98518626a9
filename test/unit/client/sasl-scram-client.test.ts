/**
 * The client side of SASL SCRAM (src/client/sasl-scram-client.ts): RFC 7677's SCRAM-SHA-256 vector, round trips
 * against the broker's own ScramSaslServer (src/security/sasl/scram.ts), the checks the client makes of the
 * server's messages, and the sign-in on a Connection (SaslHandshake v1, SaslAuthenticate) over TCP and TLS.
 */
import { createServer as createTlsServer } from 'node:tls';
import type { Server as TlsServer } from 'node:tls';
import { connect as netConnect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Pki } from '../../../compat/lib/pki.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import { ApiVersionsApi } from '../../../protocol/messages/018-api-versions.gen.js';
import { SaslHandshakeApi } from '../../../protocol/messages/017-sasl-handshake.gen.js';
import type { SaslAuthenticateRequest } from '../../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslAuthenticateApi } from '../../../protocol/messages/036-sasl-authenticate.gen.js';
import { Connection } from '../../../src/client/connection.js';
import { ConnectError, SaslAuthenticationFailedError } from '../../../src/client/errors.js';
import { ScramClientError, ScramSaslClient } from '../../../src/client/sasl-scram-client.js';
import type { ScramMechanismName } from '../../../src/client/sasl-scram-client.js';
import { ScramSaslServer, scramCredential } from '../../../src/security/sasl/scram.js';
import type { ScramCredential } from '../../../src/security/sasl/scram.js';
import type { ReceivedRequest } from './fake-broker.js';
import { FakeBroker } from './fake-broker.js';

const SALT = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64');
const MECHANISMS: ScramMechanismName[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

/** The broker's server for `users` (name → password), credentials made as AlterUserScramCredentials would. */
function server(mechanism: ScramMechanismName, users: Record<string, string>, iterations = 4096): ScramSaslServer {
  const credentials = new Map<string, ScramCredential>(Object.entries(users).map(([u, p]) => [u, scramCredential(mechanism, p, SALT, iterations)]));
  return new ScramSaslServer(mechanism, async (u) => credentials.get(u));
}

/** A client past its first message, ready for a hand-made server-first. */
function clientAfterFirst(nonce = 'abc'): ScramSaslClient {
  const c = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', { nonce: () => nonce });
  c.clientFirst();
  return c;
}

describe('ScramSaslClient', () => {
  it('sends the RFC 7677 SCRAM-SHA-256 test vector exactly and verifies its server signature', async () => {
    const client = new ScramSaslClient('SCRAM-SHA-256', 'user', 'pencil', { nonce: () => 'rOprNGfwEbeRWgbNEkqO' });
    expect(client.clientFirst().toString()).toBe('n,,n=user,r=rOprNGfwEbeRWgbNEkqO');
    const final = await client.clientFinal(Buffer.from('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'));
    expect(final.toString()).toBe('c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=');
    expect(client.complete).toBe(false);
    client.verifyServerFinal(Buffer.from('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4='));
    expect(client.complete).toBe(true);
  });

  it.each(MECHANISMS)('completes a %s exchange with the broker\'s ScramSaslServer, each side checking the other', async (mechanism) => {
    const s = server(mechanism, { 'al,i=ce': 'sécret' });
    const client = new ScramSaslClient(mechanism, 'al,i=ce', 'sécret');
    // The user name travels as a saslname (`,` as =2C, `=` as =3D); the password as UTF-8.
    const first = client.clientFirst();
    expect(first.toString()).toMatch(/^n,,n=al=2Ci=3Dce,r=[A-Za-z0-9_-]{32}$/);
    const final = await client.clientFinal(await s.evaluate(first));
    client.verifyServerFinal(await s.evaluate(final));
    expect(client.complete).toBe(true);
    expect(s.complete).toBe(true);
    expect(s.authorizationId).toBe('al,i=ce');
  });

  it('computes a SCRAM-SHA-512 proof the server refuses for a wrong password', async () => {
    const s = server('SCRAM-SHA-512', { alice: 'alice-secret' });
    const client = new ScramSaslClient('SCRAM-SHA-512', 'alice', 'wrong');
    const final = await client.clientFinal(await s.evaluate(client.clientFirst()));
    expect(final.toString()).toMatch(/,p=[A-Za-z0-9+/]{86}==$/); // 64 bytes: SHA-512's length
    await expect(s.evaluate(final)).rejects.toThrow(/invalid credentials/);
  });

  it('refuses a server signature that does not verify, and a server-final error', async () => {
    const s = server('SCRAM-SHA-512', { alice: 'alice-secret' });
    const client = new ScramSaslClient('SCRAM-SHA-512', 'alice', 'alice-secret');
    await s.evaluate(await client.clientFinal(await s.evaluate(client.clientFirst())));
    // A server that does not hold ServerKey cannot sign: any other signature fails.
    expect(() => client.verifyServerFinal(Buffer.from(`v=${Buffer.alloc(64, 1).toString('base64')}`))).toThrow('Invalid server signature in server final message');
    expect(client.complete).toBe(false);

    const other = clientAfterFirst();
    await other.clientFinal(Buffer.from('r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'));
    expect(() => other.verifyServerFinal(Buffer.from('e=invalid-proof'))).toThrow('Sasl authentication using SCRAM-SHA-256 failed with error: invalid-proof');
  });

  it.each([
    ['a nonce not starting with the client\'s', 'r=xyzdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', 'Invalid server nonce: does not start with client nonce'],
    ['a nonce the server appended nothing to', 'r=abc,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', 'the server appended no nonce'],
    ['fewer iterations than Kafka\'s minimum', 'r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095', 'Requested iterations 4095 is less than the minimum 4096 for SCRAM_SHA_256'],
    ['more iterations than a Kafka credential has', 'r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=1000000', 'is more than the maximum 16384'],
    ['the reserved mandatory-extension attribute (RFC 5802 §5.1)', 'm=ext,r=abcdef,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096', 'Invalid SCRAM server first message format'],
    ['a salt that is not base64', 'r=abcdef,s=W22Z*J0S,i=4096', 'Invalid SCRAM server first message format'],
  ])('refuses a server-first message with %s', async (_what, serverFirst, message) => {
    const client = clientAfterFirst();
    const err = await client.clientFinal(Buffer.from(serverFirst)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ScramClientError);
    expect((err as Error).message).toContain(message);
    // The exchange is over after a failure.
    expect(() => client.verifyServerFinal(Buffer.from('v=AAAA'))).toThrow('Unexpected SCRAM step in state FAILED');
  });

  it('takes its steps in order and refuses a nonce with a comma', () => {
    const client = new ScramSaslClient('SCRAM-SHA-512', 'u', 'p');
    expect(() => client.verifyServerFinal(Buffer.from('v=AAAA'))).toThrow('Unexpected SCRAM step in state SEND_CLIENT_FIRST_MESSAGE');
    client.clientFirst();
    expect(() => client.clientFirst()).toThrow('Unexpected SCRAM step in state RECEIVE_SERVER_FIRST_MESSAGE');
    expect(() => new ScramSaslClient('SCRAM-SHA-512', 'u', 'p', { nonce: () => 'a,b' })).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Signing a Connection in

const brokers: FakeBroker[] = [];
const conns: Connection[] = [];

afterEach(async () => {
  for (const c of conns.splice(0)) c.destroy();
  for (const b of brokers.splice(0)) await b.close();
});

/** A fake broker with SCRAM-SHA-512 (and `enabled`) on SaslHandshake, one ScramSaslServer per connection. */
async function saslBroker(users: Record<string, string>, enabled = ['SCRAM-SHA-512']): Promise<FakeBroker> {
  const servers = new Map<number, ScramSaslServer>();
  const b = await FakeBroker.start({
    handlers: {
      [SaslHandshakeApi.apiKey]: (req: ReceivedRequest) => {
        const { mechanism } = req.body as { mechanism: string };
        if (!enabled.includes(mechanism)) return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled };
        servers.set(req.connection, server(mechanism as ScramMechanismName, users));
        return { errorCode: 0, mechanisms: enabled };
      },
      [SaslAuthenticateApi.apiKey]: async (req: ReceivedRequest) => {
        try {
          const authBytes = await servers.get(req.connection)!.evaluate((req.body as SaslAuthenticateRequest).authBytes);
          return { errorCode: 0, errorMessage: null, authBytes, sessionLifetimeMs: 0n };
        } catch (e) {
          return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: (e as Error).message, authBytes: Buffer.alloc(0), sessionLifetimeMs: 0n };
        }
      },
      [MetadataApi.apiKey]: () => MetadataApi.response.create({ brokers: [], clusterId: 'c', controllerId: 1 }),
    },
  });
  brokers.push(b);
  return b;
}

async function connect(port: number, extra: Partial<Parameters<typeof Connection.connect>[0]>): Promise<Connection> {
  const c = await Connection.connect({ host: '127.0.0.1', port, ...extra });
  conns.push(c);
  return c;
}

describe('Connection with sasl', () => {
  it('signs in with ApiVersions, SaslHandshake v1 and two SaslAuthenticate rounds before any request', async () => {
    const b = await saslBroker({ alice: 'alice-secret' });
    const c = await connect(b.port, { sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' } });
    await c.request(MetadataApi, MetadataApi.request.create({ topics: [] }));
    expect(b.received.map((r) => `${r.api.name} v${r.version}`)).toEqual([
      `${ApiVersionsApi.name} v${ApiVersionsApi.validVersions.max}`,
      'SaslHandshake v1',
      `SaslAuthenticate v${SaslAuthenticateApi.validVersions.max}`,
      `SaslAuthenticate v${SaslAuthenticateApi.validVersions.max}`,
      `Metadata v${MetadataApi.validVersions.max}`,
    ]);
    expect(c.saslSessionLifetimeMs).toBe(0n);
  });

  it('fails the connect with LL_ERR_CLIENT_SASL and the broker\'s message for a wrong password', async () => {
    const b = await saslBroker({ alice: 'alice-secret' });
    const err = await connect(b.port, { sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'nope' } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SaslAuthenticationFailedError);
    expect(err).toMatchObject({ code: 'LL_ERR_CLIENT_SASL', errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED });
    expect((err as Error).message).toMatch(/invalid credentials with SASL mechanism SCRAM-SHA-512/);
  });

  it('names the broker\'s mechanisms when it does not enable the one asked for', async () => {
    const b = await saslBroker({ alice: 'alice-secret' }, ['PLAIN', 'SCRAM-SHA-256']);
    const err = await connect(b.port, { sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' } }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LL_ERR_CLIENT_SASL', errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM });
    expect((err as Error).message).toContain("Client SASL mechanism 'SCRAM-SHA-512' not enabled in the server, enabled mechanisms are [PLAIN, SCRAM-SHA-256]");
  });
});

describe('Connection with tls and sasl (SASL_SSL)', () => {
  let pki: Pki;
  const terminators: TlsServer[] = [];

  beforeAll(() => {
    pki = Pki.create();
  });

  afterAll(() => {
    for (const t of terminators) t.close();
    pki?.cleanup();
  });

  /** TLS in front of a fake broker, with the certificate `name` (issued by the PKI's CA). */
  async function tlsFront(b: FakeBroker, cert: { key: string; chain: string }): Promise<number> {
    const t = createTlsServer({ key: cert.key, cert: cert.chain }, (tls) => {
      const upstream = netConnect({ host: '127.0.0.1', port: b.port });
      tls.pipe(upstream).pipe(tls);
      tls.on('error', () => upstream.destroy());
      upstream.on('error', () => tls.destroy());
    });
    terminators.push(t);
    await new Promise<void>((r) => t.listen(0, '127.0.0.1', r));
    return (t.address() as AddressInfo).port;
  }

  it('connects to 127.0.0.1 trusting the CA, checks the IP SAN without sending it as SNI, and signs in', async () => {
    const b = await saslBroker({ alice: 'alice-secret' });
    const port = await tlsFront(b, pki.server('broker'));
    const warnings: string[] = [];
    const onWarning = (w: Error & { code?: string }): void => void warnings.push(w.code ?? w.message);
    process.on('warning', onWarning);
    try {
      const c = await connect(port, { tls: { ca: pki.ca.cert }, sasl: { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'alice-secret' } });
      await c.request(MetadataApi, MetadataApi.request.create({ topics: [] }));
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('DEP0123');
    expect(b.requests(SaslAuthenticateApi)).toHaveLength(2);
  });

  it('refuses a certificate without the address among its SANs, and one the CA did not issue', async () => {
    const b = await saslBroker({ alice: 'alice-secret' });
    const dnsOnly = await tlsFront(b, pki.issue('dns-only', '/CN=localhost', { altNames: ['DNS:localhost'], extendedKeyUsage: ['serverAuth'] }));
    const err = await connect(dnsOnly, { tls: { ca: pki.ca.cert } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as Error).message).toMatch(/IP: 127\.0\.0\.1 is not in the cert's list/);
    const stranger = Pki.create();
    try {
      const port = await tlsFront(b, stranger.server('broker'));
      await expect(connect(port, { tls: { ca: pki.ca.cert } })).rejects.toThrow(/unable to verify|self.signed|local issuer/i);
    } finally {
      stranger.cleanup();
    }
  });
});
