/**
 * Records inside a batch v2 (Kafka's DefaultRecord), all varints zigzag-encoded:
 *
 *   length: varint            bytes that follow, up to the end of the headers
 *   attributes: int8          unused, 0
 *   timestampDelta: varlong   from the batch's baseTimestamp
 *   offsetDelta: varint       from the batch's baseOffset
 *   keyLength: varint, key    -1 (any negative) = null
 *   valueLength: varint, value
 *   headerCount: varint
 *     headerKeyLength: varint, headerKey (UTF-8; a negative length is invalid)
 *     headerValueLength: varint, headerValue (-1 = null)
 *
 * Decoding follows DefaultRecord.readFrom and DefaultRecordBatch.RecordIterator, with their checks and
 * InvalidRecordException messages: a record whose fields do not fill its length exactly, a negative header
 * count or one larger than the bytes left, a payload that ends before `recordCount` records or has bytes left
 * after them. Keys, values and header values are slices of the payload, not copies.
 */
import { InvalidRecordError } from './errors.js';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface Record {
  /** Absolute offset: the batch's baseOffset + offsetDelta (a Number: exact below 2^53). */
  offset: number;
  offsetDelta: number;
  /** CreateTime: baseTimestamp + timestampDelta; LogAppendTime: the batch's maxTimestamp (as Kafka). */
  timestamp: number;
  timestampDelta: number;
  /** The record's attributes byte (unused by Kafka so far). */
  attributes: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
  /** Bytes the record takes in the payload, its length varint included. */
  sizeInBytes: number;
}

export interface RecordDecodeContext {
  baseOffset: number;
  baseTimestamp: number;
  /** Set for LogAppendTime batches: every record's timestamp. */
  logAppendTime: number | null;
  /** Added to payload positions in error offsets (e.g. 61 for an uncompressed batch, to count from its start). */
  errorOffsetBase?: number;
}

/** The smallest record: length, attributes, timestampDelta, offsetDelta, key, value and header count, 1 byte each. */
export const MIN_RECORD_SIZE = 7;

const NO_HEADERS: RecordHeader[] = [];

/**
 * Iterates the `count` records of a payload. Throws InvalidRecordError (never a RangeError) at the first
 * malformed record; after the last record, checks that nothing is left.
 */
export class RecordIterator implements IterableIterator<Record> {
  private pos: number;
  private read = 0;
  private readonly end: number;
  private readonly errorBase: number;

  constructor(
    private readonly payload: Buffer,
    private readonly count: number,
    private readonly context: RecordDecodeContext,
  ) {
    this.pos = 0;
    this.end = payload.length;
    this.errorBase = context.errorOffsetBase ?? 0;
    if (count < 0) throw new InvalidRecordError(`Found invalid record count ${count} in magic v2 batch`);
    if (count > Math.floor(payload.length / MIN_RECORD_SIZE)) {
      throw new InvalidRecordError(
        `Incorrect declared batch size, premature EOF reached: ${count} records cannot fit in ${payload.length} bytes`,
      );
    }
    if (count === 0 && payload.length > 0) {
      throw new InvalidRecordError('Incorrect declared batch size, records still remaining in file');
    }
  }

  [Symbol.iterator](): IterableIterator<Record> {
    return this;
  }

  next(): IteratorResult<Record> {
    if (this.read >= this.count) return { done: true, value: undefined };
    const record = this.readRecord();
    this.read++;
    if (this.read === this.count && this.pos !== this.end) {
      throw new InvalidRecordError('Incorrect declared batch size, records still remaining in file', {
        offset: this.errorBase + this.pos,
      });
    }
    return { done: false, value: record };
  }

  /** Decodes all remaining records into an array. */
  toArray(): Record[] {
    const out: Record[] = [];
    for (let r = this.next(); !r.done; r = this.next()) out.push(r.value);
    return out;
  }

  private invalid(message: string, at: number): never {
    throw new InvalidRecordError(message, { offset: this.errorBase + at });
  }

  /** Unsigned LEB128 of at most 5 bytes within [pos, limit); as Kafka's readVarint. */
  private uvarint(limit: number): number {
    const buf = this.payload;
    let result = 0;
    let shift = 0;
    const start = this.pos;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= limit) this.invalid('Found invalid record structure: truncated varint', start);
      const b = buf[this.pos++]!;
      if (i === 4 && b > 0x0f) this.invalid('Found invalid record structure: varint is too long', start);
      result += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return result;
      shift += 7;
    }
    return this.invalid('Found invalid record structure: varint is too long', start);
  }

  private varint(limit: number): number {
    const u = this.uvarint(limit);
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  private varlong(limit: number): number {
    const buf = this.payload;
    let result = 0;
    const start = this.pos;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= limit) this.invalid('Found invalid record structure: truncated varlong', start);
      const b = buf[this.pos++]!;
      result += (b & 0x7f) * 2 ** (7 * i);
      if ((b & 0x80) === 0) {
        if (result > Number.MAX_SAFE_INTEGER) this.invalid('Found invalid record structure: varlong beyond 2^53', start);
        return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
      }
    }
    return this.invalid('Found invalid record structure: varlong is too long', start);
  }

  private bytes(limit: number, what: string): Buffer | null {
    const at = this.pos;
    const len = this.varint(limit);
    if (len < 0) return null;
    if (len > limit - this.pos) this.invalid(`Found invalid record structure: ${what} of ${len} bytes overruns the record`, at);
    const b = this.payload.subarray(this.pos, this.pos + len);
    this.pos += len;
    return b;
  }

  private readRecord(): Record {
    const recordStart = this.pos;
    if (recordStart >= this.end) this.invalid('Incorrect declared batch size, premature EOF reached', recordStart);
    const size = this.varint(this.end);
    const bodyStart = this.pos;
    if (size < 0 || size > this.end - bodyStart) {
      this.invalid(
        `Invalid record size: expected ${size} bytes in record payload, but instead the buffer has only ${
          this.end - bodyStart
        } remaining bytes.`,
        recordStart,
      );
    }
    const limit = bodyStart + size;
    if (size === 0) this.invalid('Found invalid record structure: empty record', recordStart);
    const attributes = this.payload[this.pos++]!;
    const timestampDelta = this.varlong(limit);
    const offsetDelta = this.varint(limit);
    const key = this.bytes(limit, 'key');
    const value = this.bytes(limit, 'value');
    const countAt = this.pos;
    const headerCount = this.varint(limit);
    if (headerCount < 0) this.invalid(`Found invalid number of record headers ${headerCount}`, countAt);
    if (headerCount > limit - this.pos) {
      this.invalid(
        `Found invalid number of record headers. ${headerCount} is larger than the remaining size of the buffer`,
        countAt,
      );
    }
    let headers = NO_HEADERS;
    if (headerCount > 0) {
      headers = new Array<RecordHeader>(headerCount);
      for (let h = 0; h < headerCount; h++) {
        const keyAt = this.pos;
        const keyLen = this.varint(limit);
        if (keyLen < 0) this.invalid(`Invalid negative header key size ${keyLen}`, keyAt);
        if (keyLen > limit - this.pos) this.invalid('Found invalid record structure: header key overruns the record', keyAt);
        const hkey = this.payload.toString('utf8', this.pos, this.pos + keyLen);
        this.pos += keyLen;
        headers[h] = { key: hkey, value: this.bytes(limit, 'header value') };
      }
    }
    if (this.pos !== limit) {
      this.invalid(
        `Invalid record size: expected to read ${size} bytes in record payload, but instead read ${this.pos - bodyStart}`,
        recordStart,
      );
    }
    const ctx = this.context;
    return {
      offset: ctx.baseOffset + offsetDelta,
      offsetDelta,
      timestamp: ctx.logAppendTime ?? ctx.baseTimestamp + timestampDelta,
      timestampDelta,
      attributes: attributes << 24 >> 24,
      key,
      value,
      headers,
      sizeInBytes: limit - recordStart,
    };
  }
}
