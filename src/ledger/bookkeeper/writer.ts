/**
 * The writer of one ledger: BookKeeper's LedgerHandle with its PendingAddOps and ensemble changes.
 *
 * ```
 *   append(e) ─► packet = digest header(e, LAC, length) ++ payload
 *             ─► AddRequest to each bookie of writeSet(e) = ensemble[(e + i) mod E], i < Qw
 *   ack from a bookie ─► acks(e) += index; acks(e) ≥ Qa and every entry before e completed ─► resolve(e), LAC = e
 *   EFENCED from any bookie ─► the ledger was recovery-opened elsewhere: every pending add fails FENCED
 *   a bookie fails (connection, timeout, EIO, read-only) ─► ensemble change:
 *        replacement from /available (not in the ensemble, not failed), new segment at LAC + 1 in the
 *        metadata (CAS; an IN_RECOVERY/CLOSED znode means fenced), the pending adds of its write sets
 *        lose that bookie's ack and are sent to the replacement; no add completes while it runs
 * ```
 *
 * After an add fails for any other reason the writer is broken, as a BookKeeper LedgerHandle in error is:
 * its later appends fail with LL_ERR_LEDGER_STORAGE and the owner fences the ledger and rolls to a new one.
 * Reusing an entry id whose earlier bytes may sit on some bookie would let recovery pick either version.
 */
import { LedgerFencedError, LedgerSealedError, LedgerStorageError, NoSuchLedgerError, EntryTooLargeError, LedgerStoreClosedError, type LedgerError } from '../errors.js';
import type { EntryId, LedgerAppendOptions, LedgerId, LedgerMetadata, LedgerWriter } from '../types.js';
import { RC_CLOSED, StatusCode, type BookieClientPool } from './bookie-client.js';
import type { DigestManager } from './digest.js';
import { MetadataConflictError, type VersionedMetadata, type ZkLedgerManager } from './ledger-manager.js';
import type { BkLedgerMetadata } from './metadata.js';
import { rcName } from './reader.js';
import { inWriteSet, writeSet } from './schedule.js';
import type { TailCache } from './tail-cache.js';

export interface WriterContext {
  readonly pool: BookieClientPool;
  readonly manager: ZkLedgerManager;
  readonly addTimeoutMs: number;
  readonly maxEntryBytes: number;
  /** The contract's metadata of a closed BookKeeper ledger. */
  toContract(ledgerId: LedgerId, m: BkLedgerMetadata): LedgerMetadata;
  /** Picks `count` writable bookies outside `exclude`; throws when there are not enough. */
  pickBookies(count: number, exclude: ReadonlySet<string>): Promise<string[]>;
  log(msg: string, fields?: Record<string, unknown>): void;
  /** The writer is done (sealed, fenced, deleted, broken): the store forgets it. */
  release(writer: BookKeeperLedgerWriter): void;
  /** The store's fence of a ledger (recovery-open): what a broken writer's seal comes to. */
  recover(ledgerId: LedgerId): Promise<LedgerMetadata>;
  /** Where acknowledged entries go for tailing reads (tail-cache.ts). */
  readonly tailCache: TailCache;
}

interface PendingAdd {
  readonly entryId: number;
  readonly payload: Uint8Array;
  readonly packet: Buffer;
  readonly lengthAfter: number;
  readonly acks: Set<number>;
  resolve(id: EntryId): void;
  reject(err: LedgerError): void;
}

type WriterState = 'open' | 'sealing' | 'sealed' | 'fenced' | 'deleted' | 'closed' | 'broken';

export class BookKeeperLedgerWriter implements LedgerWriter {
  private state: WriterState = 'open';
  private lac = -1;
  private pushed = -1;
  private length = 0;
  private pushedLength = 0;
  private readonly pending: PendingAdd[] = [];
  /** Ensemble indexes whose bookie failed and waits for a replacement, with the failed address. */
  private readonly failed = new Map<number, string>();
  private readonly everFailed = new Set<string>();
  private changing: Promise<void> | null = null;
  private sealing: Promise<LedgerMetadata> | null = null;
  private sealedMeta: LedgerMetadata | null = null;
  private drainWaiters: (() => void)[] = [];

  constructor(
    readonly ledgerId: LedgerId,
    private meta: VersionedMetadata,
    private readonly digest: DigestManager,
    private readonly masterKey: Buffer,
    private readonly ctx: WriterContext,
  ) {}

  get lastAddConfirmed(): EntryId {
    return this.lac;
  }
  get lastAddPushed(): EntryId {
    return this.pushed;
  }
  /** Payload bytes of 0..lastAddConfirmed. */
  get confirmedLength(): number {
    return this.length;
  }
  get isOpen(): boolean {
    return this.state === 'open' || this.state === 'sealing';
  }
  get metadata(): BkLedgerMetadata {
    return this.meta.metadata;
  }

  private get ensemble(): readonly string[] {
    return this.meta.metadata.ensembles[this.meta.metadata.ensembles.length - 1].bookies;
  }

  append(data: Uint8Array, options?: LedgerAppendOptions): Promise<EntryId> {
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    if (data.length > this.ctx.maxEntryBytes) return Promise.reject(new EntryTooLargeError(this.ledgerId, data.length, this.ctx.maxEntryBytes));
    const entryId = ++this.pushed;
    this.pushedLength += data.length;
    const packet = Buffer.concat([this.digest.packHeader(this.ledgerId, entryId, this.lac, this.pushedLength, data, options?.crc32c), data]);
    return new Promise<EntryId>((resolve, reject) => {
      const op: PendingAdd = { entryId, payload: data, packet, lengthAfter: this.pushedLength, acks: new Set(), resolve, reject };
      this.pending.push(op);
      const m = this.meta.metadata;
      for (const index of writeSet(entryId, m.ensembleSize, m.writeQuorumSize)) if (!this.failed.has(index)) this.send(op, index);
    });
  }

  private refusal(): LedgerError | null {
    switch (this.state) {
      case 'open':
        return null;
      case 'sealing':
      case 'sealed':
        return new LedgerSealedError(this.ledgerId);
      case 'fenced':
        return new LedgerFencedError(this.ledgerId);
      case 'deleted':
        return new NoSuchLedgerError(this.ledgerId);
      case 'closed':
        return new LedgerStoreClosedError();
      case 'broken':
        return new LedgerStorageError(`ledger ${this.ledgerId} failed an earlier append; fence it and write a new ledger`, { ledgerId: this.ledgerId }, undefined);
    }
  }

  private send(op: PendingAdd, index: number): void {
    const bookie = this.ensemble[index];
    void this.ctx.pool
      .get(bookie)
      .add(this.ledgerId, op.entryId, this.masterKey, op.packet, { timeoutMs: this.ctx.addTimeoutMs })
      .then((rc) => this.onAddResponse(op, index, bookie, rc));
  }

  private onAddResponse(op: PendingAdd, index: number, bookie: string, rc: number): void {
    if (!this.pending.includes(op)) return; // completed or failed already
    if (this.ensemble[index] !== bookie) return; // the bookie was replaced; the add went to its replacement
    switch (rc) {
      case StatusCode.EOK:
        op.acks.add(index);
        this.completeInOrder();
        return;
      case StatusCode.EFENCED:
        // PendingAddOp: LedgerFencedException is unrecoverable; the ledger was recovery-opened by another client.
        this.ctx.log('bookie refused an add: the ledger is fenced', { ledgerId: this.ledgerId, entryId: op.entryId, bookie });
        this.failAll('fenced');
        return;
      case StatusCode.EUA:
      case StatusCode.EBADREQ:
      case StatusCode.EBADVERSION:
        this.ctx.log('bookie refused an add', { ledgerId: this.ledgerId, entryId: op.entryId, bookie, status: rcName(rc) });
        this.failAll('broken', `bookie ${bookie} refused entry ${op.entryId}: ${rcName(rc)}`);
        return;
      case RC_CLOSED:
        return;
      default:
        // Connection lost, timeout, EIO, read-only, too many requests: replace the bookie (handleBookieFailure).
        this.ctx.log('bookie failed an add; changing the ensemble', { ledgerId: this.ledgerId, entryId: op.entryId, bookie, status: rcName(rc) });
        this.bookieFailed(index, bookie);
    }
  }

  /**
   * Resolves the adds at the head that reached the ack quorum, in entry order (sendAddSuccessCallbacks). Not
   * while the ensemble changes, as LedgerHandle defers them: the new ensemble starts at lastAddConfirmed + 1, so
   * every add past it must still be pending when the change is written, to be sent to the replacement bookie.
   * An add acknowledged meanwhile by a write quorum's surviving bookies would be recorded on the new ensemble
   * without ever reaching the new bookie. A change that fails leaves such an add to be failed with the rest.
   */
  private completeInOrder(): void {
    if (this.changing) return;
    const qa = this.meta.metadata.ackQuorumSize;
    while (this.pending.length > 0 && this.pending[0].acks.size >= qa) {
      const op = this.pending.shift()!;
      this.lac = op.entryId;
      this.length = op.lengthAfter;
      // The payload as sent: the packet is this writer's own copy, so the caller's buffer is not retained.
      this.ctx.tailCache.add(this.ledgerId, op.entryId, op.packet.subarray(op.packet.length - op.payload.length));
      op.resolve(op.entryId);
    }
    if (this.pending.length === 0) this.notifyDrained();
  }

  private bookieFailed(index: number, bookie: string): void {
    if (this.failed.has(index)) return;
    this.failed.set(index, bookie);
    this.everFailed.add(bookie);
    if (!this.changing) {
      this.changing = this.changeEnsemble().finally(() => {
        this.changing = null;
        this.completeInOrder();
      });
    }
  }

  /**
   * Replacements for `count` failed bookies of `current`. Bookies that failed this ledger before are avoided
   * first (one killed a moment ago can stay listed in /available until its ZooKeeper session expires), but only
   * as BookKeeper's BookieWatcherImpl avoids its quarantined bookies: when too few others are writable, any
   * bookie outside the current ensemble will do (one that failed and came back), rather than no ensemble change
   * at all, which would leave the ledger broken and its partition unwritable until it rolls.
   */
  private async replacementsFor(count: number, current: readonly string[]): Promise<string[]> {
    try {
      return await this.ctx.pickBookies(count, new Set([...current, ...this.everFailed]));
    } catch (err) {
      if (this.everFailed.size === 0) throw err;
      return this.ctx.pickBookies(count, new Set(current));
    }
  }

  /** BookKeeper's ensembleChangeLoop: replace every failed bookie, one metadata update per round. */
  private async changeEnsemble(): Promise<void> {
    while (this.failed.size > 0 && (this.isOpen || (this.state === 'fenced' && this.pending.length > 0))) {
      const replacing = new Map(this.failed);
      const m = this.meta.metadata;
      const current = [...this.ensemble];
      let replacements: string[];
      try {
        replacements = await this.replacementsFor(replacing.size, current);
      } catch (err) {
        this.ctx.log('ensemble change failed: not enough writable bookies', { ledgerId: this.ledgerId, error: (err as Error).message });
        this.failAll('broken', `no bookie to replace ${[...replacing.values()].join(', ')}: ${(err as Error).message}`);
        return;
      }
      const next = [...current];
      [...replacing.keys()].forEach((index, i) => (next[index] = replacements[i]));
      const firstEntryId = this.lac + 1;
      const segments = m.ensembles.slice();
      if (segments[segments.length - 1].firstEntryId === firstEntryId) segments[segments.length - 1] = { firstEntryId, bookies: next };
      else segments.push({ firstEntryId, bookies: next });
      const updated: BkLedgerMetadata = { ...m, ensembles: segments };
      try {
        this.meta = await this.ctx.manager.write(this.ledgerId, updated, this.meta.version);
      } catch (err) {
        if (err instanceof MetadataConflictError) {
          if (!err.current) return this.failAll('deleted');
          if (err.current.metadata.state !== 'OPEN') return this.failAll('fenced');
          this.meta = err.current; // our own earlier write raced a read: try again on what is there
          continue;
        }
        this.ctx.log('ensemble change failed: metadata not written', { ledgerId: this.ledgerId, error: (err as Error).message });
        return this.failAll('broken', `ledger ${this.ledgerId}'s new ensemble could not be written: ${(err as Error).message}`);
      }
      this.ctx.log('ensemble changed', { ledgerId: this.ledgerId, firstEntryId, replaced: [...replacing.values()], by: replacements });
      for (const index of replacing.keys()) this.failed.delete(index);
      // unsetSuccessAndSendWriteRequest: the pending adds of the replaced indexes go to the new bookies.
      for (const op of [...this.pending]) {
        for (const index of replacing.keys()) {
          if (!inWriteSet(op.entryId, index, m.ensembleSize, m.writeQuorumSize)) continue;
          op.acks.delete(index);
          this.send(op, index);
        }
      }
    }
  }

  /** Fails every pending add and later appends; `why` picks the error. */
  private failAll(state: 'fenced' | 'broken' | 'deleted' | 'closed', message?: string): void {
    if (this.state === 'sealed' || this.state === 'fenced' || this.state === 'deleted' || this.state === 'broken' || this.state === 'closed') {
      if (state === 'fenced' || state === 'deleted') this.state = state;
    } else {
      this.state = state;
    }
    const err =
      state === 'fenced'
        ? new LedgerFencedError(this.ledgerId)
        : state === 'deleted'
          ? new NoSuchLedgerError(this.ledgerId)
          : state === 'closed'
            ? new LedgerStoreClosedError()
            : new LedgerStorageError(message ?? `ledger ${this.ledgerId}: an append failed`, { ledgerId: this.ledgerId }, undefined);
    const ops = this.pending.splice(0);
    this.pushed = this.lac;
    this.pushedLength = this.length;
    for (const op of ops) op.reject(err);
    this.notifyDrained();
    if (state !== 'broken') this.ctx.release(this);
  }

  /**
   * The store's own fence of this ledger: appends fail FENCED from now on, the adds already issued finish one
   * way or the other (the contract's fence), and the result resolves once they have, or with the writer's
   * seal when a seal was already under way (then the fence settles on the sealed state).
   */
  async fenceLocally(): Promise<LedgerMetadata | null> {
    if (this.sealedMeta) return this.sealedMeta;
    if (this.sealing) return this.sealing.catch(() => null);
    if (this.state === 'open') this.state = 'fenced';
    await this.drained();
    this.ctx.release(this);
    return null;
  }

  /** The ledger was deleted: appends fail NO_SUCH_LEDGER. */
  markDeleted(): void {
    this.failAll('deleted');
  }

  private notifyDrained(): void {
    const w = this.drainWaiters.splice(0);
    for (const f of w) f();
  }

  private drained(): Promise<void> {
    if (this.pending.length === 0 && !this.changing) return Promise.resolve();
    return new Promise<void>((resolve) => this.drainWaiters.push(resolve)).then(() => this.drained());
  }

  /** BookKeeper's close: waits for the adds issued, then writes CLOSED with lastEntryId and length. */
  seal(): Promise<LedgerMetadata> {
    if (this.sealedMeta) return Promise.resolve(this.sealedMeta);
    if (this.sealing) return this.sealing;
    // A writer in error cannot close at its own LAC: entries past it may sit on some bookies. As Pulsar's
    // ManagedLedger does with a handle in error, the ledger is recovery-opened instead (fence, recovery reads,
    // CLOSED at what is durable), and the log indexes what recovery found past its acknowledgements.
    if (this.state === 'broken') return this.ctx.recover(this.ledgerId);
    const refused = this.refusal();
    if (refused) return Promise.reject(refused);
    this.state = 'sealing';
    this.sealing = this.doSeal().finally(() => {
      this.sealing = null;
    });
    return this.sealing;
  }

  private async doSeal(): Promise<LedgerMetadata> {
    await this.drained();
    if (this.state !== 'sealing') throw this.refusal() ?? new LedgerFencedError(this.ledgerId);
    for (;;) {
      const m = this.meta.metadata;
      const closed: BkLedgerMetadata = {
        ...m,
        state: 'CLOSED',
        lastEntryId: this.lac,
        length: this.length,
        customMetadata: new Map([...m.customMetadata, [SEALED_AT_KEY, Buffer.from(String(Date.now()))]]),
      };
      try {
        this.meta = await this.ctx.manager.write(this.ledgerId, closed, this.meta.version);
        break;
      } catch (err) {
        if (!(err instanceof MetadataConflictError)) {
          this.state = 'open';
          throw new LedgerStorageError(`ledger ${this.ledgerId} could not be closed: ${(err as Error).message}`, { ledgerId: this.ledgerId }, err);
        }
        if (!err.current) {
          this.failAll('deleted');
          throw new NoSuchLedgerError(this.ledgerId);
        }
        const cur = err.current.metadata;
        if (cur.state === 'OPEN') {
          this.meta = err.current;
          continue;
        }
        // Recovered by someone else (LedgerHandle.doAsyncCloseInternal): the same end is a success.
        if (cur.state === 'CLOSED' && cur.lastEntryId === this.lac && cur.length === this.length) {
          this.meta = err.current;
          break;
        }
        this.failAll('fenced');
        throw new LedgerFencedError(this.ledgerId);
      }
    }
    this.state = 'sealed';
    this.sealedMeta = this.ctx.toContract(this.ledgerId, this.meta.metadata);
    this.ctx.release(this);
    return this.sealedMeta;
  }

  /**
   * The store is closing: waits for the adds in flight, then tells the bookies the LAC (WriteLac), so a later
   * reader sees every acknowledged entry without fencing. The ledger stays open.
   */
  async closeForShutdown(): Promise<void> {
    if (this.isOpen) await this.drained();
    if (this.state === 'open' && this.lac >= 0) {
      const body = this.digest.packLac(this.ledgerId, this.lac);
      await Promise.all(this.ensemble.map((b) => this.ctx.pool.get(b).writeLac(this.ledgerId, this.lac, this.masterKey, body, this.ctx.addTimeoutMs)));
    }
    if (this.isOpen) this.failAll('closed');
    else this.state = this.state === 'sealed' ? 'sealed' : this.state;
  }
}

/** Custom metadata key of a sealed ledger's close time (BookKeeper's metadata has none). */
export const SEALED_AT_KEY = 'ledgerline.sealed.at.ms';
