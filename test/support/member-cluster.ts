/**
 * Several MemberViews on one in-memory metadata store, each behind a store handle that can be paused (its calls
 * and watch events held back, as for a broker stopped in a GC pause or cut off from the store), each with a
 * stand-in partition layer that opens a partition on `acquired` and closes it, a few event-loop turns later,
 * on `released`. Time is a ManualClock shared by the store (lease expiry) and the views (keep-alives).
 *
 * The invariants are checked on every ownership event and after every step of time: never two brokers owning
 * one partition at once, and a partition acquired only once every other broker with a valid lease has closed it.
 */
import { MemberView } from '../../src/cluster/member-view.js';
import { ManualClock, openMemoryMetadataStore, type Clock, type ClockTimer, type LocalMetadataStore } from '../../src/metadata/index.js';
import type { MetadataStore, WatchListener, WatchResponse } from '../../src/metadata/types.js';

export const TTL_SECONDS = 3;

interface SimTopic {
  readonly name: string;
  readonly partitions: number;
  readonly replicationFactor: number;
}

type TopicListener = {
  topicCreated?(t: SimTopic): void;
  partitionsAdded?(t: SimTopic, from: number): void;
  topicDeleted?(t: SimTopic): void;
};

/** The topic registry every broker of the cluster sees (TopicManager's events, without its store). */
export class SimTopics {
  private readonly topics = new Map<string, SimTopic>();
  private readonly listeners: TopicListener[] = [];

  get(name: string): SimTopic | undefined {
    return this.topics.get(name);
  }

  list(): Iterable<SimTopic> {
    return [...this.topics.values()];
  }

  addListener(l: TopicListener): void {
    this.listeners.push(l);
  }

  create(name: string, partitions: number, replicationFactor = 1): void {
    const t = { name, partitions, replicationFactor };
    this.topics.set(name, t);
    for (const l of this.listeners) l.topicCreated?.(t);
  }

  addPartitions(name: string, count: number): void {
    const old = this.topics.get(name)!;
    const t = { ...old, partitions: count };
    this.topics.set(name, t);
    for (const l of this.listeners) l.partitionsAdded?.(t, old.partitions);
  }

  delete(name: string): void {
    const t = this.topics.get(name)!;
    this.topics.delete(name);
    for (const l of this.listeners) l.topicDeleted?.(t);
  }
}

/** A broker's handle on the shared store: paused, its calls wait and its watch events are held, in order. */
export class PausableStore implements MetadataStore {
  private paused = false;
  private gates: (() => void)[] = [];
  private held: (() => void)[] = [];

  constructor(private readonly inner: MetadataStore) {}

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const held = this.held;
    this.held = [];
    for (const deliver of held) deliver();
    const gates = this.gates;
    this.gates = [];
    for (const g of gates) g();
  }

  private async gate(): Promise<void> {
    if (this.paused) await new Promise<void>((r) => this.gates.push(r));
  }

  get: MetadataStore['get'] = async (...a) => (await this.gate(), this.inner.get(...a));
  list: MetadataStore['list'] = async (...a) => (await this.gate(), this.inner.list(...a));
  put: MetadataStore['put'] = async (...a) => (await this.gate(), this.inner.put(...a));
  compareAndSet: MetadataStore['compareAndSet'] = async (...a) => (await this.gate(), this.inner.compareAndSet(...a));
  delete: MetadataStore['delete'] = async (...a) => (await this.gate(), this.inner.delete(...a));
  deletePrefix: MetadataStore['deletePrefix'] = async (...a) => (await this.gate(), this.inner.deletePrefix(...a));
  txn: MetadataStore['txn'] = async (...a) => (await this.gate(), this.inner.txn(...a));
  grantLease: MetadataStore['grantLease'] = async (...a) => (await this.gate(), this.inner.grantLease(...a));
  keepAliveLease: MetadataStore['keepAliveLease'] = async (...a) => (await this.gate(), this.inner.keepAliveLease(...a));
  revokeLease: MetadataStore['revokeLease'] = async (...a) => (await this.gate(), this.inner.revokeLease(...a));
  leaseTimeToLive: MetadataStore['leaseTimeToLive'] = async (...a) => (await this.gate(), this.inner.leaseTimeToLive(...a));
  revision: MetadataStore['revision'] = async () => (await this.gate(), this.inner.revision());
  compact: MetadataStore['compact'] = async (r) => (await this.gate(), this.inner.compact(r));
  close: MetadataStore['close'] = async () => undefined;

  watch: MetadataStore['watch'] = async (target, listener, options) => {
    await this.gate();
    const wrapped: WatchListener = {
      onEvents: (res: WatchResponse) => {
        if (this.paused) this.held.push(() => listener.onEvents(res));
        else listener.onEvents(res);
      },
      onError: (err) => listener.onError?.(err),
    };
    return this.inner.watch(target, wrapped, options);
  };
}

/**
 * A broker's clock: the cluster's time, but while the broker is paused its timers are held and run, late and
 * in order, when it resumes, as a stopped process's would.
 */
export class PausableClock implements Clock {
  private paused = false;
  private held: (() => void)[] = [];

  constructor(private readonly base: ManualClock) {}

  now(): number {
    return this.base.now();
  }

  setTimer(delayMs: number, callback: () => void): ClockTimer {
    return this.base.setTimer(delayMs, () => (this.paused ? this.held.push(callback) : callback()));
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
    const held = this.held;
    this.held = [];
    for (const cb of held) cb();
  }
}

/** What a broker's partition layer holds open: opened on `acquired`, closed a few turns after `released`. */
export class SimPartitions {
  readonly open = new Set<string>();
  readonly events: string[] = [];

  constructor(
    readonly view: MemberView,
    onAcquired: (topic: string, partition: number) => void,
  ) {
    view.subscribe({
      acquired: (t, p) => {
        onAcquired(t, p);
        this.open.add(`${t}-${p}`);
        this.events.push(`+${t}-${p}`);
      },
      released: async (t, p) => {
        this.events.push(`-${t}-${p}`);
        // Closing seals the open ledger: a few turns of the event loop.
        for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
        this.open.delete(`${t}-${p}`);
      },
    });
  }
}

export interface SimBroker {
  readonly id: number;
  readonly store: PausableStore;
  readonly clock: PausableClock;
  readonly view: MemberView;
  readonly parts: SimPartitions;
  state: 'up' | 'paused' | 'left' | 'killed';
}

export class SimCluster {
  readonly topics = new SimTopics();
  readonly brokers = new Map<number, SimBroker>();
  /** Every broker ever started, including those that left or were killed. */
  readonly all: SimBroker[] = [];
  readonly violations: string[] = [];

  private constructor(
    readonly store: LocalMetadataStore,
    readonly clock: ManualClock,
  ) {}

  static async create(): Promise<SimCluster> {
    const clock = new ManualClock();
    const store = await openMemoryMetadataStore(undefined, { clock });
    return new SimCluster(store, clock);
  }

  /** A view for broker `id`, not started. */
  newBroker(id: number, options: { registrationWaitMs?: number } = {}): SimBroker {
    const store = new PausableStore(this.store);
    const clock = new PausableClock(this.clock);
    const view = new MemberView({
      store,
      nodeId: id,
      endpoints: () => [{ listenerName: 'PLAINTEXT', host: '127.0.0.1', port: 9000 + id }],
      topics: this.topics,
      leaseTtlSeconds: TTL_SECONDS,
      clock,
      offsetsTopicPartitions: 10,
      transactionTopicPartitions: 10,
      ...options,
    });
    const parts = new SimPartitions(view, (t, p) => this.checkAcquire(view, t, p));
    return { id, store, clock, view, parts, state: 'up' };
  }

  async join(id: number): Promise<SimBroker> {
    const b = this.newBroker(id);
    await b.view.start();
    this.brokers.set(id, b);
    this.all.push(b);
    await this.settle();
    return b;
  }

  async leave(id: number): Promise<void> {
    const b = this.brokers.get(id)!;
    this.brokers.delete(id);
    b.state = 'left';
    await b.view.stop();
    await this.settle();
  }

  kill(id: number): void {
    const b = this.brokers.get(id)!;
    this.brokers.delete(id);
    b.state = 'killed';
    b.view.abandon();
  }

  pause(id: number): void {
    const b = this.brokers.get(id)!;
    b.state = 'paused';
    b.store.pause();
    b.clock.pause();
  }

  resume(id: number): void {
    const b = this.brokers.get(id)!;
    b.state = 'up';
    b.clock.resume();
    b.store.resume();
  }

  /** Lets every pending store call, watch event and listener run. */
  async settle(rounds = 30): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      await new Promise((r) => setImmediate(r));
      this.checkOwners();
    }
  }

  /** Moves time in steps of 100 ms, letting everything run after each. */
  async advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 100) {
      this.clock.advance(Math.min(100, left));
      this.checkOwners();
      await this.settle(5);
    }
  }

  /** Brokers whose view owns the partition now (killed ones excluded: a dead process serves nothing). */
  ownersOf(topic: string, partition: number): number[] {
    return this.all.filter((b) => b.state !== 'killed' && b.view.owns(topic, partition)).map((b) => b.id);
  }

  /** Never two owners of one partition at any instant. */
  checkOwners(): void {
    for (const t of this.topics.list()) {
      for (let p = 0; p < t.partitions; p++) {
        const owners = this.ownersOf(t.name, p);
        if (owners.length > 1) this.violations.push(`${t.name}-${p} owned by ${owners.join(' and ')} at ${this.clock.now()}`);
      }
    }
  }

  /** A partition is acquired only once every other broker whose lease is valid has closed it. */
  private checkAcquire(view: MemberView, topic: string, partition: number): void {
    this.checkOwners();
    for (const b of this.all) {
      if (b.view === view) continue;
      if (b.state === 'killed' || !b.view.registry.leaseValid()) continue; // fenced, not closed: the log open fences it
      if (b.parts.open.has(`${topic}-${partition}`)) this.violations.push(`${topic}-${partition} acquired by ${view.localNodeId} while ${b.id} still has it open`);
    }
  }

  /** The brokers the rule places partitions on. */
  get upIds(): number[] {
    return [...this.brokers.keys()].sort((a, b) => a - b);
  }

  /** Who owns each partition now, -1 for none; an error string for two. */
  ownership(): Map<string, number> {
    const out = new Map<string, number>();
    for (const t of this.topics.list()) {
      for (let p = 0; p < t.partitions; p++) {
        const owners = this.ownersOf(t.name, p);
        out.set(`${t.name}-${p}`, owners.length === 1 ? owners[0]! : -1);
      }
    }
    return out;
  }

  async close(): Promise<void> {
    for (const b of this.brokers.values()) b.view.abandon();
    await this.store.close();
  }
}
