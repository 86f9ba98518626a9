/**
 * Who owns what: the one question Metadata, FindCoordinator, Produce, Fetch, the partition layer and the
 * group coordinator ask (../shared/ARCHITECTURE.md, principle 5). A broker serves a topic partition only
 * while the view says it owns it; it learns of changes through `acquired` / `released` events.
 *
 * ```
 *   TopicManager ──topic events──► ClusterView ──acquired / released──► PartitionManager (open lazily, close)
 *                                      │                            └─► GroupCoordinator (shards)
 *        handlers ── owner(t, p), coordinator(type, key), liveBrokers(), controllerId ──┘
 * ```
 *
 * `SingleNodeView` is the view of a broker alone in its cluster: it owns every partition of every topic and
 * is the controller. `MemberView` (member-view.ts: leases in the metadata store, `/owners/<t>/<p>`) is the view
 * of a broker sharing its stores with others, behind the same interface. Coordinator keys map to partitions of the internal topics as Kafka hashes them:
 * `Utils.abs(key.hashCode()) % partitions` (GroupCoordinatorService.partitionFor, TransactionStateManager.
 * partitionFor), with `offsets.topic.num.partitions` / `transaction.state.log.num.partitions` (both 50 by
 * default) until the topic exists.
 */
import { partitionForGroup } from '../coordinator/partitioner.js';
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from './topic-names.js';

/** One listener of a broker, as clients are told to reach it. */
export interface BrokerEndpoint {
  readonly listenerName: string;
  readonly host: string;
  readonly port: number;
}

export interface LiveBroker {
  readonly nodeId: number;
  readonly rack: string | null;
  readonly endpoints: readonly BrokerEndpoint[];
}

/** Kafka's CoordinatorType, by name. */
export type CoordinatorKeyType = 'group' | 'transaction';

export interface CoordinatorLocation {
  /** `__consumer_offsets` or `__transaction_state`. */
  readonly topic: string;
  readonly partition: number;
  /** The broker that owns that partition, or -1 when none does (COORDINATOR_NOT_AVAILABLE). */
  readonly nodeId: number;
}

/**
 * Told when this broker gains or loses a partition. Callbacks must not throw. `released` may return a Promise:
 * a view that hands the partition to another broker (MemberView) waits for it (the log closed, its open ledger
 * sealed) before it gives up the partition's ownership key.
 */
export interface OwnershipListener {
  acquired?(topic: string, partition: number): void;
  released?(topic: string, partition: number): void | Promise<void>;
}

export interface ClusterView {
  /** This broker's node.id. */
  readonly localNodeId: number;
  /** The active controller's node id (Metadata's controllerId, DescribeCluster). */
  readonly controllerId: number;
  /** Registered, live brokers in node id order. */
  liveBrokers(): readonly LiveBroker[];
  broker(nodeId: number): LiveBroker | undefined;
  /** The broker that owns (leads) the partition; -1 when the partition does not exist or has no owner. */
  owner(topic: string, partition: number): number;
  /** `owner(topic, partition) === localNodeId`, allocation-free: asked on every produce and fetch. */
  owns(topic: string, partition: number): boolean;
  /** The partition's replicas and in-sync replicas, as Metadata reports them (empty for no partition). */
  replicas(topic: string, partition: number): readonly number[];
  isr(topic: string, partition: number): readonly number[];
  /** Where the coordinator of a group or transactional id is. */
  coordinator(type: CoordinatorKeyType, key: string): CoordinatorLocation;
  /** Subscribes to this broker's ownership changes; returns the unsubscribe function. */
  subscribe(listener: OwnershipListener): () => void;
  /**
   * A view shared by several brokers: the leader epoch the partition's owner announced once its log was open
   * (-1 when none was, or the partition is not another broker's). Metadata from every broker reports the
   * epoch the owner writes, as every Kafka broker reports the controller's (clients such as franz-go take a
   * -1 after a real epoch for a leaderless partition and wait).
   */
  announcedLeaderEpoch?(topic: string, partition: number): number;
  /** The partition's log is open here with this leader epoch: tell the other brokers (see announcedLeaderEpoch). */
  announceLeaderEpoch?(topic: string, partition: number, leaderEpoch: number): void;
  /**
   * A view shared by several brokers, for a partition this broker does not own yet: null when it is not taking
   * it (another broker owns it, or the rule names another), else a promise that resolves once the acquisition
   * settles (true: owned now), bounded in time. Metadata names the broker the rule gives a partition its leader
   * while it takes it; a request that arrives in that window waits for it rather than answering
   * NOT_LEADER_OR_FOLLOWER, which a producer without idempotence answers by sending the batch again after
   * the ones behind it (reordering them).
   */
  acquisition?(topic: string, partition: number): Promise<boolean> | null;
}

/** The topic registry as the view needs it: partition counts and topic events (TopicManager). */
export interface TopicSource {
  get(name: string): { readonly partitions: number; readonly replicationFactor?: number } | undefined;
  addListener(l: {
    topicCreated?(t: { readonly name: string; readonly partitions: number }): void;
    partitionsAdded?(t: { readonly name: string; readonly partitions: number }, from: number): void;
    topicDeleted?(t: { readonly name: string; readonly partitions: number }): void;
  }): void;
}

export interface SingleNodeViewOptions {
  readonly nodeId: number;
  readonly rack?: string | null;
  /** This broker's advertised listeners; asked each time (ports bound to 0 are known only after listen). */
  readonly endpoints: () => readonly BrokerEndpoint[];
  readonly topics: TopicSource;
  /** offsets.topic.num.partitions, used until __consumer_offsets exists. Default 50. */
  readonly offsetsTopicPartitions?: number;
  /** transaction.state.log.num.partitions, used until __transaction_state exists. Default 50. */
  readonly transactionTopicPartitions?: number;
}

/** The partition a coordinator key maps to: Kafka's `Utils.abs(key.hashCode()) % partitions`. */
export function coordinatorPartition(key: string, partitions: number): number {
  return partitionForGroup(key, partitions);
}

/** Fans ownership events out to listeners; a listener that throws is not allowed to stop the others. */
export class OwnershipEvents {
  private readonly listeners = new Set<OwnershipListener>();

  subscribe(l: OwnershipListener): () => void {
    this.listeners.add(l);
    return () => void this.listeners.delete(l);
  }

  acquired(topic: string, partition: number): void {
    for (const l of this.listeners) l.acquired?.(topic, partition);
  }

  released(topic: string, partition: number): void {
    for (const l of this.listeners) void l.released?.(topic, partition);
  }

  /**
   * Tells the listeners one after the other, the last subscribed first (the group and transaction coordinators
   * stop before the partition layer under them closes the log), waiting for each; a listener that fails is
   * passed over. Resolves once all are done.
   */
  async releasedInOrder(topic: string, partition: number): Promise<void> {
    for (const l of [...this.listeners].reverse()) {
      try {
        await l.released?.(topic, partition);
      } catch {
        // Listeners log their own failures; the next one still runs.
      }
    }
  }
}

/**
 * A broker alone in its cluster: leader, only replica and only in-sync replica of every partition, controller,
 * and coordinator of every group and transactional id. A created topic (or added partitions) is acquired, a
 * deleted topic released, partition by partition; partitions that exist when a listener subscribes are owned
 * without an event (ask `owns`).
 */
export class SingleNodeView implements ClusterView {
  readonly localNodeId: number;
  private readonly self: readonly number[];
  private readonly none: readonly number[] = Object.freeze([]);
  private readonly events = new OwnershipEvents();

  constructor(private readonly options: SingleNodeViewOptions) {
    this.localNodeId = options.nodeId;
    this.self = Object.freeze([options.nodeId]);
    options.topics.addListener({
      topicCreated: (t) => {
        for (let p = 0; p < t.partitions; p++) this.events.acquired(t.name, p);
      },
      partitionsAdded: (t, from) => {
        for (let p = from; p < t.partitions; p++) this.events.acquired(t.name, p);
      },
      topicDeleted: (t) => {
        for (let p = 0; p < t.partitions; p++) this.events.released(t.name, p);
      },
    });
  }

  get controllerId(): number {
    return this.localNodeId;
  }

  liveBrokers(): readonly LiveBroker[] {
    return [this.selfBroker()];
  }

  broker(nodeId: number): LiveBroker | undefined {
    return nodeId === this.localNodeId ? this.selfBroker() : undefined;
  }

  private selfBroker(): LiveBroker {
    return { nodeId: this.localNodeId, rack: this.options.rack ?? null, endpoints: this.options.endpoints() };
  }

  owns(topic: string, partition: number): boolean {
    const t = this.options.topics.get(topic);
    return t !== undefined && partition >= 0 && partition < t.partitions;
  }

  owner(topic: string, partition: number): number {
    return this.owns(topic, partition) ? this.localNodeId : -1;
  }

  replicas(topic: string, partition: number): readonly number[] {
    return this.owns(topic, partition) ? this.self : this.none;
  }

  isr(topic: string, partition: number): readonly number[] {
    return this.replicas(topic, partition);
  }

  coordinator(type: CoordinatorKeyType, key: string): CoordinatorLocation {
    const topic = type === 'group' ? GROUP_METADATA_TOPIC_NAME : TRANSACTION_STATE_TOPIC_NAME;
    const configured = type === 'group' ? this.options.offsetsTopicPartitions : this.options.transactionTopicPartitions;
    const partitions = this.options.topics.get(topic)?.partitions ?? configured ?? 50;
    const partition = coordinatorPartition(key, partitions);
    // Before the internal topic exists its coordinator is this node: the topic is created on first use.
    const exists = this.options.topics.get(topic) !== undefined;
    return { topic, partition, nodeId: exists ? this.owner(topic, partition) : this.localNodeId };
  }

  subscribe(listener: OwnershipListener): () => void {
    return this.events.subscribe(listener);
  }
}
