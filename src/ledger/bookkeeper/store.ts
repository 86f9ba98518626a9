/**
 * `BookKeeperLedgerStore`: the LedgerStore contract (../types.ts) on Apache BookKeeper bookies, with ledger
 * metadata in ZooKeeper in BookKeeper's own format and layout (ledger-manager.ts, metadata.ts). A BookKeeper
 * client in TypeScript: writer.ts is its LedgerHandle, recovery.ts its recovery-open, reader.ts its reads.
 *
 * Ledgerline's ledgers carry `application=ledgerline` in their custom metadata (as Pulsar tags its own with
 * `application=pulsar`); every call but create treats any other ledger as absent, so other users of the same
 * BookKeeper cluster are never touched.
 */
import { randomInt } from 'node:crypto';
import { LedgerCorruptError, LedgerError, LedgerInvalidArgumentError, LedgerStorageError, LedgerStoreClosedError, NoSuchLedgerError } from '../errors.js';
import type { EntryId, LedgerCreateOptions, LedgerEntry, LedgerId, LedgerMetadata, LedgerReadOptions, LedgerStore, LedgerWriter } from '../types.js';
import { BookieClientPool } from './bookie-client.js';
import { checkQuorum, DEFAULT_TAIL_CACHE_BYTES, parseMetadataServiceUri, quorumForLedger, type BookKeeperStoreConfig, type LedgerQuorum } from './config.js';
import { DigestManager, masterKey } from './digest.js';
import { ZkLedgerManager, type VersionedMetadata } from './ledger-manager.js';
import type { BkLedgerMetadata } from './metadata.js';
import { EntryReadError, readEntry, readTail, type ReadContext } from './reader.js';
import { recoverLedger, type RecoveryContext } from './recovery.js';
import { BookKeeperLedgerWriter, SEALED_AT_KEY, type WriterContext } from './writer.js';
import { connectLedgerZk, type LedgerZk } from './zk.js';
import { TailCache } from './tail-cache.js';

/** The custom metadata that marks a ledger as Ledgerline's. */
export const APPLICATION_KEY = 'application';
export const APPLICATION_VALUE = 'ledgerline';

export interface BookKeeperLedgerStoreOptions extends BookKeeperStoreConfig {
  /** A log line for ensemble changes, fencing and bookie failures (default: none). */
  readonly log?: (msg: string, fields?: Record<string, unknown>) => void;
  /** An already connected ZooKeeper client (tests); default: connect to the URI's servers. */
  readonly zk?: LedgerZk;
  /**
   * Separates the ledgers of several Ledgerline clusters (or test stores) on one BookKeeper cluster: stored as
   * custom metadata `ledgerline.namespace`, and only ledgers of the same namespace are this store's.
   */
  readonly namespace?: string;
}

export const NAMESPACE_KEY = 'ledgerline.namespace';

/** At most this many entries of one read are in flight at once. */
const READ_WINDOW = 32;

export class BookKeeperLedgerStore implements LedgerStore {
  private closed = false;
  private readonly writers = new Map<LedgerId, BookKeeperLedgerWriter>();
  /** Metadata of closed ledgers (immutable) and whether a ledger is Ledgerline's (never changes). */
  private readonly closedCache = new Map<LedgerId, BkLedgerMetadata>();
  private readonly ours = new Map<LedgerId, boolean>();
  private readonly readCtx: ReadContext;
  private readonly recoveryCtx: RecoveryContext;
  private readonly writerCtx: WriterContext;
  private readonly tailCache: TailCache;
  private readonly digests = new Map<string, DigestManager>();

  private constructor(
    private readonly config: BookKeeperLedgerStoreOptions,
    private readonly zk: LedgerZk,
    private readonly manager: ZkLedgerManager,
    private readonly pool: BookieClientPool,
  ) {
    const log = config.log ?? (() => undefined);
    this.tailCache = new TailCache(config.tailCacheBytes ?? DEFAULT_TAIL_CACHE_BYTES);
    this.readCtx = { pool, readTimeoutMs: config.readTimeoutMs, speculativeReadTimeoutMs: config.speculativeReadTimeoutMs };
    this.recoveryCtx = {
      ...this.readCtx,
      manager,
      addTimeoutMs: config.addTimeoutMs,
      masterKeyOf: (m) => masterKey(m.password),
      digestOf: (m) => this.digestOf(m),
      log,
    };
    this.writerCtx = {
      pool,
      manager,
      addTimeoutMs: config.addTimeoutMs,
      maxEntryBytes: config.maxEntryBytes,
      toContract: (id, m) => toContract(id, m, m.lastEntryId, m.length),
      pickBookies: (n, exclude) => this.pickBookies(n, exclude),
      log,
      release: (w) => {
        if (this.writers.get(w.ledgerId) === w) this.writers.delete(w.ledgerId);
      },
      recover: (id) => this.fence(id),
      tailCache: this.tailCache,
    };
  }

  /** Connects to the metadata service the URI names and reads its layout. */
  static async open(options: BookKeeperLedgerStoreOptions): Promise<BookKeeperLedgerStore> {
    checkQuorum(options.quorum);
    const uri = parseMetadataServiceUri(options.metadataServiceUri);
    const zk = options.zk ?? (await connectLedgerZk(uri.connectString, { sessionTimeoutMs: options.zkSessionTimeoutMs }));
    try {
      const manager = await ZkLedgerManager.open(zk, uri.ledgersRoot);
      const pool = new BookieClientPool({
        requestTimeoutMs: options.addTimeoutMs,
        maxFrameBytes: options.maxEntryBytes + 64 * 1024,
        onConnectionError: (address, err) => options.log?.('bookie connection failed', { bookie: address, error: err.message }),
      });
      return new BookKeeperLedgerStore(options, zk, manager, pool);
    } catch (err) {
      if (!options.zk) await zk.close();
      throw err;
    }
  }

  private digestOf(m: BkLedgerMetadata): DigestManager {
    const k = `${m.digestType}:${Buffer.from(m.password).toString('hex')}`;
    let d = this.digests.get(k);
    if (!d) {
      d = new DigestManager(m.digestType, m.password);
      this.digests.set(k, d);
    }
    return d;
  }

  private check(): void {
    if (this.closed) throw new LedgerStoreClosedError();
  }

  /** Random placement over the writable bookies (DefaultEnsemblePlacementPolicy), read-only ones excluded. */
  private async pickBookies(count: number, exclude: ReadonlySet<string>): Promise<string[]> {
    const candidates = (await this.manager.writableBookies()).filter((b) => !exclude.has(b));
    if (candidates.length < count) throw new LedgerStorageError(`not enough writable bookies: ${count} needed, ${candidates.length} available (${candidates.join(', ') || 'none'})`, {}, undefined);
    for (let i = candidates.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [candidates[i], candidates[j]] = [candidates[j], candidates[i]];
    }
    return candidates.slice(0, count);
  }

  async create(options: LedgerCreateOptions = {}): Promise<LedgerWriter> {
    this.check();
    const q: LedgerQuorum = quorumForLedger(this.config, options);
    try {
      const ensemble = await this.pickBookies(q.ensembleSize, new Set());
      const ledgerId = await this.manager.newLedgerId();
      const metadata: BkLedgerMetadata = {
        ensembleSize: q.ensembleSize,
        writeQuorumSize: q.writeQuorum,
        ackQuorumSize: q.ackQuorum,
        state: 'OPEN',
        lastEntryId: -1,
        length: 0,
        digestType: this.config.digestType,
        password: this.config.password,
        ctime: Date.now(),
        ensembles: [{ firstEntryId: 0, bookies: ensemble }],
        customMetadata: new Map([[APPLICATION_KEY, Buffer.from(APPLICATION_VALUE)], ...(this.config.namespace ? ([[NAMESPACE_KEY, Buffer.from(this.config.namespace)]] as const) : [])]),
        cToken: 0,
      };
      const vm = await this.manager.createLedger(ledgerId, metadata);
      this.ours.set(ledgerId, true);
      const writer = new BookKeeperLedgerWriter(ledgerId, vm, this.digestOf(metadata), masterKey(metadata.password), this.writerCtx);
      this.writers.set(ledgerId, writer);
      return writer;
    } catch (err) {
      throw storageError(err, 'a ledger could not be created');
    }
  }

  /** The ledger's metadata if it is Ledgerline's, else NoSuchLedger. */
  private async readOurs(ledgerId: LedgerId): Promise<VersionedMetadata> {
    let vm: VersionedMetadata | null;
    try {
      vm = await this.manager.read(ledgerId);
    } catch (err) {
      throw storageError(err, `ledger ${ledgerId}'s metadata could not be read`);
    }
    if (!vm || !isOurs(vm.metadata, this.config.namespace)) {
      this.ours.set(ledgerId, false);
      throw new NoSuchLedgerError(ledgerId);
    }
    this.ours.set(ledgerId, true);
    if (vm.metadata.state === 'CLOSED') this.closedCache.set(ledgerId, vm.metadata);
    return vm;
  }

  private async metadataOf(ledgerId: LedgerId): Promise<BkLedgerMetadata> {
    return this.closedCache.get(ledgerId) ?? (await this.readOurs(ledgerId)).metadata;
  }

  async fence(ledgerId: LedgerId): Promise<LedgerMetadata> {
    this.check();
    validId(ledgerId);
    const local = this.writers.get(ledgerId);
    if (local) {
      const sealed = await local.fenceLocally();
      if (sealed) return sealed;
    }
    const cached = this.closedCache.get(ledgerId);
    if (cached) return toContract(ledgerId, cached, cached.lastEntryId, cached.length);
    await this.readOurs(ledgerId);
    try {
      const vm = await recoverLedger(this.recoveryCtx, ledgerId, new Map([[SEALED_AT_KEY, Buffer.from(String(Date.now()))]]));
      this.closedCache.set(ledgerId, vm.metadata);
      return toContract(ledgerId, vm.metadata, vm.metadata.lastEntryId, vm.metadata.length);
    } catch (err) {
      throw storageError(err, `ledger ${ledgerId} could not be recovered`);
    }
  }

  /** LAC and length of an open ledger: its writer's here, else what its last ensemble's bookies know. */
  private async openTail(ledgerId: LedgerId, m: BkLedgerMetadata): Promise<{ lac: number; length: number }> {
    const w = this.writers.get(ledgerId);
    if (w) return { lac: w.lastAddConfirmed, length: w.confirmedLength };
    const digest = this.digestOf(m);
    try {
      const tail = await readTail(this.readCtx, ledgerId, m, digest);
      const lac = Math.max(tail.lastAddConfirmed, -1);
      const length = lac >= 0 ? (await readEntry(this.readCtx, ledgerId, m, digest, lac)).length : 0;
      return { lac, length };
    } catch (err) {
      throw storageError(err, `the last add confirmed of ledger ${ledgerId} could not be read`);
    }
  }

  async getMetadata(ledgerId: LedgerId): Promise<LedgerMetadata> {
    this.check();
    validId(ledgerId);
    const m = await this.metadataOf(ledgerId);
    if (m.state === 'CLOSED') return toContract(ledgerId, m, m.lastEntryId, m.length);
    const { lac, length } = await this.openTail(ledgerId, m);
    return toContract(ledgerId, m, lac, length);
  }

  async read(ledgerId: LedgerId, firstEntryId: EntryId, lastEntryId: EntryId, options: LedgerReadOptions = {}): Promise<LedgerEntry[]> {
    this.check();
    validId(ledgerId);
    if (!Number.isSafeInteger(firstEntryId) || !Number.isSafeInteger(lastEntryId) || firstEntryId < 0 || lastEntryId < firstEntryId) {
      throw new LedgerInvalidArgumentError(`invalid entry range ${firstEntryId}..${lastEntryId} of ledger ${ledgerId}`, { ledgerId });
    }
    // A writer of this store knows its LAC and metadata (its ensemble changes) best.
    const w = this.writers.get(ledgerId);
    const m = w ? w.metadata : await this.metadataOf(ledgerId);
    const lac = w ? w.lastAddConfirmed : m.state === 'CLOSED' ? m.lastEntryId : (await this.openTail(ledgerId, m)).lac;
    const last = Math.min(lastEntryId, lac);
    if (firstEntryId > last) return [];
    const digest = this.digestOf(m);
    const budget = options.maxBytes ?? Infinity;
    const out: LedgerEntry[] = [];
    let bytes = 0;
    for (let start = firstEntryId; start <= last; start += READ_WINDOW) {
      const end = Math.min(last, start + READ_WINDOW - 1);
      const ids = Array.from({ length: end - start + 1 }, (_, i) => start + i);
      let entries;
      try {
        // Entries this store's writer acknowledged lately come from memory (tail-cache.ts), the rest from bookies.
        entries = await Promise.all(
          ids.map((id) => {
            const cached = this.tailCache.get(ledgerId, id);
            return cached !== undefined ? { entryId: id, payload: cached } : readEntry(this.readCtx, ledgerId, m, digest, id);
          }),
        );
      } catch (err) {
        if (err instanceof EntryReadError && err.corrupt) throw new LedgerCorruptError(err.message, { ledgerId });
        if (this.closed) throw new LedgerStoreClosedError();
        throw storageError(err, `ledger ${ledgerId} could not be read`);
      }
      for (const e of entries) {
        if (out.length > 0 && bytes + e.payload.length > budget) return out;
        out.push({ entryId: e.entryId, data: e.payload });
        bytes += e.payload.length;
      }
    }
    return out;
  }

  async list(): Promise<LedgerMetadata[]> {
    this.check();
    let ids: number[];
    try {
      ids = await this.manager.listIds();
    } catch (err) {
      throw storageError(err, 'the ledgers could not be listed');
    }
    const out: LedgerMetadata[] = [];
    for (const id of ids) {
      if (this.ours.get(id) === false) continue;
      try {
        out.push(await this.getMetadata(id));
      } catch (err) {
        if (err instanceof NoSuchLedgerError) continue; // not ours, or deleted meanwhile
        throw err;
      }
    }
    return out;
  }

  async delete(ledgerId: LedgerId): Promise<void> {
    this.check();
    validId(ledgerId);
    await this.metadataOf(ledgerId);
    this.writers.get(ledgerId)?.markDeleted();
    let deleted: boolean;
    try {
      deleted = await this.manager.delete(ledgerId);
    } catch (err) {
      throw storageError(err, `ledger ${ledgerId} could not be deleted`);
    }
    this.closedCache.delete(ledgerId);
    this.tailCache.drop(ledgerId);
    this.ours.set(ledgerId, false);
    if (!deleted) throw new NoSuchLedgerError(ledgerId);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.writers.values()].map((w) => w.closeForShutdown()));
    this.writers.clear();
    this.pool.close();
    if (!this.config.zk) await this.zk.close();
  }
}

function isOurs(m: BkLedgerMetadata, namespace: string | undefined): boolean {
  const text = (key: string): string | undefined => {
    const v = m.customMetadata.get(key);
    return v === undefined ? undefined : Buffer.from(v).toString('utf8');
  };
  return text(APPLICATION_KEY) === APPLICATION_VALUE && text(NAMESPACE_KEY) === namespace;
}

function validId(ledgerId: LedgerId): void {
  if (!Number.isSafeInteger(ledgerId) || ledgerId < 0) throw new LedgerInvalidArgumentError(`invalid ledger id ${ledgerId}`);
}

function storageError(err: unknown, message: string): LedgerError {
  if (err instanceof LedgerError) return err;
  return new LedgerStorageError(`${message}: ${(err as Error)?.message ?? String(err)}`, {}, err);
}

/** The contract's view of a BookKeeper ledger. */
export function toContract(ledgerId: LedgerId, m: BkLedgerMetadata, lac: number, length: number): LedgerMetadata {
  const sealedAt = m.customMetadata.get(SEALED_AT_KEY);
  return {
    ledgerId,
    state: m.state === 'CLOSED' ? 'sealed' : 'open',
    lastAddConfirmed: lac,
    length,
    createdAtMs: m.ctime,
    sealedAtMs: m.state === 'CLOSED' ? (sealedAt ? Number(Buffer.from(sealedAt).toString('utf8')) : m.ctime) : null,
  };
}
