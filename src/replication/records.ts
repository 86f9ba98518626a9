/**
 * One kind of JSON record under a metadata-store prefix, followed with a watch so that a change made through any
 * broker applies on every broker sharing the store: the cluster links (`/cluster-links/<name>`) and the mirror
 * topics (`/mirror-topics/<topic>`). Each record is
 *
 *   {"formatVersion":1, ...fields}
 *
 * Writes are compare-and-set against the revision the cache holds (`update`), so two brokers changing one record
 * at once (two partitions of a mirror reporting they stopped) cannot lose either change: the loser re-reads and
 * applies its change again.
 */
import { follow, type Following } from '../metadata/follow.js';
import { segment } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';

const FORMAT_VERSION = 1;
/** Compare-and-set rounds an update makes before giving up (each one lost to a concurrent writer). */
const MAX_UPDATE_ROUNDS = 32;

interface Cached<T> {
  readonly value: T;
  readonly modRevision: number;
}

export class FollowedRecords<T extends object> {
  private readonly cache = new Map<string, Cached<T>>();
  private readonly listeners: ((name: string, value: T | undefined) => void)[] = [];
  private following: Following | null = null;

  constructor(
    private readonly store: MetadataStore,
    private readonly prefix: string,
    /** Why a decoded record is unusable, or null; an unusable record is reported and ignored. */
    private readonly invalid: (value: T) => string | null,
    private readonly onError: (err: Error) => void,
  ) {}

  /** Loads every record, then follows the store's changes (follow.ts). */
  async load(): Promise<void> {
    const nameOf = (key: string): string => decodeURIComponent(key.slice(this.prefix.length));
    this.following = await follow(
      this.store,
      { prefix: this.prefix },
      {
        reset: (kvs, revision) => {
          const names = new Set(kvs.map((kv) => nameOf(kv.key)));
          // Gone from the store, unless this broker wrote it after the read (its event is still to come).
          for (const [name, c] of [...this.cache]) if (!names.has(name) && c.modRevision <= revision) this.forget(name);
          for (const kv of kvs) this.apply(nameOf(kv.key), kv.value, kv.modRevision);
        },
        changes: (events) => {
          for (const e of events) {
            if (e.type === 'delete') this.forget(nameOf(e.kv.key));
            else this.apply(nameOf(e.kv.key), e.kv.value, e.kv.modRevision);
          }
        },
        error: (err) => this.onError(err),
      },
    );
  }

  async close(): Promise<void> {
    await this.following?.cancel();
    this.following = null;
  }

  /** Called with a record's new value (undefined: deleted), for a change made here or through another broker. */
  onChange(listener: (name: string, value: T | undefined) => void): void {
    this.listeners.push(listener);
  }

  get(name: string): T | undefined {
    return this.cache.get(name)?.value;
  }

  list(): T[] {
    return [...this.cache.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, c]) => c.value);
  }

  /** Creates the record; false when one of that name exists. */
  async create(name: string, value: T): Promise<boolean> {
    const res = await this.store.compareAndSet(this.key(name), { version: 0 }, encode(value));
    if (!res.succeeded) return false;
    this.apply(name, encode(value), res.revision);
    return true;
  }

  /** Replaces or creates the record. */
  async put(name: string, value: T): Promise<void> {
    const res = await this.store.put(this.key(name), encode(value));
    this.apply(name, encode(value), res.revision);
  }

  /**
   * Changes the record with `fn` (given the current value; it returns the new one, or a string to refuse), retried
   * on a concurrent change. Resolves with the stored value, or the refusal; undefined when there is no record.
   */
  async update(name: string, fn: (current: T) => T | string): Promise<T | string | undefined> {
    for (let round = 0; round < MAX_UPDATE_ROUNDS; round++) {
      const kv = await this.store.get(this.key(name));
      if (!kv) {
        this.forget(name);
        return undefined;
      }
      const current = this.decode(name, kv.value);
      if (current === undefined) return `the stored record ${name} cannot be read`;
      const next = fn(current);
      if (typeof next === 'string') return next;
      const res = await this.store.compareAndSet(this.key(name), { modRevision: kv.modRevision }, encode(next));
      if (res.succeeded) {
        this.apply(name, encode(next), res.revision);
        return next;
      }
    }
    throw new Error(`${this.prefix}${name} changed concurrently ${MAX_UPDATE_ROUNDS} times in a row`);
  }

  /** Deletes the record; false when there was none. */
  async delete(name: string): Promise<boolean> {
    const res = await this.store.delete(this.key(name));
    this.forget(name);
    return res.deleted > 0;
  }

  private key(name: string): string {
    return this.prefix + segment(name);
  }

  private decode(name: string, bytes: Buffer): T | undefined {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      this.onError(new Error(`${this.prefix}${name} is not JSON`, { cause: err }));
      return undefined;
    }
    const { formatVersion, ...value } = (parsed ?? {}) as { formatVersion?: number };
    if (formatVersion !== FORMAT_VERSION) {
      this.onError(new Error(`${this.prefix}${name} has format version ${String(formatVersion)}; this broker reads ${FORMAT_VERSION}`));
      return undefined;
    }
    const why = this.invalid(value as T);
    if (why !== null) {
      this.onError(new Error(`${this.prefix}${name} is not valid: ${why}`));
      return undefined;
    }
    return value as T;
  }

  private apply(name: string, bytes: Buffer, modRevision: number): void {
    const known = this.cache.get(name);
    // A watch event no newer than what this broker wrote itself is already applied.
    if (known && known.modRevision >= modRevision) return;
    const value = this.decode(name, bytes);
    if (value === undefined) return;
    this.cache.set(name, { value, modRevision });
    for (const l of this.listeners) l(name, value);
  }

  private forget(name: string): void {
    if (!this.cache.delete(name)) return;
    for (const l of this.listeners) l(name, undefined);
  }
}

function encode(value: object): Buffer {
  return Buffer.from(JSON.stringify({ formatVersion: FORMAT_VERSION, ...value }));
}
