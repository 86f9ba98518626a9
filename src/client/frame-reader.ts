/**
 * Cuts a TCP byte stream from a broker into response frames (`int32 size | size bytes`).
 *
 *   socket chunks:   [ s|frame A | s|fra ] [ me B ........ ] [ ...B | s|frame C | s| ]
 *                      └─ slice ─┘  └──── parts of B, joined once ────┘ └ slice ┘ └ carried over
 *
 * A frame that lies inside one chunk is handed out as a slice of that chunk (no copy). A frame that spans
 * chunks is kept as a list of parts and joined with a single copy when its last byte has arrived; nothing
 * is concatenated per chunk. A size prefix that is itself split across chunks is assembled in a 4-byte
 * scratch. A negative size, or one above `maxFrameBytes`, is reported before anything is allocated for it.
 */
export interface FrameReaderLimits {
  /** Largest frame body accepted, in bytes. */
  readonly maxFrameBytes: number;
}

export class FrameSizeError extends Error {
  readonly size: number;
  readonly max: number;
  constructor(size: number, max: number) {
    super(size < 0 ? `negative frame size ${size}` : `frame of ${size} bytes is larger than the limit of ${max}`);
    this.size = size;
    this.max = max;
    this.name = 'FrameSizeError';
  }
}

export class FrameReader {
  private readonly maxFrameBytes: number;
  /** Size prefix bytes gathered so far when the prefix was split across chunks. */
  private readonly prefix = Buffer.alloc(4);
  private prefixHave = 0;
  /** Body size of the frame being assembled, or -1 while its size prefix is incomplete. */
  private need = -1;
  /** Parts of the frame being assembled and their total length. */
  private parts: Buffer[] = [];
  private have = 0;

  constructor(limits: FrameReaderLimits) {
    this.maxFrameBytes = limits.maxFrameBytes;
  }

  /** Bytes received that do not yet form a complete frame. */
  get pending(): number {
    return this.prefixHave + this.have;
  }

  /**
   * Feeds one chunk and calls `onFrame` with each frame body (without the size prefix) it completes, in
   * order. Throws FrameSizeError on an impossible size; the reader is then unusable.
   */
  push(chunk: Buffer, onFrame: (body: Buffer) => void): void {
    let pos = 0;
    const len = chunk.length;
    while (pos < len) {
      if (this.need < 0) {
        // Fast path: a whole size prefix in this chunk.
        if (this.prefixHave === 0 && len - pos >= 4) {
          this.need = this.checkSize(chunk.readInt32BE(pos));
          pos += 4;
        } else {
          const k = Math.min(4 - this.prefixHave, len - pos);
          chunk.copy(this.prefix, this.prefixHave, pos, pos + k);
          this.prefixHave += k;
          pos += k;
          if (this.prefixHave < 4) return;
          this.prefixHave = 0;
          this.need = this.checkSize(this.prefix.readInt32BE(0));
        }
      }
      const missing = this.need - this.have;
      const available = len - pos;
      if (this.have === 0 && available >= missing) {
        // The whole body is in this chunk: hand out a slice.
        const body = chunk.subarray(pos, pos + missing);
        pos += missing;
        this.need = -1;
        onFrame(body);
        continue;
      }
      const k = Math.min(missing, available);
      this.parts.push(chunk.subarray(pos, pos + k));
      this.have += k;
      pos += k;
      if (this.have < this.need) return;
      const body = Buffer.concat(this.parts, this.need);
      this.parts = [];
      this.have = 0;
      this.need = -1;
      onFrame(body);
    }
  }

  private checkSize(size: number): number {
    if (size < 0 || size > this.maxFrameBytes) throw new FrameSizeError(size, this.maxFrameBytes);
    return size;
  }
}
