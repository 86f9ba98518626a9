/**
 * Authorization of the admin, offsets and config APIs, as Kafka's KafkaApis, ConfigHelper, ControllerApis and
 * DescribeTopicPartitionsRequestHandler authorize them: what is checked (recorded as `OPERATION TYPE name`,
 * with " (not logged)" when a denial is not to be logged), the codes and where they are placed, and that an
 * allowed request proceeds.
 */
import { NO_MUTATION_QUOTAS } from '../../../src/quota/controller-mutation.js';
import { tmpdir } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { createAlterConfigsRequest } from '../../../protocol/messages/033-alter-configs.gen.js';
import { createAlterPartitionReassignmentsRequest } from '../../../protocol/messages/045-alter-partition-reassignments.gen.js';
import { createCreatePartitionsRequest } from '../../../protocol/messages/037-create-partitions.gen.js';
import { createCreateTopicsRequest, createCreateTopicsRequestCreatableTopic } from '../../../protocol/messages/019-create-topics.gen.js';
import { createDeleteRecordsRequest } from '../../../protocol/messages/021-delete-records.gen.js';
import { createDeleteTopicsRequest } from '../../../protocol/messages/020-delete-topics.gen.js';
import { createDescribeClusterRequest } from '../../../protocol/messages/060-describe-cluster.gen.js';
import { createDescribeConfigsRequest } from '../../../protocol/messages/032-describe-configs.gen.js';
import { createDescribeLogDirsRequest } from '../../../protocol/messages/035-describe-log-dirs.gen.js';
import { createDescribeQuorumRequest } from '../../../protocol/messages/055-describe-quorum.gen.js';
import { createDescribeTopicPartitionsRequest } from '../../../protocol/messages/075-describe-topic-partitions.gen.js';
import { createElectLeadersRequest } from '../../../protocol/messages/043-elect-leaders.gen.js';
import { createIncrementalAlterConfigsRequest } from '../../../protocol/messages/044-incremental-alter-configs.gen.js';
import { createListConfigResourcesRequest } from '../../../protocol/messages/074-list-config-resources.gen.js';
import { createListOffsetsRequest } from '../../../protocol/messages/002-list-offsets.gen.js';
import { createListPartitionReassignmentsRequest } from '../../../protocol/messages/046-list-partition-reassignments.gen.js';
import { createOffsetForLeaderEpochRequest } from '../../../protocol/messages/023-offset-for-leader-epoch.gen.js';
import { ZERO_UUID } from '../../../protocol/wire/uuid.js';
import { listOffsets } from '../../../src/api/002-list-offsets.js';
import { createTopics } from '../../../src/api/019-create-topics.js';
import { deleteTopics } from '../../../src/api/020-delete-topics.js';
import { deleteRecords } from '../../../src/api/021-delete-records.js';
import { offsetForLeaderEpoch } from '../../../src/api/023-offset-for-leader-epoch.js';
import { describeConfigs } from '../../../src/api/032-describe-configs.js';
import { alterConfigs } from '../../../src/api/033-alter-configs.js';
import { describeLogDirs } from '../../../src/api/035-describe-log-dirs.js';
import { createPartitions } from '../../../src/api/037-create-partitions.js';
import { electLeadersHandler } from '../../../src/api/043-elect-leaders.js';
import { incrementalAlterConfigs } from '../../../src/api/044-incremental-alter-configs.js';
import { alterPartitionReassignmentsHandler } from '../../../src/api/045-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from '../../../src/api/046-list-partition-reassignments.js';
import { describeUserScramCredentials } from '../../../src/api/050-describe-user-scram-credentials.js';
import { alterUserScramCredentials } from '../../../src/api/051-alter-user-scram-credentials.js';
import { describeQuorumHandler } from '../../../src/api/055-describe-quorum.js';
import { describeCluster } from '../../../src/api/060-describe-cluster.js';
import { listConfigResourcesHandler } from '../../../src/api/074-list-config-resources.js';
import { describeTopicPartitionsHandler } from '../../../src/api/075-describe-topic-partitions.js';
import { AclOperation, ResourceType, type Access, type AuthorizeOptions } from '../../../src/api/access.js';
import type { Services } from '../../../src/api/services.js';
import { TopicManager } from '../../../src/cluster/topics.js';
import { loadConfig, type BrokerConfig } from '../../../src/config.js';
import { openMemoryMetadataStore } from '../../../src/metadata/index.js';
import type { MetadataStore } from '../../../src/metadata/types.js';
import { buildBatch } from '../log/support.js';
import { answer, fakeAccess, fakeCluster, fakeNode, FakeTopicsAndPartitions, requestContext, topicRecord } from './fakes.js';

const { TOPIC, CLUSTER } = ResourceType;
const { DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, CREATE, DELETE, ALTER, READ, CLUSTER_ACTION } = AclOperation;
const TAF = ErrorCode.TOPIC_AUTHORIZATION_FAILED;
const CAF = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
const GAF = ErrorCode.GROUP_AUTHORIZATION_FAILED;
const UNSET = -2147483648;
/** Config resource types (ConfigResource.Type). */
const CONFIG = { TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, CLIENT_METRICS: 16, GROUP: 32 } as const;

type Rule = (op: number, type: number, name: string) => boolean;
const allowAll: Rule = () => true;
const denyAll: Rule = () => false;

/** fakeAccess, also marking the checks made with logIfDenied=false. */
function access(allows: Rule, checks: string[] = []): Access {
  const inner = fakeAccess(allows, checks);
  const mark = (from: number, opts?: AuthorizeOptions): void => {
    if (opts?.logIfDenied === false) for (let i = from; i < checks.length; i++) checks[i] += ' (not logged)';
  };
  return {
    ...inner,
    authorize: (op, type, name, opts) => {
      const from = checks.length;
      const ok = inner.authorize(op, type, name);
      mark(from, opts);
      return ok;
    },
    authorizeCluster: (op, opts) => {
      const from = checks.length;
      const ok = inner.authorizeCluster(op);
      mark(from, opts);
      return ok;
    },
    allowedNames: (op, type, names, opts) => {
      const from = checks.length;
      const ok = inner.allowedNames(op, type, names);
      mark(from, opts);
      return ok;
    },
  };
}

const config = (overrides: [string, string][] = []): BrokerConfig => loadConfig({ overrides: [['log.dirs', tmpdir()], ...overrides] });

// ---- a topic registry on an in-memory metadata store, for the APIs that create, delete and alter topics ----

let store: MetadataStore | null = null;
let registry: TopicManager | null = null;
let world: FakeTopicsAndPartitions | null = null;

afterEach(async () => {
  await registry?.close();
  await store?.close();
  await world?.close();
  registry = null;
  store = null;
  world = null;
});

async function topicRegistry(topics: Record<string, number> = {}): Promise<Services['topics'] & TopicManager> {
  store = await openMemoryMetadataStore();
  registry = new TopicManager(store, config());
  await registry.load();
  for (const [name, partitions] of Object.entries(topics)) await registry.create(name, { partitions, replicationFactor: -1, configs: {} });
  return Object.assign(Object.create(registry) as TopicManager, { autoCreate: async () => undefined });
}

/** Topics over real in-memory logs, owned by this node: for the partition APIs and the node-view ones. */
async function partitionWorld(topics: Record<string, number>): Promise<FakeTopicsAndPartitions> {
  world = new FakeTopicsAndPartitions();
  for (const [name, partitions] of Object.entries(topics)) await world.addTopic(topicRecord(name, partitions));
  return world;
}

async function nodeViewServices(topics: Record<string, number> = { orders: 2 }, controllerListeners: string[] = []) {
  const w = await partitionWorld(topics);
  return { node: fakeNode({ controllerListeners }), topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService };
}

describe('ListOffsets (KafkaApis.handleListOffsetRequestV1AndAbove)', () => {
  const req = (...names: string[]) =>
    createListOffsetsRequest({ replicaId: -1, topics: names.map((name) => ({ name, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }, { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -1n, maxNumOffsets: 1 }] })) });

  it('answers every partition of a topic denied DESCRIBE with TOPIC_AUTHORIZATION_FAILED, existing or not, after the allowed topics', async () => {
    const w = await partitionWorld({ audit: 2, orders: 2 });
    await w.partitionService.get('orders', 0)!.log.append(buildBatch(3));
    const checks: string[] = [];
    const ctx = requestContext({ topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService }, { apiVersion: 9, access: access((_op, _t, name) => name === 'orders', checks) });
    const res = await answer(listOffsets.handle(req('audit', 'orders', 'secret'), ctx));
    expect(checks).toEqual(['DESCRIBE TOPIC audit', 'DESCRIBE TOPIC orders', 'DESCRIBE TOPIC secret']);
    expect(res.topics.map((t) => t.name)).toEqual(['orders', 'audit', 'secret']);
    expect(res.topics[0]!.partitions.map((p) => [p.partitionIndex, p.errorCode, p.offset])).toEqual([[0, 0, 3n], [1, 0, 0n]]);
    for (const t of res.topics.slice(1)) {
      expect(t.partitions).toEqual([0, 1].map((partitionIndex) => expect.objectContaining({ partitionIndex, errorCode: TAF, offset: -1n, timestamp: -1n, leaderEpoch: -1 })));
    }
  });

  it('answers unknown topics UNKNOWN_TOPIC_OR_PARTITION once DESCRIBE is allowed', async () => {
    const w = await partitionWorld({ orders: 1 });
    const ctx = requestContext({ topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService }, { apiVersion: 9, access: access(allowAll) });
    const res = await answer(listOffsets.handle(req('secret'), ctx));
    expect(res.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
  });
});

describe('CreateTopics (ControllerApis.createTopics)', () => {
  const topic = (name: string, numPartitions = 1) => createCreateTopicsRequestCreatableTopic({ name, numPartitions, replicationFactor: -1 });
  const send = async (rule: Rule, topics: ReturnType<typeof topic>[], o: { version?: number; checks?: string[]; validateOnly?: boolean } = {}) => {
    const registryTopics = await topicRegistry();
    const ctx = requestContext({ node: fakeNode(), config: config(), topics: registryTopics, mutationQuotas: NO_MUTATION_QUOTAS }, { apiVersion: o.version ?? 7, access: access(rule, o.checks) });
    return { res: await answer(createTopics.handle(createCreateTopicsRequest({ topics, validateOnly: o.validateOnly ?? false }), ctx)), registry: registryTopics };
  };

  it('with CREATE on the cluster checks no topic for CREATE, and DESCRIBE_CONFIGS on each without logging a denial', async () => {
    const checks: string[] = [];
    const { res, registry: r } = await send(allowAll, [topic('a', 2), topic('b')], { checks });
    expect(checks).toEqual(['CREATE CLUSTER kafka-cluster (not logged)', 'DESCRIBE_CONFIGS TOPIC a (not logged)', 'DESCRIBE_CONFIGS TOPIC b (not logged)']);
    expect(res.topics.map((t) => [t.name, t.errorCode, t.numPartitions, t.topicConfigErrorCode])).toEqual([['a', 0, 2, 0], ['b', 0, 1, 0]]);
    expect(res.topics[0]!.configs!.length).toBeGreaterThan(0);
    expect(r.get('a')?.partitions).toBe(2);
  });

  it('without it, CREATE on each topic: a topic denied is TOPIC_AUTHORIZATION_FAILED "Authorization failed." and is not created', async () => {
    const checks: string[] = [];
    const rule: Rule = (op, type, name) => op !== CREATE || (type === TOPIC && name === 'a');
    const { res, registry: r } = await send(rule, [topic('a'), topic('b')], { checks });
    expect(checks).toEqual([
      'CREATE CLUSTER kafka-cluster (not logged)',
      'CREATE TOPIC a',
      'CREATE TOPIC b',
      'DESCRIBE_CONFIGS TOPIC a (not logged)',
      'DESCRIBE_CONFIGS TOPIC b (not logged)',
    ]);
    expect(res.topics[0]).toMatchObject({ name: 'a', errorCode: 0, numPartitions: 1 });
    expect(res.topics[1]).toMatchObject({ name: 'b', errorCode: TAF, errorMessage: 'Authorization failed.', topicId: ZERO_UUID, numPartitions: -1 });
    expect(r.get('a')).toBeDefined();
    expect(r.get('b')).toBeUndefined();
  });

  it('creates a topic without DESCRIBE_CONFIGS on it but returns neither its configs nor its layout: topicConfigErrorCode TOPIC_AUTHORIZATION_FAILED', async () => {
    const { res, registry: r } = await send((op) => op !== DESCRIBE_CONFIGS, [topic('a', 3)]);
    expect(res.topics[0]).toMatchObject({ name: 'a', errorCode: 0, topicId: r.get('a')!.topicId, numPartitions: -1, replicationFactor: -1, configs: [], topicConfigErrorCode: TAF });
    expect(r.get('a')?.partitions).toBe(3);
  });

  it('authorizes neither duplicates nor __cluster_metadata, and counts only the topics allowed toward the partition bound', async () => {
    const checks: string[] = [];
    const rule: Rule = (op, type, name) => op !== CREATE || (type === TOPIC && name === 'a');
    const { res, registry: r } = await send(rule, [topic('a'), topic('dup'), topic('dup'), topic('__cluster_metadata'), topic('huge', 10_001)], { checks });
    expect(checks.filter((c) => c.startsWith('CREATE TOPIC'))).toEqual(['CREATE TOPIC a', 'CREATE TOPIC huge']);
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([
      ['a', 0],
      ['dup', ErrorCode.INVALID_REQUEST],
      ['dup', ErrorCode.INVALID_REQUEST],
      ['__cluster_metadata', ErrorCode.INVALID_REQUEST],
      ['huge', TAF],
    ]);
    expect(res.topics[3]!.errorMessage).toBe('Creation of internal topic __cluster_metadata is prohibited.');
    expect(r.get('a')).toBeDefined();
  });

  it('fails the whole request over the bound, denied topics included, when the allowed topics pass it', async () => {
    const { res } = await send((op, type, name) => op !== CREATE || name === 'huge', [topic('a'), topic('huge', 10_001)]);
    expect(res.topics.map((t) => [t.name, t.errorCode])).toEqual([['a', ErrorCode.POLICY_VIOLATION], ['huge', ErrorCode.POLICY_VIOLATION]]);
  });
});

describe('DeleteTopics (ControllerApis.deleteTopics)', () => {
  const setup = async (rule: Rule, checks?: string[]) => {
    const topics = await topicRegistry({ a: 1, b: 1, c: 1 });
    return { topics, ctx: (apiVersion: number) => requestContext({ config: config(), topics, mutationQuotas: NO_MUTATION_QUOTAS }, { apiVersion, access: access(rule, checks) }) };
  };

  it('with DELETE on the cluster checks no topic', async () => {
    const checks: string[] = [];
    const { topics, ctx } = await setup(allowAll, checks);
    const res = await answer(deleteTopics.handle(createDeleteTopicsRequest({ topicNames: ['a', 'b'] }), ctx(5)));
    expect(checks).toEqual(['DELETE CLUSTER kafka-cluster (not logged)']);
    expect(res.responses.map((r) => [r.name, r.errorCode])).toEqual([['a', 0], ['b', 0]]);
    expect(topics.get('a')).toBeUndefined();
  });

  it('by name: no DESCRIBE is TOPIC_AUTHORIZATION_FAILED existing or not; DESCRIBE without DELETE is TOPIC_AUTHORIZATION_FAILED once it exists', async () => {
    const checks: string[] = [];
    const rule: Rule = (op, type, name) => type === TOPIC && ((op === DESCRIBE && name !== 'secret' && name !== 'c') || (op === DELETE && name === 'b'));
    const { topics, ctx } = await setup(rule, checks);
    const b = topics.get('b')!.topicId;
    const res = await answer(deleteTopics.handle(createDeleteTopicsRequest({ topicNames: ['a', 'b', 'c', 'secret', 'ghost'] }), ctx(5)));
    expect(checks).toEqual([
      'DELETE CLUSTER kafka-cluster (not logged)',
      ...['a', 'b', 'c', 'secret', 'ghost'].map((n) => `DESCRIBE TOPIC ${n}`),
      ...['a', 'b', 'c', 'secret', 'ghost'].map((n) => `DELETE TOPIC ${n}`),
    ]);
    expect(res.responses.map((r) => [r.name, r.topicId, r.errorCode, r.errorMessage])).toEqual([
      ['a', ZERO_UUID, TAF, 'Topic authorization failed.'],
      ['b', b, 0, null],
      ['c', ZERO_UUID, TAF, 'Topic authorization failed.'],
      ['secret', ZERO_UUID, TAF, 'Topic authorization failed.'],
      ['ghost', ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 'This server does not host this topic-partition.'],
    ]);
    expect(topics.get('a')).toBeDefined();
    expect(topics.get('b')).toBeUndefined();
  });

  it('by id (v6): an unknown id is UNKNOWN_TOPIC_ID; one not deletable is TOPIC_AUTHORIZATION_FAILED, named only with DESCRIBE', async () => {
    const checks: string[] = [];
    const rule: Rule = (op, type, name) => type === TOPIC && ((op === DESCRIBE && name === 'a') || (op === DELETE && name === 'c'));
    const { topics, ctx } = await setup(rule, checks);
    const [a, b, c] = ['a', 'b', 'c'].map((n) => topics.get(n)!.topicId);
    const unknown = 'dW5rbm93bi10b3BpYy1pZA';
    const res = await answer(deleteTopics.handle(createDeleteTopicsRequest({ topics: [a, b, c, unknown].map((topicId) => ({ name: null, topicId })) }), ctx(6)));
    expect(checks).toEqual(['DELETE CLUSTER kafka-cluster (not logged)', 'DESCRIBE TOPIC a', 'DESCRIBE TOPIC b', 'DESCRIBE TOPIC c', 'DELETE TOPIC a', 'DELETE TOPIC b', 'DELETE TOPIC c']);
    expect(res.responses.map((r) => [r.name, r.topicId, r.errorCode])).toEqual([
      ['a', a, TAF],
      [null, b, TAF],
      ['c', c, 0],
      [null, unknown, ErrorCode.UNKNOWN_TOPIC_ID],
    ]);
    expect(topics.get('c')).toBeUndefined();
  });

  it('carries no message before v5', async () => {
    const { ctx } = await setup(denyAll);
    const res = await answer(deleteTopics.handle(createDeleteTopicsRequest({ topicNames: ['a'] }), ctx(4)));
    expect(res.responses).toEqual([expect.objectContaining({ name: 'a', errorCode: TAF, errorMessage: null })]);
  });
});

describe('DeleteRecords (KafkaApis.handleDeleteRecordsRequest)', () => {
  it('answers every partition of a topic denied DELETE with TOPIC_AUTHORIZATION_FAILED and low watermark -1, before existence', async () => {
    const w = await partitionWorld({ audit: 1, orders: 1 });
    await w.partitionService.get('orders', 0)!.log.append(buildBatch(4));
    const checks: string[] = [];
    const ctx = requestContext({ topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService }, { apiVersion: 2, access: access((op, _t, name) => op === DELETE && name !== 'audit' && name !== 'secret', checks) });
    const partitions = [{ partitionIndex: 0, offset: 2n }];
    const res = await answer(deleteRecords.handle(createDeleteRecordsRequest({ topics: ['orders', 'audit', 'secret', 'ghost'].map((name) => ({ name, partitions })) }), ctx));
    expect(checks).toEqual(['DELETE TOPIC orders', 'DELETE TOPIC audit', 'DELETE TOPIC secret', 'DELETE TOPIC ghost']);
    expect(res.topics.map((t) => [t.name, t.partitions[0]!.errorCode, t.partitions[0]!.lowWatermark])).toEqual([
      ['orders', 0, 2n],
      ['audit', TAF, -1n],
      ['secret', TAF, -1n],
      ['ghost', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, -1n],
    ]);
    expect(w.partitionService.get('audit', 0)!.log.logStartOffset).toBe(0);
  });
});

describe('OffsetForLeaderEpoch (KafkaApis.handleOffsetForLeaderEpochRequest)', () => {
  const req = (...topics: string[]) => createOffsetForLeaderEpochRequest({ topics: topics.map((topic) => ({ topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] })) });

  it('with CLUSTER_ACTION on the cluster (a follower) checks no topic', async () => {
    const w = await partitionWorld({ orders: 1 });
    const checks: string[] = [];
    const ctx = requestContext({ topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService }, { apiVersion: 4, access: access((op) => op === CLUSTER_ACTION, checks) });
    const res = await answer(offsetForLeaderEpoch.handle(req('orders'), ctx));
    expect(checks).toEqual(['CLUSTER_ACTION CLUSTER kafka-cluster (not logged)']);
    expect(res.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderEpoch: 0 });
  });

  it('else DESCRIBE on each topic: the topics denied answered TOPIC_AUTHORIZATION_FAILED after the others', async () => {
    const w = await partitionWorld({ audit: 1, orders: 1 });
    const checks: string[] = [];
    const ctx = requestContext({ topics: w.topicService, cluster: fakeCluster(), partitions: w.partitionService }, { apiVersion: 4, access: access((op, _t, name) => op === DESCRIBE && name === 'orders', checks) });
    const res = await answer(offsetForLeaderEpoch.handle(req('audit', 'orders', 'secret'), ctx));
    expect(checks).toEqual(['CLUSTER_ACTION CLUSTER kafka-cluster (not logged)', 'DESCRIBE TOPIC audit', 'DESCRIBE TOPIC orders', 'DESCRIBE TOPIC secret']);
    expect(res.topics.map((t) => [t.topic, t.partitions[0]!.errorCode, t.partitions[0]!.leaderEpoch, t.partitions[0]!.endOffset])).toEqual([
      ['orders', 0, 0, 0n],
      ['audit', TAF, -1, -1n],
      ['secret', TAF, -1, -1n],
    ]);
  });
});

describe('DescribeConfigs (ConfigHelper.handleDescribeConfigsRequest)', () => {
  const services = async () => ({ node: fakeNode({ nodeId: 1 }), config: config(), clusterConfigs: { get: () => undefined, broker: () => undefined, entries: () => [], alter: async () => undefined, alterBroker: async () => undefined } as never, topics: await topicRegistry({ orders: 1 }) });
  const req = () =>
    createDescribeConfigsRequest({
      resources: [
        { resourceType: CONFIG.TOPIC, resourceName: 'orders', configurationKeys: ['retention.ms'] },
        { resourceType: CONFIG.TOPIC, resourceName: 'secret', configurationKeys: null },
        { resourceType: CONFIG.BROKER, resourceName: '1', configurationKeys: ['log.retention.ms'] },
        { resourceType: CONFIG.BROKER_LOGGER, resourceName: '1', configurationKeys: null },
        { resourceType: CONFIG.GROUP, resourceName: 'g', configurationKeys: null },
        { resourceType: CONFIG.CLIENT_METRICS, resourceName: 'm', configurationKeys: null },
      ],
    });

  it('checks DESCRIBE_CONFIGS on the topic, the cluster or the group; a resource denied gets the matching code and message, after the others', async () => {
    const checks: string[] = [];
    const rule: Rule = (_op, type, name) => type === TOPIC && name === 'orders';
    const res = await answer(describeConfigs.handle(req(), requestContext(await services(), { apiVersion: 4, access: access(rule, checks) })));
    expect(checks).toEqual([
      'DESCRIBE_CONFIGS TOPIC orders',
      'DESCRIBE_CONFIGS TOPIC secret',
      'DESCRIBE_CONFIGS CLUSTER kafka-cluster',
      'DESCRIBE_CONFIGS CLUSTER kafka-cluster',
      'DESCRIBE_CONFIGS GROUP g',
      'DESCRIBE_CONFIGS CLUSTER kafka-cluster',
    ]);
    expect(res.results.map((r) => [r.resourceType, r.resourceName, r.errorCode, r.errorMessage, r.configs.length])).toEqual([
      [CONFIG.TOPIC, 'orders', 0, '', 1],
      [CONFIG.TOPIC, 'secret', TAF, 'Topic authorization failed.', 0],
      [CONFIG.BROKER, '1', CAF, 'Cluster authorization failed.', 0],
      [CONFIG.BROKER_LOGGER, '1', CAF, 'Cluster authorization failed.', 0],
      [CONFIG.GROUP, 'g', GAF, 'Group authorization failed.', 0],
      [CONFIG.CLIENT_METRICS, 'm', CAF, 'Cluster authorization failed.', 0],
    ]);
  });

  it('allowed, describes as before: an unknown topic, the broker, and types this node does not keep', async () => {
    const res = await answer(describeConfigs.handle(req(), requestContext(await services(), { apiVersion: 4, access: access(allowAll) })));
    expect(res.results.map((r) => [r.resourceName, r.errorCode])).toEqual([
      ['orders', 0],
      ['secret', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['1', 0],
      ['1', ErrorCode.INVALID_REQUEST],
      ['g', ErrorCode.INVALID_REQUEST],
      ['m', ErrorCode.INVALID_REQUEST],
    ]);
    expect(res.results[2]!.configs.map((c) => c.name)).toEqual(['log.retention.ms']);
  });
});

describe('AlterConfigs (ConfigAdminManager.preprocess, then ControllerApis.authorizeAlterResource)', () => {
  const services = async (controllerListeners: string[] = []) => ({ node: fakeNode({ nodeId: 1, controllerListeners }), clusterConfigs: { get: () => undefined, broker: () => undefined, entries: () => [], alter: async () => undefined, alterBroker: async () => undefined } as never, topics: await topicRegistry({ orders: 1 }) });
  const resource = (resourceType: number, resourceName: string, configs: { name: string; value: string | null }[] = [{ name: 'retention.ms', value: '5000' }]) => ({ resourceType, resourceName, configs });

  it('checks ALTER_CONFIGS after the key, value and broker-id checks, before the name and existence: the code and message per resource', async () => {
    const checks: string[] = [];
    const s = await services();
    const req = createAlterConfigsRequest({
      resources: [
        resource(CONFIG.TOPIC, 'orders'),
        resource(CONFIG.TOPIC, 'bad name!'),
        resource(CONFIG.TOPIC, 'secret', [{ name: 'retention.ms', value: '1' }, { name: 'retention.ms', value: '2' }]),
        resource(CONFIG.BROKER, '9'),
        resource(CONFIG.BROKER, ''),
        resource(CONFIG.GROUP, 'g'),
        resource(CONFIG.BROKER_LOGGER, '1'),
      ],
    });
    const res = await answer(alterConfigs.handle(req, requestContext(s, { apiVersion: 2, access: access((_op, _t, name) => name === 'orders', checks) })));
    expect(checks).toEqual(['ALTER_CONFIGS TOPIC orders', 'ALTER_CONFIGS TOPIC bad name!', 'ALTER_CONFIGS CLUSTER kafka-cluster', 'ALTER_CONFIGS GROUP g']);
    expect(res.responses.map((r) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
      ['orders', 0, ''],
      ['bad name!', TAF, 'Topic authorization failed.'],
      ['secret', ErrorCode.INVALID_REQUEST, 'Error due to duplicate config keys'],
      ['9', ErrorCode.INVALID_REQUEST, 'Unexpected broker id, expected 1 or empty string, but received 9'],
      ['', CAF, 'Cluster authorization failed.'],
      ['g', GAF, 'Group authorization failed.'],
      ['1', ErrorCode.INVALID_REQUEST, 'Unsupported resource type 8'],
    ]);
    expect(s.topics.get('orders')!.configs).toEqual({ 'retention.ms': '5000' });
  });

  it('on a controller listener authorizes first, as ControllerApis without a forwarding broker', async () => {
    const checks: string[] = [];
    const req = createAlterConfigsRequest({ resources: [resource(CONFIG.TOPIC, 'secret', [{ name: 'a', value: '1' }, { name: 'a', value: '2' }])] });
    const ctx = requestContext(await services(['CONTROLLER']), { apiVersion: 2, listenerName: 'CONTROLLER', access: access(denyAll, checks) });
    const res = await answer(alterConfigs.handle(req, ctx));
    expect(checks).toEqual(['ALTER_CONFIGS TOPIC secret']);
    expect(res.responses[0]).toMatchObject({ errorCode: TAF, errorMessage: 'Topic authorization failed.' });
  });
});

describe('IncrementalAlterConfigs (ConfigAdminManager.preprocess, then ControllerApis)', () => {
  const SET = 0;
  const DELETE_OP = 1;
  const services = async (controllerListeners: string[] = []) => ({
    node: fakeNode({ nodeId: 1, controllerListeners }),
    config: config(),
    clusterConfigs: { get: () => undefined, broker: () => undefined, entries: () => [], alter: async () => undefined, alterBroker: async () => undefined } as never,
    topics: await topicRegistry({ orders: 1 }),
  });
  const resource = (resourceType: number, resourceName: string, configs: { name: string; configOperation: number; value: string | null }[] = [{ name: 'retention.ms', configOperation: SET, value: '5000' }]) => ({ resourceType, resourceName, configs });

  it('checks ALTER_CONFIGS after the key and null-value checks; BROKER_LOGGER needs ALTER_CONFIGS on the cluster from a broker listener', async () => {
    const checks: string[] = [];
    const s = await services();
    const req = createIncrementalAlterConfigsRequest({
      resources: [
        resource(CONFIG.TOPIC, 'orders'),
        resource(CONFIG.TOPIC, 'secret'),
        resource(CONFIG.TOPIC, 'nulls', [{ name: 'retention.ms', configOperation: SET, value: null }, { name: 'cleanup.policy', configOperation: 2, value: null }, { name: 'x', configOperation: DELETE_OP, value: null }]),
        resource(CONFIG.BROKER, ''),
        resource(CONFIG.BROKER_LOGGER, '1'),
        resource(CONFIG.CLIENT_METRICS, 'm'),
        resource(CONFIG.GROUP, 'g'),
      ],
    });
    const res = await answer(incrementalAlterConfigs.handle(req, requestContext(s, { apiVersion: 1, access: access((_op, type, name) => type === TOPIC && name === 'orders', checks) })));
    expect(checks).toEqual(['ALTER_CONFIGS TOPIC orders', 'ALTER_CONFIGS TOPIC secret', 'ALTER_CONFIGS CLUSTER kafka-cluster', 'ALTER_CONFIGS CLUSTER kafka-cluster', 'ALTER_CONFIGS CLUSTER kafka-cluster', 'ALTER_CONFIGS GROUP g']);
    expect(res.responses.map((r) => [r.resourceName, r.errorCode, r.errorMessage])).toEqual([
      ['orders', 0, ''],
      ['secret', TAF, 'Topic authorization failed.'],
      ['nulls', ErrorCode.INVALID_REQUEST, 'Null value not supported for : retention.ms, cleanup.policy'],
      ['', CAF, 'Cluster authorization failed.'],
      ['1', CAF, 'Cluster authorization failed.'],
      ['m', CAF, 'Cluster authorization failed.'],
      ['g', GAF, 'Group authorization failed.'],
    ]);
    expect(s.topics.get('orders')!.configs).toEqual({ 'retention.ms': '5000' });
  });

  it('on a controller listener authorizes first, BROKER_LOGGER with CLUSTER_ACTION', async () => {
    const checks: string[] = [];
    const req = createIncrementalAlterConfigsRequest({ resources: [resource(CONFIG.TOPIC, 'secret', [{ name: 'retention.ms', configOperation: SET, value: null }]), resource(CONFIG.BROKER_LOGGER, '1')] });
    const ctx = requestContext(await services(['CONTROLLER']), { apiVersion: 1, listenerName: 'CONTROLLER', access: access((op) => op === CLUSTER_ACTION, checks) });
    const res = await answer(incrementalAlterConfigs.handle(req, ctx));
    expect(checks).toEqual(['ALTER_CONFIGS TOPIC secret', 'CLUSTER_ACTION CLUSTER kafka-cluster']);
    expect(res.responses.map((r) => [r.resourceName, r.errorCode])).toEqual([
      ['secret', TAF],
      ['1', ErrorCode.INVALID_REQUEST],
    ]);
  });
});

describe('DescribeLogDirs (KafkaApis.handleDescribeLogDirsRequest)', () => {
  const services = () => ({ config: config(), partitions: { hostedStats: async () => [{ topic: 'orders', partition: 0, sizeInBytes: 10 }] } as never });

  it('without DESCRIBE on the cluster answers no log dirs and CLUSTER_AUTHORIZATION_FAILED at the top level', async () => {
    const checks: string[] = [];
    const res = await answer(describeLogDirs.handle(createDescribeLogDirsRequest({ topics: null }), requestContext(services(), { apiVersion: 4, access: access(denyAll, checks) })));
    expect(checks).toEqual(['DESCRIBE CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, results: [] });
  });

  it('with it describes the log dir', async () => {
    const res = await answer(describeLogDirs.handle(createDescribeLogDirsRequest({ topics: null }), requestContext(services(), { apiVersion: 4, access: access(allowAll) })));
    expect(res.errorCode).toBe(0);
    expect(res.results[0]!.topics).toEqual([expect.objectContaining({ name: 'orders', partitions: [expect.objectContaining({ partitionIndex: 0, partitionSize: 10n })] })]);
  });
});

describe('CreatePartitions (ControllerApis.createPartitions)', () => {
  it('checks ALTER on each topic named once; a topic denied is TOPIC_AUTHORIZATION_FAILED with no message, existing or not', async () => {
    const topics = await topicRegistry({ orders: 1, audit: 1 });
    const checks: string[] = [];
    const ctx = requestContext({ node: fakeNode(), topics, mutationQuotas: NO_MUTATION_QUOTAS }, { apiVersion: 3, access: access((op, _t, name) => op === ALTER && name === 'orders', checks) });
    const req = createCreatePartitionsRequest({ topics: ['orders', 'audit', 'secret', 'dup', 'dup'].map((name) => ({ name, count: 3, assignments: null })) });
    const res = await answer(createPartitions.handle(req, ctx));
    expect(checks).toEqual(['ALTER TOPIC orders', 'ALTER TOPIC audit', 'ALTER TOPIC secret']);
    expect(res.results.map((r) => [r.name, r.errorCode, r.errorMessage])).toEqual([
      ['orders', 0, null],
      ['audit', TAF, null],
      ['secret', TAF, null],
      ['dup', ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.'],
      ['dup', ErrorCode.INVALID_REQUEST, 'Duplicate topic in request.'],
    ]);
    expect([topics.get('orders')!.partitions, topics.get('audit')!.partitions]).toEqual([3, 1]);
  });
});

describe('cluster operations refused whole (authorizeClusterOperation → the error response)', () => {
  it('ElectLeaders: ALTER on the cluster before the election type; the top level (v1+) and every named partition', async () => {
    const s = await nodeViewServices();
    const checks: string[] = [];
    const req = createElectLeadersRequest({ electionType: 7, topicPartitions: [{ topic: 'orders', partitions: [0, 1] }] });
    const res = await answer(electLeadersHandler.handle(req, requestContext(s, { apiVersion: 2, access: access(denyAll, checks) })));
    expect(checks).toEqual(['ALTER CLUSTER kafka-cluster']);
    expect(res.errorCode).toBe(CAF);
    expect(res.replicaElectionResults).toEqual([expect.objectContaining({ topic: 'orders', partitionResult: [0, 1].map((partitionId) => expect.objectContaining({ partitionId, errorCode: CAF, errorMessage: null })) })]);
    const v0 = await answer(electLeadersHandler.handle(req, requestContext(s, { apiVersion: 0, access: access(denyAll) })));
    expect(v0.errorCode).toBe(0);
    expect(v0.replicaElectionResults[0]!.partitionResult[0]!.errorCode).toBe(CAF);
    const allowed = await answer(electLeadersHandler.handle(createElectLeadersRequest({ topicPartitions: [{ topic: 'orders', partitions: [0] }] }), requestContext(s, { apiVersion: 2, access: access(allowAll) })));
    expect(allowed.replicaElectionResults[0]!.partitionResult[0]!.errorCode).toBe(ErrorCode.ELECTION_NOT_NEEDED);
  });

  it('AlterPartitionReassignments: ALTER on the cluster; the top level and every partition', async () => {
    const s = await nodeViewServices();
    const checks: string[] = [];
    const req = createAlterPartitionReassignmentsRequest({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [7] }, { partitionIndex: 1, replicas: null }] }] });
    const res = await answer(alterPartitionReassignmentsHandler.handle(req, requestContext(s, { apiVersion: 1, access: access(denyAll, checks) })));
    expect(checks).toEqual(['ALTER CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, responses: [{ name: 'orders', partitions: [{ partitionIndex: 0, errorCode: CAF }, { partitionIndex: 1, errorCode: CAF }] }] });
    const allowed = await answer(alterPartitionReassignmentsHandler.handle(req, requestContext(s, { apiVersion: 1, access: access(allowAll) })));
    expect(allowed.errorCode).toBe(0);
    expect(allowed.responses[0]!.partitions.map((p) => p.errorCode)).toEqual([0, ErrorCode.NO_REASSIGNMENT_IN_PROGRESS]);
  });

  it('ListPartitionReassignments: DESCRIBE on the cluster; the top level', async () => {
    const checks: string[] = [];
    const req = createListPartitionReassignmentsRequest({ topics: null });
    const res = await answer(listPartitionReassignmentsHandler.handle(req, requestContext({}, { apiVersion: 0, access: access((op) => op !== DESCRIBE, checks) })));
    expect(checks).toEqual(['DESCRIBE CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, topics: [] });
    expect(await answer(listPartitionReassignmentsHandler.handle(req, requestContext({}, { apiVersion: 0, access: access(allowAll) })))).toMatchObject({ errorCode: 0, topics: [] });
  });

  it('DescribeUserScramCredentials: DESCRIBE on the cluster; the top level and each user named, the store not read', async () => {
    const calls: string[] = [];
    const scramCredentials = {
      describe: async (users: readonly string[] | null) => (calls.push(`describe ${users}`), [{ user: 'alice', errorCode: 0, errorMessage: null, credentials: [] }]),
      alter: async () => [],
    } as never;
    const checks: string[] = [];
    const req = { users: [{ name: 'alice' }, { name: 'bob' }] };
    const res = await answer(describeUserScramCredentials.handle(req, requestContext({ scramCredentials }, { apiVersion: 0, access: access(denyAll, checks) })));
    expect(checks).toEqual(['DESCRIBE CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, errorMessage: null, results: [{ errorCode: CAF }, { errorCode: CAF }] });
    expect(calls).toEqual([]);
    const allowed = await answer(describeUserScramCredentials.handle(req, requestContext({ scramCredentials }, { apiVersion: 0, access: access(allowAll) })));
    expect(allowed).toMatchObject({ errorCode: 0, results: [{ user: 'alice', errorCode: 0 }] });
    expect(calls).toEqual(['describe alice,bob']);
  });

  it('AlterUserScramCredentials: ALTER on the cluster; every user named once, the store not written', async () => {
    const calls: string[] = [];
    const scramCredentials = { describe: async () => [], alter: async () => (calls.push('alter'), [{ user: 'bob', errorCode: 0, errorMessage: null }]) } as never;
    const checks: string[] = [];
    const req = { deletions: [{ name: 'bob', mechanism: 1 }], upsertions: [{ name: 'alice', mechanism: 2, iterations: 8192, salt: Buffer.alloc(16), saltedPassword: Buffer.alloc(64) }, { name: 'bob', mechanism: 2, iterations: 8192, salt: Buffer.alloc(16), saltedPassword: Buffer.alloc(64) }] };
    const res = await answer(alterUserScramCredentials.handle(req, requestContext({ scramCredentials }, { apiVersion: 0, access: access((op) => op !== ALTER, checks) })));
    expect(checks).toEqual(['ALTER CLUSTER kafka-cluster']);
    expect(res.results.map((r) => [r.user, r.errorCode])).toEqual([['alice', CAF], ['bob', CAF]]);
    expect(calls).toEqual([]);
    await answer(alterUserScramCredentials.handle(req, requestContext({ scramCredentials }, { apiVersion: 0, access: access(allowAll) })));
    expect(calls).toEqual(['alter']);
  });

  it('DescribeQuorum: DESCRIBE on the cluster; the top level', async () => {
    const s = await nodeViewServices();
    const checks: string[] = [];
    const req = createDescribeQuorumRequest({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] });
    const res = await answer(describeQuorumHandler.handle(req, requestContext(s, { apiVersion: 2, access: access(denyAll, checks) })));
    expect(checks).toEqual(['DESCRIBE CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, topics: [], nodes: [] });
    const allowed = await answer(describeQuorumHandler.handle(req, requestContext(s, { apiVersion: 2, access: access(allowAll) })));
    expect(allowed.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderId: 7 });
  });

  it('ListConfigResources: DESCRIBE_CONFIGS on the cluster, before the types asked for are looked at', async () => {
    const s = await nodeViewServices();
    const checks: string[] = [];
    const res = await answer(listConfigResourcesHandler.handle(createListConfigResourcesRequest({ resourceTypes: [99] }), requestContext(s, { apiVersion: 1, access: access(denyAll, checks) })));
    expect(checks).toEqual(['DESCRIBE_CONFIGS CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, configResources: [] });
    const allowed = await answer(listConfigResourcesHandler.handle(createListConfigResourcesRequest({ resourceTypes: [CONFIG.TOPIC] }), requestContext(s, { apiVersion: 1, access: access(allowAll) })));
    expect(allowed.configResources).toEqual([expect.objectContaining({ resourceName: 'orders', resourceType: CONFIG.TOPIC })]);
  });
});

describe('DescribeCluster (AuthHelper.computeDescribeClusterResponse, ControllerApis.handleDescribeCluster)', () => {
  const services = (controllerListeners: string[] = []) => ({ node: fakeNode({ controllerListeners }), cluster: fakeCluster() });
  const bits = (...ops: number[]) => ops.reduce((b, op) => b | (1 << op), 0);

  it('asks for the cluster’s operations only when requested: 0 without DESCRIBE, else those allowed', async () => {
    const checks: string[] = [];
    const only = (...ops: number[]): Rule => (op, type) => type === CLUSTER && ops.includes(op);
    const omitted = await answer(describeCluster.handle(createDescribeClusterRequest(), requestContext(services(), { apiVersion: 1, access: access(denyAll, checks) })));
    expect(omitted.clusterAuthorizedOperations).toBe(UNSET);
    expect(checks).toEqual([]);
    const asked = createDescribeClusterRequest({ includeClusterAuthorizedOperations: true });
    const denied = await answer(describeCluster.handle(asked, requestContext(services(), { apiVersion: 1, access: access(only(ALTER), checks) })));
    expect(checks).toEqual(['DESCRIBE CLUSTER kafka-cluster']);
    expect(denied).toMatchObject({ errorCode: 0, clusterAuthorizedOperations: 0, brokers: [expect.objectContaining({ brokerId: 7 })] });
    const some = await answer(describeCluster.handle(asked, requestContext(services(), { apiVersion: 1, access: access(only(DESCRIBE, ALTER)) })));
    expect(some.clusterAuthorizedOperations).toBe(bits(ALTER, DESCRIBE));
    const everything = await answer(describeCluster.handle(asked, requestContext(services(), { apiVersion: 1 })));
    expect(everything.clusterAuthorizedOperations).toBe(bits(CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, AclOperation.IDEMPOTENT_WRITE, ALTER, DESCRIBE));
  });

  it('on a controller listener needs ALTER on the cluster first: else the error response, CLUSTER_AUTHORIZATION_FAILED', async () => {
    const checks: string[] = [];
    const req = createDescribeClusterRequest({ endpointType: 2 });
    const ctx = (rule: Rule) => requestContext(services(['CONTROLLER']), { apiVersion: 1, listenerName: 'CONTROLLER', access: access(rule, checks) });
    const res = await answer(describeCluster.handle(req, ctx((op) => op === DESCRIBE)));
    expect(checks).toEqual(['ALTER CLUSTER kafka-cluster']);
    expect(res).toMatchObject({ errorCode: CAF, brokers: [] });
    const allowed = await answer(describeCluster.handle(req, ctx(allowAll)));
    expect(allowed).toMatchObject({ errorCode: 0, endpointType: 2, brokers: [expect.objectContaining({ brokerId: 7 })] });
  });
});

describe('DescribeTopicPartitions (DescribeTopicPartitionsRequestHandler)', () => {
  const req = (o: { topics?: string[]; limit?: number; cursor?: { topicName: string; partitionIndex: number } | null }) =>
    createDescribeTopicPartitionsRequest({ topics: (o.topics ?? []).map((name) => ({ name })), responsePartitionLimit: o.limit ?? 2000, cursor: o.cursor ?? null });
  const rule: Rule = (op, type, name) => type === TOPIC && name !== 'b' && name !== 'zz' && (op === DESCRIBE || (name === 'a' && op === READ));

  it('answers named topics denied DESCRIBE TOPIC_AUTHORIZATION_FAILED with no id, after the others, existing or not', async () => {
    const s = await nodeViewServices({ a: 2, b: 1, c: 1 });
    const checks: string[] = [];
    const res = await answer(describeTopicPartitionsHandler.handle(req({ topics: ['zz', 'c', 'b', 'a', 'nope'] }), requestContext(s, { apiVersion: 0, access: access(rule, checks) })));
    expect(checks).toEqual(['DESCRIBE TOPIC a', 'DESCRIBE TOPIC b', 'DESCRIBE TOPIC c', 'DESCRIBE TOPIC nope', 'DESCRIBE TOPIC zz']);
    expect(res.topics.map((t) => [t.name, t.errorCode, t.topicId === ZERO_UUID, t.partitions.length, t.topicAuthorizedOperations])).toEqual([
      ['a', 0, false, 2, (1 << DESCRIBE) | (1 << READ)],
      ['c', 0, false, 1, 1 << DESCRIBE],
      ['nope', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, true, 0, 1 << DESCRIBE],
      ['b', TAF, true, 0, UNSET],
      ['zz', TAF, true, 0, UNSET],
    ]);
  });

  it('leaves out the topics denied when every topic is asked for, and pages over the ones allowed', async () => {
    const s = await nodeViewServices({ a: 2, b: 1, c: 1 });
    const all = await answer(describeTopicPartitionsHandler.handle(req({}), requestContext(s, { apiVersion: 0, access: access(rule) })));
    expect(all.topics.map((t) => t.name)).toEqual(['a', 'c']);
    const first = await answer(describeTopicPartitionsHandler.handle(req({ limit: 2 }), requestContext(s, { apiVersion: 0, access: access(rule) })));
    expect(first.topics.map((t) => t.name)).toEqual(['a']);
    expect(first.nextCursor).toEqual(expect.objectContaining({ topicName: 'c', partitionIndex: 0 }));
  });

  it('refuses a bad cursor before authorizing anything', async () => {
    const s = await nodeViewServices({ a: 2 });
    const checks: string[] = [];
    const res = await answer(describeTopicPartitionsHandler.handle(req({ topics: ['a'], cursor: { topicName: 'b', partitionIndex: 0 } }), requestContext(s, { apiVersion: 0, access: access(rule, checks) })));
    expect(checks).toEqual([]);
    expect(res.topics).toEqual([expect.objectContaining({ name: 'a', errorCode: ErrorCode.INVALID_REQUEST })]);
  });
});
