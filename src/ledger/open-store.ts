/**
 * Which ledger store the broker runs on, chosen by configuration: `ledgerline.ledger.store` names the
 * implementation of the LedgerStore contract (types.ts) and `openLedgerStore()` opens it. The layers above
 * get the contract, never a concrete class, so a replicated store (Apache BookKeeper bookies) or offload to
 * object storage can be added here as a new name; `ledgerStoreSpace()` gives the broker's metrics the space
 * accounting of a store that keeps one.
 *
 * | name     | implementation                                                                             |
 * |----------|--------------------------------------------------------------------------------------------|
 * | `local`  | default: LocalLedgerStore in `dir`, on the real file system (or `fs`, for fault injection)  |
 * | `memory` | the same store over MemoryLedgerFs: nothing touches the disk; `memoryFs` survives a reopen |
 * | `bookkeeper` | BookKeeperLedgerStore: Apache BookKeeper bookies, metadata in ZooKeeper (bookkeeper/README.md); `config` supplies `ledgerline.bookkeeper.*` |
 *
 * An unknown name is refused with Kafka's ConfigException message for a ValidString validator:
 * `Invalid value <v> for configuration ledgerline.ledger.store: String must be one of: local, memory, bookkeeper`.
 */
import { bookKeeperStoreConfig } from './bookkeeper/config.js';
import { BookKeeperLedgerStore } from './bookkeeper/store.js';
import { LedgerInvalidArgumentError } from './errors.js';
import type { LedgerFs } from './fs.js';
import { LocalLedgerStore, type GroupCommitObserver, type LocalLedgerStoreOptions } from './local-store.js';

export type { GroupCommitObserver } from './local-store.js';
import { MemoryLedgerFs } from './memory-fs.js';
import type { LedgerStore } from './types.js';

/** The broker config naming the ledger store implementation. */
export const LEDGER_STORE_CONFIG = 'ledgerline.ledger.store';
/** Accepted values of `ledgerline.ledger.store`, in the order the refusal lists them. */
export const LEDGER_STORE_KINDS = ['local', 'memory', 'bookkeeper'] as const;
export type LedgerStoreKind = (typeof LEDGER_STORE_KINDS)[number];
export const DEFAULT_LEDGER_STORE: LedgerStoreKind = 'local';

/** Longest part of a refused value echoed in the message (a config value is the operator's, but bounded). */
const ECHO_MAX = 100;

/** A store's space accounting, as `ledgerline_storage_reclaimable_bytes` and `..._reclaimed_bytes_total` read it. */
export interface LedgerStoreSpace {
  /** Bytes on disk that hold no live entry: what space reclamation can give back. */
  readonly reclaimableBytes: number;
  /** Bytes of segment files deleted since the store opened. */
  readonly bytesReclaimed: number;
}

export interface OpenLedgerStoreOptions extends Omit<LocalLedgerStoreOptions, 'fs'> {
  /** The value of `ledgerline.ledger.store`; default `local`. Surrounding blanks are ignored, case is not. */
  readonly store?: string | null;
  /** The store's directory (the broker's `<log.dirs>/ledgers`); for `memory`, a path inside `memoryFs`. */
  readonly dir: string;
  /** `local` only: the file system under the store (default node:fs); tests pass a FaultInjectingLedgerFs. */
  readonly fs?: LedgerFs;
  /** `memory` only: the in-memory file system to open on (default a fresh one), to reopen what a store wrote. */
  readonly memoryFs?: MemoryLedgerFs;
  /** `bookkeeper` only: the broker's config values (`ledgerline.bookkeeper.*`, `default.replication.factor`, `min.insync.replicas`). */
  readonly config?: (name: string) => string | null | undefined;
  /** `bookkeeper` only: a log line for ensemble changes, fencing and bookie failures. */
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * The implementation `value` names (null, undefined or blank: the default). Throws LL_ERR_INVALID_ARGUMENT
 * with Kafka's ConfigException message for anything else.
 */
export function ledgerStoreKind(value: string | null | undefined): LedgerStoreKind {
  const v = (value ?? '').trim();
  if (v === '') return DEFAULT_LEDGER_STORE;
  if ((LEDGER_STORE_KINDS as readonly string[]).includes(v)) return v as LedgerStoreKind;
  const shown = v.length <= ECHO_MAX ? v : `${v.slice(0, ECHO_MAX)}... (${v.length} characters)`;
  throw new LedgerInvalidArgumentError(`Invalid value ${shown} for configuration ${LEDGER_STORE_CONFIG}: String must be one of: ${LEDGER_STORE_KINDS.join(', ')}`);
}

/**
 * Opens the ledger store `options.store` names (recovering whatever a crash left, as LocalLedgerStore.open
 * does). Rejects with LL_ERR_INVALID_ARGUMENT for an unknown name, before anything is opened.
 */
export async function openLedgerStore(options: OpenLedgerStoreOptions): Promise<LedgerStore> {
  const { store, dir, fs, memoryFs, config, log, ...storeOptions } = options;
  switch (ledgerStoreKind(store)) {
    case 'local':
      return LocalLedgerStore.open(dir, fs ? { ...storeOptions, fs } : storeOptions);
    case 'memory':
      return LocalLedgerStore.open(dir, { ...storeOptions, fs: memoryFs ?? new MemoryLedgerFs() });
    case 'bookkeeper':
      return BookKeeperLedgerStore.open({ ...bookKeeperStoreConfig(config ?? (() => null), storeOptions.maxEntryBytes ?? 8 * 1024 * 1024), log });
  }
}

/**
 * The space accounting of a store `openLedgerStore()` opened, read live (getters), or null for a store that
 * keeps none. Both names open a LocalLedgerStore today, which always keeps one.
 */
export function ledgerStoreSpace(store: LedgerStore): LedgerStoreSpace | null {
  if (!(store instanceof LocalLedgerStore)) return null;
  return {
    get reclaimableBytes() {
      return store.reclaimableBytes;
    },
    get bytesReclaimed() {
      return store.stats.bytesReclaimed;
    },
  };
}

/** Where a store's reads found their entries, as `ledgerline_storage_entries_read_total` reads it (all since open). */
export interface LedgerStoreReads {
  /** Entries served from the tail cache. */
  readonly tailCache: number;
  /** Entries a read took from what was read ahead of it (read-ahead.ts). */
  readonly readAhead: number;
  /** Entries read from the segment files while their reader waited (compaction's reads included). */
  readonly segmentFiles: number;
  /** Entries read ahead of their readers, taken or not. */
  readonly readAheadRead: number;
}

/** The read sources of a store `openLedgerStore()` opened, or null for one that keeps no such count (BookKeeper). */
export function ledgerStoreReads(store: LedgerStore): LedgerStoreReads | null {
  if (!(store instanceof LocalLedgerStore)) return null;
  const s = store.stats;
  return {
    get tailCache() {
      return s.cacheHits;
    },
    get readAhead() {
      return s.readAheadHits;
    },
    get segmentFiles() {
      return s.diskReads - s.readAheadEntries;
    },
    get readAheadRead() {
      return s.readAheadEntries;
    },
  };
}

/**
 * Whether a store `openLedgerStore()` opened appends with O_DIRECT (`ledgerline.storage.direct.io` asked for it
 * and the file system took it), or null for a store that writes no local files (BookKeeper).
 */
export function ledgerStoreDirectIo(store: LedgerStore): boolean | null {
  return store instanceof LocalLedgerStore ? store.stats.directIo : null;
}

/**
 * How to be told of the group commits of a store `openLedgerStore()` opened (its fdatasyncs and what each made
 * durable), or null for a store whose group commits happen elsewhere (BookKeeper: in the bookies' journals).
 */
export function ledgerStoreGroupCommits(store: LedgerStore): ((observer: GroupCommitObserver) => void) | null {
  return store instanceof LocalLedgerStore ? (observer) => store.observeGroupCommits(observer) : null;
}
