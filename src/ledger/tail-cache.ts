/**
 * The tail cache of the local ledger store: the newest durable entries of every ledger, bounded by bytes and
 * by count, evicted oldest first (one FIFO across ledgers). Each ledger's cached entries are a suffix of the
 * ledger ending at its lastAddConfirmed, so a tailing reader is served without a disk read.
 *
 * What is counted is what is retained. An entry that arrived as a slice of a larger buffer (a record batch cut
 * out of a 64 KiB socket chunk, or out of a produce request) would keep that whole buffer alive while being
 * counted as its own length, so the budget could pin many times its size. Such entries are copied into a
 * buffer of their own when they join the cache; an entry that owns its memory exactly is kept by reference.
 */

/** The per-ledger part of the cache, embedded in the store's ledger record. */
export interface CachedLedger {
  readonly deleted: boolean;
  /** Cached entries in cache[cacheHead..]: a suffix of the ledger. */
  cache: (Buffer | undefined)[];
  cacheHead: number;
  cacheBytes: number;
}

export interface TailCacheStats {
  cachedEntries: number;
  cachedBytes: number;
}

/** An entry whose bytes are the whole of their ArrayBuffer, so that retaining it retains exactly its length. */
export function ownedCopy(data: Buffer): Buffer {
  if (data.byteOffset === 0 && data.buffer.byteLength === data.byteLength) return data;
  // Not Buffer.from(data): small copies would come from Node's shared 8 KiB pool, pinning a slab again.
  const own = new Uint8Array(data.byteLength);
  own.set(data);
  return Buffer.from(own.buffer, 0, own.byteLength);
}

export class TailCache {
  /** Global FIFO of cached entries (the ledger and size of each), for eviction in insertion order. */
  private ledgers: (CachedLedger | undefined)[] = [];
  private sizes: number[] = [];
  private head = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly maxEntries: number,
    /** Counters shared with the store's stats. */
    private readonly stats: TailCacheStats,
  ) {}

  add(ledger: CachedLedger, data: Buffer): void {
    if (this.maxBytes <= 0 || this.maxEntries <= 0) return;
    if (ledger.cache.length === ledger.cacheHead && ledger.cacheHead > 0) {
      ledger.cache = [];
      ledger.cacheHead = 0;
    }
    const kept = ownedCopy(data);
    ledger.cache.push(kept);
    ledger.cacheBytes += kept.length;
    this.ledgers.push(ledger);
    this.sizes.push(kept.length);
    this.stats.cachedEntries++;
    this.stats.cachedBytes += kept.length;
    while (this.stats.cachedBytes > this.maxBytes || this.stats.cachedEntries > this.maxEntries) this.evictOne();
  }

  private evictOne(): void {
    const h = this.head++;
    const ledger = this.ledgers[h];
    const size = this.sizes[h]!;
    this.ledgers[h] = undefined;
    if (ledger && !ledger.deleted) {
      ledger.cache[ledger.cacheHead++] = undefined;
      ledger.cacheBytes -= size;
      this.stats.cachedEntries--;
      this.stats.cachedBytes -= size;
      if (ledger.cacheHead > 1024 && ledger.cacheHead * 2 > ledger.cache.length) {
        ledger.cache = ledger.cache.slice(ledger.cacheHead);
        ledger.cacheHead = 0;
      }
    }
    if (this.head > 4096 && this.head * 2 > this.ledgers.length) {
      this.ledgers = this.ledgers.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }

  dropLedger(ledger: CachedLedger): void {
    this.stats.cachedEntries -= ledger.cache.length - ledger.cacheHead;
    this.stats.cachedBytes -= ledger.cacheBytes;
    ledger.cache = [];
    ledger.cacheHead = 0;
    ledger.cacheBytes = 0;
  }
}
