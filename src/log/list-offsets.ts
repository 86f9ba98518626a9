/**
 * Lookups by time and epoch on a PartitionLog: ListOffsets (Kafka's UnifiedLog.fetchOffsetByTimestamp) and
 * OffsetsForLeaderEpoch (LeaderEpochFileCache.endOffsetFor), over the in-memory index (offset-index.ts).
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import { isRecordsError } from '../../protocol/records/errors.js';
import { findStoredRecord, type TimestampAndOffsetOfRecord } from '../../protocol/records/scan.js';
import type { LedgerEntry } from '../ledger/types.js';
import { LogCorruptError, LogInvalidArgumentError, LogStorageError } from './errors.js';
import type { LogCore } from './log-core.js';
import type { BatchPosition } from './offset-index.js';
import { ListOffsetsTimestamp, type EpochEndOffset, type IsolationLevel, type TimestampAndOffset } from './types.js';

export class OffsetLookups {
  /** Stored batches whose records did not decode, reported and not decoded again (ledgerId:entryId; at most 1024). */
  readonly undecodable = new Set<string>();

  constructor(private readonly core: LogCore) {}

  /**
   * ListOffsets for one partition (Kafka's UnifiedLog.fetchOffsetByTimestamp plus Partition's isolation
   * bound). `timestamp` is a time in ms or one of ListOffsetsTimestamp:
   * - LATEST (-1): the high watermark (read_uncommitted) or last stable offset (read_committed);
   * - EARLIEST (-2) and EARLIEST_LOCAL (-4): the log start offset;
   * - MAX_TIMESTAMP (-3, KIP-734): the first record carrying the largest timestamp in the log;
   * - LATEST_TIERED (-5, KIP-1005): -1, since no ledger is tiered;
   * - t ≥ 0: the earliest offset whose record timestamp is ≥ t, from the log start offset on.
   * Returns null where Kafka answers offset -1 / timestamp -1 (no such record below the isolation bound).
   */
  async listOffsets(timestamp: number, options: { isolation?: IsolationLevel } = {}): Promise<TimestampAndOffset | null> {
    const unavailable = this.core.readError();
    if (unavailable) throw unavailable;
    const bound = options.isolation === 'read_committed' ? this.core.lastStableOffset : this.core.highWatermark;
    switch (timestamp) {
      case ListOffsetsTimestamp.LATEST:
        return { timestamp: -1, offset: bound, leaderEpoch: this.core.head.epoch };
      case ListOffsetsTimestamp.EARLIEST:
      case ListOffsetsTimestamp.EARLIEST_LOCAL:
        return { timestamp: -1, offset: this.core.logStartOffset, leaderEpoch: this.epochForOffset(this.core.logStartOffset) };
      case ListOffsetsTimestamp.LATEST_TIERED:
        return { timestamp: -1, offset: -1, leaderEpoch: -1 };
      case ListOffsetsTimestamp.MAX_TIMESTAMP: {
        const found = await this.maxTimestampRecord();
        return found && found.offset < bound ? found : null;
      }
      default: {
        if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
          throw new LogInvalidArgumentError(`unsupported ListOffsets timestamp ${timestamp}`, { partition: this.core.name });
        }
        const found = await this.offsetForTimestamp(timestamp);
        return found && found.offset < bound ? found : null;
      }
    }
  }

  /** Kafka's searchForTimestamp: first batch with maxTimestamp ≥ t, then its first record with timestamp ≥ t. */
  async offsetForTimestamp(timestamp: number): Promise<TimestampAndOffset | null> {
    let from = this.core.logStartOffset;
    for (;;) {
      const pos = this.core.index.findByTimestamp(timestamp, from);
      if (!pos) return null;
      const batch = await this.readBatchAt(pos);
      const startAt = Math.max(from, this.core.logStartOffset);
      const found = await this.findRecord(batch, pos, (ts, offset) => ts >= timestamp && offset >= startAt);
      if (found) return { timestamp: found.timestamp, offset: found.offset, leaderEpoch: epochOrUnknown(batch) };
      // Its records at or above the target all lie below the log start offset: look further.
      from = pos.ledger.lastOffsetAt(pos.entryId) + 1;
    }
  }

  /** Kafka's MAX_TIMESTAMP: the batch with the largest maxTimestamp, then its first record with that timestamp. */
  async maxTimestampRecord(): Promise<TimestampAndOffset | null> {
    const pos = this.core.index.findMaxTimestamp();
    if (!pos) return null;
    const batch = await this.readBatchAt(pos);
    const max = batch.maxTimestamp;
    const found = await this.findRecord(batch, pos, (ts) => ts === max);
    // A batch whose records do not decode answers with its first offset: the offsets are the header's.
    if (found === undefined) return { timestamp: max, offset: batch.baseOffsetNumber, leaderEpoch: epochOrUnknown(batch) };
    return found && { timestamp: max, offset: found.offset, leaderEpoch: epochOrUnknown(batch) };
  }

  /**
   * The first record of a stored batch that `match` accepts, null if none; undefined when the batch's
   * records do not decode (stored by a broker that did not validate records): reported once per batch and
   * skipped, so ListOffsets (and the producer-state rebuild, which uses it) never fails on old bad data.
   */
  async findRecord(batch: RecordBatch, pos: BatchPosition, match: (timestamp: number, offset: number) => boolean): Promise<TimestampAndOffsetOfRecord | null | undefined> {
    // Stored batches never change: one known not to decode is not inflated again (a bomb costs the read limit).
    const key = `${pos.ledger.ledgerId}:${pos.entryId}`;
    if (this.undecodable.has(key)) return undefined;
    try {
      return await findStoredRecord(batch, match);
    } catch (err) {
      if (!isRecordsError(err)) throw err;
      if (this.undecodable.size < 1024) this.undecodable.add(key);
      this.core.logger?.warn(
        { partition: this.core.name, ledgerId: pos.ledger.ledgerId, entryId: pos.entryId, baseOffset: batch.baseOffsetNumber, err: err.message },
        'stored record batch does not decode: ListOffsets skips its records',
      );
      return undefined;
    }
  }

  async readBatchAt(pos: BatchPosition): Promise<RecordBatch> {
    let entries: LedgerEntry[];
    try {
      entries = await this.core.ledgers.read(pos.ledger.ledgerId, pos.entryId, pos.entryId);
    } catch (err) {
      throw new LogStorageError(`cannot read ${this.core.name}`, { partition: this.core.name, ledgerId: pos.ledger.ledgerId }, err);
    }
    if (entries.length !== 1) {
      throw new LogCorruptError(`ledger ${pos.ledger.ledgerId} has no entry ${pos.entryId}`, { partition: this.core.name });
    }
    return RecordBatch.wrap(entries[0]!.data);
  }

  epochForOffset(offset: number): number {
    const i = this.core.index.ledgerIndexFor(offset);
    const ledger = this.core.index.ledgers[Math.max(0, i)];
    return ledger ? ledger.epoch : this.core.head.epoch;
  }

  /**
   * OffsetsForLeaderEpoch (KIP-101/279, Kafka's LeaderEpochFileCache.endOffsetFor): the largest epoch ≤ the
   * requested one and the offset where the next higher epoch starts (the log end offset for the current
   * epoch); {-1, -1} for an undefined epoch or one above every known epoch.
   */
  endOffsetForEpoch(requestedEpoch: number): EpochEndOffset {
    const undefinedResult = { leaderEpoch: -1, endOffset: -1 };
    if (requestedEpoch < 0) return undefinedResult;
    if (requestedEpoch === this.core.head.epoch) return { leaderEpoch: requestedEpoch, endOffset: this.core.nextOffset };
    // Epoch start offsets: the first ledger of each epoch (the first one clipped to the log start offset).
    let floor: { epoch: number; start: number } | null = null;
    for (const l of this.core.index.ledgers) {
      const start = Math.max(l.startOffset, this.core.logStartOffset);
      if (l.epoch > requestedEpoch) {
        return floor ? { leaderEpoch: floor.epoch, endOffset: start } : { leaderEpoch: requestedEpoch, endOffset: start };
      }
      if (!floor || l.epoch > floor.epoch) floor = { epoch: l.epoch, start };
    }
    return undefinedResult;
  }
}

function epochOrUnknown(batch: RecordBatch): number {
  const epoch = batch.partitionLeaderEpoch;
  return epoch >= 0 ? epoch : -1;
}
