/**
 * Read-ahead for sequential readers of the local store's segment files, as BookKeeper's DbLedgerStorage reads
 * ahead of an entry-log read that missed its caches (`dbStorage_readAheadCacheBatchSize`, into a read-ahead
 * cache of `dbStorage_readAheadCacheMaxSizeMb`).
 *
 * A consumer catching up reads a partition's ledger one fetch after another, each from where the last ended.
 * Without read-ahead each fetch waits for its own disk read, and the disk idles while the answer travels and
 * the consumer asks again. Here a read that went to the segment files starts reading the entries after it,
 * as many bytes as it read itself, so the next read of that ledger from there finds them read or on their way:
 *
 * ```
 *   read [a, b)  ──disk──►  answer             read [b, c) ──► takes [b, c) read ahead, starts [c, d)
 *                 └ starts [b, c) in the background ──────┘
 * ```
 *
 * - One read-ahead per ledger, taken only by a read that starts exactly where it starts; a read that ends
 *   before it does leaves the rest in place for the next one. Entries never change once written, so what was
 *   read ahead stays right whatever happens meanwhile (compaction moves bytes, not entries); a deleted
 *   ledger's is dropped.
 * - The payload bytes held (read or being read) are bounded by `budgetBytes`, each read-ahead's by
 *   `maxBytes`. To make room a new one evicts only those whose reader did not come back within `staleMs`
 *   (it went elsewhere or away), and is skipped when that is not enough: with more readers than the budget
 *   holds, evicting fresh ones would have each read twice from the disk and taken by nobody.
 * - A read-ahead that fails is forgotten: the reader that wanted it reads from the disk itself and meets the
 *   error there.
 */
import type { Ledger } from './store-state.js';
import type { LedgerEntry } from './types.js';

/** Reads entries [from, to) of `ledger` into out[id - from]; rejects on any failure. */
export type ReadEntries = (ledger: Ledger, from: number, to: number, out: LedgerEntry[]) => Promise<void>;

export interface ReadAheadStats {
  /** Entries read ahead, and of them those a reader took. */
  readAheadEntries: number;
  readAheadHits: number;
}

interface Pending {
  readonly ledger: Ledger;
  from: number;
  readonly to: number;
  /** Payload bytes of [from, to), counted against the budget until taken or evicted. */
  bytes: number;
  /** The entries [start, to), `start` the read-ahead's first id; null once read when the read failed. */
  entries: LedgerEntry[] | null;
  readonly start: number;
  /** Settles when the read does (never rejects). */
  done: Promise<void>;
  reading: boolean;
  /** When it started or a reader last took from it (`now()`). */
  touched: number;
}

export class ReadAhead {
  /** By ledger, in the order they started (a Map iterates in insertion order). */
  private readonly pending = new Map<Ledger, Pending>();
  private heldBytes = 0;

  constructor(
    private readonly budgetBytes: number,
    private readonly maxBytes: number,
    private readonly readEntries: ReadEntries,
    private readonly stats: ReadAheadStats,
    private readonly staleMs = 1000,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Payload bytes held now (read or being read). */
  get bytes(): number {
    return this.heldBytes;
  }

  /**
   * The entries of `ledger` from `from` up to `to` (exclusive) that were read ahead, in order, waiting for a
   * read-ahead in progress; empty when none starts at `from` or it failed. What lies past `to` stays for the
   * next read.
   */
  async take(ledger: Ledger, from: number, to: number): Promise<LedgerEntry[]> {
    const p = this.pending.get(ledger);
    if (!p || p.from !== from) return [];
    if (p.reading) await p.done;
    // Taken by a concurrent reader meanwhile, or evicted: nothing for this one.
    if (this.pending.get(ledger) !== p || p.from !== from || p.entries === null) return [];
    const end = Math.min(to, p.to);
    const taken = p.entries.slice(from - p.start, end - p.start);
    this.stats.readAheadHits += taken.length;
    if (end >= p.to) {
      this.remove(p);
    } else {
      let bytes = 0;
      for (const e of taken) bytes += e.data.length;
      p.from = end;
      p.bytes -= bytes;
      p.touched = this.now();
      this.heldBytes -= bytes;
    }
    return taken;
  }

  /**
   * Starts reading `ledger` from `from` ahead of its reader: entries up to `limit` (exclusive), about `bytes`
   * of payload (at least one entry, at most maxBytes). Does nothing when one is in place for that ledger or
   * the budget cannot make room.
   */
  start(ledger: Ledger, from: number, limit: number, bytes: number): void {
    if (this.budgetBytes <= 0 || from >= limit || this.pending.has(ledger) || ledger.deleted) return;
    const want = Math.min(bytes, this.maxBytes);
    let to = from;
    let total = 0;
    while (to < limit) {
      const len = ledger.index.lengthOf(to);
      if (to > from && total + len > want) break;
      total += len;
      to++;
    }
    if (!this.makeRoom(total)) return;
    const out = new Array<LedgerEntry>(to - from);
    const p: Pending = { ledger, from, to, bytes: total, entries: out, start: from, reading: true, done: Promise.resolve(), touched: this.now() };
    p.done = this.readEntries(ledger, from, to, out).then(
      () => {
        p.reading = false;
      },
      () => {
        p.reading = false;
        p.entries = null;
        if (this.pending.get(ledger) === p) this.remove(p);
      },
    );
    this.pending.set(ledger, p);
    this.heldBytes += total;
    this.stats.readAheadEntries += to - from;
  }

  /** Waits for the reads in progress (their files must stay open), then forgets everything read ahead. */
  async close(): Promise<void> {
    await Promise.all([...this.pending.values()].map((p) => p.done));
    this.pending.clear();
    this.heldBytes = 0;
  }

  /** Whether `bytes` fit, once deleted ledgers' and stale read-aheads (not being read) are evicted if need be. */
  private makeRoom(bytes: number): boolean {
    if (bytes > this.budgetBytes) return false;
    if (this.heldBytes + bytes <= this.budgetBytes) return true;
    const staleBefore = this.now() - this.staleMs;
    for (const p of [...this.pending.values()]) {
      if (this.heldBytes + bytes <= this.budgetBytes) break;
      if (!p.reading && (p.ledger.deleted || p.touched < staleBefore)) this.remove(p);
    }
    return this.heldBytes + bytes <= this.budgetBytes;
  }

  private remove(p: Pending): void {
    this.pending.delete(p.ledger);
    this.heldBytes -= p.bytes;
  }
}
