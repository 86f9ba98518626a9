/**
 * Writes the persisted index of a sealed ledger (index-snapshot.ts) into an index ledger of its own and
 * records it in the chain, one ledger at a time, behind the log's other work.
 */
import { encodeIndexSnapshot } from './index-snapshot.js';
import { sealedRecord, type LogCore } from './log-core.js';
import type { IndexedLedger } from './offset-index.js';

export class SnapshotWriter {
  snapshotTail: Promise<void> = Promise.resolve();

  constructor(private readonly core: LogCore) {}

  scheduleSnapshot(ledger: IndexedLedger): void {
    if (!this.core.snapshots) return;
    const run = this.snapshotTail.then(() => this.writeSnapshot(ledger));
    this.snapshotTail = run.catch((err: unknown) => {
      this.core.onBackgroundError(err instanceof Error ? err : new Error(String(err)));
    });
  }

  /** Writes a sealed ledger's index into a new index ledger and records it in the chain. */
  async writeSnapshot(ledger: IndexedLedger): Promise<void> {
    if (this.core.state !== 'open' && this.core.state !== 'closing') return;
    if (!this.core.index.ledgers.includes(ledger) || ledger.sealedAtMs === null) return;
    const chunks = encodeIndexSnapshot(ledger);
    const writer = await this.core.ledgers.create();
    let recorded = false;
    try {
      await Promise.all(chunks.map((c) => writer.append(c)));
      await writer.seal();
      await this.core.chainOp(async () => {
        if (!this.core.index.ledgers.includes(ledger)) return;
        const previous = ledger.indexLedgerId;
        await this.core.commit({ put: [sealedRecord(ledger, writer.ledgerId)] });
        ledger.indexLedgerId = writer.ledgerId;
        recorded = true;
        if (previous !== null) this.core.deleteLedgersQuietly([previous]);
      });
    } finally {
      if (!recorded) this.core.deleteLedgersQuietly([writer.ledgerId]);
    }
  }
}
