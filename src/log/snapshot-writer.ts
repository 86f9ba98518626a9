/**
 * Writes the side-state of a sealed ledger into ledgers of their own and records them in the ledger's chain
 * record, one ledger at a time, behind the log's other work: its persisted index (index-snapshot.ts,
 * `indexLedgerId`) and the producer state as of its end offset (producer-snapshot.ts,
 * `producerSnapshotLedgerId`); the index ledger also holds the ledger's aborted transactions (txn-index.ts). Both are written before the one chain txn that names them; a crash in
 * between leaves unreferenced ledgers (orphans.ts), never a chain record naming a missing one.
 */
import type { LedgerWriter } from '../ledger/types.js';
import { encodeIndexSnapshot } from './index-snapshot.js';
import { encodeTxnIndex, type AbortedTxnEntry } from './txn-index.js';
import type { SealedChainLedger } from './chain.js';
import { sealedRecord, type LogCore, type SnapshotWork, type WrittenSnapshots } from './log-core.js';
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
    const written = await this.writeLedgers(ledger, index, producers);
    let recorded = false;
    try {
      await this.core.chainOp(async () => {
        if (!this.core.index.ledgers.includes(ledger)) return;
        const change = this.recordChange(ledger, written);
        await this.core.commit({ put: change.put });
        change.committed();
        recorded = true;
      });
    } finally {
      if (!recorded) this.core.deleteLedgersQuietly(written.ids);
    }
  }

  /**
   * Writes the snapshot ledgers of `ledger` (its index, and the producer state if given), side by side so
   * that they share the ledger store's group commits; they are sealed, and named by no chain record yet.
   * On a failure the ones written are deleted.
   */
  async writeLedgers(
    ledger: IndexedLedger,
    index: boolean,
    producers: Buffer[] | null,
    aborted: readonly AbortedTxnEntry[] = this.core.txnIndex.inRange(ledger.startOffset, ledger.endOffset),
  ): Promise<WrittenSnapshots> {
    const written: LedgerWriter[] = [];
    const [indexWriter, producerWriter] = await Promise.allSettled([
      // The ledger's aborted transactions follow its index chunks (txn-index.ts).
      index ? this.writeLedger([...encodeIndexSnapshot(ledger), ...encodeTxnIndex(ledger.ledgerId, ledger.startOffset, aborted)], written) : null,
      producers ? this.writeLedger(producers, written) : null,
    ]);
    if (indexWriter.status === 'rejected' || producerWriter.status === 'rejected') {
      this.core.deleteLedgersQuietly(written.map((w) => w.ledgerId));
      throw indexWriter.status === 'rejected' ? indexWriter.reason : (producerWriter as PromiseRejectedResult).reason;
    }
    return {
      indexLedgerId: indexWriter.value?.ledgerId ?? null,
      producerSnapshotLedgerId: producerWriter.value?.ledgerId ?? null,
      ids: written.map((w) => w.ledgerId),
    };
  }

  /**
   * The chain records that name `written` as `ledger`'s snapshots (the ledger's own record, `sealedAtMs`
   * overriding its sealing time when it is being sealed in the same txn), with the producer snapshots
   * beyond the newest PRODUCER_SNAPSHOTS_KEPT dropped from older records; `committed` updates the index
   * once the txn has committed and deletes the ledgers it replaced or dropped. Call inside a chainOp.
   */
  recordChange(ledger: IndexedLedger, written: WrittenSnapshots, sealedAtMs?: number): { put: SealedChainLedger[]; committed(): void } {
    const indexLedgerId = written.indexLedgerId ?? ledger.indexLedgerId;
    const producerSnapshotLedgerId = written.producerSnapshotLedgerId ?? ledger.producerSnapshotLedgerId;
    const previous = [written.indexLedgerId !== null ? ledger.indexLedgerId : null, written.producerSnapshotLedgerId !== null ? ledger.producerSnapshotLedgerId : null];
    const older =
      written.producerSnapshotLedgerId !== null
        ? this.core.index.ledgers.filter((l) => l !== ledger && l.producerSnapshotLedgerId !== null && l.endOffset <= ledger.endOffset)
        : [];
    const drop = older.slice(0, Math.max(0, older.length - (PRODUCER_SNAPSHOTS_KEPT - 1)));
    const own = sealedRecord(ledger, indexLedgerId, producerSnapshotLedgerId);
    return {
      put: [...drop.map((l) => sealedRecord(l, l.indexLedgerId, null)), sealedAtMs === undefined ? own : { ...own, sealedAtMs }],
      committed: () => {
        ledger.indexLedgerId = indexLedgerId;
        ledger.producerSnapshotLedgerId = producerSnapshotLedgerId;
        const gone: number[] = [];
        for (const id of previous) if (id !== null) gone.push(id);
        for (const l of drop) {
          gone.push(l.producerSnapshotLedgerId!);
          l.producerSnapshotLedgerId = null;
        }
        if (gone.length > 0) this.core.deleteLedgersQuietly(gone);
      },
    };
  }

  async writeLedger(chunks: readonly Buffer[], written: LedgerWriter[]): Promise<LedgerWriter> {
    const writer = await this.core.ledgers.create(this.core.config.ledgerReplication);
    written.push(writer);
    await Promise.all(chunks.map((c) => writer.append(c)));
    await writer.seal();
    return writer;
  }
}
