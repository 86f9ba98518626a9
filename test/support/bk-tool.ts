/** BookKeeper's own Java client (compat/bookkeeper's BkTool) for tests: list, meta, read and write ledgers. */
import { bookKeeperClasspath } from '../../compat/cluster/index.js';
import { runJava } from '../../compat/cluster/process.js';
import { DigestType } from '../../src/ledger/bookkeeper/digest.js';
import type { BookKeeperLedgerStore } from '../../src/ledger/bookkeeper/store.js';

/** Runs BkTool against `metadataServiceUri`; resolves with its JSON lines, rejects with its output on failure. */
export async function bkTool(metadataServiceUri: string, args: readonly string[], timeoutMs = 60_000): Promise<Record<string, unknown>[]> {
  const cp = bookKeeperClasspath();
  if (!cp) throw new Error('BookKeeper is not built (compat/bookkeeper)');
  const run = await runJava(cp, 'dev.ledgerline.compat.bookkeeper.BkTool', ['--metadata-service-uri', metadataServiceUri, ...args], timeoutMs);
  if (run.code !== 0) throw new Error(`BkTool ${args.join(' ')} exited ${run.code}: ${run.output.slice(-2000)}`);
  return run.stdout
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
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
