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
 * - KIP-368 re-authentication is not offered: SaslAuthenticate answers a session lifetime of 0 (none), as Kafka
 *   does with connections.max.reauth.ms=0, its default.
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

type State = 'initial' | 'handshake' | 'authenticate' | 'complete' | 'failed';

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
  /** Called once, with the authenticated user and mechanism. */
  onComplete(user: string, mechanism: string): void;
  /** Called once when authentication fails, with why (for the log and the failed-authentication metric). */
  onFailure(reason: string, err?: unknown): void;
}

export class SaslAuthenticator {
  private state: State = 'initial';
  private server: SaslServer | null = null;
  /** SaslHandshake v0: tokens come raw, without a request header. */
  private rawTokens = false;
  private apiVersionsSeen = false;

  constructor(private readonly o: SaslAuthenticatorOptions) {}

  get complete(): boolean {
    return this.state === 'complete';
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
    if (header.requestApiKey === API_VERSIONS && !this.apiVersionsSeen) {
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
    try {
      const response = await this.server!.evaluate(token);
      const chunks = answer({ errorCode: ErrorCode.NONE, errorMessage: null, authBytes: response, sessionLifetimeMs: 0n });
      this.maybeComplete();
      return { kind: 'respond', chunks, close: false };
    } catch (err) {
      const message = authFailureMessage(err, this.server!.mechanism);
      const code = err instanceof IllegalSaslStateError ? ErrorCode.ILLEGAL_SASL_STATE : ErrorCode.SASL_AUTHENTICATION_FAILED;
      return this.failWith(message, answer({ errorCode: code, errorMessage: message }), err);
    }
  }

  /** AUTHENTICATE after SaslHandshake v0: the frame is the token, the answer a size-prefixed token. */
  private async rawToken(frame: Buffer): Promise<AuthStep> {
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

  private maybeComplete(): void {
    if (!this.server!.complete) return;
    this.state = 'complete';
    this.o.onComplete(this.server!.authorizationId, this.server!.mechanism);
  }

  private fail(reason: string): Promise<AuthStep> {
    return this.failWith(reason, null);
  }

  /** FAILED: the answer (if any) after the failed-authentication delay, then the close. */
  private async failWith(reason: string, chunks: Buffer[] | null, err?: unknown): Promise<AuthStep> {
    this.state = 'failed';
    this.o.onFailure(reason, err);
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
