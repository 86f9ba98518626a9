/**
 * Leases of the ZooKeeper metadata store. A lease is a znode `/leases/lease-<n>` (persistent-sequential, so
 * ZooKeeper's counter hands out ids that never repeat; id = n + 1) holding its TTL in decimal. Which keys it
 * holds is in the keys' own headers (the replica indexes them).
 *
 * Deadlines are etcd's: in memory, per store instance. A store gives every lease it learns of (at open, or
 * when it first meets it) a full TTL from then, as etcd's lessor does on a new leader. A keep-alive is one
 * setData on the lease znode (raising its version) and restarts the TTL here. When a deadline passes here,
 * this instance reads the znode's version: if it moved, another instance kept the lease alive, and the TTL
 * starts again from now; if not, the lease ends, in one multi that deletes it at the version seen (a
 * keep-alive in between wins with BadVersion) together with its keys at one revision. So any instance can
 * expire any lease, the holder's keep-alives reach every instance without watches, and a lease outlives no
 * instance's view of it by more than one TTL after the last keep-alive it could see (at most 2 × TTL).
 *
 * Leases are not tied to ZooKeeper sessions (no ephemeral marker): a lease must outlive its granting store's
 * close (etcd's, and the contract's, semantics), which an ephemeral would not.
 */
import type { Clock, ClockTimer } from '../clock.js';
import { MetadataInvalidArgumentError, MetadataLeaseNotFoundError } from '../errors.js';
import { MAX_LEASE_TTL_SECONDS, overdueLeases } from '../local-store.js';
import { isNonNegativeInteger, parseLeaseId } from '../request-checks.js';
import type { LeaseGrant, LeaseId, LeaseTimeToLive } from '../types.js';
import type { ZooKeeperClient } from '../../zookeeper/client.js';
import { ZooKeeperBadVersionError, ZooKeeperNoNodeError } from '../../zookeeper/errors.js';
import { ZooKeeperMultiError } from '../../zookeeper/client.js';

const ROOT = '/leases';
const PREFIX = 'lease-';
const RETRY_MS = 1_000;
/** ZooKeeper's sequence counter is a signed int32. */
const MAX_SEQUENCE = 0x7fffffff;

interface KnownLease {
  readonly id: number;
  readonly ttl: number;
  deadline: number;
  /** The lease znode's data version when this instance last saw it. */
  version: number;
  timer: ClockTimer | null;
}

export interface LeaseHost {
  readonly clock: Clock;
  zk(): ZooKeeperClient;
  keysOf(id: number): string[];
  /** Deletes the lease znode at `version` and the lease's keys in one revision; returns that revision. */
  endWithKeys(id: number, version: number, operation: string): Promise<number>;
  /** Runs `fn` in the store's operation order. */
  schedule<T>(operation: string, fn: () => Promise<T>): Promise<T>;
  onBackgroundError(err: unknown): void;
}

export class ZooKeeperLeases {
  readonly #host: LeaseHost;
  readonly #known = new Map<number, KnownLease>();
  #stopped = false;

  constructor(host: LeaseHost) {
    this.#host = host;
  }

  path(id: number): string {
    const n = id - 1;
    return `${ROOT}/${PREFIX}${n >= 0 && n <= MAX_SEQUENCE ? String(n).padStart(10, '0') : `x${id}`}`;
  }

  /** Learns every lease in ZooKeeper, each with a full TTL from now. */
  async load(): Promise<void> {
    const { children } = await this.#host.zk().getChildren(ROOT);
    for (const name of children) {
      if (!name.startsWith(PREFIX)) continue;
      await this.#learn(Number(name.slice(PREFIX.length)) + 1);
    }
  }

  /**
   * Learns the leases that keys written by other instances are attached to, so that this instance can end
   * them too when their holder stops keeping them alive (a broker killed with SIGKILL): without this, a lease
   * granted elsewhere after this instance opened would be known only to its (dead) granter.
   */
  async noteAttached(ids: Iterable<number>): Promise<void> {
    for (const id of ids) if (id > 0 && !this.#known.has(id)) await this.#learn(id);
  }

  async #learn(id: number): Promise<KnownLease | null> {
    const known = this.#known.get(id);
    if (known) return known;
    const got = await this.#host.zk().get(this.path(id)).catch((err: unknown) => {
      if (err instanceof ZooKeeperNoNodeError) return null;
      throw err;
    });
    if (got === null) return null;
    const ttl = Number(got.data.toString());
    const lease: KnownLease = { id, ttl, deadline: this.#host.clock.now() + ttl * 1000, version: got.stat.version, timer: null };
    this.#known.set(id, lease);
    this.#arm(lease);
    return lease;
  }

  forget(id: number): void {
    const lease = this.#known.get(id);
    lease?.timer?.cancel();
    this.#known.delete(id);
  }

  #arm(lease: KnownLease, delayMs: number = Math.max(0, lease.deadline - this.#host.clock.now())): void {
    lease.timer?.cancel();
    if (this.#stopped) return;
    lease.timer = this.#host.clock.setTimer(delayMs, () => {
      lease.timer = null;
      if (this.#stopped || this.#known.get(lease.id) !== lease) return;
      // Without a timer, an overdue lease (a dead holder's) would wait for this store's next operation, which an
      // idle broker may not make for long. So the lease is armed again unless the attempt armed it itself (kept
      // alive elsewhere: a new deadline) or ended it:
      const again = (delayMs?: number): void => {
        if (!this.#stopped && lease.timer === null && this.#known.get(lease.id) === lease) this.#arm(lease, delayMs);
      };
      this.#host.schedule('expireLease', () => this.expireDue()).then(
        // Still here: the timer fired before the deadline by this clock (Node's timers and Date.now() can
        // differ by a millisecond), and expireDue found the lease not yet due.
        () => again(),
        (err: unknown) => {
          if (this.#stopped) return;
          this.#host.onBackgroundError(err);
          // Tried again until it goes through, as the local store's lease timers are.
          again(RETRY_MS);
        },
      );
    });
  }

  /**
   * Ends (or, if kept alive elsewhere, extends) every lease whose deadline here has passed, in the order they
   * fell due (ties by id), as the local store's timers do: this runs after its timer, by when later leases may
   * have fallen due too.
   */
  async expireDue(): Promise<void> {
    const now = this.#host.clock.now();
    for (const lease of overdueLeases(this.#known.values(), now)) {
      if (this.#known.get(lease.id) !== lease) continue;
      await this.#end(lease, 'expireLease', true);
    }
  }

  /** Ends the lease; with `ifIdle`, only if nobody kept it alive since this instance last saw it. */
  async #end(lease: KnownLease, operation: string, ifIdle: boolean): Promise<number | null> {
    const zk = this.#host.zk();
    for (;;) {
      const { stat } = await zk.exists(this.path(lease.id));
      if (stat === null) {
        this.forget(lease.id);
        return null;
      }
      if (ifIdle && stat.version !== lease.version) {
        lease.version = stat.version;
        lease.deadline = this.#host.clock.now() + lease.ttl * 1000;
        this.#arm(lease);
        return null;
      }
      try {
        let revision: number | null = null;
        if (this.#host.keysOf(lease.id).length === 0) await zk.delete(this.path(lease.id), stat.version);
        else revision = await this.#host.endWithKeys(lease.id, stat.version, operation);
        this.forget(lease.id);
        return revision;
      } catch (err) {
        const lost = err instanceof ZooKeeperBadVersionError || err instanceof ZooKeeperNoNodeError;
        const lostInMulti = err instanceof ZooKeeperMultiError && (lost || err.error instanceof ZooKeeperBadVersionError || err.error instanceof ZooKeeperNoNodeError);
        if (!lost && !lostInMulti) throw err;
        // Kept alive (or ended) by another instance meanwhile: look again.
      }
    }
  }

  async grant(ttlSeconds: number): Promise<LeaseGrant> {
    if (!isNonNegativeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_LEASE_TTL_SECONDS) {
      throw new MetadataInvalidArgumentError(`lease TTL must be an integer from 1 to ${MAX_LEASE_TTL_SECONDS} seconds`, { ttlSeconds });
    }
    const created = await this.#host.zk().create(`${ROOT}/${PREFIX}`, Buffer.from(String(ttlSeconds)), 'persistent-sequential');
    const id = Number(created.slice(created.lastIndexOf('/') + 1 + PREFIX.length)) + 1;
    const lease: KnownLease = { id, ttl: ttlSeconds, deadline: this.#host.clock.now() + ttlSeconds * 1000, version: 0, timer: null };
    this.#known.set(id, lease);
    this.#arm(lease);
    return { id: String(id), ttl: ttlSeconds };
  }

  async keepAlive(raw: LeaseId): Promise<LeaseGrant> {
    const id = parseLeaseId(raw);
    const lease = id < 1 ? null : await this.#learn(id);
    if (lease === null) throw new MetadataLeaseNotFoundError(raw, 'keepAliveLease');
    try {
      const stat = await this.#host.zk().set(this.path(id), Buffer.from(String(lease.ttl)));
      lease.version = stat.version;
    } catch (err) {
      if (!(err instanceof ZooKeeperNoNodeError)) throw err;
      this.forget(id);
      throw new MetadataLeaseNotFoundError(raw, 'keepAliveLease');
    }
    lease.deadline = this.#host.clock.now() + lease.ttl * 1000;
    this.#arm(lease);
    return { id: String(id), ttl: lease.ttl };
  }

  /** Ends the lease now; the revision of its keys' deletion, or null when it had none. */
  async revoke(raw: LeaseId): Promise<number | null> {
    const id = parseLeaseId(raw);
    const lease = id < 1 ? null : await this.#learn(id);
    if (lease === null) throw new MetadataLeaseNotFoundError(raw, 'revokeLease');
    const stat = (await this.#host.zk().exists(this.path(id))).stat;
    if (stat === null) {
      this.forget(id);
      throw new MetadataLeaseNotFoundError(raw, 'revokeLease');
    }
    return this.#end(lease, 'revokeLease', false);
  }

  async timeToLive(raw: LeaseId): Promise<LeaseTimeToLive | null> {
    const id = parseLeaseId(raw);
    const lease = id < 1 ? null : await this.#learn(id);
    if (lease === null) return null;
    if ((await this.#host.zk().exists(this.path(id))).stat === null) {
      this.forget(id);
      return null;
    }
    const ttl = Math.max(0, Math.ceil((lease.deadline - this.#host.clock.now()) / 1000));
    return { id: String(id), ttl, grantedTtl: lease.ttl, keys: this.#host.keysOf(id) };
  }

  stop(): void {
    this.#stopped = true;
    for (const lease of this.#known.values()) lease.timer?.cancel();
  }
}
