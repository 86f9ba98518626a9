export {
  DEFAULT_JUTE_MAX_BUFFER,
  DEFAULT_ZOOKEEPER_MAX_REQUEST_BYTES,
  DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS,
  ZooKeeperMetadataStore,
  type ZooKeeperMetadataStoreOptions,
} from './zookeeper-store.js';
