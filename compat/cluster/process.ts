/**
 * The cluster's JVMs as child processes: each in its own process group, stdout and stderr appended to a log
 * file in its directory, ended with its group (SIGTERM, SIGKILL after a grace time), and killed when this
 * process exits. A watchdog in the same group ends it if this process dies without running its exit hooks
 * (SIGKILL), so that nothing outlives the test run or the launcher that started it, unless asked to
 * (`npm run cluster -- up`, which leaves the cluster running after it exits).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';

export interface JvmOptions {
  /** Names the process in messages: 'ZooKeeper', 'bookie 127.0.0.1:3181'. */
  label: string;
  classpath: string;
  mainClass: string;
  args: readonly string[];
  /** -Xmx and other JVM options. */
  jvmOptions: readonly string[];
  /** Appended to, never truncated: a restarted process logs after its previous run. */
  logFile: string;
  cwd: string;
  /** Keep running after this process exits (no exit hook, no watchdog). */
  detached?: boolean;
}

/**
 * JVM options that every process of the cluster gets: a small serial-GC JVM that starts quickly on 2 cores,
 * and the module openings BookKeeper's and Netty's direct-memory code needs on Java 17 (as BookKeeper's
 * bin/common.sh passes them).
 */
export const COMMON_JVM_OPTIONS: readonly string[] = [
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:-UsePerfData',
  '-Djava.net.preferIPv4Stack=true',
  '-Dio.netty.tryReflectionSetAccessible=true',
  '--add-opens=java.base/java.nio=ALL-UNNAMED',
  '--add-opens=java.base/jdk.internal.misc=ALL-UNNAMED',
  '--add-opens=java.base/java.io=ALL-UNNAMED',
  '--add-opens=java.base/java.util.zip=ALL-UNNAMED',
  '--add-opens=java.base/sun.nio.ch=ALL-UNNAMED',
];

const live = new Set<JvmProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const p of live) p.killNow();
  });
}

// The watchdog: while the parent lives, poll it; once it is gone, kill the whole group (the JVM with it).
// The shell then execs the JVM, so the spawned pid is the JVM's and the group is the shell's.
const WATCHDOG = 'parent=$1; shift; (while kill -0 "$parent" 2>/dev/null; do sleep 1; done; kill -KILL 0) & exec "$@"';

export class JvmProcess {
  private child: ChildProcess | null = null;
  private exited: Promise<void> = Promise.resolve();
  /** Set when the process ended without stop() or kill(): how. */
  exitStatus: string | null = null;

  constructor(readonly opts: JvmOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== null && this.child.exitCode === null && this.child.signalCode === null;
  }

  start(): void {
    if (this.running) throw new Error(`${this.opts.label} is already running`);
    const fd = openSync(this.opts.logFile, 'a');
    const java = ['java', ...this.opts.jvmOptions, '-cp', this.opts.classpath, this.opts.mainClass, ...this.opts.args];
    const child = this.opts.detached
      ? spawn(java[0]!, java.slice(1), { cwd: this.opts.cwd, detached: true, stdio: ['ignore', fd, fd] })
      : spawn('/bin/sh', ['-c', WATCHDOG, 'sh', String(process.pid), ...java], { cwd: this.opts.cwd, detached: true, stdio: ['ignore', fd, fd] });
    closeSync(fd);
    this.child = child;
    this.exitStatus = null;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        if (this.child === child) this.exitStatus = signal ?? `status ${code}`;
        live.delete(this);
        resolve();
      });
      child.once('error', (e) => {
        this.exitStatus = `could not start: ${e.message}`;
        live.delete(this);
        resolve();
      });
    });
    if (this.opts.detached) child.unref();
    else {
      installExitHook();
      live.add(this);
    }
  }

  /** `p`, or a rejection as soon as the process exits first (a JVM that could not start). */
  unlessExited<T>(p: Promise<T>): Promise<T> {
    const exited = this.exited.then(() => {
      throw new Error(`exited (${this.exitStatus ?? 'stopped'})`);
    });
    exited.catch(() => {});
    return Promise.race([p, exited]);
  }

  /** SIGKILL to the group, synchronously (the exit hook). */
  killNow(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  private async end(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    this.child = null;
    const pid = child.pid;
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(-pid, signal);
      } catch {
        // already gone
      }
      const hard = setTimeout(() => {
        try {
          process.kill(-pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }, graceMs);
      await this.exited;
      clearTimeout(hard);
    }
    // The group's other members (the watchdog) go with it; resolve once the group is empty, so that a caller
    // who checks finds nothing left (bounded: a member the kernel has not reaped yet is waited for 5 s).
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    const deadline = Date.now() + 5000;
    while (groupAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    live.delete(this);
  }

  /** A clean stop: SIGTERM (the JVM's shutdown hooks run), SIGKILL after graceMs. */
  stop(graceMs = 10_000): Promise<void> {
    return this.end('SIGTERM', graceMs);
  }

  /** A crash: SIGKILL. */
  kill(): Promise<void> {
    return this.end('SIGKILL', 0);
  }

  /** SIGSTOP / SIGCONT to the JVM alone (the watchdog keeps watching). */
  signal(sig: 'SIGSTOP' | 'SIGCONT'): void {
    const pid = this.child?.pid;
    if (pid === undefined) throw new Error(`${this.opts.label} is not running`);
    process.kill(pid, sig);
  }

  /** The last lines of the log file, for failure messages. */
  logTail(lines = 40): string {
    return logTail(this.opts.logFile, lines);
  }
}

export function logTail(file: string, lines = 40): string {
  try {
    const size = statSync(file).size;
    return textTail(readFileSync(file, 'utf8').slice(Math.max(0, size - 64 * 1024)), lines);
  } catch {
    return '(no log)';
  }
}

/**
 * A start that failed because another process took the port between freePort() and the JVM's bind (engineers
 * and tests share the machine): the caller picks another port and tries again.
 */
export class PortInUseError extends Error {}

/** Whether the log, from byte `offset` on (this run's part), tells of a port already in use. */
export function logShowsPortInUse(file: string, offset: number): boolean {
  try {
    return /BindException|Address already in use/.test(readFileSync(file).subarray(offset).toString('utf8'));
  } catch {
    return false;
  }
}

/** The size of a file, 0 when it does not exist (where this run's part of an appended log starts). */
export function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** A free TCP port on 127.0.0.1 (the kernel's pick; closed again before the JVM binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether any process of the group `pgid` exists. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether a process with this pid exists (the state file's processes). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export interface JavaRun {
  code: number | null;
  /** stdout and stderr interleaved. */
  output: string;
  stdout: string;
}

/** Runs a short-lived JVM of the cluster's classpath to its end (SIGKILL to its group after timeoutMs). */
export function runJava(classpath: string, mainClass: string, args: readonly string[], timeoutMs: number, jvmOptions: readonly string[] = []): Promise<JavaRun> {
  return new Promise((resolve) => {
    const child = spawn('java', ['-Xmx256m', ...COMMON_JVM_OPTIONS, ...jvmOptions, '-cp', classpath, mainClass, ...args], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let stdout = '';
    const cap = (s: string): string => (s.length > 4_000_000 ? s.slice(-2_000_000) : s);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout = cap(stdout + d);
      output = cap(output + d);
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (output = cap(output + d)));
    const kill = (): void => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone
      }
    };
    const timer = setTimeout(kill, timeoutMs);
    process.once('exit', kill);
    child.once('error', (e) => {
      clearTimeout(timer);
      process.off('exit', kill);
      resolve({ code: -1, output: `could not start java: ${e.message}`, stdout: '' });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      process.off('exit', kill);
      resolve({ code, output, stdout });
    });
  });
}

/** The last lines of a text, stack frames left out. */
export function textTail(text: string, lines = 40): string {
  return text
    .split('\n')
    .filter((l) => !/^\s+at |^\s*\.\.\. \d+ more/.test(l))
    .slice(-lines)
    .join('\n');
}
