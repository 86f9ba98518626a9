/**
 * Copying fetched batches into a mirror partition's log at the offsets they have in the source: the core of an
 * offset-preserving mirror (Confluent Cluster Linking's mirror topics; Kafka's own follower, appendAsFollower).
 *
 *   source fetch (READ_UNCOMMITTED, from the log end offset here)
 *     [b@100..104][b@105..105 control][b@109..120]...[partial]
 *        │ every complete batch: CRC checked, kept byte for byte (partitionLeaderEpoch excepted, not in the CRC)
 *        ▼
 *   log.append(batch, { baseOffset: its own, mirrored: true, expectedLogEnd })   offsets skipped (compaction)
 *        │                                                                        stay gaps
 *        │ not awaited: the next fetch and the next copy go out while these become durable (up to two rounds
 *        │ in flight per partition, link-replicator.ts); each append names where the log must end before it
 *
 * The log end offset is the mirror's cursor: it is durable with the data, so a restart, a SIGKILL or a move to
 * another broker resumes exactly after the last batch appended (no record twice, none missed). Control batches
 * (transaction markers) are copied like the others, and the log's producer state applies them as it applies its
 * own: the last stable offset and the aborted-transaction index follow the source's.
 */
import { MAGIC_V2 } from '../../protocol/records/batch.js';
import { splitRecordBatches } from '../../protocol/records/split.js';
import type { PartitionLog } from '../log/index.js';

/** A fetch answer that cannot be mirrored: the partition stops until it changes (see `reason`). */
export class MirrorDivergedError extends Error {
  readonly code = 'LL_ERR_MIRROR_DIVERGED';
}

export interface CopyResult {
  readonly batches: number;
  readonly records: number;
  readonly bytes: number;
  /** The largest producer id among the batches copied, -1n for none. */
  readonly maxProducerId: bigint;
  /** The offset after the last batch issued: where the next fetch starts, before `durable` resolves. */
  readonly next: number;
  /** Resolves once every batch issued is durable; rejects as the log's append does. */
  readonly durable: Promise<void>;
}

/**
 * Issues the complete batches of `records` (a fetch answer's record set) that lie at or after `from` (the log end
 * offset, or where the appends still in flight end), each at its own offset, without waiting for them: the next
 * fetch can go out while they become durable. A batch that straddles `from` cannot come from the same log
 * (MirrorDivergedError); a legacy (v0/v1) entry is refused too: Kafka 4 stores none, and copying one would need a
 * conversion the mirror does not make. The log refuses an append below its end, so a batch can never be stored twice.
 */
export function copyBatches(log: PartitionLog, records: Buffer, from = log.logEndOffset): CopyResult {
  const batches = splitRecordBatches(records, { allowPartialTail: true });
  let next = from;
  const appends: Promise<unknown>[] = [];
  let count = 0;
  let recordCount = 0;
  let bytes = 0;
  let maxProducerId = -1n;
  for (const b of batches) {
    if (b.magic !== MAGIC_V2) throw new MirrorDivergedError(`a message format v${b.magic} entry at offset ${b.baseOffset} cannot be mirrored`);
    const last = b.lastOffsetNumber;
    if (last < next) continue;
    const base = b.baseOffsetNumber;
    if (base < next) throw new MirrorDivergedError(`the source's batch ${base}..${last} overlaps this log, which ends at ${next}`);
    b.validate();
    if (b.hasProducerId && b.producerId > maxProducerId) maxProducerId = b.producerId;
    // The batch is appended as the slice of the fetch answer it is: the log writes it by reference, and the
    // store's tail cache keeps it so or copies it out, by what it would pin of the answer (src/ledger/tail-cache.ts).
    // expectedLogEnd: if a batch before this one (of this copy or of a round still in flight) is not stored, the
    // log does not end where this one expects, and it fails rather than leave that batch's offsets a gap.
    // crcChecked: validate() above checked the CRC, and the append changes nothing it covers.
    appends.push(log.append(b.buffer, { baseOffset: base, mirrored: true, expectedLogEnd: next, crcChecked: true }));
    next = last + 1;
    count++;
    recordCount += b.isControl ? 0 : b.recordCount;
    bytes += b.buffer.length;
  }
  const durable = Promise.all(appends).then(() => undefined);
  // Awaited by the next round; until then a failure must not count as unhandled.
  durable.catch(() => undefined);
  return { batches: count, records: recordCount, bytes, maxProducerId, next, durable };
}

/**
 * Follows the source's log start offset (DeleteRecords, retention): records below it are deleted here too, as far
 * as this log has them. Resolves with the log start offset here afterwards.
 */
export async function followLogStart(log: PartitionLog, sourceLogStartOffset: number): Promise<number> {
  const target = Math.min(sourceLogStartOffset, log.highWatermark);
  if (target > log.logStartOffset) await log.deleteRecords(target);
  return log.logStartOffset;
}

/**
 * Ends the transactions the source's producers left open in this partition with ABORT markers (a promoted or
 * failed-over mirror has no coordinator for them: they would hold the last stable offset forever). Returns how
 * many it ended.
 */
export async function abortOpenTransactions(log: PartitionLog): Promise<number> {
  let n = 0;
  for (const e of log.producers.entries()) {
    if (e.currentTxnFirstOffset < 0) continue;
    await log.writeTxnMarker({ producerId: e.producerId, producerEpoch: e.epoch, coordinatorEpoch: Math.max(e.coordinatorEpoch, 0), commit: false });
    n++;
  }
  return n;
}

/** The largest producer id the partition's producer state knows, -1n for none. */
export function maxKnownProducerId(log: PartitionLog): bigint {
  let max = -1n;
  for (const e of log.producers.entries()) if (e.producerId > max) max = e.producerId;
  return max;
}
