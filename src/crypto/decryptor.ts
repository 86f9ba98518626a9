/**
 * The consumer side: finds the envelope, unwraps the data key with whichever recipient key the key reader
 * holds (cached, by data key id, for a bounded time and count), opens the record, and applies the failure
 * action when it cannot (Pulsar's ConsumerCryptoFailureAction):
 *
 *   FAIL     (default) decrypt() throws E2eError; the application's consumer stops on it, nothing is skipped
 *   DISCARD  the record is dropped: decrypt() answers { record: null }
 *   CONSUME  the record is delivered as stored (ciphertext), flagged { status: 'failed', error }
 *
 * A record without an envelope is plaintext and is delivered as it is, flagged 'plaintext'.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';
import { envelopeOf, E2eError, openRecord, type E2eRecord } from './record.js';
import type { Envelope } from './envelope.js';
import type { KeyReader } from './keys.js';

export type FailureAction = 'FAIL' | 'DISCARD' | 'CONSUME';

export interface DecryptorOptions {
  readonly keys: KeyReader;
  readonly onFailure?: FailureAction;
  /** How long an unwrapped data key stays in memory; default 10 minutes. */
  readonly cacheTtlMs?: number;
  /** Most unwrapped data keys kept; default 1,000. */
  readonly cacheMaxKeys?: number;
  readonly now?: () => number;
}

export type DecryptResult =
  | { readonly status: 'decrypted' | 'plaintext'; readonly record: E2eRecord }
  | { readonly status: 'failed'; readonly record: E2eRecord | null; readonly error: E2eError };

export class RecordDecryptor {
  /** Unwrapped (or unwrapping) data keys by id, oldest first, imported once for every record they open. */
  private readonly cache = new Map<string, { key: Promise<KeyObject>; expires: number }>();
  readonly onFailure: FailureAction;
  private readonly ttl: number;
  private readonly maxKeys: number;
  private readonly now: () => number;

  constructor(private readonly options: DecryptorOptions) {
    this.onFailure = options.onFailure ?? 'FAIL';
    this.ttl = options.cacheTtlMs ?? 600_000;
    this.maxKeys = Math.max(1, options.cacheMaxKeys ?? 1000);
    this.now = options.now ?? Date.now;
  }

  /** Data keys held now (for tests and metrics). */
  get cachedKeys(): number {
    return this.cache.size;
  }

  private async unwrap(env: Envelope): Promise<KeyObject> {
    let lastError: unknown = null;
    for (const w of env.wrappedKeys) {
      try {
        const k = await this.options.keys.unwrap(w, env.dataKeyId);
        if (k !== null) return createSecretKey(k);
      } catch (e) {
        lastError = e;
      }
    }
    if (lastError !== null) throw new E2eError('unwrap-failed', `the data key ${env.dataKeyId.toString('hex')} does not unwrap: ${(lastError as Error).message}`);
    throw new E2eError('no-key', `no private key for any recipient of data key ${env.dataKeyId.toString('hex')} (${env.wrappedKeys.map((w) => w.keyId).join(', ')})`);
  }

  private dataKey(env: Envelope): Promise<KeyObject> {
    const id = env.dataKeyId.toString('hex');
    const now = this.now();
    const hit = this.cache.get(id);
    if (hit !== undefined && hit.expires > now) return hit.key;
    if (hit !== undefined) this.cache.delete(id);
    if (env.wrappedKeys.length === 0) {
      return Promise.reject(new E2eError('unknown-data-key', `the record references data key ${id}, announced by an earlier record this consumer has not read (or no longer holds)`));
    }
    const key = this.unwrap(env);
    this.cache.set(id, { key, expires: now + this.ttl });
    key.catch(() => {
      if (this.cache.get(id)?.key === key) this.cache.delete(id);
    });
    for (const k of this.cache.keys()) {
      if (this.cache.size <= this.maxKeys) break;
      this.cache.delete(k);
    }
    return key;
  }

  async decrypt(topic: string, record: E2eRecord): Promise<DecryptResult> {
    try {
      const env = envelopeOf(record);
      if (env === null) return { status: 'plaintext', record };
      return { status: 'decrypted', record: openRecord(record, topic, env, await this.dataKey(env)) };
    } catch (e) {
      const error = e instanceof E2eError ? e : new E2eError('malformed', (e as Error).message);
      if (this.onFailure === 'FAIL') throw error;
      return { status: 'failed', record: this.onFailure === 'CONSUME' ? record : null, error };
    }
  }
}
