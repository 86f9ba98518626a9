/**
 * ZooKeeperClient: a small promise-based ZooKeeper session over the `node-zookeeper-client` package (pure JS,
 * ZooKeeper's 3.4 client protocol; README.md says why and what it lacks).
 *
 *   const zk = await ZooKeeperClient.connect({ connect: '127.0.0.1:2181/ledgerline', sessionTimeoutMs: 18_000 });
 *   const { stat } = await zk.get('/a');
 *   await zk.multi([{ type: 'check', path: '/rev', version: stat.version }, { type: 'set', path: '/a', data }]);
 *
 * - Paths are relative to the connect string's chroot (`host:port[,host:port]/chroot`, as Kafka's
 *   zookeeper.connect); `createChroot` creates it first, as Kafka's KafkaZkClient does.
 * - Errors are typed (errors.ts). Only reads (get, exists, getChildren) are retried after ConnectionLoss: a
 *   write whose answer was lost may have been applied, so the caller decides (a versioned write can re-read
 *   and compare). The package's own retries are off for that reason.
 * - Watches are ZooKeeper's one-shot watches: `{ watch: true }` adds `changed`, a promise that resolves once
 *   with the event, or with `sessionExpired` / `closed` when the session ends first (it never rejects, so an
 *   unused watch is no unhandled rejection).
 * - Session state: `connected`, `disconnected` (the session may still be alive; requests queue), `expired`
 *   (final: ephemerals are gone and watches lost; make a new client), `closed`.
 * - The package has no read timeout: a connection whose peer stops answering without closing the socket
 *   would look alive forever. A probe every third of the session timeout (ZooKeeper's own ping period) that
 *   goes unanswered for two thirds of it (ZooKeeper's client readTimeout) drops the socket, so the package
 *   reconnects and learns whether the session survived, as ZooKeeper's ClientCnxn does.
 */
import { EventEmitter } from 'node:events';
import zookeeper from 'node-zookeeper-client';
import {
  ZkCode,
  ZooKeeperClosedError,
  ZooKeeperConnectionLossError,
  ZooKeeperError,
  ZooKeeperSessionExpiredError,
  zooKeeperError,
} from './errors.js';

export type CreateMode = 'persistent' | 'persistent-sequential' | 'ephemeral' | 'ephemeral-sequential';

const CREATE_MODES: Record<CreateMode, number> = {
  persistent: zookeeper.CreateMode.PERSISTENT,
  'persistent-sequential': zookeeper.CreateMode.PERSISTENT_SEQUENTIAL,
  ephemeral: zookeeper.CreateMode.EPHEMERAL,
  'ephemeral-sequential': zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL,
};

/** A znode's Stat, with ZooKeeper's 64-bit fields as bigints. */
export interface ZnodeStat {
  readonly czxid: bigint;
  readonly mzxid: bigint;
  readonly pzxid: bigint;
  readonly ctime: number;
  readonly mtime: number;
  /** Data version: the number of setData calls since creation. */
  readonly version: number;
  /** Children version. */
  readonly cversion: number;
  /** The session id owning an ephemeral znode (hex), or null for a persistent one. */
  readonly ephemeralOwner: string | null;
  readonly dataLength: number;
  readonly numChildren: number;
}

export type WatchEventType = 'created' | 'deleted' | 'dataChanged' | 'childrenChanged' | 'sessionExpired' | 'closed';

/** What ended a one-shot watch: a change of `path`, or the end of the session (no change may have happened). */
export interface ZooKeeperWatchEvent {
  readonly type: WatchEventType;
  readonly path: string;
}

export type MultiOp =
  | { readonly type: 'create'; readonly path: string; readonly data?: Uint8Array; readonly mode?: CreateMode }
  | { readonly type: 'set'; readonly path: string; readonly data: Uint8Array; readonly version?: number }
  | { readonly type: 'delete'; readonly path: string; readonly version?: number }
  | { readonly type: 'check'; readonly path: string; readonly version: number };

export type MultiOpResult =
  | { readonly type: 'create'; readonly path: string }
  | { readonly type: 'set'; readonly stat: ZnodeStat }
  | { readonly type: 'delete' }
  | { readonly type: 'check' };

/**
 * A multi whose ops were not applied because `failedOp` (its index) failed with `error`; none of them was
 * applied (ZooKeeper's multi is all or nothing). `opCodes` holds each op's code as the server gave it
 * (0 before the failing op, the error at it, RUNTIME_INCONSISTENCY after it).
 */
export class ZooKeeperMultiError extends ZooKeeperError {
  readonly failedOp: number;
  readonly error: ZooKeeperError;
  readonly opCodes: readonly number[];
  constructor(failedOp: number, error: ZooKeeperError, opCodes: readonly number[]) {
    super(error.code, error.zkCode, `multi op ${failedOp} failed: ${error.message}`, undefined, { cause: error });
    this.failedOp = failedOp;
    this.error = error;
    this.opCodes = opCodes;
  }
}

export interface ZooKeeperClientOptions {
  /** `host:port[,host:port...][/chroot]`, as Kafka's zookeeper.connect. */
  readonly connect: string;
  /** Asked of the server, which bounds it by its min/max session timeouts. Default 18000 (Kafka's). */
  readonly sessionTimeoutMs?: number;
  /** How long `connect` waits for a session. Default the session timeout. */
  readonly connectTimeoutMs?: number;
  /** Create the chroot (with its parents) before connecting under it. Default false. */
  readonly createChroot?: boolean;
  /** Times a read is retried after ConnectionLoss (with the package's reconnects in between). Default 3. */
  readonly readRetries?: number;
}

export interface ZooKeeperClientEvents {
  connected: [];
  disconnected: [];
  expired: [];
  closed: [];
}

type Watcher = (event: zookeeper.Event) => void;

const EVENT_TYPES: Record<number, WatchEventType> = {
  [zookeeper.Event.NODE_CREATED]: 'created',
  [zookeeper.Event.NODE_DELETED]: 'deleted',
  [zookeeper.Event.NODE_DATA_CHANGED]: 'dataChanged',
  [zookeeper.Event.NODE_CHILDREN_CHANGED]: 'childrenChanged',
};

/** Splits a connect string into its servers and chroot (`''` for none). */
export function parseConnectString(connect: string): { servers: string; chroot: string } {
  const s = connect.trim();
  const slash = s.indexOf('/');
  const servers = slash < 0 ? s : s.slice(0, slash);
  let chroot = slash < 0 ? '' : s.slice(slash);
  if (chroot === '/') chroot = '';
  if (servers === '' || /\s/.test(servers)) throw new ZooKeeperError('LL_ERR_ZK_BAD_ARGUMENTS', 0, `invalid ZooKeeper connect string ${JSON.stringify(connect)}`);
  if (chroot !== '') checkPath(chroot);
  return { servers, chroot };
}

/** ZooKeeper's PathUtils.validatePath rules the package asserts on, as a typed error instead of a throw. */
export function checkPath(path: string): void {
  const bad =
    typeof path !== 'string' ||
    path[0] !== '/' ||
    (path.length > 1 && path.endsWith('/')) ||
    path.includes('//') ||
    /\/\.\.?(\/|$)/.test(path) ||
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]/.test(path);
  if (bad) throw new ZooKeeperError('LL_ERR_ZK_BAD_ARGUMENTS', ZkCode.BAD_ARGUMENTS, 'invalid znode path', JSON.stringify(path));
}

function toBigint(b: Buffer): bigint {
  return b.length === 8 ? b.readBigInt64BE(0) : 0n;
}

function toStat(s: zookeeper.Stat): ZnodeStat {
  const owner = toBigint(s.ephemeralOwner);
  return {
    czxid: toBigint(s.czxid),
    mzxid: toBigint(s.mzxid),
    pzxid: toBigint(s.pzxid),
    ctime: Number(toBigint(s.ctime)),
    mtime: Number(toBigint(s.mtime)),
    version: s.version,
    cversion: s.cversion,
    ephemeralOwner: owner === 0n ? null : BigInt.asUintN(64, owner).toString(16),
    dataLength: s.dataLength,
    numChildren: s.numChildren,
  };
}

function mapError(err: unknown, path?: string): Error {
  if (err instanceof ZooKeeperError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'number' && err !== null && typeof (err as { getName?: unknown }).getName === 'function') {
    return zooKeeperError(code, path);
  }
  return err instanceof Error ? err : new Error(String(err));
}

export class ZooKeeperClient extends EventEmitter<ZooKeeperClientEvents> {
  readonly chroot: string;
  private readonly raw: zookeeper.Client;
  private readonly readRetries: number;
  private readonly sessionTimeoutMs: number;
  private readonly pendingWatches = new Set<(e: ZooKeeperWatchEvent) => void>();
  private probeTimer: NodeJS.Timeout | null = null;
  private probeSentAt = 0;
  private waitingSince = 0;
  private isClosed = false;
  private isExpired = false;

  private constructor(raw: zookeeper.Client, chroot: string, options: ZooKeeperClientOptions) {
    super();
    this.raw = raw;
    this.chroot = chroot;
    this.readRetries = options.readRetries ?? 3;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? 18_000;
    raw.on('state', (state: zookeeper.State) => this.onState(state));
  }

  /** Connects and resolves once the session is established; rejects with ConnectionLoss after the timeout. */
  static async connect(options: ZooKeeperClientOptions): Promise<ZooKeeperClient> {
    const { servers, chroot } = parseConnectString(options.connect);
    if (options.createChroot && chroot !== '') {
      const root = await ZooKeeperClient.connect({ ...options, connect: servers, createChroot: false });
      try {
        await root.mkdirp(chroot);
      } finally {
        await root.close();
      }
    }
    const sessionTimeout = options.sessionTimeoutMs ?? 18_000;
    const raw = zookeeper.createClient(servers + chroot, { sessionTimeout, retries: 0, spinDelay: 200 });
    const client = new ZooKeeperClient(raw, chroot, options);
    const timeoutMs = options.connectTimeoutMs ?? sessionTimeout;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        raw.removeListener('connected', onConnected);
        raw.close();
        reject(new ZooKeeperConnectionLossError(`${servers} (no session within ${timeoutMs} ms)`));
      }, timeoutMs);
      const onConnected = (): void => {
        clearTimeout(timer);
        resolve();
      };
      raw.once('connected', onConnected);
      raw.connect();
    });
    client.startProbe();
    return client;
  }

  /** The session id in hex (as ZooKeeper logs it), or '0' before a session. */
  get sessionId(): string {
    const id = this.raw.getSessionId();
    return id && id.length === 8 ? id.readBigUInt64BE(0).toString(16) : '0';
  }

  /** The session timeout the server granted (ms). */
  get negotiatedSessionTimeoutMs(): number {
    return this.raw.getSessionTimeout();
  }

  get closed(): boolean {
    return this.isClosed;
  }

  get expired(): boolean {
    return this.isExpired;
  }

  /** Creates `path`; resolves with the path created (with its sequence number for a sequential mode). */
  create(path: string, data: Uint8Array = Buffer.alloc(0), mode: CreateMode = 'persistent'): Promise<string> {
    return this.call(path, (cb) => this.raw.create(path, Buffer.from(data), CREATE_MODES[mode], cb), (p: string) => p);
  }

  /** Creates `path` and its missing parents (persistent, empty); an existing path is no error. */
  async mkdirp(path: string): Promise<void> {
    checkPath(path);
    await this.call(path, (cb) => this.raw.mkdirp(path, cb), () => undefined);
  }

  get(path: string): Promise<{ data: Buffer; stat: ZnodeStat }>;
  get(path: string, options: { watch: true }): Promise<{ data: Buffer; stat: ZnodeStat; changed: Promise<ZooKeeperWatchEvent> }>;
  get(path: string, options?: { watch?: boolean }): Promise<{ data: Buffer; stat: ZnodeStat; changed?: Promise<ZooKeeperWatchEvent> }> {
    return this.read(path, options?.watch === true, (watcher, cb) =>
      watcher ? this.raw.getData(path, watcher, cb) : this.raw.getData(path, cb),
      (data: Buffer | null, stat: zookeeper.Stat) => ({ data: data ?? Buffer.alloc(0), stat: toStat(stat) }),
    );
  }

  /** The znode's Stat, or null if it does not exist; a watch fires on its creation, change or deletion. */
  exists(path: string): Promise<{ stat: ZnodeStat | null }>;
  exists(path: string, options: { watch: true }): Promise<{ stat: ZnodeStat | null; changed: Promise<ZooKeeperWatchEvent> }>;
  exists(path: string, options?: { watch?: boolean }): Promise<{ stat: ZnodeStat | null; changed?: Promise<ZooKeeperWatchEvent> }> {
    return this.read(path, options?.watch === true, (watcher, cb) =>
      watcher ? this.raw.exists(path, watcher, cb) : this.raw.exists(path, cb),
      (stat: zookeeper.Stat | null) => ({ stat: stat ? toStat(stat) : null }),
    );
  }

  /** Children names (unordered, as ZooKeeper returns them); a watch fires when a child is added or removed. */
  getChildren(path: string): Promise<{ children: string[]; stat: ZnodeStat }>;
  getChildren(path: string, options: { watch: true }): Promise<{ children: string[]; stat: ZnodeStat; changed: Promise<ZooKeeperWatchEvent> }>;
  getChildren(path: string, options?: { watch?: boolean }): Promise<{ children: string[]; stat: ZnodeStat; changed?: Promise<ZooKeeperWatchEvent> }> {
    return this.read(path, options?.watch === true, (watcher, cb) =>
      watcher ? this.raw.getChildren(path, watcher, cb) : this.raw.getChildren(path, cb),
      (children: string[], stat: zookeeper.Stat) => ({ children, stat: toStat(stat) }),
    );
  }

  /** Sets the data if the version matches (`-1`: any version). BadVersion otherwise. */
  set(path: string, data: Uint8Array, version = -1): Promise<ZnodeStat> {
    return this.call(path, (cb) => this.raw.setData(path, Buffer.from(data), version, cb), (stat: zookeeper.Stat) => toStat(stat));
  }

  /** Deletes the znode if the version matches (`-1`: any). NoNode, BadVersion or NotEmpty otherwise. */
  delete(path: string, version = -1): Promise<void> {
    return this.call(path, (cb) => this.raw.remove(path, version, cb), () => undefined);
  }

  /**
   * Applies every op or none (ZooKeeper's multi). Rejects with ZooKeeperMultiError naming the op that failed,
   * or with ConnectionLoss / SessionExpired when the outcome is unknown.
   */
  async multi(ops: readonly MultiOp[]): Promise<MultiOpResult[]> {
    if (ops.length === 0) return [];
    this.checkOpen('multi');
    const tx = this.raw.transaction();
    // The package's Transaction turns version 0 into -1 (`version || -1`): a check, setData or delete
    // expecting version 0 would match any version. Each op's version is set again after it is added.
    const added = (tx as unknown as { ops: Array<{ version?: number }> }).ops;
    for (const op of ops) {
      checkPath(op.path);
      switch (op.type) {
        case 'create':
          tx.create(op.path, Buffer.from(op.data ?? Buffer.alloc(0)), CREATE_MODES[op.mode ?? 'persistent']);
          break;
        case 'set':
          tx.setData(op.path, Buffer.from(op.data), op.version ?? -1);
          added[added.length - 1]!.version = op.version ?? -1;
          break;
        case 'delete':
          tx.remove(op.path, op.version ?? -1);
          added[added.length - 1]!.version = op.version ?? -1;
          break;
        case 'check':
          tx.check(op.path, op.version);
          added[added.length - 1]!.version = op.version;
          break;
      }
    }
    const results = await new Promise<Array<{ type: number; path?: string; stat?: zookeeper.Stat; err?: number }>>((resolve, reject) => {
      tx.commit((error, res) => {
        if (error && !Array.isArray(res)) reject(mapError(error));
        else resolve(res as Array<{ type: number; path?: string; stat?: zookeeper.Stat; err?: number }>);
      });
    });
    const failed = results.findIndex((r) => r.err !== undefined && r.err !== ZkCode.OK && r.err !== ZkCode.RUNTIME_INCONSISTENCY);
    if (failed >= 0) {
      throw new ZooKeeperMultiError(failed, zooKeeperError(results[failed]!.err!, ops[failed]!.path), results.map((r) => r.err ?? 0));
    }
    if (results.some((r) => r.err !== undefined && r.err !== ZkCode.OK)) {
      throw new ZooKeeperMultiError(0, zooKeeperError(ZkCode.RUNTIME_INCONSISTENCY, ops[0]!.path), results.map((r) => r.err ?? 0));
    }
    return ops.map((op, i): MultiOpResult => {
      const r = results[i]!;
      switch (op.type) {
        case 'create':
          return { type: 'create', path: r.path ?? op.path };
        case 'set':
          return { type: 'set', stat: toStat(r.stat!) };
        case 'delete':
          return { type: 'delete' };
        case 'check':
          return { type: 'check' };
      }
    });
  }

  /** Ends the session (its ephemerals go at once); pending watches resolve with `closed`. Idempotent. */
  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stopProbe();
    this.endWatches('closed');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 2_000);
      // The package reports the close through its state listener once the server acknowledged it.
      this.raw.once('disconnected', () => {
        clearTimeout(timer);
        resolve();
      });
      this.raw.close();
    });
    this.emit('closed');
  }

  // ------------------------------------------------------------------------------------------ internals

  private checkOpen(operation: string): void {
    if (this.isClosed) throw new ZooKeeperClosedError(operation);
    // After expiry the package closes its connection and answers ConnectionLoss; the truth is expiry.
    if (this.isExpired) throw new ZooKeeperSessionExpiredError();
  }

  private call<T>(path: string, start: (cb: (error: unknown, ...args: any[]) => void) => void, map: (...args: any[]) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      try {
        this.checkOpen('request');
        checkPath(path);
        start((error, ...args) => (error ? reject(mapError(error, path)) : resolve(map(...args))));
      } catch (err) {
        reject(mapError(err, path));
      }
    });
  }

  /** A read, retried after ConnectionLoss (safe: it changes nothing), with an optional one-shot watch. */
  private async read<T extends object>(
    path: string,
    watch: boolean,
    start: (watcher: Watcher | undefined, cb: (error: unknown, ...args: any[]) => void) => void,
    map: (...args: any[]) => T,
  ): Promise<T & { changed?: Promise<ZooKeeperWatchEvent> }> {
    for (let attempt = 0; ; attempt++) {
      let settle: ((e: ZooKeeperWatchEvent) => void) | undefined;
      const changed = watch
        ? new Promise<ZooKeeperWatchEvent>((resolve) => {
            settle = (e) => {
              this.pendingWatches.delete(settle!);
              resolve(e);
            };
            this.pendingWatches.add(settle);
          })
        : undefined;
      const watcher: Watcher | undefined = settle
        ? (event) => settle!({ type: EVENT_TYPES[event.type] ?? 'dataChanged', path: event.path })
        : undefined;
      try {
        const result = await this.call(path, (cb) => start(watcher, cb), map);
        return changed ? { ...result, changed } : result;
      } catch (err) {
        if (settle) this.pendingWatches.delete(settle);
        if (!(err instanceof ZooKeeperConnectionLossError) || attempt >= this.readRetries || this.isClosed) throw err;
        await this.whenConnected();
      }
    }
  }

  private whenConnected(): Promise<void> {
    if (this.raw.getState() === zookeeper.State.SYNC_CONNECTED) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.sessionTimeoutMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.once('connected', done);
      this.once('expired', done);
      this.once('closed', done);
    });
  }

  private onState(state: zookeeper.State): void {
    if (state === zookeeper.State.SYNC_CONNECTED) this.emit('connected');
    else if (state === zookeeper.State.DISCONNECTED) {
      if (!this.isClosed) this.emit('disconnected');
    } else if (state === zookeeper.State.EXPIRED) {
      this.isExpired = true;
      this.stopProbe();
      this.endWatches('sessionExpired');
      this.emit('expired');
    }
  }

  private endWatches(type: 'sessionExpired' | 'closed'): void {
    for (const settle of [...this.pendingWatches]) settle({ type, path: '' });
  }

  /** The read timeout the package lacks (see the top of the file). */
  private startProbe(): void {
    const period = Math.max(100, Math.floor(this.negotiatedSessionTimeoutMs / 3));
    const readTimeout = Math.max(200, Math.floor((this.negotiatedSessionTimeoutMs * 2) / 3));
    const tick = (): void => {
      if (this.isClosed || this.isExpired) return;
      const connected = this.raw.getState() === zookeeper.State.SYNC_CONNECTED;
      const now = Date.now();
      if (!connected) {
        // The package clears its connect timeout once TCP connects: a server (or path) that accepts the
        // connection but never answers the handshake would hold it forever. Drop it and try again.
        this.probeSentAt = 0;
        if (this.waitingSince === 0) this.waitingSince = now;
        else if (now - this.waitingSince > readTimeout) {
          this.waitingSince = now;
          this.dropSocket();
        }
      } else if (this.probeSentAt !== 0) {
        this.waitingSince = 0;
        if (now - this.probeSentAt > readTimeout) {
          this.probeSentAt = 0;
          this.dropSocket();
        }
      } else {
        this.waitingSince = 0;
        this.probeSentAt = Date.now();
        this.raw.exists('/', () => {
          this.probeSentAt = 0;
        });
      }
      this.probeTimer = setTimeout(tick, period);
      this.probeTimer.unref();
    };
    this.probeTimer = setTimeout(tick, period);
    this.probeTimer.unref();
  }

  private stopProbe(): void {
    if (this.probeTimer) clearTimeout(this.probeTimer);
    this.probeTimer = null;
  }

  /** Closes the TCP connection under the package (its reconnect logic takes over). */
  private dropSocket(): void {
    const socket = (this.raw as unknown as { connectionManager?: { socket?: { destroy?: () => void } } }).connectionManager?.socket;
    socket?.destroy?.();
  }
}
