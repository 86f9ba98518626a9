/**
 * The ledger store contract: the storage layer that partition logs (src/log/) are built on.
 *
 * Modelled on Apache BookKeeper. A ledger is an append-only sequence of opaque entries (for a partition, one
 * Kafka record batch each) with dense entry ids 0, 1, 2, … It has a single writer: the handle returned by
 * `create()`. The writer closes it with `seal()`; anyone else can take it over with `fence()`, BookKeeper's
 * recovery-open, which makes the old writer's appends fail and seals the ledger at its last durable entry.
 * A sealed ledger is immutable; it is removed whole by `delete()`. Ledger ids are never reused.
 *
 * ```
 *   create() ──► open ──append()*──► seal() / fence() ──► sealed ──► delete() ──► gone
 *                 │                                                    ▲
 *                 └──────────────────── delete() ──────────────────────┘
 * ```
 *
 * Guarantees every implementation gives (the contract suite in test/unit/ledger/ checks them):
 * - `append()` resolves with the entry's id only once the entry is durable under the store's flush policy
 *   (the default policy fsyncs before resolving). Appends to one ledger resolve in entry-id order.
 * - An entry is visible to readers (≤ `lastAddConfirmed`) only once its append has resolved, so a reader
 *   never sees an entry that a crash could take back.
 * - Entry ids are dense: when an append fails, every append to the same ledger issued before the failure
 *   was reported fails too, and the ledger's next entry id returns to `lastAddConfirmed + 1`.
 * - A read returns each entry's bytes exactly as appended, or fails with `LL_ERR_LEDGER_CORRUPT`; it never
 *   returns bytes that do not match their checksum.
 *
 * Errors carry stable codes (see errors.ts): `LL_ERR_NO_SUCH_LEDGER`, `LL_ERR_LEDGER_SEALED`,
 * `LL_ERR_LEDGER_FENCED`, `LL_ERR_LEDGER_STORAGE` (Kafka's KAFKA_STORAGE_ERROR), `LL_ERR_LEDGER_CORRUPT`,
 * `LL_ERR_ENTRY_TOO_LARGE` (Kafka's MESSAGE_TOO_LARGE), `LL_ERR_LEDGER_STORE_CLOSED`, `LL_ERR_INVALID_ARGUMENT`.
 */

/** A ledger's id: a positive safe integer, allocated by the store in increasing order and never reused. */
export type LedgerId = number;

/** An entry's id within its ledger: 0 for the first entry, then dense. -1 means "no entry". */
export type EntryId = number;

/** `open`: a writer may still append. `sealed`: closed (by its writer or by a fence); the last entry is fixed. */
export type LedgerState = 'open' | 'sealed';

export interface LedgerMetadata {
  readonly ledgerId: LedgerId;
  readonly state: LedgerState;
  /**
   * BookKeeper's lastAddConfirmed: the highest entry id that is durable and readable, -1 for an empty
   * ledger. Entries 0..lastAddConfirmed all exist. For a sealed ledger this is its final last entry id.
   */
  readonly lastAddConfirmed: EntryId;
  /** Total bytes of entries 0..lastAddConfirmed (entry payloads only, not framing). */
  readonly length: number;
  /** Wall-clock creation time, ms since the epoch. */
  readonly createdAtMs: number;
  /** Wall-clock time the ledger was sealed, ms since the epoch; null while open. */
  readonly sealedAtMs: number | null;
}

/** One entry as read back: its id and the exact bytes that were appended. */
export interface LedgerEntry {
  readonly entryId: EntryId;
  readonly data: Buffer;
}

export interface LedgerReadOptions {
  /**
   * Stop before the entry that would take the total payload bytes over this budget. The first entry is
   * returned even when it alone exceeds it, so a reader always makes progress (Kafka's fetch.max.bytes,
   * KIP-74). Default: no limit.
   */
  readonly maxBytes?: number;
}

export interface LedgerAppendOptions {
  /**
   * The CRC-32C of `data` (protocol/crc32c.ts), when the caller already knows it: a partition log knows its
   * record batch's from the batch's own CRC, which the produce path checked against the bytes. A store that
   * checksums its entries derives the checksum from it (crc32cCombine) instead of reading the entry once more.
   * It must be the CRC of exactly these bytes: with a wrong one the entry reads back as corrupt.
   */
  readonly crc32c?: number;
}

/**
 * The single writer of an open ledger, returned by `LedgerStore.create()`. Writers do not survive a restart
 * of the store: a ledger left open by a previous run is taken over with `LedgerStore.fence()`.
 */
export interface LedgerWriter {
  readonly ledgerId: LedgerId;
  /** Highest entry id whose append has resolved; -1 if none. */
  readonly lastAddConfirmed: EntryId;
  /** Highest entry id handed to an append still in flight or resolved (BookKeeper's lastAddPushed); -1 if none. */
  readonly lastAddPushed: EntryId;
  /**
   * Appends one entry and resolves with its entry id once it is durable (see the store's flush policy).
   * The store keeps a reference to `data` rather than a copy: do not modify the buffer afterwards.
   * Rejects with LL_ERR_LEDGER_SEALED after `seal()`, LL_ERR_LEDGER_FENCED after another party's `fence()`,
   * LL_ERR_NO_SUCH_LEDGER after `delete()`, LL_ERR_ENTRY_TOO_LARGE, or LL_ERR_LEDGER_STORAGE when the
   * bytes could not be made durable (in which case the entry is not visible and its id will be reused).
   */
  append(data: Uint8Array, options?: LedgerAppendOptions): Promise<EntryId>;
  /**
   * BookKeeper's close: no more appends; waits for the appends already issued, then durably fixes the last
   * entry id. Resolves with the sealed metadata. Idempotent once sealed.
   */
  seal(): Promise<LedgerMetadata>;
}

/**
 * How a new ledger is replicated, for a store that replicates (BookKeeper's ensemble size E, write quorum Qw,
 * ack quorum Qa; a partition log passes its topic's replication.factor and min.insync.replicas). A store
 * that keeps one copy (the local store) ignores it; unset fields take the store's defaults.
 */
export interface LedgerCreateOptions {
  readonly ensembleSize?: number;
  readonly writeQuorum?: number;
  readonly ackQuorum?: number;
  /**
   * What the ledger's topic asks for, in Kafka's terms: a replicated store derives its quorums from them (for
   * BookKeeper E = Qw = replication.factor, Qa = min.insync.replicas) unless the operator fixed them. Ignored
   * where `ensembleSize`/`writeQuorum`/`ackQuorum` are given, and by the local store.
   */
  readonly replicationFactor?: number;
  readonly minInsyncReplicas?: number;
}

export interface LedgerStore {
  /** Creates a new, empty, open ledger (durably) and returns its writer. */
  create(options?: LedgerCreateOptions): Promise<LedgerWriter>;
  /**
   * BookKeeper's recovery-open (fence, then close): from the moment this is called, appends through the
   * ledger's current writer fail with LL_ERR_LEDGER_FENCED; appends already being written finish (they
   * either become durable or fail); then the ledger is sealed at its last durable entry. Resolves with the
   * sealed metadata. On an already sealed ledger it returns the metadata unchanged.
   */
  fence(ledgerId: LedgerId): Promise<LedgerMetadata>;
  /**
   * Reads entries firstEntryId..lastEntryId, clamped to lastAddConfirmed (an open ledger's later entries are
   * not readable yet; a range wholly beyond it yields []). Entries come back in id order.
   * Rejects with LL_ERR_NO_SUCH_LEDGER, LL_ERR_INVALID_ARGUMENT (negative or reversed range),
   * LL_ERR_LEDGER_CORRUPT (stored bytes fail their checksum) or LL_ERR_LEDGER_STORAGE.
   */
  read(ledgerId: LedgerId, firstEntryId: EntryId, lastEntryId: EntryId, options?: LedgerReadOptions): Promise<LedgerEntry[]>;
  /**
   * Current metadata of one ledger (its size: `length`); rejects with LL_ERR_NO_SUCH_LEDGER. Cheap: no entry
   * is read (the layers above ask it of every ledger left open in the partitions not opened, for their sizes).
   */
  getMetadata(ledgerId: LedgerId): Promise<LedgerMetadata>;
  /** Every ledger that exists (open or sealed), in ledger-id order. */
  list(): Promise<LedgerMetadata[]>;
  /**
   * Deletes a ledger (open or sealed) durably; its writer's appends fail with LL_ERR_NO_SUCH_LEDGER and its
   * space is reclaimed later (see the implementation's notes). Rejects with LL_ERR_NO_SUCH_LEDGER if absent.
   */
  delete(ledgerId: LedgerId): Promise<void>;
  /**
   * Waits for appends in flight, flushes, and releases files. Afterwards every call rejects with
   * LL_ERR_LEDGER_STORE_CLOSED. Ledgers left open stay open on disk (fence them after reopening).
   */
  close(): Promise<void>;
}

/**
 * When appended bytes are fsynced: Kafka's `flush.messages` / `flush.ms` topic configs.
 *
 * - `messages: 1` (the default) is "durable": every append is fsynced before it resolves. Appends issued
 *   while an fsync is in progress are written and fsynced together (group commit), so the cost of an fsync
 *   is shared by all of them, across all ledgers of the store.
 * - `messages: N > 1` and/or `ms: T`: appends resolve (and become readable) once written to the operating
 *   system; an fsync follows once N entries are unflushed or T ms after the first unflushed write,
 *   whichever comes first. A machine crash (not a process crash) may lose acknowledged entries written
 *   since the last fsync; recovery still never returns a torn or corrupt entry and keeps ids dense.
 */
export interface LedgerFlushPolicy {
  /** Kafka's flush.messages. Default 1 (durable). Must be a positive integer; Infinity disables the count. */
  readonly messages?: number;
  /** Kafka's flush.ms. Default Infinity. Ignored when `messages` is 1. */
  readonly ms?: number;
}
