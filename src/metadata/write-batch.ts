/**
 * The writes of one store revision: kv rows and their watch events (with each key's previous state), staged
 * inside `backend.atomically` so that the rows, the events and the revision commit together.
 */

import type { StorageBackend, StoredEvent, StoredKv } from './backend.js';

const EMPTY = Buffer.alloc(0);

/** The writes of one revision, staged inside `backend.atomically`. Reads see earlier writes of the batch. */
export class WriteBatch {
  readonly events: StoredEvent[] = [];
  readonly #backend: StorageBackend;
  readonly revision: number;

  constructor(backend: StorageBackend, revision: number) {
    this.#backend = backend;
    this.revision = revision;
  }

  get(key: string): StoredKv | undefined {
    return this.#backend.getKv(key);
  }

  put(key: string, value: Uint8Array, lease: number): StoredKv | null {
    const prev = this.#backend.getKv(key) ?? null;
    const kv: StoredKv = {
      key,
      value: Buffer.from(value),
      createRevision: prev === null ? this.revision : prev.createRevision,
      modRevision: this.revision,
      version: prev === null ? 1 : prev.version + 1,
      lease,
    };
    this.#backend.putKv(kv);
    this.events.push({ revision: this.revision, seq: this.events.length, type: 'put', kv, prev });
    return prev;
  }

  delete(key: string): StoredKv | null {
    const prev = this.#backend.getKv(key);
    if (prev === undefined) return null;
    this.#backend.deleteKv(key);
    const tombstone: StoredKv = { key, value: EMPTY, createRevision: 0, modRevision: this.revision, version: 0, lease: 0 };
    this.events.push({ revision: this.revision, seq: this.events.length, type: 'delete', kv: tombstone, prev });
    return prev;
  }

  deletePrefix(prefix: string): number {
    const keys = this.#backend.rangeKvs(prefix, undefined, undefined);
    for (const kv of keys) this.delete(kv.key);
    return keys.length;
  }
}
