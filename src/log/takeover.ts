/**
 * Opening a PartitionLog is a takeover: load the chain, fence the previous owner's open ledger, index every
 * ledger (from its persisted snapshot where usable, else from its batches), open a new ledger and record
 * all of it with one compare-and-set on the chain head, raising the partition leader epoch.
 */
import { RecordBatch } from '../../protocol/records/batch.js';
import type { LedgerWriter } from '../ledger/types.js';
import { commitChainChange, loadChain, type ChainHead, type ChainLedger, type CommitResult, type LoadedChain, type SealedChainLedger } from './chain.js';
import { LogCorruptError, LogError, LogFencedError, LogStorageError } from './errors.js';
import { decodeIndexSnapshot } from './index-snapshot.js';
import { isLedgerError, ledgerIdsOf, openRecord, sealedRecord, type LogCore } from './log-core.js';
import { collectTailBatch, loadProducerState, type FencedTail } from './producer-recovery.js';
import { IndexedLedger } from './offset-index.js';
import { readTxnMarker } from './producer-state.js';
import { decodeTxnIndex, isTxnIndexChunk, type AbortedTxnEntry } from './txn-index.js';

/**
 * The transaction events of a sealed ledger indexed from its batches (its txn index could not be read): the
 * first transactional batch of each producer after its previous marker, and the markers. Resolved in ledger
 * order once every ledger is indexed (`resolveAbortScans`), carrying transactions from one scanned ledger
 * into the next, so an aborted transaction gets the first offset Kafka's index holds; one that began in a
 * ledger that was not scanned gets the marker ledger's start (the earliest offset known to be its). The
 * producer replay at open gives exact entries for the ledgers it covers, replacing these.
 */
class LedgerAbortScan {
  private readonly events: Array<{ producerId: bigint; offset: number; marker: 'none' | 'commit' | 'abort' }> = [];
  private readonly open = new Set<bigint>();

  batch(b: RecordBatch): void {
    if (!b.hasProducerId || !b.isTransactional) return;
    const producerId = b.producerId;
    if (!b.isControl) {
      if (this.open.has(producerId)) return;
      this.open.add(producerId);
      this.events.push({ producerId, offset: b.baseOffsetNumber, marker: 'none' });
      return;
    }
    const m = readTxnMarker(b);
    if (!m) return;
    this.open.delete(producerId);
    this.events.push({ producerId, offset: b.baseOffsetNumber, marker: m.commit ? 'commit' : 'abort' });
  }

  /** The aborted transactions, `carry` holding the transactions ongoing at the ledger's start (updated). */
  resolve(carry: Map<bigint, number>, startOffset: number): AbortedTxnEntry[] {
    const out: AbortedTxnEntry[] = [];
    for (const e of this.events) {
      if (e.marker === 'none') {
        if (!carry.has(e.producerId)) carry.set(e.producerId, e.offset);
        continue;
      }
      const first = carry.get(e.producerId) ?? startOffset;
      carry.delete(e.producerId);
      if (e.marker === 'abort') out.push({ producerId: e.producerId, firstOffset: first, lastOffset: e.offset, lastStableOffset: e.offset + 1 });
    }
    return out;
  }
}

const OPEN_ATTEMPTS = 5;

async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

export class Takeover {
  /** Ledgers whose index came from a valid snapshot during open (their index ledger is kept). */
  readonly loadedFromSnapshot = new Set<IndexedLedger>();
  /** Sealed ledgers indexed from their batches during open, by ledger id: their transaction events. */
  readonly abortScans = new Map<number, LedgerAbortScan>();

  constructor(private readonly core: LogCore) {}

  async open(): Promise<void> {
    const started = performance.now();
    const cache = new Map<number, IndexedLedger>();
    for (let attempt = 1; ; attempt++) {
      let chain: LoadedChain;
      try {
        chain = await loadChain(this.core.metadata, this.core.keys);
      } catch (err) {
        if (err instanceof LogError) throw err;
        throw new LogStorageError(`cannot load the chain of ${this.core.name}`, { partition: this.core.name }, err);
      }
      // A stale opener must not fence anything: check the epoch before touching the ledgers.
      const current = chain.head?.value.epoch;
      if (this.core.requestedEpoch !== undefined && current !== undefined && this.core.requestedEpoch <= current) {
        throw new LogFencedError(this.core.name, `leader epoch ${this.core.requestedEpoch} is not above the partition's epoch ${current}`);
      }
      const ledgers = chain.ledgers;
      const last = ledgers[ledgers.length - 1];
      // Fence the previous owner's open ledger: from here on its appends fail.
      let fencedEntries = 0;
      let tail: FencedTail | null = null;
      if (last?.state === 'open') {
        try {
          fencedEntries = (await this.core.ledgers.fence(last.ledgerId)).lastAddConfirmed + 1;
        } catch (err) {
          throw this.openError(err, last);
        }
      }
      const indexed = await mapLimit(ledgers, this.core.openConcurrency, async (l) => {
        if (l.state === 'open') {
          // Its batches are read here anyway: their producer headers are kept for the replay after open.
          tail = { startOffset: l.startOffset, endOffset: l.startOffset, batches: [], count: 0, bytes: 0 };
          const built = await this.indexFromData(l, fencedEntries, tail);
          tail.endOffset = built.endOffset;
          return built;
        }
        const hit = cache.get(l.ledgerId);
        if (hit) return hit;
        const built = await this.indexSealed(l);
        cache.set(l.ledgerId, built);
        return built;
      });
      this.resolveAbortScans(ledgers);
      let writer: LedgerWriter;
      try {
        writer = await this.core.ledgers.create(this.core.config.ledgerReplication);
      } catch (err) {
        throw new LogStorageError(`cannot create a ledger for ${this.core.name}`, { partition: this.core.name }, err);
      }
      const now = this.core.clock.now();
      const prevHead = chain.head?.value;
      const lastIndexed = indexed[indexed.length - 1];
      const firstIndexed = indexed[0];
      const startOffset = lastIndexed ? lastIndexed.endOffset : (prevHead?.logStartOffset ?? 0);
      const logStartOffset = Math.max(prevHead?.logStartOffset ?? 0, firstIndexed?.startOffset ?? 0);
      const head: ChainHead = {
        epoch: this.core.requestedEpoch ?? (prevHead ? prevHead.epoch + 1 : 0),
        ownerId: this.core.ownerId,
        owner: this.core.owner,
        logStartOffset,
        changes: (prevHead?.changes ?? 0) + 1,
        updatedAtMs: now,
        ...(prevHead?.cleanerCheckpoint !== undefined ? { cleanerCheckpoint: prevHead.cleanerCheckpoint } : {}),
        ...(prevHead?.deleteHorizonMs !== undefined ? { deleteHorizonMs: prevHead.deleteHorizonMs } : {}),
      };
      this.core.head = head;
      const active = this.core.roller.newActive(writer, startOffset);
      // An empty last ledger is replaced in place (its key is the new ledger's); a fenced one is sealed.
      // (A ledger the cleaner emptied covers offsets beyond its start and keeps its key: never replaced.)
      const replace = lastIndexed !== undefined && lastIndexed.count === 0 && lastIndexed.endOffset === lastIndexed.startOffset;
      const put: ChainLedger[] = [];
      if (last?.state === 'open' && !replace) put.push({ ...sealedRecord(lastIndexed!), sealedAtMs: now });
      put.push(openRecord(active.indexed));
      let result: CommitResult;
      try {
        result = await commitChainChange(this.core.metadata, this.core.keys, chain.head?.modRevision ?? 0, head, { put });
      } catch (err) {
        await this.core.deleteLedgerQuietly(writer.ledgerId).catch(() => undefined);
        throw new LogStorageError(`cannot record the takeover of ${this.core.name}`, { partition: this.core.name }, err);
      }
      if (!result.ok) {
        await this.core.deleteLedgerQuietly(writer.ledgerId).catch(() => undefined);
        if (attempt >= OPEN_ATTEMPTS) {
          throw new LogFencedError(this.core.name, `lost the race for the chain ${attempt} times in a row`);
        }
        continue;
      }
      this.core.headRevision = result.revision;
      // Install the state.
      const needSnapshot: IndexedLedger[] = [];
      for (let i = 0; i < indexed.length; i++) {
        const l = indexed[i]!;
        if (i === indexed.length - 1 && replace) break;
        if (l.sealedAtMs === null) {
          l.seal(now);
          needSnapshot.push(l);
        } else if (l.indexLedgerId === null || !this.loadedFromSnapshot.has(l)) {
          needSnapshot.push(l);
        }
        this.core.index.add(l);
      }
      this.core.index.add(active.indexed);
      active.committed = true;
      this.core.active = active;
      this.core.logStartOffset = logStartOffset;
      this.core.highWatermark = startOffset;
      this.core.nextOffset = startOffset;
      if (replace) this.core.deleteLedgersQuietly(ledgerIdsOf(lastIndexed!));
      // The producer state: the newest snapshot plus the batches after it. Once loaded it is the state at
      // the end of the last sealed ledger, which gets a snapshot of it unless it is the one just loaded.
      const { snapshotLedgerEnd } = await loadProducerState(this.core, tail);
      const lastSealed = this.core.index.ledgers[this.core.index.ledgers.length - 2];
      const producerSnapshotFor =
        lastSealed && (snapshotLedgerEnd !== lastSealed.endOffset || lastSealed.producerSnapshotLedgerId === null) ? lastSealed : null;
      const producers = producerSnapshotFor ? this.core.producerSnapshotAt(producerSnapshotFor.endOffset) : null;
      for (const l of needSnapshot) this.core.snapshotWriter.scheduleSnapshot(l, { producers: l === producerSnapshotFor ? producers : null });
      if (producerSnapshotFor && !needSnapshot.includes(producerSnapshotFor)) {
        this.core.snapshotWriter.scheduleSnapshot(producerSnapshotFor, { index: false, producers });
      }
      this.loadedFromSnapshot.clear();
      this.core.openMs = performance.now() - started;
      try {
        await this.core.watchHead(result.revision + 1);
      } catch (err) {
        this.core.onBackgroundError(err instanceof Error ? err : new Error(String(err)));
      }
      this.core.armRetention();
      return;
    }
  }

  /** The aborted transactions of the ledgers indexed from their batches, in ledger order (LedgerAbortScan). */
  resolveAbortScans(ledgers: readonly ChainLedger[]): void {
    if (this.abortScans.size === 0) return;
    const carry = new Map<bigint, number>();
    for (const l of ledgers) {
      const scan = this.abortScans.get(l.ledgerId);
      if (!scan) {
        // Not scanned: what began before it is not known from here.
        carry.clear();
        continue;
      }
      for (const e of scan.resolve(carry, l.startOffset)) this.core.txnIndex.add(e);
    }
    this.abortScans.clear();
  }

  openError(err: unknown, l: ChainLedger): LogError {
    if (err instanceof LogError) return err;
    if (isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) {
      return new LogCorruptError(`the chain of ${this.core.name} names ledger ${l.ledgerId}, which does not exist`, {
        partition: this.core.name,
        ledgerId: l.ledgerId,
      });
    }
    return new LogStorageError(
      `cannot open ledger ${l.ledgerId} of ${this.core.name}`,
      { partition: this.core.name, ledgerId: l.ledgerId },
      err,
    );
  }

  /** A sealed ledger's index: from its snapshot when one is usable, else from its batches. */
  async indexSealed(l: SealedChainLedger): Promise<IndexedLedger> {
    if (l.indexLedgerId !== null) {
      let reason: string;
      try {
        const chunks = await this.core.ledgers.read(l.indexLedgerId, 0, Number.MAX_SAFE_INTEGER);
        const indexChunks: Buffer[] = [];
        const txnChunks: Buffer[] = [];
        for (const c of chunks) (isTxnIndexChunk(c.data) ? txnChunks : indexChunks).push(c.data);
        const decoded = decodeIndexSnapshot(indexChunks, l);
        const aborted = decodeTxnIndex(txnChunks, l);
        if (typeof decoded === 'string') {
          reason = decoded;
        } else if (typeof aborted === 'string') {
          reason = aborted;
        } else {
          for (const e of aborted) this.core.txnIndex.add(e);
          decoded.coverEnd(l.endOffset);
          decoded.indexLedgerId = l.indexLedgerId;
          decoded.producerSnapshotLedgerId = l.producerSnapshotLedgerId ?? null;
          this.loadedFromSnapshot.add(decoded);
          this.core.fromSnapshots++;
          return decoded;
        }
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
      this.core.logger?.warn(
        { partition: this.core.name, ledgerId: l.ledgerId, indexLedgerId: l.indexLedgerId, reason },
        'index snapshot unusable; indexing the ledger from its batches',
      );
    }
    const built = await this.indexFromData(l, l.entries, null, true);
    if (built.endOffset > l.endOffset) {
      throw new LogCorruptError(
        `ledger ${l.ledgerId} holds offsets up to ${built.endOffset - 1}, the chain says ${l.endOffset - 1}`,
        { partition: this.core.name, ledgerId: l.ledgerId },
      );
    }
    built.coverEnd(l.endOffset);
    built.indexLedgerId = l.indexLedgerId;
    built.producerSnapshotLedgerId = l.producerSnapshotLedgerId ?? null;
    built.seal(l.sealedAtMs);
    return built;
  }

  /** Indexes entries 0..entries-1 of a ledger from its batches' headers (reads the batches). */
  async indexFromData(l: ChainLedger, entries: number, tail: FencedTail | null = null, scanAborts = false): Promise<IndexedLedger> {
    const ledger = new IndexedLedger(l.ledgerId, l.startOffset, l.epoch, l.createdAtMs, Math.max(1, entries));
    const aborts = scanAborts ? new LedgerAbortScan() : null;
    if (entries > 0) {
      const read = await this.core.readBatches(ledger, 0, entries - 1).catch((err: unknown) => {
        throw this.openError(err, l);
      });
      let prev = l.startOffset - 1;
      for (const e of read) {
        let view: RecordBatch;
        try {
          view = RecordBatch.wrap(e.data);
        } catch (err) {
          throw new LogCorruptError(`ledger ${l.ledgerId} entry ${e.entryId} is not a record batch: ${(err as Error).message}`, {
            partition: this.core.name,
            ledgerId: l.ledgerId,
          });
        }
        const lastOffset = view.lastOffsetNumber;
        if (view.baseOffsetNumber <= prev || lastOffset < view.baseOffsetNumber) {
          throw new LogCorruptError(`ledger ${l.ledgerId} entry ${e.entryId} does not continue the offsets after ${prev}`, {
            partition: this.core.name,
            ledgerId: l.ledgerId,
          });
        }
        ledger.push(lastOffset, view.maxTimestamp, e.data.length);
        if (tail) collectTailBatch(tail, view, e.data.length);
        aborts?.batch(view);
        prev = lastOffset;
      }
    }
    if (ledger.count !== entries) {
      throw new LogCorruptError(`ledger ${l.ledgerId} returned ${ledger.count} of its ${entries} entries`, {
        partition: this.core.name,
        ledgerId: l.ledgerId,
      });
    }
    if (entries > 0) this.core.fromData++;
    if (aborts) this.abortScans.set(l.ledgerId, aborts);
    return ledger;
  }
}
