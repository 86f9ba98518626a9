/**
 * The clients under test: how each is installed and invoked, and which scenarios it cannot express
 * (n/a, with the reason). Every program takes `<scenario> <bootstrap> <prefix>` and prints one JSON
 * object on stdout.
 */
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { BIN_DIR, COMPAT_DIR, VENV_DIR } from './paths.js';
import type { StepId } from './install.js';

export interface Invocation {
  cmd: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
}

export interface ClientDef {
  readonly id: string;
  /** Library and version, for the matrix header. */
  readonly label: string;
  readonly needs: readonly StepId[];
  /** Scenario id -> why this client cannot run it. */
  readonly na: Readonly<Record<string, string>>;
  invocation(scenario: string, bootstrap: string, prefix: string): Invocation;
}

const TSX = ['--import', 'tsx'];

function nodeProgram(file: string): ClientDef['invocation'] {
  return (scenario, bootstrap, prefix) => ({
    cmd: process.execPath,
    args: [...TSX, join(COMPAT_DIR, 'js', file), scenario, bootstrap, prefix],
    env: { ...process.env, KAFKAJS_NO_PARTITIONER_WARNING: '1' },
  });
}

function pythonProgram(file: string): ClientDef['invocation'] {
  return (scenario, bootstrap, prefix) => ({
    cmd: join(VENV_DIR, 'bin', 'python'),
    args: [join(COMPAT_DIR, 'python', file), scenario, bootstrap, prefix],
    env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, // no __pycache__ in the source tree
  });
}

/** A Maven module's compiled classes and its runtime classpath (compat/<module>/target/). */
function javaClasspath(module: string): string {
  const cp = join(COMPAT_DIR, module, 'target', 'classpath.txt');
  const deps = existsSync(cp) ? readFileSync(cp, 'utf8').trim() : '';
  return `${join(COMPAT_DIR, module, 'target', 'classes')}:${deps}`;
}

const JAVA_OPTS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];

const NO_848 = 'the client has no KIP-848 consumer group protocol';
/** admin-single-node is what Kafka's own tools ask, and they ask it through the Java Admin. */
const JAVA_TOOLS = "Kafka's admin tools (kafka-topics, kafka-features, kafka-metadata-quorum, ...) use the Java Admin; the Java program stands for them";
/** kafka-tools runs Kafka's own tools (Java), so it is a cell of the java row only. */
const KAFKA_TOOLS = "Kafka's command-line tools are Java programs; they run in the java row";
const TOOLS_NA = { 'admin-single-node': JAVA_TOOLS, 'kafka-tools': KAFKA_TOOLS };
/**
 * compaction checks what the broker's log cleaner leaves; a client only produces and reads back, as in
 * produce-consume. Three clients with record encoders of their own (kafka-clients, kafkajs, librdkafka) stand for the rest.
 */
const CLEANER = "the scenario checks the broker's log cleaner, not the client: the java, kafkajs and confluent-kafka rows stand for it";

export const CLIENTS: readonly ClientDef[] = [
  {
    id: 'java',
    label: 'kafka-clients 4.4.0',
    needs: ['maven'],
    na: {},
    // kafka-tools runs Kafka's own tools, from their module (kafka-tools/pom.xml), all in one JVM.
    invocation: (scenario, bootstrap, prefix) =>
      scenario === 'kafka-tools'
        ? { cmd: 'java', args: [...JAVA_OPTS, '-cp', javaClasspath('kafka-tools'), 'dev.ledgerline.compat.Tools', scenario, bootstrap, prefix] }
        : { cmd: 'java', args: [...JAVA_OPTS, '-cp', javaClasspath('java'), 'dev.ledgerline.compat.Scenarios', scenario, bootstrap, prefix] },
  },
  {
    id: 'confluent-kafka',
    label: 'confluent-kafka 2.16.1 (librdkafka 2.16)',
    needs: ['python'],
    na: TOOLS_NA,
    invocation: pythonProgram('confluent_scenarios.py'),
  },
  {
    id: 'kcat',
    label: 'kcat 1.7.1 (librdkafka 2.0.2, Debian)',
    needs: ['kcat', 'node'],
    na: {
      'create-topic': 'kcat has no admin operations',
      configs: 'kcat has no admin operations',
      'delete-topic': 'kcat has no admin operations',
      'delete-records': 'kcat has no admin operations',
      'groups-admin': 'kcat has no admin operations',
      'group-848': NO_848,
      ...TOOLS_NA,
      compaction: CLEANER,
    },
    invocation: nodeProgram('kcat.ts'),
  },
  {
    id: 'kafka-python',
    label: 'kafka-python 3.0.12',
    needs: ['python'],
    na: { 'group-848': NO_848, ...TOOLS_NA, compaction: CLEANER },
    invocation: pythonProgram('kafka_python_scenarios.py'),
  },
  {
    id: 'kafkajs',
    label: 'kafkajs 2.2.4',
    needs: ['node'],
    na: { 'group-848': NO_848, ...TOOLS_NA },
    invocation: nodeProgram('kafkajs.ts'),
  },
  {
    id: 'platformatic',
    label: '@platformatic/kafka 1.35.0',
    needs: ['node'],
    na: { ...TOOLS_NA, compaction: CLEANER },
    invocation: nodeProgram('platformatic.ts'),
  },
  {
    id: 'franz-go',
    label: 'franz-go 1.22.3 (kadm 1.20.0)',
    needs: ['go'],
    na: { ...TOOLS_NA, compaction: CLEANER },
    invocation: (scenario, bootstrap, prefix) => ({ cmd: join(BIN_DIR, 'franz'), args: [scenario, bootstrap, prefix] }),
  },
  {
    id: 'sarama',
    label: 'sarama 1.61.1',
    needs: ['go'],
    na: { 'group-848': NO_848, ...TOOLS_NA, compaction: CLEANER },
    invocation: (scenario, bootstrap, prefix) => ({ cmd: join(BIN_DIR, 'sarama'), args: [scenario, bootstrap, prefix] }),
  },
];
