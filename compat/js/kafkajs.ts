/** The kafkajs side of the compatibility suite; steps as in compat/README.md. */
import kafkajs from 'kafkajs';
import type { Admin, Consumer, EachMessagePayload, IHeaders, Kafka, Producer, ProducerConfig, RecordMetadata } from 'kafkajs';
import { COMPACTION, main, pattern, recordRepr, repr, Run, sleep, STANDARD, standardRepr, waitFor, WAIT_MS, within } from './common.js';
import type { RecordRepr, Scenario } from './common.js';
import { registerCodecs } from './kafkajs-codecs.js';

// kafkajs is CommonJS; its named exports are read off the module object.
const { CompressionTypes, ConfigResourceTypes, logLevel } = kafkajs;
type CompressionType = (typeof CompressionTypes)[keyof typeof CompressionTypes];

registerCodecs();

/**
 * kafkajs errors carry Kafka's error name in `type`; wrappers (retries exhausted, non-retriable) hold
 * the error they wrap in `cause`, and aggregate errors (createTopics) in `errors`.
 */
function errName(e: unknown): string {
  const err = e as { type?: string; name?: string; cause?: unknown; errors?: unknown[]; groups?: Array<{ error?: unknown }>; partitions?: Array<{ error?: unknown }> };
  if (err?.type && err.type !== 'UNKNOWN') return err.type;
  if (err?.name === 'KafkaJSDeleteTopicRecordsError' && err.partitions?.[0]?.error) return errName(err.partitions[0].error);
  if (err?.name === 'KafkaJSDeleteGroupsError' && err.groups?.[0]?.error) return errName(err.groups[0].error);
  if (err?.cause) return errName(err.cause);
  if (Array.isArray(err?.errors) && err.errors.length > 0) return errName(err.errors[0]);
  return err?.name ?? String(e);
}

class Kj extends Run {
  readonly kafka: Kafka;
  private adminClient: Admin | null = null;
  private readers = 0;

  constructor(bootstrap: string, prefix: string) {
    super(bootstrap, prefix, errName);
    this.kafka = new kafkajs.Kafka({
      clientId: 'compat-kafkajs',
      brokers: bootstrap.split(','),
      logLevel: logLevel.NOTHING,
      requestTimeout: 10_000,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    });
  }

  async admin(): Promise<Admin> {
    if (this.adminClient === null) {
      const a = this.kafka.admin();
      await a.connect();
      this.closing(() => a.disconnect());
      this.adminClient = a;
    }
    return this.adminClient;
  }

  async producer(cfg: ProducerConfig = {}): Promise<Producer> {
    const p = this.kafka.producer({ allowAutoTopicCreation: false, ...cfg });
    await p.connect();
    this.closing(() => p.disconnect());
    return p;
  }

  async consumer(groupId: string, cfg: { readUncommitted?: boolean } = {}): Promise<Consumer> {
    const c = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: 10_000,
      rebalanceTimeout: 10_000,
      heartbeatInterval: 500,
      maxWaitTimeInMs: 200,
      readUncommitted: cfg.readUncommitted ?? true,
      retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    await c.connect();
    this.closing(() => c.disconnect());
    return c;
  }

  async create(topic: string, numPartitions = 1, configs: Record<string, string> = {}, replicationFactor = 1): Promise<boolean> {
    const a = await this.admin();
    return a.createTopics({
      topics: [{ topic, numPartitions, replicationFactor, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
      // waitForLeaders makes kafkajs read metadata right after creating, racing the broker's own
      // propagation; the scenarios wait for the partitions themselves.
      waitForLeaders: false,
      timeout: WAIT_MS,
    });
  }

  async partitions(topic: string): Promise<Array<{ partitionId: number; leader: number; replicas: number[]; isr: number[] }>> {
    const a = await this.admin();
    const md = await a.fetchTopicMetadata({ topics: [topic] });
    return md.topics[0].partitions;
  }

  async createReady(topic: string, n = 1, configs: Record<string, string> = {}): Promise<void> {
    await this.create(topic, n, configs);
    await waitFor(async () => (await this.partitions(topic)).length === n);
  }

  /** Sends messages one request each, so each reported offset is the one the broker assigned. */
  async sendEach(p: Producer, topic: string, messages: Array<Parameters<Producer['send']>[0]['messages'][number]>, compression: CompressionType = CompressionTypes.None): Promise<unknown[]> {
    const out: unknown[] = [];
    for (const m of messages) {
      try {
        const md: RecordMetadata[] = await p.send({ topic, messages: [m], acks: -1, compression, timeout: 10_000 });
        out.push(Number(md[0].baseOffset));
      } catch (e) {
        out.push({ error: errName(e) });
      }
    }
    return out;
  }

  async produceValues(topic: string, stem: string, from: number, to: number, partition = 0): Promise<void> {
    const p = await this.producer();
    const messages = [];
    for (let i = from; i < to; i++) messages.push({ value: `${stem}${i}`, partition });
    await p.send({ topic, messages, acks: -1 });
  }

  /**
   * Reads a partition with a fresh group (kafkajs consumes through groups only) from the earliest
   * offset, or from `offset` by seeking once the consumer runs.
   */
  async readFrom(topic: string, offset: number | null, count: number, opts: { readUncommitted?: boolean; fromBeginning?: boolean } = {}): Promise<Array<EachMessagePayload['message'] & { partition: number }>> {
    const c = await this.consumer(`read-${this.prefix}-${this.readers++}`, { readUncommitted: opts.readUncommitted });
    const got: Array<EachMessagePayload['message'] & { partition: number }> = [];
    await c.subscribe({ topics: [topic], fromBeginning: opts.fromBeginning ?? true });
    await c.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        got.push({ ...message, partition });
      },
    });
    if (offset !== null) c.seek({ topic, partition: 0, offset: String(offset) });
    await waitFor(() => got.length >= count);
    await c.disconnect();
    return got.slice(0, count);
  }

  static headersOf(h: IHeaders | undefined): Array<[string, Buffer | null]> {
    const out: Array<[string, Buffer | null]> = [];
    for (const [k, v] of Object.entries(h ?? {})) {
      for (const x of Array.isArray(v) ? v : [v]) out.push([k, x === undefined ? null : Buffer.from(x as Buffer)]);
    }
    return out;
  }

  static record(m: EachMessagePayload['message'] & { partition: number }): RecordRepr {
    return recordRepr(m.partition, Number(m.offset), m.key, m.value, Kj.headersOf(m.headers));
  }

  async offsets(topic: string): Promise<{ low: number; high: number }> {
    const a = await this.admin();
    const o = (await a.fetchTopicOffsets(topic)).find((x) => x.partition === 0);
    if (!o) throw new Error('no partition 0');
    return { low: Number(o.low), high: Number(o.high) };
  }

  async describeConfigs(topic: string, keys: string[]): Promise<Record<string, unknown>> {
    const a = await this.admin();
    const res = await a.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: topic }], includeSynonyms: false });
    const entries = res.resources[0].configEntries;
    const out: Record<string, unknown> = {};
    for (const k of keys) {
      const e = entries.find((x) => x.configName === k);
      out[k] = e ? { value: e.configValue, default: e.isDefault, source: e.configSource, readOnly: e.readOnly, sensitive: e.isSensitive } : null;
    }
    return out;
  }

  async myGroups(): Promise<unknown[]> {
    const a = await this.admin();
    const { groups } = await a.listGroups();
    return groups.filter((g) => g.groupId.startsWith(this.prefix)).sort((x, y) => x.groupId.localeCompare(y.groupId)).map((g) => ({ group: g.groupId, protocolType: g.protocolType }));
  }

  async describeGroup(g: string): Promise<unknown> {
    const a = await this.admin();
    const { groups } = await a.describeGroups([g]);
    const d = groups[0];
    return { state: d.state, members: d.members.length, protocolType: d.protocolType, assignor: d.protocol };
  }

  async committed(g: string, topic: string): Promise<unknown> {
    const a = await this.admin();
    const res = await a.fetchOffsets({ groupId: g, topics: [topic] });
    const p = res[0]?.partitions.find((x) => x.partition === 0);
    return p ? Number(p.offset) : null;
  }
}

// ------------------------------------------------------------------------------------------------ scenarios

const metadata: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 3);
  const a = await r.admin();
  const names = await a.listTopics();
  r.result.listed = r.mine(names);
  r.result.partitions = (await r.partitions(t))
    .sort((x, y) => x.partitionId - y.partitionId)
    .map((p) => ({ partition: p.partitionId, leaderKnown: p.leader >= 0, replicas: p.replicas.length, isr: p.isr.length }));
  const cluster = await a.describeCluster();
  r.result.brokers = cluster.brokers.length;
  r.result.controllerKnown = cluster.controller !== null && cluster.controller >= 0;
  r.result.missing = await r.attempt(async () => {
    await r.partitions(`${t}-missing`);
  });
  r.check(names.includes(t), 'listTopics does not contain the created topic');
};

const createTopic: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  const cfg = { 'cleanup.policy': 'compact', 'retention.ms': '3600000', 'max.message.bytes': '2000000' };
  r.result.create = await r.attempt(() => r.create(t, 3, cfg));
  await waitFor(async () => (await r.partitions(t)).length === 3);
  r.result.partitions = (await r.partitions(t)).length;
  r.result.configs = await r.describeConfigs(t, Object.keys(cfg).sort());
  // kafkajs reports an existing topic as `false`, not as an error.
  r.result.again = await r.attempt(() => r.create(t, 3));
  r.result.badConfig = await r.attempt(() => r.create(`${t}-badcfg`, 1, { 'cleanup.policy': 'bogus' }));
  r.result.zeroPartitions = await r.attempt(() => r.create(`${t}-zero`, 0));
  r.result.replicationFactor3 = await r.attempt(() => r.create(`${t}-rf3`, 1, {}, 3));
  r.result.listed = r.mine(await (await r.admin()).listTopics());
};

const CODECS: Array<[string, CompressionType]> = [
  ['none', CompressionTypes.None],
  ['gzip', CompressionTypes.GZIP],
  ['snappy', CompressionTypes.Snappy],
  ['lz4', CompressionTypes.LZ4],
  ['zstd', CompressionTypes.ZSTD],
];

const produceConsume: Scenario<Kj> = async (r) => {
  const codecs: Record<string, unknown> = {};
  const p = await r.producer();
  for (const [name, codec] of CODECS) {
    const t = `${r.prefix}-${name}`;
    await r.createReady(t, 1, { 'max.message.bytes': '4194304' });
    const acks = await r.sendEach(
      p,
      t,
      STANDARD.map((s) => {
        const headers: IHeaders = {};
        for (const [k, v] of s.headers) {
          const prev = headers[k];
          headers[k] = prev === undefined ? v : ([] as Buffer[]).concat(prev as Buffer | Buffer[], v);
        }
        return { partition: 0, key: s.key, value: s.value, headers };
      }),
      codec,
    );
    const read = (await r.readFrom(t, null, 5)).map(Kj.record);
    codecs[name] = { acks, records: read };
    r.check(read.length === 5, `${name}: read back ${read.length} of 5 records`);
    read.forEach((rec, i) => r.check(JSON.stringify(rec) === JSON.stringify(standardRepr(i)), `${name}: record ${i} read back differs from what was produced`));
  }
  r.result.codecs = codecs;
};

const consumeOffsets: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const base = Math.floor(Date.now() / 1000) * 1000 - 60_000;
  const p = await r.producer();
  await p.send({ topic: t, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `m${i}`, timestamp: String(base + i * 1000) })) });
  const earliest = await r.readFrom(t, null, 10);
  r.result.earliest = earliest.map((m) => ({ o: Number(m.offset), v: repr(m.value), ts: Number(m.timestamp) - base }));
  const a = await r.admin();
  const byTs = async (ts: number): Promise<unknown> => r.attempt(async () => Number((await a.fetchTopicOffsetsByTimestamp(t, ts)).find((x) => x.partition === 0)?.offset));
  const { low, high } = await r.offsets(t);
  r.result.listOffsets = { earliest: low, latest: high, 'ts+4500': await byTs(base + 4500), 'ts+100000': await byTs(base + 100_000) };
  const at = Number((await a.fetchTopicOffsetsByTimestamp(t, base + 4500)).find((x) => x.partition === 0)?.offset);
  r.result.fromTimestamp = (await r.readFrom(t, at, 5)).map((m) => Number(m.offset));
  // A new group without committed offsets and fromBeginning: false starts at the end.
  const c = await r.consumer(`read-${r.prefix}-latest`);
  const got: number[] = [];
  let fetches = 0;
  c.on(c.events.FETCH, () => {
    fetches++;
  });
  await c.subscribe({ topics: [t], fromBeginning: false });
  await c.run({ autoCommit: false, eachMessage: async ({ message }) => void got.push(Number(message.offset)) });
  // kafkajs resolves "latest" in its first fetch; produce once a fetch has completed.
  await waitFor(() => fetches >= 1);
  await p.send({ topic: t, acks: -1, messages: [10, 11].map((i) => ({ partition: 0, value: `m${i}`, timestamp: String(base + i * 1000) })) });
  await waitFor(() => got.length >= 2);
  r.result.fromLatest = got.slice(0, 2);
  r.check(earliest.length === 10, `earliest read ${earliest.length} of 10`);
};

const groupResume: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  await r.createReady(t, 1);
  await r.produceValues(t, 'v', 0, 10);
  const a = await r.consumer(g);
  const first: number[] = [];
  await a.subscribe({ topics: [t], fromBeginning: true });
  await a.run({ autoCommit: false, eachMessage: async ({ message }) => void (first.length < 4 && first.push(Number(message.offset))) });
  await waitFor(() => first.length >= 4);
  r.result.firstRead = first;
  await a.commitOffsets([{ topic: t, partition: 0, offset: '4' }]);
  r.result.committedAfterFirst = await r.committed(g, t);
  await a.disconnect();
  const b = await r.consumer(g);
  const second: number[] = [];
  await b.subscribe({ topics: [t], fromBeginning: true });
  await b.run({ autoCommit: false, eachMessage: async ({ message }) => void (second.length < 6 && second.push(Number(message.offset))) });
  await waitFor(() => second.length >= 6);
  r.result.secondRead = second;
  await b.commitOffsets([{ topic: t, partition: 0, offset: '10' }]);
  await b.disconnect();
  r.result.committedFinal = await r.committed(g, t);
};

const groupSplit: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  await r.createReady(t, 4);
  const assigned: number[][] = [[], []];
  const seen: Array<Set<number>> = [new Set(), new Set()];
  const members: Consumer[] = [];
  for (let i = 0; i < 2; i++) {
    const c = await r.consumer(g);
    c.on(c.events.GROUP_JOIN, (e) => {
      assigned[i] = [...(e.payload.memberAssignment[t] ?? [])].sort((x, y) => x - y);
    });
    await c.subscribe({ topics: [t], fromBeginning: true });
    await c.run({ autoCommit: false, eachMessage: async ({ partition }) => void seen[i].add(partition) });
    members.push(c);
  }
  const balanced = (): boolean => {
    const u = new Set([...assigned[0], ...assigned[1]]);
    return assigned[0].length > 0 && assigned[1].length > 0 && u.size === 4 && assigned[0].length + assigned[1].length === 4;
  };
  const stable = await waitFor(balanced);
  if (stable) {
    const p = await r.producer();
    await p.send({ topic: t, acks: -1, messages: [0, 1, 2, 3].map((partition) => ({ partition, value: `p${partition}` })) });
    await waitFor(() => seen[0].size + seen[1].size >= 4);
  }
  const final = [[...assigned[0]], [...assigned[1]]];
  for (const m of members) await m.disconnect();
  r.result.balanced = stable;
  // kafkajs's default assigner is round robin over sorted members: the split is the same whichever joins first.
  r.result.assignment = final.sort((x, y) => (x[0] ?? -1) - (y[0] ?? -1));
  r.result.sizes = final.map((x) => x.length).sort();
  r.result.consumedPartitions = [...new Set([...seen[0], ...seen[1]])].sort();
  r.result.consumedByOwner = [0, 1].every((i) => [...seen[i]].every((p) => assigned[i].includes(p)));
  r.check(stable, 'the two members never split the 4 partitions between them');
};

const idempotent: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const p = await r.producer({ idempotent: true, maxInFlightRequests: 1 });
  const acks: unknown[] = [];
  for (let batch = 0; batch < 4; batch++) {
    const md = await p.send({ topic: t, acks: -1, messages: Array.from({ length: 5 }, (_, j) => ({ partition: 0, value: `i${batch * 5 + j}` })) });
    acks.push(Number(md[0].baseOffset));
  }
  r.result.batchBaseOffsets = acks;
  const read = await r.readFrom(t, null, 20);
  r.result.offsets = read.map((m) => Number(m.offset));
  r.result.values = read.map((m) => repr(m.value));
  r.check(read.length === 20, `read back ${read.length} of 20`);
};

const deleteTopic: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 2);
  await r.produceValues(t, 'd', 0, 1);
  const a = await r.admin();
  r.result.listedBefore = r.mine(await a.listTopics());
  r.result.delete = await r.attempt(() => a.deleteTopics({ topics: [t], timeout: WAIT_MS }));
  r.result.goneFromList = await waitFor(async () => !(await a.listTopics()).includes(t));
  r.result.describeAfter = await r.attempt(async () => {
    await r.partitions(t);
  });
  r.result.deleteAgain = await r.attempt(() => a.deleteTopics({ topics: [t], timeout: WAIT_MS }));
  r.result.recreate = await r.attempt(async () => {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const created = await r.create(t, 1).catch((e: unknown) => {
        if (Date.now() > deadline || errName(e) !== 'UNKNOWN_TOPIC_OR_PARTITION') throw e;
        return null;
      });
      if (created !== null) return created;
    }
  });
  await waitFor(async () => (await r.partitions(t)).length === 1);
  r.result.recreatedLatest = await r.attempt(async () => (await r.offsets(t)).high);
};

const configs: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, { 'retention.ms': '86400000' });
  const keys = ['cleanup.policy', 'max.message.bytes', 'retention.ms', 'segment.bytes'];
  const a = await r.admin();
  // kafkajs has only the legacy AlterConfigs, which replaces a topic's whole dynamic config: "reset"
  // is therefore an alter that leaves retention.ms out.
  const alter = (entries: Record<string, string>, topic = t) =>
    a.alterConfigs({ validateOnly: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: Object.entries(entries).map(([name, value]) => ({ name, value })) }] });
  r.result.initial = await r.describeConfigs(t, keys);
  r.result.alter = await r.attempt(() => alter({ 'retention.ms': '3600000', 'cleanup.policy': 'compact' }).then(() => undefined));
  // A change is applied through the broker's metadata log; a describe right after may still see the old
  // value (on Kafka too): wait, bounded, until it shows, then report what is seen.
  const settle = (want: string) => waitFor(async () => ((await r.describeConfigs(t, ['retention.ms']))['retention.ms'] as { value: string }).value === want);
  await settle('3600000');
  r.result.afterAlter = await r.describeConfigs(t, keys);
  r.result.reset = await r.attempt(() => alter({ 'cleanup.policy': 'compact' }).then(() => undefined));
  await settle('604800000');
  r.result.afterReset = await r.describeConfigs(t, keys);
  r.result.invalidValue = await r.attempt(() => alter({ 'retention.ms': 'abc' }).then(() => undefined));
  r.result.unknownKey = await r.attempt(() => alter({ 'no.such.config': '1' }).then(() => undefined));
  r.result.missingTopic = await r.attempt(() => r.describeConfigs(`${t}-missing`, keys));
};

const deleteRecords: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  await r.produceValues(t, 'r', 0, 10);
  const a = await r.admin();
  const del = (offset: number) => r.attempt(() => a.deleteTopicRecords({ topic: t, partitions: [{ partition: 0, offset: String(offset) }] }));
  r.result.deleteBefore4 = await del(4);
  const o = await r.offsets(t);
  r.result.earliest = o.low;
  r.result.latest = o.high;
  r.result.readFromEarliest = (await r.readFrom(t, null, 6)).map((m) => Number(m.offset));
  r.result.deleteBeyondEnd = await del(20);
  r.result.deleteAll = await del(-1);
  r.result.earliestAfterAll = (await r.offsets(t)).low;
};

const groupsAdmin: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  const g = `${r.prefix}-g`;
  const busy = `${r.prefix}-busy`;
  await r.createReady(t, 1);
  await r.produceValues(t, 'g', 0, 3);
  const c = await r.consumer(g);
  let n = 0;
  await c.subscribe({ topics: [t], fromBeginning: true });
  await c.run({ autoCommit: false, eachMessage: async () => void n++ });
  await waitFor(() => n >= 3);
  await c.commitOffsets([{ topic: t, partition: 0, offset: '3' }]);
  await c.disconnect();
  const a = await r.admin();
  r.result.listed = await r.myGroups();
  r.result.described = await r.describeGroup(g);
  r.result.offsets = await r.committed(g, t);
  const active = await r.consumer(busy);
  let joined = false;
  active.on(active.events.GROUP_JOIN, () => {
    joined = true;
  });
  await active.subscribe({ topics: [t], fromBeginning: true });
  await active.run({ autoCommit: false, eachMessage: async () => undefined });
  await waitFor(() => joined);
  r.result.deleteActive = await r.attempt(() => a.deleteGroups([busy]).then(() => undefined));
  await active.disconnect();
  r.result.delete = await r.attempt(() => a.deleteGroups([g]).then(() => undefined));
  r.result.listedAfterDelete = await r.myGroups();
  r.result.describedAfterDelete = await r.attempt(() => r.describeGroup(g));
  r.result.deleteAgain = await r.attempt(() => a.deleteGroups([g]).then(() => undefined));
};

const errMissingTopic: Scenario<Kj> = async (r) => {
  const t = `${r.prefix}-missing`;
  const p = await r.producer();
  r.result.produce = await r.attempt(() => within(p.send({ topic: t, acks: -1, messages: [{ value: 'x' }] }).then((md) => Number(md[0].baseOffset)), WAIT_MS, 'send'));
  r.result.describe = await r.attempt(async () => {
    await r.partitions(t);
  });
  r.result.createdByProduce = (await (await r.admin()).listTopics()).includes(t);
};

const errOffsetOutOfRange: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  await r.produceValues(t, 'o', 0, 5);
  // kafkajs has no "none" reset policy: out of range, it resets per fromBeginning.
  r.result.resetEarliest = (await r.readFrom(t, 100, 5, { fromBeginning: true })).map((m) => Number(m.offset));
  const c = await r.consumer(`read-${r.prefix}-latest`);
  const got: number[] = [];
  let fetches = 0;
  c.on(c.events.FETCH, () => {
    fetches++;
  });
  await c.subscribe({ topics: [t], fromBeginning: false });
  await c.run({ autoCommit: false, eachMessage: async ({ message }) => void got.push(Number(message.offset)) });
  c.seek({ topic: t, partition: 0, offset: '100' });
  // Fetches after the seek hit the out-of-range offset and reset to the end; then produce one more.
  await waitFor(() => fetches >= 3);
  await r.produceValues(t, 'o', 5, 6);
  await waitFor(() => got.length >= 1);
  r.result.resetLatestNext = got.slice(0, 1);
};

const errOversize: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, { 'max.message.bytes': '1024' });
  const p = await r.producer();
  const [oversize, small] = await r.sendEach(p, t, [
    { partition: 0, value: pattern(4000) },
    { partition: 0, value: 'ok' },
  ]);
  r.result.oversize = oversize;
  r.result.small = small;
  r.result.read = (await r.readFrom(t, null, 1)).map(Kj.record);
};

const transactions: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1);
  const p = await r.producer({ transactionalId: `${r.prefix}-tx`, idempotent: true, maxInFlightRequests: 1 });
  const txn = async (values: string[], commit: boolean): Promise<void> => {
    const tx = await p.transaction();
    await tx.send({ topic: t, acks: -1, messages: values.map((value) => ({ partition: 0, value })) });
    if (commit) await tx.commit();
    else await tx.abort();
  };
  await txn(['t0', 't1', 't2'], true);
  await txn(['a0', 'a1'], false);
  await txn(['t3'], true);
  const committed = await r.readFrom(t, null, 4, { readUncommitted: false });
  const uncommitted = await r.readFrom(t, null, 6, { readUncommitted: true });
  r.result.readCommitted = committed.map((m) => `${m.offset}:${repr(m.value)}`);
  r.result.readUncommitted = uncommitted.map((m) => `${m.offset}:${repr(m.value)}`);
  r.result.latest = (await r.offsets(t)).high;
};

/** The compaction scenario (compat/README.md): what the log cleaner leaves of a compact topic, offset by offset. */
const compaction: Scenario<Kj> = async (r) => {
  const t = r.prefix;
  await r.createReady(t, 1, COMPACTION.topicConfigs);
  const work = COMPACTION.workload();
  const pad = pattern(COMPACTION.pad);
  const p = await r.producer();
  // One record per produce, acknowledged before the next: one batch each, uncompressed.
  r.result.acked = await r.sendEach(p, t, work.map((w) => ({ partition: 0, key: w.key, value: w.value, headers: { pad } })));
  const seen = new Set<string>();
  const violation = (what: string): void => {
    if (!seen.has(what)) r.violations.push(what);
    seen.add(what);
  };
  // The whole partition from the earliest offset to its end (kafkajs reads through a fresh group each time).
  const readAll = async (): Promise<string[]> => {
    const { high } = await r.offsets(t);
    const c = await r.consumer(`read-${r.prefix}-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`);
    const got = new Map<number, string>();
    await c.subscribe({ topics: [t], fromBeginning: true });
    await c.run({
      autoCommit: false,
      eachMessage: async ({ message: m }) => {
        got.set(Number(m.offset), `${m.offset} ${repr(m.key)} ${repr(m.value)}`);
        const h = m.headers?.pad;
        if (!Buffer.isBuffer(h) || !h.equals(pad)) violation(`offset ${m.offset}: the pad header read back differs from what was produced`);
      },
    });
    if (!(await waitFor(() => got.has(high - 1)))) violation(`did not read up to offset ${high} within ${WAIT_MS / 1000} s`);
    await c.disconnect();
    return [...got.keys()].sort((a, b) => a - b).map((o) => got.get(o)!);
  };
  let survivors = await readAll();
  const t0 = Date.now();
  let changed = t0;
  for (;;) {
    if (survivors.length < work.length && Date.now() - changed >= COMPACTION.stableMs) break;
    if (survivors.length >= work.length && Date.now() - t0 > COMPACTION.firstShrinkMs) {
      violation(`the log cleaner removed no record within ${COMPACTION.firstShrinkMs / 1000} s`);
      break;
    }
    await sleep(500);
    const again = await readAll();
    if (JSON.stringify(again) !== JSON.stringify(survivors)) {
      survivors = again;
      changed = Date.now();
    }
  }
  r.result.survivors = survivors;
  const { low, high } = await r.offsets(t);
  r.result.earliest = low;
  r.result.latest = high;
  for (const v of COMPACTION.check(survivors, work)) violation(v);
};

main<Kj>(
  {
    metadata,
    'create-topic': createTopic,
    'produce-consume': produceConsume,
    'consume-offsets': consumeOffsets,
    'group-resume': groupResume,
    'group-split': groupSplit,
    idempotent,
    'delete-topic': deleteTopic,
    configs,
    'delete-records': deleteRecords,
    'groups-admin': groupsAdmin,
    'err-missing-topic': errMissingTopic,
    'err-offset-out-of-range': errOffsetOutOfRange,
    'err-oversize': errOversize,
    transactions,
    compaction,
  },
  (bootstrap, prefix) => new Kj(bootstrap, prefix),
);
