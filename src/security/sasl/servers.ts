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
 * - OAUTHBEARER validates the client's JWT (KIP-255, KIP-768: jwt-validator.ts): against the keys of a JWKS with
 *   `listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class` =
 *   org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler and
 *   `sasl.oauthbearer.jwks.endpoint.url`, else unsigned tokens (Kafka's unsecured default, for tests). The JAAS
 *   options are those of `listener.name.<listener>.oauthbearer.sasl.jaas.config`.
 * - GSSAPI (Kafka's default) is not offered: a listener enabling it is refused at start.
 */
import { timingSafeEqual } from 'node:crypto';
import { ConfigError } from '../../config.js';
import { parseSaslJaasConfig, type JaasConfigEntry } from '../jaas.js';
import type { SaslServer } from './mechanism.js';
import { jaasPlainVerifier, PLAIN_LOGIN_MODULE, PLAIN_MECHANISM, PlainSaslServer, type PlainVerifier } from './plain.js';
import { JwtValidator } from '../jwt-validator.js';
import type { Logger } from '../../observability/logger.js';
import { OAUTHBEARER_MECHANISM, OAuthBearerSaslServer } from './oauthbearer.js';
import { isScramMechanism, scramCredentialOffLoop, ScramSaslServer, type ScramCredential, type ScramMechanismName } from './scram.js';

/** Where SCRAM credentials come from (the metadata store's ScramCredentialStore). */
export interface ScramCredentialSource {
  credential(user: string, mechanism: ScramMechanismName): Promise<ScramCredential | undefined>;
}

export const SUPPORTED_MECHANISMS: readonly string[] = [PLAIN_MECHANISM, 'SCRAM-SHA-256', 'SCRAM-SHA-512', OAUTHBEARER_MECHANISM];

export class SaslMechanisms {
  private readonly plain: PlainVerifier | null = null;
  private readonly oauthBearer: JwtValidator | null = null;

  /**
   * `get` reads a config as the listener sees it (listener-security.ts listenerConfig); `listenerName` names
   * the mechanism-scoped JAAS configs. Throws ConfigError for what Kafka would refuse or Ledgerline cannot do.
   */
  constructor(
    readonly listenerName: string,
    get: (name: string) => string | null,
    rawValues: ReadonlyMap<string, string | null>,
    private readonly scram: ScramCredentialSource,
    log?: Logger,
  ) {
    const enabled = (get('sasl.enabled.mechanisms') ?? '').split(',').map((m) => m.trim()).filter(Boolean);
    if (enabled.length === 0) throw new ConfigError(`listener ${listenerName}: sasl.enabled.mechanisms is empty: no SASL mechanisms are enabled`);
    const unsupported = enabled.filter((m) => !SUPPORTED_MECHANISMS.includes(m));
    if (unsupported.length > 0) {
      throw new ConfigError(`listener ${listenerName}: sasl.enabled.mechanisms names ${unsupported.join(', ')}, which Ledgerline does not offer; enable some of ${SUPPORTED_MECHANISMS.join(', ')} (listener.name.${listenerName.toLowerCase()}.sasl.enabled.mechanisms)`);
    }
    this.mechanisms = enabled;
    if (enabled.includes(OAUTHBEARER_MECHANISM)) {
      const [entry] = jaasEntries(listenerName, OAUTHBEARER_MECHANISM, rawValues);
      this.oauthBearer = JwtValidator.fromConfig(get, entry?.options ?? new Map(), log);
    }
    if (enabled.includes(PLAIN_MECHANISM)) {
      const entries = jaasEntries(listenerName, PLAIN_MECHANISM, rawValues);
      const jaas = jaasPlainVerifier(entries);
      const named = new Set(entries.filter((e) => e.loginModule === PLAIN_LOGIN_MODULE).flatMap((e) => [...e.options.keys()].filter((k) => k.startsWith('user_')).map((k) => k.slice('user_'.length))));
      this.plain = async (user, password) => (named.has(user) ? jaas(user, password) : this.plainAgainstScram(user, password));
    }
  }

  readonly mechanisms: readonly string[];

  /** Loads what the mechanisms need before the listener serves (an OAUTHBEARER JWKS): a failure fails the start. */
  async start(): Promise<void> {
    await this.oauthBearer?.start();
  }

  close(): void {
    this.oauthBearer?.close();
  }

  /** A server for one exchange of `mechanism` (one of `mechanisms`). */
  newServer(mechanism: string): SaslServer {
    if (mechanism === PLAIN_MECHANISM && this.plain) return new PlainSaslServer(this.plain);
    if (mechanism === OAUTHBEARER_MECHANISM && this.oauthBearer) {
      const validator = this.oauthBearer;
      return new OAuthBearerSaslServer((token) => validator.validate(token));
    }
    if (isScramMechanism(mechanism) && this.mechanisms.includes(mechanism)) return new ScramSaslServer(mechanism, (user) => this.scram.credential(user, mechanism));
    throw new Error(`mechanism ${mechanism} is not enabled on listener ${this.listenerName}`);
  }

  /** PLAIN against a SCRAM credential: the password salted and hashed as SCRAM would, StoredKey compared. */
  private async plainAgainstScram(user: string, password: Buffer): Promise<boolean> {
    for (const mechanism of ['SCRAM-SHA-512', 'SCRAM-SHA-256'] as const) {
      const stored = await this.scram.credential(user, mechanism);
      if (!stored) continue;
      const derived = await scramCredentialOffLoop(mechanism, password, stored.salt, stored.iterations);
      return derived.storedKey.length === stored.storedKey.length && timingSafeEqual(derived.storedKey, stored.storedKey);
    }
    return false;
  }
}

/**
 * The JAAS config of one mechanism on a listener, as Kafka's JaasContext.loadServerContext finds it:
 * `listener.name.<listener>.<mechanism, lower case>.sasl.jaas.config` (none: no entries).
 */
function jaasEntries(listenerName: string, mechanism: string, rawValues: ReadonlyMap<string, string | null>): JaasConfigEntry[] {
  const name = `listener.name.${listenerName.toLowerCase()}.${mechanism.toLowerCase()}.sasl.jaas.config`;
  const text = rawValues.get(name) ?? null;
  if (text === null || text.trim() === '') return [];
  try {
    return [parseSaslJaasConfig(text)];
  } catch (err) {
    throw new ConfigError(`${name}: ${(err as Error).message}`);
  }
}
