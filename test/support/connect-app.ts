/**
 * Kafka Connect and MirrorMaker 2 (compat/connect/, Maven, `npm run compat` builds it) as child processes:
 * the distributed worker (org.apache.kafka.connect.cli.ConnectDistributed) and the dedicated MirrorMaker 2
 * driver (org.apache.kafka.connect.mirror.MirrorMaker), each started from a properties file, killed with
 * SIGKILL or stopped with SIGTERM (the JVM's shutdown hook stops the herder: tasks commit their offsets
 * and leave their groups), and started again with the same file. Also a small client of the worker's
 * REST API.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { JavaProgram } from './java-program.js';

const CONNECT_DIR = fileURLToPath(new URL('../../compat/connect/', import.meta.url));
const CLASSPATH_FILE = join(CONNECT_DIR, 'target', 'classpath.txt');

/** Why Connect and MirrorMaker 2 cannot run here, or null: java missing, or the module not built. */
export function whyNoConnect(): string | null {
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (java.error || java.status !== 0) return 'java is not installed';
  if (!existsSync(CLASSPATH_FILE)) return 'compat/connect is not built (run `npm run compat -- --only kafka` once, or mvn -f compat/pom.xml -pl connect package)';
  return null;
}

/** Writes a Java properties file (values as they are: the tests use no characters that need escaping). */
export function writeProperties(path: string, props: Record<string, string | number | boolean>): void {
  writeFileSync(path, Object.entries(props).map(([k, v]) => `${k}=${String(v)}`).join('\n') + '\n');
}

/** Warnings and errors to stderr, which the tests keep for failure messages; INFO would be thousands of lines. */
function writeLog4j(dir: string): string {
  const path = join(dir, 'log4j2.properties');
  writeFileSync(
    path,
    [
      'status = warn',
      'appender.err.type = Console',
      'appender.err.name = ERR',
      'appender.err.target = SYSTEM_ERR',
      'appender.err.layout.type = PatternLayout',
      'appender.err.layout.pattern = [%d{HH:mm:ss.SSS}] %p %m (%c{1})%n',
      'rootLogger.level = WARN',
      'rootLogger.appenderRef.err.ref = ERR',
      // The worker says when its REST server is up and when it has joined its group: the support waits on it.
      'logger.rest.name = org.apache.kafka.connect.runtime.rest.RestServer',
      'logger.rest.level = INFO',
      '',
    ].join('\n'),
  );
  return path;
}

export interface ConnectProgramOptions {
  /** What the program is, for messages: 'the Connect worker', 'MirrorMaker 2'. */
  label: string;
  mainClass: 'org.apache.kafka.connect.cli.ConnectDistributed' | 'org.apache.kafka.connect.mirror.MirrorMaker';
  /** The properties file (the worker's, or mm2.properties). */
  propertiesFile: string;
  /** A directory of the test's own for the log4j2 configuration. */
  workDir: string;
  heapMiB?: number;
}

/**
 * One Connect program, started again and again with the same properties file. stop() is a clean stop
 * (SIGTERM: the shutdown hook stops the herder and its tasks), SIGKILL after 30 s.
 */
export class ConnectProgram extends JavaProgram {
  private readonly log4j: string;

  constructor(private readonly opts: ConnectProgramOptions) {
    super(opts.label, 30_000);
    this.log4j = writeLog4j(opts.workDir);
  }

  start(): void {
    const heap = this.opts.heapMiB ?? 384;
    const jvm = [`-Xmx${heap}m`, '-Xms64m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-Djava.awt.headless=true', `-Dlog4j2.configurationFile=${this.log4j}`];
    const classpath = readFileSync(CLASSPATH_FILE, 'utf8').trim();
    this.run([...jvm, '-cp', classpath, this.opts.mainClass, this.opts.propertiesFile]);
  }
}

/** Polls a condition until it holds; throws with `what` past the deadline, or at once when the program died. */
export async function waitFor(what: string, deadlineMs: number, program: ConnectProgram, cond: () => Promise<boolean> | boolean): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    program.check();
    const holds = await Promise.resolve()
      .then(cond)
      .catch((e: unknown) => {
        if (e instanceof FailedConnector) throw e;
        return false;
      });
    if (holds) return;
    if (Date.now() > until) throw new Error(`${what}: not within ${deadlineMs / 1000} s; ${program.runs > 0 ? 'the program' : 'it'}'s last output:\n${program.tail()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The Connect REST API of one worker (https://kafka.apache.org/documentation/#connect_rest). */
export class ConnectRest {
  constructor(readonly url: string) {}

  private async call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    const res = await fetch(`${this.url}${path}`, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json: unknown = text;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, json };
  }

  /** GET / answers once the REST server runs (the herder may still be joining its group). */
  async up(): Promise<boolean> {
    return (await this.call('GET', '/')).status === 200;
  }

  /** PUT /connectors/{name}/config: creates or updates a connector; throws on an error status. */
  async putConnector(name: string, config: Record<string, string>): Promise<void> {
    const r = await this.call('PUT', `/connectors/${encodeURIComponent(name)}/config`, config);
    if (r.status !== 200 && r.status !== 201) throw new Error(`PUT /connectors/${name}/config: ${r.status} ${JSON.stringify(r.json)}`);
  }

  /** GET /connectors/{name}/status: the connector's state and each task's ('RUNNING', 'FAILED' with its trace, ...). */
  async status(name: string): Promise<{ connector: string; tasks: { state: string; trace?: string }[] } | null> {
    const r = await this.call('GET', `/connectors/${encodeURIComponent(name)}/status`);
    if (r.status !== 200) return null;
    const s = r.json as { connector: { state: string }; tasks: { state: string; trace?: string }[] };
    return { connector: s.connector.state, tasks: s.tasks };
  }

  /** True once the connector and its every task (at least one) run; throws when one of them failed. */
  async running(name: string): Promise<boolean> {
    const s = await this.status(name);
    if (!s) return false;
    const failed = s.tasks.find((t) => t.state === 'FAILED');
    if (s.connector === 'FAILED' || failed) throw new FailedConnector(`connector ${name} failed: ${failed?.trace?.split('\n').slice(0, 6).join('\n') ?? s.connector}`);
    return s.connector === 'RUNNING' && s.tasks.length > 0 && s.tasks.every((t) => t.state === 'RUNNING');
  }
}

/** A connector or task in state FAILED: a wait ends at once on it. */
export class FailedConnector extends Error {}

/**
 * What Ledgerline's log cleaner did to some topics so far, from its admin endpoint's /metrics
 * (kafka_log_logcleaner_cleaned_bytes / _written_bytes per partition): one line per topic the cleaner has
 * looked at, or a note that it has none (a broker without a cleaner, or no pass yet). For the tests'
 * timelines: the Connect programs' compacted topics are cleaned under them.
 */
export async function cleanerSummary(metricsUrl: string, topics: readonly string[]): Promise<string> {
  let text: string;
  try {
    const res = await fetch(metricsUrl, { signal: AbortSignal.timeout(5000) });
    text = await res.text();
  } catch (e) {
    return `no metrics from ${metricsUrl}: ${String(e)}`;
  }
  const sums = new Map<string, { read: number; written: number; passes: number }>();
  const line = /^kafka_log_logcleaner_(cleaned_bytes|written_bytes|last_clean_timestamp_seconds)\{(?=[^}]*topic="([^"]+)")[^}]*\} (\S+)$/gm;
  for (const m of text.matchAll(line)) {
    const topic = m[2]!;
    if (!topics.includes(topic)) continue;
    const s = sums.get(topic) ?? { read: 0, written: 0, passes: 0 };
    const v = Number(m[3]);
    if (m[1] === 'cleaned_bytes') s.read += v;
    else if (m[1] === 'written_bytes') s.written += v;
    else if (v > 0) s.passes++;
    sums.set(topic, s);
  }
  if (sums.size === 0) return 'the log cleaner reports none of these topics (no cleaner, or no pass yet)';
  return [...sums]
    .map(([t, s]) => `${t}: ${s.passes} partition(s) cleaned, ${s.read} bytes read, ${s.written} written`)
    .join('; ');
}

/**
 * Reads a topic from its log start to the end offsets it had when called, partition by partition: done once
 * each non-empty partition has given its record at high watermark - 1. Not a count of records: on a
 * compacted topic the cleaner removes older records of a key, but never the last record of a partition (it
 * is in the active ledger, which the cleaner leaves alone, as Kafka's does its active segment).
 */
export async function readToEnd(kafka: Kafka, topic: string, program: ConnectProgram, deadlineMs = 30_000): Promise<Map<number, KafkaMessage[]>> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic).finally(() => admin.disconnect());
  const last = new Map(ends.filter((e) => Number(e.high) > Number(e.low)).map((e) => [e.partition, Number(e.high) - 1]));
  const seen = new Map<number, KafkaMessage[]>();
  const consumer = kafka.consumer({ groupId: `read-to-end-${process.pid}-${Date.now()}-${topic}`, allowAutoTopicCreation: false });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        if (!seen.has(partition)) seen.set(partition, []);
        seen.get(partition)!.push(message);
      },
    });
    const reached = (p: number, offset: number): boolean => (seen.get(p) ?? []).some((m) => Number(m.offset) >= offset);
    await waitFor(`reading ${topic} to its end offsets (${[...last].map(([p, o]) => `${p}:${o + 1}`).join(' ')})`, deadlineMs, program, () => [...last].every(([p, o]) => reached(p, o)));
    return seen;
  } finally {
    await consumer.disconnect().catch(() => undefined);
  }
}

/** The latest value of each key of a compacted topic (null for a tombstone), read to its end offsets. */
export async function latestByKey(kafka: Kafka, topic: string, program: ConnectProgram): Promise<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  for (const messages of (await readToEnd(kafka, topic, program)).values()) for (const m of messages) out.set(m.key?.toString() ?? '', m.value?.toString() ?? null);
  return out;
}
