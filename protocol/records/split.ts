/**
 * Splitting a buffer of concatenated entries (a Produce request's `records`, a Fetch response's `records`,
 * a stored run of batches) into batch views, without copying.
 *
 *   [baseOffset int64 | length int32 | ... length bytes ...][baseOffset | length | ...]...
 *                                      ^ magic at byte 16 of every entry, batch v2 or legacy message alike
 *
 * Framing follows Kafka's ByteBufferLogInputStream.nextBatchSize: an entry whose length is below the smallest
 * legacy message (14 bytes) or whose magic is not 0-2 is corrupt, whatever follows. An entry that extends past
 * the end of the buffer is a truncated tail: normal at the end of a Fetch response (the broker cuts at the
 * size limit and clients drop the partial batch), an error anywhere a whole batch is required.
 */
import { LOG_OVERHEAD, MAGIC_V2, RECORD_BATCH_OVERHEAD, RecordBatch } from './batch.js';
import { CorruptRecordError, LegacyMessageFormatError, RecordTooLargeError } from './errors.js';

/** Smallest legacy message v0 after its length field (Kafka's LegacyRecord.RECORD_OVERHEAD_V0). */
export const MIN_ENTRY_SIZE = 14;
/** Bytes needed to read an entry's length and magic. */
const HEADER_UP_TO_MAGIC = 17;

export interface FrameOptions {
  /** Largest entry accepted, LOG_OVERHEAD included (the topic's max.message.bytes); default unlimited. */
  maxBatchSize?: number;
}

export interface SplitOptions extends FrameOptions {
  /** Accept (and drop) an incomplete entry at the end, as a Fetch response reader does. Default false. */
  allowPartialTail?: boolean;
  /** Accept legacy entries (magic 0/1) by skipping them instead of throwing LegacyMessageFormatError. */
  skipLegacy?: boolean;
}

export interface EntrySpan {
  start: number;
  /** Exclusive end: start + LOG_OVERHEAD + length. */
  end: number;
  magic: number;
}

/**
 * Frames the entry at `pos`. Returns null when the buffer ends before the entry does; throws
 * CorruptRecordError for a length or magic Kafka would reject and RecordTooLargeError above `maxBatchSize`.
 * Writes nothing and allocates only the returned span.
 */
export function frameEntryAt(buf: Buffer, pos: number, options: FrameOptions = {}): EntrySpan | null {
  const remaining = buf.length - pos;
  if (remaining < LOG_OVERHEAD) return null;
  const length = buf.readInt32BE(pos + 8);
  if (length < MIN_ENTRY_SIZE) {
    throw new CorruptRecordError(`Record size ${length} is less than the minimum record overhead (${MIN_ENTRY_SIZE})`, {
      offset: pos + 8,
    });
  }
  const size = LOG_OVERHEAD + length;
  if (options.maxBatchSize !== undefined && size > options.maxBatchSize) {
    throw new RecordTooLargeError(
      `The record batch size is ${size} bytes which exceeds the maximum configured value of ${options.maxBatchSize}`,
      { offset: pos },
    );
  }
  if (remaining < HEADER_UP_TO_MAGIC) return null;
  const magic = buf.readInt8(pos + 16);
  if (magic < 0 || magic > MAGIC_V2) {
    throw new CorruptRecordError(`Invalid magic found in record: ${magic}`, { offset: pos + 16 });
  }
  if (magic === MAGIC_V2 && size < RECORD_BATCH_OVERHEAD) {
    throw new CorruptRecordError(
      `Record batch is corrupt (the size ${size} is smaller than the minimum allowed overhead ${RECORD_BATCH_OVERHEAD})`,
      { offset: pos + 8 },
    );
  }
  if (remaining < size) return null;
  return { start: pos, end: pos + size, magic };
}

/**
 * The batches of `buf`, as views sharing its memory. Checks framing only; call `validate()` on each batch
 * for its CRC. A legacy entry throws LegacyMessageFormatError (INVALID_RECORD), unless `skipLegacy`.
 */
export function splitRecordBatches(buf: Buffer, options: SplitOptions = {}): RecordBatch[] {
  const batches: RecordBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const span = frameEntryAt(buf, pos, options);
    if (span === null) {
      if (options.allowPartialTail) break;
      throw new CorruptRecordError(
        `Truncated record batch: ${buf.length - pos} bytes left at the end, fewer than the entry declares`,
        { offset: pos },
      );
    }
    if (span.magic !== MAGIC_V2) {
      if (!options.skipLegacy) {
        throw new LegacyMessageFormatError(span.magic, `Message format v${span.magic} found where record batches v2 are required`, {
          offset: pos,
        });
      }
    } else {
      batches.push(RecordBatch.unchecked(buf.subarray(span.start, span.end)));
    }
    pos = span.end;
  }
  return batches;
}

/** Bytes of `buf` taken by complete entries (the rest is a partial tail). Throws on corrupt framing. */
export function completeEntriesLength(buf: Buffer, options: FrameOptions = {}): number {
  let pos = 0;
  while (pos < buf.length) {
    const span = frameEntryAt(buf, pos, options);
    if (span === null) break;
    pos = span.end;
  }
  return pos;
}
