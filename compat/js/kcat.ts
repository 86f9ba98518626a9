/**
 * The kcat side of the compatibility suite (Debian's kcat 1.7.1 on librdkafka 2.0.2); steps as in
 * compat/README.md. kcat has no admin operations, so topics are created beforehand with kafkajs, and
 * the records of consume-offsets (which need explicit timestamps, which kcat cannot set) are produced
 * with kafkajs too; everything that is observed is observed through kcat.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { main, pattern, recordRepr, Run, STANDARD, standardRepr, waitFor, WAIT_MS } from './common.js';
import type { RecordRepr, Scenario } from './common.js';

interface KcatResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** librdkafka's error text from kcat's stderr ("% ERROR: ...", "Delivery failed ...: <reason>"). */
function kcatError(stderr: string): string | null {
  const lines = stderr.split('\n');
  for (const l of lines) {
    const m = /Delivery failed for message: (.*)$/.exec(l) ?? /% ERROR: (.*)$/.exec(l);
    if (m) return m[1].replace(/ \(after \d+ms[^)]*\)/, '').replace(/ \(broker \d+\)/, '').trim();
  }
  return null;
}

function errName(e: unknown): string {
  const err = e as { type?: string; name?: string; message?: string };
  return err?.type ?? err?.name ?? String(e);
}

class Kc extends Run {
  private adminClient: Admin | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), 'compat-kcat-'));
  private files = 0;

  constructor(bootstrap: string, prefix: string) {
    super(bootstrap, prefix, errName);
    this.closing(async () => rmSync(this.dir, { recursive: true, force: true }));
  }

  async admin(): Promise<Admin> {
    if (this.adminClient === null) {
      const k = new kafkajs.Kafka({ clientId: 'compat-kcat-setup', brokers: this.bootstrap.split(','), logLevel: kafkajs.logLevel.NOTHING });
      const a = k.admin();
      await a.connect();
      this.closing(() => a.disconnect());
      this.adminClient = a;
    }
    return this.adminClient;
  }

  /** Setup: creates a topic and waits for its partitions (kafkajs; kcat cannot). */
  async createReady(topic: string, numPartitions = 1, configs: Record<string, string> = {}): Promise<void> {
    const a = await this.admin();
    await a.createTopics({ topics: [{ topic, numPartitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }] });
    await waitFor(async () => (await a.fetchTopicMetadata({ topics: [topic] })).topics[0].partitions.length === numPartitions);
  }

  kcat(args: string[], opts: { input?: Buffer; timeoutMs?: number } = {}): Promise<KcatResult> {
    return new Promise((resolve) => {
      const child = spawn('kcat', ['-b', this.bootstrap, ...args], { stdio: [opts.input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
      const out: Buffer[] = [];
      let err = '';
      child.stdout?.on('data', (c: Buffer) => out.push(c));
      child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
      const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? WAIT_MS);
      child.on('error', (e) => {
        err += String(e);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout: Buffer.concat(out), stderr: err });
      });
      if (opts.input) child.stdin?.end(opts.input);
    });
  }

  /** A long-running kcat (consumer) whose stdout and stderr are read while it runs. */
  background(args: string[]): { child: ChildProcess; out: () => Buffer; err: () => string; exited: Promise<number | null> } {
    // -u: unbuffered output, so records show up while kcat runs.
    const child = spawn('kcat', ['-b', this.bootstrap, '-u', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    this.closing(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    return { child, out: () => Buffer.concat(out), err: () => err, exited };
  }

  file(content: Buffer): string {
    const f = join(this.dir, `m${this.files++}`);
    writeFileSync(f, content);
    return f;
  }

  /**
   * Produces one message per kcat run (a file is one message, so binary values need no delimiter);
   * the result is "ok" or librdkafka's error text.
   */
  async produceOne(topic: string, m: { key: Buffer | null; value: Buffer | null; headers?: Array<[string, Buffer]>; partition?: number }, extra: string[] = []): Promise<unknown> {
    const args = ['-P', '-t', topic, '-p', String(m.partition ?? 0), '-X', 'message.max.bytes=4194304', '-X', 'message.timeout.ms=10000', ...extra];
    if (m.key !== null) args.push('-k', m.key.toString());
    for (const [k, v] of m.headers ?? []) args.push('-H', `${k}=${v.toString()}`);
    let r: KcatResult;
    if (m.value === null || m.value.length === 0) {
      // kcat skips an empty file, so empty and null values go through stdin: "key\x01" with the key
      // delimiter \x01 and no message delimiter in the input; -Z turns the empty value into NULL.
      args.splice(args.indexOf('-k'), 2);
      if (m.value === null) args.push('-Z');
      r = await this.kcat([...args, '-K', '\\x01', '-D', '\\xff'], { input: Buffer.concat([m.key ?? Buffer.alloc(0), Buffer.from([1])]) });
    } else {
      r = await this.kcat([...args, this.file(m.value)]);
    }
    const e = kcatError(r.stderr);
    return e !== null || r.code !== 0 ? { error: e ?? `exit ${r.code}` } : 'ok';
  }

  async produceLines(topic: string, values: string[], extra: string[] = []): Promise<unknown> {
    const r = await this.kcat(['-P', '-t', topic, '-p', '0', ...extra], { input: Buffer.from(values.join('\n') + '\n') });
    const e = kcatError(r.stderr);
    return e !== null || r.code !== 0 ? { error: e ?? `exit ${r.code}` } : 'ok';
  }

  /** Consumes partition 0 from `offset` (kcat -o syntax) until count messages or the end. */
  async consume(topic: string, offset: string, count: number, extra: string[] = []): Promise<{ records: RecordRepr[]; ts: number[]; error: string | null }> {
    const r = await this.kcat(['-C', '-t', topic, '-p', '0', '-o', offset, '-c', String(count), '-e', '-f', '%p,%o,%T,%K,%S,%h\\n%k%s', ...extra]);
    return { ...parseRecords(r.stdout), error: kcatError(r.stderr) };
  }

  /** kcat -Q: the offset for a timestamp (-1: end, -2: beginning), or librdkafka's error. */
  async query(topic: string, ts: number): Promise<unknown> {
    const r = await this.kcat(['-Q', '-t', `${topic}:0:${ts}`]);
    const m = /offset (-?\d+)/.exec(r.stdout.toString());
    return m ? Number(m[1]) : { error: kcatError(r.stderr) ?? r.stderr.trim().split('\n').pop() };
  }

  async metadata(topic?: string): Promise<{ brokers: unknown[]; topics: Array<{ topic: string; error?: string; partitions: Array<{ partition: number; leader: number; replicas: unknown[]; isrs: unknown[] }> }> }> {
    const r = await this.kcat(['-L', '-J', ...(topic ? ['-t', topic] : [])]);
    return JSON.parse(r.stdout.toString());
  }
}

/** Parses '%p,%o,%T,%K,%S,%h\n%k%s' records: lengths first, so binary keys and values are safe. */
function parseRecords(buf: Buffer): { records: RecordRepr[]; ts: number[] } {
  const records: RecordRepr[] = [];
  const ts: number[] = [];
  let off = 0;
  while (off < buf.length) {
    const nl = buf.indexOf(0x0a, off);
    if (nl < 0) break;
    const line = buf.subarray(off, nl).toString();
    const parts = line.split(',');
    const [p, o, t, klen, vlen] = parts.slice(0, 5).map(Number);
    const headerText = parts.slice(5).join(',');
    off = nl + 1;
    const key = klen >= 0 ? buf.subarray(off, off + klen) : null;
    off += Math.max(0, klen);
    const value = vlen >= 0 ? buf.subarray(off, off + vlen) : null;
    off += Math.max(0, vlen);
    const headers: Array<[string, Buffer | null]> = headerText === '' ? [] : headerText.split(',').map((kv) => {
      const eq = kv.indexOf('=');
      return [kv.slice(0, eq), Buffer.from(kv.slice(eq + 1))];
    });
    records.push(recordRepr(p, o, key, value, headers));
    ts.push(t);
  }
  return { records, ts };
}

/** Latest "assigned:" partitions a kcat -G member reported on stderr. */
function assignedFrom(stderr: string, topic: string): number[] {
  const lines = stderr.split('\n').filter((l) => l.includes('rebalanced'));
  const last = lines.pop();
  if (!last || !last.includes('assigned:')) return [];
  const parts: number[] = [];
  const re = new RegExp(`${topic.replace(/[-.]/g, '\\$&')} \\[(\\d+)\\]`, 'g');
  for (let m = re.exec(last); m !== null; m = re.exec(last)) parts.push(Number(m[1]));
  return parts.sort((a, b) => a - b);
}

// ------------------------------------------------------------------------------------------------ scenarios

const metadata: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 3);
  const md = await r.metadata();
  r.result.listed = r.mine(md.topics.map((x) => x.topic));
  const mine = (await r.metadata(t)).topics.find((x) => x.topic === t);
  r.result.partitions = (mine?.partitions ?? [])
    .sort((a, b) => a.partition - b.partition)
    .map((p) => ({ partition: p.partition, leaderKnown: p.leader >= 0, replicas: p.replicas.length, isr: p.isrs.length }));
  r.result.brokers = md.brokers.length;
  const missing = (await r.metadata(`${t}-missing`)).topics.find((x) => x.topic === `${t}-missing`);
  r.result.missing = missing?.error ?? null;
  r.check(md.topics.some((x) => x.topic === t), 'metadata does not list the created topic');
};

const produceConsume: Scenario<Kc> = async (r) => {
  const codecs: Record<string, unknown> = {};
  for (const codec of ['none', 'gzip', 'snappy', 'lz4', 'zstd']) {
    const t = `${r.prefix}-${codec}`;
    await r.createReady(t, 1, { 'max.message.bytes': '4194304' });
    const sent: unknown[] = [];
    for (const s of STANDARD) sent.push(await r.produceOne(t, s, ['-X', `compression.codec=${codec}`]));
    const { records, error } = await r.consume(t, 'beginning', 5);
    codecs[codec] = { produced: sent, records, error };
    r.check(records.length === 5, `${codec}: read back ${records.length} of 5 records`);
    records.forEach((rec, i) => r.check(JSON.stringify(rec) === JSON.stringify(standardRepr(i)), `${codec}: record ${i} read back differs from what was produced`));
  }
  r.result.codecs = codecs;
};

const consumeOffsets: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const k = new kafkajs.Kafka({ clientId: 'compat-kcat-setup', brokers: r.bootstrap.split(','), logLevel: kafkajs.logLevel.NOTHING });
  const p = k.producer();
  await p.connect();
  r.closing(() => p.disconnect());
  await p.send({ topic: t, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `m${i}`, timestamp: String(base + i * 1000) })) });
  const earliest = await r.consume(t, 'beginning', 10);
  r.result.earliest = earliest.records.map((x, i) => ({ o: x.o, v: x.v, ts: earliest.ts[i] - base }));
  r.result.listOffsets = {
    earliest: await r.query(t, -2),
    latest: await r.query(t, -1),
    'ts+4500': await r.query(t, base + 4500),
    'ts+100000': await r.query(t, base + 100_000),
  };
  r.result.fromTimestamp = (await r.consume(t, `s@${base + 4500}`, 5)).records.map((x) => x.o);
  const latest = r.background(['-C', '-t', t, '-p', '0', '-o', 'end', '-c', '2', '-X', 'enable.partition.eof=true', '-f', '%o\\n']);
  // kcat reports reaching the end of the partition once the end offset is resolved and fetched.
  await waitFor(() => /Reached end of topic/.test(latest.err()));
  r.result.latestPosition = Number(/Reached end of topic .* at offset (\d+)/.exec(latest.err())?.[1] ?? -1);
  await r.produceLines(t, ['m10', 'm11']);
  await Promise.race([latest.exited, waitFor(() => false, WAIT_MS)]);
  r.result.fromLatest = latest.out().toString().split('\n').filter(Boolean).map(Number);
  r.check(earliest.records.length === 10, `earliest read ${earliest.records.length} of 10`);
};

const groupResume: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  await r.createReady(t, 1);
  await r.produceLines(t, Array.from({ length: 10 }, (_, i) => `v${i}`));
  const committed = async (): Promise<unknown> => {
    const res = await (await r.admin()).fetchOffsets({ groupId: g, topics: [t] });
    return Number(res[0].partitions.find((x) => x.partition === 0)?.offset ?? -1);
  };
  // librdkafka commits the offsets of the messages it handed to kcat when kcat closes.
  const first = await r.kcat(['-G', g, '-X', 'auto.offset.reset=earliest', '-c', '4', '-f', '%o\\n', t]);
  r.result.firstRead = first.stdout.toString().split('\n').filter(Boolean).map(Number);
  r.result.committedAfterFirst = await committed();
  const second = await r.kcat(['-G', g, '-X', 'auto.offset.reset=earliest', '-c', '6', '-f', '%o\\n', t]);
  r.result.secondRead = second.stdout.toString().split('\n').filter(Boolean).map(Number);
  r.result.committedFinal = await committed();
};

const groupSplit: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  await r.createReady(t, 4);
  const members = [0, 1].map(() =>
    r.background(['-G', g, '-X', 'auto.offset.reset=earliest', '-X', 'session.timeout.ms=10000', '-X', 'heartbeat.interval.ms=500', '-f', '%p\\n', t]),
  );
  const balanced = (): boolean => {
    const [x, y] = members.map((m) => assignedFrom(m.err(), t));
    return x.length > 0 && y.length > 0 && new Set([...x, ...y]).size === 4 && x.length + y.length === 4;
  };
  const stable = await waitFor(balanced);
  if (stable) {
    for (let p = 0; p < 4; p++) await r.produceOne(t, { key: null, value: Buffer.from(`p${p}`), partition: p });
    await waitFor(() => members.reduce((n, m) => n + m.out().toString().split('\n').filter(Boolean).length, 0) >= 4);
  }
  const final = members.map((m) => assignedFrom(m.err(), t));
  const seen = members.map((m) => m.out().toString().split('\n').filter(Boolean).map(Number));
  for (const m of members) m.child.kill('SIGTERM');
  await Promise.all(members.map((m) => Promise.race([m.exited, waitFor(() => false, 10_000)])));
  r.result.balanced = stable;
  r.result.assignment = [...final].sort((a, b) => (a[0] ?? -1) - (b[0] ?? -1)); // librdkafka's default: range
  r.result.sizes = final.map((x) => x.length).sort();
  r.result.consumedPartitions = [...new Set(seen.flat())].sort();
  r.result.consumedByOwner = seen.every((ps, i) => ps.every((p) => final[i].includes(p)));
  r.check(stable, 'the two members never split the 4 partitions between them');
};

const idempotent: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const sent: unknown[] = [];
  for (let batch = 0; batch < 4; batch++) {
    sent.push(await r.produceLines(t, Array.from({ length: 5 }, (_, j) => `i${batch * 5 + j}`), ['-X', 'enable.idempotence=true']));
  }
  r.result.produced = sent;
  const { records } = await r.consume(t, 'beginning', 20);
  r.result.offsets = records.map((x) => x.o);
  r.result.values = records.map((x) => x.v);
  r.check(records.length === 20, `read back ${records.length} of 20`);
};

const errMissingTopic: Scenario<Kc> = async (r) => {
  const t = `${r.prefix}-missing`;
  r.result.produce = await r.produceOne(t, { key: null, value: Buffer.from('x') }, ['-X', 'message.timeout.ms=5000']);
  r.result.metadata = (await r.metadata(t)).topics.find((x) => x.topic === t)?.error ?? null;
  r.result.createdByProduce = (await (await r.admin()).listTopics()).includes(t);
};

const errOffsetOutOfRange: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  await r.produceLines(t, Array.from({ length: 5 }, (_, i) => `o${i}`));
  r.result.resetError = (await r.consume(t, '100', 1, ['-X', 'auto.offset.reset=error'])).error;
  r.result.resetEarliest = (await r.consume(t, '100', 5, ['-X', 'auto.offset.reset=earliest'])).records.map((x) => x.o);
  const latest = r.background(['-C', '-t', t, '-p', '0', '-o', '100', '-X', 'auto.offset.reset=latest', '-X', 'enable.partition.eof=true', '-f', '%o\\n']);
  await waitFor(() => /Reached end of topic/.test(latest.err()));
  r.result.resetLatestPosition = Number(/Reached end of topic .* at offset (\d+)/.exec(latest.err())?.[1] ?? -1);
  latest.child.kill('SIGTERM');
};

const errOversize: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, { 'max.message.bytes': '1024' });
  r.result.oversize = await r.produceOne(t, { key: null, value: pattern(4000) });
  r.result.small = await r.produceOne(t, { key: null, value: Buffer.from('ok') });
  r.result.read = (await r.consume(t, 'beginning', 1)).records;
};

const transactions: Scenario<Kc> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  // kcat sends everything it reads in one transaction and commits it at the end; no abort.
  r.result.produce = await r.produceLines(t, ['t0', 't1', 't2'], ['-X', `transactional.id=${r.prefix}-tx`]);
  const committed = await r.consume(t, 'beginning', 3, ['-X', 'isolation.level=read_committed']);
  r.result.readCommitted = committed.records.map((x) => `${x.o}:${x.v}`);
  r.result.latest = await r.query(t, -1);
};

main<Kc>(
  {
    metadata,
    'produce-consume': produceConsume,
    'consume-offsets': consumeOffsets,
    'group-resume': groupResume,
    'group-split': groupSplit,
    idempotent,
    'err-missing-topic': errMissingTopic,
    'err-offset-out-of-range': errOffsetOutOfRange,
    'err-oversize': errOversize,
    transactions,
  },
  (bootstrap, prefix) => new Kc(bootstrap, prefix),
);
