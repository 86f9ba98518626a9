/**
 * The broker's check of an OAUTHBEARER token (KIP-255, KIP-768): a JWT in JWS compact serialization, validated as
 * Kafka's two server-side callback handlers validate it. sasl/oauthbearer.ts runs the SASL exchange and asks a
 * JwtValidator about the token the client sent.
 *
 *   listener.name.<l>.oauthbearer.sasl.server.callback.handler.class
 *     unset, or ...internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler   (Kafka's default)
 *         └─► unsecured: `alg: none` tokens, claims read as OAuthBearerUnsecuredJws reads them; for tests only
 *     org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler (or its old .secured. name)
 *         └─► secured: ValidatorAccessTokenValidator, a jose4j JwtConsumer over the keys of a JWKS:
 *               sasl.oauthbearer.jwks.endpoint.url = file:...          JwksFileVerificationKeyResolver (read at start)
 *                                                  = https://...        RefreshingHttpsJwks (fetched at start, then
 *                                                                       every refresh.ms, sooner for an unknown kid)
 *
 * Configs, read as ConfigurationUtils reads them: `oauthbearer.<name>` over `<name>`, through the listener's own
 * lookup (so `listener.name.<l>.oauthbearer.<name>` first):
 *
 * | config                                           | default   | use                                            |
 * |--------------------------------------------------|-----------|------------------------------------------------|
 * | sasl.oauthbearer.jwks.endpoint.url               | (needed)  | file:, https: (http: only for a loopback host) |
 * | sasl.oauthbearer.jwks.endpoint.refresh.ms        | 3600000   | time between fetches (> 0)                     |
 * | sasl.oauthbearer.jwks.endpoint.retry.backoff.ms  | 100       | first wait after a failed fetch, then doubled  |
 * | sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms | 10000  | how long one fetch keeps retrying              |
 * | sasl.oauthbearer.clock.skew.seconds              | 30        | leeway for exp and nbf (>= 0)                  |
 * | sasl.oauthbearer.expected.audience               | none      | comma-separated; one must be in `aud`          |
 * | sasl.oauthbearer.expected.issuer                 | none      | must equal `iss`                               |
 * | sasl.oauthbearer.sub.claim.name                  | sub       | the claim naming the principal                 |
 * | sasl.oauthbearer.scope.claim.name                | scope     | the claim listing the scope                    |
 * JAAS options of the OAUTHBEARER login module: secured, `ssl.truststore.type` (PEM only), `ssl.truststore.location`,
 * `ssl.truststore.certificates` for the JWKS endpoint's TLS (Kafka builds its HTTPS client from the JAAS options'
 * ssl.* too; without them Node's bundled roots are trusted, as Java's cacerts); unsecured,
 * `unsecuredValidatorPrincipalClaimName` (sub), `unsecuredValidatorScopeClaimName` (scope),
 * `unsecuredValidatorRequiredScope` (none; space-separated), `unsecuredValidatorAllowableClockSkewMs` (0).
 *
 * The secured checks, in jose4j's order (JwtConsumer.process), then Kafka's (ValidatorAccessTokenValidator):
 *   1. three non-empty dot-separated sections (SerializedJwt); header base64url JSON with a supported `alg`:
 *      RS256/384/512, PS256/384/512, ES256/384/512 (signatures r||s), EdDSA (Ed25519, Ed448); `none` is refused
 *      ("'none' is a blocked algorithm", AlgorithmConstraints DISALLOW_NONE), and so is a `crit` header;
 *   2. the key, chosen as jose4j's VerificationJwkSelector chooses: the `kid` if the header has one (a token without
 *      `kid` may use any key), the key type of `alg`, `use` sig or absent; among several, `alg`, then the curve.
 *      None found: refused, and (https) the JWKS fetched again soon, at most once a minute per kid
 *      (RefreshingHttpsJwks.maybeExpediteRefresh). RSA keys must have 2048 bits or more, EC keys the curve of `alg`;
 *   3. the signature; only then the payload, a JSON object;
 *   4. `exp` and `iat` present (setRequireExpirationTime, setRequireIssuedAt); now - skew < exp; exp not before
 *      iat or nbf; now + skew >= nbf when present. `iat` in the future is accepted, as jose4j does by default;
 *   5. `aud`: with expected audiences one of them must be in it; without, a token that has an `aud` is refused
 *      (jose4j's default AudValidator, which Kafka keeps: "present in the JWT but no expected audience value(s)
 *      were provided"); `iss` must equal the expected issuer when one is set;
 *   6. the sub claim a non-blank string (trimmed), the scope claim a string or an array of non-blank strings
 *      without duplicates (absent, or of another type: no scope), exp and iat not negative (ClaimValidationUtils).
 * The token's lifetime and start are exp and iat in milliseconds since the epoch (OAuthBearerToken.lifetimeMs).
 *
 * Differences from Kafka:
 *   - a scope given as a string is split at spaces (RFC 6749 §3.3, RFC 9068 §2.2.3); Kafka's validators keep it as
 *     one scope ("a b"). Arrays are read alike;
 *   - messages name what failed but never hold the token (SerializedJwt's "Malformed JWT provided (<token>)" and
 *     jose4j's messages, which print it, are reworded), and the first failed check is reported where jose4j lists
 *     every failed claim check;
 *   - JSON with a member name given twice is refused in both modes, as jose4j refuses it (Jackson, which reads
 *     unsecured tokens in Kafka, keeps the last); unsecured claims that are booleans, null or objects are not read
 *     as the texts Jackson makes of them ("true", "null", "");
 *   - HMAC algorithms (HS256...) and `oct` keys, nested or encrypted JWTs, and x5t/x5c key selection are not
 *     offered; the unsecured validator reads base64url (what Kafka's own unsecured login module writes) as well as
 *     the standard alphabet (all that Kafka's unsecured validator reads);
 *   - an https JWKS that cannot be fetched at start is retried with the backoff before start fails (Kafka tries
 *     once, and then fails the broker's start); redirects are not followed; only a 200 response is read;
 *   - http: is accepted only for loopback hosts (127.0.0.0/8, ::1, localhost), for tests: keys fetched over plain
 *     HTTP from elsewhere could be anyone's;
 *   - a JWKS URL configured without OAuthBearerValidatorCallbackHandler is refused at start. Kafka then runs the
 *     unsecured validator, which accepts unsigned tokens: surely not what was meant;
 *   - a negative clock skew, and a zero refresh interval (which Kafka refuses only when the refresh starts), are
 *     refused with the other configs; unsecured JAAS options are checked at start, not at each token;
 *   - Kafka 4's allow-lists of JWKS URLs and files (system properties org.apache.kafka.sasl.oauthbearer.allowed.urls
 *     and .allowed.files) have no counterpart: Ledgerline's configs are not set by clients.
 *
 * Bounds, so no unauthenticated client makes the broker allocate or compute much: a token of at most
 * MAX_JWT_LENGTH characters, JSON nested at most 32 deep, parsed in one linear pass; a JWKS of at most
 * MAX_JWKS_BYTES (jose4j's Get response limit) and MAX_JWKS_KEYS keys, RSA moduli of at most 16384 bits; at most 16
 * unknown kids remembered, kids over 1000 characters never (RefreshingHttpsJwks' limits).
 */
import { accessSync, constants as fsConstants, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../config.js';
import { BASE64URL, BASE64_ANY, type Json, type JsonObject, clip, decodeJsonObject, javaList, javaSplit, javaTrim, member } from './jose-text.js';
import { ALGORITHMS, CLOCK_SKEW_SECONDS, EXPECTED_AUDIENCE, EXPECTED_ISSUER, JWKS_ENDPOINT_REFRESH_MS, JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS, JWKS_ENDPOINT_RETRY_BACKOFF_MS, JWKS_ENDPOINT_URL, JwksError, JwksFile, type JwksSource, type JwtLogger, JwtValidationError, MAX_JWT_LENGTH, RefreshingHttpJwks, SCOPE_CLAIM_NAME, SECURED_VALIDATOR_CLASS, SECURED_VALIDATOR_CLASS_OLD, SERVER_CALLBACK_HANDLER_CLASS, SUB_CLAIM_NAME, SUPPORTED_JWS_ALGORITHMS, UNSECURED_VALIDATOR_CLASS, type ValidatedToken, keyMismatch, selectKey, verifyJws } from './jwks.js';

// ---- the validators ----

export interface SecuredJwtSettings {
  /** sasl.oauthbearer.clock.skew.seconds */
  readonly clockSkewSeconds: number;
  /** sasl.oauthbearer.expected.audience; empty: tokens must have no aud (jose4j's default). */
  readonly expectedAudiences: readonly string[];
  /** sasl.oauthbearer.expected.issuer */
  readonly expectedIssuer: string | null;
  /** sasl.oauthbearer.sub.claim.name */
  readonly subClaimName: string;
  /** sasl.oauthbearer.scope.claim.name */
  readonly scopeClaimName: string;
}

export interface UnsecuredJwtSettings {
  /** unsecuredValidatorPrincipalClaimName */
  readonly principalClaimName: string;
  /** unsecuredValidatorScopeClaimName */
  readonly scopeClaimName: string;
  /** unsecuredValidatorRequiredScope, split */
  readonly requiredScope: readonly string[];
  /** unsecuredValidatorAllowableClockSkewMs */
  readonly allowableClockSkewMs: number;
}

export const DEFAULT_SECURED_SETTINGS: SecuredJwtSettings = { clockSkewSeconds: 30, expectedAudiences: [], expectedIssuer: null, subClaimName: 'sub', scopeClaimName: 'scope' };
export const DEFAULT_UNSECURED_SETTINGS: UnsecuredJwtSettings = { principalClaimName: 'sub', scopeClaimName: 'scope', requiredScope: [], allowableClockSkewMs: 0 };

export interface JwtValidatorOptions {
  readonly log?: JwtLogger;
  /** The clock, in milliseconds since the epoch (tests). */
  readonly now?: () => number;
}

interface Strategy {
  start(): Promise<void>;
  validate(token: string): Promise<ValidatedToken>;
  close(): void;
}

/**
 * The token check of an OAUTHBEARER listener: secured (signed JWTs against a JWKS) or unsecured (`alg: none`).
 * `start` reads the keys (the broker's start should fail when it rejects, as Kafka's does); `validate` starts
 * it when that has not happened yet. `validate` rejects with JwtValidationError for a refused token, JwksError when
 * the keys cannot be had.
 */
export class JwtValidator {
  readonly #strategy: Strategy;
  #started: Promise<void> | undefined;

  private constructor(
    /** True for the secured validator (OAuthBearerValidatorCallbackHandler). */
    readonly secured: boolean,
    strategy: Strategy,
  ) {
    this.#strategy = strategy;
  }

  /**
   * The validator a listener's configs ask for. `get` reads a config as the listener sees it (listener-security.ts
   * listenerConfig); `jaasOptions` are the options of the listener's OAUTHBEARER JAAS entry. Throws ConfigError.
   */
  static fromConfig(get: (name: string) => string | null, jaasOptions: ReadonlyMap<string, string>, log?: JwtLogger, options: { now?: () => number } = {}): JwtValidator {
    const handler = get(SERVER_CALLBACK_HANDLER_CLASS)?.trim() || null;
    // ConfigurationUtils.get: the mechanism-prefixed name first.
    const read = (name: string): string | null => get(`oauthbearer.${name}`) ?? get(name);
    if (handler === SECURED_VALIDATOR_CLASS || handler === SECURED_VALIDATOR_CLASS_OLD) {
      return securedFromConfig(read, jaasOptions, { ...options, log });
    }
    if (handler !== null && handler !== UNSECURED_VALIDATOR_CLASS) {
      throw new ConfigError(`${SERVER_CALLBACK_HANDLER_CLASS} is ${handler}, which Ledgerline does not have: use ${SECURED_VALIDATOR_CLASS} (or leave it unset for the unsecured validator, for tests)`);
    }
    if (handler === null && read(JWKS_ENDPOINT_URL)?.trim()) {
      throw new ConfigError(
        `${JWKS_ENDPOINT_URL} is set but ${SERVER_CALLBACK_HANDLER_CLASS} is not, so tokens would be checked by the unsecured validator, which accepts unsigned tokens: set it to ${SECURED_VALIDATOR_CLASS}`,
      );
    }
    const settings = unsecuredSettingsFromJaas(jaasOptions);
    log?.warn(
      { handler: handler ?? `unset (${SERVER_CALLBACK_HANDLER_CLASS})` },
      `OAUTHBEARER tokens are checked by the unsecured validator, which accepts unsigned (alg none) tokens naming any principal: for tests only; set ${SECURED_VALIDATOR_CLASS} and ${JWKS_ENDPOINT_URL} for production`,
    );
    return JwtValidator.unsecured(settings, { ...options, log });
  }

  /** The secured validator over `keys`. */
  static secured(keys: JwksSource, settings: Partial<SecuredJwtSettings> = {}, options: JwtValidatorOptions = {}): JwtValidator {
    return new JwtValidator(true, new SecuredStrategy(keys, { ...DEFAULT_SECURED_SETTINGS, ...settings }, options));
  }

  /** The unsecured validator (OAuthBearerUnsecuredValidatorCallbackHandler): never for production. */
  static unsecured(settings: Partial<UnsecuredJwtSettings> = {}, options: JwtValidatorOptions = {}): JwtValidator {
    return new JwtValidator(false, new UnsecuredStrategy({ ...DEFAULT_UNSECURED_SETTINGS, ...settings }, options));
  }

  /** Reads the keys, once; a failed start is tried again by the next call. */
  start(): Promise<void> {
    this.#started ??= this.#strategy.start().catch((err: unknown) => {
      this.#started = undefined;
      throw err;
    });
    return this.#started;
  }

  async validate(token: string): Promise<ValidatedToken> {
    await this.start();
    return this.#strategy.validate(token);
  }

  /** Stops refreshing keys. */
  close(): void {
    this.#strategy.close();
  }
}

/** Refuses a token: `Could not validate the access token: <why>` (ValidatorAccessTokenValidator's wording). */
function invalid(why: string): JwtValidationError {
  return new JwtValidationError(`Could not validate the access token: ${why}`);
}

/** jose4j's NumericDate.toString, with an ISO date. */
function numericDate(seconds: number): string {
  const date = new Date(seconds * 1000);
  return `NumericDate{${seconds} -> ${Number.isNaN(date.getTime()) ? '?' : date.toISOString()}}`;
}

class SecuredStrategy implements Strategy {
  readonly #now: () => number;
  readonly #log: JwtLogger | undefined;

  constructor(
    private readonly keys: JwksSource,
    private readonly settings: SecuredJwtSettings,
    options: JwtValidatorOptions,
  ) {
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
  }

  start(): Promise<void> {
    return this.keys.start();
  }

  close(): void {
    this.keys.close();
  }

  async validate(token: string): Promise<ValidatedToken> {
    try {
      return await this.#validate(token);
    } catch (err) {
      if (err instanceof JwtValidationError) this.#log?.debug({ reason: err.message }, 'OAuth token refused');
      throw err;
    }
  }

  async #validate(accessToken: string): Promise<ValidatedToken> {
    if (accessToken.length > MAX_JWT_LENGTH) throw invalid(`the token has ${accessToken.length} characters, more than the ${MAX_JWT_LENGTH} accepted`);
    // SerializedJwt
    const token = javaTrim(accessToken);
    if (token === '') throw new JwtValidationError('Empty JWT provided; expected three sections (header, payload, and signature)');
    const sections = javaSplit(token, '.');
    if (sections.length !== 3) throw new JwtValidationError(`Malformed JWT provided; expected three sections (header, payload, and signature), but ${sections.length} sections provided`);
    (['header', 'payload', 'signature'] as const).forEach((name, i) => {
      if (javaTrim(sections[i]) === '') throw new JwtValidationError(`Malformed JWT provided; expected at least three sections (header, payload, and signature), but ${name} section missing`);
    });
    const [headerPart, payloadPart, signaturePart] = sections;

    // The JOSE header.
    const header = decodeJsonObject(headerPart, BASE64URL);
    if (typeof header === 'string') throw invalid(`the JWS header: ${header}`);
    const alg = member(header, 'alg');
    if (typeof alg !== 'string') throw invalid('the JWS header has no string alg');
    if (alg === 'none') throw invalid("'none' is a blocked algorithm for this context.");
    if (!Object.hasOwn(ALGORITHMS, alg)) throw invalid(`${clip(alg)} is an unknown, unsupported or unavailable alg algorithm (not one of ${javaList(SUPPORTED_JWS_ALGORITHMS)}).`);
    const crit = member(header, 'crit');
    if (crit !== undefined) throw invalid(`the JWS header marks ${clip(JSON.stringify(crit))} as critical, which is not understood`);
    const kidValue = member(header, 'kid');
    if (kidValue !== undefined && typeof kidValue !== 'string') throw invalid('the JWS header kid is not a string');
    const kid = kidValue;

    // The key, then the signature.
    const keys = this.keys.keys();
    const key = selectKey(keys, alg, kid);
    if (key === undefined) {
      this.keys.keyMissing(kid);
      const named = kid === undefined ? 'no kid' : `kid ${JSON.stringify(clip(kid))}`;
      throw invalid(`Unable to find a suitable verification key for JWS w/ alg ${alg} and ${named} among the ${keys.length} keys from ${this.keys.location}`);
    }
    const mismatch = keyMismatch(alg, key.key);
    if (mismatch !== null) throw invalid(mismatch);
    if (!BASE64URL.test(signaturePart) || !BASE64URL.test(payloadPart)) throw invalid('the JWS payload or signature is not base64url');
    const signingInput = Buffer.from(`${headerPart}.${payloadPart}`, 'latin1');
    if (!(await verifyJws(alg, signingInput, key.key, Buffer.from(signaturePart, 'base64url')))) throw invalid('JWT rejected due to invalid signature.');

    // The claims (jose4j's validators, then Kafka's).
    const claims = decodeJsonObject(payloadPart, BASE64URL);
    if (typeof claims === 'string') throw invalid(`the JWT claims: ${claims}`);
    const s = this.settings;
    const exp = secondsClaim(claims, 'exp');
    const iat = secondsClaim(claims, 'iat');
    const nbf = secondsClaim(claims, 'nbf');
    if (exp === undefined) throw invalid('No Expiration Time (exp) claim present.');
    if (iat === undefined) throw invalid('No Issued At (iat) claim present.');
    const now = Math.floor(this.#now() / 1000);
    const skew = s.clockSkewSeconds;
    const skewMessage = skew > 0 ? ` (even when providing ${skew} seconds of leeway to account for clock skew).` : '.';
    if (now - skew >= exp) throw invalid(`The JWT is no longer valid - the evaluation time ${numericDate(now)} is on or after the Expiration Time (exp=${numericDate(exp)}) claim value${skewMessage}`);
    if (exp < iat) throw invalid(`The Expiration Time (exp=${numericDate(exp)}) claim value cannot be before the Issued At (iat=${numericDate(iat)}) claim value.`);
    if (nbf !== undefined && exp < nbf) throw invalid(`The Expiration Time (exp=${numericDate(exp)}) claim value cannot be before the Not Before (nbf=${numericDate(nbf)}) claim value.`);
    if (nbf !== undefined && now + skew < nbf) throw invalid(`The JWT is not yet valid as the evaluation time ${numericDate(now)} is before the Not Before (nbf=${numericDate(nbf)}) claim time${skewMessage}`);
    checkAudience(claims, s.expectedAudiences);
    checkIssuer(claims, s.expectedIssuer);

    const scope = securedScope(claims, s.scopeClaimName);
    const sub = member(claims, s.subClaimName);
    if (sub !== undefined && typeof sub !== 'string') throw new JwtValidationError(`Could not extract the '${clip(s.subClaimName)}' claim from the access token`);
    const principalName = claimString(s.subClaimName, sub);
    if (exp < 0) throw new JwtValidationError(`exp value must be non-negative; value given was "${exp * 1000}"`);
    if (iat < 0) throw new JwtValidationError(`iat value must be null or non-negative; value given was "${iat * 1000}"`);
    return { principalName, scope, lifetimeMs: exp * 1000, startTimeMs: iat * 1000 };
  }
}

/** A NumericDate claim in whole seconds (jose4j: Number.longValue), undefined when absent. */
function secondsClaim(claims: JsonObject, name: string): number | undefined {
  const value = member(claims, name);
  if (value === undefined) return undefined;
  if (typeof value !== 'number') throw invalid(`The value of the '${name}' claim is not the expected type (a number)`);
  const seconds = Math.trunc(value);
  if (!Number.isSafeInteger(seconds * 1000)) throw invalid(`The value of the '${name}' claim is out of range`);
  return seconds;
}

/** jose4j's AudValidator, as Kafka builds it: required when expected audiences are set, refused when none are. */
function checkAudience(claims: JsonObject, expected: readonly string[]): void {
  const aud = member(claims, 'aud');
  if (aud === undefined) {
    if (expected.length > 0) throw invalid('No Audience (aud) claim present.');
    return;
  }
  let audiences: string[];
  if (typeof aud === 'string') audiences = [aud];
  else if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) audiences = aud as string[];
  else throw invalid("The value of the 'aud' claim is not an array of strings or a single string value.");
  if (audiences.some((a) => expected.includes(a))) return;
  const shown = clip(javaList(audiences));
  const want = expected.length === 1 ? expected[0] : `one of ${javaList(expected)}`;
  if (expected.length === 0) throw invalid(`Audience (aud) claim ${shown} present in the JWT but no expected audience value(s) were provided to the JWT Consumer. Expected ${want} as an aud value.`);
  throw invalid(`Audience (aud) claim ${shown} doesn't contain an acceptable identifier. Expected ${want} as an aud value.`);
}

/** jose4j's IssValidator: `iss` must be a string, and the expected one when set. */
function checkIssuer(claims: JsonObject, expected: string | null): void {
  const iss = member(claims, 'iss');
  if (iss !== undefined && typeof iss !== 'string') throw invalid("The value of the 'iss' claim is not the expected type (a string)");
  if (expected === null) return;
  if (iss === undefined) throw invalid(`No Issuer (iss) claim present but was expecting ${expected}`);
  if (iss !== expected) throw invalid(`Issuer (iss) claim value (${clip(iss)}) doesn't match expected value of ${expected}`);
}

/** ClaimValidationUtils.validateString: non-null, non-empty, not only whitespace; trimmed. */
function claimString(name: string, value: string | undefined): string {
  if (value === undefined) throw new JwtValidationError(`${clip(name)} value must be non-null`);
  if (value === '') throw new JwtValidationError(`${clip(name)} value must be non-empty`);
  const trimmed = javaTrim(value);
  if (trimmed === '') throw new JwtValidationError(`${clip(name)} value must not contain only whitespace`);
  return trimmed;
}

/** The secured validator's scope: a string (split at spaces) or an array of strings, validateScopes' rules. */
function securedScope(claims: JsonObject, name: string): string[] {
  const raw = member(claims, name);
  let items: (string | undefined)[];
  if (typeof raw === 'string') {
    const whole = claimString(name, raw);
    items = whole.split(' ').filter((item) => item !== '');
  } else if (Array.isArray(raw)) {
    if (raw.some((item) => item !== null && typeof item !== 'string')) throw new JwtValidationError(`Could not extract the '${clip(name)}' claim from the access token`);
    items = raw.map((item) => (item === null ? undefined : (item as string)));
  } else {
    items = []; // absent, or a type Kafka does not read as scope
  }
  const scope = new Set<string>();
  for (const item of items) {
    const value = claimString(name, item);
    if (scope.has(value)) throw new JwtValidationError(`${clip(name)} value must not contain duplicates - ${clip(value)} already present`);
    scope.add(value);
  }
  return [...scope];
}

/** OAuthBearerScopeUtils' scope item: NQCHAR without space (RFC 6749 §3.3). */
const SCOPE_ITEM = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

class UnsecuredStrategy implements Strategy {
  readonly #now: () => number;
  readonly #log: JwtLogger | undefined;

  constructor(
    private readonly settings: UnsecuredJwtSettings,
    options: JwtValidatorOptions,
  ) {
    this.#now = options.now ?? Date.now;
    this.#log = options.log;
  }

  async start(): Promise<void> {}

  close(): void {}

  async validate(token: string): Promise<ValidatedToken> {
    try {
      const validated = this.#validate(token);
      this.#log?.debug({ principal: validated.principalName }, 'Unsecured OAuth token accepted');
      return validated;
    } catch (err) {
      if (err instanceof JwtValidationError) this.#log?.debug({ reason: err.message }, 'Unsecured OAuth token refused');
      throw err;
    }
  }

  /** OAuthBearerUnsecuredJws, then OAuthBearerUnsecuredValidatorCallbackHandler.handleCallback. */
  #validate(token: string): ValidatedToken {
    const refuse = (message: string): never => {
      throw new JwtValidationError(message);
    };
    if (token.length > MAX_JWT_LENGTH) refuse(`The token has ${token.length} characters, more than the ${MAX_JWT_LENGTH} accepted`);
    if (token.includes('..')) refuse("Malformed compact serialization contains '..'");
    const splits = javaSplit(token, '.');
    if (token.endsWith('.')) splits.push('');
    if (splits.length !== 3) refuse('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values');
    const header = decodeJsonObject(splits[0], BASE64_ANY);
    if (typeof header === 'string') return refuse(header);
    const claims = decodeJsonObject(splits[1], BASE64_ANY);
    if (typeof claims === 'string') return refuse(claims);
    const alg = member(header, 'alg');
    if (alg === undefined) refuse('JWS header must have an Algorithm value');
    if (alg !== 'none') refuse("Unsecured JWS must have 'none' for an algorithm");
    if (splits[2] !== '') refuse('Unsecured JWS must not contain a digital signature');

    const { principalClaimName, scopeClaimName, requiredScope, allowableClockSkewMs: skew } = this.settings;
    const typeName = (value: Json): string =>
      Array.isArray(value) ? 'List' : value === null ? 'null' : typeof value === 'object' ? 'Object' : typeof value === 'number' ? 'Number' : typeof value === 'string' ? 'String' : 'Boolean';
    /** OAuthBearerUnsecuredJws.claim: the claim if it has the type, undefined if absent, refused otherwise. */
    const claim = (name: string, type: 'String' | 'Number' | 'List'): Json | undefined => {
      const value = member(claims, name);
      if (value === undefined) return undefined;
      if (type === 'List' && Array.isArray(value)) return value.every((v) => typeof v === 'string') ? value : refuse(`The '${clip(name)}' claim was not a List of Strings`);
      return typeName(value) === type ? value : refuse(`The '${clip(name)}' claim was not of type ${type}: ${typeName(value)}`);
    };

    // calculateScope: a string is one scope here too in Kafka; split at spaces, as the secured validator does.
    const scopeValue = member(claims, scopeClaimName);
    const scopeItems = typeof scopeValue === 'string' ? scopeValue.split(' ') : ((claim(scopeClaimName, 'List') as string[] | undefined) ?? []);
    const scope = [...new Set(scopeItems.map(javaTrim).filter((item) => item !== ''))];
    const exp = claim('exp', 'Number') as number | undefined;
    if (exp === undefined) return refuse('No expiration time in JWT');
    const principal = claim(principalClaimName, 'String') as string | undefined;
    if (principal === undefined || javaTrim(principal) === '') return refuse(`No principal name in JWT claim: ${clip(principalClaimName)}`);
    const iat = claim('iat', 'Number') as number | undefined;
    if (!Number.isFinite(exp) || (iat !== undefined && !Number.isFinite(iat))) refuse('The exp and iat claims must be finite numbers');

    const now = this.#now();
    const seconds = (value: number): string => value.toFixed(6); // Java's %f
    if (iat !== undefined && 1000 * iat > now + skew) {
      refuse(`The Issued At value (${seconds(iat)} seconds) was after the indicated time (${now} ms) plus allowable clock skew (${skew} ms)`);
    }
    if (now - skew >= 1000 * exp) refuse(`The indicated time (${now} ms) minus allowable clock skew (${skew} ms) was on or after the Expiration Time value (${seconds(exp)} seconds)`);
    if (iat !== undefined && exp <= iat) refuse(`The Expiration Time time (${seconds(exp)} seconds) was not after the Issued At time (${seconds(iat)} seconds)`);
    for (const required of requiredScope) {
      if (!scope.includes(required)) {
        throw new JwtValidationError(
          `The provided scope (${clip(javaList(scope))}) was missing a required scope (${required}).  All required scope elements: ${javaList(requiredScope)}`,
          { status: 'insufficient_scope', scope: javaList(requiredScope) },
        );
      }
    }
    return { principalName: principal, scope, lifetimeMs: Math.round(exp * 1000), startTimeMs: iat === undefined ? null : Math.round(iat * 1000) };
  }
}

// ---- configuration ----

/** The unsecured validator's JAAS options, checked as OAuthBearerUnsecuredValidatorCallbackHandler reads them. */
function unsecuredSettingsFromJaas(options: ReadonlyMap<string, string>): UnsecuredJwtSettings {
  const option = (name: string): string | null => {
    const value = options.get(name);
    return value === undefined || value.trim() === '' ? null : value.trim();
  };
  const requiredScope: string[] = [];
  for (const item of (option('unsecuredValidatorRequiredScope') ?? '').split(' ')) {
    if (item === '') continue;
    if (!SCOPE_ITEM.test(item)) throw new ConfigError(`unsecuredValidatorRequiredScope: Invalid scope value: ${item}`);
    requiredScope.push(item);
  }
  const skewText = option('unsecuredValidatorAllowableClockSkewMs');
  let allowableClockSkewMs = 0;
  if (skewText !== null) {
    allowableClockSkewMs = /^[+-]?[0-9]{1,10}$/.test(skewText) ? Number(skewText) : NaN;
    if (!Number.isInteger(allowableClockSkewMs) || allowableClockSkewMs > 2_147_483_647 || allowableClockSkewMs < -2_147_483_648) {
      throw new ConfigError(`unsecuredValidatorAllowableClockSkewMs: For input string: "${skewText}"`);
    }
    if (allowableClockSkewMs < 0) throw new ConfigError(`Allowable clock skew millis must not be negative: ${skewText}`);
  }
  return {
    principalClaimName: option('unsecuredValidatorPrincipalClaimName') ?? 'sub',
    scopeClaimName: option('unsecuredValidatorScopeClaimName') ?? 'scope',
    requiredScope,
    allowableClockSkewMs,
  };
}

/** A Kafka LONG/INT config: its default when unset; ConfigError when it is not an integer in [min, max]. */
function integerConfig(read: (name: string) => string | null, name: string, defaultValue: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const text = read(name)?.trim();
  if (text === undefined || text === '') return defaultValue;
  const value = /^[+-]?[0-9]{1,16}$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value)) throw new ConfigError(`Invalid value ${text} for configuration ${name}: Not a number of type ${max <= 2_147_483_647 ? 'INT' : 'LONG'}`);
  if (value < min || value > max) throw new ConfigError(`The OAuth configuration option ${name} value must be at least ${min}${max < Number.MAX_SAFE_INTEGER ? ` and at most ${max}` : ''}`);
  return value;
}

/** ConfigurationUtils.validateString: trimmed; null when unset or blank. */
function stringConfig(read: (name: string) => string | null, name: string): string | null {
  const text = read(name)?.trim();
  return text ? text : null;
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return isIP(host) === 6 && (host === '::1' || host === '0:0:0:0:0:0:0:1');
}

function securedFromConfig(read: (name: string) => string | null, jaasOptions: ReadonlyMap<string, string>, options: JwtValidatorOptions): JwtValidator {
  const settings: SecuredJwtSettings = {
    clockSkewSeconds: integerConfig(read, CLOCK_SKEW_SECONDS, 30, 0, 2_147_483_647),
    expectedAudiences: (read(EXPECTED_AUDIENCE) ?? '').split(',').map((a) => a.trim()).filter((a) => a !== ''),
    expectedIssuer: stringConfig(read, EXPECTED_ISSUER),
    // Defaults apply when unset; a blank value is refused (validateString on a config that has a default).
    subClaimName: read(SUB_CLAIM_NAME) === null ? 'sub' : requiredClaimName(read, SUB_CLAIM_NAME),
    scopeClaimName: read(SCOPE_CLAIM_NAME) === null ? 'scope' : requiredClaimName(read, SCOPE_CLAIM_NAME),
  };
  const text = stringConfig(read, JWKS_ENDPOINT_URL);
  if (text === null) throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} value must be non-null`);
  let url: URL;
  try {
    url = new URL(text);
  } catch (err) {
    throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a URL (${text}) that is malformed: ${(err as Error).message}`);
  }
  const protocol = url.protocol.slice(0, -1).toLowerCase();
  let keys: JwksSource;
  if (protocol === 'file') {
    keys = new JwksFile(jwksFilePath(url, text), options.log);
  } else if (protocol === 'https' || protocol === 'http') {
    if (protocol === 'http' && !isLoopback(url.hostname)) {
      throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a URL (${text}) with http, which Ledgerline accepts only for a loopback host (for tests): use https`);
    }
    const refreshMs = integerConfig(read, JWKS_ENDPOINT_REFRESH_MS, 3_600_000, 1);
    const retryBackoffMs = integerConfig(read, JWKS_ENDPOINT_RETRY_BACKOFF_MS, 100, 0);
    const retryBackoffMaxMs = integerConfig(read, JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS, 10_000, 0);
    if (retryBackoffMaxMs < retryBackoffMs) {
      throw new ConfigError(`${JWKS_ENDPOINT_RETRY_BACKOFF_MAX_MS} value (${retryBackoffMaxMs}) is less than ${JWKS_ENDPOINT_RETRY_BACKOFF_MS} value (${retryBackoffMs})`);
    }
    // The JWKS source keeps the wall clock: its retry budget is real time, whatever clock the tokens are checked by.
    keys = new RefreshingHttpJwks(url, { refreshMs, retryBackoffMs, retryBackoffMaxMs, ca: jwksTrust(jaasOptions), log: options.log });
  } else {
    throw new ConfigError(
      `The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a URL (${text}) that contains an invalid protocol (${protocol}); only "http", "https", and "file" protocol are supported`,
    );
  }
  return JwtValidator.secured(keys, settings, options);
}

function requiredClaimName(read: (name: string) => string | null, name: string): string {
  const value = stringConfig(read, name);
  if (value === null) throw new ConfigError(`The OAuth configuration option ${name} value must not contain only whitespace`);
  return value;
}

/** ConfigurationUtils.validateFile: a file that exists, can be read and is not a directory. */
function jwksFilePath(url: URL, text: string): string {
  let path: string;
  try {
    path = fileURLToPath(url);
  } catch (err) {
    throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a URL (${text}) that is malformed: ${(err as Error).message}`);
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(path).isDirectory();
  } catch {
    throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a file (${path}) that doesn't exist`);
  }
  if (isDirectory) throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} references a directory (${path}), not a file`);
  try {
    accessSync(path, fsConstants.R_OK);
  } catch {
    throw new ConfigError(`The OAuth configuration option ${JWKS_ENDPOINT_URL} contains a file (${path}) that doesn't have read permission`);
  }
  return path;
}

/** The CA certificates the JAAS options name for the JWKS endpoint (PEM), or undefined for Node's roots. */
function jwksTrust(jaasOptions: ReadonlyMap<string, string>): string | undefined {
  const location = jaasOptions.get('ssl.truststore.location')?.trim() || null;
  const inline = jaasOptions.get('ssl.truststore.certificates')?.trim() || null;
  if (location === null && inline === null) return undefined;
  const type = jaasOptions.get('ssl.truststore.type')?.trim().toUpperCase() || 'JKS';
  if (type !== 'PEM') throw new ConfigError(`The OAuth JAAS option ssl.truststore.type is ${type}: only PEM trust stores can be read (convert with keytool/openssl)`);
  if (location !== null && inline !== null) throw new ConfigError('The OAuth JAAS options ssl.truststore.location and ssl.truststore.certificates cannot both be set');
  if (inline !== null) return inline;
  try {
    return readFileSync(location!, 'utf8');
  } catch (err) {
    throw new ConfigError(`The OAuth JAAS option ssl.truststore.location names ${location}, which cannot be read: ${(err as Error).message}`);
  }
}
