/**
 * Log compaction of one PartitionLog (Kafka's LogCleaner.Cleaner.doClean, over a chain of ledgers): keeps
 * the latest record of every key, every record at its original offset.
 *
 * ```
 *   chain:   [ 7 ][ 9 ][ 12 ][ 15 ][ 18 ][ 21 open ]
 *             clean─────┘└── dirty ───┘└ uncleanable: the open ledger, the ledger holding the last stable
 *             (cleaned before)            offset and after, ledgers younger than min.compaction.lag.ms
 *
 *   1. map:    read the dirty ledgers, key → offset of its latest record (offset-map.ts, bounded: when it
 *              fills, the pass ends where it stopped and the rest waits for the next one)
 *   2. groups: the ledgers up to the mapped end, consecutive, of one epoch, ≤ segment.bytes together
 *   3. filter: each group's batches into ONE new ledger: records superseded by a later offset of their
 *              key dropped, aborted transaction data dropped, tombstones and markers dropped after their
 *              delete horizon (KIP-534: set in the batch the first time a pass keeps them); a batch keeps
 *              its base and last offset, producer id, epoch and sequence; the last batch of an active
 *              producer stays even when empty (its sequence state)
 *   4. swap:   one chain txn per group puts the new ledger under the first member's key, deletes the
 *              others' keys (the head's compare fences a stale owner); then the index swaps in memory and
 *              the old ledgers are deleted
 *   5. the head records the cleaner checkpoint (end of the mapped range) and the earliest delete horizon
 * ```
 *
 * The new ledger covers exactly its group's offsets (coverEnd), keeps the last member's producer snapshot,
 * and gets an index snapshot of its own (with the aborted-transaction entries still needed) before the swap.
 * A crash at any step leaves either the old chain (new ledgers unreferenced, found by orphans.ts) or the new
 * one (old ledgers unreferenced); a pass cut short is simply redone. Reads in flight over a ledger being
 * swapped out look their offset up again (read.ts): the new ledger holds a subset of the same offsets.
 */
import type { CompressionTypeId } from '../../protocol/compression/index.js';
import { RecordBatch, TimestampType } from '../../protocol/records/batch.js';
import { buildRecordBatch, type RecordInput } from '../../protocol/records/builder.js';
import type { Record as KafkaRecord } from '../../protocol/records/record.js';
import { MAX_DELETES_PER_TXN, type ChainHead } from './chain.js';
import { compacts } from './config.js';
import { CleanedTxns } from './cleaned-txns.js';
import { ledgerIdsOf, sealedRecord, type LogCore } from './log-core.js';
import type { LedgerWriter } from '../ledger/types.js';
import { IndexedLedger } from './offset-index.js';
import type { KeyOffsetMap } from './offset-map.js';
import type { AbortedTxnEntry } from './txn-index.js';

/** Bytes read from a ledger at a time. */
const READ_CHUNK_BYTES = 4 * 1024 * 1024;
/** Bytes of appends to a new ledger left in flight before the pass waits for them. */
const WRITE_WINDOW_BYTES = 8 * 1024 * 1024;

/** Where the log stands for the cleaner (Kafka's LogToClean and LogCleanerManager.cleanableOffsets). */
export interface CleanableState {
  /** Where the dirty part begins: the cleaner checkpoint, at least the log start offset. */
  readonly firstDirtyOffset: number;
  /** The cleanable part ends here: the open ledger, the last stable offset's ledger, min.compaction.lag.ms. */
  readonly firstUncleanableOffset: number;
  /** Bytes of the sealed ledgers below the checkpoint (cleaned before). */
  readonly cleanBytes: number;
  /** Bytes of the cleanable ledgers at or after the checkpoint. */
  readonly dirtyBytes: number;
  /** dirty / (clean + dirty), 0 for an empty log (Kafka's cleanableRatio). */
  readonly dirtyRatio: number;
  /** How long past max.compaction.lag.ms the oldest dirty record is, 0 if not (KIP-354). */
  readonly compactionDelayMs: number;
  /** A delete horizon recorded by an earlier pass has passed: tombstones or markers can go. */
  readonly deleteHorizonDue: boolean;
  /** Whether a pass is due: dirty above min.cleanable.dirty.ratio, past max.compaction.lag.ms, or a horizon passed. */
  readonly due: boolean;
  /** Sealed ledgers, from the first, that a pass may rewrite. */
  readonly cleanableLedgers: number;
}

export interface CompactionOptions {
  /** The pass's clock reading: delete horizons and compaction lags are measured against it. */
  readonly now: number;
  /** The key map to fill (cleared first): its budget bounds the pass (log.cleaner.dedupe.buffer.size). */
  readonly map: KeyOffsetMap;
  /** Called with the bytes read and written as the pass goes (log.cleaner.io.max.bytes.per.second). */
  readonly throttle?: (bytes: number) => Promise<void>;
  /** Run even if no pass is due (the cleanable range must still be non-empty). */
  readonly force?: boolean;
  /** Ends the pass early (the broker stopping): what it wrote and did not swap in yet is deleted. */
  readonly signal?: AbortSignal;
}

export interface CompactionResult {
  readonly firstDirtyOffset: number;
  /** The new cleaner checkpoint: the end of what this pass mapped. */
  readonly endOffset: number;
  readonly bytesRead: number;
  readonly bytesWritten: number;
  readonly recordsRead: number;
  readonly recordsRetained: number;
  readonly ledgersBefore: number;
  readonly ledgersAfter: number;
  /** Groups written as new ledgers (a group of one ledger that nothing changes is left in place). */
  readonly groupsRewritten: number;
  /** Share of the key map's usable entries taken. */
  readonly mapUtilization: number;
  /** The map filled before the dirty part ended: another pass is due at once. */
  readonly mapFull: boolean;
  readonly ms: number;
}

/** The pass stopped because the log did (closed, fenced, deleted): what it wrote is deleted. */
class PassAborted extends Error {}

interface ActiveProducer {
  readonly lastDataOffset: number;
  readonly epoch: number;
}

interface GroupOutput {
  readonly ledger: IndexedLedger | null;
  readonly retainedAborted: AbortedTxnEntry[];
  readonly horizon: number;
  readonly bytesWritten: number;
  readonly written: number[];
}

export class Compaction {
  constructor(private readonly core: LogCore) {}

  cleanableState(now: number): CleanableState {
    const core = this.core;
    const c = core.config;
    const ls = core.index.ledgers;
    const lastOpen = ls.length > 0 && ls[ls.length - 1]!.sealedAtMs === null;
    const sealed = lastOpen ? ls.length - 1 : ls.length;
    const lso = core.lastStableOffset;
    const checkpoint = Math.max(core.head?.cleanerCheckpoint ?? 0, core.logStartOffset);
    let u = 0;
    for (; u < sealed; u++) {
      const l = ls[u]!;
      if (l.endOffset > lso) break;
      // min.compaction.lag.ms: a dirty ledger with a record younger than the lag ends the cleanable part.
      if (l.endOffset > checkpoint && c.minCompactionLagMs > 0 && l.count > 0 && l.maxTimestamp > now - c.minCompactionLagMs) break;
    }
    let cleanBytes = 0;
    let dirtyBytes = 0;
    let firstDirty = -1;
    for (let i = 0; i < u; i++) {
      const l = ls[i]!;
      if (l.endOffset <= checkpoint) cleanBytes += l.bytes;
      else {
        dirtyBytes += l.bytes;
        if (firstDirty < 0) firstDirty = i;
      }
    }
    const total = cleanBytes + dirtyBytes;
    const dirtyRatio = total > 0 ? dirtyBytes / total : 0;
    let compactionDelayMs = 0;
    if (firstDirty >= 0 && c.maxCompactionLagMs < Number.MAX_SAFE_INTEGER) {
      const l = ls[firstDirty]!;
      const earliest = l.count > 0 ? l.maxTimestampAt(0) : l.createdAtMs;
      compactionDelayMs = Math.max(0, now - earliest - c.maxCompactionLagMs);
    }
    const horizon = core.head?.deleteHorizonMs;
    const deleteHorizonDue = u > 0 && horizon !== undefined && horizon <= now;
    // Kafka's grabFilthiestCompactedLog: ratio strictly above the minimum, or needCompactionNow.
    const due =
      u > 0 && ((dirtyBytes > 0 && (dirtyRatio > c.minCleanableDirtyRatio || compactionDelayMs > 0)) || deleteHorizonDue);
    return {
      firstDirtyOffset: firstDirty >= 0 ? Math.max(checkpoint, ls[firstDirty]!.startOffset) : u > 0 ? Math.max(checkpoint, ls[u - 1]!.endOffset) : checkpoint,
      firstUncleanableOffset: u < ls.length ? ls[u]!.startOffset : core.highWatermark,
      cleanBytes,
      dirtyBytes,
      dirtyRatio,
      compactionDelayMs,
      deleteHorizonDue,
      due,
      cleanableLedgers: u,
    };
  }

  /** One compaction pass; null when the log does not compact, is not open, or no pass is due. */
  async compact(o: CompactionOptions): Promise<CompactionResult | null> {
    const core = this.core;
    if (core.state !== 'open' || !compacts(core.config)) return null;
    const started = performance.now();
    const state = this.cleanableState(o.now);
    if (state.cleanableLedgers === 0 || !(state.due || o.force)) return null;
    const ls = core.index.ledgers.slice(0, state.cleanableLedgers);
    const ledgersBefore = core.index.ledgers.length;
    const rangeEnd = ls[ls.length - 1]!.endOffset;
    const map = o.map;
    map.clear();
    const stats = { bytesRead: 0, bytesWritten: 0, recordsRead: 0, recordsRetained: 0 };

    // 1. The key map over the dirty ledgers (Kafka's buildOffsetMap), aborted transaction data left out.
    let mapEnd: number;
    const mapTxns = new CleanedTxns(this.abortedOverlapping(state.firstDirtyOffset, rangeEnd));
    try {
      mapEnd = await this.buildMap(ls, state.firstDirtyOffset, rangeEnd, mapTxns, o);
    } catch (err) {
      if (err instanceof PassAborted) return null;
      throw err;
    }
    const mapFull = mapEnd < rangeEnd;

    // 2. Groups of the ledgers the mapped range reaches.
    let reach = 0;
    while (reach < ls.length && ls[reach]!.startOffset < mapEnd) reach++;
    const groups = this.groups(ls.slice(0, reach));
    const producers = this.activeProducers();
    let horizon = Number.POSITIVE_INFINITY;
    const prevHorizon = core.head.deleteHorizonMs;
    // Horizons recorded in ledgers this pass does not reach still stand.
    if (prevHorizon !== undefined && mapEnd < (core.head.cleanerCheckpoint ?? 0)) horizon = prevHorizon;
    let groupsRewritten = 0;
    let headWritten = false;
    const checkpoint = Math.max(mapEnd, core.head.cleanerCheckpoint ?? 0);

    // 3 and 4, a group at a time, with one transaction walker for the whole range (Kafka's doClean shares one
    // CleanedTransactionMetadata between its groups): a COMMIT or ABORT marker stays while its transaction has a
    // batch left, in its own group or an earlier one.
    const txns = new CleanedTxns(groups.length > 0 ? this.abortedOverlapping(groups[0]![0]!.startOffset, groups.at(-1)!.at(-1)!.endOffset) : []);
    for (let g = 0; g < groups.length; g++) {
      const group = groups[g]!;
      let out: GroupOutput;
      try {
        out = await this.cleanGroup(group, map, mapEnd, producers, txns, o, stats);
      } catch (err) {
        if (err instanceof PassAborted) return null;
        throw err;
      }
      horizon = Math.min(horizon, out.horizon);
      const lastGroup = g === groups.length - 1;
      if (out.ledger === null) continue;
      const cleaner: Pick<ChainHead, 'cleanerCheckpoint' | 'deleteHorizonMs'> | undefined = lastGroup
        ? { cleanerCheckpoint: checkpoint, ...(Number.isFinite(horizon) ? { deleteHorizonMs: horizon } : {}) }
        : undefined;
      const swapped = await this.swap(group, out, cleaner);
      if (!swapped) return null;
      groupsRewritten++;
      if (lastGroup) headWritten = true;
    }
    if (!headWritten) {
      const ok = await core.chainOp(async () => {
        if (core.state !== 'open') return false;
        await core.commit({}, core.head.logStartOffset, {
          cleanerCheckpoint: checkpoint,
          ...(Number.isFinite(horizon) ? { deleteHorizonMs: horizon } : {}),
        });
        return true;
      });
      if (!ok) return null;
    }
    return {
      firstDirtyOffset: state.firstDirtyOffset,
      endOffset: checkpoint,
      ...stats,
      ledgersBefore,
      ledgersAfter: core.index.ledgers.length,
      groupsRewritten,
      mapUtilization: map.utilization,
      mapFull,
      ms: performance.now() - started,
    };
  }

  /**
   * Kafka's buildOffsetMap: key → latest offset over the dirty ledgers, control batches and aborted
   * transaction data left out. Returns the end of what it mapped: `rangeEnd`, or the offset of the first
   * record that did not fit when the map filled (the records from there are kept this pass).
   */
  async buildMap(ls: readonly IndexedLedger[], firstDirty: number, rangeEnd: number, txns: CleanedTxns, o: CompactionOptions): Promise<number> {
    const map = o.map;
    for (const l of ls) {
      if (l.endOffset <= firstDirty) continue;
      for await (const buf of this.batchesOf(l, o)) {
        const b = RecordBatch.unchecked(buf);
        if (b.lastOffsetNumber < firstDirty) continue;
        if (b.isControl) {
          txns.onControl(b, await firstRecordKey(b));
          continue;
        }
        if (txns.onBatch(b)) continue;
        for (const r of b.iterateRecords(await b.recordsPayload())) {
          if (r.key === null || r.offset < firstDirty) continue;
          if (!map.put(r.key, 0, r.key.length, r.offset)) return r.offset;
        }
      }
    }
    return rangeEnd;
  }

  /**
   * Kafka's groupSegmentsBySize: consecutive ledgers whose bytes and batches together stay within
   * segment.bytes and ledgerline.segment.entries, of one leader epoch (each ledger's epoch is the
   * partition's epoch history: OffsetsForLeaderEpoch), at most MAX_DELETES_PER_TXN keys per swap.
   */
  groups(ls: readonly IndexedLedger[]): IndexedLedger[][] {
    const c = this.core.config;
    const out: IndexedLedger[][] = [];
    let cur: IndexedLedger[] = [];
    let bytes = 0;
    let entries = 0;
    for (const l of ls) {
      const fits =
        cur.length > 0 &&
        cur[0]!.epoch === l.epoch &&
        cur.length < MAX_DELETES_PER_TXN &&
        bytes + l.bytes <= c.segmentBytes &&
        entries + l.count <= c.segmentEntries;
      if (!fits && cur.length > 0) {
        out.push(cur);
        cur = [];
        bytes = 0;
        entries = 0;
      }
      cur.push(l);
      bytes += l.bytes;
      entries += l.count;
    }
    if (cur.length > 0) out.push(cur);
    return out;
  }

  /** The log's aborted transactions whose marker is at or after `start` and that began before `end`. */
  abortedOverlapping(start: number, end: number): AbortedTxnEntry[] {
    return this.core.txnIndex.inRange(start, Number.MAX_SAFE_INTEGER).filter((e) => e.firstOffset < end);
  }

  /** Per producer of the partition: the offset of its last data batch and its epoch (Kafka's lastRecordsOfActiveProducers). */
  activeProducers(): Map<bigint, ActiveProducer> {
    const out = new Map<bigint, ActiveProducer>();
    for (const e of this.core.producers.entries()) {
      out.set(e.producerId, { lastDataOffset: e.batches[e.batches.length - 1]?.lastOffset ?? -1, epoch: e.epoch });
    }
    return out;
  }

  /** The batches of a sealed ledger, read in bounded chunks; stops the pass if the log stops. */
  async *batchesOf(l: IndexedLedger, o: CompactionOptions): AsyncGenerator<Buffer> {
    let next = 0;
    while (next < l.count) {
      if (this.core.state !== 'open' || o.signal?.aborted) throw new PassAborted();
      const entries = await this.core.ledgers.read(l.ledgerId, next, l.count - 1, { maxBytes: READ_CHUNK_BYTES });
      if (entries.length === 0) break;
      let bytes = 0;
      for (const e of entries) bytes += e.data.length;
      if (o.throttle) await o.throttle(bytes);
      for (const e of entries) yield e.data;
      next += entries.length;
    }
  }

  /**
   * Filters one group's batches into a new ledger (Kafka's cleanInto), streamed: at most a read chunk and
   * a write window in memory. A lone ledger nothing changes is not rewritten: its batches are only counted
   * until the first change, and copied from the ledger then.
   */
  async cleanGroup(
    group: readonly IndexedLedger[],
    map: KeyOffsetMap,
    mapEnd: number,
    producers: Map<bigint, ActiveProducer>,
    txns: CleanedTxns,
    o: CompactionOptions,
    stats: { bytesRead: number; bytesWritten: number; recordsRead: number; recordsRetained: number },
  ): Promise<GroupOutput> {
    const core = this.core;
    const first = group[0]!;
    const last = group[group.length - 1]!;
    const deleteRetentionMs = core.config.deleteRetentionMs;
    const out = new GroupWriter(core, first, o);
    /** Batches of a lone ledger kept as they are before the first change: not written until one comes. */
    let unchangedPrefix = 0;
    let horizon = Number.POSITIVE_INFINITY;
    const changed = async (): Promise<void> => {
      if (out.started) return;
      await out.start();
      // Copy the prefix that needed no change, as stored.
      for (let next = 0; next < unchangedPrefix; ) {
        const entries = await core.ledgers.read(first.ledgerId, next, unchangedPrefix - 1, { maxBytes: READ_CHUNK_BYTES });
        if (entries.length === 0) throw new Error(`ledger ${first.ledgerId} ended before entry ${next}`);
        for (const e of entries) await out.add(e.data);
        next += entries.length;
      }
    };
    try {
      if (group.length > 1) await changed();
      for (const l of group) {
        for await (const buf of this.batchesOf(l, o)) {
          stats.bytesRead += buf.length;
          const b = RecordBatch.unchecked(buf);
          const records = await b.readRecords();
          stats.recordsRead += records.length;
          // Kafka's checkBatchRetention.
          const canDiscard = b.isControl ? txns.onControl(b, records[0]?.key ?? null) : txns.onBatch(b);
          const bHorizon = b.deleteHorizonMs;
          const discardRecords = b.isControl ? canDiscard && bHorizon !== null && bHorizon <= o.now : canDiscard;
          const lastOfProducer = b.hasProducerId && isLastOfProducer(b, producers);
          if (discardRecords && !lastOfProducer) {
            await changed();
            continue;
          }
          // Kafka's shouldRetainRecord.
          const retained: KafkaRecord[] = [];
          let tombstones = false;
          for (const r of records) {
            let keep: boolean;
            if (discardRecords) keep = false;
            else if (b.isControl) keep = true;
            else if (r.offset >= mapEnd) keep = true;
            else if (r.key === null) keep = false;
            else {
              const latest = map.get(r.key, 0, r.key.length);
              const keepDeletes = bHorizon === null || o.now < bHorizon;
              keep = r.offset >= latest && (r.value !== null || keepDeletes);
            }
            if (!keep) continue;
            retained.push(r);
            if (!b.isControl && r.value === null) tombstones = true;
          }
          const markerForEmptyTxn = canDiscard && b.isControl;
          const needHorizon = (tombstones || markerForEmptyTxn) && bHorizon === null;
          const outHorizon = needHorizon ? o.now + deleteRetentionMs : bHorizon;
          if (retained.length === records.length && !needHorizon) {
            if (out.started) await out.add(buf);
            else unchangedPrefix++;
          } else if (retained.length > 0 || lastOfProducer) {
            await changed();
            await out.add(await rebuild(b, retained, outHorizon));
          } else {
            await changed();
            continue;
          }
          // A horizon still ahead is when a pass can drop them; one already passed kept nothing back (the
          // batch stayed for another reason: past the mapped range, the last batch of its producer).
          if (outHorizon !== null && outHorizon > o.now && (tombstones || markerForEmptyTxn)) horizon = Math.min(horizon, outHorizon);
          stats.recordsRetained += retained.length;
        }
      }
      const retainedAborted = txns.takeRetained();
      if (!out.started) return { ledger: null, retainedAborted: [], horizon, bytesWritten: 0, written: [] };
      const ledger = await out.finish(last, retainedAborted);
      stats.bytesWritten += out.bytesWritten;
      return { ledger, retainedAborted, horizon, bytesWritten: out.bytesWritten, written: out.written };
    } catch (err) {
      core.deleteLedgersQuietly(out.written);
      // The log stopping under the pass (closed, fenced) is not a failure of the pass.
      if (err instanceof PassAborted || core.state !== 'open' || o.signal?.aborted) throw new PassAborted();
      throw err;
    }
  }

  /**
   * Puts the group's new ledger into the chain in place of the group (one txn), then into the index; the
   * replaced ledgers are deleted. False, with the new ledgers deleted, when the chain moved on under the
   * pass (retention or DeleteRecords removed a member, the log stopped).
   */
  async swap(
    group: readonly IndexedLedger[],
    out: GroupOutput,
    cleaner: Pick<ChainHead, 'cleanerCheckpoint' | 'deleteHorizonMs'> | undefined,
  ): Promise<boolean> {
    const core = this.core;
    const ledger = out.ledger!;
    const first = group[0]!;
    const last = group[group.length - 1]!;
    let done = false;
    try {
      done = await core.chainOp(async () => {
        if (core.state !== 'open') return false;
        const at = core.index.ledgers.indexOf(first);
        if (at < 0 || group.some((l, k) => core.index.ledgers[at + k] !== l)) return false;
        ledger.producerSnapshotLedgerId = last.producerSnapshotLedgerId;
        const record = sealedRecord(ledger, ledger.indexLedgerId, last.producerSnapshotLedgerId);
        await core.commit({ put: [record], delete: group.slice(1).map((l) => l.startOffset) }, core.head.logStartOffset, cleaner);
        core.index.replaceRange(at, at + group.length, ledger);
        core.txnIndex.replaceRange(first.startOffset, last.endOffset, out.retainedAborted);
        const gone: number[] = [];
        for (const l of group) {
          for (const id of ledgerIdsOf(l)) if (id !== last.producerSnapshotLedgerId) gone.push(id);
        }
        core.deleteLedgersQuietly(gone);
        return true;
      });
    } finally {
      if (!done) core.deleteLedgersQuietly(out.written);
    }
    return done;
  }
}

/** The new ledger of a group, written as the filter goes: appends in flight bounded by WRITE_WINDOW_BYTES. */
class GroupWriter {
  #writer: LedgerWriter | null = null;
  #ledger: IndexedLedger | null = null;
  #inflight: Promise<number>[] = [];
  #inflightBytes = 0;
  bytesWritten = 0;
  /** Every ledger written for the group (data, index snapshot), to delete if it never joins the chain. */
  readonly written: number[] = [];

  constructor(
    private readonly core: LogCore,
    private readonly first: IndexedLedger,
    private readonly o: CompactionOptions,
  ) {}

  get started(): boolean {
    return this.#writer !== null;
  }

  async start(): Promise<void> {
    const writer = await this.core.ledgers.create(this.core.config.ledgerReplication);
    this.#writer = writer;
    this.written.push(writer.ledgerId);
    this.#ledger = new IndexedLedger(writer.ledgerId, this.first.startOffset, this.first.epoch, this.first.createdAtMs);
  }

  async add(buf: Buffer): Promise<void> {
    if (this.core.state !== 'open' || this.o.signal?.aborted) throw new PassAborted();
    const b = RecordBatch.unchecked(buf);
    this.#ledger!.push(b.lastOffsetNumber, b.maxTimestamp, buf.length);
    this.#inflight.push(this.#writer!.append(buf));
    this.#inflightBytes += buf.length;
    this.bytesWritten += buf.length;
    if (this.#inflightBytes >= WRITE_WINDOW_BYTES) await this.#drain();
  }

  async #drain(): Promise<void> {
    await Promise.all(this.#inflight);
    if (this.o.throttle && this.#inflightBytes > 0) await this.o.throttle(this.#inflightBytes);
    this.#inflight = [];
    this.#inflightBytes = 0;
  }

  /** Seals the ledger, covering the group's offsets up to `last`'s end, and writes its index snapshot. */
  async finish(last: IndexedLedger, retainedAborted: readonly AbortedTxnEntry[]): Promise<IndexedLedger> {
    await this.#drain();
    await this.#writer!.seal();
    const ledger = this.#ledger!;
    ledger.coverEnd(last.endOffset);
    ledger.seal(last.sealedAtMs ?? this.o.now);
    if (this.core.snapshots) {
      const snap = await this.core.snapshotWriter.writeLedgers(ledger, true, null, retainedAborted);
      this.written.push(...snap.ids);
      ledger.indexLedgerId = snap.indexLedgerId;
    }
    return ledger;
  }
}

function isLastOfProducer(b: RecordBatch, producers: Map<bigint, ActiveProducer>): boolean {
  const p = producers.get(b.producerId);
  if (!p) return false;
  if (p.lastDataOffset >= 0) return !b.isControl && b.lastOffsetNumber === p.lastDataOffset;
  return b.isControl && b.producerEpoch === p.epoch;
}

async function firstRecordKey(b: RecordBatch): Promise<Buffer | null> {
  if (b.recordCount === 0) return null;
  for (const r of b.iterateRecords(await b.recordsPayload())) return r.key;
  return null;
}

/**
 * Kafka's buildRetainedRecordsInto: the batch with only `retained`, the same base and last offset, producer
 * id, epoch, base sequence, partition leader epoch, codec and timestamp type; `horizon` set as its delete
 * horizon (KIP-534). An empty batch keeps the original max timestamp.
 */
async function rebuild(b: RecordBatch, retained: readonly KafkaRecord[], horizon: number | null): Promise<Buffer> {
  const logAppend = b.timestampType === TimestampType.LOG_APPEND_TIME;
  const inputs: RecordInput[] = retained.map((r) => ({
    key: r.key,
    value: r.value,
    headers: r.headers,
    timestamp: r.timestamp,
    offsetDelta: r.offsetDelta,
  }));
  const buf = await buildRecordBatch(inputs, {
    baseOffset: b.baseOffsetNumber,
    partitionLeaderEpoch: b.partitionLeaderEpoch,
    compression: b.compressionType as CompressionTypeId,
    timestampType: b.timestampType,
    ...(logAppend ? { logAppendTime: b.maxTimestamp } : {}),
    producerId: b.producerId,
    producerEpoch: b.producerEpoch,
    baseSequence: b.baseSequence,
    isTransactional: b.isTransactional,
    isControl: b.isControl,
    ...(horizon !== null ? { deleteHorizonMs: horizon } : {}),
    lastOffsetDelta: b.lastOffsetDelta,
    now: b.maxTimestamp,
  });
  if (retained.length === 0) RecordBatch.unchecked(buf).setMaxTimestamp(b.timestampType, b.maxTimestamp);
  return buf;
}
