/**
 * Splits a TCP byte stream into Kafka frames (`int32 size | size bytes`), requests on the broker side and
 * responses on the client side alike.
 *
 *   socket chunks:   [ s|frame A | s|fra ] [ me B ........ ] [ ...B | s|frame C | s| ]
 *                      └─ slice ─┘  └──── parts of B, joined once ────┘ └ slice ┘ └ kept for the next push
 *
 * Chunks are queued as they arrive and joined once per frame, when the whole frame is there: a frame that
 * lies inside one chunk is returned as a slice of it (no copy); one that spans chunks is copied once into a
 * buffer of exactly its size; nothing is concatenated per chunk. A size prefix split across chunks is
 * assembled from them. A size above `maxFrameBytes` (the broker's socket.request.max.bytes) or below zero
 * is reported before anything is allocated for it, so a lying length prefix costs nothing; the splitter is
 * unusable afterwards (Kafka closes the connection: its NetworkReceive throws InvalidReceiveException).
 *
 * An `admit` hook, when given, is asked for each non-empty frame's bytes as soon as its size prefix is read
 * (the broker's request memory pool, Kafka's MemoryPool.tryAllocate). When it says no, the splitter holds
 * that frame: it returns the frames before it and returns nothing more until `resume()` says the memory was
 * granted. Bytes already received stay queued; the caller stops reading its socket meanwhile, so they are
 * at most what one read brought.
 */
import { ErrorCode } from '../error-codes.js';
import { CodecError } from '../errors.js';

/** A frame size prefix that is negative or above the limit. The connection it came on cannot be read further. */
export class FrameTooLargeError extends CodecError {
  constructor(
    readonly size: number,
    readonly max: number,
    limitName = 'the limit',
  ) {
    super(
      'LL_ERR_FRAME_SIZE',
      ErrorCode.INVALID_REQUEST,
      size < 0 ? `negative frame size ${size}` : `frame of ${size} bytes exceeds ${limitName} ${max}`,
    );
  }
}

export interface FrameSplitterOptions {
  /** Largest frame body accepted, in bytes. */
  readonly maxFrameBytes: number;
  /** Named in the error for a frame over the limit (`socket.request.max.bytes`). */
  readonly limitName?: string;
  /**
   * Asked for a frame's bytes when its size prefix has been read (never for an empty frame); false holds the
   * frame until `resume()`.
   */
  readonly admit?: (size: number) => boolean;
}

const EMPTY = Buffer.alloc(0);

export class FrameSplitter {
  private maxFrameBytes: number;
  private limitName: string | undefined;
  private readonly admit: ((size: number) => boolean) | undefined;
  private readonly chunks: Buffer[] = [];
  /** Bytes queued in `chunks`, from `offset` in the first one. */
  private queued = 0;
  /** Read position inside chunks[0]. */
  private offset = 0;
  /** Size of the frame being assembled, or -1 while its prefix has not arrived. */
  private need = -1;
  /** True while the frame whose size is `need` waits for `admit` to be granted. */
  private held = false;

  constructor(options: FrameSplitterOptions) {
    this.maxFrameBytes = options.maxFrameBytes;
    this.limitName = options.limitName;
    this.admit = options.admit;
  }

  /**
   * Changes the bound for frames whose size prefix has not been read yet: a SASL listener reads its
   * unauthenticated frames under sasl.server.max.receive.size, then the socket.request.max.bytes of requests.
   */
  setLimit(maxFrameBytes: number, limitName?: string): void {
    this.maxFrameBytes = maxFrameBytes;
    this.limitName = limitName;
  }

  /** Bytes received but not yet returned as frames (a size prefix already read is not counted). */
  get buffered(): number {
    return this.queued;
  }

  /** Size of the frame waiting for its memory, or 0. */
  get waitingFor(): number {
    return this.held ? this.need : 0;
  }

  /** Size of the admitted frame still being received (its memory is granted, the frame not returned), or 0. */
  get assembling(): number {
    return !this.held && this.need > 0 ? this.need : 0;
  }

  /** The held frame's memory was granted: the next push (an empty chunk will do) goes on splitting. */
  resume(): void {
    this.held = false;
  }

  /**
   * Adds a chunk; returns the frames it completes (bodies without the size prefix), in order. Throws
   * FrameTooLargeError on an impossible size.
   */
  push(chunk: Buffer): Buffer[] {
    if (this.queued === 0 && this.need < 0) return this.pushFresh(chunk);
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.queued += chunk.length;
    }
    const frames: Buffer[] = [];
    for (;;) {
      if (this.need < 0) {
        if (this.queued < 4) break;
        const size = this.readSize();
        if (size < 0 || size > this.maxFrameBytes) throw new FrameTooLargeError(size, this.maxFrameBytes, this.limitName);
        this.need = size;
        this.held = size > 0 && this.admit !== undefined && !this.admit(size);
      }
      if (this.held || this.queued < this.need) break;
      frames.push(this.take(this.need));
      this.need = -1;
    }
    return frames;
  }

  /**
   * The common case, nothing queued from earlier chunks: frames are cut straight out of `chunk` and only its
   * tail (a partial prefix or frame, or what follows a held frame) is queued.
   */
  private pushFresh(chunk: Buffer): Buffer[] {
    const frames: Buffer[] = [];
    const len = chunk.length;
    let pos = 0;
    while (len - pos >= 4) {
      const size = chunk.readInt32BE(pos);
      if (size < 0 || size > this.maxFrameBytes) throw new FrameTooLargeError(size, this.maxFrameBytes, this.limitName);
      pos += 4;
      this.need = size;
      this.held = size > 0 && this.admit !== undefined && !this.admit(size);
      if (this.held || len - pos < size) break;
      frames.push(size === 0 ? EMPTY : chunk.subarray(pos, pos + size));
      pos += size;
      this.need = -1;
    }
    if (pos < len) {
      this.chunks.push(pos === 0 ? chunk : chunk.subarray(pos));
      this.queued = len - pos;
      this.offset = 0;
    }
    return frames;
  }

  private readSize(): number {
    const first = this.chunks[0]!;
    if (first.length - this.offset < 4) return this.take(4).readInt32BE(0);
    const size = first.readInt32BE(this.offset);
    this.skip(4);
    return size;
  }

  private skip(n: number): void {
    this.offset += n;
    this.queued -= n;
    while (this.chunks.length > 0 && this.offset >= this.chunks[0]!.length) {
      this.offset -= this.chunks[0]!.length;
      this.chunks.shift();
    }
  }

  /** Removes and returns the next `n` queued bytes: a slice when they sit in one chunk, else one copy. */
  private take(n: number): Buffer {
    // An empty frame may end exactly where the queued chunks do.
    if (n === 0) return EMPTY;
    const first = this.chunks[0]!;
    if (first.length - this.offset >= n) {
      const out = first.subarray(this.offset, this.offset + n);
      this.skip(n);
      return out;
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.chunks[0]!;
      const k = Math.min(n - filled, c.length - this.offset);
      c.copy(out, filled, this.offset, this.offset + k);
      filled += k;
      this.skip(k);
    }
    return out;
  }
}
