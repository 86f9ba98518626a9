/**
 * `compare --security SASL_SSL`: what TLS and SASL SCRAM-SHA-512 cost each broker. Both brokers are started the
 * same way for every run, PLAINTEXT or not: a PLAINTEXT listener (the load generator's on PLAINTEXT runs, the
 * admin path, and Kafka's inter-broker and controller traffic) and a SASL_SSL listener (the load generator's on
 * SASL_SSL runs), so the runs of a broker differ only in the listener its clients use.
 *
 *   run start ── a CA and a server certificate for 127.0.0.1 (IP SAN) in the run's temp dir (compat/lib/pki.ts)
 *   each broker ── SASL_SSL listener: ssl.keystore.type=PEM (key + chain, KIP-651), no client certificate,
 *                  sasl.enabled.mechanisms=SCRAM-SHA-512 (Kafka: ScramLoginModule as the listener's JAAS entry)
 *              ── the user created with AlterUserScramCredentials on PLAINTEXT (as `kafka-configs --alter
 *                 --add-config SCRAM-SHA-512=[iterations=4096,...]` sends it), then signed in on SASL_SSL until
 *                 the broker knows it (Kafka's brokers learn credentials from the metadata log, a moment later)
 *   load generator ── TLS trusting the run's CA, the certificate checked against 127.0.0.1, then SaslHandshake
 *                     and SaslAuthenticate (src/client/sasl-scram-client.ts) on every connection
 *
 * 4096 iterations is Kafka's minimum and kafka-configs' default; it only costs the sign-in of each connection,
 * which happens before the measured window.
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import type { ConnectionOptions } from '../../src/client/index.js';
import { Connection, parseHostPort } from '../../src/client/index.js';
import { AlterUserScramCredentialsApi } from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { Pki } from '../../compat/lib/pki.js';
import type { SinkTls } from './limits.js';

/** The protocols a security comparison runs: PLAINTEXT, and the one asked for. */
export type BenchProtocol = 'PLAINTEXT' | 'SASL_SSL';

export const SECURITY_PROTOCOLS: readonly BenchProtocol[] = ['PLAINTEXT', 'SASL_SSL'];

/** SCRAM-SHA-512: AlterUserScramCredentials' mechanism 2 (Kafka's ScramMechanism.SCRAM_SHA_512.type()). */
const MECHANISM = 'SCRAM-SHA-512';
const MECHANISM_TYPE = 2;
const ITERATIONS = 4096;

/** The listener each broker gets besides PLAINTEXT. */
export const SECURE_LISTENER = { name: 'SASL_SSL', protocol: 'SASL_SSL' } as const;

/** The client options of a connection that signs in (ConnectionOptions' `tls` and `sasl`). */
export type SecureClientOptions = Pick<ConnectionOptions, 'tls' | 'sasl'>;

export interface BenchSecurity {
  readonly protocol: 'SASL_SSL';
  readonly mechanism: typeof MECHANISM;
  /** Settings both brokers run with (Kafka's names; Ledgerline ignores the JAAS entry SCRAM does not need). */
  readonly brokerSettings: Readonly<Record<string, string>>;
  readonly client: SecureClientOptions;
  readonly user: string;
  /** The server certificate's files and the CA, for the loopback TLS limit (limits.ts). */
  readonly sink: SinkTls;
  /** Removes the certificates and keys. */
  cleanup(): void;
}

/** The certificates (under `dir`), the user and the settings of one comparison. */
export function prepareSecurity(dir: string): BenchSecurity {
  const pki = Pki.create(dir);
  const server = pki.server('broker');
  const user = 'ledgerline-bench';
  const password = randomBytes(18).toString('base64url');
  return {
    protocol: 'SASL_SSL',
    mechanism: MECHANISM,
    brokerSettings: {
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': server.keystorePath,
      'sasl.enabled.mechanisms': MECHANISM,
      // Kafka needs a login module for each mechanism a listener enables (JaasContext.loadServerContext).
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    },
    client: { tls: { ca: pki.ca.cert }, sasl: { mechanism: MECHANISM, username: user, password } },
    user,
    sink: { keyPath: server.keyPath, certPath: server.certPath, ca: pki.ca.cert },
    cleanup: () => pki.cleanup(),
  };
}

/**
 * Creates the user through the PLAINTEXT listener at `plaintext` (AlterUserScramCredentials v0 with a fresh salt
 * and Hi(password, salt, 4096), as Kafka's admin client computes it), then signs in on `secure` until the broker
 * accepts it (at most `timeoutMs`). Resolves with the TLS version and cipher suite of that sign-in.
 */
export async function createUser(sec: BenchSecurity, plaintext: string, secure: string, timeoutMs = 30_000): Promise<{ protocol: string | null; cipher: string }> {
  const sasl = sec.client.sasl!;
  const salt = randomBytes(32);
  const saltedPassword = pbkdf2Sync(sasl.password, salt, ITERATIONS, 64, 'sha512');
  const admin = await Connection.connect({ ...parseHostPort(plaintext), clientId: 'ledgerline-bench-admin' });
  try {
    const r = await admin.request(AlterUserScramCredentialsApi, {
      deletions: [],
      upsertions: [{ name: sec.user, mechanism: MECHANISM_TYPE, iterations: ITERATIONS, salt, saltedPassword }],
    });
    const failed = r.results.find((x) => x.errorCode !== 0);
    if (failed) throw new Error(`AlterUserScramCredentials for ${failed.user}: error ${failed.errorCode} ${failed.errorMessage ?? ''}`);
  } finally {
    await admin.close();
  }
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const conn = await Connection.connect({ ...parseHostPort(secure), clientId: 'ledgerline-bench-admin', ...sec.client });
      const session = conn.tlsSession!;
      await conn.close();
      return session;
    } catch (e) {
      if (Date.now() > deadline) throw new Error(`${sec.user} cannot sign in on ${secure} with ${MECHANISM} after ${timeoutMs / 1000} s: ${(e as Error).message}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
