/**
 * Apache Kafka as a cluster of N nodes on loopback, the reference for the benchmark's cluster mode
 * (`npm run bench -- compare <workload> --cluster`): every node a combined broker and KRaft controller, the
 * quorum static (`controller.quorum.voters` naming every node, each formatted with the same cluster id), and
 * the replication Kafka users run in production: default.replication.factor 3 and min.insync.replicas 2, the
 * internal topics likewise. Each node is a ReferenceKafka with its own directory, ports and log.
 */
import { join } from 'node:path';
import type { Broker, StartReport } from './brokers.js';
import { ReferenceKafka, randomClusterId } from './brokers.js';
import { freePort } from './ports.js';
import { probeMetadata } from './probe.js';

export interface KafkaClusterOptions {
  readonly nodes?: number;
  /** Each node's directory for stdout.log and server.log: <logDir>/node-<id>. */
  readonly logDir: string;
  readonly heapMiB: number;
  readonly keepData: boolean;
  readonly replicationFactor?: number;
  readonly minInsyncReplicas?: number;
  /** Past this, start() reports the cluster as not serving. */
  readonly readyTimeoutMs?: number;
}

export class KafkaCluster implements Broker {
  readonly kind = 'kafka' as const;
  readonly label = 'kafka-cluster';
  bootstrap = '';
  logFile = '';
  private nodes: ReferenceKafka[] = [];
  private next = 0;

  constructor(private readonly opts: KafkaClusterOptions) {}

  async start(): Promise<StartReport> {
    const t0 = Date.now();
    const n = this.opts.nodes ?? 3;
    const rf = String(Math.min(n, this.opts.replicationFactor ?? 3));
    const minIsr = String(Math.min(n, this.opts.minInsyncReplicas ?? 2));
    const ports = await Promise.all(Array.from({ length: n }, async () => ({ port: await freePort(), controllerPort: await freePort() })));
    const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.controllerPort}`).join(',');
    const clusterId = randomClusterId();
    const settings: Record<string, string> = {
      'default.replication.factor': rf,
      'min.insync.replicas': minIsr,
      'offsets.topic.replication.factor': rf,
      // Kafka's default partition counts for the internal topics, as a production cluster has them.
      'offsets.topic.num.partitions': '50',
      'transaction.state.log.replication.factor': rf,
      'transaction.state.log.min.isr': minIsr,
      'transaction.state.log.num.partitions': '50',
      'share.coordinator.state.topic.replication.factor': rf,
      'share.coordinator.state.topic.min.isr': minIsr,
    };
    this.nodes = ports.map(
      (p, i) =>
        new ReferenceKafka({
          label: `kafka-${i + 1}`,
          logDir: join(this.opts.logDir, `node-${i + 1}`),
          heapMiB: this.opts.heapMiB,
          keepData: this.opts.keepData,
          node: { id: i + 1, port: p.port, controllerPort: p.controllerPort, voters, clusterId, settings },
        }),
    );
    // Side by side: no node serves before a majority of the voters is up.
    const reports = await Promise.all(this.nodes.map((k) => k.start()));
    this.bootstrap = this.nodes.map((k) => k.bootstrap).join(',');
    this.logFile = this.nodes[0]?.logFile ?? '';
    const failed = reports.find((r) => !r.ok);
    if (failed) return { ok: false, reason: `Kafka cluster: ${failed.reason ?? 'a node did not start'}`, startupMs: Date.now() - t0 };
    // Serving alone is not enough: every node must be registered, or a topic with three replicas cannot be created.
    const until = Date.now() + (this.opts.readyTimeoutMs ?? 90_000);
    const firstPort = Number(this.nodes[0]!.bootstrap.split(':')[1]);
    let listed = 0;
    while (Date.now() < until) {
      try {
        listed = (await probeMetadata('127.0.0.1', firstPort, 2000)).brokers.length;
        if (listed >= n) return { ok: true, startupMs: Date.now() - t0 };
      } catch {
        // not answering yet
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    return { ok: false, reason: `Kafka cluster: Metadata lists ${listed} of ${n} brokers after ${Math.round((this.opts.readyTimeoutMs ?? 90_000) / 1000)} s`, startupMs: Date.now() - t0 };
  }

  /** One node's address, round robin, as LedgerlineCluster does. */
  clientBootstrap(): string {
    return this.nodes[this.next++ % Math.max(1, this.nodes.length)]?.bootstrap ?? '';
  }

  exited(): string | null {
    for (const k of this.nodes) {
      const why = k.exited();
      if (why) return `${k.label}: ${why}`;
    }
    return null;
  }

  pids(): number[] {
    return this.nodes.flatMap((k) => k.pids());
  }

  async stop(): Promise<{ peakRssMiB: number | null }> {
    const rss = (await Promise.all(this.nodes.map((k) => k.stop()))).map((r) => r.peakRssMiB).filter((r): r is number => r !== null);
    return { peakRssMiB: rss.length > 0 ? rss.reduce((a, b) => a + b, 0) : null };
  }
}
