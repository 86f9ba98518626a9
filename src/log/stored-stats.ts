/**
 * What a partition log that is not open holds, read from stored metadata without opening (taking over) it:
 * its size in bytes, its ledgers, its log start offset and, on request, its log end offset. Partitions open
 * on first use (src/cluster/partitions.ts), yet Kafka reports every partition of a log dir in
 * DescribeLogDirs (`ReplicaManager.describeLogDirs`: `UnifiedLog.size`, the sum of its segments' sizes) and
 * in the `kafka.log:type=Log` metrics (Size, NumLogSegments, LogStartOffset, LogEndOffset), so these come
 * from the chain (chain.ts) and, for the one ledger a chain may hold open, from the ledger store.
 *
 * ```
 *   one paged range scan of /partitions/[<topic>/] ──► per partition: head (logStartOffset), ledger keys
 *        sealed ledger: its recorded `bytes` and `endOffset`
 *        open ledger (its owner was killed, or it is being written): LedgerStore.getMetadata(id).length,
 *                     and, only when end offsets are asked for, its last entry read for the batch's last offset
 * ```
 *
 * The sizes are those an opened log reports (`PartitionLog.stats.sizeInBytes`: the bytes of every batch of
 * every ledger of its chain), so a partition reports the same size before and after a restart. Cost: the
 * metadata store's keys of the partitions asked for, read in pages (no per-partition query), and one
 * in-memory ledger-store lookup per open ledger; nothing is opened, fenced or written.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { LedgerStore } from '../ledger/types.js';
import { PARTITIONS_PREFIX, parsePartitionKey, partitionPrefix, topicPartitionsPrefix } from '../metadata/layout.js';
import type { MetadataStore } from '../metadata/types.js';
import { decodeHead, decodeLedger, type ChainLedger } from './chain.js';

export interface StoredPartitionStats {
  /** Bytes of every batch of every ledger of the chain (Kafka's `UnifiedLog.size`); 0 for a partition never written. */
  readonly sizeInBytes: number;
  /** Ledgers in the chain (Kafka's NumLogSegments counts segments, the counterpart). */
  readonly ledgers: number;
  /** Kafka's log start offset: the head's, or the first ledger's start when that is above it. */
  readonly logStartOffset: number;
  /** The offset after the last batch; null unless `endOffsets` was asked for (or when it could not be read). */
  readonly logEndOffset: number | null;
}

export interface StoredStatsOptions {
  /** Only these topics (one range scan each); absent: every partition in the store, in one scan of /partitions/. */
  readonly topics?: Iterable<string>;
  /** Partitions to read; the others' keys are skipped before they are decoded (e.g. open ones, another broker's). */
  readonly include?: (topic: string, partition: number) => boolean;
  /** Also the log end offset of a chain whose last ledger is open: one read of that ledger's last entry. */
  readonly endOffsets?: boolean;
  /** Called for a key whose value does not decode; the partition is reported from its other keys. */
  readonly onBadKey?: (key: string, err: unknown) => void;
}

/** Keys read per page of the scan. */
const SCAN_PAGE = 1000;
/** Ledger-store lookups in flight at once. */
const STORE_CONCURRENCY = 64;

interface Pending {
  logStartOffset: number;
  readonly ledgers: ChainLedger[];
}

/** The stored stats of the partitions asked for, by topic and partition; a partition with no key at all is absent. */
export async function readStoredPartitionStats(
  metadata: MetadataStore,
  ledgers: LedgerStore,
  options: StoredStatsOptions = {},
): Promise<Map<string, Map<number, StoredPartitionStats>>> {
  const pending = new Map<string, Map<number, Pending>>();
  const prefixes = options.topics ? [...new Set(options.topics)].map(topicPartitionsPrefix) : [PARTITIONS_PREFIX];
  for (const prefix of prefixes) await scan(metadata, prefix, pending, options);

  const out = new Map<string, Map<number, StoredPartitionStats>>();
  const lookups: Array<() => Promise<void>> = [];
  for (const [topic, parts] of pending) {
    const stats = new Map<number, StoredPartitionStats>();
    out.set(topic, stats);
    for (const [p, chain] of parts) {
      const list = chain.ledgers.sort((a, b) => a.startOffset - b.startOffset);
      let bytes = 0;
      for (const l of list) if (l.state === 'sealed') bytes += l.bytes;
      const first = list[0];
      const last = list[list.length - 1];
      const base = {
        sizeInBytes: bytes,
        ledgers: list.length,
        logStartOffset: Math.max(chain.logStartOffset, first?.startOffset ?? 0),
        logEndOffset: options.endOffsets ? (last === undefined ? chain.logStartOffset : last.state === 'sealed' ? last.endOffset : null) : null,
      };
      stats.set(p, base);
      if (last?.state !== 'open') continue;
      lookups.push(async () => {
        const tail = await openLedgerTail(ledgers, last, options.endOffsets === true);
        stats.set(p, { ...base, sizeInBytes: bytes + tail.bytes, logEndOffset: options.endOffsets ? tail.endOffset : null });
      });
    }
  }
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < lookups.length) await lookups[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(STORE_CONCURRENCY, lookups.length) }, worker));
  return out;
}

async function scan(metadata: MetadataStore, prefix: string, into: Map<string, Map<number, Pending>>, options: StoredStatsOptions): Promise<void> {
  let startAfter: string | undefined;
  // The keys of one partition come together (`/partitions/<topic>/<p>/…`): it is parsed and looked up once.
  let current: { readonly prefix: string; readonly chain: Pending | null } | null = null;
  for (;;) {
    const page = await metadata.list(prefix, { limit: SCAN_PAGE, ...(startAfter !== undefined ? { startAfter } : {}) });
    for (const kv of page.kvs) {
      if (current === null || !kv.key.startsWith(current.prefix)) current = partitionOf(kv.key, into, options);
      const chain = current?.chain;
      if (!chain) continue;
      try {
        const rest = kv.key.slice(current!.prefix.length);
        if (rest === 'state') chain.logStartOffset = decodeHead(kv.value, kv.key).logStartOffset;
        else if (rest.startsWith('ledgers/')) chain.ledgers.push(decodeLedger(kv.value, kv.key));
      } catch (err) {
        options.onBadKey?.(kv.key, err);
      }
    }
    if (!page.more || page.kvs.length === 0) return;
    startAfter = page.kvs[page.kvs.length - 1]!.key;
  }
}

/** The partition a key belongs to (its prefix, and its chain, null when not asked for); null for a key of no partition. */
function partitionOf(key: string, into: Map<string, Map<number, Pending>>, options: StoredStatsOptions): { prefix: string; chain: Pending | null } | null {
  const parsed = parsePartitionKey(key);
  if (!parsed) return null;
  const prefix = partitionPrefix(parsed.topic, parsed.partition);
  if (options.include && !options.include(parsed.topic, parsed.partition)) return { prefix, chain: null };
  let parts = into.get(parsed.topic);
  if (!parts) into.set(parsed.topic, (parts = new Map()));
  let chain = parts.get(parsed.partition);
  if (!chain) parts.set(parsed.partition, (chain = { logStartOffset: 0, ledgers: [] }));
  return { prefix, chain };
}

/**
 * The bytes of a ledger the chain holds open, from the ledger store's metadata (its `length`: the payload
 * bytes of entries 0..lastAddConfirmed, one batch each), and the offset after its last batch when asked.
 * A ledger the store does not have counts 0 (opening the partition reports the corruption).
 */
async function openLedgerTail(ledgers: LedgerStore, l: ChainLedger, endOffset: boolean): Promise<{ bytes: number; endOffset: number | null }> {
  let meta;
  try {
    meta = await ledgers.getMetadata(l.ledgerId);
  } catch {
    return { bytes: 0, endOffset: null };
  }
  if (!endOffset) return { bytes: meta.length, endOffset: null };
  if (meta.lastAddConfirmed < 0) return { bytes: meta.length, endOffset: l.startOffset };
  try {
    const [entry] = await ledgers.read(l.ledgerId, meta.lastAddConfirmed, meta.lastAddConfirmed);
    return { bytes: meta.length, endOffset: entry ? RecordBatch.wrap(entry.data).lastOffsetNumber + 1 : null };
  } catch {
    return { bytes: meta.length, endOffset: null };
  }
}
