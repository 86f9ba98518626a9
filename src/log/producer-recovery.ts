/**
 * Loading a partition's idempotent-producer state on open (Kafka's ProducerStateManager.truncateAndReload
 * and UnifiedLog.loadProducerState): the newest usable producer snapshot at or below the durable end
 * (producer-snapshot.ts), then the batches after it replayed from their headers. Without a usable snapshot
 * (none written yet, or none that decodes) the state is replayed, as before snapshots, from the batches
 * written within producer.id.expiration.ms: older producers would have expired anyway.
 *
 * ```
 *   ledgers:   [ 7 sealed ][ 9 sealed ][ 12 sealed, producer snapshot @4100 ][ 15 fenced ][ 18 new ]
 *                                                                        └── replayed ──┘
 * ```
 *
 * The previous owner's open ledger is read by the takeover to index it; the producer headers of its batches
 * are kept then (FencedTail), so the usual tail (the batches after the snapshot at the end of the last
 * sealed ledger) is replayed without reading it again.
 *
 * Stored data that cannot be read never fails the open: an entry too short for a batch header is skipped,
 * a read that fails ends the replay with the state gathered so far (both reported).
 */
import { RECORD_BATCH_OVERHEAD, RecordBatch } from '../../protocol/records/batch.js';
import type { LogCore } from './log-core.js';
import { decodeProducerSnapshot } from './producer-snapshot.js';
import type { EndTxnMarker } from '../../protocol/records/control.js';
import { applyStoredBatch, readTxnMarker, type BatchIdentity } from './producer-state.js';
import type { ReadResult } from './types.js';

const REPLAY_READ_BYTES = 8 * 1024 * 1024;

/** The producer headers of the previous owner's open ledger, gathered while the takeover indexed it. */
export interface FencedTail {
  readonly startOffset: number;
  endOffset: number;
  /** Idempotent data batches and transaction markers, in offset order. */
  readonly batches: Array<{ id: BatchIdentity; baseOffset: number; lastOffset: number; timestamp: number; marker?: EndTxnMarker }>;
  /** Every batch and byte of the ledger. */
  count: number;
  bytes: number;
}

export function collectTailBatch(tail: FencedTail, b: RecordBatch, bytes: number): void {
  tail.count++;
  tail.bytes += bytes;
  if (!b.hasProducerId) return;
  const marker = b.isControl ? readTxnMarker(b) : null;
  if (b.isControl && !marker) return;
  const baseOffset = b.baseOffsetNumber;
  tail.batches.push({
    id: {
      producerId: b.producerId,
      producerEpoch: b.producerEpoch,
      baseSequence: b.baseSequence,
      lastOffsetDelta: b.lastOffsetDelta,
      isTransactional: b.isTransactional,
    },
    baseOffset,
    lastOffset: baseOffset + b.lastOffsetDelta,
    timestamp: b.maxTimestamp,
    ...(marker ? { marker } : {}),
  });
}

/** Loads the state into core.producers; returns where it came from (also in core.producerLoad). */
export async function loadProducerState(core: LogCore, fenced: FencedTail | null = null): Promise<{ snapshotLedgerEnd: number }> {
  const started = performance.now();
  const where = { partition: core.name };
  const hw = core.highWatermark;
  let from = -1;
  let snapshotOffset = -1;
  if (hw > core.logStartOffset || core.index.ledgers.some((l) => l.producerSnapshotLedgerId !== null)) {
    // Newest first; the open ledger (last) has none.
    const ledgers = core.index.ledgers;
    for (let i = ledgers.length - 1; i >= 0 && from < 0; i--) {
      const l = ledgers[i]!;
      const id = l.producerSnapshotLedgerId;
      if (id === null || l.endOffset > hw) continue;
      let reason: string;
      try {
        const chunks = await core.ledgers.read(id, 0, Number.MAX_SAFE_INTEGER);
        const decoded = decodeProducerSnapshot(
          chunks.map((c) => c.data),
          l.endOffset,
        );
        if (typeof decoded !== 'string') {
          core.producers.load(decoded.producers);
          from = snapshotOffset = decoded.offset;
          break;
        }
        reason = decoded;
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      core.logger?.warn({ ...where, ledgerId: l.ledgerId, producerSnapshotLedgerId: id, reason }, 'producer snapshot unusable; trying an older one');
    }
  }
  if (from < 0 && hw > core.logStartOffset) {
    from = await fallbackStart(core);
    core.logger?.warn({ ...where, from, producerIdExpirationMs: core.producerIdExpirationMs }, 'no usable producer snapshot: replaying the producer state from the log');
  }
  let replayedBatches = 0;
  let replayedBytes = 0;
  let skipped = 0;
  let offset = Math.max(from, core.logStartOffset);
  // Read up to the fenced ledger when its headers were gathered at indexing and the replay covers it whole.
  const tail = fenced && fenced.endOffset === hw && from >= 0 && offset <= fenced.startOffset ? fenced : null;
  const stop = tail ? tail.startOffset : hw;
  reading: while (from >= 0 && offset < stop) {
    let res: ReadResult;
    try {
      res = await core.reader.read(offset, { maxBytes: REPLAY_READ_BYTES });
    } catch (err) {
      core.logger?.warn({ ...where, offset, err }, 'producer state: cannot read the log; idempotent producers of this partition are known only up to here');
      break;
    }
    if (res.records.length === 0 || res.nextOffset <= offset) break;
    for (const buf of res.records) {
      if (buf.length < RECORD_BATCH_OVERHEAD) {
        skipped++;
        continue;
      }
      const b = RecordBatch.unchecked(buf);
      const base = b.baseOffsetNumber;
      if (base >= stop) break reading;
      // A read at `offset` may begin with a batch that starts before it (already in the snapshot).
      if (snapshotOffset >= 0 && base < snapshotOffset) continue;
      applyStoredBatch(core.producers, b, base, base + b.lastOffsetDelta);
      replayedBatches++;
      replayedBytes += buf.length;
    }
    offset = res.nextOffset;
  }
  if (tail) {
    for (const t of tail.batches) {
      if (t.marker) core.producers.applyMarker(t.id.producerId, t.id.producerEpoch, t.marker, t.baseOffset, t.timestamp);
      else core.producers.apply(t.id, t.baseOffset, t.lastOffset, t.timestamp);
    }
    replayedBatches += tail.count;
    replayedBytes += tail.bytes;
  }
  if (skipped > 0) core.logger?.warn({ ...where, skipped }, 'producer state: skipped stored entries too short to be record batches');
  core.producers.expire(core.clock.now(), core.producerIdExpirationMs);
  core.producerLoad = {
    snapshotOffset,
    replayedBatches,
    replayedBytes,
    producers: core.producers.size,
    ms: performance.now() - started,
  };
  if (replayedBatches > 0 || snapshotOffset >= 0) {
    core.logger?.info?.({ ...where, ...core.producerLoad }, 'producer state loaded');
  }
  return { snapshotLedgerEnd: snapshotOffset };
}

/**
 * Where a replay without a snapshot starts: the first batch written within producer.id.expiration.ms,
 * found with ListOffsets by timestamp (which skips batches whose records do not decode); the log start
 * offset should the search fail.
 */
async function fallbackStart(core: LogCore): Promise<number> {
  try {
    const since = await core.lookups.listOffsets(core.clock.now() - core.producerIdExpirationMs);
    return since?.offset ?? core.highWatermark;
  } catch (err) {
    core.logger?.warn({ partition: core.name, err }, 'producer state: cannot find the batches to replay by timestamp; replaying from the log start offset');
    return core.logStartOffset;
  }
}
