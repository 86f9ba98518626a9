import { constants, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/config.js';
import {
  JwksError,
  JwksFile,
  JwtValidationError,
  MAX_JWKS_BYTES,
  MAX_JWKS_KEYS,
  MAX_JWT_LENGTH,
  parseJwks,
  RefreshingHttpJwks,
  SECURED_VALIDATOR_CLASS,
  SECURED_VALIDATOR_CLASS_OLD,
  UNSECURED_VALIDATOR_CLASS,
  type JwtLogger,
  type ValidatedToken,
} from '../../../src/security/jwks.js';
import { JwtValidator, type SecuredJwtSettings } from '../../../src/security/jwt-validator.js';

/** The validators' clock: every token below is checked at this instant. */
const NOW_MS = 1_700_000_000_000;
const NOW = NOW_MS / 1000;
const now = (): number => NOW_MS;

const b64 = (value: unknown): string => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');

interface TestKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: KeyObject;
  /** The public JWK as a JWKS lists it. */
  readonly jwk: Record<string, unknown>;
}

function testKey(kid: string, alg: string, options: { modulusLength?: number; jwkAlg?: boolean } = {}): TestKey {
  const pair =
    alg.startsWith('RS') || alg.startsWith('PS')
      ? generateKeyPairSync('rsa', { modulusLength: options.modulusLength ?? 2048 })
      : alg === 'EdDSA'
        ? generateKeyPairSync('ed25519')
        : generateKeyPairSync('ec', { namedCurve: { ES256: 'P-256', ES384: 'P-384', ES512: 'P-521' }[alg]! });
  const jwk = { ...pair.publicKey.export({ format: 'jwk' }), kid, use: 'sig', ...(options.jwkAlg === false ? {} : { alg }) };
  return { kid, alg, privateKey: pair.privateKey, jwk };
}

/** `alg`'s JWS signature of `input` (RFC 7518 §3). */
function signature(alg: string, privateKey: KeyObject, input: string): Buffer {
  const data = Buffer.from(input, 'ascii');
  const hash = alg === 'EdDSA' ? null : `sha${alg.slice(2)}`;
  if (alg.startsWith('PS')) return sign(hash, data, { key: privateKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: Number(alg.slice(2)) / 8 });
  if (alg.startsWith('ES')) return sign(hash, data, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return sign(hash, data, privateKey);
}

/** A JWS compact serialization of `claims` signed with `key` (header: alg, kid, typ, then `header`). */
function jwt(key: TestKey, claims: Record<string, unknown>, header: Record<string, unknown> = {}, alg = key.alg): string {
  const input = `${b64({ alg, kid: key.kid, typ: 'JWT', ...header })}.${b64(claims)}`;
  return `${input}.${signature(alg, key.privateKey, input).toString('base64url')}`;
}

function claims(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { sub: 'alice', iss: 'https://idp.example', iat: NOW - 60, exp: NOW + 3600, scope: 'kafka.read kafka.write', ...overrides };
}

/** The JwtValidationError `validate` rejects with; its message never holds the token. */
async function refusal(validator: JwtValidator, token: string): Promise<JwtValidationError> {
  const err: unknown = await validator.validate(token).then(
    () => {
      throw new Error('the token was accepted');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(JwtValidationError);
  const { message } = err as JwtValidationError;
  if (token.length > 16) expect(message).not.toContain(token);
  const signaturePart = token.split('.')[2] ?? '';
  if (signaturePart.length > 16) expect(message).not.toContain(signaturePart);
  return err as JwtValidationError;
}

const config =
  (values: Record<string, string>) =>
  (name: string): string | null =>
    values[name] ?? null;

let dir: string;
let rs256: TestKey;
let rs256b: TestKey;
let ps256: TestKey;
let es256: TestKey;
let es384: TestKey;
let ed25519: TestKey;
let rsa1024: TestKey;
let jwksPath: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ledgerline-jwks-'));
  rs256 = testKey('rsa-1', 'RS256');
  rs256b = testKey('rsa-2', 'RS256');
  ps256 = testKey('rsa-pss', 'PS256');
  es256 = testKey('ec-256', 'ES256');
  es384 = testKey('ec-384', 'ES384');
  ed25519 = testKey('ed-1', 'EdDSA');
  rsa1024 = testKey('rsa-small', 'RS256', { modulusLength: 1024 });
  jwksPath = join(dir, 'jwks.json');
  writeFileSync(jwksPath, JSON.stringify({ keys: [rs256, ps256, es256, es384, ed25519, rsa1024].map((k) => k.jwk) }));
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

function fileValidator(settings: Partial<SecuredJwtSettings> = {}, path = jwksPath): JwtValidator {
  return JwtValidator.secured(new JwksFile(path), settings, { now });
}

describe('JwtValidator (secured) with a JWKS file', () => {
  it.each(['RS256', 'PS256', 'ES256', 'ES384', 'EdDSA'])('accepts a %s token and reads principal, scope, lifetime and start', async (alg) => {
    const key = { RS256: rs256, PS256: ps256, ES256: es256, ES384: es384, EdDSA: ed25519 }[alg]!;
    const token = await fileValidator().validate(jwt(key, claims()));
    expect(token).toEqual({ principalName: 'alice', scope: ['kafka.read', 'kafka.write'], lifetimeMs: (NOW + 3600) * 1000, startTimeMs: (NOW - 60) * 1000 });
  });

  it('accepts RS384 and RS512 with the same RSA key, and a token without kid by key type', async () => {
    const v = fileValidator();
    const rsaOnly = JwtValidator.secured(new JwksFile(writeJwks('rsa-only.json', [rs256.jwk])), {}, { now });
    await expect(rsaOnly.validate(jwt(rs256, claims(), {}, 'RS384'))).resolves.toMatchObject({ principalName: 'alice' });
    await expect(rsaOnly.validate(jwt(rs256, claims(), {}, 'RS512'))).resolves.toMatchObject({ principalName: 'alice' });
    // No kid: the first key of the algorithm's type (jose4j's VerificationJwkSelector), here the only EC P-256 key.
    const input = `${b64({ alg: 'ES256' })}.${b64(claims())}`;
    await expect(v.validate(`${input}.${signature('ES256', es256.privateKey, input).toString('base64url')}`)).resolves.toMatchObject({ principalName: 'alice' });
    // No kid and two RSA keys: narrowed by the keys' alg, so the RS256 one is used, not the first.
    const rsaInput = `${b64({ alg: 'RS256' })}.${b64(claims())}`;
    const twoRsa = JwtValidator.secured(new JwksFile(writeJwks('two-rsa.json', [ps256.jwk, rs256.jwk])), {}, { now });
    await expect(twoRsa.validate(`${rsaInput}.${signature('RS256', rs256.privateKey, rsaInput).toString('base64url')}`)).resolves.toMatchObject({ principalName: 'alice' });
  });

  it('reads the scope as an array, and the sub and scope claims under configured names', async () => {
    const v = fileValidator({ subClaimName: 'client_id', scopeClaimName: 'scp' });
    const token = await v.validate(jwt(es256, claims({ sub: undefined, client_id: '  svc-orders ', scp: ['orders', 'payments'] })));
    expect(token.principalName).toBe('svc-orders');
    expect(token.scope).toEqual(['orders', 'payments']);
    expect((await fileValidator().validate(jwt(es256, claims({ scope: undefined })))).scope).toEqual([]);
    // A scope claim of another type is no scope (Kafka reads only strings and collections).
    expect((await fileValidator().validate(jwt(es256, claims({ scope: 42 })))).scope).toEqual([]);
  });

  it('refuses scope duplicates and blank scopes with ClaimValidationUtils messages', async () => {
    const v = fileValidator();
    expect((await refusal(v, jwt(es256, claims({ scope: ['a', 'a'] })))).message).toBe('scope value must not contain duplicates - a already present');
    expect((await refusal(v, jwt(es256, claims({ scope: 'a b a' })))).message).toBe('scope value must not contain duplicates - a already present');
    expect((await refusal(v, jwt(es256, claims({ scope: ['a', ' '] })))).message).toBe('scope value must not contain only whitespace');
    expect((await refusal(v, jwt(es256, claims({ scope: '' })))).message).toBe('scope value must be non-empty');
    expect((await refusal(v, jwt(es256, claims({ scope: ['a', 3] })))).message).toBe("Could not extract the 'scope' claim from the access token");
  });

  it('refuses a missing, blank or non-string subject', async () => {
    const v = fileValidator();
    expect((await refusal(v, jwt(es256, claims({ sub: undefined })))).message).toBe('sub value must be non-null');
    expect((await refusal(v, jwt(es256, claims({ sub: '   ' })))).message).toBe('sub value must not contain only whitespace');
    expect((await refusal(v, jwt(es256, claims({ sub: 7 })))).message).toBe("Could not extract the 'sub' claim from the access token");
  });

  it('refuses an expired token, beyond the clock skew only', async () => {
    const v = fileValidator({ clockSkewSeconds: 30 });
    await expect(v.validate(jwt(es256, claims({ exp: NOW - 29 })))).resolves.toMatchObject({ lifetimeMs: (NOW - 29) * 1000 });
    const err = await refusal(v, jwt(es256, claims({ exp: NOW - 30 })));
    expect(err.message).toMatch(/^Could not validate the access token: The JWT is no longer valid - the evaluation time NumericDate\{1700000000 -> .*\} is on or after the Expiration Time \(exp=NumericDate\{1699999970 -> .*\}\) claim value \(even when providing 30 seconds of leeway to account for clock skew\)\.$/);
    expect(err.status).toBe('invalid_token');
    await refusal(fileValidator({ clockSkewSeconds: 0 }), jwt(es256, claims({ exp: NOW })));
  });

  it('refuses a token not yet valid (nbf), beyond the clock skew only', async () => {
    const v = fileValidator();
    await expect(v.validate(jwt(es256, claims({ nbf: NOW + 30 })))).resolves.toBeDefined();
    expect((await refusal(v, jwt(es256, claims({ nbf: NOW + 31 })))).message).toMatch(/The JWT is not yet valid as the evaluation time .* is before the Not Before \(nbf=NumericDate\{1700000031 /);
    // iat in the future is accepted, as jose4j's defaults do.
    await expect(v.validate(jwt(es256, claims({ iat: NOW + 600 })))).resolves.toBeDefined();
  });

  it('requires exp and iat, as numbers, with exp not before iat or nbf', async () => {
    const v = fileValidator();
    expect((await refusal(v, jwt(es256, claims({ exp: undefined })))).message).toBe('Could not validate the access token: No Expiration Time (exp) claim present.');
    expect((await refusal(v, jwt(es256, claims({ iat: undefined })))).message).toBe('Could not validate the access token: No Issued At (iat) claim present.');
    expect((await refusal(v, jwt(es256, claims({ exp: String(NOW + 60) })))).message).toContain("The value of the 'exp' claim is not the expected type");
    expect((await refusal(v, jwt(es256, claims({ iat: NOW + 7200 })))).message).toContain('claim value cannot be before the Issued At');
    expect((await refusal(v, jwt(es256, claims({ nbf: NOW + 7200 })))).message).toContain('claim value cannot be before the Not Before');
    expect((await refusal(v, jwt(es256, claims({ exp: 1e300 })))).message).toContain("'exp' claim is out of range");
  });

  it('checks the issuer when one is expected', async () => {
    const v = fileValidator({ expectedIssuer: 'https://idp.example' });
    await expect(v.validate(jwt(es256, claims()))).resolves.toBeDefined();
    expect((await refusal(v, jwt(es256, claims({ iss: 'https://evil.example' })))).message).toBe(
      "Could not validate the access token: Issuer (iss) claim value (https://evil.example) doesn't match expected value of https://idp.example",
    );
    expect((await refusal(v, jwt(es256, claims({ iss: undefined })))).message).toBe('Could not validate the access token: No Issuer (iss) claim present but was expecting https://idp.example');
    // Without an expected issuer any string issuer goes, but not another type (jose4j reads it anyway).
    await expect(fileValidator().validate(jwt(es256, claims({ iss: 'anyone' })))).resolves.toBeDefined();
    expect((await refusal(fileValidator(), jwt(es256, claims({ iss: 1 })))).message).toContain("'iss' claim is not the expected type");
  });

  it('checks the audience as jose4j does: one expected value present; none expected means no aud', async () => {
    const v = fileValidator({ expectedAudiences: ['kafka', 'kafka-prod'] });
    await expect(v.validate(jwt(es256, claims({ aud: 'kafka' })))).resolves.toBeDefined();
    await expect(v.validate(jwt(es256, claims({ aud: ['web', 'kafka-prod'] })))).resolves.toBeDefined();
    expect((await refusal(v, jwt(es256, claims({ aud: ['web', 'mobile'] })))).message).toBe(
      "Could not validate the access token: Audience (aud) claim [web, mobile] doesn't contain an acceptable identifier. Expected one of [kafka, kafka-prod] as an aud value.",
    );
    expect((await refusal(v, jwt(es256, claims()))).message).toBe('Could not validate the access token: No Audience (aud) claim present.');
    expect((await refusal(fileValidator({ expectedAudiences: ['kafka'] }), jwt(es256, claims({ aud: 'web' })))).message).toContain('Expected kafka as an aud value.');
    expect((await refusal(fileValidator(), jwt(es256, claims({ aud: 'kafka' })))).message).toBe(
      'Could not validate the access token: Audience (aud) claim [kafka] present in the JWT but no expected audience value(s) were provided to the JWT Consumer. Expected one of [] as an aud value.',
    );
    expect((await refusal(v, jwt(es256, claims({ aud: [1] })))).message).toContain("'aud' claim is not an array of strings or a single string value");
  });

  it('refuses an unknown kid, and a kid whose key is of another type than alg', async () => {
    const v = fileValidator();
    const stranger = testKey('nobody', 'ES256');
    expect((await refusal(v, jwt(stranger, claims()))).message).toBe(
      `Could not validate the access token: Unable to find a suitable verification key for JWS w/ alg ES256 and kid "nobody" among the 6 keys from ${jwksPath}`,
    );
    // ES256 header naming the RSA key: jose4j filters by key type, so no key.
    expect((await refusal(v, jwt({ ...es256, kid: 'rsa-1' }, claims()))).message).toContain('Unable to find a suitable verification key');
  });

  it('refuses a bad signature: a changed payload, another key, a truncated signature', async () => {
    const v = fileValidator();
    const good = jwt(es256, claims());
    const [h, , s] = good.split('.');
    expect((await refusal(v, `${h}.${b64(claims({ sub: 'admin' }))}.${s}`)).message).toBe('Could not validate the access token: JWT rejected due to invalid signature.');
    const impostor = testKey('ec-256', 'ES256');
    await refusal(v, jwt(impostor, claims()));
    await refusal(v, `${h}.${good.split('.')[1]}.${s.slice(0, 40)}`);
    // An RS256 signature made by the RSA key, presented as PS256: refused.
    const rs = jwt(ps256, claims(), {}, 'RS256').split('.');
    await refusal(v, `${b64({ alg: 'PS256', kid: 'rsa-pss' })}.${rs[1]}.${rs[2]}`);
  });

  it("refuses alg none, HMAC and unknown algorithms, and a 'crit' header", async () => {
    const v = fileValidator();
    const unsigned = `${b64({ alg: 'none' })}.${b64(claims())}.`;
    expect((await refusal(v, unsigned)).message).toBe('Malformed JWT provided; expected three sections (header, payload, and signature), but 2 sections provided');
    expect((await refusal(v, `${b64({ alg: 'none' })}.${b64(claims())}.AAAA`)).message).toBe("Could not validate the access token: 'none' is a blocked algorithm for this context.");
    expect((await refusal(v, `${b64({ alg: 'HS256' })}.${b64(claims())}.AAAA`)).message).toMatch(/HS256 is an unknown, unsupported or unavailable alg algorithm/);
    expect((await refusal(v, jwt(es256, claims(), { crit: ['exp'] }))).message).toContain('as critical');
  });

  it('refuses RSA keys under 2048 bits and EC keys of the wrong curve', async () => {
    const v = fileValidator();
    expect((await refusal(v, jwt(rsa1024, claims()))).message).toBe(
      'Could not validate the access token: An RSA key of size 2048 bits or larger MUST be used with the all JOSE RSA algorithms (given key was only 1024 bits).',
    );
    expect((await refusal(v, jwt({ ...es384, alg: 'ES256' }, claims()))).message).toBe('Could not validate the access token: ES256 expects a key using P-256 but was secp384r1');
  });

  it('refuses malformed tokens with SerializedJwt messages and never repeats the token', async () => {
    const v = fileValidator();
    const good = jwt(es256, claims());
    const [h, p, s] = good.split('.');
    expect((await refusal(v, '   ')).message).toBe('Empty JWT provided; expected three sections (header, payload, and signature)');
    expect((await refusal(v, `${h}.${p}`)).message).toBe('Malformed JWT provided; expected three sections (header, payload, and signature), but 2 sections provided');
    expect((await refusal(v, `${good}.x`)).message).toContain('but 4 sections provided');
    expect((await refusal(v, `${h}..${s}`)).message).toBe('Malformed JWT provided; expected at least three sections (header, payload, and signature), but payload section missing');
    expect((await refusal(v, `${h}!.${p}.${s}`)).message).toBe('Could not validate the access token: the JWS header: malformed Base64 URL encoded value');
    expect((await refusal(v, `${b64('not json')}.${p}.${s}`)).message).toMatch(/the JWS header: malformed JSON/);
    expect((await refusal(v, `${b64('[1]')}.${p}.${s}`)).message).toMatch(/the JWS header: malformed JSON: not an object/);
    expect((await refusal(v, `${b64('{"alg":"ES256","alg":"none"}')}.${p}.${s}`)).message).toContain("An entry for 'alg' already exists. Names must be unique.");
    const nested = '['.repeat(1000);
    expect((await refusal(v, `${b64(nested)}.${p}.${s}`)).message).toContain('nested too deep');
    // Signed claims that are not a JSON object, or repeat a name.
    for (const payload of ['"text"', '{"sub":"a","sub":"b","exp":1}', '{"sub":']) {
      const input = `${b64({ alg: 'ES256', kid: 'ec-256' })}.${b64(payload)}`;
      expect((await refusal(v, `${input}.${signature('ES256', es256.privateKey, input).toString('base64url')}`)).message).toMatch(/the JWT claims: malformed JSON/);
    }
  });

  it('refuses a token over MAX_JWT_LENGTH before reading it', async () => {
    const token = jwt(es256, claims({ padding: 'x'.repeat(MAX_JWT_LENGTH) }));
    expect((await refusal(fileValidator(), token)).message).toBe(`Could not validate the access token: the token has ${token.length} characters, more than the ${MAX_JWT_LENGTH} accepted`);
  });

  it('only ever refuses random text with JwtValidationError', async () => {
    const v = fileValidator();
    await v.start();
    const section = fc.oneof(fc.base64String(), fc.string(), fc.jsonValue().map((j) => b64(j)), fc.constant(b64({ alg: 'ES256', kid: 'ec-256' })));
    const token = fc.oneof(fc.string(), fc.array(section, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('.')));
    await fc.assert(
      fc.asyncProperty(token, async (t) => {
        const err = await v.validate(t).then(
          () => null,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(JwtValidationError);
      }),
      { numRuns: 400 },
    );
  });

  it('accepts or refuses signed claims of any shape with JwtValidationError only', async () => {
    const v = fileValidator({ expectedAudiences: ['kafka'], expectedIssuer: 'i' });
    const shaped = fc.record(
      { sub: fc.jsonValue(), exp: fc.oneof(fc.double(), fc.integer(), fc.constant(NOW + 60)), iat: fc.oneof(fc.double(), fc.constant(NOW)), nbf: fc.jsonValue(), aud: fc.jsonValue(), iss: fc.jsonValue(), scope: fc.jsonValue() },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(shaped, async (c) => {
        const outcome: unknown = await v.validate(jwt(es256, c as Record<string, unknown>)).then(
          (t) => t,
          (e: unknown) => e,
        );
        if (outcome instanceof Error) expect(outcome).toBeInstanceOf(JwtValidationError);
        else expect(typeof (outcome as ValidatedToken).principalName).toBe('string');
      }),
      { numRuns: 200 },
    );
  });
});

function writeJwks(name: string, keys: unknown[]): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ keys }));
  return path;
}

describe('parseJwks and JwksFile', () => {
  it('leaves out keys it cannot use, and names them', () => {
    const { keys, skipped } = parseJwks(
      JSON.stringify({
        keys: [
          rs256.jwk,
          { kty: 'oct', k: 'c2VjcmV0', kid: 'hmac' },
          { kty: 'EC', crv: 'secp256k1', x: 'AA', y: 'AA' },
          { kty: 'RSA', n: 'AQAB' },
          { kty: 'OKP', crv: 'X25519', x: 'AA' },
          'not a key',
          { ...es256.jwk, d: 'private parts are ignored' },
        ],
      }),
      'test',
    );
    expect(keys.map((k) => k.kid)).toEqual(['rsa-1', 'ec-256']);
    expect(skipped).toHaveLength(5);
    expect(skipped[0]).toBe('key 1 (kid "hmac"): symmetric (oct) keys are not used: HMAC algorithms are not offered');
  });

  it('refuses a document that is not a JWKS, too large, or with too many keys', () => {
    expect(() => parseJwks('{"keys": {}}', 'x')).toThrow(new JwksError('The JWKS from x does not include the keys member'));
    expect(() => parseJwks('nope', 'x')).toThrow(JwksError);
    expect(() => parseJwks(JSON.stringify({ keys: Array.from({ length: MAX_JWKS_KEYS + 1 }, () => ({})) }), 'x')).toThrow(/more than the 100 accepted/);
    expect(() => parseJwks(' '.repeat(MAX_JWKS_BYTES + 1), 'x')).toThrow(/larger than the 524288 bytes accepted/);
  });

  it('fails start for a file it cannot read or that is too large, and validate fails with JwksError', async () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"keys":[],"pad":"${'x'.repeat(MAX_JWKS_BYTES)}"}`);
    await expect(new JwksFile(big).start()).rejects.toThrow(/larger than the 524288 bytes accepted/);
    const v = JwtValidator.secured(new JwksFile(join(dir, 'missing.json')), {}, { now });
    await expect(v.start()).rejects.toThrow(JwksError);
    await expect(v.validate(jwt(es256, claims()))).rejects.toThrow(JwksError);
  });
});

describe('JwtValidator (unsecured)', () => {
  const unsecured = (c: Record<string, unknown>, header: Record<string, unknown> = { alg: 'none' }): string => `${b64(header)}.${b64(c)}.`;

  it('accepts an alg none token as Kafka unsecured login module writes it', async () => {
    const v = JwtValidator.unsecured({}, { now });
    expect(v.secured).toBe(false);
    const token = await v.validate(unsecured({ sub: 'alice', iat: NOW - 1.5, exp: NOW + 60, scope: ['a', ' b ', ''] }));
    expect(token).toEqual({ principalName: 'alice', scope: ['a', 'b'], lifetimeMs: (NOW + 60) * 1000, startTimeMs: NOW_MS - 1500 });
    // Kafka's unsecured validator reads the standard alphabet, with padding.
    const std = (v2: unknown): string => Buffer.from(JSON.stringify(v2)).toString('base64');
    await expect(v.validate(`${std({ alg: 'none' })}.${std({ sub: 'bob', exp: NOW + 60 })}.`)).resolves.toMatchObject({ principalName: 'bob', startTimeMs: null });
  });

  it('reads the JAAS options: principal and scope claim names, required scope, clock skew', async () => {
    const v = JwtValidator.fromConfig(
      config({}),
      new Map([
        ['unsecuredValidatorPrincipalClaimName', ' client '],
        ['unsecuredValidatorScopeClaimName', 'scp'],
        ['unsecuredValidatorRequiredScope', 'write read'],
        ['unsecuredValidatorAllowableClockSkewMs', '5000'],
      ]),
      undefined,
      { now },
    );
    expect(v.secured).toBe(false);
    await expect(v.validate(unsecured({ client: 'svc', exp: NOW - 4, scp: 'read write' }))).resolves.toMatchObject({ principalName: 'svc', scope: ['read', 'write'] });
    await refusal(v, unsecured({ client: 'svc', exp: NOW - 5, scp: 'read write' }));
    const err = await refusal(v, unsecured({ client: 'svc', exp: NOW + 60, scp: ['read'] }));
    expect(err.status).toBe('insufficient_scope');
    expect(err.scope).toBe('[write, read]');
    expect(err.message).toBe('The provided scope ([read]) was missing a required scope (write).  All required scope elements: [write, read]');
  });

  it('refuses with the messages of OAuthBearerUnsecuredJws and OAuthBearerValidationUtils', async () => {
    const v = JwtValidator.unsecured({}, { now });
    const cases: [string, string][] = [
      [`${b64({ alg: 'none' })}..`, "Malformed compact serialization contains '..'"],
      [`${b64({ alg: 'none' })}.${b64(claims())}`, 'Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values'],
      [`${b64({ alg: 'none' })}.${b64(claims())}.x.`, 'Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values'],
      [`${b64({ alg: 'none' })}.a*b.`, 'malformed Base64 URL encoded value'],
      [`${b64({ alg: 'none' })}.${b64('{')}.`, 'malformed JSON: expected a member name (at character 1)'],
      [unsecured(claims(), {}), 'JWS header must have an Algorithm value'],
      [unsecured(claims(), { alg: 'RS256' }), "Unsecured JWS must have 'none' for an algorithm"],
      [`${b64({ alg: 'none' })}.${b64(claims())}.c2ln`, 'Unsecured JWS must not contain a digital signature'],
      [unsecured(claims({ scope: 5 })), "The 'scope' claim was not of type List: Number"],
      [unsecured(claims({ exp: undefined })), 'No expiration time in JWT'],
      [unsecured(claims({ exp: 'soon' })), "The 'exp' claim was not of type Number: String"],
      [unsecured(claims({ sub: ' ' })), 'No principal name in JWT claim: sub'],
      [unsecured(claims({ sub: true })), "The 'sub' claim was not of type String: Boolean"],
      [unsecured(claims({ scope: ['a', 1] })), "The 'scope' claim was not a List of Strings"],
      [unsecured(claims({ iat: NOW + 1 })), 'The Issued At value (1700000001.000000 seconds) was after the indicated time (1700000000000 ms) plus allowable clock skew (0 ms)'],
      [unsecured(claims({ exp: NOW })), 'The indicated time (1700000000000 ms) minus allowable clock skew (0 ms) was on or after the Expiration Time value (1700000000.000000 seconds)'],
      [unsecured(claims({ iat: NOW - 10, exp: NOW - 20 })), 'The indicated time (1700000000000 ms) minus allowable clock skew (0 ms) was on or after the Expiration Time value (1699999980.000000 seconds)'],
    ];
    for (const [token, message] of cases) expect((await refusal(v, token)).message).toBe(message);
    const skewed = JwtValidator.unsecured({ allowableClockSkewMs: 60_000 }, { now });
    expect((await refusal(skewed, unsecured(claims({ iat: NOW + 30, exp: NOW + 20 })))).message).toBe('The Expiration Time time (1700000020.000000 seconds) was not after the Issued At time (1700000030.000000 seconds)');
  });

  it('only ever refuses random text with JwtValidationError', async () => {
    const v = JwtValidator.unsecured({ requiredScope: ['x'] }, { now });
    const section = fc.oneof(fc.base64String(), fc.string(), fc.jsonValue().map((j) => b64(j)), fc.constant(b64({ alg: 'none' })));
    await fc.assert(
      fc.asyncProperty(fc.array(section, { maxLength: 4 }).map((p) => p.join('.')), async (t) => {
        await expect(v.validate(t)).rejects.toBeInstanceOf(JwtValidationError);
      }),
      { numRuns: 400 },
    );
  });
});

describe('JwtValidator.fromConfig', () => {
  const secured = (values: Record<string, string>): JwtValidator =>
    JwtValidator.fromConfig(config({ 'oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR_CLASS, ...values }), new Map(), undefined, { now });

  it('is unsecured by default, as Kafka, and with the unsecured handler named, and warns of it', () => {
    const warnings: string[] = [];
    const log = { debug: () => undefined, info: () => undefined, warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)) } as unknown as JwtLogger;
    expect(JwtValidator.fromConfig(config({}), new Map(), log).secured).toBe(false);
    expect(warnings).toEqual([expect.stringContaining('accepts unsigned (alg none) tokens naming any principal')]);
    expect(JwtValidator.fromConfig(config({ 'oauthbearer.sasl.server.callback.handler.class': UNSECURED_VALIDATOR_CLASS }), new Map()).secured).toBe(false);
  });

  it('refuses a JWKS URL without the secured handler, and handlers it does not have', () => {
    expect(() => JwtValidator.fromConfig(config({ 'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(jwksPath).href }), new Map())).toThrow(/accepts unsigned tokens/);
    expect(() => JwtValidator.fromConfig(config({ 'oauthbearer.sasl.server.callback.handler.class': 'com.example.Custom' }), new Map())).toThrow(ConfigError);
  });

  it('reads the mechanism-prefixed names over the plain ones, with Kafka defaults', async () => {
    const v = secured({
      'sasl.oauthbearer.jwks.endpoint.url': 'file:///nonexistent',
      'oauthbearer.sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(jwksPath).href,
      'oauthbearer.sasl.oauthbearer.expected.issuer': ' https://idp.example ',
      'sasl.oauthbearer.expected.audience': 'kafka, other',
      'sasl.oauthbearer.sub.claim.name': 'azp',
    });
    expect(v.secured).toBe(true);
    await expect(v.validate(jwt(rs256, claims({ azp: 'app', aud: 'other' })))).resolves.toMatchObject({ principalName: 'app' });
    await refusal(v, jwt(rs256, claims({ azp: 'app', aud: 'other', exp: NOW - 30 }))); // default skew 30 s
    await expect(v.validate(jwt(rs256, claims({ azp: 'app', aud: 'other', exp: NOW - 29 })))).resolves.toBeDefined();
    const old = JwtValidator.fromConfig(
      config({ 'oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR_CLASS_OLD, 'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(jwksPath).href }),
      new Map(),
    );
    expect(old.secured).toBe(true);
  });

  it('refuses bad URLs, files and numbers with ConfigError', () => {
    const bad: [Record<string, string>, RegExp][] = [
      [{}, /jwks.endpoint.url value must be non-null/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'not a url' }, /that is malformed/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'ftp://idp.example/jwks' }, /invalid protocol \(ftp\); only "http", "https", and "file" protocol are supported/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(join(dir, 'nope.json')).href }, /that doesn't exist/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(dir).href }, /references a directory/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'http://idp.example/jwks' }, /only for a loopback host/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks', 'sasl.oauthbearer.jwks.endpoint.refresh.ms': '0' }, /refresh.ms value must be at least 1/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks', 'sasl.oauthbearer.jwks.endpoint.refresh.ms': 'hourly' }, /Not a number of type LONG/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '500', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '100' }, /is less than/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks', 'sasl.oauthbearer.clock.skew.seconds': '-1' }, /clock.skew.seconds value must be at least 0/],
      [{ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks', 'sasl.oauthbearer.sub.claim.name': '  ' }, /sub.claim.name value must not contain only whitespace/],
    ];
    for (const [values, message] of bad) expect(() => secured(values)).toThrow(message);
    if (process.getuid?.() !== 0) {
      const unreadable = join(dir, 'unreadable.json');
      writeFileSync(unreadable, '{}');
      chmodSync(unreadable, 0o000);
      expect(() => secured({ 'sasl.oauthbearer.jwks.endpoint.url': pathToFileURL(unreadable).href })).toThrow(/doesn't have read permission/);
    }
    expect(() => secured({ 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks' })).not.toThrow();
  });

  it('reads a PEM trust store for the JWKS endpoint from the JAAS options', () => {
    const url = { 'oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR_CLASS, 'sasl.oauthbearer.jwks.endpoint.url': 'https://idp.example/jwks' };
    expect(() => JwtValidator.fromConfig(config(url), new Map([['ssl.truststore.location', '/x.jks']]))).toThrow(/only PEM trust stores/);
    expect(() => JwtValidator.fromConfig(config(url), new Map([['ssl.truststore.type', 'PEM'], ['ssl.truststore.location', join(dir, 'none.pem')]]))).toThrow(/cannot be read/);
    mkdirSync(join(dir, 'pem'), { recursive: true });
    writeFileSync(join(dir, 'pem', 'ca.pem'), '-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n');
    expect(() => JwtValidator.fromConfig(config(url), new Map([['ssl.truststore.type', 'PEM'], ['ssl.truststore.location', join(dir, 'pem', 'ca.pem')]]))).not.toThrow();
  });

  it('refuses unsecured JAAS options Kafka would refuse', () => {
    expect(() => JwtValidator.fromConfig(config({}), new Map([['unsecuredValidatorRequiredScope', 'a "b"']]))).toThrow('Invalid scope value: "b"');
    expect(() => JwtValidator.fromConfig(config({}), new Map([['unsecuredValidatorAllowableClockSkewMs', 'lots']]))).toThrow(ConfigError);
    expect(() => JwtValidator.fromConfig(config({}), new Map([['unsecuredValidatorAllowableClockSkewMs', '-1']]))).toThrow('Allowable clock skew millis must not be negative: -1');
  });
});

/** A JWKS endpoint on 127.0.0.1 whose keys and status a test changes. */
async function jwksServer(keys: unknown[]): Promise<{ url: string; requests: () => number; serve: (keys: unknown[]) => void; fail: (status: number) => void; body: (text: string) => void; close: () => Promise<void> }> {
  let body = JSON.stringify({ keys });
  let status = 200;
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests++;
    res.statusCode = status;
    res.setHeader('content-type', 'application/json');
    res.end(status === 200 ? body : 'error');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    requests: () => requests,
    serve: (k) => {
      body = JSON.stringify({ keys: k });
      status = 200;
    },
    fail: (s) => {
      status = s;
    },
    body: (text) => {
      body = text;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function eventually(check: () => Promise<boolean> | boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('JwtValidator (secured) with an HTTP JWKS on 127.0.0.1', () => {
  const httpValidator = (url: string, values: Record<string, string> = {}): JwtValidator =>
    JwtValidator.fromConfig(
      config({
        'oauthbearer.sasl.server.callback.handler.class': SECURED_VALIDATOR_CLASS,
        'sasl.oauthbearer.jwks.endpoint.url': url,
        'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '5',
        'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '60',
        ...values,
      }),
      new Map(),
      undefined,
      { now },
    );

  it('picks up a rotated key soon after a token names the unknown kid', async () => {
    const server = await jwksServer([rs256.jwk]);
    const v = httpValidator(server.url);
    try {
      await v.start();
      await expect(v.validate(jwt(rs256, claims()))).resolves.toMatchObject({ principalName: 'alice' });
      server.serve([rs256b.jwk]);
      const before = server.requests();
      // Refused now (Kafka refuses the token that triggers the refresh), fetched again right away.
      expect((await refusal(v, jwt(rs256b, claims()))).message).toContain('kid "rsa-2"');
      await eventually(() => server.requests() > before);
      await eventually(async () => (await v.validate(jwt(rs256b, claims())).then(() => true, () => false)));
      // The same unknown kid again within a minute does not fetch again.
      const after = server.requests();
      await refusal(v, jwt(testKey('rsa-3', 'ES256'), claims()));
      await eventually(() => server.requests() === after + 1);
      await refusal(v, jwt(testKey('rsa-3', 'ES256'), claims()));
      await new Promise((r) => setTimeout(r, 100));
      expect(server.requests()).toBe(after + 1);
      // The rotated-out key is gone.
      await refusal(v, jwt(rs256, claims()));
    } finally {
      v.close();
      await server.close();
    }
  });

  it('refreshes every refresh.ms, keeps its keys when a refresh fails, and stops when closed', async () => {
    const server = await jwksServer([es256.jwk]);
    const v = httpValidator(server.url, { 'sasl.oauthbearer.jwks.endpoint.refresh.ms': '40' });
    try {
      await expect(v.validate(jwt(es256, claims()))).resolves.toBeDefined(); // starts on first use
      server.fail(503);
      const failing = server.requests();
      await eventually(() => server.requests() >= failing + 3);
      await expect(v.validate(jwt(es256, claims()))).resolves.toBeDefined();
      server.serve([ed25519.jwk]);
      await eventually(async () => (await v.validate(jwt(ed25519, claims())).then(() => true, () => false)));
      await refusal(v, jwt(es256, claims()));
    } finally {
      v.close();
    }
    const closed = server.requests();
    await new Promise((r) => setTimeout(r, 150));
    expect(server.requests()).toBeLessThanOrEqual(closed + 1);
    await server.close();
  });

  it('fetches again for an unknown kid at most once a minute per kid, 16 kids remembered, long kids never', async () => {
    const server = await jwksServer([es256.jwk]);
    let clock = NOW_MS;
    const source = new RefreshingHttpJwks(server.url, { refreshMs: 3_600_000, retryBackoffMs: 0, retryBackoffMaxMs: 0, now: () => clock });
    try {
      await source.start();
      let expected = server.requests();
      const missing = async (kid: string | undefined, fetches: boolean): Promise<void> => {
        source.keyMissing(kid);
        if (fetches) expected++;
        await eventually(() => server.requests() === expected);
        await new Promise((r) => setTimeout(r, 10));
        expect(server.requests()).toBe(expected);
      };
      await missing('k0', true);
      await missing('k0', false);
      await missing(undefined, true); // a token without kid
      await missing('x'.repeat(1001), false);
      clock += 60_000;
      await missing('k0', true);
      for (let i = 1; i <= 16; i++) await missing(`k${i}`, true); // k0 is now the 17th most recent: forgotten
      await missing('k0', true);
      await missing('k16', false);
    } finally {
      source.close();
      await server.close();
    }
  });

  it('fails start after retrying when the endpoint fails, and on a body too large', async () => {
    const server = await jwksServer([]);
    try {
      server.fail(500);
      const source = new RefreshingHttpJwks(server.url, { refreshMs: 60_000, retryBackoffMs: 5, retryBackoffMaxMs: 60 });
      await expect(source.start()).rejects.toThrow(`The JWKS from ${server.url}: HTTP status 500`);
      expect(server.requests()).toBeGreaterThanOrEqual(3);
      source.close();
      server.body(`{"keys":[],"pad":"${'x'.repeat(MAX_JWKS_BYTES)}"}`);
      server.fail(200);
      const big = new RefreshingHttpJwks(server.url, { refreshMs: 60_000, retryBackoffMs: 0, retryBackoffMaxMs: 0 });
      await expect(big.start()).rejects.toThrow(/bytes, more than the 524288 accepted/);
      big.close();
      const v = httpValidator(server.url, { 'sasl.oauthbearer.jwks.endpoint.retry.backoff.ms': '0', 'sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms': '0' });
      await expect(v.validate(jwt(es256, claims()))).rejects.toBeInstanceOf(JwksError);
      v.close();
    } finally {
      await server.close();
    }
  });
});
