/**
 * Brokers the harness starts itself, through the compatibility suite's launchers (compat/lib/brokers.ts):
 * Ledgerline from this repository's build, and Apache Kafka 4.4.0 (KRaft, one combined node) from Maven
 * Central jars. Both bind ephemeral ports on 127.0.0.1 and keep their data in a fresh directory under
 * `dataRoot()`, so they share one disk. Stopping a broker reports its peak resident memory
 * (VmHWM from /proc/<pid>/status); a fresh broker per run makes that the run's peak. With `security` (one node
 * each) a broker also has a SASL_SSL listener and the benchmark's SCRAM user (security.ts).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bookKeeperClasspath } from '../../compat/cluster/classpath.js';
import { Ledgerline, ReferenceKafka } from '../../compat/lib/brokers.js';
import type { Broker } from '../../compat/lib/brokers.js';
import { install } from '../../compat/lib/install.js';
import { KafkaCluster } from '../../compat/lib/kafka-cluster.js';
import { LedgerlineCluster } from '../../compat/lib/ledgerline-cluster.js';
import { COMPAT_DIR } from '../../compat/lib/paths.js';
import { cpuSeconds, installExitHooks, lastLine, run } from '../../compat/lib/proc.js';
import { REPO_DIR } from '../../compat/lib/paths.js';
import { freePort } from '../../compat/lib/ports.js';
import type { BenchSecurity } from './security.js';
import { SECURE_LISTENER, createUser } from './security.js';
import { jvmGcSeconds, ledgerlineGcSeconds, sumOver } from './usage.js';
import { RESULTS_DIR } from './workload.js';

export type BrokerKind = 'ledgerline' | 'kafka';

export interface StartedBroker {
  readonly kind: BrokerKind;
  readonly label: string;
  readonly bootstrap: string;
  readonly startupMs: number;
  /**
   * With `security`: the SASL_SSL listener's address, and the TLS version and cipher suite the benchmark's user
   * signed in with there.
   */
  readonly secure?: { readonly bootstrap: string; readonly tls: { protocol: string | null; cipher: string } };
  /** Why the broker died during the run, or null while it runs. */
  exited(): string | null;
  /** CPU seconds its processes have used so far (a cluster: every broker, bookie and ZooKeeper), or null. */
  cpuSeconds(): number | null;
  /**
   * Seconds its processes have spent in GC pauses so far (usage.ts: jstat for Kafka's JVMs, the admin
   * endpoint's GC histogram for a Ledgerline node), or null; null for a Ledgerline cluster, whose brokers have no
   * admin endpoint here.
   */
  gcSeconds(): Promise<number | null>;
  stop(): Promise<{ peakRssMiB: number | null }>;
}

export interface StartOptions {
  kafkaHeapMiB?: number;
  /**
   * Three of each side as users run them: Ledgerline brokers on ZooKeeper and three BookKeeper bookies
   * (compat/lib/ledgerline-cluster.ts), Kafka as three KRaft nodes (compat/lib/kafka-cluster.ts); both
   * with replication factor 3 and min.insync.replicas 2.
   */
  cluster?: boolean;
  /** A SASL_SSL listener and a SCRAM user besides PLAINTEXT (one node only; see security.ts). */
  security?: BenchSecurity;
  /** Where broker logs go; default bench/results/logs/<label>-<time>. */
  logDir?: string;
  log: (line: string) => void;
}

let hooksInstalled = false;

let root: string | undefined;

/**
 * Where the brokers keep their data, and the disk the limits are measured on: one directory per harness
 * process under the system temp directory, removed at exit. The launchers create their data directories
 * under `os.tmpdir()`, so TMPDIR points here while this process runs; nothing the harness writes lands
 * elsewhere, and nothing outside can mistake it for its own.
 */
export function dataRoot(): string {
  if (root === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-bench-'));
    root = dir;
    process.env.TMPDIR = dir;
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return root;
}

const KAFKA_CLASSPATH = join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt');

/** Resolves the Kafka jars with Maven when they are not there yet. Returns a reason when it cannot. */
export async function ensureKafka(log: (line: string) => void): Promise<string | null> {
  if (existsSync(KAFKA_CLASSPATH)) return null;
  log('resolving Apache Kafka from Maven Central (compat/.work/m2)…');
  const reports = await install(new Set(['maven']), false, log);
  const r = reports.get('maven');
  if (!r?.ok || !existsSync(KAFKA_CLASSPATH)) return `cannot resolve the Kafka jars: ${r?.reason ?? 'unknown failure'}`;
  return null;
}

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile() && e.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
  }
  return newest;
}

/**
 * Builds Ledgerline (`tsc -p tsconfig.build.json`) when dist/ is missing or older than src/ or protocol/,
 * so a comparison never runs a stale broker; checked once per process, so all its runs use one build. Type errors do not stop the build's output; they are logged.
 */
let buildChecked = false;

export async function ensureBuild(log: (line: string) => void): Promise<void> {
  // Once per harness process: every Ledgerline run of a comparison must run the same build.
  if (buildChecked) return;
  buildChecked = true;
  const cli = join(REPO_DIR, 'dist', 'src', 'cli.js');
  const built = existsSync(cli) ? statSync(cli).mtimeMs : 0;
  const sources = Math.max(newestSource(join(REPO_DIR, 'src')), newestSource(join(REPO_DIR, 'protocol')));
  if (built >= sources) return;
  log('building Ledgerline (dist/ is older than the sources)…');
  const r = await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPO_DIR, timeoutMs: 600_000 });
  if (r.code !== 0) log(`the build reported errors (${lastLine(r.stdout || r.stderr)}); running what it emitted`);
}

/** Starts a broker; resolves with it, or with the reason it could not start. */
export async function startBroker(kind: BrokerKind, o: StartOptions): Promise<StartedBroker | { error: string }> {
  if (!hooksInstalled) {
    installExitHooks();
    hooksInstalled = true;
  }
  dataRoot();
  const logDir = o.logDir ?? join(RESULTS_DIR, 'logs', `${kind}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  if (o.security && o.cluster) return { error: 'a SASL_SSL listener is set up on one node only, not with --cluster' };
  const secure = o.security ? { extraListeners: [SECURE_LISTENER], settings: { ...o.security.brokerSettings } } : {};
  let broker: Broker & { listenerPorts?: ReadonlyMap<string, number> };
  let adminUrl: string | null = null;
  if (kind === 'kafka') {
    const why = await ensureKafka(o.log);
    if (why) return { error: why };
    const heapMiB = o.kafkaHeapMiB ?? 1024;
    broker = o.cluster ? new KafkaCluster({ logDir, heapMiB, keepData: false }) : new ReferenceKafka({ label: 'kafka', logDir, heapMiB, keepData: false, ...secure });
  } else if (o.cluster) {
    // The cluster's brokers run from the sources (tsx), as `npm run cluster` starts them; the bookies need the compat/bookkeeper build.
    if (bookKeeperClasspath() === undefined) {
      o.log('resolving ZooKeeper and BookKeeper from Maven Central (compat/.work/m2)…');
      const r = (await install(new Set(['maven']), false, o.log)).get('maven');
      if (!r?.ok || bookKeeperClasspath() === undefined) return { error: `cannot resolve BookKeeper: ${r?.reason ?? 'unknown failure'}` };
    }
    broker = new LedgerlineCluster({ brokers: 3, bookies: 3, minInsyncReplicas: 2, settings: {}, keepData: false });
  } else {
    await ensureBuild(o.log);
    // The admin endpoint, for the GC figures its /metrics holds.
    adminUrl = `http://127.0.0.1:${await freePort()}`;
    broker = new Ledgerline({ logDir, keepData: false, readyTimeoutMs: 60_000, build: false, ...secure, settings: { ...secure.settings, 'ledgerline.admin.listener': adminUrl } });
  }
  o.log(`starting ${kind}…`);
  const report = await broker.start();
  if (!report.ok) {
    await broker.stop().catch(() => undefined);
    return { error: report.reason ?? 'did not start' };
  }
  o.log(`${kind} serving at ${broker.bootstrap} after ${(report.startupMs / 1000).toFixed(1)} s`);
  let secured: StartedBroker['secure'];
  if (o.security) {
    const bootstrap = `127.0.0.1:${broker.listenerPorts!.get(SECURE_LISTENER.name)!}`;
    try {
      const t0 = Date.now();
      const tls = await createUser(o.security, broker.bootstrap, bootstrap);
      secured = { bootstrap, tls };
      o.log(`${kind}: ${o.security.user} created and signed in with ${o.security.mechanism} at ${bootstrap} (${tls.protocol} ${tls.cipher}) in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      await broker.stop().catch(() => undefined);
      return { error: (e as Error).message };
    }
  }
  return {
    kind,
    label: broker.label,
    bootstrap: broker.bootstrap,
    startupMs: report.startupMs,
    ...(secured ? { secure: secured } : {}),
    exited: () => broker.exited(),
    cpuSeconds: () => {
      let sum = 0;
      for (const pid of broker.pids()) {
        const s = cpuSeconds(pid);
        if (s === null) return null;
        sum += s;
      }
      return sum;
    },
    gcSeconds: () => {
      if (kind === 'kafka') return sumOver(broker.pids(), jvmGcSeconds);
      return adminUrl === null ? Promise.resolve(null) : ledgerlineGcSeconds(adminUrl);
    },
    stop: () => broker.stop(),
  };
}
