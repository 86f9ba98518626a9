/**
 * The two brokers a compatibility run compares: the reference Apache Kafka (KRaft, one combined
 * broker+controller node started from Maven Central jars) and Ledgerline started from this repository's
 * build. Both listen on ephemeral loopback ports and keep their data in a fresh temporary directory.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, closeSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { freePort } from './ports.js';
import { probeMetadata } from './probe.js';
import { killGroup, lastLine, onExit, peakRssMiB, run, startDetached } from './proc.js';
import { COMPAT_DIR, REPO_DIR } from './paths.js';

export type BrokerKind = 'kafka' | 'ledgerline';

export interface StartReport {
  ok: boolean;
  /** Why the broker is not serving, one line, when ok is false. */
  reason?: string;
  startupMs: number;
}

export interface Broker {
  readonly kind: BrokerKind;
  /** Label in reports: "kafka", "ledgerline", or "kafka#2" when a second Kafka stands in as candidate. */
  readonly label: string;
  readonly bootstrap: string;
  /**
   * The bootstrap one client program is given: `bootstrap` on a single node; on a cluster one broker's
   * address, the next broker at each call, so the scenarios run with the bootstrap at each broker in turn.
   */
  clientBootstrap(): string;
  start(): Promise<StartReport>;
  /** Null while the process runs; otherwise why it is gone. */
  exited(): string | null;
  /** The processes that make up the broker (a cluster's brokers, bookies and ZooKeeper), for CPU accounting. */
  pids(): number[];
  /** Peak resident memory when it stops: of the process, or on a cluster the sum of each process's peak. */
  stop(): Promise<{ peakRssMiB: number | null }>;
  readonly logFile: string;
}

/** Kafka's Uuid.randomUuid(): 16 random bytes, base64url without padding, never starting with '-'. */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-') && id !== 'AAAAAAAAAAAAAAAAAAAAAA' && id !== 'AAAAAAAAAAAAAAAAAAAAAQ') return id;
  }
}

async function waitReady(port: number, child: ChildProcess, deadlineMs: number, logFile: string): Promise<string | null> {
  const until = Date.now() + deadlineMs;
  let lastError = 'no answer';
  while (Date.now() < until) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = existsSync(logFile) ? lastLine(readFileSync(logFile, 'utf8')) : '';
      return `exited (${child.exitCode ?? child.signalCode}) before serving Kafka requests${tail ? `: ${tail}` : ''}`;
    }
    try {
      const answer = await probeMetadata('127.0.0.1', port, 2000);
      if (answer.brokers.length > 0) return null;
      lastError = 'Metadata lists no brokers yet';
    } catch (e) {
      lastError = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return `not serving after ${Math.round(deadlineMs / 1000)} s (${lastError})`;
}

function exitReason(child: ChildProcess | null): string | null {
  if (child === null) return 'not started';
  if (child.exitCode !== null || child.signalCode !== null) return `broker exited (${child.exitCode ?? child.signalCode})`;
  return null;
}

export interface KafkaOptions {
  label: string;
  /** Kept after the run: stdout.log and server.log. */
  logDir: string;
  heapMiB: number;
  keepData: boolean;
  javaHome?: string;
  /** One node of a several-node cluster (kafka-cluster.ts); absent: one combined node, its own quorum. */
  node?: KafkaClusterNode;
  /**
   * Listeners beside PLAINTEXT (one node only), each on a port chosen at start (`listenerPorts`): a
   * SASL_PLAINTEXT listener for the ACL matrix. Inter-broker and controller traffic stays on PLAINTEXT.
   */
  extraListeners?: readonly { readonly name: string; readonly protocol: string }[];
  /** Settings over all others (the authorizer, JAAS users, ...). */
  settings?: Record<string, string>;
}

/**
 * A node of a KRaft cluster with a static quorum (`controller.quorum.voters`, every node a voter): its ports,
 * chosen by the cluster before any node starts since every node names all voters, and the cluster's settings.
 */
export interface KafkaClusterNode {
  id: number;
  port: number;
  controllerPort: number;
  /** `id@127.0.0.1:controllerPort,...` for every node. */
  voters: string;
  clusterId: string;
  /** Over the single-node settings (replication factors and the like). */
  settings: Record<string, string>;
}

/** The broker-wide settings both brokers run with (Kafka's names); scenarios depend on them. */
export const SHARED_BROKER_SETTINGS: Record<string, string> = {
  'auto.create.topics.enable': 'false',
  'group.initial.rebalance.delay.ms': '0',
  'num.partitions': '1',
  // Kafka's log cleaner sleeps this long when no log is worth cleaning (default 15 s): short, so that the
  // compaction scenario and the Streams restore test see a compact topic cleaned within a second or two.
  // Only compact topics are affected.
  'log.cleaner.backoff.ms': '200',
};

export class ReferenceKafka implements Broker {
  readonly kind = 'kafka' as const;
  bootstrap = '';
  clientBootstrap(): string {
    return this.bootstrap;
  }
  logFile = '';
  private dir = '';
  private port = 0;
  /** The bound port of each extra listener, by name. */
  readonly listenerPorts = new Map<string, number>();
  private launchArgs: string[] = [];
  private child: ChildProcess | null = null;

  constructor(private readonly opts: KafkaOptions) {}

  get label(): string {
    return this.opts.label;
  }

  private java(): string {
    return this.opts.javaHome ? join(this.opts.javaHome, 'bin', 'java') : 'java';
  }

  async start(): Promise<StartReport> {
    const t0 = Date.now();
    const cpFile = join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt');
    if (!existsSync(cpFile)) return { ok: false, reason: 'the Kafka classpath was not resolved (Maven install step failed)', startupMs: 0 };
    const classpath = (await readFile(cpFile, 'utf8')).trim();
    this.dir = await mkdtemp(join(tmpdir(), 'compat-kafka-'));
    const dir = this.dir;
    if (!this.opts.keepData) onExit(() => rmSync(dir, { recursive: true, force: true }));
    const node = this.opts.node;
    const port = node?.port ?? (await freePort());
    const controllerPort = node?.controllerPort ?? (await freePort());
    this.bootstrap = `127.0.0.1:${port}`;
    const extra = this.opts.extraListeners ?? [];
    for (const l of extra) this.listenerPorts.set(l.name, await freePort());
    const extraListeners = extra.map((l) => `,${l.name}://127.0.0.1:${this.listenerPorts.get(l.name)!}`).join('');
    const extraProtocols = extra.map((l) => `,${l.name}:${l.protocol}`).join('');
    const settings: Record<string, string> = {
      'process.roles': 'broker,controller',
      'node.id': String(node?.id ?? 1),
      ...(node ? { 'controller.quorum.voters': node.voters } : { 'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}` }),
      listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${extraListeners}`,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}${extraListeners}`,
      'controller.listener.names': 'CONTROLLER',
      'inter.broker.listener.name': 'PLAINTEXT',
      'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${extraProtocols}`,
      'log.dirs': join(this.dir, 'data'),
      // One node: every internal topic has one replica; one partition each keeps startup of the
      // group and transaction coordinators quick.
      'offsets.topic.replication.factor': '1',
      'offsets.topic.num.partitions': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'transaction.state.log.num.partitions': '1',
      'share.coordinator.state.topic.replication.factor': '1',
      'share.coordinator.state.topic.min.isr': '1',
      ...SHARED_BROKER_SETTINGS,
      ...node?.settings,
      ...this.opts.settings,
    };
    const props = join(this.dir, 'server.properties');
    await writeFile(props, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    const log4j = join(this.dir, 'log4j2.properties');
    await writeFile(
      log4j,
      [
        'status = warn',
        'appender.file.type = File',
        'appender.file.name = FILE',
        'appender.file.fileName = ${sys:kafka.logs.dir}/server.log',
        'appender.file.layout.type = PatternLayout',
        'appender.file.layout.pattern = [%d] %p %m (%c)%n',
        'rootLogger.level = INFO',
        'rootLogger.appenderRef.file.ref = FILE',
        '',
      ].join('\n'),
    );
    const jvm = [`-Xmx${this.opts.heapMiB}m`, `-Xms${this.opts.heapMiB}m`, '-XX:+UseG1GC', '-Djava.awt.headless=true'];
    const format = await run(
      this.java(),
      ['-Xmx256m', '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', node?.clusterId ?? randomClusterId(), '-c', props, ...(node ? [] : ['--standalone'])],
      { timeoutMs: 60_000, cwd: this.dir },
    );
    if (format.code !== 0) {
      return { ok: false, reason: `storage format failed: ${lastLine(format.stderr || format.stdout) || format.spawnError || 'timeout'}`, startupMs: Date.now() - t0 };
    }
    await mkdir(this.opts.logDir, { recursive: true });
    this.logFile = join(this.opts.logDir, 'stdout.log');
    this.port = port;
    this.launchArgs = [...jvm, `-Dkafka.logs.dir=${this.opts.logDir}`, `-Dlog4j2.configurationFile=${log4j}`, '-cp', classpath, 'kafka.Kafka', props];
    return this.launch(t0);
  }

  private async launch(t0: number): Promise<StartReport> {
    const out = openSync(this.logFile, 'a');
    this.child = startDetached(this.java(), this.launchArgs, { cwd: this.dir, stdio: ['ignore', out, out] });
    closeSync(out);
    const err = await waitReady(this.port, this.child, 90_000, this.logFile);
    if (err !== null) {
      const serverLog = join(this.opts.logDir, 'server.log');
      const hint = existsSync(serverLog) ? lastLine(readFileSync(serverLog, 'utf8').split('\n').filter((l) => /ERROR|FATAL/.test(l)).join('\n')) : '';
      return { ok: false, reason: `Kafka ${err}${hint ? ` (${hint})` : ''}`, startupMs: Date.now() - t0 };
    }
    return { ok: true, startupMs: Date.now() - t0 };
  }

  /**
   * A crash of the node: SIGKILL, then the same broker started again on the same data directory and
   * ports, recovering its logs as Kafka does after an unclean shutdown.
   */
  async restart(): Promise<StartReport> {
    const t0 = Date.now();
    const child = this.child;
    if (child === null || this.launchArgs.length === 0) return { ok: false, reason: 'not started', startupMs: 0 };
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      process.kill(-child.pid, 'SIGKILL');
      await exited;
    }
    return this.launch(t0);
  }

  exited(): string | null {
    return exitReason(this.child);
  }

  pids(): number[] {
    return this.child?.pid === undefined ? [] : [this.child.pid];
  }

  async stop(): Promise<{ peakRssMiB: number | null }> {
    const rss = await peakRssMiB(this.child?.pid);
    if (this.child) await killGroup(this.child, 15_000);
    if (this.dir && !this.opts.keepData) await rm(this.dir, { recursive: true, force: true });
    return { peakRssMiB: rss };
  }
}

/** The newest modification time of the TypeScript the build compiles (src/, protocol/). */
async function newestSource(): Promise<number> {
  let newest = 0;
  for (const dir of ['src', 'protocol']) {
    const root = join(REPO_DIR, dir);
    if (!existsSync(root)) continue;
    for (const e of await readdir(root, { withFileTypes: true, recursive: true })) {
      if (e.isFile() && e.name.endsWith('.ts')) newest = Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs);
    }
  }
  return newest;
}

export interface LedgerlineOptions {
  /** Kept after the run: ledgerline.log (stdout and stderr). */
  logDir: string;
  /** Extra `--set key=value` settings. */
  settings: Record<string, string>;
  keepData: boolean;
  readyTimeoutMs: number;
  /** Rebuild dist/ even when it is newer than every source file. */
  build: boolean;
  /** Listeners beside PLAINTEXT, each on a port chosen at start (`listenerPorts`), as ReferenceKafka's. */
  extraListeners?: readonly { readonly name: string; readonly protocol: string }[];
}

export class Ledgerline implements Broker {
  readonly kind = 'ledgerline' as const;
  readonly label = 'ledgerline';
  bootstrap = '';
  clientBootstrap(): string {
    return this.bootstrap;
  }
  /** Set when the runner rebuilt dist/ first; the build is not counted in the startup time. */
  buildNote: string | null = null;
  logFile = '';
  /** The bound port of each extra listener, by name. */
  readonly listenerPorts = new Map<string, number>();
  private dir = '';
  private child: ChildProcess | null = null;

  constructor(private readonly opts: LedgerlineOptions) {}

  async start(): Promise<StartReport> {
    const t0 = Date.now();
    const cli = join(REPO_DIR, 'dist', 'src', 'cli.js');
    if (this.opts.build || !existsSync(cli) || (await newestSource()) > statSync(cli).mtimeMs) {
      // tsc writes JavaScript even when it reports type errors (noEmitOnError is off), so a build
      // that complains still yields a broker to test; only a missing cli.js is fatal.
      const build = await run('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPO_DIR, timeoutMs: 300_000 });
      const took = `${(build.ms / 1000).toFixed(1)} s`;
      this.buildNote = build.code === 0 ? `rebuilt dist/ in ${took}` : `rebuilt dist/ in ${took}, tsc reported errors: ${lastLine(build.stdout || build.stderr) || build.spawnError || 'timeout'}`;
      if (!existsSync(cli)) {
        return { ok: false, reason: `build failed: ${lastLine(build.stdout || build.stderr) || build.spawnError || 'timeout'}`, startupMs: Date.now() - t0 };
      }
    }
    const t1 = Date.now();
    this.dir = await mkdtemp(join(tmpdir(), 'compat-ledgerline-'));
    const dir = this.dir;
    if (!this.opts.keepData) onExit(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const controllerPort = await freePort();
    this.bootstrap = `127.0.0.1:${port}`;
    const extra = this.opts.extraListeners ?? [];
    for (const l of extra) this.listenerPorts.set(l.name, await freePort());
    const extraListeners = extra.map((l) => `,${l.name}://127.0.0.1:${this.listenerPorts.get(l.name)!}`).join('');
    // Ledgerline's default map is Kafka's (each protocol's own name, CONTROLLER on PLAINTEXT); other names need one.
    const renamed = extra.filter((l) => l.name !== l.protocol);
    // As the Kafka node above: a broker listener and a controller listener (DescribeQuorum's voter endpoint).
    const settings: Record<string, string> = {
      listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${extraListeners}`,
      ...(renamed.length > 0
        ? { 'listener.security.protocol.map': `CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${extra.map((l) => `,${l.name}:${l.protocol}`).join('')}` }
        : {}),
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': join(this.dir, 'data'),
      'node.id': '1',
      ...SHARED_BROKER_SETTINGS,
      ...this.opts.settings,
    };
    const args = [cli, 'start'];
    for (const [k, v] of Object.entries(settings)) args.push('--set', `${k}=${v}`);
    await mkdir(this.opts.logDir, { recursive: true });
    this.logFile = join(this.opts.logDir, 'ledgerline.log');
    const out = openSync(this.logFile, 'a');
    this.child = startDetached(process.execPath, args, { cwd: REPO_DIR, stdio: ['ignore', out, out] });
    closeSync(out);
    const err = await waitReady(port, this.child, this.opts.readyTimeoutMs, this.logFile);
    if (err !== null) return { ok: false, reason: `Ledgerline ${err}`, startupMs: Date.now() - t1 };
    return { ok: true, startupMs: Date.now() - t1 };
  }

  exited(): string | null {
    return exitReason(this.child);
  }

  pids(): number[] {
    return this.child?.pid === undefined ? [] : [this.child.pid];
  }

  async stop(): Promise<{ peakRssMiB: number | null }> {
    const rss = await peakRssMiB(this.child?.pid);
    if (this.child) await killGroup(this.child, 10_000);
    if (this.dir && !this.opts.keepData) await rm(this.dir, { recursive: true, force: true });
    return { peakRssMiB: rss };
  }
}
