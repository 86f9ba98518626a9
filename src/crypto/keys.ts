/**
 * Key readers: where producers find recipients' public keys and consumers unwrap data keys. The broker
 * never uses them. A KeyReader is also the interface a KMS implements: `unwrap` gets the wrapped bytes, so
 * a private key may stay inside the KMS.
 *
 * Key ids and rotation: a recipient is named by a key id. A name without a version (`orders`) resolves to
 * its newest version (`orders.v3`), so `ledgerline keys rotate orders` moves producers to a new key pair at
 * their next data key, without a configuration change; the exact versioned id goes into every envelope, so
 * consumers keep reading records wrapped for older versions as long as they hold those private keys.
 *
 * Files of a key directory (what `ledgerline keys generate` writes):
 *   <id>.pub.pem   SPKI public key (RSA or X25519)
 *   <id>.pem       PKCS#8 private key, mode 0600
 *   <id>.secret    a pseudonym secret: 32 random bytes, base64
 * Environment (EnvKeyReader): LEDGERLINE_E2E_PUBLIC_<ID>, LEDGERLINE_E2E_PRIVATE_<ID> (PEM text) and
 * LEDGERLINE_E2E_SECRET_<ID> (base64), where <ID> is the key id upper-cased with every character outside
 * [A-Z0-9] replaced by `_`.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WrappedKey } from './envelope.js';
import { unwrapDataKey, wrapAlgorithmOf } from './wrap.js';

export interface KeyReader {
  /** The public key of a recipient, with the exact key id it resolved to; null if unknown. */
  publicKey(keyId: string): Promise<{ keyId: string; key: KeyObject } | null>;
  /** The data key `w` wraps, or null when this reader holds no private key for `w.keyId`. Throws when unwrapping fails. */
  unwrap(w: WrappedKey, dataKeyId: Buffer): Promise<Buffer | null>;
  /** A pseudonym secret, with the exact key id it resolved to; null if unknown. */
  secret(keyId: string): Promise<{ keyId: string; secret: Buffer } | null>;
}

const VERSIONED = /^(.*)\.v(\d+)$/;

/**
 * The newest version of `name` among `ids`, or null: `name.v<N>` with the largest N, the unversioned `name`
 * counting as version 0. An id that is itself versioned (`orders.v2`) resolves to itself.
 */
export function newestVersion(ids: Iterable<string>, name: string): string | null {
  let best: string | null = null;
  let bestVersion = -1;
  for (const id of ids) {
    const m = VERSIONED.exec(id);
    const version = id === name ? 0 : m && m[1] === name ? Number(m[2]) : -1;
    if (version > bestVersion) {
      best = id;
      bestVersion = version;
    }
  }
  return best;
}

/** Reads a key directory; it is re-listed at most every `refreshMs` (default 30 s) so rotations are seen. */
export class PemDirectoryKeyReader implements KeyReader {
  private listed: { at: number; files: Set<string> } | null = null;
  private readonly privateKeys = new Map<string, KeyObject>();

  constructor(
    readonly dir: string,
    private readonly refreshMs = 30_000,
  ) {}

  private async files(): Promise<Set<string>> {
    if (this.listed === null || Date.now() - this.listed.at > this.refreshMs) {
      this.listed = { at: Date.now(), files: new Set(await readdir(this.dir)) };
    }
    return this.listed.files;
  }

  private async resolve(name: string, suffix: string): Promise<string | null> {
    const files = await this.files();
    const ids = [...files].filter((f) => f.endsWith(suffix)).map((f) => f.slice(0, -suffix.length));
    return newestVersion(ids, name);
  }

  async publicKey(keyId: string): Promise<{ keyId: string; key: KeyObject } | null> {
    const id = await this.resolve(keyId, '.pub.pem');
    if (id === null) return null;
    return { keyId: id, key: createPublicKey(await readFile(join(this.dir, `${id}.pub.pem`), 'utf8')) };
  }

  async unwrap(w: WrappedKey, dataKeyId: Buffer): Promise<Buffer | null> {
    let key = this.privateKeys.get(w.keyId);
    if (key === undefined) {
      if (!(await this.files()).has(`${w.keyId}.pem`)) return null;
      key = createPrivateKey(await readFile(join(this.dir, `${w.keyId}.pem`), 'utf8'));
      this.privateKeys.set(w.keyId, key);
    }
    return unwrapDataKey(key, w.keyId, w.algorithm, dataKeyId, w.wrapped);
  }

  async secret(keyId: string): Promise<{ keyId: string; secret: Buffer } | null> {
    const id = await this.resolve(keyId, '.secret');
    if (id === null) return null;
    return { keyId: id, secret: Buffer.from((await readFile(join(this.dir, `${id}.secret`), 'utf8')).trim(), 'base64') };
  }
}

/** The environment variable name part of a key id. */
export function envKeyName(keyId: string): string {
  return keyId.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

/** Reads keys from environment variables (PEM text, base64 secrets); no versions, ids are exact. */
export class EnvKeyReader implements KeyReader {
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  async publicKey(keyId: string): Promise<{ keyId: string; key: KeyObject } | null> {
    const pem = this.env[`LEDGERLINE_E2E_PUBLIC_${envKeyName(keyId)}`];
    return pem === undefined ? null : { keyId, key: createPublicKey(pem) };
  }

  async unwrap(w: WrappedKey, dataKeyId: Buffer): Promise<Buffer | null> {
    const pem = this.env[`LEDGERLINE_E2E_PRIVATE_${envKeyName(w.keyId)}`];
    return pem === undefined ? null : unwrapDataKey(createPrivateKey(pem), w.keyId, w.algorithm, dataKeyId, w.wrapped);
  }

  async secret(keyId: string): Promise<{ keyId: string; secret: Buffer } | null> {
    const b64 = this.env[`LEDGERLINE_E2E_SECRET_${envKeyName(keyId)}`];
    return b64 === undefined ? null : { keyId, secret: Buffer.from(b64.trim(), 'base64') };
  }
}

/** Asks each reader in turn; the first that knows a key answers. */
export class CompositeKeyReader implements KeyReader {
  constructor(private readonly readers: readonly KeyReader[]) {}

  async publicKey(keyId: string): Promise<{ keyId: string; key: KeyObject } | null> {
    for (const r of this.readers) {
      const k = await r.publicKey(keyId);
      if (k !== null) return k;
    }
    return null;
  }

  async unwrap(w: WrappedKey, dataKeyId: Buffer): Promise<Buffer | null> {
    for (const r of this.readers) {
      const k = await r.unwrap(w, dataKeyId);
      if (k !== null) return k;
    }
    return null;
  }

  async secret(keyId: string): Promise<{ keyId: string; secret: Buffer } | null> {
    for (const r of this.readers) {
      const s = await r.secret(keyId);
      if (s !== null) return s;
    }
    return null;
  }
}

export type KeyType = 'rsa' | 'x25519' | 'secret';

/** Writes a new key (pair) named `keyId` into `dir`; refuses to overwrite. Returns the files written. */
export async function generateKey(dir: string, keyId: string, type: KeyType, rsaBits = 3072): Promise<string[]> {
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(keyId)) throw new RangeError(`a key id is 1 to 200 of [A-Za-z0-9._-], got ${JSON.stringify(keyId)}`);
  const write = async (name: string, data: string, mode: number): Promise<string> => {
    const path = join(dir, name);
    await writeFile(`${path}.tmp`, data, { mode, flag: 'wx' });
    await rename(`${path}.tmp`, path);
    return path;
  };
  const existing = new Set(await readdir(dir));
  for (const suffix of ['.pub.pem', '.pem', '.secret']) {
    if (existing.has(`${keyId}${suffix}`)) throw new Error(`key ${keyId} already exists in ${dir}`);
  }
  if (type === 'secret') return [await write(`${keyId}.secret`, `${randomBytes(32).toString('base64')}\n`, 0o600)];
  const pair = type === 'rsa' ? generateKeyPairSync('rsa', { modulusLength: rsaBits }) : generateKeyPairSync('x25519');
  wrapAlgorithmOf(pair.publicKey);
  const priv = await write(`${keyId}.pem`, pair.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(), 0o600);
  const pub = await write(`${keyId}.pub.pem`, pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(), 0o644);
  return [pub, priv];
}

/** What a key directory holds of `name`: its versions in order, and the type of the newest. */
export async function keyVersions(dir: string, name: string): Promise<{ ids: string[]; type: KeyType | null }> {
  const files = await readdir(dir);
  const ids = new Map<string, KeyType>();
  for (const f of files) {
    const m = /^(.*)\.(pub\.pem|secret)$/.exec(f);
    if (!m) continue;
    const id = m[1];
    const v = VERSIONED.exec(id);
    if (id !== name && !(v && v[1] === name)) continue;
    ids.set(id, m[2] === 'secret' ? 'secret' : createPublicKey(await readFile(join(dir, f), 'utf8')).asymmetricKeyType === 'rsa' ? 'rsa' : 'x25519');
  }
  const version = (id: string): number => (id === name ? 0 : Number(VERSIONED.exec(id)![2]));
  const sorted = [...ids.keys()].sort((a, b) => version(a) - version(b));
  return { ids: sorted, type: sorted.length === 0 ? null : ids.get(sorted[sorted.length - 1])! };
}

/** Adds the next version of `name` (`name.v<N+1>`), of the newest version's type; the old versions stay for consumers. */
export async function rotateKey(dir: string, name: string, rsaBits = 3072): Promise<{ keyId: string; files: string[] }> {
  const { ids, type } = await keyVersions(dir, name);
  if (type === null) throw new Error(`no key ${name} in ${dir}; generate it first`);
  const last = ids[ids.length - 1];
  const next = last === name ? 1 : Number(VERSIONED.exec(last)![2]) + 1;
  const keyId = `${name}.v${next}`;
  return { keyId, files: await generateKey(dir, keyId, type, rsaBits) };
}
