/**
 * ZooKeeperMetadataStore: the MetadataStore contract (etcd v3's model, ../types.ts) on Apache ZooKeeper, for
 * brokers that share one metadata service. Layout, formats and costs: ../README.md, *ZooKeeper*; the znode
 * formats: codec.ts; leases: leases.ts.
 *
 *   every change ─► one multi:  setData /rev (version = store revision − 1: the CAS on the whole store)
 *                               + create / setData / delete /kv/<escaped key> (header + value)
 *                               + create /history/<revision> (the revision's events, for watches)
 *                               [+ check /leases/<id> for each lease a put attaches, delete of an ended lease]
 *   BadVersion on /rev ─► another store wrote first: catch up from /history, evaluate again, retry.
 *
 * Each store instance keeps a replica of every key in memory (a MemoryBackend: sorted keys, lease index, the
 * events it has seen), brought up to date from /history before every operation (one `exists /rev` round
 * trip when nothing changed) and whenever /rev's ZooKeeper watch fires. Compares, lists and txn reads are
 * evaluated on the replica at the revision the multi checks, so a change is applied only on the state it was
 * computed from. Operations of one instance run one at a time, in call order.
 *
 * Group commit: the kv writes called one after another (no other operation called between them) are committed
 * by one multi, each at its own revision, in call order: the multi holds each change's ops in turn, each
 * starting with its own setData of /rev (ZooKeeper applies a multi's ops in order, so the second checks the
 * version the first wrote). ZooKeeper syncs one multi to its log once, so a broker taking over forty
 * partitions pays one log sync for their ownership keys instead of forty (the embedded store batches its
 * commits the same way, local-store.ts). A change whose own rule fails (its lease gone, its multi too large)
 * fails alone; the others are evaluated again without it.
 */
import { randomBytes } from 'node:crypto';
import type { StoredEvent } from '../backend.js';
import { systemClock, type Clock } from '../clock.js';
import {
  MetadataClosedError,
  MetadataCompactedError,
  MetadataConflictError,
  MetadataError,
  MetadataFutureRevisionError,
  MetadataInvalidArgumentError,
  MetadataLeaseNotFoundError,
  MetadataLockedError,
  MetadataStorageError,
} from '../errors.js';
import { checkKey, checkPrefix } from '../key-order.js';
import { DEFAULT_HISTORY_RETENTION, DEFAULT_MAX_TXN_OPS, type LocalMetadataStoreOptions } from '../local-store.js';
import { LocalWatch } from '../local-watch.js';
import { MemoryBackend, MemoryMetadataVolume } from '../memory-backend.js';
import { checkExpectation, checkLimit, checkTxnRequest, checkValue, isNonNegativeInteger, parseLeaseId } from '../request-checks.js';
import { compareHolds, maybeKeyValue, meets, toKeyValue } from '../stored-rows.js';
import type {
  CompareAndSetResult,
  DeleteOptions,
  DeletePrefixResult,
  DeleteResult,
  Expectation,
  KeyValue,
  LeaseGrant,
  LeaseId,
  LeaseTimeToLive,
  ListOptions,
  ListResult,
  MetadataStore,
  PutOptions,
  PutResult,
  TxnOpResult,
  TxnRequest,
  TxnResult,
  Watch,
  WatchListener,
  WatchOptions,
  WatchTarget,
} from '../types.js';
import { WriteBatch } from '../write-batch.js';
import { ZooKeeperClient, ZooKeeperMultiError, type MultiOp } from '../../zookeeper/client.js';
import { ZooKeeperBadVersionError, ZooKeeperConnectionLossError, ZooKeeperNoNodeError, ZooKeeperNodeExistsError } from '../../zookeeper/errors.js';
import { KV_HEADER_BYTES, TOKEN_BYTES, decodeHistory, decodeKv, encodeHistory, encodeKv, escapeKey } from './codec.js';
import { READ_BATCH, historyPath, ignore, inBatches, readHistory } from './history.js';
import { ZooKeeperLeases } from './leases.js';

export interface ZooKeeperMetadataStoreOptions extends LocalMetadataStoreOptions {
  /** `host:port[,host:port...][/chroot]`, as Kafka's zookeeper.connect; the chroot is created if missing. */
  readonly connect: string;
  /** ZooKeeper session timeout (Kafka's zookeeper.session.timeout.ms, default 18000). */
  readonly sessionTimeoutMs?: number;
  /**
   * Hold the store alone (an ephemeral /lock znode, gone with the session), as the embedded store locks its
   * directory: a second exclusive opener fails with LL_ERR_METADATA_LOCKED. Brokers sharing one store leave
   * it off (the default).
   */
  readonly exclusive?: boolean;
  /**
   * ZooKeeper's jute.maxbuffer of the servers (default 1 MiB - 1): a change whose multi would be larger is
   * refused with LL_ERR_METADATA_INVALID_ARGUMENT instead of being cut off by the server.
   */
  readonly juteMaxBuffer?: number;
}

/** Kafka's zookeeper.session.timeout.ms default. */
export const DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS = 18_000;
/** Pause before arming the /rev watch again after the call that arms it failed. */
const REV_WATCH_RETRY_MS = 1_000;
export const DEFAULT_JUTE_MAX_BUFFER = 0xfffff;
/**
 * A put's value is written twice in its multi (key znode and history), so the request limit defaults to what
 * fits twice in jute.maxbuffer with room for the headers (etcd's own default, 1.5 MiB, does not fit).
 */
export const DEFAULT_ZOOKEEPER_MAX_REQUEST_BYTES = 480 * 1024;
const REV_DATA = Buffer.from('ledgerline-metadata 1');
const MAX_ATTEMPTS = 64;
const ROLLBACK = Symbol('rollback');

const P = { rev: '/rev', compact: '/compact', kv: '/kv', history: '/history', leases: '/leases', lock: '/lock' } as const;
const kvPath = (key: string): string => `${P.kv}/${escapeKey(key)}`;

/** About what ops add to a multi request (path, data and per-op framing). */
function multiBytes(ops: readonly MultiOp[]): number {
  let bytes = 0;
  for (const op of ops) bytes += 32 + Buffer.byteLength(op.path) + ('data' in op && op.data ? op.data.byteLength : 0);
  return bytes;
}

function wrap(err: unknown, operation: string): MetadataError {
  return err instanceof MetadataError ? err : new MetadataStorageError(operation, err);
}

/** A kv write: `fn` stages it on a WriteBatch at its revision (and may refuse it with a MetadataError). */
interface Job {
  readonly operation: string;
  readonly fn: (batch: WriteBatch) => unknown;
}

/** A kv write waiting in the open group (`#enqueue`), answered once the group's multi is applied. */
interface QueuedJob extends Job {
  readonly resolve: (applied: Applied) => void;
  readonly reject: (error: unknown) => void;
}

interface Applied {
  readonly result: unknown;
  readonly revision: number;
}

type Outcome = Applied | { readonly error: MetadataError };

/** One job staged in a plan: its result, revision (the current one when it writes nothing) and events. */
interface StagedJob extends Applied {
  readonly job: number;
  readonly events: StoredEvent[];
}

/** The multi that commits some of the open jobs, and what each of its ops means if it fails. */
interface Plan {
  readonly staged: StagedJob[];
  readonly failed: { readonly job: number; readonly error: MetadataError }[];
  /** Jobs that did not fit into this multi: planned again once it is applied. */
  readonly deferred: number[];
  readonly ops: MultiOp[];
  /** Indexes of the setData ops on /rev. */
  readonly revOps: ReadonlySet<number>;
  /** Indexes of the lease checks, with their job and lease. */
  readonly leaseOps: ReadonlyMap<number, { readonly job: number; readonly lease: number }>;
  /** Where the caller's extra ops begin (ops.length when there are none). */
  readonly extraFrom: number;
  /** The first revision the multi writes and the token of its history znode (to recognise it after a lost answer). */
  readonly first: { readonly revision: number; readonly token: Buffer } | null;
}

/** Jobs of one group commit at most (the multi's size is bounded by jute.maxbuffer as well). */
const MAX_GROUP_JOBS = 256;
const DEFER = Symbol('defer');

export class ZooKeeperMetadataStore implements MetadataStore {
  readonly #options: ZooKeeperMetadataStoreOptions;
  readonly #clock: Clock;
  readonly #historyRetention: number;
  readonly #compactionStep: number;
  readonly #maxTxnOps: number;
  readonly #maxRequestBytes: number;
  readonly #juteMaxBuffer: number;
  #zk: ZooKeeperClient;
  #replica: MemoryBackend;
  /** The revision the replica reflects. */
  #revision = 1;
  /** The replica holds the events of revisions from here on (earlier ones are read from /history). */
  #replicaHistoryFrom = 2;
  #compactRevision = 0;
  #tail: Promise<unknown> = Promise.resolve();
  /** The group kv writes join until another operation is called or the group's commit starts. */
  #group: QueuedJob[] | null = null;
  #closed = false;
  #failed: MetadataError | null = null;
  #revWatchArmed = false;
  #nextWatchId = 1;
  readonly #watches = new Set<LocalWatch>();
  readonly leases: ZooKeeperLeases;

  private constructor(zk: ZooKeeperClient, options: ZooKeeperMetadataStoreOptions) {
    const retention = options.historyRetention ?? DEFAULT_HISTORY_RETENTION;
    if (!isNonNegativeInteger(retention) || retention < 1) {
      throw new MetadataInvalidArgumentError('historyRetention must be a positive integer', { retention });
    }
    this.#options = options;
    this.#zk = zk;
    this.#clock = options.clock ?? systemClock;
    this.#historyRetention = retention;
    this.#compactionStep = Math.max(1, Math.ceil(retention / 10));
    this.#maxTxnOps = options.maxTxnOps ?? DEFAULT_MAX_TXN_OPS;
    this.#maxRequestBytes = options.maxRequestBytes ?? DEFAULT_ZOOKEEPER_MAX_REQUEST_BYTES;
    this.#juteMaxBuffer = options.juteMaxBuffer ?? DEFAULT_JUTE_MAX_BUFFER;
    this.#replica = new MemoryBackend(new MemoryMetadataVolume('zookeeper-replica'));
    this.leases = new ZooKeeperLeases({
      clock: this.#clock,
      zk: () => this.#zk,
      keysOf: (id) => this.#replica.keysWithLease(id),
      endWithKeys: (id, version, operation) => this.#endLeaseWithKeys(id, version, operation),
      schedule: (operation, fn) => {
        this.#group = null;
        return this.#serial(operation, fn);
      },
      onBackgroundError: (err) => options.onBackgroundError?.(wrap(err, 'expireLease')),
    });
  }

  /** Connects, lays out the chroot if new, loads the replica and the leases. */
  static async open(options: ZooKeeperMetadataStoreOptions): Promise<ZooKeeperMetadataStore> {
    const zk = await ZooKeeperClient.connect({
      connect: options.connect,
      sessionTimeoutMs: options.sessionTimeoutMs ?? DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS,
      createChroot: true,
    }).catch((err: unknown) => {
      throw wrap(err, 'open');
    });
    let store: ZooKeeperMetadataStore | undefined;
    try {
      store = new ZooKeeperMetadataStore(zk, options);
      await store.#start();
      return store;
    } catch (err) {
      await zk.close();
      throw wrap(err, 'open');
    }
  }

  async #start(): Promise<void> {
    const zk = this.#zk;
    for (const path of [P.kv, P.history, P.leases]) await zk.create(path).catch(ignore(ZooKeeperNodeExistsError));
    await zk.create(P.compact, Buffer.from('0')).catch(ignore(ZooKeeperNodeExistsError));
    // /rev last: its presence says the layout is complete.
    await zk.create(P.rev, REV_DATA).catch(ignore(ZooKeeperNodeExistsError));
    if (this.#options.exclusive === true) {
      await zk.create(P.lock, Buffer.from(zk.sessionId), 'ephemeral').catch((err: unknown) => {
        throw err instanceof ZooKeeperNodeExistsError ? new MetadataLockedError(this.#options.connect, err) : err;
      });
    }
    zk.on('expired', () => this.#onExpired());
    await this.#load();
    await this.leases.load();
    this.#armRevWatch();
  }

  /** Reads every key znode into a fresh replica, at one revision (re-read if /rev moved meanwhile). */
  async #load(): Promise<void> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = await this.#zk.exists(P.rev);
      const { children } = await this.#zk.getChildren(P.kv);
      const kvs = await inBatches(children, READ_BATCH, async (name) => {
        const path = `${P.kv}/${name}`;
        const got = await this.#zk.get(path).catch(ignore(ZooKeeperNoNodeError));
        return got ? decodeKv(got.data, path) : undefined;
      });
      const after = await this.#zk.exists(P.rev);
      if (before.stat?.mzxid !== after.stat?.mzxid || after.stat === null) continue;
      const replica = new MemoryBackend(new MemoryMetadataVolume('zookeeper-replica'));
      replica.atomically(() => {
        for (const kv of kvs) if (kv) replica.putKv(kv);
      });
      this.#replica.close();
      this.#replica = replica;
      this.#revision = after.stat.version + 1;
      this.#replicaHistoryFrom = this.#revision + 1;
      this.#compactRevision = await this.#readCompactRevision();
      return;
    }
    throw new MetadataConflictError(P.rev, MAX_ATTEMPTS);
  }

  async #readCompactRevision(): Promise<number> {
    const { data } = await this.#zk.get(P.compact);
    return Number(data.toString()) || 0;
  }

  // ------------------------------------------------------------------------------------- plumbing

  /** Runs `fn` after every operation called before it (one at a time, in call order). */
  #serial<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      if (this.#closed && operation !== 'close') throw new MetadataClosedError(operation);
      if (this.#failed) throw this.#failed;
      try {
        return await fn();
      } catch (err) {
        throw wrap(err, operation);
      }
    };
    const result = this.#tail.then(run, run);
    this.#tail = result.catch(() => undefined);
    return result;
  }

  /** Every operation: in order, on a replica brought up to date, with due leases ended first. */
  #enter<T>(operation: string, fn: () => Promise<T> | T): Promise<T> {
    if (this.#closed) return Promise.reject(new MetadataClosedError(operation));
    this.#group = null; // a write called after this operation commits after it
    return this.#serial(operation, async () => {
      await this.#sync();
      await this.leases.expireDue();
      return fn();
    });
  }

  /** Brings the replica to ZooKeeper's current revision by reading the history it has not seen. */
  async #sync(): Promise<void> {
    const { stat } = await this.#zk.exists(P.rev);
    if (stat === null) throw new MetadataStorageError('sync', new Error(`${P.rev} is missing: the store's znodes were removed`));
    const current = stat.version + 1;
    if (current <= this.#revision) return;
    const wanted: number[] = [];
    for (let r = this.#revision + 1; r <= current; r++) wanted.push(r);
    const records = await inBatches(wanted, READ_BATCH, (r) => this.#zk.get(historyPath(r)).catch(ignore(ZooKeeperNoNodeError)));
    if (records.some((r) => r === undefined)) {
      // Compacted away by another store before this one read it: start again from the key znodes; watches
      // here would miss revisions, so they end as a compacted etcd watch does.
      await this.#load();
      for (const w of [...this.#watches]) w.endAfterQueued(new MetadataCompactedError(wanted[0]!, this.#compactRevision));
      return;
    }
    const attached = new Set<number>();
    for (let i = 0; i < wanted.length; i++) {
      const revision = wanted[i]!;
      const { events } = decodeHistory(records[i]!.data, revision, historyPath(revision));
      for (const e of events) if (e.type === 'put' && e.kv.lease !== 0) attached.add(e.kv.lease);
      this.#applyCommitted(revision, events.map((e) => ({ ...e, prev: this.#replica.getKv(e.kv.key) ?? null })));
    }
    await this.leases.noteAttached(attached);
  }

  /** Applies a committed revision to the replica and offers it to the watches. */
  #applyCommitted(revision: number, events: StoredEvent[]): void {
    this.#replica.atomically(() => {
      for (const e of events) {
        if (e.type === 'put') this.#replica.putKv(e.kv);
        else this.#replica.deleteKv(e.kv.key);
      }
      this.#replica.appendEvents(events);
      const floor = revision - this.#historyRetention + 1;
      if (floor - this.#replicaHistoryFrom >= this.#compactionStep) {
        this.#replica.compactEvents(floor);
        this.#replicaHistoryFrom = floor;
      }
    });
    this.#revision = revision;
    for (const w of this.#watches) w.offer(revision, events);
  }

  /** Follows /rev with a one-shot ZooKeeper watch, re-armed before each catch-up so no change is missed. */
  #armRevWatch(): void {
    if (this.#revWatchArmed || this.#closed) return;
    this.#revWatchArmed = true;
    this.#zk
      .exists(P.rev, { watch: true })
      .then(({ changed }) =>
        changed.then((event) => {
          this.#revWatchArmed = false;
          if (this.#closed || event.type === 'sessionExpired' || event.type === 'closed') return;
          this.#follow();
        }),
      )
      .catch((err: unknown) => {
        this.#revWatchArmed = false;
        this.#options.onBackgroundError?.(wrap(err, 'follow'));
        // Nothing else arms the watch again short of a session expiry: without this, one failed call (a
        // connection loss under load) would leave this store deaf to every later change. Armed again after a
        // pause, then caught up on what changed meanwhile; an expired session's calls fail here until
        // #onExpired has a new one, which arms the watch itself (the flag keeps it to one).
        setTimeout(() => {
          if (!this.#closed) this.#follow();
        }, REV_WATCH_RETRY_MS).unref();
      });
  }

  /**
   * Arms the /rev watch, then catches up: the watch is armed first, so a change committed during the
   * catch-up fires it and none falls between the two.
   */
  #follow(): void {
    this.#armRevWatch();
    this.#serial('follow', async () => {
      await this.#sync();
      await this.leases.expireDue();
    }).catch((err: unknown) => this.#options.onBackgroundError?.(wrap(err, 'follow')));
  }

  /** A new session after expiry (the old one's watches are gone); an exclusive store has lost its lock. */
  #onExpired(): void {
    if (this.#closed) return;
    if (this.#options.exclusive === true) {
      this.#failed = new MetadataStorageError('session', new Error('the ZooKeeper session expired: the store lock is lost'));
      for (const w of [...this.#watches]) w.endAfterQueued(this.#failed);
      return;
    }
    const old = this.#zk;
    void ZooKeeperClient.connect({ connect: this.#options.connect, sessionTimeoutMs: this.#options.sessionTimeoutMs ?? DEFAULT_ZOOKEEPER_SESSION_TIMEOUT_MS })
      .then((zk) => {
        if (this.#closed) return zk.close();
        this.#zk = zk;
        zk.on('expired', () => this.#onExpired());
        void old.close();
        this.#revWatchArmed = false;
        // What others wrote while this instance had no session: its watches get it now, not at the next change.
        this.#follow();
      })
      .catch(() => setTimeout(() => this.#onExpired(), 1_000).unref());
  }

  #checkRequestBytes(bytes: number, operation: string): void {
    if (bytes > this.#maxRequestBytes) {
      throw new MetadataInvalidArgumentError(`${operation} carries ${bytes} bytes, over the ${this.#maxRequestBytes} limit`, {
        bytes,
        limit: this.#maxRequestBytes,
      });
    }
  }

  /**
   * A kv write: checked now (`prepare` throws on a bad argument), then queued in the open group and answered
   * once the group is committed.
   */
  #write<T>(operation: string, prepare: () => (batch: WriteBatch) => T): Promise<{ result: T; revision: number }> {
    if (this.#closed) return Promise.reject(new MetadataClosedError(operation));
    let fn: (batch: WriteBatch) => T;
    try {
      fn = prepare();
    } catch (err) {
      return Promise.reject(wrap(err, operation));
    }
    return new Promise((resolve, reject) => {
      let group = this.#group;
      if (group === null || group.length >= MAX_GROUP_JOBS) {
        const g: QueuedJob[] = [];
        this.#group = group = g;
        this.#serial('commit', async () => {
          if (this.#group === g) this.#group = null;
          try {
            await this.#sync();
            await this.leases.expireDue();
            const outcomes = await this.#commit(g);
            outcomes.forEach((o, i) => ('error' in o ? g[i]!.reject(o.error) : g[i]!.resolve(o)));
          } catch (err) {
            for (const job of g) job.reject(wrap(err, job.operation));
          }
        }).catch((err: unknown) => {
          // Closed or failed before the group's turn came.
          for (const job of g) job.reject(err instanceof MetadataClosedError ? new MetadataClosedError(job.operation) : err);
        });
      }
      group.push({ operation, fn, resolve: resolve as QueuedJob['resolve'], reject });
    });
  }

  /**
   * One change outside a group (a lease's end): its `extra` ops (the lease znode's deletion) join its multi.
   */
  async #change<T>(operation: string, fn: (batch: WriteBatch) => T, extra: readonly MultiOp[] = []): Promise<{ result: T; revision: number }> {
    const [outcome] = await this.#commit([{ operation, fn }], extra);
    if ('error' in outcome!) throw outcome.error;
    return outcome as { result: T; revision: number };
  }

  /**
   * Commits `jobs` in order, each at its own revision, in as few multis as jute.maxbuffer allows; retried on
   * conflict (another store wrote first: caught up, evaluated again). A job refused by its own rule gets its
   * error and the others go on; a failure of ZooKeeper itself throws for all of them.
   */
  async #commit(jobs: readonly Job[], extra: readonly MultiOp[] = []): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array<Outcome>(jobs.length);
    let open = jobs.map((_, i) => i);
    let conflicts = 0;
    let behind = false;
    while (open.length > 0) {
      if (behind) await this.#sync();
      behind = false;
      const plan = this.#plan(jobs, open, extra);
      // Refusals stand once the state they were evaluated on is the committed one: after the multi, or now
      // when there is nothing to write (every compare failed, every delete found nothing).
      const settle = (): void => {
        for (const f of plan.failed) outcomes[f.job] = { error: f.error };
      };
      if (plan.first === null) {
        settle();
        for (const st of plan.staged) outcomes[st.job] = { result: st.result, revision: st.revision };
        open = plan.deferred;
        continue;
      }
      try {
        await this.#zk.multi(plan.ops);
      } catch (err) {
        if (err instanceof ZooKeeperMultiError) {
          if (plan.revOps.has(err.failedOp) && err.error instanceof ZooKeeperBadVersionError) {
            // Another writer won: catch up, evaluate again.
            if (++conflicts >= MAX_ATTEMPTS) throw new MetadataConflictError(jobs[open[0]!]!.operation, MAX_ATTEMPTS);
            behind = true;
            open = open.filter((j) => outcomes[j] === undefined);
            continue;
          }
          const lease = plan.leaseOps.get(err.failedOp);
          if (lease !== undefined) {
            // That job's lease is gone (expired, revoked): it fails alone; the others are evaluated again.
            this.leases.forget(lease.lease);
            outcomes[lease.job] = { error: new MetadataLeaseNotFoundError(String(lease.lease), jobs[lease.job]!.operation) };
            open = open.filter((j) => outcomes[j] === undefined);
            continue;
          }
          if (err.failedOp >= plan.extraFrom) throw err; // the caller's condition (a lease kept alive meanwhile)
          throw new MetadataStorageError(jobs[open[0]!]!.operation, err);
        }
        if (!(err instanceof ZooKeeperConnectionLossError)) throw err;
        // The answer was lost, not necessarily the write: the first history znode says whose multi was applied.
        const { revision, token } = plan.first;
        const written = await this.#zk.get(historyPath(revision)).catch(ignore(ZooKeeperNoNodeError));
        if (written === undefined || !decodeHistory(written.data, revision, historyPath(revision)).token.equals(token)) {
          behind = true;
          open = open.filter((j) => outcomes[j] === undefined);
          continue;
        }
      }
      settle();
      let last = this.#revision;
      for (const st of plan.staged) {
        if (st.revision > this.#revision) {
          this.#applyCommitted(st.revision, st.events);
          last = st.revision;
        }
        outcomes[st.job] = { result: st.result, revision: st.revision };
      }
      await this.#compactIfDue(last);
      open = plan.deferred;
    }
    return outcomes;
  }

  /**
   * Stages the open jobs on the replica, one after another (each sees the writes of those before it), and
   * builds the multi that writes them; the replica is left as it was. A job whose own function throws a
   * MetadataError, or whose ops alone would not fit into jute.maxbuffer, fails alone; the first job that does
   * not fit after the others is deferred with every job after it.
   */
  #plan(jobs: readonly Job[], open: readonly number[], extra: readonly MultiOp[]): Plan {
    const staged: StagedJob[] = [];
    const failed: { job: number; error: MetadataError }[] = [];
    const deferred: number[] = [];
    const ops: MultiOp[] = [];
    const revOps = new Set<number>();
    const leaseOps = new Map<number, { job: number; lease: number }>();
    let first: { revision: number; token: Buffer } | null = null;
    let revision = this.#revision;
    let bytes = 64 + multiBytes(extra);
    try {
      this.#replica.atomically(() => {
        for (const j of open) {
          if (deferred.length > 0) {
            deferred.push(j);
            continue;
          }
          const job = jobs[j]!;
          try {
            this.#replica.atomically(() => {
              const batch = new WriteBatch(this.#replica, revision + 1);
              const result = job.fn(batch);
              // A change with extra ops is written even without events (a lease ends whose keys went meanwhile).
              if (batch.events.length === 0 && extra.length === 0) {
                staged.push({ job: j, result, revision, events: batch.events });
                return;
              }
              const next = revision + 1;
              const token = randomBytes(TOKEN_BYTES);
              const jobOps = this.#changeOps(next, batch.events, token);
              const size = multiBytes(jobOps.ops);
              if (64 + size + multiBytes(extra) > this.#juteMaxBuffer) {
                throw new MetadataInvalidArgumentError(
                  `${job.operation} needs a ZooKeeper multi of about ${64 + size} bytes, over jute.maxbuffer (${this.#juteMaxBuffer})`,
                  { bytes: 64 + size, limit: this.#juteMaxBuffer },
                );
              }
              if (bytes + size > this.#juteMaxBuffer) throw DEFER;
              for (const [at, lease] of jobOps.leaseChecks) leaseOps.set(ops.length + at, { job: j, lease });
              revOps.add(ops.length);
              ops.push(...jobOps.ops);
              bytes += size;
              first ??= { revision: next, token };
              revision = next;
              staged.push({ job: j, result, revision: next, events: batch.events });
            });
          } catch (err) {
            if (err === DEFER) deferred.push(j);
            else if (err instanceof MetadataError) failed.push({ job: j, error: err });
            else throw err;
          }
        }
        throw ROLLBACK;
      });
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
    const extraFrom = ops.length;
    if (first !== null) ops.push(...extra);
    return { staged, failed, deferred, ops, revOps, leaseOps, extraFrom, first };
  }

  /**
   * The ops of one change at `revision`: the CAS on /rev, a check of each lease a put attaches, the key
   * znodes (created, set or deleted as each key's last event leaves it, from whether it existed before the
   * change), and the revision's history znode.
   */
  #changeOps(revision: number, events: readonly StoredEvent[], token: Buffer): { ops: MultiOp[]; leaseChecks: [number, number][] } {
    const ops: MultiOp[] = [{ type: 'set', path: P.rev, data: REV_DATA, version: revision - 2 }];
    const leaseChecks: [number, number][] = [];
    const checked = new Set<number>();
    for (const e of events) {
      if (e.type === 'put' && e.kv.lease !== 0 && !checked.has(e.kv.lease)) {
        checked.add(e.kv.lease);
        leaseChecks.push([ops.length, e.kv.lease]);
        ops.push({ type: 'check', path: this.leases.path(e.kv.lease), version: -1 });
      }
    }
    const byKey = new Map<string, { existed: boolean; last: StoredEvent }>();
    for (const e of events) {
      const seen = byKey.get(e.kv.key);
      byKey.set(e.kv.key, { existed: seen ? seen.existed : e.prev !== null, last: e });
    }
    for (const [key, { existed, last }] of byKey) {
      const path = kvPath(key);
      if (last.type === 'delete') {
        if (existed) ops.push({ type: 'delete', path });
      } else if (existed) ops.push({ type: 'set', path, data: encodeKv(last.kv) });
      else ops.push({ type: 'create', path, data: encodeKv(last.kv) });
    }
    ops.push({ type: 'create', path: historyPath(revision), data: encodeHistory(events, token) });
    return { ops, leaseChecks };
  }

  async #compactIfDue(revision: number): Promise<void> {
    const floor = revision - this.#historyRetention + 1;
    if (floor - this.#compactRevision < this.#compactionStep) return;
    await this.#compactTo(floor, false);
  }

  /** Moves /compact to `revision` (conditionally on its version), then deletes the history before it. */
  async #compactTo(revision: number, strict: boolean): Promise<void> {
    const { data, stat } = await this.#zk.get(P.compact);
    const from = Number(data.toString()) || 0;
    this.#compactRevision = from;
    if (revision <= from) {
      if (strict) throw new MetadataCompactedError(revision, from);
      return;
    }
    try {
      await this.#zk.set(P.compact, Buffer.from(String(revision)), stat.version);
    } catch (err) {
      if (!strict && err instanceof ZooKeeperBadVersionError) return; // another store compacts
      throw err;
    }
    this.#compactRevision = revision;
    const doomed: number[] = [];
    for (let r = Math.max(2, from); r < revision; r++) doomed.push(r);
    await inBatches(doomed, READ_BATCH, (r) => this.#zk.delete(historyPath(r)).catch(ignore(ZooKeeperNoNodeError)));
    if (revision > this.#replicaHistoryFrom) {
      this.#replica.compactEvents(revision);
      this.#replicaHistoryFrom = revision;
    }
  }

  /** Ends a lease that has keys: their deletion and the lease znode's, in one revision. */
  async #endLeaseWithKeys(id: number, version: number, operation: string): Promise<number> {
    const { revision } = await this.#change(
      operation,
      (batch) => {
        for (const key of this.#replica.keysWithLease(id)) batch.delete(key);
      },
      [{ type: 'delete', path: this.leases.path(id), version }],
    );
    return revision;
  }

  // ------------------------------------------------------------------------------------------ kv

  get(key: string): Promise<KeyValue | null> {
    return this.#enter('get', () => {
      checkKey(key);
      return maybeKeyValue(this.#replica.getKv(key));
    });
  }

  list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    return this.#enter('list', () => {
      checkPrefix(prefix);
      checkLimit(options.limit);
      if (options.startAfter !== undefined) checkKey(options.startAfter, 'startAfter');
      const limit = options.limit;
      const rows = this.#replica.rangeKvs(prefix, options.startAfter, limit === undefined ? undefined : limit + 1);
      const more = limit !== undefined && rows.length > limit;
      if (more) rows.length = limit;
      return { kvs: rows.map((kv) => toKeyValue(kv)), revision: this.#revision, more };
    });
  }

  async put(key: string, value: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    const { result: prev, revision } = await this.#write('put', () => {
      checkKey(key);
      checkValue(value);
      this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'put');
      const lease = options.lease === undefined ? 0 : this.#leaseArgument(options.lease, 'put');
      return (batch) => batch.put(key, value, lease);
    });
    return options.prevKv === true ? { revision, prevKv: maybeKeyValue(prev) } : { revision };
  }

  async compareAndSet(key: string, expect: Expectation, value: Uint8Array, options: PutOptions = {}): Promise<CompareAndSetResult> {
    const { result, revision } = await this.#write('compareAndSet', () => {
      checkKey(key);
      checkExpectation(expect);
      checkValue(value);
      this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'compareAndSet');
      const lease = options.lease === undefined ? 0 : this.#leaseArgument(options.lease, 'compareAndSet');
      return (batch) => {
        const current = batch.get(key);
        if (!meets(expect, current)) return { succeeded: false as const, current: maybeKeyValue(current) };
        return { succeeded: true as const, prev: batch.put(key, value, lease) };
      };
    });
    if (!result.succeeded) return { succeeded: false, revision, current: result.current };
    return options.prevKv === true ? { succeeded: true, revision, prevKv: maybeKeyValue(result.prev) } : { succeeded: true, revision };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    const expect = options.expect;
    const { result, revision } = await this.#write('delete', () => {
      checkKey(key);
      if (expect !== undefined) checkExpectation(expect);
      return (batch) => {
        if (expect !== undefined) {
          const current = batch.get(key);
          if (!meets(expect, current)) return { succeeded: false as const, current: maybeKeyValue(current) };
        }
        return { succeeded: true as const, prev: batch.delete(key) };
      };
    });
    if (!result.succeeded) return { succeeded: false, deleted: 0, revision, current: result.current };
    const deleted = result.prev === null ? 0 : 1;
    return options.prevKv === true ? { succeeded: true, deleted, revision, prevKv: maybeKeyValue(result.prev) } : { succeeded: true, deleted, revision };
  }

  async deletePrefix(prefix: string): Promise<DeletePrefixResult> {
    const { result: deleted, revision } = await this.#write('deletePrefix', () => {
      checkKey(prefix, 'prefix');
      return (batch) => batch.deletePrefix(prefix);
    });
    return { deleted, revision };
  }

  /** A lease id argument: malformed is INVALID_ARGUMENT; existence is checked by the multi (ZooKeeper). */
  #leaseArgument(raw: string, operation: string): number {
    const id = parseLeaseId(raw);
    if (id < 1) throw new MetadataLeaseNotFoundError(raw, operation);
    return id;
  }

  // ----------------------------------------------------------------------------------------- txn

  async txn(request: TxnRequest): Promise<TxnResult> {
    const { result, revision } = await this.#write('txn', () => {
      this.#checkRequestBytes(checkTxnRequest(request, this.#maxTxnOps), 'txn');
      return (batch) => {
        const succeeded = (request.compare ?? []).every((c) => compareHolds(c, batch.get(c.key)));
        const ops = (succeeded ? request.success : request.failure) ?? [];
        for (const op of ops) if (op.type === 'put' && op.lease !== undefined) this.#leaseArgument(op.lease, 'txn');
        const results = ops.map((op): TxnOpResult => {
          switch (op.type) {
            case 'get':
              return { type: 'get', kv: maybeKeyValue(batch.get(op.key)) };
            case 'list': {
              const rows = this.#replica.rangeKvs(op.prefix, undefined, op.limit === undefined ? undefined : op.limit + 1);
              const more = op.limit !== undefined && rows.length > op.limit;
              if (more) rows.length = op.limit!;
              return { type: 'list', kvs: rows.map((kv) => toKeyValue(kv)), more };
            }
            case 'put': {
              const prev = batch.put(op.key, op.value, op.lease === undefined ? 0 : parseLeaseId(op.lease));
              return op.prevKv === true ? { type: 'put', prevKv: maybeKeyValue(prev) } : { type: 'put' };
            }
            case 'delete': {
              const prev = batch.delete(op.key);
              const deleted = prev === null ? 0 : 1;
              return op.prevKv === true ? { type: 'delete', deleted, prevKv: maybeKeyValue(prev) } : { type: 'delete', deleted };
            }
            case 'deletePrefix':
              return { type: 'deletePrefix', deleted: batch.deletePrefix(op.prefix) };
          }
        });
        return { succeeded, results };
      };
    });
    return { succeeded: result.succeeded, revision, results: result.results };
  }

  // --------------------------------------------------------------------------------------- watch

  watch(target: WatchTarget, listener: WatchListener, options: WatchOptions = {}): Promise<Watch> {
    return this.#enter('watch', async () => {
      if (typeof target !== 'object' || target === null || !('key' in target || 'prefix' in target)) {
        throw new MetadataInvalidArgumentError('watch target must be { key } or { prefix }');
      }
      if ('key' in target) checkKey(target.key);
      else checkPrefix(target.prefix);
      if (typeof listener?.onEvents !== 'function') throw new MetadataInvalidArgumentError('watch listener needs an onEvents function');
      const requested = options.startRevision ?? 0;
      if (!isNonNegativeInteger(requested)) throw new MetadataInvalidArgumentError('startRevision must be a non-negative integer', { requested });
      const start = requested === 0 ? this.#revision + 1 : requested;
      if (start <= this.#revision) this.#compactRevision = await this.#readCompactRevision();
      if (start < this.#compactRevision) throw new MetadataCompactedError(start, this.#compactRevision);
      const prevKv = options.prevKv === true;
      const watch = new LocalWatch(this.#nextWatchId++, target, listener, prevKv, start, (w) => this.#watches.delete(w));
      if (start < this.#replicaHistoryFrom && start <= this.#revision) {
        const upTo = Math.min(this.#replicaHistoryFrom - 1, this.#revision);
        const history = await readHistory(this.#zk, start, upTo, target, prevKv, () => this.#readCompactRevision());
        for (const [revision, events] of history) watch.offer(revision, events);
      }
      if (start <= this.#revision) {
        const events = this.#replica.readEvents(Math.max(start, this.#replicaHistoryFrom), target);
        for (let i = 0; i < events.length; ) {
          let j = i;
          while (j < events.length && events[j]!.revision === events[i]!.revision) j++;
          watch.offer(events[i]!.revision, events.slice(i, j));
          i = j;
        }
      }
      this.#watches.add(watch);
      return watch;
    });
  }

  // --------------------------------------------------------------------------------------- lease

  grantLease(ttlSeconds: number): Promise<LeaseGrant> {
    return this.#enter('grantLease', () => this.leases.grant(ttlSeconds));
  }

  keepAliveLease(id: LeaseId): Promise<LeaseGrant> {
    return this.#enter('keepAliveLease', () => this.leases.keepAlive(id));
  }

  revokeLease(id: LeaseId): Promise<{ readonly revision: number }> {
    return this.#enter('revokeLease', async () => ({ revision: (await this.leases.revoke(id)) ?? this.#revision }));
  }

  leaseTimeToLive(id: LeaseId): Promise<LeaseTimeToLive | null> {
    return this.#enter('leaseTimeToLive', () => this.leases.timeToLive(id));
  }

  // -------------------------------------------------------------------------------------- others

  revision(): Promise<number> {
    return this.#enter('revision', () => this.#revision);
  }

  compact(revision: number): Promise<void> {
    return this.#enter('compact', async () => {
      if (!isNonNegativeInteger(revision)) throw new MetadataInvalidArgumentError('compact revision must be a non-negative integer', { revision });
      const current = await this.#readCompactRevision();
      if (revision <= current) throw new MetadataCompactedError(revision, current);
      if (revision > this.#revision) throw new MetadataFutureRevisionError(revision, this.#revision);
      await this.#compactTo(revision, true);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#tail;
    this.leases.stop();
    for (const w of [...this.#watches]) w.endAfterQueued(new MetadataClosedError('watch'));
    await this.#zk.close();
    this.#replica.close();
  }
}
