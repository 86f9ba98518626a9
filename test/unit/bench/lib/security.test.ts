/**
 * `compare --security` (bench/lib/security.ts): the certificates and settings both brokers get, and the loopback
 * limit over TLS with them (bench/lib/limits.ts). The brokers themselves are exercised by the command, not here.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { measureLoopback } from '../../../../bench/lib/limits.js';
import { SECURE_LISTENER, prepareSecurity } from '../../../../bench/lib/security.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-security-'));
const sec = prepareSecurity(dir);

afterAll(() => {
  sec.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

describe('compare --security', () => {
  it('gives both brokers a PEM key store for 127.0.0.1 and SCRAM-SHA-512 on the SASL_SSL listener', () => {
    expect(SECURE_LISTENER).toEqual({ name: 'SASL_SSL', protocol: 'SASL_SSL' });
    expect(sec.brokerSettings).toMatchObject({
      'ssl.keystore.type': 'PEM',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config': 'org.apache.kafka.common.security.scram.ScramLoginModule required;',
    });
    // KIP-651's PEM key store: an unencrypted PKCS#8 key, then the chain up to the CA.
    const keystore = readFileSync(sec.brokerSettings['ssl.keystore.location']!, 'utf8');
    expect(keystore.match(/-----BEGIN [A-Z ]+-----/g)).toEqual(['-----BEGIN PRIVATE KEY-----', '-----BEGIN CERTIFICATE-----', '-----BEGIN CERTIFICATE-----']);
    const cert = new X509Certificate(readFileSync(sec.sink.certPath));
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(cert.verify(new X509Certificate(sec.sink.ca).publicKey)).toBe(true);
    expect(sec.client.sasl).toMatchObject({ mechanism: 'SCRAM-SHA-512', username: sec.user });
    expect(sec.client.sasl!.password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(sec.client.tls).toEqual({ ca: sec.sink.ca });
  });

  it('measures the loopback over TLS with that certificate, trusting the CA', async () => {
    const r = await measureLoopback({ connections: 2, chunkBytes: 16_384, durationMs: 300, tls: sec.sink });
    expect(r.bytes).toBeGreaterThan(0);
    expect(r.mibPerSec).toBeGreaterThan(0);
    expect(r.tls.protocol).toBe('TLSv1.3');
    expect(r.tls.cipher).toMatch(/^TLS_/);
  });
});
