/**
 * Ledgerline brokers for the development cluster: members of one cluster (`ledgerline.cluster.membership=shared`)
 * on its ZooKeeper (the metadata store) and its bookies (the ledger store), each in its own process group with
 * its own data directory (what a broker keeps locally: nothing of the partitions' data) and log file.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, openSync, closeSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_DIR } from '../lib/paths.js';
import { alive, fileSize, logTail } from './process.js';

export interface ClusterBrokerOptions {
  readonly nodeId: number;
  /** The broker's own directory: log.dirs and broker.log. */
  readonly dir: string;
  readonly zkConnect: string;
  readonly metadataServiceUri: string;
  /** Replication factor of new topics: the ensemble and write quorum of their ledgers. */
  readonly replicationFactor: number;
  /** The ack quorum of their ledgers. */
  readonly minInsyncReplicas: number;
  /** Default: the kernel's pick, read back from the broker's "Ledgerline started" line. */
  readonly port?: number;
  readonly startTimeoutMs?: number;
  /** More broker configs, over the cluster's. */
  readonly settings?: Readonly<Record<string, string>>;
}

export interface ClusterBroker {
  readonly nodeId: number;
  readonly pid: number;
  readonly bootstrap: string;
  readonly dir: string;
  readonly logFile: string;
}

/** The broker configs of one member of the development cluster. */
export function clusterBrokerConfigs(o: ClusterBrokerOptions): Record<string, string> {
  return {
    'node.id': String(o.nodeId),
    listeners: `PLAINTEXT://127.0.0.1:${o.port ?? 0}`,
    'log.dirs': join(o.dir, 'data'),
    'ledgerline.cluster.membership': 'shared',
    'ledgerline.metadata.store': 'zookeeper',
    'ledgerline.metadata.zookeeper.connect': o.zkConnect,
    'ledgerline.ledger.store': 'bookkeeper',
    'ledgerline.bookkeeper.metadata.service.uri': o.metadataServiceUri,
    'default.replication.factor': String(o.replicationFactor),
    'min.insync.replicas': String(o.minInsyncReplicas),
    // The internal topics are created once this many brokers are live, as Kafka's are.
    'offsets.topic.replication.factor': String(o.replicationFactor),
    'transaction.state.log.replication.factor': String(o.replicationFactor),
    'transaction.state.log.min.isr': String(o.minInsyncReplicas),
    ...o.settings,
  };
}

/**
 * Starts one broker detached (it outlives the launcher; `npm run cluster -- down` stops it with SIGTERM, a
 * graceful leave) and resolves once it listens, with the address clients bootstrap from.
 */
export async function startClusterBroker(o: ClusterBrokerOptions): Promise<ClusterBroker> {
  mkdirSync(o.dir, { recursive: true });
  const logFile = join(o.dir, 'broker.log');
  const from = fileSize(logFile);
  const args = ['--import', 'tsx', join(REPO_DIR, 'src/cli.ts'), 'start'];
  for (const [k, v] of Object.entries(clusterBrokerConfigs(o))) args.push('--set', `${k}=${v}`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, args, {
    cwd: REPO_DIR,
    detached: true,
    stdio: ['ignore', fd, fd],
    env: { ...process.env, LEDGERLINE_LOG_FORMAT: 'json' },
  });
  closeSync(fd);
  child.unref();
  const pid = child.pid!;
  const deadline = Date.now() + (o.startTimeoutMs ?? 90_000);
  for (;;) {
    const started = readFileSync(logFile, 'utf8')
      .slice(from)
      .split('\n')
      .find((line) => line.includes('"msg":"Ledgerline started"'));
    if (started) {
      const listener = (JSON.parse(started) as { listeners: string[] }).listeners[0]!;
      return { nodeId: o.nodeId, pid, bootstrap: listener.replace(/^[A-Z_]+:\/\//, ''), dir: o.dir, logFile };
    }
    if (!alive(pid)) throw new Error(`broker ${o.nodeId} exited before it listened; ${logFile}:\n${logTail(logFile)}`);
    if (Date.now() > deadline) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
      throw new Error(`broker ${o.nodeId} did not listen within ${o.startTimeoutMs ?? 90_000} ms; ${logFile}:\n${logTail(logFile)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
