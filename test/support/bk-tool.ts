/** BookKeeper's own Java client (compat/bookkeeper's BkTool) for tests: list, meta, read and write ledgers. */
import { bkTool as runBkTool } from '../../compat/cluster/bk-tool.js';
import { DigestType } from '../../src/ledger/bookkeeper/digest.js';
import type { BookKeeperLedgerStore } from '../../src/ledger/bookkeeper/store.js';

/** Runs BkTool (compat/cluster/bk-tool.ts) against `metadataServiceUri`; resolves with its JSON lines. */
export function bkTool(metadataServiceUri: string, args: readonly string[], timeoutMs = 60_000): Promise<Record<string, unknown>[]> {
  return runBkTool(args, { metadataServiceUri, timeoutMs });
}

/** Options of a BookKeeper store for tests: E3/Qw3/Qa2, CRC32C, short timeouts. */
export function storeOptions(uri: string, extra: Partial<Parameters<typeof BookKeeperLedgerStore.open>[0]> = {}): Parameters<typeof BookKeeperLedgerStore.open>[0] {
  return {
    metadataServiceUri: uri,
    quorum: { ensembleSize: 3, writeQuorum: 3, ackQuorum: 2 },
    password: Buffer.alloc(0),
    digestType: DigestType.CRC32C,
    addTimeoutMs: 5_000,
    readTimeoutMs: 5_000,
    speculativeReadTimeoutMs: 200,
    zkSessionTimeoutMs: 10_000,
    maxEntryBytes: 1 << 20,
    ...extra,
  };
}
