/**
 * The client's view of a cluster: which brokers exist, which topics and partitions, who leads each
 * partition, and a small pool of connections per broker.
 *
 *   bootstrap "h1:9092,h2:9092" ──► first reachable ──► Metadata (brokers) ──► brokers: nodeId → host:port
 *                                                                           topics:  name → partitions → leader
 *   connectionTo(nodeId, lane) ──► pool[nodeId][lane % connectionsPerBroker] (opened on first use, reopened if closed)
 *
 * The view changes only when the caller asks (`refreshMetadata`), as after a NOT_LEADER_OR_FOLLOWER or
 * UNKNOWN_TOPIC_OR_PARTITION answer; it never refreshes behind the caller's back, so a test or a
 * benchmark sees exactly the requests it made.
 */
import type { MetadataRequestTopic, MetadataResponse } from '../../protocol/messages/003-metadata.gen.js';
import { MetadataApi } from '../../protocol/messages/003-metadata.gen.js';
import { errorByCode } from '../../protocol/error-codes.js';
import { ZERO_UUID } from '../../protocol/wire/uuid.js';
import type { ConnectionOptions } from './connection.js';
import { Connection } from './connection.js';
import { ClientClosedError, ConnectError, MetadataError } from './errors.js';

export interface ClusterOptions extends Omit<ConnectionOptions, 'host' | 'port' | 'nodeId'> {
  /** Bootstrap servers: `host:port` strings, or one comma-separated string (Kafka's `bootstrap.servers`). */
  bootstrap: string | readonly string[];
  /** Connections kept per broker; requests choose one by lane. Default 1. */
  connectionsPerBroker?: number;
}

export interface BrokerInfo {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
}

export interface PartitionInfo {
  readonly partition: number;
  /** Kafka error for this partition in the last Metadata answer (0 = none). */
  readonly errorCode: number;
  /** Leader node id, or -1 when there is none (e.g. during an election). */
  readonly leaderId: number;
  readonly leaderEpoch: number;
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
  readonly offlineReplicas: readonly number[];
}

export interface TopicInfo {
  readonly name: string;
  /** Kafka's topic id (base64url), or ZERO_UUID when the broker's Metadata version predates topic ids. */
  readonly topicId: string;
  readonly isInternal: boolean;
  /** Partitions by index (`partitions[i].partition === i`). */
  readonly partitions: readonly PartitionInfo[];
}

/** Parses `host:port`, including `[::1]:9092`. */
export function parseHostPort(s: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(s.trim()) ?? /^([^:]+):(\d+)$/.exec(s.trim());
  if (!m) throw new TypeError(`not a host:port address: ${JSON.stringify(s)}`);
  const port = Number(m[2]);
  if (!(port > 0 && port < 65536)) throw new TypeError(`invalid port in ${JSON.stringify(s)}`);
  return { host: m[1]!, port };
}

export class Cluster {
  private readonly options: ClusterOptions;
  private readonly bootstrap: ReadonlyArray<{ host: string; port: number }>;
  private readonly lanes: number;
  private brokerMap = new Map<number, BrokerInfo>();
  private readonly topicMap = new Map<string, TopicInfo>();
  private readonly topicNames = new Map<string, string>();
  private readonly pools = new Map<number, Array<Promise<Connection> | undefined>>();
  /** Connection to a bootstrap address, used until (and besides) node connections. */
  private bootstrapConn: Promise<Connection> | undefined;
  private closing = false;
  private clusterIdValue: string | null = null;
  private controllerIdValue = -1;

  private constructor(options: ClusterOptions) {
    this.options = options;
    const list = typeof options.bootstrap === 'string' ? options.bootstrap.split(',') : options.bootstrap;
    this.bootstrap = list.filter((s) => s.trim() !== '').map(parseHostPort);
    if (this.bootstrap.length === 0) throw new TypeError('no bootstrap server given');
    this.lanes = Math.max(1, options.connectionsPerBroker ?? 1);
  }

  /** Connects to the first reachable bootstrap server and loads the broker list. */
  static async connect(options: ClusterOptions): Promise<Cluster> {
    const cluster = new Cluster(options);
    try {
      await cluster.refreshMetadata([]);
    } catch (e) {
      await cluster.close();
      throw e;
    }
    return cluster;
  }

  get brokers(): ReadonlyMap<number, BrokerInfo> {
    return this.brokerMap;
  }

  get clusterId(): string | null {
    return this.clusterIdValue;
  }

  /** The controller id of the last Metadata answer (with KRaft, a broker that forwards to the controller). */
  get controllerId(): number {
    return this.controllerIdValue;
  }

  /** Topics known from Metadata answers so far. */
  get topics(): ReadonlyMap<string, TopicInfo> {
    return this.topicMap;
  }

  topic(name: string): TopicInfo | undefined {
    return this.topicMap.get(name);
  }

  /** The name of the topic with this id, if the view knows it. */
  topicNameById(topicId: string): string | undefined {
    return this.topicNames.get(topicId);
  }

  /**
   * Sends Metadata and updates the view. `topics`: null for every topic, an array for those topics only
   * ([] for brokers only). Topics the answer reports as unknown are dropped from the view; their entries
   * stay in the returned response with their error codes.
   */
  async refreshMetadata(topics: readonly string[] | null = null, options: { allowAutoTopicCreation?: boolean } = {}): Promise<MetadataResponse> {
    const conn = await this.anyConnection();
    const version = conn.versionFor(MetadataApi);
    const wanted: MetadataRequestTopic[] | null =
      topics === null ? null : topics.map((name) => ({ topicId: ZERO_UUID, name }));
    // Metadata v0 cannot ask for "no topics": an empty array means every topic there.
    const request = MetadataApi.request.create({
      topics: version === 0 && wanted === null ? [] : wanted,
      allowAutoTopicCreation: options.allowAutoTopicCreation ?? false,
    });
    const response = await conn.request(MetadataApi, request, { version });
    this.apply(response, topics === null);
    return response;
  }

  private apply(response: MetadataResponse, complete: boolean): void {
    if (response.brokers.length > 0) {
      const next = new Map<number, BrokerInfo>();
      for (const b of response.brokers) next.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
      // Connections to brokers that left the cluster are closed.
      for (const nodeId of this.pools.keys()) {
        const old = this.brokerMap.get(nodeId);
        const now = next.get(nodeId);
        if (!now || (old && (old.host !== now.host || old.port !== now.port))) this.dropPool(nodeId);
      }
      this.brokerMap = next;
    }
    this.clusterIdValue = response.clusterId;
    this.controllerIdValue = response.controllerId;
    if (complete) {
      this.topicMap.clear();
      this.topicNames.clear();
    }
    for (const t of response.topics) {
      if (t.name === null) continue;
      if (t.errorCode !== 0 && t.partitions.length === 0) {
        const old = this.topicMap.get(t.name);
        if (old) this.topicNames.delete(old.topicId);
        this.topicMap.delete(t.name);
        continue;
      }
      const partitions: PartitionInfo[] = [];
      for (const p of t.partitions) {
        partitions[p.partitionIndex] = {
          partition: p.partitionIndex,
          errorCode: p.errorCode,
          leaderId: p.leaderId,
          leaderEpoch: p.leaderEpoch,
          replicas: p.replicaNodes,
          isr: p.isrNodes,
          offlineReplicas: p.offlineReplicas,
        };
      }
      const info: TopicInfo = { name: t.name, topicId: t.topicId, isInternal: t.isInternal, partitions };
      this.topicMap.set(t.name, info);
      if (t.topicId !== ZERO_UUID) this.topicNames.set(t.topicId, t.name);
    }
  }

  /** The leader's node id for a partition. Throws MetadataError when the view has no leader for it. */
  leaderFor(topic: string, partition: number): number {
    const t = this.topicMap.get(topic);
    if (!t) throw new MetadataError('unknown topic (refresh metadata first)', { topic });
    const p = t.partitions[partition];
    if (!p) throw new MetadataError(`topic has ${t.partitions.length} partitions`, { topic, partition });
    if (p.leaderId < 0) {
      throw new MetadataError(
        `no leader${p.errorCode !== 0 ? ` (${errorByCode(p.errorCode).name})` : ''}`,
        { topic, partition },
        p.errorCode,
      );
    }
    return p.leaderId;
  }

  /**
   * A connection to a broker. `lane` picks one of the broker's `connectionsPerBroker` connections
   * (modulo), so callers can spread load; the connection is opened on first use and reopened if it closed.
   */
  async connectionTo(nodeId: number, lane = 0): Promise<Connection> {
    if (this.closing) throw new ClientClosedError('cluster');
    const broker = this.brokerMap.get(nodeId);
    if (!broker) throw new MetadataError(`unknown broker node ${nodeId}`, { nodeId });
    let pool = this.pools.get(nodeId);
    if (!pool) {
      pool = new Array<Promise<Connection> | undefined>(this.lanes).fill(undefined);
      this.pools.set(nodeId, pool);
    }
    const slot = ((lane % this.lanes) + this.lanes) % this.lanes;
    const existing = pool[slot];
    if (existing) {
      const conn = await existing.catch(() => undefined);
      if (conn?.isOpen) return conn;
      if (pool[slot] === existing) pool[slot] = undefined;
      return this.connectionTo(nodeId, lane);
    }
    const opening = Connection.connect({ ...this.options, host: broker.host, port: broker.port, nodeId });
    pool[slot] = opening;
    opening.catch(() => {
      if (pool[slot] === opening) pool[slot] = undefined;
    });
    return opening;
  }

  /** A connection to the leader of a partition. */
  leaderConnection(topic: string, partition: number, lane = 0): Promise<Connection> {
    return this.connectionTo(this.leaderFor(topic, partition), lane);
  }

  /**
   * An open connection to some broker: an existing one when there is one, else the first bootstrap
   * address that accepts a connection.
   */
  async anyConnection(): Promise<Connection> {
    if (this.closing) throw new ClientClosedError('cluster');
    for (const pool of this.pools.values()) {
      for (const p of pool) {
        const conn = p ? await p.catch(() => undefined) : undefined;
        if (conn?.isOpen) return conn;
      }
    }
    if (this.bootstrapConn) {
      const conn = await this.bootstrapConn.catch(() => undefined);
      if (conn?.isOpen) return conn;
      this.bootstrapConn = undefined;
    }
    this.bootstrapConn = this.openBootstrap();
    return this.bootstrapConn;
  }

  private async openBootstrap(): Promise<Connection> {
    const errors: Error[] = [];
    // Known brokers first (after the first Metadata), then the configured bootstrap list.
    const candidates = [...[...this.brokerMap.values()].map((b) => ({ host: b.host, port: b.port })), ...this.bootstrap];
    for (const addr of candidates) {
      try {
        return await Connection.connect({ ...this.options, host: addr.host, port: addr.port });
      } catch (e) {
        errors.push(e as Error);
      }
    }
    throw new ConnectError(
      `no bootstrap server reachable (${candidates.map((c) => `${c.host}:${c.port}`).join(', ')})`,
      {},
      new AggregateError(errors),
    );
  }

  private dropPool(nodeId: number): void {
    const pool = this.pools.get(nodeId);
    this.pools.delete(nodeId);
    for (const p of pool ?? []) void p?.then((c) => c.close(), () => undefined);
  }

  /** Closes every connection. */
  async close(): Promise<void> {
    this.closing = true;
    const all: Array<Promise<Connection> | undefined> = [this.bootstrapConn];
    for (const pool of this.pools.values()) all.push(...pool);
    this.pools.clear();
    this.bootstrapConn = undefined;
    await Promise.all(all.map((p) => p?.then((c) => c.close(), () => undefined)));
  }
}
