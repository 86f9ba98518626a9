/**
 * Kafka's ssl.* listener configs in Node (src/security/tls.ts): every key and trust store layout Kafka reads and
 * the ones refused, real TLS handshakes for ssl.client.auth none / requested / required (with the principal the
 * connection gets), protocols and cipher suites, and certificate reloads while the server runs.
 */
import { execFileSync } from 'node:child_process';
import type { X509Certificate } from 'node:crypto';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tls from 'node:tls';
import { type Logger, pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { SslPrincipalMapper, sslPrincipal } from '../../../src/security/principal.js';
import { TlsContextReloader } from '../../../src/security/tls-reloader.js';
import { OPENSSL_CIPHER_NAMES, TlsAuthenticationError, TlsConfigError, type TlsListenerSettings, tlsServerOptions, verifiedClientCertificate } from '../../../src/security/tls.js';
import { type IssuedCertificate, TestPki } from '../../support/certs.js';

const KEY_PASSWORD = 'key-secret-1';
const STORE_PASSWORD = 'store-secret-2';

let pki: TestPki;
let rogue: TestPki; // another CA, which the listener does not trust
let server: IssuedCertificate;
let alice: IssuedCertificate;
let mallory: IssuedCertificate;
let encryptedKey: string;
let pkcs12: string;

beforeAll(() => {
  pki = TestPki.create();
  rogue = TestPki.create();
  server = pki.server('server');
  alice = pki.client('alice', '/C=US/O=Ledgerline/OU=Test/CN=alice');
  mallory = rogue.client('mallory', '/C=US/O=Ledgerline/OU=Test/CN=mallory');
  const encrypted = pki.encryptedKey(server, KEY_PASSWORD);
  encryptedKey = pki.write('server-encrypted.keystore.pem', encrypted.pem + server.chain);
  pkcs12 = pki.pkcs12(server, STORE_PASSWORD);
});
afterAll(() => {
  pki.cleanup();
  rogue.cleanup();
});

/** A listener's configs: the `get` tlsServerOptions reads. */
function configs(values: Record<string, string>): (name: string) => string | null {
  return (name) => values[name] ?? null;
}

/** The PEM key store of `cert` with its CA as trust store, plus `extra`. */
function pemConfigs(extra: Record<string, string> = {}, cert: IssuedCertificate = server): Record<string, string> {
  return { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': cert.keystorePath, 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': pki.ca.certPath, ...extra };
}

/** The TlsConfigError tlsServerOptions throws for `values`. */
function refusal(values: Record<string, string>): TlsConfigError {
  try {
    tlsServerOptions(configs(values));
  } catch (e) {
    if (e instanceof TlsConfigError) return e;
    throw e;
  }
  throw new Error('the configs were accepted');
}

interface Listener {
  readonly server: tls.Server;
  readonly port: number;
  /** Handshakes the server failed (its tlsClientError events). */
  readonly handshakeFailures: Error[];
  /** Connections closed after the handshake because verifiedClientCertificate refused the certificate. */
  readonly refused: TlsAuthenticationError[];
  close(): Promise<void>;
}

const listeners: Listener[] = [];
afterEach(async () => {
  await Promise.all(listeners.splice(0).map((l) => l.close()));
});

/**
 * A TLS server with these settings that answers each connection with its principal (`User:...`) and closes it,
 * as a broker's SSL listener would authenticate it; or, with `echo`, answers the principal and then echoes.
 */
async function listen(settings: TlsListenerSettings, mode: 'principal' | 'echo' = 'principal'): Promise<Listener> {
  const mapper = new SslPrincipalMapper('DEFAULT');
  const refused: TlsAuthenticationError[] = [];
  const srv = tls.createServer({ ...settings.secureContext, requestCert: settings.requestCert, rejectUnauthorized: settings.rejectUnauthorized }, (socket) => {
    socket.on('error', () => undefined);
    let principal: string;
    try {
      const p = sslPrincipal(verifiedClientCertificate(socket), mapper);
      principal = `${p.type}:${p.name}`;
    } catch (e) {
      if (!(e instanceof TlsAuthenticationError)) throw e;
      refused.push(e);
      socket.destroy();
      return;
    }
    if (mode === 'echo') {
      socket.write(`${principal}\n`);
      socket.pipe(socket);
    } else {
      socket.end(`${principal}\n`);
    }
  });
  const handshakeFailures: Error[] = [];
  srv.on('tlsClientError', (e) => handshakeFailures.push(e));
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const sockets = new Set<tls.TLSSocket>();
  srv.on('secureConnection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const listener: Listener = {
    server: srv,
    port: (srv.address() as { port: number }).port,
    handshakeFailures,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        srv.close(() => resolve());
      }),
  };
  listeners.push(listener);
  return listener;
}

interface Outcome {
  /** What the server answered: its principal line, '' when it closed without answering. */
  readonly answer: string;
  readonly error: string | null;
  readonly serverCertificate: X509Certificate | undefined;
  readonly protocol: string | null;
  readonly cipher: string | null;
}

/** A client connection that verifies the server against the PKI's CA; resolves when the server closed it. */
function connect(port: number, options: tls.ConnectionOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    let answer = '';
    let error: string | null = null;
    let serverCertificate: X509Certificate | undefined;
    let protocol: string | null = null;
    let cipher: string | null = null;
    const socket = tls.connect({ host: '127.0.0.1', port, servername: 'localhost', ca: pki.ca.cert, ...options }, () => {
      serverCertificate = socket.getPeerX509Certificate();
      protocol = socket.getProtocol();
      cipher = socket.getCipher().standardName;
    });
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => {
      answer += d;
    });
    socket.on('error', (e) => {
      error = e.message;
    });
    socket.on('close', () => resolve({ answer: answer.trim(), error, serverCertificate, protocol, cipher }));
  });
}

const withCert = (c: IssuedCertificate): tls.ConnectionOptions => ({ cert: c.cert, key: c.key });

describe('key stores', () => {
  it('reads a PEM key store file holding the private key and its chain (ssl.keystore.type=PEM)', async () => {
    const settings = tlsServerOptions(configs(pemConfigs()));
    expect(settings.certificate.serialNumber).toBe(server.serialNumber);
    expect(settings.files).toEqual([server.keystorePath, pki.ca.certPath]);
    expect(settings.clientAuth).toBe('none');
    const { port } = await listen(settings);
    const outcome = await connect(port);
    expect(outcome.error).toBeNull();
    expect(outcome.serverCertificate!.serialNumber).toBe(server.serialNumber);
    expect(outcome.answer).toBe('User:ANONYMOUS');
  });

  it('decrypts an encrypted PEM key with ssl.key.password', async () => {
    const settings = tlsServerOptions(configs(pemConfigs({ 'ssl.keystore.location': encryptedKey, 'ssl.key.password': KEY_PASSWORD })));
    const { port } = await listen(settings);
    expect((await connect(port)).serverCertificate!.serialNumber).toBe(server.serialNumber);
  });

  it('reads inline PEM (ssl.keystore.key and ssl.keystore.certificate.chain, KIP-651), also written on one line', async () => {
    for (const squash of [false, true]) {
      const text = (pem: string): string => (squash ? pem.replace(/\n/g, ' ') : pem);
      const settings = tlsServerOptions(configs({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': text(server.key), 'ssl.keystore.certificate.chain': text(server.chain), 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': text(pki.ca.cert) }));
      expect(settings.files).toEqual([]);
      const { port } = await listen(settings);
      expect((await connect(port)).serverCertificate!.serialNumber).toBe(server.serialNumber);
    }
  });

  it('reads a PKCS12 key store (ssl.keystore.type=PKCS12), and one under the default type JKS as Java does', async () => {
    for (const type of ['PKCS12', 'JKS', null]) {
      const settings = tlsServerOptions(configs({ ...(type ? { 'ssl.keystore.type': type } : {}), 'ssl.keystore.location': pkcs12, 'ssl.keystore.password': STORE_PASSWORD }));
      expect(settings.certificate.serialNumber).toBe(server.serialNumber);
      expect(settings.files).toEqual([pkcs12]);
      const { port } = await listen(settings);
      expect((await connect(port)).serverCertificate!.serialNumber).toBe(server.serialNumber);
    }
    // ssl.key.password may repeat the store password.
    expect(() => tlsServerOptions(configs({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': pkcs12, 'ssl.keystore.password': STORE_PASSWORD, 'ssl.key.password': STORE_PASSWORD }))).not.toThrow();
  });

  it.each([
    ['ssl.keystore.key with a non-PEM store type', { 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.key': 'k', 'ssl.keystore.certificate.chain': 'c' }, 'ssl.keystore.key', 'only with ssl.keystore.type=PEM'],
    ['ssl.keystore.key without its chain', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': 'k' }, 'ssl.keystore.certificate.chain', 'not its certificate chain'],
    ['ssl.keystore.certificate.chain without its key', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': 'c' }, 'ssl.keystore.certificate.chain', 'not its private key'],
    ['ssl.keystore.key with ssl.keystore.location', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': 'k', 'ssl.keystore.certificate.chain': 'c', 'ssl.keystore.location': '/x' }, 'ssl.keystore.location', 'both a key store location and a separate private key'],
    ['ssl.keystore.password with inline PEM', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': 'k', 'ssl.keystore.certificate.chain': 'c', 'ssl.keystore.password': 'p' }, 'ssl.keystore.password', 'cannot be given with PEM'],
    ['no key store', {}, 'ssl.keystore.location', 'a TLS listener needs a key store'],
    ['a key store password without a key store', { 'ssl.keystore.password': 'p' }, 'ssl.keystore.password', 'no key store'],
    ['an unknown key store type', { 'ssl.keystore.type': 'BCFKS', 'ssl.keystore.location': '/etc/hostname', 'ssl.keystore.password': 'p' }, 'ssl.keystore.type', 'BCFKS key stores cannot be read'],
    ['a missing file', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': '/nonexistent/keystore.pem' }, 'ssl.keystore.location', 'cannot be read (ENOENT)'],
  ])('refuses %s as Kafka does', (_, values, config, message) => {
    const e = refusal(values);
    expect(e.config).toBe(config);
    expect(e.message).toContain(message);
    expect(e.code).toBe('LL_ERR_CONFIG');
    expect(e.kafkaErrorCode).toBe(ErrorCode.INVALID_CONFIG);
  });

  it('refuses PEM key stores whose key or chain is wrong, naming the config and the file', () => {
    const store = (name: string, text: string): string => pki.write(name, text);
    const cases: [Record<string, string>, string, string | null, string][] = [
      [{ 'ssl.keystore.password': 'p' }, 'ssl.keystore.password', null, 'cannot be given with PEM'],
      [{ 'ssl.keystore.location': store('no-key.pem', server.chain) }, 'ssl.keystore.location', 'no-key.pem', 'no private key found'],
      [{ 'ssl.keystore.location': store('two-keys.pem', server.key + alice.key + server.chain) }, 'ssl.keystore.location', 'two-keys.pem', 'expected one private key, but found 2'],
      [{ 'ssl.keystore.location': store('no-cert.pem', server.key) }, 'ssl.keystore.location', 'no-cert.pem', 'at least one certificate expected, but none found'],
      [{ 'ssl.keystore.location': store('mismatch.pem', alice.key + server.chain) }, 'ssl.keystore.location', 'mismatch.pem', "is not the private key's"],
      [{ 'ssl.keystore.location': store('ca-first.pem', server.key + pki.ca.cert + server.cert) }, 'ssl.keystore.location', 'ca-first.pem', "is not the private key's"],
      [{ 'ssl.keystore.location': store('bad-base64.pem', '-----BEGIN PRIVATE KEY-----\n%%%\n-----END PRIVATE KEY-----\n') }, 'ssl.keystore.location', 'bad-base64.pem', 'is not base64'],
      [{ 'ssl.keystore.location': store('no-end.pem', server.key.replace('-----END PRIVATE KEY-----', '')) }, 'ssl.keystore.location', 'no-end.pem', 'has no END line'],
      [{ 'ssl.keystore.location': pkcs12 }, 'ssl.keystore.location', 'server.p12', 'is not a PEM file (it looks like PKCS12)'],
      [{ 'ssl.keystore.location': encryptedKey }, 'ssl.keystore.location', 'server-encrypted.keystore.pem', 'the private key is encrypted, but ssl.key.password is not set'],
      [{ 'ssl.keystore.location': encryptedKey, 'ssl.key.password': 'wrong' }, 'ssl.keystore.location', 'server-encrypted.keystore.pem', 'cannot be decrypted with ssl.key.password'],
      [{ 'ssl.key.password': KEY_PASSWORD }, 'ssl.keystore.location', 'server.keystore.pem', 'ssl.key.password is set, but the private key is not encrypted'],
    ];
    for (const [extra, config, file, message] of cases) {
      const e = refusal(pemConfigs(extra));
      expect(e.config, message).toBe(config);
      if (file) expect(e.file).toBe(join(pki.dir, file));
      expect(e.message).toContain(message);
    }
  });

  it('refuses PKCS12 and JKS key stores Node cannot use, saying what to do', () => {
    const jks = pki.write('keystore.jks', Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 0]));
    const jceks = pki.write('keystore.jceks', Buffer.from([0xce, 0xce, 0xce, 0xce, 0, 0, 0, 2]));
    const p12 = { 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': pkcs12, 'ssl.keystore.password': STORE_PASSWORD };
    const cases: [Record<string, string>, string, string][] = [
      [{ 'ssl.keystore.location': jks, 'ssl.keystore.password': 'p' }, 'ssl.keystore.location', 'is a JKS key store, which Node.js cannot read: convert it to PKCS12 (keytool -importkeystore'],
      [{ 'ssl.keystore.type': 'JCEKS', 'ssl.keystore.location': jceks, 'ssl.keystore.password': 'p' }, 'ssl.keystore.location', 'is a JCEKS key store'],
      [{ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': server.keystorePath, 'ssl.keystore.password': 'p' }, 'ssl.keystore.location', 'is a PEM file, but ssl.keystore.type is PKCS12: set ssl.keystore.type=PEM'],
      [{ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': pkcs12 }, 'ssl.keystore.password', 'not its password'],
      [{ ...p12, 'ssl.keystore.password': 'wrong' }, 'ssl.keystore.location', 'cannot be used (mac verify failure)'],
      [{ ...p12, 'ssl.key.password': KEY_PASSWORD }, 'ssl.key.password', 'Node.js opens a PKCS12 key store with one password'],
      [{ ...p12, 'ssl.client.auth': 'required' }, 'ssl.keystore.location', 'cannot be used with ssl.client.auth=required: Node.js would also trust the CA certificates inside it'],
      [{ ...p12, 'ssl.client.auth': 'requested' }, 'ssl.keystore.location', 'ssl.client.auth=requested'],
    ];
    for (const [values, config, message] of cases) {
      const e = refusal(values);
      expect(e.config, message).toBe(config);
      expect(e.message).toContain(message);
    }
  });

  it('never puts passwords or key material in its messages', () => {
    const messages = [
      refusal(pemConfigs({ 'ssl.keystore.location': encryptedKey, 'ssl.key.password': 'wrong-password-xyz' })),
      refusal({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': pkcs12, 'ssl.keystore.password': 'wrong-password-xyz' }),
      refusal({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': alice.key, 'ssl.keystore.certificate.chain': server.chain }),
      refusal({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': server.key.split('\n').map((l, i) => (i === 1 ? 'A'.repeat(l.length) : l)).join('\n'), 'ssl.keystore.certificate.chain': server.chain }),
      refusal({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.key': server.key, 'ssl.keystore.certificate.chain': server.chain, 'ssl.keystore.password': STORE_PASSWORD }),
    ].map((e) => `${e.message} ${String(e.cause ?? '')}`);
    const keyBody = (pem: string): string[] => pem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
    for (const message of messages) {
      expect(message).not.toContain('wrong-password-xyz');
      expect(message).not.toContain(STORE_PASSWORD);
      expect(message).not.toContain('PRIVATE KEY-----');
      for (const line of [...keyBody(server.key), ...keyBody(alice.key)]) expect(message).not.toContain(line);
    }
  });
});

describe('trust stores', () => {
  it('reads trusted certificates from a PEM file or inline PEM', async () => {
    for (const truststore of [{ 'ssl.truststore.location': pki.ca.certPath }, { 'ssl.truststore.certificates': pki.ca.cert }] as Record<string, string>[]) {
      const settings = tlsServerOptions(configs({ ...pemConfigs({ 'ssl.client.auth': 'required' }), 'ssl.truststore.location': '', ...truststore }));
      expect(settings.secureContext.ca).toEqual([pki.ca.cert]);
      const { port } = await listen(settings);
      expect((await connect(port, withCert(alice))).answer).toBe('User:CN=alice,OU=Test,O=Ledgerline,C=US');
    }
  });

  it('trusts a client certificate issued by an intermediate CA the trust store names alone, as Java PKIX does', async () => {
    const intermediate = pki.issue('intermediate', '/O=Ledgerline/CN=Ledgerline Intermediate CA', { isCa: true });
    const carol = pki.client('carol', '/O=Ledgerline/CN=carol', { issuer: intermediate });
    const settings = tlsServerOptions(configs(pemConfigs({ 'ssl.client.auth': 'required', 'ssl.truststore.location': intermediate.certPath })));
    const { port } = await listen(settings);
    expect((await connect(port, withCert(carol))).answer).toBe('User:CN=carol,O=Ledgerline');
    expect((await connect(port, withCert(alice))).answer).toBe(''); // issued by the root, which it does not trust
  });

  it('refuses trust stores as Kafka does, and those Node cannot read, saying what to do', () => {
    const jks = pki.write('truststore.jks', Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0, 0, 0, 0]));
    const p12 = pki.pkcs12Truststore([pki.ca], 'trust-pw', 'truststore.p12');
    const keystore = { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': server.keystorePath };
    const cases: [Record<string, string>, string, string][] = [
      [{ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.certificates': pki.ca.cert }, 'ssl.truststore.certificates', 'only with ssl.truststore.type=PEM'],
      [{ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': pki.ca.cert, 'ssl.truststore.location': pki.ca.certPath }, 'ssl.truststore.location', 'both a trust store location and separate trusted certificates'],
      [{ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': pki.ca.cert, 'ssl.truststore.password': 'p' }, 'ssl.truststore.password', 'cannot be given with PEM'],
      [{ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': pki.ca.certPath, 'ssl.truststore.password': 'p' }, 'ssl.truststore.password', 'cannot be given with PEM'],
      [{ 'ssl.truststore.password': 'p' }, 'ssl.truststore.password', 'no trust store'],
      [{ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': p12, 'ssl.truststore.password': 'trust-pw' }, 'ssl.truststore.location', 'a PKCS12 trust store cannot be read: Node.js reads PKCS12 only as a key and certificate; export the certificates to PEM (openssl pkcs12'],
      [{ 'ssl.truststore.location': jks }, 'ssl.truststore.location', 'is a JKS key store, which Node.js cannot read'],
      [{ 'ssl.truststore.location': pki.ca.certPath }, 'ssl.truststore.location', 'is a PEM file, but ssl.truststore.type is JKS: set ssl.truststore.type=PEM'],
      [{ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': server.keyPath }, 'ssl.truststore.location', 'at least one certificate expected'],
    ];
    for (const [values, config, message] of cases) {
      const e = refusal({ ...keystore, ...values });
      expect(e.config, message).toBe(config);
      expect(e.message).toContain(message);
    }
  });

  it('leaves Node its default roots without a trust store, as Kafka leaves Java its cacerts', () => {
    const settings = tlsServerOptions(configs({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': server.keystorePath }));
    expect(settings.secureContext.ca).toBeUndefined();
    expect(settings.files).toEqual([server.keystorePath]);
  });
});

describe('ssl.client.auth', () => {
  const principals = async (clientAuth: string | null): Promise<{ anonymous: Outcome; trusted: Outcome; untrusted: Outcome; settings: TlsListenerSettings; failures: string[]; refused: TlsAuthenticationError[] }> => {
    const settings = tlsServerOptions(configs(pemConfigs(clientAuth ? { 'ssl.client.auth': clientAuth } : {})));
    const listener = await listen(settings);
    const failures: string[] = [];
    const attempt = async (options: tls.ConnectionOptions, who: string): Promise<Outcome> => {
      const before = listener.handshakeFailures.length;
      const outcome = await connect(listener.port, options);
      if (listener.handshakeFailures.length > before) failures.push(who);
      return outcome;
    };
    return { settings, anonymous: await attempt({}, 'anonymous'), trusted: await attempt(withCert(alice), 'trusted'), untrusted: await attempt(withCert(mallory), 'untrusted'), failures, refused: listener.refused };
  };

  it('none (the default): no certificate is asked for, every client is ANONYMOUS', async () => {
    const { settings, anonymous, trusted, untrusted, failures, refused } = await principals(null);
    expect([settings.requestCert, settings.rejectUnauthorized]).toEqual([false, false]);
    expect([anonymous.answer, trusted.answer, untrusted.answer]).toEqual(['User:ANONYMOUS', 'User:ANONYMOUS', 'User:ANONYMOUS']);
    expect([failures, refused]).toEqual([[], []]);
  });

  it('requested: a client without a certificate is ANONYMOUS, a trusted one is its DN, an untrusted one is closed (as JSSE fails its handshake)', async () => {
    const { settings, anonymous, trusted, untrusted, failures, refused } = await principals('requested');
    expect([settings.requestCert, settings.rejectUnauthorized]).toEqual([true, false]);
    expect(anonymous.answer).toBe('User:ANONYMOUS');
    expect(trusted.answer).toBe('User:CN=alice,OU=Test,O=Ledgerline,C=US');
    // Node completed that handshake; verifiedClientCertificate refused the certificate and the server closed it.
    expect(untrusted.answer).toBe('');
    expect(failures).toEqual([]);
    expect(refused.map((e) => [e.code, e.message])).toEqual([['LL_ERR_SSL_AUTHENTICATION', 'client certificate CN=mallory,OU=Test,O=Ledgerline,C=US is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)']]);
  });

  it('required: only a client with a trusted certificate completes the handshake', async () => {
    const { settings, anonymous, trusted, untrusted, failures } = await principals('REQUIRED');
    expect([settings.requestCert, settings.rejectUnauthorized]).toEqual([true, true]);
    expect(trusted.answer).toBe('User:CN=alice,OU=Test,O=Ledgerline,C=US');
    expect([anonymous.answer, untrusted.answer]).toEqual(['', '']);
    expect(failures).toEqual(['anonymous', 'untrusted']);
  });

  it('refuses a value that is not none, requested or required', () => {
    expect(refusal(pemConfigs({ 'ssl.client.auth': 'optional' })).message).toBe('ssl.client.auth: "optional" is not one of required, requested, none');
  });
});

describe('protocols and cipher suites', () => {
  const settingsWith = (extra: Record<string, string>): TlsListenerSettings => tlsServerOptions(configs(pemConfigs(extra)));

  it('enables TLSv1.2 and TLSv1.3 by default, and when the list is empty (the engine defaults)', () => {
    for (const extra of [{}, { 'ssl.enabled.protocols': '' }, { 'ssl.enabled.protocols': 'TLSv1.3, TLSv1.2' }] as Record<string, string>[]) {
      const { minVersion, maxVersion } = settingsWith(extra).secureContext;
      expect([minVersion, maxVersion]).toEqual(['TLSv1.2', 'TLSv1.3']);
    }
  });

  it('accepts only the versions of ssl.enabled.protocols', async () => {
    const only12 = await listen(settingsWith({ 'ssl.enabled.protocols': 'TLSv1.2' }));
    expect((await connect(only12.port)).protocol).toBe('TLSv1.2');
    expect((await connect(only12.port, { minVersion: 'TLSv1.3' })).answer).toBe('');
    const only13 = await listen(settingsWith({ 'ssl.enabled.protocols': 'TLSv1.3,SSLv2Hello' }));
    expect((await connect(only13.port)).protocol).toBe('TLSv1.3');
    expect((await connect(only13.port, { maxVersion: 'TLSv1.2' })).answer).toBe('');
  });

  it('passes TLSv1.1 on, which OpenSSL 3 then refuses to negotiate as current JDKs do', async () => {
    const settings = settingsWith({ 'ssl.enabled.protocols': 'TLSv1.1,TLSv1.2' });
    expect(settings.secureContext.minVersion).toBe('TLSv1.1');
    const { port } = await listen(settings);
    expect((await connect(port, { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1' })).answer).toBe('');
  });

  it.each([
    ['TLSv1.1,TLSv1.3', 'ssl.enabled.protocols', 'must be a contiguous range'],
    ['TLSv1.4', 'ssl.enabled.protocols', '"TLSv1.4" is not supported'],
    ['SSLv3,TLSv1', 'ssl.enabled.protocols', '"SSLv3" is not supported'],
    ['tlsv1.2', 'ssl.enabled.protocols', '"tlsv1.2" is not supported'],
    ['SSLv2Hello', 'ssl.enabled.protocols', 'names no TLS version'],
  ])('refuses ssl.enabled.protocols=%s', (value, config, message) => {
    const e = refusal(pemConfigs({ 'ssl.enabled.protocols': value }));
    expect(e.config).toBe(config);
    expect(e.message).toContain(message);
  });

  it('checks ssl.protocol, which bounds no version on a server (as JSSE)', async () => {
    const { port } = await listen(settingsWith({ 'ssl.protocol': 'TLSv1.2' }));
    expect((await connect(port)).protocol).toBe('TLSv1.3');
    for (const name of ['TLS', 'tlsv1.3', 'SSL']) expect(() => settingsWith({ 'ssl.protocol': name })).not.toThrow();
    expect(refusal(pemConfigs({ 'ssl.protocol': 'DTLSv1.2' })).message).toContain('ssl.protocol: "DTLSv1.2" is not a TLS protocol name');
  });

  it('maps IANA cipher suite names to OpenSSL names, and negotiates them', async () => {
    const tls12 = settingsWith({ 'ssl.cipher.suites': 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_EMPTY_RENEGOTIATION_INFO_SCSV' });
    expect(tls12.secureContext.ciphers).toBe('ECDHE-ECDSA-AES128-GCM-SHA256');
    // No TLS 1.3 suite: TLS 1.3 is not negotiated, as JSSE drops a version none of its suites can use.
    expect(tls12.secureContext.maxVersion).toBe('TLSv1.2');
    const a = await listen(tls12);
    expect(await connect(a.port)).toMatchObject({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', answer: 'User:ANONYMOUS' });

    const tls13 = settingsWith({ 'ssl.cipher.suites': 'TLS_CHACHA20_POLY1305_SHA256' });
    expect([tls13.secureContext.ciphers, tls13.secureContext.minVersion]).toEqual(['TLS_CHACHA20_POLY1305_SHA256', 'TLSv1.3']);
    const b = await listen(tls13);
    expect(await connect(b.port)).toMatchObject({ protocol: 'TLSv1.3', cipher: 'TLS_CHACHA20_POLY1305_SHA256' });
    expect((await connect(b.port, { maxVersion: 'TLSv1.2' })).answer).toBe('');

    const both = settingsWith({ 'ssl.cipher.suites': 'TLS_AES_256_GCM_SHA384,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
    const c = await listen(both);
    expect(await connect(c.port, { maxVersion: 'TLSv1.2' })).toMatchObject({ protocol: 'TLSv1.2', cipher: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384' });
    expect(await connect(c.port)).toMatchObject({ protocol: 'TLSv1.3', cipher: 'TLS_AES_256_GCM_SHA384' });
  });

  it('refuses suites OpenSSL does not have, and suites that leave no enabled version', () => {
    expect(refusal(pemConfigs({ 'ssl.cipher.suites': 'TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256' })).message).toContain('"TLS_ECDH_ECDSA_WITH_AES_128_GCM_SHA256" is not a cipher suite OpenSSL has');
    expect(refusal(pemConfigs({ 'ssl.cipher.suites': 'ECDHE-RSA-AES128-GCM-SHA256' })).config).toBe('ssl.cipher.suites');
    expect(refusal(pemConfigs({ 'ssl.cipher.suites': 'TLS_AES_128_GCM_SHA256', 'ssl.enabled.protocols': 'TLSv1.2' })).message).toContain('has no suite for the versions of ssl.enabled.protocols');
  });

  it('names each TLS 1.2 suite as OpenSSL does (openssl ciphers -stdname)', () => {
    const listing = execFileSync('openssl', ['ciphers', '-stdname', 'ALL:COMPLEMENTOFALL:@SECLEVEL=0'], { encoding: 'utf8' });
    const openssl = new Map(listing.split('\n').map((line) => line.split(/\s+-\s+|\s+/)).filter((f) => f.length >= 2).map((f) => [f[0]!, f[1]!]));
    for (const [iana, name] of OPENSSL_CIPHER_NAMES) expect(openssl.get(iana), iana).toBe(name);
  });
});

describe('TlsContextReloader', { timeout: 30_000 }, () => {
  /** A pino logger whose records the test reads. */
  function capturingLogger(): { logger: Logger; records: { level: number; msg: string; err?: { message: string } }[] } {
    const records: { level: number; msg: string; err?: { message: string } }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void records.push(JSON.parse(line)) });
    return { logger, records };
  }

  async function waitFor(what: string, condition: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Replaces `path` as an operator's deploy tool would: write a temporary file, rename it over. */
  function replace(path: string, text: string): void {
    writeFileSync(`${path}.tmp`, text);
    renameSync(`${path}.tmp`, path);
  }

  let reloaders: TlsContextReloader[] = [];
  afterEach(() => {
    for (const r of reloaders) r.close();
    reloaders = [];
  });

  async function reloadingListener(extra: Record<string, string> = {}, mode: 'principal' | 'echo' = 'principal') {
    const cert = pki.server(`reload-${Math.random().toString(36).slice(2, 10)}`);
    const values = pemConfigs(extra, cert);
    const load = (): TlsListenerSettings => tlsServerOptions(configs(values));
    const settings = load();
    const listener = await listen(settings, mode);
    const { logger, records } = capturingLogger();
    const reloader = new TlsContextReloader(listener.server, settings, load, logger, { intervalMs: 25, settleMs: 25 });
    reloaders.push(reloader);
    return { cert, listener, reloader, records, keystore: cert.keystorePath };
  }

  it('serves a replaced certificate to new connections while established ones keep theirs', async () => {
    const { cert, listener, reloader, records, keystore } = await reloadingListener({}, 'echo');
    // An established connection, before the reload.
    const established = tls.connect({ host: '127.0.0.1', port: listener.port, servername: 'localhost', ca: pki.ca.cert });
    established.setEncoding('utf8');
    const lines: string[] = [];
    established.on('data', (d: string) => lines.push(...d.split('\n').filter(Boolean)));
    await waitFor('the established connection', () => lines.length === 1);
    expect(established.getPeerX509Certificate()!.serialNumber).toBe(cert.serialNumber);

    const renewed = pki.server(`${cert.name}-renewed`); // same subject and names, new key and serial
    replace(keystore, renewed.key + renewed.chain);
    await waitFor('the reload', () => reloader.settings.certificate.serialNumber === renewed.serialNumber);
    expect(records.find((r) => r.msg === 'TLS key/trust stores reloaded')).toMatchObject({ serialNumber: renewed.serialNumber, subject: 'CN=localhost,O=Ledgerline' });

    const fresh = await new Promise<tls.TLSSocket>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port: listener.port, servername: 'localhost', ca: pki.ca.cert }, () => resolve(s));
    });
    expect(fresh.getPeerX509Certificate()!.serialNumber).toBe(renewed.serialNumber);
    fresh.destroy();
    // The established connection still works, on its first certificate.
    established.write('still here\n');
    await waitFor('the echo', () => lines.includes('still here'));
    expect(established.getPeerX509Certificate()!.serialNumber).toBe(cert.serialNumber);
    established.destroy();
  });

  it('keeps the current certificate when the new file is broken, and takes the next good one', async () => {
    const { cert, listener, reloader, records, keystore } = await reloadingListener();
    // A half-written file. fs.watchFile takes its first stat asynchronously: a write before that stat is its
    // baseline and is never reported, so the broken file is written again (growing) until the reload notices it.
    let rewrites = 0;
    let lastWrite = 0;
    await waitFor('the failed reload', () => {
      if (records.some((r) => r.level === 50)) return true;
      if (Date.now() - lastWrite >= 500) {
        writeFileSync(keystore, `-----BEGIN PRIVATE KEY-----\nnot a key\n${'#'.repeat(rewrites++)}`);
        lastWrite = Date.now();
      }
      return false;
    });
    const failure = records.find((r) => r.level === 50)!;
    expect(failure.msg).toBe('TLS key/trust store reload failed; the listener keeps its current certificate');
    expect(failure.err!.message).toContain(`ssl.keystore.location (${keystore})`);
    expect(reloader.settings.certificate.serialNumber).toBe(cert.serialNumber);
    expect((await connect(listener.port)).serverCertificate!.serialNumber).toBe(cert.serialNumber);

    const renewed = pki.server(`${cert.name}-fixed`);
    replace(keystore, renewed.key + renewed.chain);
    await waitFor('the reload', () => reloader.settings.certificate.serialNumber === renewed.serialNumber);
    expect((await connect(listener.port)).serverCertificate!.serialNumber).toBe(renewed.serialNumber);
  });

  it('refuses a new subject unless ssl.allow.dn.changes=true, as Kafka refuses such a dynamic update', async () => {
    const strict = await reloadingListener();
    const other = pki.server(`${strict.cert.name}-other-dn`, '/O=Ledgerline/OU=Other/CN=localhost');
    replace(strict.keystore, other.key + other.chain);
    await waitFor('the refused reload', () => strict.records.some((r) => r.level === 50));
    expect(strict.records.find((r) => r.level === 50)!.err!.message).toContain("the new certificate's subject CN=localhost,OU=Other,O=Ledgerline differs from the current CN=localhost,O=Ledgerline");
    expect((await connect(strict.listener.port)).serverCertificate!.serialNumber).toBe(strict.cert.serialNumber);

    const lenient = await reloadingListener({ 'ssl.allow.dn.changes': 'true' });
    const other2 = pki.server(`${lenient.cert.name}-other-dn`, '/O=Ledgerline/OU=Other/CN=localhost');
    replace(lenient.keystore, other2.key + other2.chain);
    await waitFor('the reload', () => lenient.reloader.settings.certificate.serialNumber === other2.serialNumber);
    expect((await connect(lenient.listener.port)).serverCertificate!.serialNumber).toBe(other2.serialNumber);
  });

  it('refuses dropping a subject alternative name unless ssl.allow.san.changes=true; adding one is fine', async () => {
    const strict = await reloadingListener();
    const more = pki.server(`${strict.cert.name}-more`, undefined, { altNames: ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1', 'DNS:broker-1.example'] });
    replace(strict.keystore, more.key + more.chain);
    await waitFor('the reload', () => strict.reloader.settings.certificate.serialNumber === more.serialNumber);
    const fewer = pki.server(`${strict.cert.name}-fewer`, undefined, { altNames: ['DNS:localhost', 'IP:127.0.0.1'] });
    replace(strict.keystore, fewer.key + fewer.chain);
    await waitFor('the refused reload', () => strict.records.some((r) => r.level === 50));
    expect(strict.records.find((r) => r.level === 50)!.err!.message).toContain('lacks subject alternative names of the current one: IP Address:0:0:0:0:0:0:0:1, DNS:broker-1.example');
    expect(strict.reloader.settings.certificate.serialNumber).toBe(more.serialNumber);

    const lenient = await reloadingListener({ 'ssl.allow.san.changes': 'true' });
    const fewer2 = pki.server(`${lenient.cert.name}-fewer`, undefined, { altNames: ['DNS:localhost', 'IP:127.0.0.1'] });
    replace(lenient.keystore, fewer2.key + fewer2.chain);
    await waitFor('the reload', () => lenient.reloader.settings.certificate.serialNumber === fewer2.serialNumber);
  });

  it('reloads the trust store: clients of a newly trusted CA get in, those of the dropped one no longer', async () => {
    const truststore = pki.write('reloaded-truststore.pem', pki.ca.cert);
    const { listener, reloader } = await reloadingListener({ 'ssl.client.auth': 'required', 'ssl.truststore.location': truststore });
    expect((await connect(listener.port, withCert(alice))).answer).toBe('User:CN=alice,OU=Test,O=Ledgerline,C=US');
    expect((await connect(listener.port, withCert(mallory))).answer).toBe('');
    replace(truststore, rogue.ca.cert);
    await waitFor('the reload', () => reloader.settings.secureContext.ca?.[0 as never] === rogue.ca.cert);
    expect((await connect(listener.port, withCert(mallory))).answer).toBe('User:CN=mallory,OU=Test,O=Ledgerline,C=US');
    expect((await connect(listener.port, withCert(alice))).answer).toBe('');
  });

  it('resumes no session of the old context after a reload, as a new SSLContext in Java', async () => {
    const { cert, listener, reloader, keystore } = await reloadingListener();
    const handshake = (session?: Buffer): Promise<{ reused: boolean; session: Buffer | undefined }> =>
      new Promise((resolve) => {
        let ticket: Buffer | undefined;
        let reused = false;
        const socket = tls.connect({ host: '127.0.0.1', port: listener.port, servername: 'localhost', ca: pki.ca.cert, ...(session ? { session } : {}) }, () => {
          reused = socket.isSessionReused();
        });
        socket.on('session', (s: Buffer) => {
          ticket = s;
        });
        socket.on('error', () => undefined);
        socket.resume();
        socket.on('close', () => resolve({ reused, session: ticket }));
      });
    const first = await handshake();
    expect(first.session).toBeDefined();
    expect((await handshake(first.session)).reused).toBe(true);
    const renewed = pki.server(`${cert.name}-sessions`);
    replace(keystore, renewed.key + renewed.chain);
    await waitFor('the reload', () => reloader.settings.certificate.serialNumber === renewed.serialNumber);
    expect((await handshake(first.session)).reused).toBe(false);
  });

  it('stops watching when closed', async () => {
    const { cert, reloader, records, keystore } = await reloadingListener();
    reloader.close();
    const renewed = pki.server(`${cert.name}-after-close`);
    replace(keystore, renewed.key + renewed.chain);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(reloader.settings.certificate.serialNumber).toBe(cert.serialNumber);
    expect(reloader.reload()).toBe(false);
    expect(records).toEqual([]);
  });
});
