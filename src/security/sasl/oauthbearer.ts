/**
 * SASL/OAUTHBEARER (RFC 7628, KIP-255) on the server, as Kafka's OAuthBearerSaslServer runs it, with the message
 * grammar of its OAuthBearerClientInitialResponse. The token is checked by a validator (../jwks.ts JwtValidator:
 * Kafka's OAuthBearerValidatorCallbackHandler, or the unsecured one).
 *
 *   client                                                server
 *   n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A]*^A
 *                                                         validate <token>
 *     token accepted ──────────────────────────────────►  "" (complete: the principal is the token's)
 *     token refused  ──────────────────────────────────►  {"status":"invalid_token"}        (error challenge)
 *   ^A  (%x01: RFC 7628 §3.2.3, the client's only answer)
 *                                                         fail: SASL_AUTHENTICATION_FAILED, the challenge as message
 *   (^A is the byte 0x01)
 *
 * As Kafka:
 *   - the grammar (US-ASCII only): gs2 header `n,,` or `n,a=<saslname>,`; pairs `<key>=<value>` with key
 *     [A-Za-z]+ and value [\x21-\x7E \t\r\n]+, each ended by ^A, then a final ^A; `auth` required, as
 *     `<scheme> <token>`, scheme `Bearer` in any case, token [-_~+/.a-zA-Z0-9]+ then `=`s (RFC 6750 b64token);
 *     a key given twice keeps its last value (Utils.parseMap). A message that does not match is a SaslException in
 *     Kafka: the client is told the generic "Authentication failed during authentication due to invalid credentials
 *     with SASL mechanism OAUTHBEARER", Kafka's message is the error's `reason`, for the log;
 *   - the other pairs are SASL extensions (KIP-342). Both of Kafka's validator callback handlers accept every
 *     extension, so `extensions` is every pair but `auth` (Kafka's negotiated properties);
 *   - a refused token is answered with the error challenge, `{"status":"<status>"}` plus `, "scope":"<scope>"` and
 *     `, "openid-configuration":"<url>"` when the validator gives them (the unsecured validator gives
 *     insufficient_scope with the required scope); the client's %x01 then fails the exchange with a
 *     SaslAuthenticationException whose message is that challenge;
 *   - a validator that fails otherwise (keys unavailable) is "Authentication could not be performed due to an
 *     internal error on the server: ...", a SaslException: generic to the client;
 *   - an authzid must equal the token's principal: "Authentication failed: Client requested an authorization id
 *     (<a>) that is different from the token's principal name (<p>)", told as is (each name cut at 256 characters);
 *   - the token's lifetime (exp, ms since the epoch) is kept for KIP-368 re-authentication: `credentialLifetimeMs`,
 *     Kafka's negotiated property CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY, from which
 *     SaslServerAuthenticator computes the session lifetime (min(exp - now, connections.max.reauth.ms)).
 *
 * Differences from Kafka's OAuthBearerSaslServer, which keeps little state and leaves sequencing to its
 * authenticator:
 *   - after the error challenge only %x01 is accepted (RFC 7628 §3.2.3); anything else fails the exchange with the
 *     same message. Kafka reads it as a new client first message, so a client could try another token there;
 *   - a token after completion or failure, or while a token is validated, is refused with IllegalSaslStateError,
 *     as scram.ts refuses one, and fails the exchange;
 *   - a message over MAX_OAUTHBEARER_RESPONSE_BYTES is refused before it is read (Kafka: only the 512 KiB frame
 *     limit); tokens with group claims exceed PLAIN's 8 KiB, so this bound is larger;
 *   - an authzid is decoded (`=2C`, `=3D`, RFC 5801) before it is compared with the principal, as scram.ts does;
 *     Kafka compares it encoded;
 *   - a scheme other than Bearer is refused with "Invalid scheme in OAUTHBEARER client first message: <scheme>"
 *     (Kafka means to, but reads the scheme from the wrong matcher and throws an IllegalArgumentException).
 * Messages never hold the token.
 */
import { JwtValidationError, type OAuthBearerErrorStatus, type ValidatedToken } from '../jwks.js';
import { IllegalSaslStateError, SaslAuthenticationError } from './errors.js';
import type { SaslServer } from './mechanism.js';

export type { ValidatedToken } from '../jwks.js';

export const OAUTHBEARER_MECHANISM = 'OAUTHBEARER';

/** The login module whose JAAS options configure OAUTHBEARER (OAuthBearerLoginModule). */
export const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';

/** The largest client message read: a JWT of up to 64 KiB (jwks.ts MAX_JWT_LENGTH) with its header and extensions. */
export const MAX_OAUTHBEARER_RESPONSE_BYTES = 65_536 + 4096;

/** Checks a token: resolves with what it grants, rejects with JwtValidationError when it is refused. */
export type OAuthBearerTokenValidator = (token: string) => Promise<ValidatedToken>;

/** What OAuthBearerClientInitialResponse reads from the client's first message. */
export interface OAuthBearerClientInitialResponse {
  /** The token (never log it). */
  readonly tokenValue: string;
  /** The authzid of the gs2 header, decoded; empty when none. */
  readonly authorizationId: string;
  /** Every pair but `auth`. */
  readonly extensions: ReadonlyMap<string, string>;
}

const SEPARATOR = '\x01';
/** saslname: 0x01-0x7F but `=` and `,`, or `=2C` / `=3D` (Java's [\x01-\x7F&&[^=,]]). */
const SASLNAME = '(?:[\\x01-\\x2b\\x2d-\\x3c\\x3e-\\x7f]|=2C|=3D)+';
const KEY = '[A-Za-z]+';
const VALUE = '[\\x21-\\x7E \\t\\r\\n]+';
/** CLIENT_INITIAL_RESPONSE_PATTERN. Each repetition ends at a ^A no value holds, so matching is linear. */
const CLIENT_INITIAL_RESPONSE = new RegExp(`^n,(?:a=(?<authzid>${SASLNAME}))?,${SEPARATOR}(?<kvpairs>(?:${KEY}=${VALUE}${SEPARATOR})*)${SEPARATOR}$`);
/** AUTH_PATTERN (Java's \w is [A-Za-z0-9_]). */
const AUTH = /^(?<scheme>\w+) +(?<token>[-_~+/.a-zA-Z0-9]+=*)$/;
const AUTH_KEY = 'auth';

/**
 * The client's first message, read as OAuthBearerClientInitialResponse reads it. Throws SaslAuthenticationError
 * (the generic text, Kafka's SaslException message as `reason`).
 */
export function parseClientInitialResponse(response: Buffer): OAuthBearerClientInitialResponse {
  // Every byte the grammar admits is ASCII, so latin1 (one character per byte) decides as UTF-8 would.
  const message = response.toString('latin1');
  const matched = CLIENT_INITIAL_RESPONSE.exec(message)?.groups;
  if (matched === undefined) throw invalid('Invalid OAUTHBEARER client first message');
  const properties = new Map<string, string>();
  for (const pair of matched.kvpairs.split(SEPARATOR)) {
    if (pair === '') continue; // after the last separator
    const eq = pair.indexOf('=');
    properties.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const auth = properties.get(AUTH_KEY);
  if (auth === undefined) throw invalid("Invalid OAUTHBEARER client first message: 'auth' not specified");
  properties.delete(AUTH_KEY);
  // validateExtensions: every name and value already matched KEY and VALUE, and `auth` is gone, so none fails.
  const parsedAuth = AUTH.exec(auth)?.groups;
  if (parsedAuth === undefined) throw invalid("Invalid OAUTHBEARER client first message: invalid 'auth' format");
  if (parsedAuth.scheme.toLowerCase() !== 'bearer') throw invalid(`Invalid scheme in OAUTHBEARER client first message: ${parsedAuth.scheme.slice(0, 64)}`);
  const authzid = matched.authzid === undefined ? '' : matched.authzid.replace(/=2C|=3D/g, (escape) => (escape === '=2C' ? ',' : '='));
  return { tokenValue: parsedAuth.token, authorizationId: authzid, extensions: properties };
}

/** OAuthBearerSaslServer.jsonErrorResponse. */
export function oauthBearerErrorChallenge(status: OAuthBearerErrorStatus | string, scope: string | null = null, openidConfiguration: string | null = null): string {
  let json = `{"status":${JSON.stringify(status)}`;
  if (scope !== null) json += `, "scope":${JSON.stringify(scope)}`;
  if (openidConfiguration !== null) json += `, "openid-configuration":${JSON.stringify(openidConfiguration)}`;
  return `${json}}`;
}

/** OAuthBearerSaslServer.INTERNAL_ERROR_ON_SERVER */
const INTERNAL_ERROR_ON_SERVER = 'Authentication could not be performed due to an internal error on the server';

/** At most 256 characters of a client's text, for a message. */
function clip(text: string): string {
  return text.length > 256 ? `${text.slice(0, 256)}...` : text;
}

function invalid(reason: string, cause?: unknown): SaslAuthenticationError {
  return SaslAuthenticationError.invalidCredentials(OAUTHBEARER_MECHANISM, reason, { cause });
}

type State = 'RECEIVE_CLIENT_FIRST_MESSAGE' | 'VALIDATING' | 'RECEIVE_CLIENT_ACKNOWLEDGEMENT' | 'COMPLETE' | 'FAILED';

export class OAuthBearerSaslServer implements SaslServer {
  readonly mechanism = OAUTHBEARER_MECHANISM;
  readonly #validate: OAuthBearerTokenValidator;
  #state: State = 'RECEIVE_CLIENT_FIRST_MESSAGE';
  #token: ValidatedToken | undefined;
  #extensions: ReadonlyMap<string, string> = new Map();
  /** After a refused token: the challenge sent, and why the token was refused. */
  #refusal: { challenge: string; error: JwtValidationError } | undefined;

  /** Why the token was refused, while the exchange waits for the client's %x01 after the error challenge. */
  get refusalReason(): string | undefined {
    return this.#refusal?.error.message;
  }

  constructor(validate: OAuthBearerTokenValidator) {
    this.#validate = validate;
  }

  get complete(): boolean {
    return this.#state === 'COMPLETE';
  }

  /** The token's principal (OAuthBearerSaslServer.getAuthorizationID). */
  get authorizationId(): string {
    return this.token.principalName;
  }

  /** The client's SASL extensions, all accepted as Kafka's validator callback handlers accept them. */
  get extensions(): ReadonlyMap<string, string> {
    this.#requireComplete();
    return this.#extensions;
  }

  /** What the validated token grants: the negotiated property `OAUTHBEARER.token`. */
  get token(): ValidatedToken {
    this.#requireComplete();
    return this.#token!;
  }

  /**
   * When the credential expires, in milliseconds since the epoch: the token's lifetime (exp), Kafka's
   * CREDENTIAL_LIFETIME_MS_SASL_NEGOTIATED_PROPERTY_KEY, for KIP-368 re-authentication.
   */
  get credentialLifetimeMs(): number {
    return this.token.lifetimeMs;
  }

  async evaluate(response: Buffer): Promise<Buffer> {
    try {
      switch (this.#state) {
        case 'RECEIVE_CLIENT_FIRST_MESSAGE':
          return await this.#receiveClientFirst(response);
        case 'RECEIVE_CLIENT_ACKNOWLEDGEMENT':
          throw this.#acknowledgement(response);
        default:
          throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
      }
    } catch (err) {
      this.#state = 'FAILED';
      this.#token = undefined;
      this.#refusal = undefined;
      throw err;
    }
  }

  async #receiveClientFirst(response: Buffer): Promise<Buffer> {
    if (response.length > MAX_OAUTHBEARER_RESPONSE_BYTES) {
      throw new SaslAuthenticationError(`Invalid OAUTHBEARER client first message: ${response.length} bytes, more than the ${MAX_OAUTHBEARER_RESPONSE_BYTES} accepted`, { mechanism: this.mechanism });
    }
    const clientResponse = parseClientInitialResponse(response);
    this.#state = 'VALIDATING';
    let token: ValidatedToken;
    try {
      token = await this.#validate(clientResponse.tokenValue);
    } catch (err) {
      this.#checkStillValidating();
      if (!(err instanceof JwtValidationError)) throw invalid(`${INTERNAL_ERROR_ON_SERVER}: ${err instanceof Error ? err.message : String(err)}`, err);
      const challenge = oauthBearerErrorChallenge(err.status, err.scope, err.openidConfiguration);
      this.#refusal = { challenge, error: err };
      this.#state = 'RECEIVE_CLIENT_ACKNOWLEDGEMENT';
      return Buffer.from(challenge, 'utf8');
    }
    this.#checkStillValidating();
    // An authzid is allowed, as SASL allows it, but it must name the token's principal.
    const { authorizationId } = clientResponse;
    if (authorizationId !== '' && authorizationId !== token.principalName) {
      throw new SaslAuthenticationError(
        `Authentication failed: Client requested an authorization id (${clip(authorizationId)}) that is different from the token's principal name (${clip(token.principalName)})`,
        { mechanism: this.mechanism },
      );
    }
    this.#token = token;
    this.#extensions = clientResponse.extensions;
    this.#state = 'COMPLETE';
    return Buffer.alloc(0);
  }

  /**
   * The failure that ends an exchange after the error challenge: Kafka's SaslAuthenticationException with the
   * challenge as its message, told as is. `mechanism` is left unset so that duringReauthentication keeps this
   * message (Kafka sends the challenge on re-authentication too); `reason` says why the token was refused.
   */
  #acknowledgement(response: Buffer): SaslAuthenticationError {
    const { challenge, error } = this.#refusal!;
    const acknowledged = response.length === 1 && response[0] === 0x01;
    const reason = acknowledged ? error.message : `the client answered the error challenge with ${response.length} bytes, not %x01; ${error.message}`;
    return new SaslAuthenticationError(challenge, { reason, cause: error });
  }

  /** A token evaluated while this one was validated has failed the exchange. */
  #checkStillValidating(): void {
    if (this.#state !== 'VALIDATING') throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
  }

  #requireComplete(): void {
    if (!this.complete) throw new IllegalSaslStateError('Authentication exchange has not completed');
  }
}
