/**
 * The SASL exchange at the start of a connection on a SASL_PLAINTEXT or SASL_SSL listener, as Kafka's
 * SaslServerAuthenticator runs it. Until it completes, every frame of the connection comes here, one at a
 * time, and nothing reaches the API handlers:
 *
 *   INITIAL ──ApiVersions──► HANDSHAKE ──SaslHandshake(mechanism)──► AUTHENTICATE ──tokens──► COMPLETE
 *      └──────────SaslHandshake──────────┘          │ v0: raw size-prefixed tokens             (principal set;
 *                                                   │ v1: SaslAuthenticate requests             frames go to
 *   any other request, a frame that is no request,   ▼                                          the dispatcher)
 *   an unsupported mechanism, a failed token ──► FAILED: the answer Kafka gives, then the connection closes
 *
 * - Before the handshake only ApiVersions (once) and SaslHandshake are served; any other request closes the
 *   connection ("Unexpected Kafka request of type X during SASL handshake."), as does a first frame that is not
 *   a Kafka request (Kafka would take it as a GSSAPI token of a 0.9 client; GSSAPI is not offered here).
 * - SaslHandshake naming a mechanism the listener does not enable is answered UNSUPPORTED_SASL_MECHANISM with the
 *   enabled list, then closed. v0 of the handshake switches to raw tokens (no request header), v1 to
 *   SaslAuthenticate requests (KIP-152).
 * - In AUTHENTICATE, a request other than SaslAuthenticate is answered with its own error response carrying
 *   ILLEGAL_SASL_STATE and closed; a token the mechanism refuses is answered SASL_AUTHENTICATION_FAILED with the
 *   mechanism's message (never a secret) and closed. Failed answers wait `connection.failed.authentication.delay.ms`
 *   first, as Kafka delays them to slow down password guessing.
 * - Frames are bounded by `sasl.server.max.receive.size` (Kafka's 512 KiB default) while unauthenticated: the
 *   connection applies the bound; a larger size prefix closes the connection before its bytes are read.
 * - KIP-368 session lifetime: when the exchange completes, the session is given min(connections.max.reauth.ms,
 *   the credential's remaining lifetime (an OAUTHBEARER token's exp)), as SaslServerAuthenticator's
 *   calcCompletionTimesAndReturnSessionLifetimeMs computes it; SaslAuthenticate v1+ tells the client. Neither
 *   set: no lifetime (0), Kafka's default. A session with a lifetime expires: the connection closes it on the
 *   next request that is not a re-authentication (`sessionExpired`).
 * - KIP-368 re-authentication: on a session with a lifetime, a SaslHandshake starts the exchange again
 *   (`beginReauthentication`, at most once a second, as KafkaChannel.maybeBeginServerReauthentication allows):
 *
 *     COMPLETE ──SaslHandshake──► REAUTH ──(same mechanism)──► AUTHENTICATE ──tokens──► COMPLETE (new lifetime)
 *                                   └──(another mechanism: handshake answered, the next token refused)──► FAILED
 *
 *   The principal must not change ("Cannot change principals during re-authentication from User.a: User.b").
 */
import type { Logger } from 'pino';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { encodeResponseFrame, readRequestHeader } from '../../../protocol/headers.js';
import { SaslAuthenticateApi, createSaslAuthenticateResponse } from '../../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi, createSaslHandshakeResponse } from '../../../protocol/messages/017-sasl-handshake.gen.js';
import { Reader } from '../../../protocol/wire/reader.js';
import { IllegalSaslStateError, SaslAuthenticationError } from './errors.js';
import type { SaslServer } from './mechanism.js';

const API_VERSIONS = 18;

type State = 'initial' | 'handshake' | 'reauth' | 'authenticate' | 'complete' | 'failed';

/** Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS. */
const MIN_REAUTH_INTERVAL_MS = 1000;

/** What the authenticator answers a frame with. */
export type AuthStep =
  /** Frames to write; `close` ends the connection once they are written. */
  | { readonly kind: 'respond'; readonly chunks: Buffer[]; readonly close: boolean }
  /** End the connection without an answer. */
  | { readonly kind: 'close' }
  /** Authentication is complete: the frame is an ordinary request for the dispatcher. */
  | { readonly kind: 'dispatch' };

export interface SaslAuthenticatorOptions {
  /** The mechanisms the listener enables (sasl.enabled.mechanisms), as SaslHandshake lists them. */
  readonly mechanisms: readonly string[];
  /** A fresh server for one of `mechanisms`. */
  newServer(mechanism: string): SaslServer;
  /** Answers ApiVersions before the handshake (the dispatcher's own answer). */
  apiVersions(frame: Buffer): Promise<Buffer[] | null>;
  /** The error response of a request with `code` (its API's getErrorResponse), or null when it does not parse. */
  errorResponse(frame: Buffer, code: number, message: string): Buffer[] | null;
  /** connection.failed.authentication.delay.ms */
  readonly failedAuthenticationDelayMs: number;
  readonly log: Logger;
  /** connections.max.reauth.ms for a mechanism (listener- and mechanism-scoped); 0: not set. */
  maxReauthMs(mechanism: string): number;
  /** Called when an exchange completes, with the authenticated user and mechanism; `reauthentication` for a KIP-368 one. */
  onComplete(user: string, mechanism: string, reauthentication: boolean, sessionLifetimeMs: number): void;
  /** Called when an exchange fails, with why (for the log and the failed-authentication metric). */
  onFailure(reason: string, err: unknown, reauthentication: boolean): void;
  /** Clock in milliseconds since the epoch (tests). */
  now?(): number;
}

/** What a re-authentication must keep: the first exchange's mechanism and user. */
interface Previous {
  readonly mechanism: string;
  readonly user: string;
}

export class SaslAuthenticator {
  private state: State = 'initial';
  private server: SaslServer | null = null;
  /** SaslHandshake v0: tokens come raw, without a request header. */
  private rawTokens = false;
  private apiVersionsSeen = false;
  /** When the session expires (ms since the epoch), null when it has no lifetime. */
  private expiresAt: number | null = null;
  private reauthStartedAt = 0;
  /** Set during a re-authentication. */
  private previous: Previous | null = null;
  /** A re-authentication that asked for another mechanism: its next token is refused with this. */
  private badMechanism: string | null = null;

  constructor(private readonly o: SaslAuthenticatorOptions) {}

  get complete(): boolean {
    return this.state === 'complete';
  }

  private now(): number {
    return this.o.now?.() ?? Date.now();
  }

  /** KafkaChannel.serverAuthenticationSessionExpired: the session has a lifetime and it is over. */
  sessionExpired(): boolean {
    return this.state === 'complete' && this.expiresAt !== null && this.now() > this.expiresAt;
  }

  /**
   * KafkaChannel.maybeBeginServerReauthentication, for a SaslHandshake on a completed session: starts a KIP-368
   * re-authentication when the session has a lifetime and the last one began a second ago or more; else false,
   * and the handshake is an ordinary request (answered ILLEGAL_SASL_STATE by its handler).
   */
  beginReauthentication(): boolean {
    if (this.state !== 'complete' || this.expiresAt === null || this.server === null) return false;
    const now = this.now();
    if (this.reauthStartedAt !== 0 && now - this.reauthStartedAt < MIN_REAUTH_INTERVAL_MS) return false;
    this.reauthStartedAt = now;
    this.previous = { mechanism: this.server.mechanism, user: this.server.authorizationId };
    this.server = null;
    this.badMechanism = null;
    this.state = 'reauth';
    return true;
  }

  /** Handles the next frame; the connection calls it for one frame at a time, in order. */
  async step(frame: Buffer): Promise<AuthStep> {
    switch (this.state) {
      case 'complete':
        return { kind: 'dispatch' };
      case 'failed':
        return { kind: 'close' };
      case 'authenticate':
        return this.rawTokens ? this.rawToken(frame) : this.authenticateRequest(frame);
      default:
        return this.handshakeRequest(frame);
    }
  }

  /** INITIAL / HANDSHAKE: ApiVersions once, then SaslHandshake; nothing else. */
  private async handshakeRequest(frame: Buffer): Promise<AuthStep> {
    const r = new Reader(frame);
    const { header, api } = readRequestHeader(r);
    if (!r.ok || api === undefined) {
      return this.fail(this.state === 'initial' ? 'the first packet is not a Kafka request (a GSSAPI token?), and GSSAPI is not enabled' : 'a frame that is not a Kafka request during the SASL handshake');
    }
    if (header.requestApiKey === API_VERSIONS && !this.apiVersionsSeen && this.state !== 'reauth') {
      this.apiVersionsSeen = true;
      this.state = 'handshake';
      const chunks = await this.o.apiVersions(frame);
      return chunks ? { kind: 'respond', chunks, close: false } : this.fail('an ApiVersions request that does not parse during the SASL handshake');
    }
    if (header.requestApiKey !== SaslHandshakeApi.apiKey) return this.fail(`Unexpected Kafka request of type ${api.name} during SASL handshake.`);
    const version = header.requestApiVersion;
    if (version < SaslHandshakeApi.validVersions.min || version > SaslHandshakeApi.validVersions.max) return this.fail(`SaslHandshake version ${version} is not supported`);
    let mechanism: string;
    try {
      mechanism = SaslHandshakeApi.request.decode(r, version).mechanism;
      r.check();
    } catch {
      return this.fail('a SaslHandshake request that does not parse');
    }
    const mechanisms = [...this.o.mechanisms];
    if (!this.o.mechanisms.includes(mechanism)) {
      const chunks = encodeResponseFrame(SaslHandshakeApi, version, header.correlationId, createSaslHandshakeResponse({ errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms }));
      return this.failWith(`Unsupported SASL mechanism ${JSON.stringify(mechanism.slice(0, 64))}`, chunks);
    }
    if (this.previous !== null && this.previous.mechanism !== mechanism) {
      // SaslServerAuthenticator's REAUTH_BAD_MECHANISM: the handshake is answered, the next token refused.
      this.badMechanism = `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.previous.mechanism}'`;
    }
    this.server = this.o.newServer(mechanism);
    this.rawTokens = version === 0;
    this.state = 'authenticate';
    return { kind: 'respond', chunks: encodeResponseFrame(SaslHandshakeApi, version, header.correlationId, createSaslHandshakeResponse({ errorCode: ErrorCode.NONE, mechanisms })), close: false };
  }

  /** AUTHENTICATE after SaslHandshake v1: SaslAuthenticate requests only. */
  private async authenticateRequest(frame: Buffer): Promise<AuthStep> {
    const r = new Reader(frame);
    const { header, api } = readRequestHeader(r);
    if (!r.ok || api === undefined) return this.fail('a frame that is not a Kafka request during SASL authentication');
    if (header.requestApiKey !== SaslAuthenticateApi.apiKey) {
      const message = `Unexpected Kafka request of type ${api.name} during SASL authentication.`;
      const chunks = this.o.errorResponse(frame, ErrorCode.ILLEGAL_SASL_STATE, message);
      // A client that did not read an OAUTHBEARER error challenge ends here: the log says why its token was refused.
      const refused = this.server?.refusalReason;
      const reason = refused === undefined ? message : `${message} (its credentials were refused: ${refused})`;
      return chunks ? this.failWith(reason, chunks) : this.fail(reason);
    }
    const version = header.requestApiVersion;
    if (version < SaslAuthenticateApi.validVersions.min || version > SaslAuthenticateApi.validVersions.max) return this.fail(`SaslAuthenticate version ${version} is not supported`);
    let token: Buffer;
    try {
      token = Buffer.from(SaslAuthenticateApi.request.decode(r, version).authBytes);
      r.check();
    } catch {
      return this.fail('a SaslAuthenticate request that does not parse');
    }
    const answer = (res: Parameters<typeof createSaslAuthenticateResponse>[0]): Buffer[] => encodeResponseFrame(SaslAuthenticateApi, version, header.correlationId, createSaslAuthenticateResponse(res));
    if (this.badMechanism !== null) return this.failWith(this.badMechanism, answer({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: this.badMechanism }));
    try {
      const response = await this.server!.evaluate(token);
      const sessionLifetimeMs = this.maybeComplete();
      const chunks = answer({ errorCode: ErrorCode.NONE, errorMessage: null, authBytes: response, sessionLifetimeMs: BigInt(sessionLifetimeMs) });
      return { kind: 'respond', chunks, close: false };
    } catch (err) {
      const message = authFailureMessage(err, this.server!.mechanism);
      const code = err instanceof IllegalSaslStateError ? ErrorCode.ILLEGAL_SASL_STATE : ErrorCode.SASL_AUTHENTICATION_FAILED;
      return this.failWith(message, answer({ errorCode: code, errorMessage: message }), err);
    }
  }

  /** AUTHENTICATE after SaslHandshake v0: the frame is the token, the answer a size-prefixed token. */
  private async rawToken(frame: Buffer): Promise<AuthStep> {
    if (this.badMechanism !== null) return this.failWith(this.badMechanism, null);
    try {
      const response = await this.server!.evaluate(frame);
      const size = Buffer.alloc(4);
      size.writeInt32BE(response.length);
      this.maybeComplete();
      return { kind: 'respond', chunks: [size, response], close: false };
    } catch (err) {
      // Without SaslAuthenticate there is no way to tell the client why: Kafka closes the connection.
      return this.failWith(authFailureMessage(err, this.server!.mechanism), null, err);
    }
  }

  /**
   * Completes the exchange once the mechanism has: the session lifetime (0 when none), and for a re-authentication
   * the check that the principal is unchanged (SaslServerAuthenticator.ensurePrincipalUnchanged), which throws.
   */
  private maybeComplete(): number {
    const server = this.server!;
    if (!server.complete) return 0;
    const previous = this.previous;
    if (previous !== null && previous.user !== server.authorizationId) {
      throw new SaslAuthenticationError(`Cannot change principals during re-authentication from User.${previous.user}: User.${server.authorizationId}`);
    }
    // calcCompletionTimesAndReturnSessionLifetimeMs: min of the credential's remaining lifetime and the maximum.
    const now = this.now();
    const maxReauthMs = this.o.maxReauthMs(server.mechanism);
    const credentialExpiresAt = server.credentialLifetimeMs;
    let lifetime = 0;
    if (credentialExpiresAt !== undefined || maxReauthMs > 0) {
      if (credentialExpiresAt === undefined) lifetime = maxReauthMs;
      else if (maxReauthMs <= 0) lifetime = Math.max(0, credentialExpiresAt - now);
      else lifetime = Math.max(0, Math.min(credentialExpiresAt - now, maxReauthMs));
      this.expiresAt = now + lifetime;
    } else {
      this.expiresAt = null;
    }
    this.state = 'complete';
    this.previous = null;
    this.o.onComplete(server.authorizationId, server.mechanism, previous !== null, lifetime);
    return lifetime;
  }

  private fail(reason: string): Promise<AuthStep> {
    return this.failWith(reason, null);
  }

  /** FAILED: the answer (if any) after the failed-authentication delay, then the close. */
  private async failWith(reason: string, chunks: Buffer[] | null, err?: unknown): Promise<AuthStep> {
    this.state = 'failed';
    this.o.onFailure(reason, err, this.previous !== null);
    if (this.o.failedAuthenticationDelayMs > 0) await new Promise((r) => setTimeout(r, this.o.failedAuthenticationDelayMs));
    return chunks ? { kind: 'respond', chunks, close: true } : { kind: 'close' };
  }
}

/**
 * What the client is told of a refused token: a mechanism's own SaslAuthenticationError message (written to be
 * shown), else Kafka's generic text, which names no user (SaslServerAuthenticator.handleSaslToken).
 */
function authFailureMessage(err: unknown, mechanism: string): string {
  if (err instanceof SaslAuthenticationError || err instanceof IllegalSaslStateError) return err.message;
  return `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`;
}
