/**
 * The Kafka Streams programs of compat/streams/ (Maven, `npm run compat` builds them) as child processes:
 * the exactly-once word count, which tests kill with SIGKILL and start again on the same state directory,
 * the keyed aggregation whose in-memory store is restored from its changelog at every start
 * (StreamsRestore), and the read_committed reader of their output.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const STREAMS_DIR = fileURLToPath(new URL('../../compat/streams/', import.meta.url));
const CLASSES = join(STREAMS_DIR, 'target', 'classes');
const CLASSPATH_FILE = join(STREAMS_DIR, 'target', 'classpath.txt');

/** Why the programs cannot run here, or null: java missing, or the module not built (with `program` in it). */
export function whyNoStreamsApp(program = 'StreamsWordCount'): string | null {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'java is not installed';
  if (!existsSync(CLASSPATH_FILE) || !existsSync(join(CLASSES, 'dev', 'ledgerline', 'compat', `${program}.class`))) {
    return 'compat/streams is not built (run `npm run compat -- --only kafka` once, or mvn -f compat/pom.xml package)';
  }
  return null;
}

function classpath(): string {
  return `${CLASSES}:${readFileSync(CLASSPATH_FILE, 'utf8').trim()}`;
}

/** A small heap and a quick start: the word count holds a few hundred words. */
const JVM = ['-Xmx256m', '-Xms64m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Dorg.slf4j.simpleLogger.defaultLogLevel=warn', '-Dorg.slf4j.simpleLogger.showDateTime=true'];

export interface WordCountArgs {
  bootstrap: string;
  applicationId: string;
  input: string;
  output: string;
  stateDir: string;
  /** The program of compat/streams/ (default StreamsWordCount). */
  program?: string;
  /** Arguments after the state directory (StreamsRestore: segment.ms of its changelog). */
  extraArgs?: string[];
}

/** A program of compat/streams/ (StreamsWordCount unless told), started again and again on the same state directory. */
export class StreamsApp {
  private child: ChildProcess | null = null;
  /** stdout and stderr of every run, tagged with the run's number; the tail goes into failure messages. */
  readonly lines: string[] = [];
  runs = 0;
  /** Set when a run ended without being killed by kill() or stop(): its exit status. */
  unexpectedExit: string | null = null;

  constructor(private readonly args: WordCountArgs) {}

  start(): void {
    const run = ++this.runs;
    const a = this.args;
    const main = `dev.ledgerline.compat.${a.program ?? 'StreamsWordCount'}`;
    const child = spawn('java', [...JVM, '-cp', classpath(), main, a.bootstrap, a.applicationId, a.input, a.output, a.stateDir, ...(a.extraArgs ?? [])], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    const keep = (stream: string) => (line: string) => {
      this.lines.push(`[run ${run} ${stream}] ${line}`);
      if (this.lines.length > 4000) this.lines.splice(0, 2000);
    };
    createInterface({ input: child.stdout! }).on('line', keep('out'));
    createInterface({ input: child.stderr! }).on('line', keep('err'));
    child.once('exit', (code, signal) => {
      if (this.child === child) this.unexpectedExit = `run ${run} exited by itself (${signal ?? `status ${code}`})`;
    });
  }

  /** The last lines the program printed, stack frames left out, for failure messages. */
  tail(n = 20): string {
    return this.lines
      .filter((l) => !/^\[run \d+ err\] (\s+at |\s*\.\.\. \d+ more)/.test(l))
      .slice(-n)
      .join('\n');
  }

  /** Throws, with the program's output tail, when a run ended on its own. */
  check(): void {
    if (this.unexpectedExit !== null) throw new Error(`the Streams program ${this.args.program ?? 'StreamsWordCount'} ${this.unexpectedExit}; its last output:\n${this.tail()}`);
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

  /** A crash: SIGKILL, no chance to commit, abort or leave the group. */
  kill(): Promise<void> {
    return this.end('SIGKILL', 0);
  }

  /** A clean stop (SIGTERM: KafkaStreams.close() commits and leaves), SIGKILL after 20 s. */
  stop(): Promise<void> {
    return this.end('SIGTERM', 20_000);
  }
}

export interface ReadCounts {
  records: number;
  /** Records whose count was not their word's previous count + 1 (a replayed or lost update). */
  outOfSequence: number;
  firstOutOfSequence: string;
  /** The last count of each word. */
  counts: Record<string, number>;
}

/** Reads a (word, count) topic from its beginning to its end with the Java consumer: the last count of each word. */
export function readCounts(bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted'): Promise<ReadCounts> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', [...JVM, '-cp', classpath(), 'dev.ledgerline.compat.ReadCommitted', bootstrap, topic, isolation], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code !== 0 || !line.startsWith('{')) reject(new Error(`ReadCommitted ${topic} (${isolation}) exited with ${code}:\n${err.slice(-3000)}`));
      else resolve(JSON.parse(line) as ReadCounts);
    });
  });
}
