/**
 * Ledgers no partition chain names. A partition log creates a ledger before the chain txn that records it
 * (rollover, takeover, index snapshot) and deletes ledgers after the txn that forgets them (retention,
 * DeleteRecords, topic deletion), so a crash between the two leaves a ledger behind that nothing will read
 * (BookKeeper/Pulsar have the same window and the same remedy: a garbage-collection pass). This finds them;
 * deleting them is the caller's decision (an admin command or a periodic job of the cluster layer).
 *
 * A ledger created moments ago may simply not be recorded yet: only ledgers older than `olderThanMs` are
 * reported. It assumes every ledger of the store belongs to a partition log.
 */
import type { LedgerMetadata, LedgerStore } from '../ledger/types.js';
import { PARTITIONS_PREFIX, parsePartitionKey } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';
import { decodeLedger } from './chain.js';

export interface UnreferencedLedgerOptions {
  /** Report only ledgers created at least this long ago. */
  readonly olderThanMs: number;
  /** Wall-clock now, ms since the epoch (ledger creation times are wall-clock). Default Date.now(). */
  readonly now?: number;
}

const PAGE = 1000;

export async function findUnreferencedLedgers(
  ledgers: LedgerStore,
  metadata: MetadataStore,
  options: UnreferencedLedgerOptions,
): Promise<LedgerMetadata[]> {
  // List the store first: a ledger created after this list cannot be reported, whatever happens next.
  const all = await ledgers.list();
  const referenced = new Set<number>();
  let startAfter: string | undefined;
  for (;;) {
    const page = await metadata.list(PARTITIONS_PREFIX, { limit: PAGE, ...(startAfter ? { startAfter } : {}) });
    for (const kv of page.kvs) {
      if (parsePartitionKey(kv.key)?.kind !== 'ledger') continue;
      const l = decodeLedger(kv.value, kv.key);
      referenced.add(l.ledgerId);
      if (l.state === 'sealed' && l.indexLedgerId !== null) referenced.add(l.indexLedgerId);
      if (l.state === 'sealed' && l.producerSnapshotLedgerId !== undefined) referenced.add(l.producerSnapshotLedgerId);
    }
    if (!page.more || page.kvs.length === 0) break;
    startAfter = page.kvs[page.kvs.length - 1]!.key;
  }
  const cutoff = (options.now ?? Date.now()) - options.olderThanMs;
  return all.filter((m) => !referenced.has(m.ledgerId) && m.createdAtMs <= cutoff);
}
