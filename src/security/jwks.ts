/**
 * The verification keys of OAUTHBEARER tokens (KIP-768): a JWKS document parsed into Node.js public keys, read from a
 * `file:` URL once (Kafka's JwksFileVerificationKeyResolver) or fetched from an `https:` URL and refreshed
 * (RefreshingHttpsJwks), with the contract sasl/oauthbearer.ts and jwt-validator.ts share. See jwt-validator.ts for
 * the whole check.
 */
import { constants as cryptoConstants, createPublicKey, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import { open } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';
import type { Logger } from '../observability/logger.js';
import { type Json, type JsonObject, clip, isObject, member, parseJson } from './jose-text.js';

// ---- the contract with sasl/oauthbearer.ts ----

/** A token the validator accepted: Kafka's OAuthBearerToken, without the token itself. */
export interface ValidatedToken {
  /** The principal: the sub claim's value (or the configured claim's), trimmed. */
  readonly principalName: string;
  /** The scope claim's values, no duplicates. */
  readonly scope: readonly string[];
  /** When the token expires, in milliseconds since the epoch (exp × 1000, OAuthBearerToken.lifetimeMs). */
  readonly lifetimeMs: number;
  /** When it was issued, in milliseconds since the epoch (iat × 1000), null without iat. */
  readonly startTimeMs: number | null;
}

/** The RFC 7628 §3.2.2 error status of a refused token (IANA OAuth Extensions Error Registry). */
export type OAuthBearerErrorStatus = 'invalid_token' | 'insufficient_scope';

/**
 * A token refused (OAuthBearerValidatorCallback.error): the SASL server answers the error challenge built from
 * `status`, `scope` and `openidConfiguration`. The message says why, for the broker's log; it never holds the token.
 */
export class JwtValidationError extends LedgerlineError {
  readonly status: OAuthBearerErrorStatus;
  /** The scope the client would need (insufficient_scope), as the challenge's `scope`. */
  readonly scope: string | null;
  readonly openidConfiguration: string | null;

  constructor(message: string, options: { status?: OAuthBearerErrorStatus; scope?: string | null; openidConfiguration?: string | null; cause?: unknown } = {}) {
    super('LL_ERR_JWT_INVALID', ErrorCode.SASL_AUTHENTICATION_FAILED, message, { cause: options.cause });
    this.status = options.status ?? 'invalid_token';
    this.scope = options.scope ?? null;
    this.openidConfiguration = options.openidConfiguration ?? null;
  }
}

/** The verification keys could not be read or fetched (Kafka: the resolver's IOException, KafkaException at start). */
export class JwksError extends LedgerlineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('LL_ERR_JWKS', ErrorCode.UNKNOWN_SERVER_ERROR, message, options);
  }
}

// ---- names and bounds ----

export const JWKS_ENDPOINT_URL = 'sasl.oauthbearer.jwks.endpoint.url';
export const JWKS_ENDPOINT_REFRESH_MS = 'sasl.oauthbearer.jwks.endpoint.refresh.ms';
export const JWKS_ENDPOINT_RETRY_BACKOFF_MS = 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms';
export const JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS = 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms';
export const CLOCK_SKEW_SECONDS = 'sasl.oauthbearer.clock.skew.seconds';
export const EXPECTED_AUDIENCE = 'sasl.oauthbearer.expected.audience';
export const EXPECTED_ISSUER = 'sasl.oauthbearer.expected.issuer';
export const SUB_CLAIM_NAME = 'sasl.oauthbearer.sub.claim.name';
export const SCOPE_CLAIM_NAME = 'sasl.oauthbearer.scope.claim.name';
/** Read with the mechanism prefix only: `listener.name.<l>.oauthbearer.sasl.server.callback.handler.class`. */
export const SERVER_CALLBACK_HANDLER_CLASS = 'oauthbearer.sasl.server.callback.handler.class';

export const SECURED_VALIDATOR_CLASS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
/** The name of the same handler in Kafka 3.1-3.3, still accepted by Kafka 3.x. */
export const SECURED_VALIDATOR_CLASS_OLD = 'org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler';
export const UNSECURED_VALIDATOR_CLASS = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler';

/** The longest token read. Kafka bounds tokens only by sasl.server.max.receive.size; real JWTs stay far below. */
export const MAX_JWT_LENGTH = 65_536;
/** The largest JWKS document read: jose4j Get's default response body limit. */
export const MAX_JWKS_BYTES = 524_288;
/** The most keys a JWKS may hold (identity providers publish a handful). */
export const MAX_JWKS_KEYS = 100;

export const MAX_JSON_DEPTH = 32;
const MIN_RSA_BITS = 2048;
const MAX_RSA_BITS = 16_384;
const MISSING_KEY_ID_CACHE_MAX_ENTRIES = 16;
const MISSING_KEY_ID_CACHE_IN_FLIGHT_MS = 60_000;
const MISSING_KEY_ID_MAX_KEY_LENGTH = 1000;
/** jose4j Get's connect and read timeouts. */
const JWKS_HTTP_TIMEOUT_MS = 20_000;
/** setTimeout's longest delay; longer waits are chained. */
const MAX_TIMER_MS = 2_147_483_647;

/** The logging a validator does (pino's Logger provides it). */
export type JwtLogger = Pick<Logger, 'debug' | 'info' | 'warn'>;

// ---- verification keys (JWKS) ----

type KeyType = 'RSA' | 'EC' | 'OKP';

/** One usable key of a JWKS: the JWK members key selection reads, and the public key. */
export interface VerificationKey {
  readonly kid: string | undefined;
  readonly kty: KeyType;
  readonly use: string | undefined;
  readonly alg: string | undefined;
  readonly crv: string | undefined;
  readonly keyOps: readonly string[] | undefined;
  readonly key: KeyObject;
}

interface AlgorithmSpec {
  readonly kty: KeyType;
  /** The hash, null for EdDSA. */
  readonly hash: 'sha256' | 'sha384' | 'sha512' | null;
  readonly pss?: boolean;
  /** ECDSA: the JWK curve, OpenSSL's name for it, and the r||s signature length. */
  readonly crv?: string;
  readonly namedCurve?: string;
  readonly signatureBytes?: number;
}

export const ALGORITHMS: Readonly<Record<string, AlgorithmSpec>> = {
  RS256: { kty: 'RSA', hash: 'sha256' },
  RS384: { kty: 'RSA', hash: 'sha384' },
  RS512: { kty: 'RSA', hash: 'sha512' },
  PS256: { kty: 'RSA', hash: 'sha256', pss: true },
  PS384: { kty: 'RSA', hash: 'sha384', pss: true },
  PS512: { kty: 'RSA', hash: 'sha512', pss: true },
  ES256: { kty: 'EC', hash: 'sha256', crv: 'P-256', namedCurve: 'prime256v1', signatureBytes: 64 },
  ES384: { kty: 'EC', hash: 'sha384', crv: 'P-384', namedCurve: 'secp384r1', signatureBytes: 96 },
  ES512: { kty: 'EC', hash: 'sha512', crv: 'P-521', namedCurve: 'secp521r1', signatureBytes: 132 },
  EdDSA: { kty: 'OKP', hash: null },
};

export const SUPPORTED_JWS_ALGORITHMS: readonly string[] = Object.keys(ALGORITHMS);

const HASH_BYTES = { sha256: 32, sha384: 48, sha512: 64 } as const;

/**
 * The keys of a JWKS document. A key that cannot be used (an unknown or symmetric key type, a curve not for
 * signatures, members missing) is left out and named in `skipped`, as jose4j's JsonWebKeySet ignores a JWK it
 * cannot process. Throws JwksError for a document that is not a JWKS or exceeds the bounds.
 */
export function parseJwks(document: string, location: string): { keys: VerificationKey[]; skipped: string[] } {
  if (document.length > MAX_JWKS_BYTES) throw new JwksError(`The JWKS from ${location} is larger than the ${MAX_JWKS_BYTES} bytes accepted`);
  let parsed: Json;
  try {
    parsed = parseJson(document);
  } catch (err) {
    throw new JwksError(`The JWKS from ${location} is not valid JSON: ${(err as Error).message}`);
  }
  const list = isObject(parsed) ? member(parsed, 'keys') : undefined;
  if (!Array.isArray(list)) throw new JwksError(`The JWKS from ${location} does not include the keys member`);
  if (list.length > MAX_JWKS_KEYS) throw new JwksError(`The JWKS from ${location} has ${list.length} keys, more than the ${MAX_JWKS_KEYS} accepted`);
  const keys: VerificationKey[] = [];
  const skipped: string[] = [];
  list.forEach((jwk, index) => {
    const key = isObject(jwk) ? verificationKey(jwk) : 'not a JSON object';
    if (typeof key === 'string') skipped.push(`key ${index}${isObject(jwk) && typeof jwk.kid === 'string' ? ` (kid ${JSON.stringify(clip(jwk.kid))})` : ''}: ${key}`);
    else keys.push(key);
  });
  return { keys, skipped };
}

/** The key a JWK describes, or why it cannot be used. */
function verificationKey(jwk: JsonObject): VerificationKey | string {
  const text = (name: string): string | undefined | null => {
    const value = member(jwk, name);
    return value === undefined ? undefined : typeof value === 'string' ? value : null;
  };
  const kty = text('kty');
  const kid = text('kid');
  const use = text('use');
  const alg = text('alg');
  const crv = text('crv');
  if (kid === null || use === null || alg === null || crv === null) return 'kid, use, alg and crv must be strings';
  const ops = member(jwk, 'key_ops');
  if (ops !== undefined && (!Array.isArray(ops) || ops.some((op) => typeof op !== 'string'))) return 'key_ops must be an array of strings';
  // Only the public members reach createPublicKey: given a private JWK it would derive the public key, given a
  // partial one it would refuse the whole.
  let publicJwk: Record<string, string>;
  switch (kty) {
    case 'RSA': {
      const n = text('n');
      const e = text('e');
      if (!n || !e) return 'an RSA key needs n and e';
      publicJwk = { kty, n, e };
      break;
    }
    case 'EC': {
      const x = text('x');
      const y = text('y');
      if (crv !== 'P-256' && crv !== 'P-384' && crv !== 'P-521') return `EC curve ${JSON.stringify(clip(String(crv)))} is not one of P-256, P-384, P-521`;
      if (!x || !y) return 'an EC key needs x and y';
      publicJwk = { kty, crv, x, y };
      break;
    }
    case 'OKP': {
      const x = text('x');
      if (crv !== 'Ed25519' && crv !== 'Ed448') return `OKP curve ${JSON.stringify(clip(String(crv)))} is not one of Ed25519, Ed448`;
      if (!x) return 'an OKP key needs x';
      publicJwk = { kty, crv, x };
      break;
    }
    case 'oct':
      return 'symmetric (oct) keys are not used: HMAC algorithms are not offered';
    default:
      return `key type ${JSON.stringify(clip(String(kty)))} is not one of RSA, EC, OKP`;
  }
  let key: KeyObject;
  try {
    key = createPublicKey({ key: publicJwk, format: 'jwk' });
  } catch (err) {
    return `not a valid ${kty} key (${(err as Error).message})`;
  }
  const bits = key.asymmetricKeyDetails?.modulusLength;
  if (kty === 'RSA' && (bits === undefined || bits > MAX_RSA_BITS)) return `an RSA modulus of ${bits} bits is more than the ${MAX_RSA_BITS} accepted`;
  return { kid, kty, use, alg, crv, keyOps: ops as string[] | undefined, key };
}

/** jose4j's VerificationJwkSelector: the first key fit for `alg` and `kid`, narrowed by alg, then curve. */
export function selectKey(keys: readonly VerificationKey[], alg: string, kid: string | undefined): VerificationKey | undefined {
  const spec = ALGORITHMS[alg];
  let candidates = keys.filter(
    (k) => (kid === undefined || k.kid === kid) && k.kty === spec.kty && (k.use === undefined || k.use === 'sig') && (k.keyOps === undefined || k.keyOps.includes('verify')),
  );
  if (candidates.length > 1) candidates = candidates.filter((k) => k.alg === undefined || k.alg === alg);
  if (candidates.length > 1 && spec.kty === 'EC') candidates = candidates.filter((k) => k.crv === undefined || k.crv === spec.crv);
  return candidates[0];
}

/** Why `key` cannot verify `alg` (jose4j's key validation), or null when it can. */
export function keyMismatch(alg: string, key: KeyObject): string | null {
  const spec = ALGORITHMS[alg];
  const details = key.asymmetricKeyDetails ?? {};
  if (spec.kty === 'RSA') {
    const bits = details.modulusLength ?? 0;
    return bits < MIN_RSA_BITS ? `An RSA key of size ${MIN_RSA_BITS} bits or larger MUST be used with the all JOSE RSA algorithms (given key was only ${bits} bits).` : null;
  }
  if (spec.kty === 'EC') return details.namedCurve === spec.namedCurve ? null : `${alg} expects a key using ${spec.crv} but was ${details.namedCurve ?? 'unknown'}`;
  return key.asymmetricKeyType === 'ed25519' || key.asymmetricKeyType === 'ed448' ? null : `${alg} expects an Ed25519 or Ed448 key`;
}

/** Whether `signature` signs `data` with `key` under `alg`, computed off the event loop. */
export function verifyJws(alg: string, data: Buffer, key: KeyObject, signature: Buffer): Promise<boolean> {
  const spec = ALGORITHMS[alg];
  if (spec.signatureBytes !== undefined && signature.length !== spec.signatureBytes) return Promise.resolve(false);
  const input =
    spec.kty === 'EC'
      ? { key, dsaEncoding: 'ieee-p1363' as const }
      : spec.pss
        ? { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength: HASH_BYTES[spec.hash!] }
        : spec.kty === 'RSA'
          ? { key, padding: cryptoConstants.RSA_PKCS1_PADDING }
          : key;
  return new Promise((resolve) => {
    try {
      cryptoVerify(spec.hash, data, input, signature, (err, ok) => resolve(err === null && ok));
    } catch {
      resolve(false);
    }
  });
}

/** Where a secured validator gets its keys. */
export interface JwksSource {
  /** The JWKS's URL, for messages. */
  readonly location: string;
  /** Reads the keys the first time; rejects with JwksError when they cannot be had. */
  start(): Promise<void>;
  /** The keys as last read (empty before start). */
  keys(): readonly VerificationKey[];
  /** A token named a key that is not among `keys()` (`kid` undefined: a token without kid). */
  keyMissing(kid: string | undefined): void;
  close(): void;
}

/** JwksFileVerificationKeyResolver: a JWKS file, read once at start. */
export class JwksFile implements JwksSource {
  readonly location: string;
  #keys: readonly VerificationKey[] = [];

  constructor(
    readonly path: string,
    private readonly log?: JwtLogger,
  ) {
    this.location = path;
  }

  async start(): Promise<void> {
    let document: string;
    try {
      document = await readBounded(this.path);
    } catch (err) {
      throw err instanceof JwksError ? err : new JwksError(`Could not read the JWKS file ${this.path}: ${(err as Error).message}`, { cause: err });
    }
    const { keys, skipped } = parseJwks(document, this.path);
    if (skipped.length > 0) this.log?.warn({ jwks: this.path, skipped }, 'OAuth JWKS: keys left out');
    this.#keys = keys;
  }

  keys(): readonly VerificationKey[] {
    return this.#keys;
  }

  keyMissing(): void {
    // A file is read once, as Kafka reads it.
  }

  close(): void {}
}

/** At most MAX_JWKS_BYTES + 1 bytes of a file, as UTF-8; a larger file is refused. */
async function readBounded(path: string): Promise<string> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(MAX_JWKS_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_JWKS_BYTES) throw new JwksError(`The JWKS file ${path} is larger than the ${MAX_JWKS_BYTES} bytes accepted`);
    }
    return buffer.toString('utf8', 0, length);
  } finally {
    await file.close();
  }
}

export interface RefreshingHttpJwksOptions {
  /** sasl.oauthbearer.jwks.endpoint.refresh.ms: between scheduled fetches (> 0). */
  readonly refreshMs: number;
  /** sasl.oauthbearer.jwks.endpoint.retry.backoff.ms: the first wait after a failed attempt, doubled each time. */
  readonly retryBackoffMs: number;
  /** sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms: how long one fetch keeps retrying. */
  readonly retryBackoffMaxMs: number;
  /** PEM certificates to trust for https (default: Node's bundled roots). */
  readonly ca?: string;
  readonly log?: JwtLogger;
  /** The clock, in milliseconds: the retry budget and the unknown-kid window (tests). */
  readonly now?: () => number;
}

/**
 * RefreshingHttpsJwks: the JWKS of an https (or, for a loopback host, http) URL, fetched at start, then every
 * refreshMs, and soon after a token names a kid it lacks (at most once a minute per kid, 16 kids remembered).
 * A fetch retries failed attempts with exponential backoff for up to retryBackoffMaxMs (Kafka's Retry); a refresh
 * that fails keeps the keys it had (logged).
 */
export class RefreshingHttpJwks implements JwksSource {
  readonly location: string;
  readonly #url: URL;
  readonly #o: RefreshingHttpJwksOptions;
  readonly #now: () => number;
  #keys: readonly VerificationKey[] = [];
  /** Kid → when it may trigger another refresh; insertion order is recency (an LRU of 16, as Kafka's). */
  readonly #missingKeyIds = new Map<string, number>();
  #refreshing = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #abort = new AbortController();

  constructor(url: string | URL, options: RefreshingHttpJwksOptions) {
    this.#url = new URL(url);
    this.location = this.#url.href;
    if (!(options.refreshMs > 0)) throw new RangeError('the JWKS refresh interval must be positive');
    if (options.retryBackoffMs < 0 || options.retryBackoffMaxMs < options.retryBackoffMs) throw new RangeError('the JWKS retry backoffs must satisfy 0 <= backoff <= max');
    this.#o = options;
    this.#now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    this.#keys = await this.#fetchWithRetry();
    this.#o.log?.info({ jwks: this.location, keys: this.#keys.length, refreshMs: this.#o.refreshMs }, 'OAuth JWKS fetched; refreshing periodically');
    if (this.#timer === undefined) this.#schedule(this.#o.refreshMs);
  }

  keys(): readonly VerificationKey[] {
    return this.#keys;
  }

  /** RefreshingHttpsJwks.maybeExpediteRefresh. */
  keyMissing(kid: string | undefined): void {
    const id = kid ?? '';
    if (this.#closed) return;
    if (id.length > MISSING_KEY_ID_MAX_KEY_LENGTH) {
      this.#o.log?.warn({ jwks: this.location, kidLength: id.length }, 'OAuth JWKS: key ID too long to look for');
      return;
    }
    const nextCheck = this.#missingKeyIds.get(id);
    const now = this.#now();
    if (nextCheck !== undefined) {
      this.#missingKeyIds.delete(id);
      this.#missingKeyIds.set(id, nextCheck);
      if (nextCheck > now) return;
    }
    this.#missingKeyIds.delete(id);
    this.#missingKeyIds.set(id, now + MISSING_KEY_ID_CACHE_IN_FLIGHT_MS);
    while (this.#missingKeyIds.size > MISSING_KEY_ID_CACHE_MAX_ENTRIES) this.#missingKeyIds.delete(this.#missingKeyIds.keys().next().value!);
    this.#o.log?.debug({ jwks: this.location, kid: clip(id) }, 'OAuth JWKS: no key for a token; refreshing now');
    setImmediate(() => void this.#refresh());
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#abort.abort();
  }

  /** Runs a refresh `delayMs` from now, then keeps the fixed rate (delays over setTimeout's limit are chained). */
  #schedule(delayMs: number): void {
    if (this.#closed) return;
    const step = Math.min(delayMs, MAX_TIMER_MS);
    this.#timer = setTimeout(() => {
      if (delayMs > step) return this.#schedule(delayMs - step);
      this.#schedule(this.#o.refreshMs);
      void this.#refresh();
    }, step);
    this.#timer.unref();
  }

  async #refresh(): Promise<void> {
    if (this.#refreshing || this.#closed) return;
    this.#refreshing = true;
    try {
      const keys = await this.#fetchWithRetry();
      if (this.#closed) return;
      for (const key of keys) if (key.kid !== undefined) this.#missingKeyIds.delete(key.kid);
      this.#keys = keys;
      this.#o.log?.info({ jwks: this.location, keys: keys.length }, 'OAuth JWKS refreshed');
    } catch (err) {
      if (!this.#closed) this.#o.log?.warn({ jwks: this.location, err: (err as Error).message }, 'OAuth JWKS refresh failed; keeping the keys we have');
    } finally {
      this.#refreshing = false;
    }
  }

  /** Kafka's Retry: attempts until one succeeds or retryBackoffMaxMs have passed; throws the first error. */
  async #fetchWithRetry(): Promise<VerificationKey[]> {
    const end = this.#now() + this.#o.retryBackoffMaxMs;
    let first: unknown;
    for (let attempt = 1; ; attempt++) {
      if (this.#closed) throw new JwksError(`The JWKS fetch from ${this.location} was stopped: closed`);
      try {
        return await this.#fetch();
      } catch (err) {
        first ??= err;
        const wait = Math.min(this.#o.retryBackoffMs * 2 ** (attempt - 1), end - this.#now());
        if (wait <= 0 || this.#closed) break;
        this.#o.log?.warn({ jwks: this.location, attempt, waitMs: wait, err: (err as Error).message }, 'OAuth JWKS fetch failed; retrying');
        await sleep(wait, undefined, { signal: this.#abort.signal }).catch(() => undefined);
      }
    }
    throw first instanceof JwksError ? first : new JwksError(`Could not fetch the JWKS from ${this.location}: ${(first as Error).message}`, { cause: first });
  }

  async #fetch(): Promise<VerificationKey[]> {
    const document = await httpGet(this.#url, this.#o.ca, this.#abort.signal);
    const { keys, skipped } = parseJwks(document, this.location);
    if (skipped.length > 0) this.#o.log?.warn({ jwks: this.location, skipped }, 'OAuth JWKS: keys left out');
    return keys;
  }
}

/** The body of a 200 answer to GET `url`, at most MAX_JWKS_BYTES. */
function httpGet(url: URL, ca: string | undefined, signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const options: https.RequestOptions = { method: 'GET', headers: { accept: 'application/json' }, signal, timeout: JWKS_HTTP_TIMEOUT_MS, ...(ca === undefined ? {} : { ca }) };
    const onResponse = (response: http.IncomingMessage): void => {
      const fail = (message: string): void => {
        response.destroy();
        reject(new JwksError(`The JWKS from ${url.href}: ${message}`));
      };
      if (response.statusCode !== 200) return fail(`HTTP status ${response.statusCode}`);
      const declared = Number(response.headers['content-length'] ?? 0);
      if (declared > MAX_JWKS_BYTES) return fail(`${declared} bytes, more than the ${MAX_JWKS_BYTES} accepted`);
      const chunks: Buffer[] = [];
      let length = 0;
      response.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length > MAX_JWKS_BYTES) return fail(`more than the ${MAX_JWKS_BYTES} bytes accepted`);
        chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks, length).toString('utf8')));
      response.on('error', reject);
    };
    const request = url.protocol === 'https:' ? https.request(url, options, onResponse) : http.request(url, options, onResponse);
    request.on('timeout', () => request.destroy(new Error(`no answer in ${JWKS_HTTP_TIMEOUT_MS} ms`)));
    request.on('error', reject);
    request.end();
  });
}
