/**
 * The embedded MetadataStore: etcd's data model (revisions, per-key versions, txn, leases, watches) over a
 * synchronous StorageBackend (SQLite on disk by default, memory for tests). Operations are applied one at a
 * time, in call order, with no locking: kv writes are queued and group-committed at the end of the event
 * loop's turn (one backend commit, one fsync, for all of them), every other operation first commits what is
 * queued and then runs on the caller's turn.
 *
 *   put / delete / txn (queued until the turn ends)      lease end, lease grant, compact, any read
 *                     │                                              │ (after committing the queue)
 *          ┌──────────▼──────────────────────────────┐               │
 *          │ backend.atomically (the group's commit)  │ ◄────────────┘ (a group of its own)
 *          │  savepoint: WriteBatch @ rev r+1         │── kv rows + event rows + meta.revision of each
 *          │  savepoint: WriteBatch @ rev r+2  …      │   change, durable together or not at all
 *          └──────────┬──────────────────────────────┘
 *                     │ after commit: revision = r+n, each change answered
 *          ┌──────────▼───────────┐
 *          │ watches              │── each matching watch queues the revision's events and delivers them
 *          └──────────────────────┘   on a microtask, in revision order
 *
 * Leases follow etcd: the TTL is granted by the store, deadlines live in memory, a keep-alive restarts the
 * TTL without a write, and when the store opens every persisted lease gets a full TTL from then (etcd's
 * lessor does the same when a new leader takes over), so a lease never ends earlier than its holder was
 * promised. An ended lease deletes its keys in one revision.
 */

import type { StorageBackend, StoredEvent } from './backend.js';
import { systemClock, type Clock, type ClockTimer } from './clock.js';
import {
  MetadataClosedError,
  MetadataCompactedError,
  MetadataError,
  MetadataFutureRevisionError,
  MetadataInvalidArgumentError,
  MetadataLeaseNotFoundError,
  MetadataStorageError,
} from './errors.js';
import { checkKey, checkPrefix } from './key-order.js';
import { LocalWatch } from './local-watch.js';
import {
  checkExpectation,
  checkLimit,
  checkTxnRequest,
  checkValue,
  isNonNegativeInteger,
  parseLeaseId,
} from './request-checks.js';
import { compareHolds, maybeKeyValue, meets, toKeyValue } from './stored-rows.js';
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
} from './types.js';
import { WriteBatch } from './write-batch.js';

export interface LocalMetadataStoreOptions {
  /** Time source for lease deadlines and timers. Default: wall clock and Node timers. */
  readonly clock?: Clock;
  /**
   * Watch history to keep, in revisions: a watch can start up to this many revisions back. Older events
   * are compacted in batches of a tenth of this as writes go on. Default 10 000.
   */
  readonly historyRetention?: number;
  /** Most operations (and, separately, compares) in one txn branch, like etcd's --max-txn-ops. Default 128. */
  readonly maxTxnOps?: number;
  /** Most key and value bytes in one request, like etcd's --max-request-bytes. Default 1.5 MiB. */
  readonly maxRequestBytes?: number;
  /** Failures of background work (a lease that could not be expired; it is retried every second). */
  readonly onBackgroundError?: (error: MetadataError) => void;
}

export const DEFAULT_HISTORY_RETENTION = 10_000;
export const DEFAULT_MAX_TXN_OPS = 128;
export const DEFAULT_MAX_REQUEST_BYTES = 1_572_864;
/** etcd's MaxLeaseTTL. */
export const MAX_LEASE_TTL_SECONDS = 9_000_000_000;
const LEASE_RETRY_MS = 1_000;

interface LiveLease {
  readonly id: number;
  readonly ttl: number;
  deadline: number;
  timer: ClockTimer | null;
}

/** The leases whose deadline is at or before `now`, in the order they fell due (ties by id): the order they expire in. */
export function overdueLeases<L extends { readonly id: number; readonly deadline: number }>(leases: Iterable<L>, now: number): L[] {
  return [...leases].filter((l) => l.deadline <= now).sort((a, b) => a.deadline - b.deadline || a.id - b.id);
}

function wrap(err: unknown, operation: string): MetadataError {
  return err instanceof MetadataError ? err : new MetadataStorageError(operation, err);
}

/** A change staged by `#apply`: its result, its revision (the current one when it wrote nothing), its events. */
interface AppliedChange<T> {
  readonly result: T;
  readonly revision: number;
  readonly events: StoredEvent[];
}

/** A kv write waiting for the next group commit. */
interface QueuedChange {
  readonly operation: string;
  readonly fn: (batch: WriteBatch) => unknown;
  readonly resolve: (applied: { result: unknown; revision: number }) => void;
  readonly reject: (error: unknown) => void;
}

export class LocalMetadataStore implements MetadataStore {
  readonly #backend: StorageBackend;
  readonly #clock: Clock;
  readonly #historyRetention: number;
  readonly #compactionStep: number;
  readonly #maxTxnOps: number;
  readonly #maxRequestBytes: number;
  readonly #onBackgroundError: ((error: MetadataError) => void) | undefined;
  readonly #leases = new Map<number, LiveLease>();
  readonly #watches = new Set<LocalWatch>();
  /**
   * Single-key watches by key, and the prefix watches: a change is offered to the watches of the keys it
   * writes and to the prefix watches only, not to every watch (a partition log watches its chain head, so a
   * broker with 10,000 open partitions has 10,000 watches, and a scan of all of them per change made a
   * shutdown quadratic).
   */
  readonly #keyWatches = new Map<string, Set<LocalWatch>>();
  readonly #prefixWatches = new Set<LocalWatch>();
  #revision: number;
  #compactRevision: number;
  #nextLeaseId: number;
  #nextWatchId = 1;
  #closed = false;
  /** Writes waiting for the next group commit, in call order (`#enqueue`). */
  #queued: QueuedChange[] = [];
  #flushTimer: NodeJS.Immediate | null = null;

  /** Start a store over an opened backend; the store owns it from here and closes it on close(). */
  static open(backend: StorageBackend, options: LocalMetadataStoreOptions = {}): LocalMetadataStore {
    try {
      return new LocalMetadataStore(backend, options);
    } catch (err) {
      backend.close();
      throw wrap(err, 'open');
    }
  }

  private constructor(backend: StorageBackend, options: LocalMetadataStoreOptions) {
    const retention = options.historyRetention ?? DEFAULT_HISTORY_RETENTION;
    if (!isNonNegativeInteger(retention) || retention < 1) {
      throw new MetadataInvalidArgumentError('historyRetention must be a positive integer', { retention });
    }
    this.#backend = backend;
    this.#clock = options.clock ?? systemClock;
    this.#historyRetention = retention;
    this.#compactionStep = Math.max(1, Math.ceil(retention / 10));
    this.#maxTxnOps = options.maxTxnOps ?? DEFAULT_MAX_TXN_OPS;
    this.#maxRequestBytes = options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES;
    this.#onBackgroundError = options.onBackgroundError;
    const state = backend.load();
    this.#revision = state.revision;
    this.#compactRevision = state.compactRevision;
    this.#nextLeaseId = state.nextLeaseId;
    const now = this.#clock.now();
    for (const { id, ttl } of state.leases) {
      const lease: LiveLease = { id, ttl, deadline: now + ttl * 1000, timer: null };
      this.#leases.set(id, lease);
      this.#arm(lease);
    }
  }

  /** Where the data lives (file path, or the memory volume's name). */
  get location(): string {
    return this.#backend.location;
  }

  // ------------------------------------------------------------------------------------- plumbing

  /** Every operation starts here; all but the queued writes first commit what is queued (`#flush`). */
  #enter(operation: string, queued = false): void {
    if (this.#closed) throw new MetadataClosedError(operation);
    if (!queued) this.#flush();
    this.#expireOverdue();
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
   * Apply `fn`'s writes atomically at the next revision, now, in a commit of its own (after committing what
   * is queued, so call order holds); dispatch them to watches once durable.
   */
  #mutate<T>(operation: string, fn: (batch: WriteBatch) => T): { result: T; revision: number } {
    this.#flush();
    let change: AppliedChange<T>;
    try {
      change = this.#backend.atomically(() => this.#apply(fn));
    } catch (err) {
      throw wrap(err, operation);
    }
    this.#dispatch(change.revision, change.events);
    return { result: change.result, revision: change.revision };
  }

  /**
   * Stages `fn`'s writes at the next revision inside the caller's `backend.atomically`, and moves the
   * revision (and the history floor) on; the caller restores them if the commit fails.
   */
  #apply<T>(fn: (batch: WriteBatch) => T): AppliedChange<T> {
    const revision = this.#revision + 1;
    const batch = new WriteBatch(this.#backend, revision);
    const result = fn(batch);
    if (batch.events.length === 0) return { result, revision: this.#revision, events: batch.events };
    this.#backend.appendEvents(batch.events);
    this.#backend.setMeta('revision', revision);
    const floor = revision - this.#historyRetention + 1;
    if (floor - this.#compactRevision >= this.#compactionStep) {
      this.#backend.compactEvents(floor);
      this.#backend.setMeta('compactRevision', floor);
      this.#compactRevision = floor;
    }
    this.#revision = revision;
    return { result, revision, events: batch.events };
  }

  /**
   * Group commit of the kv writes (put, compareAndSet, delete, deletePrefix, txn): a write is queued and
   * answered once the next group commits. Everything queued in one turn of the event loop (say the chain
   * updates of ten thousand partition logs sealing their ledgers at shutdown) is applied in call order, each
   * change at its own revision in a savepoint of its own, and made durable by one backend commit (one WAL
   * fsync) instead of one each: etcd's backend batches its commits the same way (batch interval and limit),
   * and so does the ledger store's commit pipeline. Each change is still acknowledged only once durable.
   */
  #enqueue<T>(operation: string, fn: (batch: WriteBatch) => T): Promise<{ result: T; revision: number }> {
    return new Promise((resolve, reject) => {
      this.#queued.push({ operation, fn, resolve: resolve as QueuedChange['resolve'], reject });
      this.#flushTimer ??= setImmediate(() => this.#flush());
    });
  }

  /**
   * Commits what is queued, as one group. Runs before any other operation (reads included), so every call
   * sees the writes called before it, committed. A change whose own function fails (a lease gone) is undone
   * alone, by its savepoint; a failing commit fails the whole group, and nothing of it is applied.
   */
  #flush(): void {
    if (this.#flushTimer !== null) {
      clearImmediate(this.#flushTimer);
      this.#flushTimer = null;
    }
    const jobs = this.#queued;
    if (jobs.length === 0) return;
    this.#queued = [];
    const revision = this.#revision;
    const compactRevision = this.#compactRevision;
    const outcomes: Array<AppliedChange<unknown> | MetadataError> = [];
    try {
      this.#backend.atomically(() => {
        for (const job of jobs) {
          try {
            outcomes.push(this.#backend.atomically(() => this.#apply(job.fn)));
          } catch (err) {
            // A storage failure (not a rule of the data model) fails the group: the engine may have ended the
            // transaction already.
            if (!(err instanceof MetadataError)) throw err;
            outcomes.push(err);
          }
        }
      });
    } catch (err) {
      this.#revision = revision;
      this.#compactRevision = compactRevision;
      for (const job of jobs) job.reject(wrap(err, job.operation));
      return;
    }
    for (let i = 0; i < jobs.length; i++) {
      const outcome = outcomes[i]!;
      if (outcome instanceof MetadataError) {
        jobs[i]!.reject(outcome);
        continue;
      }
      this.#dispatch(outcome.revision, outcome.events);
      jobs[i]!.resolve({ result: outcome.result, revision: outcome.revision });
    }
  }

  /** Offers one committed revision's events to the watches they match. */
  #dispatch(revision: number, events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    for (const w of this.#prefixWatches) w.offer(revision, events);
    if (this.#keyWatches.size === 0) return;
    let seen: Set<string> | null = null;
    for (const e of events) {
      const key = e.kv.key;
      const watching = this.#keyWatches.get(key);
      if (watching === undefined) continue;
      if (events.length > 1) {
        seen ??= new Set();
        if (seen.has(key)) continue;
        seen.add(key);
      }
      for (const w of watching) w.offer(revision, events);
    }
  }

  #register(w: LocalWatch): void {
    this.#watches.add(w);
    if (w.key === undefined) {
      this.#prefixWatches.add(w);
      return;
    }
    let set = this.#keyWatches.get(w.key);
    if (set === undefined) this.#keyWatches.set(w.key, (set = new Set()));
    set.add(w);
  }

  #unregister(w: LocalWatch): void {
    this.#watches.delete(w);
    if (w.key === undefined) {
      this.#prefixWatches.delete(w);
      return;
    }
    const set = this.#keyWatches.get(w.key);
    if (set === undefined) return;
    set.delete(w);
    if (set.size === 0) this.#keyWatches.delete(w.key);
  }

  #read<T>(operation: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw wrap(err, operation);
    }
  }

  #requireLease(id: number, raw: string, operation: string): void {
    if (!this.#leases.has(id)) throw new MetadataLeaseNotFoundError(raw, operation);
  }

  // ------------------------------------------------------------------------------------------ kv

  async get(key: string): Promise<KeyValue | null> {
    this.#enter('get');
    checkKey(key);
    return this.#read('get', () => maybeKeyValue(this.#backend.getKv(key)));
  }

  async list(prefix: string, options: ListOptions = {}): Promise<ListResult> {
    this.#enter('list');
    checkPrefix(prefix);
    checkLimit(options.limit);
    if (options.startAfter !== undefined) checkKey(options.startAfter, 'startAfter');
    const limit = options.limit;
    return this.#read('list', () => {
      const rows = this.#backend.rangeKvs(prefix, options.startAfter, limit === undefined ? undefined : limit + 1);
      const more = limit !== undefined && rows.length > limit;
      if (more) rows.length = limit;
      return { kvs: rows.map((kv) => toKeyValue(kv)), revision: this.#revision, more };
    });
  }

  async put(key: string, value: Uint8Array, options: PutOptions = {}): Promise<PutResult> {
    this.#enter('put', true);
    checkKey(key);
    checkValue(value);
    this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'put');
    const lease = options.lease === undefined ? 0 : parseLeaseId(options.lease);
    const { result: prev, revision } = await this.#enqueue('put', (batch) => {
      if (lease !== 0) this.#requireLease(lease, options.lease!, 'put');
      return batch.put(key, value, lease);
    });
    return options.prevKv === true ? { revision, prevKv: maybeKeyValue(prev) } : { revision };
  }

  async compareAndSet(
    key: string,
    expect: Expectation,
    value: Uint8Array,
    options: PutOptions = {},
  ): Promise<CompareAndSetResult> {
    this.#enter('compareAndSet', true);
    checkKey(key);
    checkExpectation(expect);
    checkValue(value);
    this.#checkRequestBytes(Buffer.byteLength(key) + value.byteLength, 'compareAndSet');
    const lease = options.lease === undefined ? 0 : parseLeaseId(options.lease);
    const { result, revision } = await this.#enqueue('compareAndSet', (batch) => {
      const current = batch.get(key);
      if (!meets(expect, current)) return { succeeded: false as const, current: maybeKeyValue(current) };
      if (lease !== 0) this.#requireLease(lease, options.lease!, 'compareAndSet');
      return { succeeded: true as const, prev: batch.put(key, value, lease) };
    });
    if (!result.succeeded) return { succeeded: false, revision, current: result.current };
    return options.prevKv === true
      ? { succeeded: true, revision, prevKv: maybeKeyValue(result.prev) }
      : { succeeded: true, revision };
  }

  async delete(key: string, options: DeleteOptions = {}): Promise<DeleteResult> {
    this.#enter('delete', true);
    checkKey(key);
    const expect = options.expect;
    if (expect !== undefined) checkExpectation(expect);
    const { result, revision } = await this.#enqueue('delete', (batch) => {
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
  }

  async deletePrefix(prefix: string): Promise<DeletePrefixResult> {
    this.#enter('deletePrefix', true);
    checkKey(prefix, 'prefix');
    const { result: deleted, revision } = await this.#enqueue('deletePrefix', (batch) => batch.deletePrefix(prefix));
    return { deleted, revision };
  }

  // ----------------------------------------------------------------------------------------- txn

  async txn(request: TxnRequest): Promise<TxnResult> {
    this.#enter('txn', true);
    this.#checkRequestBytes(checkTxnRequest(request, this.#maxTxnOps), 'txn');
    const { result, revision } = await this.#enqueue('txn', (batch) => {
      const succeeded = (request.compare ?? []).every((c) => compareHolds(c, batch.get(c.key)));
      const ops = (succeeded ? request.success : request.failure) ?? [];
      // etcd checks the leases of the branch it runs before applying any of it.
      for (const op of ops) {
        if (op.type === 'put' && op.lease !== undefined) this.#requireLease(parseLeaseId(op.lease), op.lease, 'txn');
      }
      const results: TxnOpResult[] = ops.map((op): TxnOpResult => {
        switch (op.type) {
          case 'get':
            return { type: 'get', kv: maybeKeyValue(batch.get(op.key)) };
          case 'list': {
            const limit = op.limit;
            const rows = this.#backend.rangeKvs(op.prefix, undefined, limit === undefined ? undefined : limit + 1);
            const more = limit !== undefined && rows.length > limit;
            if (more) rows.length = limit;
            return { type: 'list', kvs: rows.map((kv) => toKeyValue(kv)), more };
          }
          case 'put': {
            const prev = batch.put(op.key, op.value, op.lease === undefined ? 0 : parseLeaseId(op.lease));
            return op.prevKv === true ? { type: 'put', prevKv: maybeKeyValue(prev) } : { type: 'put' };
          }
          case 'delete': {
            const prev = batch.delete(op.key);
            const deleted = prev === null ? 0 : 1;
            return op.prevKv === true
              ? { type: 'delete', deleted, prevKv: maybeKeyValue(prev) }
              : { type: 'delete', deleted };
          }
          case 'deletePrefix':
            return { type: 'deletePrefix', deleted: batch.deletePrefix(op.prefix) };
        }
      });
      return { succeeded, results };
    });
    return { succeeded: result.succeeded, revision, results: result.results };
  }

  // --------------------------------------------------------------------------------------- watch

  async watch(target: WatchTarget, listener: WatchListener, options: WatchOptions = {}): Promise<Watch> {
    this.#enter('watch');
    if (typeof target !== 'object' || target === null) {
      throw new MetadataInvalidArgumentError('watch target must be { key } or { prefix }');
    }
    if ('key' in target) checkKey(target.key);
    else if ('prefix' in target) checkPrefix(target.prefix);
    else throw new MetadataInvalidArgumentError('watch target must be { key } or { prefix }');
    if (typeof listener?.onEvents !== 'function') {
      throw new MetadataInvalidArgumentError('watch listener needs an onEvents function');
    }
    const requested = options.startRevision ?? 0;
    if (!isNonNegativeInteger(requested)) {
      throw new MetadataInvalidArgumentError('startRevision must be a non-negative integer', { requested });
    }
    const start = requested === 0 ? this.#revision + 1 : requested;
    if (start < this.#compactRevision) throw new MetadataCompactedError(start, this.#compactRevision);
    const watch = new LocalWatch(this.#nextWatchId++, target, listener, options.prevKv === true, start, (w) =>
      this.#unregister(w),
    );
    if (start <= this.#revision) {
      // Replay and registration happen in this same turn: no commit can fall between them. The history is
      // read for the watch's own key or prefix (etcd's watchable store syncs an unsynced watcher from its
      // key range of the backend), so a watch costs its key's changes, not every change since `start`.
      const history = this.#read('watch', () => this.#backend.readEvents(start, target));
      let i = 0;
      while (i < history.length) {
        const revision = history[i]!.revision;
        let j = i;
        while (j < history.length && history[j]!.revision === revision) j++;
        watch.offer(revision, history.slice(i, j));
        i = j;
      }
    }
    this.#register(watch);
    return watch;
  }

  // --------------------------------------------------------------------------------------- lease

  #arm(lease: LiveLease): void {
    lease.timer?.cancel();
    lease.timer = this.#clock.setTimer(lease.deadline - this.#clock.now(), () => this.#onLeaseTimer(lease));
  }

  #onLeaseTimer(lease: LiveLease): void {
    lease.timer = null;
    if (this.#closed || this.#leases.get(lease.id) !== lease) return;
    if (this.#clock.now() < lease.deadline) {
      this.#arm(lease);
      return;
    }
    try {
      this.#endLease(lease, 'expireLease');
    } catch (err) {
      this.#onBackgroundError?.(wrap(err, 'expireLease'));
      lease.timer = this.#clock.setTimer(LEASE_RETRY_MS, () => this.#onLeaseTimer(lease));
    }
  }

  #expireOverdue(): void {
    if (this.#leases.size === 0) return;
    const now = this.#clock.now();
    for (const lease of overdueLeases(this.#leases.values(), now)) this.#endLease(lease, 'expireLease');
  }

  /** Delete the lease and its keys in one revision; returns the store revision after it. */
  #endLease(lease: LiveLease, operation: string): number {
    const { revision } = this.#mutate(operation, (batch) => {
      this.#backend.deleteLease(lease.id);
      for (const key of this.#backend.keysWithLease(lease.id)) batch.delete(key);
    });
    lease.timer?.cancel();
    lease.timer = null;
    this.#leases.delete(lease.id);
    return revision;
  }

  #liveLease(id: LeaseId, operation: string): LiveLease {
    const lease = this.#leases.get(parseLeaseId(id));
    if (lease === undefined) throw new MetadataLeaseNotFoundError(id, operation);
    return lease;
  }

  async grantLease(ttlSeconds: number): Promise<LeaseGrant> {
    this.#enter('grantLease');
    if (!isNonNegativeInteger(ttlSeconds) || ttlSeconds < 1 || ttlSeconds > MAX_LEASE_TTL_SECONDS) {
      throw new MetadataInvalidArgumentError(`lease TTL must be an integer from 1 to ${MAX_LEASE_TTL_SECONDS} seconds`, {
        ttlSeconds,
      });
    }
    const id = this.#nextLeaseId;
    try {
      this.#backend.atomically(() => {
        this.#backend.putLease({ id, ttl: ttlSeconds });
        this.#backend.setMeta('nextLeaseId', id + 1);
      });
    } catch (err) {
      throw wrap(err, 'grantLease');
    }
    this.#nextLeaseId = id + 1;
    const lease: LiveLease = { id, ttl: ttlSeconds, deadline: this.#clock.now() + ttlSeconds * 1000, timer: null };
    this.#leases.set(id, lease);
    this.#arm(lease);
    return { id: String(id), ttl: ttlSeconds };
  }

  async keepAliveLease(id: LeaseId): Promise<LeaseGrant> {
    this.#enter('keepAliveLease');
    const lease = this.#liveLease(id, 'keepAliveLease');
    lease.deadline = this.#clock.now() + lease.ttl * 1000;
    this.#arm(lease);
    return { id: String(lease.id), ttl: lease.ttl };
  }

  async revokeLease(id: LeaseId): Promise<{ readonly revision: number }> {
    this.#enter('revokeLease');
    const lease = this.#liveLease(id, 'revokeLease');
    return { revision: this.#endLease(lease, 'revokeLease') };
  }

  async leaseTimeToLive(id: LeaseId): Promise<LeaseTimeToLive | null> {
    this.#enter('leaseTimeToLive');
    const lease = this.#leases.get(parseLeaseId(id));
    if (lease === undefined) return null;
    const remaining = Math.max(0, Math.ceil((lease.deadline - this.#clock.now()) / 1000));
    const keys = this.#read('leaseTimeToLive', () => this.#backend.keysWithLease(lease.id));
    return { id: String(lease.id), ttl: remaining, grantedTtl: lease.ttl, keys };
  }

  // -------------------------------------------------------------------------------------- others

  async revision(): Promise<number> {
    this.#enter('revision');
    return this.#revision;
  }

  async compact(revision: number): Promise<void> {
    this.#enter('compact');
    if (!isNonNegativeInteger(revision)) {
      throw new MetadataInvalidArgumentError('compact revision must be a non-negative integer', { revision });
    }
    if (revision <= this.#compactRevision) throw new MetadataCompactedError(revision, this.#compactRevision);
    if (revision > this.#revision) throw new MetadataFutureRevisionError(revision, this.#revision);
    try {
      this.#backend.atomically(() => {
        this.#backend.compactEvents(revision);
        this.#backend.setMeta('compactRevision', revision);
      });
    } catch (err) {
      throw wrap(err, 'compact');
    }
    this.#compactRevision = revision;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#flush();
    this.#closed = true;
    for (const lease of this.#leases.values()) {
      lease.timer?.cancel();
      lease.timer = null;
    }
    for (const w of [...this.#watches]) w.endAfterQueued(new MetadataClosedError('watch'));
    this.#backend.close();
  }
}
