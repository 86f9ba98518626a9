/**
 * Recovery of the local ledger store at open: from the last checkpoint (checkpoint.ts), the index files of
 * the segments it covers, and a record-by-record scan of the others (the file reads are in recovery-scan.ts),
 * it rebuilds the ledger table, each ledger's index and each segment's live bytes, and cuts the torn or
 * unacknowledged tail of the last segment. The layouts it reads are drawn in format.ts.
 *
 * ```
 *   ledgers.ckpt: table, nextLedgerId, replayFromSegment = 4, active = 5 (durable to byte D)
 *   …0002.seg + .idx   …0003.seg + .idx   …0004.seg            …0005.seg
 *   └─ index files loaded ─────────────┘  └ scanned whole ┘   └ scanned, cut at the first bad record
 *                                                                (never below D: that is damage)
 *   each segment's valid length: its index file, or its successor's header (prevSegmentValidBytes)
 * ```
 *
 * Every ledger recovered must have dense entries from 0 (and at least its sealed count), or the store
 * refuses to open with LL_ERR_LEDGER_CORRUPT; that is checked once all segments are read, because a ledger
 * whose entries show a gap may be removed by a DELETE record replayed after the index files.
 */
import path from 'node:path';
import { LedgerCorruptError } from './errors.js';
import { CHECKPOINT_FILE, RECORD_HEADER_BYTES, SEGMENT_HEADER_BYTES, decodeSegmentHeader, encodeCheckpoint, parseSegmentSeq, segmentFileName } from './format.js';
import { writeAtomically, type Checkpointer } from './checkpoint.js';
import { RecoveredEntries } from './recovered-entries.js';
import { applyRun, readCheckpoint, readSegmentHeader, readSegmentIndex, scanSegment } from './recovery-scan.js';
import { countLive, newLedger, newSegment, type RecoveringLedger, type StoreCore } from './store-state.js';
import type { LedgerId } from './types.js';

/**
 * Recovers the store in `core.dir` into `core` (ledgers, next ledger id, segments, the active segment) and
 * the checkpointer's replay start, then queues a checkpoint that indexes the rolled segments it had to scan.
 */
export async function recoverStore(core: StoreCore, checkpointer: Checkpointer): Promise<void> {
  const { fs, dir, files } = core;
  const names = await fs.readdir(dir);
  for (const name of names) {
    if (name.endsWith('.tmp')) await fs.unlink(path.join(dir, name)).catch(() => undefined);
  }
  const seqs = names.map((n) => parseSegmentSeq(n, '.seg')).filter((s): s is number => s !== null).sort((a, b) => a - b);
  const indexSeqs = new Set(names.map((n) => parseSegmentSeq(n, '.idx')).filter((s): s is number => s !== null));
  // An index whose segment is gone: a crash between the two unlinks of a reclaim. It is never read.
  const segmentSeqs = new Set(seqs);
  for (const seq of indexSeqs) {
    if (segmentSeqs.has(seq)) continue;
    await fs.unlink(files.indexPath(seq)).catch(() => undefined);
    indexSeqs.delete(seq);
  }

  const checkpoint = names.includes(CHECKPOINT_FILE) ? await readCheckpoint(fs, dir) : null;
  if (!checkpoint) {
    if (seqs.length > 0) throw new LedgerCorruptError(`segments exist but ${CHECKPOINT_FILE} is missing`, { file: CHECKPOINT_FILE });
    // A new store: the checkpoint comes first, so a directory with segments always has one.
    await writeAtomically(fs, dir, path.join(dir, CHECKPOINT_FILE), encodeCheckpoint({ nextLedgerId: 1, replayFromSegment: 1, writtenAtMs: Date.now(), activeSegment: 1, activeSegmentDurableBytes: 0, ledgers: [] }), true);
    await files.start(1, 0, 0);
    return;
  }
  core.nextLedgerId = Math.max(1, checkpoint.nextLedgerId);
  checkpointer.replayFromSegment = checkpoint.replayFromSegment;
  const replayFromSegment = checkpoint.replayFromSegment;
  const recovering = new Map<LedgerId, RecoveringLedger>();
  for (const c of checkpoint.ledgers) {
    const ledger = newLedger(c.ledgerId, c.createdAtMs);
    if (c.sealedAtMs > 0) ledger.sealedAtMs = c.sealedAtMs;
    recovering.set(c.ledgerId, { ledger, entryCount: c.sealedAtMs > 0 ? c.entryCount : null, found: new RecoveredEntries(c.ledgerId) });
  }

  // Segment headers: each records the valid length of its predecessor.
  const headers = new Map<number, ReturnType<typeof decodeSegmentHeader>>();
  for (const seq of seqs) headers.set(seq, await readSegmentHeader(fs, files.segmentPath(seq)));
  while (seqs.length > 0) {
    const last = seqs[seqs.length - 1]!;
    const h = headers.get(last)!;
    if (typeof h !== 'string') break;
    // A roll that failed or crashed before its header was durable leaves at most a partial header: no
    // record is ever written before the header is. Anything longer is real damage.
    if ((await fs.stat(files.segmentPath(last))).size > SEGMENT_HEADER_BYTES) break;
    await fs.unlink(files.segmentPath(last));
    seqs.pop();
  }
  for (const seq of seqs) {
    const h = headers.get(seq)!;
    if (typeof h === 'string') throw new LedgerCorruptError(`segment ${seq}: ${h}`, { file: segmentFileName(seq) });
    if (h.segmentSeq !== seq) throw new LedgerCorruptError(`segment ${seq} says it is segment ${h.segmentSeq}`, { file: segmentFileName(seq) });
  }

  for (let i = 0; i < seqs.length; i++) {
    const seq = seqs[i]!;
    const isLast = i === seqs.length - 1;
    const next = seqs[i + 1];
    const nextHeader = next !== undefined ? headers.get(next) : undefined;
    let validBytes: number | null = null;
    if (nextHeader && typeof nextHeader !== 'string' && next === seq + 1 && nextHeader.prevSegmentSeq === seq) {
      validBytes = nextHeader.prevSegmentValidBytes;
    }
    const segment = newSegment(seq, null);
    files.all.set(seq, segment);
    let loaded = false;
    if (seq < replayFromSegment && indexSeqs.has(seq)) {
      const index = await readSegmentIndex(fs, files.indexPath(seq), seq);
      if (index && (validBytes === null || validBytes === index.validBytes)) {
        for (const run of index.runs) applyRun(recovering, segment, run);
        segment.size = index.validBytes;
        segment.writePos = index.validBytes;
        segment.indexDurable = true;
        loaded = true;
      }
    }
    if (!loaded) {
      if (validBytes === null && !isLast) {
        throw new LedgerCorruptError(`cannot tell the valid length of segment ${seq}: no index and no successor header`, { file: segmentFileName(seq) });
      }
      const durableBytes = seq === checkpoint.activeSegment ? checkpoint.activeSegmentDurableBytes : 0;
      await scanSegment(fs, files.segmentPath(seq), segment, validBytes, durableBytes, seq >= replayFromSegment, recovering, isLast, (id) => {
        if (id >= core.nextLedgerId) core.nextLedgerId = id + 1;
      });
    }
  }

  for (const { ledger, entryCount, found } of recovering.values()) {
    ledger.length = found.assemble(ledger.index, entryCount);
    // Live bytes, from the index (the copy recovery chose of each entry is the live one).
    for (const run of ledger.index.segmentRuns()) {
      const segment = files.all.get(run.segmentSeq)!;
      let bytes = 0;
      for (let id = run.firstEntryId; id < run.firstEntryId + run.count; id++) bytes += RECORD_HEADER_BYTES + ledger.index.lengthOf(id);
      countLive(ledger, segment, bytes);
      segment.ledgers.add(ledger.id);
    }
    if (entryCount !== null) {
      ledger.sealed = true;
      ledger.sealedAtMs ??= 0;
    }
    ledger.nextEntryId = ledger.index.size;
    core.ledgers.set(ledger.id, ledger);
    if (ledger.id >= core.nextLedgerId) core.nextLedgerId = ledger.id + 1;
  }

  if (seqs.length === 0) {
    await files.start(Math.max(1, replayFromSegment), 0, 0);
  } else {
    const last = files.all.get(seqs[seqs.length - 1]!)!;
    const file = await files.openForAppend(last.seq, 'r+');
    last.file = file;
    // It takes new records from now on: an index file it may have is stale and is rewritten at its roll.
    last.indexDurable = false;
    files.active = last;
    if ((await file.size()) > last.size) {
      // Cut the torn or unacknowledged tail, so new records follow the last valid one.
      await file.truncate(last.size);
      await file.datasync();
    }
  }
  core.stats.segments = files.all.size;
  // Index the rolled segments recovery had to scan, and drop any left dead by a crash mid-reclaim.
  checkpointer.queue();
}
