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

function wrap(err: unknown, operation: string): MetadataError {
  return err instanceof MetadataError ? err : new MetadataStorageError(operation, err);
}

interface Staged<T> {
  readonly result: T;
  readonly events: StoredEvent[];
  /** Key znodes that exist before the change (set, not create). */
  readonly existed: ReadonlySet<string>;
}

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
      schedule: (operation, fn) => this.#serial(operation, fn),
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
    for (let i = 0; i < wanted.length; i++) {
      const revision = wanted[i]!;
      const { events } = decodeHistory(records[i]!.data, revision, historyPath(revision));
      this.#applyCommitted(revision, events.map((e) => ({ ...e, prev: this.#replica.getKv(e.kv.key) ?? null })));
    }
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
          this.#armRevWatch();
          this.#serial('follow', async () => {
            await this.#sync();
            await this.leases.expireDue();
          }).catch((err: unknown) => this.#options.onBackgroundError?.(wrap(err, 'follow')));
        }),
      )
      .catch((err: unknown) => {
        this.#revWatchArmed = false;
        this.#options.onBackgroundError?.(wrap(err, 'follow'));
      });
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
        this.#armRevWatch();
        // What others wrote while this instance had no session: its watches get it now, not at the next change.
        this.#serial('follow', () => this.#sync()).catch((err: unknown) => this.#options.onBackgroundError?.(wrap(err, 'follow')));
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

  /** Evaluates `fn` on the replica at the next revision without keeping its writes. */
  #stage<T>(fn: (batch: WriteBatch) => T): Staged<T> {
    let staged: Staged<T> | undefined;
    try {
      this.#replica.atomically(() => {
        const batch = new WriteBatch(this.#replica, this.#revision + 1);
        const result = fn(batch);
        const existed = new Set<string>();
        for (const e of batch.events) if (e.prev !== null) existed.add(e.kv.key);
        staged = { result, events: batch.events, existed };
        throw ROLLBACK;
      });
    } catch (err) {
      if (err !== ROLLBACK) throw err;
    }
    return staged!;
  }

  /**
   * One change: staged on the replica, written as one multi that checks /rev, retried on conflict.
   * `extra` ops (a lease's deletion) join the multi; `leaseFailure` maps a failing lease op to its error.
   */
  async #change<T>(
    operation: string,
    fn: (batch: WriteBatch) => T,
    extra: readonly MultiOp[] = [],
  ): Promise<{ result: T; revision: number }> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      if (attempt > 0) await this.#sync();
      const staged = this.#stage(fn);
      if (staged.events.length === 0 && extra.length === 0) return { result: staged.result, revision: this.#revision };
      const revision = this.#revision + 1;
      const token = randomBytes(TOKEN_BYTES);
      const ops: MultiOp[] = [{ type: 'set', path: P.rev, data: REV_DATA, version: revision - 2 }];
      const leaseOps = new Map<number, number>();
      for (const e of staged.events) {
        if (e.type === 'put' && e.kv.lease !== 0 && ![...leaseOps.values()].includes(e.kv.lease)) {
          leaseOps.set(ops.length, e.kv.lease);
          ops.push({ type: 'check', path: this.leases.path(e.kv.lease), version: -1 });
        }
      }
      const last = new Map<string, StoredEvent>();
      for (const e of staged.events) last.set(e.kv.key, e);
      for (const [key, e] of last) {
        const path = kvPath(key);
        if (e.type === 'delete') ops.push({ type: 'delete', path });
        else if (staged.existed.has(key)) ops.push({ type: 'set', path, data: encodeKv(e.kv) });
        else ops.push({ type: 'create', path, data: encodeKv(e.kv) });
      }
      const history = encodeHistory(staged.events, token);
      ops.push({ type: 'create', path: historyPath(revision), data: history });
      const extraFrom = ops.length;
      ops.push(...extra);
      this.#checkMultiSize(ops, operation);
      try {
        await this.#zk.multi(ops);
      } catch (err) {
        if (err instanceof ZooKeeperMultiError) {
          if (err.failedOp === 0 && err.error instanceof ZooKeeperBadVersionError) continue; // another writer won
          const lease = leaseOps.get(err.failedOp);
          if (lease !== undefined) {
            this.leases.forget(lease);
            throw new MetadataLeaseNotFoundError(String(lease), operation);
          }
          if (err.failedOp >= extraFrom) throw err; // the caller's condition (a lease kept alive meanwhile)
          throw new MetadataStorageError(operation, err);
        }
        if (!(err instanceof ZooKeeperConnectionLossError)) throw err;
        // The answer was lost, not necessarily the write: the history znode says whose multi was applied.
        const written = await this.#zk.get(historyPath(revision)).catch(ignore(ZooKeeperNoNodeError));
        if (written === undefined) continue;
        if (!decodeHistory(written.data, revision, historyPath(revision)).token.equals(token)) continue;
      }
      this.#applyCommitted(revision, staged.events);
      await this.#compactIfDue(revision);
      return { result: staged.result, revision };
    }
    throw new MetadataConflictError(operation, MAX_ATTEMPTS);
  }

  #checkMultiSize(ops: readonly MultiOp[], operation: string): void {
    let bytes = 64;
    for (const op of ops) bytes += 32 + Buffer.byteLength(op.path) + ('data' in op && op.data ? op.data.byteLength : 0);
    if (bytes > this.#juteMaxBuffer) {
      throw new MetadataInvalidArgumentError(
        `${operation} needs a ZooKeeper multi of about ${bytes} bytes, over jute.maxbuffer (${this.#juteMaxBuffer})`,
        { bytes, limit: this.#juteMaxBuffer },
      );
    }
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

  put(key: string, value: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    return this.#enter('put', async () => {
      checkKey(key);
      checkValue(value);
      this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'put');
      const lease = options.lease === undefined ? 0 : this.#leaseArgument(options.lease, 'put');
      const { result: prev, revision } = await this.#change('put', (batch) => batch.put(key, value, lease));
      return options.prevKv === true ? { revision, prevKv: maybeKeyValue(prev) } : { revision };
    });
  }

  compareAndSet(key: string, expect: Expectation, value: Uint8Array, options: PutOptions = {}): Promise<CompareAndSetResult> {
    return this.#enter('compareAndSet', async () => {
      checkKey(key);
      checkExpectation(expect);
      checkValue(value);
      this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'compareAndSet');
      const lease = options.lease === undefined ? 0 : this.#leaseArgument(options.lease, 'compareAndSet');
      const { result, revision } = await this.#change('compareAndSet', (batch) => {
        const current = batch.get(key);
        if (!meets(expect, current)) return { succeeded: false as const, current: maybeKeyValue(current) };
        return { succeeded: true as const, prev: batch.put(key, value, lease) };
      });
      if (!result.succeeded) return { succeeded: false, revision, current: result.current };
      return options.prevKv === true ? { succeeded: true, revision, prevKv: maybeKeyValue(result.prev) } : { succeeded: true, revision };
    });
  }

  delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    return this.#enter('delete', async () => {
      checkKey(key);
      const expect = options.expect;
      if (expect !== undefined) checkExpectation(expect);
      const { result, revision } = await this.#change('delete', (batch) => {
        if (expect !== undefined) {
          const current = batch.get(key);
          if (!meets(expect, current)) return { succeeded: false as const, current: maybeKeyValue(current) };
        }
        return { succeeded: true as const, prev: batch.delete(key) };
      });
      if (!result.succeeded) return { succeeded: false, deleted: 0, revision, current: result.current };
      const deleted = result.prev === null ? 0 : 1;
      return options.prevKv === true
        ? { succeeded: true, deleted, revision, prevKv: maybeKeyValue(result.prev) }
        : { succeeded: true, deleted, revision };
    });
  }

  deletePrefix(prefix: string): Promise<DeletePrefixResult> {
    return this.#enter('deletePrefix', async () => {
      checkKey(prefix, 'prefix');
      const { result: deleted, revision } = await this.#change('deletePrefix', (batch) => batch.deletePrefix(prefix));
      return { deleted, revision };
    });
  }

  /** A lease id argument: malformed is INVALID_ARGUMENT; existence is checked by the multi (ZooKeeper). */
  #leaseArgument(raw: string, operation: string): number {
    const id = parseLeaseId(raw);
    if (id < 1) throw new MetadataLeaseNotFoundError(raw, operation);
    return id;
  }

  // ----------------------------------------------------------------------------------------- txn

  txn(request: TxnRequest): Promise<TxnResult> {
    return this.#enter('txn', async () => {
      this.#checkRequestBytes(checkTxnRequest(request, this.#maxTxnOps), 'txn');
      const { result, revision } = await this.#change('txn', (batch) => {
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
      });
      return { succeeded: result.succeeded, revision, results: result.results };
    });
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
