/**
 * KIP-368 on a real broker with connections.max.reauth.ms=3000 on a SASL_PLAINTEXT listener: SaslAuthenticate
 * tells the client its session lifetime; a request after the session expired closes the connection (counted as
 * expired-connections-killed-count); a SaslHandshake on the authenticated connection re-authenticates it (the same
 * user, the same mechanism) and the session goes on; kafkajs, which re-authenticates on its own, produces across
 * several lifetimes without losing its connection.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../protocol/error-codes.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { SaslAuthenticateApi } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi } from '../../protocol/messages/017-sasl-handshake.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';
import { metadataRequest } from '../support/requests.js';

const LIFETIME_MS = 3000;
let broker: BrokerProcess;
let adminUrl: string;

beforeAll(async () => {
  broker = await BrokerProcess.start({
    configs: {
      listeners: 'PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.enabled.mechanisms': 'PLAIN',
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" user_bob="bob-secret";',
      'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': String(LIFETIME_MS),
      'ledgerline.admin.listener': 'http://127.0.0.1:0',
    },
  });
  adminUrl = (JSON.parse(broker.logs.find((l) => l.includes('admin HTTP endpoint listening'))!) as { url: string }).url;
}, 60_000);

afterAll(async () => {
  await broker?.stop();
});

const port = () => broker.ports.get('SASL_PLAINTEXT')!;

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${adminUrl}/metrics`)).text();
  const m = new RegExp(`^${name}\\{listener="SASL_PLAINTEXT"\\} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** SaslHandshake v1 and SaslAuthenticate v2 as `user`: the SaslAuthenticate answer. */
async function signIn(c: RawConnection, user: string, mechanism = 'PLAIN') {
  const hs = await c.request(SaslHandshakeApi, 1, { mechanism });
  expect(hs.errorCode).toBe(ErrorCode.NONE);
  return c.request(SaslAuthenticateApi, 2, { authBytes: Buffer.from(`\0${user}\0${user}-secret`) });
}

describe('KIP-368 re-authentication', () => {
  it('tells the session lifetime and closes the connection on a request after it expired', async () => {
    const before = await metric('kafka_server_socket_server_metrics_expired_connections_killed_count');
    const c = await RawConnection.connect(port());
    const auth = await signIn(c, 'alice');
    const signedInAt = Date.now();
    expect(auth).toMatchObject({ errorCode: ErrorCode.NONE, sessionLifetimeMs: BigInt(LIFETIME_MS) });
    expect((await c.request(MetadataApi, 12, metadataRequest(null, false))).brokers).toHaveLength(1);
    await waitFor('the session to pass its lifetime', () => Date.now() > signedInAt + LIFETIME_MS + 100, LIFETIME_MS + 2000, 50);
    c.send(MetadataApi, 12, metadataRequest(null, false));
    await c.waitClosed();
    expect(await metric('kafka_server_socket_server_metrics_expired_connections_killed_count')).toBe(before + 1);
    expect(broker.logs.some((l) => l.includes('its SASL session expired without re-authentication'))).toBe(true);
  });

  it('re-authenticates the same user on the same connection, which then outlives its first lifetime', async () => {
    const before = await metric('kafka_server_socket_server_metrics_successful_reauthentication_total');
    const c = await RawConnection.connect(port());
    await signIn(c, 'alice');
    const signedInAt = Date.now();
    // Kafka allows one re-authentication a second.
    await waitFor('a second since the sign-in', () => Date.now() > signedInAt + 1100, 3000, 50);
    expect(await signIn(c, 'alice')).toMatchObject({ errorCode: ErrorCode.NONE, sessionLifetimeMs: BigInt(LIFETIME_MS) });
    const renewedAt = Date.now();
    await waitFor('the first lifetime to pass', () => Date.now() > signedInAt + LIFETIME_MS + 100, LIFETIME_MS + 2000, 50);
    expect(Date.now()).toBeLessThan(renewedAt + LIFETIME_MS);
    expect((await c.request(MetadataApi, 12, metadataRequest(null, false))).brokers).toHaveLength(1);
    expect(await metric('kafka_server_socket_server_metrics_successful_reauthentication_total')).toBe(before + 1);
    c.destroy();
  });

  it('refuses a re-authentication as another user and closes the connection', async () => {
    const before = await metric('kafka_server_socket_server_metrics_failed_reauthentication_total');
    const c = await RawConnection.connect(port());
    await signIn(c, 'alice');
    const signedInAt = Date.now();
    await waitFor('a second since the sign-in', () => Date.now() > signedInAt + 1100, 3000, 50);
    expect(await signIn(c, 'bob')).toMatchObject({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: 'Cannot change principals during re-authentication from User.alice: User.bob' });
    await c.waitClosed();
    expect(await metric('kafka_server_socket_server_metrics_failed_reauthentication_total')).toBe(before + 1);
  });

  it('keeps a kafkajs producer working across several lifetimes: it re-authenticates on its own', async () => {
    const before = await metric('kafka_server_socket_server_metrics_successful_reauthentication_total');
    const expiredBefore = await metric('kafka_server_socket_server_metrics_expired_connections_killed_count');
    const kafka = new Kafka({
      clientId: 'reauth',
      brokers: [`127.0.0.1:${port()}`],
      sasl: { mechanism: 'plain', username: 'alice', password: 'alice-secret' },
      // kafkajs re-authenticates once this close to the end of the session lifetime.
      reauthenticationThreshold: 1500,
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'reauth', numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    const started = Date.now();
    let sent = 0;
    while (Date.now() - started < 3 * LIFETIME_MS) {
      await producer.send({ topic: 'reauth', messages: [{ value: `m${sent}` }] });
      sent++;
      await waitFor('a moment between sends', () => Date.now() - started > sent * 200, 1000, 20);
    }
    await producer.disconnect();
    expect(sent).toBeGreaterThan(20);
    expect(await metric('kafka_server_socket_server_metrics_successful_reauthentication_total')).toBeGreaterThanOrEqual(before + 2);
    expect(await metric('kafka_server_socket_server_metrics_expired_connections_killed_count')).toBe(expiredBefore);
  }, 60_000);
});
