/**
 * SASL/PLAIN (RFC 4616) on the server, as Kafka's PlainSaslServer runs it, and the JAAS-configured user list of
 * Kafka's PlainServerCallbackHandler.
 *
 * One client token, no challenge:
 *
 *   message = [authzid] NUL authcid NUL passwd      (UTF-8; the server answers an empty token)
 *
 * Checks, in Kafka's order and with its messages (all SaslAuthenticationException: the client is told them):
 *   1. the token splits into exactly three fields at NUL: "Invalid SASL/PLAIN response: expected 3 tokens, got N"
 *      (Kafka splits at most four times, so N is 1 to 4);
 *   2. authcid is not empty: "Authentication failed: username not specified";
 *   3. passwd is not empty: "Authentication failed: password not specified";
 *   4. the verifier accepts authcid and passwd: "Authentication failed: Invalid username or password"; a verifier
 *      that throws: "Authentication failed: credentials for user could not be verified";
 *   5. authzid is empty or equals authcid: "Authentication failed: Client requested an authorization id that is
 *      different from username".
 * The authorization id is then authcid.
 *
 * Differences from Kafka's PlainSaslServer, which keeps no state and leaves sequencing to its authenticator:
 *   - a token after completion or failure (or during a verification) is refused with IllegalSaslStateError, as
 *     Kafka's ScramSaslServer refuses one, and fails the exchange;
 *   - a token over MAX_SASL_TOKEN_BYTES is refused before it is read;
 *   - the password reaches the verifier as the bytes the client sent, never as a string; Kafka decodes it
 *     first, so invalid UTF-8 (U+FFFD after decoding) could match a configured U+FFFD there, not here.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { JaasConfigEntry } from '../jaas.js';
import { IllegalSaslStateError, SaslAuthenticationError } from './errors.js';
import { MAX_SASL_TOKEN_BYTES, type SaslServer } from './mechanism.js';

export const PLAIN_MECHANISM = 'PLAIN';

/** The login module whose `user_<name>="<password>"` options list PLAIN's users (Kafka's PlainLoginModule). */
export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';

/**
 * Decides whether `password` is `username`'s. `password` is a view of the client's token: read it, do not keep
 * it. A throw refuses the client with "credentials for user could not be verified".
 */
export type PlainVerifier = (username: string, password: Buffer) => boolean | Promise<boolean>;

type State = 'RECEIVE_RESPONSE' | 'VERIFYING' | 'COMPLETE' | 'FAILED';

export class PlainSaslServer implements SaslServer {
  readonly mechanism = PLAIN_MECHANISM;
  readonly #verify: PlainVerifier;
  #state: State = 'RECEIVE_RESPONSE';
  #authorizationId = '';

  constructor(verify: PlainVerifier) {
    this.#verify = verify;
  }

  get complete(): boolean {
    return this.#state === 'COMPLETE';
  }

  get authorizationId(): string {
    if (!this.complete) throw new IllegalSaslStateError('Authentication exchange has not completed');
    return this.#authorizationId;
  }

  /** PLAIN negotiates nothing (Kafka's getNegotiatedProperty answers null for every name). */
  get extensions(): ReadonlyMap<string, string> {
    if (!this.complete) throw new IllegalSaslStateError('Authentication exchange has not completed');
    return new Map();
  }

  async evaluate(token: Buffer): Promise<Buffer> {
    try {
      if (this.#state !== 'RECEIVE_RESPONSE') throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
      this.#state = 'VERIFYING';
      const username = await this.#authenticate(token);
      // A token evaluated meanwhile failed the exchange.
      if (this.#state !== 'VERIFYING') throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
      this.#authorizationId = username;
      this.#state = 'COMPLETE';
      return Buffer.alloc(0);
    } catch (err) {
      this.#state = 'FAILED';
      throw err;
    }
  }

  /** The authorization id of a valid token; throws SaslAuthenticationError. */
  async #authenticate(token: Buffer): Promise<string> {
    if (token.length > MAX_SASL_TOKEN_BYTES) {
      throw this.#refuse(`Invalid SASL/PLAIN response: ${token.length} bytes, more than the ${MAX_SASL_TOKEN_BYTES} accepted`);
    }
    const fields = splitAtNul(token);
    if (fields.length !== 3) throw this.#refuse(`Invalid SASL/PLAIN response: expected 3 tokens, got ${fields.length}`);
    const [authzid, authcid, password] = fields;
    // NUL never occurs inside a UTF-8 sequence, so splitting the bytes equals Kafka's splitting the decoded text.
    const username = authcid.toString('utf8');
    if (username.length === 0) throw this.#refuse('Authentication failed: username not specified');
    if (password.length === 0) throw this.#refuse('Authentication failed: password not specified');
    let authenticated: boolean;
    try {
      authenticated = await this.#verify(username, password);
    } catch (cause) {
      throw this.#refuse('Authentication failed: credentials for user could not be verified', cause);
    }
    if (!authenticated) throw this.#refuse('Authentication failed: Invalid username or password');
    const authorizationIdFromClient = authzid.toString('utf8');
    if (authorizationIdFromClient.length > 0 && authorizationIdFromClient !== username) {
      throw this.#refuse('Authentication failed: Client requested an authorization id that is different from username');
    }
    return username;
  }

  #refuse(message: string, cause?: unknown): SaslAuthenticationError {
    return new SaslAuthenticationError(message, { mechanism: PLAIN_MECHANISM, cause });
  }
}

/**
 * The fields of `token` between NULs, split at most four times as Kafka's extractTokens does: a well-formed token
 * gives three, one with a NUL too many gives four whatever follows.
 */
function splitAtNul(token: Buffer): Buffer[] {
  const fields: Buffer[] = [];
  let start = 0;
  while (fields.length < 4) {
    const end = token.indexOf(0, start);
    if (end === -1) {
      fields.push(token.subarray(start));
      break;
    }
    fields.push(token.subarray(start, end));
    start = end + 1;
  }
  return fields;
}

/**
 * A verifier of the users a JAAS config lists, as Kafka's PlainServerCallbackHandler: `username`'s password is
 * the option `user_<username>` of the first PlainLoginModule entry that has it (JaasContext.configEntryOption).
 *
 * Only SHA-256 digests of the passwords are kept, and a password is checked by comparing digests with
 * timingSafeEqual, also for an unknown user (against a random digest), so the time taken tells neither how much of
 * a password matched nor whether the user exists. (Kafka's Utils.isEqualConstantTime hides the first, not the
 * second.)
 */
export function jaasPlainVerifier(entries: readonly JaasConfigEntry[]): PlainVerifier {
  const USER_PREFIX = 'user_';
  const digests = new Map<string, Buffer>();
  for (const entry of entries) {
    if (entry.loginModule !== PLAIN_LOGIN_MODULE) continue;
    for (const [key, password] of entry.options) {
      const username = key.slice(USER_PREFIX.length);
      if (key.startsWith(USER_PREFIX) && !digests.has(username)) digests.set(username, sha256(Buffer.from(password, 'utf8')));
    }
  }
  const unknownUser = sha256(randomBytes(32));
  return (username, password) => {
    const expected = digests.get(username);
    const equal = timingSafeEqual(sha256(password), expected ?? unknownUser);
    return equal && expected !== undefined;
  };
}

function sha256(bytes: Buffer): Buffer {
  return createHash('sha256').update(bytes).digest();
}
