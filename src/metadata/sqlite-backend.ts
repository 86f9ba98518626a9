/**
 * SQLite storage engine: the embedded metadata store's default, one file in the data directory.
 *
 * On-disk format (format 1)
 * -------------------------
 *   <dir>/metadata.sqlite        SQLite 3 database, PRAGMA application_id = 0x4C4C4D44 ("LLMD"),
 *   <dir>/metadata.sqlite-wal    PRAGMA user_version = format (1); journal_mode = WAL, synchronous = FULL,
 *                                locking_mode = EXCLUSIVE (one process at a time; a second opener fails)
 *
 *   meta   name TEXT PK → value INTEGER     'revision'          store revision (last committed change)
 *                                           'compactRevision'   events below it are gone
 *                                           'nextLeaseId'       next lease id to hand out
 *
 *   kv     key BLOB PK (UTF-8, memcmp order = etcd order)        current state, one row per live key
 *          value BLOB · create_revision · mod_revision · version · lease (0 = none)
 *          index kv_by_lease (lease, key) WHERE lease <> 0       keys to delete when a lease ends
 *
 *   lease  id INTEGER PK → ttl INTEGER (seconds)                 live leases; deadlines are not stored
 *
 *   event  (revision, seq) PK                                    watch history, revision order
 *          type (0 put, 1 delete) · key BLOB · value BLOB (NULL for a delete)
 *          create_revision · version · lease                     the key after the change
 *          prev_value (NULL: key did not exist) · prev_create_revision · prev_mod_revision
 *          · prev_version · prev_lease                           the key before the change
 *          index event_by_key (key, revision, seq)                one key's (or a prefix's) history, so
 *                                                                 a watch replays its own events only
 *
 *   ┌─ one metadata change = one SQLite transaction ─────────────────────────────────────────────┐
 *   │ kv rows written/deleted · event rows appended (same revision, seq 0..n) · meta.revision = r │
 *   └──────────────────────────────── COMMIT = WAL append + fsync, then the caller is answered ───┘
 *
 * A change is acknowledged only after its COMMIT returned, and with synchronous = FULL the WAL is fsynced
 * by then: an acknowledged change survives a process kill and a power cut. An unacknowledged one is either
 * wholly there or wholly absent (SQLite rolls a torn WAL tail back on open).
 *
 * Indexes that change no row are not a new format: open() adds a missing one (CREATE INDEX IF NOT EXISTS,
 * event_by_key to stores written before it), and an older Ledgerline that opens the file keeps it up to date
 * (SQLite maintains every index on every write).
 *
 * Migration: a new format raises user_version; open() upgrades older formats in one transaction before
 * anything else runs, and refuses a user_version it does not know (written by a newer Ledgerline).
 */

import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import Database from 'better-sqlite3';
import type { EventTarget, MetaName, PersistedState, StorageBackend, StoredEvent, StoredKv, StoredLease } from './backend.js';
import { MetadataFormatError, MetadataLockedError, MetadataStorageError } from './errors.js';
import { prefixRangeEnd } from './key-order.js';

export const SQLITE_FILE_NAME = 'metadata.sqlite';
const APPLICATION_ID = 0x4c4c4d44;
const FORMAT = 1;

const SCHEMA = `
CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE kv (
  key BLOB PRIMARY KEY,
  value BLOB NOT NULL,
  create_revision INTEGER NOT NULL,
  mod_revision INTEGER NOT NULL,
  version INTEGER NOT NULL,
  lease INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX kv_by_lease ON kv (lease, key) WHERE lease <> 0;
CREATE TABLE lease (id INTEGER PRIMARY KEY, ttl INTEGER NOT NULL);
CREATE TABLE event (
  revision INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  type INTEGER NOT NULL,
  key BLOB NOT NULL,
  value BLOB,
  create_revision INTEGER NOT NULL,
  version INTEGER NOT NULL,
  lease INTEGER NOT NULL,
  prev_value BLOB,
  prev_create_revision INTEGER,
  prev_mod_revision INTEGER,
  prev_version INTEGER,
  prev_lease INTEGER,
  PRIMARY KEY (revision, seq)
) WITHOUT ROWID;
INSERT INTO meta (name, value) VALUES ('revision', 1), ('compactRevision', 0), ('nextLeaseId', 1);
`;

/** Indexes added since format 1 was first written: created at every open if missing. */
const INDEXES = `
CREATE INDEX IF NOT EXISTS event_by_key ON event (key, revision, seq);
`;

interface KvRow {
  key: Buffer;
  value: Buffer;
  create_revision: number;
  mod_revision: number;
  version: number;
  lease: number;
}

interface EventRow {
  revision: number;
  seq: number;
  type: number;
  key: Buffer;
  value: Buffer | null;
  create_revision: number;
  version: number;
  lease: number;
  prev_value: Buffer | null;
  prev_create_revision: number | null;
  prev_mod_revision: number | null;
  prev_version: number | null;
  prev_lease: number | null;
}

const KV_COLUMNS = 'key, value, create_revision, mod_revision, version, lease';

function kvFromRow(row: KvRow): StoredKv {
  return {
    key: row.key.toString('utf8'),
    value: row.value,
    createRevision: row.create_revision,
    modRevision: row.mod_revision,
    version: row.version,
    lease: row.lease,
  };
}

function eventFromRow(row: EventRow): StoredEvent {
  const key = row.key.toString('utf8');
  const type = row.type === 0 ? 'put' : 'delete';
  return {
    revision: row.revision,
    seq: row.seq,
    type,
    kv: {
      key,
      value: row.value ?? Buffer.alloc(0),
      createRevision: row.create_revision,
      modRevision: row.revision,
      version: row.version,
      lease: row.lease,
    },
    prev:
      row.prev_value === null
        ? null
        : {
            key,
            value: row.prev_value,
            createRevision: row.prev_create_revision!,
            modRevision: row.prev_mod_revision!,
            version: row.prev_version!,
            lease: row.prev_lease!,
          },
  };
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

function fsyncDirectory(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** After `mkdir -p` made `first`..`last`, make each new entry durable by syncing the directory holding it. */
function fsyncCreatedParents(first: string, last: string): void {
  fsyncDirectory(dirname(first));
  let current = first;
  for (const part of relative(first, last).split(sep).filter((p) => p !== '')) {
    fsyncDirectory(current);
    current = join(current, part);
  }
}

export class SqliteBackend implements StorageBackend {
  readonly location: string;
  readonly #db: Database.Database;
  readonly #transaction: Database.Transaction<(fn: () => unknown) => unknown>;
  readonly #getKv: Database.Statement<[Buffer], KvRow>;
  readonly #range: Record<'ge' | 'gt', Record<'bounded' | 'open', Database.Statement<unknown[], KvRow>>>;
  readonly #keysWithLease: Database.Statement<[number], { key: Buffer }>;
  readonly #putKv: Database.Statement<[Buffer, Buffer, number, number, number, number]>;
  readonly #deleteKv: Database.Statement<[Buffer]>;
  readonly #appendEvent: Database.Statement<unknown[]>;
  readonly #readEvents: Database.Statement<[number], EventRow>;
  readonly #readKeyEvents: Database.Statement<[Buffer, number], EventRow>;
  readonly #readRangeEvents: Record<'bounded' | 'open', Database.Statement<unknown[], EventRow>>;
  readonly #compactEvents: Database.Statement<[number]>;
  readonly #putLease: Database.Statement<[number, number]>;
  readonly #deleteLease: Database.Statement<[number]>;
  readonly #setMeta: Database.Statement<[number, string]>;
  #closed = false;

  /**
   * Open (creating if needed) the store in `dir`. Fails with LL_ERR_METADATA_LOCKED if another connection
   * has it, LL_ERR_METADATA_FORMAT if the file is not a metadata store of a format this code reads.
   */
  static open(dir: string): SqliteBackend {
    const directory = resolve(dir);
    let firstCreated: string | undefined;
    try {
      firstCreated = mkdirSync(directory, { recursive: true });
    } catch (err) {
      throw new MetadataStorageError('open', err, { path: directory });
    }
    const file = join(directory, SQLITE_FILE_NAME);
    let db: Database.Database;
    try {
      db = new Database(file, { timeout: 0 });
    } catch (err) {
      throw new MetadataStorageError('open', err, { path: file });
    }
    try {
      // EXCLUSIVE before WAL: no shared-memory index, and the first access takes a lock held until close.
      db.pragma('locking_mode = EXCLUSIVE');
      const mode = db.pragma('journal_mode = WAL', { simple: true });
      if (mode !== 'wal') {
        throw new MetadataFormatError(`cannot put ${file} in WAL mode (got ${String(mode)})`, { path: file });
      }
      db.pragma('synchronous = FULL');
      db.pragma('journal_size_limit = 67108864');
      const fresh = SqliteBackend.#prepareSchema(db, file);
      if (fresh) {
        // The database and WAL files are new directory entries: make them durable too.
        fsyncDirectory(directory);
        if (firstCreated !== undefined) fsyncCreatedParents(firstCreated, directory);
      }
      return new SqliteBackend(db, file);
    } catch (err) {
      db.close();
      if (isBusy(err)) throw new MetadataLockedError(file, err);
      if (err instanceof MetadataFormatError) throw err;
      throw new MetadataStorageError('open', err, { path: file });
    }
  }

  /** Create the schema in a new file or check an existing one. Returns true if it was created. */
  static #prepareSchema(db: Database.Database, file: string): boolean {
    return db.transaction(() => {
      const applicationId = db.pragma('application_id', { simple: true }) as number;
      const userVersion = db.pragma('user_version', { simple: true }) as number;
      if (applicationId === 0 && userVersion === 0) {
        const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number };
        if (tables.n !== 0) {
          throw new MetadataFormatError(`${file} is a SQLite database but not a Ledgerline metadata store`, {
            path: file,
          });
        }
        db.exec(SCHEMA);
        db.exec(INDEXES);
        db.pragma(`application_id = ${APPLICATION_ID}`);
        db.pragma(`user_version = ${FORMAT}`);
        return true;
      }
      if (applicationId !== APPLICATION_ID) {
        throw new MetadataFormatError(`${file} is not a Ledgerline metadata store (application_id ${applicationId})`, {
          path: file,
          applicationId,
        });
      }
      if (userVersion !== FORMAT) {
        throw new MetadataFormatError(`${file} has metadata format ${userVersion}; this version reads format ${FORMAT}`, {
          path: file,
          format: userVersion,
        });
      }
      db.exec(INDEXES);
      return false;
    }).immediate();
  }

  private constructor(db: Database.Database, file: string) {
    this.#db = db;
    this.location = file;
    this.#transaction = db.transaction((fn: () => unknown) => fn());
    this.#getKv = db.prepare(`SELECT ${KV_COLUMNS} FROM kv WHERE key = ?`);
    const range = (lower: string, upper: string) =>
      db.prepare<unknown[], KvRow>(`SELECT ${KV_COLUMNS} FROM kv WHERE ${lower}${upper} ORDER BY key LIMIT ?`);
    this.#range = {
      ge: { bounded: range('key >= ?', ' AND key < ?'), open: range('key >= ?', '') },
      gt: { bounded: range('key > ?', ' AND key < ?'), open: range('key > ?', '') },
    };
    this.#keysWithLease = db.prepare('SELECT key FROM kv WHERE lease = ? AND lease <> 0 ORDER BY key');
    this.#putKv = db.prepare(`INSERT OR REPLACE INTO kv (${KV_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`);
    this.#deleteKv = db.prepare('DELETE FROM kv WHERE key = ?');
    this.#appendEvent = db.prepare(
      `INSERT INTO event (revision, seq, type, key, value, create_revision, version, lease,
         prev_value, prev_create_revision, prev_mod_revision, prev_version, prev_lease)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#readEvents = db.prepare('SELECT * FROM event WHERE revision >= ? ORDER BY revision, seq');
    // One key: a seek in event_by_key, already in (revision, seq) order. A prefix: its range of the index
    // (the prefix's retained history), sorted; never a scan of every key's events since the revision.
    this.#readKeyEvents = db.prepare(
      'SELECT * FROM event INDEXED BY event_by_key WHERE key = ? AND revision >= ? ORDER BY revision, seq',
    );
    const rangeEvents = (upper: string) =>
      db.prepare<unknown[], EventRow>(
        `SELECT * FROM event INDEXED BY event_by_key WHERE key >= ?${upper} AND revision >= ? ORDER BY revision, seq`,
      );
    this.#readRangeEvents = { bounded: rangeEvents(' AND key < ?'), open: rangeEvents('') };
    this.#compactEvents = db.prepare('DELETE FROM event WHERE revision < ?');
    this.#putLease = db.prepare('INSERT OR REPLACE INTO lease (id, ttl) VALUES (?, ?)');
    this.#deleteLease = db.prepare('DELETE FROM lease WHERE id = ?');
    this.#setMeta = db.prepare('UPDATE meta SET value = ? WHERE name = ?');
  }

  /** The connection's durability settings as SQLite reports them (for diagnostics and tests). */
  settings(): { journalMode: string; synchronous: 'off' | 'normal' | 'full' | 'extra'; lockingMode: string } {
    const sync = this.#db.pragma('synchronous', { simple: true }) as number;
    return {
      journalMode: String(this.#db.pragma('journal_mode', { simple: true })),
      synchronous: (['off', 'normal', 'full', 'extra'] as const)[sync]!,
      lockingMode: String(this.#db.pragma('locking_mode', { simple: true })),
    };
  }

  load(): PersistedState {
    const meta = new Map(
      (this.#db.prepare('SELECT name, value FROM meta').all() as Array<{ name: string; value: number }>).map((r) => [
        r.name,
        r.value,
      ]),
    );
    const need = (name: MetaName): number => {
      const value = meta.get(name);
      if (value === undefined) {
        throw new MetadataFormatError(`${this.location} lacks meta row ${name}`, { path: this.location, name });
      }
      return value;
    };
    const leases = this.#db.prepare('SELECT id, ttl FROM lease ORDER BY id').all() as StoredLease[];
    return {
      revision: need('revision'),
      compactRevision: need('compactRevision'),
      nextLeaseId: need('nextLeaseId'),
      leases,
    };
  }

  atomically<T>(fn: () => T): T {
    return this.#transaction.immediate(fn) as T;
  }

  getKv(key: string): StoredKv | undefined {
    const row = this.#getKv.get(Buffer.from(key, 'utf8'));
    return row === undefined ? undefined : kvFromRow(row);
  }

  rangeKvs(prefix: string, startAfter: string | undefined, limit: number | undefined): StoredKv[] {
    const lowest = Buffer.from(prefix, 'utf8');
    const end = prefixRangeEnd(lowest);
    const after = startAfter === undefined ? undefined : Buffer.from(startAfter, 'utf8');
    const useAfter = after !== undefined && Buffer.compare(after, lowest) >= 0;
    const statements = this.#range[useAfter ? 'gt' : 'ge'];
    const lower = useAfter ? after : lowest;
    const rows =
      end === null
        ? statements.open.all(lower, limit ?? -1)
        : statements.bounded.all(lower, end, limit ?? -1);
    return rows.map(kvFromRow);
  }

  keysWithLease(lease: number): string[] {
    return this.#keysWithLease.all(lease).map((r) => r.key.toString('utf8'));
  }

  putKv(kv: StoredKv): void {
    this.#putKv.run(Buffer.from(kv.key, 'utf8'), kv.value, kv.createRevision, kv.modRevision, kv.version, kv.lease);
  }

  deleteKv(key: string): void {
    this.#deleteKv.run(Buffer.from(key, 'utf8'));
  }

  appendEvents(events: readonly StoredEvent[]): void {
    for (const e of events) {
      const p = e.prev;
      this.#appendEvent.run(
        e.revision,
        e.seq,
        e.type === 'put' ? 0 : 1,
        Buffer.from(e.kv.key, 'utf8'),
        e.type === 'put' ? e.kv.value : null,
        e.kv.createRevision,
        e.kv.version,
        e.kv.lease,
        p === null ? null : p.value,
        p === null ? null : p.createRevision,
        p === null ? null : p.modRevision,
        p === null ? null : p.version,
        p === null ? null : p.lease,
      );
    }
  }

  readEvents(fromRevision: number, target?: EventTarget): StoredEvent[] {
    if (target === undefined || ('prefix' in target && target.prefix === '')) {
      return this.#readEvents.all(fromRevision).map(eventFromRow);
    }
    if ('key' in target) return this.#readKeyEvents.all(Buffer.from(target.key, 'utf8'), fromRevision).map(eventFromRow);
    const lowest = Buffer.from(target.prefix, 'utf8');
    const end = prefixRangeEnd(lowest);
    const rows =
      end === null
        ? this.#readRangeEvents.open.all(lowest, fromRevision)
        : this.#readRangeEvents.bounded.all(lowest, end, fromRevision);
    return rows.map(eventFromRow);
  }

  compactEvents(beforeRevision: number): void {
    this.#compactEvents.run(beforeRevision);
  }

  putLease(lease: StoredLease): void {
    this.#putLease.run(lease.id, lease.ttl);
  }

  deleteLease(id: number): void {
    this.#deleteLease.run(id);
  }

  setMeta(name: MetaName, value: number): void {
    this.#setMeta.run(value, name);
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#db.close();
  }
}
