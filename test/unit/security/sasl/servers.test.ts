import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SaslMechanisms } from '../../../../src/security/sasl/servers.js';
import { scramCredential, type ScramCredential, type ScramMechanismName } from '../../../../src/security/sasl/scram.js';

const JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";';

function mechanisms(values: Record<string, string>, scram: Record<string, ScramCredential> = {}): SaslMechanisms {
  const map = new Map<string, string | null>(Object.entries(values));
  const get = (name: string) => map.get(`listener.name.sasl_ssl.${name}`) ?? map.get(name) ?? null;
  return new SaslMechanisms('SASL_SSL', get, map, { credential: async (user: string, m: ScramMechanismName) => scram[`${user}/${m}`] });
}

const plain = (user: string, password: string) => Buffer.from(`\u0000${user}\u0000${password}`);

describe('SaslMechanisms', () => {
  it('refuses mechanisms Ledgerline does not offer, Kafka\'s default GSSAPI among them, naming the config', () => {
    expect(() => mechanisms({ 'sasl.enabled.mechanisms': 'GSSAPI' })).toThrow(/names GSSAPI, which Ledgerline does not offer.*listener\.name\.sasl_ssl\.sasl\.enabled\.mechanisms/);
    expect(() => mechanisms({ 'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-1' })).toThrow(/names SCRAM-SHA-1/);
    expect(() => mechanisms({ 'sasl.enabled.mechanisms': ' ' })).toThrow(/no SASL mechanisms are enabled/);
  });

  it('refuses a malformed JAAS config for PLAIN, naming it', () => {
    expect(() => mechanisms({ 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_ssl.plain.sasl.jaas.config': 'PlainLoginModule required user_a=' })).toThrow(/listener\.name\.sasl_ssl\.plain\.sasl\.jaas\.config/);
  });

  it('checks PLAIN against the JAAS users first, then against the metadata store\'s SCRAM credentials', async () => {
    const salt = randomBytes(16);
    const m = mechanisms(
      { 'sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-512', 'listener.name.sasl_ssl.plain.sasl.jaas.config': JAAS },
      { 'carol/SCRAM-SHA-256': scramCredential('SCRAM-SHA-256', 'carol-secret', salt, 4096), 'alice/SCRAM-SHA-512': scramCredential('SCRAM-SHA-512', 'other', salt, 4096) },
    );
    expect(m.mechanisms).toEqual(['PLAIN', 'SCRAM-SHA-512']);
    const ok = async (user: string, password: string) => {
      const s = m.newServer('PLAIN');
      try {
        await s.evaluate(plain(user, password));
        return s.complete && s.authorizationId === user;
      } catch {
        return false;
      }
    };
    expect(await ok('alice', 'alice-secret')).toBe(true);
    // A JAAS user is not also checked against the store.
    expect(await ok('alice', 'other')).toBe(false);
    expect(await ok('carol', 'carol-secret')).toBe(true);
    expect(await ok('carol', 'wrong')).toBe(false);
    expect(await ok('nobody', 'x')).toBe(false);
  });

  it('offers OAUTHBEARER with Kafka\'s unsecured validator by default, and refuses a JWKS without the secured one', () => {
    const m = mechanisms({ 'sasl.enabled.mechanisms': 'OAUTHBEARER' });
    expect(m.newServer('OAUTHBEARER').mechanism).toBe('OAUTHBEARER');
    expect(() => mechanisms({ 'sasl.enabled.mechanisms': 'OAUTHBEARER', 'sasl.oauthbearer.jwks.endpoint.url': 'file:///nowhere/jwks.json' })).toThrow(/jwks/i);
  });

  it('makes a server only for an enabled mechanism', () => {
    const m = mechanisms({ 'sasl.enabled.mechanisms': 'SCRAM-SHA-512' });
    expect(m.newServer('SCRAM-SHA-512').mechanism).toBe('SCRAM-SHA-512');
    expect(() => m.newServer('SCRAM-SHA-256')).toThrow(/not enabled/);
    expect(() => m.newServer('PLAIN')).toThrow(/not enabled/);
  });
});
