/**
 * The cleaner's key → latest offset map (Kafka's SkimpyOffsetMap): an open-addressing hash table in one
 * preallocated memory budget, storing for each key only its 16-byte digest (key-hash.ts) and the offset
 * of its latest record, 24 bytes a slot, like Kafka's MD5 digest and 8-byte offset.
 *
 * ```
 *   slot i:  words[4i .. 4i+3]  digest h1..h4 (all zero = empty; a real all-zero digest is stored as h4 = 1)
 *            offsets[i]         offset of the key's latest record seen so far
 * ```
 *
 * The budget is `log.cleaner.dedupe.buffer.size`; at most `log.cleaner.io.buffer.load.factor` (0.9) of the
 * slots are used, so probes stay short. When the map is full the cleaner stops building it there and cleans
 * up to the last offset it holds (Kafka's "offset map is full" path); the rest waits for the next pass.
 */
import { murmur3x86x128 } from './key-hash.js';

export const OFFSET_MAP_SLOT_BYTES = 24;

export class KeyOffsetMap {
  readonly slots: number;
  readonly maxEntries: number;
  #words: Uint32Array;
  #offsets: Float64Array;
  #size = 0;
  #latestOffset = -1;
  readonly #digest = new Uint32Array(4);

  /** A map of at most `bytes` (and of no more slots than `maxKeys` needs at the load factor). */
  constructor(bytes: number, loadFactor = 0.9, maxKeys = Number.MAX_SAFE_INTEGER) {
    if (!(loadFactor > 0 && loadFactor <= 1)) throw new RangeError(`load factor must be in (0, 1], got ${loadFactor}`);
    const bySize = Math.floor(bytes / OFFSET_MAP_SLOT_BYTES);
    const byKeys = Math.ceil(maxKeys / loadFactor) + 1;
    this.slots = Math.max(2, Math.min(bySize, byKeys));
    this.maxEntries = Math.max(1, Math.floor(this.slots * loadFactor));
    this.#words = new Uint32Array(this.slots * 4);
    this.#offsets = new Float64Array(this.slots);
  }

  get size(): number {
    return this.#size;
  }

  /** The largest offset put, -1 when empty. */
  get latestOffset(): number {
    return this.#latestOffset;
  }

  get full(): boolean {
    return this.#size >= this.maxEntries;
  }

  /** Fraction of the usable entries taken (Kafka's max-buffer-utilization-percent / 100). */
  get utilization(): number {
    return this.#size / this.maxEntries;
  }

  /**
   * Records `offset` as the latest offset of the key `key[start, end)`. Returns false, changing nothing,
   * when the key is new and the map is full.
   */
  put(key: Uint8Array, start: number, end: number, offset: number): boolean {
    const slot = this.#find(key, start, end);
    const words = this.#words;
    if (words[slot * 4]! === 0 && words[slot * 4 + 1]! === 0 && words[slot * 4 + 2]! === 0 && words[slot * 4 + 3]! === 0) {
      if (this.full) return false;
      const d = this.#digest;
      words[slot * 4] = d[0]!;
      words[slot * 4 + 1] = d[1]!;
      words[slot * 4 + 2] = d[2]!;
      words[slot * 4 + 3] = d[3]!;
      this.#size++;
    }
    this.#offsets[slot] = offset;
    if (offset > this.#latestOffset) this.#latestOffset = offset;
    return true;
  }

  /** The latest offset recorded for the key, or -1. */
  get(key: Uint8Array, start: number, end: number): number {
    const slot = this.#find(key, start, end);
    const w = this.#words;
    const empty = w[slot * 4]! === 0 && w[slot * 4 + 1]! === 0 && w[slot * 4 + 2]! === 0 && w[slot * 4 + 3]! === 0;
    return empty ? -1 : this.#offsets[slot]!;
  }

  clear(): void {
    this.#words.fill(0);
    this.#size = 0;
    this.#latestOffset = -1;
  }

  /** The key's slot, or the empty slot where it would go (linear probing from its digest). */
  #find(key: Uint8Array, start: number, end: number): number {
    const d = this.#digest;
    murmur3x86x128(key, start, end, d);
    if (d[0] === 0 && d[1] === 0 && d[2] === 0 && d[3] === 0) d[3] = 1;
    const words = this.#words;
    const n = this.slots;
    let slot = (d[0]! >>> 0) % n;
    for (;;) {
      const b = slot * 4;
      const w0 = words[b]!;
      const w1 = words[b + 1]!;
      const w2 = words[b + 2]!;
      const w3 = words[b + 3]!;
      if (w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0) return slot;
      if (w0 === d[0] && w1 === d[1] && w2 === d[2] && w3 === d[3]) return slot;
      slot = slot + 1 === n ? 0 : slot + 1;
    }
  }
}
