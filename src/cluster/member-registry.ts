/**
 * A broker's membership of a shared cluster: its registration under its lease, the lease kept alive, and the
 * live brokers as the metadata store's watch shows them. What ZooKeeper-mode Kafka kept in /brokers/ids/<id>
 * (an ephemeral znode of the broker's session) and KRaft's controller in its BrokerRegistration records.
 *
 * ```
 *   /brokers/ids/<id>   {"v":1,"nodeId":1,"rack":null,"endpoints":[{"listenerName":"PLAINTEXT","host":..,"port":..}],
 *                        "startedAtMs":..,"incarnationId":"<uuid>","draining":false}      with the broker's lease
 * ```
 *
 * The broker epoch is the key's createRevision, as KRaft's broker epoch is the offset of its registration
 * record: it grows with every registration, so a broker that re-registered is told apart from its earlier self.
 *
 * The lease is kept alive every third of its TTL. The lease is taken to be valid until `sent + ttl` of the last
 * keep-alive the store answered (`sent`: when it was sent, by this broker's clock): the store restarts the TTL
 * when it receives the keep-alive, later than that, so the store's deadline is never earlier than this one (with
 * clocks that run at the same rate). `leaseValid()` is asked on every ownership check; past the deadline, or
 * when the store says the lease is gone, the broker has lost it: `onLeaseLost` runs at once, and the registry
 * registers again under a new lease.
 *
 * A broker id already registered under another lease is waited for, for as long as that lease can still
 * live (its granted TTL, plus a second): a broker restarted straight after a crash finds its previous run's
 * registration until that lease expires, as KRaft's BrokerLifecycleManager retries its registration while the
 * controller still has the old one. A registration still kept alive after that belongs to a live broker with
 * the same id, and the start is refused (Kafka's DUPLICATE_BROKER_REGISTRATION).
 */
import { randomUUID } from 'node:crypto';
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';
import { systemClock, type Clock, type ClockTimer } from '../metadata/clock.js';
import { BROKER_IDS_PREFIX, brokerKey } from '../metadata/layout.js';
import { follow, type Following } from '../metadata/follow.js';
import type { KeyValue, LeaseId, MetadataStore } from '../metadata/types.js';
import type { Logger } from '../observability/logger.js';
import type { BrokerEndpoint, LiveBroker } from './cluster-view.js';

/** Another live broker holds this broker id (Kafka's DuplicateBrokerRegistrationException). */
export class DuplicateBrokerError extends LedgerlineError {
  constructor(nodeId: number, holder: string) {
    super('LL_ERR_CLUSTER_DUPLICATE_BROKER', ErrorCode.DUPLICATE_BROKER_REGISTRATION, `Another broker is registered with broker id ${nodeId} (${holder}); node.id must be unique in the cluster`);
  }
}

export interface Registration extends LiveBroker {
  readonly startedAtMs: number;
  readonly incarnationId: string;
  /** Leaving (a graceful stop): still serving what it holds, given no more partitions by the rule. */
  readonly draining: boolean;
  /** The key's createRevision: the broker epoch. */
  readonly brokerEpoch: number;
  readonly lease: LeaseId | null;
}

export interface MemberRegistryOptions {
  readonly store: MetadataStore;
  readonly nodeId: number;
  readonly rack?: string | null;
  readonly endpoints: () => readonly BrokerEndpoint[];
  /** The lease TTL in whole seconds (broker.session.timeout.ms, rounded up). */
  readonly leaseTtlSeconds: number;
  readonly clock?: Clock;
  readonly log?: Logger;
  /** How long a registration of this id under another lease is waited for at start; default its TTL + 1 s. */
  readonly registrationWaitMs?: number;
}

export interface MemberRegistryListener {
  /** The live set or a registration changed. */
  changed(): void;
  /**
   * This broker's lease is lost (expired, or past its deadline here): stop serving at once. The registry
   * registers again once the returned Promise settles (what was served under the old lease is closed), or
   * after one TTL at most.
   */
  leaseLost(): void | Promise<void>;
  /** Registered again under a new lease after a loss. */
  reregistered(): void;
}

/** A delay on the registry's clock. */
function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

/** Re-registration after a lost lease is retried this often while the store refuses. */
const RETRY_MS = 1000;

export class MemberRegistry {
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly live = new Map<number, Registration>();
  private lease: LeaseId | null = null;
  /** The lease is taken to be valid until then (this broker's clock); -Infinity when there is none. */
  private deadline = -Infinity;
  private keepAliveTimer: ClockTimer | null = null;
  private deadlineTimer: ClockTimer | null = null;
  private following: Following | null = null;
  private ownKv: KeyValue | null = null;
  private draining = false;
  private stopped = false;
  private recovering: Promise<void> | null = null;
  private readonly incarnationId = randomUUID();
  private readonly startedAtMs: number;
  private listener: MemberRegistryListener | null = null;
  /** Leases this broker held and lost: a registration still under one is its own, waited out, not a duplicate. */
  private readonly lostLeases = new Set<LeaseId>();

  constructor(private readonly options: MemberRegistryOptions) {
    this.clock = options.clock ?? systemClock;
    this.ttlMs = options.leaseTtlSeconds * 1000;
    this.startedAtMs = Date.now();
  }

  get nodeId(): number {
    return this.options.nodeId;
  }

  /** This broker's epoch (its registration's createRevision), -1 while unregistered. */
  get brokerEpoch(): number {
    return this.ownKv?.createRevision ?? -1;
  }

  get leaseId(): LeaseId | null {
    return this.lease;
  }

  /** Whether this broker's lease is still valid by its own clock: asked on every ownership check, allocation-free. */
  leaseValid(): boolean {
    return this.lease !== null && this.clock.now() < this.deadline;
  }

  /** Registered brokers, live by the watch. */
  brokers(): IterableIterator<Registration> {
    return this.live.values();
  }

  registration(nodeId: number): Registration | undefined {
    return this.live.get(nodeId);
  }

  /** Registers (waiting out a previous run's lease; refusing a live duplicate), keeps alive, watches. */
  async start(listener: MemberRegistryListener): Promise<void> {
    this.listener = listener;
    await this.follow();
    await this.register(this.options.registrationWaitMs);
  }

  /** Marks the registration draining (a graceful stop): the rule gives this broker no more partitions. */
  async drain(): Promise<void> {
    this.draining = true;
    const lease = this.lease;
    const own = this.ownKv;
    if (lease === null || own === null) return;
    await this.options.store.compareAndSet(brokerKey(this.nodeId), { modRevision: own.modRevision }, this.value(), { lease }).catch((err: unknown) => {
      this.options.log?.warn({ err }, 'marking this broker draining failed; its partitions move when its lease ends');
    });
  }

  /** Revokes the lease (deleting the registration and any key still under it) and stops following. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clearTimers();
    const lease = this.lease;
    this.lease = null;
    this.deadline = -Infinity;
    if (lease !== null) await this.options.store.revokeLease(lease).catch(() => undefined);
    await this.following?.cancel();
    this.following = null;
  }

  /** Ends without a word to the store, as a killed process does (tests): the lease expires on its own. */
  abandon(): void {
    this.stopped = true;
    this.clearTimers();
    this.lease = null;
    this.deadline = -Infinity;
    void this.following?.cancel();
  }

  private value(): Buffer {
    return Buffer.from(
      JSON.stringify({
        v: 1,
        nodeId: this.nodeId,
        rack: this.options.rack ?? null,
        endpoints: this.options.endpoints().map((e) => ({ listenerName: e.listenerName, host: e.host, port: e.port })),
        startedAtMs: this.startedAtMs,
        incarnationId: this.incarnationId,
        draining: this.draining,
      }),
    );
  }

  private async register(waitMs: number | undefined): Promise<void> {
    const { store } = this.options;
    const key = brokerKey(this.nodeId);
    const grant = await store.grantLease(this.options.leaseTtlSeconds);
    const sent = this.clock.now();
    let waitUntil: number | null = null;
    for (;;) {
      if (this.stopped) {
        await store.revokeLease(grant.id).catch(() => undefined);
        return;
      }
      const r = await store.compareAndSet(key, { modRevision: 0 }, this.value(), { lease: grant.id });
      if (r.succeeded) {
        this.lease = grant.id;
        this.deadline = sent + grant.ttl * 1000;
        this.ownKv = { key, value: this.value(), createRevision: r.revision, modRevision: r.revision, version: 1, lease: grant.id };
        this.armKeepAlive();
        return;
      }
      const current = r.current;
      if (current === null) continue;
      if (current.lease !== null && this.lostLeases.has(current.lease)) {
        // Our own registration under a lost lease the store has not ended yet (the revoke did not reach it).
        await store.keepAliveLease(grant.id).catch(() => undefined);
        await sleep(this.clock, Math.max(1, Math.floor(this.ttlMs / 3)));
        continue;
      }
      const ttl = current.lease === null ? null : await store.leaseTimeToLive(current.lease);
      const now = this.clock.now();
      waitUntil ??= now + (waitMs ?? ((ttl?.grantedTtl ?? 0) + 1) * 1000);
      if (current.lease === null || now >= waitUntil) {
        await store.revokeLease(grant.id).catch(() => undefined);
        throw new DuplicateBrokerError(this.nodeId, describeHolder(current));
      }
      // Keep our own lease alive meanwhile.
      await store.keepAliveLease(grant.id).catch(() => undefined);
      this.options.log?.info({ nodeId: this.nodeId, holder: describeHolder(current) }, 'this broker id is registered under another lease; waiting for it to expire');
      await sleep(this.clock, Math.max(1, Math.min(waitUntil - now, (ttl?.ttl ?? 1) * 1000, this.ttlMs / 3)));
    }
  }

  private armKeepAlive(): void {
    this.clearTimers();
    if (this.stopped || this.lease === null) return;
    this.keepAliveTimer = this.clock.setTimer(Math.max(1, Math.floor(this.ttlMs / 3)), () => void this.keepAlive());
    this.armDeadline();
  }

  private armDeadline(): void {
    this.deadlineTimer?.cancel();
    this.deadlineTimer = this.clock.setTimer(Math.max(0, this.deadline - this.clock.now()), () => {
      this.deadlineTimer = null;
      if (this.stopped || this.lease === null) return;
      if (this.clock.now() >= this.deadline) this.lost('its deadline passed without a keep-alive answered');
      // Fired a little before the deadline by this clock (Node's timers and Date.now() can differ by a
      // millisecond): armed again, or a keep-alive that never answers would leave the lease taken as valid.
      else this.armDeadline();
    });
  }

  private async keepAlive(): Promise<void> {
    const lease = this.lease;
    if (lease === null || this.stopped) return;
    const sent = this.clock.now();
    try {
      const grant = await this.options.store.keepAliveLease(lease);
      if (this.lease !== lease) return;
      // A late answer cannot move the deadline of a lease already past it.
      if (sent < this.deadline) this.deadline = Math.max(this.deadline, sent + grant.ttl * 1000);
      else return this.lost('a keep-alive was answered after the deadline');
    } catch (err) {
      if (this.lease !== lease) return;
      if ((err as { code?: string }).code === 'LL_ERR_METADATA_LEASE_NOT_FOUND') return this.lost('the store no longer has it');
      this.options.log?.warn({ err }, 'keeping the broker lease alive failed; trying again');
    }
    if (this.lease === lease) this.armKeepAlive();
  }

  /** The lease is lost: stop serving (the listener), then register again under a new lease. */
  private lost(why: string): void {
    if (this.stopped || this.lease === null) return;
    const old = this.lease;
    this.lostLeases.add(old);
    this.options.log?.error({ nodeId: this.nodeId, lease: old, why }, 'the broker lease is lost: this broker stops serving its partitions and registers again');
    this.lease = null;
    this.deadline = -Infinity;
    this.ownKv = null;
    this.clearTimers();
    const closed = this.listener?.leaseLost();
    this.recovering ??= (async () => {
      await Promise.race([Promise.resolve(closed).catch(() => undefined), sleep(this.clock, this.ttlMs)]);
      // Whatever is still under the old lease goes now (the store may not have expired it yet).
      await this.options.store.revokeLease(old).catch(() => undefined);
      while (!this.stopped) {
        try {
          await this.register(0);
          break;
        } catch (err) {
          this.options.log?.warn({ err }, 'registering again failed; trying again');
          await sleep(this.clock, RETRY_MS);
        }
      }
    })().finally(() => {
      this.recovering = null;
      if (!this.stopped && this.lease !== null) this.listener?.reregistered();
    });
  }

  /** Lists the registrations, then follows them (follow.ts: listed again whenever the watch ends). */
  private async follow(): Promise<void> {
    this.following = await follow(
      this.options.store,
      { prefix: BROKER_IDS_PREFIX },
      {
        reset: (kvs) => {
          const listedHere = this.live.has(this.nodeId);
          this.live.clear();
          for (const kv of kvs) this.apply(kv);
          // Our own registration gone while the watch was down: as its delete event would have said.
          if (listedHere && !this.live.has(this.nodeId) && this.lease !== null) this.lost('its registration was deleted');
          this.listener?.changed();
        },
        changes: (events) => {
          for (const e of events) {
            if (e.type === 'put') this.apply(e.kv);
            else this.remove(e.kv.key);
          }
          this.listener?.changed();
        },
        error: (err) => {
          if (!this.stopped) this.options.log?.warn({ err }, 'following the broker registrations failed; listing them again');
        },
      },
      { clock: this.clock },
    );
  }

  private apply(kv: KeyValue): void {
    const reg = parseRegistration(kv);
    if (!reg) {
      this.options.log?.warn({ key: kv.key }, 'a broker registration does not decode; ignored');
      return;
    }
    this.live.set(reg.nodeId, reg);
    if (reg.nodeId === this.nodeId && kv.lease !== null && kv.lease === this.lease) this.ownKv = kv;
  }

  private remove(key: string): void {
    const id = Number(key.slice(BROKER_IDS_PREFIX.length));
    this.live.delete(id);
    // Our own registration deleted under a lease we still hold: the lease ended in the store.
    if (id === this.nodeId && this.lease !== null) this.lost('its registration was deleted');
  }

  private clearTimers(): void {
    this.keepAliveTimer?.cancel();
    this.deadlineTimer?.cancel();
    this.keepAliveTimer = null;
    this.deadlineTimer = null;
  }
}

function describeHolder(kv: KeyValue): string {
  const reg = parseRegistration(kv);
  if (!reg) return `lease ${kv.lease}`;
  return `incarnation ${reg.incarnationId}, started at ${new Date(reg.startedAtMs).toISOString()}, endpoints ${reg.endpoints.map((e) => `${e.listenerName}://${e.host}:${e.port}`).join(',')}`;
}

/** A registration from its key, or null when it does not decode. */
export function parseRegistration(kv: KeyValue): Registration | null {
  try {
    const v = JSON.parse(kv.value.toString('utf8')) as Record<string, unknown>;
    if (v.v !== 1 || typeof v.nodeId !== 'number' || !Array.isArray(v.endpoints)) return null;
    if (`${BROKER_IDS_PREFIX}${v.nodeId}` !== kv.key) return null;
    const endpoints = (v.endpoints as Record<string, unknown>[]).map((e) => ({ listenerName: String(e.listenerName), host: String(e.host), port: Number(e.port) }));
    return {
      nodeId: v.nodeId,
      rack: typeof v.rack === 'string' ? v.rack : null,
      endpoints,
      startedAtMs: Number(v.startedAtMs ?? 0),
      incarnationId: String(v.incarnationId ?? ''),
      draining: v.draining === true,
      brokerEpoch: kv.createRevision,
      lease: kv.lease,
    };
  } catch {
    return null;
  }
}
