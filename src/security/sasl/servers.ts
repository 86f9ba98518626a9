/**
 * The SASL mechanisms a listener offers, and a fresh server of one for each connection: Kafka's
 * `sasl.enabled.mechanisms` with its callback handlers (PlainServerCallbackHandler, ScramServerCallbackHandler).
 *
 * - PLAIN checks a user against the listener's JAAS config first, `user_<name>="<password>"` options of
 *   `listener.name.<listener>.plain.sasl.jaas.config` (Kafka's PlainLoginModule); a user it does not name is
 *   checked against the SCRAM credentials in the metadata store (SCRAM-SHA-512, then SCRAM-SHA-256: the password
 *   is salted and hashed as SCRAM would, and StoredKey compared), so users created with `kafka-configs
 *   --entity-type users` can sign in with PLAIN over TLS too. The second source is Ledgerline's; Kafka's PLAIN
 *   knows JAAS users only.
 * - SCRAM-SHA-256 and SCRAM-SHA-512 verify against the metadata store (ScramCredentialStore), as Kafka's brokers
 *   verify against the credentials of its metadata log.
 * - GSSAPI (Kafka's default) and OAUTHBEARER are not offered: a listener enabling them is refused at start.
 */
import { timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../../config.js';
import { parseSaslJaasConfig, type JaasConfigEntry } from '../jaas.js';
import type { SaslServer } from './mechanism.js';
import { jaasPlainVerifier, PLAIN_LOGIN_MODULE, PLAIN_MECHANISM, PlainSaslServer, type PlainVerifier } from './plain.js';
import { isScramMechanism, scramCredential, ScramSaslServer, type ScramCredential, type ScramMechanismName } from './scram.js';

/** Where SCRAM credentials come from (the metadata store's ScramCredentialStore). */
export interface ScramCredentialSource {
  credential(user: string, mechanism: ScramMechanismName): Promise<ScramCredential | undefined>;
}

export const SUPPORTED_MECHANISMS: readonly string[] = [PLAIN_MECHANISM, 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

export class SaslMechanisms {
  private readonly plain: PlainVerifier | null = null;

  /**
   * `get` reads a config as the listener sees it (listener-security.ts listenerConfig); `listenerName` names
   * the mechanism-scoped JAAS configs. Throws ConfigError for what Kafka would refuse or Ledgerline cannot do.
   */
  constructor(
    readonly listenerName: string,
    get: (name: string) => string | null,
    rawValues: ReadonlyMap<string, string | null>,
    private readonly scram: ScramCredentialSource,
  ) {
    const enabled = (get('sasl.enabled.mechanisms') ?? '').split(',').map((m) => m.trim()).filter(Boolean);
    if (enabled.length === 0) throw new ConfigError(`listener ${listenerName}: sasl.enabled.mechanisms is empty: no SASL mechanisms are enabled`);
    const unsupported = enabled.filter((m) => !SUPPORTED_MECHANISMS.includes(m));
    if (unsupported.length > 0) {
      throw new ConfigError(`listener ${listenerName}: sasl.enabled.mechanisms names ${unsupported.join(', ')}, which Ledgerline does not offer; enable some of ${SUPPORTED_MECHANISMS.join(', ')} (listener.name.${listenerName.toLowerCase()}.sasl.enabled.mechanisms)`);
    }
    this.mechanisms = enabled;
    if (enabled.includes(PLAIN_MECHANISM)) {
      // Kafka's JaasContext.loadServerContext: listener.name.<listener>.<mechanism, lower case>.sasl.jaas.config.
      const jaasName = `listener.name.${listenerName.toLowerCase()}.plain.sasl.jaas.config`;
      const text = rawValues.get(jaasName) ?? null;
      let entries: JaasConfigEntry[] = [];
      if (text !== null && text.trim() !== '') {
        try {
          entries = [parseSaslJaasConfig(text)];
        } catch (err) {
          throw new ConfigError(`${jaasName}: ${(err as Error).message}`);
        }
      }
      const jaas = jaasPlainVerifier(entries);
      const named = new Set(entries.filter((e) => e.loginModule === PLAIN_LOGIN_MODULE).flatMap((e) => [...e.options.keys()].filter((k) => k.startsWith('user_')).map((k) => k.slice('user_'.length))));
      this.plain = async (user, password) => (named.has(user) ? jaas(user, password) : this.plainAgainstScram(user, password));
    }
  }

  readonly mechanisms: readonly string[];

  /** A server for one exchange of `mechanism` (one of `mechanisms`). */
  newServer(mechanism: string): SaslServer {
    if (mechanism === PLAIN_MECHANISM && this.plain) return new PlainSaslServer(this.plain);
    if (isScramMechanism(mechanism) && this.mechanisms.includes(mechanism)) return new ScramSaslServer(mechanism, (user) => this.scram.credential(user, mechanism));
    throw new Error(`mechanism ${mechanism} is not enabled on listener ${this.listenerName}`);
  }

  /** PLAIN against a SCRAM credential: the password salted and hashed as SCRAM would, StoredKey compared. */
  private async plainAgainstScram(user: string, password: Buffer): Promise<boolean> {
    for (const mechanism of ['SCRAM-SHA-512', 'SCRAM-SHA-256'] as const) {
      const stored = await this.scram.credential(user, mechanism);
      if (!stored) continue;
      const derived = scramCredential(mechanism, password, stored.salt, stored.iterations);
      return derived.storedKey.length === stored.storedKey.length && timingSafeEqual(derived.storedKey, stored.storedKey);
    }
    return false;
  }
}
