/**
 * What a cache of buffer slices keeps alive. A cached entry usually arrives as a slice of a larger buffer (a
 * record batch cut out of a produce request, a packet allocated from Node's shared 8 KiB pool), and keeping the
 * slice keeps its whole ArrayBuffer: a cache that counted the slices' lengths could hold many times its budget.
 * So a cache charges its budget with the ArrayBuffers its entries retain, each once, while any entry keeps it:
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
 * allocations with full collections). So is a smaller one that arrives together with other entries of the same
 * buffer making up an eighth of it between them (`alongside`): the store's group commit hands the cache all the
 * entries of a group at once, and a fetch answer a mirror copies (one ArrayBuffer of up to 50 MiB, a batch of
 * 64 KiB is 1/240 of it) or a produce request of many small partitions arrives as many entries of one buffer.
 * Anything else (a 100-byte batch in a 64 KiB chunk) is copied into memory of its own, so that the entries of
 * one arrival never pin more than eight times their size and a budget keeps its meaning.
 *
 * ```
 *   fetch answer (one ArrayBuffer, 15 MiB)   [h│ p0 b0 │ p0 b1 │ … │ p15 b15 ]      240 batches of 64 KiB
 *   one group commit (≤ 4 MiB of them)          └──── alongside: 4 MiB ────┘      ≥ 1/8: all by reference
 * ```
 */

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

export class RetainedBuffers {
  /** Kept entries per retained ArrayBuffer: the buffer is charged while its count is above zero. */
  private readonly counts = new Map<ArrayBufferLike, number>();
  /** Bytes of the ArrayBuffers retained now. */
  bytes = 0;

  /**
   * The entry as a cache must keep it (itself or an owned copy), its buffer charged unless already charged.
   * `alongside`: the bytes of the entries of the same ArrayBuffer that the cache takes together with this one,
   * this one's included (0: it comes alone).
   */
  retain(data: Buffer, alongside = 0): Buffer {
    const shared = this.counts.get(data.buffer);
    if (shared !== undefined) {
      this.counts.set(data.buffer, shared + 1);
      return data;
    }
    const kept = Math.max(data.byteLength, alongside) * SHARE_LIMIT >= data.buffer.byteLength ? data : ownedCopy(data);
    this.counts.set(kept.buffer, 1);
    this.bytes += kept.buffer.byteLength;
    return kept;
  }

  /** Gives back an entry `retain` returned; its buffer stops being charged when no other entry keeps it. */
  release(kept: Buffer): void {
    const count = this.counts.get(kept.buffer);
    if (count === undefined) throw new Error('released a buffer that is not retained');
    if (count > 1) {
      this.counts.set(kept.buffer, count - 1);
      return;
    }
    this.counts.delete(kept.buffer);
    this.bytes -= kept.buffer.byteLength;
  }

  /** The retained bytes summed afresh from the buffers themselves: what `bytes` must equal. */
  recount(): number {
    let bytes = 0;
    for (const buffer of this.counts.keys()) bytes += buffer.byteLength;
    return bytes;
  }
}
