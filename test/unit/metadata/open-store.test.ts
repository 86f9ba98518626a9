/** openMetadataStore(): the metadata store named by ledgerline.metadata.store, and the refusal of any other name. */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BROKER_CONFIG_BY_NAME, validateConfigValue } from '../../../src/cluster/config-defs.js';
import { loadConfig } from '../../../src/config.js';
import {
  DEFAULT_METADATA_STORE,
  METADATA_STORE_CONFIG,
  METADATA_STORE_KINDS,
  METADATA_ZOOKEEPER_CONNECT_CONFIG,
  METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG,
  MemoryMetadataVolume,
  SQLITE_FILE_NAME,
  metadataStoreKind,
  openMetadataStore,
  type MetadataError,
} from '../../../src/metadata/index.js';
import { bytes, sharedZooKeeper, tempDir, zooKeeperAvailable } from './support.js';

const REFUSAL = (value: string): string => `Invalid value ${value} for configuration ledgerline.metadata.store: String must be one of: sqlite, memory, zookeeper`;

let base: string | null = null;
afterEach(() => {
  if (base) rmSync(base, { recursive: true, force: true });
  base = null;
});
function dataDir(): string {
  base = tempDir('open-store');
  return join(base, 'metadata');
}

async function refusal(p: Promise<unknown>): Promise<MetadataError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e as MetadataError,
  );
  expect(err, 'expected a refusal').not.toBeNull();
  return err!;
}

describe('openMetadataStore', () => {
  it('opens the SQLite store in its directory by default, and it keeps what was committed across a reopen', async () => {
    const dir = dataDir();
    const store = await openMetadataStore({ dir });
    await store.put('/topics/orders', bytes('v1'));
    await store.close();
    expect(readdirSync(dir)).toContain(SQLITE_FILE_NAME);

    const again = await openMetadataStore({ dir, store: 'sqlite' });
    expect((await again.get('/topics/orders'))?.value.toString()).toBe('v1');
    await again.close();
  });

  it('refuses a second SQLite store on a directory one holds', async () => {
    const dir = dataDir();
    const store = await openMetadataStore({ dir });
    const err = await refusal(openMetadataStore({ dir }));
    expect(err.code).toBe('LL_ERR_METADATA_LOCKED');
    await store.close();
  });

  it('takes the default for a missing, null or blank value, and ignores surrounding blanks', () => {
    expect(DEFAULT_METADATA_STORE).toBe('sqlite');
    expect(metadataStoreKind(undefined)).toBe('sqlite');
    expect(metadataStoreKind(null)).toBe('sqlite');
    expect(metadataStoreKind(' ')).toBe('sqlite');
    expect(metadataStoreKind(' memory ')).toBe('memory');
  });

  it('opens the memory store without touching the disk, and a reopen on the same volume keeps its keys', async () => {
    const dir = dataDir();
    const volume = new MemoryMetadataVolume();
    const store = await openMetadataStore({ store: 'memory', dir, volume });
    await store.put('/topics/orders', bytes('v1'));
    await store.close();
    expect(existsSync(dir)).toBe(false);

    const again = await openMetadataStore({ store: 'memory', dir, volume });
    expect((await again.get('/topics/orders'))?.value.toString()).toBe('v1');
    await again.close();

    const fresh = await openMetadataStore({ store: 'memory', dir });
    expect(await fresh.get('/topics/orders')).toBeNull();
    await fresh.close();
  });

  it('refuses an unknown store name with the accepted ones, in Kafka ConfigException words, before opening anything', async () => {
    const dir = dataDir();
    for (const name of ['etcd', 'SQLite', 'ZooKeeper', 'sqlite,memory']) {
      const err = await refusal(openMetadataStore({ store: name, dir }));
      expect(err.code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect(err.message).toBe(REFUSAL(name));
    }
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses the zookeeper store without a connect string, in Kafka ConfigException words', async () => {
    for (const zookeeper of [undefined, { connect: null }, { connect: '  ' }]) {
      const err = await refusal(openMetadataStore({ store: 'zookeeper', dir: dataDir(), zookeeper }));
      expect(err.code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      expect(err.message).toBe('Missing required configuration "ledgerline.metadata.zookeeper.connect" which has no default value.');
    }
  });

  it.skipIf(!zooKeeperAvailable)('opens the zookeeper store on the connect string and chroot, shared by a second opener', async () => {
    const zk = await sharedZooKeeper();
    const zookeeper = { connect: `${zk.connectString}/ll-open-store-shared-${process.pid}`, sessionTimeoutMs: 6_000 };
    const first = await openMetadataStore({ store: ' zookeeper ', dir: dataDir(), zookeeper });
    const second = await openMetadataStore({ store: 'zookeeper', dir: dataDir(), zookeeper });
    try {
      await first.put('/topics/orders', bytes('{"partitions":3}'));
      expect((await second.get('/topics/orders'))?.value.toString()).toBe('{"partitions":3}');
      expect(existsSync(base!)).toBe(true);
      expect(readdirSync(base!)).toEqual([]); // nothing on disk
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('echoes at most 100 characters of a refused name', () => {
    expect(() => metadataStoreKind('y'.repeat(3000))).toThrow(REFUSAL(`${'y'.repeat(100)}... (3000 characters)`));
  });

  it('passes the store options through to the engine it opens', async () => {
    const zk = zooKeeperAvailable ? await sharedZooKeeper() : null;
    for (const store of METADATA_STORE_KINDS) {
      if (store === 'zookeeper' && zk === null) continue;
      const zookeeper = { connect: `${zk?.connectString}/ll-open-store-${process.pid}` };
      const opened = await openMetadataStore({ store, dir: dataDir(), maxRequestBytes: 64, zookeeper });
      const err = await refusal(opened.put('/big', Buffer.alloc(100)));
      expect(err.code).toBe('LL_ERR_METADATA_INVALID_ARGUMENT');
      await opened.close();
      rmSync(base!, { recursive: true, force: true });
    }
  });
});

describe('ledgerline.metadata.store', () => {
  it('is declared with the factory default and accepted names, read-only, with a doc', () => {
    const def = BROKER_CONFIG_BY_NAME.get(METADATA_STORE_CONFIG);
    expect(def).toMatchObject({ type: 'STRING', default: DEFAULT_METADATA_STORE, oneOf: [...METADATA_STORE_KINDS], readOnly: true });
    expect(def!.doc).toMatch(/sqlite.*memory.*zookeeper/);
  });

  it('comes with the zookeeper store\'s connect string and session timeout, Kafka\'s zookeeper.* defaults', () => {
    expect(BROKER_CONFIG_BY_NAME.get(METADATA_ZOOKEEPER_CONNECT_CONFIG)).toMatchObject({ type: 'STRING', default: '', readOnly: true });
    expect(BROKER_CONFIG_BY_NAME.get(METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG)).toMatchObject({ type: 'INT', default: '18000', readOnly: true });
    const config = loadConfig({ overrides: [[METADATA_STORE_CONFIG, 'zookeeper'], [METADATA_ZOOKEEPER_CONNECT_CONFIG, 'zk1:2181,zk2:2181/ledgerline']] });
    expect(config.values.get(METADATA_ZOOKEEPER_CONNECT_CONFIG)).toBe('zk1:2181,zk2:2181/ledgerline');
    expect(config.values.get(METADATA_ZOOKEEPER_SESSION_TIMEOUT_CONFIG)).toBe('18000');
  });

  it('is refused at configuration time with the message the factory gives', () => {
    const def = BROKER_CONFIG_BY_NAME.get(METADATA_STORE_CONFIG)!;
    expect(validateConfigValue(def, 'etcd')).toBe(REFUSAL('etcd'));
    expect(() => loadConfig({ overrides: [[METADATA_STORE_CONFIG, 'etcd']] })).toThrow(REFUSAL('etcd'));
    expect(loadConfig({ overrides: [[METADATA_STORE_CONFIG, 'memory']] }).values.get(METADATA_STORE_CONFIG)).toBe('memory');
    expect(loadConfig().values.get(METADATA_STORE_CONFIG)).toBe('sqlite');
  });
});
