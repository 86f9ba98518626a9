/**
 * The ledger chain of a partition, as kept in the metadata store (key layout: src/metadata/layout.ts).
 *
 * ```
 *   /partitions/<topic>/<p>/state                       the head: the compare-and-set token of the chain
 *   /partitions/<topic>/<p>/ledgers/0000000000000000000  ledger 7   sealed  [0, 1200)
 *   /partitions/<topic>/<p>/ledgers/0000000000000001200  ledger 9   sealed  [1200, 2950)
 *   /partitions/<topic>/<p>/ledgers/0000000000000002950  ledger 12  open    [2950, …)   ← the owner appends here
 * ```
 *
 * Every change of the chain (rollover, takeover, retention, DeleteRecords, an index snapshot recorded) is
 * one metadata txn that compares the head's modRevision with the one its writer last saw and rewrites the
 * head (raising `changes`), so any two changes are ordered and an owner whose view is stale fails its next
 * change: that is how a second owner fences the first (with the ledger store's `fence` for the appends).
 * A ledger key is named by the ledger's start offset; start offsets are unique within a chain because an
 * empty ledger is never followed by another one: it is replaced in place (same key) by its successor.
 *
 * Values are UTF-8 JSON with a format number, so that operators can read them with any etcd tool:
 *
 * ```
 *   head:   {"format":1,"epoch":4,"ownerId":"6f1c…","owner":"broker-1","logStartOffset":0,"changes":17,
 *            "updatedAtMs":1700000000000,"cleanerCheckpoint":2950,"deleteHorizonMs":1700086400000}
 *   ledger: {"format":1,"ledgerId":12,"state":"open","startOffset":2950,"epoch":4,"createdAtMs":…}
 *           {"format":1,"ledgerId":9,"state":"sealed","startOffset":1200,"epoch":3,"createdAtMs":…,
 *            "endOffset":2950,"entries":1750,"bytes":1835008,"maxTimestamp":…,"sealedAtMs":…,
 *            "indexLedgerId":10,"producerSnapshotLedgerId":11}
 * ```
 *
 * `epoch` is the partition leader epoch (written into each batch's partitionLeaderEpoch), raised by every
 * takeover. `endOffset` is the offset after the ledger's last batch. `indexLedgerId` names the ledger that
 * holds the ledger's persisted offset/time index (index-snapshot.ts), or null when there is none yet;
 * `producerSnapshotLedgerId` (absent when none) the one holding the idempotent-producer state as of the
 * ledger's end offset (producer-snapshot.ts). A ledger the log cleaner wrote (compaction.ts) replaces
 * one or more sealed ledgers of one epoch: it keeps their start and end offsets, holds fewer entries and
 * bytes, and may hold none at all.
 *
 * Migrating: readers accept every format up to FORMAT; a new field gets a default when absent, so older
 * values stay readable in place; writers always write FORMAT.
 */
import type { KeyValue, MetadataStore, TxnOp } from '../metadata/types.js';
import { ledgerKey, ledgersPrefix, partitionPrefix, partitionStateKey } from '../metadata/layout.js';
import { LogCorruptError } from './errors.js';

export const CHAIN_FORMAT = 1;

export interface ChainHead {
  /** Partition leader epoch of the current owner. */
  readonly epoch: number;
  /** Random id of the owning PartitionLog instance: a watch tells its own changes from a new owner's. */
  readonly ownerId: string;
  /** Free-form name of the owner (a broker id), for operators. */
  readonly owner: string;
  /** Kafka's log start offset, as moved by retention and DeleteRecords. */
  readonly logStartOffset: number;
  /** Number of chain changes so far. */
  readonly changes: number;
  readonly updatedAtMs: number;
  /**
   * The log cleaner's checkpoint (Kafka's cleaner-offset-checkpoint): the end of what its last pass
   * compacted; the dirty part of the log begins here. Absent before the first pass.
   */
  readonly cleanerCheckpoint?: number;
  /**
   * The earliest delete horizon (KIP-534) among the batches the cleaner kept for their tombstones or
   * transaction markers: a pass from then on can drop them. Absent when none waits.
   */
  readonly deleteHorizonMs?: number;
}

export type ChainLedger = OpenChainLedger | SealedChainLedger;

export interface OpenChainLedger {
  readonly ledgerId: number;
  readonly state: 'open';
  readonly startOffset: number;
  readonly epoch: number;
  readonly createdAtMs: number;
}

export interface SealedChainLedger {
  readonly ledgerId: number;
  readonly state: 'sealed';
  readonly startOffset: number;
  readonly epoch: number;
  readonly createdAtMs: number;
  /** Offset after the last batch (startOffset when the ledger is empty). */
  readonly endOffset: number;
  readonly entries: number;
  readonly bytes: number;
  /** Largest batch maxTimestamp, -1 when none. */
  readonly maxTimestamp: number;
  readonly sealedAtMs: number;
  readonly indexLedgerId: number | null;
  /** Ledger holding the producer state as of endOffset (producer-snapshot.ts); absent when none. */
  readonly producerSnapshotLedgerId?: number;
}

/** The keys of one partition's chain. */
export class ChainKeys {
  readonly partitionPrefix: string;
  readonly head: string;
  readonly ledgersPrefix: string;
  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {
    this.partitionPrefix = partitionPrefix(topic, partition);
    this.head = partitionStateKey(topic, partition);
    this.ledgersPrefix = ledgersPrefix(topic, partition);
  }

  ledger(startOffset: number): string {
    return ledgerKey(this.topic, this.partition, startOffset);
  }
}

// ---------------------------------------------------------------------------------------------- codec

function isSafeInt(v: unknown, min = 0): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
}

function parseJson(value: Buffer, key: string): Record<string, unknown> {
  let o: unknown;
  try {
    o = JSON.parse(value.toString('utf8'));
  } catch {
    throw new LogCorruptError(`${key} does not hold JSON`, { key });
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new LogCorruptError(`${key} is not an object`, { key });
  const format = (o as { format?: unknown }).format;
  if (!isSafeInt(format, 1) || format > CHAIN_FORMAT) {
    throw new LogCorruptError(`${key} has format ${String(format)}; this version reads up to ${CHAIN_FORMAT}`, { key });
  }
  return o as Record<string, unknown>;
}

export function encodeHead(head: ChainHead): Buffer {
  return Buffer.from(JSON.stringify({ format: CHAIN_FORMAT, ...head }), 'utf8');
}

export function decodeHead(value: Buffer, key: string): ChainHead {
  const o = parseJson(value, key);
  const { epoch, ownerId, owner, logStartOffset, changes, updatedAtMs } = o;
  if (!isSafeInt(epoch) || epoch > 0x7fffffff) throw new LogCorruptError(`${key}: bad epoch`, { key });
  if (typeof ownerId !== 'string' || typeof owner !== 'string') throw new LogCorruptError(`${key}: bad owner`, { key });
  if (!isSafeInt(logStartOffset) || !isSafeInt(changes) || !isSafeInt(updatedAtMs)) {
    throw new LogCorruptError(`${key}: bad offsets or counters`, { key });
  }
  const { cleanerCheckpoint, deleteHorizonMs } = o;
  if (cleanerCheckpoint !== undefined && !isSafeInt(cleanerCheckpoint)) throw new LogCorruptError(`${key}: bad cleaner checkpoint`, { key });
  if (deleteHorizonMs !== undefined && !isSafeInt(deleteHorizonMs)) throw new LogCorruptError(`${key}: bad delete horizon`, { key });
  return {
    epoch,
    ownerId,
    owner,
    logStartOffset,
    changes,
    updatedAtMs,
    ...(cleanerCheckpoint !== undefined ? { cleanerCheckpoint } : {}),
    ...(deleteHorizonMs !== undefined ? { deleteHorizonMs } : {}),
  };
}

export function encodeLedger(ledger: ChainLedger): Buffer {
  return Buffer.from(JSON.stringify({ format: CHAIN_FORMAT, ...ledger }), 'utf8');
}

export function decodeLedger(value: Buffer, key: string): ChainLedger {
  const o = parseJson(value, key);
  const { ledgerId, state, startOffset, epoch, createdAtMs } = o;
  if (!isSafeInt(ledgerId, 1) || !isSafeInt(startOffset) || !isSafeInt(epoch) || !isSafeInt(createdAtMs)) {
    throw new LogCorruptError(`${key}: bad ledger id, start offset, epoch or creation time`, { key });
  }
  if (state === 'open') return { ledgerId, state, startOffset, epoch, createdAtMs };
  if (state !== 'sealed') throw new LogCorruptError(`${key}: unknown state ${String(state)}`, { key });
  const { endOffset, entries, bytes, maxTimestamp, sealedAtMs } = o;
  const indexLedgerId = o.indexLedgerId ?? null;
  const producerSnapshotLedgerId = o.producerSnapshotLedgerId ?? null;
  if (
    !isSafeInt(endOffset) ||
    endOffset < startOffset ||
    !isSafeInt(entries) ||
    !isSafeInt(bytes) ||
    !isSafeInt(maxTimestamp, Number.MIN_SAFE_INTEGER) ||
    !isSafeInt(sealedAtMs) ||
    (indexLedgerId !== null && !isSafeInt(indexLedgerId, 1)) ||
    (producerSnapshotLedgerId !== null && !isSafeInt(producerSnapshotLedgerId, 1))
  ) {
    throw new LogCorruptError(`${key}: bad sealed-ledger fields`, { key });
  }
  return {
    ledgerId,
    state,
    startOffset,
    epoch,
    createdAtMs,
    endOffset,
    entries,
    bytes,
    maxTimestamp,
    sealedAtMs,
    indexLedgerId: indexLedgerId as number | null,
    ...(producerSnapshotLedgerId !== null ? { producerSnapshotLedgerId: producerSnapshotLedgerId as number } : {}),
  };
}

// --------------------------------------------------------------------------------------------- reads

export interface LoadedChain {
  /** The head and its modRevision; null for a partition that was never opened. */
  readonly head: { readonly value: ChainHead; readonly modRevision: number } | null;
  /** The ledgers, ordered by start offset. */
  readonly ledgers: ChainLedger[];
}

const LIST_PAGE = 1000;

/**
 * Reads the head, then the ledger keys (paged). A change made after the head was read also changes the
 * head, so a txn that compares the head's modRevision with the one returned here fails if the listed
 * ledgers are stale.
 */
export async function loadChain(metadata: MetadataStore, keys: ChainKeys): Promise<LoadedChain> {
  const headKv = await metadata.get(keys.head);
  const ledgers: ChainLedger[] = [];
  let startAfter: string | undefined;
  for (;;) {
    const page = await metadata.list(keys.ledgersPrefix, { limit: LIST_PAGE, ...(startAfter ? { startAfter } : {}) });
    for (const kv of page.kvs) ledgers.push(decodeLedgerKv(kv, keys));
    if (!page.more || page.kvs.length === 0) break;
    startAfter = page.kvs[page.kvs.length - 1]!.key;
  }
  ledgers.sort((a, b) => a.startOffset - b.startOffset);
  for (let i = 1; i < ledgers.length; i++) {
    const prev = ledgers[i - 1]!;
    if (prev.state !== 'sealed') {
      throw new LogCorruptError(`chain of ${keys.topic}-${keys.partition}: ledger ${prev.ledgerId} is open but not last`, {
        ledgerId: prev.ledgerId,
      });
    }
    if (prev.endOffset > ledgers[i]!.startOffset) {
      throw new LogCorruptError(
        `chain of ${keys.topic}-${keys.partition}: ledger ${prev.ledgerId} ends at ${prev.endOffset}, after ledger ` +
          `${ledgers[i]!.ledgerId} starts at ${ledgers[i]!.startOffset}`,
        { ledgerId: prev.ledgerId },
      );
    }
  }
  return {
    head: headKv ? { value: decodeHead(headKv.value, keys.head), modRevision: headKv.modRevision } : null,
    ledgers,
  };
}

function decodeLedgerKv(kv: KeyValue, keys: ChainKeys): ChainLedger {
  const ledger = decodeLedger(kv.value, kv.key);
  if (kv.key !== keys.ledger(ledger.startOffset)) {
    throw new LogCorruptError(`${kv.key} holds a ledger starting at ${ledger.startOffset}`, { key: kv.key });
  }
  return ledger;
}

// -------------------------------------------------------------------------------------------- writes

/** Puts and deletes of one chain change, applied with the head by `commitChainChange`. */
export interface ChainChange {
  readonly put?: readonly ChainLedger[];
  /** Start offsets of ledger keys to delete. */
  readonly delete?: readonly number[];
}

export type CommitResult = { readonly ok: true; readonly revision: number } | { readonly ok: false };

/**
 * Applies `change` and writes `head` iff the head's modRevision is still `expectRevision` (0: the head must
 * not exist). On success the head's new modRevision is `revision`.
 */
export async function commitChainChange(
  metadata: MetadataStore,
  keys: ChainKeys,
  expectRevision: number,
  head: ChainHead,
  change: ChainChange,
): Promise<CommitResult> {
  const ops: TxnOp[] = [{ type: 'put', key: keys.head, value: encodeHead(head) }];
  for (const l of change.put ?? []) ops.push({ type: 'put', key: keys.ledger(l.startOffset), value: encodeLedger(l) });
  for (const start of change.delete ?? []) ops.push({ type: 'delete', key: keys.ledger(start) });
  const result = await metadata.txn({
    compare: [{ key: keys.head, target: 'modRevision', op: '==', value: expectRevision }],
    success: ops,
  });
  return result.succeeded ? { ok: true, revision: result.revision } : { ok: false };
}

/** Deletes the whole chain (head and ledger keys) iff the head's modRevision is still `expectRevision`. */
export async function deleteChain(metadata: MetadataStore, keys: ChainKeys, expectRevision: number): Promise<boolean> {
  const result = await metadata.txn({
    compare: [{ key: keys.head, target: 'modRevision', op: '==', value: expectRevision }],
    success: [{ type: 'deletePrefix', prefix: keys.partitionPrefix }],
  });
  return result.succeeded;
}

/** Most ledger keys one txn deletes (etcd's --max-txn-ops is 128 by default; the head takes one). */
export const MAX_DELETES_PER_TXN = 100;
