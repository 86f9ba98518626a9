/**
 * Signing in with SASL SCRAM-SHA-256 / SCRAM-SHA-512 on a Kafka connection: the client side of RFC 5802 and
 * RFC 7677 as Kafka's ScramSaslClient runs it, carried as Kafka's SaslClientAuthenticator carries it.
 *
 *   connection ── ApiVersions (versions.ts, before any SASL: KIP-35 lets a client ask first)
 *              ── SaslHandshake v1 {mechanism}                 KIP-152: tokens then travel in SaslAuthenticate
 *              ── SaslAuthenticate {client-first}    ◄── {server-first}
 *              ── SaslAuthenticate {client-final}    ◄── {server-final}  the server's signature checked here
 *              ── requests, as the authenticated user
 *
 *   client-first   n,,n=<saslname>,r=<cnonce>               gs2 header `n,,`: no channel binding, no authzid
 *   server-first   r=<cnonce><snonce>,s=<base64 salt>,i=<iterations>
 *   client-final   c=biws,r=<cnonce><snonce>,p=<base64 ClientProof>       (`biws` is base64 of `n,,`)
 *   server-final   v=<base64 ServerSignature>  or  e=<error>
 *
 *   SaltedPassword = Hi(password, salt, i)      ClientKey = HMAC(SaltedPassword, "Client Key")
 *   StoredKey = H(ClientKey)                    ServerKey = HMAC(SaltedPassword, "Server Key")
 *   AuthMessage = client-first-bare "," server-first "," client-final-without-proof
 *   ClientProof = ClientKey XOR HMAC(StoredKey, AuthMessage)
 *   ServerSignature = HMAC(ServerKey, AuthMessage)
 *
 * The key derivation is the broker's own (src/security/sasl/scram.ts: the hash of each mechanism, saslname
 * escaping, StoredKey and ServerKey from a salted password), a leaf module that imports only the codec's error
 * types, so the client shares the arithmetic without depending on anything of the broker's.
 *
 * As Kafka's client: the password is used as UTF-8 without SASLprep; the server nonce must start with the
 * client's ("Invalid server nonce: does not start with client nonce"); fewer than 4096 iterations are refused
 * (ScramMechanism.minIterations); an `e=` server-final fails with the server's error; a server signature that
 * does not verify fails the exchange, since only a server holding the user's ServerKey can compute it.
 * Stricter: a server nonce with nothing appended, a server-first carrying the reserved mandatory-extension
 * attribute `m=` (RFC 5802 §5.1: the client MUST fail), and more than 16384 iterations (Kafka's
 * ScramMechanism.maxIterations: no Kafka credential has more, and a hostile server could otherwise make the
 * client hash for minutes) are refused.
 *
 * Not done: KIP-368 re-authentication. A broker with `connections.max.reauth.ms` tells the session's lifetime
 * in SaslAuthenticate (returned by `authenticateSasl`); Kafka's client signs in again before it ends, this one
 * does not, so such a broker closes the connection at the first request after it (the caller reconnects).
 */
import { createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { ApiDescriptor } from '../../protocol/api.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { SaslAuthenticateApi } from '../../protocol/messages/036-sasl-authenticate.gen.js';
import { SaslHandshakeApi } from '../../protocol/messages/017-sasl-handshake.gen.js';
import type { ScramMechanismName } from '../security/sasl/scram.js';
import { MAX_SCRAM_ITERATIONS, MIN_SCRAM_ITERATIONS, SCRAM_HASH, scramCredentialFromSaltedPassword, scramSaslName } from '../security/sasl/scram.js';
import type { ClientErrorContext } from './errors.js';
import { SaslAuthenticationFailedError } from './errors.js';

export type { ScramMechanismName } from '../security/sasl/scram.js';

/** The user a connection signs in as (Kafka's `sasl.mechanism` and ScramLoginModule's username / password). */
export interface SaslClientOptions {
  readonly mechanism: ScramMechanismName;
  readonly username: string;
  readonly password: string;
}

export interface ScramSaslClientOptions {
  /**
   * The client's nonce: printable ASCII without `,`. Default 24 random bytes in base64url (192 bits, more than
   * the 130 of Kafka's ScramFormatter.secureRandomString). Tests pass RFC vectors' nonces.
   */
  readonly nonce?: () => string;
}

/** A failure of the SCRAM exchange on the client's side; `authenticateSasl` reports it as LL_ERR_CLIENT_SASL. */
export class ScramClientError extends Error {
  override readonly name = 'ScramClientError';
}

type State = 'SEND_CLIENT_FIRST_MESSAGE' | 'RECEIVE_SERVER_FIRST_MESSAGE' | 'RECEIVE_SERVER_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED';

const pbkdf2Async = promisify(pbkdf2);

/** ScramMessages.ServerFirstMessage's grammar, with the reserved `m=` refused and extensions allowed after `i=`. */
const SERVER_FIRST = /^r=(?<nonce>[\x21-\x2b\x2d-\x7e]+),s=(?<salt>(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)?),i=(?<iterations>[0-9]{1,10})(?:,[A-Za-z]=[^,]*)*$/;
/** ScramMessages.ServerFinalMessage: `e=<error>` or `v=<base64 signature>`, then optional extensions. */
const SERVER_FINAL = /^(?:e=(?<error>[^,]*)|v=(?<signature>(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{2}==)?))(?:,[A-Za-z]=[^,]*)*$/;
const PRINTABLE_NONCE = /^[\x21-\x2b\x2d-\x7e]+$/;

/**
 * One SCRAM exchange, as a state machine over the messages: `clientFirst()`, then `clientFinal(serverFirst)`,
 * then `verifyServerFinal(serverFinal)`. Any failure ends it (state FAILED), as in Kafka's ScramSaslClient.
 */
export class ScramSaslClient {
  readonly mechanism: ScramMechanismName;
  readonly #hash: 'sha256' | 'sha512';
  readonly #username: string;
  readonly #password: Buffer;
  readonly #clientNonce: string;
  #state: State = 'SEND_CLIENT_FIRST_MESSAGE';
  #clientFirstBare = '';
  /** The server's signature the server-final must carry, once the client-final is sent. */
  #expectedServerSignature: Buffer | undefined;

  constructor(mechanism: ScramMechanismName, username: string, password: string, options: ScramSaslClientOptions = {}) {
    this.mechanism = mechanism;
    this.#hash = SCRAM_HASH[mechanism];
    this.#username = username;
    this.#password = Buffer.from(password, 'utf8');
    this.#clientNonce = options.nonce?.() ?? randomBytes(24).toString('base64url');
    if (!PRINTABLE_NONCE.test(this.#clientNonce)) throw new TypeError('A SCRAM client nonce must be printable ASCII without ","');
  }

  get complete(): boolean {
    return this.#state === 'COMPLETE';
  }

  /** `n,,n=<saslname>,r=<cnonce>` (RFC 5802 §7 client-first-message, without an authzid as Kafka's client sends it). */
  clientFirst(): Buffer {
    this.#expect('SEND_CLIENT_FIRST_MESSAGE');
    this.#clientFirstBare = `n=${scramSaslName(this.#username)},r=${this.#clientNonce}`;
    this.#state = 'RECEIVE_SERVER_FIRST_MESSAGE';
    return Buffer.from(`n,,${this.#clientFirstBare}`, 'utf8');
  }

  /** The client-final message answering `serverFirst`: Hi on libuv's thread pool, then the proof. */
  async clientFinal(serverFirst: Buffer): Promise<Buffer> {
    this.#expect('RECEIVE_SERVER_FIRST_MESSAGE');
    try {
      const text = serverFirst.toString('utf8');
      const parsed = SERVER_FIRST.exec(text)?.groups;
      if (parsed === undefined) throw new ScramClientError(`Invalid SCRAM server first message format: ${text}`);
      if (!parsed.nonce.startsWith(this.#clientNonce)) throw new ScramClientError('Invalid server nonce: does not start with client nonce');
      if (parsed.nonce.length === this.#clientNonce.length) throw new ScramClientError('Invalid server nonce: the server appended no nonce of its own');
      const iterations = Number(parsed.iterations);
      if (iterations < MIN_SCRAM_ITERATIONS) {
        throw new ScramClientError(`Requested iterations ${iterations} is less than the minimum ${MIN_SCRAM_ITERATIONS} for ${this.mechanism.replaceAll('-', '_')}`);
      }
      if (iterations > MAX_SCRAM_ITERATIONS) throw new ScramClientError(`Requested iterations ${iterations} is more than the maximum ${MAX_SCRAM_ITERATIONS} a Kafka credential has`);
      const salt = Buffer.from(parsed.salt, 'base64');
      // Hi(password, salt, i) is PBKDF2 with HMAC-H and one block of output (RFC 5802 §2.2).
      const saltedPassword = await pbkdf2Async(this.#password, salt, iterations, digestLength(this.#hash), this.#hash);
      const { storedKey, serverKey } = scramCredentialFromSaltedPassword(this.mechanism, saltedPassword, salt, iterations);
      const clientKey = hmac(this.#hash, saltedPassword, 'Client Key');
      const withoutProof = `c=${Buffer.from('n,,').toString('base64')},r=${parsed.nonce}`;
      const authMessage = `${this.#clientFirstBare},${text},${withoutProof}`;
      const proof = xor(clientKey, hmac(this.#hash, storedKey, authMessage));
      this.#expectedServerSignature = hmac(this.#hash, serverKey, authMessage);
      this.#state = 'RECEIVE_SERVER_FINAL_MESSAGE';
      return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8');
    } catch (e) {
      this.#state = 'FAILED';
      throw e;
    }
  }

  /** Checks the server-final message: the server's error, or its signature (proof that it knows ServerKey). */
  verifyServerFinal(serverFinal: Buffer): void {
    this.#expect('RECEIVE_SERVER_FINAL_MESSAGE');
    const expected = this.#expectedServerSignature!;
    this.#expectedServerSignature = undefined;
    this.#state = 'FAILED';
    const text = serverFinal.toString('utf8');
    const parsed = SERVER_FINAL.exec(text)?.groups;
    if (parsed === undefined) throw new ScramClientError(`Invalid SCRAM server final message format: ${text}`);
    if (parsed.error !== undefined) throw new ScramClientError(`Sasl authentication using ${this.mechanism} failed with error: ${parsed.error}`);
    const signature = Buffer.from(parsed.signature!, 'base64');
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected)) throw new ScramClientError('Invalid server signature in server final message');
    this.#state = 'COMPLETE';
  }

  #expect(state: State): void {
    if (this.#state !== state) throw new ScramClientError(`Unexpected SCRAM step in state ${this.#state}`);
  }
}

/** What `authenticateSasl` needs of a connection (Connection has it): requests at a chosen version, negotiated versions. */
export interface SaslTransport {
  request<Req, Res>(api: ApiDescriptor<Req, Res>, body: Req, options?: { version?: number }): Promise<Res>;
  versionFor(api: ApiDescriptor, limit?: { min?: number; max?: number }): number;
}

/**
 * Signs a connection in: SaslHandshake v1 with the mechanism, then the SCRAM messages in SaslAuthenticate
 * requests (the highest version both sides have: v2 is flexible, v1+ tells the session lifetime). Resolves with
 * the session lifetime the broker gave (0: none); rejects with SaslAuthenticationFailedError, carrying the
 * broker's error code and message, or this side's reason.
 */
export async function authenticateSasl(conn: SaslTransport, options: SaslClientOptions, context: ClientErrorContext = {}): Promise<{ sessionLifetimeMs: bigint }> {
  const { mechanism } = options;
  // v0 carries raw tokens after the handshake (no Kafka framing); v1 puts them in SaslAuthenticate (KIP-152).
  const handshakeVersion = conn.versionFor(SaslHandshakeApi, { min: 1 });
  const handshake = await conn.request(SaslHandshakeApi, { mechanism }, { version: handshakeVersion });
  if (handshake.errorCode !== ErrorCode.NONE) {
    const why =
      handshake.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM
        ? `Client SASL mechanism '${mechanism}' not enabled in the server, enabled mechanisms are [${handshake.mechanisms.join(', ')}]`
        : `Unexpected handshake request with client mechanism ${mechanism}, enabled mechanisms are [${handshake.mechanisms.join(', ')}]`;
    throw new SaslAuthenticationFailedError(why, { ...context, apiName: SaslHandshakeApi.name, apiVersion: handshakeVersion }, handshake.errorCode);
  }

  const version = conn.versionFor(SaslAuthenticateApi);
  const ctx = { ...context, apiName: SaslAuthenticateApi.name, apiVersion: version };
  const exchange = async (authBytes: Buffer): Promise<{ authBytes: Buffer; sessionLifetimeMs: bigint }> => {
    const r = await conn.request(SaslAuthenticateApi, { authBytes }, { version });
    // Kafka's SaslClientAuthenticator: a non-zero code fails with the broker's message (or the code's own).
    if (r.errorCode !== ErrorCode.NONE) throw new SaslAuthenticationFailedError(r.errorMessage ?? `${mechanism} authentication failed`, ctx, r.errorCode);
    return r;
  };
  const scram = new ScramSaslClient(mechanism, options.username, options.password);
  try {
    const serverFirst = await exchange(scram.clientFirst());
    const serverFinal = await exchange(await scram.clientFinal(serverFirst.authBytes));
    scram.verifyServerFinal(serverFinal.authBytes);
    return { sessionLifetimeMs: serverFinal.sessionLifetimeMs };
  } catch (e) {
    if (e instanceof ScramClientError) throw new SaslAuthenticationFailedError(e.message, ctx, ErrorCode.SASL_AUTHENTICATION_FAILED, e);
    throw e;
  }
}

function hmac(hash: string, key: Buffer, data: string): Buffer {
  return createHmac(hash, key).update(data).digest();
}

function digestLength(hash: 'sha256' | 'sha512'): number {
  return hash === 'sha256' ? 32 : 64;
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}
