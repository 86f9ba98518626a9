/**
 * One listener's security, built once at start from its configs: what a connection accepted on it starts with.
 *
 *   PLAINTEXT       User:ANONYMOUS
 *   SSL             TLS (tls.ts); the principal from the client certificate (principal.ts), or ANONYMOUS
 *   SASL_PLAINTEXT  the SASL exchange (sasl/authenticator.ts) before any request; the principal it names
 *   SASL_SSL        both: TLS, then SASL; the principal is the SASL user (Kafka's SaslServerAuthenticator)
 *
 * Authentications are counted per listener as Kafka's socket-server metrics count them
 * (successful-authentication-total, failed-authentication-total): a TLS handshake on an SSL listener, a SASL
 * exchange on a SASL one.
 */
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Logger } from 'pino';
import { ANONYMOUS, type Principal } from '../api/services.js';
import type { ConnectionSecurity } from '../server/connection.js';
import type { Session } from '../server/dispatch.js';
import { listenerConfig, usesSasl, usesTls, type SecurityProtocol } from './listener-security.js';
import { SslPrincipalMapper, sslPrincipal } from './principal.js';
import { SaslAuthenticator } from './sasl/authenticator.js';
import { SaslAuthenticationError } from './sasl/errors.js';
import { SaslMechanisms, type ScramCredentialSource } from './sasl/servers.js';
import { tlsServerOptions, verifiedClientCertificate, type TlsListenerSettings } from './tls.js';

/** Kafka's per-listener authentication counters. */
export interface AuthenticationMetrics {
  succeeded(listenerName: string): void;
  failed(listenerName: string): void;
  /** KIP-368 re-authentications (successful-reauthentication-total, failed-reauthentication-total). */
  reauthenticated(listenerName: string, ok: boolean): void;
  /** Connections closed because their session expired (expired-connections-killed-count). */
  expiredSessionClosed(listenerName: string): void;
}

/** What the SASL exchange needs of the broker's dispatch seam. */
export interface SaslDispatch {
  /** The answer to an ApiVersions request frame on the connection of `session` (null when it does not parse). */
  apiVersions(frame: Buffer, session: Session): Promise<Buffer[] | null>;
  errorResponse(frame: Buffer, listenerName: string, code: number, message: string): Buffer[] | null;
}

export interface ListenerSecurityDeps {
  readonly values: ReadonlyMap<string, string | null>;
  readonly scram: ScramCredentialSource;
  readonly dispatch: SaslDispatch;
  readonly metrics: AuthenticationMetrics;
  readonly log: Logger;
}

export class ListenerSecurity {
  /** TLS settings on SSL and SASL_SSL listeners, null on the others. */
  readonly tls: TlsListenerSettings | null;
  /** Reads the TLS settings again (a certificate reload, tls.ts TlsContextReloader). */
  readonly loadTls: () => TlsListenerSettings;
  private readonly sasl: SaslMechanisms | null;
  private readonly principals: SslPrincipalMapper | null;
  private readonly saslMaxReceiveBytes: number;
  private readonly failedAuthenticationDelayMs: number;
  /** connections.max.reauth.ms by mechanism (listener.name.<l>.<mechanism>.connections.max.reauth.ms over the listener's). */
  private readonly maxReauthMs: (mechanism: string) => number;

  /** Reads and checks the listener's configs: throws (LL_ERR_CONFIG) for what cannot be served. */
  constructor(
    readonly listenerName: string,
    readonly protocol: SecurityProtocol,
    private readonly deps: ListenerSecurityDeps,
  ) {
    const scoped = listenerConfig(deps.values, listenerName);
    // KIP-684: on a SASL_SSL listener ssl.client.auth applies only when set for that listener; the unscoped value
    // is the SSL listeners' (clients there authenticate with SASL, and a certificate would be asked of them all).
    const prefix = `listener.name.${listenerName.toLowerCase()}.`;
    const get = protocol === 'SASL_SSL' ? (name: string) => (name === 'ssl.client.auth' ? (deps.values.get(prefix + name) ?? null) : scoped(name)) : scoped;
    this.loadTls = () => tlsServerOptions(get);
    this.tls = usesTls(protocol) ? this.loadTls() : null;
    this.principals = protocol === 'SSL' ? new SslPrincipalMapper(get('ssl.principal.mapping.rules') ?? 'DEFAULT') : null;
    this.sasl = usesSasl(protocol) ? new SaslMechanisms(listenerName, get, deps.values, deps.scram, deps.log) : null;
    this.saslMaxReceiveBytes = Number(get('sasl.server.max.receive.size') ?? 524_288);
    this.failedAuthenticationDelayMs = Number(get('connection.failed.authentication.delay.ms') ?? 100);
    const reauth = new Map<string, number>();
    this.maxReauthMs = (mechanism) => {
      let ms = reauth.get(mechanism);
      if (ms === undefined) {
        // Kafka's per-mechanism override is listener-scoped only: listener.name.<l>.<mechanism>.connections.max.reauth.ms.
        const own = deps.values.get(`${prefix}${mechanism.toLowerCase()}.connections.max.reauth.ms`);
        reauth.set(mechanism, (ms = Number(own ?? get('connections.max.reauth.ms') ?? 0)));
      }
      return ms;
    };
  }

  /** Loads what the listener's mechanisms need (an OAUTHBEARER JWKS) before it serves; a failure fails the start. */
  async start(): Promise<void> {
    await this.sasl?.start();
  }

  close(): void {
    this.sasl?.close();
  }

  /** What a connection accepted on this listener starts with (a TLS socket has completed its handshake). */
  forSocket(socket: Socket): ConnectionSecurity {
    let principal: Principal = ANONYMOUS;
    if (this.protocol === 'SSL') {
      try {
        // ssl.client.auth=requested lets a client without a certificate through as ANONYMOUS, as Kafka does; an
        // untrusted one is refused, as Java's TLS refuses it.
        principal = sslPrincipal(verifiedClientCertificate(socket as TLSSocket), this.principals!);
      } catch (err) {
        // An untrusted certificate, or no mapping rule matched: Kafka fails the authentication.
        this.deps.metrics.failed(this.listenerName);
        this.deps.log.info({ err, listener: this.listenerName, remote: `${socket.remoteAddress}:${socket.remotePort}` }, 'TLS client authentication failed: closing the connection');
        socket.destroy();
        return { principal };
      }
      this.deps.metrics.succeeded(this.listenerName);
    }
    const mechanisms = this.sasl;
    if (!mechanisms) return { principal };
    const { dispatch, metrics } = this.deps;
    const listenerName = this.listenerName;
    return {
      principal,
      saslMaxReceiveBytes: this.saslMaxReceiveBytes,
      onSessionExpired: () => metrics.expiredSessionClosed(listenerName),
      sasl: (session) =>
        new SaslAuthenticator({
          mechanisms: mechanisms.mechanisms,
          newServer: (m) => mechanisms.newServer(m),
          apiVersions: (frame) => dispatch.apiVersions(frame, session),
          errorResponse: (frame, code, message) => dispatch.errorResponse(frame, listenerName, code, message),
          failedAuthenticationDelayMs: this.failedAuthenticationDelayMs,
          log: session.log,
          maxReauthMs: this.maxReauthMs,
          onComplete: (user, mechanism, reauthentication, sessionLifetimeMs) => {
            session.principal = { type: 'User', name: user };
            if (reauthentication) metrics.reauthenticated(listenerName, true);
            else metrics.succeeded(listenerName);
            session.log.debug({ principal: `User:${user}`, mechanism, reauthentication, sessionLifetimeMs }, 'SASL authentication succeeded');
          },
          onFailure: (reason, err, reauthentication) => {
            if (reauthentication) metrics.reauthenticated(listenerName, false);
            else metrics.failed(listenerName);
            // The reason the client is not told (which check failed), for the operator; never a secret.
            const detail = err instanceof SaslAuthenticationError ? err.reason : undefined;
            session.log.info({ listener: listenerName, reason, detail, reauthentication }, `SASL ${reauthentication ? 're-authentication' : 'authentication'} failed: closing the connection`);
          },
        }),
    };
  }
}
