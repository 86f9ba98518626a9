/**
 * A record scanner: walks the records of a batch v2 payload (decompressed) with every check of
 * DefaultRecord.readFrom and DefaultRecordBatch's iterators, and keeps only the current record's fields in
 * its own properties. Nothing is allocated per record (no Record object, no key/value slices, no header
 * strings), so validating a produced batch or searching a stored one for a timestamp costs the varints and
 * nothing else: it is Kafka's `skipKeyValueIterator`, which LogValidator uses for in-place validation.
 *
 *   payload  | len | attr | tsDelta | offDelta | keyLen key | valLen value | hdrCount (hkLen hk hvLen hv)* | len | ...
 *             ^start                                                                                    ^end
 *
 * The checks, and the messages (Kafka's InvalidRecordException texts where it has one):
 *   - recordCount >= 0, and no more records than the payload can hold (7 bytes each at least)
 *   - a varint of at most 5 bytes (fitting 32 bits), a varlong of at most 10 (and below 2^53)
 *   - the record length within the payload, and the fields filling exactly that length
 *   - key, value and header lengths within the record; header count >= 0 and <= the bytes left;
 *     header key length >= 0 (a null header key is invalid)
 *   - exactly recordCount records: none missing (premature EOF), nothing left after the last
 * An error is an InvalidRecordError carrying `recordIndex`, the index of the record at fault.
 */
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '../compression/index.js';
import { RECORD_BATCH_OVERHEAD, TimestampType } from './batch.js';
import type { RecordBatch } from './batch.js';
import { InvalidRecordError } from './errors.js';
import { MIN_RECORD_SIZE } from './record.js';

/** Whether `b` stands in `payload` at `at` (a header key is short: a loop beats Buffer.compare's argument checks). */
function sameBytes(payload: Buffer, at: number, b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) if (payload[at + i] !== b[i]) return false;
  return true;
}

export class RecordScanner {
  /** Index in the batch of the current record; -1 before the first `next()`. */
  index = -1;
  /** Where the current record starts in the payload (its length varint) and ends. */
  start = 0;
  end = 0;
  attributes = 0;
  timestampDelta = 0;
  offsetDelta = 0;
  /** -1 for a null key or value; the bytes are at keyStart/valueStart of the payload. */
  keyLength = -1;
  keyStart = 0;
  valueLength = -1;
  valueStart = 0;
  headerCount = 0;
  /**
   * A header key to watch for (null: none): per record, how many headers have this key, and where the value
   * of the last one is (-1 for a null value). Compared in place; costs nothing when null.
   */
  watchHeader: Buffer | null = null;
  watchedCount = 0;
  watchedValueStart = 0;
  watchedValueLength = -1;

  private pos = 0;
  private limit = 0;

  /**
   * @param payload the batch's records, decompressed
   * @param count the batch's recordCount
   * @param errorOffsetBase added to payload positions in error offsets (61 when the payload is the batch's own bytes)
   */
  constructor(
    readonly payload: Buffer,
    readonly count: number,
    private readonly errorOffsetBase = 0,
  ) {
    if (count < 0) throw new InvalidRecordError(`Found invalid record count ${count} in magic v2 batch`);
    if (count > Math.floor(payload.length / MIN_RECORD_SIZE)) {
      throw new InvalidRecordError(
        `Incorrect declared batch size, premature EOF reached: ${count} records cannot fit in ${payload.length} bytes`,
        { recordIndex: Math.floor(payload.length / MIN_RECORD_SIZE) },
      );
    }
    if (count === 0 && payload.length > 0) {
      throw new InvalidRecordError('Incorrect declared batch size, records still remaining in file', { recordIndex: 0 });
    }
  }

  /** Moves to the next record; false after the last. Throws InvalidRecordError at a malformed record. */
  next(): boolean {
    const i = this.index + 1;
    if (i >= this.count) return false;
    this.index = i;
    this.readRecord();
    if (i === this.count - 1 && this.pos !== this.payload.length) {
      this.invalid('Incorrect declared batch size, records still remaining in file', this.pos, i + 1);
    }
    return true;
  }

  /** Scans the remaining records, checking them all. Returns the number of records. */
  skipAll(): number {
    while (this.next());
    return this.count;
  }

  private invalid(message: string, at: number, recordIndex = this.index): never {
    throw new InvalidRecordError(message, { offset: this.errorOffsetBase + at, recordIndex });
  }

  /** Zigzag varint of at most 5 bytes in [pos, limit), as Kafka's ByteUtils.readVarint. */
  private varint(limit: number): number {
    const buf = this.payload;
    const start = this.pos;
    if (start < limit) {
      const first = buf[start]!;
      if (first < 0x80) {
        // One byte: most lengths, deltas and counts.
        this.pos = start + 1;
        return (first >>> 1) ^ -(first & 1);
      }
    }
    let p = start;
    let result = 0;
    for (let shift = 0; ; shift += 7) {
      if (p >= limit) this.invalid('Found invalid record structure: truncated varint', start);
      const b = buf[p++]!;
      if (shift === 28) {
        if (b > 0x0f) this.invalid('Found invalid record structure: varint is too long', start);
        result += b * 0x10000000;
        break;
      }
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        result >>>= 0;
        break;
      }
    }
    this.pos = p;
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
  }

  /** Zigzag varlong of at most 10 bytes, as ByteUtils.readVarlong; a value past 2^53 is refused. */
  private varlong(limit: number): number {
    const buf = this.payload;
    const start = this.pos;
    if (start < limit) {
      const first = buf[start]!;
      if (first < 0x80) {
        this.pos = start + 1;
        return (first >>> 1) ^ -(first & 1);
      }
    }
    let p = start;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (p >= limit) this.invalid('Found invalid record structure: truncated varlong', start);
      const b = buf[p++]!;
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) {
        if (result > Number.MAX_SAFE_INTEGER) this.invalid('Found invalid record structure: varlong beyond 2^53', start);
        this.pos = p;
        return result % 2 === 0 ? result / 2 : -(result + 1) / 2;
      }
      scale *= 128;
    }
    return this.invalid('Found invalid record structure: varlong is too long', start);
  }

  /** Skips a nullable byte field; returns its length (-1 for null). */
  private field(what: string): number {
    const at = this.pos;
    const len = this.varint(this.limit);
    if (len < 0) return -1;
    if (len > this.limit - this.pos) this.invalid(`Found invalid record structure: ${what} of ${len} bytes overruns the record`, at);
    this.pos += len;
    return len;
  }

  private readRecord(): void {
    const payloadEnd = this.payload.length;
    const recordStart = this.pos;
    this.start = recordStart;
    if (recordStart >= payloadEnd) this.invalid('Incorrect declared batch size, premature EOF reached', recordStart);
    const size = this.varint(payloadEnd);
    const bodyStart = this.pos;
    if (size < 0 || size > payloadEnd - bodyStart) {
      this.invalid(
        `Invalid record size: expected ${size} bytes in record payload, but instead the buffer has only ${
          payloadEnd - bodyStart
        } remaining bytes.`,
        recordStart,
      );
    }
    if (size === 0) this.invalid('Found invalid record structure: empty record', recordStart);
    const limit = bodyStart + size;
    this.limit = limit;
    this.attributes = this.payload[this.pos++]!;
    this.timestampDelta = this.varlong(limit);
    this.offsetDelta = this.varint(limit);
    this.keyLength = this.field('key');
    this.keyStart = this.pos - Math.max(0, this.keyLength);
    this.valueLength = this.field('value');
    this.valueStart = this.pos - Math.max(0, this.valueLength);
    const countAt = this.pos;
    const headerCount = this.varint(limit);
    if (headerCount < 0) this.invalid(`Found invalid number of record headers ${headerCount}`, countAt);
    if (headerCount > limit - this.pos) {
      this.invalid(`Found invalid number of record headers. ${headerCount} is larger than the remaining size of the buffer`, countAt);
    }
    this.headerCount = headerCount;
    const watch = this.watchHeader;
    this.watchedCount = 0;
    for (let h = 0; h < headerCount; h++) {
      const keyAt = this.pos;
      const keyLen = this.varint(limit);
      if (keyLen < 0) this.invalid(`Invalid negative header key size ${keyLen}`, keyAt);
      if (keyLen > limit - this.pos) this.invalid('Found invalid record structure: header key overruns the record', keyAt);
      const watched = watch !== null && keyLen === watch.length && sameBytes(this.payload, this.pos, watch);
      this.pos += keyLen;
      const valueLen = this.field('header value');
      if (watched) {
        this.watchedCount++;
        this.watchedValueLength = valueLen;
        this.watchedValueStart = this.pos - Math.max(0, valueLen);
      }
    }
    if (this.pos !== limit) {
      this.invalid(
        `Invalid record size: expected to read ${size} bytes in record payload, but instead read ${this.pos - bodyStart}`,
        recordStart,
      );
    }
    this.end = limit;
  }
}

export interface TimestampAndOffsetOfRecord {
  timestamp: number;
  offset: number;
}

/**
 * The first record of a stored batch whose timestamp and absolute offset `match` accepts, or null: what
 * ListOffsets by timestamp reads (Kafka's searchForTimestamp). The payload is decompressed within
 * `maxDecompressedBytes` (default: the read limit, DEFAULT_MAX_DECOMPRESSED_BYTES) and scanned without an
 * object per record. Throws a RecordsError when the records do not decode (a batch stored by a broker that
 * did not validate records): the caller decides to skip it.
 */
export async function findStoredRecord(
  batch: RecordBatch,
  match: (timestamp: number, offset: number) => boolean,
  maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES,
): Promise<TimestampAndOffsetOfRecord | null> {
  const payload = await batch.recordsPayload({ maxOutputBytes: maxDecompressedBytes });
  const scanner = new RecordScanner(payload, batch.recordCount, batch.isCompressed ? 0 : RECORD_BATCH_OVERHEAD);
  const baseOffset = batch.baseOffsetNumber;
  const baseTimestamp = batch.baseTimestamp;
  const logAppendTime = batch.timestampType === TimestampType.LOG_APPEND_TIME ? batch.maxTimestamp : null;
  while (scanner.next()) {
    const timestamp = logAppendTime ?? baseTimestamp + scanner.timestampDelta;
    const offset = baseOffset + scanner.offsetDelta;
    if (match(timestamp, offset)) return { timestamp, offset };
  }
  return null;
}
