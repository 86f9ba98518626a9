/**
 * The producer side: one data key at a time, rotated by age and by record count, wrapped once per recipient
 * when it is made (Pulsar's MessageCrypto does the same per key rotation), and a fresh nonce base per
 * record. The key id of every recipient is resolved when a data key is made, so a recipient key rotated
 * with `ledgerline keys rotate` is used from the next data key on.
 *
 * Nonce budget: a record uses up to three nonces derived from one random 96-bit base, so a data key seals
 * at most 2^30 records (3 x 2^30 < 2^32 random nonces, NIST SP 800-38D's bound for random IVs);
 * `rotateAfterRecords` is capped there.
 */
import { createSecretKey, randomBytes, randomFillSync, type KeyObject } from 'node:crypto';
import { DATA_KEY_BYTES, DATA_KEY_ID_BYTES, encodeHead, NONCE_BYTES, type WrappedKey } from './envelope.js';
import type { KeyReader } from './keys.js';
import { sealRecordWith, type E2eRecord } from './record.js';
import { wrapDataKey } from './wrap.js';

/** Where the nonce base sits in a head (envelope.ts). */
const NONCE_OFFSET = 3 + DATA_KEY_ID_BYTES;

/**
 * Random nonce bases drawn from the CSPRNG in blocks: one randomFillSync per 341 records rather than a
 * randomBytes call per record, which costs as much as sealing a small value. Each base is used once.
 */
class NoncePool {
  private readonly block = Buffer.alloc(NONCE_BYTES * 341);
  private pos = this.block.length;

  next(): Buffer {
    if (this.pos === this.block.length) {
      randomFillSync(this.block);
      this.pos = 0;
    }
    const n = Buffer.from(this.block.subarray(this.pos, this.pos + NONCE_BYTES));
    this.pos += NONCE_BYTES;
    return n;
  }
}

export const MAX_RECORDS_PER_DATA_KEY = 2 ** 30;

export interface EncryptorOptions {
  readonly keys: KeyReader;
  /** Recipients' key ids (or names, resolved to their newest version). At least one. */
  readonly recipients: readonly string[];
  /** Replace record keys with HMAC-SHA256 pseudonyms under this secret's key id. */
  readonly pseudonymKeyId?: string;
  /** Header names sealed with the value. */
  readonly sealHeaders?: readonly string[];
  /** A data key's longest life; default 1 hour. */
  readonly rotateAfterMs?: number;
  /** Records a data key seals at most; default 1,000,000, at most 2^30. */
  readonly rotateAfterRecords?: number;
  /**
   * Carry the wrapped data key in every n-th record of a topic and reference it in between; default 1
   * (every record carries it, which compacted topics and consumers that start anywhere need).
   */
  readonly announceEvery?: number;
  readonly now?: () => number;
}

interface DataKey {
  readonly id: Buffer;
  /** The key, imported once for every part it seals. */
  readonly key: KeyObject;
  readonly wrapped: readonly WrappedKey[];
  readonly madeAt: number;
  sealed: number;
  /** Records since this key was last announced, per topic. */
  readonly sinceAnnounced: Map<string, number>;
  /** Heads laid out once (nonce base zero), by announce | pseudonym | sealed headers. */
  readonly heads: Map<string, Buffer>;
}

export class RecordEncryptor {
  private current: Promise<DataKey> | null = null;
  private readonly rotateAfterMs: number;
  private readonly rotateAfterRecords: number;
  private readonly announceEvery: number;
  private readonly now: () => number;
  private pseudonym: Promise<{ keyId: string; secret: Buffer }> | null = null;
  private readonly nonces = new NoncePool();

  constructor(private readonly options: EncryptorOptions) {
    if (options.recipients.length === 0) throw new RangeError('an encryptor needs at least one recipient');
    if (options.recipients.length > 255) throw new RangeError('at most 255 recipients');
    this.rotateAfterMs = options.rotateAfterMs ?? 3_600_000;
    this.rotateAfterRecords = Math.min(options.rotateAfterRecords ?? 1_000_000, MAX_RECORDS_PER_DATA_KEY);
    this.announceEvery = Math.max(1, Math.floor(options.announceEvery ?? 1));
    if (!(this.rotateAfterMs > 0) || !(this.rotateAfterRecords > 0)) throw new RangeError('rotation bounds must be positive');
    this.now = options.now ?? Date.now;
  }

  /** Forces a new data key for the next record (a rotation ahead of the bounds). */
  rotate(): void {
    this.current = null;
  }

  private async makeDataKey(): Promise<DataKey> {
    const id = randomBytes(DATA_KEY_ID_BYTES);
    const key = randomBytes(DATA_KEY_BYTES);
    const wrapped: WrappedKey[] = [];
    for (const name of this.options.recipients) {
      const pub = await this.options.keys.publicKey(name);
      if (pub === null) throw new Error(`no public key for recipient ${name}`);
      wrapped.push({ keyId: pub.keyId, ...wrapDataKey(pub.key, pub.keyId, id, key) });
    }
    return { id, key: createSecretKey(key), wrapped, madeAt: this.now(), sealed: 0, sinceAnnounced: new Map(), heads: new Map() };
  }

  /** The data key for one more record, counted against its bound as it is handed out. */
  private async dataKey(): Promise<DataKey> {
    for (;;) {
      let pending = this.current;
      if (pending === null) {
        const made = this.makeDataKey();
        this.current = pending = made;
        made.catch(() => {
          if (this.current === made) this.current = null;
        });
      }
      const k = await pending;
      if (k.sealed < this.rotateAfterRecords && this.now() - k.madeAt < this.rotateAfterMs) {
        k.sealed++;
        return k;
      }
      if (this.current === pending) this.current = null;
    }
  }

  private async pseudonymSecret(): Promise<{ keyId: string; secret: Buffer } | null> {
    const id = this.options.pseudonymKeyId;
    if (id === undefined) return null;
    this.pseudonym ??= this.options.keys.secret(id).then((s) => {
      if (s === null) throw new Error(`no pseudonym secret ${id}`);
      return s;
    });
    return this.pseudonym;
  }

  /** The sealed form of one record of `topic`. */
  async encrypt(topic: string, record: E2eRecord): Promise<E2eRecord> {
    const dk = await this.dataKey();
    const pseudonym = await this.pseudonymSecret();
    const since = dk.sinceAnnounced.get(topic);
    const announce = since === undefined || since + 1 >= this.announceEvery;
    dk.sinceAnnounced.set(topic, announce ? 0 : since + 1);
    const nonceBase = this.nonces.next();
    const wrappedKeys = announce ? dk.wrapped : [];
    const headFor = (pseudonymKeyId: string | null, sealsHeaders: boolean): Buffer => {
      const slot = `${announce ? 1 : 0}${pseudonymKeyId === null ? 0 : 1}${sealsHeaders ? 1 : 0}`;
      let template = dk.heads.get(slot);
      if (template === undefined) {
        template = encodeHead({ dataKeyId: dk.id, nonceBase: Buffer.alloc(NONCE_BYTES), wrappedKeys, pseudonymKeyId, sealsHeaders });
        dk.heads.set(slot, template);
      }
      const head = Buffer.from(template);
      nonceBase.copy(head, NONCE_OFFSET);
      return head;
    };
    return sealRecordWith(record, { topic, dataKeyId: dk.id, dataKey: dk.key, nonceBase, wrappedKeys, pseudonym, sealHeaders: this.options.sealHeaders }, headFor);
  }
}
