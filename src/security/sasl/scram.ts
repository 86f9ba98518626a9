/**
 * SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) on the server, as Kafka's ScramSaslServer runs them, with
 * the message grammar of its ScramMessages, the key derivation of ScramFormatter and the constants of
 * ScramMechanism (clients/.../security/scram/internals/).
 *
 *   client                                             server
 *   client-first   n,[a=<authzid>],n=<saslname>,r=<cnonce>[,<ext>=<value>]*
 *                                                      look up the credential of <saslname> decoded
 *   server-first                                       r=<cnonce><snonce>,s=<base64 salt>,i=<iterations>
 *   client-final   c=<base64 gs2 header>,r=<cnonce><snonce>,p=<base64 ClientProof>
 *                                                      verify the proof against StoredKey
 *   server-final                                       v=<base64 ServerSignature>
 *
 *   SaltedPassword = Hi(password, salt, i)                 (PBKDF2-HMAC-H with one block)
 *   ClientKey = HMAC(SaltedPassword, "Client Key")         StoredKey = H(ClientKey)
 *   ServerKey = HMAC(SaltedPassword, "Server Key")
 *   AuthMessage = client-first-bare "," server-first "," client-final-without-proof
 *   ClientSignature = HMAC(StoredKey, AuthMessage)         ClientProof = ClientKey XOR ClientSignature
 *   ServerSignature = HMAC(ServerKey, AuthMessage)
 * The server keeps salt, StoredKey, ServerKey and i (a ScramCredential), never the password: it recovers ClientKey
 * as ClientProof XOR ClientSignature and accepts when H(ClientKey) is StoredKey.
 *
 * As Kafka:
 *   - the grammar is ScramMessages' (US-ASCII only: a user name with other characters never authenticates, as in
 *     Kafka); gs2 header `n,,` or `n,a=<authzid>,`: channel binding (`y`, `p=`) is refused;
 *   - an unknown user fails at the client-first message, not at the proof: ScramSaslServer throws
 *     SaslException("Authentication failed: Invalid user credentials") there, and SaslServerAuthenticator tells
 *     the client its generic "Authentication failed during authentication due to invalid credentials with SASL
 *     mechanism ...". The client sees the same text as for a wrong password, one round trip earlier. (Some SCRAM
 *     servers answer an unknown user with a made-up salt to hide even that; Kafka does not.)
 *   - the failures Kafka throws as SaslException (bad format, unknown user, wrong nonce, wrong proof, credential
 *     lookup failed, too few iterations) reach the client as that generic text, Kafka's message being the
 *     error's `reason`; an authzid other than the user is a SaslAuthenticationException, told as is;
 *   - the client-final nonce must equal the one the server sent, as Kafka 4's ScramSaslServer requires it (the
 *     fix of CVE-2024-56128; earlier servers accepted one that merely ended with it). librdkafka before 2.6.1
 *     sends its own part twice (librdkafka#4895) and cannot sign in with SCRAM, here or on Kafka 4;
 *   - credentials with fewer than 4096 iterations are refused; passwords are used as UTF-8 without SASLprep;
 *   - extensions are `name=value` pairs after the nonce; only `tokenauth` is negotiated (the others are ignored).
 *     `tokenauth=true` asks to authenticate with a delegation token (KIP-48), which Ledgerline does not have:
 *     every token id is unknown, so it fails as Kafka fails an unknown token, "Token Authentication failed:
 *     Invalid tokenId : <id>".
 *
 * Stricter than Kafka (no client that follows RFC 5802 notices):
 *   - the reserved `m=` attribute is refused (RFC 5802 §5.1: "MUST cause authentication failure"); Kafka parses
 *     it and fails later, at the proof, because it leaves it out of the AuthMessage it rebuilds;
 *   - the channel binding of the client-final message must decode to the gs2 header of the client-first
 *     (`biws` for `n,,`); Kafka does not check it;
 *   - AuthMessage is made of the messages as received; Kafka rebuilds them (its client-first-bare lists
 *     extensions in hash-map order and drops client-final extensions), which only differs for clients whose
 *     proofs Kafka could not verify anyway;
 *   - an authzid is decoded (`=2C`, `=3D`) before it is compared with the user, as RFC 5802 encodes it; Kafka
 *     compares it encoded, which differs only for names with `,` or `=`;
 *   - a token over MAX_SASL_TOKEN_BYTES is refused before it is read;
 *   - the reason of a malformed client-final message does not repeat it: it holds the proof.
 */
import { createHash, createHmac, pbkdf2, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { IllegalSaslStateError, SaslAuthenticationError } from './errors.js';
import { MAX_SASL_TOKEN_BYTES, type SaslServer } from './mechanism.js';

export type ScramMechanismName = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/** The hash H of each mechanism (node:crypto names), as ScramMechanism's hashAlgorithm / macAlgorithm. */
export const SCRAM_HASH: Readonly<Record<ScramMechanismName, 'sha256' | 'sha512'>> = {
  'SCRAM-SHA-256': 'sha256',
  'SCRAM-SHA-512': 'sha512',
};

/** The fewest iterations a credential may have: ScramMechanism.minIterations, for both mechanisms. */
export const MIN_SCRAM_ITERATIONS = 4096;

/** The most iterations AlterUserScramCredentials accepts: ScramMechanism.maxIterations, for both mechanisms. */
export const MAX_SCRAM_ITERATIONS = 16384;

export function isScramMechanism(name: string): name is ScramMechanismName {
  return Object.hasOwn(SCRAM_HASH, name);
}

/** What the server keeps of a user's password for one mechanism (Kafka's ScramCredential). */
export interface ScramCredential {
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
  iterations: number;
}

/** The credential of `password`: Hi, then the keys (ScramFormatter.generateCredential). `password` is used as UTF-8, without SASLprep, as Kafka. */
export function scramCredential(mechanism: ScramMechanismName, password: string | Buffer, salt: Buffer, iterations: number): ScramCredential {
  if (!Number.isSafeInteger(iterations) || iterations < 1) throw new RangeError(`SCRAM iterations must be a positive integer, not ${iterations}`);
  const hash = SCRAM_HASH[mechanism];
  const passwordBytes = typeof password === 'string' ? Buffer.from(password, 'utf8') : password;
  // Hi(str, salt, i) is PBKDF2 with HMAC-H and a derived key of one block (RFC 5802 §2.2).
  const saltedPassword = pbkdf2Sync(passwordBytes, salt, iterations, digestLength(hash), hash);
  return scramCredentialFromSaltedPassword(mechanism, saltedPassword, salt, iterations);
}

const pbkdf2Async = promisify(pbkdf2);

/**
 * `scramCredential` with Hi computed on libuv's thread pool: for a check made while a client waits (PLAIN against a
 * stored SCRAM credential), so that up to 16384 PBKDF2 iterations per attempt never stall the event loop that
 * serves every other connection.
 */
export async function scramCredentialOffLoop(mechanism: ScramMechanismName, password: Buffer, salt: Buffer, iterations: number): Promise<ScramCredential> {
  if (!Number.isSafeInteger(iterations) || iterations < 1) throw new RangeError(`SCRAM iterations must be a positive integer, not ${iterations}`);
  const hash = SCRAM_HASH[mechanism];
  const saltedPassword = await pbkdf2Async(password, salt, iterations, digestLength(hash), hash);
  return scramCredentialFromSaltedPassword(mechanism, saltedPassword, salt, iterations);
}

/**
 * The credential of a salted password, Hi(password, salt, iterations): what AlterUserScramCredentials carries, as
 * Kafka's controller turns it into a credential.
 */
export function scramCredentialFromSaltedPassword(mechanism: ScramMechanismName, saltedPassword: Buffer, salt: Buffer, iterations: number): ScramCredential {
  const hash = SCRAM_HASH[mechanism];
  const clientKey = hmac(hash, saltedPassword, 'Client Key');
  return {
    salt: Buffer.from(salt),
    storedKey: digest(hash, clientKey),
    serverKey: hmac(hash, saltedPassword, 'Server Key'),
    iterations,
  };
}

/** A user name as a SCRAM saslname: `=` as `=3D`, `,` as `=2C` (RFC 5802 §5.1, ScramFormatter.saslName). */
export function scramSaslName(username: string): string {
  return username.replaceAll('=', '=3D').replaceAll(',', '=2C');
}

/** The user name a saslname encodes, or undefined when it has a `,` or a `=` not starting `=2C` / `=3D`. */
export function scramUsername(saslName: string): string | undefined {
  if (!/^(?:[^=,]|=2C|=3D)*$/.test(saslName)) return undefined;
  return saslName.replace(/=2C|=3D/g, (escape) => (escape === '=2C' ? ',' : '='));
}

/** The credential of a user for the server's mechanism; undefined for an unknown user. */
export type ScramCredentialLookup = (username: string) => Promise<ScramCredential | undefined>;

export interface ScramSaslServerOptions {
  /**
   * The server's part of the nonce: printable ASCII without `,`. Default: Kafka's, 130 random bits in base 36
   * (ScramFormatter.secureRandomString). Tests pass RFC vectors' nonces.
   */
  readonly nonce?: () => string;
}

type State = 'RECEIVE_CLIENT_FIRST_MESSAGE' | 'LOOKING_UP_CREDENTIAL' | 'RECEIVE_CLIENT_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED';

/** What the client-final message is checked against: the first two messages and the credential. */
interface FirstRound {
  readonly gs2Header: Buffer;
  readonly clientFirstBare: string;
  readonly serverFirst: string;
  readonly nonce: string;
  readonly credential: ScramCredential;
}

/** The extensions ScramSaslServer negotiates (ScramLoginModule.TOKEN_AUTH_CONFIG); others are ignored. */
const SUPPORTED_EXTENSIONS: ReadonlySet<string> = new Set(['tokenauth']);

export class ScramSaslServer implements SaslServer {
  readonly mechanism: ScramMechanismName;
  readonly #hash: 'sha256' | 'sha512';
  readonly #lookup: ScramCredentialLookup;
  readonly #serverNonce: () => string;
  #state: State = 'RECEIVE_CLIENT_FIRST_MESSAGE';
  #firstRound: FirstRound | undefined;
  #authorizationId = '';
  #extensions: ReadonlyMap<string, string> = new Map();

  constructor(mechanism: ScramMechanismName, lookup: ScramCredentialLookup, options: ScramSaslServerOptions = {}) {
    this.mechanism = mechanism;
    this.#hash = SCRAM_HASH[mechanism];
    this.#lookup = lookup;
    this.#serverNonce = options.nonce ?? kafkaNonce;
  }

  get complete(): boolean {
    return this.#state === 'COMPLETE';
  }

  get authorizationId(): string {
    if (!this.complete) throw new IllegalSaslStateError('Authentication exchange has not completed');
    return this.#authorizationId;
  }

  /** The supported extensions the client sent: `tokenauth` (only ever not `true`, see the header). */
  get extensions(): ReadonlyMap<string, string> {
    if (!this.complete) throw new IllegalSaslStateError('Authentication exchange has not completed');
    return this.#extensions;
  }

  async evaluate(token: Buffer): Promise<Buffer> {
    try {
      switch (this.#state) {
        case 'RECEIVE_CLIENT_FIRST_MESSAGE':
          return await this.#receiveClientFirst(token);
        case 'RECEIVE_CLIENT_FINAL_MESSAGE':
          return this.#receiveClientFinal(token);
        default:
          throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
      }
    } catch (err) {
      // Any failure ends the exchange and forgets the credential (ScramSaslServer: FAILED, clearCredentials).
      this.#firstRound = undefined;
      this.#state = 'FAILED';
      throw err;
    }
  }

  async #receiveClientFirst(token: Buffer): Promise<Buffer> {
    const message = this.#read(token, 'first');
    const parsed = CLIENT_FIRST.exec(message)?.groups;
    if (parsed === undefined) throw this.#invalid(`Invalid SCRAM client first message format: ${message}`);
    // The grammar admits only saslnames that decode.
    const username = scramUsername(parsed.saslname)!;
    const extensions = parseExtensions(parsed.extensions);
    this.#extensions = new Map([...extensions].filter(([name]) => SUPPORTED_EXTENSIONS.has(name)));
    if (extensions.get('tokenauth')?.toLowerCase() === 'true') {
      // Kafka looks the token id up in its delegation token cache; there is none here, so no id is known.
      throw this.#invalid(`Token Authentication failed: Invalid tokenId : ${username}`);
    }

    this.#state = 'LOOKING_UP_CREDENTIAL';
    let credential: ScramCredential | undefined;
    try {
      credential = await this.#lookup(username);
    } catch (cause) {
      throw this.#invalid('Authentication failed: Credentials could not be obtained', cause);
    }
    if (this.#state !== 'LOOKING_UP_CREDENTIAL') throw new IllegalSaslStateError(`Unexpected challenge in Sasl server state ${this.#state}`);
    if (credential === undefined) throw this.#invalid('Authentication failed: Invalid user credentials');
    const authorizationIdFromClient = parsed.authzid === undefined ? '' : scramUsername(parsed.authzid)!;
    if (authorizationIdFromClient !== '' && authorizationIdFromClient !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username', { mechanism: this.mechanism });
    }
    if (credential.iterations < MIN_SCRAM_ITERATIONS) {
      // Kafka names the mechanism by its enum constant here.
      throw this.#invalid(`Iterations ${credential.iterations} is less than the minimum ${MIN_SCRAM_ITERATIONS} for ${this.mechanism.replaceAll('-', '_')}`);
    }

    const serverNonce = this.#serverNonce();
    if (!PRINTABLE_NONCE.test(serverNonce)) throw new TypeError('A SCRAM server nonce must be printable ASCII without ","');
    const nonce = parsed.nonce + serverNonce;
    const serverFirst = `r=${nonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`;
    this.#firstRound = { gs2Header: Buffer.from(parsed.gs2, 'ascii'), clientFirstBare: parsed.bare, serverFirst, nonce, credential };
    this.#authorizationId = username;
    this.#state = 'RECEIVE_CLIENT_FINAL_MESSAGE';
    return Buffer.from(serverFirst, 'ascii');
  }

  #receiveClientFinal(token: Buffer): Buffer {
    const first = this.#firstRound!;
    const message = this.#read(token, 'final');
    const parsed = CLIENT_FINAL.exec(message)?.groups;
    if (parsed === undefined) throw this.#invalid(`Invalid SCRAM client final message format (${token.length} bytes)`);
    if (parsed.nonce !== first.nonce) throw this.#invalid('Invalid client nonce in the final client message.');
    if (!Buffer.from(parsed.channel, 'base64').equals(first.gs2Header)) {
      throw this.#invalid('Invalid channel binding in the final client message: it is not the gs2 header of the first.');
    }

    const { storedKey, serverKey } = first.credential;
    const authMessage = `${first.clientFirstBare},${first.serverFirst},${parsed.withoutProof}`;
    const clientSignature = hmac(this.#hash, storedKey, authMessage);
    const proof = Buffer.from(parsed.proof, 'base64');
    // Lengths are public (the hash's); only the comparison of the keys must take constant time.
    if (proof.length !== clientSignature.length) throw this.#invalid('Invalid client credentials');
    const computedStoredKey = digest(this.#hash, xor(proof, clientSignature));
    if (computedStoredKey.length !== storedKey.length || !timingSafeEqual(computedStoredKey, storedKey)) {
      throw this.#invalid('Invalid client credentials');
    }

    const serverSignature = hmac(this.#hash, serverKey, authMessage);
    this.#firstRound = undefined;
    this.#state = 'COMPLETE';
    return Buffer.from(`v=${serverSignature.toString('base64')}`, 'ascii');
  }

  /** A client message as text, once its size is known to be reasonable. */
  #read(token: Buffer, which: 'first' | 'final'): string {
    if (token.length > MAX_SASL_TOKEN_BYTES) {
      throw new SaslAuthenticationError(`Invalid SCRAM client ${which} message: ${token.length} bytes, more than the ${MAX_SASL_TOKEN_BYTES} accepted`, { mechanism: this.mechanism });
    }
    return token.toString('utf8');
  }

  /** A failure Kafka throws as SaslException: the client gets the generic text, `reason` the detail. */
  #invalid(reason: string, cause?: unknown): SaslAuthenticationError {
    return SaslAuthenticationError.invalidCredentials(this.mechanism, reason, { cause });
  }
}

// ---- ScramMessages' grammar (Java regex character classes, spelled out for JavaScript) ----

/** saslname: ASCII 0x01-0x7F but `=` and `,`, or the escapes `=2C`, `=3D`. */
const SASLNAME = '(?:[\\x01-\\x2b\\x2d-\\x3c\\x3e-\\x7f]|=2C|=3D)+';
/** value: ASCII 0x01-0x7F but `,`. */
const VALUE = '[\\x01-\\x2b\\x2d-\\x7f]+';
/** printable: 0x21-0x7E but `,` (the nonce). */
const PRINTABLE = '[\\x21-\\x2b\\x2d-\\x7e]+';
const BASE64 = '(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)?';
const EXTENSIONS = `(?:,[A-Za-z]+=${VALUE})*`;

/** ClientFirstMessage.PATTERN without Kafka's optional `m=<value>,` before `n=`, which RFC 5802 says to refuse. */
const CLIENT_FIRST = new RegExp(`^(?<gs2>n,(?:a=(?<authzid>${SASLNAME}))?,)(?<bare>n=(?<saslname>${SASLNAME}),r=(?<nonce>${PRINTABLE})(?<extensions>${EXTENSIONS}))$`);

/** ClientFinalMessage.PATTERN; `withoutProof` is client-final-message-without-proof. */
const CLIENT_FINAL = new RegExp(`^(?<withoutProof>c=(?<channel>${BASE64}),r=(?<nonce>${PRINTABLE})${EXTENSIONS}),p=(?<proof>${BASE64})$`);

const PRINTABLE_NONCE = new RegExp(`^${PRINTABLE}$`);

/** `,name=value,...` as a map, a name given twice keeping its last value (Kafka's Utils.parseMap). */
function parseExtensions(text: string): Map<string, string> {
  const extensions = new Map<string, string>();
  for (const pair of text.split(',').slice(1)) {
    const eq = pair.indexOf('=');
    extensions.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return extensions;
}

// ---- ScramFormatter ----

function hmac(hash: string, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(hash, key).update(data).digest();
}

function digest(hash: string, data: Buffer): Buffer {
  return createHash(hash).update(data).digest();
}

function digestLength(hash: 'sha256' | 'sha512'): number {
  return hash === 'sha256' ? 32 : 64;
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** Kafka's server nonce: `new BigInteger(130, SecureRandom).toString(36)`. */
function kafkaNonce(): string {
  const bits = randomBytes(17);
  bits[0] &= 0x03; // 17 bytes are 136 bits; keep 130
  return BigInt(`0x${bits.toString('hex')}`).toString(36);
}
