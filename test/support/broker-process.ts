/**
 * A real Ledgerline broker as a child process, for integration tests: started from the TypeScript sources
 * on 127.0.0.1 with an ephemeral port and a temporary data directory, ready once it logs where it
 * listens. Killing it (SIGKILL) and starting it again on the same data directory is how tests check
 * durability.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { brokerExecArgv } from '../../src/server/gc-threads.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

export interface BrokerProcessOptions {
  /** Extra `--set key=value` configs. */
  configs?: Record<string, string>;
  dataDir?: string;
  startTimeoutMs?: number;
  /** Name the data directory with LEDGERLINE_LOG_DIRS instead of `--set log.dirs=`. */
  dataDirFromEnv?: boolean;
  /** The program to run instead of src/cli.ts, relative to the repository (test/support/fault-broker.ts); its stdin is a pipe for `command()`. */
  entry?: string;
  /** Options for node itself, before the program (`--max-old-space-size=128`); kept across restarts. */
  nodeOptions?: readonly string[];
  /**
   * Start node with exactly `nodeOptions`, so that `ledgerline start` sizes V8's worker pool itself by executing
   * itself again (src/server/gc-threads.ts). By default the harness adds the size it would choose, which spares
   * every test broker a second start.
   */
  nodeOptionsAsGiven?: boolean;
}

/** Log lines a BrokerProcess keeps: enough for a test that fails after minutes of faults to show how it came to. */
const LOG_LINES_KEPT = 20_000;

export class BrokerProcess {
  private child: ChildProcess | null = null;
  port = 0;
  /** The bound port of each listener, by name (the first listener's is `port`). */
  readonly ports = new Map<string, number>();
  /** The broker's last log lines (at most LOG_LINES_KEPT), across its restarts. */
  readonly logs: string[] = [];

  private constructor(
    readonly dataDir: string,
    private readonly configs: Record<string, string>,
    private readonly ownsDataDir: boolean,
    private readonly dataDirFromEnv: boolean,
    private readonly entry?: string,
    private readonly nodeOptions: readonly string[] = [],
  ) {}

  static async start(options: BrokerProcessOptions = {}): Promise<BrokerProcess> {
    const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'ledgerline-test-'));
    const nodeOptions = options.nodeOptions ?? [];
    const b = new BrokerProcess(
      dataDir,
      options.configs ?? {},
      options.dataDir === undefined,
      options.dataDirFromEnv ?? false,
      options.entry,
      options.nodeOptionsAsGiven === true ? nodeOptions : (brokerExecArgv(nodeOptions, process.env.NODE_OPTIONS, availableParallelism()) ?? nodeOptions),
    );
    await b.spawn(options.startTimeoutMs ?? 30_000);
    return b;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while the child process runs. */
  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The broker's resident set size in KiB (VmRSS of /proc/<pid>/status; Linux only). */
  rssKiB(): number {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error('broker is not running');
    const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (!m) throw new Error(`no VmRSS in /proc/${pid}/status`);
    return Number(m[1]);
  }

  private spawn(timeoutMs: number): Promise<void> {
    const args = [...this.nodeOptions, '--import', 'tsx', join(REPO, this.entry ?? 'src/cli.ts'), 'start', '--set', `listeners=PLAINTEXT://127.0.0.1:${this.port}`];
    if (!this.dataDirFromEnv) args.push('--set', `log.dirs=${this.dataDir}`);
    for (const [k, v] of Object.entries(this.configs)) args.push('--set', `${k}=${v}`);
    const env: NodeJS.ProcessEnv = { ...process.env, LEDGERLINE_LOG_FORMAT: 'json', LEDGERLINE_LOG_LEVEL: process.env.LEDGERLINE_LOG_LEVEL ?? 'info' };
    if (this.dataDirFromEnv) env.LEDGERLINE_LOG_DIRS = this.dataDir;
    const child = spawn(process.execPath, args, {
      cwd: REPO,
      env,
      stdio: [this.entry ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`broker did not start within ${timeoutMs} ms:\n${this.logs.slice(-20).join('\n')}`));
      }, timeoutMs);
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        this.logs.push(line);
        if (this.logs.length > LOG_LINES_KEPT) this.logs.splice(0, LOG_LINES_KEPT / 2);
        if (!line.includes('"Ledgerline started"')) return;
        const parsed = JSON.parse(line) as { listeners: string[] };
        this.port = Number(/:(\d+)$/.exec(parsed.listeners[0]!)![1]);
        for (const l of parsed.listeners) {
          const m = /^([A-Z0-9_]+):\/\/.*:(\d+)$/.exec(l);
          if (m) this.ports.set(m[1]!, Number(m[2]));
        }
        clearTimeout(timer);
        resolve();
      });
      createInterface({ input: child.stderr! }).on('line', (line) => this.logs.push(`stderr: ${line}`));
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`broker exited during start (code ${code}, signal ${signal}):\n${this.logs.slice(-20).join('\n')}`));
      });
    });
  }

  /** Writes one command line to the stdin of an `entry` program (test/support/fault-broker.ts). */
  command(line: string): void {
    const stdin = this.child?.stdin;
    if (!stdin) throw new Error('the broker process takes no commands (no entry, or not running)');
    stdin.write(`${line}\n`);
  }

  /** Sends a signal and waits for the process to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<number | null> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill(signal);
    const code = await exited;
    this.child = null;
    return code;
  }

  /** Starts the broker again on the same data directory and port. */
  async restart(timeoutMs = 30_000): Promise<void> {
    await this.kill('SIGKILL');
    await this.spawn(timeoutMs);
  }

  /**
   * Graceful stop (SIGTERM), escalating to SIGKILL when the broker has not exited within `graceMs`;
   * removes the data directory when this object created it. Resolves with the exit code of the SIGTERM
   * (null when it had to be killed).
   */
  async stop(graceMs = 10_000): Promise<number | null> {
    const child = this.child;
    let code: number | null = null;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      code = await exited;
      clearTimeout(timer);
      this.child = null;
    }
    if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    return code;
  }
}
