/** The @platformatic/kafka side of the compatibility suite; steps as in compat/README.md. */
import {
  Admin,
  CompressionAlgorithms,
  ConfigResourceTypes,
  ConfigSources,
  Consumer,
  IncrementalAlterConfigOperationTypes,
  Producer,
} from '@platformatic/kafka';
import type { CompressionAlgorithmValue, Message, MessagesStream, ProduceOptions } from '@platformatic/kafka';
import { main, pattern, recordRepr, repr, Run, STANDARD, standardRepr, waitFor, WAIT_MS, within } from './common.js';
import type { RecordRepr, Scenario } from './common.js';

/** Kafka's error name from a ProtocolError (apiId), through MultipleErrors/ResponseError and causes. */
function errName(e: unknown): string {
  const err = e as { apiId?: string; name?: string; code?: string; errors?: unknown[]; cause?: unknown };
  if (err?.apiId) return err.apiId;
  if (Array.isArray(err?.errors) && err.errors.length > 0) return errName(err.errors[0]);
  if (err?.cause) return errName(err.cause);
  return err?.code ?? err?.name ?? String(e);
}

const SOURCE_NAMES = Object.fromEntries(Object.entries(ConfigSources).map(([k, v]) => [v, k]));

type Msg = Message<Buffer, Buffer, Buffer, Buffer>;

class Pk extends Run {
  private adminClient: Admin | null = null;
  private groups = 0;

  constructor(bootstrap: string, prefix: string) {
    super(bootstrap, prefix, errName);
  }

  private base() {
    return { clientId: 'compat-platformatic', bootstrapBrokers: [this.bootstrap], timeout: 10_000, retries: 3, retryDelay: 200 };
  }

  admin(): Admin {
    if (this.adminClient === null) {
      const a = new Admin(this.base());
      this.closing(() => a.close());
      this.adminClient = a;
    }
    return this.adminClient;
  }

  producer(opts: ProduceOptions<Buffer, Buffer, Buffer, Buffer> & { transactionalId?: string } = {}): Producer<Buffer, Buffer, Buffer, Buffer> {
    const p = new Producer<Buffer, Buffer, Buffer, Buffer>({ ...this.base(), autocreateTopics: false, acks: -1, ...opts });
    this.closing(() => p.close());
    return p;
  }

  consumer(groupId: string, extra: Record<string, unknown> = {}): Consumer<Buffer, Buffer, Buffer, Buffer> {
    const c = new Consumer<Buffer, Buffer, Buffer, Buffer>({
      ...this.base(),
      groupId,
      autocreateTopics: false,
      sessionTimeout: 10_000,
      rebalanceTimeout: 10_000,
      heartbeatInterval: 500,
      maxWaitTime: 200,
      ...extra,
    } as ConstructorParameters<typeof Consumer<Buffer, Buffer, Buffer, Buffer>>[0]);
    this.closing(async () => c.close(true));
    return c;
  }

  async create(topic: string, partitions = 1, configs: Record<string, string> = {}, replicas = 1): Promise<unknown> {
    const created = await this.admin().createTopics({ topics: [topic], partitions, replicas, configs: Object.entries(configs).map(([name, value]) => ({ name, value })) });
    return created.map((c) => ({ partitions: c.partitions, replicas: c.replicas }));
  }

  async partitions(topic: string): Promise<Array<{ leader: number; replicas: number[] }>> {
    const md = await this.admin().metadata({ topics: [topic], forceUpdate: true });
    const t = md.topics.get(topic);
    if (!t) throw Object.assign(new Error('topic missing from metadata'), { apiId: 'UNKNOWN_TOPIC_OR_PARTITION' });
    return t.partitions;
  }

  async createReady(topic: string, n = 1, configs: Record<string, string> = {}): Promise<void> {
    await this.create(topic, n, configs);
    await waitFor(async () => (await this.partitions(topic)).length === n);
  }

  /** Sends messages one request each; each result is the assigned offset or {error: NAME}. */
  async sendEach(p: Producer<Buffer, Buffer, Buffer, Buffer>, messages: Array<Parameters<Producer<Buffer, Buffer, Buffer, Buffer>['send']>[0]['messages'][number]>, compression: CompressionAlgorithmValue = CompressionAlgorithms.NONE): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const m of messages) {
      try {
        const res = await within(p.send({ messages: [m], compression }), WAIT_MS, 'send');
        out.push(Number(res.offsets?.[0]?.offset ?? -1));
      } catch (e) {
        out.push({ error: errName(e) });
      }
    }
    return out;
  }

  async produceValues(topic: string, stem: string, from: number, to: number): Promise<void> {
    const p = this.producer();
    const messages = [];
    for (let i = from; i < to; i++) messages.push({ topic, partition: 0, value: Buffer.from(`${stem}${i}`) });
    await within(p.send({ messages }), WAIT_MS, 'send');
  }

  /** Reads partition 0 with a fresh group from the earliest offset, or from `offset` (MANUAL mode). */
  async readFrom(topic: string, offset: number | null, count: number, extra: Record<string, unknown> = {}): Promise<Msg[]> {
    const c = this.consumer(`read-${this.prefix}-${this.groups++}`);
    const stream = await within(
      c.consume({
        topics: [topic],
        autocommit: false,
        ...(offset === null ? { mode: 'earliest' as const } : { mode: 'manual' as const, offsets: [{ topic, partition: 0, offset: BigInt(offset) }] }),
        ...extra,
      }),
      WAIT_MS,
      'consume',
    );
    const got = await collect(stream, count);
    await stream.close();
    return got;
  }

  async offsetsOf(topic: string, timestamp?: bigint): Promise<number> {
    const res = await this.admin().listOffsets({ topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: timestamp ?? -1n }] }] });
    return Number(res[0].partitions[0].offset);
  }

  async describeConfigs(topic: string, keys: string[]): Promise<Record<string, unknown>> {
    const res = await this.admin().describeConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: topic }] });
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const e = res[0].configs.find((c) => c.name === k);
      out[k] = e ? { value: e.value, source: SOURCE_NAMES[e.configSource], readOnly: e.readOnly, sensitive: e.isSensitive } : null;
    }
    return out;
  }

  async myGroups(): Promise<unknown[]> {
    const groups = await this.admin().listGroups();
    return [...groups.values()]
      .filter((g) => g.id.startsWith(this.prefix))
      .sort((a, b) => a.id.localeCompare(b.id))
      .map((g) => ({ group: g.id, state: g.state, protocolType: g.protocolType, type: g.groupType }));
  }

  async describeGroup(g: string): Promise<unknown> {
    const d = (await this.admin().describeGroups({ groups: [g] })).get(g);
    if (!d) return null;
    return { state: d.state, members: d.members.size, protocolType: d.protocolType, assignor: d.protocol };
  }

  async committed(g: string, topic: string): Promise<unknown> {
    const res = await this.admin().listConsumerGroupOffsets({ groups: [g] });
    const p = res[0]?.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === 0);
    return p ? Number(p.committedOffset) : null;
  }
}

/** Collects messages from a stream until count arrived or the deadline passed; stream errors propagate. */
async function collect(stream: MessagesStream<Buffer, Buffer, Buffer, Buffer>, count: number, timeoutMs = WAIT_MS): Promise<Msg[]> {
  const got: Msg[] = [];
  let failure: unknown = null;
  const onData = (m: Msg): void => void got.push(m);
  const onError = (e: unknown): void => {
    failure = e;
  };
  stream.on('data', onData);
  stream.on('error', onError);
  await waitFor(() => got.length >= count || failure !== null, timeoutMs);
  stream.off('data', onData);
  stream.off('error', onError);
  if (failure !== null && got.length < count) throw failure;
  return got.slice(0, count);
}

function headersOf(m: Msg): Array<[string, Buffer | null]> {
  return [...(m.headers ?? new Map()).entries()].map(([k, v]) => [k.toString(), v ?? null]);
}

function record(m: Msg): RecordRepr {
  return recordRepr(m.partition, Number(m.offset), m.key ?? null, m.value ?? null, headersOf(m));
}

// ------------------------------------------------------------------------------------------------ scenarios

const metadata: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 3);
  const names = await r.admin().listTopics();
  r.result.listed = r.mine(names);
  const md = await r.admin().metadata({ topics: [t], forceUpdate: true });
  const topic = md.topics.get(t);
  r.result.partitions = (topic?.partitions ?? []).map((p, i) => ({ partition: i, leaderKnown: p.leader >= 0, replicas: p.replicas.length }));
  r.result.brokers = md.brokers.size;
  r.result.missing = await r.attempt(async () => {
    await r.partitions(`${t}-missing`);
  });
  r.check(names.includes(t), 'listTopics does not contain the created topic');
};

const createTopic: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  const cfg = { 'cleanup.policy': 'compact', 'retention.ms': '3600000', 'max.message.bytes': '2000000' };
  r.result.create = await r.attempt(() => r.create(t, 3, cfg));
  await waitFor(async () => (await r.partitions(t)).length === 3);
  r.result.partitions = (await r.partitions(t)).length;
  r.result.configs = await r.describeConfigs(t, Object.keys(cfg).sort());
  r.result.again = await r.attempt(() => r.create(t, 3));
  r.result.badConfig = await r.attempt(() => r.create(`${t}-badcfg`, 1, { 'cleanup.policy': 'bogus' }));
  r.result.zeroPartitions = await r.attempt(() => r.create(`${t}-zero`, 0));
  r.result.replicationFactor3 = await r.attempt(() => r.create(`${t}-rf3`, 1, {}, 3));
  r.result.listed = r.mine(await r.admin().listTopics());
};

// @platformatic/kafka 1.35 has no zstd on Node 20 (it uses zlib's zstd, which Node 20 lacks).
const CODECS: Array<[string, CompressionAlgorithmValue]> = [
  ['none', CompressionAlgorithms.NONE],
  ['gzip', CompressionAlgorithms.GZIP],
  ['snappy', CompressionAlgorithms.SNAPPY],
  ['lz4', CompressionAlgorithms.LZ4],
];

const produceConsume: Scenario<Pk> = async (r) => {
  const codecs: Record<string, unknown> = {};
  const p = r.producer();
  for (const [name, codec] of CODECS) {
    const t = `${r.prefix}-${name}`;
    await r.createReady(t, 1, { 'max.message.bytes': '4194304' });
    // Headers are a Map keyed by Buffer: two distinct Buffer keys "x" carry both of record 3's headers.
    const acks = await r.sendEach(
      p,
      STANDARD.map((s) => ({
        topic: t,
        partition: 0,
        key: s.key ?? undefined,
        value: s.value ?? undefined,
        headers: new Map(s.headers.map(([k, v]) => [Buffer.from(k), v])),
      })),
      codec,
    );
    const read = (await r.readFrom(t, null, 5)).map(record);
    codecs[name] = { acks, records: read };
    r.check(read.length === 5, `${name}: read back ${read.length} of 5 records`);
    read.forEach((rec, i) => {
      r.check(JSON.stringify(rec) === JSON.stringify(standardRepr(i)), `${name}: record ${i} read back differs from what was produced`);
    });
  }
  r.result.codecs = codecs;
};

const consumeOffsets: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const p = r.producer();
  const values = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, j) => ({ topic: t, partition: 0, value: Buffer.from(`m${from + j}`), timestamp: BigInt(base + (from + j) * 1000) }));
  await p.send({ messages: values(0, 10) });
  const earliest = await r.readFrom(t, null, 10);
  r.result.earliest = earliest.map((m) => ({ o: Number(m.offset), v: repr(m.value), ts: Number(m.timestamp) - base }));
  r.result.listOffsets = {
    earliest: await r.attempt(() => r.offsetsOf(t, -2n)),
    latest: await r.attempt(() => r.offsetsOf(t, -1n)),
    'ts+4500': await r.attempt(() => r.offsetsOf(t, BigInt(base + 4500))),
    'ts+100000': await r.attempt(() => r.offsetsOf(t, BigInt(base + 100_000))),
  };
  const at = await r.offsetsOf(t, BigInt(base + 4500));
  r.result.fromTimestamp = (await r.readFrom(t, at, 5)).map((m) => Number(m.offset));
  const c = r.consumer(`read-${r.prefix}-latest`);
  const stream = await c.consume({ topics: [t], autocommit: false, mode: 'latest' });
  // The stream resolves "latest" before its first fetch: produce once it has an offset to fetch from.
  await waitFor(() => stream.offsetsToFetch.size > 0);
  const collecting = collect(stream, 2);
  await p.send({ messages: values(10, 12) });
  r.result.fromLatest = (await collecting).map((m) => Number(m.offset));
  await stream.close();
  r.check(earliest.length === 10, `earliest read ${earliest.length} of 10`);
};

const groupResume = (protocol: 'classic' | 'consumer') => async (r: Pk, p: string): Promise<Record<string, unknown>> => {
  const t = p;
  const g = `${p}-g`;
  await r.createReady(t, 1);
  await r.produceValues(t, 'v', 0, 10);
  const out: Record<string, unknown> = {};
  const groupOpts = protocol === 'consumer' ? { groupProtocol: 'consumer' } : {};
  const a = r.consumer(g, groupOpts);
  const sa = await a.consume({ topics: [t], autocommit: false, mode: 'committed', fallbackMode: 'earliest' });
  const first = await collect(sa, 4);
  out.firstRead = first.map((m) => Number(m.offset));
  await a.commit({ offsets: [{ topic: t, partition: 0, offset: 4n, leaderEpoch: -1 }] });
  out.committedAfterFirst = await r.committed(g, t);
  await sa.close();
  await a.close();
  const b = r.consumer(g, groupOpts);
  const sb = await b.consume({ topics: [t], autocommit: false, mode: 'committed', fallbackMode: 'earliest' });
  const second = await collect(sb, 6);
  out.secondRead = second.map((m) => Number(m.offset));
  await b.commit({ offsets: [{ topic: t, partition: 0, offset: 10n, leaderEpoch: -1 }] });
  await sb.close();
  await b.close();
  out.committedFinal = await r.committed(g, t);
  return out;
};

const groupSplit = (protocol: 'classic' | 'consumer') => async (r: Pk, p: string): Promise<Record<string, unknown>> => {
  const t = p;
  const g = `${p}-g`;
  await r.createReady(t, 4);
  const assigned: number[][] = [[], []];
  const seen: Array<Set<number>> = [new Set(), new Set()];
  const streams: Array<MessagesStream<Buffer, Buffer, Buffer, Buffer>> = [];
  const members: Array<Consumer<Buffer, Buffer, Buffer, Buffer>> = [];
  for (let i = 0; i < 2; i++) {
    const c = r.consumer(g, protocol === 'consumer' ? { groupProtocol: 'consumer' } : {});
    const s = await c.consume({ topics: [t], autocommit: false, mode: 'committed', fallbackMode: 'earliest' });
    s.on('data', (m: Msg) => void seen[i].add(m.partition));
    s.on('error', () => undefined);
    streams.push(s);
    members.push(c);
  }
  // The consumer's current assignment (either protocol) is its `assignments` property.
  const refresh = (): void => {
    members.forEach((c, i) => {
      assigned[i] = [...(c.assignments?.find((x) => x.topic === t)?.partitions ?? [])].sort((x, y) => x - y);
    });
  };
  const balanced = (): boolean => {
    refresh();
    const u = new Set([...assigned[0], ...assigned[1]]);
    return assigned[0].length > 0 && assigned[1].length > 0 && u.size === 4 && assigned[0].length + assigned[1].length === 4;
  };
  const stable = await waitFor(balanced);
  if (stable) {
    await r.producer().send({ messages: [0, 1, 2, 3].map((partition) => ({ topic: t, partition, value: Buffer.from(`p${partition}`) })) });
    await waitFor(() => seen[0].size + seen[1].size >= 4);
  }
  refresh();
  const final = [[...assigned[0]], [...assigned[1]]];
  for (const s of streams) await s.close();
  for (const m of members) await m.close(true);
  const out: Record<string, unknown> = {
    balanced: stable,
    sizes: final.map((x) => x.length).sort(),
    consumedPartitions: [...new Set([...seen[0], ...seen[1]])].sort(),
  };
  // Unlike the other programs this one does not report whether each record reached the member owning
  // its partition: right after a rebalance the client's `assignments` and what its stream fetches can
  // briefly disagree, against Kafka too, so that check would compare noise.
  // The classic default assigner here is round robin: the same split whichever member joins first.
  if (protocol === 'classic') out.assignment = final.sort((x, y) => (x[0] ?? -1) - (y[0] ?? -1));
  r.check(stable, 'the two members never split the 4 partitions between them');
  return out;
};

const idempotent: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const p = r.producer({ idempotent: true });
  const acks: unknown[] = [];
  for (let batch = 0; batch < 4; batch++) {
    const res = await p.send({ messages: Array.from({ length: 5 }, (_, j) => ({ topic: t, partition: 0, value: Buffer.from(`i${batch * 5 + j}`) })) });
    acks.push(Number(res.offsets?.[0]?.offset ?? -1));
  }
  r.result.batchOffsets = acks;
  const read = await r.readFrom(t, null, 20);
  r.result.offsets = read.map((m) => Number(m.offset));
  r.result.values = read.map((m) => repr(m.value));
  r.check(read.length === 20, `read back ${read.length} of 20`);
};

const deleteTopic: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 2);
  await r.produceValues(t, 'd', 0, 1);
  const a = r.admin();
  r.result.listedBefore = r.mine(await a.listTopics());
  r.result.delete = await r.attempt(() => a.deleteTopics({ topics: [t] }));
  r.result.goneFromList = await waitFor(async () => !(await a.listTopics()).includes(t));
  r.result.describeAfter = await r.attempt(async () => {
    await r.partitions(t);
  });
  r.result.deleteAgain = await r.attempt(() => a.deleteTopics({ topics: [t] }));
  r.result.recreate = await r.attempt(async () => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      try {
        return await r.create(t, 1);
      } catch (e) {
        if (Date.now() > deadline || !['TOPIC_ALREADY_EXISTS', 'UNKNOWN_TOPIC_OR_PARTITION'].includes(errName(e))) throw e;
      }
    }
  });
  await waitFor(async () => (await r.partitions(t)).length === 1);
  r.result.recreatedLatest = await r.attempt(() => r.offsetsOf(t, -1n));
};

const configs: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, { 'retention.ms': '86400000' });
  const keys = ['cleanup.policy', 'max.message.bytes', 'retention.ms', 'segment.bytes'];
  const a = r.admin();
  const SET = IncrementalAlterConfigOperationTypes.SET;
  const alter = (configs: Parameters<Admin['incrementalAlterConfigs']>[0]['resources'][number]['configs']) =>
    a.incrementalAlterConfigs({ resources: [{ resourceType: ConfigResourceTypes.TOPIC, resourceName: t, configs }] });
  r.result.initial = await r.describeConfigs(t, keys);
  r.result.alter = await r.attempt(() => alter([{ name: 'retention.ms', configOperation: SET, value: '3600000' }, { name: 'cleanup.policy', configOperation: SET, value: 'compact' }]));
  // A change is applied through the broker's metadata log; a describe right after may still see the old
  // value (on Kafka too): wait, bounded, until it shows, then report what is seen.
  const settle = (want: string) => waitFor(async () => ((await r.describeConfigs(t, ['retention.ms']))['retention.ms'] as { value: string }).value === want);
  await settle('3600000');
  r.result.afterAlter = await r.describeConfigs(t, keys);
  r.result.reset = await r.attempt(() => alter([{ name: 'retention.ms', configOperation: IncrementalAlterConfigOperationTypes.DELETE }]));
  await settle('604800000');
  r.result.afterReset = await r.describeConfigs(t, keys);
  r.result.invalidValue = await r.attempt(() => alter([{ name: 'retention.ms', configOperation: SET, value: 'abc' }]));
  r.result.unknownKey = await r.attempt(() => alter([{ name: 'no.such.config', configOperation: SET, value: '1' }]));
  r.result.missingTopic = await r.attempt(() => r.describeConfigs(`${t}-missing`, keys));
};

const deleteRecords: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  await r.produceValues(t, 'r', 0, 10);
  const del = (offset: bigint) =>
    r.attempt(async () => {
      const res = await r.admin().deleteRecords({ topics: [{ name: t, partitions: [{ partition: 0, offset }] }] });
      return Number(res[0].partitions[0].lowWatermark);
    });
  r.result.deleteBefore4 = await del(4n);
  r.result.earliest = await r.attempt(() => r.offsetsOf(t, -2n));
  r.result.latest = await r.attempt(() => r.offsetsOf(t, -1n));
  r.result.readFromEarliest = (await r.readFrom(t, null, 6)).map((m) => Number(m.offset));
  r.result.deleteBeyondEnd = await del(20n);
  r.result.deleteAll = await del(-1n);
  r.result.earliestAfterAll = await r.attempt(() => r.offsetsOf(t, -2n));
};

const groupsAdmin: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  const busy = `${r.prefix}-busy`;
  await r.createReady(t, 1);
  await r.produceValues(t, 'g', 0, 3);
  const c = r.consumer(g);
  const s = await c.consume({ topics: [t], autocommit: false, mode: 'committed', fallbackMode: 'earliest' });
  await collect(s, 3);
  await c.commit({ offsets: [{ topic: t, partition: 0, offset: 3n, leaderEpoch: -1 }] });
  await s.close();
  await c.close();
  const a = r.admin();
  r.result.listed = await r.myGroups();
  r.result.described = await r.describeGroup(g);
  r.result.offsets = await r.committed(g, t);
  const active = r.consumer(busy);
  let joined = false;
  active.on('consumer:group:join', () => {
    joined = true;
  });
  const sb = await active.consume({ topics: [t], autocommit: false, mode: 'committed', fallbackMode: 'earliest' });
  sb.on('data', () => undefined);
  await waitFor(() => joined);
  r.result.deleteActive = await r.attempt(() => a.deleteGroups({ groups: [busy] }));
  await sb.close();
  await active.close();
  r.result.delete = await r.attempt(() => a.deleteGroups({ groups: [g] }));
  r.result.listedAfterDelete = await r.myGroups();
  r.result.describedAfterDelete = await r.attempt(() => r.describeGroup(g));
  r.result.deleteAgain = await r.attempt(() => a.deleteGroups({ groups: [g] }));
};

const errMissingTopic: Scenario<Pk> = async (r) => {
  const t = `${r.prefix}-missing`;
  const p = r.producer();
  r.result.produce = (await r.sendEach(p, [{ topic: t, value: Buffer.from('x') }]))[0];
  r.result.describe = await r.attempt(async () => {
    await r.partitions(t);
  });
  r.result.createdByProduce = (await r.admin().listTopics()).includes(t);
};

const errOffsetOutOfRange: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  await r.produceValues(t, 'o', 0, 5);
  r.result.resetFail = await r.attempt(async () => (await r.readFrom(t, 100, 1, { fallbackMode: 'fail' })).length);
  r.result.resetEarliest = await r.attempt(async () => (await r.readFrom(t, 100, 5, { fallbackMode: 'earliest' })).map((m) => Number(m.offset)));
};

const errOversize: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, { 'max.message.bytes': '1024' });
  const p = r.producer();
  const [oversize, small] = await r.sendEach(p, [
    { topic: t, partition: 0, value: pattern(4000) },
    { topic: t, partition: 0, value: Buffer.from('ok') },
  ]);
  r.result.oversize = oversize;
  r.result.small = small;
  r.result.read = (await r.readFrom(t, null, 1)).map(record);
};

const transactions: Scenario<Pk> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const p = r.producer({ idempotent: true, transactionalId: `${r.prefix}-tx` });
  const txn = async (values: string[], commit: boolean): Promise<void> => {
    const tx = await p.beginTransaction();
    await tx.send({ messages: values.map((v) => ({ topic: t, partition: 0, value: Buffer.from(v) })) });
    if (commit) await tx.commit();
    else await tx.abort();
  };
  await txn(['t0', 't1', 't2'], true);
  await txn(['a0', 'a1'], false);
  await txn(['t3'], true);
  const committed = await r.readFrom(t, null, 4, { isolationLevel: 1 });
  const uncommitted = await r.readFrom(t, null, 6, { isolationLevel: 0 });
  r.result.readCommitted = committed.map((m) => `${m.offset}:${repr(m.value)}`);
  r.result.readUncommitted = uncommitted.map((m) => `${m.offset}:${repr(m.value)}`);
  r.result.latest = await r.attempt(() => r.offsetsOf(t, -1n));
};

main<Pk>(
  {
    metadata,
    'create-topic': createTopic,
    'produce-consume': produceConsume,
    'consume-offsets': consumeOffsets,
    'group-resume': async (r) => {
      Object.assign(r.result, await groupResume('classic')(r, r.prefix));
    },
    'group-split': async (r) => {
      Object.assign(r.result, await groupSplit('classic')(r, r.prefix));
    },
    'group-848': async (r) => {
      r.result.resume = await groupResume('consumer')(r, `${r.prefix}-r`);
      r.result.split = await groupSplit('consumer')(r, `${r.prefix}-s`);
    },
    idempotent,
    'delete-topic': deleteTopic,
    configs,
    'delete-records': deleteRecords,
    'groups-admin': groupsAdmin,
    'err-missing-topic': errMissingTopic,
    'err-offset-out-of-range': errOffsetOutOfRange,
    'err-oversize': errOversize,
    transactions,
  },
  (bootstrap, prefix) => new Pk(bootstrap, prefix),
);
