/**
 * Which metadata store the broker runs on, chosen by configuration: `ledgerline.metadata.store` names the
 * engine under the MetadataStore interface (types.ts) and `openMetadataStore()` opens it. Upper layers get the
 * interface, never a concrete class, so an etcd- or ZooKeeper-backed store can be added here as a new name.
 *
 * | name     | implementation                                                                          |
 * |----------|-----------------------------------------------------------------------------------------|
 * | `sqlite` | default: LocalMetadataStore over SQLite in `dir` (one file and its WAL), durable         |
 * | `memory` | LocalMetadataStore in memory; a MemoryMetadataVolume passed as `volume` survives reopen |
 * | `zookeeper` | ZooKeeperMetadataStore (zookeeper/): shared by every broker of the cluster, on the      |
 * |          | ZooKeeper ensemble `ledgerline.metadata.zookeeper.connect` names (host:port,...[/chroot]) |
 *
 * An unknown name is refused with Kafka's ConfigException message for a ValidString validator:
 * `Invalid value <v> for configuration ledgerline.metadata.store: String must be one of: sqlite, memory, zookeeper`.
 * `zookeeper` without a connect string is refused as Kafka refused a ZooKeeper-mode broker without
 * zookeeper.connect: `Missing required configuration "ledgerline.metadata.zookeeper.connect" which has no
 * default value.`
 */
import { MetadataInvalidArgumentError } from './errors.js';
import { LocalMetadataStore, type LocalMetadataStoreOptions } from './local-store.js';
import { MemoryBackend, MemoryMetadataVolume } from './memory-backend.js';
import { SqliteBackend } from './sqlite-backend.js';
import type { MetadataStore } from './types.js';
import { DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS, ZooKeeperMetadataStore } from './zookeeper/zookeeper-store.js';

/** The broker config naming the metadata store engine. */
export const METADATA_STORE_CONFIG = 'ledgerline.metadata.store';
/** Accepted values of `ledgerline.metadata.store`, in the order the refusal lists them. */
export const METADATA_STORE_KINDS = ['sqlite', 'memory', 'zookeeper'] as const;
export type MetadataStoreKind = (typeof METADATA_STORE_KINDS)[number];
export const DEFAULT_METADATA_STORE: MetadataStoreKind = 'sqlite';
/** The ZooKeeper ensemble of the `zookeeper` store, as Kafka's zookeeper.connect: `host:port[,host:port...][/chroot]`. */
export const METADATA_ZOOKEEPER_CONNECT_CONFIG = 'ledgerline.metadata.zookeeper.connect';
/** Its session timeout, as Kafka's zookeeper.session.timeout.ms (default 18000). */
export const METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG = 'ledgerline.metadata.zookeeper.session.timeout.ms';

/** Longest part of a refused value echoed in the message (a config value is the operator's, but bounded). */
const ECHO_MAX = 100;

export interface OpenMetadataStoreOptions extends LocalMetadataStoreOptions {
  /** The value of `ledgerline.metadata.store`; default `sqlite`. Surrounding blanks are ignored, case is not. */
  readonly store?: string | null;
  /** `sqlite`: the store's own directory (the broker's `<log.dirs>/metadata`). Unused by `memory`. */
  readonly dir: string;
  /** `memory` only: the volume to open on (default a fresh one), to reopen what an earlier store committed. */
  readonly volume?: MemoryMetadataVolume;
  /** `zookeeper` only: `ledgerline.metadata.zookeeper.connect` and `.session.timeout.ms`. */
  readonly zookeeper?: { readonly connect?: string | null; readonly sessionTimeoutMs?: number };
}

/**
 * The engine `value` names (null, undefined or blank: the default). Throws LL_ERR_METADATA_INVALID_ARGUMENT
 * with Kafka's ConfigException message for anything else.
 */
export function metadataStoreKind(value: string | null | undefined): MetadataStoreKind {
  const v = (value ?? '').trim();
  if (v === '') return DEFAULT_METADATA_STORE;
  if ((METADATA_STORE_KINDS as readonly string[]).includes(v)) return v as MetadataStoreKind;
  const shown = v.length <= ECHO_MAX ? v : `${v.slice(0, ECHO_MAX)}... (${v.length} characters)`;
  throw new MetadataInvalidArgumentError(`Invalid value ${shown} for configuration ${METADATA_STORE_CONFIG}: String must be one of: ${METADATA_STORE_KINDS.join(', ')}`, {
    config: METADATA_STORE_CONFIG,
  });
}

/**
 * Opens the metadata store `options.store` names. Rejects with LL_ERR_METADATA_INVALID_ARGUMENT for an
 * unknown name, before anything is opened; a SQLite directory another store holds is LL_ERR_METADATA_LOCKED.
 */
export async function openMetadataStore(options: OpenMetadataStoreOptions): Promise<MetadataStore> {
  const { store, dir, volume, zookeeper, ...storeOptions } = options;
  switch (metadataStoreKind(store)) {
    case 'sqlite':
      return LocalMetadataStore.open(SqliteBackend.open(dir), storeOptions);
    case 'memory':
      return LocalMetadataStore.open(new MemoryBackend(volume ?? new MemoryMetadataVolume()), storeOptions);
    case 'zookeeper': {
      const connect = (zookeeper?.connect ?? '').trim();
      if (connect === '') {
        throw new MetadataInvalidArgumentError(`Missing required configuration "${METADATA_ZOOKEEPER_CONNECT_CONFIG}" which has no default value.`, {
          config: METADATA_ZOOKEEPER_CONNECT_CONFIG,
        });
      }
      const sessionTimeoutMs = zookeeper?.sessionTimeoutMs ?? DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS;
      return ZooKeeperMetadataStore.open({ ...storeOptions, connect, sessionTimeoutMs });
    }
  }
}
