/**
 * Whether a partition log that is not open has ledgers past retention, read from its chain alone (the
 * metadata store; no ledger is read). Partitions open on first use (src/cluster/partitions.ts), and Kafka's
 * retention (`log.retention.check.interval.ms`) applies to every partition whether or not anyone uses it, so
 * the partition layer asks this of each partition it has not opened and opens those that are due, and the
 * log's own enforceRetention (retention.ts) then deletes exactly what it would have deleted had it been open.
 *
 * The answer errs towards "due": a false "due" costs one open; a false "not due" would keep expired data.
 * It mirrors enforceRetention: only sealed ledgers before the last one can go, by time (their newest batch
 * timestamp, or their sealing time, older than retention.ms) or by size (the partition above retention.bytes
 * by at least the oldest ledger), and only when cleanup.policy includes `delete`.
 */
import type { MetadataStore } from '../metadata/types.js';
import { ChainKeys, loadChain } from './chain.js';
import { resolveLogConfig, retentionDeletes, type PartitionLogConfig } from './config.js';

export async function retentionDue(metadata: MetadataStore, topic: string, partition: number, overrides: Partial<PartitionLogConfig>, nowMs: number): Promise<boolean> {
  const config = resolveLogConfig(overrides);
  if (!retentionDeletes(config) || (config.retentionMs < 0 && config.retentionBytes < 0)) return false;
  const { head, ledgers } = await loadChain(metadata, new ChainKeys(topic, partition));
  if (head === null || ledgers.length < 2) return false;
  const first = ledgers[0]!;
  if (first.state !== 'sealed') return false;
  if (config.retentionMs >= 0) {
    const newest = first.maxTimestamp >= 0 ? first.maxTimestamp : first.sealedAtMs;
    if (nowMs - newest > config.retentionMs) return true;
  }
  if (config.retentionBytes >= 0) {
    // The last ledger may still be open in the chain (the previous owner was killed): its bytes are not
    // recorded, so count the sealed ones; a partition at exactly the limit is not due.
    let bytes = 0;
    for (const l of ledgers) if (l.state === 'sealed') bytes += l.bytes;
    if (bytes - first.bytes >= config.retentionBytes) return true;
  }
  return false;
}
