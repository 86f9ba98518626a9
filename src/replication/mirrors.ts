/**
 * Cluster links and mirror topics in the metadata store (model.ts has the records and their states):
 *
 *   /cluster-links/<name>      a remote cluster: bootstrap servers, credentials, sync settings
 *   /mirror-topics/<topic>     a local topic mirroring a topic of a link: state, which partitions stopped, ...
 *
 * Both are followed with watches, so a link added or a mirror promoted through one broker applies on every broker
 * of the cluster at once, without a restart. Produce asks `refusal(topic)` on every request: a Map lookup.
 */
import type { MetadataStore } from '../metadata/types.js';
import { describeLink, invalidLink, invalidMirror, invalidReplicatedTopics, isReadOnly, MIRROR_STATES, nameSelected, nextState, type ClusterLink, type MirrorState, type MirrorTopic, type ReplicatedTopics } from './model.js';
import { FollowedRecords } from './records.js';

export const LINKS_PREFIX = '/cluster-links/';
export const MIRRORS_PREFIX = '/mirror-topics/';
export const REPLICATED_PREFIX = '/replicated-topics/';

/** A change the admin API refuses (answered 400, or 404/409 as `status` says). */
export class ReplicationAdminError extends Error {
  constructor(
    message: string,
    readonly status: 400 | 403 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

export class LinkStore {
  readonly records: FollowedRecords<ClusterLink>;

  constructor(store: MetadataStore, onError: (err: Error) => void) {
    this.records = new FollowedRecords<ClusterLink>(store, LINKS_PREFIX, invalidLink, onError);
  }

  get(name: string): ClusterLink | undefined {
    return this.records.get(name);
  }

  list(): ClusterLink[] {
    return this.records.list();
  }

  /** Creates or replaces a link; a replaced link's replicators reconnect with its new settings. */
  async put(link: ClusterLink): Promise<ClusterLink> {
    const why = invalidLink(link);
    if (why) throw new ReplicationAdminError(why);
    await this.records.put(link.name, link);
    return link;
  }

  describe(name: string): Record<string, unknown> | undefined {
    const l = this.get(name);
    return l && describeLink(l);
  }
}

/** No topic is a mirror: for handlers' tests and tools without geo-replication. */
export const NO_MIRRORS: Pick<MirrorStore, 'refusal'> = { refusal: () => null };

export class MirrorStore {
  readonly records: FollowedRecords<MirrorTopic>;

  constructor(store: MetadataStore, onError: (err: Error) => void) {
    this.records = new FollowedRecords<MirrorTopic>(store, MIRRORS_PREFIX, invalidMirror, onError);
  }

  get(topic: string): MirrorTopic | undefined {
    return this.records.get(topic);
  }

  list(): MirrorTopic[] {
    return this.records.list();
  }

  byLink(link: string): MirrorTopic[] {
    return this.list().filter((m) => m.link === link);
  }

  /** Produce's check: why `topic` takes no produced records now, or null (Kafka's topics: always null). */
  refusal(topic: string): string | null {
    const m = this.records.get(topic);
    if (!m || !isReadOnly(m.state)) return null;
    return `Topic ${topic} is a mirror of topic ${m.sourceTopic} of cluster link ${m.link} and is read-only until it is promoted or failed over (state ${m.state})`;
  }

  /** Records a new mirror topic; refused when the topic already mirrors something. */
  async create(topic: string, link: string, sourceTopic: string, nowMs = Date.now()): Promise<MirrorTopic> {
    const m: MirrorTopic = { topic, link, sourceTopic, state: 'mirroring', stoppedPartitions: [], groupsSyncedBy: [], createdAtMs: nowMs, stateChangedAtMs: nowMs };
    const why = invalidMirror(m);
    if (why) throw new ReplicationAdminError(why);
    if (!(await this.records.create(topic, m))) throw new ReplicationAdminError(`topic ${topic} is a mirror topic already`, 409);
    return m;
  }

  /** An operator's promote or failover. */
  async request(topic: string, action: 'promote' | 'failover', nowMs = Date.now()): Promise<MirrorTopic> {
    const res = await this.records.update(topic, (m) => {
      const next = nextState(m.state, action);
      if (!(MIRROR_STATES as readonly string[]).includes(next)) return next;
      return next === m.state ? m : { ...m, state: next as MirrorState, stateChangedAtMs: nowMs };
    });
    if (res === undefined) throw new ReplicationAdminError(`topic ${topic} is not a mirror topic`, 404);
    if (typeof res === 'string') throw new ReplicationAdminError(res, 409);
    return res;
  }

  /**
   * A partition's owner stopped mirroring it (caught up for a promotion, or where it stood for a failover), and
   * the mirror settles if that was the last thing missing.
   */
  async partitionStopped(topic: string, partition: number, cluster: SettleContext, nowMs = Date.now()): Promise<MirrorTopic | undefined> {
    const res = await this.records.update(topic, (m) => {
      if (m.state !== 'promoting' && m.state !== 'failing-over') return m;
      const stopped = m.stoppedPartitions.includes(partition) ? m.stoppedPartitions : [...m.stoppedPartitions, partition].sort((a, b) => a - b);
      return settle({ ...m, stoppedPartitions: stopped }, cluster, nowMs);
    });
    return typeof res === 'string' ? undefined : res;
  }

  /** A broker made its last group offset sync for a promotion. */
  async groupsSynced(topic: string, nodeId: number, cluster: SettleContext, nowMs = Date.now()): Promise<MirrorTopic | undefined> {
    const res = await this.records.update(topic, (m) => {
      if (m.state !== 'promoting') return m;
      const synced = m.groupsSyncedBy.includes(nodeId) ? m.groupsSyncedBy : [...m.groupsSyncedBy, nodeId].sort((a, b) => a - b);
      return settle({ ...m, groupsSyncedBy: synced }, cluster, nowMs);
    });
    return typeof res === 'string' ? undefined : res;
  }
}

/** What a mirror's settling needs to know of the cluster. */
export interface SettleContext {
  /** The topic's partition count here. */
  partitions(topic: string): number;
  /** The live brokers' node ids. */
  liveBrokers(): readonly number[];
}

/**
 * A promoting mirror is promoted once every partition stopped and every live broker made its last group offset
 * sync; a failing-over one is failed over once every partition stopped.
 */
export function settle(m: MirrorTopic, cluster: SettleContext, nowMs: number): MirrorTopic {
  const n = cluster.partitions(m.topic);
  const allStopped = n > 0 && Array.from({ length: n }, (_, i) => i).every((p) => m.stoppedPartitions.includes(p));
  if (!allStopped) return m;
  if (m.state === 'failing-over') return { ...m, state: 'failed-over', stateChangedAtMs: nowMs };
  if (m.state === 'promoting' && cluster.liveBrokers().every((b) => m.groupsSyncedBy.includes(b))) return { ...m, state: 'promoted', stateChangedAtMs: nowMs };
  return m;
}

/** Active-active topic selections (model.ts ReplicatedTopics), followed like the links. */
export class ReplicatedTopicStore {
  readonly records: FollowedRecords<ReplicatedTopics>;

  constructor(store: MetadataStore, onError: (err: Error) => void) {
    this.records = new FollowedRecords<ReplicatedTopics>(store, REPLICATED_PREFIX, invalidReplicatedTopics, onError);
  }

  list(): ReplicatedTopics[] {
    return this.records.list();
  }

  /** The links a topic is copied from, merged over every selection naming it; empty for a topic none selects. */
  linksFor(topic: string): string[] {
    const out = new Set<string>();
    for (const r of this.records.list()) if (nameSelected([r.pattern], topic)) for (const l of r.links) out.add(l);
    return [...out];
  }

  async put(r: ReplicatedTopics): Promise<ReplicatedTopics> {
    const why = invalidReplicatedTopics(r);
    if (why) throw new ReplicationAdminError(why);
    await this.records.put(r.pattern, r);
    return r;
  }
}
