/**
 * MetadataStore: the cluster's small, strongly consistent key-value store (topics, partition ledger chains,
 * id counters, group ownership, broker leases).
 *
 * The model is etcd v3's, so that an etcd-backed store fits behind the same interface
 * (https://etcd.io/docs/v3.6/learning/data_model/, api.proto):
 *
 *   - one flat key space ordered by the keys' UTF-8 bytes (a `list` by prefix is a range scan);
 *   - a store-wide revision, a logical clock that every committed change (one put, one delete, one whole
 *     txn) raises by exactly one; a fresh store is at revision 1, so the first change has revision 2;
 *   - per key: `createRevision` (revision of the change that created it), `modRevision` (of its last change)
 *     and `version` (number of puts since it was created; deleting resets it); a missing key has all three 0;
 *   - watches that deliver put/delete events in revision order, from a past revision (history kept until
 *     compacted) or from now;
 *   - leases: a TTL granted by the store, kept alive by its holder; keys put with a lease are deleted
 *     together, in one revision, when it expires or is revoked;
 *   - txn: compares on keys' version / revisions / value / lease, then a list of puts, deletes and reads
 *     applied atomically at one revision.
 *
 * Every method returns a Promise even where the embedded store answers synchronously: an etcd client cannot.
 * Revisions are JavaScript numbers (exact up to 2^53, which a store raising its revision a million times a
 * second reaches after 285 years); lease ids are decimal strings because etcd's are arbitrary int64.
 */

/** Lease id in decimal, as etcd reports it (etcd ids are int64, often beyond 2^53). */
export type LeaseId = string;

/** A key and its value, with etcd's per-key bookkeeping. */
export interface KeyValue {
  readonly key: string;
  /** The stored bytes. The object is the caller's: the store keeps its own copy. */
  readonly value: Buffer;
  /** Revision of the change that created the key (since its last deletion). */
  readonly createRevision: number;
  /** Revision of the key's last change. Unique across the store: the safest compare-and-set token. */
  readonly modRevision: number;
  /** Number of puts since creation: 1 after the first. Reset by a delete, so it can repeat (ABA). */
  readonly version: number;
  /** The lease the key is attached to, or null. */
  readonly lease: LeaseId | null;
}

/**
 * What a conditional write expects of the key now. `0` means "the key must not exist" (etcd's
 * `mod_revision == 0` / `version == 0` idiom). Prefer `modRevision`: after a delete and re-create a key's
 * version starts again at 1, its modRevision never repeats.
 */
export type Expectation = { readonly modRevision: number } | { readonly version: number };

export interface PutOptions {
  /** Attach the key to this lease; without it the key is detached from any lease it had (etcd semantics). */
  readonly lease?: LeaseId;
  /** Return the key's previous state (null if it did not exist). */
  readonly prevKv?: boolean;
}

export interface PutResult {
  /** The revision of this change: the key's new modRevision. */
  readonly revision: number;
  /** Present when asked for with `prevKv`. */
  readonly prevKv?: KeyValue | null;
}

export type CompareAndSetResult =
  | { readonly succeeded: true; readonly revision: number; readonly prevKv?: KeyValue | null }
  /** `revision` is the store's revision when the compare was evaluated; `current` what the key holds. */
  | { readonly succeeded: false; readonly revision: number; readonly current: KeyValue | null };

export interface DeleteOptions {
  /** Delete only if the key matches; otherwise nothing changes and `succeeded` is false. */
  readonly expect?: Expectation;
  /** Return the deleted key's last state. */
  readonly prevKv?: boolean;
}

export type DeleteResult =
  | {
      readonly succeeded: true;
      /** 1 if the key existed, 0 otherwise (deleting a missing key is not a change: no new revision). */
      readonly deleted: number;
      /** The revision of the delete, or the unchanged store revision when nothing was deleted. */
      readonly revision: number;
      readonly prevKv?: KeyValue | null;
    }
  | { readonly succeeded: false; readonly deleted: 0; readonly revision: number; readonly current: KeyValue | null };

export interface DeletePrefixResult {
  readonly deleted: number;
  readonly revision: number;
}

export interface ListOptions {
  /** At most this many keys (a positive integer). `more` says whether the prefix holds further keys. */
  readonly limit?: number;
  /** Start strictly after this key (paging: pass the last key of the previous page). */
  readonly startAfter?: string;
}

export interface ListResult {
  /** Ascending by the keys' UTF-8 bytes. */
  readonly kvs: KeyValue[];
  /** The store revision the list reflects; watch from `revision + 1` to miss nothing after it. */
  readonly revision: number;
  /** True when `limit` cut the list short. */
  readonly more: boolean;
}

// ---------------------------------------------------------------------------------------------- txn

export type CompareOp = '==' | '!=' | '<' | '>';

/**
 * One compare of a txn, etcd's Compare message. On a missing key, `version`, `createRevision` and
 * `modRevision` read 0 and `lease` reads null; a `value` compare on a missing key is always false (etcd).
 * Values compare byte-wise (like Buffer.compare); leases by numeric id, null as 0.
 */
export type Compare =
  | {
      readonly key: string;
      readonly target: 'version' | 'createRevision' | 'modRevision';
      readonly op: CompareOp;
      readonly value: number;
    }
  | { readonly key: string; readonly target: 'value'; readonly op: CompareOp; readonly value: Uint8Array }
  | { readonly key: string; readonly target: 'lease'; readonly op: CompareOp; readonly value: LeaseId | null };

export type TxnOp =
  | { readonly type: 'get'; readonly key: string }
  | { readonly type: 'list'; readonly prefix: string; readonly limit?: number }
  | {
      readonly type: 'put';
      readonly key: string;
      readonly value: Uint8Array;
      readonly lease?: LeaseId;
      readonly prevKv?: boolean;
    }
  | { readonly type: 'delete'; readonly key: string; readonly prevKv?: boolean }
  | { readonly type: 'deletePrefix'; readonly prefix: string };

export type TxnOpResult =
  | { readonly type: 'get'; readonly kv: KeyValue | null }
  | { readonly type: 'list'; readonly kvs: KeyValue[]; readonly more: boolean }
  | { readonly type: 'put'; readonly prevKv?: KeyValue | null }
  | { readonly type: 'delete'; readonly deleted: number; readonly prevKv?: KeyValue | null }
  | { readonly type: 'deletePrefix'; readonly deleted: number };

/**
 * If every compare holds, apply `success`, else `failure`, atomically. Operations run in order and reads see
 * the branch's earlier writes. A branch may not write the same key twice (put+put or put+delete, etcd's
 * "duplicate key given in txn request"). All writes of a txn share one revision; a txn that changes nothing
 * does not raise the revision.
 */
export interface TxnRequest {
  readonly compare?: readonly Compare[];
  readonly success?: readonly TxnOp[];
  readonly failure?: readonly TxnOp[];
}

export interface TxnResult {
  readonly succeeded: boolean;
  /** The revision of the txn's writes, or the unchanged store revision when it wrote nothing. */
  readonly revision: number;
  /** One result per operation of the branch that ran, in order. */
  readonly results: TxnOpResult[];
}

// -------------------------------------------------------------------------------------------- watch

/** Watch one exact key, or every key under a prefix (`{ prefix: '' }` watches everything). */
export type WatchTarget = { readonly key: string } | { readonly prefix: string };

export interface WatchOptions {
  /**
   * First revision to deliver. Omitted or 0: changes committed after the watch is created. A past revision
   * replays history from there and then streams, without gap or duplicate; it fails with
   * LL_ERR_METADATA_COMPACTED if older than the store's compaction point.
   */
  readonly startRevision?: number;
  /** Attach each event's previous state of the key (null if it did not exist). */
  readonly prevKv?: boolean;
}

export interface WatchEvent {
  readonly type: 'put' | 'delete';
  /**
   * For a put, the key's new state. For a delete, a tombstone as etcd sends it: the key, an empty value,
   * `modRevision` = the revision of the delete, `createRevision` = `version` = 0, `lease` = null.
   */
  readonly kv: KeyValue;
  /** Present when the watch asked for `prevKv`. */
  readonly prevKv?: KeyValue | null;
}

export interface WatchResponse {
  /** The highest revision the events cover. */
  readonly revision: number;
  /** Events ascending by revision; every revision is delivered whole, never split over two responses. */
  readonly events: readonly WatchEvent[];
}

export interface WatchListener {
  /** Called with the events of one or more whole revisions, never before an earlier revision's. */
  onEvents(response: WatchResponse): void;
  /**
   * The watch ended without being cancelled: the store closed, history it needed was compacted, the listener
   * threw. No event follows. A watch that is cancelled ends silently.
   */
  onError?(error: Error): void;
}

export interface Watch {
  /** Store-local id, for logs. */
  readonly id: number;
  /** Stop delivery; events not yet delivered are dropped. Idempotent. */
  cancel(): Promise<void>;
}

// -------------------------------------------------------------------------------------------- lease

export interface LeaseGrant {
  readonly id: LeaseId;
  /** The TTL granted, in seconds (etcd may grant more than asked, never less). */
  readonly ttl: number;
}

export interface LeaseTimeToLive {
  readonly id: LeaseId;
  /** Seconds left before expiry, rounded up. */
  readonly ttl: number;
  readonly grantedTtl: number;
  /** Keys attached to the lease, ascending. */
  readonly keys: string[];
}

// ------------------------------------------------------------------------------------------ the store

export interface MetadataStore {
  /** The key's current state, or null. */
  get(key: string): Promise<KeyValue | null>;

  /** Keys that start with `prefix` (byte-wise; `''` is every key), ascending by UTF-8 bytes. */
  list(prefix: string, options?: ListOptions): Promise<ListResult>;

  /** Create or replace the key. */
  put(key: string, value: Uint8Array, options?: PutOptions): Promise<PutResult>;

  /**
   * Put only if the key matches `expect` now; otherwise change nothing and return what the key holds.
   * `{ modRevision: 0 }` creates a key that must not exist yet.
   */
  compareAndSet(key: string, expect: Expectation, value: Uint8Array, options?: PutOptions): Promise<CompareAndSetResult>;

  /** Delete the key, if it exists (and matches `expect`, when given). */
  delete(key: string, options?: DeleteOptions): Promise<DeleteResult>;

  /** Delete every key under `prefix`, in one revision. The empty prefix is refused: no store-wide wipe. */
  deletePrefix(prefix: string): Promise<DeletePrefixResult>;

  /** Compares, then puts/deletes/reads, atomically at one revision (etcd Txn). */
  txn(request: TxnRequest): Promise<TxnResult>;

  /**
   * Deliver put/delete events for a key or prefix, in revision order. Resolves once the watch is in place:
   * every change committed after that (and from `startRevision`, if given) will be delivered.
   */
  watch(target: WatchTarget, listener: WatchListener, options?: WatchOptions): Promise<Watch>;

  /** Grant a lease of `ttlSeconds` (a positive integer). It expires unless kept alive within its TTL. */
  grantLease(ttlSeconds: number): Promise<LeaseGrant>;

  /** Restart the lease's TTL from now. Fails with LL_ERR_METADATA_LEASE_NOT_FOUND once it has expired. */
  keepAliveLease(id: LeaseId): Promise<LeaseGrant>;

  /** Delete the lease and, in one revision, every key attached to it. Returns that revision. */
  revokeLease(id: LeaseId): Promise<{ readonly revision: number }>;

  /** The lease's remaining TTL and keys, or null if it does not exist. */
  leaseTimeToLive(id: LeaseId): Promise<LeaseTimeToLive | null>;

  /** The store's current revision. */
  revision(): Promise<number>;

  /**
   * Discard watch history before `revision`: a watch may then start at `revision` or later. The current
   * state of every key is untouched.
   */
  compact(revision: number): Promise<void>;

  /** Stop lease timers, end every watch (onError with LL_ERR_METADATA_CLOSED) and release the storage. */
  close(): Promise<void>;
}
