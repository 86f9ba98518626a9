/**
 * A growable writer that produces a list of chunks rather than one buffer, so large byte fields (record
 * batches in Produce and Fetch) are referenced, not copied:
 *
 *   scratch: [ header fields ... | len ]  [ batch bytes (caller's Buffer) ]  [ more fields ... ]
 *            └──── chunk 0 ─────────┘    └──────── chunk 1 ──────────┘     └── chunk 2 ──┘
 *
 * Small fields go into a scratch buffer that doubles as needed; a byte field of at least
 * `ZERO_COPY_THRESHOLD` bytes closes the current scratch chunk and is appended by reference. `chunks()`
 * hands the list to `socket.write`/`writev`; `toBuffer()` joins them when one buffer is wanted.
 */
import { EncodeError } from '../errors.js';
import { uuidToBytes } from './uuid.js';

const ZERO_COPY_THRESHOLD = 1024;

/**
 * The value of a `records` field: one buffer, or several written back to back (a Fetch response built from
 * stored batches without joining them). Decoders always produce a single Buffer.
 */
export type Records = Buffer | readonly Buffer[];

function recordsLength(r: Records): number {
  if (Buffer.isBuffer(r)) return r.length;
  let n = 0;
  for (const b of r) n += b.length;
  return n;
}

export class Writer {
  private buf: Buffer;
  private pos = 0;
  /** Start of the current scratch chunk inside `buf`. */
  private chunkStart = 0;
  private readonly done: Buffer[] = [];
  private doneBytes = 0;

  constructor(initialCapacity = 256) {
    this.buf = Buffer.allocUnsafe(initialCapacity);
  }

  /** Total bytes written so far. */
  get length(): number {
    return this.doneBytes + this.pos - this.chunkStart;
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    // Close nothing: the scratch region [chunkStart, pos) moves to a larger buffer.
    const used = this.pos - this.chunkStart;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, used + n, 256));
    this.buf.copy(next, 0, this.chunkStart, this.pos);
    this.buf = next;
    this.chunkStart = 0;
    this.pos = used;
  }

  int8(v: number): void {
    this.ensure(1);
    this.buf.writeInt8(v, this.pos);
    this.pos += 1;
  }

  uint8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  bool(v: boolean): void {
    this.uint8(v ? 1 : 0);
  }

  int16(v: number): void {
    this.ensure(2);
    this.buf.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.buf.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.buf.writeBigInt64BE(v, this.pos);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  uuid(v: string): void {
    this.ensure(16);
    uuidToBytes(v).copy(this.buf, this.pos);
    this.pos += 16;
  }

  /** Unsigned LEB128 varint, 0 ≤ v < 2^32. */
  uvarint(v: number): void {
    this.ensure(5);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v & 0x7f) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.pos++] = v;
  }

  /** Zigzag signed 32-bit varint. */
  varint(v: number): void {
    this.uvarint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  /**
   * Zigzag signed varlong. Values are numbers, so the range is what zigzag keeps a safe integer, the same range
   * Reader.varlong accepts: -2^52 ≤ v < 2^52, whose zigzag form is at most 2^53 - 1 (record timestamp and offset
   * deltas are far inside it).
   */
  varlong(v: number): void {
    if (!Number.isInteger(v) || v < -(2 ** 52) || v >= 2 ** 52) throw new EncodeError(`varlong ${v} outside [-2^52, 2^52)`);
    let u = v >= 0 ? v * 2 : -v * 2 - 1;
    this.ensure(10);
    while (u >= 0x80) {
      this.buf[this.pos++] = (u % 128) | 0x80;
      u = Math.floor(u / 128);
    }
    this.buf[this.pos++] = u;
  }

  /** Appends bytes: copied when small, referenced when large. */
  raw(b: Buffer): void {
    if (b.length >= ZERO_COPY_THRESHOLD) {
      this.flushScratch();
      this.done.push(b);
      this.doneBytes += b.length;
      return;
    }
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }

  private utf8(s: string, len: number): void {
    this.ensure(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }

  string(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.int16(n);
    this.utf8(s, n);
  }

  nullableString(s: string | null): void {
    if (s === null) return this.int16(-1);
    this.string(s);
  }

  compactString(s: string): void {
    const n = Buffer.byteLength(s, 'utf8');
    this.uvarint(n + 1);
    this.utf8(s, n);
  }

  compactNullableString(s: string | null): void {
    if (s === null) return this.uvarint(0);
    this.compactString(s);
  }

  bytes(b: Buffer): void {
    this.int32(b.length);
    this.raw(b);
  }

  nullableBytes(b: Buffer | null): void {
    if (b === null) return this.int32(-1);
    this.bytes(b);
  }

  compactBytes(b: Buffer): void {
    this.uvarint(b.length + 1);
    this.raw(b);
  }

  compactNullableBytes(b: Buffer | null): void {
    if (b === null) return this.uvarint(0);
    this.compactBytes(b);
  }

  records(r: Records): void {
    this.int32(recordsLength(r));
    this.rawRecords(r);
  }

  nullableRecords(r: Records | null): void {
    if (r === null) return this.int32(-1);
    this.records(r);
  }

  compactRecords(r: Records): void {
    this.uvarint(recordsLength(r) + 1);
    this.rawRecords(r);
  }

  compactNullableRecords(r: Records | null): void {
    if (r === null) return this.uvarint(0);
    this.compactRecords(r);
  }

  private rawRecords(r: Records): void {
    if (Buffer.isBuffer(r)) this.raw(r);
    else for (const b of r) this.raw(b);
  }

  arrayLength(n: number): void {
    this.int32(n);
  }

  compactArrayLength(n: number): void {
    this.uvarint(n + 1);
  }

  private flushScratch(): void {
    if (this.pos > this.chunkStart) {
      this.done.push(this.buf.subarray(this.chunkStart, this.pos));
      this.doneBytes += this.pos - this.chunkStart;
      this.chunkStart = this.pos;
    }
  }

  /**
   * The written bytes as chunks. The writer may be reused afterwards only for more writes whose chunks
   * are taken again; chunks already handed out stay valid.
   */
  chunks(): Buffer[] {
    this.flushScratch();
    return this.done.slice();
  }

  toBuffer(): Buffer {
    const chunks = this.chunks();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.doneBytes);
  }
}
