/**
 * The tail cache of the local ledger store: the newest durable entries of every ledger, bounded by bytes and
 * by count, evicted oldest first (one FIFO across ledgers). Each ledger's cached entries are a suffix of the
 * ledger ending at its lastAddConfirmed, so a tailing reader is served without a disk read.
 *
 * What is counted is what is retained: the byte budget is charged with the ArrayBuffers the cached entries
 * keep alive, not with the entries' lengths. An entry usually arrives as a slice of a larger buffer (a record
 * batch cut out of a produce request, or out of a 64 KiB socket chunk):
 *
 * ```
 *   request frame (one ArrayBuffer, 256 KiB)   [hdr│ batch p0 │ batch p1 │ batch p2 │ batch p3 ]
 *   cached entries                                   └─ e0 ─┘   └─ e1 ─┘   └─ e2 ─┘   └─ e3 ─┘
 *   charged                                    256 KiB when e0 joins, nothing for e1..e3,
 *                                              given back when the last of e0..e3 leaves
 * ```
 *
 * An entry that is at least an eighth of its buffer is kept by reference (no copy, no allocation: at full
 * produce rate the copies were a third of the broker's buffer allocations, and V8 answers external
 * allocations with full collections). A smaller one (a 100-byte batch in a 64 KiB chunk) is copied into memory
 * of its own, so that no entry pins more than eight times its size and the budget keeps its meaning.
 */

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

/** An entry smaller than 1/SHARE_LIMIT of its ArrayBuffer is copied rather than pin that buffer. */
const SHARE_LIMIT = 8;

/** An entry whose bytes are the whole of their ArrayBuffer, so that retaining it retains exactly its length. */
export function ownedCopy(data: Buffer): Buffer {
  if (data.byteOffset === 0 && data.buffer.byteLength === data.byteLength) return data;
  // Not Buffer.from(data): small copies would come from Node's shared 8 KiB pool, pinning a slab again.
  const own = new Uint8Array(data.byteLength);
  own.set(data);
  return Buffer.from(own.buffer, 0, own.byteLength);
}

export class TailCache {
  /** Global FIFO of cached entries (the ledger and the entry), for eviction in insertion order. */
  private ledgers: (CachedLedger | undefined)[] = [];
  private entries: (Buffer | undefined)[] = [];
  private head = 0;
  /** Cached entries per retained ArrayBuffer: the buffer is charged once, while the count is above zero. */
  private readonly retained = new Map<ArrayBufferLike, number>();

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
    const kept = this.retain(data);
    ledger.cache.push(kept);
    this.ledgers.push(ledger);
    this.entries.push(kept);
    this.stats.cachedEntries++;
    while (this.stats.cachedBytes > this.maxBytes || this.stats.cachedEntries > this.maxEntries) this.evictOne();
  }

  /** Bytes the cache retains, by the rule above: what `stats.cachedBytes` must equal. */
  retainedBytes(): number {
    let bytes = 0;
    for (const buffer of this.retained.keys()) bytes += buffer.byteLength;
    return bytes;
  }

  /** The entry as the cache keeps it (itself or a copy), its buffer charged unless already charged. */
  private retain(data: Buffer): Buffer {
    const shared = this.retained.get(data.buffer);
    if (shared !== undefined) {
      this.retained.set(data.buffer, shared + 1);
      return data;
    }
    const kept = data.byteLength * SHARE_LIMIT >= data.buffer.byteLength ? data : ownedCopy(data);
    this.retained.set(kept.buffer, 1);
    this.stats.cachedBytes += kept.buffer.byteLength;
    return kept;
  }

  private release(kept: Buffer): void {
    const count = this.retained.get(kept.buffer)!;
    if (count > 1) {
      this.retained.set(kept.buffer, count - 1);
      return;
    }
    this.retained.delete(kept.buffer);
    this.stats.cachedBytes -= kept.buffer.byteLength;
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
