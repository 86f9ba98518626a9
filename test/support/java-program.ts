/**
 * A Java program that a test runs as a child process, again and again (Kafka Streams applications, the Kafka
 * Connect worker, the MirrorMaker 2 driver): each run's stdout and stderr kept, tagged with the run's number,
 * for failure messages; a run that ends by itself noticed; SIGKILL (a crash) or SIGTERM (the JVM's shutdown
 * hooks run) to end one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Lines kept of all runs; past it the older half goes. */
const MAX_LINES = 4000;

export class JavaProgram {
  private child: ChildProcess | null = null;
  /** stdout and stderr of every run, tagged with the run's number; the tail goes into failure messages. */
  readonly lines: string[] = [];
  runs = 0;
  /** Set when a run ended without being killed by kill() or stop(): its exit status. */
  unexpectedExit: string | null = null;

  /**
   * `label` names the program in messages ('the Connect worker'); `stopGraceMs` is how long stop() lets
   * the shutdown hooks run before SIGKILL.
   */
  constructor(
    readonly label: string,
    private readonly stopGraceMs: number,
  ) {}

  /** Starts the next run: `java` with these arguments. */
  protected run(args: readonly string[]): void {
    const run = ++this.runs;
    const child = spawn('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (stream: string) => (line: string) => {
      this.lines.push(`[run ${run} ${stream}] ${line}`);
      if (this.lines.length > MAX_LINES) this.lines.splice(0, MAX_LINES / 2);
    };
    createInterface({ input: child.stdout! }).on('line', keep('out'));
    createInterface({ input: child.stderr! }).on('line', keep('err'));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.unexpectedExit = `run ${run} exited by itself (${signal ?? `status ${code}`})`;
    });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** The last lines the program printed, stack frames left out, for failure messages. */
  tail(n = 25): string {
    return this.lines
      .filter((l) => !/^\[run \d+ err\] (\s+at |\s*\.\.\. \d+ more)/.test(l))
      .slice(-n)
      .join('\n');
  }

  /** Throws, with the program's output tail, when a run ended on its own. */
  check(): void {
    if (this.unexpectedExit !== null) throw new Error(`${this.label} ${this.unexpectedExit}; its last output:\n${this.tail()}`);
  }

  private async end(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill(signal);
    const hard = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(hard);
  }

  /** A crash: SIGKILL, no chance to commit, abort or leave a group. */
  kill(): Promise<void> {
    return this.end('SIGKILL', 0);
  }

  /** A clean stop (SIGTERM: the JVM's shutdown hooks run), SIGKILL after the grace time. */
  stop(): Promise<void> {
    return this.end('SIGTERM', this.stopGraceMs);
  }
}
