/**
 * What only the SQLite engine has: a file format, durability settings, and a lock other processes see.
 * Its behaviour as a MetadataStore is covered by store-contract.test.ts.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SQLITE_FILE_NAME, openSqliteMetadataStore, type MetadataError } from '../../../src/metadata/index.js';
import { SqliteBackend } from '../../../src/metadata/sqlite-backend.js';
import { Recorder, bytes, tempDir } from './support.js';

async function rejection(run: () => unknown): Promise<MetadataError> {
  try {
    await run();
  } catch (err) {
    return err as MetadataError;
  }
  throw new Error('expected a failure');
}

describe('SQLite metadata engine', () => {
  let root: string;
  let dir: string;

  beforeEach(() => {
    root = tempDir('sqlite-engine');
    dir = join(root, 'data', 'metadata');
  });

  afterEach(() => {
    rmSync(root, { recursive: true, force: true });
  });

  it('creates its directory and file and runs in WAL mode with synchronous=FULL and an exclusive lock', () => {
    const backend = SqliteBackend.open(dir);
    try {
      expect(existsSync(join(dir, SQLITE_FILE_NAME))).toBe(true);
      expect(backend.settings()).toEqual({ journalMode: 'wal', synchronous: 'full', lockingMode: 'exclusive' });
    } finally {
      backend.close();
    }
  });

  it('marks the file with its application id and format, and reopens it', async () => {
    const store = await openSqliteMetadataStore(dir);
    await store.put('/k', bytes('v'));
    await store.close();
    const raw = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true });
    try {
      expect(raw.pragma('application_id', { simple: true })).toBe(0x4c4c4d44);
      expect(raw.pragma('user_version', { simple: true })).toBe(1);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      const row = raw.prepare('SELECT key, value, version FROM kv').get() as { key: Buffer; value: Buffer; version: number };
      expect([row.key.toString(), row.value.toString(), row.version]).toEqual(['/k', 'v', 1]);
    } finally {
      raw.close();
    }
    const again = await openSqliteMetadataStore(dir);
    expect((await again.get('/k'))?.value.toString()).toBe('v');
    await again.close();
  });

  it('adds the event index by key to a store written without it, keeping its history watchable', async () => {
    const store = await openSqliteMetadataStore(dir);
    for (let i = 0; i < 5; i++) {
      await store.put('/other', bytes(String(i)));
      await store.put('/k', bytes(String(i)));
    }
    await store.close();
    const raw = new Database(join(dir, SQLITE_FILE_NAME));
    raw.exec('DROP INDEX event_by_key'); // a store as the format-1 schema first wrote it
    raw.close();
    const again = await openSqliteMetadataStore(dir);
    const rec = new Recorder();
    await again.watch({ key: '/k' }, rec, { startRevision: 2 });
    await rec.waitForEvents(5);
    expect(rec.summary).toEqual([0, 1, 2, 3, 4].map((i) => `put /k=${i}@${3 + 2 * i}`));
    await again.close();
    const check = new Database(join(dir, SQLITE_FILE_NAME), { readonly: true });
    try {
      const index = check.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'event_by_key'").get() as { sql: string };
      expect(index.sql).toContain('event (key, revision, seq)');
      expect(check.pragma('user_version', { simple: true })).toBe(1);
    } finally {
      check.close();
    }
  });

  it("reads only one key's or one prefix's events for a watch's history, in revision order", () => {
    const backend = SqliteBackend.open(dir);
    const kv = (key: string, revision: number) => ({ key, value: bytes('v'), createRevision: revision, modRevision: revision, version: 1, lease: 0 });
    try {
      backend.atomically(() => {
        for (let r = 2; r < 2_002; r++) {
          const key = r % 100 === 0 ? '/p/watched' : `/p/others/${r % 97}`;
          backend.appendEvents([{ revision: r, seq: 0, type: 'put', kv: kv(key, r), prev: null }]);
        }
      });
      const watched = backend.readEvents(2, { key: '/p/watched' });
      expect(watched.map((e) => e.revision)).toEqual(Array.from({ length: 20 }, (_, i) => 100 * (i + 1)));
      expect(backend.readEvents(1_000, { prefix: '/p/w' }).map((e) => e.revision)).toEqual(Array.from({ length: 11 }, (_, i) => 1_000 + 100 * i));
      expect(backend.readEvents(1_990, { prefix: '/p/' })).toHaveLength(12);
      expect(backend.readEvents(1_990)).toHaveLength(12);
    } finally {
      backend.close();
    }
  });

  it('refuses a SQLite file that is not a metadata store', async () => {
    const backend = SqliteBackend.open(dir);
    backend.close();
    rmSync(join(dir, SQLITE_FILE_NAME));
    const foreign = new Database(join(dir, SQLITE_FILE_NAME));
    foreign.exec('CREATE TABLE something (x)');
    foreign.close();
    const err = await rejection(() => openSqliteMetadataStore(dir));
    expect(err.code).toBe('LL_ERR_METADATA_FORMAT');
  });

  it('refuses a metadata format newer than it knows', async () => {
    (await openSqliteMetadataStore(dir)).close();
    const raw = new Database(join(dir, SQLITE_FILE_NAME));
    raw.pragma('user_version = 2');
    raw.close();
    const err = await rejection(() => openSqliteMetadataStore(dir));
    expect(err.code).toBe('LL_ERR_METADATA_FORMAT');
    expect(err.context).toMatchObject({ format: 2 });
  });

  it('holds a lock that another process sees while the store is open, and releases it on close', async () => {
    const store = await openSqliteMetadataStore(dir);
    await store.put('/k', bytes('v'));
    const file = join(dir, SQLITE_FILE_NAME);
    // A second process opening the file the way the store does.
    const probe = `
      const Database = require(${JSON.stringify(createRequire(import.meta.url).resolve('better-sqlite3'))});
      const db = new Database(${JSON.stringify(file)}, { timeout: 0 });
      try { db.pragma('locking_mode = EXCLUSIVE'); db.pragma('journal_mode = WAL'); db.prepare('SELECT count(*) FROM kv').get(); console.log('opened'); }
      catch (e) { console.log(e.code); }
      finally { db.close(); }`;
    const whileOpen = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(whileOpen.stdout.trim()).toBe('SQLITE_BUSY');
    await store.close();
    const afterClose = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8' });
    expect(afterClose.stdout.trim()).toBe('opened');
  });
});
