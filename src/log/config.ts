/**
 * The topic configs a partition log obeys, under Kafka's names where Kafka has one.
 *
 * | property                      | Kafka config                | default      | meaning                                   |
 * |-------------------------------|-----------------------------|--------------|-------------------------------------------|
 * | segmentBytes                  | segment.bytes               | 1 GiB        | roll before a ledger would exceed this    |
 * | segmentMs                     | segment.ms                  | 7 days       | roll a non-empty ledger this long after   |
 * |                               |                             |              | its first append                          |
 * | segmentEntries                | ledgerline.segment.entries  | 50 000       | roll after this many batches (Pulsar's    |
 * |                               |                             |              | managedLedgerMaxEntriesPerLedger)         |
 * | retentionMs                   | retention.ms                | 7 days       | delete sealed ledgers whose newest batch  |
 * |                               |                             |              | is older; -1 keeps them forever           |
 * | retentionBytes                | retention.bytes             | -1           | delete the oldest sealed ledgers while    |
 * |                               |                             |              | the partition is larger; -1 = no limit    |
 * | cleanupPolicy                 | cleanup.policy              | [delete]     | retention.ms / retention.bytes apply only |
 * |                               |                             |              | when it includes `delete`                 |
 * | messageTimestampType          | message.timestamp.type      | CreateTime   | LogAppendTime: the log stamps each batch  |
 * | maxMessageBytes               | max.message.bytes           | 1048588      | largest batch accepted (MESSAGE_TOO_LARGE)|
 * | minCleanableDirtyRatio        | min.cleanable.dirty.ratio   | 0.5          | compact once dirty bytes are this share   |
 * | minCompactionLagMs            | min.compaction.lag.ms       | 0            | a record stays uncompacted this long      |
 * | maxCompactionLagMs            | max.compaction.lag.ms       | 2^63-1       | ... and at most this long (KIP-354)       |
 * | deleteRetentionMs             | delete.retention.ms         | 1 day        | tombstones and markers kept this long     |
 * |                               |                             |              | after the pass that first cleans them     |
 *
 * On a compacted topic a ledger rolls at min(segment.ms, max.compaction.lag.ms), as Kafka's
 * LogConfig.maxSegmentMs, so that the guaranteed lag holds for records in the open ledger too.
 *
 * The ledger store's own entry limit (its maxEntryBytes) must not be below max.message.bytes.
 *
 * The entry limit also bounds what a takeover reads: the new owner rebuilds the index of the previous owner's
 * open ledger from its entries, at most `segmentEntries` batches and `segmentBytes` bytes.
 */
import type { LedgerCreateOptions } from '../ledger/types.js';
import { LogInvalidArgumentError } from './errors.js';

export type MessageTimestampType = 'CreateTime' | 'LogAppendTime';
export type CleanupPolicy = 'delete' | 'compact';

export interface PartitionLogConfig {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly segmentEntries: number;
  readonly retentionMs: number;
  readonly retentionBytes: number;
  /**
   * Kafka's cleanup.policy. Time and size retention delete ledgers only when it includes `delete` (Kafka's
   * LogConfig.delete, checked by UnifiedLog.deleteOldSegments); with `compact` the log cleaner
   * (log-cleaner.ts, compaction.ts) keeps the latest record of each key.
   */
  readonly cleanupPolicy: readonly CleanupPolicy[];
  readonly messageTimestampType: MessageTimestampType;
  readonly maxMessageBytes: number;
  readonly minCleanableDirtyRatio: number;
  readonly minCompactionLagMs: number;
  readonly maxCompactionLagMs: number;
  readonly deleteRetentionMs: number;
  /**
   * What every ledger this log creates asks of the ledger store: the topic's replication.factor and
   * min.insync.replicas, from which a replicated store (BookKeeper) derives its ensemble, write and ack
   * quorums. Absent: the store's own default.
   */
  readonly ledgerReplication?: LedgerCreateOptions;
}

const DAY_MS = 24 * 60 * 60 * 1000;

export const DEFAULT_LOG_CONFIG: PartitionLogConfig = Object.freeze({
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * DAY_MS,
  segmentEntries: 50_000,
  retentionMs: 7 * DAY_MS,
  retentionBytes: -1,
  cleanupPolicy: Object.freeze(['delete'] as CleanupPolicy[]),
  messageTimestampType: 'CreateTime',
  maxMessageBytes: 1048588,
  minCleanableDirtyRatio: 0.5,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  deleteRetentionMs: DAY_MS,
});

/** Kafka config name → property, for configs given as Kafka's string map (CreateTopics, AlterConfigs). */
export const LOG_CONFIG_NAMES = {
  'segment.bytes': 'segmentBytes',
  'segment.ms': 'segmentMs',
  'ledgerline.segment.entries': 'segmentEntries',
  'retention.ms': 'retentionMs',
  'retention.bytes': 'retentionBytes',
  'cleanup.policy': 'cleanupPolicy',
  'message.timestamp.type': 'messageTimestampType',
  'max.message.bytes': 'maxMessageBytes',
  'min.cleanable.dirty.ratio': 'minCleanableDirtyRatio',
  'min.compaction.lag.ms': 'minCompactionLagMs',
  'max.compaction.lag.ms': 'maxCompactionLagMs',
  'delete.retention.ms': 'deleteRetentionMs',
} as const satisfies Record<string, keyof PartitionLogConfig>;

function integer(name: string, value: number, min: number): number {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new LogInvalidArgumentError(`${name} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}

/** Defaults completed and every value checked against Kafka's validators (ranges as in LogConfig). */
export function resolveLogConfig(overrides: Partial<PartitionLogConfig> = {}): PartitionLogConfig {
  const c = { ...DEFAULT_LOG_CONFIG, ...stripUndefined(overrides) };
  // segment.bytes: Kafka's minimum is the v0 record overhead (14); a batch v2 header is 61 bytes.
  integer('segment.bytes', c.segmentBytes, 14);
  integer('segment.ms', c.segmentMs, 1);
  integer('ledgerline.segment.entries', c.segmentEntries, 1);
  integer('retention.ms', c.retentionMs, -1);
  integer('retention.bytes', c.retentionBytes, -1);
  integer('max.message.bytes', c.maxMessageBytes, 0);
  integer('min.compaction.lag.ms', c.minCompactionLagMs, 0);
  integer('max.compaction.lag.ms', c.maxCompactionLagMs, 1);
  integer('delete.retention.ms', c.deleteRetentionMs, 0);
  if (typeof c.minCleanableDirtyRatio !== 'number' || !(c.minCleanableDirtyRatio >= 0 && c.minCleanableDirtyRatio <= 1)) {
    throw new LogInvalidArgumentError(`min.cleanable.dirty.ratio must be in [0, 1], got ${String(c.minCleanableDirtyRatio)}`);
  }
  if (!Array.isArray(c.cleanupPolicy) || c.cleanupPolicy.some((p) => p !== 'delete' && p !== 'compact')) {
    throw new LogInvalidArgumentError(`cleanup.policy must be a list of delete and compact, got ${String(c.cleanupPolicy)}`);
  }
  if (c.messageTimestampType !== 'CreateTime' && c.messageTimestampType !== 'LogAppendTime') {
    throw new LogInvalidArgumentError(
      `message.timestamp.type must be CreateTime or LogAppendTime, got ${String(c.messageTimestampType)}`,
    );
  }
  return Object.freeze(c);
}

/**
 * Reads the configs this module knows from Kafka-named strings (`{'retention.ms': '86400000'}`); other names
 * are ignored (they belong to other layers). Throws LogInvalidArgumentError for a malformed value.
 */
export function logConfigFromKafkaConfigs(
  configs: Readonly<Record<string, string | null | undefined>>,
): Partial<PartitionLogConfig> {
  const out: Record<string, number | string | readonly string[]> = {};
  for (const [name, prop] of Object.entries(LOG_CONFIG_NAMES)) {
    const raw = configs[name];
    if (raw === undefined || raw === null) continue;
    if (prop === 'messageTimestampType') {
      out[prop] = raw;
      continue;
    }
    if (prop === 'cleanupPolicy') {
      // A Kafka LIST: comma-separated, blanks around items ignored ("compact, delete").
      out[prop] = raw.split(',').map((p) => p.trim()).filter((p) => p !== '');
      continue;
    }
    const n = Number(raw.trim());
    if (prop === 'minCleanableDirtyRatio') {
      if (raw.trim() === '' || !Number.isFinite(n)) throw new LogInvalidArgumentError(`${name} must be a number, got ${JSON.stringify(raw)}`);
      out[prop] = n;
      continue;
    }
    if (prop === 'maxCompactionLagMs' && raw.trim() === '9223372036854775807') {
      // Kafka's default, Long.MAX_VALUE: beyond JavaScript's exact integers, and as good as forever.
      out[prop] = Number.MAX_SAFE_INTEGER;
      continue;
    }
    if (raw.trim() === '' || !Number.isSafeInteger(n)) {
      throw new LogInvalidArgumentError(`${name} must be an integer, got ${JSON.stringify(raw)}`);
    }
    out[prop] = n;
  }
  return out as Partial<PartitionLogConfig>;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Whether time and size retention apply (Kafka's `LogConfig.delete`: cleanup.policy contains `delete`). */
export function retentionDeletes(c: PartitionLogConfig): boolean {
  return c.cleanupPolicy.includes('delete');
}

/** Whether the log cleaner compacts this log (`cleanup.policy` contains `compact`). */
export function compacts(c: PartitionLogConfig): boolean {
  return c.cleanupPolicy.includes('compact');
}

/** Kafka's LogConfig.maxSegmentMs: a compacted log rolls by max.compaction.lag.ms too (KIP-354). */
export function maxSegmentMs(c: PartitionLogConfig): number {
  return compacts(c) ? Math.min(c.segmentMs, c.maxCompactionLagMs) : c.segmentMs;
}
