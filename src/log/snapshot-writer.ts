/**
 * Writes the side-state of a sealed ledger into ledgers of their own and records them in the ledger's chain
 * record, one ledger at a time, behind the log's other work: its persisted index (index-snapshot.ts,
 * `indexLedgerId`) and the producer state as of its end offset (producer-snapshot.ts,
 * `producerSnapshotLedgerId`). Both are written before the one chain txn that names them; a crash in
 * between leaves unreferenced ledgers (orphans.ts), never a chain record naming a missing one.
 */
import type { LedgerWriter } from '../ledger/types.js';
import { encodeIndexSnapshot } from './index-snapshot.js';
import { sealedRecord, type LogCore, type SnapshotWork } from './log-core.js';
import type { IndexedLedger } from './offset-index.js';

/** Producer snapshots kept: the newest, and the one before it to fall back on. */
const PRODUCER_SNAPSHOTS_KEPT = 2;

export class SnapshotWriter {
  snapshotTail: Promise<void> = Promise.resolve();

  constructor(private readonly core: LogCore) {}

  scheduleSnapshot(ledger: IndexedLedger, work: SnapshotWork = {}): void {
    const index = (work.index ?? true) && this.core.snapshots;
    const producers = this.core.producerSnapshots ? (work.producers ?? null) : null;
    if (!index && producers === null) return;
    const run = this.snapshotTail.then(() => this.writeSnapshot(ledger, index, producers));
    this.snapshotTail = run.catch((err: unknown) => {
      this.core.onBackgroundError(err instanceof Error ? err : new Error(String(err)));
    });
  }

  /** Writes a sealed ledger's snapshots into new ledgers and records them in the chain. */
  async writeSnapshot(ledger: IndexedLedger, index: boolean, producers: Buffer[] | null): Promise<void> {
    if (this.core.state !== 'open' && this.core.state !== 'closing') return;
    if (!this.core.index.ledgers.includes(ledger) || ledger.sealedAtMs === null) return;
    const written: LedgerWriter[] = [];
    let recorded = false;
    try {
      const indexWriter = index ? await this.writeLedger(encodeIndexSnapshot(ledger), written) : null;
      const producerWriter = producers ? await this.writeLedger(producers, written) : null;
      await this.core.chainOp(async () => {
        if (!this.core.index.ledgers.includes(ledger)) return;
        const previous = [indexWriter ? ledger.indexLedgerId : null, producerWriter ? ledger.producerSnapshotLedgerId : null];
        const indexLedgerId = indexWriter?.ledgerId ?? ledger.indexLedgerId;
        const producerSnapshotLedgerId = producerWriter?.ledgerId ?? ledger.producerSnapshotLedgerId;
        // Older producer snapshots beyond the newest PRODUCER_SNAPSHOTS_KEPT are dropped in the same txn.
        const older = producerWriter
          ? this.core.index.ledgers.filter((l) => l !== ledger && l.producerSnapshotLedgerId !== null && l.endOffset <= ledger.endOffset)
          : [];
        const drop = older.slice(0, Math.max(0, older.length - (PRODUCER_SNAPSHOTS_KEPT - 1)));
        await this.core.commit({
          put: [...drop.map((l) => sealedRecord(l, l.indexLedgerId, null)), sealedRecord(ledger, indexLedgerId, producerSnapshotLedgerId)],
        });
        ledger.indexLedgerId = indexLedgerId;
        ledger.producerSnapshotLedgerId = producerSnapshotLedgerId;
        recorded = true;
        const gone: number[] = [];
        for (const id of previous) if (id !== null) gone.push(id);
        for (const l of drop) {
          gone.push(l.producerSnapshotLedgerId!);
          l.producerSnapshotLedgerId = null;
        }
        if (gone.length > 0) this.core.deleteLedgersQuietly(gone);
      });
    } finally {
      if (!recorded) this.core.deleteLedgersQuietly(written.map((w) => w.ledgerId));
    }
  }

  async writeLedger(chunks: readonly Buffer[], written: LedgerWriter[]): Promise<LedgerWriter> {
    const writer = await this.core.ledgers.create();
    written.push(writer);
    await Promise.all(chunks.map((c) => writer.append(c)));
    await writer.seal();
    return writer;
  }
}
