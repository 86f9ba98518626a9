/**
 * Checkpoints of the local ledger store and the deletion of dead segments. A checkpoint writes the index file
 * of every rolled segment that lacks a durable one and `ledgers.ckpt` (the ledger table, the next ledger id,
 * the first segment recovery must scan, the active segment's durable length), each via write-tmp + fsync +
 * rename + fsync(dir); their layouts are drawn in format.ts. Recovery (recovery.ts) starts from the last one.
 *
 * ```
 *   snapshot (synchronous)          write out                         then
 *   ├ index of rolled segs 3, 4  →  003.idx.tmp → fsync → rename      delete rolled segments below the
 *   ├ ledger table, nextLedgerId    004.idx.tmp → …       fsync(dir)  replay start that no ledger of the
 *   └ active seq, durable bytes  →  ledgers.ckpt.tmp → … → fsync(dir) table (nor in memory) has entries in
 * ```
 */
import path from 'node:path';
import { CHECKPOINT_FILE, encodeCheckpoint, encodeSegmentIndex, type Checkpoint, type IndexRun, type SegmentIndex } from './format.js';
import type { LedgerFs } from './fs.js';
import { LedgerError } from './errors.js';
import { storageError, type Segment, type StoreCore } from './store-state.js';
import type { LedgerId } from './types.js';

/** Writes `name.tmp`, fsyncs it and renames it over `name` (the directory is synced when `syncDir`). */
export async function writeAtomically(fs: LedgerFs, dir: string, file: string, data: Buffer, syncDir: boolean): Promise<void> {
  const tmp = `${file}.tmp`;
  const f = await fs.open(tmp, 'w+');
  try {
    await f.writev([data], 0);
    await f.datasync();
  } finally {
    await f.close().catch(() => undefined);
  }
  await fs.rename(tmp, file);
  if (syncDir) await fs.syncDir(dir);
}

export class Checkpointer {
  /** The first segment recovery must scan record by record: the ones below it have durable index files. */
  replayFromSegment = 1;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;

  constructor(private readonly core: StoreCore) {}

  /** Settles once every checkpoint queued so far has run. */
  get done(): Promise<void> {
    return this.chain;
  }

  /** Runs a checkpoint after the ones already queued (at most one waits). Failures are reported, not thrown. */
  queue(): void {
    if (this.queued || this.core.closed) return;
    this.queued = true;
    this.chain = this.chain.then(async () => {
      this.queued = false;
      if (this.core.closed) return;
      try {
        await this.checkpoint();
      } catch (err) {
        this.core.onBackgroundError(err instanceof LedgerError ? err : storageError('checkpoint failed', err));
      }
    });
  }

  /**
   * Takes one snapshot of the store, synchronously, then writes it out:
   * 1. the index file of every rolled segment that lacks a durable one;
   * 2. the checkpoint: ledger table, next ledger id, and the first segment recovery must scan;
   * 3. then deletes rolled segments below that with no live entry left (BookKeeper's garbage collection
   *    of entry logs; compaction, which moves the last live entries out, is in garbage-collector.ts).
   * The index files and the table come from the same instant, so they agree on which ledgers exist. Deletes,
   * seals and appends that commit while the files are being written belong to the next checkpoint (a delete
   * queues one): in particular a segment is only deleted once a durable checkpoint no longer lists any of
   * its ledgers, or recovery from this checkpoint would look for entries in a segment that is gone.
   */
  private async checkpoint(): Promise<void> {
    const { core } = this;
    const files = core.files;
    const active = files.active;
    const indexes: { segment: Segment; bytes: Buffer }[] = [];
    for (const segment of files.all.values()) {
      if (segment === active || segment.reclaimed || segment.indexDurable) continue;
      indexes.push({ segment, bytes: encodeSegmentIndex(this.segmentIndexOf(segment)) });
    }
    const table: Checkpoint['ledgers'] = [];
    for (const l of core.ledgers.values()) {
      if (l.deleted) continue;
      // sealedAtMs 0 means "open" in the checkpoint, so a sealed ledger always records at least 1.
      table.push({ ledgerId: l.id, createdAtMs: l.createdAtMs, sealedAtMs: l.sealed ? Math.max(1, l.sealedAtMs ?? 1) : 0, entryCount: l.sealed ? l.index.size : 0 });
    }
    const nextLedgerId = core.nextLedgerId;
    const activeSegmentDurableBytes = active.size;
    // Under a non-durable flush policy the snapshot may describe entries, seals and deletes not yet fsynced:
    // make everything written before it durable first, so neither the table nor an index outruns the log.
    if (!core.durable) {
      core.stats.fsyncs++;
      await active.file!.datasync();
    }
    let replayFrom = active.seq;
    let wroteIndex = false;
    for (const { segment, bytes } of indexes) {
      try {
        await writeAtomically(core.fs, core.dir, files.indexPath(segment.seq), bytes, false);
        segment.indexDurable = true;
        wroteIndex = true;
      } catch (err) {
        replayFrom = Math.min(replayFrom, segment.seq);
        core.onBackgroundError(storageError('cannot write segment index', err, segment.seq));
      }
    }
    if (wroteIndex) await core.fs.syncDir(core.dir);
    await writeAtomically(
      core.fs,
      core.dir,
      path.join(core.dir, CHECKPOINT_FILE),
      encodeCheckpoint({ nextLedgerId, replayFromSegment: replayFrom, writtenAtMs: Date.now(), activeSegment: active.seq, activeSegmentDurableBytes, ledgers: table }),
      true,
    );
    this.replayFromSegment = replayFrom;
    await this.reclaim(new Set(table.map((l) => l.ledgerId)));
  }

  private segmentIndexOf(segment: Segment): SegmentIndex {
    const runs: IndexRun[] = [];
    for (const id of segment.ledgers) {
      const l = this.core.ledgers.get(id);
      if (!l || l.deleted) continue;
      for (const run of l.index.segmentRuns()) {
        if (run.segmentSeq !== segment.seq) continue;
        const offsets = new Uint32Array(run.count);
        const lengths = new Uint32Array(run.count);
        for (let i = 0; i < run.count; i++) {
          offsets[i] = l.index.offsetOf(run.firstEntryId + i);
          lengths[i] = l.index.lengthOf(run.firstEntryId + i);
        }
        runs.push({ ledgerId: id, firstEntryId: run.firstEntryId, offsets, lengths });
      }
    }
    return { segmentSeq: segment.seq, validBytes: segment.size, runs };
  }

  /**
   * Deletes the rolled segments below the replay start none of whose ledgers is in `checkpointed` (the table
   * of the checkpoint just made durable, which recovery would start from) or live in memory. A ledger
   * deleted after that table was taken keeps its segments until the next checkpoint.
   */
  private async reclaim(checkpointed: ReadonlySet<LedgerId>): Promise<void> {
    const { core } = this;
    const dead: Segment[] = [];
    for (const segment of core.files.all.values()) {
      if (segment === core.files.active || segment.reclaimed || segment.seq >= this.replayFromSegment) continue;
      // A read planned on it, or live entries being copied out and not yet durable elsewhere: next time.
      if (segment.pins > 0 || segment.compacting) continue;
      let live = false;
      for (const id of segment.ledgers) {
        const l = core.ledgers.get(id);
        if (checkpointed.has(id) || (l && !l.deleted)) {
          live = true;
          break;
        }
      }
      if (!live) dead.push(segment);
    }
    if (dead.length === 0) return;
    for (const segment of dead) await core.files.remove(segment);
    core.stats.segments = core.files.all.size;
    await core.fs.syncDir(core.dir);
  }
}
