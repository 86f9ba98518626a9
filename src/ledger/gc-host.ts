/**
 * The local ledger store as its garbage collector (garbage-collector.ts) sees it: which segments it may
 * compact, the live entries in one, reads of them, and the copies ("moves") it queues through the commit
 * pipeline like any append. Kept apart from the collector so that the collector knows nothing of the store's
 * state and the store nothing of the collector's policy (BookKeeper's GarbageCollectorThread over its
 * CompactableLedgerStorage).
 */
import type { Checkpointer } from './checkpoint.js';
import type { CommitPipeline } from './commit-pipeline.js';
import { LedgerError, LedgerStoreClosedError, NoSuchLedgerError } from './errors.js';
import type { GcHost } from './garbage-collector.js';
import { storageError, type Segment, type StoreCore } from './store-state.js';
import type { LedgerEntry, LedgerId, LedgerReadOptions } from './types.js';

export interface CollectorHostDeps {
  readonly core: StoreCore;
  readonly pipeline: CommitPipeline;
  readonly checkpointer: Checkpointer;
  /** The store's own `read()` (tail cache, then disk). */
  readonly read: (ledgerId: LedgerId, first: number, last: number, options: LedgerReadOptions) => Promise<LedgerEntry[]>;
}

export function collectorHost({ core, pipeline, checkpointer, read }: CollectorHostDeps): GcHost {
  const files = core.files;
  return {
    isClosing: () => core.closing,
    segments: () => {
      const rolled: Segment[] = [];
      for (const s of files.all.values()) {
        // Only segments a durable checkpoint indexes: recovery reads them from their index file, never
        // replays their control records, so once their entries live elsewhere nothing needs them.
        if (s !== files.active && !s.reclaimed && s.indexDurable && s.seq < checkpointer.replayFromSegment) rolled.push(s);
      }
      return { active: files.active, rolled };
    },
    liveRuns: (seq) => {
      const segment = files.all.get(seq);
      const runs: { ledgerId: number; firstEntryId: number; count: number }[] = [];
      if (!segment) return runs;
      for (const id of segment.ledgers) {
        const l = core.ledgers.get(id);
        if (!l || l.deleted || l.deleting) continue;
        for (const run of l.index.segmentRuns()) if (run.segmentSeq === seq) runs.push({ ledgerId: id, firstEntryId: run.firstEntryId, count: run.count });
      }
      return runs;
    },
    read: async (ledgerId, first, last, maxBytes) => {
      const l = core.ledgers.get(ledgerId);
      if (!l || l.deleted || l.deleting || core.closing) return null;
      try {
        return await read(ledgerId, first, last, { maxBytes });
      } catch (err) {
        if (err instanceof NoSuchLedgerError || err instanceof LedgerStoreClosedError) return null;
        throw err;
      }
    },
    move: (ledgerId, entryId, from, data) => {
      const ledger = core.ledgers.get(ledgerId);
      if (!ledger || ledger.deleting || core.closing) return Promise.resolve(false);
      const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      return new Promise<boolean>((resolve, reject) => {
        pipeline.enqueue({ kind: 'move', ledger, entryId, from, data: buf, resolve, reject });
      }).catch((err: unknown) => {
        if (err instanceof NoSuchLedgerError) return false;
        throw err;
      });
    },
    syncCopies: async () => {
      if (core.durable) return;
      // Copies sit in the active segment, or in segments rolled since (a roll fsyncs what it leaves).
      const segment = files.active;
      const file = await files.acquire(segment);
      try {
        core.stats.fsyncs++;
        await file.datasync();
      } finally {
        files.release(segment);
      }
    },
    rollActive: async () => {
      await pipeline.requestRoll();
      await checkpointer.done;
    },
    checkpoint: async () => {
      checkpointer.queue();
      await checkpointer.done;
    },
    reportError: (err) => core.onBackgroundError(err instanceof LedgerError ? err : storageError('garbage collection failed', err)),
  };
}
