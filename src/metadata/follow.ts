/**
 * Follows a prefix (or one key) of a metadata store for as long as its holder runs: what it holds now, then
 * every change. The caches every broker keeps of state shared through the store (topics, registrations,
 * partition owners, ACLs, quotas, tenants, dynamic configs, cluster links) are built on it.
 *
 * A watch can end while the store goes on: etcd's ErrCompacted (LL_ERR_METADATA_COMPACTED: this instance fell
 * further behind than the history the store keeps, and the ZooKeeper store reloaded), a storage failure, a
 * listener that threw. A cache that stopped there would serve its last state for good, on one broker only. So
 * the follower reads the whole target again and starts a new watch from there, as a Kubernetes informer
 * re-lists after its watch expires: at once after the first setback in a while, then no sooner than `retryMs`
 * after the last, and a read or watch that fails is reported and tried again after `retryMs`. Only `cancel`
 * and the store's close end it.
 *
 * A read of more than one page is not one snapshot: the watch starts from the first page's revision, and an
 * event no newer than what the read gave for its key is left out, so every key ends at its latest state and
 * each change is applied once.
 */
import type { Clock, ClockTimer } from './clock.js';
import { systemClock } from './clock.js';
import { readPages, type PagedRead } from './list-all.js';
import type { KeyValue, MetadataStore, Watch, WatchEvent, WatchTarget } from './types.js';

/** Pause before a failed read or watch is tried again. */
export const FOLLOW_RETRY_MS = 1_000;

export interface FollowListener {
  /** What the target holds at `revision`, replacing all that came before: the first read, and each read again. */
  reset(kvs: readonly KeyValue[], revision: number): void;
  /** Changes after that, in revision order, up to `revision`; none older than what the key already had. */
  changes(events: readonly WatchEvent[], revision: number): void;
  /** A failure to follow, or a reset or change the listener threw on; the follower reads the target again. */
  error(err: Error): void;
}

export interface FollowOptions {
  readonly retryMs?: number;
  readonly clock?: Clock;
  /** Keys per page of a read (default 1000). */
  readonly pageSize?: number;
}

export interface Following {
  /** Stops following; nothing is delivered after it. Idempotent. */
  cancel(): Promise<void>;
}

/**
 * Reads the target, hands it to `reset` and follows it from there; resolves once the first read is delivered and
 * rejects when that read fails (later failures go to `error` and are retried).
 */
export async function follow(store: Pick<MetadataStore, 'list' | 'watch'>, target: WatchTarget, listener: FollowListener, options: FollowOptions = {}): Promise<Following> {
  const follower = new Follower(store, target, listener, options);
  for (let attempt = 1; ; attempt++) {
    try {
      await follower.start();
      return follower;
    } catch (err) {
      if (!isCompacted(err) || attempt >= MAX_COMPACTED_STARTS) throw err;
    }
  }
}

/** Starts in a row that may find the history compacted between their read and their watch. */
const MAX_COMPACTED_STARTS = 8;
const isCompacted = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'LL_ERR_METADATA_COMPACTED';

const isClosed = (err: unknown): boolean => (err as { code?: string } | null)?.code === 'LL_ERR_METADATA_CLOSED';

const asError = (err: unknown): Error => (err instanceof Error ? err : new Error(String(err)));

class Follower implements Following {
  #watch: Watch | null = null;
  #timer: ClockTimer | null = null;
  #cancelled = false;
  /** Counts reads: a watch delivers only while its own read is the latest. */
  #round = 0;
  /**
   * Per key, the revision its state was read at: an event no newer is left out. Needed only up to the last
   * page's revision (`#readUpTo`): every later event is news, and the map is dropped once the watch is past it.
   */
  #revisions = new Map<string, number>();
  #readUpTo = 0;
  /** When the last watch ended or read failed (the clock's time). */
  #lastSetback = -Infinity;

  readonly #clock: Clock;
  readonly #retryMs: number;

  constructor(
    private readonly store: Pick<MetadataStore, 'list' | 'watch'>,
    private readonly target: WatchTarget,
    private readonly listener: FollowListener,
    private readonly options: FollowOptions,
  ) {
    this.#clock = options.clock ?? systemClock;
    this.#retryMs = options.retryMs ?? FOLLOW_RETRY_MS;
  }

  /** Reads the target, resets the listener and watches from there; throws when the read or the watch fails. */
  async start(): Promise<void> {
    const round = ++this.#round;
    const previous = this.#watch;
    this.#watch = null;
    await previous?.cancel();
    const { kvs, first: revision, last } = await this.#read();
    if (this.#cancelled || round !== this.#round) return;
    this.#revisions = new Map(kvs.map((kv) => [kv.key, kv.modRevision]));
    this.#readUpTo = last;
    this.listener.reset(kvs, revision);
    // From the read's revision on: history compacted meanwhile fails it with LL_ERR_METADATA_COMPACTED, and the
    // caller reads again (at once: a read after the compaction point watches from after it).
    const watch = await this.store.watch(
      this.target,
      {
        onEvents: (res) => {
          if (this.#cancelled || round !== this.#round) return;
          const fresh = res.events.filter((e) => this.#isNews(e));
          if (res.revision >= this.#readUpTo && this.#revisions.size > 0) this.#revisions = new Map();
          try {
            if (fresh.length > 0) this.listener.changes(fresh, res.revision);
          } catch (err) {
            this.#lost(round, err);
          }
        },
        onError: (err) => this.#lost(round, err),
      },
      { startRevision: revision + 1 },
    );
    if (this.#cancelled || round !== this.#round) await watch.cancel();
    else this.#watch = watch;
  }

  async cancel(): Promise<void> {
    this.#cancelled = true;
    this.#timer?.cancel();
    this.#timer = null;
    const watch = this.#watch;
    this.#watch = null;
    await watch?.cancel();
  }

  /** The target's keys: watched from the first page's revision, filtered per key up to the last page's. */
  async #read(): Promise<PagedRead> {
    if ('prefix' in this.target) return readPages(this.store, this.target.prefix, this.options.pageSize);
    const { key } = this.target;
    // The key sorts first among the keys it prefixes.
    const page = await this.store.list(key, { limit: 1 });
    return { kvs: page.kvs.filter((kv) => kv.key === key), first: page.revision, last: page.revision };
  }

  #isNews(e: WatchEvent): boolean {
    if (e.kv.modRevision > this.#readUpTo) return true;
    const known = this.#revisions.get(e.kv.key);
    if (known !== undefined && e.kv.modRevision <= known) return false;
    // Events come in revision order: once one is through, no older one for the key can follow.
    this.#revisions.delete(e.kv.key);
    return true;
  }

  /** The watch of `round` ended, or its listener threw: reported, then the target is read again. */
  #lost(round: number, err: unknown): void {
    if (this.#cancelled || round !== this.#round || isClosed(err)) return;
    this.listener.error(asError(err));
    this.#again(this.#soon());
  }

  /**
   * At once for the first setback in a while (a watch that ended, a compaction that raced the read), after
   * `retryMs` for the next ones: a store that keeps failing is not asked in a tight loop.
   */
  #soon(): number {
    const now = this.#clock.now();
    const quiet = now - this.#lastSetback >= this.#retryMs;
    this.#lastSetback = now;
    return quiet ? 0 : this.#retryMs;
  }

  /** Starts again after `delayMs`, and again for as long as that fails. */
  #again(delayMs: number): void {
    if (this.#cancelled) return;
    this.#timer?.cancel();
    this.#timer = this.#clock.setTimer(delayMs, () => {
      this.#timer = null;
      this.start().catch((err: unknown) => {
        if (this.#cancelled || isClosed(err)) return;
        this.listener.error(asError(err));
        this.#again(isCompacted(err) ? this.#soon() : this.#retryMs);
      });
    });
  }
}

/**
 * The writes a cache applied itself at once, before the store's watch brings them back: by key, the revision of
 * each until the store is past it. A state of that key from the store no newer than the write (a read again under
 * way, an event still on its way) must not undo it meanwhile.
 */
export class OwnWrites {
  readonly #revisions = new Map<string, number>();

  /** The cache wrote `key` at `revision` and applied it. */
  wrote(key: string, revision: number): void {
    if (revision > (this.#revisions.get(key) ?? 0)) this.#revisions.set(key, revision);
  }

  /** Whether the cache wrote `key` after `revision`: a state of it at `revision` is older than its own. */
  after(key: string, revision: number): boolean {
    return (this.#revisions.get(key) ?? 0) > revision;
  }

  /** What the cache has from the store is at `revision` or later (a read, a watch response): older writes settle. */
  settled(revision: number): void {
    for (const [key, r] of this.#revisions) if (r <= revision) this.#revisions.delete(key);
  }
}
