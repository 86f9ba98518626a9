/**
 * The shards of the __consumer_offsets partitions this broker owns, created and loaded lazily: a shard exists
 * only once a request named one of its groups (or ListGroups asked for every owned partition), as Kafka loads
 * a partition when it becomes its coordinator, and a released partition's shard closes (Kafka's onResignation).
 *
 * ```
 *   shards[p]:  undefined ──first request──► Shard(loading) ──► active … ──released / stop──► closed, undefined
 * ```
 *
 * A request waits for its shard's load at most LAZY_LOAD_WAIT_MS, then answers COORDINATOR_LOAD_IN_PROGRESS.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Clock } from '../metadata/clock.js';
import { GroupApiError } from './errors.js';
import { partitionForGroup } from './partitioner.js';
import { Shard, type ShardHooks } from './shard.js';
import type { CoordinatorPartitionLog } from './storage.js';

/** How long a request waits for the load of its group's partition before answering COORDINATOR_LOAD_IN_PROGRESS. */
export const LAZY_LOAD_WAIT_MS = 5_000;

export interface ShardSetOptions {
  readonly clock: Clock;
  readonly openLog: (partition: number) => Promise<CoordinatorPartitionLog>;
  /** Partitions assumed before `open` (offsets.topic.num.partitions), for partitionFor. */
  readonly defaultPartitions: number;
  /** Whether this broker owns a __consumer_offsets partition (the cluster view). Default: it owns them all. */
  readonly ownership?: { owns(partition: number): boolean };
  readonly hooks: ShardHooks;
}

export class ShardSet {
  /** Shards by partition, created on first use; holes for partitions not used (or not owned). */
  private shards: (Shard | undefined)[] = [];
  private count = 0;
  private accepting = false;

  constructor(private readonly options: ShardSetOptions) {}

  get isOpen(): boolean {
    return this.accepting;
  }

  get partitionCount(): number {
    return this.count;
  }

  /** Takes requests for `partitions` partitions; none is loaded until used. */
  open(partitions: number): void {
    this.count = partitions;
    this.shards = new Array<Shard | undefined>(partitions);
    this.accepting = true;
  }

  /** Answers parked requests with NOT_COORDINATOR, stops timers and waits for pending appends. */
  async close(): Promise<void> {
    if (!this.accepting) return;
    this.accepting = false;
    await Promise.all(this.existing().map((s) => s.close()));
  }

  partitionFor(groupId: string): number {
    return partitionForGroup(groupId, this.count || this.options.defaultPartitions);
  }

  /** The shards created so far (loaded or not). */
  existing(): Shard[] {
    return this.shards.filter((s): s is Shard => s !== undefined);
  }

  /** The shard of a partition this broker owns, created (and its load started) on first use. */
  of(partition: number): Shard {
    if (!this.accepting) throw new GroupApiError(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (this.options.ownership && !this.options.ownership.owns(partition)) throw new GroupApiError(ErrorCode.NOT_COORDINATOR, undefined, { partition });
    return this.shards[partition] ?? this.create(partition);
  }

  /**
   * The group's shard, created on first use. A caller waits for a load in progress (`untilLoaded`) rather
   * than answering COORDINATOR_LOAD_IN_PROGRESS; a loaded shard costs no extra turn of the event loop.
   */
  for(groupId: string): Shard {
    return this.of(this.partitionFor(groupId));
  }

  /**
   * Waits for a shard's load, at most LAZY_LOAD_WAIT_MS: a partition loaded on first use usually loads within
   * it, so its first requests are answered instead of refused. Past it the request answers
   * COORDINATOR_LOAD_IN_PROGRESS (Kafka's answer while a partition loads; clients retry).
   */
  untilLoaded(s: Shard): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = this.options.clock.setTimer(LAZY_LOAD_WAIT_MS, resolve);
      void s.whenLoaded().then(() => {
        timer.cancel();
        resolve();
      });
    });
  }

  /** Resolves once every shard created so far finished its current load attempt. */
  async loaded(): Promise<void> {
    await Promise.all(this.existing().map((s) => s.whenLoaded()));
  }

  /** Creates and loads the shard of every partition this broker owns; resolves with them once their loads are over. */
  async loadOwned(): Promise<Shard[]> {
    const owned: Shard[] = [];
    for (let p = 0; p < this.count; p++) if (!this.options.ownership || this.options.ownership.owns(p)) owned.push(this.of(p));
    await Promise.all(owned.map((s) => s.whenLoaded()));
    return owned;
  }

  /** The partition was released (the cluster view gave it to another broker): its shard closes. */
  async release(partition: number): Promise<void> {
    const s = this.shards[partition];
    if (!s) return;
    this.shards[partition] = undefined;
    await s.close();
  }

  private create(partition: number): Shard {
    const shard = new Shard({
      partition,
      clock: this.options.clock,
      openLog: this.options.openLog,
      hooks: this.options.hooks,
    });
    this.shards[partition] = shard;
    void shard.load();
    return shard;
  }
}
