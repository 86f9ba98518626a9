/**
 * Which ledger store the broker runs on, chosen by configuration: `ledgerline.ledger.store` names the
 * implementation of the LedgerStore contract (types.ts) and `openLedgerStore()` opens it. The layers above
 * get the contract (plus the two space figures the broker's metrics report), never a concrete class, so a
 * replicated store (Apache BookKeeper bookies) or offload to object storage can be added here as a new name.
 *
 * | name     | implementation                                                                             |
 * |----------|--------------------------------------------------------------------------------------------|
 * | `local`  | default: LocalLedgerStore in `dir`, on the real file system (or `fs`, for fault injection)  |
 * | `memory` | the same store over MemoryLedgerFs: nothing touches the disk; `memoryFs` survives a reopen |
 *
 * An unknown name is refused with Kafka's ConfigException message for a ValidString validator:
 * `Invalid value <v> for configuration ledgerline.ledger.store: String must be one of: local, memory`.
 */
import { LedgerInvalidArgumentError } from './errors.js';
import type { LedgerFs } from './fs.js';
import { LocalLedgerStore, type LocalLedgerStoreOptions } from './local-store.js';
import { MemoryLedgerFs } from './memory-fs.js';
import type { LedgerStore } from './types.js';

/** The broker config naming the ledger store implementation. */
export const LEDGER_STORE_CONFIG = 'ledgerline.ledger.store';
/** Accepted values of `ledgerline.ledger.store`, in the order the refusal lists them. */
export const LEDGER_STORE_KINDS = ['local', 'memory'] as const;
export type LedgerStoreKind = (typeof LEDGER_STORE_KINDS)[number];
export const DEFAULT_LEDGER_STORE: LedgerStoreKind = 'local';

/** Longest part of a refused value echoed in the message (a config value is the operator's, but bounded). */
const ECHO_MAX = 100;

/** What the broker reads of a store besides the contract: `ledgerline_storage_reclaim{able,ed}_bytes`. */
export interface LedgerStoreSpace {
  /** Bytes on disk that hold no live entry: what space reclamation can give back. */
  readonly reclaimableBytes: number;
  readonly stats: { readonly bytesReclaimed: number };
}

/** A ledger store as the factory returns it: the contract and its space figures. */
export type ConfiguredLedgerStore = LedgerStore & LedgerStoreSpace;

export interface OpenLedgerStoreOptions extends Omit<LocalLedgerStoreOptions, 'fs'> {
  /** The value of `ledgerline.ledger.store`; default `local`. Surrounding blanks are ignored, case is not. */
  readonly store?: string | null;
  /** The store's directory (the broker's `<log.dirs>/ledgers`); for `memory`, a path inside `memoryFs`. */
  readonly dir: string;
  /** `local` only: the file system under the store (default node:fs); tests pass a FaultInjectingLedgerFs. */
  readonly fs?: LedgerFs;
  /** `memory` only: the in-memory file system to open on (default a fresh one), to reopen what a store wrote. */
  readonly memoryFs?: MemoryLedgerFs;
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
export async function openLedgerStore(options: OpenLedgerStoreOptions): Promise<ConfiguredLedgerStore> {
  const { store, dir, fs, memoryFs, ...storeOptions } = options;
  switch (ledgerStoreKind(store)) {
    case 'local':
      return LocalLedgerStore.open(dir, fs ? { ...storeOptions, fs } : storeOptions);
    case 'memory':
      return LocalLedgerStore.open(dir, { ...storeOptions, fs: memoryFs ?? new MemoryLedgerFs() });
  }
}
