/**
 * BookKeeper's ZooKeeper ledger manager, as its Java client runs it (HierarchicalLedgerManager,
 * ZkLedgerIdGenerator/LongZkLedgerIdGenerator, the bookie registration manager's /available):
 *
 * ```
 *   /ledgers                         (metadataServiceUri's path)
 *   ├── LAYOUT                       "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1\n"
 *   ├── INSTANCEID, cookies/, underreplication/ …   (BookKeeper's own; never touched here)
 *   ├── available/                   <host:port> ephemeral per writable bookie
 *   │   └── readonly/                <host:port> of read-only bookies (never chosen for an ensemble)
 *   ├── idgen/ID-<seq>               ephemeral-sequential, deleted at once: 31-bit ledger ids
 *   ├── idgen-long/HOB-<hi>/ID-<lo>  the same for 63-bit ids, once 31 bits ran out
 *   ├── 00/0000/L0042                ledger 42's metadata (BookieMetadataFormatVersion 3), version = CAS token
 *   └── 000/0000/0000/0001/L0042     a ledger id ≥ 2^31-1 (long hierarchical paths)
 * ```
 *
 * Updates are compare-and-set on the znode version, as BookKeeper's MetadataUpdateLoop does: a conflict
 * reads the znode again and lets the caller decide. Deleting a ledger deletes its znode only: each bookie's
 * garbage collector then frees its entries (BookKeeper's GC compares its ledgers with this list).
 */
import { parseLayout, ledgerIdOfPath, ledgerPath, parseLedgerMetadata, serializeLedgerMetadata, type BkLedgerMetadata, type LedgerLayout } from './metadata.js';
import { ZkError, type LedgerZk } from './zk.js';

/** A ledger's metadata with the znode version it was read at. */
export interface VersionedMetadata {
  readonly metadata: BkLedgerMetadata;
  readonly version: number;
}

/** Another writer changed the znode first (ZooKeeper BADVERSION): `current` is what it holds now. */
export class MetadataConflictError extends Error {
  readonly code = 'LL_ERR_BK_METADATA_CONFLICT';
  constructor(
    readonly ledgerId: number,
    readonly current: VersionedMetadata | null,
  ) {
    super(`ledger ${ledgerId}'s metadata changed concurrently`);
  }
}

/** Names under the root that are not ledger directories. */
const NOT_LEDGER_DIRS = new Set(['available', 'idgen', 'idgen-long', 'LAYOUT', 'INSTANCEID', 'cookies', 'underreplication', 'bookies', 'ledgers']);

export class ZkLedgerManager {
  private constructor(
    private readonly zk: LedgerZk,
    readonly root: string,
    readonly layout: LedgerLayout,
  ) {}

  /** Reads /<root>/LAYOUT (BookKeeper's initnewcluster writes it); refuses a root without one. */
  static async open(zk: LedgerZk, root: string): Promise<ZkLedgerManager> {
    const layout = await zk.get(`${root}/LAYOUT`);
    if (!layout) throw new ZkError('NO_NODE', `${root}/LAYOUT does not exist: the BookKeeper cluster's metadata is not initialized (bookkeeper shell initnewcluster)`);
    return new ZkLedgerManager(zk, root, parseLayout(layout.data.toString('utf8')));
  }

  path(ledgerId: number): string {
    return ledgerPath(this.root, ledgerId, this.layout);
  }

  /**
   * A new ledger id, as BookKeeper's id generator makes one: an ephemeral-sequential znode under idgen/
   * (deleted again at once), or under idgen-long/HOB-<high bits>/ once 31-bit ids are used up. Id 0, which
   * the first sequential znode of a new cluster yields, is skipped: Ledgerline's ledger ids are positive.
   */
  async newLedgerId(): Promise<number> {
    for (;;) {
      const id = await this.generateId();
      if (id > 0) return id;
    }
  }

  private async generateId(): Promise<number> {
    const longRoot = `${this.root}/idgen-long`;
    if ((await this.zk.get(longRoot)) === null) {
      const id = await this.sequential(`${this.root}/idgen/ID-`);
      if (id < 0x7fffffff) return id;
      try {
        await this.zk.create(longRoot, Buffer.alloc(0), 'persistent');
      } catch (err) {
        if (!(err instanceof ZkError && err.zkCode === 'NODE_EXISTS')) throw err;
      }
    }
    const hobs = (await this.zk.children(longRoot)).map((c) => (c.startsWith('HOB-') ? Number(c.slice(4)) : NaN)).filter((n) => Number.isSafeInteger(n));
    let high = hobs.length ? Math.max(...hobs) : 1;
    for (;;) {
      const low = await this.sequential(`${longRoot}/HOB-${String(high).padStart(10, '0')}/ID-`);
      if (low >= 0 && low < 0x7fffffff) {
        const id = high * 2 ** 32 + low;
        if (!Number.isSafeInteger(id)) throw new ZkError('LEDGER_ID_OVERFLOW', `ledger id ${high}:${low} is beyond 2^53`);
        return id;
      }
      high++;
    }
  }

  private async sequential(prefix: string): Promise<number> {
    const created = await this.zk.create(prefix, Buffer.alloc(0), 'ephemeral-sequential');
    this.zk.delete(created, -1).catch(() => undefined); // ZkLedgerIdGenerator deletes it right away, best effort
    return Number(created.slice(prefix.length));
  }

  /** Writes a new ledger's znode; ZkError NODE_EXISTS if the id is taken. */
  async createLedger(ledgerId: number, metadata: BkLedgerMetadata): Promise<VersionedMetadata> {
    await this.zk.create(this.path(ledgerId), serializeLedgerMetadata(metadata), 'persistent');
    return { metadata, version: 0 };
  }

  /** The ledger's metadata and version, or null when it does not exist. */
  async read(ledgerId: number): Promise<VersionedMetadata | null> {
    const v = await this.zk.get(this.path(ledgerId));
    if (!v) return null;
    const metadata = parseLedgerMetadata(v.data);
    // BookKeeper stores ctime only with storeSystemtimeAsLedgerCreationTime; otherwise its readers take the
    // znode's creation time (LedgerMetadataSerDe.parseConfig's metadataStoreCtime).
    return { metadata: metadata.ctime > 0 ? metadata : { ...metadata, ctime: v.ctime }, version: v.version };
  }

  /** CAS write: MetadataConflictError (with what is there now) if the znode is no longer at `expectedVersion`. */
  async write(ledgerId: number, metadata: BkLedgerMetadata, expectedVersion: number): Promise<VersionedMetadata> {
    try {
      const version = await this.zk.set(this.path(ledgerId), serializeLedgerMetadata(metadata), expectedVersion);
      return { metadata, version };
    } catch (err) {
      if (err instanceof ZkError && (err.zkCode === 'BAD_VERSION' || err.zkCode === 'NO_NODE')) throw new MetadataConflictError(ledgerId, await this.read(ledgerId));
      throw err;
    }
  }

  /** Deletes the ledger's znode; false when it was not there. */
  async delete(ledgerId: number): Promise<boolean> {
    try {
      await this.zk.delete(this.path(ledgerId), -1);
      return true;
    } catch (err) {
      if (err instanceof ZkError && err.zkCode === 'NO_NODE') return false;
      throw err;
    }
  }

  /** Every ledger id with a znode, ascending (both path shapes: the hierarchical layout mixes them). */
  async listIds(): Promise<number[]> {
    const ids: number[] = [];
    const walk = async (rel: string, depth: number): Promise<void> => {
      const names = await this.zk.children(rel === '' ? this.root : `${this.root}/${rel}`);
      for (const name of names) {
        if (depth === 0 && NOT_LEDGER_DIRS.has(name)) continue;
        const child = rel === '' ? name : `${rel}/${name}`;
        if (name.startsWith('L')) {
          const id = ledgerIdOfPath(child);
          if (id !== null) ids.push(id);
        } else if (/^\d+$/.test(name) && depth < 4) {
          await walk(child, depth + 1);
        }
      }
    };
    await walk('', 0);
    return ids.sort((a, b) => a - b);
  }

  /** Writable bookies: /available's children but `readonly` and the read-only ones. */
  async writableBookies(): Promise<string[]> {
    const all = await this.zk.children(`${this.root}/available`);
    const readonly = new Set(await this.zk.children(`${this.root}/available/readonly`));
    return all.filter((b) => b !== 'readonly' && !readonly.has(b));
  }
}
