/**
 * Retention (Kafka's deleteOldSegments), DeleteRecords and deletion of a PartitionLog: the chain changes
 * first, then the index, then the ledger store, so a crash in between leaves unreferenced ledgers
 * (orphans.ts), never a chain key naming a deleted ledger.
 */
import { MAX_DELETES_PER_TXN, deleteChain, loadChain, ChainKeys } from './chain.js';
import { retentionDeletes } from './config.js';
import { LogDeletedError, LogFencedError, LogStorageError, OffsetOutOfRangeError } from './errors.js';
import { isLedgerError, ledgerIdsOf, type LogCore } from './log-core.js';
import type { PartitionLogOptions, RetentionResult } from './types.js';

const DELETE_ATTEMPTS = 5;

export class Retention {
  constructor(private readonly core: LogCore) {}

  /**
   * Kafka's DeleteRecords on the leader: moves the log start offset to `offset` (-1: the high watermark);
   * ledgers wholly below it are deleted. Throws OffsetOutOfRangeError for an offset above the high watermark
   * (or negative). Resolves with the new low watermark (the log start offset), which never moves back.
   */
  async deleteRecords(offset: number): Promise<{ lowWatermark: number }> {
    const err = this.core.writeError();
    if (err) throw err;
    return this.core.chainOp(async () => {
      const target = offset === -1 ? this.core.highWatermark : offset;
      if (!Number.isSafeInteger(target) || target < 0 || target > this.core.highWatermark) {
        throw new OffsetOutOfRangeError(
          `cannot delete records of ${this.core.name} before offset ${offset}: the high watermark is ${this.core.highWatermark}`,
          { partition: this.core.name, offset, highWatermark: this.core.highWatermark },
        );
      }
      if (target > this.core.logStartOffset) await this.deleteLedgersBelow(target, 0);
      return { lowWatermark: this.core.logStartOffset };
    });
  }

  /**
   * Kafka's deleteOldSegments: deletes, oldest first, sealed ledgers past retention.ms (their newest batch
   * timestamp older than now − retention.ms; the sealing time when no batch had a timestamp), then while the
   * partition stays above retention.bytes without them, then those wholly below the log start offset. The
   * open ledger is never deleted (segment.ms seals it eventually). Advances the log start offset.
   */
  async enforceRetention(): Promise<RetentionResult> {
    const err = this.core.writeError();
    if (err) throw err;
    return this.core.chainOp(async () => {
      const ls = this.core.index.ledgers;
      const sealed = ls.length - 1;
      // Kafka's UnifiedLog.deleteOldSegments: time and size retention only when cleanup.policy includes
      // `delete`; ledgers below the log start offset (DeleteRecords) go whatever the policy.
      const deletes = retentionDeletes(this.core.config);
      const retentionMs = deletes ? this.core.config.retentionMs : -1;
      const retentionBytes = deletes ? this.core.config.retentionBytes : -1;
      const now = this.core.clock.now();
      let n = 0;
      if (retentionMs >= 0) {
        while (n < sealed) {
          const l = ls[n]!;
          const newest = l.maxTimestamp >= 0 ? l.maxTimestamp : (l.sealedAtMs ?? now);
          if (now - newest <= retentionMs) break;
          n++;
        }
      }
      if (retentionBytes >= 0) {
        let diff = this.core.index.sizeInBytes - retentionBytes;
        for (let i = 0; i < n; i++) diff -= ls[i]!.bytes;
        while (n < sealed && diff - ls[n]!.bytes >= 0) {
          diff -= ls[n]!.bytes;
          n++;
        }
      }
      while (n < sealed && ls[n]!.endOffset <= this.core.logStartOffset) n++;
      if (n === 0) return { deletedLedgers: 0, deletedBytes: 0, logStartOffset: this.core.logStartOffset };
      const newStart = Math.max(this.core.logStartOffset, ls[n]!.startOffset);
      return this.deleteLedgersBelow(newStart, n);
    });
  }

  /**
   * Sets the log start offset to `newStart` and deletes the first ledgers: at least `count`, plus every
   * sealed one wholly below `newStart`. Chain first (in txns of at most MAX_DELETES_PER_TXN keys), then the
   * index, then the ledger store: a crash in between leaves unreferenced ledgers, never a dangling key.
   */
  async deleteLedgersBelow(newStart: number, count: number): Promise<RetentionResult> {
    const ls = this.core.index.ledgers;
    let n = count;
    while (n < ls.length - 1 && ls[n]!.endOffset <= newStart) n++;
    let deletedLedgers = 0;
    let deletedBytes = 0;
    let done = 0;
    do {
      const k = Math.min(MAX_DELETES_PER_TXN, n - done);
      const batch = ls.slice(0, k);
      const start = done + k === n ? newStart : Math.max(this.core.logStartOffset, ls[k]!.startOffset);
      await this.core.commit({ delete: batch.map((l) => l.startOffset) }, start);
      this.core.index.removeFirst(k);
      // The aborted transactions of the deleted ledgers go with them (Kafka deletes a segment's .txnindex).
      const first = this.core.index.ledgers[0];
      if (first) this.core.txnIndex.dropBefore(first.startOffset);
      if (start > this.core.logStartOffset) {
        this.core.logStartOffset = start;
        this.core.stateChanged();
      }
      const ids: number[] = [];
      for (const l of batch) {
        ids.push(...ledgerIdsOf(l));
        deletedBytes += l.bytes;
      }
      deletedLedgers += batch.length;
      done += k;
      await this.core.deleteLedgersNow(ids);
    } while (done < n);
    return { deletedLedgers, deletedBytes, logStartOffset: this.core.logStartOffset };
  }

  /**
   * Deletes the partition (topic deletion): every ledger and the chain. Appends and reads fail with
   * LogDeletedError afterwards.
   */
  async delete(): Promise<void> {
    const err = this.core.state === 'failed' ? null : this.core.writeError();
    if (err) throw err;
    await this.core.chainOp(async () => {
      const gone = new LogDeletedError(this.core.name);
      let ok: boolean;
      try {
        ok = await deleteChain(this.core.metadata, this.core.keys, this.core.headRevision);
      } catch (e) {
        throw new LogStorageError(`cannot delete the chain of ${this.core.name}`, { partition: this.core.name }, e);
      }
      if (!ok) {
        const fenced = new LogFencedError(this.core.name, 'the ledger chain was changed by another owner');
        this.core.fence(fenced);
        throw fenced;
      }
      const ids: number[] = [];
      for (const l of this.core.index.ledgers) ids.push(...ledgerIdsOf(l));
      const active = this.core.active;
      if (active && !active.committed) ids.push(active.writer.ledgerId);
      this.core.stop('deleted', gone);
      await Promise.all(ids.map((id) => this.core.deleteLedgerQuietly(id)));
    });
  }
}

/**
 * Deletes a partition whatever its state and owner (topic deletion from a controller): fences its open
 * ledger, so a live owner stops, removes the chain, then deletes every ledger. A no-op if it does not exist.
 */
export async function deletePartition(
  options: Pick<PartitionLogOptions, 'topic' | 'partition' | 'ledgers' | 'metadata'>,
): Promise<void> {
  const keys = new ChainKeys(options.topic, options.partition);
  for (let attempt = 1; ; attempt++) {
    const chain = await loadChain(options.metadata, keys);
    if (!chain.head) return;
    for (const l of chain.ledgers) {
      if (l.state === 'open') {
        await options.ledgers.fence(l.ledgerId).catch((err: unknown) => {
          if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
        });
      }
    }
    if (await deleteChain(options.metadata, keys, chain.head.modRevision)) {
      for (const l of chain.ledgers) {
        const ids = l.state === 'sealed' ? [l.ledgerId, l.indexLedgerId, l.producerSnapshotLedgerId ?? null] : [l.ledgerId];
        for (const id of ids) {
          if (id === null) continue;
          await options.ledgers.delete(id).catch((err: unknown) => {
            if (!isLedgerError(err, 'LL_ERR_NO_SUCH_LEDGER')) throw err;
          });
        }
      }
      return;
    }
    if (attempt >= DELETE_ATTEMPTS) throw new LogFencedError(`${options.topic}-${options.partition}`, 'the chain kept changing');
  }
}
