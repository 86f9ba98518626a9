/**
 * The cluster view of a broker that shares its metadata store and ledger store with other brokers (Pulsar's
 * model: stateless brokers, the data in the ledger store, so a partition moves without copying anything).
 * Membership is the registry's (member-registry.ts); which broker should own a partition is the rendezvous rule
 * over the live, non-draining broker ids (rendezvous.ts); who does own it is an ownership key:
 *
 * ```
 *   /brokers/ids/<id>          registration                        ┐ under the broker's lease: a dead broker's
 *   /owners/<topic>/<p>        {"v":1,"nodeId":id,"brokerEpoch":e}  ┘ keys go with it, in one revision
 *                              + "leaderEpoch":n once its log is open here (announceLeaderEpoch)
 * ```
 *
 * A broker takes a partition the rule gives it only while its key is absent, by compare-and-set on
 * `modRevision 0` with its lease, so two brokers never own one partition at once. A broker that sees the rule
 * move one of its partitions away stops serving it, tells its listeners (the coordinators stop, the partition
 * manager closes the log, sealing its open ledger), and only then deletes its key; the next owner, watching the
 * key, takes it. A dead owner's keys go when its lease expires; the next owner's log open fences the ledger the
 * dead one left open (src/log/takeover.ts; with BookKeeper that fencing is what stops a paused owner's writes).
 *
 * ```
 *   none ──rule names us, key absent──► acquiring ──CAS won──► owned ──rule moves it / stop──► releasing ──key deleted──► none
 *                                           └──CAS lost (someone holds it)──► none                 (listeners done)
 *   any ──lease lost──► none (at once, every partition; the listeners told after)
 * ```
 *
 * `owns` is true only in `owned` and only while the lease is valid by this broker's clock, checked on every
 * call, so a broker that was paused past its lease answers NOT_LEADER_OR_FOLLOWER / NOT_COORDINATOR from the
 * first request after it resumes, before any timer of its own has run.
 *
 * Replicas: the owner first, then the next live brokers of the partition's rendezvous order, as many as the
 * topic's replication factor allows, and every one of them in sync. Pulsar's KoP answers replicas = isr =
 * [leader] whatever the topic (KafkaResponseUtils.newMetadataPartition); that makes a topic created with
 * replication factor 3 describe as 1 (kafka-topics --describe, AdminClient.describeTopics), which tools that
 * compare the two take for a broken topic. Here the list is true to what a Kafka replica means to a client: a
 * broker that can lead the partition with all its data, which every live broker can (the data is in the ledger
 * store, replicated there). The order is the failover order: when the owner dies, replicas[1] takes over.
 *
 * Controller: the live broker registered first (lowest registration createRevision), as ZooKeeper-mode Kafka's
 * controller was the first broker to create /controller. Every view computes it from the same registrations;
 * it moves only when that broker leaves (a lowest-id rule would move it whenever a lower id joins, and clients
 * cache the controller). Nothing here depends on it: every broker serves the admin APIs on the shared store.
 */
import { GROUP_METADATA_TOPIC_NAME, TRANSACTION_STATE_TOPIC_NAME } from './topic-names.js';
import { coordinatorPartition, OwnershipEvents, type BrokerEndpoint, type ClusterView, type CoordinatorKeyType, type CoordinatorLocation, type LiveBroker, type OwnershipListener, type TopicSource } from './cluster-view.js';
import { MemberRegistry, type Registration } from './member-registry.js';
import { rendezvousOrder, rendezvousOwner } from './rendezvous.js';
import { systemClock, type Clock } from '../metadata/clock.js';
import { OWNERS_PREFIX, parseSegment, partitionOwnerKey, segment } from '../metadata/layout.js';
import { follow, type Following } from '../metadata/follow.js';
import type { KeyValue, MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';

export interface MemberViewOptions {
  readonly store: MetadataStore;
  readonly nodeId: number;
  readonly rack?: string | null;
  /** This broker's advertised listeners, read when it registers (after it listens: ports bound to 0 are known). */
  readonly endpoints: () => readonly BrokerEndpoint[];
  readonly topics: TopicSource & { list(): Iterable<{ readonly name: string; readonly partitions: number }> };
  /** The lease TTL in whole seconds: broker.session.timeout.ms rounded up (Kafka's default 9000 ms: 9 s). */
  readonly leaseTtlSeconds: number;
  readonly clock?: Clock;
  readonly log?: Logger;
  readonly offsetsTopicPartitions?: number;
  readonly transactionTopicPartitions?: number;
  /** Ownership changes (compare-and-sets, releases) in flight at once. Default 64. */
  readonly concurrency?: number;
  /** How long a registration of this id under another lease is waited for at start (default: that lease's TTL + 1 s). */
  readonly registrationWaitMs?: number;
}

/** A failed ownership change is tried again after this long. */
const RETRY_MS = 1000;
/** The longest a release waits for its listeners (the log's close): past BookKeeper's 30 s add and read timeouts. */
const RELEASE_WAIT_MS = 45_000;
/** The longest a release waits for a leader-epoch announcement in flight. */
const ANNOUNCE_WAIT_MS = 2000;
/** The longest a request waits for an acquisition in flight (`acquisition`): one compare-and-set, normally ms. */
const ACQUISITION_WAIT_MS = 3000;

const ACQUIRING = 1;
const OWNED = 2;
const RELEASING = 3;

interface Held {
  state: typeof ACQUIRING | typeof OWNED | typeof RELEASING;
  /** The modRevision of our ownership key (0 while acquiring). */
  modRevision: number;
  /** The lease generation it was taken under: work of an earlier generation is void. */
  generation: number;
  /** An announcement of the leader epoch being written to the key; a release deletes the key after it. */
  announcing?: Promise<void>;
}

interface OwnerKey {
  readonly nodeId: number;
  readonly modRevision: number;
  /** The leader epoch its owner announced, -1 for none yet. */
  readonly leaderEpoch: number;
}

export class MemberView implements ClusterView {
  readonly localNodeId: number;
  readonly registry: MemberRegistry;
  private readonly clock: Clock;
  private readonly events = new OwnershipEvents();
  /** This broker's partitions (acquiring, owned, releasing), by topic and partition. */
  private readonly held = new Map<string, Held[]>();
  /** The ownership keys the watch shows, by topic and partition. */
  private readonly owners = new Map<string, OwnerKey[]>();
  /** The brokers the rule places partitions on: live and not draining, ascending. */
  private eligible: number[] = [];
  private liveSorted: LiveBroker[] = [];
  private controller = -1;
  /** Partitions to look at again, and the ownership changes in flight. */
  private readonly queue = new Map<string, [string, number]>();
  private inFlight = 0;
  private readonly concurrency: number;
  private generation = 0;
  /** Registered and not leaving: the rule's partitions are taken. */
  private active = false;
  private leaving = false;
  private ownersFollowing: Following | null = null;
  private idleWaiters: (() => void)[] = [];
  /** Requests waiting for an acquisition (`acquisition`), by topic and partition. */
  private readonly acquisitionWaiters = new Map<string, ((owned: boolean) => void)[]>();

  constructor(private readonly options: MemberViewOptions) {
    this.localNodeId = options.nodeId;
    this.clock = options.clock ?? systemClock;
    this.concurrency = options.concurrency ?? 64;
    this.registry = new MemberRegistry({
      store: options.store,
      nodeId: options.nodeId,
      rack: options.rack ?? null,
      endpoints: options.endpoints,
      leaseTtlSeconds: options.leaseTtlSeconds,
      clock: this.clock,
      ...(options.log ? { log: options.log } : {}),
      ...(options.registrationWaitMs !== undefined ? { registrationWaitMs: options.registrationWaitMs } : {}),
    });
    options.topics.addListener({
      topicCreated: (t) => this.enqueueTopic(t.name, 0, t.partitions),
      partitionsAdded: (t, from) => this.enqueueTopic(t.name, from, t.partitions),
      topicDeleted: (t) => this.topicDeleted(t.name, t.partitions),
    });
  }

  /**
   * Follows the ownership keys, registers this broker (refusing a live duplicate id) and starts taking the
   * partitions the rule gives it. Call once the broker listens (its endpoints are known).
   */
  async start(): Promise<void> {
    await this.followOwners();
    await this.registry.start({
      changed: () => this.membershipChanged(),
      leaseLost: () => this.leaseLost(),
      reregistered: () => {
        this.active = !this.leaving;
        this.enqueueAll();
      },
    });
    this.active = !this.leaving;
    this.membershipChanged();
  }

  /**
   * Graceful leave, as Kafka's controlled shutdown moves leadership away before the broker stops: marks the
   * registration draining (the other brokers' rule stops naming this one), releases every partition (the
   * listeners close them, then each key is deleted, so its next owner takes it at once), then revokes the lease.
   */
  async stop(): Promise<void> {
    if (this.leaving) return;
    this.leaving = true;
    this.active = false;
    await this.registry.drain();
    this.enqueueAll();
    // Bounded: a store that keeps refusing the key deletes must not hold the stop; the revoke deletes them too.
    const boundMs = 2 * this.options.leaseTtlSeconds * 1000;
    await new Promise<void>((resolve) => {
      const timer = this.clock.setTimer(boundMs, () => {
        this.options.log?.warn({ boundMs }, 'partitions still held after the leave bound; revoking the lease releases them');
        resolve();
      });
      void this.idle().then(() => {
        timer.cancel();
        resolve();
      });
    });
    await this.registry.stop();
    await this.ownersFollowing?.cancel();
    this.ownersFollowing = null;
  }

  /** Stops as a killed process would (tests): no release, no revoke; the lease expires in the store. */
  abandon(): void {
    this.leaving = true;
    this.active = false;
    this.generation++;
    this.held.clear();
    this.queue.clear();
    this.registry.abandon();
    void this.ownersFollowing?.cancel();
  }

  get controllerId(): number {
    return this.controller;
  }

  liveBrokers(): readonly LiveBroker[] {
    return this.liveSorted;
  }

  broker(nodeId: number): LiveBroker | undefined {
    return this.registry.registration(nodeId);
  }

  owns(topic: string, partition: number): boolean {
    const h = this.held.get(topic)?.[partition];
    return h !== undefined && h.state === OWNED && this.registry.leaseValid();
  }

  /** The holder of the partition's key when it is live; else the broker the rule names (it is taking it); -1 for none. */
  owner(topic: string, partition: number): number {
    if (!this.exists(topic, partition)) return -1;
    if (this.owns(topic, partition)) return this.localNodeId;
    const key = this.owners.get(topic)?.[partition];
    if (key !== undefined && key.nodeId !== this.localNodeId && this.registry.registration(key.nodeId) !== undefined) return key.nodeId;
    return rendezvousOwner(topic, partition, this.eligible);
  }

  replicas(topic: string, partition: number): readonly number[] {
    const t = this.options.topics.get(topic);
    if (t === undefined || !Number.isInteger(partition) || partition < 0 || partition >= t.partitions) return [];
    const owner = this.owner(topic, partition);
    const rf = Math.max(1, t.replicationFactor ?? 1);
    const out = owner >= 0 ? [owner] : [];
    for (const b of rendezvousOrder(topic, partition, this.eligible)) {
      if (out.length >= rf) break;
      if (b !== owner) out.push(b);
    }
    return out;
  }

  /** Every listed replica is live and can lead with all the data (it is in the ledger store): all in sync. */
  isr(topic: string, partition: number): readonly number[] {
    return this.replicas(topic, partition);
  }

  coordinator(type: CoordinatorKeyType, key: string): CoordinatorLocation {
    const topic = type === 'group' ? GROUP_METADATA_TOPIC_NAME : TRANSACTION_STATE_TOPIC_NAME;
    const configured = type === 'group' ? this.options.offsetsTopicPartitions : this.options.transactionTopicPartitions;
    const existing = this.options.topics.get(topic);
    const partition = coordinatorPartition(key, existing?.partitions ?? configured ?? 50);
    // Before the internal topic exists, the broker the rule names for the partition coordinates: it creates the
    // topic on first use (as every broker may), and takes the partition once it exists.
    const nodeId = existing ? this.owner(topic, partition) : rendezvousOwner(topic, partition, this.eligible);
    return { topic, partition, nodeId };
  }

  subscribe(listener: OwnershipListener): () => void {
    return this.events.subscribe(listener);
  }

  acquisition(topic: string, partition: number): Promise<boolean> | null {
    if (this.owns(topic, partition)) return Promise.resolve(true);
    const h = this.held.get(topic)?.[partition];
    const taking =
      h?.state === ACQUIRING ||
      (h === undefined &&
        this.active &&
        this.registry.leaseValid() &&
        this.exists(topic, partition) &&
        this.owners.get(topic)?.[partition] === undefined &&
        rendezvousOwner(topic, partition, this.eligible) === this.localNodeId);
    if (!taking) return null;
    const k = `${topic}\u0000${partition}`;
    return new Promise((resolve) => {
      let list = this.acquisitionWaiters.get(k);
      if (!list) this.acquisitionWaiters.set(k, (list = []));
      const waiters = list;
      const settle = (owned: boolean): void => {
        timer.cancel();
        resolve(owned);
      };
      const timer = this.clock.setTimer(ACQUISITION_WAIT_MS, () => {
        const i = waiters.indexOf(settle);
        if (i >= 0) waiters.splice(i, 1);
        if (waiters.length === 0 && this.acquisitionWaiters.get(k) === waiters) this.acquisitionWaiters.delete(k);
        resolve(this.owns(topic, partition));
      });
      waiters.push(settle);
      // Not started yet (queued behind others): looked at now.
      if (h === undefined) {
        this.enqueue(topic, partition);
        this.pump();
      }
    });
  }

  /** Resolves when `p` settles or after `ms`, whichever comes first. */
  private bounded(p: Promise<void>, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(ms, resolve);
      void p.finally(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /** An ownership change of the partition settled (or none was started): tells the requests waiting for it. */
  private settleAcquisition(topic: string, partition: number): void {
    if (this.acquisitionWaiters.size === 0) return;
    const k = `${topic}\u0000${partition}`;
    const waiters = this.acquisitionWaiters.get(k);
    if (!waiters || this.held.get(topic)?.[partition]?.state === ACQUIRING) return;
    this.acquisitionWaiters.delete(k);
    const owned = this.owns(topic, partition);
    for (const w of waiters) w(owned);
  }

  announcedLeaderEpoch(topic: string, partition: number): number {
    const key = this.owners.get(topic)?.[partition];
    return key !== undefined && key.nodeId === this.owner(topic, partition) ? key.leaderEpoch : -1;
  }

  /**
   * Writes the epoch into this broker's ownership key (compare-and-set at the key's revision, under the lease),
   * so the other brokers' Metadata reports it. Not an ownership change: a failure (the key changed or went,
   * the lease ended) only leaves the others reporting -1, and is logged.
   */
  announceLeaderEpoch(topic: string, partition: number, leaderEpoch: number): void {
    const h = this.held.get(topic)?.[partition];
    const lease = this.registry.leaseId;
    if (h === undefined || h.state !== OWNED || h.generation !== this.generation || lease === null) return;
    const key = partitionOwnerKey(topic, partition);
    const value = ownerValue(this.localNodeId, this.registry.brokerEpoch, leaderEpoch);
    const previous = h.announcing ?? Promise.resolve();
    const announcing = previous
      .then(async () => {
        if (this.held.get(topic)?.[partition] !== h || h.state !== OWNED || h.generation !== this.generation) return;
        const r = await this.options.store.compareAndSet(key, { modRevision: h.modRevision }, value, { lease });
        if (!r.succeeded) {
          this.options.log?.debug({ topic, partition, leaderEpoch }, 'the ownership key changed before the leader epoch was announced');
          return;
        }
        if (this.held.get(topic)?.[partition] === h) h.modRevision = r.revision;
        this.noteOwner({ key, modRevision: r.revision, value });
      })
      .catch((err: unknown) => this.options.log?.warn({ err, topic, partition, leaderEpoch }, 'announcing the leader epoch of a partition failed'))
      .finally(() => {
        if (h.announcing === announcing) delete h.announcing;
      });
    h.announcing = announcing;
  }

  /** The broker the rule names for the partition, over the live, non-draining brokers (-1 for none). */
  ruleOwner(topic: string, partition: number): number {
    return rendezvousOwner(topic, partition, this.eligible);
  }

  /** Resolves once nothing is being acquired or released and nothing is queued (tests, stop). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  // ------------------------------------------------------------------------------------------- internals

  private exists(topic: string, partition: number): boolean {
    const t = this.options.topics.get(topic);
    return t !== undefined && Number.isInteger(partition) && partition >= 0 && partition < t.partitions;
  }

  private isIdle(): boolean {
    if (this.queue.size > 0 || this.inFlight > 0) return false;
    // Leaving: idle once nothing is held any more.
    if (this.leaving) for (const list of this.held.values()) if (list.some((h) => h !== undefined)) return false;
    return true;
  }

  private checkIdle(): void {
    if (this.idleWaiters.length === 0 || !this.isIdle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }

  private membershipChanged(): void {
    const regs = [...this.registry.brokers()].sort((a, b) => a.nodeId - b.nodeId);
    this.liveSorted = regs.map(({ nodeId, rack, endpoints }) => ({ nodeId, rack, endpoints }));
    this.eligible = regs.filter((r) => !r.draining).map((r) => r.nodeId);
    let first: Registration | undefined;
    for (const r of regs) if (first === undefined || r.brokerEpoch < first.brokerEpoch) first = r;
    this.controller = first?.nodeId ?? -1;
    this.enqueueAll();
  }

  private enqueueAll(): void {
    for (const t of this.options.topics.list()) this.enqueueTopic(t.name, 0, t.partitions);
    // Partitions held of topics the registry no longer has.
    for (const [topic, list] of this.held) list.forEach((h, p) => h !== undefined && this.enqueue(topic, p));
    this.pump();
  }

  private enqueueTopic(topic: string, from: number, to: number): void {
    for (let p = from; p < to; p++) this.enqueue(topic, p);
    this.pump();
  }

  private enqueue(topic: string, partition: number): void {
    this.queue.set(`${topic}\u0000${partition}`, [topic, partition]);
  }

  /** Looks at queued partitions, starting ownership changes up to the concurrency bound. */
  private pump(): void {
    for (const [k, [topic, p]] of this.queue) {
      if (this.inFlight >= this.concurrency) break;
      this.queue.delete(k);
      const work = this.decide(topic, p);
      if (work === null) {
        this.settleAcquisition(topic, p);
        continue;
      }
      this.inFlight++;
      work.then(
        () => {
          this.inFlight--;
          this.settleAcquisition(topic, p);
          this.enqueue(topic, p);
          this.pump();
        },
        (err: unknown) => {
          // The store refused or failed: looked at again after a pause, not in a hot loop.
          this.options.log?.warn({ err, topic, partition: p }, 'changing the ownership of a partition failed; it is looked at again');
          this.inFlight--;
          this.settleAcquisition(topic, p);
          this.clock.setTimer(RETRY_MS, () => {
            this.enqueue(topic, p);
            this.pump();
          });
          this.checkIdle();
        },
      );
    }
    this.checkIdle();
  }

  /** What to do about one partition now: acquire, release, or nothing (null). */
  private decide(topic: string, p: number): Promise<void> | null {
    const h = this.held.get(topic)?.[p];
    if (h !== undefined && h.state !== OWNED) return null; // an acquire or release in flight looks again when done
    const target = this.exists(topic, p) && this.active ? rendezvousOwner(topic, p, this.eligible) : -1;
    if (h !== undefined) return target === this.localNodeId ? null : this.release(topic, p, h);
    if (target !== this.localNodeId || !this.registry.leaseValid()) return null;
    if (this.owners.get(topic)?.[p] !== undefined) return null; // held by another: its delete event brings us back
    return this.acquire(topic, p);
  }

  private async acquire(topic: string, p: number): Promise<void> {
    const lease = this.registry.leaseId;
    if (lease === null) return;
    const h: Held = { state: ACQUIRING, modRevision: 0, generation: this.generation };
    this.setHeld(topic, p, h);
    const value = ownerValue(this.localNodeId, this.registry.brokerEpoch);
    let r;
    try {
      r = await this.options.store.compareAndSet(partitionOwnerKey(topic, p), { modRevision: 0 }, value, { lease });
    } catch (err) {
      if (this.held.get(topic)?.[p] === h) this.setHeld(topic, p, undefined);
      throw err;
    }
    if (this.held.get(topic)?.[p] !== h || h.generation !== this.generation) return; // the lease was lost meanwhile: the key goes with it
    if (!r.succeeded) {
      this.setHeld(topic, p, undefined);
      if (r.current) this.noteOwner(r.current);
      return;
    }
    h.state = OWNED;
    h.modRevision = r.revision;
    this.noteOwner({ key: partitionOwnerKey(topic, p), modRevision: r.revision, value });
    this.events.acquired(topic, p);
  }

  private async release(topic: string, p: number, h: Held): Promise<void> {
    h.state = RELEASING;
    // The listeners close the log (its open ledger sealed) before the key goes, for a clean handover. Bounded: a
    // close that does not end must not keep the partition leaderless. Past the bound the key goes anyway; the next
    // owner's open fences the ledger, as after a death, so this broker cannot append to it again.
    let closed = false;
    await this.bounded(
      this.events.releasedInOrder(topic, p).then(() => {
        closed = true;
      }),
      RELEASE_WAIT_MS,
    );
    if (!closed) this.options.log?.warn({ topic, partition: p, boundMs: RELEASE_WAIT_MS }, 'closing a released partition did not end in time; giving up its key, the next owner fences its ledger');
    // An announcement in flight moves the key's revision: the delete expects the revision it leaves. Bounded: a
    // store call that hangs must not hold the release (a delete at a stale revision fails and is retried).
    if (h.announcing) await this.bounded(h.announcing, ANNOUNCE_WAIT_MS);
    if (this.held.get(topic)?.[p] !== h || h.generation !== this.generation) return;
    try {
      await this.options.store.delete(partitionOwnerKey(topic, p), { expect: { modRevision: h.modRevision } });
    } catch (err) {
      // The key is still ours: owned again (a use reopens the log), and released again after a pause.
      if (this.held.get(topic)?.[p] === h) h.state = OWNED;
      throw err;
    }
    if (this.held.get(topic)?.[p] === h) this.setHeld(topic, p, undefined);
  }

  private topicDeleted(topic: string, partitions: number): void {
    for (let p = 0; p < partitions; p++) this.enqueue(topic, p);
    this.pump();
  }

  /** The lease is lost: nothing is owned from this instant; the listeners are told, and the keys went with the lease. */
  private leaseLost(): Promise<void> {
    this.active = false;
    this.generation++;
    const lost: [string, number][] = [];
    for (const [topic, list] of this.held) list.forEach((h, p) => h !== undefined && h.state !== ACQUIRING && lost.push([topic, p]));
    this.held.clear();
    this.checkIdle();
    const waiting = [...this.acquisitionWaiters.values()];
    this.acquisitionWaiters.clear();
    for (const list of waiting) for (const w of list) w(false);
    // Closed before this broker registers again: its next owner's log open fences what these leave open.
    return Promise.all(lost.map(([topic, p]) => this.events.releasedInOrder(topic, p))).then(() => undefined);
  }

  private setHeld(topic: string, p: number, h: Held | undefined): void {
    let list = this.held.get(topic);
    if (h === undefined) {
      if (!list) return;
      delete list[p];
      if (!list.some((x) => x !== undefined)) this.held.delete(topic);
      return;
    }
    if (!list) this.held.set(topic, (list = []));
    list[p] = h;
  }

  /** Lists the ownership keys, then follows them (follow.ts: listed again whenever the watch ends). */
  private async followOwners(): Promise<void> {
    let first = true;
    this.ownersFollowing = await follow(
      this.options.store,
      { prefix: OWNERS_PREFIX },
      {
        reset: (kvs) => {
          this.owners.clear();
          for (const kv of kvs) this.noteOwner(kv);
          // After a read again, every partition is looked at anew (start() does it after the first).
          if (!first) this.enqueueAll();
          first = false;
        },
        changes: (events) => {
          for (const e of events) {
            if (e.type === 'put') this.noteOwner(e.kv);
            else this.ownerGone(e.kv.key, e.kv.modRevision);
          }
          this.pump();
        },
        error: (err) => {
          if (!this.leaving) this.options.log?.warn({ err }, 'following the partition owners failed; listing them again');
        },
      },
      { clock: this.clock },
    );
  }

  private noteOwner(kv: Pick<KeyValue, 'key' | 'modRevision' | 'value'>): void {
    const at = parseOwnerKey(kv.key);
    if (!at) return;
    let nodeId = -1;
    let leaderEpoch = -1;
    try {
      const v = JSON.parse(kv.value.toString('utf8')) as { nodeId?: unknown; leaderEpoch?: unknown };
      nodeId = Number(v.nodeId ?? -1);
      if (Number.isInteger(v.leaderEpoch) && (v.leaderEpoch as number) >= 0 && (v.leaderEpoch as number) <= 0x7fffffff) leaderEpoch = v.leaderEpoch as number;
    } catch {
      // A value that does not decode still means the key is held.
    }
    let list = this.owners.get(at.topic);
    if (!list) this.owners.set(at.topic, (list = []));
    const prev = list[at.partition];
    if (prev !== undefined && prev.modRevision > kv.modRevision) return;
    list[at.partition] = { nodeId, modRevision: kv.modRevision, leaderEpoch };
  }

  private ownerGone(key: string, revision: number): void {
    const at = parseOwnerKey(key);
    if (!at) return;
    const list = this.owners.get(at.topic);
    const prev = list?.[at.partition];
    if (!list || prev === undefined || prev.modRevision > revision) return;
    delete list[at.partition];
    if (!list.some((x) => x !== undefined)) this.owners.delete(at.topic);
    // Ours, deleted by someone else while we own it: only our lease ending does that.
    const h = this.held.get(at.topic)?.[at.partition];
    if (h !== undefined && h.state === OWNED && h.modRevision <= revision) {
      this.options.log?.error({ topic: at.topic, partition: at.partition }, 'the ownership key of a partition this broker owns was deleted');
    }
    this.enqueue(at.topic, at.partition);
  }
}

/** An ownership key's value (version 1; `leaderEpoch` once announced, ignored by readers that predate it). */
function ownerValue(nodeId: number, brokerEpoch: number, leaderEpoch?: number): Buffer {
  return Buffer.from(JSON.stringify({ v: 1, nodeId, brokerEpoch, ...(leaderEpoch !== undefined ? { leaderEpoch } : {}) }));
}

/** The topic and partition of an `/owners/<topic>/<p>` key, or null. */
export function parseOwnerKey(key: string): { topic: string; partition: number } | null {
  if (!key.startsWith(OWNERS_PREFIX)) return null;
  const rest = key.slice(OWNERS_PREFIX.length);
  const slash = rest.lastIndexOf('/');
  if (slash <= 0 || !/^(0|[1-9][0-9]{0,9})$/.test(rest.slice(slash + 1))) return null;
  const topic = parseSegment(rest.slice(0, slash));
  return segment(topic) === rest.slice(0, slash) ? { topic, partition: Number(rest.slice(slash + 1)) } : null;
}
