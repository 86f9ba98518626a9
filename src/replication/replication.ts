/**
 * Geo-replication on one broker: the cluster links and mirror topics of the metadata store (mirrors.ts), and for
 * each link the work this broker owns:
 *
 *   LinkReplicator   copies the mirror partitions this broker leads (link-replicator.ts)
 *   sync loop        every offsetSyncIntervalMs: group offsets of the groups this broker coordinates
 *                    (group-sync.ts); every metadataSyncIntervalMs: partition counts and configs of the mirrors
 *                    whose partition 0 it leads (topic-sync.ts), and, on the controller, mirrors for new source
 *                    topics the link's autoMirrorTopics select; for a promoting mirror whose partitions all
 *                    stopped, a last group sync, then the broker says so (mirrors.ts settles the promotion)
 *
 * The admin operations (admin-routes.ts, `ledgerline links|mirrors|migrate`) are here too: links changed at runtime
 * reach every broker through the store's watch, and replicators reconnect with the new settings.
 */
import { Gauge, type Registry } from 'prom-client';
import { ErrorCode } from '../../protocol/error-codes.js';
import { KafkaAdmin } from '../client/admin.js';
import { KafkaClient } from '../client/client.js';
import { isInternalTopic } from '../cluster/topic-names.js';
import type { TopicRecord } from '../cluster/topics.js';
import type { GroupCoordinator } from '../coordinator/coordinator.js';
import type { PartitionLog } from '../log/index.js';
import type { MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import { GroupSync } from './group-sync.js';
import { LinkReplicator, type PartitionStatus } from './link-replicator.js';
import { isReadOnly, LINK_DEFAULTS, nameSelected, type ClusterLink, type MirrorTopic, type ReplicatedTopics } from './model.js';
import { LinkStore, MirrorStore, ReplicatedTopicStore, ReplicationAdminError, type SettleContext } from './mirrors.js';
import { ActiveReplicator } from './active-replicator.js';
import { ActiveOffsetMap } from './offset-map.js';
import { TopicSync } from './topic-sync.js';

export interface ReplicationDeps {
  readonly nodeId: number;
  /** This cluster's id: copies of its records on other clusters name it as their origin. */
  readonly clusterId: string;
  readonly store: MetadataStore;
  owns(topic: string, partition: number): boolean;
  /** Whether this broker coordinates the group. */
  coordinatesGroup(groupId: string): boolean;
  /** Whether this broker is the controller (it alone creates mirrors for autoMirrorTopics). */
  isController(): boolean;
  liveBrokers(): readonly number[];
  openLog(topic: string, partition: number): Promise<PartitionLog | undefined>;
  highWatermark(topic: string, partition: number): Promise<number | null>;
  getTopic(name: string): TopicRecord | undefined;
  /** Every topic here (internal ones are never active-active). */
  listTopics(): readonly TopicRecord[];
  createTopic(name: string, partitions: number, configs: Record<string, string>): Promise<unknown>;
  addPartitions(name: string, count: number): Promise<unknown>;
  setConfigs(name: string, configs: Record<string, string>): Promise<unknown>;
  readonly groups: Pick<GroupCoordinator, 'commitOffsets' | 'fetchOffsets' | 'describeGroups'>;
  reserveProducerId(producerId: bigint): Promise<void>;
  /** Whether a topic may replicate with a link (the tenants' replication.clusters policy); absent: always. */
  replicationAllowed?(topic: string, link: string): boolean;
  /** A client of a link's cluster (tests may hand one that fails). */
  connect?(link: ClusterLink): Promise<KafkaClient>;
  readonly log: Logger;
}

/** A client of the link's cluster, with its security settings. */
export function connectLink(link: ClusterLink, nodeId: number): Promise<KafkaClient> {
  const tls = link.securityProtocol === 'SSL' || link.securityProtocol === 'SASL_SSL';
  return KafkaClient.connect({
    bootstrap: link.bootstrapServers,
    clientId: `ledgerline-link-${link.name}-${nodeId}`,
    ...(tls ? { tls: link.tls?.ca ? { ca: link.tls.ca } : true } : {}),
    ...(link.sasl ? { sasl: { mechanism: link.sasl.mechanism, username: link.sasl.username, password: link.sasl.password } } : {}),
  });
}

interface LinkRuntime {
  link: ClusterLink;
  readonly replicator: LinkReplicator;
  readonly active: ActiveReplicator;
  client: KafkaClient | null;
  timer: NodeJS.Timeout | null;
  syncing: Promise<void> | null;
  nextMetadataSyncMs: number;
  lastSyncError: string | null;
  lastGroupSync: { atMs: number; groups: number; committed: number } | null;
  readonly finalSyncDone: Set<string>;
}

/** What the admin endpoint answers for a link. */
export interface LinkStatus {
  readonly link: Record<string, unknown>;
  readonly sourceError: string | null;
  readonly syncError: string | null;
  readonly lastGroupSync: LinkRuntime['lastGroupSync'];
  readonly partitions: readonly (PartitionStatus & { lag: number })[];
}

export class Replication {
  readonly links: LinkStore;
  readonly mirrors: MirrorStore;
  readonly replicated: ReplicatedTopicStore;
  /** Samples of what active-active replicators copied, to translate group offsets (offset-map.ts). */
  readonly offsets: ActiveOffsetMap;
  private readonly runtimes = new Map<string, LinkRuntime>();
  private readonly topicSync: TopicSync;
  private readonly groupSync: GroupSync;
  private readonly settleContext: SettleContext;
  private closed = false;

  constructor(private readonly deps: ReplicationDeps) {
    const onError = (err: Error): void => deps.log.error({ err }, 'geo-replication could not follow a change in the metadata store');
    this.links = new LinkStore(deps.store, onError);
    this.mirrors = new MirrorStore(deps.store, onError);
    this.replicated = new ReplicatedTopicStore(deps.store, onError);
    this.offsets = new ActiveOffsetMap(deps.clusterId);
    this.topicSync = new TopicSync({ getTopic: deps.getTopic, addPartitions: deps.addPartitions, setConfigs: deps.setConfigs, log: deps.log });
    this.groupSync = new GroupSync({ coordinates: deps.coordinatesGroup, groups: deps.groups, highWatermark: deps.highWatermark, log: deps.log });
    this.settleContext = { partitions: (t) => deps.getTopic(t)?.partitions ?? 0, liveBrokers: deps.liveBrokers };
  }

  async start(): Promise<void> {
    await this.links.records.load();
    await this.mirrors.records.load();
    await this.replicated.records.load();
    this.replicated.records.onChange(() => this.poke());
    this.links.records.onChange((name, link) => this.linkChanged(name, link));
    this.mirrors.records.onChange((_topic, m) => {
      if (m) this.runtimes.get(m.link)?.replicator.poke();
    });
    for (const l of this.links.list()) this.linkChanged(l.name, l);
  }

  /** Ownership or topics changed: replicators look again now. */
  poke(): void {
    for (const r of this.runtimes.values()) {
      r.replicator.poke();
      r.active.poke();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.runtimes.keys()].map((name) => this.stopLink(name)));
    await this.links.records.close();
    await this.mirrors.records.close();
    await this.replicated.records.close();
  }

  private linkChanged(name: string, link: ClusterLink | undefined): void {
    if (this.closed) return;
    const rt = this.runtimes.get(name);
    if (!link) {
      void this.stopLink(name);
      return;
    }
    if (rt) {
      rt.link = link;
      rt.replicator.relink(link);
      rt.active.relink(link);
      void this.dropSyncClient(rt);
      return;
    }
    const replicator = new LinkReplicator(link, {
      nodeId: this.deps.nodeId,
      owns: this.deps.owns,
      openLog: this.deps.openLog,
      partitionCount: (t) => this.deps.getTopic(t)?.partitions ?? 0,
      mirrors: this.mirrors,
      settle: this.settleContext,
      reserveProducerId: this.deps.reserveProducerId,
      allowed: (t, l) => this.allowed(t, l),
      connect: (l) => this.connect(l),
      log: this.deps.log,
    });
    const active = new ActiveReplicator(link, {
      offsets: this.offsets,
      owns: this.deps.owns,
      openLog: this.deps.openLog,
      topics: () => this.deps.listTopics().filter((t) => !t.internal),
      linksFor: (t) => this.replicated.linksFor(t).filter((l) => this.allowed(t, l)),
      isMirror: (t) => this.mirrors.get(t) !== undefined,
      store: this.deps.store,
      connect: (l) => this.connect(l),
      log: this.deps.log,
    });
    const runtime: LinkRuntime = { link, replicator, active, client: null, timer: null, syncing: null, nextMetadataSyncMs: 0, lastSyncError: null, lastGroupSync: null, finalSyncDone: new Set() };
    this.runtimes.set(name, runtime);
    replicator.start();
    active.start();
    this.scheduleSync(runtime, 0);
  }

  private connect(link: ClusterLink): Promise<KafkaClient> {
    return this.deps.connect ? this.deps.connect(link) : connectLink(link, this.deps.nodeId);
  }

  private async stopLink(name: string): Promise<void> {
    const rt = this.runtimes.get(name);
    if (!rt) return;
    this.runtimes.delete(name);
    if (rt.timer) clearTimeout(rt.timer);
    await rt.syncing;
    await rt.replicator.stop();
    await rt.active.stop();
    await this.dropSyncClient(rt);
  }

  private async dropSyncClient(rt: LinkRuntime): Promise<void> {
    const c = rt.client;
    rt.client = null;
    await c?.close().catch(() => undefined);
  }

  private scheduleSync(rt: LinkRuntime, delayMs: number): void {
    if (this.closed || this.runtimes.get(rt.link.name) !== rt) return;
    rt.timer = setTimeout(() => {
      rt.timer = null;
      rt.syncing = this.syncOnce(rt).finally(() => {
        rt.syncing = null;
        this.scheduleSync(rt, rt.link.offsetSyncIntervalMs);
      });
    }, delayMs);
    rt.timer.unref();
  }

  /** One tick of a link's sync loop (see the module comment). */
  private async syncOnce(rt: LinkRuntime): Promise<void> {
    const link = rt.link;
    const mirrors = this.mirrors.byLink(link.name).filter((m) => isReadOnly(m.state) && this.deps.getTopic(m.topic));
    const hasActive = this.replicated.list().some((r) => r.links.includes(link.name));
    const metadataDue = Date.now() >= rt.nextMetadataSyncMs;
    const auto = link.autoMirrorTopics.length > 0 && this.deps.isController();
    const promoting = mirrors.filter((m) => m.state === 'promoting' && this.allStopped(m) && !m.groupsSyncedBy.includes(this.deps.nodeId));
    const syncsMetadata = mirrors.filter((m) => m.state === 'mirroring' && this.deps.owns(m.topic, 0));
    if (mirrors.length === 0 && !hasActive && !(auto && metadataDue)) return;
    try {
      const client = (rt.client ??= await this.connect(link));
      const admin = new KafkaAdmin(client);
      if (metadataDue) {
        rt.nextMetadataSyncMs = Date.now() + link.metadataSyncIntervalMs;
        if (auto) await this.autoMirror(client, link);
        await this.topicSync.sync(client, admin, syncsMetadata);
      }
      if (link.syncGroupOffsets) {
        const remote = rt.active.remoteCluster;
        const activeTopics = new Set(this.deps.listTopics().filter((t) => !t.internal && !this.mirrors.get(t.name) && this.replicated.linksFor(t.name).includes(link.name)).map((t) => t.name));
        const active =
          remote !== null && activeTopics.size > 0
            ? {
                topics: activeTopics,
                translate: async (topic: string, partition: number, offset: number) => {
                  const end = await this.deps.highWatermark(topic, partition);
                  return end === null ? null : this.offsets.translate(topic, partition, remote, offset, end);
                },
              }
            : undefined;
        const r = await this.groupSync.sync(admin, link, mirrors.filter((m) => m.state !== 'failing-over'), active);
        rt.lastGroupSync = { atMs: Date.now(), ...r };
      }
      // The pass above started after every partition of these mirrors stopped: it was their last one.
      for (const m of promoting) await this.mirrors.groupsSynced(m.topic, this.deps.nodeId, this.settleContext);
      if (!link.syncGroupOffsets) for (const m of mirrors.filter((x) => x.state === 'promoting' && this.allStopped(x))) await this.mirrors.groupsSynced(m.topic, this.deps.nodeId, this.settleContext);
      rt.lastSyncError = null;
    } catch (err) {
      rt.lastSyncError = err instanceof Error ? err.message : String(err);
      this.deps.log.warn({ err, link: link.name }, 'syncing group offsets and topic metadata over the cluster link failed; retrying');
      await this.dropSyncClient(rt);
    }
  }

  private allowed(topic: string, link: string): boolean {
    return this.deps.replicationAllowed?.(topic, link) ?? true;
  }

  private allStopped(m: MirrorTopic): boolean {
    const n = this.deps.getTopic(m.topic)?.partitions ?? 0;
    return n > 0 && m.stoppedPartitions.length >= n;
  }

  /** Creates mirrors for the link's cluster's topics that autoMirrorTopics selects and that are not here yet. */
  private async autoMirror(client: KafkaClient, link: ClusterLink): Promise<void> {
    const md = await client.metadata(null);
    for (const t of md.topics) {
      const name = t.name;
      if (!name || t.errorCode !== ErrorCode.NONE || t.isInternal || name.startsWith('__') || !nameSelected(link.autoMirrorTopics, name)) continue;
      if (this.mirrors.get(name) || this.deps.getTopic(name)) continue;
      try {
        await this.createMirror({ topic: name, link: link.name, sourceTopic: name }, client);
        this.deps.log.info({ link: link.name, topic: name }, 'mirror topic created for a source topic the link mirrors automatically');
      } catch (err) {
        this.deps.log.warn({ err, link: link.name, topic: name }, 'creating a mirror topic for the link failed');
      }
    }
  }

  // ---- admin ------------------------------------------------------------------------------------------

  /** Creates or replaces a link; missing settings take their defaults. */
  async putLink(input: Partial<ClusterLink> & { name: string }): Promise<ClusterLink> {
    const existing = this.links.get(input.name);
    const link: ClusterLink = {
      ...LINK_DEFAULTS,
      securityProtocol: 'PLAINTEXT',
      bootstrapServers: '',
      ...input,
      createdAtMs: existing?.createdAtMs ?? Date.now(),
    } as ClusterLink;
    return this.links.put(link);
  }

  /** Deletes a link no mirror still reads from. */
  async deleteLink(name: string): Promise<boolean> {
    if (!this.links.get(name)) return false;
    const using = this.mirrors.byLink(name).filter((m) => isReadOnly(m.state));
    const selecting = this.replicated.list().filter((r) => r.links.includes(name));
    if (selecting.length > 0) throw new ReplicationAdminError(`cluster link ${name} is used by active-active topics ${selecting.map((r) => r.pattern).join(', ')}: remove it from them first`, 409);
    if (using.length > 0) throw new ReplicationAdminError(`cluster link ${name} is used by mirror topics ${using.map((m) => m.topic).join(', ')}: promote, fail over or delete them first`, 409);
    return this.links.records.delete(name);
  }

  /**
   * Creates a mirror topic: the record first (so the topic is read-only from its first moment), then the topic
   * with the source's partition count and config overrides. The topic must not exist here.
   */
  async createMirror(req: { topic: string; link: string; sourceTopic?: string }, client?: KafkaClient): Promise<MirrorTopic> {
    const link = this.links.get(req.link);
    if (!link) throw new ReplicationAdminError(`cluster link ${req.link} does not exist`, 404);
    const sourceTopic = req.sourceTopic ?? req.topic;
    if (!this.allowed(req.topic, link.name)) throw new ReplicationAdminError(`the tenant policy replication.clusters of topic ${req.topic} does not allow cluster link ${link.name}`, 403);
    if (isInternalTopic(req.topic) || req.topic.startsWith('__')) throw new ReplicationAdminError(`internal topic ${req.topic} cannot be a mirror`);
    if (this.deps.getTopic(req.topic)) throw new ReplicationAdminError(`topic ${req.topic} exists already; a mirror topic is created by the mirror`, 409);
    if (this.replicated.linksFor(req.topic).length > 0) throw new ReplicationAdminError(`topic ${req.topic} is selected for active-active replication; it cannot be a mirror`, 409);
    const own = client === undefined;
    const c = client ?? (await this.connect(link).catch((err: unknown) => {
      throw new ReplicationAdminError(`cluster link ${link.name} cannot reach ${link.bootstrapServers}: ${err instanceof Error ? err.message : String(err)}`);
    }));
    try {
      const md = await c.metadata([sourceTopic]);
      const t = md.topics.find((x) => x.name === sourceTopic);
      if (!t || t.errorCode !== ErrorCode.NONE) throw new ReplicationAdminError(`topic ${sourceTopic} does not exist on cluster link ${link.name}'s cluster`, 404);
      const configs = await new KafkaAdmin(c).describeTopicConfigs([sourceTopic]);
      const entries = configs.get(sourceTopic)?.configs ?? [];
      const overrides = this.topicSync.overridesFrom(req.topic, entries);
      const m = await this.mirrors.create(req.topic, link.name, sourceTopic);
      try {
        await this.deps.createTopic(req.topic, t.partitions.length, overrides);
      } catch (err) {
        await this.mirrors.records.delete(req.topic);
        throw err;
      }
      return m;
    } finally {
      if (own) await c.close().catch(() => undefined);
    }
  }

  /** Selects topics for active-active replication from `links` (every other cluster of the mesh). */
  async putReplicated(pattern: string, links: readonly string[]): Promise<ReplicatedTopics> {
    const unknown = (Array.isArray(links) ? links : []).filter((l) => typeof l === 'string' && !this.links.get(l));
    if (unknown.length > 0) throw new ReplicationAdminError(`no cluster link ${unknown.join(', ')}`, 404);
    const refused = links.filter((l) => !this.allowed(pattern.replace(/\*$/, ''), l));
    if (refused.length > 0) throw new ReplicationAdminError(`the tenant policy replication.clusters of ${pattern} does not allow cluster link ${refused.join(', ')}`, 403);
    const existing = this.replicated.records.get(pattern);
    return this.replicated.put({ pattern, links: [...links], createdAtMs: existing?.createdAtMs ?? Date.now() });
  }

  deleteReplicated(pattern: string): Promise<boolean> {
    return this.replicated.records.delete(pattern);
  }

  promote(topic: string): Promise<MirrorTopic> {
    return this.mirrors.request(topic, 'promote');
  }

  failover(topic: string): Promise<MirrorTopic> {
    return this.mirrors.request(topic, 'failover');
  }

  /** The topic was deleted: its mirror record goes with it. */
  async topicDeleted(topic: string): Promise<void> {
    this.offsets.forgetTopic(topic);
    if (this.mirrors.get(topic)) await this.mirrors.records.delete(topic);
  }

  /** A link's state on this broker: the partitions it copies with their lag, the last errors. */
  linkStatus(name: string): LinkStatus | undefined {
    const l = this.links.describe(name);
    if (!l) return undefined;
    const rt = this.runtimes.get(name);
    const partitions = rt ? [...rt.replicator.status.values(), ...rt.active.status.values()].map((s) => ({ ...s, lag: lagOf(s) })) : [];
    return { link: l, sourceError: rt?.replicator.sourceError ?? rt?.active.sourceError ?? null, syncError: rt?.lastSyncError ?? null, lastGroupSync: rt?.lastGroupSync ?? null, partitions };
  }

  /** Prometheus gauges: lag and position per mirror partition this broker copies, and whether each link reaches its cluster. */
  registerMetrics(registry: Registry): void {
    const statuses = (): PartitionStatus[] => [...this.runtimes.values()].flatMap((r) => [...r.replicator.status.values(), ...r.active.status.values()]);
    new Gauge({
      name: 'ledgerline_mirror_lag_records',
      help: "Records the mirror partition is behind its source (the source's high watermark at the last fetch minus the log end offset here)",
      labelNames: ['link', 'topic', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of statuses()) this.set({ link: s.link, topic: s.topic, partition: String(s.partition) }, lagOf(s));
      },
    });
    new Gauge({
      name: 'ledgerline_mirror_copied_bytes',
      help: 'Bytes copied into the mirror partition by this broker since it took the partition',
      labelNames: ['link', 'topic', 'partition'],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of statuses()) this.set({ link: s.link, topic: s.topic, partition: String(s.partition) }, s.copiedBytes);
      },
    });
    const runtimes = this.runtimes;
    new Gauge({
      name: 'ledgerline_cluster_link_up',
      help: "1 when the cluster link's last fetch and sync reached its cluster, else 0",
      labelNames: ['link'],
      registers: [registry],
      collect() {
        this.reset();
        for (const [name, rt] of runtimes) this.set({ link: name }, rt.replicator.sourceError === null && rt.active.sourceError === null && rt.lastSyncError === null ? 1 : 0);
      },
    });
  }
}

function lagOf(s: PartitionStatus): number {
  return s.sourceHighWatermark < 0 ? -1 : Math.max(0, s.sourceHighWatermark - s.position);
}
