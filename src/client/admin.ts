/**
 * Admin calls on top of a KafkaClient, for tools that read a cluster's state rather than its records:
 * geo-replication mirrors topics with their config overrides and consumer groups with their committed
 * offsets from a source cluster, and needs exactly these reads.
 *
 *   describeTopicConfigs ──► DescribeConfigs (TOPIC resources) ──► any broker
 *   listGroups           ──► ListGroups ──► every broker (each answers only the groups it coordinates)
 *   findGroupCoordinators──► FindCoordinator (key type GROUP) ──► any broker: v4+ one batched request, else one per group
 *   fetchGroupOffsets    ──► FindCoordinator, then OffsetFetch ──► each coordinator: v8+ all its groups at once, v2-7 one per group
 *   describeGroups       ──► FindCoordinator, then DescribeGroups ──► each coordinator, all its groups at once
 *
 * Routing follows Kafka's admin client (KafkaAdminClient): topic configs go to the least loaded node
 * (LeastLoadedNodeProvider; any broker answers them from its metadata image), ListGroups to every broker
 * found by Metadata (KafkaAdminClient.listGroups), group requests to the group's coordinator (CoordinatorStrategy,
 * ListConsumerGroupOffsetsHandler, DescribeConsumerGroupsHandler).
 *
 * As in client.ts, Kafka errors are data: a group whose coordinator cannot be found, or whose coordinator
 * answers NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS, comes back with that `errorCode`, and the caller
 * decides whether to retry. Nothing here retries. Exceptions are for what has no result: transport
 * failures, a broker's top-level ListGroups error (KafkaResponseError, naming the broker), an answer that
 * lacks something asked for (ProtocolViolationError). Every request uses the connection's request timeout,
 * which is the client's `requestTimeoutMs` (the cluster passes it to each connection it opens).
 */
import { ConfigSource } from '../../protocol/config-source.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { DescribeConfigsResponse } from '../../protocol/messages/032-describe-configs.gen.js';
import { DescribeConfigsApi } from '../../protocol/messages/032-describe-configs.gen.js';
import type { DescribeGroupsResponse } from '../../protocol/messages/015-describe-groups.gen.js';
import { DescribeGroupsApi } from '../../protocol/messages/015-describe-groups.gen.js';
import type { FindCoordinatorResponse } from '../../protocol/messages/010-find-coordinator.gen.js';
import { FindCoordinatorApi } from '../../protocol/messages/010-find-coordinator.gen.js';
import type { ListGroupsResponse } from '../../protocol/messages/016-list-groups.gen.js';
import { ListGroupsApi } from '../../protocol/messages/016-list-groups.gen.js';
import type { OffsetFetchResponse, OffsetFetchResponsePartition } from '../../protocol/messages/009-offset-fetch.gen.js';
import { OffsetFetchApi } from '../../protocol/messages/009-offset-fetch.gen.js';
import type { KafkaClient } from './client.js';
import type { Cluster } from './cluster.js';
import type { Connection } from './connection.js';
import { ProtocolViolationError, throwIfError } from './errors.js';

/** Kafka's `ConfigResource.Type` for a topic (DescribeConfigs resource type). */
const RESOURCE_TYPE_TOPIC = 2;
/** FindCoordinator key type of a consumer group (Kafka's `CoordinatorType.GROUP`). */
const KEY_TYPE_GROUP = 0;
/** Requests in flight at once when a version needs one request per group (bounded, not one per group at once). */
const PER_GROUP_CONCURRENCY = 8;
/** OffsetFetch v10 (KIP-848) names topics by id only; v9 is the newest that names them, and Kafka 4.4 serves 1-10. */
const OFFSET_FETCH_MAX_BY_NAME = 9;
/** OffsetFetch v2 is the first that takes `topics: null` for "every topic" and has a top-level error code. */
const OFFSET_FETCH_MIN_ALL_TOPICS = 2;

/** Kafka's DescribeConfigs `ConfigSource` (protocol/config-source.ts). */
export { ConfigSource };

export interface TopicConfigEntry {
  readonly name: string;
  /** Null for a sensitive config (Kafka never sends those values) or one without a value. */
  readonly value: string | null;
  /** A ConfigSource: 1 for a topic override, 5 for Kafka's default, 2-4 for a broker-level setting; -1 if the broker did not say. */
  readonly source: number;
  readonly isSensitive: boolean;
  readonly readOnly: boolean;
}

export interface TopicConfigsResult {
  /** E.g. UNKNOWN_TOPIC_OR_PARTITION, TOPIC_AUTHORIZATION_FAILED. */
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly configs: TopicConfigEntry[];
}

export interface ListedGroup {
  readonly groupId: string;
  /** `consumer` for consumer groups (either protocol), `connect`, or '' for a group only committed to ("simple" group). */
  readonly protocolType: string;
  /** ListGroups v4+ (KIP-518): Empty, Stable, PreparingRebalance, ... */
  readonly groupState?: string;
  /** ListGroups v5+ (KIP-848): classic, consumer, share, streams. */
  readonly groupType?: string;
}

export interface GroupCoordinators {
  /** Group id → coordinator node id, for the groups that resolved. */
  readonly coordinators: Map<string, number>;
  /** Group id → Kafka error code (e.g. COORDINATOR_NOT_AVAILABLE, GROUP_AUTHORIZATION_FAILED) for the others. */
  readonly errors: Map<string, number>;
}

export interface GroupOffset {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  /** -1 when the commit carried none (or the version predates it, OffsetFetch v5). */
  readonly leaderEpoch: number;
  readonly metadata: string | null;
  readonly errorCode: number;
}

export interface GroupOffsetsResult {
  /** The group-level error: from FindCoordinator, or the coordinator's (NOT_COORDINATOR, GROUP_AUTHORIZATION_FAILED, ...). */
  readonly errorCode: number;
  /** Committed offsets; partitions without a commit (offset -1 and no error) are left out. */
  readonly offsets: GroupOffset[];
}

export interface GroupDescription {
  readonly errorCode: number;
  /** Empty, Stable, PreparingRebalance, CompletingRebalance, Dead ('' when the coordinator was not reached). */
  readonly state: string;
  readonly protocolType: string;
  /** Number of members. */
  readonly members: number;
}

/** Admin calls for mirroring tools; see the module comment. */
export class KafkaAdmin {
  private readonly client: KafkaClient;

  constructor(client: KafkaClient) {
    this.client = client;
  }

  private get cluster(): Cluster {
    return this.client.cluster;
  }

  /**
   * Every config of each topic, with its source. One DescribeConfigs request to any broker: Kafka answers
   * topic resources on any broker (ConfigHelper.describeConfigs reads the broker's metadata image), and its
   * admin client sends them to the least loaded node. Names given twice are asked for once.
   */
  async describeTopicConfigs(topics: readonly string[]): Promise<Map<string, TopicConfigsResult>> {
    const names = [...new Set(topics)];
    const out = new Map<string, TopicConfigsResult>();
    if (names.length === 0) return out;
    const conn = await this.cluster.anyConnection();
    const version = conn.versionFor(DescribeConfigsApi);
    const request = DescribeConfigsApi.request.create({
      resources: names.map((resourceName) => ({ resourceType: RESOURCE_TYPE_TOPIC, resourceName, configurationKeys: null })),
    });
    const response: DescribeConfigsResponse = await conn.request(DescribeConfigsApi, request, { version });
    const byName = new Map(response.results.filter((r) => r.resourceType === RESOURCE_TYPE_TOPIC).map((r) => [r.resourceName, r] as const));
    for (const name of names) {
      const r = byName.get(name) ?? missing(conn, DescribeConfigsApi.name, version, `topic ${name}`);
      out.set(name, {
        errorCode: r.errorCode,
        errorMessage: r.errorMessage,
        configs: r.configs.map((c) => ({
          name: c.name,
          value: c.value,
          // v0 has only IsDefault; Kafka's v0 admin client read a non-default topic config as a topic override.
          source: version >= 1 ? c.configSource : c.isDefault ? ConfigSource.DEFAULT_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG,
          isSensitive: c.isSensitive,
          readOnly: c.readOnly,
        })),
      });
    }
    return out;
  }

  /**
   * The groups of the whole cluster. ListGroups is answered per broker: KafkaApis.handleListGroupsRequest
   * asks the group coordinator, which lists only the groups of the __consumer_offsets partitions this broker
   * leads. So, as Kafka's admin client (listGroups: Metadata for all brokers, then ListGroups to each), the
   * broker list is refreshed (Metadata for no topics) and every broker is asked; the answers are merged, a
   * group reported by two brokers (its coordinator moving) listed once, with the first answer by node id.
   * A broker's top-level error (e.g. COORDINATOR_LOAD_IN_PROGRESS) rejects with a KafkaResponseError naming it.
   */
  async listGroups(): Promise<ListedGroup[]> {
    await this.cluster.refreshMetadata([]);
    const nodes = [...this.cluster.brokers.keys()].sort((a, b) => a - b);
    const answers = await Promise.all(
      nodes.map(async (nodeId) => {
        const conn = await this.cluster.connectionTo(nodeId);
        const version = conn.versionFor(ListGroupsApi);
        const response: ListGroupsResponse = await conn.request(ListGroupsApi, ListGroupsApi.request.create(), { version });
        throwIfError(response.errorCode, { broker: conn.address, nodeId, apiName: ListGroupsApi.name, apiVersion: version });
        return { version, groups: response.groups };
      }),
    );
    const merged = new Map<string, ListedGroup>();
    for (const { version, groups } of answers) {
      for (const g of groups) {
        if (merged.has(g.groupId)) continue;
        merged.set(g.groupId, {
          groupId: g.groupId,
          protocolType: g.protocolType,
          ...(version >= 4 ? { groupState: g.groupState } : {}),
          ...(version >= 5 ? { groupType: g.groupType } : {}),
        });
      }
    }
    return [...merged.values()];
  }

  /**
   * The coordinator of each group, asked of any broker. FindCoordinator v4+ (KIP-699) takes every key in one
   * request and answers an error per key; older versions take one key per request (Kafka's admin client
   * batches the same way, CoordinatorStrategy). A group whose answer carries an error, or no coordinator,
   * is in `errors` with the code.
   */
  async findGroupCoordinators(groups: readonly string[]): Promise<GroupCoordinators> {
    const ids = [...new Set(groups)];
    const coordinators = new Map<string, number>();
    const errors = new Map<string, number>();
    const record = (group: string, errorCode: number, nodeId: number): void => {
      if (errorCode === ErrorCode.NONE && nodeId >= 0) coordinators.set(group, nodeId);
      else errors.set(group, errorCode !== ErrorCode.NONE ? errorCode : ErrorCode.COORDINATOR_NOT_AVAILABLE);
    };
    if (ids.length === 0) return { coordinators, errors };
    const conn = await this.cluster.anyConnection();
    const version = conn.versionFor(FindCoordinatorApi);
    if (version >= 4) {
      const request = FindCoordinatorApi.request.create({ keyType: KEY_TYPE_GROUP, coordinatorKeys: ids });
      const response: FindCoordinatorResponse = await conn.request(FindCoordinatorApi, request, { version });
      const byKey = new Map(response.coordinators.map((c) => [c.key, c] as const));
      for (const group of ids) {
        const c = byKey.get(group) ?? missing(conn, FindCoordinatorApi.name, version, `group ${group}`);
        record(group, c.errorCode, c.nodeId);
      }
    } else {
      await forEachLimited(ids, PER_GROUP_CONCURRENCY, async (group) => {
        const request = FindCoordinatorApi.request.create({ key: group, keyType: KEY_TYPE_GROUP });
        const response: FindCoordinatorResponse = await conn.request(FindCoordinatorApi, request, { version });
        record(group, response.errorCode, response.nodeId);
      });
    }
    return { coordinators, errors };
  }

  /**
   * The committed offsets of each group, from its coordinator, for every topic (`topics: null`).
   * OffsetFetch v8+ (KIP-709) takes all of a coordinator's groups in one request; v2-7 one group per
   * request (Kafka's admin client does the same, ListConsumerGroupOffsetsHandler). The version stays at
   * v9 or below: v10 names topics by id only (KIP-848), and Kafka 4.4 still serves v1-10. Groups come back
   * in the order given; a group whose coordinator was not found has that error and no offsets.
   */
  async fetchGroupOffsets(groups: readonly string[]): Promise<Map<string, GroupOffsetsResult>> {
    const ids = [...new Set(groups)];
    const results = new Map<string, GroupOffsetsResult>();
    const { byNode, errors } = await this.routeToCoordinators(ids);
    for (const [group, errorCode] of errors) results.set(group, { errorCode, offsets: [] });
    await Promise.all(
      [...byNode].map(async ([nodeId, members]) => {
        const conn = await this.cluster.connectionTo(nodeId);
        const version = conn.versionFor(OffsetFetchApi, { min: OFFSET_FETCH_MIN_ALL_TOPICS, max: OFFSET_FETCH_MAX_BY_NAME });
        if (version >= 8) {
          // v9's MemberId null and MemberEpoch -1: an admin's read, not a member's, so no member is validated (KIP-848).
          const request = OffsetFetchApi.request.create({
            groups: members.map((groupId) => ({ groupId, memberId: null, memberEpoch: -1, topics: null })),
            requireStable: false,
          });
          const response: OffsetFetchResponse = await conn.request(OffsetFetchApi, request, { version });
          const byGroup = new Map(response.groups.map((g) => [g.groupId, g] as const));
          for (const group of members) {
            const g = byGroup.get(group) ?? missing(conn, OffsetFetchApi.name, version, `group ${group}`);
            results.set(group, { errorCode: g.errorCode, offsets: g.topics.flatMap((t) => committed(t.name, t.partitions)) });
          }
          return;
        }
        await forEachLimited(members, PER_GROUP_CONCURRENCY, async (groupId) => {
          const request = OffsetFetchApi.request.create({ groupId, topics: null, requireStable: false });
          const response: OffsetFetchResponse = await conn.request(OffsetFetchApi, request, { version });
          results.set(groupId, { errorCode: response.errorCode, offsets: response.topics.flatMap((t) => committed(t.name, t.partitions)) });
        });
      }),
    );
    return new Map(ids.map((g) => [g, results.get(g)!]));
  }

  /**
   * State, protocol type and member count of each group, from its coordinator: one DescribeGroups per
   * coordinator with all its groups. A group Kafka does not know is Dead with no error before v6, and
   * GROUP_ID_NOT_FOUND from v6 on (KIP-1043). Groups come back in the order given.
   */
  async describeGroups(groups: readonly string[]): Promise<Map<string, GroupDescription>> {
    const ids = [...new Set(groups)];
    const results = new Map<string, GroupDescription>();
    const { byNode, errors } = await this.routeToCoordinators(ids);
    for (const [group, errorCode] of errors) results.set(group, { errorCode, state: '', protocolType: '', members: 0 });
    await Promise.all(
      [...byNode].map(async ([nodeId, members]) => {
        const conn = await this.cluster.connectionTo(nodeId);
        const version = conn.versionFor(DescribeGroupsApi);
        const request = DescribeGroupsApi.request.create({ groups: members, includeAuthorizedOperations: false });
        const response: DescribeGroupsResponse = await conn.request(DescribeGroupsApi, request, { version });
        const byGroup = new Map(response.groups.map((g) => [g.groupId, g] as const));
        for (const group of members) {
          const g = byGroup.get(group) ?? missing(conn, DescribeGroupsApi.name, version, `group ${group}`);
          results.set(group, { errorCode: g.errorCode, state: g.groupState, protocolType: g.protocolType, members: g.members.length });
        }
      }),
    );
    return new Map(ids.map((g) => [g, results.get(g)!]));
  }

  // ---------------------------------------------------------------------------------------------------

  /**
   * Groups by coordinator node. A coordinator the cluster view does not list (a broker that joined since
   * the last Metadata) makes one broker-list refresh; if it is still unknown its groups get
   * COORDINATOR_NOT_AVAILABLE, which Kafka's clients also treat as "look the coordinator up again".
   */
  private async routeToCoordinators(groups: readonly string[]): Promise<{ byNode: Map<number, string[]>; errors: Map<string, number> }> {
    const { coordinators, errors } = await this.findGroupCoordinators(groups);
    if ([...coordinators.values()].some((nodeId) => !this.cluster.brokers.has(nodeId))) await this.cluster.refreshMetadata([]);
    const byNode = new Map<number, string[]>();
    for (const [group, nodeId] of coordinators) {
      if (!this.cluster.brokers.has(nodeId)) errors.set(group, ErrorCode.COORDINATOR_NOT_AVAILABLE);
      else push(byNode, nodeId, group);
    }
    return { byNode, errors };
  }
}

/** The committed offsets of one topic's partitions; -1 with no error is "no commit" and is left out. */
function committed(topic: string, partitions: readonly Pick<OffsetFetchResponsePartition, 'partitionIndex' | 'committedOffset' | 'committedLeaderEpoch' | 'metadata' | 'errorCode'>[]): GroupOffset[] {
  const out: GroupOffset[] = [];
  for (const p of partitions) {
    if (p.committedOffset < 0n && p.errorCode === ErrorCode.NONE) continue;
    out.push({ topic, partition: p.partitionIndex, offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata, errorCode: p.errorCode });
  }
  return out;
}

/** Runs `fn` over `items` with at most `limit` calls pending; rejects with the first failure. */
async function forEachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function push<K, V>(map: Map<K, V[]>, k: K, v: V): void {
  const list = map.get(k);
  if (list) list.push(v);
  else map.set(k, [v]);
}

/** Something asked for is absent from the broker's answer. */
function missing(conn: Connection, apiName: string, apiVersion: number, what: string): never {
  throw new ProtocolViolationError(`${apiName} answer lacks ${what}, which was asked for`, { broker: conn.address, nodeId: conn.nodeId, apiName, apiVersion });
}
