/**
 * What the ledger manager needs of ZooKeeper, as an interface (`LedgerZk`), and its implementation over
 * node-zookeeper-client. Kept to the calls BookKeeper's ZK ledger manager makes: get with the znode's version,
 * create (with parents, persistent or ephemeral-sequential), set by version (CAS), delete by version, children.
 */
import zookeeper from 'node-zookeeper-client';

/** world:anyone with every permission (ZooDefs.Ids.OPEN_ACL_UNSAFE), as BookKeeper creates its znodes by default. */
const OPEN_ACL_UNSAFE = [new zookeeper.ACL(zookeeper.Permission.ALL, new zookeeper.Id('world', 'anyone'))];

/** A znode's data and its version (Stat.version), the CAS token of metadata updates. */
export interface Versioned {
  readonly data: Buffer;
  readonly version: number;
}

/** ZooKeeper's error of a failed call, by KeeperException name: NO_NODE, NODE_EXISTS, BAD_VERSION, … */
export class ZkError extends Error {
  constructor(
    readonly zkCode: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface LedgerZk {
  /** The znode's data and version, or null when it does not exist. */
  get(path: string): Promise<Versioned | null>;
  /** Creates a znode (its missing parents as empty persistent znodes); returns the created path. */
  create(path: string, data: Buffer, mode: 'persistent' | 'ephemeral-sequential'): Promise<string>;
  /** Sets data if the znode is at `version` (ZkError BAD_VERSION otherwise, NO_NODE if gone); the new version. */
  set(path: string, data: Buffer, version: number): Promise<number>;
  /** Deletes the znode at `version` (-1: any). ZkError NO_NODE when absent. */
  delete(path: string, version: number): Promise<void>;
  /** Child names, or [] when the znode does not exist. */
  children(path: string): Promise<string[]>;
  close(): Promise<void>;
}

function zkError(err: unknown, path: string): ZkError {
  const e = err as { name?: string; getName?: () => string; message?: string };
  const name = typeof e?.getName === 'function' ? e.getName() : (e?.name ?? 'UNKNOWN');
  return new ZkError(name, `ZooKeeper ${name} at ${path}: ${e?.message ?? String(err)}`, { cause: err });
}

/**
 * Connects to `connectString` (host:port[,host:port…], with an optional chroot); rejects after `timeoutMs`
 * without a session.
 */
export async function connectLedgerZk(connectString: string, options: { sessionTimeoutMs?: number; timeoutMs?: number } = {}): Promise<LedgerZk> {
  const client = zookeeper.createClient(connectString, { sessionTimeout: options.sessionTimeoutMs ?? 30_000, spinDelay: 200, retries: 1 });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.close();
      reject(new ZkError('CONNECTION_LOSS', `no ZooKeeper session with ${connectString} within ${options.timeoutMs ?? 10_000} ms`));
    }, options.timeoutMs ?? 10_000);
    client.once('connected', () => {
      clearTimeout(timer);
      resolve();
    });
    client.connect();
  });
  const call = <T>(path: string, fn: (cb: (err: unknown, v: T) => void) => void): Promise<T> =>
    new Promise<T>((resolve, reject) => fn((err, v) => (err ? reject(zkError(err, path)) : resolve(v))));
  const isNoNode = (err: unknown): boolean => err instanceof ZkError && err.zkCode === 'NO_NODE';
  return {
    async get(path) {
      try {
        return await new Promise<Versioned>((resolve, reject) =>
          client.getData(path, (err, data, stat) => (err ? reject(zkError(err, path)) : resolve({ data: data ?? Buffer.alloc(0), version: stat.version }))),
        );
      } catch (err) {
        if (isNoNode(err)) return null;
        throw err;
      }
    },
    async create(path, data, mode) {
      const m = mode === 'persistent' ? zookeeper.CreateMode.PERSISTENT : zookeeper.CreateMode.EPHEMERAL_SEQUENTIAL;
      const parent = path.slice(0, path.lastIndexOf('/'));
      const once = () => call<string>(path, (cb) => client.create(path, data, OPEN_ACL_UNSAFE, m, cb));
      try {
        return await once();
      } catch (err) {
        if (!isNoNode(err) || parent === '') throw err;
        // ZkUtils.asyncCreateFullPathOptimistic: create the parents, then try again.
        await call<string>(parent, (cb) => client.mkdirp(parent, OPEN_ACL_UNSAFE, zookeeper.CreateMode.PERSISTENT, cb));
        return once();
      }
    },
    async set(path, data, version) {
      const stat = await call<zookeeper.Stat>(path, (cb) => client.setData(path, data, version, cb));
      return stat.version;
    },
    async delete(path, version) {
      await call<void>(path, (cb) => client.remove(path, version, (err) => cb(err, undefined)));
    },
    async children(path) {
      try {
        return await call<string[]>(path, (cb) => client.getChildren(path, cb));
      } catch (err) {
        if (isNoNode(err)) return [];
        throw err;
      }
    },
    async close() {
      client.close();
    },
  };
}
