/**
 * The Kafka Streams programs of compat/streams/ (Maven, `npm run compat` builds them) as child processes:
 * the exactly-once word count, which tests kill with SIGKILL and start again on the same state directory,
 * the keyed aggregation whose in-memory store is restored from its changelog at every start
 * (StreamsRestore), and the read_committed reader of their output.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JavaProgram } from './java-program.js';

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

/**
 * A program of compat/streams/ (StreamsWordCount unless told), started again and again on the same state
 * directory. stop() is a clean stop (SIGTERM: KafkaStreams.close() commits and leaves), SIGKILL after 20 s.
 */
export class StreamsApp extends JavaProgram {
  constructor(private readonly args: WordCountArgs) {
    super(`the Streams program ${args.program ?? 'StreamsWordCount'}`, 20_000);
  }

  start(): void {
    const a = this.args;
    const main = `dev.ledgerline.compat.${a.program ?? 'StreamsWordCount'}`;
    this.run([...JVM, '-cp', classpath(), main, a.bootstrap, a.applicationId, a.input, a.output, a.stateDir, ...(a.extraArgs ?? [])]);
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
