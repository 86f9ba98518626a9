/**
 * The memory of request buffers, bounded for the whole broker: Kafka's `queued.max.request.bytes` and the
 * MemoryPool its SocketServer reads requests into (KIP-72).
 *
 * A connection asks the pool for a request's bytes as soon as the request's size prefix has been read, and
 * gives them back once the handler has finished with the request. While the pool cannot grant them, the
 * connection stops reading its socket (as Kafka mutes the channel) and is queued; it reads again when a
 * release makes room. So what clients send can hold at most the pool's capacity, however many connections
 * hold half-sent frames.
 *
 *   0                                        capacity − reserve            capacity
 *   ├─────────── any request ─────────────────────────┼──── small requests ───┤
 *
 * The last `reserve` bytes only go to small requests (≤ `smallRequestBytes`: Metadata, heartbeats, offset
 * commits, ordinary produces), so connections holding large half-sent frames cannot stop every other
 * client's control traffic. A request larger than `capacity − reserve` (possible only when an operator
 * makes the pool smaller than socket.request.max.bytes allows, which config loading refuses) is granted
 * when the pool is otherwise empty: it is served, later, rather than never.
 *
 * Waiters are served in arrival order within their class (small before large when both fit), so a large
 * request is not overtaken forever by later large ones. An unbounded pool (capacity Infinity, the operator's
 * explicit `-1`) grants everything and only counts.
 */
export interface MemoryPoolOptions {
  /** Bytes at the top of the pool that only small requests may use. */
  readonly reserve?: number;
  /** Largest request that counts as small. */
  readonly smallRequestBytes?: number;
}

interface Waiter {
  readonly size: number;
  readonly grant: () => void;
  cancelled: boolean;
}

export class MemoryPool {
  private usedBytes = 0;
  private readonly small: Waiter[] = [];
  private readonly large: Waiter[] = [];
  readonly reserve: number;
  readonly smallRequestBytes: number;

  constructor(
    readonly capacity: number,
    options: MemoryPoolOptions = {},
  ) {
    if (!(capacity > 0)) throw new RangeError(`memory pool capacity must be positive, got ${capacity}`);
    this.reserve = Number.isFinite(capacity) ? Math.max(0, Math.min(options.reserve ?? 0, capacity)) : 0;
    this.smallRequestBytes = options.smallRequestBytes ?? 1024 * 1024;
  }

  /** Bytes granted and not yet released (Kafka's MemoryPoolUsed). */
  get used(): number {
    return this.usedBytes;
  }

  /** Bytes the pool can still grant (Kafka's MemoryPoolAvailable); Infinity when unbounded. */
  get available(): number {
    return Math.max(0, this.capacity - this.usedBytes);
  }

  /** Requests waiting for memory (each one a connection that stopped reading). */
  get waiting(): number {
    return this.small.length + this.large.length;
  }

  private isSmall(size: number): boolean {
    return size <= this.smallRequestBytes;
  }

  private fits(size: number): boolean {
    if (this.usedBytes === 0) return true;
    const limit = this.isSmall(size) ? this.capacity : this.capacity - this.reserve;
    return this.usedBytes + size <= limit;
  }

  /** Grants `size` bytes now if they fit and no earlier request of the same class waits. */
  tryAllocate(size: number): boolean {
    const queue = this.isSmall(size) ? this.small : this.large;
    if (queue.length > 0 || !this.fits(size)) return false;
    this.usedBytes += size;
    return true;
  }

  /**
   * Queues a request for `size` bytes: `grant` is called (from inside a later `release`) once they are
   * allocated to it. Returns a function that withdraws the request if it is still waiting.
   */
  wait(size: number, grant: () => void): () => void {
    const w: Waiter = { size, grant, cancelled: false };
    // Called after tryAllocate failed: the request does not fit now or waits behind others of its class,
    // so it is never granted from inside this call.
    (this.isSmall(size) ? this.small : this.large).push(w);
    return () => {
      if (w.cancelled) return;
      w.cancelled = true;
      const q = this.isSmall(size) ? this.small : this.large;
      const i = q.indexOf(w);
      if (i >= 0) q.splice(i, 1);
      this.grantWaiters();
    };
  }

  /** Gives back bytes granted earlier, and grants what now fits to the waiting requests. */
  release(size: number): void {
    if (size <= 0) return;
    this.usedBytes -= size;
    if (this.usedBytes < 0) throw new Error(`memory pool released more than it granted (${-this.usedBytes} bytes)`);
    this.grantWaiters();
  }

  private grantWaiters(): void {
    for (;;) {
      const w = this.small[0] !== undefined && this.fits(this.small[0].size) ? this.small.shift() : this.large[0] !== undefined && this.fits(this.large[0].size) ? this.large.shift() : undefined;
      if (!w) return;
      w.cancelled = true;
      this.usedBytes += w.size;
      w.grant();
    }
  }
}
