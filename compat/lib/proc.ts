/**
 * Child processes with hard deadlines. Every process the suite starts runs in its own process group, so a
 * timeout (or the runner exiting) ends it together with anything it spawned; nothing outlives the run.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeoutMs: number;
  /** Written to stdin, which is then closed. */
  input?: string | Buffer;
  /** Keep at most this many bytes of each stream (the tail). */
  maxOutput?: number;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  spawnError?: string;
}

const live = new Set<ChildProcess>();

/** Ends a process group: SIGTERM, then SIGKILL after graceMs. */
export function killGroup(child: ChildProcess, graceMs = 3000): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) {
      resolve();
      return;
    }
    const pid = child.pid;
    const hard = setTimeout(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }, graceMs);
    child.once('exit', () => {
      clearTimeout(hard);
      resolve();
    });
    try {
      process.kill(-pid, 'SIGTERM');
    } catch {
      clearTimeout(hard);
      resolve();
    }
  });
}

/** Starts a long-lived process in its own group; it is killed when the runner exits. */
export function startDetached(
  cmd: string,
  args: readonly string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; stdio: ['ignore', number | 'pipe', number | 'pipe'] },
): ChildProcess {
  const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: opts.stdio, detached: true });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

export function run(cmd: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const max = opts.maxOutput ?? 4 * 1024 * 1024;
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, {
        cwd: opts.cwd,
        env: opts.env ?? process.env,
        stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        detached: true,
      });
    } catch (e) {
      resolve({ code: null, signal: null, stdout: '', stderr: '', timedOut: false, ms: 0, spawnError: String(e) });
      return;
    }
    live.add(child);
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    let spawnError: string | undefined;
    const keep = (acc: string, chunk: Buffer): string => {
      const next = acc + chunk.toString('utf8');
      return next.length > max ? next.slice(next.length - max) : next;
    };
    child.stdout?.on('data', (c: Buffer) => (stdout = keep(stdout, c)));
    child.stderr?.on('data', (c: Buffer) => (stderr = keep(stderr, c)));
    child.on('error', (e) => {
      spawnError = e.message;
    });
    if (opts.input !== undefined) {
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(opts.input);
    }
    const timer = setTimeout(() => {
      timedOut = true;
      void killGroup(child);
    }, opts.timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      // The program may have left children in its group (a consumer thread pool, a shell pipeline).
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // group already empty
        }
      }
      resolve({ code, signal, stdout, stderr, timedOut, ms: Date.now() - started, spawnError });
    });
  });
}

const cleanups = new Set<() => void>();

/** Registers a synchronous cleanup (removing a temporary directory) run if the runner exits early. */
export function onExit(f: () => void): () => void {
  cleanups.add(f);
  return () => cleanups.delete(f);
}

/** Kills every process group still running, then runs the registered cleanups; the runner's exit hook. */
export function killAllSync(): void {
  for (const child of live) {
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  live.clear();
  for (const f of cleanups) {
    try {
      f();
    } catch {
      // best effort on the way out
    }
  }
  cleanups.clear();
}

export function installExitHooks(): void {
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAllSync();
      process.exit(130);
    });
  }
}

/** The last non-empty line of some output, trimmed to one line for a matrix cell. */
export function lastLine(text: string, max = 160): string {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l.length > 0);
  const line = lines.length > 0 ? lines[lines.length - 1] : '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Peak resident memory of a live process in MiB (VmHWM), or null when it cannot be read. */
export async function peakRssMiB(pid: number | undefined): Promise<number | null> {
  if (pid === undefined) return null;
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const m = /VmHWM:\s+(\d+) kB/.exec(status);
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * User + system CPU time a live process has used so far, in seconds (utime and stime, fields 14 and 15
 * of /proc/<pid>/stat, in USER_HZ = 100 ticks per second on Linux), or null when it cannot be read.
 */
export function cpuSeconds(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / 100 : null;
  } catch {
    return null;
  }
}
