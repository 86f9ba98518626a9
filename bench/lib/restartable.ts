/**
 * A broker the harness can stop and start again on the same data: what the restart benchmarks need and
 * the compatibility launchers (compat/lib/brokers.ts, a fresh directory per start) do not offer.
 *
 * Ledgerline runs from dist/ (`node dist/src/cli.js start`, rebuilt first when stale, as bench/lib/brokers.ts
 * does); Apache Kafka 4.4.0 runs as bench/lib/brokers.ts starts it: KRaft, one combined broker+controller
 * node, the jars Maven resolved into compat/.work/, `-Xmx1g`, the same broker settings
 * (compat/lib/brokers.ts SHARED_BROKER_SETTINGS, one-partition internal topics). Storage is formatted once;
 * every later start reuses the directory, the node id and the ports, as an operator's restart would.
 *
 * Each start is timed from the spawn to the first answer a client can use (`probe`): ApiVersions, then a
 * Metadata request for no topics that lists at least one broker (a KRaft node lists itself only once it is
 * registered and unfenced). A graceful stop is SIGTERM, timed until the process has exited; a crash is
 * SIGKILL. Every process is in its own group and killed when the harness exits (compat/lib/proc.ts).
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ChildProcess } from 'node:child_process';
import { MetadataApi, createMetadataRequest } from '../../protocol/messages/003-metadata.gen.js';
import { Connection } from '../../src/client/index.js';
import { SHARED_BROKER_SETTINGS, randomClusterId } from '../../compat/lib/brokers.js';
import { COMPAT_DIR, REPO_DIR } from '../../compat/lib/paths.js';
import { freePort } from '../../compat/lib/ports.js';
import { installExitHooks, lastLine, onExit, run, startDetached } from '../../compat/lib/proc.js';
import type { BrokerKind } from './brokers.js';
import { dataRoot, ensureBuild, ensureKafka } from './brokers.js';
import { RESULTS_DIR } from './workload.js';

export interface RestartableOptions {
  kafkaHeapMiB?: number;
  /** Extra broker settings (Kafka's names), for both kinds. */
  settings?: Record<string, string>;
  /** How long a start may take before it is reported as failed; default 10 minutes. */
  listenDeadlineMs?: number;
  /** How long a graceful stop may take before SIGKILL ends it; default 2 minutes. */
  stopDeadlineMs?: number;
  log: (line: string) => void;
}

export interface StopReport {
  /** From SIGTERM until the process had exited. */
  ms: number;
  /** True when it had not exited within the deadline and was killed. */
  forced: boolean;
  /** The exit code or signal. */
  exit: string;
}

let hooksInstalled = false;

/** One Metadata-for-no-topics answer that lists a broker, on a fresh connection; throws otherwise. */
export async function probe(host: string, port: number, timeoutMs = 2000): Promise<void> {
  const conn = await Connection.connect({ host, port, clientId: 'ledgerline-bench-probe', connectTimeoutMs: timeoutMs, requestTimeoutMs: timeoutMs });
  try {
    const md = await conn.request(MetadataApi, createMetadataRequest({ topics: [], allowAutoTopicCreation: false }));
    if (md.brokers.length === 0) throw new Error('Metadata lists no broker yet');
  } finally {
    await conn.close().catch(() => undefined);
  }
}

export class RestartableBroker {
  readonly dir: string;
  readonly logDir: string;
  private child: ChildProcess | null = null;
  private port = 0;
  private controllerPort = 0;
  private formatted = false;
  private launch: { cmd: string; args: string[]; cwd: string; logFile: string } | null = null;

  constructor(
    readonly kind: BrokerKind,
    private readonly o: RestartableOptions,
  ) {
    if (!hooksInstalled) {
      installExitHooks();
      hooksInstalled = true;
    }
    this.dir = join(dataRoot(), `${kind}-${Date.now().toString(36)}`);
    mkdirSync(this.dir, { recursive: true });
    const dir = this.dir;
    onExit(() => rmSync(dir, { recursive: true, force: true }));
    this.logDir = join(RESULTS_DIR, 'logs', `${kind}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Where the broker keeps its data. */
  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** Prepares the first start: ports, configuration, Kafka's storage format. Not part of any timing. */
  private async prepare(): Promise<void> {
    if (this.launch) return;
    this.port = await freePort();
    const logFile = join(this.logDir, this.kind === 'kafka' ? 'stdout.log' : 'ledgerline.log');
    mkdirSync(this.logDir, { recursive: true });
    if (this.kind === 'ledgerline') {
      await ensureBuild(this.o.log);
      const cli = join(REPO_DIR, 'dist', 'src', 'cli.js');
      if (!existsSync(cli)) throw new Error('Ledgerline has no build (dist/src/cli.js)');
      const settings: Record<string, string> = {
        listeners: `PLAINTEXT://127.0.0.1:${this.port}`,
        'log.dirs': this.dataDir,
        'node.id': '1',
        ...SHARED_BROKER_SETTINGS,
        ...this.o.settings,
      };
      const args = [cli, 'start'];
      for (const [k, v] of Object.entries(settings)) args.push('--set', `${k}=${v}`);
      this.launch = { cmd: process.execPath, args, cwd: REPO_DIR, logFile };
      return;
    }
    const why = await ensureKafka(this.o.log);
    if (why) throw new Error(why);
    const classpath = readFileSync(join(COMPAT_DIR, 'kafka-broker', 'target', 'classpath.txt'), 'utf8').trim();
    this.controllerPort = await freePort();
    // The settings bench/lib/brokers.ts starts Kafka with (compat/lib/brokers.ts ReferenceKafka).
    const settings: Record<string, string> = {
      'process.roles': 'broker,controller',
      'node.id': '1',
      'controller.quorum.bootstrap.servers': `127.0.0.1:${this.controllerPort}`,
      listeners: `PLAINTEXT://127.0.0.1:${this.port},CONTROLLER://127.0.0.1:${this.controllerPort}`,
      'advertised.listeners': `PLAINTEXT://127.0.0.1:${this.port}`,
      'controller.listener.names': 'CONTROLLER',
      'inter.broker.listener.name': 'PLAINTEXT',
      'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'log.dirs': this.dataDir,
      'offsets.topic.replication.factor': '1',
      'offsets.topic.num.partitions': '1',
      'transaction.state.log.replication.factor': '1',
      'transaction.state.log.min.isr': '1',
      'transaction.state.log.num.partitions': '1',
      'share.coordinator.state.topic.replication.factor': '1',
      'share.coordinator.state.topic.min.isr': '1',
      ...SHARED_BROKER_SETTINGS,
      ...this.o.settings,
    };
    const props = join(this.dir, 'server.properties');
    writeFileSync(props, Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    const log4j = join(this.dir, 'log4j2.properties');
    writeFileSync(
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
    if (!this.formatted) {
      const format = await run('java', ['-Xmx256m', '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', randomClusterId(), '-c', props, '--standalone'], {
        timeoutMs: 60_000,
        cwd: this.dir,
      });
      if (format.code !== 0) throw new Error(`Kafka storage format failed: ${lastLine(format.stderr || format.stdout) || format.spawnError || 'timeout'}`);
      this.formatted = true;
    }
    const heap = this.o.kafkaHeapMiB ?? 1024;
    const jvm = [`-Xmx${heap}m`, `-Xms${heap}m`, '-XX:+UseG1GC', '-Djava.awt.headless=true'];
    this.launch = {
      cmd: 'java',
      args: [...jvm, `-Dkafka.logs.dir=${this.logDir}`, `-Dlog4j2.configurationFile=${log4j}`, '-cp', classpath, 'kafka.Kafka', props],
      cwd: this.dir,
      logFile,
    };
  }

  /**
   * Starts the broker on its data and resolves with the milliseconds from the spawn to the first usable
   * answer (see the top of this file). Throws when it exits first or does not answer by the deadline.
   */
  async start(): Promise<number> {
    if (this.running) throw new Error(`${this.kind} is already running`);
    await this.prepare();
    const l = this.launch!;
    const out = openSync(l.logFile, 'a');
    const t0 = performance.now();
    const child = startDetached(l.cmd, l.args, { cwd: l.cwd, stdio: ['ignore', out, out] });
    closeSync(out);
    this.child = child;
    const deadline = t0 + (this.o.listenDeadlineMs ?? 600_000);
    let last = 'no answer';
    while (performance.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`${this.kind} exited (${child.exitCode ?? child.signalCode}) before it answered: ${this.logTail()}`);
      }
      try {
        await probe('127.0.0.1', this.port, 2000);
        return performance.now() - t0;
      } catch (e) {
        last = (e as Error).message;
      }
      // Short polls: the figure is meant to be accurate to a few tens of ms.
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`${this.kind} did not answer within ${Math.round((this.o.listenDeadlineMs ?? 600_000) / 1000)} s (${last})`);
  }

  /** SIGTERM, timed until the process has exited; SIGKILL past the deadline. */
  async stop(): Promise<StopReport> {
    const child = this.child;
    if (!child || !this.running) return { ms: 0, forced: false, exit: 'not running' };
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const t0 = performance.now();
    process.kill(child.pid!, 'SIGTERM');
    let forced = false;
    const deadline = this.o.stopDeadlineMs ?? 120_000;
    const timer = setTimeout(() => {
      forced = true;
      this.killGroup();
    }, deadline);
    await exited;
    clearTimeout(timer);
    const ms = performance.now() - t0;
    return { ms, forced, exit: String(child.exitCode ?? child.signalCode) };
  }

  /** SIGKILL to the whole process group, as a crash or an OOM kill would end it; resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    this.killGroup();
    await exited;
  }

  private killGroup(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  /** VmRSS of the broker process in MiB, or null when it cannot be read. */
  rssMiB(): number | null {
    const pid = this.child?.pid;
    if (pid === undefined || !this.running) return null;
    try {
      const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : null;
    } catch {
      return null;
    }
  }

  /** Ends the broker if it runs and removes its data. */
  async dispose(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last line of the broker's log that says something went wrong, or ''. */
  logTail(): string {
    const file = this.kind === 'kafka' ? join(this.logDir, 'server.log') : this.launch?.logFile;
    if (!file || !existsSync(file)) return '';
    const bad = readFileSync(file, 'utf8').split('\n').filter((line) => /\] (ERROR|FATAL) |"level":(50|60)/.test(line));
    return lastLine(bad.join('\n'));
  }
}
