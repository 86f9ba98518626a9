/**
 * The development cluster: real Apache ZooKeeper 3.9 and Apache BookKeeper 4.17 bookies on 127.0.0.1, from
 * compat/bookkeeper's Maven classpath, for tests, CI and `npm run cluster` (README.md beside this file).
 *
 * A test that needs them skips itself when bookKeeperClasspath() is undefined, unless requireBookKeeper()
 * (then it fails): `npm test` stays green on a machine without Java.
 */
export { bookKeeperClasspath, requireBookKeeper } from './classpath.js';
export { startZooKeeper, type ZooKeeperProcess, type ZooKeeperHandle, type ZooKeeperOptions } from './zookeeper.js';
export {
  initBookKeeperMetadata,
  metadataServiceUri,
  startBookie,
  type BookieProcess,
  type BookieHandle,
  type BookieOptions,
} from './bookie.js';
export { startDevCluster, type DevCluster, type DevClusterHandle, type DevClusterOptions } from './dev-cluster.js';
export { bkTool, bookieShell, entryBytes, type BkEntry, type BkLedgerMetadata, type BkToolOptions } from './bk-tool.js';
export { PortInUseError } from './process.js';
