/**
 * The storage engine under the embedded metadata store. LocalMetadataStore (local-store.ts) implements every
 * rule of the data model (revisions, versions, txn, leases, watches) once, over this narrow synchronous
 * interface; an engine only stores rows and makes a batch of them atomic and durable. Two engines exist:
 * SQLite on disk (sqlite-backend.ts, the default) and memory (memory-backend.ts, for tests of upper layers).
 */

/** A key's current state as stored. `lease` 0 means no lease. */
export interface StoredKv {
  readonly key: string;
  readonly value: Buffer;
  readonly createRevision: number;
  readonly modRevision: number;
  readonly version: number;
  readonly lease: number;
}

/**
 * One change in the watch history. `seq` orders the changes of one revision (a txn). For a put, `kv` is the
 * new state; for a delete, `kv` is the tombstone (empty value, create revision, version and lease 0).
 * `prev` is the key's state before the change, null if it did not exist.
 */
export interface StoredEvent {
  readonly revision: number;
  readonly seq: number;
  readonly type: 'put' | 'delete';
  readonly kv: StoredKv;
  readonly prev: StoredKv | null;
}

/** Which events `readEvents` returns: those of one key, or of the keys under a (non-empty) prefix. */
export type EventTarget = { readonly key: string } | { readonly prefix: string };

export interface StoredLease {
  readonly id: number;
  readonly ttl: number;
}

export interface PersistedState {
  readonly revision: number;
  readonly compactRevision: number;
  readonly nextLeaseId: number;
  readonly leases: StoredLease[];
}

export type MetaName = 'revision' | 'compactRevision' | 'nextLeaseId';

export interface StorageBackend {
  /** For messages: the file path or "memory". */
  readonly location: string;

  /** State to start from; a new store starts at revision 1, compact revision 0, lease id 1. */
  load(): PersistedState;

  /**
   * Run `fn`; everything it writes becomes durable together when it returns, or not at all if it throws
   * (the error is rethrown). Reads inside `fn` see its earlier writes. Calls nest, as SQLite savepoints:
   * an inner call that throws undoes only its own writes, and the outermost call alone makes them durable
   * (the store's group commit: many changes, one COMMIT).
   */
  atomically<T>(fn: () => T): T;

  getKv(key: string): StoredKv | undefined;
  /** Keys under `prefix` (after `startAfter`, if given), ascending by UTF-8 bytes, at most `limit`. */
  rangeKvs(prefix: string, startAfter: string | undefined, limit: number | undefined): StoredKv[];
  /** Keys attached to the lease, ascending. */
  keysWithLease(lease: number): string[];
  putKv(kv: StoredKv): void;
  deleteKv(key: string): void;

  appendEvents(events: readonly StoredEvent[]): void;
  /**
   * The events with `revision >= fromRevision`, ascending by (revision, seq): every one, or only those of one
   * key (`{ key }`) or of the keys under a prefix (`{ prefix }`). A watch replays its history with its own
   * target, so its cost follows that key's changes, not every change of the store since `fromRevision`.
   */
  readEvents(fromRevision: number, target?: EventTarget): StoredEvent[];
  /** Forget events with `revision < beforeRevision`. */
  compactEvents(beforeRevision: number): void;

  putLease(lease: StoredLease): void;
  deleteLease(id: number): void;
  setMeta(name: MetaName, value: number): void;

  close(): void;
}
