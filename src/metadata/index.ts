/**
 * Metadata store entry points. Upper layers depend on the MetadataStore interface (types.ts) and get an
 * implementation from one of these:
 *
 *   openMetadataStore({ store, dir })  the engine `ledgerline.metadata.store` names (open-store.ts)
 *   openSqliteMetadataStore(dir)     embedded, durable, one process: the default (`<data dir>/metadata`)
 *   openMemoryMetadataStore(volume)  same semantics in memory, for tests; a volume survives close/reopen
 */

import { LocalMetadataStore, type LocalMetadataStoreOptions } from './local-store.js';
import { MemoryBackend, MemoryMetadataVolume } from './memory-backend.js';
import { SqliteBackend } from './sqlite-backend.js';

export type * from './types.js';
export * from './errors.js';
export { ManualClock, systemClock, type Clock, type ClockTimer } from './clock.js';
export { compareKeys } from './key-order.js';
export { LocalMetadataStore, type LocalMetadataStoreOptions } from './local-store.js';
export { MemoryMetadataVolume } from './memory-backend.js';
export * from './layout.js';
export { allocateIds, FIRST_ID, type IdBlock } from './id-allocator.js';
export { SQLITE_FILE_NAME } from './sqlite-backend.js';
export {
  DEFAULT_METADATA_STORE,
  METADATA_STORE_CONFIG,
  METADATA_STORE_KINDS,
  METADATA_ZOOKEEPER_CONNECT_CONFIG,
  METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG,
  metadataStoreKind,
  openMetadataStore,
  type MetadataStoreKind,
  type OpenMetadataStoreOptions,
} from './open-store.js';

/**
 * Open (creating if needed) the embedded store in `dir`, a directory of its own (one SQLite file and its
 * WAL). Only one store may have it open at a time: a second opener, in this process or another, fails with
 * LL_ERR_METADATA_LOCKED.
 */
export async function openSqliteMetadataStore(
  dir: string,
  options: LocalMetadataStoreOptions = {},
): Promise<LocalMetadataStore> {
  return LocalMetadataStore.open(SqliteBackend.open(dir), options);
}

/** Open a store in memory, on `volume` if given (to reopen what an earlier store on it committed). */
export async function openMemoryMetadataStore(
  volume: MemoryMetadataVolume = new MemoryMetadataVolume(),
  options: LocalMetadataStoreOptions = {},
): Promise<LocalMetadataStore> {
  return LocalMetadataStore.open(new MemoryBackend(volume), options);
}
