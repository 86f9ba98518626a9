/**
 * Engines the metadata contract suite runs against, and helpers shared by the metadata tests.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  MemoryMetadataVolume,
  MetadataStorageError,
  openMemoryMetadataStore,
  openSqliteMetadataStore,
  type ListOptions,
  type ListResult,
  type LocalMetadataStoreOptions,
  type MetadataStore,
  type Watch,
  type WatchEvent,
  type WatchListener,
  type WatchOptions,
  type WatchResponse,
  type WatchTarget,
} from '../../../src/metadata/index.js';
import { ZooKeeperMetadataStore } from '../../../src/metadata/zookeeper/index.js';
import { bookKeeperClasspath, requireBookKeeper, startZooKeeper, type ZooKeeperProcess } from '../../../compat/cluster/index.js';
import { ZK_OP, ZooKeeperCuttingRelay } from '../../support/zookeeper-cutting-relay.js';

/** One engine's storage for one test: `open` may be called again after `close` to reopen it. */
export interface EngineInstance {
  open(options?: LocalMetadataStoreOptions): Promise<MetadataStore>;
  /** The data directory, for engines that have one. */
  readonly dir: string | undefined;
  dispose(): void;
}

export interface Engine {
  readonly name: string;
  /** Whatever a killed process had acknowledged is there after reopening (needs a directory). */
  readonly survivesProcessKill: boolean;
  create(): EngineInstance;
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `ll-metadata-${label}-`));
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  survivesProcessKill: true,
  create() {
    const dir = tempDir('sqlite');
    return {
      dir,
      open: (options) => openSqliteMetadataStore(join(dir, 'metadata'), options),
      dispose: () => rmSync(dir, { recursive: true, force: true }),
    };
  },
};

export const memoryEngine: Engine = {
  name: 'memory',
  survivesProcessKill: false,
  create() {
    const volume = new MemoryMetadataVolume('memory-test');
    return {
      dir: undefined,
      open: (options) => openMemoryMetadataStore(volume, options),
      dispose: () => {},
    };
  },
};

/** One real ZooKeeper per test file (process), started on first use; the launcher kills it when the file's process exits. */
let zooKeeper: Promise<ZooKeeperProcess> | undefined;
export function sharedZooKeeper(): Promise<ZooKeeperProcess> {
  zooKeeper ??= startZooKeeper({ tickTimeMs: 500 });
  return zooKeeper;
}
let chroots = 0;

/** Whether ZooKeeper-backed tests run: the jars are there, or LEDGERLINE_REQUIRE_BOOKKEEPER=1 demands them. */
export const zooKeeperAvailable = bookKeeperClasspath() !== undefined || requireBookKeeper();

/** A fresh chroot per instance; `exclusive` so that a second open is refused as the embedded store's is. */
export const zookeeperEngine: Engine = {
  name: 'zookeeper',
  survivesProcessKill: false, // the crash fixture writes SQLite; ZooKeeper's own durability is ZooKeeper's
  create() {
    const chroot = `/ll-metadata-${process.pid}-${++chroots}-${Date.now()}`;
    return {
      dir: undefined,
      open: async (options) => {
        const zk = await sharedZooKeeper();
        return ZooKeeperMetadataStore.open({ ...options, connect: zk.connectString + chroot, exclusive: true, sessionTimeoutMs: 10_000 });
      },
      dispose: () => {},
    };
  },
};

export const engines: Engine[] = [sqliteEngine, memoryEngine, ...(zooKeeperAvailable ? [zookeeperEngine] : [])];

export const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Wait until `condition` holds, yielding to the event loop; fail after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** A watch listener that records what it receives. */
export class Recorder implements WatchListener {
  readonly responses: WatchResponse[] = [];
  readonly errors: Error[] = [];

  onEvents(response: WatchResponse): void {
    this.responses.push(response);
  }

  onError(error: Error): void {
    this.errors.push(error);
  }

  get events(): WatchEvent[] {
    return this.responses.flatMap((r) => [...r.events]);
  }

  /** Compact form for assertions: "put /a=1@2", "delete /a@3". */
  get summary(): string[] {
    return this.events.map((e) =>
      e.type === 'put'
        ? `put ${e.kv.key}=${e.kv.value.toString()}@${e.kv.modRevision}`
        : `delete ${e.kv.key}@${e.kv.modRevision}`,
    );
  }

  async waitForEvents(n: number, timeoutMs?: number): Promise<void> {
    await until(() => this.events.length >= n, `${n} watch events (have ${this.events.length})`, timeoutMs);
  }
}

/**
 * Two ZooKeeper stores on one fresh chroot of the shared ZooKeeper, as two brokers share one: `writer` connected
 * directly, `lagging` through a relay. Both keep the history of 5 revisions. Between `cutHistoryReads()` and
 * `readHistoryAgain()` each of the lagging store's history reads loses its connection, so that what the writer
 * commits meanwhile beyond 5 revisions is compacted before the lagging store could read it: it reloads and ends
 * its watches with LL_ERR_METADATA_COMPACTED, as a store that fell far behind does.
 */
export interface LaggingPair {
  readonly writer: ZooKeeperMetadataStore;
  readonly lagging: ZooKeeperMetadataStore;
  cutHistoryReads(): void;
  readHistoryAgain(): void;
  close(): Promise<void>;
}

export async function laggingPair(label: string): Promise<LaggingPair> {
  const zk = await sharedZooKeeper();
  const chroot = `/ll-${label}-${process.pid}-${++chroots}-${Date.now()}`;
  const relay = await ZooKeeperCuttingRelay.start(zk.port);
  const options = { sessionTimeoutMs: 10_000, historyRetention: 5 };
  const writer = await ZooKeeperMetadataStore.open({ ...options, connect: zk.connectString + chroot });
  const lagging = await ZooKeeperMetadataStore.open({ ...options, connect: `127.0.0.1:${relay.port}${chroot}` });
  return {
    writer,
    lagging,
    cutHistoryReads: () => relay.cutOn((r) => r.type === ZK_OP.getData && r.path!.startsWith(`${chroot}/history/`), Number.MAX_SAFE_INTEGER),
    readHistoryAgain: () => relay.cutOn(() => false, 0),
    async close() {
      await lagging.close();
      await writer.close();
      await relay.close();
    },
  };
}

/** A store whose watches can be ended and whose reads can be failed or held, around a real one. */
export class FaultyStore implements Pick<MetadataStore, 'list' | 'watch'> {
  failReads = 0;
  reads = 0;
  /** Called before each page after the first of a read. */
  beforeLaterPage: (() => Promise<void>) | null = null;
  /** Called with each page read, before it is returned. */
  afterPage: (() => Promise<void>) | null = null;
  readonly watches: { ended: boolean; listener: WatchListener; watch: Watch }[] = [];
  constructor(readonly inner: MetadataStore) {}

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    this.reads++;
    if (this.failReads > 0) {
      this.failReads--;
      throw new MetadataStorageError('list', new Error('connection loss'));
    }
    if (options?.startAfter !== undefined) await this.beforeLaterPage?.();
    const page = await this.inner.list(prefix, options);
    await this.afterPage?.();
    return page;
  }

  async watch(target: WatchTarget, listener: WatchListener, options?: WatchOptions): Promise<Watch> {
    const entry = { ended: false, listener, watch: null as unknown as Watch };
    entry.watch = await this.inner.watch(
      target,
      {
        onEvents: (res) => entry.ended || listener.onEvents(res),
        onError: (err) => entry.ended || listener.onError?.(err),
      },
      options,
    );
    this.watches.push(entry);
    return entry.watch;
  }

  /** Ends the newest watch as the store would (history compacted, ...): its error, then nothing more. */
  endWatch(err: Error): void {
    const entry = this.watches.at(-1)!;
    entry.ended = true;
    void entry.watch.cancel();
    entry.listener.onError?.(err);
  }

  /** Holds the next page read after it is read: `started` once it is, returned to its reader on `release()`. */
  holdNextRead(): { started: Promise<void>; release: () => void } {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const read = new Promise<void>((resolve) => (started = resolve));
    this.afterPage = () => {
      this.afterPage = null;
      started();
      return held;
    };
    return { started: read, release };
  }

  /** The whole store: `list` and `watch` through this wrapper, every other call straight to the real one. */
  asStore(): MetadataStore {
    return new Proxy(this.inner, {
      get: (target, prop) => {
        if (prop === 'list' || prop === 'watch') return this[prop].bind(this);
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
