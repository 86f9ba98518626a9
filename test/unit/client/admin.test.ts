import { afterEach, describe, expect, it } from 'vitest';
import type { VersionRange } from '../../../protocol/api.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { MetadataApi } from '../../../protocol/messages/003-metadata.gen.js';
import type { MetadataRequest, MetadataResponse } from '../../../protocol/messages/003-metadata.gen.js';
import { OffsetFetchApi } from '../../../protocol/messages/009-offset-fetch.gen.js';
import type { OffsetFetchRequest } from '../../../protocol/messages/009-offset-fetch.gen.js';
import { FindCoordinatorApi } from '../../../protocol/messages/010-find-coordinator.gen.js';
import type { FindCoordinatorRequest } from '../../../protocol/messages/010-find-coordinator.gen.js';
import { DescribeGroupsApi } from '../../../protocol/messages/015-describe-groups.gen.js';
import type { DescribeGroupsRequest } from '../../../protocol/messages/015-describe-groups.gen.js';
import { ListGroupsApi } from '../../../protocol/messages/016-list-groups.gen.js';
import { DescribeConfigsApi } from '../../../protocol/messages/032-describe-configs.gen.js';
import type { DescribeConfigsRequest } from '../../../protocol/messages/032-describe-configs.gen.js';
import { apis } from '../../../protocol/messages/index.gen.js';
import { ConfigSource, KafkaAdmin } from '../../../src/client/admin.js';
import { KafkaClient } from '../../../src/client/client.js';
import { KafkaResponseError, ProtocolViolationError } from '../../../src/client/errors.js';
import { FakeBroker } from './fake-broker.js';
import type { ReceivedRequest } from './fake-broker.js';

const open: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

/** Every API at the codec's full range, except those given. */
function ranges(overrides: Record<number, VersionRange> = {}): Map<number, VersionRange> {
  const m = new Map(apis.map((a) => [a.apiKey, a.validVersions] as const));
  for (const [k, r] of Object.entries(overrides)) m.set(Number(k), r);
  return m;
}

/**
 * Two fake brokers, nodes 1 and 2, both in every Metadata answer. `coordinator(group)` is the node FindCoordinator names for a group; a negative value is
 * answered with COORDINATOR_NOT_AVAILABLE, as Kafka does while __consumer_offsets has no leader.
 */
async function cluster(
  options: { apiVersions?: Map<number, VersionRange>; coordinator?: (group: string) => number } = {},
): Promise<{ bs: FakeBroker[]; admin: KafkaAdmin; client: KafkaClient }> {
  const bs = [await FakeBroker.start({ apiVersions: options.apiVersions }), await FakeBroker.start({ apiVersions: options.apiVersions })];
  open.push(...bs);
  const coordinator = options.coordinator ?? ((g: string) => (g.startsWith('a') ? 1 : 2));
  const metadata = (req: ReceivedRequest): MetadataResponse => {
    expect((req.body as MetadataRequest).topics).toEqual([]);
    return MetadataApi.response.create({
      brokers: bs.map((b, i) => ({ nodeId: i + 1, host: '127.0.0.1', port: b.port, rack: null })),
      clusterId: 'c',
      controllerId: 1,
      topics: [],
    });
  };
  const findCoordinator = (req: ReceivedRequest): unknown => {
    const r = req.body as FindCoordinatorRequest;
    expect(r.keyType).toBe(0);
    const answer = (key: string): { nodeId: number; host: string; port: number; errorCode: number; errorMessage: string | null } => {
      const nodeId = coordinator(key);
      if (nodeId < 0) return { nodeId: -1, host: '', port: -1, errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, errorMessage: 'The coordinator is not available.' };
      return { nodeId, host: '127.0.0.1', port: bs[nodeId - 1]?.port ?? 1, errorCode: 0, errorMessage: null };
    };
    if (req.version >= 4) return FindCoordinatorApi.response.create({ coordinators: r.coordinatorKeys.map((key) => ({ key, ...answer(key) })) });
    const a = answer(r.key);
    return FindCoordinatorApi.response.create({ ...a, errorMessage: req.version >= 1 ? a.errorMessage : '' });
  };
  for (const b of bs) {
    b.handlers[MetadataApi.apiKey] = metadata;
    b.handlers[FindCoordinatorApi.apiKey] = findCoordinator;
  }
  const client = await KafkaClient.connect({ bootstrap: bs[0]!.address, clientId: 'admin-unit', requestTimeoutMs: 5000 });
  open.push(client);
  return { bs, admin: new KafkaAdmin(client), client };
}

/** All requests of one API to either broker. */
function sent(bs: FakeBroker[], api: { apiKey: number; name: string }): Array<ReceivedRequest & { node: number }> {
  return bs.flatMap((b, i) => b.received.filter((r) => r.api.apiKey === api.apiKey).map((r) => ({ ...r, node: i + 1 })));
}

describe('KafkaAdmin.describeTopicConfigs', () => {
  it('asks one broker for every topic once and returns each config with its source', async () => {
    const { bs, admin } = await cluster();
    for (const b of bs) {
      b.handlers[DescribeConfigsApi.apiKey] = (req) =>
        DescribeConfigsApi.response.create({
          results: (req.body as DescribeConfigsRequest).resources.map((r) =>
            r.resourceName === 'gone'
              ? { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Topic gone does not exist.', resourceType: 2, resourceName: r.resourceName, configs: [] }
              : {
                  errorCode: 0,
                  errorMessage: null,
                  resourceType: 2,
                  resourceName: r.resourceName,
                  configs: [
                    cfg('cleanup.policy', 'compact', 1),
                    cfg('retention.ms', '604800000', 5),
                    { ...cfg('sasl.jaas.config', null, 4), isSensitive: true, readOnly: true },
                  ],
                },
          ),
        });
    }
    const result = await admin.describeTopicConfigs(['orders', 'gone', 'orders']);
    const requests = sent(bs, DescribeConfigsApi);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.version).toBe(DescribeConfigsApi.validVersions.max);
    const body = requests[0]!.body as DescribeConfigsRequest;
    expect(body.resources).toEqual([
      { resourceType: 2, resourceName: 'orders', configurationKeys: null },
      { resourceType: 2, resourceName: 'gone', configurationKeys: null },
    ]);
    expect([...result.keys()]).toEqual(['orders', 'gone']);
    expect(result.get('orders')).toEqual({
      errorCode: 0,
      errorMessage: null,
      configs: [
        { name: 'cleanup.policy', value: 'compact', source: ConfigSource.DYNAMIC_TOPIC_CONFIG, isSensitive: false, readOnly: false },
        { name: 'retention.ms', value: '604800000', source: ConfigSource.DEFAULT_CONFIG, isSensitive: false, readOnly: false },
        { name: 'sasl.jaas.config', value: null, source: ConfigSource.STATIC_BROKER_CONFIG, isSensitive: true, readOnly: true },
      ],
    });
    expect(result.get('gone')).toEqual({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, errorMessage: 'Topic gone does not exist.', configs: [] });
  });

  it('maps v0 IsDefault to DEFAULT_CONFIG and a non-default to a topic override', async () => {
    const { bs, admin } = await cluster({ apiVersions: ranges({ [DescribeConfigsApi.apiKey]: { min: 0, max: 0 } }) });
    for (const b of bs) {
      b.handlers[DescribeConfigsApi.apiKey] = (req) => {
        expect(req.version).toBe(0);
        return DescribeConfigsApi.response.create({
          results: [
            {
              errorCode: 0,
              errorMessage: null,
              resourceType: 2,
              resourceName: 't',
              configs: [
                v0cfg('cleanup.policy', 'compact', false),
                v0cfg('retention.ms', '604800000', true),
              ],
            },
          ],
        });
      };
    }
    const result = await admin.describeTopicConfigs(['t']);
    expect(result.get('t')!.configs.map((c) => [c.name, c.source])).toEqual([
      ['cleanup.policy', ConfigSource.DYNAMIC_TOPIC_CONFIG],
      ['retention.ms', ConfigSource.DEFAULT_CONFIG],
    ]);
  });

  it('rejects an answer that lacks a topic asked for', async () => {
    const { bs, admin } = await cluster();
    for (const b of bs) b.handlers[DescribeConfigsApi.apiKey] = () => DescribeConfigsApi.response.create({ results: [] });
    await expect(admin.describeTopicConfigs(['t'])).rejects.toBeInstanceOf(ProtocolViolationError);
  });

  it('sends nothing for no topics', async () => {
    const { bs, admin } = await cluster();
    expect((await admin.describeTopicConfigs([])).size).toBe(0);
    expect(sent(bs, DescribeConfigsApi)).toHaveLength(0);
  });
});

describe('KafkaAdmin.listGroups', () => {
  it('asks every broker and merges the answers, a group reported twice listed once', async () => {
    const { bs, admin } = await cluster();
    const groups = [
      [group('a-1', 'Stable'), group('shared', 'Empty')],
      [group('b-1', 'Empty', ''), group('shared', 'PreparingRebalance')],
    ];
    bs.forEach((b, i) => (b.handlers[ListGroupsApi.apiKey] = () => ListGroupsApi.response.create({ errorCode: 0, groups: groups[i]! })));
    const listed = await admin.listGroups();
    expect(listed).toEqual([
      { groupId: 'a-1', protocolType: 'consumer', groupState: 'Stable', groupType: 'classic' },
      { groupId: 'shared', protocolType: 'consumer', groupState: 'Empty', groupType: 'classic' },
      { groupId: 'b-1', protocolType: '', groupState: 'Empty', groupType: 'classic' },
    ]);
    expect(sent(bs, ListGroupsApi).map((r) => [r.node, r.version])).toEqual([
      [1, ListGroupsApi.validVersions.max],
      [2, ListGroupsApi.validVersions.max],
    ]);
    // The broker list was refreshed first (a Metadata for no topics beyond the one of connect).
    expect(sent(bs, MetadataApi).length).toBeGreaterThanOrEqual(2);
  });

  it('leaves out the state before ListGroups v4', async () => {
    const { bs, admin } = await cluster({ apiVersions: ranges({ [ListGroupsApi.apiKey]: { min: 0, max: 3 } }) });
    bs.forEach((b, i) => (b.handlers[ListGroupsApi.apiKey] = () => ListGroupsApi.response.create({ errorCode: 0, groups: [{ ...group(`g${i + 1}`, ''), groupType: '' }] })));
    const listed = await admin.listGroups();
    expect(listed).toEqual([
      { groupId: 'g1', protocolType: 'consumer' },
      { groupId: 'g2', protocolType: 'consumer' },
    ]);
    expect(sent(bs, ListGroupsApi).map((r) => r.version)).toEqual([3, 3]);
  });

  it("throws a broker's top-level error as LL_ERR_KAFKA naming the broker", async () => {
    const { bs, admin } = await cluster();
    bs[0]!.handlers[ListGroupsApi.apiKey] = () => ListGroupsApi.response.create({ errorCode: 0, groups: [group('a', 'Empty')] });
    bs[1]!.handlers[ListGroupsApi.apiKey] = () => ListGroupsApi.response.create({ errorCode: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, groups: [] });
    const err = await admin.listGroups().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(KafkaResponseError);
    expect(err).toMatchObject({ code: 'LL_ERR_KAFKA', errorName: 'COORDINATOR_LOAD_IN_PROGRESS', retriable: true, context: { broker: bs[1]!.address, nodeId: 2, apiName: 'ListGroups' } });
    expect((err as Error).message).toContain(`broker ${bs[1]!.address} (node 2)`);
  });
});

describe('KafkaAdmin.findGroupCoordinators', () => {
  it('batches every group into one FindCoordinator from v4 on, errors per group', async () => {
    const { bs, admin } = await cluster({ coordinator: (g) => (g === 'lost' ? -1 : g.startsWith('a') ? 1 : 2) });
    const { coordinators, errors } = await admin.findGroupCoordinators(['a1', 'b1', 'lost', 'a1']);
    expect([...coordinators]).toEqual([
      ['a1', 1],
      ['b1', 2],
    ]);
    expect([...errors]).toEqual([['lost', ErrorCode.COORDINATOR_NOT_AVAILABLE]]);
    const requests = sent(bs, FindCoordinatorApi);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.version).toBe(FindCoordinatorApi.validVersions.max);
    expect((requests[0]!.body as FindCoordinatorRequest).coordinatorKeys).toEqual(['a1', 'b1', 'lost']);
  });

  it('sends one FindCoordinator per group before v4', async () => {
    const { bs, admin } = await cluster({
      apiVersions: ranges({ [FindCoordinatorApi.apiKey]: { min: 0, max: 3 } }),
      coordinator: (g) => (g === 'lost' ? -1 : g.startsWith('a') ? 1 : 2),
    });
    const { coordinators, errors } = await admin.findGroupCoordinators(['a1', 'b1', 'lost']);
    expect(Object.fromEntries(coordinators)).toEqual({ a1: 1, b1: 2 });
    expect(Object.fromEntries(errors)).toEqual({ lost: ErrorCode.COORDINATOR_NOT_AVAILABLE });
    const requests = sent(bs, FindCoordinatorApi);
    expect(requests.map((r) => r.version)).toEqual([3, 3, 3]);
    expect(requests.map((r) => (r.body as FindCoordinatorRequest).key).sort()).toEqual(['a1', 'b1', 'lost']);
  });

  it('keeps at most 8 per-group requests in flight', async () => {
    const { bs, admin } = await cluster({ apiVersions: ranges({ [FindCoordinatorApi.apiKey]: { min: 0, max: 3 } }) });
    let inFlight = 0;
    let peak = 0;
    for (const b of bs) {
      const original = b.handlers[FindCoordinatorApi.apiKey]!;
      b.handlers[FindCoordinatorApi.apiKey] = async (req, socket) => {
        peak = Math.max(peak, ++inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return original(req, socket);
      };
    }
    const groups = Array.from({ length: 30 }, (_, i) => `g${i}`);
    const { coordinators } = await admin.findGroupCoordinators(groups);
    expect(coordinators.size).toBe(30);
    expect(peak).toBeLessThanOrEqual(8);
  });
});

describe('KafkaAdmin.fetchGroupOffsets', () => {
  /** Committed offsets per group: [topic, partition, offset]. */
  const commits: Record<string, Array<[string, number, bigint]>> = {
    a1: [
      ['t', 0, 10n],
      ['t', 1, -1n],
      ['u', 0, 7n],
    ],
    a2: [['t', 0, 3n]],
    b1: [['t', 2, 99n]],
  };

  function offsetFetchHandler(req: ReceivedRequest): unknown {
    const r = req.body as OffsetFetchRequest;
    const topicsOf = (g: string): Array<{ name: string; partitions: Array<{ partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; metadata: string | null; errorCode: number }> }> => {
      const byTopic = new Map<string, Array<[string, number, bigint]>>();
      for (const c of commits[g] ?? []) byTopic.set(c[0], [...(byTopic.get(c[0]) ?? []), c]);
      return [...byTopic].map(([name, cs]) => ({
        name,
        partitions: cs.map(([, partitionIndex, committedOffset]) => ({ partitionIndex, committedOffset, committedLeaderEpoch: req.version >= 5 ? 4 : -1, metadata: 'm', errorCode: 0 })),
      }));
    };
    if (req.version >= 8) {
      return OffsetFetchApi.response.create({
        groups: r.groups.map((g) => {
          expect(g.topics).toBeNull();
          return g.groupId === 'denied'
            ? { groupId: g.groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] }
            : { groupId: g.groupId, errorCode: 0, topics: topicsOf(g.groupId).map((t) => ({ ...t, topicId: 'AAAAAAAAAAAAAAAAAAAAAA' })) };
        }),
      });
    }
    expect(r.topics).toBeNull();
    if (r.groupId === 'denied') return OffsetFetchApi.response.create({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] });
    return OffsetFetchApi.response.create({ errorCode: 0, topics: topicsOf(r.groupId) });
  }

  it('sends all of a coordinator’s groups in one OffsetFetch v9 (not v10, which names topics by id) and leaves out partitions without a commit', async () => {
    const { bs, admin } = await cluster({ coordinator: (g) => (g === 'lost' ? -1 : g.startsWith('a') || g === 'denied' ? 1 : 2) });
    for (const b of bs) b.handlers[OffsetFetchApi.apiKey] = offsetFetchHandler;
    const result = await admin.fetchGroupOffsets(['b1', 'a1', 'lost', 'a2', 'denied']);
    expect([...result.keys()]).toEqual(['b1', 'a1', 'lost', 'a2', 'denied']);
    expect(result.get('a1')).toEqual({
      errorCode: 0,
      offsets: [
        { topic: 't', partition: 0, offset: 10n, leaderEpoch: 4, metadata: 'm', errorCode: 0 },
        { topic: 'u', partition: 0, offset: 7n, leaderEpoch: 4, metadata: 'm', errorCode: 0 },
      ],
    });
    expect(result.get('b1')!.offsets.map((o) => [o.topic, o.partition, o.offset])).toEqual([['t', 2, 99n]]);
    expect(result.get('lost')).toEqual({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, offsets: [] });
    expect(result.get('denied')).toEqual({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, offsets: [] });
    const requests = sent(bs, OffsetFetchApi);
    expect(requests.map((r) => [r.node, r.version, (r.body as OffsetFetchRequest).groups.map((g) => g.groupId)]).sort()).toEqual([
      [1, 9, ['a1', 'a2', 'denied']],
      [2, 9, ['b1']],
    ]);
    expect((requests[0]!.body as OffsetFetchRequest).groups[0]).toMatchObject({ memberId: null, memberEpoch: -1, topics: null });
  });

  it('sends one OffsetFetch per group, for every topic, before v8', async () => {
    const { bs, admin } = await cluster({
      apiVersions: ranges({ [OffsetFetchApi.apiKey]: { min: 0, max: 7 } }),
      coordinator: (g) => (g.startsWith('a') || g === 'denied' ? 1 : 2),
    });
    for (const b of bs) b.handlers[OffsetFetchApi.apiKey] = offsetFetchHandler;
    const result = await admin.fetchGroupOffsets(['a1', 'a2', 'b1', 'denied']);
    expect(result.get('a1')!.offsets.map((o) => [o.topic, o.partition, o.offset, o.leaderEpoch])).toEqual([
      ['t', 0, 10n, 4],
      ['u', 0, 7n, 4],
    ]);
    expect(result.get('a2')!.offsets.map((o) => o.offset)).toEqual([3n]);
    expect(result.get('denied')).toEqual({ errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, offsets: [] });
    const requests = sent(bs, OffsetFetchApi);
    expect(requests.map((r) => [r.node, r.version, (r.body as OffsetFetchRequest).groupId]).sort()).toEqual([
      [1, 7, 'a1'],
      [1, 7, 'a2'],
      [1, 7, 'denied'],
      [2, 7, 'b1'],
    ]);
  });

  it('reads offsets without a leader epoch before v5', async () => {
    const { bs, admin } = await cluster({ apiVersions: ranges({ [OffsetFetchApi.apiKey]: { min: 0, max: 3 } }) });
    for (const b of bs) b.handlers[OffsetFetchApi.apiKey] = offsetFetchHandler;
    const result = await admin.fetchGroupOffsets(['a2']);
    expect(result.get('a2')!.offsets).toEqual([{ topic: 't', partition: 0, offset: 3n, leaderEpoch: -1, metadata: 'm', errorCode: 0 }]);
    expect(sent(bs, OffsetFetchApi)[0]!.version).toBe(3);
  });

  it('gives COORDINATOR_NOT_AVAILABLE to a group whose coordinator is not a known broker, after refreshing the broker list once', async () => {
    let refreshes = 0;
    const { bs, admin } = await cluster({ coordinator: (g) => (g === 'far' ? 7 : 1) });
    for (const b of bs) {
      b.handlers[OffsetFetchApi.apiKey] = offsetFetchHandler;
      const md = b.handlers[MetadataApi.apiKey]!;
      b.handlers[MetadataApi.apiKey] = (req, s) => {
        refreshes++;
        return md(req, s);
      };
    }
    const result = await admin.fetchGroupOffsets(['far', 'a2']);
    expect(result.get('far')).toEqual({ errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, offsets: [] });
    expect(result.get('a2')!.errorCode).toBe(0);
    expect(refreshes).toBe(1);
  });

  it('rejects an answer that lacks a group asked for', async () => {
    const { bs, admin } = await cluster();
    for (const b of bs) b.handlers[OffsetFetchApi.apiKey] = () => OffsetFetchApi.response.create({ groups: [] });
    await expect(admin.fetchGroupOffsets(['a1'])).rejects.toMatchObject({ code: 'LL_ERR_CLIENT_PROTOCOL' });
  });
});

describe('KafkaAdmin.describeGroups', () => {
  it("asks each group's coordinator about all its groups at once", async () => {
    const { bs, admin } = await cluster({ coordinator: (g) => (g === 'lost' ? -1 : g.startsWith('a') ? 1 : 2) });
    for (const b of bs) {
      b.handlers[DescribeGroupsApi.apiKey] = (req) =>
        DescribeGroupsApi.response.create({
          groups: (req.body as DescribeGroupsRequest).groups.map((groupId) =>
            groupId === 'a-unknown'
              ? { ...described(groupId, 'Dead', '', 0), errorCode: ErrorCode.GROUP_ID_NOT_FOUND }
              : described(groupId, groupId === 'b1' ? 'Stable' : 'Empty', 'consumer', groupId === 'b1' ? 2 : 0),
          ),
        });
    }
    const result = await admin.describeGroups(['a1', 'b1', 'a-unknown', 'lost']);
    expect(Object.fromEntries(result)).toEqual({
      a1: { errorCode: 0, state: 'Empty', protocolType: 'consumer', members: 0 },
      b1: { errorCode: 0, state: 'Stable', protocolType: 'consumer', members: 2 },
      'a-unknown': { errorCode: ErrorCode.GROUP_ID_NOT_FOUND, state: 'Dead', protocolType: '', members: 0 },
      lost: { errorCode: ErrorCode.COORDINATOR_NOT_AVAILABLE, state: '', protocolType: '', members: 0 },
    });
    expect(sent(bs, DescribeGroupsApi).map((r) => [r.node, (r.body as DescribeGroupsRequest).groups]).sort()).toEqual([
      [1, ['a1', 'a-unknown']],
      [2, ['b1']],
    ]);
  });
});

function cfg(name: string, value: string | null, configSource: number): ReturnType<typeof DescribeConfigsApi.response.create>['results'][number]['configs'][number] {
  return { name, value, readOnly: false, isDefault: false, configSource, isSensitive: false, synonyms: [], configType: 0, documentation: null };
}

function v0cfg(name: string, value: string, isDefault: boolean): ReturnType<typeof cfg> {
  return { name, value, readOnly: false, isDefault, configSource: -1, isSensitive: false, synonyms: [], configType: 0, documentation: '' };
}

function group(groupId: string, groupState: string, protocolType = 'consumer'): { groupId: string; protocolType: string; groupState: string; groupType: string } {
  return { groupId, protocolType, groupState, groupType: 'classic' };
}

function described(groupId: string, groupState: string, protocolType: string, members: number): ReturnType<typeof DescribeGroupsApi.response.create>['groups'][number] {
  return {
    errorCode: 0,
    errorMessage: null,
    groupId,
    groupState,
    protocolType,
    protocolData: protocolType === '' ? '' : 'range',
    members: Array.from({ length: members }, (_, i) => ({
      memberId: `m${i}`,
      groupInstanceId: null,
      clientId: 'c',
      clientHost: '/127.0.0.1',
      memberMetadata: Buffer.alloc(0),
      memberAssignment: Buffer.alloc(0),
    })),
    authorizedOperations: -2147483648,
  };
}
