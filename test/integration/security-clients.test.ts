/**
 * Real Kafka clients over the broker's secured listeners: each produces a handful of records and reads them back
 * as a member of a consumer group, checking every record's key and value, once per mode:
 *
 *   SASL_SSL  SCRAM-SHA-512 over TLS, the user created with AlterUserScramCredentials on the PLAINTEXT listener
 *   SSL       TLS with ssl.client.auth=required: the client presents a certificate the broker's trust store signs
 *
 *   client                          driven by                                  built by
 *   kcat (librdkafka)               kcat -P, kcat -G, with -X settings         Debian's package
 *   confluent-kafka, kafka-python   compat/python/security_check.py            the compat venv
 *   kafka-clients (Java)            dev.ledgerline.compat.SecurityCheck        the compat Maven build, else javac here
 *   franz-go, sarama                compat/go/securitycheck                    go build here, with the compat Go caches
 *   kafkajs                         this process
 *
 * The programs share one contract (compat/python/security_check.py): produce N records (key "k<i>", value
 * "<topic>:<i>") to partition 0 with acks=all, read the topic from the start with a group, print JSON lines.
 * A group makes each client ask FindCoordinator and connect to the coordinator the broker names, so the address
 * a secured listener advertises is checked too. Topics are created beforehand over PLAINTEXT.
 *
 * A client whose runtime is missing is skipped, with the reason; LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1 makes that a
 * failure. A mode a client cannot do is a skipped cell naming why (`cannot`): kcat on librdkafka before 2.6.1 has no
 * SCRAM that Kafka 4 accepts (see `kcat` below). The cells run one after another against one broker.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { goEnv } from '../../compat/lib/install.js';
import { COMPAT_DIR, GO_DIR, VENV_DIR } from '../../compat/lib/paths.js';
import { lastLine, run } from '../../compat/lib/proc.js';
import { probe } from '../support/probe.js';
import { AlterUserScramCredentialsApi } from '../../protocol/messages/051-alter-user-scram-credentials.gen.js';
import { BrokerProcess } from '../support/broker-process.js';
import { TestPki, type IssuedCertificate } from '../support/certs.js';
import { runJsonLinesProgram, type ProgramRun } from '../support/json-lines-program.js';
import { RawConnection, waitFor } from '../support/raw-connection.js';

const { Kafka, logLevel } = kafkajs;

const REQUIRE = process.env.LEDGERLINE_REQUIRE_SECURITY_CLIENTS === '1';
const COUNT = 5;
const USER = 'sec-clients';
const PASSWORD = 'sec-clients-secret';
/** How long one program may run: its own waits are 30 s for the produce and 30 s for the reading. */
const PROGRAM_MS = 75_000;
const CELL_MS = 90_000;

type Mode = 'SASL_SSL' | 'SSL';
const MODES: readonly Mode[] = ['SASL_SSL', 'SSL'];
const MODE_TEXT: Record<Mode, string> = { SASL_SSL: 'SASL_SSL with SCRAM-SHA-512', SSL: 'SSL with a client certificate' };

let pki: TestPki;
let client: IssuedCertificate;
let broker: BrokerProcess;

const port = (listener: string): number => {
  const p = broker.ports.get(listener);
  if (p === undefined) throw new Error(`no ${listener} listener`);
  return p;
};
const bootstrap = (mode: Mode): string => `127.0.0.1:${port(mode)}`;
const topicOf = (id: string, mode: Mode): string => `sec-${id}-${mode.toLowerCase().replace('_', '-')}`;

/** The security settings of a mode in the programs' contract (compat/python/security_check.py). */
function contractArgs(mode: Mode, dash = '--'): string[] {
  const a = [`${dash}security-protocol`, mode, `${dash}ca-location`, pki.ca.certPath];
  return mode === 'SSL'
    ? [...a, `${dash}certificate-location`, client.certPath, `${dash}key-location`, client.keyPath]
    : [...a, `${dash}sasl-mechanism`, 'SCRAM-SHA-512', `${dash}username`, USER, `${dash}password`, PASSWORD];
}

const JAVA_OPTS = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1'];
const JAVA_SOURCE = join(COMPAT_DIR, 'java', 'src', 'main', 'java', 'dev', 'ledgerline', 'compat', 'SecurityCheck.java');
const JAVA_CLASSES = join(COMPAT_DIR, 'java', 'target', 'classes');
const JAVA_CLASSPATH = join(COMPAT_DIR, 'java', 'target', 'classpath.txt');
const PYTHON = join(VENV_DIR, 'bin', 'python');
/** Temporary directories this file made (the Go binary, Java classes compiled here). */
const scratch: string[] = [];

interface SecurityClient {
  readonly id: string;
  readonly label: string;
  /** Why the client cannot run on this machine, or null. */
  readonly missing: string | null;
  /** Modes the client cannot do, with the reason: those cells are skipped, whatever LEDGERLINE_REQUIRE_SECURITY_CLIENTS says. */
  readonly cannot?: Partial<Record<Mode, string>>;
  /** Builds what the client needs, once. */
  prepare?(): Promise<void>;
  /** Produces COUNT records to `topic` and reads them back with `group`; lines as the contract prints them. */
  roundTrip(mode: Mode, topic: string, group: string): Promise<ProgramRun>;
}


function pythonMissing(module: string): string | null {
  if (!existsSync(PYTHON)) return `no Python venv at ${PYTHON} (npm run compat -- --clients ${module === 'kafka' ? 'kafka-python' : 'confluent-kafka'} installs it)`;
  const why = probe(PYTHON, ['-c', `import ${module}`]);
  return why === null ? null : `${PYTHON} cannot import ${module}: ${why}`;
}

function pythonClient(id: 'confluent-kafka' | 'kafka-python', label: string, module: string): SecurityClient {
  return {
    id,
    label,
    missing: pythonMissing(module),
    roundTrip: (mode, topic, group) =>
      runJsonLinesProgram(PYTHON, [join(COMPAT_DIR, 'python', 'security_check.py'), id, '--bootstrap', bootstrap(mode), '--topic', topic, '--count', String(COUNT), '--group', group, ...contractArgs(mode)], {
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
        timeoutMs: PROGRAM_MS,
      }),
  };
}

/** kcat takes librdkafka's settings with -X; it produces from stdin and prints what it reads with -J. */
function kcatSettings(mode: Mode): string[] {
  const s = mode === 'SSL'
    ? { 'security.protocol': 'ssl', 'ssl.ca.location': pki.ca.certPath, 'ssl.certificate.location': client.certPath, 'ssl.key.location': client.keyPath }
    : { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': pki.ca.certPath, 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': USER, 'sasl.password': PASSWORD };
  return Object.entries(s).flatMap(([k, v]) => ['-X', `${k}=${v}`]);
}

/** The librdkafka kcat links, from `kcat -V` ("... librdkafka 2.0.2 builtin.features=..."), as [major, minor, patch]. */
function kcatLibrdkafka(): [number, number, number] | null {
  const m = /librdkafka (\d+)\.(\d+)\.(\d+)/.exec(spawnSync('kcat', ['-V'], { encoding: 'utf8' }).stdout ?? '');
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : null;
}
const KCAT_LIBRDKAFKA = kcatLibrdkafka();

const kcat: SecurityClient = {
  id: 'kcat',
  label: `kcat (librdkafka${KCAT_LIBRDKAFKA ? ` ${KCAT_LIBRDKAFKA.join('.')}` : ''})`,
  missing: probe('kcat', ['-V']),
  // librdkafka before 2.6.1 puts its client nonce twice in the SCRAM client-final message (r=<cnonce><cnonce><snonce>;
  // confluentinc/librdkafka#4895, "present since v0.0.99"). Kafka 4's ScramSaslServer, like this broker, requires
  // the nonce it sent and nothing more (RFC 5802 §5.1; kafka-clients 4.4.0 compares with String.equals), and
  // answers "Invalid client nonce in the final client message." (the broker logs it as the reason of
  // SASL_AUTHENTICATION_FAILED). Debian's kcat 1.7.1 links librdkafka 2.0.2, so it cannot sign in with SCRAM to
  // Kafka 4 either; confluent-kafka's librdkafka (2.16) carries the SCRAM-SHA-512 cell for librdkafka.
  cannot:
    KCAT_LIBRDKAFKA !== null && KCAT_LIBRDKAFKA[0] * 1e6 + KCAT_LIBRDKAFKA[1] * 1e3 + KCAT_LIBRDKAFKA[2] < 2_006_001
      ? { SASL_SSL: `librdkafka ${KCAT_LIBRDKAFKA.join('.')} < 2.6.1 repeats the client nonce in SCRAM, which Kafka 4 refuses (confluentinc/librdkafka#4895)` }
      : {},
  async roundTrip(mode, topic, group) {
    const input = Array.from({ length: COUNT }, (_, i) => `k${i}=${topic}:${i}\n`).join('');
    const produced = await run('kcat', ['-b', bootstrap(mode), '-P', '-t', topic, '-p', '0', '-K', '=', '-X', 'acks=all', '-X', 'message.timeout.ms=30000', ...kcatSettings(mode)], { input, timeoutMs: PROGRAM_MS });
    if (produced.code !== 0 || produced.timedOut) return { code: produced.code ?? 1, lines: [{ error: lastLine(produced.stderr) || 'kcat -P timed out' }], stdout: produced.stdout, stderr: produced.stderr };
    const consumed = await run('kcat', ['-b', bootstrap(mode), '-G', group, topic, '-c', String(COUNT), '-J', '-X', 'auto.offset.reset=earliest', '-X', 'enable.auto.commit=false', ...kcatSettings(mode)], { timeoutMs: 40_000 });
    const records = consumed.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { partition: number; offset: number; key: string | null; payload: string | null })
      .map((r) => ({ partition: r.partition, offset: r.offset, key: r.key, value: r.payload }));
    const tail = consumed.timedOut ? [{ timeout: true, consumed: records.length }] : [];
    return { code: consumed.timedOut ? 2 : consumed.code, lines: [{ produced: COUNT }, ...records, ...tail], stdout: consumed.stdout, stderr: produced.stderr + consumed.stderr };
  },
};

/** The Java program's classes: compat/java/target/classes when the compat Maven build compiled it, else javac into a temporary directory. */
let javaClasses: string | null = null;
const JAVA_BUILT = join(JAVA_CLASSES, 'dev', 'ledgerline', 'compat', 'SecurityCheck.class');
const javaBuilt = (): boolean => existsSync(JAVA_BUILT) && statSync(JAVA_BUILT).mtimeMs >= statSync(JAVA_SOURCE).mtimeMs;
const java: SecurityClient = {
  id: 'java',
  label: 'kafka-clients (Java)',
  missing:
    probe('java', ['-version']) ??
    (existsSync(JAVA_CLASSPATH) ? null : `${JAVA_CLASSPATH} is missing (npm run compat -- --clients java builds it)`) ??
    (javaBuilt() ? null : probe('javac', ['-version'])),
  async prepare() {
    if (javaBuilt()) {
      javaClasses = JAVA_CLASSES;
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-security-java-'));
    scratch.push(dir);
    const r = await run('javac', ['--release', '17', '-d', dir, '-cp', readFileSync(JAVA_CLASSPATH, 'utf8').trim(), JAVA_SOURCE], { timeoutMs: 120_000 });
    if (r.code !== 0) throw new Error(`javac SecurityCheck.java failed: ${r.stderr || r.stdout}`);
    javaClasses = dir;
  },
  roundTrip(mode, topic, group) {
    const stores = mode === 'SSL'
      ? ['--security-protocol', 'SSL', '--ca-location', pki.ca.certPath, '--keystore-location', client.keystorePath]
      : contractArgs(mode);
    const cp = `${javaClasses}:${readFileSync(JAVA_CLASSPATH, 'utf8').trim()}`;
    return runJsonLinesProgram('java', [...JAVA_OPTS, '-cp', cp, 'dev.ledgerline.compat.SecurityCheck', '--bootstrap', bootstrap(mode), '--topic', topic, '--count', String(COUNT), '--group', group, ...stores], { timeoutMs: PROGRAM_MS });
  },
};

/** compat/go/securitycheck, built once into a temporary directory with the compat suite's Go caches. */
let goBinary: Promise<string> | null = null;
function buildGo(): Promise<string> {
  goBinary ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledgerline-security-go-'));
    scratch.push(dir);
    const r = await run('go', ['build', '-o', `${dir}/`, './securitycheck'], { cwd: join(COMPAT_DIR, 'go'), env: goEnv(), timeoutMs: 240_000 });
    if (r.code !== 0) throw new Error(`go build ./securitycheck failed: ${r.timedOut ? 'timed out' : r.stderr || r.stdout}`);
    return join(dir, 'securitycheck');
  })();
  return goBinary;
}
const goMissing = probe('go', ['version']) ?? (existsSync(join(GO_DIR, 'mod')) ? null : `the compat Go module cache ${join(GO_DIR, 'mod')} is missing (npm run compat -- --clients franz fills it)`);
function goClient(id: 'franz-go' | 'sarama', label: string, flag: string): SecurityClient {
  return {
    id,
    label,
    missing: goMissing,
    prepare: async () => void (await buildGo()),
    roundTrip: async (mode, topic, group) =>
      runJsonLinesProgram(await buildGo(), ['-client', flag, '-bootstrap', bootstrap(mode), '-topic', topic, '-count', String(COUNT), '-group', group, ...contractArgs(mode, '-')], { timeoutMs: PROGRAM_MS }),
  };
}

const kafkajsClient: SecurityClient = {
  id: 'kafkajs',
  label: 'kafkajs',
  missing: null,
  async roundTrip(mode, topic, group) {
    const k = new Kafka({
      clientId: 'security-check-kafkajs',
      brokers: [bootstrap(mode)],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3 },
      ...(mode === 'SSL'
        ? { ssl: { ca: [pki.ca.cert], cert: client.cert, key: client.key } }
        : { ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'scram-sha-512' as const, username: USER, password: PASSWORD } }),
    });
    const lines: unknown[] = [];
    try {
      const producer = k.producer();
      await producer.connect();
      try {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: COUNT }, (_, i) => ({ partition: 0, key: `k${i}`, value: `${topic}:${i}` })) });
      } finally {
        await producer.disconnect();
      }
      lines.push({ produced: COUNT });
      const consumer = k.consumer({ groupId: group, maxWaitTimeInMs: 500 });
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        let got = 0;
        await consumer.run({
          autoCommit: false,
          eachMessage: async ({ partition, message }) => {
            lines.push({ partition, offset: Number(message.offset), key: message.key?.toString() ?? null, value: message.value?.toString() ?? null });
            got++;
          },
        });
        await waitFor(`${COUNT} records read back from ${topic}`, () => got >= COUNT, 30_000);
      } finally {
        await consumer.disconnect();
      }
      return { code: 0, lines, stdout: '', stderr: '' };
    } catch (e) {
      return { code: 1, lines: [...lines, { error: `${(e as Error).name}: ${(e as Error).message}` }], stdout: '', stderr: (e as Error).stack ?? '' };
    }
  },
};

const CLIENTS: readonly SecurityClient[] = [
  kcat,
  pythonClient('confluent-kafka', 'confluent-kafka (Python, librdkafka)', 'confluent_kafka'),
  pythonClient('kafka-python', 'kafka-python', 'kafka'),
  java,
  goClient('franz-go', 'franz-go', 'franz'),
  goClient('sarama', 'sarama', 'sarama'),
  kafkajsClient,
];

for (const c of CLIENTS) {
  if (c.missing !== null && !REQUIRE) console.warn(`security-clients: ${c.label} skipped: ${c.missing}`);
  else for (const [mode, why] of Object.entries(c.cannot ?? {})) console.warn(`security-clients: ${c.label} over ${MODE_TEXT[mode as Mode]} skipped: ${why}`);
}
const anyRuns = REQUIRE || CLIENTS.some((c) => c.missing === null);

/** SCRAM-SHA-512 credentials for `user` through AlterUserScramCredentials on the PLAINTEXT listener, as kafka-configs sends them. */
async function createScramUser(user: string, password: string, iterations = 8192): Promise<void> {
  const salt = randomBytes(24);
  const saltedPassword = pbkdf2Sync(password, salt, iterations, 64, 'sha512');
  const c = await RawConnection.connect(port('PLAINTEXT'));
  try {
    const res = await c.request(AlterUserScramCredentialsApi, 0, { deletions: [], upsertions: [{ name: user, mechanism: 2, iterations, salt, saltedPassword }] });
    expect(res.results).toEqual([expect.objectContaining({ user, errorCode: 0 })]);
  } finally {
    c.destroy();
  }
}

beforeAll(async () => {
  if (!anyRuns) return;
  pki = TestPki.create();
  client = pki.client('sec-client', '/C=US/O=Ledgerline/OU=Test/CN=sec-client');
  broker = await BrokerProcess.start({
    configs: {
      listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': pki.server('broker').keystorePath,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': pki.ca.certPath,
      'listener.name.ssl.ssl.client.auth': 'required',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-512',
      'group.initial.rebalance.delay.ms': '0',
    },
  });
  await createScramUser(USER, PASSWORD);
  const admin = new Kafka({ clientId: 'security-clients-setup', brokers: [`127.0.0.1:${port('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: CLIENTS.flatMap((c) => MODES.map((m) => ({ topic: topicOf(c.id, m), numPartitions: 1 }))), waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}, 60_000);

afterAll(async () => {
  await broker?.stop();
  pki?.cleanup();
  await goBinary?.catch(() => undefined);
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

/** The client's stderr and the broker's log lines since the cell began, for a failure message. */
function explain(r: ProgramRun, logsFrom: number): string {
  const stderr = r.stderr.split('\n').filter((l) => l.trim() !== '').slice(-25).join('\n');
  return `client stderr:\n${stderr}\nbroker log since the cell began:\n${broker.logs.slice(logsFrom).slice(-30).join('\n')}`;
}

for (const c of CLIENTS) {
  describe.skipIf(c.missing !== null && !REQUIRE)(c.missing !== null && !REQUIRE ? `${c.label} (missing: ${c.missing})` : c.label, () => {
    beforeAll(async () => {
      if (c.missing !== null) throw new Error(`LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1, but ${c.label} cannot run: ${c.missing}`);
      await c.prepare?.();
    }, 240_000);

    for (const mode of MODES) {
      const cannot = c.cannot?.[mode];
      const title = `produces ${COUNT} records and reads them back over ${MODE_TEXT[mode]}`;
      if (cannot !== undefined) {
        it.skip(`${title} (cannot: ${cannot})`, () => undefined);
        continue;
      }
      it(title, async () => {
        const topic = topicOf(c.id, mode);
        const logsFrom = broker.logs.length;
        const r = await c.roundTrip(mode, topic, `${topic}-readers`);
        const why = `${c.label} over ${MODE_TEXT[mode]}:\n${explain(r, logsFrom)}`;
        expect(r.lines, why).toEqual([
          { produced: COUNT },
          ...Array.from({ length: COUNT }, (_, i) => ({ partition: 0, offset: i, key: `k${i}`, value: `${topic}:${i}` })),
        ]);
        expect(r.code, why).toBe(0);
      }, CELL_MS);
    }
  });
}

/** Kafka's own kafka-configs (org.apache.kafka.tools.ConfigCommand, from the compat kafka-tools build). */
const KAFKA_TOOLS_CLASSPATH = join(COMPAT_DIR, 'kafka-tools', 'target', 'classpath.txt');
const kafkaConfigsMissing = probe('java', ['-version']) ?? (existsSync(KAFKA_TOOLS_CLASSPATH) ? null : `${KAFKA_TOOLS_CLASSPATH} is missing (npm run compat -- --clients java builds it)`);

describe.skipIf(kafkaConfigsMissing !== null && !REQUIRE)(`kafka-configs --entity-type users${kafkaConfigsMissing !== null && !REQUIRE ? ` (missing: ${kafkaConfigsMissing})` : ''}`, () => {
  it('creates a SCRAM-SHA-512 user that then signs in over SASL_SSL, and removes it', async () => {
    if (kafkaConfigsMissing !== null) throw new Error(`LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1, but kafka-configs cannot run: ${kafkaConfigsMissing}`);
    const cp = readFileSync(KAFKA_TOOLS_CLASSPATH, 'utf8').trim();
    const kafkaConfigs = (...args: string[]) => run('java', ['-cp', cp, 'org.apache.kafka.tools.ConfigCommand', '--bootstrap-server', `127.0.0.1:${port('PLAINTEXT')}`, '--entity-type', 'users', '--entity-name', 'configs-user', ...args], { timeoutMs: 60_000 });
    const added = await kafkaConfigs('--alter', '--add-config', 'SCRAM-SHA-512=[iterations=8192,password=configs-secret]');
    expect(added.stdout, added.stderr).toContain('Completed updating config for user configs-user.');
    const signIn = async (password: string) => {
      const admin = new Kafka({ clientId: 'kafka-configs-user', brokers: [`127.0.0.1:${port('SASL_SSL')}`], ssl: { ca: [pki.ca.cert] }, sasl: { mechanism: 'scram-sha-512', username: 'configs-user', password }, logLevel: logLevel.NOTHING, retry: { retries: 0 } }).admin();
      try {
        await admin.connect();
        return (await admin.describeCluster()).brokers.length;
      } finally {
        await admin.disconnect();
      }
    };
    expect(await signIn('configs-secret')).toBe(1);
    await expect(signIn('wrong')).rejects.toMatchObject({ name: 'KafkaJSSASLAuthenticationError' });
    const deleted = await kafkaConfigs('--alter', '--delete-config', 'SCRAM-SHA-512');
    expect(deleted.stdout, deleted.stderr).toContain('Completed updating config for user configs-user.');
    await expect(signIn('configs-secret')).rejects.toMatchObject({ name: 'KafkaJSSASLAuthenticationError' });
  }, 120_000);
});

describe.skipIf(kafkaConfigsMissing !== null && !REQUIRE)(`kafka-configs --entity-type brokers${kafkaConfigsMissing !== null && !REQUIRE ? ` (missing: ${kafkaConfigsMissing})` : ''}`, () => {
  it('sets, describes and deletes a per-broker dynamic config and a cluster-level default', async () => {
    if (kafkaConfigsMissing !== null) throw new Error(`LEDGERLINE_REQUIRE_SECURITY_CLIENTS=1, but kafka-configs cannot run: ${kafkaConfigsMissing}`);
    const cp = readFileSync(KAFKA_TOOLS_CLASSPATH, 'utf8').trim();
    const admin = new Kafka({ clientId: 'kafka-configs-brokers', brokers: [`127.0.0.1:${port('PLAINTEXT')}`], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    const nodeId = String((await admin.describeCluster()).brokers[0]!.nodeId);
    await admin.disconnect();
    const kafkaConfigs = (...args: string[]) => run('java', ['-cp', cp, 'org.apache.kafka.tools.ConfigCommand', '--bootstrap-server', `127.0.0.1:${port('PLAINTEXT')}`, '--entity-type', 'brokers', ...args], { timeoutMs: 60_000 });
    const defaulted = await kafkaConfigs('--entity-default', '--alter', '--add-config', 'log.retention.ms=7200000');
    expect(defaulted.stdout, defaulted.stderr).toContain('Completed updating default config for brokers in the cluster.');
    const own = await kafkaConfigs('--entity-name', nodeId, '--alter', '--add-config', 'log.retention.ms=3600000');
    expect(own.stdout, own.stderr).toContain(`Completed updating config for broker ${nodeId}.`);
    const described = await kafkaConfigs('--entity-name', nodeId, '--describe');
    expect(described.stdout, described.stderr).toContain('log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=3600000, DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=7200000');
    const refused = await kafkaConfigs('--entity-name', nodeId, '--alter', '--add-config', 'min.insync.replicas=2');
    expect(refused.stdout + refused.stderr).toContain('Broker-level min.insync.replicas cannot be altered while ELR is enabled.');
    const removed = await kafkaConfigs('--entity-name', nodeId, '--alter', '--delete-config', 'log.retention.ms');
    expect(removed.stdout, removed.stderr).toContain(`Completed updating config for broker ${nodeId}.`);
    expect((await kafkaConfigs('--entity-name', nodeId, '--describe')).stdout).not.toContain('DYNAMIC_BROKER_CONFIG');
    await kafkaConfigs('--entity-default', '--alter', '--delete-config', 'log.retention.ms');
  }, 120_000);
});
