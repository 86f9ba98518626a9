/**
 * A sticky-error reader over a Buffer, in the style of franz-go's kbin.Reader.
 *
 * Reading past the end (or reading a length prefix larger than what is left) does not throw: it marks the
 * reader failed at that byte offset and returns a zero value. Callers read a whole message field by field
 * without a try/catch around each read, then call `complete()` once, which throws a single DecodeError
 * naming the offset where the bytes first went wrong.
 *
 * Nothing here allocates in proportion to a length prefix before checking that the bytes are there: a
 * lying length never becomes a large allocation. Byte fields are returned as slices of the input
 * (`subarray`), never copied.
 */
import { DecodeError } from '../errors.js';
import { uuidFromBytes } from './uuid.js';

const EMPTY = Buffer.alloc(0);

export class Reader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;
  /** Offset where decoding first failed, or -1. */
  private failedAt = -1;
  private failure = '';

  constructor(buf: Buffer, start = 0, end = buf.length) {
    this.buf = buf;
    this.pos = start;
    this.end = end;
  }

  get ok(): boolean {
    return this.failedAt < 0;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  /** Marks the reader failed (first failure wins) and moves to the end so later reads return zeros. */
  fail(reason: string, at = this.pos): void {
    if (this.failedAt < 0) {
      this.failedAt = at;
      this.failure = reason;
    }
    this.pos = this.end;
  }

  /**
   * A child reader over the next `n` bytes (a tagged field's value); the parent moves past them. After
   * decoding with the child, `adopt(child)` carries a child failure over to the parent.
   */
  sub(n: number): Reader {
    if (!this.need(n)) return new Reader(this.buf, this.pos, this.pos);
    const child = new Reader(this.buf, this.pos, this.pos + n);
    this.pos += n;
    return child;
  }

  /** Fails this reader if `child` failed or did not consume all of its bytes. */
  adopt(child: Reader): void {
    if (child.failedAt >= 0) this.fail(child.failure, child.failedAt);
    else if (child.pos !== child.end) this.fail(`${child.end - child.pos} unread bytes in tagged field`, child.pos);
  }

  /** Throws the first failure, if any. */
  check(): void {
    if (this.failedAt >= 0) throw new DecodeError(this.failure, this.failedAt);
  }

  /** Throws the first failure, or a DecodeError if bytes are left over. */
  complete(): void {
    this.check();
    if (this.pos !== this.end) throw new DecodeError(`${this.end - this.pos} unexpected trailing bytes`, this.pos);
  }

  private need(n: number): boolean {
    if (this.end - this.pos >= n) return true;
    this.fail(`need ${n} bytes, have ${this.end - this.pos}`);
    return false;
  }

  int8(): number {
    if (!this.need(1)) return 0;
    return this.buf.readInt8(this.pos++);
  }

  uint8(): number {
    if (!this.need(1)) return 0;
    return this.buf[this.pos++]!;
  }

  bool(): boolean {
    return this.int8() !== 0;
  }

  int16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  uint16(): number {
    if (!this.need(2)) return 0;
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  int32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  uint32(): number {
    if (!this.need(4)) return 0;
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  int64(): bigint {
    if (!this.need(8)) return 0n;
    const v = this.buf.readBigInt64BE(this.pos);
    this.pos += 8;
    return v;
  }

  float64(): number {
    if (!this.need(8)) return 0;
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  uuid(): string {
    if (!this.need(16)) return uuidFromBytes(Buffer.alloc(16));
    const v = uuidFromBytes(this.buf.subarray(this.pos, this.pos + 16));
    this.pos += 16;
    return v;
  }

  /** Unsigned LEB128 varint of at most 32 bits (5 bytes), as Kafka's ByteUtils.readUnsignedVarint. */
  uvarint(): number {
    let result = 0;
    let shift = 0;
    const start = this.pos;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) {
        this.fail('truncated varint', start);
        return 0;
      }
      const b = this.buf[this.pos++]!;
      if (i === 4 && b > 0x0f) {
        this.fail('varint exceeds 32 bits', start);
        return 0;
      }
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
    this.fail('varint exceeds 32 bits', start);
    return 0;
  }

  /** Zigzag-encoded signed 32-bit varint (record fields). */
  varint(): number {
    const u = this.uvarint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  /**
   * Zigzag-encoded signed 64-bit varint, returned as a number. Record timestamp deltas and similar fields
   * fit in a double exactly; a zigzag value beyond 2^53 fails the reader rather than losing precision.
   */
  varlong(): number {
    let lo = 0; // low 28 bits
    let hi = 0; // bits above, as a number
    let shift = 0;
    const start = this.pos;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) {
        this.fail('truncated varlong', start);
        return 0;
      }
      const b = this.buf[this.pos++]!;
      if (shift < 28) lo |= (b & 0x7f) << shift;
      else hi += (b & 0x7f) * 2 ** (shift - 28);
      if ((b & 0x80) === 0) {
        const u = hi * 2 ** 28 + lo;
        if (u > Number.MAX_SAFE_INTEGER) {
          this.fail('varlong beyond 2^53', start);
          return 0;
        }
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      shift += 7;
    }
    this.fail('varlong exceeds 64 bits', start);
    return 0;
  }

  /** A slice of the next `n` bytes (no copy), or an empty buffer and a failure when fewer are left. */
  raw(n: number): Buffer {
    if (n < 0) {
      this.fail(`negative length ${n}`);
      return EMPTY;
    }
    if (!this.need(n)) return EMPTY;
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }

  private utf8(n: number): string {
    if (n < 0) {
      this.fail(`negative string length ${n}`);
      return '';
    }
    if (!this.need(n)) return '';
    const s = this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** int16 length + UTF-8. */
  string(): string {
    return this.utf8(this.int16());
  }

  nullableString(): string | null {
    const n = this.int16();
    if (n === -1) return null;
    return this.utf8(n);
  }

  /** unsigned varint (length + 1) + UTF-8. */
  compactString(): string {
    const n = this.uvarint() - 1;
    if (n === -1) {
      this.fail('null compact string where a string is required');
      return '';
    }
    return this.utf8(n);
  }

  compactNullableString(): string | null {
    const n = this.uvarint() - 1;
    if (n === -1) return null;
    return this.utf8(n);
  }

  /** int32 length + bytes. */
  bytes(): Buffer {
    return this.raw(this.int32());
  }

  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n === -1) return null;
    return this.raw(n);
  }

  compactBytes(): Buffer {
    const n = this.uvarint() - 1;
    if (n === -1) {
      this.fail('null compact bytes where bytes are required');
      return EMPTY;
    }
    return this.raw(n);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint() - 1;
    if (n === -1) return null;
    return this.raw(n);
  }

  // `records` fields read like bytes.
  records(): Buffer {
    return this.bytes();
  }

  nullableRecords(): Buffer | null {
    return this.nullableBytes();
  }

  compactRecords(): Buffer {
    return this.compactBytes();
  }

  compactNullableRecords(): Buffer | null {
    return this.compactNullableBytes();
  }

  /**
   * Array length (int32, -1 = null), validated against the bytes left: each element takes at least
   * `minElementSize` bytes, so a count that cannot fit fails here, before any array is allocated.
   */
  arrayLength(minElementSize = 1): number {
    const start = this.pos;
    const n = this.int32();
    return this.checkedCount(n, minElementSize, start);
  }

  /** Compact array length (unsigned varint N+1, 0 = null); -1 for null. */
  compactArrayLength(minElementSize = 1): number {
    const start = this.pos;
    const n = this.uvarint() - 1;
    return this.checkedCount(n, minElementSize, start);
  }

  private checkedCount(n: number, minElementSize: number, start: number): number {
    if (n < -1) {
      this.fail(`negative array length ${n}`, start);
      return 0;
    }
    if (n > 0 && n * minElementSize > this.end - this.pos) {
      this.fail(`array of ${n} elements cannot fit in ${this.end - this.pos} bytes`, start);
      return 0;
    }
    return n;
  }
}
