/**
 * Kafka's four security protocols on one broker, driven by kafkajs and by raw requests:
 *
 *   PLAINTEXT       the admin path: SCRAM credentials created with AlterUserScramCredentials (what
 *                   `kafka-configs --alter --entity-type users` sends) and described back
 *   SSL             TLS from PEM files with ssl.client.auth=required: a client certificate signs in, no
 *                   certificate or a garbage client hello is refused, the broker goes on
 *   SASL_PLAINTEXT  PLAIN against the listener's JAAS users and against the metadata store's SCRAM users
 *   SASL_SSL        SCRAM-SHA-512 and SCRAM-SHA-256 over TLS, and OAUTHBEARER with JWTs checked against a JWKS
 *
 * and every refusal as Kafka answers it: a wrong password (SASL_AUTHENTICATION_FAILED, then closed), an
 * unsupported mechanism (UNSUPPORTED_SASL_MECHANISM with the enabled list, then closed), a request before the
 * handshake (closed), a request other than SaslAuthenticate mid-exchange (its ILLEGAL_SASL_STATE answer, then
 * closed), a malformed token; the failed and successful authentications counted per listener in /metrics.
 */
import { generateKeyPairSync, pbkdf2Sync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { connect as tcpConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { SaslAuthenticateApi } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi } from '../../protocol/messages/017-sasl-handshake.gen.js';
import { AlterUserScramCredentialsApi } from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { DescribeUserScramCredentialsApi } from '../../protocol/messages/050-describe-user-scram-credentials.gen.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import { BrokerProcess } from '../support/broker-process.js';
import { TestPki } from '../support/certs.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

const JAAS_PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";';

let pki: TestPki;
/** The identity provider's signing key, whose public half the broker reads from a JWKS file. */
const idp = generateKeyPairSync('rsa', { modulusLength: 2048 });
const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });

/** A JWS compact RS256 token, as an OAuth identity provider issues it. */
function jwt(claims: Record<string, unknown>, key: KeyObject = idp.privateKey): string {
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const signingInput = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'idp-1' })}.${b64(claims)}`;
  return `${signingInput}.${sign('sha256', Buffer.from(signingInput), key).toString('base64url')}`;
}
let broker: BrokerProcess;
let adminUrl: string;

const port = (listener: string): number => {
  const p = broker.ports.get(listener);
  if (p === undefined) throw new Error(`no ${listener} listener`);
  return p;
};

beforeAll(async () => {
  pki = TestPki.create();
  const server = pki.server('broker');
  const jwks = join(pki.dir, 'jwks.json');
  writeFileSync(jwks, JSON.stringify({ keys: [{ ...idp.publicKey.export({ format: 'jwk' }), kid: 'idp-1', alg: 'RS256', use: 'sig' }] }));
  broker = await BrokerProcess.start({
    configs: {
      listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': server.keystorePath,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': pki.ca.certPath,
      'listener.name.ssl.ssl.client.auth': 'required',
      'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': JAAS_PLAIN,
      'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER',
      'listener.name.sasl_ssl.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;',
      'listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler',
      'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(jwks).href,
      'sasl.oauthbearer.expected.issuer': 'https://idp.example',
      'ledgerline.admin.listener': 'http://127.0.0.1:0',
      'group.initial.rebalance.delay.ms': '0',
    },
  });
  const line = broker.logs.find((l) => l.includes('admin HTTP endpoint listening'))!;
  adminUrl = (JSON.parse(line) as { url: string }).url;
}, 60_000);

afterAll(async () => {
  await broker?.stop();
  pki?.cleanup();
});

/** SCRAM credentials for `user` through AlterUserScramCredentials on the PLAINTEXT listener, as kafka-configs sends them. */
async function createScramUser(user: string, password: string, mechanism: 1 | 2, iterations = 8192): Promise<void> {
  const salt = randomBytes(24);
  const saltedPassword = pbkdf2Sync(password, salt, iterations, mechanism === 1 ? 32 : 64, mechanism === 1 ? 'sha256' : 'sha512');
  const c = await RawConnection.connect(port('PLAINTEXT'));
  try {
    const res = await c.request(AlterUserScramCredentialsApi, 0, { deletions: [], upsertions: [{ name: user, mechanism, iterations, salt, saltedPassword }] });
    expect(res.results).toEqual([expect.objectContaining({ user, errorCode: 0 })]);
  } finally {
    c.destroy();
  }
}

/** Produces `n` records to a new topic and reads them back with a group, both through `client`. */
async function roundTrip(client: InstanceType<typeof Kafka>, topic: string, n = 20): Promise<void> {
  const admin = client.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
  await admin.disconnect();
  const producer = client.producer();
  await producer.connect();
  await producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `v${i}` })) });
  await producer.disconnect();
  const consumer = client.consumer({ groupId: `${topic}-readers` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen = new Set<string>();
  await consumer.run({ eachMessage: async ({ message }) => void seen.add(message.value!.toString()) });
  try {
    await waitFor(`${n} records read back from ${topic}`, () => seen.size === n, 30_000);
  } finally {
    await consumer.disconnect();
  }
  expect([...seen].sort()).toEqual(Array.from({ length: n }, (_, i) => `v${i}`).sort());
}

const kafka = (listener: string, extra: Partial<ConstructorParameters<typeof Kafka>[0]>) =>
  new Kafka({ clientId: `security-${listener.toLowerCase()}`, brokers: [`127.0.0.1:${port(listener)}`], logLevel: logLevel.NOTHING, retry: { retries: 2 }, ...extra });

async function metric(name: string, listener: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const m = new RegExp(`^${name}\\{listener="${listener}"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('security protocols', () => {
  it('creates SCRAM users with AlterUserScramCredentials and describes their mechanisms, never their keys', async () => {
    await createScramUser('carol', 'carol-secret', 2);
    await createScramUser('dave', 'dave-secret', 1, 4096);
    const c = await RawConnection.connect(port('PLAINTEXT'));
    try {
      const res = await c.request(DescribeUserScramCredentialsApi, 0, { users: [{ name: 'carol' }, { name: 'dave' }, { name: 'nobody' }] });
      const byUser = new Map(res.results.map((r) => [r.user, r]));
      expect(byUser.get('carol')).toMatchObject({ errorCode: 0, credentialInfos: [{ mechanism: 2, iterations: 8192 }] });
      expect(byUser.get('dave')).toMatchObject({ errorCode: 0, credentialInfos: [{ mechanism: 1, iterations: 4096 }] });
      expect(byUser.get('nobody')).toMatchObject({ errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: nobody' });
      const tooFew = await c.request(AlterUserScramCredentialsApi, 0, { deletions: [], upsertions: [{ name: 'eve', mechanism: 2, iterations: 100, salt: randomBytes(8), saltedPassword: randomBytes(64) }] });
      expect(tooFew.results).toEqual([expect.objectContaining({ user: 'eve', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' })]);
    } finally {
      c.destroy();
    }
  });

  it('serves SCRAM-SHA-512 and SCRAM-SHA-256 over SASL_SSL to kafkajs', async () => {
    await createScramUser('frank', 'frank-secret', 2);
    await roundTrip(kafka('SASL_SSL', { ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'scram-sha-512', username: 'frank', password: 'frank-secret' } }), 'scram-512');
    await roundTrip(kafka('SASL_SSL', { ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'scram-sha-256', username: 'dave', password: 'dave-secret' } }), 'scram-256');
  }, 90_000);

  it('serves OAUTHBEARER over SASL_SSL to a token the JWKS key signed, and refuses an expired or foreign one', async () => {
    const now = Math.floor(Date.now() / 1000);
    const oauth = (token: string) => kafka('SASL_SSL', { ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) }, retry: { retries: 0 } });
    await roundTrip(oauth(jwt({ sub: 'olivia', iss: 'https://idp.example', iat: now, exp: now + 600 })), 'oauthbearer', 5);
    const refusals: Record<string, string> = {
      expired: jwt({ sub: 'olivia', iss: 'https://idp.example', iat: now - 7200, exp: now - 3600 }),
      'signed by another key': jwt({ sub: 'olivia', iss: 'https://idp.example', iat: now, exp: now + 600 }, stranger.privateKey),
      'another issuer': jwt({ sub: 'olivia', iss: 'https://other.example', iat: now, exp: now + 600 }),
    };
    // The broker answers a refused token with RFC 7628's error challenge, as Kafka does; kafkajs does not read it and
    // goes on as if authenticated, so its next request meets the exchange still waiting for %x01: that request is
    // answered ILLEGAL_SASL_STATE and the connection closed. Either way a refused token reaches no data.
    const failedBefore = await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SASL_SSL');
    for (const [why, refused] of Object.entries(refusals)) {
      const admin = oauth(refused).admin();
      const attempt = async () => {
        await admin.connect();
        await admin.listTopics();
      };
      await expect(attempt(), why).rejects.toThrow();
      await admin.disconnect();
    }
    await waitFor('three failed authentications counted', async () => (await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SASL_SSL')) >= failedBefore + 3);
    const reasons = broker.logs.filter((l) => l.includes('SASL authentication failed')).join('\n');
    for (const text of ['is on or after the Expiration Time', 'invalid signature', "Issuer (iss) claim value (https://other.example) doesn't match"]) expect(reasons).toContain(text);
  }, 60_000);

  it('serves PLAIN over SASL_PLAINTEXT to JAAS users and to the metadata store\'s SCRAM users', async () => {
    await roundTrip(kafka('SASL_PLAINTEXT', { sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' } }), 'plain-jaas');
    await roundTrip(kafka('SASL_PLAINTEXT', { sasl: { mechanism: 'plain', username: 'carol', password: 'carol-secret' } }), 'plain-scram');
  }, 90_000);

  it('serves SSL clients that present a certificate the trust store signs', async () => {
    const alice = pki.client('alice', '/C=US/O=Ledgerline/OU=Test/CN=alice');
    await roundTrip(kafka('SSL', { ssl: { ca: [pki.ca.cert], cert: alice.cert, key: alice.key } }), 'ssl-client-cert');
  }, 60_000);

  it('refuses a wrong password with SASL_AUTHENTICATION_FAILED and counts it', async () => {
    const before = await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SASL_SSL');
    const admin = kafka('SASL_SSL', { ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'scram-sha-512', username: 'frank', password: 'wrong' }, retry: { retries: 0 } }).admin();
    await expect(admin.connect()).rejects.toMatchObject({ name: 'KafkaJSSASLAuthenticationError' });
    await admin.disconnect();
    await waitFor('the failure counted', async () => (await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SASL_SSL')) > before);
    expect(await metric('kafka_server_socket_server_metrics_successful_authentication_total', 'SASL_SSL')).toBeGreaterThan(0);
    const plain = kafka('SASL_PLAINTEXT', { sasl: { mechanism: 'plain', username: 'alice', password: 'bob-secret' }, retry: { retries: 0 } }).admin();
    await expect(plain.connect()).rejects.toMatchObject({ name: 'KafkaJSSASLAuthenticationError' });
    await plain.disconnect();
  });

  it('answers each out-of-order or malformed SASL step as Kafka does, then closes', async () => {
    const sasl = port('SASL_PLAINTEXT');
    // A request before the handshake: closed without an answer.
    const early = await RawConnection.connect(sasl);
    await expect(early.request(MetadataApi, 12, createMetadataRequest({ topics: null }), 5_000)).rejects.toThrow();
    await early.closed;

    // A mechanism the listener does not enable: UNSUPPORTED_SASL_MECHANISM with the enabled ones, then closed.
    const gssapi = await RawConnection.connect(sasl);
    const refused = await gssapi.request(SaslHandshakeApi, 1, { mechanism: 'GSSAPI' });
    expect(refused).toMatchObject({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    await gssapi.closed;

    // A malformed PLAIN token: SASL_AUTHENTICATION_FAILED with Kafka's message, then closed.
    const malformed = await RawConnection.connect(sasl);
    expect(await malformed.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' })).toMatchObject({ errorCode: 0 });
    const bad = await malformed.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from('no separators at all') });
    expect(bad).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED });
    expect(bad.errorMessage).toContain('Invalid SASL/PLAIN response');
    await malformed.closed;

    // Another request in the middle of the exchange: its own error response with ILLEGAL_SASL_STATE, then closed.
    const midway = await RawConnection.connect(sasl);
    expect(await midway.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-512' })).toMatchObject({ errorCode: 0 });
    const md = await midway.request(MetadataApi, 12, createMetadataRequest({ topics: [{ name: 'any', topicId: ZERO_UUID }] }));
    expect(md.topics).toEqual([expect.objectContaining({ name: 'any', errorCode: ErrorCode.ILLEGAL_SASL_STATE })]);
    await midway.closed;

    // After all that, an ordinary client still signs in.
    await roundTrip(kafka('SASL_PLAINTEXT', { sasl: { mechanism: 'plain', username: 'bob', password: 'bob-secret' } }), 'after-refusals', 5);
  }, 60_000);

  it('closes a TLS connection whose client hello is garbage, or that brings no certificate where one is required, and goes on', async () => {
    const before = await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SSL');
    const garbage = tcpConnect({ host: '127.0.0.1', port: port('SSL') });
    garbage.on('error', () => undefined);
    garbage.write(randomBytes(512));
    await new Promise<void>((r) => garbage.once('close', () => r()));

    const noCert = tlsConnect({ host: '127.0.0.1', port: port('SSL'), ca: [pki.ca.cert], servername: 'localhost' });
    noCert.on('error', () => undefined);
    // TLS 1.3 completes the client's side before the server checks the certificate: the server then closes.
    await new Promise<void>((r) => noCert.once('close', () => r()));

    await waitFor('both failures counted', async () => (await metric('kafka_server_socket_server_metrics_failed_authentication_total', 'SSL')) >= before + 2);
    const plain = await RawConnection.connect(port('PLAINTEXT'));
    const md = await plain.request(MetadataApi, 12, createMetadataRequest({ topics: null }));
    expect(md.brokers.length).toBe(1);
    plain.destroy();
  });
});
