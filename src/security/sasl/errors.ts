/**
 * Errors of the server-side SASL mechanisms (plain.ts, scram.ts), as Kafka's SaslServer implementations raise
 * them. Both end the exchange; the authenticator answers and closes the connection.
 *
 * | code                       | Kafka error                     | Kafka exception               |
 * |----------------------------|---------------------------------|-------------------------------|
 * | LL_ERR_SASL_AUTHENTICATION | SASL_AUTHENTICATION_FAILED (58) | SaslAuthenticationException, SaslException |
 * | LL_ERR_SASL_STATE          | ILLEGAL_SASL_STATE (34)         | IllegalSaslStateException     |
 *
 * The message of either is what the client is told: SaslAuthenticate's errorMessage. It never holds a password or
 * other secret material.
 *
 * Kafka's mechanisms throw two kinds of authentication failure, and SaslServerAuthenticator.handleSaslToken
 * answers them differently:
 *   - SaslAuthenticationException: its message goes to the client as is ("Authentication failed: Invalid
 *     username or password");
 *   - a plain SaslException: its message may say too much (that a user exists, why a proof did not verify), so
 *     the client gets a generic text, "Authentication failed during authentication due to invalid credentials
 *     with SASL mechanism SCRAM-SHA-256", and the detail goes to the broker's debug log only.
 * Here both are a SaslAuthenticationError; the second kind is made by `invalidCredentials`, whose message is the
 * generic text and whose `reason` holds Kafka's SaslException message, for the log.
 */
import { ErrorCode } from '../../../protocol/error-codes.js';
import { LedgerlineError } from '../../../protocol/errors.js';

export interface SaslAuthenticationErrorOptions {
  /** The mechanism of the exchange that failed (PLAIN, SCRAM-SHA-256, ...). */
  readonly mechanism?: string;
  /** Why the exchange failed, for the broker's log only, when the message is the generic one. */
  readonly reason?: string;
  readonly cause?: unknown;
}

/** The client's credentials or tokens were refused (Kafka's SaslAuthenticationException). */
export class SaslAuthenticationError extends LedgerlineError {
  readonly mechanism: string | undefined;
  /** For the log, never sent: the detail behind a generic `message` (undefined when `message` says it all). */
  readonly reason: string | undefined;

  constructor(message: string, options: SaslAuthenticationErrorOptions = {}) {
    super('LL_ERR_SASL_AUTHENTICATION', ErrorCode.SASL_AUTHENTICATION_FAILED, message, { cause: options.cause });
    this.mechanism = options.mechanism;
    this.reason = options.reason;
  }

  /**
   * A failure the client is told nothing specific about, as Kafka answers a mechanism's SaslException: `reason` is
   * what Kafka's mechanism says (and logs); the message is SaslServerAuthenticator's generic text.
   */
  static invalidCredentials(mechanism: string, reason: string, options: { reauthentication?: boolean; cause?: unknown } = {}): SaslAuthenticationError {
    const during = options.reauthentication ? 're-authentication' : 'authentication';
    const message = `Authentication failed during ${during} due to invalid credentials with SASL mechanism ${mechanism}`;
    return new SaslAuthenticationError(message, { mechanism, reason, cause: options.cause });
  }

  /**
   * This error as a KIP-368 re-authentication reports it: Kafka's generic text says "during re-authentication"
   * (SaslServerAuthenticator.ReauthInfo.authenticationOrReauthenticationText); a specific message is unchanged.
   */
  duringReauthentication(): SaslAuthenticationError {
    if (this.reason === undefined || this.mechanism === undefined) return this;
    return SaslAuthenticationError.invalidCredentials(this.mechanism, this.reason, { reauthentication: true, cause: this.cause });
  }
}

/** A token that the exchange's state does not allow: after completion or failure, or while one is evaluated. */
export class IllegalSaslStateError extends LedgerlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LL_ERR_SASL_STATE', ErrorCode.ILLEGAL_SASL_STATE, message, options);
  }
}
