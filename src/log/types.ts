/**
 * The partition log's public types: what the broker's Produce, Fetch, ListOffsets, DeleteRecords and
 * OffsetsForLeaderEpoch handlers pass to a PartitionLog and get back. Offsets and timestamps are JavaScript
 * numbers (exact below 2^53); the codec's int64 fields convert at the API layer.
 */
import type { LedgerStore } from '../ledger/types.js';
import type { Clock } from '../metadata/clock.js';
import type { MetadataStore } from '../metadata/types.js';
import type { PartitionLogConfig } from './config.js';

/** What a structured logger (pino) offers; the log warns, and reports how it loaded its producer state. */
export interface LogLogger {
  warn(obj: Record<string, unknown>, msg: string): void;
  info?(obj: Record<string, unknown>, msg: string): void;
}

export interface PartitionLogOptions {
  readonly topic: string;
  readonly partition: number;
  readonly ledgers: LedgerStore;
  readonly metadata: MetadataStore;
  /** Topic configs (Kafka names in config.ts); defaults are Kafka's. */
  readonly config?: Partial<PartitionLogConfig>;
  /** Wall-clock time (ms since the epoch) and timers: LogAppendTime, segment.ms, retention.ms. */
  readonly clock?: Clock;
  /** Name of the owner written into the chain head for operators (e.g. "broker-1"). */
  readonly owner?: string;
  /**
   * The partition leader epoch to take over with, when the cluster layer assigns epochs itself; it must be
   * above the chain's current epoch (else open fails with LogFencedError: a newer owner exists). Default:
   * the chain's epoch + 1 (0 for a new partition).
   */
  readonly leaderEpoch?: number;
  /** Persist each sealed ledger's index in an index ledger (index-snapshot.ts). Default true. */
  readonly indexSnapshots?: boolean;
  /**
   * Persist the idempotent-producer state as of each sealed ledger's end (producer-snapshot.ts), so that
   * open replays only the batches after the newest one. Default true.
   */
  readonly producerSnapshots?: boolean;
  /**
   * Kafka's producer.id.expiration.ms (default 86 400 000): producers whose last batch is older are
   * forgotten, and without a snapshot open replays only the batches written within it.
   */
  readonly producerIdExpirationMs?: number;
  /**
   * Apply retention every this many ms (Kafka's log.retention.check.interval.ms, default 300 000). 0: only when
   * `enforceRetention()` is called.
   */
  readonly retentionCheckIntervalMs?: number;
  /** Ledgers indexed concurrently while opening. Default 8. */
  readonly openConcurrency?: number;
  /** Failures of background work nobody awaits (retention ticks, index snapshots, deleting ledgers). */
  readonly onBackgroundError?: (err: Error) => void;
  readonly logger?: LogLogger;
}

export interface AppendOptions {
  /**
   * Append at this offset instead of the log end offset (mirrored topics, compaction output). It must be at
   * least the log end offset: offsets stay increasing, and the offsets skipped form a gap.
   */
  readonly baseOffset?: number;
  /** Write this partitionLeaderEpoch instead of the log's epoch (batches copied with their epoch). */
  readonly partitionLeaderEpoch?: number;
  /**
   * A batch copied from another cluster's log (a mirror topic, src/replication/): kept as it is, as Kafka's
   * appendAsFollower keeps a leader's batches: no LogAppendTime stamp (the source's timestamps stay) and no
   * max.message.bytes check (the source accepted it; the ledger store's entry limit still applies).
   */
  readonly mirrored?: boolean;
  /**
   * Append only if the log ends exactly here when the batch is written, and fail otherwise
   * (UnexpectedLogEndError, INVALID_RECORD). A copier that issues batches before the earlier ones are durable (a
   * mirror's rounds, src/replication/) names where the batch before it ends: if that one failed, the roll that
   * follows takes the log end back to the high watermark (roll.ts), and this one fails too rather than leave the
   * failed one's offsets a gap.
   */
  readonly expectedLogEnd?: number;
  /**
   * The batch's CRC was checked against its bytes (Kafka's produce validation) and nothing it covers changed
   * since: the log hands the ledger store the entry's CRC-32C derived from it (RecordBatch.crc32cOfWhole), so
   * the store does not read the batch again to checksum it. Unset, the store computes its own.
   */
  readonly crcChecked?: boolean;
}

export interface AppendResult {
  readonly baseOffset: number;
  readonly lastOffset: number;
  /** The time the log stamped into the batch for LogAppendTime topics, else -1 (Produce's logAppendTimeMs). */
  readonly logAppendTime: number;
  readonly logStartOffset: number;
}

export type IsolationLevel = 'read_uncommitted' | 'read_committed';

export interface ReadOptions {
  /** Byte budget (Fetch's partition_max_bytes). Default 1 MiB. */
  readonly maxBytes?: number;
  /** read_committed stops at the last stable offset, read_uncommitted at the high watermark (the default). */
  readonly isolation?: IsolationLevel;
  /**
   * Return the first batch even when it alone exceeds maxBytes (KIP-74). Default true; a Fetch handler
   * passes false for partitions after the first one that returned data.
   */
  readonly minOneBatch?: boolean;
}

export interface ReadResult {
  /** Whole stored batches, as appended, in offset order. The first may begin before the requested offset. */
  readonly records: Buffer[];
  readonly sizeInBytes: number;
  readonly highWatermark: number;
  readonly lastStableOffset: number;
  readonly logStartOffset: number;
  /** Offset after the last batch returned; the requested offset when none was. */
  readonly nextOffset: number;
  /**
   * read_committed: the aborted transactions overlapping the batches returned (Kafka's
   * collectAbortedTransactions: marker at or after the fetch offset, first offset before `nextOffset`),
   * in marker order; empty otherwise.
   */
  readonly abortedTransactions: Array<{ producerId: bigint; firstOffset: number }>;
}

/** A transaction marker to append (WriteTxnMarkers, KIP-98): COMMIT or ABORT of a producer's transaction. */
export interface TxnMarker {
  producerId: bigint;
  producerEpoch: number;
  coordinatorEpoch: number;
  commit: boolean;
}

/** Kafka's FileRecords.TimestampAndOffset. leaderEpoch is -1 when unknown. */
export interface TimestampAndOffset {
  readonly timestamp: number;
  readonly offset: number;
  readonly leaderEpoch: number;
}

/** ListOffsets' special timestamps (ListOffsetsRequest). */
export const ListOffsetsTimestamp = {
  LATEST: -1,
  EARLIEST: -2,
  MAX_TIMESTAMP: -3,
  EARLIEST_LOCAL: -4,
  LATEST_TIERED: -5,
} as const;

export interface EpochEndOffset {
  readonly leaderEpoch: number;
  readonly endOffset: number;
}

export interface RetentionResult {
  /** Data ledgers deleted. */
  readonly deletedLedgers: number;
  readonly deletedBytes: number;
  readonly logStartOffset: number;
}

export type PartitionLogState = 'open' | 'closing' | 'closed' | 'fenced' | 'deleted' | 'failed';

export interface PartitionLogStats {
  readonly ledgers: number;
  readonly batches: number;
  readonly sizeInBytes: number;
  readonly indexMemoryBytes: number;
  /** Milliseconds open() spent, and how many ledgers came from snapshots vs from their data. */
  readonly openMs: number;
  readonly ledgersFromSnapshots: number;
  readonly ledgersFromData: number;
  /** Rolls so far, by trigger: segment.bytes, segment.ms, ledgerline.segment.entries, failure, requested. */
  readonly rolls: Readonly<Record<string, number>>;
  /** How open() loaded the producer state: from a snapshot at an offset (else -1), then replaying batches. */
  readonly producerState: ProducerStateLoad;
}

export interface ProducerStateLoad {
  /** Offset of the snapshot loaded, -1 when none was usable (the state was replayed from the log). */
  readonly snapshotOffset: number;
  /** Batches and bytes read back from the log after it. */
  readonly replayedBatches: number;
  readonly replayedBytes: number;
  /** Producers known once loaded. */
  readonly producers: number;
  readonly ms: number;
}
