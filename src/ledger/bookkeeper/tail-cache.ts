/**
 * The entries this store's writers had acknowledged most recently, kept in memory so that a consumer reading
 * near the tail is served without a read from the bookies, as Pulsar's managed ledger serves tailing reads
 * from its entry cache (EntryCacheManager) and Kafka's from the leader's page cache.
 *
 * ```
 *   ledger 7: first=120 [e120 e121 … e167]  ◄─ add(7, 168, payload): appended when contiguous, else restarted
 *   ledger 9: first=3   [e3 e4]                 oldest ledgers (least recently added to) evicted first
 * ```
 *
 * Only acknowledged entries go in (an entry at or below the writer's lastAddConfirmed never changes: recovery
 * only adds past it), so a hit is the bytes a bookie would return. Bounded in total bytes and per ledger,
 * each entry counted with ENTRY_OVERHEAD_BYTES; a deleted ledger's entries are dropped at once.
 */
import type { LedgerId } from '../types.js';

/** What an entry costs beyond its payload (its slot and Buffer object): empty entries are bounded too. */
export const ENTRY_OVERHEAD_BYTES = 64;

interface Tail {
  /** The entry id of items[head]. */
  first: number;
  /** items[head..] are cached; the evicted front is cut off once it is half the array (no O(n) shift per entry). */
  items: Buffer[];
  head: number;
  bytes: number;
}

export class TailCache {
  /** Ledgers in the order they were last added to: the first is evicted first. */
  private readonly tails = new Map<LedgerId, Tail>();
  private total = 0;
  private readonly perLedgerBytes: number;

  /** `budgetBytes` 0 turns the cache off. */
  constructor(private readonly budgetBytes: number, perLedgerBytes = 8 * 1024 * 1024) {
    this.perLedgerBytes = Math.min(perLedgerBytes, budgetBytes);
  }

  get bytes(): number {
    return this.total;
  }

  add(ledgerId: LedgerId, entryId: number, payload: Buffer): void {
    const cost = payload.length + ENTRY_OVERHEAD_BYTES;
    if (cost > this.perLedgerBytes) return;
    let tail = this.tails.get(ledgerId);
    if (tail !== undefined && tail.first + tail.items.length - tail.head !== entryId) {
      this.drop(ledgerId);
      tail = undefined;
    }
    if (tail === undefined) tail = { first: entryId, items: [], head: 0, bytes: 0 };
    // Most recently added to: last in the eviction order.
    this.tails.delete(ledgerId);
    this.tails.set(ledgerId, tail);
    tail.items.push(payload);
    tail.bytes += cost;
    this.total += cost;
    while (tail.bytes > this.perLedgerBytes) this.shift(ledgerId, tail);
    while (this.total > this.budgetBytes) {
      const [oldestId, oldest] = this.tails.entries().next().value as [LedgerId, Tail];
      this.shift(oldestId, oldest);
    }
  }

  /** The entry's payload when it is cached. */
  get(ledgerId: LedgerId, entryId: number): Buffer | undefined {
    const tail = this.tails.get(ledgerId);
    if (tail === undefined || entryId < tail.first) return undefined;
    return tail.items[tail.head + entryId - tail.first];
  }

  drop(ledgerId: LedgerId): void {
    const tail = this.tails.get(ledgerId);
    if (tail === undefined) return;
    this.total -= tail.bytes;
    this.tails.delete(ledgerId);
  }

  private shift(ledgerId: LedgerId, tail: Tail): void {
    const gone = tail.items[tail.head];
    if (gone === undefined) return;
    tail.head++;
    tail.first++;
    tail.bytes -= gone.length + ENTRY_OVERHEAD_BYTES;
    this.total -= gone.length + ENTRY_OVERHEAD_BYTES;
    if (tail.head === tail.items.length) {
      this.tails.delete(ledgerId);
      return;
    }
    if (tail.head > 64 && tail.head * 2 > tail.items.length) {
      tail.items = tail.items.slice(tail.head);
      tail.head = 0;
    }
  }
}
