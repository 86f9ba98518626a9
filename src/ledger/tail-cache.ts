/**
 * The tail cache of the local ledger store: the newest durable entries of every ledger, bounded by bytes and
 * by count, evicted oldest first (one FIFO across ledgers). Each ledger's cached entries are a suffix of the
 * ledger ending at its lastAddConfirmed, so a tailing reader is served without a disk read.
 *
 * What is counted is what is retained: the byte budget is charged with the ArrayBuffers the cached entries
 * keep alive, not with the entries' lengths, and an entry much smaller than its buffer is copied unless its
 * group commit brings a fair share of that buffer with it (retained-buffers.ts).
 */
import { RetainedBuffers } from './retained-buffers.js';

/** The per-ledger part of the cache, embedded in the store's ledger record. */
export interface CachedLedger {
  readonly deleted: boolean;
  /** Cached entries in cache[cacheHead..]: a suffix of the ledger. */
  cache: (Buffer | undefined)[];
  cacheHead: number;
}

export interface TailCacheStats {
  cachedEntries: number;
  /** Bytes of the ArrayBuffers the cached entries retain. */
  cachedBytes: number;
}

export class TailCache {
  /** Global FIFO of cached entries (the ledger and the entry), for eviction in insertion order. */
  private ledgers: (CachedLedger | undefined)[] = [];
  private entries: (Buffer | undefined)[] = [];
  private head = 0;
  private readonly retained = new RetainedBuffers();

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries: number,
    /** Counters shared with the store's stats. */
    private readonly stats: TailCacheStats,
  ) {}

  /**
   * Caches a durable entry. `alongside`: the bytes of the entries of the same ArrayBuffer cached together with it
   * (its group commit's; RetainedBuffers.retain), which decide whether it is kept by reference or copied.
   */
  add(ledger: CachedLedger, data: Buffer, alongside = 0): void {
    if (this.maxBytes <= 0 || this.maxEntries <= 0) return;
    if (ledger.cache.length === ledger.cacheHead && ledger.cacheHead > 0) {
      ledger.cache = [];
      ledger.cacheHead = 0;
    }
    const kept = this.retain(data, alongside);
    ledger.cache.push(kept);
    this.ledgers.push(ledger);
    this.entries.push(kept);
    this.stats.cachedEntries++;
    while (this.stats.cachedBytes > this.maxBytes || this.stats.cachedEntries > this.maxEntries) this.evictOne();
  }

  /** Bytes the cache retains, summed afresh from the buffers: what `stats.cachedBytes` must equal. */
  retainedBytes(): number {
    return this.retained.recount();
  }

  private retain(data: Buffer, alongside: number): Buffer {
    const before = this.retained.bytes;
    const kept = this.retained.retain(data, alongside);
    this.stats.cachedBytes += this.retained.bytes - before;
    return kept;
  }

  private release(kept: Buffer): void {
    const before = this.retained.bytes;
    this.retained.release(kept);
    this.stats.cachedBytes += this.retained.bytes - before;
  }

  private evictOne(): void {
    const h = this.head++;
    const ledger = this.ledgers[h];
    const entry = this.entries[h]!;
    this.ledgers[h] = undefined;
    this.entries[h] = undefined;
    // A deleted ledger's entries were released by dropLedger.
    if (ledger && !ledger.deleted) {
      ledger.cache[ledger.cacheHead++] = undefined;
      this.stats.cachedEntries--;
      this.release(entry);
      if (ledger.cacheHead > 1024 && ledger.cacheHead * 2 > ledger.cache.length) {
        ledger.cache = ledger.cache.slice(ledger.cacheHead);
        ledger.cacheHead = 0;
      }
    }
    if (this.head > 4096 && this.head * 2 > this.ledgers.length) {
      this.ledgers = this.ledgers.slice(this.head);
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** Releases a ledger's cached entries; called once its `deleted` is set (its FIFO slots are then skipped). */
  dropLedger(ledger: CachedLedger): void {
    for (let i = ledger.cacheHead; i < ledger.cache.length; i++) {
      this.stats.cachedEntries--;
      this.release(ledger.cache[i]!);
    }
    ledger.cache = [];
    ledger.cacheHead = 0;
  }
}
