/**
 * A development cluster on loopback: one ZooKeeper, its BookKeeper metadata (initnewcluster), and N bookies
 * started side by side. Directories under one root (a new temporary one by default): zk/, bookie-1/, ...
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initBookKeeperMetadata, metadataServiceUri, startBookie, type BookieHandle, type BookieProcess } from './bookie.js';
import { startZooKeeper, type ZooKeeperHandle, type ZooKeeperProcess } from './zookeeper.js';

export interface DevCluster {
  readonly zk: ZooKeeperProcess;
  readonly bookies: BookieProcess[];
  readonly zkConnect: string;
  /** BookKeeper's metadataServiceUri, e.g. zk+hierarchical://127.0.0.1:2181/ledgers */
  readonly metadataServiceUri: string;
  /** Starts one more bookie (bookie-<n+1>/ under the cluster's directory). */
  addBookie(): Promise<BookieProcess>;
  /**
   * Stops the bookies, then ZooKeeper; every process is gone when it resolves. A temporary directory the
   * cluster made itself (no `dir` given) is deleted with it; a given one stays, with its data and logs.
   */
  stop(): Promise<void>;
}

export interface DevClusterOptions {
  bookies: number;
  dir?: string;
  autoRecovery?: boolean;
  /** Passed to every bookie. */
  gcWaitTimeMs?: number;
  zkTimeoutMs?: number;
  extraConf?: Record<string, string>;
  /** Keep the processes running after this process exits (the `cluster up` command). */
  detached?: boolean;
}

export interface DevClusterHandle extends DevCluster {
  readonly dir: string;
  readonly zk: ZooKeeperHandle;
  readonly bookies: BookieHandle[];
}

export async function startDevCluster(opts: DevClusterOptions): Promise<DevClusterHandle> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ledgerline-cluster-'));
  mkdirSync(join(dir, 'zk'), { recursive: true });
  const zk = await startZooKeeper({ dir: join(dir, 'zk'), detached: opts.detached ?? false });
  const bookies: BookieHandle[] = [];
  let next = 0;
  const addBookie = async (): Promise<BookieHandle> => {
    const n = ++next;
    const bookieDir = join(dir, `bookie-${n}`);
    mkdirSync(bookieDir, { recursive: true });
    const b = await startBookie({
      zkConnect: zk.connectString,
      dir: bookieDir,
      autoRecovery: opts.autoRecovery ?? false,
      gcWaitTimeMs: opts.gcWaitTimeMs,
      zkTimeoutMs: opts.zkTimeoutMs,
      extraConf: opts.extraConf,
      detached: opts.detached ?? false,
    });
    // In their numbers' order, whichever of those started side by side registered first.
    bookies[n - 1] = b;
    return b;
  };
  const stop = async (): Promise<void> => {
    await Promise.all(bookies.filter((b) => b !== undefined).map((b) => b.stop()));
    await zk.stop();
    if (opts.dir === undefined) rmSync(dir, { recursive: true, force: true });
  };
  try {
    await initBookKeeperMetadata(zk.connectString);
    // Side by side: each JVM spends its start mostly waiting on class loading and ZooKeeper.
    const started = await Promise.allSettled(Array.from({ length: opts.bookies }, () => addBookie()));
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    dir,
    zk,
    bookies,
    zkConnect: zk.connectString,
    metadataServiceUri: metadataServiceUri(zk.connectString),
    addBookie,
    stop,
  };
}
