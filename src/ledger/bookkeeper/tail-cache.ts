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
 * only adds past it), so a hit is the bytes a bookie would return. The budget bounds the memory the cache
 * pins: it is charged with the ArrayBuffers the entries retain (a small packet is a slice of Node's shared
 * 8 KiB pool; an entry much smaller than its buffer is copied: retained-buffers.ts) and ENTRY_OVERHEAD_BYTES per
 * entry. Each ledger is bounded too, by its entries' own bytes, so that one busy ledger cannot take the whole
 * budget. A deleted ledger's entries are dropped at once.
 */
import { RetainedBuffers } from '../retained-buffers.js';
import type { LedgerId } from '../types.js';

/** What an entry costs beyond its payload (its slot and Buffer object): empty entries are bounded too. */
export const ENTRY_OVERHEAD_BYTES = 64;

interface Tail {
  /** The entry id of items[head]. */
  first: number;
  /** items[head..] are cached; the evicted front is cut off once it is half the array (no O(n) shift per entry). */
  items: (Buffer | undefined)[];
  head: number;
  /** The cached entries' own bytes, ENTRY_OVERHEAD_BYTES each included: what the per-ledger bound limits. */
  bytes: number;
}

export class TailCache {
  /** Ledgers in the order they were last added to: the first is evicted first. */
  private readonly tails = new Map<LedgerId, Tail>();
  private readonly retained = new RetainedBuffers();
  private entries = 0;
  private readonly perLedgerBytes: number;

  /** `budgetBytes` 0 turns the cache off. */
  constructor(private readonly budgetBytes: number, perLedgerBytes = 8 * 1024 * 1024) {
    this.perLedgerBytes = Math.min(perLedgerBytes, budgetBytes);
  }

  /** What the budget is charged with: the retained buffers and each entry's overhead. */
  get bytes(): number {
    return this.retained.bytes + this.entries * ENTRY_OVERHEAD_BYTES;
  }

  /** The same, the retained buffers summed afresh: what `bytes` must equal. */
  recount(): number {
    return this.retained.recount() + this.entries * ENTRY_OVERHEAD_BYTES;
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
    tail.items.push(this.retained.retain(payload));
    tail.bytes += cost;
    this.entries++;
    while (tail.bytes > this.perLedgerBytes) this.shift(ledgerId, tail);
    while (this.bytes > this.budgetBytes) {
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
    for (let i = tail.head; i < tail.items.length; i++) this.retained.release(tail.items[i]!);
    this.entries -= tail.items.length - tail.head;
    this.tails.delete(ledgerId);
  }

  private shift(ledgerId: LedgerId, tail: Tail): void {
    const gone = tail.items[tail.head];
    if (gone === undefined) return;
    tail.items[tail.head] = undefined; // not pinned until the front is cut off
    tail.head++;
    tail.first++;
    tail.bytes -= gone.length + ENTRY_OVERHEAD_BYTES;
    this.retained.release(gone);
    this.entries--;
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
