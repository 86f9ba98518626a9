/** Key readers, versions and rotation (src/crypto/keys.ts). */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CompositeKeyReader, EnvKeyReader, envKeyName, generateKey, keyVersions, newestVersion, PemDirectoryKeyReader, rotateKey } from '../../../src/crypto/keys.js';
import { wrapDataKey } from '../../../src/crypto/wrap.js';

describe('key versions', () => {
  it('resolves a name to its newest version, the unversioned name counting as 0', () => {
    expect(newestVersion(['orders', 'orders.v2', 'orders.v10', 'other.v99'], 'orders')).toBe('orders.v10');
    expect(newestVersion(['orders'], 'orders')).toBe('orders');
    expect(newestVersion(['orders.v3'], 'orders.v3')).toBe('orders.v3');
    expect(newestVersion(['ordersx.v1'], 'orders')).toBeNull();
  });

  it('rotates to the next version of the same type and keeps the old ones', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keys-'));
    await generateKey(dir, 'ops', 'rsa', 2048);
    expect((await rotateKey(dir, 'ops', 2048)).keyId).toBe('ops.v1');
    expect((await rotateKey(dir, 'ops', 2048)).keyId).toBe('ops.v2');
    expect(await keyVersions(dir, 'ops')).toEqual({ ids: ['ops', 'ops.v1', 'ops.v2'], type: 'rsa' });
    const reader = new PemDirectoryKeyReader(dir, 0);
    expect((await reader.publicKey('ops'))!.keyId).toBe('ops.v2');
    expect((await reader.publicKey('ops.v1'))!.keyId).toBe('ops.v1');
    expect(statSync(join(dir, 'ops.v2.pem')).mode & 0o777).toBe(0o600);
    await expect(generateKey(dir, 'ops.v2', 'x25519')).rejects.toThrow('already exists');
    await expect(generateKey(dir, '../evil', 'x25519')).rejects.toThrow('a key id is');
    await expect(rotateKey(dir, 'none')).rejects.toThrow('no key none');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('key readers', () => {
  it('read the same keys from the environment as from a directory, and unwrap with them', async () => {
    const pair = generateKeyPairSync('x25519');
    const secret = randomBytes(32);
    const env = {
      [`LEDGERLINE_E2E_PUBLIC_${envKeyName('team-a.v1')}`]: pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(),
      [`LEDGERLINE_E2E_PRIVATE_${envKeyName('team-a.v1')}`]: pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
      LEDGERLINE_E2E_SECRET_PS: secret.toString('base64'),
    };
    expect(envKeyName('team-a.v1')).toBe('TEAM_A_V1');
    const reader = new CompositeKeyReader([new PemDirectoryKeyReader(mkdtempSync(join(tmpdir(), 'empty-'))), new EnvKeyReader(env)]);
    const pub = await reader.publicKey('team-a.v1');
    expect(pub!.keyId).toBe('team-a.v1');
    const id = randomBytes(16);
    const dataKey = randomBytes(32);
    const w = wrapDataKey(pub!.key, 'team-a.v1', id, dataKey);
    expect(await reader.unwrap({ keyId: 'team-a.v1', ...w }, id)).toEqual(dataKey);
    expect(await reader.unwrap({ keyId: 'someone-else', ...w }, id)).toBeNull();
    expect((await reader.secret('ps'))!.secret).toEqual(secret);
    expect(await reader.publicKey('missing')).toBeNull();
  });

  it('refuse an RSA key below 2048 bits and a key of another kind', () => {
    const small = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey;
    expect(() => wrapDataKey(small, 'x', randomBytes(16), randomBytes(32))).toThrow('at least 2048 bits');
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey;
    expect(() => wrapDataKey(ec, 'x', randomBytes(16), randomBytes(32))).toThrow('must be RSA or X25519');
  });
});
