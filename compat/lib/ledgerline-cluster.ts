/**
 * Ledgerline as a cluster for a compatibility run (`--candidate ledgerline-cluster`, `--only ledgerline-cluster`):
 * ZooKeeper and three BookKeeper bookies from compat/bookkeeper (the development cluster, compat/cluster/) and
 * three Ledgerline brokers, members of one cluster on them (ledgerline.cluster.membership=shared), with
 * default.replication.factor 3: the ledgers of a topic created without a factor on all three bookies (the
 * internal topics too), those of a topic created with one replica, as most scenarios create theirs, on one. Each client program
 * bootstraps from one broker, the next at each program, and finds the others in Metadata; each partition and
 * coordinator key is served by the broker that owns it, so the scenarios' requests spread over the brokers as
 * they would on a Kafka cluster.
 *
 * The reference is one Kafka node, so cells that print the cluster's shape (the brokers Metadata lists,
 * replica counts) differ by design; the scenario programs' own checks (`--only`) are what this run is for.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClusterBroker, type ClusterBroker } from '../cluster/brokers.js';
import { bookKeeperClasspath } from '../cluster/classpath.js';
import { startDevCluster, type DevClusterHandle } from '../cluster/dev-cluster.js';
import { alive, groupAlive } from '../cluster/process.js';
import type { Broker, StartReport } from './brokers.js';
import { SHARED_BROKER_SETTINGS } from './brokers.js';
import { onExit, peakRssMiB } from './proc.js';

export interface LedgerlineClusterOptions {
  readonly brokers?: number;
  readonly bookies?: number;
  /**
   * The ack quorum of new topics' ledgers (min.insync.replicas). Default 1: the scenarios create most topics
   * with one replica, as on the reference's single node; the benchmark's cluster mode runs with 2.
   */
  readonly minInsyncReplicas?: number;
  /** Extra `--set key=value` settings for every broker. */
  readonly settings: Record<string, string>;
  readonly keepData: boolean;
}

export class LedgerlineCluster implements Broker {
  readonly kind = 'ledgerline' as const;
  readonly label = 'ledgerline-cluster';
  bootstrap = '';
  logFile = '';
  private dir = '';
  private dev: DevClusterHandle | null = null;
  private members: ClusterBroker[] = [];
  private nextMember = 0;

  constructor(private readonly opts: LedgerlineClusterOptions) {}

  async start(): Promise<StartReport> {
    const t0 = Date.now();
    if (bookKeeperClasspath() === undefined) return { ok: false, reason: 'compat/bookkeeper is not built (npm run compat builds it with the Maven step)', startupMs: 0 };
    const brokers = this.opts.brokers ?? 3;
    const bookies = this.opts.bookies ?? 3;
    const replicationFactor = Math.min(3, brokers, bookies);
    try {
      this.dir = await mkdtemp(join(tmpdir(), 'compat-ledgerline-cluster-'));
      const dir = this.dir;
      if (!this.opts.keepData) onExit(() => void rm(dir, { recursive: true, force: true }));
      this.dev = await startDevCluster({ bookies, dir: join(dir, 'engines') });
      // The brokers run detached (as `npm run cluster` starts them): a runner that dies takes them along.
      onExit(() => {
        for (const b of this.members) {
          try {
            process.kill(-b.pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      });
      for (let id = 1; id <= brokers; id++) {
        this.members.push(
          await startClusterBroker({
            nodeId: id,
            dir: join(dir, `broker-${id}`),
            zkConnect: this.dev.zkConnect,
            metadataServiceUri: this.dev.metadataServiceUri,
            replicationFactor,
            // The scenarios create most topics with one replica, as on the reference's single node: under a
            // broker-wide min.insync.replicas of 2 they would answer acks=all with NOT_ENOUGH_REPLICAS, as
            // Kafka's would. Topics created without a factor get all three bookies.
            minInsyncReplicas: Math.min(replicationFactor, this.opts.minInsyncReplicas ?? 1),
            settings: { ...SHARED_BROKER_SETTINGS, ...this.opts.settings },
          }),
        );
      }
    } catch (e) {
      return { ok: false, reason: `Ledgerline cluster: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}`, startupMs: Date.now() - t0 };
    }
    this.bootstrap = this.members.map((b) => b.bootstrap).join(',');
    this.logFile = this.members[0]!.logFile;
    return { ok: true, startupMs: Date.now() - t0 };
  }

  /** One broker's address, round robin: the "with the bootstrap pointing at any one broker". */
  clientBootstrap(): string {
    const member = this.members[this.nextMember++ % Math.max(1, this.members.length)];
    return member?.bootstrap ?? '';
  }

  exited(): string | null {
    const gone = this.members.find((b) => !alive(b.pid));
    return gone ? `broker ${gone.nodeId} exited` : null;
  }

  /** The brokers, the bookies and ZooKeeper: the whole system a client's records go through. */
  pids(): number[] {
    const engines = this.dev ? [this.dev.zk.pid, ...this.dev.bookies.map((b) => b.pid)] : [];
    return [...this.members.map((b) => b.pid), ...engines].filter((p): p is number => p !== undefined);
  }

  /** Peak RSS: the sum of each process's peak, brokers, bookies and ZooKeeper. */
  async stop(): Promise<{ peakRssMiB: number | null }> {
    const rss = await Promise.all(this.pids().map((pid) => peakRssMiB(pid)));
    // SIGTERM to each broker's process group (a graceful leave), SIGKILL past 15 s; then the bookies and ZooKeeper.
    await Promise.all(this.members.map((b) => stopGroup(b.pid, 15_000)));
    await this.dev?.stop();
    if (this.dir && !this.opts.keepData) await rm(this.dir, { recursive: true, force: true });
    const known = rss.filter((r): r is number => r !== null);
    return { peakRssMiB: known.length > 0 ? known.reduce((a, b) => a + b, 0) : null };
  }
}

/** SIGTERM to a detached process group, then waits for it to go; SIGKILL to what is left past `graceMs`. */
async function stopGroup(pgid: number, graceMs: number): Promise<void> {
  const signal = (s: NodeJS.Signals): void => {
    try {
      process.kill(-pgid, s);
    } catch {
      // already gone
    }
  };
  signal('SIGTERM');
  const until = Date.now() + graceMs;
  while (groupAlive(pgid) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  if (groupAlive(pgid)) signal('SIGKILL');
}
